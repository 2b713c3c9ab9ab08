"""Train: step through BPE merges and watch the corpus change."""

import streamlit as st

from explorer.ui import links, nav, render, settings, state, train_view

nav.page(__file__)  # the prologue its line of nav.PAGES declares
settings.sidebar()

preset, config = state.current_config()
st.title("Train, one merge at a time")
st.caption(
    render.md_text(
        f"{state.corpus_choice().shown_label()} · {preset or 'custom settings'} · {settings.size_label(config)}"
    )
    + " — change the settings in the sidebar, the corpus on the Corpus page."
)

pending = state.pending_step()
with st.spinner(f"Training to step {pending:,}…" if pending else "Counting the corpus's words…"):
    live = state.live()
if live.oversize is not None:
    links.keep_current()
    train_view.big_corpus_offer(live)
    st.stop()
if live.trainer is None and live.mode == "final":
    links.keep_current()
    train_view.final_run(live)  # trained in a worker: its progress, or why it stopped and a button to go again
    st.stop()
if live.error or live.trainer is None:
    links.keep_current()
    st.error(render.md_text(live.error or "the trainer could not start"))
    st.stop()
train_view.session_notes(live)

train_view.run_to_end(live)  # when "Run to end" was pressed: progress bar and Stop, then a rerun
train_view.live_area()
with st.sidebar:
    train_view.view_tools(live)
