"""One browser tab's worth of Streamlit's protocol over its websocket, as the browser's
frontend speaks it: connect (behind the launcher's proxy, with its cookie), reruns carrying the
widget states a session keeps, the frontend's message cache, the deltas read (the Train page's
status line, its history table, exception and error boxes) and a fragment's timed reruns.

A click is what a browser sends for it; a request waits until what it should draw has been
drawn and the script run finished (see ``Session.request``)."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from dataclasses import dataclass

from explorer.serving.serve import COOKIE as PROXY_COOKIE
from explorer.serving.serve import SERVED_BY

from .specs import Spec

__all__ = ["OPEN_TIMEOUT", "STEP_TIMEOUT", "Session", "Status", "open_all"]

STEP_TIMEOUT = 30.0
OPEN_TIMEOUT = 240.0
_STATUS = re.compile(r"^Step \*\*([\d,]+)\*\* of ([\d,]+) trained")
_FINISHED_EARLY = 2  # ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN
_COMPILE_ERROR = 1  # FINISHED_WITH_COMPILE_ERROR
_STEPPER = "train_stepper"  # the Train page's stepper's key (explorer/ui/train_view.py)
_CACHE_ENTRIES = 256  # ForwardMsgs a session keeps for the server to refer to
_HISTORY_COLUMNS = ["step", "left", "right", "new token", "id", "count", "replaced", "tokens after"]


# ---- a protocol session ------------------------------------------------------------------------
@dataclass
class Status:
    """The Train page's status line as last drawn: the step shown, the steps trained, whether
    training stopped, and the line itself."""

    step: int
    trained: int
    stopped: bool
    text: str


@dataclass
class _Waiter:
    """A request's wait: met once ``predicate`` held after a delta; done at the next script end."""

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
        self.stepper: dict = {}  # what the Train page's stepper was sent last (its generation, epoch)
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
        """Record one of the run's errors, naming this session."""
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
        """Open the websocket (sticky: after loading the page for the proxy's cookie) and start
        reading it."""
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
        """Stop the timed reruns and close the websocket (a failure then is no news)."""
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
        """Read every message as it comes; a lost connection is an error and ends any wait."""
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
        """One ForwardMsg, as the frontend takes it (a reference resolved from the cache)."""
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
        """A new element: its widget's id and fragment, the status line, the history table, an
        exception or error box; then whether the waiting request's predicate now holds."""
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
        elif kind == "bidi_component" and body.component_name == "bpe_explorer_stepper":
            # the Train page's stepper (explorer/ui/stepper.py): the server's step and generation
            # its status line, as the browser draws it: "training stopped" (the tail) once the
            # session reached the last step there is
            self.stepper = data = json.loads(body.json)
            stopped = bool(data["done"]) and data["last"] >= (data["final"] or 0)
            tail = data["tail"] if stopped else ""
            self.status = Status(
                data["view"], data["last"], stopped, f"Step {data['view']:,} of {data['last']:,}{tail}"
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
        """Rerun ``fragment`` every ``interval`` seconds until told to stop."""
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
        """Stop these fragments' timed reruns."""
        for fragment in fragments:
            task = self._auto_reruns.pop(fragment, None)
            if task is not None:
                task.cancel()

    # -- outgoing --
    def _rerun(self, *, fragment: str = "", triggers: tuple[str, ...] = (), auto: bool = False):
        """A ``rerun_script`` BackMsg: the widget states kept, ``triggers`` pressed, the hashes
        of the messages cached, in ``fragment`` (the whole page without)."""
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
        """Write a BackMsg to the websocket (ConnectionError when it is closed)."""
        from websockets.exceptions import ConnectionClosed

        try:
            await self.ws.send(msg.SerializeToString())
        except ConnectionClosed as exc:
            raise ConnectionError(f"the connection was closed: {exc}") from None

    def _state(self, key: str):
        """The WidgetState this session keeps sending for the widget ``key`` (made on first use)."""
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
        await self.request(self._rerun(), lambda s: s.status is not None and _STEPPER in s.widget_ids, timeout)
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
            # the stepper's report of the step it drew (a browser draws it at once, from the steps
            # it was sent ahead, and reports it; the server follows)
            report = {"step": want, "seq": self.clicks, "gen": self.stepper["gen"], "epoch": self.stepper["epoch"]}
            self._state(_STEPPER).json_value = json.dumps(
                {"at": report | {"held": [], "load": self.nonce}}, separators=(",", ":")
            )
            return self._rerun(fragment=self.fragments[_STEPPER])

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


async def open_all(sessions, timeout: float, what: str) -> list[float | None]:
    """Open every protocol page at once; each one's time to open, None (and its error) when it did not."""

    async def open_one(s) -> float | None:
        try:
            return await s.open(timeout)
        except Exception as exc:  # noqa: BLE001 - counted as an error
            s.error(f"could not open {what}: {exc!r}")
            return None

    return await asyncio.gather(*(open_one(s) for s in sessions))
