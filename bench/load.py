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
import random
import re
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import psutil

from _common import CORPUS_NAME, ROOT, SAMPLES, Printer, fmt_s, write_section
from explorer.serve import COOKIE as PROXY_COOKIE, SERVED_BY

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


def session_specs(count: int, merges: int) -> list[Spec]:
    """Tiny Shakespeare plus one other bundled sample, then plus two: every corpus differs
    (136 of them); presets in turn."""
    others = sorted(p.name for p in SAMPLES.glob("*.txt") if p.name != CORPUS_NAME)
    extras = itertools.chain(((o,) for o in others), itertools.combinations(others, 2))
    return [Spec(i, (CORPUS_NAME, *extra), PRESET_ORDER[i % len(PRESET_ORDER)], merges)
            for i, extra in zip(range(count), itertools.cycle(list(extras)))]


def corpus_bytes(spec: Spec) -> int:
    return sum((SAMPLES / name).stat().st_size for name in spec.corpus)


# ---- the engine alone --------------------------------------------------------------------------
def reference(spec: Spec) -> dict:
    """Train the session's corpus and config with the engine alone, as the Train page builds its
    trainer (``explorer/ui/state.py``): the config the link gives (``links.parse_link``), the
    words ``count_words`` gives, ``Trainer(words, config, top_k=..., encoding=...)`` (how many
    steps keep their full records changes what a record holds, not the merges)."""
    from explorer import PRESETS, Trainer
    from explorer.corpora import list_samples, read_sample
    from explorer.pipeline import count_words
    from explorer.ui.links import parse_link
    from explorer.ui.render import style_of, token_text
    from explorer.ui.state import RECORDED_PAIRS

    link, problems = parse_link({"corpus": ",".join(spec.corpus), "preset": spec.preset, "merges": str(spec.merges)},
                                samples=[s.name for s in list_samples()])
    if problems:
        raise ValueError(f"the session's link does not open as it is: {'; '.join(problems)}")
    words = count_words(tuple(read_sample(name) for name in link.corpus), link.config)
    trainer = Trainer(words, link.config, top_k=RECORDED_PAIRS, encoding=PRESETS[spec.preset].encoding).require_room()
    trainer.run()
    # the tokens as the page writes them (a byte-level token as the text its bytes spell)
    style = style_of(link.config.unit)
    rows = [(r.step, token_text(r.left, style), token_text(r.right, style), token_text(r.token, style), r.token_id,
             r.count, r.replaced, r.tokens_after) for r in trainer.records]
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
        for proc in (self.procs + self.proxies if procs is None else procs):
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

        with urllib.request.urlopen(f"{self.base_url}/Train?{self.spec.query}", timeout=timeout) as r:
            r.read()
            cookies = dict(c.split(";", 1)[0].strip().split("=", 1) for c in r.headers.get_all("Set-Cookie") or [] if "=" in c)
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
        self.ws = await connect(self.ws_url, subprotocols=["streamlit"], origin=f"http://{host}",
                                additional_headers=headers, ping_interval=None, max_size=None, open_timeout=60)
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
            self._delta(msg.delta)
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

    def _delta(self, delta) -> None:
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
                self.status = Status(int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")),
                                     "training stopped" in body.body, body.body)
        elif kind == "dataframe":
            self.dataframe = body.arrow_data.data
            self.dataframes += 1
        elif kind == "exception":
            self.error(f"exception box: {body.type}: {body.message[:200]}")
        elif kind == "alert" and body.format == 1:  # Alert.ERROR: st.error
            self.error(f"error box: {body.body[:200]}")
        waiter = self._waiter
        if waiter is not None and not waiter.met and waiter.predicate(self):
            waiter.met = True

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
            cs.page_name = "Train"  # the first run: the page named by the URL's path
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
        ci.url, ci.is_embedded, ci.color_scheme = f"{self.base_url}/Train", False, "light"
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
        except (TimeoutError, asyncio.TimeoutError):
            self.error(f"{what}: no answer within {timeout:.0f} s (status: {self.status.text if self.status else None})")
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
                {"clicks": {"nonce": self.nonce, "step": self.clicks}}, separators=(",", ":"))
            return self._rerun(fragment=self.fragments["w_step_clicks"])

        latency = await self._act(f"{phase} step {want:,}", message,
                                  lambda s: s.status is not None and s.status.step >= want, timeout)
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
            "run to end", lambda: self._rerun(fragment=self.fragments["run"], triggers=(self.widget_ids["run"],)),
            lambda s: s.status is not None and s.status.stopped and s.status.step == s.status.trained, timeout)
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
                page.on("response", lambda r, i=spec.index: served.setdefault(i, set()).add(r.headers.get(SERVED_BY.lower())))
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
                        await page.wait_for_function(_STATUS_JS, arg=done + 1, polling="raf", timeout=STEP_TIMEOUT * 1000)
                    except Exception:  # noqa: BLE001 - a timeout, reported as an error
                        out["errors"].append(f"browser {spec.index} ({spec.label}): step {done + 1} not shown within {STEP_TIMEOUT:.0f} s")
                        break
                    out["latencies"].append(time.monotonic() - t0)
                    done += 1
                await page.wait_for_function(_IDLE_JS, timeout=STEP_TIMEOUT * 1000)
                if await page.locator('[data-testid="stException"]').count():
                    out["errors"].append(f"browser {spec.index}: an exception box on the page")
                shown = await page.evaluate(
                    "() => ([...document.querySelectorAll('p')].find(p => /^Step [\\d,]+ of/.test(p.innerText)) || {}).innerText || ''")
                m = re.match(r"Step ([\d,]+) of", shown)
                made = int(m.group(1).replace(",", "")) if m else -1
                out["steps"] += made
                if made != done:
                    out["errors"].append(f"browser {spec.index} ({spec.label}): {done} steps clicked and seen, page shows {shown!r}")

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


async def _phases(args, out: Printer, res: Results, specs, refs, urls: list[str], monitor: ServerMonitor, sessions) -> None:
    errors = res.errors
    deadline = args._deadline

    def left(limit: float) -> float:
        return max(1.0, min(limit, deadline - time.monotonic()))

    # browsers: their own process, loading their pages while the protocol sessions open
    browser_specs = session_specs(len(specs) + args.browsers, args.merges)[len(specs):]
    worker = results_q = go = go_at = None
    if args.browsers:
        ctx = multiprocessing.get_context("spawn")
        results_q, go, go_at = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
        worker = ctx.Process(target=browser_worker, args=(urls, browser_specs, results_q, go, go_at, args.seconds),
                             name="load-browsers", daemon=True)
        worker.start()
        res.worker = worker

    # 2. open every session at once
    async def open_one(s: Session) -> float | None:
        try:
            return await s.open(left(OPEN_TIMEOUT))
        except Exception as exc:  # noqa: BLE001 - counted as an error
            s.error(f"could not open the Train link: {exc!r}")
            return None

    opened = await asyncio.gather(*(open_one(s) for s in sessions))
    live = [s for s, t in zip(sessions, opened) if t is not None]
    bad_start = [s for s in live if s.status.step != 0]
    for s in bad_start:
        s.error(f"opened at step {s.status.step}, not 0")
    out(f"open: {len(live)} of {len(sessions)} sessions opened their Train link at once: "
        f"{spread([t for t in opened if t is not None])}  (RSS now {mb(monitor._rss())})")
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
    out(f"solo: one session stepping while the others wait: {spread(solo_lat)}; server CPU "
        f"{fmt_s(solo.server / max(1, len(solo_lat)))} per step")

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
            if time.monotonic() > deadline or await s.step("steady", left(STEP_TIMEOUT)) is None:
                return

    await asyncio.sleep(max(0.0, start - time.monotonic() - 0.05))
    c0, k0 = monitor.cpu(), client_cpu()
    before = {id(s): s.status.step for s in live}
    await asyncio.gather(*(steady(n, s) for n, s in enumerate(live)))
    steady_cpu = cpu_span(c0, monitor.cpu(), k0, client_cpu())
    lat = [x for s in live for x in s.latencies.get("steady", [])]
    clicks = sum(s.sent.get("steady", 0) for s in live)
    shown = sum(s.status.step - before[id(s)] for s in live)
    out(f"steady {args.seconds} s: {len(live)} sessions each clicking Step once a second: {len(lat):,} steps "
        f"({len(lat) / steady_cpu.wall:.1f} a second), latency {spread(lat)}")
    out(f"steady: steps shown {shown:,} of {clicks:,} clicked (wrong step shown: {sum(s.mismatches for s in live)}); "
        f"ticks skipped while a step was in flight: {skipped:,} of {len(live) * args.seconds:,}")
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
        out(f"browsers: {args.browsers} Chromium context(s) alongside, clicking Step once a second: {len(b['latencies'])} "
            f"steps, click to new step shown {spread(b['latencies'])}; steps shown {b['steps']} of {b['clicks']} clicked, "
            f"ticks skipped {b['skipped']}, page errors and exception boxes {len(b['errors'])}")
        res.browser_cores = b["cpu"] / b["wall"] if b["wall"] else 0.0
        if args.proxy:
            out(f"proxy: browser contexts per server (haproxy's cookie): {per_server(b['servers'])}")
        res.steady_steps += len(b["latencies"])

    # 5. bursts
    burst_lat, spreads = [], []
    c0 = monitor.cpu()
    for _ in range(args.bursts):
        await asyncio.sleep(2.0)
        if time.monotonic() > deadline - STEP_TIMEOUT:
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
        out(f"burst x{len(spreads)}: all {len(live)} sessions click Step together (sent within "
            f"{fmt_s(max(spreads, default=0))}): latency {spread(burst_lat)}; server CPU "
            f"{fmt_s(burst_cpu.server / max(1, len(burst_lat)))} per step")
        if max(spreads, default=0) > BURST_SPREAD_LIMIT:
            out(f"burst: WARNING this load generator was slow: a burst's clicks left over {fmt_s(max(spreads))}, "
                "not within 100 ms")
    res.burst_p95 = pct(burst_lat, 0.95) if burst_lat else (float("inf") if args.bursts else 0.0)

    # 6. run to end, all together but a tenth of the sessions, which keep stepping once a second
    #    beside the others' heavy training (it takes turns in the app's heavy lane; a Step does not)
    c0 = monitor.cpu()

    async def to_end(s: Session) -> float | None:
        return await s.run_to_end(refs[s.spec.index]["final"], left(RUN_TIMEOUT))

    n_beside = len(live) // 10
    runners, steppers = live[: len(live) - n_beside], live[len(live) - n_beside:]
    running = True

    async def step_beside(s: Session) -> None:
        while running and time.monotonic() < deadline - STEP_TIMEOUT:
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
    out(f"run to end: {len(runners)} sessions pressed Run to end together; {sum(1 for t in ends[:len(runners)] if t is not None)} "
        f"reached their last step (status 'training stopped'): {spread([t for t in ends[:len(runners)] if t is not None])}; "
        f"server CPU {fmt_s(run_cpu.server)} over {fmt_s(run_cpu.wall)}")
    if steppers:
        beside = [x for s in steppers for x in s.latencies.get("beside", [])]
        out(f"beside the runs: {len(steppers)} other sessions clicking Step once a second meanwhile: {len(beside):,} "
            f"steps, latency {spread(beside)}; then they ran to the end too ({len(done)} of {len(live)} in all)")

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
        where = (f"it is session {other}'s ({specs[other].label})" if other is not None else
                 f"first difference at row {first + 1}: {rows[first] if first < len(rows) else 'none'}, the engine's "
                 f"{ref[first] if first < len(ref) else 'none'}")
        leaks.append(f"session {s.spec.index} ({s.spec.label}): {len(rows):,} merges, the engine alone {len(ref):,}; {where}")
    checked = sum(1 for r in histories if r is not None)
    res.leaks, res.unchecked = len(leaks), len(sessions) - checked
    out(f"history: {checked} of {len(sessions)} sessions' full history read from the page; identical to the engine "
        f"alone on their corpus and preset: {checked - len(leaks)}; leaks {len(leaks)}")
    for line in leaks[:5]:
        out(f"    leak: {line}")

    mb_in = sum(s.bytes_in for s in sessions)
    out(f"traffic: {sum(s.messages for s in sessions):,} messages to the protocol sessions ({mb(mb_in)}; "
        f"{sum(s.refs for s in sessions):,} of them references to cached ones)")


@contextlib.contextmanager
def launcher(servers: int, log, errors: list[str], timeout: float = 180.0):
    """``python -m explorer serve --servers K`` on a free loopback port: yields the proxy's URL
    and the launcher's children (the servers and haproxy); after, SIGTERM to the launcher, and
    any child still running then is an error."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "explorer", "serve", "--servers", str(servers), "--port", str(port)],
                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, text=True)
    children: list[psutil.Process] = []
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            line = proc.stdout.readline() if sel.select(timeout) else ""
        m = re.search(r"http://\S+", line)
        if m is None:
            raise RuntimeError(f"python -m explorer serve printed no URL within {timeout:.0f} s "
                               f"(exit status {proc.poll()}; its stderr is in the server log)")
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=int, default=60, help="length of the steady phase")
    parser.add_argument("--merges", type=int, default=2000, help="each session's merge budget (merges=N in its link)")
    parser.add_argument("--bursts", type=int, default=3)
    parser.add_argument("--browsers", type=int, default=3, help="headless Chromium contexts alongside (0: none)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="stop after this many seconds whatever happens (default 600 + 3 x --seconds)")
    parser.add_argument("--servers", type=int, default=1,
                        help="independent app servers, the sessions assigned in turn (a multi-process setup's numbers)")
    parser.add_argument("--proxy", action="store_true",
                        help="serve through `python -m explorer serve --servers K` (haproxy, sticky sessions); every "
                             "session and browser connects to the proxy and keeps its cookie")
    parser.add_argument("--server-option", action="append", default=[], metavar="SECTION.OPTION=VALUE",
                        help="pass an option to `streamlit run` (repeatable), e.g. runner.postScriptGC=false")
    parser.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    args = parser.parse_args()
    if any("=" not in o or o.startswith("-") for o in args.server_option):
        parser.error("--server-option takes SECTION.OPTION=VALUE")
    if args.proxy and args.server_option:
        parser.error("--server-option does not go with --proxy (the launcher runs the app with the repository's config)")
    server_args = tuple(x for o in args.server_option for x in (f"--{o.split('=', 1)[0]}", o.split("=", 1)[1]))
    if min(args.sessions, args.seconds, args.merges, args.servers) < 1 or min(args.bursts, args.browsers) < 0:
        parser.error("--sessions, --seconds, --merges and --servers must be at least 1; --bursts and --browsers at least 0")
    if args.browsers and chromium_path() is None:
        parser.error("Debian's chromium is not installed (apt-get install chromium); use --browsers 0")
    t_start = time.monotonic()
    budget = args.deadline if args.deadline is not None else 600 + 3 * args.seconds
    args._deadline = t_start + budget
    _watchdog(budget + 30)

    out = Printer()
    res = Results()
    specs = session_specs(args.sessions, args.merges)
    sizes = [corpus_bytes(s) for s in specs]
    if args.proxy:
        where = (f"`python -m explorer serve --servers {args.servers}`: {args.servers} server(s) behind haproxy "
                 "(new sessions in turn, each kept on its server by haproxy's cookie)")
    else:
        where = "one server" if args.servers == 1 else f"{args.servers} servers (sessions in turn, no proxy)"
    out(f"load: {args.sessions} protocol sessions (websocket, Streamlit's own messages) + {args.browsers} headless "
        f"Chromium context(s), {where} on loopback, {os.cpu_count()} CPUs; each session its own corpus and preset, "
        f"merges={args.merges:,}" + (f"; server options: {', '.join(args.server_option)}" if args.server_option else ""))
    out(f"corpora: {CORPUS_NAME} + 1-2 other bundled samples each: {min(sizes):,} to {max(sizes):,} bytes "
        f"(median {int(statistics.median(sizes)):,}); presets in turn: {', '.join(PRESET_ORDER)}")

    t0 = time.monotonic()
    refs = references(specs)
    short = [(s, r) for s, r in zip(specs, refs) if r["final"] != args.merges]
    out(f"reference: the engine alone trained all {len(specs)} in {fmt_s(time.monotonic() - t0)} (2 processes); "
        + ("every one makes all its merges" if not short else
           "; ".join(f"session {s.index} ({s.label}) stops at {r['final']:,} ({r['stop_reason']})" for s, r in short)))

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
                out(f"server: {len(children) - len(proxies)} server(s) and {len(proxies)} haproxy up in "
                    f"{fmt_s(time.monotonic() - t0)}; RSS baseline {mb(monitor.baseline)} (all added up)")
            else:
                servers = [stack.enter_context(app_process(timeout=120, log=log, extra_args=server_args))
                           for _ in range(args.servers)]
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
        added = " (all servers and haproxy added up)" if args.proxy else " (all servers added up)" if args.servers > 1 else ""
        out(f"server RSS{added}: baseline {mb(monitor.baseline)}, peak {mb(rss)} "
            f"({mb((rss - monitor.baseline) / max(1, args.sessions))} per session above the baseline)")
    if res.steady_cpu is not None:
        solo, steady = res.solo_cpu, res.steady_cpu
        out(f"CPU: server{'s + haproxy' if args.proxy else 's' if args.servers > 1 else ''} "
            f"{steady.cores(steady.server):.2f} cores of {os.cpu_count()} during the steady phase ("
            + (f"haproxy {steady.cores(steady.proxy):.2f}, " if args.proxy else "")
            + f"event-loop thread{'s' if args.servers > 1 else ''} {steady.cores(steady.server_main):.2f}, script runs the rest), "
            f"this client {steady.cores(steady.client):.2f}"
            + (f", the browsers {res.browser_cores:.2f}" if res.browser_cores is not None else "")
            + f"; server CPU per step: solo {fmt_s(solo.server / SOLO_STEPS)}, steady "
            f"{fmt_s(steady.server / max(1, res.steady_steps))} (browsers' steps included)")
    steady_p95, burst_p95 = res.steady_p95, res.burst_p95

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    out(f"target 0 errors: {len(errors)} -> {verdict(not errors)}")
    out(f"target 0 leaks: {res.leaks}" + (f" ({res.unchecked} session(s) not checked)" if res.unchecked else "")
        + f" -> {verdict(res.leaks == 0 and res.unchecked == 0)}")
    out(f"target steady p95 <= {fmt_s(TARGET_STEADY_P95)}: {fmt_s(steady_p95) if steady_p95 != float('inf') else 'none'} -> "
        f"{verdict(steady_p95 <= TARGET_STEADY_P95)}")
    if args.bursts:
        out(f"target burst p95 <= {fmt_s(TARGET_BURST_P95)}: {fmt_s(burst_p95) if burst_p95 != float('inf') else 'none'} -> "
            f"{verdict(burst_p95 <= TARGET_BURST_P95)}")
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
    except (TimeoutError, asyncio.TimeoutError):
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
