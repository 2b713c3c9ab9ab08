"""Tokenizers in and out: the Train page's download of the tokenizer as of the step shown, and the
Playground's import of a tokenizer made elsewhere (which then joins the Playground and the
Compare page like a bundled one)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import streamlit as st

from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, ExplorerError
from ..formats.corpora import MAX_CORPUS_BYTES, mib
from ..formats.exporters import EXPORT_FORMATS, export_files, zip_files
from ..formats.importers import IMPORT_FORMATS, ImportReport, import_report, is_zip, needs_pretokenizer, unzip_files
from ..formats.pretrained import PRETRAINED
from ..formats.trace import trace_dict
from ..stages.pretokenizers import PRETOKENIZERS
from . import render, server, state, storage

__all__ = [
    "Download",
    "download_area",
    "export_download",
    "download_name",
    "Imported",
    "IMPORTED_PREFIX",
    "MAX_IMPORTED",
    "import_area",
    "import_tokenizer",
    "imported",
    "imported_keys",
    "imported_label",
    "imported_tokenizer",
    "picker_label",
    "picker_help",
    "restore_imported",
]


# ---- download (Train page) ------------------------------------------------------------------
# Only formats that write the merge history (ExportFormat.uses_trace) get the trainer's trace: the
# history of 20,000 merges takes ~0.3-0.6 s to build.
_EXPORTS = "exports"  # live.memo key: the last few downloads made, {(format, k, trainer id): Download}
_EXPORTS_KEPT = 2  # a trace.json of 20,000 merges is ~6 MB: keep the current one and the one before


@dataclass(frozen=True)
class Download:
    """The chosen format's file as of one step, or why the format cannot hold that tokenizer."""

    file_name: str = ""
    data: bytes = b""
    mime: str = ""
    files: tuple[str, ...] = ()  # what is inside (the zip's members, or the one file)
    problem: str | None = None


def _slug(text: str, limit: int = 40) -> str:
    """A corpus label as part of a file name.

    >>> _slug("english_frankenstein.txt, my notes.txt")
    'english_frankenstein+my-notes'
    """
    stems = [re.sub(r"\.(txt|md|csv|json)$", "", part.strip(), flags=re.I) for part in text.split(",")]
    slug = re.sub(r"[^A-Za-z0-9_.+-]+", "-", "+".join(s for s in stems if s)).strip("-.")
    return slug[:limit].rstrip("-.+") or "corpus"


def download_name(corpus_label: str, k: int, fmt: str, files: dict[str, bytes]) -> str:
    """One file keeps the name its tools expect; several go in a zip named after the corpus,
    the step and the format.

    >>> download_name("udhr_en.txt", 12, "gpt2", {"vocab.json": b"", "merges.txt": b""})
    'bpe-udhr_en-12-merges-gpt2.zip'
    >>> download_name("udhr_en.txt", 12, "hf", {"tokenizer.json": b""})
    'tokenizer.json'
    """
    if len(files) == 1:
        return next(iter(files))
    return f"bpe-{_slug(corpus_label)}-{k}-merges-{fmt}.zip"


def _mime(name: str) -> str:
    if name.endswith(".zip"):
        return "application/zip"
    if name.endswith(".json"):
        return "application/json"
    if name.endswith(".csv"):
        return "text/csv"
    return "text/plain"


def export_download(live: state.Live, fmt: str, k: int) -> Download:
    """The chosen format for the tokenizer as of step k, made once per (format, step, trainer)
    and kept in the session (reruns that do not move the step reuse it)."""
    trainer = live.trainer
    assert trainer is not None
    cache: dict = live.memo.setdefault(_EXPORTS, {})
    key = (fmt, k, id(trainer))  # the memo goes with the trainer, so its id cannot be reused here
    hit = cache.get(key)
    if hit is not None:
        return hit
    tok = live.tokenizer(k)
    try:
        # one export both checks and writes: export_problem would write the files a second time
        files = export_files(tok, fmt, trace=trace_dict(trainer, steps=k) if EXPORT_FORMATS[fmt].uses_trace else None)
    except ConfigError as err:
        out = Download(problem=str(err))
    else:
        name = download_name(state.corpus_choice().label(), k, fmt, files)
        data = zip_files(files) if len(files) > 1 else next(iter(files.values()))
        out = Download(name, data, _mime(name), tuple(files))
    while len(cache) >= _EXPORTS_KEPT:
        cache.pop(next(iter(cache)))
    cache[key] = out
    return out


def download_area(live: state.Live) -> None:
    """An expander holding a format picker and one download button for the tokenizer as of the
    step shown. Nothing is computed while it is closed, nor while autoplay moves the step."""
    box = st.expander("Download this tokenizer", key="w_dl_open", on_change="rerun", icon=":material/download:")
    if not box.open:
        return
    with box:
        k = live.view
        state.widget_default("w_dl_format", "hf")
        fmt = st.selectbox(
            "Format", list(EXPORT_FORMATS), key="w_dl_format", format_func=lambda f: EXPORT_FORMATS[f].title
        )
        st.caption(render.md_text(EXPORT_FORMATS[fmt].description))
        if live.playing or live.running:
            st.caption("Pause to download: the step shown is moving.")
            return
        got = export_download(live, fmt, k)
        if got.problem is not None:
            st.info(f"This format cannot hold this tokenizer: {render.md_text(got.problem)}.")
            return
        what = "merges" if k != 1 else "merge"
        st.download_button(
            f"Download as of step {k:,} ({k:,} {what})",
            data=got.data,
            file_name=got.file_name,
            mime=got.mime,
            key="dl_button",
            on_click="ignore",
            icon=":material/download:",
        )
        inside = f" holding {', '.join(got.files)}" if len(got.files) > 1 else ""
        st.caption(render.md_text(f"{got.file_name}{inside}, {len(got.data):,} bytes"))


# ---- import (Playground page) ---------------------------------------------------------------
IMPORTED_PREFIX = "imported:"
MAX_IMPORTED = 3  # an imported o200k_base holds 200,000 merges: a session keeps a few at most
_IMPORTED = "imported_tokenizers"  # {name: Imported}, oldest first
_RESULT = "import_result"  # ("success" | "error", message) of the last Import click
_ROUND = "import_round"  # bumped to give the uploader a new key, which empties it
# the choice for files that hold no pre-tokenizer (vocab.json + merges.txt, a lone .tiktoken)
_PRETOKENIZERS = ("gpt2", "cl100k", "o200k", "none")


@dataclass(frozen=True)
class Imported:
    """A tokenizer read from files. ``digest`` is the SHA-256 of the files as stored (one file as
    it is, several as a zip of them): with the pre-tokenizer chosen for files that hold none it
    is the tokenizer's identity in links and in the server-wide caches, never the name."""

    name: str
    format: str
    tokenizer: Tokenizer
    digest: str
    pretokenizer: str | None = None  # the choice, only for files that hold no pre-tokenizer
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return IMPORTED_PREFIX + self.digest + (f":{self.pretokenizer}" if self.pretokenizer else "")

    @property
    def label(self) -> str:
        return f"imported: {self.name} ({self.format})"

    @property
    def cache_name(self) -> str:
        """The name under which server-wide caches (the Compare page's) keep its results: two
        sessions' "mine" with other merges must not share them."""
        return f"{self.name} (imported {self.format}, #{self.key.removeprefix(IMPORTED_PREFIX)[:16]}" + (
            f" {self.pretokenizer})" if self.pretokenizer else ")"
        )


def imported() -> dict[str, Imported]:
    """The session's imported tokenizers by key, oldest first."""
    return st.session_state.setdefault(_IMPORTED, {})


def imported_keys() -> list[str]:
    return list(imported())


def imported_tokenizer(key: str) -> Imported | None:
    return imported().get(key)


def imported_label(key: str) -> str:
    found = imported_tokenizer(key)
    return found.label if found is not None else key


def picker_label(key: str) -> str:
    """How a tokenizer picker shows a bundled tokenizer (its name: short enough never to be cut
    off; :func:`picker_help` says what each one is) or an imported one."""
    return key if key in PRETRAINED else imported_label(key)


def picker_help() -> str:
    """What each bundled tokenizer is, for a picker's help."""
    return render.choices_help({name: spec.description for name, spec in PRETRAINED.items()})


def default_name(names: list[str]) -> str:
    """A name from the uploaded files' names.

    >>> default_name(["vocab.json", "merges.txt"]), default_name(["cl100k_base.tiktoken"]), default_name([])
    ('vocab+merges', 'cl100k_base', 'tokenizer')
    """
    stems = list(dict.fromkeys(re.sub(r"\.[A-Za-z0-9]+$", "", n) for n in names))
    return "+".join(stems)[:60] or "tokenizer"


def _stored_form(files: dict[str, bytes], name: str) -> tuple[str, bytes]:
    """(file name, bytes) as the store keeps an import: one file as it is, several as one zip
    of them (a zip among them unpacked into it: a zip inside a zip is refused on reading)."""
    if len(files) == 1:
        return next(iter(files.items()))
    flat: dict[str, bytes] = {}
    for file_name, data in files.items():
        flat.update(
            unzip_files(file_name, data) if is_zip(data) or file_name.lower().endswith(".zip") else {file_name: data}
        )
    return f"{_slug(name)}.zip", zip_files(dict(sorted(flat.items())))


@st.cache_resource(show_spinner="Reading the tokenizer's files (once per server)…", max_entries=8)
def _read(digest: str, pretokenizer: str | None, _files: dict[str, bytes]) -> ImportReport:
    """One reading of stored files, shared by every session that opens them. Big files are read
    in a worker process: 200,000 ranks that are not a bundled table take ~3 s to turn into
    merges, which would hold the server's interpreter; the tokenizer comes back in ~0.3 s."""
    if sum(map(len, _files.values())) > server.WORKER_MIN_BYTES:
        return server.pool().run(import_report, _files, pretokenizer=pretokenizer)
    return import_report(_files, pretokenizer=pretokenizer)


def _keep(entry: Imported) -> list[str]:
    """Keep an import in the session (replacing one of the same name or key); the names let go."""
    kept = imported()
    for key in [k for k, e in kept.items() if e.name == entry.name or k == entry.key]:
        kept.pop(key)
    kept[entry.key] = entry
    dropped = []
    while len(kept) > MAX_IMPORTED:
        dropped.append(kept.pop(next(iter(kept))).name)
    return dropped


def _entry(name: str, digest: str, choice: str | None, report: ImportReport, extra: list[str]) -> Imported:
    return Imported(name, report.format, report.tokenizer, digest, choice, (*report.notes, *extra))


def import_tokenizer(
    files: dict[str, bytes], *, name: str = "", pretokenizer: str = "gpt2"
) -> tuple[Imported, list[str]]:
    """Read the files into a tokenizer, keep them in the store (so a link can name them) and the
    tokenizer in the session under ``name`` (the files' names when empty); (the entry, names of
    imports let go beyond ``MAX_IMPORTED``). Raises ExplorerError (FormatError, ConfigError) with
    the sentence to show; the session's imported tokenizers are then as they were."""
    total = sum(len(d) for d in files.values())
    if total > MAX_CORPUS_BYTES:
        raise ConfigError(f"the files hold {mib(total)}; the limit for uploads is {mib(MAX_CORPUS_BYTES)}")
    name = " ".join(name.split())[:60] or default_name(list(files))
    choice = pretokenizer if needs_pretokenizer(files) else None
    file_name, blob = _stored_form(files, name)
    digest = hashlib.sha256(blob).hexdigest()
    report = _read(digest, choice, {file_name: blob})
    notes = []
    try:
        storage.put(blob, kind="tokenizer", name=file_name, meta={"label": name})
    except ExplorerError as err:
        notes.append(f"it is used in this session but not kept on the server, so links do not name it: {err}")
    entry = _entry(name, digest, choice, report, notes)
    return entry, _keep(entry)


def restore_imported(key: str) -> Imported | str:
    """An import a link names, read back from the store into the session; or why it cannot be."""
    digest, _, choice = key.removeprefix(IMPORTED_PREFIX).partition(":")
    if key in imported():
        return imported()[key]
    if not storage.is_digest(digest) or (choice and choice not in _PRETOKENIZERS):
        return f"{key[:90]!r} names no tokenizer"
    blob = storage.get(digest)
    if blob is None:
        return storage.gone("the imported tokenizer", digest, again="import it again on the Playground")
    try:
        report = _read(digest, choice or None, {blob.name: blob.data})
    except ExplorerError as err:
        return f"the imported tokenizer it names cannot be read: {err}"
    entry = _entry(str(blob.meta.get("label") or default_name([blob.name])), digest, choice or None, report, [])
    _keep(entry)
    return entry


def _uploader_key() -> str:
    return f"import_files_{st.session_state.get(_ROUND, 0)}"


def _on_import() -> None:
    uploaded = st.session_state.get(_uploader_key()) or []
    if not uploaded:
        st.session_state[_RESULT] = ("error", "Choose the tokenizer's files first.")
        return
    files = {f.name: f.getvalue() for f in uploaded}
    try:
        entry, dropped = import_tokenizer(
            files,
            name=st.session_state.get("w_imp_name", ""),
            pretokenizer=st.session_state.get("w_imp_pretok", "gpt2"),
        )
    except ExplorerError as err:
        st.session_state[_RESULT] = ("error", str(err))
        return
    except Exception as err:  # noqa: BLE001 - a classroom's odd file must not end in a traceback
        st.session_state[_RESULT] = (
            "error",
            f"these files could not be read ({type(err).__name__}); check that they are one of the formats listed",
        )
        return
    tok = entry.tokenizer
    ids = len(
        set(range(len(tok.vocab))) | set(tok.special_ids.values())
    )  # tiktoken's specials come past the vocabulary
    specials = len(tok.special_ids)
    message = (
        f"Imported {entry.name!r}: format {IMPORT_FORMATS[entry.format].title}, {len(tok.merges):,} merges, "
        f"vocabulary {ids:,}"
        + (f" ({specials:,} special token{'s' * (specials != 1)})" if specials else "")
        + (f"; {', '.join(map(repr, dropped))} was let go (a session keeps {MAX_IMPORTED})" if dropped else "")
        + ". It is now in the tokenizers below and on the Compare page."
        + "".join(f" {note[:1].upper()}{note[1:].rstrip('.')}." for note in entry.notes)
    )
    st.session_state[_RESULT] = ("success", message)
    # show it at once: add it to the Playground's tokenizers when there is room
    chosen = [k for k in st.session_state.get("w_play_tokenizers", []) if k != entry.key]
    if len(chosen) < 4:
        st.session_state["w_play_tokenizers"] = [*chosen, entry.key]
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1  # empty the uploader


def _on_files() -> None:
    """Files were added or removed: an error about the files before goes with them."""
    result = st.session_state.get(_RESULT)
    if result is not None and result[0] == "error":
        del st.session_state[_RESULT]


def import_area() -> None:
    """The uploader, the pre-tokenizer for files that hold none, a name and the Import button;
    the last import's result under them."""
    result = st.session_state.get(_RESULT)
    with st.expander("Import a tokenizer", expanded=result is not None, icon=":material/upload:"):
        st.file_uploader(
            "Tokenizer files",
            accept_multiple_files=True,
            key=_uploader_key(),
            on_change=_on_files,
            help="One of: "
            + "; ".join(f"{f.title}: {f.files}" for f in IMPORT_FORMATS.values())
            + f". Up to {mib(MAX_CORPUS_BYTES)}, as for corpus uploads.",
        )
        c1, c2 = st.columns(2)
        state.widget_default("w_imp_pretok", "gpt2")
        c1.selectbox(
            "Pre-tokenizer, for files that hold none",
            _PRETOKENIZERS,
            key="w_imp_pretok",
            help="vocab.json + merges.txt and a .tiktoken without its JSON do not say how text is cut "
            "into pieces before merging; other formats carry their own and ignore this.  \n"
            + render.choices_help({p: PRETOKENIZERS[p] for p in _PRETOKENIZERS}),
        )
        uploaded = st.session_state.get(_uploader_key()) or []
        c2.text_input(
            "Name",
            key="w_imp_name",
            max_chars=60,
            placeholder=default_name([f.name for f in uploaded]) if uploaded else "from the file names",
        )
        st.button("Import", key="import_go", on_click=_on_import, type="primary")
        if result is not None:
            kind, message = result
            (st.success if kind == "success" else st.error)(render.md_text(message))
