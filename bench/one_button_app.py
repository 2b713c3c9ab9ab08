"""The reference for bench/ui_latency.py: a one-button Streamlit app, served and clicked the same
way as the app in the same run, so that a Step's latency is read against what Streamlit itself
takes to answer a click on this machine (and its first page load against ours)."""

import streamlit as st

if st.button("Click", key="click"):
    st.session_state["clicks"] = st.session_state.get("clicks", 0) + 1
st.write(f"Clicked {st.session_state.get('clicks', 0)} times")
