"""subword-nmt's codes file (format ``subword-nmt``), both ways, and the merges-file layout it
shares with GPT-2's ``merges.txt``: a ``#version`` line, then ``left right`` per merge::

    #version: 0.2
    l o
    lo w</w>

subword-nmt splits text on spaces only (pre-tokenizer ``spaces``: tabs and no-break spaces stay
inside words) and marks a word's end with ``</w>``: glued to the last character in version 0.2
(marker eow-glued), a symbol of its own in version 0.1 (marker eow, Sennrich et al. 2016). The
codes list no alphabet: it is the symbols the merges use that no merge makes; a character
outside it is kept as itself, as ``apply_bpe`` keeps it (``EncodeOptions.keep_unknown``), and
the glossaries given at import (``apply_bpe --glossaries``) are never split.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..bpe.config import EncodeOptions, MarkerName
from ..bpe.tokenizer import Tokenizer
from ..stages.pipeline import Pipeline
from .base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, need, require
from .shared import implied_alphabet, tokenizer_from_vocab_merges

__all__ = [
    "FORMAT",
    "MERGES_KINDS",
    "SUBWORD_NMT_VERSIONS",
    "merge_lines",
    "read_merge_lines",
    "to_subword_nmt_codes",
    "tokenizer_from_subword_nmt",
]

SUBWORD_NMT_VERSIONS: dict[MarkerName, str] = {"eow-glued": "0.2", "eow": "0.1"}  # marker -> the codes' version


# ---- the merges-file layout ---------------------------------------------------------------------
def merge_lines(tok: Tokenizer, *, version: str) -> str:
    """``#version: <version>`` then ``left right`` per merge.

    >>> from explorer import make_config, train
    >>> print(merge_lines(train("aaa", make_config("bytes", num_merges=1)).tokenizer(), version="0.2"), end="")
    #version: 0.2
    a a
    """
    return f"#version: {version}\n" + "".join(f"{tok.vocab[a]} {tok.vocab[b]}\n" for a, b in tok.merges)


# a merges file's lines after '#version', as the line reader takes them when all are well formed
_MERGE_BODY = re.compile(r"(?:\S++ \S++(?:\n|\Z))*+")  # possessive: nothing to backtrack into
_PAIR = re.compile(r"(\S+) (\S+)")


def read_merge_lines(text: str, name: str) -> tuple[list[tuple[str, str]], list[int]]:
    """``#version`` then ``left right`` per line -> the pairs and the line each is on (for the
    errors found later, at a merge).

    >>> read_merge_lines("#version: 0.2\\na b\\n\\nab c\\n", "merges.txt")
    ([('a', 'b'), ('ab', 'c')], [2, 4])
    """
    head, _, body = text.partition("\n")
    if head.startswith("#version") and head.splitlines() == [head] and _MERGE_BODY.fullmatch(body):
        # every line 'left right' (no whitespace in either, so no other line break), none blank:
        # the pairs found at once
        pairs = _PAIR.findall(body)
        return pairs, list(range(2, len(pairs) + 2))
    lines = text.splitlines()
    require(
        bool(lines) and lines[0].startswith("#version"),
        f"{name} line 1: a '#version' header is missing (found {lines[0][:40]!r})" if lines else f"{name} is empty",
    )
    body_lines = lines[1:]
    pairs, where = [], []
    for n, line in enumerate(body_lines, 2):
        if not line.strip():
            continue
        parts = line.rstrip("\r\n").split(" ")
        require(
            len(parts) == 2 and all(parts),
            f"{name} line {n}: expected two tokens separated by one space, found {line[:60]!r}",
        )
        pairs.append((parts[0], parts[1]))
        where.append(n)
    return pairs, where


def _versioned(upload: Upload) -> bool:
    return not upload.stripped or upload.stripped.startswith("#")  # '#version' is checked where it is read


def _two_tokens(upload: Upload) -> bool:
    # merges without their '#version' line: said so where they are read
    return len(upload.first_line.removesuffix("\r").split(" ")) == 2


# a '#' line is merges before anything but a minbpe file, a CSV or a rank file is looked for; two
# tokens on the first line only after arrow merges ('l o -> lo') are
MERGES_KINDS = (FileKind("merges", "text", 50, _versioned), FileKind("merges", "text", 70, _two_tokens))


# ---- subword-nmt codes --------------------------------------------------------------------------
def to_subword_nmt_codes(tok: Tokenizer) -> str:
    """subword-nmt codes: a ``#version`` line, then ``left right`` per merge; only the pipelines
    subword-nmt has fit (whitespace split, ``</w>`` marker, characters, no normalizer).

    >>> from explorer import make_config, train
    >>> print(to_subword_nmt_codes(train("low low", make_config("sennrich", num_merges=2)).tokenizer()), end="")
    #version: 0.1
    l o
    lo w
    """
    cfg = tok.pipeline
    need(cfg.unit == "char", "subword-nmt merges characters; this tokenizer is byte-level")
    need(
        cfg.marker in SUBWORD_NMT_VERSIONS,
        f"subword-nmt marks a word's end with '</w>' (marker eow-glued or eow); "
        f"this tokenizer's marker is {cfg.marker!r}",
    )
    need(
        cfg.pretokenizer in ("spaces", "whitespace"),
        f"subword-nmt splits words on spaces; this tokenizer uses the {cfg.pretokenizer!r} pre-tokenizer",
    )
    need(cfg.normalizer == "none", f"subword-nmt has no normalizer; this tokenizer normalizes ({cfg.normalizer})")
    return merge_lines(tok, version=SUBWORD_NMT_VERSIONS[cfg.marker])


def tokenizer_from_subword_nmt(codes: str, *, name: str = "codes", glossaries: Sequence[str] = ()) -> Tokenizer:
    """subword-nmt codes as a character-level tokenizer that encodes as ``apply_bpe``: words
    split on spaces, ``</w>`` glued to the last character (``#version: 0.2``) or a symbol of
    its own (``0.1``). The codes list no alphabet: it is the symbols the merges use that no
    merge makes, in order of first use; other characters keep their text, with ids past the
    vocabulary. ``glossaries`` (regexes) are never split (``apply_bpe --glossaries``).

    >>> tok = tokenizer_from_subword_nmt("#version: 0.2\\nl o\\nlo w</w>\\n")
    >>> tok.vocab.tokens, tok.tokens(tok.encode("lower\\xa0low"))
    (('l', 'o', 'w</w>', 'lo', 'low</w>'), ['lo', 'w', 'e', 'r', '\\xa0', 'low</w>'])
    """
    merges, lines = read_merge_lines(codes, name)
    version = codes.split("\n", 1)[0].partition(":")[2].strip()
    markers = {v: m for m, v in SUBWORD_NMT_VERSIONS.items()}
    require(version in markers, f"{name} line 1: version {version!r} (subword-nmt writes 0.1 or 0.2)")
    alphabet = implied_alphabet(merges)
    vocab = {s: i for i, s in enumerate(alphabet)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    pipeline = Pipeline(pretokenizer="spaces", unit="char", marker=markers[version])
    return tokenizer_from_vocab_merges(
        vocab,
        merges,
        pipeline=pipeline,
        encoding=EncodeOptions(keep_unknown=True, glossaries=tuple(glossaries)),
        where=lambda n: f"{name} line {lines[n]}",
        vocab_name=name,
    )


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"codes.txt": to_subword_nmt_codes(tok)}


def _read(found: Found, options: ImportOptions) -> Imported:
    codes = found["merges"]
    tok = tokenizer_from_subword_nmt(codes.text, name=codes.name, glossaries=options.glossaries)
    notes = [
        f"subword-nmt codes carry no alphabet: {len(tok.alphabet)} symbols implied by the merges; other "
        "characters are kept as themselves, as apply_bpe keeps them (ids past the vocabulary)"
    ]
    if options.glossaries:
        notes.append(f"glossaries never split: {', '.join(options.glossaries)}")
    return Imported(tok, notes)


FORMAT = FileFormat(
    name="subword-nmt",
    title="subword-nmt codes",
    description="the codes file for subword_nmt apply_bpe (-c codes.txt)",
    files="a codes file ('#version: 0.2' then 'a b' lines)",
    write=_write,
    read=_read,
    kinds=MERGES_KINDS,
    file_sets=(("merges",),),
)
