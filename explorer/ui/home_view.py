"""The home page's live miniature: Sennrich's toy corpus, merge by merge."""

from __future__ import annotations

import streamlit as st

from ..bpe.config import make_config
from ..bpe.trainer import Trainer, train
from ..errors import ExplorerError
from . import charts, links, projector, render, state, tables
from .explain import explain

__all__ = ["miniature", "home", "params", "apply_params", "toy"]

TOY = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
TOY_MERGES = 10


@st.cache_resource(show_spinner=False)
def toy() -> Trainer:
    # cache_resource: one read-only trainer shared by every session
    return train(TOY, make_config("sennrich", num_merges=TOY_MERGES))


def miniature() -> None:
    trainer = toy()
    state.widget_default("w_home_step", 3)
    k = st.slider("Merges applied", 0, TOY_MERGES, key="w_home_step")
    tok = trainer.tokenizer(k)
    new_id = trainer.records[k - 1].token_id if k else -1
    rows = "".join(
        render.word_row(w, tok.tokens(ids), f, highlight=[i for i, t in enumerate(ids) if t == new_id])
        for w, f in zip(trainer.words, trainer.freqs)
        for ids in [tok.encode_piece(w)]
    )
    st.html(rows)
    if k:
        st.info(render.md_text(explain(trainer.records[k - 1], config=trainer.config)))
    else:
        st.info("Before any merge every word is its letters plus the end-of-word symbol </w>.")
    left, right = st.columns([1, 1])
    with left:
        # the merge list so far is the tokenizer itself; drawn as the Train page's history (no data
        # grid: its script, a megabyte and a half, would hold up the first visit of the app's first page)
        st.html(tables.history_html(tables.history_rows(trainer.records[:k], k, newest_first=False)))
    with right:
        df = charts.progress_columns(
            trainer.records,
            initial_tokens=trainer.initial_tokens,
            corpus_bytes=trainer.corpus_bytes,
            corpus_chars=trainer.corpus_chars,
        )
        data, spec = charts.tokens_chart(df, k)
        st.vega_lite_chart(data, projector.chart_spec({**spec, "height": 200}), width="stretch")


def params() -> dict[str, str]:
    """The miniature's step, for the page's link."""
    return {"toy_step": str(st.session_state.get("w_home_step", 3))}


def apply_params(params: dict[str, str]) -> list[str]:
    """The miniature's step from a link; what was left out."""
    try:
        k = links.count_param(params, "toy_step", low=0, high=TOY_MERGES)
    except ExplorerError as err:
        return [str(err)]
    if k is not None:
        st.session_state["w_home_step"] = k
    return []


def home() -> None:
    """The Home page: what BPE is, the miniature, and where to go next."""
    state.keep_widget_state()
    st.title("BPE Explorer")
    st.markdown(
        """
**Byte-pair encoding** (BPE) is how most language models cut text into tokens. It starts from
single characters (or bytes) and repeats one move: count every pair of neighbouring symbols in
the corpus, and merge the most frequent pair into a new symbol. Frequent words soon become one
token; rare words stay in pieces. The ordered list of merges *is* the tokenizer: to encode new
text, apply the same merges in the same order.
"""
    )
    st.subheader("Watch it on Sennrich's toy corpus: low ×5, lower ×2, newest ×6, widest ×3")
    miniature()
    st.subheader("Explore")
    cards = [
        (
            "pages/1_Corpus.py",
            "Corpus",
            "Pick, upload or paste text; see its statistics and how each pre-tokenizer cuts it.",
        ),
        (
            "pages/2_Train.py",
            "Train",
            "Step through the merges; watch the pair counts, the words and the compression curve.",
        ),
        (
            "pages/3_Playground.py",
            "Playground",
            "Encode any text with your tokenizer and with GPT-2, cl100k_base and o200k_base; "
            "see why a word is split, a token's lineage, and char-level vs byte-level BPE.",
        ),
        (
            "pages/4_Compare.py",
            "Compare",
            "Corpora and languages side by side: compression curves, how a vocabulary "
            "travels, and what each language pays in tokens (fertility, parity).",
        ),
    ]
    for column, (page, title, what) in zip(st.columns(len(cards)), cards):
        with column:
            st.page_link(page, label=f"**{title}**")
            st.caption(what)
    st.caption(
        f"The app opens on a bundled corpus ({render.md_text(state.corpus_choice().shown_label())}) with the GPT-2 style "
        "preset; every preset reproduces one of the classic BPE notebooks merge for merge."
    )
