"""Playground: encode any text with the session's tokenizer and the ones real models use."""

import streamlit as st

from explorer.ui import interop_view, links, nav
from explorer.ui import playground_view as view

nav.page(__file__)  # the prologue its line of nav.PAGES declares

st.title("Playground")
st.caption(
    "What each tokenizer makes of a text: the session's own (from the Train page) and GPT-2, cl100k_base "
    "(GPT-4) and o200k_base (GPT-4o). Hover a token for its id and bytes."
)
text = view.text_input()
choices = view.choose_tokenizers()
show_ws, allow_special = st.session_state[view.Keys.WHITESPACE], st.session_state.get(view.Keys.SPECIAL, False)

view_name = view.view_picker()
if view_name == "Char vs byte":
    view.char_byte_panel(text, show_ws=show_ws)
elif not choices:
    st.info("Pick at least one tokenizer above.")
elif view_name == "Why this split":
    view.why_panel(choices, text)
elif view_name == "Decode ids":
    view.decode_panel(choices, text)
else:
    encoded = view.compare_panel(choices, text, allow_special=allow_special, show_ws=show_ws)
    view.details_panel(encoded)
    view.dropout_panel(choices, text, show_ws=show_ws)
    view.shortest_panel(choices, text, show_ws=show_ws)
interop_view.import_area()
links.keep_current(view.link_params())  # last: the panels above settle what the view shows
