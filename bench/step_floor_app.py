"""The floor under a Step, for bench/ui_latency.py: a fragment that redraws the same kinds of
element the Train page's Step fragment redraws (the status and the slider side by side, the merge
sentence, and one component given ~24 KB of panel HTML), with no training and no rendering work.
What it costs per click, against the one-button app, is what Streamlit's elements alone cost."""

import streamlit as st

# ~24 KB, the size of the Train page's panels at a few steps in
_ROWS = "".join(f"<tr><td>{i}</td><td>{'token ' * 12}</td><td>{i * 7:,}</td></tr>" for i in range(230))
_panels = st.components.v2.component(
    "bpe_bench_floor_panels", js="export default function (c) { c.parentElement.innerHTML = c.data.html; }"
)


@st.fragment
def live_area() -> None:
    if st.button("Step", key="step", type="primary"):
        st.session_state["n"] = st.session_state.get("n", 0) + 1
    n = st.session_state.get("n", 0)
    left, right = st.columns([1, 1], vertical_alignment="center")
    left.markdown(f"Step **{n:,}** of {n:,} trained")
    right.slider("Step shown", 0, max(n, 1), n, key=f"shown_{n}", label_visibility="collapsed")
    st.markdown(f"Merge {n:,}: a pair of tokens became one")
    _panels(data={"html": f"<table><caption>step {n}</caption>{_ROWS}</table>"}, key="panels", height="content")


live_area()
