"""Corpus: choose the text to train on and see how it will be cut into pieces."""

import streamlit as st

from explorer.ui import corpus_view, links, nav

nav.page(__file__)  # the prologue its line of nav.PAGES declares

st.title("Corpus")
st.write("Pick bundled texts, upload your own or paste some. The Train page trains on exactly this.")
choice = corpus_view.choose()
corpus_view.forget_area()
texts = choice.texts()
if not any(t.strip() for t in texts):
    links.keep_current()
    st.warning("The corpus is empty: choose a bundled corpus, upload a file or paste some text.")
    st.stop()

st.subheader("At a glance")
corpus_view.stats(texts)

st.subheader("How pre-tokenization cuts it")
text = corpus_view.preview_text(choice)
corpus_view.preview(text)
with st.expander("All built-in pre-tokenizers side by side", expanded=True):
    corpus_view.compare_patterns(text)
links.keep_current(corpus_view.preview_params())

st.page_link("pages/2_Train.py", label="Train on this corpus", icon=":material/play_circle:")
