"""The project's own ``trace.json`` (format ``trace``) as an entry of the format registry: the
file itself, its layout and versions are :mod:`explorer.formats.trace`'s; this module only says
how an import recognises it and writes and reads it through that module.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..bpe.tokenizer import Tokenizer
from .base import FileFormat, FileKind, Files, Found, Imported, ImportOptions, Upload, dump_json
from .trace import TRACE_FILE, TRACE_FORMAT, tokenizer_from_trace

__all__ = ["FORMAT"]


def _is_trace(upload: Upload) -> bool:
    return upload.json.get("format") == TRACE_FORMAT


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {TRACE_FILE: dump_json(trace)}


def _read(found: Found, options: ImportOptions) -> Imported:
    return Imported(tokenizer_from_trace(found["trace"].json), [])


FORMAT = FileFormat(
    name="trace",
    title="BPE Explorer trace.json",
    description="this app's own file: every command and page reads it back",
    files="trace.json, as this app and its CLI write",
    write=_write,
    read=_read,
    # the first JSON kind: a trace names itself, whatever else its object holds
    kinds=(FileKind("trace", "json", 10, _is_trace, what="a trace.json"),),
    file_sets=(("trace",),),
    uses_trace=True,
    removals=True,  # PickyBPE's removals: top-level "removals" (formats.trace)
    holds_normalizer=True,
)
