"""Exporters: the same merges in the files other tools read.

Every format is one module (its writer, its reader, how its files are told apart) and one entry
of the registry (:mod:`explorer.formats.registry`); ``EXPORT_FORMATS`` is the registry seen from
here, and ``export_files`` returns a format's files by name::

    export_files(tok, "hf")       {"tokenizer.json": b'{"version": "1.0", ...'}
    export_files(tok, "tiktoken") {"tokenizer.tiktoken": b"IQ== 1\\n...", "tokenizer.json": b'{"pat_str": ...'}

A format that cannot represent a tokenizer raises ConfigError naming the setting, or
FormatError when no file of the format can (a PickyBPE tokenizer's removals: only trace.json
holds them); ``export_problem`` gives the same sentence without raising, for a page to show
first. Vocabularies in the files are derived from the merges, as everywhere else; a tokenizer
that keeps a file's own ids (SentencePiece's order) is written with them to tokenizer.json and
trace.json, and refused by the formats that would number its tokens otherwise.
"""

from __future__ import annotations

from ..bpe.config import EncodeOptions
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError
from ..stages.normalizers import PY_SPACE
from .arrow import to_arrow_merges
from .gpt2 import to_gpt2_merges, to_gpt2_vocab
from .hf import to_hf_tokenizer_json
from .merges_csv import CSV_COLUMNS, to_merges_csv
from .minbpe import to_minbpe_model, to_minbpe_vocab
from .registry import EXPORT_FORMATS, ExportFormat
from .subword_nmt import SUBWORD_NMT_VERSIONS, to_subword_nmt_codes
from .tiktoken_ranks import to_tiktoken, to_tiktoken_meta
from .trace import trace_from_tokenizer
from .zips import zip_files

__all__ = [
    "CSV_COLUMNS",
    "EXPORT_FORMATS",
    "ExportFormat",
    "PY_SPACE",
    "SUBWORD_NMT_VERSIONS",
    "export_files",
    "export_problem",
    "file_ids_problem",
    "removals_problem",
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


def export_files(tok: Tokenizer, fmt: str, *, trace: dict | None = None) -> dict[str, bytes]:
    """The files of one format, by name, as UTF-8 bytes. ``trace`` is the merge history to write
    (``formats.trace_dict``); without it one is made from the tokenizer (merges only, no counts).

    >>> from explorer import make_config, train
    >>> sorted(export_files(train("low lower", make_config("gpt4", num_merges=3)).tokenizer(), "tiktoken"))
    ['tokenizer.json', 'tokenizer.tiktoken']
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    spec = EXPORT_FORMATS[fmt]
    if tok.vocab.removals and not spec.removals:
        raise FormatError(removals_problem(spec.title, len(tok.vocab.removals)))
    if (tok.encoding.keep_unknown or tok.encoding.glossaries) and fmt not in ("subword-nmt", "trace"):
        raise ConfigError(
            f"{spec.title} would encode this tokenizer differently: it keeps characters outside its alphabet "
            "as themselves and never splits its glossaries, as subword-nmt's apply_bpe does; export "
            "subword-nmt codes or BPE Explorer's trace.json instead"
        )
    if tok.file_ids is not None and fmt not in ("hf", "trace"):
        raise ConfigError(file_ids_problem(spec.title))
    if fmt != "hf":
        _hf_rules_problem(tok, spec.title, encoding=fmt != "trace")
    if trace is None:
        # only the formats that write the merge history read it: making one for a 200k-token
        # table costs more than writing most files
        trace = trace_from_tokenizer(tok) if spec.uses_trace else {"merges": []}
    files = spec.write(tok, trace)
    return {name: data if isinstance(data, bytes) else data.encode("utf-8") for name, data in files.items()}


def _hf_rules_problem(tok: Tokenizer, title: str, *, encoding: bool) -> None:
    """ConfigError when the tokenizer merges by a rule of HF's that only tokenizer.json holds:
    a merge list out of making order, ``ignore_merges``, ``fuse_unk``, no unknown token (another format's file
    would encode differently). ``encoding``: whether the format loses these (a trace keeps
    them)."""
    enc = tok.encoding if encoding else EncodeOptions()
    rules = [
        *(
            ["a merge list of every split of its tokens (transformers' tiktoken converter)"]
            if tok.pair_rules is not None and encoding
            else []
        ),
        *(["ignore_merges"] if enc.ignore_merges else []),
        *(["fuse_unk"] if enc.fuse_unk else []),
        *(["dropping of characters outside the vocabulary (no unk_token)"] if enc.drop_unknown else []),
    ]
    if rules:
        raise ConfigError(
            f"{title} cannot hold HF's {' and '.join(rules)}: its file would encode differently; "
            "export tokenizer.json instead"
        )


def file_ids_problem(title: str) -> str:
    """Why a format other than tokenizer.json and trace.json cannot hold a tokenizer that keeps
    its file's ids (SentencePiece's order, ``Tokenizer.file_ids``).

    >>> file_ids_problem("minbpe .model")
    "this tokenizer keeps the ids of the file it was read from, numbered in SentencePiece's order (single characters after merged tokens); minbpe .model numbers tokens as the merges make them, so its ids would differ: export tokenizer.json or BPE Explorer's trace.json instead"
    """
    return (
        "this tokenizer keeps the ids of the file it was read from, numbered in SentencePiece's order (single "
        f"characters after merged tokens); {title} numbers tokens as the merges make them, so its ids would "
        "differ: export tokenizer.json or BPE Explorer's trace.json instead"
    )


def removals_problem(title: str, n: int) -> str:
    """Why a format of merges alone cannot hold a PickyBPE tokenizer.

    >>> removals_problem("subword-nmt codes", 1)
    "subword-nmt codes holds merges only, and this PickyBPE tokenizer also removes tokens after their merges (1 removal): its merges alone would encode differently; export BPE Explorer's trace.json instead"
    """
    return (
        f"{title} holds merges only, and this PickyBPE tokenizer also removes tokens after their merges "
        f"({n:,} removal{'s' * (n != 1)}): its merges alone would encode differently; export BPE Explorer's "
        "trace.json instead"
    )


def export_problem(tok: Tokenizer, fmt: str) -> str | None:
    """Why a format cannot hold this tokenizer (the ConfigError's or FormatError's sentence), or None."""
    try:
        export_files(tok, fmt, trace={"merges": []})
    except (ConfigError, FormatError) as err:
        return str(err)
    return None
