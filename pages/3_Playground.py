"""Playground: encode any text with the session's tokenizer and the ones real models use."""

import streamlit as st

from explorer.ui import playground_view as view
from explorer.ui import interop_view, links, nav, state

nav.enter_page()
state.keep_widget_state()
links.open_link(view.apply_link)  # a shared link or a refresh: rebuild the view it names

st.title("Playground")
st.write("Type any text and see what each tokenizer makes of it: the session's own (trained on the Train page) "
         "and the tables of GPT-2, GPT-4 (cl100k_base) and GPT-4o (o200k_base). Hover a token for its id and bytes.")
text = view.text_input()
interop_view.import_area()
choices = view.choose_tokenizers()
c1, c2 = st.columns(2)
state.widget_default("w_play_ws", True)
show_ws = c1.toggle("Show whitespace (· space, ↵ newline, → tab)", key="w_play_ws")
allow_special = c2.toggle("Allow special tokens (e.g. <|endoftext|> as one id)", key="w_play_special",
                          help="Off: special-token text is encoded as plain text, as tiktoken's encode_ordinary does.")

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
    for choice in choices:
        view.encoded_panel(choice, text, allow_special=allow_special, show_ws=show_ws)
    view.dropout_panel(choices, text, show_ws=show_ws)
links.keep_current(view.link_params())  # last: the panels above settle what the view shows
