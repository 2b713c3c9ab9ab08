"""tiktoken's rank file (format ``tiktoken``), both ways: ``.tiktoken`` (``base64(token) rank``
per line) and the JSON beside it with tiktoken's own keys, ``pat_str`` and ``special_tokens``::

    tokenizer.tiktoken   IQ== 0
                         Ig== 1
                         ...
    tokenizer.json       {"pat_str": "'(?i:[sdmt]|ll|ve|re)|...", "special_tokens": {"<|endoftext|>": 100257}}

A rank file lists tokens, not merges: the merges are recovered from the ranks
(:mod:`explorer.bpe.ranks`); a token that no merge makes (Llama 3 has 678) is kept, and encodes as
tiktoken encodes it. A rank file is told by its lines, whatever its name (Llama 3 and 4 call theirs
``tokenizer.model``), and a line ``= 50256`` is the empty token, as ``load_tiktoken_bpe`` reads it
(Whisper's last rank). A ``.tiktoken`` alone that is one of the bundled tables is that
table (its regex and special tokens come with it); another one alone needs the pre-tokenizer
chosen.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from itertools import repeat
from operator import and_
from typing import NamedTuple

from ..bpe.ranks import tokenizer_from_ranks
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError
from ..stages.pipeline import Pipeline
from ..stages.pretokenizers import TIKTOKEN_PATTERNS
from ..stages.registry import either
from ..stages.units import UNICODE_TO_BYTE, byte_alphabet
from .base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, dump_json, require
from .bundled import PRETRAINED, bundled_table, load_pretrained
from .shared import byte_pipeline_only, one_id_per_token, pretokenizer_of_pattern
from .zips import OR_THEIR_ZIP

__all__ = [
    "FORMAT",
    "read_ranks",
    "read_tiktoken",
    "to_tiktoken",
    "to_tiktoken_meta",
    "tokenizer_from_tiktoken",
]


# ---- writing ----------------------------------------------------------------------------------
def to_tiktoken(tok: Tokenizer) -> str:
    """A ``.tiktoken`` rank file (``base64(bytes) rank`` per line) for a byte-level tokenizer
    whose alphabet holds all 256 bytes; special tokens are left out, as tiktoken keeps them apart."""
    if tok.pipeline.unit != "byte":
        raise ConfigError("a .tiktoken file holds byte-level tokens; this tokenizer is character-level")
    if not set(byte_alphabet()) <= set(tok.alphabet):
        raise ConfigError("tiktoken needs all 256 bytes in the alphabet: train with the full byte alphabet")
    one_id_per_token(tok, "tiktoken")
    # an empty token (Whisper's last rank) is written as tiktoken's files write it: '= 50256'
    lines = [f"{base64.b64encode(b).decode('ascii')} {i}\n" for i, b in enumerate(_raw_tokens(tok), tok.n_special)]
    lines += [f"{base64.b64encode(tok.token_bytes(i)).decode('ascii') or '='} {i}\n" for i in sorted(tok.blank_ids)]
    return "".join(lines)


# display char -> the latin-1 char of its byte: the tokens' bytes by one translate
_DISPLAY_TO_LATIN1 = str.maketrans({c: chr(b) for c, b in UNICODE_TO_BYTE.items()})


def _raw_tokens(tok: Tokenizer) -> list[bytes]:
    """The bytes of the tokens after the leading special ones (``tok.token_bytes`` of each, at a
    tenth of its cost: a rank table has 200,000 of them).

    >>> from explorer import make_config, train
    >>> t = train("hé hé", make_config("gpt2", num_merges=1)).tokenizer()
    >>> _raw_tokens(t) == [t.token_bytes(i) for i in range(t.n_special, len(t.vocab))]
    True
    """
    ids = range(tok.n_special, len(tok.vocab))
    if tok.unk_id in ids or any(tok.is_special(i) for i in (ids[:1] or ())):
        return [tok.token_bytes(i) for i in ids]
    # U+FFFF is no display char: it splits the joined tokens back apart
    joined = "\uffff".join(tok.id_to_token(i) for i in ids).translate(_DISPLAY_TO_LATIN1)
    return [t.encode("latin-1") for t in joined.split("\uffff")] if ids else []


def to_tiktoken_meta(tok: Tokenizer) -> dict:
    """The JSON file that goes beside a ``.tiktoken``: tiktoken's own keys ``pat_str`` and
    ``special_tokens`` (name -> id), so that ``tiktoken.Encoding(name, pat_str=...,
    mergeable_ranks=load_tiktoken_bpe(path), special_tokens=...)`` encodes as we do. A setting
    tiktoken cannot represent raises ConfigError that names it.

    >>> from explorer import make_config, train
    >>> to_tiktoken_meta(train("hello world", make_config("gpt2", alphabet="full-bytes", num_merges=2)).tokenizer())["special_tokens"]
    {'<|endoftext|>': 0}
    """
    cfg = tok.pipeline
    byte_pipeline_only(tok, "tiktoken")
    if cfg.pretokenizer not in TIKTOKEN_PATTERNS:
        raise ConfigError(
            f"tiktoken encodes only what its regex matches; the {cfg.pretokenizer!r} pre-tokenizer "
            f"keeps other text too (use {either(TIKTOKEN_PATTERNS)})"
        )
    return {"pat_str": TIKTOKEN_PATTERNS[cfg.pretokenizer], "special_tokens": dict(tok.special_ids)}


# ---- reading ----------------------------------------------------------------------------------
_PAD = ord("=")


def read_tiktoken(data: bytes, *, name: str = ".tiktoken") -> list[bytes]:
    """A ``.tiktoken`` file (``base64(token) rank`` per line) -> the tokens in rank order.

    >>> read_tiktoken(b"IQ== 0\\nIg== 1\\n")
    [b'!', b'"']
    >>> read_tiktoken(b"IQ== 0\\nIg== 2\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: .tiktoken line 2: rank 2 where rank 1 was expected (ranks must run 0, 1, 2, ...)
    """
    return _read_table(data, name=name, start=0).tokens


def _token_of(field: bytes, where: str) -> bytes:
    """One line's token from its base64. ``=`` (or ``==``...) is the empty token: tiktoken's
    ``load_tiktoken_bpe`` reads it with ``base64.b64decode``, which gives ``b""`` (Whisper's
    ``.tiktoken`` files end with ``= 50256``); strict base64 otherwise.

    >>> _token_of(b"IQ==", "t"), _token_of(b"=", "t")
    (b'!', b'')
    >>> _token_of(b"I=Q", "t.tiktoken line 3")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: t.tiktoken line 3: bad base64 'I=Q'
    """
    if not field.strip(b"="):
        return b""
    try:
        return base64.b64decode(field, validate=True)
    except (binascii.Error, ValueError):
        raise FormatError(f"{where}: bad base64 {field[:40].decode('ascii', 'replace')!r}") from None


def read_ranks(data: bytes, *, name: str = ".tiktoken", start: int | None = None) -> list[tuple[bytes, int]]:
    """(token, rank) per line, ranks consecutive from ``start`` (from the first line's when None).

    >>> read_ranks(b"IQ== 1\\nIQ== 2\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: .tiktoken line 2: the token b'!' already has rank 1 (line 1)
    """
    table = _read_table(data, name=name, start=start)
    return list(zip(table.tokens, range(table.first, table.first + len(table.tokens))))


class _Table(NamedTuple):
    """A rank file read: its tokens in rank order, the first line's rank, and each token's
    position in ``tokens`` when the reader built it (None: not built)."""

    tokens: list[bytes]
    first: int
    positions: dict[bytes, int] | None = None


def _read_table(data: bytes, *, name: str, start: int | None = None) -> _Table:
    """``read_ranks`` as a ``_Table``: read at once when the file is well formed, else line by
    line (which says where it is not)."""
    fast = _table_at_once(data, start)
    if fast is not None:
        return fast
    out: list[tuple[bytes, int]] = []
    seen: dict[bytes, tuple[int, int]] = {}
    ranks: dict[int, int] = {}
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        require(len(fields) == 2 and fields[1].isdigit(), f"{name} line {n}: expected 'base64 rank'")
        token = _token_of(fields[0], f"{name} line {n}")
        rank = int(fields[1])
        require(rank not in ranks, f"{name} line {n}: rank {rank} is given twice (also on line {ranks.get(rank)})")
        if token in seen:
            raise FormatError(
                f"{name} line {n}: the token {token!r} already has rank {seen[token][0]} (line {seen[token][1]})"
            )
        expected = (start if start is not None else rank) if not out else out[-1][1] + 1
        require(
            rank == expected,
            f"{name} line {n}: rank {rank} where rank {expected} was expected (ranks must run 0, 1, 2, ...)",
        )
        ranks[rank] = n
        seen[token] = (rank, n)
        out.append((token, rank))
    require(bool(out), f"{name} holds no ranks")
    return _Table([t for t, _ in out], out[0][1])


# a file whose every line is 'base64 rank', one space between: the base64 as ``b64decode(validate=True)``
# takes it (the alphabet, then at most two '='), '=' / '==' alone (the empty token), or nothing (a
# line that ``split`` leaves one field of, told by the count of fields). Possessive: nothing to
# backtrack into, four times as fast as the same regex without.
_WELL_FORMED = re.compile(rb"(?:[A-Za-z0-9+/]*+={0,2}+ [0-9]++\n)++")


def _table_at_once(data: bytes, start: int | None) -> _Table | None:
    """``_read_table`` of a well-formed file, each check made over the whole file at once (one
    regex, the ranks against a range, the tokens against a dict), faster than tiktoken's own
    reader; None when any check fails, so that the line-by-line reader says where.

    >>> _table_at_once(b"IQ== 0\\nIg== 1\\n= 2\\n", 0), _table_at_once(b"IQ== 0\\nIQ== 1\\n", 0)
    (_Table(tokens=[b'!', b'"', b''], first=0, positions={b'!': 0, b'"': 1, b'': 2}), None)
    >>> _table_at_once(b" 0\\n", 0), _table_at_once(b"IQ== 0\\nIg== 2\\n", 0), _table_at_once(b"IQ 0\\n", 0)
    (None, None, None)
    >>> _table_at_once(b"IQ== 0\\n= 1\\nIg== 2\\n", 0), _table_at_once(b"IQ=== 0\\n", 0), _table_at_once(b"SUlJ== 0\\n", 0)
    (None, None, None)
    """
    # the line reader's lines: a file of '\n' line ends, the last one too, is its own lines joined
    text = data if data.endswith(b"\n") and b"\r" not in data else b"\n".join(data.splitlines()) + b"\n"
    if _WELL_FORMED.fullmatch(text) is None:
        return None
    fields = text.split()
    if len(fields) != 2 * text.count(b"\n"):  # a line with no base64 before its rank
        return None
    encoded = fields[0::2]
    first = int(fields[1]) if start is None else start
    if list(map(int, fields[1::2])) != list(range(first, first + len(encoded))):
        return None
    # the empty token ('=' or '=='), as Whisper's last line; elsewhere the line reader reads it
    blank = encoded[-1][0] == _PAD
    if blank:
        encoded.pop()
    # b64decode(validate=True) is a2b_base64 in strict mode, which takes what the lenient mode
    # takes of fields in whole quads (the regex leaves '=' only at their end); an error (a length
    # not a multiple of 4) is left for the line reader to say where
    if any(map(and_, map(len, encoded), repeat(3))):
        return None
    try:
        tokens = list(map(binascii.a2b_base64, encoded))
    except binascii.Error:
        return None
    if blank:
        tokens.append(b"")
    index = dict(zip(tokens, range(len(tokens))))
    if len(index) != len(tokens):
        return None
    return _Table(tokens, first, index)


def tokenizer_from_tiktoken(
    data: bytes,
    meta: Mapping | None = None,
    *,
    pretokenizer: str | None = None,
    pattern: str | None = None,
    name: str = ".tiktoken",
) -> Tokenizer:
    """A ``.tiktoken`` rank file (and the JSON beside it: ``pat_str``, ``special_tokens``) as a
    tokenizer with tiktoken's rules; its merges are recovered from the ranks. Without the JSON,
    ``pretokenizer`` (and ``pattern``) say how text is split; with it they are not used."""
    specials: dict[str, int] = {}
    if meta is not None:
        require(isinstance(meta.get("pat_str"), str), "the tiktoken JSON needs 'pat_str' (a string)")
        specials = meta.get("special_tokens") or {}
        require(
            isinstance(specials, dict) and all(isinstance(i, int) for i in specials.values()),
            "the tiktoken JSON's 'special_tokens' must map names to integer ids",
        )
        pretokenizer, pattern = pretokenizer_of_pattern(meta["pat_str"])  # the file's own regex wins
    table = _read_table(data, name=name)
    if pretokenizer is None:
        raise FormatError(
            f"{name} holds no regex: give the JSON beside it (pat_str) or choose the "
            f"pre-tokenizer ({', '.join(TIKTOKEN_PATTERNS)})"
        )
    first, last = table.first, table.first + len(table.tokens) - 1
    leading = sorted((i, t) for t, i in specials.items() if i < first)
    require(
        [i for i, _ in leading] == list(range(first)),
        f"{name}: ranks start at {first}, so the special tokens must take ids 0-{first - 1}"
        if first
        else f"{name}: a special token's id is negative",
    )
    trailing = {t: i for t, i in specials.items() if i >= first}
    for t, i in trailing.items():
        require(i > last, f"the tiktoken JSON gives special token {t!r} id {i}, a rank of {name}")
    try:
        pipeline = Pipeline(pretokenizer=pretokenizer, pattern=pattern, unit="byte")
        return tokenizer_from_ranks(
            table.tokens,
            index=table.positions,
            pretokenizer=pipeline.pretokenizer,
            pattern=pipeline.pattern,
            special_ids=trailing,
            leading=[t for _, t in leading],
        )
    except ValueError as err:  # ConfigError, FormatError, and the tokenizer's own checks of special ids
        raise FormatError(f"{name}: {err}") from None


# ---- the format ---------------------------------------------------------------------------------
def _named_tiktoken(upload: Upload) -> bool:
    return upload.lower.endswith(".tiktoken")


def _ranks_first(upload: Upload) -> bool:
    first = upload.first_line.split()
    return len(first) == 2 and first[1].isdigit() and not upload.stripped.startswith("#")


def _is_meta(upload: Upload) -> bool:
    return "pat_str" in upload.json


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"tokenizer.json": dump_json(to_tiktoken_meta(tok)), "tokenizer.tiktoken": to_tiktoken(tok)}


def _read(found: Found, options: ImportOptions) -> Imported:
    ranks = found["tiktoken"]
    meta = found["tiktoken-meta"].json if "tiktoken-meta" in found else None
    bundled = bundled_table(ranks.data) if meta is None else None
    if bundled is None:
        tok = tokenizer_from_tiktoken(
            ranks.data, meta, pretokenizer=options.pretokenizer, pattern=options.pattern, name=ranks.name
        )
        return Imported(
            tok,
            []
            if meta is not None
            else [f"{ranks.name} holds no regex: pre-tokenizer {options.pretokenizer}, as chosen"],
        )
    tok = load_pretrained(bundled)
    unused = options.pretokenizer not in (None, tok.pipeline.pretokenizer)
    return Imported(
        tok,
        [
            f"recognised as the bundled {bundled} table: its regex ({PRETRAINED[bundled].pretokenizer}) and "
            "special tokens come with it" + (", and the pre-tokenizer chosen is not used" if unused else "")
        ],
    )


def _needs_pretokenizer(found: Found) -> bool:
    return "tiktoken-meta" not in found and bundled_table(found["tiktoken"].data) is None


FORMAT = FileFormat(
    name="tiktoken",
    title="tiktoken .tiktoken + JSON",
    import_title="tiktoken rank file",
    description="the rank file for tiktoken.load_tiktoken_bpe and a JSON with pat_str and special_tokens",
    files="a .tiktoken file (or a tokenizer.model of 'base64 rank' lines, as Llama 3's) and the JSON with pat_str beside it"
    + OR_THEIR_ZIP
    + " (a bundled table, e.g. cl100k_base.tiktoken, alone)",
    write=_write,
    read=_read,
    kinds=(
        FileKind("tiktoken", "name", 10, _named_tiktoken),
        # a first line 'base64 rank', after minbpe files and CSVs, before merges files
        FileKind("tiktoken", "text", 40, _ranks_first),
        # last of the JSON kinds: a tokenizer.json may hold 'pat_str' too
        FileKind(
            "tiktoken-meta",
            "json",
            40,
            _is_meta,
            hint="a tiktoken JSON needs its .tiktoken file",
            what="a tiktoken JSON with 'pat_str'",
        ),
    ),
    file_sets=(("tiktoken",), ("tiktoken", "tiktoken-meta")),
    needs_pretokenizer=_needs_pretokenizer,
)
