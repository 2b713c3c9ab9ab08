"""Compare: corpora and languages side by side under one tokenizer configuration."""

import streamlit as st

from explorer.ui import compare_view as view
from explorer.ui import links, nav

nav.page(__file__)  # the prologue its line of nav.PAGES declares

st.title("Compare corpora and languages")
st.caption(
    "Train one configuration on each corpus (or take a production tokenizer): compression, how well each "
    "vocabulary travels, what the vocabularies share, and what each language pays in tokens."
)
request = view.request_form()
links.keep_current(view.link_params())
if request is None:
    view.idle_note()
    st.stop()
result = view.run(request)
if result is None:
    st.stop()
languages = view.language_table(result)
view.summary(result, languages)  # the answer first: each panel's headline number
# the panels in tabs; only the tab open is drawn (each holds Vega charts the browser would draw)
tabs = st.tabs(view.PANELS, key="w_cmp_tab", on_change="rerun")
draw = (
    lambda: view.languages_panel(result, request, languages),
    lambda: view.curves_panel(result, request),
    lambda: view.cross_panel(result),
    lambda: view.overlap_panel(result),
    lambda: view.lengths_panel(result),
    lambda: st.markdown(view.METRICS),
)
for tab, panel in zip(tabs, draw):
    if tab.open:
        with tab:
            panel()
