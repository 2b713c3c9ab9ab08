"""Karpathy's minbpe (format ``minbpe``), both ways: ``.model`` (read back by
``Tokenizer.load``) and ``.vocab`` (for people; minbpe never reads it)::

    tokenizer.model   minbpe v1
                      <the split pattern, empty for none>
                      <number of special tokens>, then 'token id' per special token
                      97 97        (one 'left_id right_id' per merge: merge i makes id 256 + i)
    tokenizer.vocab   [a][a] -> [aa] 256

Byte level with ids 0-255 the 256 bytes in byte order, no normalizer, a regex that keeps only
its matches.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

import regex

from ..bpe.tokenizer import Tokenizer
from ..bpe.vocab import Vocab
from ..errors import ConfigError, FormatError
from ..stages.pipeline import Pipeline
from ..stages.pretokenizers import MINBPE_PATTERNS, RegexSplit
from ..stages.registry import either
from ..stages.units import byte_alphabet, bytes_to_display
from .base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, need, require, whole_number
from .shared import byte_pipeline_only, pretokenizer_of_pattern
from .zips import OR_THEIR_ZIP

__all__ = ["FORMAT", "to_minbpe_model", "to_minbpe_vocab", "tokenizer_from_minbpe"]


# ---- writing ----------------------------------------------------------------------------------
def cuts_every_character(pattern: str) -> bool:
    """Whether a regex's matches cover every text (checked as our built-in pre-tokenizers'
    patterns are, on probes of every kind of character): then keeping only its matches, as
    minbpe does, and keeping the text between them too, as our custom regex does, cut alike.

    >>> cuts_every_character(r"\\p{L}+|\\s+|[^\\p{L}\\s]+"), cuts_every_character(r"\\p{L}+")
    (True, False)
    """
    try:
        RegexSplit("", pattern)
    except (ConfigError, regex.error):
        return False
    return True


def _minbpe_pattern(tok: Tokenizer) -> str | None:
    """The pattern line for this tokenizer's pre-tokenizer, or None when minbpe cannot say it: a
    custom regex qualifies when it matches every character (minbpe drops what it does not
    match) and survives minbpe's reading of the line (one line, ``strip()``-ped)."""
    cfg = tok.pipeline
    if cfg.pretokenizer in MINBPE_PATTERNS:
        return MINBPE_PATTERNS[cfg.pretokenizer]
    pattern = cfg.pattern or ""
    if cfg.pretokenizer == "regex" and pattern == pattern.strip() and "\n" not in pattern:
        return pattern if cuts_every_character(pattern) else None
    return None


def _minbpe_check(tok: Tokenizer) -> None:
    cfg = tok.pipeline
    byte_pipeline_only(tok, "minbpe")
    need(
        _minbpe_pattern(tok) is not None,
        f"minbpe keeps only its regex's matches; the {cfg.pretokenizer!r} pre-tokenizer keeps other text too "
        f"(use {either(MINBPE_PATTERNS)}, or a regex that matches every character)",
    )
    need(tok.n_special == 0, "minbpe's ids 0-255 are the bytes; this tokenizer gives its special tokens the first ids")
    need(
        list(tok.alphabet) == byte_alphabet(),
        "minbpe's ids 0-255 are the 256 bytes in byte order "
        "(train with the full byte alphabet in byte order, as the bytes preset)",
    )
    need(
        tok.merged_ids == list(range(256, 256 + len(tok.merges))),
        "minbpe gives merge i the id 256 + i; this tokenizer reused an id (train with id reuse off)",
    )


def to_minbpe_model(tok: Tokenizer) -> str:
    """minbpe's ``.model``: ``minbpe v1``, the split pattern, the special tokens, then
    ``left_id right_id`` per merge (merge i makes id 256 + i).

    >>> from explorer import make_config, train
    >>> print(to_minbpe_model(train("aaab", make_config("bytes", num_merges=2)).tokenizer()), end="")
    minbpe v1
    <BLANKLINE>
    0
    97 97
    256 97
    """
    _minbpe_check(tok)
    lines = ["minbpe v1", _minbpe_pattern(tok) or "", str(len(tok.special_ids))]
    lines += [f"{t} {i}" for t, i in tok.special_ids.items()]
    lines += [f"{a} {b}" for a, b in tok.merges]
    return "\n".join(lines) + "\n"


def _minbpe_render(data: bytes) -> str:
    # minbpe's render_token: decode with replacement, control characters as \\uXXXX escapes
    return "".join(
        c if unicodedata.category(c)[0] != "C" else f"\\u{ord(c):04x}" for c in data.decode("utf-8", errors="replace")
    )


def to_minbpe_vocab(tok: Tokenizer) -> str:
    """minbpe's ``.vocab``, for people to read: ``[ab] 256`` per token, with its two parts for
    a merged one (``[a][b] -> [ab] 256``). minbpe never reads it back."""
    _minbpe_check(tok)
    made_by = {n: pair for pair, n in zip(tok.merges, tok.merged_ids)}
    out = []
    for i in range(len(tok.vocab)):
        s = _minbpe_render(tok.token_bytes(i))
        if i in made_by:
            a, b = made_by[i]
            out.append(f"[{_minbpe_render(tok.token_bytes(a))}][{_minbpe_render(tok.token_bytes(b))}] -> [{s}] {i}")
        else:
            out.append(f"[{s}] {i}")
    return "\n".join(out) + "\n"


# ---- reading ----------------------------------------------------------------------------------
def tokenizer_from_minbpe(model: str, *, name: str = "tokenizer.model") -> Tokenizer:
    """minbpe's ``.model`` (``minbpe v1``, pattern, special tokens, ``left right`` id pairs):
    bytes 0-255, merge i makes id 256 + i, special tokens at their own ids."""
    lines = model.split("\n")
    require(lines[0].strip() == "minbpe v1", f"{name} line 1: expected 'minbpe v1', found {lines[0][:40]!r}")
    expected = f"{name} line 3: expected the number of special tokens"
    require(len(lines) >= 3, expected)
    pattern = lines[1]
    n_special = whole_number(lines[2], expected)
    specials: dict[str, int] = {}
    for n in range(3, 3 + n_special):
        parts = lines[n].rsplit(" ", 1) if n < len(lines) else []
        expected = f"{name} line {n + 1}: expected 'special_token id'"
        require(len(parts) == 2, expected)
        at = whole_number(parts[1], expected)
        taken = next((t for t, i in specials.items() if i == at), None)
        require(
            taken is None and parts[0] not in specials,
            f"{name} line {n + 1}: special token {parts[0]!r} or id {parts[1]} is given twice",
        )
        specials[parts[0]] = at
    merges: list[tuple[int, int]] = []
    for n in range(3 + n_special, len(lines)):
        if not lines[n].strip():
            continue
        parts = lines[n].split()
        expected = f"{name} line {n + 1}: expected two ids"
        require(len(parts) == 2, expected)
        a, b = (whole_number(p, expected) for p in parts)
        new = 256 + len(merges)
        require(
            a < new and b < new,
            f"{name} line {n + 1}: id {max(a, b)} is not made before merge {len(merges) + 1} (which makes id {new})",
        )
        merges.append((a, b))
    end = 256 + len(merges)
    for t, i in specials.items():
        require(i >= end, f"{name}: special token {t!r} has id {i}, among the ids the merges make (below {end})")
    pretok, custom = ("none", None) if pattern == "" else pretokenizer_of_pattern(pattern)
    require(
        custom is None or cuts_every_character(custom),
        f"{name} line 2: minbpe keeps only the matches of its pattern, and {custom!r} does not match every "
        "character (the text between its matches would be dropped): not supported",
    )
    try:
        return Tokenizer(
            pipeline=Pipeline(pretokenizer=pretok, pattern=custom, unit="byte"),
            vocab=Vocab((), tuple(bytes_to_display(bytes([b])) for b in range(256)), tuple(merges), reuse_ids=False),
            special_ids=specials,
        )
    except ValueError as err:  # ConfigError too
        raise FormatError(f"{name}: {err}") from None


# ---- the format ---------------------------------------------------------------------------------
def _is_model(upload: Upload) -> bool:
    # by content, not by name: Llama 3 and 4 ship tiktoken ranks as 'tokenizer.model'
    return upload.stripped.startswith("minbpe")


def _is_vocab(upload: Upload) -> bool:
    return upload.lower.endswith(".vocab")


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"tokenizer.model": to_minbpe_model(tok), "tokenizer.vocab": to_minbpe_vocab(tok)}


def _read(found: Found, options: ImportOptions) -> Imported:
    model = found["minbpe-model"]
    return Imported(tokenizer_from_minbpe(model.text, name=model.name), [])


FORMAT = FileFormat(
    name="minbpe",
    title="minbpe .model + .vocab",
    import_title="minbpe .model",
    description="Karpathy's minbpe: tokenizer.model for Tokenizer.load, tokenizer.vocab to read",
    files="a .model file (its .vocab is optional)" + OR_THEIR_ZIP,
    write=_write,
    read=_read,
    # the first text kinds: a file that starts 'minbpe' (whatever its name) or a .vocab file
    kinds=(
        FileKind("minbpe-model", "text", 10, _is_model),
        FileKind(
            "minbpe-vocab", "text", 20, _is_vocab, hint="a minbpe .vocab needs its .model (only the .model is read)"
        ),
    ),
    file_sets=(("minbpe-model",), ("minbpe-model", "minbpe-vocab")),
)
