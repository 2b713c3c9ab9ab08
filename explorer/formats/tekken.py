"""Mistral's ``tekken.json`` (format ``tekken``), read only: a tiktoken-style rank table in JSON,
with its regex and its special tokens, as ``mistral_common``'s ``Tekkenizer`` reads it::

    {"config": {"pattern": "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}...", "num_vocab_tokens": 150000,
                "default_vocab_size": 131072, "default_num_special_tokens": 1000, "version": "v3"},
     "vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\\u0000"}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...]}   (v7 and later)

Tekken's rules, as ``Tekkenizer`` applies them:

- ids ``0 .. default_num_special_tokens - 1`` are the special tokens, listed by rank in
  ``special_tokens``; a file of version v7 or earlier may list none, and then they are Tekken's
  twenty of those versions (``<unk>``, ``<s>``, ``</s>``, ``[INST]``, ...); the ids no listed one
  takes are ``<SPECIAL_{id}>`` up to ``default_num_special_tokens``;
- the vocabulary is cut to its first ``default_vocab_size - default_num_special_tokens`` tokens
  (the 2024 files list 150,000 and use 130,072), and each ordinary token's id is its rank plus
  the number of special tokens (rank 0, the byte 0x00, is id 1000);
- text is split by ``config.pattern`` (tiktoken's ``pat_str``) and each piece merged as tiktoken
  merges a rank table: the tokenizer is a rank table like ``.tiktoken`` files, its merges
  recovered from the ranks (:mod:`explorer.bpe.ranks`).

Special tokens are ours at their ids: they decode to their names (``Tekkenizer.decode`` drops
them by default) and ``encode`` reads their text as plain text unless asked to allow them
(``--allow-special``), which is what ``Tekkenizer.encode`` always does. The file's image and audio
settings are not used (text only; a note says so).
"""

from __future__ import annotations

import binascii
from collections.abc import Mapping

from ..bpe.ranks import tokenizer_from_ranks
from ..bpe.tokenizer import Tokenizer
from ..errors import FormatError
from ..stages.pipeline import Pipeline
from .base import FileFormat, FileKind, Found, Imported, ImportOptions, Upload, json_dict, json_list, require
from .shared import pretokenizer_of_pattern

__all__ = ["FORMAT", "LEGACY_SPECIALS", "special_names", "tokenizer_from_tekken"]

# Tekkenizer.DEPRECATED_SPECIAL_TOKENS: the special tokens of a file of version v7 or earlier
# that lists none (the 2024 files shipped with mistral_common list none), ids 0-19
LEGACY_SPECIALS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)
LEGACY_UNTIL = 7  # Tekkenizer: "Tokenizer > v7 should find special tokens in the tokenizer file"


def _count(value: object, where: str, *, low: int = 0) -> int:
    """A whole number of at least ``low`` from the file, or a sentence naming the key."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise FormatError(f"{where} must be a whole number of at least {low}")
    return value


def _version(config: Mapping, name: str) -> int:
    """The number of ``config.version`` (``"v3"`` -> 3), which says whether a file that lists
    no special tokens has Tekken's twenty legacy ones.

    >>> _version({"version": "v13"}, "tekken.json")
    13
    >>> _version({"version": "3"}, "tekken.json")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tekken.json 'config.version' must be 'v' and a number (v3, v7, v13, ...), found '3'
    """
    version = config.get("version")
    ok = isinstance(version, str) and version[:1] == "v" and version[1:].isdigit()
    require(ok, f"{name} 'config.version' must be 'v' and a number (v3, v7, v13, ...), found {version!r}")
    return int(version[1:])  # type: ignore[index]


def special_names(listed: object, *, count: int, version: int, name: str = "tekken.json") -> list[str]:
    """The special tokens by id, ``count`` of them: those ``special_tokens`` lists (each at
    its rank, ranks 0, 1, 2, ...), then ``<SPECIAL_{id}>`` for the ids left, as Tekkenizer fills
    them. A file of version v7 or earlier that lists none has :data:`LEGACY_SPECIALS`.

    >>> special_names([{"rank": 0, "token_str": "<unk>"}, {"rank": 1, "token_str": "<s>"}], count=4, version=13)
    ['<unk>', '<s>', '<SPECIAL_2>', '<SPECIAL_3>']
    >>> special_names(None, count=21, version=3)[-3:]
    ['[/SYSTEM_PROMPT]', '[TOOL_CONTENT]', '<SPECIAL_20>']
    >>> special_names(None, count=3, version=11)
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tekken.json lists no 'special_tokens': a file of version v8 or later must list them (Tekkenizer refuses it too)
    """
    if listed is None:
        require(
            version <= LEGACY_UNTIL,
            f"{name} lists no 'special_tokens': a file of version v{LEGACY_UNTIL + 1} or later must list them "
            "(Tekkenizer refuses it too)",
        )
        names = list(LEGACY_SPECIALS)
    else:
        names = []
        for i, entry in enumerate(json_list(listed, f"{name} 'special_tokens' must be a list")):
            entry = json_dict(entry, f"{name} 'special_tokens[{i}]' must be an object")
            # Tekkenizer takes a special token's id from its place in the list (decode looks it up
            # there) and its rank from the entry: the two must agree for ids to mean one thing
            require(entry.get("rank") == i, f"{name} 'special_tokens[{i}]' has rank {entry.get('rank')!r}, not {i}")
            token = entry.get("token_str")
            if not isinstance(token, str) or not token:
                raise FormatError(f"{name} 'special_tokens[{i}].token_str' must be a text")
            names.append(token)
    require(
        len(names) <= count,
        f"{name} lists {len(names)} special tokens, more than 'config.default_num_special_tokens' ({count})",
    )
    names += [f"<SPECIAL_{i}>" for i in range(len(names), count)]
    seen: set[str] = set()
    for token in names:  # a listed name may be a filler's too: Tekkenizer refuses it as well
        require(token not in seen, f"{name} names the special token {token!r} twice")
        seen.add(token)
    return names


def _ranked_tokens(vocab: list, inner: int, name: str) -> list[bytes]:
    """The first ``inner`` tokens of ``vocab``, each ``{"rank": i, "token_bytes": base64}``
    at its rank, decoded as Tekkenizer decodes them (``base64.b64decode``, not validating: its
    ``binascii.a2b_base64`` called directly, a third of the time on 130,000 tokens)."""
    tokens: list[bytes] = []
    b64decode = binascii.a2b_base64
    for i, entry in enumerate(vocab[:inner]):
        if not (isinstance(entry, dict) and entry.get("rank") == i and isinstance(entry.get("token_bytes"), str)):
            raise FormatError(
                f"{name} 'vocab[{i}]' must be an object with 'rank' {i} and 'token_bytes' (base64), as the "
                "vocabulary lists tokens by rank"
            )
        try:
            tokens.append(b64decode(entry["token_bytes"]))
        except (binascii.Error, ValueError):
            raise FormatError(f"{name} 'vocab[{i}].token_bytes': bad base64 {entry['token_bytes'][:40]!r}") from None
    return tokens


def tokenizer_from_tekken(doc: Mapping, *, name: str = "tekken.json") -> tuple[Tokenizer, list[str]]:
    """A ``tekken.json`` (parsed) as a tokenizer with Tekken's ids (see the module), and notes
    on what was cut, filled in or left unused."""
    config = json_dict(doc.get("config"), f"{name} needs 'config' (an object)")
    pattern = config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise FormatError(f"{name} 'config.pattern' must be a regex (a text)")
    version = _version(config, name)
    size = _count(config.get("default_vocab_size"), f"{name} 'config.default_vocab_size'", low=1)
    n_special = _count(config.get("default_num_special_tokens"), f"{name} 'config.default_num_special_tokens'")
    vocab = json_list(doc.get("vocab"), f"{name} 'vocab' must be a list")
    inner = size - n_special
    require(
        256 <= inner <= len(vocab),
        f"{name}: 'config.default_vocab_size' {size:,} less {n_special:,} special tokens leaves {inner:,} tokens; "
        f"the vocabulary lists {len(vocab):,} and its first 256 are the bytes",
    )
    listed = doc.get("special_tokens")
    specials = special_names(listed, count=n_special, version=version, name=name)
    tokens = _ranked_tokens(vocab, inner, name)
    require(
        all(tokens[b] == bytes([b]) for b in range(256)),
        f"{name}: ranks 0-255 must be the bytes 0-255 in order, as Tekken's are",
    )
    pretokenizer, custom = pretokenizer_of_pattern(pattern)
    try:
        pipeline = Pipeline(pretokenizer=pretokenizer, pattern=custom, unit="byte")
        tok = tokenizer_from_ranks(
            tokens, pretokenizer=pipeline.pretokenizer, pattern=pipeline.pattern, leading=specials
        )
    except ValueError as err:  # ConfigError (the regex), FormatError (the ranks)
        raise FormatError(f"{name}: {err}") from None
    notes = []
    if inner < len(vocab):
        notes.append(
            f"{name} lists {len(vocab):,} tokens; Tekken uses the first {inner:,} ('config.default_vocab_size' "
            f"{size:,} less {n_special:,} special tokens), at ids {n_special:,} and up"
        )
    if listed is None:
        notes.append(
            f"{name} (version v{version}) lists no special tokens: Tekken's {len(LEGACY_SPECIALS)} of that version "
            f"({', '.join(LEGACY_SPECIALS[:3])}, ...), then <SPECIAL_{len(LEGACY_SPECIALS)}> and up"
        )
    unused = [key for key in ("image", "audio", "multimodal", "model_settings_builder") if doc.get(key)]
    if unused:
        notes.append(f"{name}'s {' and '.join(unused)} settings are not used here (text only)")
    return tok, notes


# ---- the format ---------------------------------------------------------------------------------
def _is_tekken(upload: Upload) -> bool:
    """A JSON object with ``config`` holding ``pattern`` and ``vocab`` a list of ranked tokens
    (its first entry holds ``rank`` and ``token_bytes``), whatever the file's name."""
    doc = upload.json
    config, vocab = doc.get("config"), doc.get("vocab")
    return (
        isinstance(config, dict)
        and "pattern" in config
        and isinstance(vocab, list)
        and (not vocab or (isinstance(vocab[0], dict) and {"rank", "token_bytes"} <= vocab[0].keys()))
    )


def _read(found: Found, options: ImportOptions) -> Imported:
    upload = found["tekken"]
    tok, notes = tokenizer_from_tekken(upload.json, name=upload.name)
    return Imported(tok, notes)


FORMAT = FileFormat(
    name="tekken",
    title="Mistral tekken.json",
    description="Mistral's Tekken tokenizer (mistral_common's Tekkenizer): read only",
    files="Mistral's tekken.json (its regex, ranked tokens and special tokens in one file)",
    write=None,  # read only: nothing here writes Mistral's file
    read=_read,
    # after tokenizer.json's kind, before the tiktoken JSON's: a tekken.json has neither 'model' nor 'pat_str'
    kinds=(FileKind("tekken", "json", 35, _is_tekken, what="Mistral's tekken.json with 'config' and 'vocab'"),),
    file_sets=(("tekken",),),
)
