"""The Corpus page's panels: choosing the text, its statistics, the pre-tokenizer preview."""

from __future__ import annotations

import html
from dataclasses import replace
from typing import cast

import streamlit as st

from ..bpe.config import NormalizerName, TrainerConfig
from ..errors import ExplorerError
from ..formats.corpora import DECODINGS, MAX_CORPUS_BYTES, decode_bytes, mib
from ..stages.normalizers import NORMALIZER_REGISTRY, NORMALIZERS
from ..stages.pipeline import inspect_str
from ..stages.pretokenizers import PATTERNS, PRETOKENIZERS
from . import catalog, class_room, data, links, render, state, storage
from .uploads import Upload, session_uploads, unique_name

__all__ = [
    "choose",
    "uploads_panel",
    "forget_area",
    "stats",
    "TOP_WORDS",
    "warm_default",
    "preview_text",
    "preview",
    "compare_patterns",
    "preview_params",
    "apply_preview_params",
]

_SIDE_BY_SIDE = ("whitespace", *PATTERNS)  # every pre-tokenizer that cuts text by itself


_ROUND = "upload_round"  # bumped to give the uploader a new key, which empties it
_UPLOAD_ERROR = "upload_error"  # why the store refused the last upload (shown once)
_FORGOTTEN = "forgotten"  # what "Forget my uploads" did (shown once)


def _on_upload(key: str) -> None:
    """Move the uploader's files into the session's list and empty the uploader: the list, not
    the uploader (which a page switch empties), is what the corpus holds."""
    entries = session_uploads()
    taken = {u.name for u in entries.values()}
    for f in st.session_state.get(key) or []:
        uid = max(entries, default=0) + 1
        name = unique_name(f.name or "upload.txt", taken)
        taken.add(name)
        raw = f.getvalue()
        try:
            digest = storage.put(raw, kind="corpus", name=name)
        except ExplorerError as err:
            digest = None
            st.session_state[_UPLOAD_ERROR] = f"{name} is used in this session but not kept on the server: {err}"
        entries[uid] = Upload(uid, name, raw, digest=digest)
    st.session_state[_ROUND] = st.session_state.get(_ROUND, 0) + 1


def _set_decoding(uid: int) -> None:
    entries = session_uploads()
    choice = st.session_state.get(f"w_decode_{uid}")
    if uid in entries and choice in DECODINGS:
        entries[uid] = replace(entries[uid], decoding=choice)


def _remove(uid: int) -> None:
    session_uploads().pop(uid, None)
    st.session_state.pop(f"w_decode_{uid}", None)


def uploads_panel() -> tuple[tuple[str, str, str | None], ...]:
    """The uploader, then every uploaded file with its size, how it was decoded (or a choice of
    decoding when UTF-8 fails) and a Remove button; returns the decoded (name, text, ref) triples."""
    key = f"upload_{st.session_state.get(_ROUND, 0)}"
    st.file_uploader(
        "Upload text files",
        accept_multiple_files=True,
        key=key,
        on_change=_on_upload,
        args=(key,),
        help="UTF-8 text; for other encodings you are asked how to decode. Files are kept on the server "
        "(by their content) so that links can name them, until you press Forget my uploads.",
    )
    if _UPLOAD_ERROR in st.session_state:
        st.warning(render.md_text(st.session_state.pop(_UPLOAD_ERROR)))
    out = []
    for uid, up in list(session_uploads().items()):
        label = render.user_text(up.name, into="markdown")
        row, remove = st.columns([6, 1], vertical_alignment="center")
        remove.button("Remove", key=f"remove_{uid}", on_click=_remove, args=(uid,))
        try:
            decoded = decode_bytes(up.raw, encoding=up.decoding or "utf-8")
        except ExplorerError as err:
            row.error(f"**{label}**: {render.md_text(str(err))}")
            choices = [d for d in DECODINGS if d != "utf-8"]
            st.radio(
                f"How should {label} be decoded?",
                choices,
                key=f"w_decode_{uid}",
                index=None,
                horizontal=True,
                format_func=DECODINGS.__getitem__,
                on_change=_set_decoding,
                args=(uid,),
            )
            continue
        how = f"decoded as {DECODINGS[decoded.encoding]}" if up.decoding else "UTF-8"
        row.caption(f"**{label}** · {len(up.raw):,} bytes · {how}")
        if decoded.replaced:
            st.warning(f"**{label}**: {decoded.replaced:,} undecodable byte sequence(s) became U+FFFD (�).")
        if not decoded.text.strip():
            st.warning(f"**{label}** is empty (or only whitespace) and is left out.")
            continue
        out.append((up.name, decoded.text, up.ref))
    return tuple(out)


def _held_sentence(held: list[tuple[str, list[str]]]) -> str:
    """What "Forget my uploads" left in place for the rooms using it (room codes only of the
    rooms this browser started: a shared file must not hand out other classes' codes)."""
    me = storage.owner()
    parts = []
    for name, codes in held:
        mine = [c for c in codes if class_room.rooms().starter(c) == me]
        others = len(codes) - len(mine)
        rooms = [f"your room {c}" for c in mine]
        if others:
            rooms.append(f"{others} room{'s' * (others != 1)} someone else started")
        parts.append(f"“{name}” ({', '.join(rooms)})")
    return (
        f" {len(held)} file{'s' * (len(held) != 1)} stay{'s' * (len(held) == 1)} while the rooms using "
        f"{'them' if len(held) != 1 else 'it'} are open, and go{'es' * (len(held) == 1)} when they close: "
        + "; ".join(parts)
        + "."
    )


def _forget() -> None:
    """Remove this browser's files from the server and from the session; say which files stay
    because a room holds them."""
    try:
        held = storage.held_mine()
        kept = _held_sentence(held) if held else ""
        removed = storage.forget_mine()
    except ExplorerError as err:
        st.session_state[_FORGOTTEN] = ("error", f"The server's store could not be changed: {err}")
        return
    session_uploads().clear()
    st.session_state["w_pasted"] = ""
    catalog.forget_imports()
    current = state.corpus_choice()
    state.set_corpus_choice(state.CorpusChoice(samples=current.samples or state.CorpusChoice().samples))
    st.session_state["w_samples"] = list(state.corpus_choice().samples)
    st.session_state[_FORGOTTEN] = (
        "success",
        f"Removed {removed:,} file{'s' * (removed != 1)} of yours from the server; "
        "links that name them no longer open them." + kept,
    )


def forget_area() -> None:
    """The "Forget my uploads" button: every file this browser uploaded, pasted or imported
    goes from the server's store (and from this session)."""
    st.button(
        "Forget my uploads",
        key="forget_uploads",
        on_click=_forget,
        icon=":material/delete:",
        help="Removes from the server every file you uploaded here, your pasted corpus text and the tokenizer "
        "files you imported. Links that name them then open without them.",
    )
    result = st.session_state.pop(_FORGOTTEN, None)
    if result is not None:
        (st.success if result[0] == "success" else st.error)(render.md_text(result[1]))


def choose() -> state.CorpusChoice:
    """Samples, uploads and pasted text; the session's corpus follows these widgets."""
    current = state.corpus_choice()
    names = data.sample_names()
    state.widget_default("w_samples", [n for n in current.samples if n in names])
    state.widget_default("w_pasted", current.pasted)
    descriptions = data.sample_descriptions()
    st.multiselect(
        "Bundled corpora",
        names,
        key="w_samples",
        help="Several can be combined; each file is its own sequence.",
        format_func=lambda n: n,
    )
    for name in st.session_state["w_samples"]:
        st.caption(f"**{render.md_text(name)}** — {render.md_text(descriptions.get(name, ''))}")
    uploads = uploads_panel()
    # one character more than the limit: Streamlit cuts a longer value to max_chars without a
    # word, and the cut text must still be seen as too long
    st.text_area(
        "Or paste text",
        key="w_pasted",
        height=120,
        max_chars=MAX_CORPUS_BYTES + 1,
        placeholder="Paste any text here (Ctrl+Enter to apply)",
    )
    pasted = st.session_state["w_pasted"]
    if len(pasted.encode("utf-8", "surrogatepass")) > MAX_CORPUS_BYTES:
        st.error(
            f"The pasted text is larger than {mib(MAX_CORPUS_BYTES)}, the limit for an uploaded file too. It is "
            "left out of the corpus: paste less, or upload it as a file."
        )
        pasted = ""
    choice = state.CorpusChoice(
        tuple(st.session_state["w_samples"]),
        tuple((n, t) for n, t, _ in uploads),
        pasted,
        tuple(r for _, _, r in uploads if r is not None),
    )
    if choice != current or choice.upload_refs != current.upload_refs:
        state.set_corpus_choice(choice)
    return choice


TOP_WORDS = 20  # the most frequent words the page charts


def warm_default() -> None:
    """The default corpus's sizes and words (shared by every session, computed in a worker for a
    corpus this big), for the server's start-up warm-up: a first visit draws them at once."""
    data.corpus_stats(state.CorpusChoice().texts(), top=TOP_WORDS)


def stats(texts: tuple[str, ...]) -> None:
    try:
        s = data.corpus_stats(texts, top=TOP_WORDS)
    except ExplorerError as err:  # a worker over its memory budget, or stopped: the rest of the page goes on
        st.error(render.md_text(f"The corpus's statistics could not be computed: {str(err).rstrip('.')}."))
        return
    # a strip that wraps rather than metrics that cut a number short ("421,…") in narrow columns
    st.html(
        render.stat_strip(
            [
                ("Bytes", f"{s.bytes:,}"),
                ("Characters", f"{s.chars:,}"),
                ("Lines", f"{s.lines:,}"),
                ("Words", f"{s.words:,}"),
                ("Distinct words", f"{s.distinct_words:,}"),
                ("Alphabet (chars)", f"{s.alphabet_chars:,}"),
                ("Alphabet (bytes)", f"{s.alphabet_bytes:,}"),
            ]
        )
    )
    if s.top_words:
        st.html(render.bar_rows(s.top_words, title="Most frequent words (split on whitespace)"))


def _lines_from(text: str, start: int, n: int) -> str:
    """n non-blank lines from the ``start``-th non-blank line on (1 is the first; each line cut
    at 400 characters).

    >>> _lines_from("a\\n\\nb\\nc\\n", 1, 2), _lines_from("a\\n\\nb\\nc\\n", 2, 5)
    ('a\\nb\\n', 'b\\nc\\n')
    """
    lines = []
    seen = 0
    for line in text.splitlines(keepends=True):
        if line.strip():
            seen += 1
            if seen >= start:
                lines.append(line[:400])
        if len(lines) >= n:
            break
    return "".join(lines)


def _count_lines(text: str) -> int:
    """Non-blank lines (what the preview's start line counts).

    >>> _count_lines("a\\n\\nb\\n")
    2
    """
    return sum(1 for line in text.splitlines() if line.strip())


def _lines_of_pieces(sample: str, config: TrainerConfig) -> list[list[str]]:
    grouped: dict[int, list[str]] = {}
    for p in inspect_str(sample, config, max_pieces=5000):
        grouped.setdefault(p.sequence, []).append(p.text)
    return list(grouped.values())


def preview_text(choice: state.CorpusChoice) -> str:
    """The text the previews show: any of the chosen ones (a picker when there are several)."""
    parts = dict(choice.parts())
    if len(parts) > 1:
        if st.session_state.get("w_prev_text") not in parts:
            st.session_state["w_prev_text"] = next(iter(parts))
        st.selectbox("Text to preview", list(parts), key="w_prev_text")
        return parts[st.session_state["w_prev_text"]]
    return next(iter(parts.values()), "")


def preview(text: str) -> None:
    """The first lines cut into pieces by the chosen normalizer and pre-tokenizer."""
    state.widget_default("w_prev_pretok", "gpt2")
    state.widget_default("w_prev_lines", 5)
    state.widget_default("w_prev_pattern", r"\w+|[^\w\s]+|\s+")
    state.widget_default("w_prev_start", 1)
    last = max(1, _count_lines(text))
    if st.session_state["w_prev_start"] > last:
        st.session_state["w_prev_start"] = last  # another text, shorter than where the last one was read
    c1, c2, c3, c4 = st.columns([1, 1, 0.8, 1.2])
    normalizer = c1.selectbox("Normalizer", list(NORMALIZERS), key="w_prev_norm", help=render.choices_help(NORMALIZERS))
    pretok = c2.selectbox(
        "Pre-tokenizer", list(PRETOKENIZERS), key="w_prev_pretok", help=render.choices_help(PRETOKENIZERS)
    )
    start = c3.number_input("From line", 1, last, key="w_prev_start", help=f"The text has {last:,} non-blank lines.")
    # a number box like "From line" beside it (a slider here cost every first visit of the page
    # Streamlit's slider code and the date and number libraries it loads, ~120 KB)
    n = int(c4.number_input("Lines", 1, 30, key="w_prev_lines", help="How many lines to preview (1 to 30)."))
    pattern = None
    if pretok == "regex":
        pattern = st.text_input("Custom regex", key="w_prev_pattern")
    sample = _lines_from(text, int(start), n)
    NORMALIZER_REGISTRY.stage(normalizer)  # ConfigError unless a registered name (the picker offers no other)
    try:  # a config is checked when built: a bad regex is shown here
        config = TrainerConfig(
            normalizer=cast(NormalizerName, normalizer),
            pretokenizer=pretok,
            pattern=pattern,
            sequences="lines",
            unit="char",
        )
        lines = _lines_of_pieces(sample, config)
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return
    pieces = sum(len(line) for line in lines)
    st.caption(
        f"{pieces:,} pieces in these {len(lines)} lines; each chip is one piece (· space, ↵ newline, → tab). Merges never cross a chip's edge."
    )
    st.html(render.piece_preview(lines))


def compare_patterns(text: str) -> None:
    """The same lines under every built-in pre-tokenizer, side by side."""
    sample = _lines_from(text, int(st.session_state.get("w_prev_start", 1)), st.session_state.get("w_prev_lines", 5))
    columns = {
        name: _lines_of_pieces(sample, TrainerConfig(pretokenizer=name, sequences="lines", unit="char"))
        for name in _SIDE_BY_SIDE
    }
    n_lines = max((len(v) for v in columns.values()), default=0)
    head = "".join(f"<th>{html.escape(name)}</th>" for name in _SIDE_BY_SIDE)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="bpe-row">{render.chips(columns[name][i]) if i < len(columns[name]) else ""}</td>'
            for name in _SIDE_BY_SIDE
        )
        + "</tr>"
        for i in range(n_lines)
    )
    counts = " · ".join(f"{name}: {sum(map(len, columns[name])):,} pieces" for name in _SIDE_BY_SIDE)
    st.caption(counts)
    st.html(
        "<style>.bpe-cmp td{vertical-align:top;border-top:1px solid #e2e8f0;padding:4px;width:25%}"
        ".bpe-cmp th{text-align:left}</style>" + f'<table class="bpe-cmp"><tr>{head}</tr>{body}</table>'
    )


# ---- the page's link -----------------------------------------------------------------------
# URL param -> widget key of the preview's settings (the corpus itself is in every link)
_PREVIEW_PARAMS = {
    "normalizer_preview": "w_prev_norm",
    "pretokenizer_preview": "w_prev_pretok",
    "lines": "w_prev_lines",
    "from_line": "w_prev_start",
    "regex_preview": "w_prev_pattern",
    "previewing": "w_prev_text",
}


def preview_params() -> dict[str, str]:
    """The preview's settings as URL params (only what differs from the page's defaults)."""
    defaults = {
        "w_prev_norm": "none",
        "w_prev_pretok": "gpt2",
        "w_prev_lines": 5,
        "w_prev_start": 1,
        "w_prev_pattern": r"\w+|[^\w\s]+|\s+",
        "w_prev_text": None,
    }
    out = {}
    for param, key in _PREVIEW_PARAMS.items():
        value = st.session_state.get(key, defaults[key])
        if value != defaults[key] and value is not None:
            out[param] = str(value)
    if out.get("pretokenizer_preview", "gpt2") != "regex":
        out.pop("regex_preview", None)
    return out


def apply_preview_params(params: dict[str, str]) -> list[str]:
    """Set the preview's widgets from a link; what was left out."""
    problems = []
    checks = {"normalizer_preview": NORMALIZERS, "pretokenizer_preview": PRETOKENIZERS}
    for param, allowed in checks.items():
        value = params.get(param)
        if value is None:
            continue
        if value in allowed:
            st.session_state[_PREVIEW_PARAMS[param]] = value
        else:
            problems.append(f"{param}={value[:30]!r} is not one of {', '.join(allowed)}")
    # the number of lines, and the line they start from (brought within the text when drawn)
    for param, key, high in (("lines", "w_prev_lines", 30), ("from_line", "w_prev_start", 10_000_000)):
        try:
            count = links.count_param(params, param, low=1, high=high)
        except ExplorerError as err:
            problems.append(str(err))
            continue
        if count is not None:
            st.session_state[key] = count
    if "regex_preview" in params:
        st.session_state["w_prev_pattern"] = params["regex_preview"][:2000]
    if "previewing" in params:
        st.session_state["w_prev_text"] = params["previewing"]  # checked against the corpus when drawn
    return problems
