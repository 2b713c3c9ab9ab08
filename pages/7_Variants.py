"""Variants lab: classical BPE against SuperBPE and PickyBPE, scaffold tokens, and each tokenizer's token health."""

import streamlit as st

from explorer.ui import links, nav
from explorer.ui import variants_view as view
from explorer.ui.variants_model import TABS, Keys, describe_request

nav.page(__file__)  # the prologue its line of nav.PAGES declares

with st.sidebar:
    view.settings_form()

st.title("Variants lab: SuperBPE, PickyBPE, scaffold tokens, token health")
request = view.current_request()
left, right = st.columns(2, gap="large")
with left:
    view.transition_slider(request)
with right:
    view.tau_slider(request)
lab = view.train(request)
links.keep_current(view.link_params())
if lab is None:
    st.stop()
st.caption(describe_request(lab, request))
view.headline_view(lab)  # the answer first: cards, then the three on held-out text
# only the tab open is drawn: the scans and counts behind the others cost seconds the first time
tabs = st.tabs(TABS, key=Keys.TAB, on_change="rerun")
draw = (
    lambda: view.superwords_panel(lab),
    lambda: view.timeline_panel(lab),
    lambda: view.scaffold_panel(lab, request),
    lambda: view.health_panel(lab, request),
)
for tab, panel in zip(tabs, draw):
    if tab.open:
        with tab:
            panel()
