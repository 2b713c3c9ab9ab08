"""Seed 004's merges file (format ``arrow``), both ways: one ``left right -> token`` line per
merge, nothing else::

    l o -> lo
    lo w -> low

The file names no alphabet, unit or pre-tokenizer: the reader infers them
(:mod:`explorer.formats.token_merges`) and says so in its notes.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..bpe.tokenizer import Tokenizer
from .base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, need, require
from .token_merges import merges_are_bytes, read_token_merges

__all__ = ["FORMAT", "read_arrow_merges", "to_arrow_merges"]


def to_arrow_merges(tok: Tokenizer) -> str:
    """Seed 004's merges file: ``left right -> token`` per merge."""
    need(
        not any(" " in tok.vocab[i] for pair in tok.merges for i in pair),
        "the 'a b -> ab' file separates tokens by spaces, and a token of this tokenizer holds a space",
    )
    return "".join(
        f"{tok.vocab[a]} {tok.vocab[b]} -> {tok.vocab[n]}\n" for (a, b), n in zip(tok.merges, tok.merged_ids)
    )


def read_arrow_merges(text: str, *, name: str = "merges.txt") -> tuple[list[tuple[str, str]], list[int]]:
    """Seed 004's merges file (``left right -> token`` per line) -> the pairs and the line each
    is on.

    >>> read_arrow_merges("l o -> lo\\n\\nlo w -> low\\n")
    ([('l', 'o'), ('lo', 'w')], [1, 3])
    >>> read_arrow_merges("l o -> lo\\nlo w low\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merges.txt line 2: expected 'left right -> token', found 'lo w low'
    """
    pairs, where = [], []
    for n, raw in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        parts = line.split(" ")  # tokens hold no space (the exporter refuses one that does)
        require(
            len(parts) == 4 and parts[2] == "->" and all(parts),
            f"{name} line {n}: expected 'left right -> token', found {line[:60]!r}",
        )
        a, b, _, made = parts
        require(made == a + b, f"{name} line {n}: {a!r} + {b!r} makes {a + b!r}, not {made!r}")
        pairs.append((a, b))
        where.append(n)
    require(bool(pairs), f"{name} holds no merges")
    return pairs, where


def _has_arrows(upload: Upload) -> bool:
    return any(" -> " in line for line in upload.stripped.split("\n", 50)[:50])


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"merges.txt": to_arrow_merges(tok)}


def _read(found: Found, options: ImportOptions) -> Imported:
    upload = found["arrow"]
    merges, lines = read_arrow_merges(upload.text, name=upload.name)
    return read_token_merges(upload, merges, lines, options, what="arrow merges")


def _needs_pretokenizer(found: Found) -> bool:
    upload = found["arrow"]
    return merges_are_bytes(read_arrow_merges(upload.text, name=upload.name)[0])


FORMAT = FileFormat(
    name="arrow",
    title="merges as 'a b -> ab'",
    description="seed 004's merges file, one 'left right -> token' line per merge",
    files="a merges file of 'left right -> token' lines (seed 004)",
    write=_write,
    read=_read,
    # after a '#version' merges file, before merges without that line (two tokens on the first)
    kinds=(FileKind("arrow", "text", 60, _has_arrows),),
    file_sets=(("arrow",),),
    needs_pretokenizer=_needs_pretokenizer,
)
