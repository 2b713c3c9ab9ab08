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
_FOLLOWING = re.compile(r"following the teacher at step \*\*([\d,]+)\*\*")
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
        if self._poller is not None:
            self._poller.cancel()
        if self.http is not None:
            self.http.close()
        await super().close()

    async def open(self, timeout: float) -> float:
        """Connect and run the page until it shows the room's step and its poller (the teacher's:
        its Step button too); the seconds it took."""
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
