"""Follow a room without rerunning: a script in the page asks the server for the room's counters
every half second, and reruns the fragment it sits in only when the number it watches moved.

Why not a timed fragment: a fragment that reruns on a timer redraws all its elements on every
tick (what a run does not draw again is removed), ~20 ms of the server's interpreter per student
per tick: thirty idle students would take most of a core. Here an idle student costs one small
HTTP request (``/room-rev``, a single read of the store) per tick, and the fragment reruns only
when the teacher steps (``rev``) or, on the teacher's screen, when someone joins or answers
(``tally``).

    GET /room-rev?code=K7QX2M[&member=<id>]   ->   {"rev": 7, "tally": 31}   or 404 {"gone": true}

A member's request also marks it present (written at most every few seconds per member).
Where the script does not run (AppTest) the component reports nothing: a run shows the room as
it is then.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

__all__ = ["watch", "POLL_MS", "ROUTE"]

ROUTE = "/room-rev"
POLL_MS = 500

_JS = r"""
export default function (component) {
  const { setStateValue, data, parentElement } = component;
  const box = (parentElement.__roomPoll ??= {});
  box.send = setStateValue;
  box.data = data;
  if (box.seen === undefined || box.url !== data.url) { box.seen = data.now; box.url = data.url; }
  if (data.now !== undefined && data.now !== null && data.now > box.seen) box.seen = data.now;
  if (box.timer) return () => {};
  box.stopped = false;
  const tick = async () => {
    if (box.stopped) return;
    try {
      const r = await fetch(box.data.url, { cache: "no-store", credentials: "same-origin" });
      const j = await r.json();
      const value = r.ok ? j[box.data.watch] : -1;
      if (value !== box.seen) { box.seen = value; box.send("rev", value); }
    } catch (e) { /* the server restarting: ask again at the next tick */ }
    box.timer = setTimeout(tick, box.data.every);
  };
  box.timer = setTimeout(tick, data.every);
  return () => { box.stopped = true; clearTimeout(box.timer); box.timer = null; };
}
"""

_poller = st.components.v2.component("bpe_explorer_room_poll", js=_JS)


def watch(code: str, *, member: str | None = None, what: str = "rev", now: int, key: str) -> None:
    """Rerun the enclosing fragment when the room's ``what`` ("rev" or "tally") differs from
    ``now`` (the value this run drew); -1 when the room is gone."""
    url = f"{ROUTE}?" + urlencode({"code": code, **({"member": member} if member else {})})
    _poller(key=key, data={"url": url, "watch": what, "now": now, "every": POLL_MS}, default={"rev": None},
            on_rev_change=_ignore, height=0)


def _ignore() -> None:
    """The state change itself reruns the fragment; nothing to do before it."""
