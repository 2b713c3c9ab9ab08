"""What every file format is made of: its writer, its reader, and how its files are told apart.

A format is one module (``hf``, ``gpt2``, ``tiktoken_ranks``, ...) ending in one ``FileFormat``
value, listed in :mod:`explorer.formats.registry`. Files are told apart one at a time: each
file is one *kind* (``FileKind``: ``"vocab-json"``, ``"merges"``, ...), and a format is the one
whose ``file_sets`` hold exactly the kinds found::

    {"vocab.json": b'{"!": 0, ...', "merges.txt": b"#version: 0.2\\n..."}
        -> kinds {"vocab-json": vocab.json, "merges": merges.txt} -> gpt2 (file set ("vocab-json", "merges"))

A kind is tried at one of three stages of reading a file (``FileKind.stage``), in ``order``
within its stage:

- ``name``: before the bytes are decoded (a ``.tiktoken`` holds base64, whatever its bytes);
- ``json``: the file is a JSON object (it starts with ``{`` or is named ``*.json``);
- ``text``: any other UTF-8 text.

Every failure to read a file is a FormatError of one sentence that names the file; a writer
that cannot hold a tokenizer raises ConfigError naming the setting in the way, and FormatError
when no file of the format can hold it (SuperBPE's superwords in a tokenizer.json; PickyBPE's
removals in any format but ``removals=True`` ones, refused by ``exporters.export_files``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError

__all__ = [
    "FileFormat",
    "FileKind",
    "Files",
    "Found",
    "ImportOptions",
    "Imported",
    "Upload",
    "decode_text",
    "dump_json",
    "json_dict",
    "json_list",
    "json_object",
    "need",
    "require",
    "whole_number",
]

Files = dict[str, str | bytes]  # file name -> content, as a writer returns it


def require(cond: bool, message: str) -> None:
    """A reader's check: FormatError with ``message`` unless ``cond``."""
    if not cond:
        raise FormatError(message)


def whole_number(text: str, message: str) -> int:
    """``text`` read as a count or an id (ASCII digits, spaces around them allowed), else
    FormatError(message). ``str.isdigit`` alone lets through '²' (which ``int`` refuses) and '٣'
    (which it reads as 3), and ``str.strip`` takes away '\\x1c', which ``int`` does not.

    >>> whole_number(" 42 ", "bad id")
    42
    >>> whole_number("\\x1c7", "bad id")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: bad id
    """
    digits = text.strip(" \t\r\n")
    require(digits.isascii() and digits.isdigit(), message)
    return int(digits)


def need(cond: bool, message: str) -> None:
    """A writer's check: ConfigError with ``message`` (the setting in the way) unless ``cond``."""
    if not cond:
        raise ConfigError(message)


def json_dict(value: object, message: str) -> dict:
    """``value`` when it is a JSON object, else FormatError(message): what a reader expects of a
    key in a file.

    >>> json_dict({"a": 1}, "no object")
    {'a': 1}
    >>> json_dict([1], "tokenizer.json 'model.vocab' must be an object")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'model.vocab' must be an object
    """
    if not isinstance(value, dict):
        raise FormatError(message)
    return value


def json_list(value: object, message: str) -> list:
    """``value`` when it is a JSON list, else FormatError(message).

    >>> json_list("a b", "tokenizer.json 'model.merges' must be a list")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'model.merges' must be a list
    """
    if not isinstance(value, list):
        raise FormatError(message)
    return value


def dump_json(data: object) -> str:
    """JSON as every writer here lays it out (one space of indent, characters unescaped).

    >>> print(dump_json({"é": [1]}), end="")
    {
     "é": [
      1
     ]
    }
    """
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def decode_text(name: str, data: bytes) -> str:
    """A file's bytes as UTF-8 text, or where they are not.

    >>> decode_text("codes.txt", "a é".encode())
    'a é'
    >>> decode_text("codes.txt", "é".encode()[:1])
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: codes.txt is cut short inside a character (byte 0)
    >>> decode_text("tokenizer.model", b"\\n\\x0e\\xff")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.model is not UTF-8 text (byte 2): a binary .model file, perhaps a SentencePiece model, which is not one of the formats read here (tiktoken ranks and minbpe's .model are text)
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.reason == "unexpected end of data":
            raise FormatError(f"{name} is cut short inside a character (byte {err.start})") from None
        # a binary .model is most likely SentencePiece's protobuf (Llama 2, Mistral, Gemma), not
        # the text files (tiktoken ranks, minbpe) that share the name
        hint = (
            ": a binary .model file, perhaps a SentencePiece model, which is not one of the formats read here"
            " (tiktoken ranks and minbpe's .model are text)"
            if name.lower().endswith(".model")
            else ""
        )
        raise FormatError(f"{name} is not UTF-8 text (byte {err.start}){hint}") from None


def json_object(text: str, name: str) -> dict:
    """A JSON object, or where the JSON goes wrong.

    >>> json_object('{"a": 1}', "vocab.json")
    {'a': 1}
    >>> json_object('[1]', "vocab.json")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: vocab.json: expected a JSON object
    """
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise FormatError(
            f"{name} is not valid JSON (cut short?): line {err.lineno}, column {err.colno}: {err.msg}"
        ) from None
    except RecursionError:
        # thousands of brackets inside brackets: no tokenizer file nests more than a few levels
        raise FormatError(
            f"{name} nests its JSON too deeply to be a tokenizer file (lists or objects inside "
            "each other thousands of levels deep)"
        ) from None
    require(isinstance(obj, dict), f"{name}: expected a JSON object")
    return obj


@dataclass(frozen=True)
class Upload:
    """One file given to import: its name and bytes, decoded and parsed when a kind's test first
    asks (once; a file that is not UTF-8 or not JSON fails there, with its name).

    >>> u = Upload("Vocab.JSON", b'\\xef\\xbb\\xbf {"a": 0}')
    >>> u.lower, u.looks_json, u.json
    ('vocab.json', True, {'a': 0})
    """

    name: str
    data: bytes

    @property
    def lower(self) -> str:
        return self.name.lower()

    @cached_property
    def text(self) -> str:
        return decode_text(self.name, self.data)

    @cached_property
    def stripped(self) -> str:
        """The text from its first character that is not a byte-order mark or whitespace."""
        return self.text.lstrip("\ufeff \t\r\n")

    @cached_property
    def first_line(self) -> str:
        text = self.stripped
        end = text.find("\n")  # not split(): that copies the rest of a 4 MB file
        return text if end < 0 else text[:end]

    @property
    def looks_json(self) -> bool:
        return self.stripped.startswith("{") or self.lower.endswith(".json")

    @cached_property
    def json(self) -> dict:
        return json_object(self.stripped, self.name)


@dataclass(frozen=True)
class FileKind:
    """What one file is, told from its name and content alone: ``test`` at ``stage`` (see the
    module), the first kind to pass in ``order`` wins. ``hint``: what to add when this file is
    given alone; ``what``: the file as the message for a JSON file of no known kind lists it."""

    name: str
    stage: Literal["name", "json", "text"]
    order: int
    test: Callable[[Upload], bool]
    hint: str | None = None
    what: str | None = None


Found = Mapping[str, Upload]  # kind -> the file of that kind, for a format's reader


class ImportOptions(NamedTuple):
    """What the caller chose for files that leave it open: the pre-tokenizer (and the regex of
    ``regex``), and subword-nmt's glossaries (regexes never split; other formats ignore them)."""

    pretokenizer: str | None = None
    pattern: str | None = None
    glossaries: tuple[str, ...] = ()


class Imported(NamedTuple):
    """A reader's result: the tokenizer and sentences for a page saying what was assumed."""

    tokenizer: Tokenizer
    notes: list[str]


def _never(found: Found) -> bool:
    return False


@dataclass(frozen=True)
class FileFormat:
    """One file format, both ways (or read only: ``write`` None, left out of the exports).
    ``write(tok, trace)`` gives its files by name (``trace``: the merge history, read only when
    ``uses_trace``); ``read(found, options)`` makes the tokenizer
    from the files of a file set; ``needs_pretokenizer(found)``: whether those files leave the
    split to the caller (a page asks for it only then); ``holds_normalizer``: whether its files
    name their normalizer (else an import may name one). ``kinds`` are the file kinds this
    format defines (a kind another format defines may be in its file sets too)."""

    name: str
    title: str  # as a picker of formats to write shows it
    description: str  # what the files are for, under the picker
    files: str  # what to upload, for people
    write: Callable[[Tokenizer, Mapping], Files] | None  # None: read only (Mistral's tekken.json)
    read: Callable[[Found, ImportOptions], Imported]
    kinds: tuple[FileKind, ...]
    file_sets: tuple[tuple[str, ...], ...]
    uses_trace: bool = False
    # holds PickyBPE's removals (Vocab.removals): export refuses a tokenizer with any otherwise
    removals: bool = False
    import_title: str | None = None  # as an import names it, when not the title
    needs_pretokenizer: Callable[[Found], bool] = _never
    # the files name their normalizer (tokenizer.json, trace.json): an import may not name another
    holds_normalizer: bool = False

    def sniff(self, kinds: list[str]) -> bool:
        """Whether files of these kinds are exactly one of this format's file sets.

        >>> FORMAT = FileFormat("x", "", "", "", dict, dict, (), (("a", "b"),))
        >>> FORMAT.sniff(["b", "a"]), FORMAT.sniff(["a"])
        (True, False)
        """
        return sorted(kinds) in (sorted(s) for s in self.file_sets)
