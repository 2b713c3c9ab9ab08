"""The app's pages and navigation. ``app.py`` runs :func:`run_app`; every page script starts
with :func:`enter_page`.

Why the second: a folder named ``pages/`` makes Streamlit start each server in its old
multipage mode, which it leaves only once ``st.navigation`` has run. When the first visitor of
a fresh server opens a page's URL directly (a shared link to ``/Train``), Streamlit runs that
page script alone, without ``app.py``: no page config, no navigation. ``enter_page`` notices and
runs the app around it instead.
"""

from __future__ import annotations

import threading

import streamlit as st

from . import projector, render

__all__ = ["run_app", "enter_page"]

_local = threading.local()  # each session's script runs in its own thread


def run_app() -> None:
    """Page config, the app-wide styles and navigation, then the page the URL asks for."""
    st.set_page_config(page_title="BPE Explorer", page_icon="🧩", layout="wide")
    # the chips' and tables' styles, once per page run: a <style> inside every st.html that a
    # step redraws made the browser restyle the whole page several times per step
    st.html(render.APP_CSS)
    pages = [
        st.Page("pages/0_Home.py", title="Home", icon=":material/home:", default=True),
        st.Page("pages/1_Corpus.py", title="Corpus", icon=":material/menu_book:"),
        st.Page("pages/2_Train.py", title="Train", icon=":material/play_circle:"),
        st.Page("pages/3_Playground.py", title="Playground", icon=":material/keyboard:"),
        st.Page("pages/4_Compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("pages/5_Class.py", title="Class", icon=":material/groups:"),
        st.Page("pages/6_Fairness.py", title="Fairness", icon=":material/balance:"),
        st.Page("pages/7_Variants.py", title="Variants", icon=":material/science:"),
    ]
    navigation = st.navigation(pages)
    projector.start()  # the sidebar's switch sits under the navigation on every page
    _local.inside = True
    try:
        navigation.run()
    finally:
        _local.inside = False
    projector.keep_in_link()  # a page that wrote its link whole (the Class page's room) left it out


def enter_page() -> None:
    """Call first in every page script: outside :func:`run_app`, run the app (which runs this
    page within it) and stop here."""
    if not getattr(_local, "inside", False):
        run_app()
        st.stop()
