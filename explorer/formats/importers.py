"""Importers: tokenizers made elsewhere, read into ours.

Every format is one module (its writer, its reader, how its files are told apart) and one entry
of the registry (:mod:`explorer.formats.registry`); ``IMPORT_FORMATS`` is the registry seen from
here. ``import_files`` takes the uploaded files by name and finds their format from what they
hold (``registry.sniff``)::

    {"tokenizer.json": b'{"model": {"type": "BPE", ...'}               -> hf
    {"vocab.json": ..., "merges.txt": b"#version: 0.2\\n..."}           -> gpt2
    {"cl100k_base.tiktoken": ..., ["tokenizer.json": {"pat_str": ...}]} -> tiktoken
    {"codes.txt": b"#version: 0.2\\ne s\\n..."}                          -> subword-nmt
    {"tokenizer.model": b"minbpe v1\\n...", ["tokenizer.vocab"]}         -> minbpe
    {"trace.json": ...}                                                 -> trace
    {"merges.txt": b"l o -> lo\\n..."}                                   -> arrow (seed 004)
    {"merges.csv": b"step,left,right,token,id,..."}                     -> csv
    {"bpe-udhr_en-20-merges-gpt2.zip": b"PK..."}                        -> the format of the files inside

A zip counts as the files it holds (bounded: see ``unzip_files``), so the Train page's download
of a format of several files imports as it is. Arrow merges and the CSV name no alphabet, unit or
pre-tokenizer; what was assumed is said in ``import_report``'s notes, as is a ``.tiktoken``
recognised as a bundled table (which brings its own regex and special tokens).

Merges are the source of truth here too: the ids a file gives must be the ids its merges derive
(special tokens, the alphabet, one id per merge), and a file that says otherwise is refused with
the line or key where it goes wrong, never half-loaded. A tokenizer.json numbered in
SentencePiece's order (Llama 2's) is read with its merges' ids derived and the file's kept beside
them (``id_order``). Every failure is a FormatError with one sentence that names the file.
"""

from __future__ import annotations

import dataclasses
import gc
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import NamedTuple

from ..bpe.tokenizer import Tokenizer
from ..stages.normalizers import NORMALIZERS
from ..stages.pipeline import NormalizerName, check_name
from .arrow import read_arrow_merges
from .base import ImportOptions, require
from .gpt2 import tokenizer_from_gpt2, tokenizer_from_gpt2_files
from .hf import tokenizer_from_hf
from .merges_csv import read_merges_csv
from .minbpe import tokenizer_from_minbpe
from .registry import IMPORT_FORMATS, ImportFormat, sniff
from .shared import implied_alphabet, tokenizer_from_vocab_merges
from .subword_nmt import tokenizer_from_subword_nmt
from .tiktoken_ranks import read_ranks, read_tiktoken, tokenizer_from_tiktoken
from .token_merges import tokenizer_from_token_merges
from .zips import ZIP_MAX_MEMBERS, ZIP_MAX_RATIO, expand_zips, is_zip, unzip_files

__all__ = [
    "IMPORT_FORMATS",
    "ImportFormat",
    "ImportReport",
    "ZIP_MAX_MEMBERS",
    "ZIP_MAX_RATIO",
    "needs_pretokenizer",
    "holds_normalizer",
    "import_files",
    "import_report",
    "import_with_format",
    "implied_alphabet",
    "is_zip",
    "read_arrow_merges",
    "read_merges_csv",
    "read_ranks",
    "read_tiktoken",
    "tokenizer_from_gpt2",
    "tokenizer_from_gpt2_files",
    "tokenizer_from_hf",
    "tokenizer_from_vocab_merges",
    "tokenizer_from_tiktoken",
    "tokenizer_from_subword_nmt",
    "tokenizer_from_minbpe",
    "tokenizer_from_token_merges",
    "unzip_files",
]


def needs_pretokenizer(files: Mapping[str, bytes]) -> bool:
    """Whether these files leave the pre-tokenizer to the caller (vocab.json + merges.txt, a
    .tiktoken without its JSON that is not a bundled table, byte-level arrow merges or CSV): a
    page asks for it only then."""
    fmt, found = sniff(expand_zips(files))
    return fmt.needs_pretokenizer(found)


def holds_normalizer(files: Mapping[str, bytes]) -> bool:
    """Whether these files name their normalizer (tokenizer.json, trace.json): a page offers
    its normalizer choice only to the others."""
    fmt, _found = sniff(expand_zips(files))
    return fmt.holds_normalizer


class ImportReport(NamedTuple):
    """What an import read: the format, the tokenizer, sentences for a page saying what was
    assumed or recognised (empty when the files say everything), and the files read (the
    members of a zip by their names)."""

    format: str
    tokenizer: Tokenizer
    notes: tuple[str, ...]
    members: tuple[str, ...]


def import_files(
    files: Mapping[str, bytes],
    *,
    pretokenizer: str | None = None,
    pattern: str | None = None,
    glossaries: Sequence[str] = (),
    normalizer: NormalizerName | None = None,
) -> Tokenizer:
    """The tokenizer the given files make (name -> content). ``pretokenizer`` (and ``pattern``
    for ``regex``) choose the split for formats that hold none (vocab.json + merges.txt: GPT-2's
    regex by default; a .tiktoken without its JSON: required unless it is a bundled table; arrow
    merges and the CSV: gpt2 for byte level, whitespace for character level). ``glossaries``
    (regexes) are words subword-nmt codes never split (``apply_bpe --glossaries``);
    ``normalizer`` names the normalizer of files that hold none (all but tokenizer.json and
    trace.json, which name theirs).

    >>> from explorer import make_config, train
    >>> from explorer.formats.exporters import export_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> import_files(export_files(tok, "hf")).merges == tok.merges
    True
    """
    return import_report(
        files, pretokenizer=pretokenizer, pattern=pattern, glossaries=glossaries, normalizer=normalizer
    ).tokenizer


def import_with_format(
    files: Mapping[str, bytes],
    *,
    pretokenizer: str | None = None,
    pattern: str | None = None,
    glossaries: Sequence[str] = (),
    normalizer: NormalizerName | None = None,
) -> tuple[str, Tokenizer]:
    """(format, tokenizer): :func:`import_files` with the format it found (each file is read
    once)."""
    report = import_report(
        files, pretokenizer=pretokenizer, pattern=pattern, glossaries=glossaries, normalizer=normalizer
    )
    return report.format, report.tokenizer


def import_report(
    files: Mapping[str, bytes],
    *,
    pretokenizer: str | None = None,
    pattern: str | None = None,
    glossaries: Sequence[str] = (),
    normalizer: NormalizerName | None = None,
) -> ImportReport:
    """:func:`import_files` with the format found, notes on what was assumed (for a page to show)
    and the names of the files read. A zip among the files counts as the files it holds.

    >>> from explorer import make_config, train
    >>> from explorer.formats.exporters import export_files, zip_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> report = import_report({"bpe.zip": zip_files(export_files(tok, "gpt2"))}, pretokenizer="cl100k")
    >>> report.format, report.members, report.tokenizer.merges == tok.merges
    ('gpt2', ('vocab.json', 'merges.txt'), True)
    >>> report.notes
    ('vocab.json + merges.txt name no pre-tokenizer: cl100k, as chosen',)
    """
    with _collector_paused():
        return _import_report(files, pretokenizer, pattern, tuple(glossaries), normalizer)


_pause_lock = threading.Lock()
_pauses = [0, False]  # imports under way, and whether the collector ran before the first


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while an import builds its tables, as it was after the
    last one ends (imports on several threads share one count). An import makes hundreds of
    thousands of lists and tuples and no cycle; each 700 of them set off a collection that
    walks every young container again, the file's growing lists and dicts among them: a third
    of a tokenizer.json's import was spent there.

    >>> with _collector_paused():
    ...     gc.isenabled()
    False
    """
    with _pause_lock:
        if not _pauses[0]:
            _pauses[1] = gc.isenabled()
            gc.disable()
        _pauses[0] += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses[0] -= 1
            if not _pauses[0] and _pauses[1]:
                gc.enable()


def _import_report(
    files: Mapping[str, bytes],
    pretokenizer: str | None,
    pattern: str | None,
    glossaries: tuple[str, ...],
    normalizer: NormalizerName | None,
) -> ImportReport:
    expanded = expand_zips(files)
    fmt, found = sniff(expanded)
    require(
        not glossaries or fmt.name == "subword-nmt",
        f"glossaries are subword-nmt's (apply_bpe --glossaries); these files are {fmt.title}, which has none",
    )
    require(
        normalizer is None or not fmt.holds_normalizer,
        f"{fmt.title} names its own normalizer; a normalizer is named only for files that hold none",
    )
    if normalizer is not None:
        check_name("normalizer", normalizer, NORMALIZERS)
    tok, notes = fmt.read(found, ImportOptions(pretokenizer, pattern, glossaries))
    if normalizer is not None and normalizer != tok.pipeline.normalizer:
        tok = tok.with_pipeline(dataclasses.replace(tok.pipeline, normalizer=normalizer))
        notes = [*notes, f"the files name no normalizer: {normalizer}, as chosen"]
    return ImportReport(fmt.name, tok, tuple(notes), tuple(expanded))
