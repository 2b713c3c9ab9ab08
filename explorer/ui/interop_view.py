"""Tokenizers in and out, the widgets: the Train page's download of the tokenizer as of the step
shown, and the Playground's import of a tokenizer made elsewhere (its files, or a Hugging Face
Hub repository id). The tokenizers themselves are the session's catalog's (``catalog``): an
import joins it, and with it the Playground's and the Compare page's pickers, like a bundled one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from ..errors import ExplorerError
from ..formats.corpora import MAX_CORPUS_BYTES, mib
from ..formats.exporters import EXPORT_FORMATS, export_files, zip_files
from ..formats.importers import IMPORT_FORMATS
from ..formats.trace import trace_dict
from ..stages.normalizers import NORMALIZERS
from ..stages.pretokenizers import PATTERNS, PRETOKENIZERS
from . import catalog, render, state, storage

__all__ = ["IMPORT_OPEN", "Download", "download_area", "export_download", "download_name", "import_area"]


# ---- download (Train page) ------------------------------------------------------------------
# Only formats that write the merge history (ExportFormat.uses_trace) get the trainer's trace: the
# history of 20,000 merges takes ~0.3-0.6 s to build.
_EXPORTS = "exports"  # live.memo key: the last few downloads made, {(format, "trained@k", trainer id): Download}
_EXPORTS_KEPT = 2  # a trace.json of 20,000 merges is ~6 MB: keep the current one and the one before


@dataclass(frozen=True)
class Download:
    """The chosen format's file as of one step, or why the format cannot hold that tokenizer."""

    file_name: str = ""
    data: bytes = b""
    mime: str = ""
    files: tuple[str, ...] = ()  # what is inside (the zip's members, or the one file)
    problem: str | None = None


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
    return f"bpe-{storage.slug(corpus_label)}-{k}-merges-{fmt}.zip"


def _mime(name: str) -> str:
    if name.endswith(".zip"):
        return "application/zip"
    if name.endswith(".json"):
        return "application/json"
    if name.endswith(".csv"):
        return "text/csv"
    return "text/plain"


def export_download(live: state.Live, fmt: str, key: str) -> Download:
    """The chosen format for the catalog's ``trained@k``, made once per (format, key, trainer)
    and kept with the trainer (reruns that do not move the step reuse it)."""
    entry, k = catalog.get(key), catalog.parse(key)
    assert entry is not None and entry.trainer is not None and k is not None and k.k is not None, key
    cache: dict = live.memo.setdefault(_EXPORTS, {})
    memo_key = (fmt, key, id(entry.trainer))  # the memo goes with the trainer, so its id cannot be reused here
    hit = cache.get(memo_key)
    if hit is not None:
        return hit
    trace = trace_dict(entry.trainer, steps=k.k) if EXPORT_FORMATS[fmt].uses_trace else None
    try:
        # one export both checks and writes: export_problem would write the files a second time
        files = export_files(entry.tokenizer, fmt, trace=trace)
    except ExplorerError as err:  # a setting in the way (ConfigError), or what no such file holds (FormatError)
        out = Download(problem=str(err))
    else:
        name = download_name(state.corpus_choice().label(), k.k, fmt, files)
        data = zip_files(files) if len(files) > 1 else next(iter(files.values()))
        out = Download(name, data, _mime(name), tuple(files))
    while len(cache) >= _EXPORTS_KEPT:
        cache.pop(next(iter(cache)))
    cache[memo_key] = out
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
        got = export_download(live, fmt, catalog.trained_key(k))
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
_RESULT = "import_result"  # ("success" | "error", message) of the last Import click
_ROUND = "import_round"  # bumped to give the uploader a new key, which empties it
# the import area's expander, open or shut: the person's own (a removed file that takes its error
# with it leaves the area open), and drawn only while open
IMPORT_OPEN = "import_open"
# the choice for files that hold no pre-tokenizer (vocab.json + merges.txt, a lone .tiktoken)
_PRETOKENIZERS = (*PATTERNS, "none")  # the regex pre-tokenizers (the first is the default), or none


def _uploader_key() -> str:
    return f"import_files_{st.session_state.get(_ROUND, 0)}"


def _on_import() -> None:
    uploaded = st.session_state.get(_uploader_key()) or []
    if not uploaded:
        st.session_state[_RESULT] = ("error", "Choose the tokenizer's files first.")
        return
    files = {f.name: f.getvalue() for f in uploaded}
    _import_with(
        lambda **options: catalog.add_import(
            files, glossaries=tuple(st.session_state.get("w_imp_gloss", "").split()), **options
        ),
        failed="these files could not be read ({error}); check that they are one of the formats listed",
    )


def _on_hub() -> None:
    repo_id = st.session_state.get("w_hub_id", "").strip()
    if not repo_id:
        st.session_state[_RESULT] = ("error", "Type a Hub repository id first, such as Qwen/Qwen2.5-7B.")
        return
    revision = st.session_state.get("w_hub_rev", "").strip() or None
    _import_with(
        lambda **options: catalog.add_hub(repo_id, revision=revision, **options),
        failed=repo_id + " could not be opened ({error})",
    )


def _import_with(add: Callable[..., tuple[catalog.Imported, list[str]]], *, failed: str) -> None:
    """Run one import (files or a Hub id) with the options chosen, keep its result sentence
    (``failed``, with ``{error}`` for the exception's type, for what no sentence was written for),
    and show the tokenizer at once among the Playground's."""
    try:
        entry, dropped = add(
            name=st.session_state.get("w_imp_name", ""),
            pretokenizer=st.session_state.get("w_imp_pretok", "gpt2"),
            normalizer=st.session_state.get("w_imp_norm", "none"),
        )
    except ExplorerError as err:
        st.session_state[_RESULT] = ("error", str(err))
        return
    except Exception as err:  # noqa: BLE001 - a classroom's odd file must not end in a traceback
        st.session_state[_RESULT] = ("error", failed.replace("{error}", type(err).__name__))
        return
    st.session_state[_RESULT] = ("success", _imported_message(entry, dropped))
    # show it at once: add it to the Playground's tokenizers when there is room
    chosen = [k for k in st.session_state.get("w_play_tokenizers", []) if k != entry.key]
    if len(chosen) < 4:
        st.session_state["w_play_tokenizers"] = [*chosen, entry.key]
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1  # empty the uploader


def _imported_message(entry: catalog.Imported, dropped: list[str]) -> str:
    """What an import read, in one paragraph (user text: shown through ``render.md_text``)."""
    tok = entry.tokenizer
    ids = len(
        set(range(len(tok.vocab))) | set(tok.special_ids.values())
    )  # tiktoken's specials come past the vocabulary
    specials = len(tok.special_ids)
    return (
        f"Imported {entry.name!r}: format {IMPORT_FORMATS[entry.format].title}, {tok.num_merges:,} merges, "
        f"vocabulary {ids:,}"
        + (f" ({specials:,} special token{'s' * (specials != 1)})" if specials else "")
        + (f"; {', '.join(map(repr, dropped))} was let go (a session keeps {catalog.MAX_IMPORTED})" if dropped else "")
        + ". It is now in the tokenizers below and on the Compare page."
        + "".join(f" {note[:1].upper()}{note[1:].rstrip('.')}." for note in entry.notes)
    )


def _on_files() -> None:
    """Files were added or removed: an error about the files before goes with them."""
    result = st.session_state.get(_RESULT)
    if result is not None and result[0] == "error":
        del st.session_state[_RESULT]


def import_area() -> None:
    """The uploader (or a Hub repository id and its Open button), the pre-tokenizer for files that
    hold none, a name and the Import button; the last import's result under them."""
    # drawn only while open (a rerun when it opens): the uploader and its pickers cost every first
    # visit of the Playground the browser's loading of their code, for a tool most visits never open
    box = st.expander("Import a tokenizer", key=IMPORT_OPEN, on_change="rerun", icon=":material/upload:")
    if not box.open:
        return
    result = st.session_state.get(_RESULT)
    with box:
        st.file_uploader(
            "Tokenizer files",
            accept_multiple_files=True,
            key=_uploader_key(),
            on_change=_on_files,
            help="One of: "
            + "; ".join(f"{f.title}: {f.files}" for f in IMPORT_FORMATS.values())
            + f". Up to {mib(MAX_CORPUS_BYTES)}, as for corpus uploads.",
        )
        h1, h2, h3 = st.columns([3, 2, 2], vertical_alignment="bottom")
        h1.text_input(
            "Or a Hugging Face Hub repository",
            key="w_hub_id",
            max_chars=96,
            placeholder="e.g. Qwen/Qwen2.5-7B",
            help="owner/name of a model on the Hub: its tokenizer.json is read, else vocab.json + merges.txt, "
            "a .tiktoken file or tokenizer.model. Files are fetched once into the server's Hub cache; a gated "
            "model needs the server started with HF_TOKEN set.",
        )
        h2.text_input("Revision", key="w_hub_rev", max_chars=100, placeholder="main")
        h3.button("Open from the Hub", key="hub_go", on_click=_on_hub, icon=":material/cloud_download:")
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
            placeholder=catalog.default_name([f.name for f in uploaded]) if uploaded else "from the file names",
        )
        c3, c4 = st.columns(2)
        state.widget_default("w_imp_norm", "none")
        c3.selectbox(
            "Normalizer, for files that hold none",
            list(NORMALIZERS),
            key="w_imp_norm",
            help="vocab.json + merges.txt, codes, rank files and merges files name no normalizer; "
            "tokenizer.json and trace.json carry their own and ignore this.  \n" + render.choices_help(NORMALIZERS),
        )
        c4.text_input(
            "Glossaries, for subword-nmt codes",
            key="w_imp_gloss",
            placeholder="e.g. USA [0-9]+",
            help="Words or regexes, separated by spaces, that subword-nmt codes never split "
            "(apply_bpe --glossaries); other formats have none.",
        )
        st.button("Import", key="import_go", on_click=_on_import, type="primary")
        if result is not None:
            kind, message = result
            (st.success if kind == "success" else st.error)(render.md_text(message))
