"""Follow a room without rerunning: a script in the page asks the server for the room's counters
and reruns the fragment it sits in only when the number it watches moved.

Why not a timed fragment: a fragment that reruns on a timer redraws all its elements on every
tick (what a run does not draw again is removed), ~20 ms of the server's interpreter per student
per tick: thirty idle students would take most of a core. Here the page's script long-polls
``/room-rev``: the server answers at once when the number differs from the one the page has, and
otherwise holds the request until it moves (or ``LONG_POLL_S`` pass; a hidden tab's requests are
not held, so background tabs leave the browser's six connections to the visible one). The waiting requests cost
nothing but a slot on the server's event loop; one task per process reads the counters of the
rooms being waited on every ``CHECK_S`` and answers the requests whose number moved. So a
teacher's step reaches a student within about ``CHECK_S`` plus a rerun, and an idle class costs a
few reads a second. The step is watched on its own (``what=step``): a teacher's step bumps no
``rev``, so it reruns no student's page; a student's stepper (:mod:`explorer.ui.stepper`) polls
the step itself and moves to it in the browser::

    GET /room-rev?code=K7QX2M&member=<id>|follow=<token>[&what=rev|tally|step&seen=7]
        -> {"rev": 7, "tally": 31, "step": 12}   (at once, or when the watched number is no longer 7)
        -> 404 {"gone": true}             (no such room, it expired, or the member or token is not its)
        -> 429 {"error": ...}             (too many of those 404s from this address in the last minute)

A student's page names its member id, the teacher's page the room's follow token (derived from
the teacher's key, :func:`explorer.serving.rooms.follow_token`: it follows, it drives nothing).
Without one, or with a wrong one, the answer is exactly that of a room that does not exist (same
status, body and headers), so the route tells nobody which codes are rooms; and each such answer
counts against the client's address (``BPE_EXPLORER_ADDRESS_ROOM_MISSES`` a minute), so guessing
is slow too. A member's request also marks it present (written at most every few seconds per member).
Where the script does not run (AppTest) the component reports nothing: a run shows the room as
it is then.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from urllib.parse import urlencode

import streamlit as st

__all__ = ["watch", "Waiters", "ROUTE", "LONG_POLL_S", "CHECK_S", "WATCHED"]

ROUTE = "/room-rev"
# the longest a request is held: well under the 10 s a stopping server is given (a server waits
# for the requests it holds before it exits), and the proxy's 60 s server timeout
LONG_POLL_S = 5.0
CHECK_S = 0.1  # how often the waited-on rooms' counters are read
WATCHED = ("rev", "tally", "step")  # the counters a page can wait on, in the order the store reads them

_JS = r"""
export default function (component) {
  const { setStateValue, data, parentElement } = component;
  const box = (parentElement.__roomPoll ??= {});
  box.send = setStateValue;
  box.data = data;
  if (box.seen === undefined || box.url !== data.url) { box.seen = data.now; box.url = data.url; }
  if (data.now !== undefined && data.now !== null && data.now > box.seen) box.seen = data.now;
  const stop = () => {
    box.stopped = true; box.running = false; clearTimeout(box.timer);
    document.removeEventListener("visibilitychange", box.wake);
  };
  if (box.running) return stop;
  box.running = true;
  box.stopped = false;
  // A browser keeps six connections per server: a hidden tab asks without being held (every 2 s),
  // so that tabs in the background do not take the connections the visible one needs.
  const tick = async () => {
    if (box.stopped) return;
    box.timer = null;
    box.inflight = true;
    const hidden = document.visibilityState === "hidden";
    let pause = hidden ? 2000 : 0;
    try {
      const sep = box.data.url.includes("?") ? "&" : "?";
      const wait = hidden ? "" : `${sep}what=${box.data.watch}&seen=${box.seen}`;
      const r = await fetch(box.data.url + wait, { cache: "no-store", credentials: "same-origin" });
      const j = await r.json();
      const value = r.ok ? j[box.data.watch] : -1;
      if (!r.ok) pause = 2000;
      if (!box.stopped && value !== box.seen) { box.seen = value; box.send("rev", value); }
    } catch (e) { pause = 1000; /* the server restarting: ask again in a moment */ }
    box.inflight = false;
    if (!box.stopped) box.timer = setTimeout(tick, pause);
  };
  box.wake = () => {
    if (document.visibilityState === "visible" && box.timer && !box.inflight) { clearTimeout(box.timer); tick(); }
  };
  document.addEventListener("visibilitychange", box.wake);
  tick();
  return stop;
}
"""

_poller = st.components.v2.component("bpe_explorer_room_poll", js=_JS)


class Waiters:
    """Requests waiting for a room's counter to move, answered by one task per event loop that
    reads the counters (``read(codes) -> {code: (rev, tally, step) or None}``, run in a thread) every
    ``CHECK_S``; the task ends when nobody waits."""

    def __init__(self, read: Callable[[list[str]], dict[str, tuple[int, ...] | None]]):
        self.read = read
        self.waiting: dict[str, list[tuple[int, int, asyncio.Future]]] = {}
        self._task: asyncio.Task | None = None

    async def moved(self, code: str, what: str, seen: int, *, timeout: float = LONG_POLL_S) -> None:
        """Return when the room's ``what`` (one of :data:`WATCHED`) is no longer ``seen``, when
        the room is gone, or after ``timeout`` seconds."""
        loop = asyncio.get_running_loop()
        entry = (WATCHED.index(what), seen, loop.create_future())
        self.waiting.setdefault(code, []).append(entry)
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._check())
        try:
            await asyncio.wait_for(asyncio.shield(entry[2]), timeout)
        except TimeoutError:
            pass
        finally:
            left = [e for e in self.waiting.get(code, []) if e is not entry]
            if left:
                self.waiting[code] = left
            else:
                self.waiting.pop(code, None)

    async def _check(self) -> None:
        from starlette.concurrency import run_in_threadpool

        while self.waiting:
            await asyncio.sleep(CHECK_S)
            codes = list(self.waiting)
            try:
                now = await run_in_threadpool(self.read, codes)
            except Exception:  # noqa: BLE001 - the store unreachable for a moment: the requests time out
                continue
            for code in codes:
                revs = now.get(code)
                for index, seen, future in self.waiting.get(code, []):
                    if not future.done() and (revs is None or revs[index] != seen):
                        future.set_result(None)


def watch(
    code: str, *, member: str | None = None, token: str | None = None, what: str = "rev", now: int, key: str
) -> None:
    """Rerun the enclosing fragment when the room's ``what`` ("rev", "tally" or "step") differs from
    ``now`` (the value this run drew); -1 when the room is gone. ``member`` (a student) or
    ``token`` (the teacher's follow token) is what lets the page follow the room."""
    credential = {"member": member} if member else {"follow": token} if token else {}
    url = f"{ROUTE}?" + urlencode({"code": code, **credential})
    _poller(
        key=key, data={"url": url, "watch": what, "now": now}, default={"rev": None}, on_rev_change=_ignore, height=0
    )


def _ignore() -> None:
    """The state change itself reruns the fragment; nothing to do before it."""
