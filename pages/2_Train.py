"""Train: step through BPE merges and watch the corpus change."""

import streamlit as st

from explorer.ui import settings, state, train_view

state.keep_widget_state()

st.title("Train, one merge at a time")
corpus = state.corpus_choice()
st.caption(f"Corpus: **{corpus.label()}** — choose another on the Corpus page.")

left, right = st.columns([3, 2])
with left:
    settings.preset_selector()
with right:
    settings.seed_replay_picker()
with st.expander("Advanced settings"):
    settings.advanced_form()

with st.spinner("Counting the corpus's words…"):
    live = state.live()
if live.error or live.trainer is None:
    st.error(live.error or "the trainer could not start")
    st.stop()

train_view.run_to_end(live)  # when "Run to end" was pressed: progress bar and Stop, then a rerun
train_view.live_area()
