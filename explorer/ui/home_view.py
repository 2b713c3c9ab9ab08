"""The home page's live miniature: Sennrich's toy corpus, merge by merge."""

from __future__ import annotations

import streamlit as st

from ..config import make_config
from ..trainer import Trainer, train
from . import render, state
from .explain import explain

__all__ = ["miniature"]

TOY = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
TOY_MERGES = 10


@st.cache_resource(show_spinner=False)
def _toy() -> Trainer:
    # cache_resource: one read-only trainer shared by every session
    return train(TOY, make_config("sennrich", num_merges=TOY_MERGES))


def miniature() -> None:
    trainer = _toy()
    state.widget_default("w_home_step", 3)
    k = st.slider("Merges applied", 0, TOY_MERGES, key="w_home_step")
    tok = trainer.tokenizer(k)
    new_id = trainer.records[k - 1].token_id if k else -1
    rows = "".join(
        render.word_row(w, tok.tokens(ids), f, highlight=[i for i, t in enumerate(ids) if t == new_id])
        for w, f in zip(trainer.words, trainer.freqs)
        for ids in [tok.encode_piece(w)]
    )
    st.html(render.CHIP_CSS + rows)
    if k:
        st.info(render.md_text(explain(trainer.records[k - 1], tie_break=trainer.config.tie_break)))
    else:
        st.info("Before any merge every word is its letters plus the end-of-word symbol </w>.")
    merges = " · ".join(f"{r.left} + {r.right} → {r.token}" for r in trainer.records[:k])
    st.caption(f"Merges so far: {merges}" if k else "No merges yet.")
