"""The home page's live miniature: Sennrich's toy corpus, merge by merge, drawn by the stepper
(``stepper``: the Train page's component) from its eleven steps, all sent at once."""

from __future__ import annotations

import streamlit as st

from ..bpe.config import make_config
from ..bpe.trainer import Trainer, train
from ..errors import ExplorerError
from . import charts, links, live_view, render, state, stepper, tables
from .explain import explain

__all__ = ["miniature", "home", "params", "apply_params", "toy", "toy_entry"]

TOY = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
TOY_MERGES = 10
_STEP = "w_home_step"  # the step shown (the link's toy_step)
_STEPPER = "home_stepper"
_WINDOW = "home_stepper_window"  # the session's stepper.Window


@st.cache_resource(show_spinner=False)
def toy() -> Trainer:
    # cache_resource: one read-only trainer shared by every session
    return train(TOY, make_config("sennrich", num_merges=TOY_MERGES))


def toy_entry(trainer: Trainer, k: int) -> stepper.Entry:
    """Step k of the miniature as the stepper draws it: the words segmented (the new token
    outlined) beside the merges so far, drawn as the Train page's history."""
    tok = trainer.tokenizer(k)
    new_id = trainer.records[k - 1].token_id if k else -1
    words = "".join(
        render.word_row(w, tok.tokens(ids), f, highlight=[i for i, t in enumerate(ids) if t == new_id])
        for w, f in zip(trainer.words, trainer.freqs)
        for ids in [tok.encode_piece(w)]
    )
    # the merge list so far is the tokenizer itself; drawn as the Train page's history (no data
    # grid: its script, a megabyte and a half, would hold up the first visit of the app's first page)
    history = tables.history_html(tables.history_rows(trainer.records[:k], k, newest_first=False))
    if k:
        text = explain(trainer.records[k - 1], config=trainer.config)
    else:
        text = "Before any merge every word is its letters plus the end-of-word symbol </w>."
    return stepper.Entry(k, len(tok.vocab), "", text, "info", ((words, history),))


def _on_report() -> None:
    """The stepper moved: the step shown (and so the link and the chart) follows."""
    report = stepper.report_of(_STEPPER)
    window: stepper.Window | None = st.session_state.get(_WINDOW)
    if report is not None and window is not None and report.gen == window.gen:
        st.session_state[_STEP] = min(report.step, TOY_MERGES)


def miniature() -> None:
    """The stepper over the toy's steps, then the tokens chart at the step shown. Where the
    component's script does not run (AppTest) a slider stands in for its controls."""
    trainer = toy()
    state.widget_default(_STEP, 3)
    window = stepper.session_window(_WINDOW, stepper.Window)
    window.renew("toy")  # one trainer and one look: one epoch
    window.gen = f"toy.{window.moves}"
    report = stepper.report_of(_STEPPER)
    held = window.held_by(report)
    k = int(st.session_state[_STEP])
    stepper.stepper(
        key=_STEPPER,
        window=window,
        view=k,
        last=TOY_MERGES,
        done=True,
        final=TOY_MERGES,
        tail="",
        report=report,
        entries=[toy_entry(trainer, j) for j in range(TOY_MERGES + 1) if j not in held],
        held=held,
        more=False,
        on_report=_on_report,
    )
    if not stepper.browser():
        st.slider("Merges applied", 0, TOY_MERGES, key=_STEP)
        k = int(st.session_state[_STEP])
    cols = charts.progress_columns(
        trainer.records,
        initial_tokens=trainer.initial_tokens,
        corpus_bytes=trainer.corpus_bytes,
        corpus_chars=trainer.corpus_chars,
    )
    # drawn by the Train page's chart script (an SVG): a Vega chart here made the app's first page
    # load Vega's ~1 MB of script, the longest task of the first visit
    live_view.live_view([], [live_view.tokens_chart(cols, k)], key="home_chart")


def params() -> dict[str, str]:
    """The miniature's step, for the page's link."""
    return {"toy_step": str(st.session_state.get(_STEP, 3))}


def apply_params(params: dict[str, str]) -> list[str]:
    """The miniature's step from a link; what was left out."""
    try:
        k = links.count_param(params, "toy_step", low=0, high=TOY_MERGES)
    except ExplorerError as err:
        return [str(err)]
    if k is not None:
        st.session_state[_STEP] = k
        window = st.session_state.get(_WINDOW)
        if window is not None:  # the server moved the view itself: the stepper adopts it
            window.moves += 1
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
