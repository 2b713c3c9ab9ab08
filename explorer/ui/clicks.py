"""Clicks that are never lost: quick clicks on a button each count.

Streamlit merges the reruns that a button's clicks ask for while a run is still going: five
quick clicks on Step can arrive as three. Here a small script in the page counts the clicks on
the buttons named, keeps the running totals, and sends them as one component's state (a newer
state replaces an older one, so a merged rerun still carries every click). The button's own
event is stopped, so its callback never fires in a browser. Where the script does not run
(AppTest) the component reports nothing and the buttons work as usual.

A widget that the clicks also move (a slider showing the step) needs a key of its own for each
value the page gives it (``moved_widget``): the clicks are counted in the script, after the
widgets' callbacks, and a quick click's rerun carries that widget as the browser still draws it,
a value behind; under an unchanged key its on_change would take that value for a move back.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["counted_clicks", "is_current", "moved_widget"]

# One listener per page load, installed on first mount; later mounts only hand it the newest
# setStateValue and the button keys. "nonce" tells one page load's totals from another's.
_JS = r"""
export default function (component) {
  const { setStateValue, data } = component;
  const shared = (window.__bpeClicks ??= { nonce: String(Math.random()).slice(2), counts: {}, keys: [] });
  shared.send = setStateValue;
  shared.keys = (data && data.keys) || [];
  if (shared.listening) return;
  shared.listening = true;
  window.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const button = target && target.closest("button");
    if (!button || button.disabled || !shared.keys.length) return;
    const key = shared.keys.find((k) => button.closest(".st-key-" + k));
    if (key === undefined) return;
    event.stopPropagation();
    event.preventDefault();
    shared.counts[key] = (shared.counts[key] || 0) + 1;
    shared.send("clicks", { nonce: shared.nonce, ...shared.counts });
  }, true);
}
"""

_counter = st.components.v2.component("bpe_explorer_click_counter", js=_JS)


def counted_clicks(keys: list[str], *, key: str) -> dict[str, int]:
    """Clicks on the buttons with these widget keys since the last call, by key (only keys
    clicked at least once): ``{"step": 5}`` after five quick clicks on Step."""
    result = _counter(key=key, data={"keys": keys}, default={"clicks": None}, on_clicks_change=_ignore, height=0)
    totals = result.clicks or {}
    seen_key = f"{key}:seen"
    seen = st.session_state.get(seen_key) or {}
    if totals.get("nonce") != seen.get("nonce"):
        seen = {}  # another page load: its totals start from zero
    st.session_state[seen_key] = totals
    new = {k: int(totals.get(k, 0)) - int(seen.get(k, 0)) for k in keys}
    return {k: n for k, n in new.items() if n > 0}


def _ignore() -> None:
    """The state change itself reruns the fragment; nothing to do before it."""


# A page-moved widget's keys: its name and a generation, "fair_slider_4", the generation kept
# under "fair_slider:gen"; a new generation (a new widget) each time the page sets the value.
def moved_widget(name: str, value: object) -> str:
    """The key under which to draw the widget ``name`` showing ``value``: the current key if the
    widget already shows it (the person moved it there), else a new key holding ``value``, so
    that a late value of the widget it replaces changes nothing (see :func:`is_current`).

    Three quick Steps from merge 14: the first run moves to 15 and draws "fair_slider_2" at 15;
    the second click's run still carries "fair_slider_1" at 14, which no longer moves anything,
    and its click makes 16 ("fair_slider_3")."""
    gen_key = f"{name}:gen"
    gen = int(st.session_state.get(gen_key, 0))
    key = f"{name}_{gen}"
    if key in st.session_state and st.session_state[key] == value:
        return key
    st.session_state.pop(key, None)
    st.session_state[gen_key] = gen + 1
    st.session_state[f"{name}_{gen + 1}"] = value
    return f"{name}_{gen + 1}"


def is_current(key: str) -> bool:
    """Whether ``key`` is the newest of its widget's keys; an on_change of an older one is the
    browser's late report of a widget the page has replaced, not a person's move."""
    name, _, gen = key.rpartition("_")
    return gen == str(st.session_state.get(f"{name}:gen", 0))
