"""BPE Explorer: the home page."""

import streamlit as st

from explorer.ui import home_view, state

st.set_page_config(page_title="BPE Explorer", page_icon="🧩", layout="wide")
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
home_view.miniature()

st.subheader("Explore")
c1, c2 = st.columns(2)
with c1:
    st.page_link("pages/1_Corpus.py", label="**Corpus**: pick, upload or paste text; see its statistics and how pre-tokenizers cut it", icon="📚")
with c2:
    st.page_link("pages/2_Train.py", label="**Train**: step through the merges, watch the pair counts, words and compression", icon="▶️")
st.caption(
    f"The app opens on a bundled corpus ({state.corpus_choice().label()}) with the GPT-2 style preset; "
    "every preset reproduces one of the classic BPE notebooks merge for merge."
)
