"""Classroom load test: one app server, many sessions stepping on the Train page at once.

    python bench/load.py           # 30 sessions, 60 s of a step a second, 2,000 merges, 3 bursts, 3 browsers
    python bench/load.py --sessions 3 --seconds 4 --merges 60 --bursts 1 --browsers 1   # smoke test
    python bench/load.py --write   # also store the printed lines in bench/RESULTS.md
    python bench/load.py --servers 2 --server-option runner.postScriptGC=false   # other setups
    python bench/load.py --servers 2 --proxy   # through `python -m explorer serve --servers 2`

One server (``streamlit run app.py``) on a free loopback port; ``--servers K`` starts K of them
and gives them the sessions in turn (what a multi-process setup behind a sticky balancer would
do), ``--server-option`` passes options to ``streamlit run``. ``--proxy`` runs the real thing
instead: the launcher ``python -m explorer serve --servers K`` (K servers behind haproxy) on a
free loopback port, and every session and browser connects to the proxy. A protocol session
then first loads its Train link over HTTP as a browser does, keeps haproxy's cookie from the
answer and sends it on its websocket's upgrade; the page, the websocket and every browser's
answers must come from the server the cookie names (an error otherwise). The report adds how the
sessions were spread over the servers, and memory and CPU count the servers and haproxy
together. What happens, in order:

1. The engine alone, in two worker processes before the server starts, trains every session's
   corpus and preset: the reference merge histories, and the step each training stops at.
2. ``--sessions`` protocol sessions connect at once. Each is one websocket on
   ``/_stcore/stream`` speaking Streamlit's own messages (``BackMsg`` out, ``ForwardMsg`` in),
   as the browser's frontend does, and opens ``/Train?corpus=...&preset=P&merges=M`` (its own
   corpus: tiny Shakespeare, 1.1 MB, plus one or two other bundled samples; presets in turn).
   Thirty such clients cost this process little CPU, where thirty browsers would take the two
   cores the server needs.
3. One session steps 5 times while the others wait: the unloaded step latency, and the
   server's CPU time per step.
4. Steady: for ``--seconds`` every session clicks Step once a second, the sessions' clicks
   spread evenly over each second; a tick that comes while the session's previous step is not
   shown yet is skipped (the student waits for the page), and counted. Alongside,
   ``--browsers`` headless Chromium contexts (Debian's chromium through Playwright, in a
   process of their own) open their own Train links and click Step once a second too.
5. ``--bursts`` times, all sessions click Step at the same moment (their messages all leave
   within a few milliseconds), with the server idle before each burst.
6. All sessions press "Run to end" together; done when the status line shows the last step
   and "training stopped".
7. Each session turns on "Full history" and reads the merges out of the table's Arrow data;
   they must equal the engine's alone for the session's corpus and preset, row for row
   (step, pair, new token, id, count, replaced, tokens after). A mismatch is a leak.

Definitions:

- A click is what a browser sends for it. The Train page counts Step clicks in the browser (a
  small component, ``explorer/ui/clicks.py``) and the button's own event never reaches the
  server: a click is a fragment rerun (``rerun_script`` with the live area's ``fragment_id``)
  carrying the counter's new running total as its JSON widget state. Other buttons (Run to
  end) send a trigger value. Widgets a session never touched are left out of its messages:
  the server keeps their last values, which are what a browser would send back.
- Step latency: from just before the click's message is written to the websocket until the
  arrival of the first ``script_finished`` (other than "finished early for a rerun") that
  follows a status line ``Step **K** of ...`` showing the step K the click should lead to.
  In Chromium: from calling click() until the status paragraph reads ``Step K of``.
- After each step the step shown must be the one expected (one more per click, counted from
  the session's own clicks); any other is an error, as are an exception or error box in any
  delta, a script that fails to compile, a dropped connection, a step not shown within 30 s,
  a traceback or an ERROR line in the server's log, and page errors in Chromium.
- Server RSS: the server process (and any children), sampled every 0.2 s with psutil; the
  baseline is taken before the first session connects. With ``--servers K`` all servers added
  up; with ``--proxy`` haproxy too (not the launcher, which only waits).

Bounded: every wait has a timeout, and a global ``--deadline`` ends the run (the server and the
browsers are stopped in any case); the exit status is 1 when there were errors or leaks or the
deadline passed, else 0 (targets missed are reported, not failed).

The Class page (``--class``): one teacher and a room of students::

    python bench/load.py --class --store sqlite   # or --store redis; --write stores the lines
    python bench/load.py --class --students 3 --steps 3 --browsers 1 --idle-seconds 3   # smoke test

``python -m explorer serve --servers 2`` runs with a fresh data folder (``BPE_EXPLORER_DATA``);
with ``--store redis`` also Debian's ``redis-server`` on a free loopback port, named to the servers
by ``BPE_EXPLORER_STORE``. The room (``english_frankenstein.txt``, gpt2, 1,000 merges) and its
members are made directly in the same store (``explorer.serving.rooms``). Then:

1. The teacher (``/Class?room=CODE&key=KEY``) and ``--students`` students
   (``/Class?room=CODE&member=ID``) open their pages at once as protocol sessions, each loading
   its page over HTTP first for haproxy's cookie; ``--browsers`` Chromium students open theirs.
   Each protocol page does what its poller's script does (``explorer/ui/follow.py``): it GETs
   ``/room-rev`` on one keep-alive connection with its cookie, naming the number it watches (a
   student: ``rev``; the teacher: ``tally``) and the one it has seen (the server holds the
   request until that number moves, up to 15 s), asks again at once, and when the answer differs
   from the number last seen or drawn, sends the component's state ``{"rev": value}`` as a rerun
   of the fragment the poller sits in. The Chromium pages run the script itself.
2. Follow: the teacher clicks Step ``--steps`` times, 2 s apart. A student's latency for step K:
   from just before the teacher's click is written to its websocket until the first delta of
   the student's page reading "following the teacher at step **K**" (Chromium: until the text
   shows). Target: p95 <= 1 s over every student and step.
3. Quiz: the teacher clicks "Ask: which pair merges next?"; when every student shows the
   question's options, the protocol students each click one (a button trigger in their
   fragment), all within 0.5 s. The store must then hold exactly one answer per student, each the
   option clicked; and from the last answer sent until the teacher's page shows "N answers in"
   (its poller watches ``tally``): target <= 1 s.
4. Idle: everyone stays in the room, polling, for ``--idle-seconds``: the CPU of both servers
   (with any children) and haproxy, as a fraction of one core: target < 20%. The servers alone,
   warmed up and with no page open, are measured before the pages open; redis-server is
   reported beside, not counted.

Errors: an exception or error box in any delta, a dropped connection, a poll answered other than
200 or by a server other than the page's, a step or question never shown, a traceback or ERROR
line in the servers' log, and page errors in Chromium; the exit status is 1 with any.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import itertools
import json
import multiprocessing
import os
import queue
import random
import re
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import psutil
from _common import CORPUS_NAME, ROOT, SAMPLES, Printer, fmt_s, write_section, yes_no

from explorer.serving.serve import COOKIE as PROXY_COOKIE
from explorer.serving.serve import SERVED_BY

sys.path.insert(0, str(ROOT / "tests"))
from appserver import CHROMIUM_ARGS, _free_port, app_process, chromium_path  # noqa: E402

PRESET_ORDER = ("hf-course", "sennrich", "bytes", "gpt2", "suffix-marker", "gpt4")
TARGET_STEADY_P95 = 1.0
TARGET_BURST_P95 = 3.0
TARGET_RSS_BYTES = 4 * 1024**3
STEP_TIMEOUT = 30.0
OPEN_TIMEOUT = 240.0
RUN_TIMEOUT = 300.0
HISTORY_TIMEOUT = 120.0
SOLO_STEPS = 5
BURST_SPREAD_LIMIT = 0.1
_STATUS = re.compile(r"^Step \*\*([\d,]+)\*\* of ([\d,]+) trained")
_FINISHED_EARLY = 2  # ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
_COMPILE_ERROR = 1  # FINISHED_WITH_COMPILE_ERROR
_CACHE_ENTRIES = 256  # ForwardMsgs a session keeps for the server to refer to
_HISTORY_COLUMNS = ["step", "left", "right", "new token", "id", "count", "replaced", "tokens after"]


# ---- what each session opens -------------------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    """One session's Train link: its corpus (bundled sample names) and preset."""

    index: int
    corpus: tuple[str, ...]
    preset: str
    merges: int

    @property
    def query(self) -> str:
        return f"corpus={','.join(self.corpus)}&preset={self.preset}&merges={self.merges}"

    @property
    def label(self) -> str:
        return f"{'+'.join(n.removesuffix('.txt') for n in self.corpus)} / {self.preset}"


def session_specs(count: int, merges: int, base: str = CORPUS_NAME) -> list[Spec]:
    """``base`` (Tiny Shakespeare by default) plus one other bundled sample, then plus two: every
    corpus differs (136 of them); presets in turn. Tiny Shakespeare is never an "other": a
    smaller base keeps every corpus small (a smoke run's)."""
    others = sorted(p.name for p in SAMPLES.glob("*.txt") if p.name not in (base, CORPUS_NAME))
    extras = itertools.chain(((o,) for o in others), itertools.combinations(others, 2))
    return [
        Spec(i, (base, *extra), PRESET_ORDER[i % len(PRESET_ORDER)], merges)
        for i, extra in zip(range(count), itertools.cycle(list(extras)))
    ]


def corpus_bytes(spec: Spec) -> int:
    return sum((SAMPLES / name).stat().st_size for name in spec.corpus)


# ---- the engine alone --------------------------------------------------------------------------
def reference(spec: Spec) -> dict:
    """Train the session's corpus and config with the engine alone, as the Train page builds its
    trainer (``explorer/ui/state.py``): the config the link gives (``links.parse_link``), the
    words ``count_words`` gives, ``Trainer(words, config, top_k=..., encoding=...)`` (how many
    steps keep their full records changes what a record holds, not the merges)."""
    from explorer import PRESETS, Trainer
    from explorer.formats.corpora import list_samples, read_sample
    from explorer.stages.pipeline import count_words
    from explorer.ui.links import parse_link
    from explorer.ui.render import style_of, token_text
    from explorer.ui.state import RECORDED_PAIRS

    link, problems = parse_link(
        {"corpus": ",".join(spec.corpus), "preset": spec.preset, "merges": str(spec.merges)},
        samples=[s.name for s in list_samples()],
    )
    if problems:
        raise ValueError(f"the session's link does not open as it is: {'; '.join(problems)}")
    words = count_words(tuple(read_sample(name) for name in link.corpus), link.config)
    trainer = Trainer(words, link.config, top_k=RECORDED_PAIRS, encoding=PRESETS[spec.preset].encoding).require_room()
    trainer.run()
    # the tokens as the page writes them (a byte-level token as the text its bytes spell)
    style = style_of(link.config.unit)
    rows = [
        (
            r.step,
            token_text(r.left, style),
            token_text(r.right, style),
            token_text(r.token, style),
            r.token_id,
            r.count,
            r.replaced,
            r.tokens_after,
        )
        for r in trainer.records
    ]
    return {"final": len(rows), "stop_reason": trainer.stop_reason, "rows": rows}


def _quiet_worker() -> None:
    """Importing the UI's cached functions outside a server makes Streamlit warn; not news here."""
    from streamlit.logger import set_log_level

    set_log_level("error")


def references(specs: list[Spec]) -> list[dict]:
    with multiprocessing.get_context("fork").Pool(min(2, os.cpu_count() or 1), initializer=_quiet_worker) as pool:
        return pool.map(reference, specs, chunksize=1)


# ---- the server's memory and CPU ---------------------------------------------------------------
class ServerMonitor:
    """Samples the servers' RSS (with any children, all servers and the proxy added up) every
    0.2 s in a thread; CPU on request."""

    def __init__(self, pids: list[int], proxy_pids: list[int] | None = None) -> None:
        self.procs = [psutil.Process(pid) for pid in pids]
        self.proxies = [psutil.Process(pid) for pid in proxy_pids or []]
        self.baseline = self._rss()
        self.peak = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def _tree(self, procs: list[psutil.Process] | None = None) -> list[psutil.Process]:
        out = []
        for proc in self.procs + self.proxies if procs is None else procs:
            try:
                out += [proc, *proc.children(recursive=True)]
            except psutil.Error:
                out.append(proc)
        return out

    def _rss(self) -> int:
        total = 0
        for p in self._tree():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self._rss())

    def cpu(self) -> tuple[float, float, float, float]:
        """(monotonic time, CPU seconds of the server trees and the proxy, CPU seconds of the
        servers' main threads: their event loops, which do the websocket I/O; script runs happen
        in threads that come and go; CPU seconds of the proxy alone)."""
        total, main, proxy = 0.0, 0.0, 0.0
        for p in self._tree():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        for p in self._tree(self.proxies):
            try:
                t = p.cpu_times()
                proxy += t.user + t.system
            except psutil.Error:
                pass
        for proc in self.procs:
            try:
                main += sum(t.user_time + t.system_time for t in proc.threads() if t.id == proc.pid)
            except psutil.Error:
                pass
        return time.monotonic(), total, main, proxy

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


@dataclass
class CpuSpan:
    """Server and client CPU seconds over one phase."""

    wall: float
    server: float  # the servers and the proxy
    server_main: float  # the servers' event-loop threads
    client: float
    proxy: float = 0.0  # the proxy alone

    def cores(self, seconds: float) -> float:
        return seconds / self.wall if self.wall > 0 else 0.0


def cpu_span(before, after, client_before: float, client_after: float) -> CpuSpan:
    (t0, c0, m0, p0), (t1, c1, m1, p1) = before, after
    return CpuSpan(t1 - t0, c1 - c0, m1 - m0, client_after - client_before, p1 - p0)


def client_cpu() -> float:
    t = psutil.Process().cpu_times()
    return t.user + t.system


# ---- a protocol session ------------------------------------------------------------------------
@dataclass
class Status:
    step: int
    trained: int
    stopped: bool
    text: str


@dataclass
class _Waiter:
    predicate: object  # callable(Session) -> bool
    future: asyncio.Future
    met: bool = False


class Session:
    """One browser tab's worth of Streamlit protocol over a websocket. ``sticky``: behind the
    launcher's proxy, the session first loads its page as a browser does, keeps the proxy's
    cookie (the server it was given) and sends it on the websocket's upgrade."""

    PAGE = "Train"  # the page the session's address names

    def __init__(self, spec: Spec, base_url: str, errors: list[str], *, sticky: bool = False) -> None:
        self.spec = spec
        self.base_url = base_url
        self.sticky = sticky
        self.server: str | None = None  # the proxy's cookie: the server this session was given
        self.ws_url = base_url.replace("http://", "ws://", 1) + "/_stcore/stream"
        self._errors = errors
        self.ws = None
        self.query = spec.query  # what the browser's address bar holds (the server rewrites it)
        self.page_hash = ""
        self.widget_ids: dict[str, str] = {}  # widget key -> element id
        self.fragments: dict[str, str] = {}  # widget key -> fragment id it was drawn in
        self.states: dict[str, object] = {}  # element id -> WidgetState this session keeps sending
        self.cache: dict[str, object] = {}  # ForwardMsg hash -> message (the frontend's message cache)
        self.status: Status | None = None
        self.dataframe: bytes | None = None
        self.dataframes = 0
        self.messages = 0
        self.refs = 0  # messages sent as a reference to one this session has cached
        self.bytes_in = 0
        self.expected = 0  # the step this session's own clicks should show
        self.clicks = 0  # the click counter's running total (Step)
        self.sent: dict[str, int] = {}  # Step clicks sent, by phase
        self.nonce = str(random.randrange(10**15, 10**16))
        self.latencies: dict[str, list[float]] = {}
        self.mismatches = 0
        self.closing = False
        self.dead = False  # the connection was lost: no more actions
        self._waiter: _Waiter | None = None
        self._reader: asyncio.Task | None = None
        self._auto_reruns: dict[str, asyncio.Task] = {}

    def error(self, what: str) -> None:
        self._errors.append(f"session {self.spec.index} ({self.spec.label}): {what}")

    # -- connection --
    def load_page(self, timeout: float = 60) -> str:
        """GET the Train link as a browser's address bar does; the proxy's cookie from the answer
        (the server that answered must be the one it names)."""
        import urllib.request

        with urllib.request.urlopen(f"{self.base_url}/{self.PAGE}?{self.spec.query}", timeout=timeout) as r:
            r.read()
            cookies = dict(
                c.split(";", 1)[0].strip().split("=", 1) for c in r.headers.get_all("Set-Cookie") or [] if "=" in c
            )
            served = r.headers.get(SERVED_BY)
        cookie = cookies.get(PROXY_COOKIE)
        if cookie is None:
            raise ConnectionError(f"the page's answer set no {PROXY_COOKIE} cookie (cookies: {sorted(cookies)})")
        if served != cookie:
            raise ConnectionError(f"the page came from {served}, its cookie names {cookie}")
        return cookie

    async def connect(self) -> None:
        from websockets.asyncio.client import connect

        host = self.base_url.split("://", 1)[1]
        headers = None
        if self.sticky:
            self.server = await asyncio.to_thread(self.load_page)
            headers = {"Cookie": f"{PROXY_COOKIE}={self.server}"}
        # no keepalive pings from this side (a browser sends none; a busy server would fail them);
        # no size limit (the full history's table is one message)
        self.ws = await connect(
            self.ws_url,
            subprotocols=["streamlit"],
            origin=f"http://{host}",
            additional_headers=headers,
            ping_interval=None,
            max_size=None,
            open_timeout=60,
        )
        if self.sticky and self.ws.response.headers.get(SERVED_BY) != self.server:
            self.error(f"the websocket reached {self.ws.response.headers.get(SERVED_BY)}, the page {self.server}")
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        self.closing = True
        for task in self._auto_reruns.values():
            task.cancel()
        if self.ws is not None:
            try:
                await asyncio.wait_for(self.ws.close(), 5)
            except Exception:  # noqa: BLE001 - closing after a failure
                pass
        if self._reader is not None:
            self._reader.cancel()

    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
        from websockets.exceptions import ConnectionClosed

        try:
            async for raw in self.ws:
                now = time.monotonic()
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                self.messages += 1
                self.bytes_in += len(raw)
                self._handle(msg, now)
        except ConnectionClosed as exc:
            if not self.closing:
                self.error(f"the connection closed: {exc}")
        except Exception as exc:  # noqa: BLE001 - reported, the session is dead
            self.error(f"reading failed: {exc!r}")
        finally:
            self.dead = True
            if self._waiter is not None and not self._waiter.future.done():
                self._waiter.future.set_exception(ConnectionError("the connection was lost"))

    # -- incoming --
    def _handle(self, msg, now: float) -> None:
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                self.error(f"a reference to a message not in the cache ({msg.ref_hash})")
                return
            msg, kind = cached, cached.WhichOneof("type")
            self.refs += 1
        elif msg.metadata.cacheable and msg.hash:
            self.cache[msg.hash] = msg
            if len(self.cache) > _CACHE_ENTRIES:  # the oldest goes (the server only refers to hashes we list)
                del self.cache[next(iter(self.cache))]
        if kind == "delta":
            self._delta(msg.delta, now)
        elif kind == "script_finished":
            status = msg.script_finished
            if status == _COMPILE_ERROR:
                self.error("the script failed to compile")
            waiter = self._waiter
            if status != _FINISHED_EARLY and waiter is not None and waiter.met and not waiter.future.done():
                waiter.future.set_result(now)
        elif kind == "new_session":
            if msg.new_session.page_script_hash and not self.page_hash:
                self.page_hash = msg.new_session.page_script_hash
            if not msg.metadata.run.fragment_ids:  # a full run: the frontend drops its timers
                self._stop_auto_reruns(list(self._auto_reruns))
        elif kind == "navigation":
            if msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            self._start_auto_rerun(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            self._stop_auto_reruns(list(msg.stop_auto_rerun.fragment_ids))
        elif kind == "session_event" and msg.session_event.HasField("script_compilation_exception"):
            self.error(f"script compilation exception: {msg.session_event.script_compilation_exception.message}")
        elif kind == "page_not_found":
            self.error("page not found")

    def _delta(self, delta, now: float = 0.0) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind is None:
            return
        body = getattr(element, kind)
        wid = getattr(body, "id", "")
        if isinstance(wid, str) and wid.startswith("$$ID-") and wid.count("-") >= 2:
            key = wid.split("-", 2)[2]
            self.widget_ids[key] = wid
            self.fragments[key] = delta.fragment_id
        if kind == "markdown":
            m = _STATUS.match(body.body)
            if m:
                self.status = Status(
                    int(m.group(1).replace(",", "")),
                    int(m.group(2).replace(",", "")),
                    "training stopped" in body.body,
                    body.body,
                )
        elif kind == "dataframe":
            self.dataframe = body.arrow_data.data
            self.dataframes += 1
        elif kind == "exception":
            self.error(f"exception box: {body.type}: {body.message[:200]}")
        elif kind == "alert" and body.format == 1:  # Alert.ERROR: st.error
            self.error(f"error box: {body.body[:200]}")
        self._element(kind, body, wid if isinstance(wid, str) else "", now)
        waiter = self._waiter
        if waiter is not None and not waiter.met and waiter.predicate(self):
            waiter.met = True

    def _element(self, kind: str, body, wid: str, now: float) -> None:
        """What a page of another kind reads from each new element (before any waiter is told)."""

    # -- auto reruns (a fragment's run_every: the frontend's timer, reproduced) --
    def _start_auto_rerun(self, fragment: str, interval: float) -> None:
        self._stop_auto_reruns([fragment])

        async def tick() -> None:
            while not self.dead:
                await asyncio.sleep(interval)
                try:
                    await self._send(self._rerun(fragment=fragment, auto=True))
                except Exception:  # noqa: BLE001 - the reader reports a lost connection
                    return

        self._auto_reruns[fragment] = asyncio.create_task(tick())

    def _stop_auto_reruns(self, fragments: list[str]) -> None:
        for fragment in fragments:
            task = self._auto_reruns.pop(fragment, None)
            if task is not None:
                task.cancel()

    # -- outgoing --
    def _rerun(self, *, fragment: str = "", triggers: tuple[str, ...] = (), auto: bool = False):
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        if self.page_hash:
            cs.page_script_hash = self.page_hash
        else:
            cs.page_name = self.PAGE  # the first run: the page named by the URL's path
        if fragment:
            cs.fragment_id = fragment
        cs.is_auto_rerun = auto
        for state in self.states.values():
            cs.widget_states.widgets.add().CopyFrom(state)
        for wid in triggers:
            w = cs.widget_states.widgets.add()
            w.id = wid
            w.trigger_value = True
        cs.cached_message_hashes.extend(self.cache)
        ci = cs.context_info
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.url, ci.is_embedded, ci.color_scheme = f"{self.base_url}/{self.PAGE}", False, "light"
        return msg

    async def _send(self, msg) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self.ws.send(msg.SerializeToString())
        except ConnectionClosed as exc:
            raise ConnectionError(f"the connection was closed: {exc}") from None

    def _state(self, key: str):
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid = self.widget_ids[key]
        state = self.states.get(wid)
        if state is None:
            state = self.states[wid] = WidgetState(id=wid)
        return state

    async def request(self, msg, predicate, timeout: float) -> float:
        """Send a message; return the seconds until ``predicate`` held after a delta and a
        script run then finished (TimeoutError / ConnectionError otherwise)."""
        loop = asyncio.get_running_loop()
        self._waiter = waiter = _Waiter(predicate, loop.create_future())
        t0 = time.monotonic()
        try:
            await self._send(msg)
            done_at = await asyncio.wait_for(waiter.future, timeout)
        finally:
            self._waiter = None
        return done_at - t0

    async def open(self, timeout: float) -> float:
        t0 = time.monotonic()
        await self.connect()
        await self.request(self._rerun(), lambda s: s.status is not None and "step" in s.widget_ids, timeout)
        return time.monotonic() - t0

    async def _act(self, what: str, message, predicate, timeout: float) -> float | None:
        """``request`` with its failures recorded as errors: None when the page lacks the widget,
        the answer did not come in time or the connection was lost."""
        if self.dead:
            return None
        try:
            return await self.request(message(), predicate, timeout)
        except KeyError as exc:
            self.error(f"{what}: no widget {exc} on the page")
        except TimeoutError:
            self.error(
                f"{what}: no answer within {timeout:.0f} s (status: {self.status.text if self.status else None})"
            )
        except ConnectionError as exc:
            self.error(f"{what}: {exc}")
        return None

    async def step(self, phase: str, timeout: float = STEP_TIMEOUT) -> float | None:
        """One click on Step, as a browser sends it; records the latency under ``phase`` and
        checks the step shown. None on failure (an error)."""
        self.clicks += 1
        self.sent[phase] = self.sent.get(phase, 0) + 1
        self.expected += 1
        want = self.expected

        def message():
            self._state("w_step_clicks").json_value = json.dumps(
                {"clicks": {"nonce": self.nonce, "step": self.clicks}}, separators=(",", ":")
            )
            return self._rerun(fragment=self.fragments["w_step_clicks"])

        latency = await self._act(
            f"{phase} step {want:,}", message, lambda s: s.status is not None and s.status.step >= want, timeout
        )
        if latency is None:
            return None
        if self.status.step != want:
            self.mismatches += 1
            self.error(f"{phase}: click {self.clicks} showed step {self.status.step:,}, expected {want:,}")
            self.expected = self.status.step
        self.latencies.setdefault(phase, []).append(latency)
        return latency

    async def run_to_end(self, final: int, timeout: float) -> float | None:
        """Press "Run to end"; the seconds until the status shows the last step and "training
        stopped"."""
        seconds = await self._act(
            "run to end",
            lambda: self._rerun(fragment=self.fragments["run"], triggers=(self.widget_ids["run"],)),
            lambda s: s.status is not None and s.status.stopped and s.status.step == s.status.trained,
            timeout,
        )
        if seconds is not None:
            if self.status.step != final:
                self.error(f"run to end stopped at step {self.status.step:,}; the engine alone stops at {final:,}")
            self.expected = self.status.step
        return seconds

    async def full_history(self, timeout: float) -> list[tuple] | None:
        """Turn "Full history" on; the merges in its table, oldest first."""
        import pyarrow as pa

        seen = self.dataframes

        def message():
            self._state("w_full_history").bool_value = True
            return self._rerun(fragment=self.fragments["w_full_history"])

        if await self._act("full history", message, lambda s: s.dataframes > seen, timeout) is None:
            return None
        table = pa.ipc.open_stream(self.dataframe).read_all()
        missing = [c for c in _HISTORY_COLUMNS if c not in table.column_names]
        if missing:
            self.error(f"full history: the table has no column(s) {missing} (has {table.column_names})")
            return None
        columns = [table.column(c).to_pylist() for c in _HISTORY_COLUMNS]
        return sorted(zip(*columns))


# ---- headless Chromium alongside (a process of its own) ----------------------------------------
_STATUS_JS = """(n) => [...document.querySelectorAll('p')].some(p => p.innerText.startsWith(`Step ${n.toLocaleString('en-US')} of`))"""
_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stSkeleton"]');
}"""


def browser_worker(urls: list[str], specs: list[Spec], results, go, go_at, seconds: int) -> None:
    """Open each spec's Train link in its own Chromium context; after ``go``, click Step once a
    second for ``seconds`` in every context, timing each click until the new step shows."""
    asyncio.run(_browsers(urls, specs, results, go, go_at, seconds))


async def _browsers(urls, specs, results, go, go_at, seconds) -> None:
    from playwright.async_api import async_playwright

    me = psutil.Process()

    def tree_cpu() -> float:
        total = 0.0
        for p in [me, *me.children(recursive=True)]:
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.Error:
                pass
        return total

    out = {"latencies": [], "errors": [], "clicks": 0, "steps": 0, "skipped": 0, "cpu": 0.0, "wall": 0.0, "servers": []}
    ready = False
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            pages = []
            served: dict[int, set] = {}  # behind the proxy: the servers that answered each context
            for spec in specs:
                context = await browser.new_context(viewport={"width": 1400, "height": 1000})
                page = await context.new_page()
                page.on("pageerror", lambda e, i=spec.index: out["errors"].append(f"browser {i}: page error: {e}"))
                page.on(
                    "response",
                    lambda r, i=spec.index: served.setdefault(i, set()).add(r.headers.get(SERVED_BY.lower())),
                )
                pages.append((spec, page))

            async def load(spec, page):
                await page.goto(f"{urls[spec.index % len(urls)]}/Train?{spec.query}")
                await page.wait_for_function(_STATUS_JS, arg=0, timeout=OPEN_TIMEOUT * 1000)
                await page.wait_for_function(_IDLE_JS, timeout=OPEN_TIMEOUT * 1000)

            await asyncio.gather(*(load(s, p) for s, p in pages))
            results.put(("ready", None))
            ready = True
            if not await asyncio.to_thread(go.wait, OPEN_TIMEOUT + 60):
                raise RuntimeError("never told to start")
            start = go_at.value
            cpu0, wall0 = tree_cpu(), time.monotonic()

            async def steady(n, spec, page):
                step = page.get_by_role("button", name="Step", exact=True)
                done = 0
                for tick in range(seconds):
                    at = start + n / len(pages) + tick
                    if time.monotonic() > at:
                        out["skipped"] += 1
                        continue
                    await asyncio.sleep(at - time.monotonic())
                    t0 = time.monotonic()
                    await step.click(timeout=STEP_TIMEOUT * 1000)
                    out["clicks"] += 1
                    try:
                        await page.wait_for_function(
                            _STATUS_JS, arg=done + 1, polling="raf", timeout=STEP_TIMEOUT * 1000
                        )
                    except Exception:  # noqa: BLE001 - a timeout, reported as an error
                        out["errors"].append(
                            f"browser {spec.index} ({spec.label}): step {done + 1} not shown within {STEP_TIMEOUT:.0f} s"
                        )
                        break
                    out["latencies"].append(time.monotonic() - t0)
                    done += 1
                await page.wait_for_function(_IDLE_JS, timeout=STEP_TIMEOUT * 1000)
                if await page.locator('[data-testid="stException"]').count():
                    out["errors"].append(f"browser {spec.index}: an exception box on the page")
                shown = await page.evaluate(
                    "() => ([...document.querySelectorAll('p')].find(p => /^Step [\\d,]+ of/.test(p.innerText)) || {}).innerText || ''"
                )
                m = re.match(r"Step ([\d,]+) of", shown)
                made = int(m.group(1).replace(",", "")) if m else -1
                out["steps"] += made
                if made != done:
                    out["errors"].append(
                        f"browser {spec.index} ({spec.label}): {done} steps clicked and seen, page shows {shown!r}"
                    )

            await asyncio.gather(*(steady(n, s, p) for n, (s, p) in enumerate(pages)))
            out["cpu"], out["wall"] = tree_cpu() - cpu0, time.monotonic() - wall0
            for spec, page in pages:  # the proxy's cookie, and every answer from the server it names
                cookie = next((c["value"] for c in await page.context.cookies() if c["name"] == PROXY_COOKIE), None)
                answered = served.get(spec.index, set()) - {None}
                if cookie is not None or answered:
                    out["servers"].append(cookie)
                    if answered != {cookie}:
                        out["errors"].append(f"browser {spec.index}: cookie {cookie}, answers from {sorted(answered)}")
            await browser.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out["errors"].append(f"browsers: {exc!r}"[:400])
        if not ready:
            results.put(("ready", None))  # unblock the parent waiting for the pages
    results.put(("done", out))


# ---- the run -----------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


def spread(values: list[float]) -> str:
    if not values:
        return "no samples"
    return f"p50 {fmt_s(pct(values, 0.5))}  p95 {fmt_s(pct(values, 0.95))}  max {fmt_s(max(values))}"


def per_server(cookies) -> str:
    counts = collections.Counter(c or "no cookie" for c in cookies)
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items())) or "none"


def mb(n: float) -> str:
    return f"{n / 1024**2:,.0f} MB"


@dataclass
class Results:
    errors: list[str] = field(default_factory=list)
    leaks: int = 0
    unchecked: int = 0  # sessions whose history could not be read (each also an error)
    deadline_hit: bool = False
    steady_p95: float = float("inf")
    burst_p95: float = float("inf")
    steady_steps: int = 0  # protocol and browser steps made in the steady phase
    solo_cpu: CpuSpan | None = None
    steady_cpu: CpuSpan | None = None
    browser_cores: float | None = None
    worker: multiprocessing.process.BaseProcess | None = None


async def queue_get(q, timeout: float):
    """The next item of a multiprocessing queue, polled so the event loop stays free (and no
    thread is left blocked in ``get`` when the run is cut short)."""
    import queue

    end = time.monotonic() + timeout
    while True:
        try:
            return q.get_nowait()
        except queue.Empty:
            if time.monotonic() > end:
                raise TimeoutError from None
            await asyncio.sleep(0.1)


async def run(args, out: Printer, res: Results, specs, refs, urls: list[str], monitor: ServerMonitor) -> None:
    sessions = [Session(spec, urls[spec.index % len(urls)], res.errors, sticky=args.proxy) for spec in specs]
    try:
        await _phases(args, out, res, specs, refs, urls, monitor, sessions)
    finally:
        await asyncio.gather(*(s.close() for s in sessions))


def time_left(deadline: float):
    """``left(limit)``: a wait's timeout, ``limit`` at most and never past the run's deadline (1 s at least)."""

    def left(limit: float) -> float:
        return max(1.0, min(limit, deadline - time.monotonic()))

    return left


def start_worker(res, ctx, target, args: tuple, name: str):
    """The browsers' process, started (and kept in ``res`` to be stopped at the end)."""
    worker = ctx.Process(target=target, args=args, name=name, daemon=True)
    worker.start()
    res.worker = worker
    return worker


async def open_all(sessions, timeout: float, what: str) -> list[float | None]:
    """Open every protocol page at once; each one's time to open, None (and its error) when it did not."""

    async def open_one(s) -> float | None:
        try:
            return await s.open(timeout)
        except Exception as exc:  # noqa: BLE001 - counted as an error
            s.error(f"could not open {what}: {exc!r}")
            return None

    return await asyncio.gather(*(open_one(s) for s in sessions))


async def _phases(
    args, out: Printer, res: Results, specs, refs, urls: list[str], monitor: ServerMonitor, sessions
) -> None:
    errors = res.errors
    left = time_left(args._deadline)

    # browsers: their own process, loading their pages while the protocol sessions open
    browser_specs = session_specs(len(specs) + args.browsers, args.merges, specs[0].corpus[0])[len(specs) :]
    worker = results_q = go = go_at = None
    if args.browsers:
        ctx = multiprocessing.get_context("spawn")
        results_q, go, go_at = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
        worker = start_worker(
            res, ctx, browser_worker, (urls, browser_specs, results_q, go, go_at, args.seconds), "load-browsers"
        )

    # 2. open every session at once
    opened = await open_all(sessions, left(OPEN_TIMEOUT), "the Train link")
    live = [s for s, t in zip(sessions, opened) if t is not None]
    bad_start = [s for s in live if s.status.step != 0]
    for s in bad_start:
        s.error(f"opened at step {s.status.step}, not 0")
    out(
        f"open: {len(live)} of {len(sessions)} sessions opened their Train link at once: "
        f"{spread([t for t in opened if t is not None])}  (RSS now {mb(monitor._rss())})"
    )
    if args.proxy:
        out(f"proxy: protocol sessions per server (haproxy's cookie): {per_server(s.server for s in sessions)}")
    if not live:
        return

    if worker is not None:  # the browsers' pages loaded too, before anything is timed
        try:
            await queue_get(results_q, left(OPEN_TIMEOUT + 60))
        except TimeoutError:
            errors.append("browsers: their pages did not load in time")

    # 3. one session alone
    c0, k0 = monitor.cpu(), client_cpu()
    for _ in range(SOLO_STEPS):
        await live[0].step("solo")
    solo = cpu_span(c0, monitor.cpu(), k0, client_cpu())
    solo_lat = live[0].latencies.get("solo", [])
    out(
        f"solo: one session stepping while the others wait: {spread(solo_lat)}; server CPU "
        f"{fmt_s(solo.server / max(1, len(solo_lat)))} per step"
    )

    # 4. steady, with the browsers alongside
    start = time.monotonic() + 1.0
    if worker is not None:
        go_at.value = start
        go.set()
    skipped = 0

    async def steady(n: int, s: Session) -> None:
        nonlocal skipped
        for tick in range(args.seconds):
            at = start + n / len(live) + tick
            if time.monotonic() > at:
                skipped += 1
                continue
            await asyncio.sleep(at - time.monotonic())
            if time.monotonic() > args._deadline or await s.step("steady", left(STEP_TIMEOUT)) is None:
                return

    await asyncio.sleep(max(0.0, start - time.monotonic() - 0.05))
    c0, k0 = monitor.cpu(), client_cpu()
    before = {id(s): s.status.step for s in live}
    await asyncio.gather(*(steady(n, s) for n, s in enumerate(live)))
    steady_cpu = cpu_span(c0, monitor.cpu(), k0, client_cpu())
    lat = [x for s in live for x in s.latencies.get("steady", [])]
    clicks = sum(s.sent.get("steady", 0) for s in live)
    shown = sum(s.status.step - before[id(s)] for s in live)
    out(
        f"steady {args.seconds} s: {len(live)} sessions each clicking Step once a second: {len(lat):,} steps "
        f"({len(lat) / steady_cpu.wall:.1f} a second), latency {spread(lat)}"
    )
    out(
        f"steady: steps shown {shown:,} of {clicks:,} clicked (wrong step shown: {sum(s.mismatches for s in live)}); "
        f"ticks skipped while a step was in flight: {skipped:,} of {len(live) * args.seconds:,}"
    )
    res.steady_p95 = pct(lat, 0.95) if lat else float("inf")
    res.steady_steps += len(lat)
    res.solo_cpu, res.steady_cpu = solo, steady_cpu

    browser_out = None
    if worker is not None:
        try:
            until = time.monotonic() + STEP_TIMEOUT * 2 + 30
            kind = None
            while kind != "done":  # a "ready" that came after its wait timed out may be first
                kind, browser_out = await queue_get(results_q, left(until - time.monotonic()))
        except TimeoutError:
            errors.append("browsers: no results in time")
    if browser_out is not None:
        errors.extend(browser_out["errors"])
        b = browser_out
        out(
            f"browsers: {args.browsers} Chromium context(s) alongside, clicking Step once a second: {len(b['latencies'])} "
            f"steps, click to new step shown {spread(b['latencies'])}; steps shown {b['steps']} of {b['clicks']} clicked, "
            f"ticks skipped {b['skipped']}, page errors and exception boxes {len(b['errors'])}"
        )
        res.browser_cores = b["cpu"] / b["wall"] if b["wall"] else 0.0
        if args.proxy:
            out(f"proxy: browser contexts per server (haproxy's cookie): {per_server(b['servers'])}")
        res.steady_steps += len(b["latencies"])

    # 5. bursts
    burst_lat, spreads = [], []
    c0 = monitor.cpu()
    for _ in range(args.bursts):
        await asyncio.sleep(2.0)
        if time.monotonic() > args._deadline - STEP_TIMEOUT:
            break
        at = time.monotonic() + 0.5
        sent: list[float] = []

        async def burst(s: Session) -> None:
            await asyncio.sleep(at - time.monotonic())
            sent.append(time.monotonic())
            latency = await s.step("burst", left(STEP_TIMEOUT))
            if latency is not None:
                burst_lat.append(latency)

        await asyncio.gather(*(burst(s) for s in live))
        spreads.append(max(sent) - min(sent))
    if args.bursts:
        burst_cpu = cpu_span(c0, monitor.cpu(), 0.0, 0.0)
        out(
            f"burst x{len(spreads)}: all {len(live)} sessions click Step together (sent within "
            f"{fmt_s(max(spreads, default=0))}): latency {spread(burst_lat)}; server CPU "
            f"{fmt_s(burst_cpu.server / max(1, len(burst_lat)))} per step"
        )
        if max(spreads, default=0) > BURST_SPREAD_LIMIT:
            out(
                f"burst: WARNING this load generator was slow: a burst's clicks left over {fmt_s(max(spreads))}, "
                "not within 100 ms"
            )
    res.burst_p95 = pct(burst_lat, 0.95) if burst_lat else (float("inf") if args.bursts else 0.0)

    # 6. run to end, all together but a tenth of the sessions, which keep stepping once a second
    #    beside the others' heavy training (it takes turns in the app's heavy lane; a Step does not)
    c0 = monitor.cpu()

    async def to_end(s: Session) -> float | None:
        return await s.run_to_end(refs[s.spec.index]["final"], left(RUN_TIMEOUT))

    n_beside = len(live) // 10
    runners, steppers = live[: len(live) - n_beside], live[len(live) - n_beside :]
    running = True

    async def step_beside(s: Session) -> None:
        while running and time.monotonic() < args._deadline - STEP_TIMEOUT:
            t0 = time.monotonic()
            if await s.step("beside", left(STEP_TIMEOUT)) is None:
                return
            await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))

    beside_tasks = [asyncio.create_task(step_beside(s)) for s in steppers]
    ends = list(await asyncio.gather(*(to_end(s) for s in runners)))
    run_cpu = cpu_span(c0, monitor.cpu(), 0.0, 0.0)
    running = False
    await asyncio.gather(*beside_tasks)
    ends += await asyncio.gather(*(to_end(s) for s in steppers))
    done = [t for t in ends if t is not None]
    out(
        f"run to end: {len(runners)} sessions pressed Run to end together; {sum(1 for t in ends[: len(runners)] if t is not None)} "
        f"reached their last step (status 'training stopped'): {spread([t for t in ends[: len(runners)] if t is not None])}; "
        f"server CPU {fmt_s(run_cpu.server)} over {fmt_s(run_cpu.wall)}"
    )
    if steppers:
        beside = [x for s in steppers for x in s.latencies.get("beside", [])]
        out(
            f"beside the runs: {len(steppers)} other sessions clicking Step once a second meanwhile: {len(beside):,} "
            f"steps, latency {spread(beside)}; then they ran to the end too ({len(done)} of {len(live)} in all)"
        )

    # 7. every session's history against the engine alone
    histories = await asyncio.gather(*(s.full_history(left(HISTORY_TIMEOUT)) for s in live))
    leaks = []
    by_rows = {tuple(r["rows"]): i for i, r in enumerate(refs)}
    for s, rows in zip(live, histories):
        ref = refs[s.spec.index]["rows"]
        if rows is None or rows == ref:
            continue
        other = by_rows.get(tuple(rows))
        first = next((i for i, (a, b) in enumerate(zip(rows, ref)) if a != b), min(len(rows), len(ref)))
        where = (
            f"it is session {other}'s ({specs[other].label})"
            if other is not None
            else f"first difference at row {first + 1}: {rows[first] if first < len(rows) else 'none'}, the engine's "
            f"{ref[first] if first < len(ref) else 'none'}"
        )
        leaks.append(
            f"session {s.spec.index} ({s.spec.label}): {len(rows):,} merges, the engine alone {len(ref):,}; {where}"
        )
    checked = sum(1 for r in histories if r is not None)
    res.leaks, res.unchecked = len(leaks), len(sessions) - checked
    out(
        f"history: {checked} of {len(sessions)} sessions' full history read from the page; identical to the engine "
        f"alone on their corpus and preset: {checked - len(leaks)}; leaks {len(leaks)}"
    )
    for line in leaks[:5]:
        out(f"    leak: {line}")

    mb_in = sum(s.bytes_in for s in sessions)
    out(
        f"traffic: {sum(s.messages for s in sessions):,} messages to the protocol sessions ({mb(mb_in)}; "
        f"{sum(s.refs for s in sessions):,} of them references to cached ones)"
    )


@contextlib.contextmanager
def launcher(servers: int, log, errors: list[str], timeout: float = 180.0, env: dict[str, str] | None = None):
    """``python -m explorer serve --servers K`` on a free loopback port: yields the proxy's URL
    and the launcher's children (the servers and haproxy); after, SIGTERM to the launcher, and
    any child still running then is an error. ``env``: the launcher's environment (the servers
    inherit it), this process's by default."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "serve", "--servers", str(servers), "--port", str(port)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
    )
    children: list[psutil.Process] = []
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            line = proc.stdout.readline() if sel.select(timeout) else ""
        m = re.search(r"http://\S+", line)
        if m is None:
            raise RuntimeError(
                f"python -m explorer serve printed no URL within {timeout:.0f} s "
                f"(exit status {proc.poll()}; its stderr is in the server log)"
            )
        children = psutil.Process(proc.pid).children(recursive=True)
        yield m.group(0), children
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            errors.append("python -m explorer serve did not stop within 60 s of SIGTERM")
            proc.kill()
            proc.wait(timeout=10)
        left = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        if left:
            errors.append(f"after the launcher stopped, still running: {', '.join(c.name() for c in left)}")
            for c in left:
                with contextlib.suppress(psutil.Error):
                    c.kill()


# ---- the Class page: one teacher, a room of students (--class) ---------------------------------
CLASS_VIEW = {"corpus": "english_frankenstein.txt", "preset": "gpt2", "merges": "1000"}
TARGET_FOLLOW_P95 = 1.0  # a student sees the teacher's step
TARGET_TALLY = 1.0  # the teacher's tally shows the last answer
TARGET_IDLE_CORES = 0.20  # servers + haproxy while a room sits idle, in cores
STEP_GAP = 2.0  # seconds between the teacher's steps
FOLLOW_TIMEOUT = 15.0  # a student not showing a step (or the question) by then is an error
POLL_TIMEOUT = 40.0  # one /room-rev request (the server holds one up to follow.LONG_POLL_S; haproxy gives up at 60 s)
ANSWER_SPREAD = 0.5  # the answers leave over this many seconds
_FOLLOWING = re.compile(r"following the teacher at step \*\*([\d,]+)\*\*")
_TEACHER_STATUS = re.compile(r"^Step \*\*([\d,]+)\*\* \S (\d+) joined, (\d+) present")
_TALLY = re.compile(r"<b>(\d+)</b> answers in / <b>(\d+)</b> students present")
_QUESTION = re.compile(r"^\*\*Question (\d+):\*\*")
_OPTION_KEY = re.compile(r"^class_opt_(\d+)_(\d+)$")
_YOUR_ANSWER = "Your answer: "


@dataclass(frozen=True)
class ClassSpec:
    """A page of the room: the teacher's (``room=...&key=...``) or a student's (``member=...``)."""

    index: int
    query: str
    label: str


class Http:
    """What a browser's ``fetch`` does for the poller: GETs on one keep-alive HTTP/1.1
    connection, with the proxy's cookie; a connection the other side closed is opened again once
    (but never for a request that got no answer on a fresh connection)."""

    def __init__(self, base_url: str, cookie: str | None = None) -> None:
        self.where = base_url.split("://", 1)[1].rstrip("/")
        host, port = self.where.rsplit(":", 1)
        self.host, self.port = host, int(port)
        self.cookie = cookie
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        for attempt in range(2):
            fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            try:
                cookie = f"Cookie: {PROXY_COOKIE}={self.cookie}\r\n" if self.cookie else ""
                self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.where}\r\nAccept: */*\r\n{cookie}\r\n".encode())
                await self.writer.drain()
                line = await self.reader.readline()
                if not line:
                    raise ConnectionResetError("the connection was closed")
                status = int(line.split()[1])
                headers: dict[str, str] = {}
                while (h := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = h.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                if "content-length" in headers:
                    body = await self.reader.readexactly(int(headers["content-length"]))
                elif headers.get("transfer-encoding", "").lower() == "chunked":
                    body = b""
                    while size := int((await self.reader.readline()).split(b";")[0], 16):
                        body += await self.reader.readexactly(size)
                        await self.reader.readline()
                    await self.reader.readline()
                else:
                    body = await self.reader.read()
                    headers["connection"] = "close"
                if headers.get("connection", "").lower() == "close":
                    self.close()
                return status, headers, body
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                self.close()
                if fresh or attempt:
                    raise
        raise AssertionError("unreachable")


class ClassSession(Session):
    """A teacher's or a student's Class page over the protocol, with the page's poller
    (``explorer/ui/follow.py``) done as its script does it: GET the poller's ``/room-rev`` URL
    with the number it watches and the one seen (through the proxy, with the session's cookie;
    the server holds the request until the number moves, up to 15 s), and ask again; when the
    answer differs from the number last seen (or drawn: the component's ``now``), send the
    component's new state ``{"rev": value}`` as a rerun of the fragment it sits in."""

    PAGE = "Class"

    def __init__(
        self, spec: ClassSpec, base_url: str, errors: list[str], *, sticky: bool, teacher: bool = False
    ) -> None:
        super().__init__(spec, base_url, errors, sticky=sticky)
        self.teacher = teacher
        self.watch_key = "class_watch_tally" if teacher else "class_watch_rev"
        self.room_step: int | None = None  # the step the page shows
        self.step_at: dict[int, float] = {}  # step -> when a delta first showed it
        self.joined = self.present = None  # the teacher's status line
        self.tally: tuple[int, int] | None = None  # the teacher's (answers in, students present)
        self.tally_at: dict[int, float] = {}  # answers in -> when the tally first showed it
        self.tallies = 0  # tallies drawn
        self.qid: int | None = None  # the question the page shows
        self.options: dict[int, dict[int, str]] = {}  # qid -> option index -> widget key
        self.options_at: dict[int, float] = {}  # qid -> when its first option arrived
        self.your_answer: str | None = None  # a student's "Your answer: ..." caption
        self.watch: dict | None = None  # the poller's data as the page last drew it
        self.seen = None  # the number the poller last saw (its script's box.seen)
        self.polls = 0
        self.poll_reruns = 0
        self.http: Http | None = None
        self._poller: asyncio.Task | None = None

    def _element(self, kind: str, body, wid: str, now: float) -> None:
        if kind == "markdown":
            text = body.body
            if self.teacher:
                m = _TEACHER_STATUS.match(text)
                if m:
                    self.room_step = int(m.group(1).replace(",", ""))
                    self.joined, self.present = int(m.group(2)), int(m.group(3))
                    self.step_at.setdefault(self.room_step, now)
            else:
                m = _FOLLOWING.search(text)
                if m:
                    self.room_step = int(m.group(1).replace(",", ""))
                    self.step_at.setdefault(self.room_step, now)
                elif text.startswith(_YOUR_ANSWER):
                    self.your_answer = text
            m = _QUESTION.match(text)
            if m:
                self.qid = int(m.group(1))
        elif kind == "html":
            m = _TALLY.search(body.body)
            if m:
                self.tally = (int(m.group(1)), int(m.group(2)))
                self.tally_at.setdefault(self.tally[0], now)
                self.tallies += 1
        elif kind == "bidi_component" and wid.endswith("-" + self.watch_key):
            data = json.loads(body.json)
            # as the script: the number drawn is the one seen, unless a newer one was seen already
            if self.watch is None or self.watch.get("url") != data.get("url"):
                self.seen = data.get("now")
            elif data.get("now") is not None and self.seen is not None and data["now"] > self.seen:
                self.seen = data["now"]
            self.watch = data
            if self._poller is None and not self.closing:
                self._poller = asyncio.get_running_loop().create_task(self._poll())
        if wid:
            m = _OPTION_KEY.match(wid.split("-", 2)[-1])
            if m:
                self.options.setdefault(int(m.group(1)), {})[int(m.group(2))] = wid.split("-", 2)[-1]
                self.options_at.setdefault(int(m.group(1)), now)

    async def _poll(self) -> None:
        try:
            await self._poll_loop()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a poller that stops is an error
            self.error(f"the poller stopped: {exc!r}")

    async def _poll_loop(self) -> None:
        """The script's loop: ask with the number seen (``what``, ``seen``: the server holds the
        request until the number moves); ask again at once after an answer, after 2 s after an
        error answer, after 1 s after a failed request. (A poller whose data has ``every`` asks
        that often instead, its first time after ``every`` too.)"""
        self.http = Http(self.base_url, self.server)
        pause = self.watch.get("every", 0) / 1000
        while not (self.closing or self.dead):
            if pause:
                await asyncio.sleep(pause)
            if self.closing or self.dead:
                return
            data = self.watch
            pause = data.get("every", 0) / 1000
            path = (
                f"{data['url']}{'&' if '?' in data['url'] else '?'}what={data['watch']}"
                f"&seen={'null' if self.seen is None else self.seen}"
            )
            try:
                status, headers, body = await asyncio.wait_for(self.http.get(path), POLL_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 - the script asks again; here it is an error
                self.http.close()
                pause = max(pause, 1.0)
                if not (self.closing or self.dead):
                    self.error(f"GET {path} failed: {exc!r}")
                continue
            self.polls += 1
            if self.sticky and headers.get(SERVED_BY.lower()) != self.server:
                self.error(
                    f"GET {path} answered by {headers.get(SERVED_BY.lower())}, the page's server is {self.server}"
                )
            if status != 200:
                pause = max(pause, 2.0)
                self.error(f"GET {path} answered {status}: {body[:120]!r}")
            try:
                value = json.loads(body)[data["watch"]] if status == 200 else -1
            except (ValueError, KeyError, TypeError):
                pause = max(pause, 1.0)
                continue
            if value != self.seen and not (self.closing or self.dead):
                self.seen = value
                self.poll_reruns += 1
                try:
                    self._state(self.watch_key).json_value = json.dumps({"rev": value}, separators=(",", ":"))
                    await self._send(self._rerun(fragment=self.fragments.get(self.watch_key, "")))
                except ConnectionError:
                    return

    async def close(self) -> None:
        self.closing = True
        if self._poller is not None:
            self._poller.cancel()
        if self.http is not None:
            self.http.close()
        await super().close()

    async def open(self, timeout: float) -> float:
        t0 = time.monotonic()
        await self.connect()
        if self.teacher:
            ready = lambda s: s.room_step is not None and "class_step" in s.widget_ids and s.watch is not None  # noqa: E731
        else:
            ready = lambda s: s.room_step is not None and s.watch is not None  # noqa: E731
        await self.request(self._rerun(), ready, timeout)
        if not self.fragments.get(self.watch_key):
            self.error(
                f"the poller {self.watch_key} is drawn outside a fragment: its change would rerun the whole page"
            )
        return time.monotonic() - t0

    async def click(self, key: str, predicate, timeout: float) -> float | None:
        """A button's trigger, in the fragment the button sits in (if any)."""
        return await self._act(
            f"click {key}",
            lambda: self._rerun(fragment=self.fragments.get(key, ""), triggers=(self.widget_ids[key],)),
            predicate,
            timeout,
        )


def class_browser_worker(url: str, paths: list[str], results, stop, steps: int, first: int) -> None:
    """Open each student's Class page in its own Chromium context and note when each step the
    teacher makes (``first`` + 1 ... ``first`` + ``steps``) shows, then when a question's options
    show; the pages follow by their own script. Then sit idle until ``stop``."""
    asyncio.run(_class_browsers(url, paths, results, stop, steps, first))


_FOLLOW_JS = """(n) => [...document.querySelectorAll('p')].some(p => {
    const m = /following the teacher at step ([\\d,]+)/.exec(p.innerText);
    return m !== null && Number(m[1].replace(/,/g, '')) >= n;
})"""


async def _class_browsers(url, paths, results, stop, steps, first) -> None:
    from playwright.async_api import async_playwright

    out = {"shown": [], "options": [], "polls": [], "errors": [], "servers": []}
    ready = False
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            pages, served = [], {}
            for i in range(len(paths)):
                context = await browser.new_context(viewport={"width": 1400, "height": 1000})
                page = await context.new_page()
                page.on("pageerror", lambda e, i=i: out["errors"].append(f"browser {i}: page error: {e}"))
                page.on("response", lambda r, i=i: served.setdefault(i, set()).add(r.headers.get(SERVED_BY.lower())))
                polls: list[float] = []
                page.on(
                    "request", lambda r, polls=polls: polls.append(time.monotonic()) if "/room-rev" in r.url else None
                )
                out["polls"].append(polls)
                out["shown"].append({})
                out["options"].append(None)
                pages.append(page)

            async def load(page):
                await page.goto(url + path_of[page])
                await page.wait_for_function(_FOLLOW_JS, arg=first, timeout=OPEN_TIMEOUT * 1000)
                await page.wait_for_function(_IDLE_JS, timeout=OPEN_TIMEOUT * 1000)

            path_of = dict(zip(pages, paths))
            await asyncio.gather(*(load(p) for p in pages))
            results.put(("ready", None))
            ready = True

            async def follow(i, page):
                for k in range(first + 1, first + steps + 1):
                    try:
                        await page.wait_for_function(
                            _FOLLOW_JS, arg=k, polling=20, timeout=(STEP_GAP + FOLLOW_TIMEOUT) * 1000
                        )
                    except Exception:  # noqa: BLE001 - a timeout, reported as an error
                        out["errors"].append(
                            f"browser {i}: step {k} not shown within {STEP_GAP + FOLLOW_TIMEOUT:.0f} s"
                        )
                        return
                    out["shown"][i][k] = time.monotonic()
                try:  # then the question's options (the teacher asks after the last step)
                    await page.locator('[class*="st-key-class_opt_"] button').first.wait_for(
                        state="visible", timeout=(STEP_GAP + 2 * FOLLOW_TIMEOUT) * 1000
                    )
                except Exception:  # noqa: BLE001 - a timeout, reported as an error
                    out["errors"].append(f"browser {i}: the question's options not shown")
                    return
                out["options"][i] = time.monotonic()
                results.put(("options", i))

            await asyncio.gather(*(follow(i, p) for i, p in enumerate(pages)))
            if not await asyncio.to_thread(stop.wait, 600):
                raise RuntimeError("never told to stop")
            for i, page in enumerate(pages):
                if await page.locator('[data-testid="stException"]').count():
                    out["errors"].append(f"browser {i}: an exception box on the page")
                state = await page.evaluate(
                    "() => document.querySelector('[data-testid=\"stApp\"]')"
                    "?.getAttribute('data-test-connection-state')"
                )
                if state != "CONNECTED":
                    out["errors"].append(f"browser {i}: the connection is {state}")
                cookie = next((c["value"] for c in await page.context.cookies() if c["name"] == PROXY_COOKIE), None)
                answered = served.get(i, set()) - {None}
                out["servers"].append(cookie)
                if answered != {cookie}:
                    out["errors"].append(f"browser {i}: cookie {cookie}, answers from {sorted(answered)}")
            await browser.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out["errors"].append(f"browsers: {exc!r}"[:400])
        if not ready:
            results.put(("ready", None))
    results.put(("done", out))


def _proc_cpu(procs: list[psutil.Process]) -> float:
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


@dataclass
class ClassResults:
    errors: list[str] = field(default_factory=list)
    deadline_hit: bool = False
    follow_p95: float = float("inf")
    answers_ok: bool = False
    answers_line: str = "none"
    tally_s: float = float("inf")
    idle_cores: float = float("inf")
    worker: multiprocessing.process.BaseProcess | None = None


async def class_phases(
    args,
    out: Printer,
    res: ClassResults,
    url: str,
    monitor: ServerMonitor,
    rooms,
    room,
    key: str,
    students,
    browser_members,
    redis_pid: int | None,
) -> None:
    errors = res.errors
    left = time_left(args._deadline)

    code = room.code
    teacher = ClassSession(
        ClassSpec(0, urllib.parse.urlencode({"room": code, "key": key}), "teacher"),
        url,
        errors,
        sticky=True,
        teacher=True,
    )
    pupils = [
        ClassSession(
            ClassSpec(i + 1, urllib.parse.urlencode({"room": code, "member": m.id}), m.name), url, errors, sticky=True
        )
        for i, m in enumerate(students)
    ]
    everyone = [teacher, *pupils]
    try:
        await _class_run(
            args, out, res, url, monitor, rooms, room, teacher, pupils, students, browser_members, redis_pid, left
        )
    finally:
        await asyncio.gather(*(s.close() for s in everyone))


async def _class_run(
    args, out, res, url, monitor, rooms, room, teacher, pupils, students, browser_members, redis_pid, left
) -> None:
    errors, code = res.errors, room.code
    everyone = [teacher, *pupils]
    servers = {p.pid: f"app{i}" for i, p in enumerate(monitor.procs, 1)}

    # the servers alone, warmed up (``/warm`` of each), before anyone opens a page
    t0 = time.monotonic()
    ports = []
    for proc in monitor.procs:
        argv = proc.cmdline()
        ports += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--server.port"]

    def warm(port: str) -> bool:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/warm", timeout=5) as r:
                return bool(json.loads(r.read()).get("ready"))
        return False

    while not all(await asyncio.gather(*(asyncio.to_thread(warm, p) for p in ports))):
        if time.monotonic() - t0 > 120:
            errors.append("the servers did not finish warming up within 120 s")
            break
        await asyncio.sleep(0.5)
    out(f"server: {len(ports)} servers warmed up (their /warm ready) {fmt_s(time.monotonic() - t0)} later")
    c0 = monitor.cpu()
    await asyncio.sleep(3.0)
    c1 = monitor.cpu()
    alone = cpu_span(c0, c1, 0.0, 0.0)
    out(f"server: idle with no page open: servers + haproxy {100 * alone.cores(alone.server):.1f}% of one core")

    # 1. the browsers load in their own process while the protocol pages open, all at once
    worker = results_q = stop = None
    if browser_members:
        ctx = multiprocessing.get_context("spawn")
        results_q, stop = ctx.Queue(), ctx.Event()
        paths = [f"/Class?{urllib.parse.urlencode({'room': code, 'member': m.id})}" for m in browser_members]
        worker = start_worker(
            res, ctx, class_browser_worker, (url, paths, results_q, stop, args.steps, room.step), "load-class-browsers"
        )

    t_open = time.monotonic()
    opened = await open_all(everyone, left(OPEN_TIMEOUT), "the Class page")
    out(
        f"open: {sum(t is not None for t in opened)} of {len(everyone)} protocol pages (the teacher and "
        f"{len(pupils)} students) opened at once: {spread([t for t in opened if t is not None])}"
    )
    if any(t is None for t in opened):
        return
    for s in pupils:
        if s.room_step != room.step:
            s.error(f"opened at step {s.room_step}, the room is at {room.step}")
    if worker is not None:
        try:
            await queue_get(results_q, left(OPEN_TIMEOUT + 60))
            out(
                f"open: {len(browser_members)} Chromium student(s) loaded their page and follow the room "
                f"{fmt_s(time.monotonic() - t_open)} after the start"
            )
        except TimeoutError:
            errors.append("browsers: their pages did not load in time")
    out(
        f"proxy: protocol pages per server (haproxy's cookie): students {per_server(s.server for s in pupils)}; "
        f"the teacher {teacher.server}"
    )

    # 2. follow: the teacher steps, everyone shows each step
    base = room.step
    clicks: dict[int, float] = {}
    teacher_lat: list[float] = []
    reruns0 = sum(s.poll_reruns for s in pupils)
    c0 = monitor.cpu()
    start = time.monotonic() + 0.5
    for n in range(1, args.steps + 1):
        await asyncio.sleep(max(0.0, start + (n - 1) * STEP_GAP - time.monotonic()))
        want = base + n
        clicks[want] = time.monotonic()
        latency = await teacher.click(
            "class_step", lambda s, w=want: s.room_step is not None and s.room_step >= w, left(STEP_TIMEOUT)
        )
        if latency is None:
            return
        if teacher.room_step != want:
            teacher.error(f"step {n}: the teacher's page shows step {teacher.room_step}, expected {want}")
        teacher_lat.append(latency)
    last = base + args.steps
    until = time.monotonic() + FOLLOW_TIMEOUT
    while time.monotonic() < until and any(s.room_step != last and not s.dead for s in pupils):
        await asyncio.sleep(0.05)
    follow_cpu = cpu_span(c0, monitor.cpu(), 0.0, 0.0)
    lat, late = [], 0
    for s in pupils:
        for want, t in clicks.items():
            if want in s.step_at:
                lat.append(s.step_at[want] - t)
            else:
                late += 1
                s.error(
                    f"step {want} never shown (the page went from {max((k for k in s.step_at if k < want), default=None)} "
                    f"to {min((k for k in s.step_at if k > want), default=None)})"
                )
    redraws = sum(s.poll_reruns for s in pupils) - reruns0
    out(
        f"follow: the teacher stepped {args.steps} times, {fmt_s(STEP_GAP)} apart (click to the teacher's own page "
        f"showing it: {spread(teacher_lat)}); {len(pupils)} protocol students, click to their page showing "
        f"'following the teacher at step K': {spread(lat)}; never shown {late}"
    )
    browser_lat: list[float] = []
    browser_out = None  # the browsers note their times and report them at the end
    res.follow_p95 = pct(lat, 0.95) if lat else float("inf")
    out(
        f"follow: server CPU {fmt_s(follow_cpu.server)} over {fmt_s(follow_cpu.wall)} ({100 * follow_cpu.cores(follow_cpu.server):.0f}% "
        f"of a core), {redraws} student fragment reruns on a poll ({redraws / max(1, len(pupils) * args.steps):.2f} per "
        f"student per step): {fmt_s(follow_cpu.server / max(1, redraws))} of server CPU per rerun, polls included"
    )

    # 3. quiz: the teacher asks; every student shows the options; the protocol students answer together
    await asyncio.sleep(1.0)
    t_ask = time.monotonic()
    asked = await teacher.click(
        "class_ask_merge",
        lambda s: s.qid is not None and s.tally is not None and "class_close" in s.widget_ids,
        left(STEP_TIMEOUT),
    )
    if asked is None:
        return
    qid = teacher.qid
    until = time.monotonic() + FOLLOW_TIMEOUT
    browsers_with_options = 0
    while time.monotonic() < until and (
        any(qid not in s.options_at and not s.dead for s in pupils)
        or browsers_with_options < len(browser_members)
        and worker is not None
    ):
        if worker is not None:
            try:
                while True:
                    kind, value = results_q.get_nowait()
                    if kind == "options":
                        browsers_with_options += 1
                    elif kind == "done":
                        browser_out = value
                        browsers_with_options = len(browser_members)
            except queue.Empty:
                pass
        await asyncio.sleep(0.05)
    shown = [s.options_at[qid] - t_ask for s in pupils if qid in s.options_at]
    for s in pupils:
        if qid not in s.options_at:
            s.error(f"question {qid}: its options never shown")
    n_options = max((len(s.options.get(qid, {})) for s in pupils), default=0)
    out(
        f"quiz: the teacher asked question {qid} (which pair merges next, {n_options} options; click to its tally "
        f"on the teacher's page {fmt_s(asked)}); its options on the students' pages: {len(shown)} of {len(pupils)} "
        f"protocol students, click to options shown {spread(shown)}"
        + (f"; {browsers_with_options} of {len(browser_members)} Chromium students" if browser_members else "")
    )
    if not n_options or len(shown) < len(pupils):
        return
    chosen: dict[str, int] = {}
    sent: list[float] = []
    own: list[float] = []
    at = time.monotonic() + 0.3

    async def answer(n: int, s: ClassSession, member) -> None:
        options = s.options[qid]
        choice = sorted(options)[n % len(options)]
        await asyncio.sleep(max(0.0, at + n * ANSWER_SPREAD / len(pupils) - time.monotonic()))
        s.your_answer = None
        chosen[member.id] = choice
        sent.append(time.monotonic())
        latency = await s.click(
            options[choice],
            lambda p: p.your_answer is not None and not p.your_answer.startswith(_YOUR_ANSWER + "none yet"),
            left(STEP_TIMEOUT),
        )
        if latency is not None:
            own.append(latency)

    await asyncio.gather(*(answer(n, s, m) for n, (s, m) in enumerate(zip(pupils, students))))
    last_sent = max(sent)
    until = time.monotonic() + FOLLOW_TIMEOUT
    while time.monotonic() < until and len(pupils) not in teacher.tally_at and not teacher.dead:
        await asyncio.sleep(0.02)
    stored = await asyncio.to_thread(rooms.answers, code, qid)
    by_member = collections.Counter(a.member for a in stored)
    one_each = set(by_member) == set(chosen) and all(n == 1 for n in by_member.values())
    as_clicked = all(chosen.get(a.member) == a.value for a in stored)
    res.answers_ok = len(stored) == len(chosen) == len(pupils) and one_each and as_clicked
    res.answers_line = f"{len(stored)} of {len(chosen)} sent"
    out(
        f"quiz: {len(chosen)} students answered within {fmt_s(last_sent - min(sent))} (click to their own page showing "
        f"the answer: {spread(own)}); the store counts {len(stored)} answers to question {qid} (one per member: "
        f"{yes_no(one_each)}; each the option clicked: {yes_no(as_clicked)})"
    )
    if len(pupils) in teacher.tally_at:
        res.tally_s = teacher.tally_at[len(pupils)] - last_sent
        out(
            f"quiz: the teacher's tally showed '{len(pupils)} answers in' {fmt_s(res.tally_s)} after the last answer "
            f"was sent (tallies drawn in all: {teacher.tallies}; now '{teacher.tally[0]} answers in / "
            f"{teacher.tally[1]} students present')"
        )
    else:
        errors.append(
            f"the teacher's tally did not show {len(pupils)} answers within {FOLLOW_TIMEOUT:.0f} s "
            f"(it shows {teacher.tally})"
        )
    if max(teacher.tally_at, default=0) > len(pupils):
        errors.append(f"the teacher's tally showed {max(teacher.tally_at)} answers; {len(pupils)} were sent")

    # 4. idle: everyone sits in the room, the pages polling
    await asyncio.sleep(1.0)
    polls0, reruns0 = sum(s.polls for s in everyone), sum(s.poll_reruns for s in everyone)
    tree = {name: monitor._tree([p]) for p, name in zip(monitor.procs, servers.values())}
    proxies = monitor._tree(monitor.proxies)
    redis = [psutil.Process(redis_pid)] if redis_pid else []
    before = {name: _proc_cpu(t) for name, t in tree.items()}
    p0, r0, c0, t_idle0 = _proc_cpu(proxies), _proc_cpu(redis), monitor.cpu(), time.monotonic()
    await asyncio.sleep(max(0.0, min(args.idle_seconds, args._deadline - time.monotonic() - 30)))
    c1, t_idle1 = monitor.cpu(), time.monotonic()
    idle = cpu_span(c0, c1, 0.0, 0.0)
    per = {name: (_proc_cpu(t) - before[name]) / idle.wall for name, t in tree.items()}
    proxy_cores, redis_cores = (_proc_cpu(proxies) - p0) / idle.wall, (_proc_cpu(redis) - r0) / idle.wall
    polls = sum(s.polls for s in everyone) - polls0
    reruns = sum(s.poll_reruns for s in everyone) - reruns0
    if worker is not None:
        stop.set()
        try:
            until = time.monotonic() + 60
            while browser_out is None:
                kind, value = await queue_get(results_q, left(until - time.monotonic()))
                if kind == "done":
                    browser_out = value
        except TimeoutError:
            errors.append("browsers: no results in time")
    browser_polls = 0
    if browser_out is not None:
        errors.extend(browser_out["errors"])
        for shown_at in browser_out["shown"]:
            browser_lat += [shown_at[k] - clicks[k] for k in clicks if k in shown_at]
        browser_polls = sum(sum(1 for t in ts if t_idle0 <= t < t_idle1) for ts in browser_out["polls"])
        per_page = [sum(1 for t in ts if t_idle0 <= t < t_idle1) for ts in browser_out["polls"]]
        out(
            f"browsers: {len(browser_members)} Chromium students following by their own script: click to "
            f"'following the teacher at step K' {spread(browser_lat)} ({len(browser_lat)} of "
            f"{len(browser_members) * args.steps}); /room-rev requests made by each page while idle: "
            f"{', '.join(str(x) for x in per_page)}; servers (haproxy's cookie): {per_server(browser_out['servers'])}"
        )
    all_lat = lat + browser_lat
    res.follow_p95 = pct(all_lat, 0.95) if all_lat else float("inf")
    res.idle_cores = idle.cores(idle.server)
    requests = polls + browser_polls
    out(
        f"idle {fmt_s(idle.wall)}: the teacher, {len(pupils)} protocol and {len(browser_members)} Chromium students "
        f"in the room, their pages long-polling /room-rev: {requests:,} requests answered ({requests / idle.wall:.1f} a "
        f"second), "
        f"fragment reruns {reruns}; servers + haproxy {100 * res.idle_cores:.1f}% of one core ("
        + ", ".join(f"{name} {100 * c:.1f}%" for name, c in per.items())
        + f", haproxy {100 * proxy_cores:.1f}%; the servers' event-loop threads {100 * idle.cores(idle.server_main):.1f}%)"
        + (f"; redis-server {100 * redis_cores:.1f}% (not counted)" if redis else "")
    )


def class_main(args) -> int:
    from explorer.serving.rooms import Limits, RedisRooms, SqliteRooms
    from explorer.serving.store import DEFAULT_SESSION_MIB, DEFAULT_STORE_MIB, RedisStore, SqliteStore

    t_start = time.monotonic()
    budget = args.deadline if args.deadline is not None else 240 + STEP_GAP * args.steps + args.idle_seconds
    args._deadline = t_start + budget
    _watchdog(budget + 30)
    out, res = Printer(), ClassResults()
    servers = args.servers or 2
    command = f"python bench/load.py --class --store {args.store}" + "".join(
        f" --{name.replace('_', '-')} {getattr(args, name)}"
        for name, default in (("students", 30), ("steps", 10), ("browsers", 2), ("idle_seconds", 20), ("servers", 2))
        if (getattr(args, name) if name != "servers" else servers) != default
    )
    out(f"command: {command}")
    view = ", ".join(f"{k}={v}" for k, v in CLASS_VIEW.items())
    out(
        f"class: one teacher + {args.students} protocol students (websocket, Streamlit's own messages; each page's "
        f"poller asks /room-rev as its script does) + {args.browsers} Chromium student(s) in one room ({view}); "
        f"`python -m explorer serve --servers {servers}` (haproxy, sticky cookie) on loopback, {os.cpu_count()} CPUs; "
        f"rooms in {'SQLite (a fresh data folder)' if args.store == 'sqlite' else 'Redis (redis-server on loopback)'}"
    )
    out(f"machine: load average {os.getloadavg()[0]:.2f} just before the run (1 minute; other processes included)")
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    monitor = rooms = None
    limits = Limits(members=max(Limits.members, args.students + args.browsers + 10))
    try:
        with contextlib.ExitStack() as stack:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="bpe-class-load-"))
            env = {k: v for k, v in os.environ.items() if not k.startswith("BPE_EXPLORER_")}
            env.update(BPE_EXPLORER_DATA=folder, BPE_EXPLORER_ROOM_SIZE=str(limits.members))
            redis_pid = None
            if args.store == "redis":
                from redisserver import redis_server

                program = shutil.which(
                    "redis-server", path=os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/usr/bin"])
                )
                if program is None:
                    raise SystemExit("load: Debian's redis-server is not installed (apt-get install redis-server)")
                before = {c.pid for c in psutil.Process().children()}
                redis_url = stack.enter_context(redis_server(program))
                redis_pid = next((c.pid for c in psutil.Process().children() if c.pid not in before), None)
                env["BPE_EXPLORER_STORE"] = redis_url
                rooms = RedisRooms(
                    RedisStore(
                        redis_url, cap_bytes=DEFAULT_STORE_MIB * 2**20, session_quota=DEFAULT_SESSION_MIB * 2**20
                    ),
                    limits=limits,
                )
            else:
                rooms = SqliteRooms(
                    SqliteStore(folder, cap_bytes=DEFAULT_STORE_MIB * 2**20, session_quota=DEFAULT_SESSION_MIB * 2**20),
                    limits=limits,
                )
            stack.callback(rooms.close)
            room, key = rooms.create(dict(CLASS_VIEW), step=0)
            members = [rooms.join(room.code, f"student {i:02d}") for i in range(1, args.students + args.browsers + 1)]
            out(
                f"room: {room.code} made in the store, {len(members)} members joined there "
                f"({args.students} for the protocol students, {args.browsers} for the browsers)"
            )
            t0 = time.monotonic()
            url, children = stack.enter_context(launcher(servers, log, res.errors, env=env))
            proxies = [c.pid for c in children if c.name() == "haproxy"]
            monitor = ServerMonitor([c.pid for c in children if c.pid not in proxies], proxies)
            out(
                f"server: {len(children) - len(proxies)} server(s) and {len(proxies)} haproxy up in "
                f"{fmt_s(time.monotonic() - t0)}; RSS baseline {mb(monitor.baseline)} (all added up)"
            )
            try:
                asyncio.run(
                    _bounded(
                        class_phases(
                            args,
                            out,
                            res,
                            url,
                            monitor,
                            rooms,
                            room,
                            key,
                            members[: args.students],
                            members[args.students :],
                            redis_pid,
                        ),
                        args._deadline,
                    )
                )
            except TimeoutError:
                res.deadline_hit = True
                res.errors.append(f"the global deadline ({budget:.0f} s) passed; the run was cut short")
            monitor.stop()
    finally:
        worker = res.worker
        if worker is not None and worker.is_alive():
            worker.join(timeout=5)
            if worker.is_alive():
                worker.terminate()
                worker.join(timeout=10)
                if worker.is_alive():
                    worker.kill()
    log.seek(0)
    server_log = log.read()
    trouble = [ln for ln in server_log.splitlines() if re.search(r"\b(ERROR|CRITICAL)\b|Traceback", ln)]
    warnings = [ln for ln in server_log.splitlines() if re.search(r"\bWARNING\b", ln)]
    res.errors.extend(f"server log: {ln.strip()[:300]}" for ln in trouble)
    errors = res.errors
    out(f"errors: {len(errors)}" + ("" if not errors else " - first: " + " | ".join(e[:240] for e in errors[:5])))
    if warnings:
        out(f"server log warnings: {len(warnings)} - first: {warnings[0].strip()[:240]}")
    if monitor is not None:
        out(f"server RSS (all servers and haproxy added up): baseline {mb(monitor.baseline)}, peak {mb(monitor.peak)}")

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    def shown(x: float) -> str:
        return fmt_s(x) if x != float("inf") else "none"

    out(f"target 0 errors: {len(errors)} -> {verdict(not errors)}")
    out(
        f"target students see each step p95 <= {fmt_s(TARGET_FOLLOW_P95)}: {shown(res.follow_p95)} -> "
        f"{verdict(res.follow_p95 <= TARGET_FOLLOW_P95)}"
    )
    out(f"target answers counted = answers sent, one per member: {res.answers_line} -> {verdict(res.answers_ok)}")
    out(
        f"target teacher's tally within {fmt_s(TARGET_TALLY)} of the last answer: {shown(res.tally_s)} -> "
        f"{verdict(res.tally_s <= TARGET_TALLY)}"
    )
    out(
        f"target idle room: servers + haproxy < {100 * TARGET_IDLE_CORES:.0f}% of one core: "
        + (f"{100 * res.idle_cores:.1f}%" if res.idle_cores != float("inf") else "none")
        + f" -> {verdict(res.idle_cores < TARGET_IDLE_CORES)}"
    )
    out(f"total {fmt_s(time.monotonic() - t_start)}")
    if args.write:
        write_section(
            f"class-{args.store}",
            f"Class room load, {'SQLite' if args.store == 'sqlite' else 'Redis'} "
            f"(bench/load.py --class --store {args.store})",
            out.lines,
        )
    return 1 if errors or res.deadline_hit else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=60, help="length of the steady phase")
    parser.add_argument("--merges", type=int, default=2000, help="each session's merge budget (merges=N in its link)")
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument(
        "--corpus",
        default=CORPUS_NAME,
        help=f"the bundled sample every session's corpus starts from (default {CORPUS_NAME}; a smaller one "
        "makes a quicker smoke run)",
    )
    parser.add_argument(
        "--browsers",
        type=int,
        default=None,
        help="headless Chromium contexts alongside (0: none; default 3, with --class 2)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=None,
        help="stop after this many seconds whatever happens (default 600 + 3 x --seconds)",
    )
    parser.add_argument(
        "--servers",
        type=int,
        default=None,
        help="independent app servers, the sessions assigned in turn (a multi-process setup's numbers; "
        "default 1, with --class 2 behind the launcher's haproxy)",
    )
    parser.add_argument(
        "--proxy",
        action="store_true",
        help="serve through `python -m explorer serve --servers K` (haproxy, sticky sessions); every "
        "session and browser connects to the proxy and keeps its cookie",
    )
    parser.add_argument(
        "--server-option",
        action="append",
        default=[],
        metavar="SECTION.OPTION=VALUE",
        help="pass an option to `streamlit run` (repeatable), e.g. runner.postScriptGC=false",
    )
    parser.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    group = parser.add_argument_group("the Class page (--class)")
    group.add_argument(
        "--class",
        dest="class_room",
        action="store_true",
        help="one teacher and --students students in a room of the Class page, through "
        "`python -m explorer serve --servers 2`: following steps, a quiz round, an idle room",
    )
    group.add_argument(
        "--store",
        choices=("sqlite", "redis"),
        default="sqlite",
        help="where the rooms live: SQLite in a fresh data folder, or a redis-server started on loopback",
    )
    group.add_argument("--students", type=int, default=30, help="protocol students in the room")
    group.add_argument("--steps", type=int, default=10, help="steps the teacher makes, 2 s apart")
    group.add_argument("--idle-seconds", type=float, default=20.0, help="how long the room sits idle, polling")
    args = parser.parse_args()
    if args.class_room:
        if args.server_option or args.proxy:
            parser.error("--class always serves through `python -m explorer serve` (no --proxy or --server-option)")
        args.browsers = 2 if args.browsers is None else args.browsers
        if min(args.students, args.steps) < 1 or args.browsers < 0 or args.idle_seconds <= 0 or (args.servers or 2) < 2:
            parser.error(
                "--students and --steps must be at least 1, --browsers at least 0, --idle-seconds positive "
                "and --servers (with --class) at least 2"
            )
        if args.browsers and chromium_path() is None:
            parser.error("Debian's chromium is not installed (apt-get install chromium); use --browsers 0")
        return class_main(args)
    args.browsers = 3 if args.browsers is None else args.browsers
    args.servers = 1 if args.servers is None else args.servers
    if any("=" not in o or o.startswith("-") for o in args.server_option):
        parser.error("--server-option takes SECTION.OPTION=VALUE")
    if args.proxy and args.server_option:
        parser.error(
            "--server-option does not go with --proxy (the launcher runs the app with the repository's config)"
        )
    server_args = tuple(x for o in args.server_option for x in (f"--{o.split('=', 1)[0]}", o.split("=", 1)[1]))
    if min(args.sessions, args.seconds, args.merges, args.servers) < 1 or min(args.bursts, args.browsers) < 0:
        parser.error(
            "--sessions, --seconds, --merges and --servers must be at least 1; --bursts and --browsers at least 0"
        )
    if args.browsers and chromium_path() is None:
        parser.error("Debian's chromium is not installed (apt-get install chromium); use --browsers 0")
    t_start = time.monotonic()
    budget = args.deadline if args.deadline is not None else 600 + 3 * args.seconds
    args._deadline = t_start + budget
    _watchdog(budget + 30)

    out = Printer()
    res = Results()
    if not (SAMPLES / args.corpus).is_file() or not args.corpus.endswith(".txt"):
        parser.error(f"--corpus: no bundled sample {args.corpus!r}")
    specs = session_specs(args.sessions, args.merges, args.corpus)
    sizes = [corpus_bytes(s) for s in specs]
    if args.proxy:
        where = (
            f"`python -m explorer serve --servers {args.servers}`: {args.servers} server(s) behind haproxy "
            "(new sessions in turn, each kept on its server by haproxy's cookie)"
        )
    else:
        where = "one server" if args.servers == 1 else f"{args.servers} servers (sessions in turn, no proxy)"
    out(
        f"load: {args.sessions} protocol sessions (websocket, Streamlit's own messages) + {args.browsers} headless "
        f"Chromium context(s), {where} on loopback, {os.cpu_count()} CPUs; each session its own corpus and preset, "
        f"merges={args.merges:,}" + (f"; server options: {', '.join(args.server_option)}" if args.server_option else "")
    )
    out(
        f"corpora: {args.corpus} + 1-2 other bundled samples each: {min(sizes):,} to {max(sizes):,} bytes "
        f"(median {int(statistics.median(sizes)):,}); presets in turn: {', '.join(PRESET_ORDER)}"
    )

    t0 = time.monotonic()
    refs = references(specs)
    short = [(s, r) for s, r in zip(specs, refs) if r["final"] != args.merges]
    out(
        f"reference: the engine alone trained all {len(specs)} in {fmt_s(time.monotonic() - t0)} (2 processes); "
        + (
            "every one makes all its merges"
            if not short
            else "; ".join(
                f"session {s.index} ({s.label}) stops at {r['final']:,} ({r['stop_reason']})" for s, r in short
            )
        )
    )

    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    monitor = None
    try:
        with contextlib.ExitStack() as stack:
            t0 = time.monotonic()
            if args.proxy:
                url, children = stack.enter_context(launcher(args.servers, log, res.errors))
                urls = [url]
                proxies = [c.pid for c in children if c.name() == "haproxy"]
                monitor = ServerMonitor([c.pid for c in children if c.pid not in proxies], proxies)
                out(
                    f"server: {len(children) - len(proxies)} server(s) and {len(proxies)} haproxy up in "
                    f"{fmt_s(time.monotonic() - t0)}; RSS baseline {mb(monitor.baseline)} (all added up)"
                )
            else:
                servers = [
                    stack.enter_context(app_process(timeout=120, log=log, extra_args=server_args))
                    for _ in range(args.servers)
                ]
                urls = [url for url, _ in servers]
                monitor = ServerMonitor([proc.pid for _, proc in servers])
                out(f"server: up in {fmt_s(time.monotonic() - t0)}; RSS baseline {mb(monitor.baseline)}")
            try:
                asyncio.run(_bounded(run(args, out, res, specs, refs, urls, monitor), args._deadline))
            except TimeoutError:
                res.deadline_hit = True
                res.errors.append(f"the global deadline ({budget:.0f} s) passed; the run was cut short")
            monitor.stop()
    finally:
        worker = res.worker
        if worker is not None and worker.is_alive():
            worker.terminate()
            worker.join(timeout=10)
            if worker.is_alive():
                worker.kill()
    log.seek(0)
    server_log = log.read()
    trouble = [ln for ln in server_log.splitlines() if re.search(r"\b(ERROR|CRITICAL)\b|Traceback", ln)]
    warnings = [ln for ln in server_log.splitlines() if re.search(r"\bWARNING\b", ln)]
    res.errors.extend(f"server log: {ln.strip()[:300]}" for ln in trouble)

    errors, rss = res.errors, monitor.peak if monitor else 0
    out(f"errors: {len(errors)}" + ("" if not errors else " - first: " + " | ".join(e[:240] for e in errors[:5])))
    if warnings:
        out(f"server log warnings: {len(warnings)} - first: {warnings[0].strip()[:240]}")
    if monitor is not None:
        added = (
            " (all servers and haproxy added up)"
            if args.proxy
            else " (all servers added up)"
            if args.servers > 1
            else ""
        )
        out(
            f"server RSS{added}: baseline {mb(monitor.baseline)}, peak {mb(rss)} "
            f"({mb((rss - monitor.baseline) / max(1, args.sessions))} per session above the baseline)"
        )
    if res.steady_cpu is not None:
        solo, steady = res.solo_cpu, res.steady_cpu
        out(
            f"CPU: server{'s + haproxy' if args.proxy else 's' if args.servers > 1 else ''} "
            f"{steady.cores(steady.server):.2f} cores of {os.cpu_count()} during the steady phase ("
            + (f"haproxy {steady.cores(steady.proxy):.2f}, " if args.proxy else "")
            + f"event-loop thread{'s' if args.servers > 1 else ''} {steady.cores(steady.server_main):.2f}, script runs the rest), "
            f"this client {steady.cores(steady.client):.2f}"
            + (f", the browsers {res.browser_cores:.2f}" if res.browser_cores is not None else "")
            + f"; server CPU per step: solo {fmt_s(solo.server / SOLO_STEPS)}, steady "
            f"{fmt_s(steady.server / max(1, res.steady_steps))} (browsers' steps included)"
        )
    steady_p95, burst_p95 = res.steady_p95, res.burst_p95

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    out(f"target 0 errors: {len(errors)} -> {verdict(not errors)}")
    out(
        f"target 0 leaks: {res.leaks}"
        + (f" ({res.unchecked} session(s) not checked)" if res.unchecked else "")
        + f" -> {verdict(res.leaks == 0 and res.unchecked == 0)}"
    )
    out(
        f"target steady p95 <= {fmt_s(TARGET_STEADY_P95)}: {fmt_s(steady_p95) if steady_p95 != float('inf') else 'none'} -> "
        f"{verdict(steady_p95 <= TARGET_STEADY_P95)}"
    )
    if args.bursts:
        out(
            f"target burst p95 <= {fmt_s(TARGET_BURST_P95)}: {fmt_s(burst_p95) if burst_p95 != float('inf') else 'none'} -> "
            f"{verdict(burst_p95 <= TARGET_BURST_P95)}"
        )
    out(f"target peak RSS < {TARGET_RSS_BYTES / 1024**3:.0f} GB: {mb(rss)} -> {verdict(rss < TARGET_RSS_BYTES)}")
    out(f"total {fmt_s(time.monotonic() - t_start)}")
    if args.write:
        write_section("load", "Classroom load (bench/load.py)", out.lines)
    return 1 if errors or res.leaks or res.unchecked or res.deadline_hit else 0


async def _bounded(coro, deadline: float) -> None:
    """Run until done or the deadline, then close whatever is still open."""
    task = asyncio.ensure_future(coro)
    try:
        await asyncio.wait_for(asyncio.shield(task), max(1.0, deadline - time.monotonic()))
    except TimeoutError:
        task.cancel()
        raise TimeoutError from None


def _watchdog(seconds: float) -> None:
    """Last resort: if the run is still going well past its deadline, end this process (and with
    it the server, whose pipe ends; the browser worker is a daemon process)."""

    def fire() -> None:
        print(f"load: still running {seconds:.0f} s after the start; giving up", file=sys.stderr, flush=True)
        for child in psutil.Process().children(recursive=True):
            try:
                child.kill()
            except psutil.Error:
                pass
        os._exit(3)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()


if __name__ == "__main__":
    raise SystemExit(main())
