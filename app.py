"""BPE Explorer: the entry point (the Home page) and the navigation to the other pages."""

import streamlit as st

from explorer.ui import home_view, state


def home() -> None:
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
    c1, c2, c3 = st.columns(3)
    with c1:
        st.page_link(CORPUS, label="**Corpus**")
        st.caption("Pick, upload or paste text; see its statistics and how each pre-tokenizer cuts it.")
    with c2:
        st.page_link(TRAIN, label="**Train**")
        st.caption("Step through the merges; watch the pair counts, the words and the compression curve.")
    with c3:
        st.page_link(PLAYGROUND, label="**Playground**")
        st.caption("Encode any text with your tokenizer and with GPT-2, cl100k_base and o200k_base; "
                   "see why a word is split, a token's lineage, and char-level vs byte-level BPE.")
    st.caption(
        f"The app opens on a bundled corpus ({state.corpus_choice().label()}) with the GPT-2 style preset; "
        "every preset reproduces one of the classic BPE notebooks merge for merge."
    )


st.set_page_config(page_title="BPE Explorer", page_icon="🧩", layout="wide")
HOME = st.Page(home, title="Home", icon=":material/home:", default=True)
CORPUS = st.Page("pages/1_Corpus.py", title="Corpus", icon=":material/menu_book:")
TRAIN = st.Page("pages/2_Train.py", title="Train", icon=":material/play_circle:")
PLAYGROUND = st.Page("pages/3_Playground.py", title="Playground", icon=":material/keyboard:")
st.navigation([HOME, CORPUS, TRAIN, PLAYGROUND]).run()
