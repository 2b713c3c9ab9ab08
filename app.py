"""BPE Explorer: home page."""

import streamlit as st

from explorer import make_config, train

st.set_page_config(page_title="BPE Explorer", page_icon="🧩", layout="wide")
st.title("BPE Explorer")
st.write(
    "Byte-pair encoding starts from single characters (or bytes) and, again and again, merges the "
    "pair of neighbouring symbols that occurs most often into a new symbol. The list of merges *is* "
    "the tokenizer."
)
demo = train("aaabdaaabac", make_config("bytes", vocab_size=None, num_merges=4))
st.subheader('The classic example: "aaabdaaabac"')
for r in demo.records:
    st.write(f"Step {r.step}: merge `{r.left}` + `{r.right}` → `{r.token}` "
             f"({r.count} occurrences, {r.tokens_after} tokens left)")
