"""Importers: tokenizers made elsewhere, read into ours.

``import_files`` takes the uploaded files by name and finds their format from what they hold::

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
the line or key where it goes wrong, never half-loaded. Every failure is a FormatError with one
sentence that names the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from ..bpe.tokenizer import Tokenizer
from ..errors import FormatError
from .arrow import read_arrow_merges
from .base import decode_text, json_object, require
from .gpt2 import _gpt2_files, tokenizer_from_gpt2, tokenizer_from_gpt2_files
from .hf import tokenizer_from_hf
from .merges_csv import read_merges_csv
from .minbpe import tokenizer_from_minbpe
from .shared import implied_alphabet, pretokenizer_note, tokenizer_from_vocab_merges
from .subword_nmt import tokenizer_from_subword_nmt
from .tiktoken_ranks import _bundled, read_ranks, read_tiktoken, tokenizer_from_tiktoken
from .token_merges import _guess_layout, tokenizer_from_token_merges
from .trace import TRACE_FORMAT, tokenizer_from_trace
from .zips import ZIP_MAX_MEMBERS, ZIP_MAX_RATIO, expand_zips, is_zip, unzip_files

__all__ = [
    "IMPORT_FORMATS",
    "ImportFormat",
    "ImportReport",
    "ZIP_MAX_MEMBERS",
    "ZIP_MAX_RATIO",
    "needs_pretokenizer",
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


# ---- which files are which ------------------------------------------------------------------
class ImportFormat(NamedTuple):
    name: str
    title: str
    files: str  # what to upload, for people


_ZIPPED = ", or the .zip of them the Train page downloads"
IMPORT_FORMATS: dict[str, ImportFormat] = {
    f.name: f
    for f in (
        ImportFormat("hf", "Hugging Face tokenizer.json", "tokenizer.json (a BPE model)"),
        ImportFormat("gpt2", "GPT-2 vocab.json + merges.txt", "vocab.json and merges.txt (byte level)" + _ZIPPED),
        ImportFormat(
            "tiktoken",
            "tiktoken rank file",
            "a .tiktoken file and the JSON with pat_str beside it"
            + _ZIPPED
            + " (a bundled table, e.g. cl100k_base.tiktoken, alone)",
        ),
        ImportFormat("subword-nmt", "subword-nmt codes", "a codes file ('#version: 0.2' then 'a b' lines)"),
        ImportFormat("minbpe", "minbpe .model", "a .model file (its .vocab is optional)" + _ZIPPED),
        ImportFormat("arrow", "merges as 'a b -> ab'", "a merges file of 'left right -> token' lines (seed 004)"),
        ImportFormat("csv", "merge history (CSV)", "merges.csv as this app writes it (step,left,right,token,id,...)"),
        ImportFormat("trace", "BPE Explorer trace.json", "trace.json, as this app and its CLI write"),
    )
}


def _kind(name: str, data: bytes) -> tuple[str, object]:
    """What one file is, and its content: trace, hf, tiktoken-meta, vocab-json, tiktoken,
    minbpe-model, minbpe-vocab, csv, arrow or merges; a file of none of these layouts is a
    FormatError that lists the formats."""
    lower = name.lower()
    if lower.endswith(".tiktoken"):
        return "tiktoken", data
    text = decode_text(name, data)
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{") or lower.endswith(".json"):
        obj = json_object(stripped, name)
        if obj.get("format") == TRACE_FORMAT:
            return "trace", obj
        # a vocabulary may hold the tokens "model" and "pat_str" (GPT-2's holds "model"): only
        # token -> id entries make a vocab.json
        if obj and all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values()):
            return "vocab-json", obj
        if isinstance(obj.get("model"), dict):
            return "hf", obj
        if "pat_str" in obj:
            return "tiktoken-meta", obj
        raise FormatError(
            f"{name}: a JSON file of no known layout (expected a tokenizer.json with 'model', a trace.json, "
            "a vocab.json of token -> id, or a tiktoken JSON with 'pat_str')"
        )
    if stripped.startswith("minbpe") or lower.endswith(".model"):
        return "minbpe-model", text
    if lower.endswith(".vocab"):
        return "minbpe-vocab", text
    first_line = stripped.split("\n", 1)[0]
    if lower.endswith(".csv") or first_line.lower().startswith("step,"):
        return "csv", text
    first = first_line.split()
    if len(first) == 2 and first[1].isdigit() and not stripped.startswith("#"):
        return "tiktoken", data
    if not stripped or stripped.startswith("#"):
        return "merges", text  # '#version' is checked where the merges are read
    if any(" -> " in line for line in stripped.split("\n", 50)[:50]):
        return "arrow", text
    if len(first_line.removesuffix("\r").split(" ")) == 2:
        return "merges", text  # merges without their '#version' line: said so where they are read
    raise FormatError(
        f"{name} is a file of no known layout (it starts {first_line[:40]!r}); give one of: "
        + "; ".join(f.files for f in IMPORT_FORMATS.values())
    )


def _classify(files: Mapping[str, bytes]) -> tuple[str, dict[str, tuple[str, object]]]:
    require(bool(files), "no file given")
    kinds = {name: _kind(name, data) for name, data in files.items()}
    found = sorted(k for k, _ in kinds.values())
    for fmt, wanted in (
        ("trace", ["trace"]),
        ("hf", ["hf"]),
        ("gpt2", ["merges", "vocab-json"]),
        ("tiktoken", ["tiktoken"]),
        ("tiktoken", ["tiktoken", "tiktoken-meta"]),
        ("subword-nmt", ["merges"]),
        ("minbpe", ["minbpe-model"]),
        ("minbpe", ["minbpe-model", "minbpe-vocab"]),
        ("arrow", ["arrow"]),
        ("csv", ["csv"]),
    ):
        if found == wanted:
            return fmt, kinds
    names = ", ".join(f"{n} ({k})" for n, (k, _) in kinds.items())
    hints = {
        "vocab-json": "a vocab.json needs its merges.txt",
        "tiktoken-meta": "a tiktoken JSON needs its .tiktoken file",
        "minbpe-vocab": "a minbpe .vocab needs its .model (only the .model is read)",
    }
    hint = next((hints[k] for k in found if k in hints and len(found) == 1), None)
    raise FormatError(
        f"cannot tell which tokenizer these files make: {names}"
        + (f"; {hint}" if hint else "; give one of: " + "; ".join(f.files for f in IMPORT_FORMATS.values()))
    )


def _merge_list(fmt: str, name: str, text: str) -> tuple[list[tuple[str, str]], list[int] | None, Callable[[int], str]]:
    if fmt == "arrow":
        pairs, lines = read_arrow_merges(text, name=name)
        return pairs, None, lambda n: f"{name} line {lines[n]}"
    pairs, ids, lines = read_merges_csv(text, name=name)
    return pairs, ids, lambda n: f"{name} line {lines[n]}"


def needs_pretokenizer(files: Mapping[str, bytes]) -> bool:
    """Whether these files leave the pre-tokenizer to the caller (vocab.json + merges.txt, a
    .tiktoken without its JSON that is not a bundled table, byte-level arrow merges or CSV): a
    page asks for it only then."""
    expanded = expand_zips(files)
    fmt, kinds = _classify(expanded)
    if fmt == "gpt2":
        return True
    if fmt == "tiktoken":
        found = {k: content for k, content in kinds.values()}
        return "tiktoken-meta" not in found and _bundled(found["tiktoken"]) is None
    if fmt in ("arrow", "csv"):
        ((name, (_, text)),) = kinds.items()
        merges, _, _ = _merge_list(fmt, name, text)
        return _guess_layout(merges, implied_alphabet(merges)).unit == "byte"
    return False


class ImportReport(NamedTuple):
    """What an import read: the format, the tokenizer, sentences for a page saying what was
    assumed or recognised (empty when the files say everything), and the files read (the
    members of a zip by their names)."""

    format: str
    tokenizer: Tokenizer
    notes: tuple[str, ...]
    members: tuple[str, ...]


def import_files(
    files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None
) -> Tokenizer:
    """The tokenizer the given files make (name -> content). ``pretokenizer`` (and ``pattern``
    for ``regex``) choose the split for formats that hold none (vocab.json + merges.txt: GPT-2's
    regex by default; a .tiktoken without its JSON: required unless it is a bundled table; arrow
    merges and the CSV: gpt2 for byte level, whitespace for character level).

    >>> from explorer import make_config, train
    >>> from explorer.formats.exporters import export_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> import_files(export_files(tok, "hf")).merges == tok.merges
    True
    """
    return import_report(files, pretokenizer=pretokenizer, pattern=pattern).tokenizer


def import_with_format(
    files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None
) -> tuple[str, Tokenizer]:
    """(format, tokenizer): :func:`import_files` with the format it found (each file is read
    once)."""
    report = import_report(files, pretokenizer=pretokenizer, pattern=pattern)
    return report.format, report.tokenizer


def import_report(
    files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None
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
    expanded = expand_zips(files)
    fmt, kinds = _classify(expanded)
    members = tuple(expanded)
    by_kind = {k: (name, content) for name, (k, content) in kinds.items()}
    notes: list[str] = []
    if fmt == "trace":
        tok = tokenizer_from_trace(by_kind["trace"][1])
    elif fmt == "hf":
        tok = tokenizer_from_hf(by_kind["hf"][1])
    elif fmt == "gpt2":
        used = pretokenizer or "gpt2"
        tok = _gpt2_files(by_kind["vocab-json"][1], by_kind["merges"][1], pretokenizer=used, pattern=pattern)
        notes.append(pretokenizer_note("vocab.json + merges.txt", pretokenizer, used))
    elif fmt == "tiktoken":
        name, data = by_kind["tiktoken"]
        meta = by_kind.get("tiktoken-meta", (None, None))[1]
        bundled = _bundled(data) if meta is None else None
        if bundled is not None:
            from .pretrained import PRETRAINED, load_pretrained

            tok = load_pretrained(bundled)
            notes.append(
                f"recognised as the bundled {bundled} table: its regex ({PRETRAINED[bundled].pretokenizer}) and "
                "special tokens come with it"
                + (
                    ", and the pre-tokenizer chosen is not used"
                    if pretokenizer not in (None, tok.config.pretokenizer)
                    else ""
                )
            )
        else:
            tok = tokenizer_from_tiktoken(data, meta, pretokenizer=pretokenizer, pattern=pattern, name=name)
            if meta is None:
                notes.append(f"{name} holds no regex: pre-tokenizer {pretokenizer}, as chosen")
    elif fmt == "subword-nmt":
        name, text = by_kind["merges"]
        tok = tokenizer_from_subword_nmt(text, name=name)
        notes.append(
            f"subword-nmt codes carry no alphabet: {len(tok.alphabet)} symbols implied by the merges; other "
            "characters become <unk>"
        )
    elif fmt in ("arrow", "csv"):
        name, text = by_kind[fmt]
        merges, ids, where = _merge_list(fmt, name, text)
        tok, notes = tokenizer_from_token_merges(
            merges,
            ids=ids,
            pretokenizer=pretokenizer,
            pattern=pattern,
            name=name,
            where=where,
            what="arrow merges" if fmt == "arrow" else "CSV merges",
        )
    else:
        name, text = by_kind["minbpe-model"]
        tok = tokenizer_from_minbpe(text, name=name)
    return ImportReport(fmt, tok, tuple(notes), members)
