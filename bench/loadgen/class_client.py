"""The Class page's client: a teacher's or a student's page of a room over the protocol
(``ClassSession``, a ``Session`` that reads the room's lines), with the page's poller done as its
script does it over one keep-alive HTTP connection (``Http``), and the pace of a class run."""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass

from explorer.serving.serve import COOKIE as PROXY_COOKIE
from explorer.serving.serve import SERVED_BY

from .client import Session

__all__ = ["FOLLOW_TIMEOUT", "POLL_TIMEOUT", "STEP_GAP", "YOUR_ANSWER", "ClassSession", "ClassSpec", "Http"]

STEP_GAP = 2.0  # seconds between the teacher's steps
FOLLOW_TIMEOUT = 15.0  # a student not showing a step (or the question) by then is an error
POLL_TIMEOUT = 40.0  # one /room-rev request (the server holds one up to follow.LONG_POLL_S; haproxy gives up at 60 s)
_STEPPERS = (
    "class_stepper_t",
    "class_stepper_s",
)  # the teacher's and a following student's (explorer/ui/class_view.py)
_NEAR = 8  # the steps either side a following stepper wants held (explorer.ui.stepper.NEAR)
_TEACHER_STATUS = re.compile(r"^Step \*\*([\d,]+)\*\* \S (\d+) joined, (\d+) present")
_TALLY = re.compile(r"<b>(\d+)</b> answers in / <b>(\d+)</b> students present")
_QUESTION = re.compile(r"^\*\*Question (\d+):\*\*")
_OPTION_KEY = re.compile(r"^class_opt_(\d+)_(\d+)$")
YOUR_ANSWER = "Your answer: "


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
        """Drop the connection (the next request opens a new one)."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """GET ``path``: the answer's status, headers (lower-case names) and body."""
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
    component's new state ``{"rev": value}`` as a rerun of the fragment it sits in.

    The pages' steppers (``explorer/ui/stepper.py``) as their script does it: the teacher steps
    by sending its stepper's report of the step shown (the server moves the room there); a
    following student's stepper long-polls the room's step (``what=step``) on a connection of its
    own and shows a step it holds at once (no rerun: the step counts as shown when the poll's
    answer arrives), reporting (a rerun of its fragment) only when the step or one of the steps
    either side is not held, as its script does."""

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
        # the page's stepper: what it was sent last, the steps it holds (their epoch), its reports
        self.stepper_key = _STEPPERS[0] if teacher else _STEPPERS[1]
        self.held: set[int] = set()
        self.epoch: str | None = None
        self.sent_view: int | None = None  # the room's step as the server last sent it
        self.reports = 0  # the stepper's reports sent (each a rerun of its fragment)
        self.window_reruns = 0  # of those, a following student's asking for steps it lacked
        self.step_polls = 0
        self.step_http: Http | None = None
        self._step_poller: asyncio.Task | None = None
        self._inflight = 0.0  # when the report in flight left (0: none): one at a time, as the script
        self._dirty: int | None = None  # a step to report once the one in flight is answered

    def _element(self, kind: str, body, wid: str, now: float) -> None:
        if kind == "markdown":
            text = body.body
            if self.teacher:
                m = _TEACHER_STATUS.match(text)
                if m:
                    self.room_step = int(m.group(1).replace(",", ""))
                    self.joined, self.present = int(m.group(2)), int(m.group(3))
                    self.step_at.setdefault(self.room_step, now)
            elif text.startswith(YOUR_ANSWER):
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
        elif kind == "bidi_component" and wid.endswith("-" + self.stepper_key):
            self._stepper_data(json.loads(body.json), now)
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

    # -- the stepper, as its script does it --
    def _stepper_data(self, data: dict, now: float) -> None:
        """The stepper's new data: the steps it holds now (final entries, of this epoch); a
        following student's shows the server's step when it is news (and held), and asks for the
        steps it lacks; its step poll starts with the first data."""
        if data.get("epoch") != self.epoch:
            self.epoch, self.held = data.get("epoch"), set()
        self.held |= {e["step"] for e in data.get("entries", ()) if e.get("final")}
        self.stepper = data
        if data.get("ack") == self.reports:
            self._inflight = 0.0
        first = self.sent_view is None
        if self.teacher:
            if first:
                self.sent_view = data["view"]
                self._report_soon(data["view"])  # the script's first report: the window comes with its answer
            elif data.get("more"):
                self._report_soon(self.room_step if self.room_step is not None else data["view"])
            return
        if data["view"] != self.sent_view:
            self.sent_view = data["view"]
            self.room_step = data["view"]
        if self.room_step in self.held:
            self.step_at.setdefault(self.room_step, now)
        if first or data.get("more") or self._needs(self.room_step) or self._dirty is not None:
            self._report_soon(self.room_step)
        follow = data.get("follow")
        if follow and self._step_poller is None and not self.closing:
            self._step_poller = asyncio.get_running_loop().create_task(self._poll_steps(follow["url"]))

    def _needs(self, k: int | None) -> bool:
        """Whether the stepper lacks step ``k`` or one of the ``_NEAR`` steps either side (up to the
        last step the server has)."""
        if k is None:
            return False
        last = self.stepper.get("last", k)
        return any(j not in self.held for j in range(max(0, k - _NEAR), k + _NEAR + 1) if j <= last or j == k)

    def _held_ranges(self) -> list[list[int]]:
        out: list[list[int]] = []
        for k in sorted(self.held):
            if out and out[-1][1] == k - 1:
                out[-1][1] = k
            else:
                out.append([k, k])
        return out

    def _report_soon(self, step: int | None) -> None:
        """Send the stepper's report of ``step`` (at most one in flight, as its script: another
        waits for the answer, or 1.5 s)."""
        if step is None or self.closing or self.dead:
            return
        if self._inflight and time.monotonic() - self._inflight < 1.5:
            self._dirty = step
            return
        self._dirty = None
        self._inflight = time.monotonic()
        asyncio.get_running_loop().create_task(self._report(step))

    async def _report(self, step: int) -> None:
        try:
            self.reports += 1
            report = {
                "step": step,
                "seq": self.reports,
                "gen": self.stepper.get("gen"),
                "epoch": self.epoch,
                "held": self._held_ranges(),
                "load": self.nonce,
            }
            self._state(self.stepper_key).json_value = json.dumps({"at": report}, separators=(",", ":"))
            await self._send(self._rerun(fragment=self.fragments.get(self.stepper_key, "")))
        except ConnectionError:
            self._inflight = 0.0

    async def step_to(self, want: int, timeout: float) -> float | None:
        """The teacher's stepper shows step ``want`` (a Step or a key): its report, and the wait
        until the teacher's page shows the room at that step."""
        self.reports += 1
        report = {
            "step": want,
            "seq": self.reports,
            "gen": self.stepper.get("gen"),
            "epoch": self.epoch,
            "held": self._held_ranges(),
            "load": self.nonce,
        }

        def message():
            self._state(self.stepper_key).json_value = json.dumps({"at": report}, separators=(",", ":"))
            return self._rerun(fragment=self.fragments.get(self.stepper_key, ""))

        return await self._act(
            f"step to {want}", message, lambda s: s.room_step is not None and s.room_step >= want, timeout
        )

    async def _poll_steps(self, url: str) -> None:
        """A following student's stepper's poll of the room's step (its own connection, as the
        browser's fetch would take another of its six): a step it holds is shown at once; one it
        lacks is asked for (a report)."""
        self.step_http = http = Http(self.base_url, self.server)
        try:
            while not (self.closing or self.dead):
                seen = self.room_step
                path = f"{url}&what=step&seen={'null' if seen is None else seen}"
                try:
                    status, _headers, body = await asyncio.wait_for(http.get(path), POLL_TIMEOUT)
                except Exception as exc:  # noqa: BLE001 - the script asks again; here it is an error
                    http.close()
                    if not (self.closing or self.dead):
                        self.error(f"GET {path} failed: {exc!r}")
                    await asyncio.sleep(1.0)
                    continue
                self.step_polls += 1
                if status != 200:
                    await asyncio.sleep(2.0)
                    continue
                step = json.loads(body).get("step")
                if isinstance(step, int) and step != self.room_step and not (self.closing or self.dead):
                    self.room_step = step
                    if step in self.held:
                        self.step_at.setdefault(step, time.monotonic())
                    if self._needs(step):
                        self.window_reruns += 1
                        self._report_soon(step)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a poller that stops is an error
            self.error(f"the step poller stopped: {exc!r}")

    async def _poll(self) -> None:
        """The poller's task: its loop, a failure recorded as an error."""
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
        """Stop the poller and its connection, then the websocket."""
        self.closing = True
        for task in (self._poller, self._step_poller):
            if task is not None:
                task.cancel()
        for http in (self.http, self.step_http):
            if http is not None:
                http.close()
        await super().close()

    async def open(self, timeout: float) -> float:
        """Connect and run the page until it shows the room's step, its poller and its stepper;
        the seconds it took."""
        t0 = time.monotonic()
        await self.connect()
        ready = lambda s: s.room_step is not None and s.stepper_key in s.widget_ids and s.watch is not None  # noqa: E731
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
