"""The app's pages and navigation, declared once in :data:`PAGES`: the navigation, the
start-up warming (``startup``) and each page's prologue (:func:`page`) are derived from it. A new
page is its script in ``pages/`` plus one line here. ``app.py`` runs :func:`run_app`; every page
script starts with ``nav.page(__file__)``, which calls :func:`enter_page` first.

Why the second: a folder named ``pages/`` makes Streamlit start each server in its old
multipage mode, which it leaves only once ``st.navigation`` has run. When the first visitor of
a fresh server opens a page's URL directly (a shared link to ``/Train``), Streamlit runs that
page script alone, without ``app.py``: no page config, no navigation. ``enter_page`` notices and
runs the app around it instead.
"""

from __future__ import annotations

import importlib
import re
import threading
from pathlib import Path
from typing import NamedTuple

import streamlit as st

from . import links, projector, render, state

__all__ = ["PageSpec", "PAGES", "spec_of", "url_paths", "run_app", "enter_page", "page"]


class PageSpec(NamedTuple):
    """One page: its script (its file name is its URL's path after the digits: ``/Train``), how
    the navigation shows it, the module that draws it, and its prologue: whether its widgets keep
    their values across page switches, and whether it opens links (``apply``: the view's function
    that rebuilds its own part of a link; None: the corpus, training and step only)."""

    script: str
    title: str
    icon: str
    view: str  # the module under explorer.ui that draws the page: warmed at server start
    keeps_widgets: bool = True
    opens_links: bool = True
    apply: str | None = None


PAGES: tuple[PageSpec, ...] = (
    PageSpec("pages/0_Home.py", "Home", ":material/home:", "home_view", keeps_widgets=False, apply="apply_params"),
    PageSpec("pages/1_Corpus.py", "Corpus", ":material/menu_book:", "corpus_view", apply="apply_preview_params"),
    PageSpec("pages/2_Train.py", "Train", ":material/play_circle:", "train_view"),
    PageSpec("pages/3_Playground.py", "Playground", ":material/keyboard:", "playground_view", apply="apply_link"),
    PageSpec("pages/4_Compare.py", "Compare", ":material/compare_arrows:", "compare_view", apply="apply_link"),
    PageSpec("pages/5_Class.py", "Class", ":material/groups:", "class_view", opens_links=False),
    PageSpec("pages/6_Fairness.py", "Fairness", ":material/balance:", "fairness_view", apply="apply_link"),
    PageSpec("pages/7_Variants.py", "Variants", ":material/science:", "variants_view", apply="apply_link"),
)


def spec_of(script: str) -> PageSpec:
    """The registry's line of a page script (its path, or its file name).

    >>> spec_of("/srv/app/pages/2_Train.py").title
    'Train'
    """
    name = Path(script).name
    for spec in PAGES:
        if Path(spec.script).name == name:
            return spec
    raise LookupError(f"{name} is no page of the registry (explorer/ui/nav.py: PAGES)")


def url_paths() -> list[str]:
    """Each page's path in its URL, as Streamlit derives it from the script's name (the digits and
    separator before the name dropped).

    >>> url_paths()[:3]
    ['Home', 'Corpus', 'Train']
    """
    return [re.sub(r"^[0-9]*[_ -]*", "", Path(spec.script).stem) for spec in PAGES]


PAGE_ICON = "🧩"  # the tab's icon (an emoji: Streamlit checks it against its emoji catalogue)

_local = threading.local()  # each session's script runs in its own thread


def run_app() -> None:
    """Page config, the app-wide styles and navigation, then the page the URL asks for."""
    st.set_page_config(page_title="BPE Explorer", page_icon=PAGE_ICON, layout="wide")
    # the chips' and tables' styles, once per page run: a <style> inside every st.html that a
    # step redraws made the browser restyle the whole page several times per step
    st.html(render.APP_CSS)
    pages = [st.Page(p.script, title=p.title, icon=p.icon, default=p is PAGES[0]) for p in PAGES]
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


def page(script: str) -> None:
    """Every page script's first line, ``nav.page(__file__)``: the prologue its registry line
    says - the app around it (:func:`enter_page`), its widgets' values kept across page switches,
    and a shared link or a refresh rebuilt (the corpus, training and step, then the view's own
    part)."""
    spec = spec_of(script)
    enter_page()
    if spec.keeps_widgets:
        state.keep_widget_state()
    if spec.opens_links:
        view = importlib.import_module(f"{__package__}.{spec.view}")
        links.open_link(getattr(view, spec.apply) if spec.apply else None)
