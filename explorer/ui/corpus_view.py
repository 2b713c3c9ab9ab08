"""The Corpus page's panels: choosing the text, its statistics, the pre-tokenizer preview."""

from __future__ import annotations

import html

import altair as alt
import pandas as pd
import streamlit as st

from ..config import TrainerConfig
from ..corpora import DECODINGS, decode_bytes
from ..errors import ExplorerError
from ..normalizers import NORMALIZERS
from ..pipeline import inspect_str
from ..pretokenizers import PRETOKENIZERS
from . import data, render, state

__all__ = ["choose", "stats", "preview", "compare_patterns"]

_SIDE_BY_SIDE = ("whitespace", "gpt2", "cl100k", "o200k")


def _decoded_uploads(files) -> tuple[tuple[str, str], ...]:
    """Decode each uploaded file; an undecodable one gets a message and a choice of decoding."""
    out = []
    for f in files:
        raw = f.getvalue()
        choice = st.session_state.get(f"decode_{f.name}", "utf-8")
        try:
            decoded = decode_bytes(raw, encoding=choice)
        except ExplorerError as err:
            st.error(f"**{f.name}**: {err}")
            st.radio(f"How should {f.name} be decoded?", [d for d in DECODINGS if d != "utf-8"], key=f"decode_{f.name}",
                     format_func=lambda d: DECODINGS[d], index=None, horizontal=True)
            continue
        if choice != "utf-8":
            st.caption(f"**{f.name}** decoded as {DECODINGS[choice]}.")
        if decoded.replaced:
            st.warning(f"**{f.name}**: {decoded.replaced:,} undecodable byte sequence(s) became U+FFFD (�).")
        if not decoded.text.strip():
            st.warning(f"**{f.name}** is empty (or only whitespace) and is left out.")
            continue
        out.append((f.name, decoded.text))
    return tuple(out)


def choose() -> state.CorpusChoice:
    """Samples, uploads and pasted text; the session's corpus follows these widgets."""
    current = state.corpus_choice()
    names = data.sample_names()
    state.widget_default("w_samples", [n for n in current.samples if n in names])
    state.widget_default("w_pasted", current.pasted)
    descriptions = data.sample_descriptions()
    st.multiselect("Bundled corpora", names, key="w_samples", help="Several can be combined; each file is its own sequence.",
                   format_func=lambda n: n)
    for name in st.session_state["w_samples"]:
        st.caption(f"**{name}** — {descriptions.get(name, '')}")
    files = st.file_uploader("Upload text files", accept_multiple_files=True, key="upload",
                             help="UTF-8 text; for other encodings you are asked how to decode.")
    uploads = _decoded_uploads(files or []) if files else current.uploads
    st.text_area("Or paste text", key="w_pasted", height=120, placeholder="Paste any text here (Ctrl+Enter to apply)")
    choice = state.CorpusChoice(tuple(st.session_state["w_samples"]), uploads, st.session_state["w_pasted"])
    if choice != current:
        state.set_corpus_choice(choice)
    return choice


def stats(texts: tuple[str, ...]) -> None:
    s = data.corpus_stats(texts, top=20)
    cols = st.columns(7)
    for col, (label, value) in zip(cols, [
        ("Bytes", s.bytes), ("Characters", s.chars), ("Lines", s.lines), ("Words", s.words),
        ("Distinct words", s.distinct_words), ("Alphabet (chars)", s.alphabet_chars), ("Alphabet (bytes)", s.alphabet_bytes),
    ]):
        col.metric(label, f"{value:,}")
    if s.top_words:
        df = pd.DataFrame(s.top_words, columns=["word", "count"])
        chart = (
            alt.Chart(df, title="Most frequent words (split on whitespace)")
            .mark_bar(color="#2563eb")
            .encode(x=alt.X("count:Q"), y=alt.Y("word:N", sort="-x", title=None), tooltip=["word", alt.Tooltip("count:Q", format=",")])
            .properties(height=max(200, 18 * len(df)))
        )
        st.altair_chart(chart, width="stretch")


def _first_lines(texts: tuple[str, ...], n: int) -> str:
    lines = []
    for text in texts:
        for line in text.splitlines(keepends=True):
            if line.strip():
                lines.append(line[:400])
            if len(lines) >= n:
                return "".join(lines)
    return "".join(lines)


def _lines_of_pieces(sample: str, config: TrainerConfig) -> list[list[str]]:
    grouped: dict[int, list[str]] = {}
    for p in inspect_str(sample, config, max_pieces=5000):
        grouped.setdefault(p.sequence, []).append(p.text)
    return list(grouped.values())


def preview(texts: tuple[str, ...]) -> None:
    """The first lines cut into pieces by the chosen normalizer and pre-tokenizer."""
    state.widget_default("w_prev_pretok", "gpt2")
    state.widget_default("w_prev_lines", 5)
    state.widget_default("w_prev_pattern", r"\w+|[^\w\s]+|\s+")
    c1, c2, c3 = st.columns([1, 1, 1])
    normalizer = c1.selectbox("Normalizer", list(NORMALIZERS), key="w_prev_norm", format_func=lambda v: f"{v} — {NORMALIZERS[v]}")
    pretok = c2.selectbox("Pre-tokenizer", list(PRETOKENIZERS), key="w_prev_pretok",
                          format_func=lambda v: f"{v} — {PRETOKENIZERS[v]}")
    n = c3.slider("Lines", 1, 30, key="w_prev_lines")
    pattern = None
    if pretok == "regex":
        pattern = st.text_input("Custom regex", key="w_prev_pattern")
    sample = _first_lines(texts, n)
    config = TrainerConfig(normalizer=normalizer, pretokenizer=pretok, pattern=pattern, sequences="lines", unit="char")
    try:
        config.validate()
        lines = _lines_of_pieces(sample, config)
    except ExplorerError as err:
        st.error(str(err))
        return
    pieces = sum(len(line) for line in lines)
    st.caption(f"{pieces:,} pieces in these {n} lines; each chip is one piece (· space, ↵ newline, → tab). Merges never cross a chip's edge.")
    st.html(render.CHIP_CSS + render.piece_preview(lines))


def compare_patterns(texts: tuple[str, ...]) -> None:
    """The same lines under every built-in pre-tokenizer, side by side."""
    sample = _first_lines(texts, st.session_state.get("w_prev_lines", 5))
    columns = {name: _lines_of_pieces(sample, TrainerConfig(pretokenizer=name, sequences="lines", unit="char")) for name in _SIDE_BY_SIDE}
    n_lines = max((len(v) for v in columns.values()), default=0)
    head = "".join(f"<th>{html.escape(name)}</th>" for name in _SIDE_BY_SIDE)
    body = "".join(
        "<tr>" + "".join(f'<td class="bpe-row">{render.chips(columns[name][i]) if i < len(columns[name]) else ""}</td>' for name in _SIDE_BY_SIDE) + "</tr>"
        for i in range(n_lines)
    )
    counts = " · ".join(f"{name}: {sum(map(len, columns[name])):,} pieces" for name in _SIDE_BY_SIDE)
    st.caption(counts)
    st.html(render.CHIP_CSS + '<style>.bpe-cmp td{vertical-align:top;border-top:1px solid #e2e8f0;padding:4px;width:25%}'
            '.bpe-cmp th{text-align:left}</style>' + f'<table class="bpe-cmp"><tr>{head}</tr>{body}</table>')
