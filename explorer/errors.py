"""The engine's errors: each carries a message fit to show a user as it is."""

from __future__ import annotations

__all__ = ["ExplorerError", "ConfigError", "CorpusError", "DecodeError", "FormatError", "HubError"]


class ExplorerError(ValueError):
    """Base class: bad input that the user can fix; ``str(err)`` is the message to show."""


class ConfigError(ExplorerError):
    """An impossible or unknown setting (unknown preset, a marker with byte units, a bad regex)."""


class CorpusError(ExplorerError):
    """A corpus that cannot be used (undecodable, empty, too large)."""


class FormatError(ExplorerError):
    """A malformed import file (trace.json, tokenizer.json, merges, .tiktoken)."""


class DecodeError(ExplorerError):
    """Ids that do not decode: an id that is no token, or bytes that are not UTF-8 under ``errors="strict"``."""


class HubError(ExplorerError):
    """A tokenizer on the Hugging Face Hub that cannot be fetched: the Hub unreachable (and the
    files not cached), no such repository or revision, a gated repository without access."""
