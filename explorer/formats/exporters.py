"""Exporters: the same merges in the files other tools read.

Every format is one entry of ``EXPORT_FORMATS``; ``export_files`` returns its files by name::

    export_files(tok, "hf")       {"tokenizer.json": b'{"version": "1.0", ...'}
    export_files(tok, "tiktoken") {"tokenizer.tiktoken": b"IQ== 1\\n...", "tokenizer.json": b'{"pat_str": ...'}

A format that cannot represent a tokenizer raises ConfigError naming the setting
(``export_problem`` gives the same sentence without raising, for a page to show first).
Vocabularies in the files are derived from the merges, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError
from ..stages.normalizers import PY_SPACE
from .arrow import to_arrow_merges
from .base import dump_json
from .gpt2 import to_gpt2_merges, to_gpt2_vocab
from .hf import to_hf_tokenizer_json
from .merges_csv import CSV_COLUMNS, to_merges_csv
from .minbpe import to_minbpe_model, to_minbpe_vocab
from .subword_nmt import SUBWORD_NMT_VERSIONS, to_subword_nmt_codes
from .tiktoken_ranks import to_tiktoken, to_tiktoken_meta
from .trace import TRACE_FILE, trace_from_tokenizer
from .zips import zip_files

__all__ = [
    "CSV_COLUMNS",
    "EXPORT_FORMATS",
    "ExportFormat",
    "PY_SPACE",
    "SUBWORD_NMT_VERSIONS",
    "export_files",
    "export_problem",
    "zip_files",
    "to_hf_tokenizer_json",
    "to_gpt2_vocab",
    "to_gpt2_merges",
    "to_subword_nmt_codes",
    "to_minbpe_model",
    "to_minbpe_vocab",
    "to_tiktoken",
    "to_tiktoken_meta",
    "to_arrow_merges",
    "to_merges_csv",
]

Files = dict[str, str | bytes]


class ExportFormat(NamedTuple):
    name: str
    title: str
    description: str
    # (tokenizer, trace dict) -> file name -> content; raises ConfigError when it cannot
    write: Callable[[Tokenizer, dict], Files]
    # writes the merge history (counts and all), so a caller passes the trainer's trace; the
    # others read the tokenizer alone
    uses_trace: bool = False


# ---- the registry ---------------------------------------------------------------------------


EXPORT_FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat(
            "hf",
            "Hugging Face tokenizer.json",
            "tokenizers.Tokenizer.from_file(...): model, normalizer, pre-tokenizer, decoder, special tokens",
            lambda tok, trace: {"tokenizer.json": dump_json(to_hf_tokenizer_json(tok))},
        ),
        ExportFormat(
            "gpt2",
            "GPT-2 vocab.json + merges.txt",
            "the two files of GPT-2 and RoBERTa (byte level; the regex is chosen when loading)",
            lambda tok, trace: {"vocab.json": dump_json(to_gpt2_vocab(tok)), "merges.txt": to_gpt2_merges(tok)},
        ),
        ExportFormat(
            "tiktoken",
            "tiktoken .tiktoken + JSON",
            "the rank file for tiktoken.load_tiktoken_bpe and a JSON with pat_str and special_tokens",
            lambda tok, trace: {
                "tokenizer.json": dump_json(to_tiktoken_meta(tok)),
                "tokenizer.tiktoken": to_tiktoken(tok),
            },
        ),
        ExportFormat(
            "subword-nmt",
            "subword-nmt codes",
            "the codes file for subword_nmt apply_bpe (-c codes.txt)",
            lambda tok, trace: {"codes.txt": to_subword_nmt_codes(tok)},
        ),
        ExportFormat(
            "minbpe",
            "minbpe .model + .vocab",
            "Karpathy's minbpe: tokenizer.model for Tokenizer.load, tokenizer.vocab to read",
            lambda tok, trace: {"tokenizer.model": to_minbpe_model(tok), "tokenizer.vocab": to_minbpe_vocab(tok)},
        ),
        ExportFormat(
            "arrow",
            "merges as 'a b -> ab'",
            "seed 004's merges file, one 'left right -> token' line per merge",
            lambda tok, trace: {"merges.txt": to_arrow_merges(tok)},
        ),
        ExportFormat(
            "csv",
            "merge history (CSV)",
            "one row per merge: step, pair, new token and id, count, tokens after, words affected",
            lambda tok, trace: {"merges.csv": to_merges_csv(trace)},
            uses_trace=True,
        ),
        ExportFormat(
            "trace",
            "BPE Explorer trace.json",
            "this app's own file: every command and page reads it back",
            lambda tok, trace: {TRACE_FILE: dump_json(trace)},
            uses_trace=True,
        ),
    )
}


def export_files(tok: Tokenizer, fmt: str, *, trace: dict | None = None) -> dict[str, bytes]:
    """The files of one format, by name, as UTF-8 bytes. ``trace`` is the merge history to write
    (``formats.trace_dict``); without it one is made from the tokenizer (merges only, no counts).

    >>> from explorer import make_config, train
    >>> sorted(export_files(train("low lower", make_config("gpt4", num_merges=3)).tokenizer(), "tiktoken"))
    ['tokenizer.json', 'tokenizer.tiktoken']
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    if trace is None:
        trace = trace_from_tokenizer(tok)
    files = EXPORT_FORMATS[fmt].write(tok, trace)
    return {name: data if isinstance(data, bytes) else data.encode("utf-8") for name, data in files.items()}


def export_problem(tok: Tokenizer, fmt: str) -> str | None:
    """Why a format cannot hold this tokenizer (the ConfigError's sentence), or None."""
    try:
        export_files(tok, fmt, trace={"merges": []})
    except ConfigError as err:
        return str(err)
    return None
