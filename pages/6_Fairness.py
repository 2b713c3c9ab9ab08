"""Fairness lab: classical and parity-aware BPE side by side, merge by merge, on the same languages."""

import streamlit as st

from explorer.ui import fairness_view as view
from explorer.ui import links, nav

nav.page(__file__)  # the prologue its line of nav.PAGES declares

with st.sidebar:
    view.settings_form()
    with st.expander("Add a language of your own"):
        view.upload_form()

st.title("Fairness lab: who do the merges serve?")
st.caption(view.describe(view.current_request()))
lab = view.train(view.current_request())
if lab is None:
    links.keep_current(view.link_params())
    st.stop()
st.fragment(view.step_area)(lab)  # Step, +10, Back and the slider redraw only this part
