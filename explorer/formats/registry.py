"""The file formats, in one registry: name -> ``FileFormat`` (:mod:`explorer.formats.base`), in
the order a picker lists them. Adding a format is one module ending in its ``FORMAT`` and one
line below.

Everything that lists, writes, reads or recognises formats looks the registry up when it runs,
never a copy taken at import, so a format registered later (a test's fixture, a plug-in) is
seen everywhere: ``EXPORT_FORMATS`` and ``IMPORT_FORMATS`` (views that stay in step with it,
read by the CLI's choices and the pages' pickers), ``export_files``, and ``sniff``, which tells
an import's format from its files::

    sniff({"vocab.json": b'{"!": 0, ...}', "merges.txt": b"#version: 0.2\\n..."})
        -> (gpt2's FileFormat, {"vocab-json": Upload("vocab.json", ...), "merges": Upload("merges.txt", ...)})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from ..bpe.tokenizer import Tokenizer
from ..errors import FormatError
from ..stages.registry import Registry
from . import arrow, gpt2, hf, merges_csv, minbpe, subword_nmt, tekken, tiktoken_ranks, trace_file
from .base import FileFormat, FileKind, Files, Upload, require

__all__ = [
    "EXPORT_FORMATS",
    "FORMATS",
    "IMPORT_FORMATS",
    "ExportFormat",
    "ImportFormat",
    "file_kinds",
    "kind_of",
    "sniff",
]

FORMATS: Registry[FileFormat] = Registry(
    "file format",
    {
        f.name: f
        for f in (
            hf.FORMAT,
            gpt2.FORMAT,
            tiktoken_ranks.FORMAT,
            tekken.FORMAT,  # read only: not among the exports
            subword_nmt.FORMAT,
            minbpe.FORMAT,
            arrow.FORMAT,
            merges_csv.FORMAT,
            trace_file.FORMAT,
        )
    },
)


class ExportFormat(NamedTuple):
    name: str
    title: str
    description: str
    # (tokenizer, trace dict) -> file name -> content; raises ConfigError when it cannot
    write: Callable[[Tokenizer, Mapping], Files]
    # writes the merge history (counts and all), so a caller passes the trainer's trace; the
    # others read the tokenizer alone
    uses_trace: bool = False
    removals: bool = False  # can hold PickyBPE's removals (FileFormat.removals)


class ImportFormat(NamedTuple):
    name: str
    title: str
    files: str  # what to upload, for people


EXPORT_FORMATS: dict[str, ExportFormat] = FORMATS.view(
    lambda f: (
        None if f.write is None else ExportFormat(f.name, f.title, f.description, f.write, f.uses_trace, f.removals)
    )
)
IMPORT_FORMATS: dict[str, ImportFormat] = FORMATS.view(
    lambda f: ImportFormat(f.name, f.import_title or f.title, f.files)
)

_STAGES = ("name", "json", "text")  # the order a file is looked at: name, then JSON, then text


def file_kinds() -> list[FileKind]:
    """Every kind the formats define, once (formats may share one), in the order tried.

    >>> [k.name for k in file_kinds() if k.stage == "json"]
    ['trace', 'vocab-json', 'hf', 'tekken', 'tiktoken-meta']
    """
    kinds = dict.fromkeys(k for f in FORMATS.values() for k in f.kinds)
    return sorted(kinds, key=lambda k: (_STAGES.index(k.stage), k.order))


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])}, or {items[-1]}"


def _what_to_give() -> str:
    return "give one of: " + "; ".join(f.files for f in IMPORT_FORMATS.values())


def kind_of(upload: Upload) -> str:
    """The kind of one file, or a FormatError saying why it is none (not UTF-8, bad JSON, a
    JSON object or text of no known layout).

    >>> kind_of(Upload("codes.txt", b"#version: 0.2\\nl o\\n")), kind_of(Upload("m.txt", b"l o -> lo\\n"))
    ('merges', 'arrow')
    >>> kind_of(Upload("notes.json", b'{"a": "b"}'))
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: notes.json: a JSON file of no known layout (expected a tokenizer.json with 'model', a vocab.json of token -> id, a tiktoken JSON with 'pat_str', Mistral's tekken.json with 'config' and 'vocab', or a trace.json)
    """
    kinds = file_kinds()
    by_stage = {stage: [k for k in kinds if k.stage == stage] for stage in _STAGES}
    for kind in by_stage["name"]:
        if kind.test(upload):
            return kind.name
    stage = "json" if upload.looks_json else "text"
    if stage == "json":
        upload.json  # noqa: B018 -- the JSON's own error before any kind looks into it
    for kind in by_stage[stage]:
        if kind.test(upload):
            return kind.name
    if stage == "json":
        expected = [k.what for f in FORMATS.values() for k in f.kinds if k.stage == "json" and k.what]
        raise FormatError(
            f"{upload.name}: a JSON file of no known layout (expected {_listed(list(dict.fromkeys(expected)))})"
        )
    raise FormatError(
        f"{upload.name} is a file of no known layout (it starts {upload.first_line[:40]!r}); {_what_to_give()}"
    )


def sniff(files: Mapping[str, bytes]) -> tuple[FileFormat, dict[str, Upload]]:
    """The format whose file set the files' kinds make, and its files by kind; else a
    FormatError naming each file's kind and what is missing (or what to give).

    >>> fmt, found = sniff({"tokenizer.model": b"minbpe v1\\n\\n0\\n", "tokenizer.vocab": b""})
    >>> fmt.name, sorted(found)
    ('minbpe', ['minbpe-model', 'minbpe-vocab'])
    >>> sniff({"vocab.json": b'{"a": 0}'})
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: cannot tell which tokenizer these files make: vocab.json (vocab-json); a vocab.json needs its merges.txt
    """
    require(bool(files), "no file given")
    uploads = [Upload(name, data) for name, data in files.items()]
    kinds = [kind_of(u) for u in uploads]
    for fmt in FORMATS.values():
        if fmt.sniff(kinds):
            return fmt, dict(zip(kinds, uploads))
    hints = {k.name: k.hint for k in file_kinds() if k.hint}
    hint = hints.get(kinds[0]) if len(kinds) == 1 else None
    names = ", ".join(f"{u.name} ({k})" for u, k in zip(uploads, kinds))
    raise FormatError(f"cannot tell which tokenizer these files make: {names}; {hint or _what_to_give()}")
