"""The class run (``bench/load.py --class``): one teacher and a room of students on the Class
page, through ``python -m explorer serve --servers 2``.

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
   of the fragment the poller sits in. Each page's stepper (``explorer/ui/stepper.py``) too, as
   its script does it: the teacher's reports the step it shows; a student's polls the room's
   step (``what=step``, on a connection of its own) and shows a step it holds at once, asking for
   the steps it lacks with a report (a rerun of its fragment). The Chromium pages run the
   scripts themselves.
2. Follow: the teacher steps ``--steps`` times, 2 s apart (its stepper's report of the next
   step, as a Step click sends it). A student's latency for step K: from just before the
   teacher's report is written to its websocket until the student's stepper shows K: the answer
   of its step poll when it holds K, else the delta that brings K (Chromium: until "following
   the teacher at step K" shows). Target: p95 <= 1 s over every student and step. Reported
   beside: the servers' CPU a step, and the students' fragment reruns (on a rev poll, or for
   steps their stepper lacked): a step reruns no student's page.
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

import asyncio
import collections
import contextlib
import json
import multiprocessing
import os
import queue
import shutil
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

import psutil
from _common import Printer, fmt_s, write_section, yes_no
from appserver import chromium_path

from .browsers import class_browser_worker
from .class_client import FOLLOW_TIMEOUT, STEP_GAP, YOUR_ANSWER, ClassSession, ClassSpec
from .client import OPEN_TIMEOUT, STEP_TIMEOUT, open_all
from .control import bounded, queue_get, start_worker, stop_worker, time_left, watchdog
from .report import mb, or_none, pct, per_server, report_errors, spread, verdict
from .servers import CpuSpan, ServerMonitor, cpu_span, proc_cpu, serve_proxy

__all__ = ["CLASS_VIEW", "ClassResults", "check_args", "class_phases", "main"]

CLASS_VIEW = {"corpus": "english_frankenstein.txt", "preset": "gpt2", "merges": "1000"}
TARGET_FOLLOW_P95 = 1.0  # a student sees the teacher's step
TARGET_TALLY = 1.0  # the teacher's tally shows the last answer
TARGET_IDLE_CORES = 0.20  # servers + haproxy while a room sits idle, in cores
ANSWER_SPREAD = 0.5  # the answers leave over this many seconds


@dataclass
class ClassResults:
    """What a class run found: its errors, and the numbers its verdicts read."""

    errors: list[str] = field(default_factory=list)
    deadline_hit: bool = False
    follow_p95: float = float("inf")
    answers_ok: bool = False
    answers_line: str = "none"
    tally_s: float = float("inf")
    idle_cores: float = float("inf")
    worker: multiprocessing.process.BaseProcess | None = None


@dataclass
class Room:
    """The room a class run happens in, made in the store before the servers start."""

    rooms: object  # the store's rooms (explorer.serving.rooms: SqliteRooms or RedisRooms)
    room: object  # the room as made (its code, its step)
    key: str  # the teacher's key
    students: list  # the members the protocol students are
    browser_members: list  # the members the Chromium students are
    redis_pid: int | None = None  # redis-server's process, with --store redis


# ---- the run -----------------------------------------------------------------------------------
async def class_phases(args, out: Printer, res: ClassResults, url: str, monitor: ServerMonitor, room: Room) -> None:
    """The class run's phases, in order, over the teacher's and the students' protocol pages (all
    closed whatever happens)."""
    run = _ClassRun(args, out, res, url, monitor, room)
    try:
        await run.run()
    finally:
        await asyncio.gather(*(s.close() for s in run.everyone))


class _ClassRun:
    """One class run's phases (the numbered steps of this module's docstring), sharing the
    pages, the browsers' process and the run's deadline."""

    def __init__(self, args, out: Printer, res: ClassResults, url: str, monitor: ServerMonitor, room: Room) -> None:
        self.args, self.out, self.res, self.url, self.monitor, self.room = args, out, res, url, monitor, room
        self.errors, self.code = res.errors, room.room.code
        self.left = time_left(args.deadline_at)
        self.teacher = ClassSession(
            ClassSpec(0, urllib.parse.urlencode({"room": self.code, "key": room.key}), "teacher"),
            url,
            self.errors,
            sticky=True,
            teacher=True,
        )
        self.pupils = [
            ClassSession(
                ClassSpec(i + 1, urllib.parse.urlencode({"room": self.code, "member": m.id}), m.name),
                url,
                self.errors,
                sticky=True,
            )
            for i, m in enumerate(room.students)
        ]
        self.everyone = [self.teacher, *self.pupils]
        self.worker = self.results_q = self.stop = None
        self.browser_out: dict | None = None  # the browsers note their times and report them at the end
        self.clicks: dict[int, float] = {}  # step -> when the teacher's click for it was sent
        self.lat: list[float] = []  # the protocol students' follow latencies

    async def run(self) -> None:
        """Every phase; none after one that could not go on."""
        await self.warm()
        self.start_browsers()
        if not await self.open():
            return
        if not await self.follow():
            return
        qid = await self.ask()
        if qid is None:
            return
        await self.answer(qid)
        await self.idle()

    async def warm(self) -> None:
        """The servers alone, warmed up (``/warm`` of each), before anyone opens a page."""
        t0 = time.monotonic()
        ports = []
        for proc in self.monitor.procs:
            argv = proc.cmdline()
            ports += [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--server.port"]

        def warm(port: str) -> bool:
            with contextlib.suppress(OSError, ValueError):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/warm", timeout=5) as r:
                    return bool(json.loads(r.read()).get("ready"))
            return False

        while not all(await asyncio.gather(*(asyncio.to_thread(warm, p) for p in ports))):
            if time.monotonic() - t0 > 120:
                self.errors.append("the servers did not finish warming up within 120 s")
                break
            await asyncio.sleep(0.5)
        self.out(f"server: {len(ports)} servers warmed up (their /warm ready) {fmt_s(time.monotonic() - t0)} later")
        c0 = self.monitor.cpu()
        await asyncio.sleep(3.0)
        c1 = self.monitor.cpu()
        alone = cpu_span(c0, c1, 0.0, 0.0)
        self.out(
            f"server: idle with no page open: servers + haproxy {100 * alone.cores(alone.server):.1f}% of one core"
        )

    def start_browsers(self) -> None:
        """1. The browsers load in their own process while the protocol pages open."""
        members = self.room.browser_members
        if not members:
            return
        ctx = multiprocessing.get_context("spawn")
        self.results_q, self.stop = ctx.Queue(), ctx.Event()
        paths = [f"/Class?{urllib.parse.urlencode({'room': self.code, 'member': m.id})}" for m in members]
        self.worker = start_worker(
            self.res,
            ctx,
            class_browser_worker,
            (self.url, paths, self.results_q, self.stop, self.args.steps, self.room.room.step),
            "load-class-browsers",
        )

    async def open(self) -> bool:
        """1. Every protocol page opens at once (and the browsers' pages load); False when one did not."""
        teacher, pupils, everyone = self.teacher, self.pupils, self.everyone
        t_open = time.monotonic()
        opened = await open_all(everyone, self.left(OPEN_TIMEOUT), "the Class page")
        self.out(
            f"open: {sum(t is not None for t in opened)} of {len(everyone)} protocol pages (the teacher and "
            f"{len(pupils)} students) opened at once: {spread([t for t in opened if t is not None])}"
        )
        if any(t is None for t in opened):
            return False
        for s in pupils:
            if s.room_step != self.room.room.step:
                s.error(f"opened at step {s.room_step}, the room is at {self.room.room.step}")
        if self.worker is not None:
            try:
                await queue_get(self.results_q, self.left(OPEN_TIMEOUT + 60))
                self.out(
                    f"open: {len(self.room.browser_members)} Chromium student(s) loaded their page and follow the room "
                    f"{fmt_s(time.monotonic() - t_open)} after the start"
                )
            except TimeoutError:
                self.errors.append("browsers: their pages did not load in time")
        self.out(
            f"proxy: protocol pages per server (haproxy's cookie): students {per_server(s.server for s in pupils)}; "
            f"the teacher {teacher.server}"
        )
        return True

    async def follow(self) -> bool:
        """2. Follow: the teacher steps, everyone shows each step; False when a click failed."""
        args, teacher, pupils = self.args, self.teacher, self.pupils
        base = self.room.room.step
        teacher_lat: list[float] = []
        reruns0 = sum(s.poll_reruns for s in pupils)
        reports0 = sum(s.reports for s in pupils)
        c0 = self.monitor.cpu()
        start = time.monotonic() + 0.5
        for n in range(1, args.steps + 1):
            await asyncio.sleep(max(0.0, start + (n - 1) * STEP_GAP - time.monotonic()))
            want = base + n
            self.clicks[want] = time.monotonic()
            latency = await teacher.step_to(want, self.left(STEP_TIMEOUT))
            if latency is None:
                return False
            if teacher.room_step != want:
                teacher.error(f"step {n}: the teacher's page shows step {teacher.room_step}, expected {want}")
            teacher_lat.append(latency)
        last = base + args.steps
        until = time.monotonic() + FOLLOW_TIMEOUT
        while time.monotonic() < until and any(s.room_step != last and not s.dead for s in pupils):
            await asyncio.sleep(0.05)
        follow_cpu = cpu_span(c0, self.monitor.cpu(), 0.0, 0.0)
        late = self._follow_latencies()
        lat = self.lat
        redraws = sum(s.poll_reruns for s in pupils) - reruns0
        windows = sum(s.reports for s in pupils) - reports0
        self.out(
            f"follow: the teacher stepped {args.steps} times, {fmt_s(STEP_GAP)} apart (its stepper's report to the "
            f"teacher's own page showing it: {spread(teacher_lat)}); {len(pupils)} protocol students, report to their "
            f"stepper showing 'following the teacher at step K': {spread(lat)}; never shown {late}"
        )
        self.res.follow_p95 = pct(lat, 0.95) if lat else float("inf")
        self.out(
            f"follow: server CPU {fmt_s(follow_cpu.server)} over {fmt_s(follow_cpu.wall)} ({100 * follow_cpu.cores(follow_cpu.server):.0f}% "
            f"of a core), {fmt_s(follow_cpu.server / max(1, args.steps))} a step; student fragment reruns: {redraws} on "
            f"a rev poll, {windows} for steps their stepper lacked "
            f"({(redraws + windows) / max(1, len(pupils) * args.steps):.2f} per student per step)"
        )
        return True

    def _follow_latencies(self) -> int:
        """Each student's latency for each step into ``lat``; a step a page never showed is an
        error. Returns how many were never shown."""
        late = 0
        for s in self.pupils:
            for want, t in self.clicks.items():
                if want in s.step_at:
                    self.lat.append(s.step_at[want] - t)
                else:
                    late += 1
                    s.error(
                        f"step {want} never shown (the page went from {max((k for k in s.step_at if k < want), default=None)} "
                        f"to {min((k for k in s.step_at if k > want), default=None)})"
                    )
        return late

    async def ask(self) -> int | None:
        """3. Quiz: the teacher asks; every student shows the options. The question's id, None
        when it was not asked or a student's page lacks its options."""
        teacher, pupils = self.teacher, self.pupils
        await asyncio.sleep(1.0)
        t_ask = time.monotonic()
        asked = await teacher.click(
            "class_ask_merge",
            lambda s: s.qid is not None and s.tally is not None and "class_close" in s.widget_ids,
            self.left(STEP_TIMEOUT),
        )
        if asked is None:
            return None
        qid = teacher.qid
        browsers_with_options = await self._wait_options(qid)
        shown = [s.options_at[qid] - t_ask for s in pupils if qid in s.options_at]
        for s in pupils:
            if qid not in s.options_at:
                s.error(f"question {qid}: its options never shown")
        n_options = max((len(s.options.get(qid, {})) for s in pupils), default=0)
        members = self.room.browser_members
        self.out(
            f"quiz: the teacher asked question {qid} (which pair merges next, {n_options} options; click to its tally "
            f"on the teacher's page {fmt_s(asked)}); its options on the students' pages: {len(shown)} of {len(pupils)} "
            f"protocol students, click to options shown {spread(shown)}"
            + (f"; {browsers_with_options} of {len(members)} Chromium students" if members else "")
        )
        if not n_options or len(shown) < len(pupils):
            return None
        return qid

    async def _wait_options(self, qid) -> int:
        """Until every student shows question ``qid``'s options (bounded); how many Chromium
        students did (a browsers' process that is done counts all)."""
        members = self.room.browser_members
        until = time.monotonic() + FOLLOW_TIMEOUT
        browsers_with_options = 0
        while time.monotonic() < until and (
            any(qid not in s.options_at and not s.dead for s in self.pupils)
            or browsers_with_options < len(members)
            and self.worker is not None
        ):
            if self.worker is not None:
                try:
                    while True:
                        kind, value = self.results_q.get_nowait()
                        if kind == "options":
                            browsers_with_options += 1
                        elif kind == "done":
                            self.browser_out = value
                            browsers_with_options = len(members)
                except queue.Empty:
                    pass
            await asyncio.sleep(0.05)
        return browsers_with_options

    async def answer(self, qid: int) -> None:
        """3. The protocol students answer together; the store's count; the teacher's tally."""
        teacher, pupils, students = self.teacher, self.pupils, self.room.students
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
                lambda p: p.your_answer is not None and not p.your_answer.startswith(YOUR_ANSWER + "none yet"),
                self.left(STEP_TIMEOUT),
            )
            if latency is not None:
                own.append(latency)

        await asyncio.gather(*(answer(n, s, m) for n, (s, m) in enumerate(zip(pupils, students))))
        last_sent = max(sent)
        until = time.monotonic() + FOLLOW_TIMEOUT
        while time.monotonic() < until and len(pupils) not in teacher.tally_at and not teacher.dead:
            await asyncio.sleep(0.02)
        counted = await self._count_answers(qid, chosen)
        self.out(
            f"quiz: {len(chosen)} students answered within {fmt_s(last_sent - min(sent))} (click to their own page showing "
            f"the answer: {spread(own)}); {counted}"
        )
        self._tally(last_sent)

    async def _count_answers(self, qid: int, chosen: dict[str, int]) -> str:
        """The store must hold one answer per student, each the option clicked: what it holds."""
        stored = await asyncio.to_thread(self.room.rooms.answers, self.code, qid)
        by_member = collections.Counter(a.member for a in stored)
        one_each = set(by_member) == set(chosen) and all(n == 1 for n in by_member.values())
        as_clicked = all(chosen.get(a.member) == a.value for a in stored)
        self.res.answers_ok = len(stored) == len(chosen) == len(self.pupils) and one_each and as_clicked
        self.res.answers_line = f"{len(stored)} of {len(chosen)} sent"
        return (
            f"the store counts {len(stored)} answers to question {qid} (one per member: "
            f"{yes_no(one_each)}; each the option clicked: {yes_no(as_clicked)})"
        )

    def _tally(self, last_sent: float) -> None:
        """From the last answer sent until the teacher's tally showed them all."""
        teacher, n = self.teacher, len(self.pupils)
        if n in teacher.tally_at:
            self.res.tally_s = teacher.tally_at[n] - last_sent
            self.out(
                f"quiz: the teacher's tally showed '{n} answers in' {fmt_s(self.res.tally_s)} after the last answer "
                f"was sent (tallies drawn in all: {teacher.tallies}; now '{teacher.tally[0]} answers in / "
                f"{teacher.tally[1]} students present')"
            )
        else:
            self.errors.append(
                f"the teacher's tally did not show {n} answers within {FOLLOW_TIMEOUT:.0f} s (it shows {teacher.tally})"
            )
        if max(teacher.tally_at, default=0) > n:
            self.errors.append(f"the teacher's tally showed {max(teacher.tally_at)} answers; {n} were sent")

    async def idle(self) -> None:
        """4. Idle: everyone sits in the room, the pages polling; then the browsers' numbers."""
        await asyncio.sleep(1.0)
        idle = await self._measure_idle()
        browser_polls = await self._browsers_done(idle)
        res, members = self.res, self.room.browser_members
        res.idle_cores = idle.span.cores(idle.span.server)
        requests = idle.polls + browser_polls
        self.out(
            f"idle {fmt_s(idle.span.wall)}: the teacher, {len(self.pupils)} protocol and {len(members)} Chromium students "
            f"in the room, their pages long-polling /room-rev: {requests:,} requests answered ({requests / idle.span.wall:.1f} a "
            f"second), "
            f"fragment reruns {idle.reruns}; servers + haproxy {100 * res.idle_cores:.1f}% of one core ("
            + ", ".join(f"{name} {100 * c:.1f}%" for name, c in idle.per_server.items())
            + f", haproxy {100 * idle.proxy_cores:.1f}%; the servers' event-loop threads {100 * idle.span.cores(idle.span.server_main):.1f}%)"
            + (f"; redis-server {100 * idle.redis_cores:.1f}% (not counted)" if idle.redis_cores is not None else "")
        )

    async def _measure_idle(self) -> _Idle:
        """The CPU of each server (with its children), haproxy and redis-server, and the pages'
        polls and reruns, over ``--idle-seconds`` of the room sitting idle."""
        monitor, everyone = self.monitor, self.everyone
        servers = {p.pid: f"app{i}" for i, p in enumerate(monitor.procs, 1)}
        polls0, reruns0 = sum(s.polls for s in everyone), sum(s.poll_reruns for s in everyone)
        tree = {name: monitor.tree([p]) for p, name in zip(monitor.procs, servers.values())}
        proxies = monitor.tree(monitor.proxies)
        redis = [psutil.Process(self.room.redis_pid)] if self.room.redis_pid else []
        before = {name: proc_cpu(t) for name, t in tree.items()}
        p0, r0, c0, t_idle0 = proc_cpu(proxies), proc_cpu(redis), monitor.cpu(), time.monotonic()
        await asyncio.sleep(max(0.0, min(self.args.idle_seconds, self.args.deadline_at - time.monotonic() - 30)))
        c1, t_idle1 = monitor.cpu(), time.monotonic()
        span = cpu_span(c0, c1, 0.0, 0.0)
        return _Idle(
            span=span,
            started=t_idle0,
            ended=t_idle1,
            per_server={name: (proc_cpu(t) - before[name]) / span.wall for name, t in tree.items()},
            proxy_cores=(proc_cpu(proxies) - p0) / span.wall,
            redis_cores=(proc_cpu(redis) - r0) / span.wall if redis else None,
            polls=sum(s.polls for s in everyone) - polls0,
            reruns=sum(s.poll_reruns for s in everyone) - reruns0,
        )

    async def _browsers_done(self, idle: _Idle) -> int:
        """The browsers told to stop; their follow latencies (into the students' p95) and their
        polls while idle. Returns how many /room-rev requests they made while idle."""
        if self.worker is not None:
            self.stop.set()
            try:
                until = time.monotonic() + 60
                while self.browser_out is None:
                    kind, value = await queue_get(self.results_q, self.left(until - time.monotonic()))
                    if kind == "done":
                        self.browser_out = value
            except TimeoutError:
                self.errors.append("browsers: no results in time")
        browser_lat: list[float] = []
        browser_polls = 0
        browser_out, members, clicks = self.browser_out, self.room.browser_members, self.clicks
        if browser_out is not None:
            self.errors.extend(browser_out["errors"])
            for shown_at in browser_out["shown"]:
                browser_lat += [shown_at[k] - clicks[k] for k in clicks if k in shown_at]
            per_page = [sum(1 for t in ts if idle.started <= t < idle.ended) for ts in browser_out["polls"]]
            browser_polls = sum(per_page)
            self.out(
                f"browsers: {len(members)} Chromium students following by their own script: click to "
                f"'following the teacher at step K' {spread(browser_lat)} ({len(browser_lat)} of "
                f"{len(members) * self.args.steps}); /room-rev requests made by each page while idle: "
                f"{', '.join(str(x) for x in per_page)}; servers (haproxy's cookie): {per_server(browser_out['servers'])}"
            )
        all_lat = self.lat + browser_lat
        self.res.follow_p95 = pct(all_lat, 0.95) if all_lat else float("inf")
        return browser_polls


@dataclass
class _Idle:
    """What the idle room cost: the CPU span, each server's and haproxy's cores (redis-server's,
    None without), and the protocol pages' polls and fragment reruns meanwhile."""

    span: CpuSpan
    started: float
    ended: float
    per_server: dict[str, float]
    proxy_cores: float
    redis_cores: float | None
    polls: int
    reruns: int


# ---- the command -------------------------------------------------------------------------------
def main(args) -> int:
    """The class run as ``bench/load.py --class`` runs it, its options checked (``check_args``):
    its lines printed (and stored with ``--write``); 1 when there were errors or the deadline
    passed, else 0."""
    t_start = time.monotonic()
    budget = args.deadline if args.deadline is not None else 240 + STEP_GAP * args.steps + args.idle_seconds
    args.deadline_at = t_start + budget
    watchdog(budget + 30)
    out, res = Printer(), ClassResults()
    servers = args.servers or 2
    _describe(args, out, servers)
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    monitor = None
    try:
        with contextlib.ExitStack() as stack:
            room, env = _make_room(args, out, stack)
            url, monitor = serve_proxy(stack, servers, log, res.errors, out, env=env)
            try:
                asyncio.run(bounded(class_phases(args, out, res, url, monitor, room), args.deadline_at))
            except TimeoutError:
                res.deadline_hit = True
                res.errors.append(f"the global deadline ({budget:.0f} s) passed; the run was cut short")
            monitor.stop()
    finally:
        stop_worker(res.worker, grace=5)
    report_errors(out, res.errors, log)
    if monitor is not None:
        out(f"server RSS (all servers and haproxy added up): baseline {mb(monitor.baseline)}, peak {mb(monitor.peak)}")
    _verdicts(out, res)
    out(f"total {fmt_s(time.monotonic() - t_start)}")
    if args.write:
        write_section(
            f"class-{args.store}",
            f"Class room load, {'SQLite' if args.store == 'sqlite' else 'Redis'} "
            f"(bench/load.py --class --store {args.store})",
            out.lines,
        )
    return 1 if res.errors or res.deadline_hit else 0


def check_args(args, error) -> None:
    """The class run's options, checked (``error``: argparse's, which exits); the defaults that
    depend on the scenario filled in."""
    if args.server_option or args.proxy:
        error("--class always serves through `python -m explorer serve` (no --proxy or --server-option)")
    args.browsers = 2 if args.browsers is None else args.browsers
    if min(args.students, args.steps) < 1 or args.browsers < 0 or args.idle_seconds <= 0 or (args.servers or 2) < 2:
        error(
            "--students and --steps must be at least 1, --browsers at least 0, --idle-seconds positive "
            "and --servers (with --class) at least 2"
        )
    if args.browsers and chromium_path() is None:
        error("Debian's chromium is not installed (apt-get install chromium); use --browsers 0")


def _describe(args, out: Printer, servers: int) -> None:
    """The run's first lines: the command (its options other than the defaults), who is in the
    room, where the rooms live, and the machine's load."""
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


def _make_room(args, out: Printer, stack: contextlib.ExitStack) -> tuple[Room, dict[str, str]]:
    """A fresh data folder (and with ``--store redis`` a redis-server) on ``stack``, the room and
    its members made in that store; the room, and the environment the servers get to find it."""
    from explorer.serving.rooms import Limits

    limits = Limits(members=max(Limits.members, args.students + args.browsers + 10))
    folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="bpe-class-load-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BPE_EXPLORER_")}
    env.update(BPE_EXPLORER_DATA=folder, BPE_EXPLORER_ROOM_SIZE=str(limits.members))
    rooms, redis_pid = _open_rooms(args, stack, folder, limits, env)
    stack.callback(rooms.close)
    room, key = rooms.create(dict(CLASS_VIEW), step=0)
    members = [rooms.join(room.code, f"student {i:02d}") for i in range(1, args.students + args.browsers + 1)]
    out(
        f"room: {room.code} made in the store, {len(members)} members joined there "
        f"({args.students} for the protocol students, {args.browsers} for the browsers)"
    )
    return Room(rooms, room, key, members[: args.students], members[args.students :], redis_pid), env


def _open_rooms(args, stack: contextlib.ExitStack, folder: str, limits, env: dict[str, str]):
    """The rooms of ``--store``: SQLite in ``folder``, or a redis-server started on loopback (on
    ``stack``; its URL put in ``env``). Returns the rooms and redis-server's process id."""
    from explorer.serving.rooms import RedisRooms, SqliteRooms
    from explorer.serving.store import DEFAULT_SESSION_MIB, DEFAULT_STORE_MIB, RedisStore, SqliteStore

    sizes = {"cap_bytes": DEFAULT_STORE_MIB * 2**20, "session_quota": DEFAULT_SESSION_MIB * 2**20}
    if args.store != "redis":
        return SqliteRooms(SqliteStore(folder, **sizes), limits=limits), None
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
    # the rooms in the same store the servers open (the default key prefix): a store, not its URL
    return RedisRooms(RedisStore(redis_url, **sizes), limits=limits), redis_pid


def _verdicts(out: Printer, res: ClassResults) -> None:
    """Each target met or missed."""
    out(f"target 0 errors: {len(res.errors)} -> {verdict(not res.errors)}")
    out(
        f"target students see each step p95 <= {fmt_s(TARGET_FOLLOW_P95)}: {or_none(res.follow_p95)} -> "
        f"{verdict(res.follow_p95 <= TARGET_FOLLOW_P95)}"
    )
    out(f"target answers counted = answers sent, one per member: {res.answers_line} -> {verdict(res.answers_ok)}")
    out(
        f"target teacher's tally within {fmt_s(TARGET_TALLY)} of the last answer: {or_none(res.tally_s)} -> "
        f"{verdict(res.tally_s <= TARGET_TALLY)}"
    )
    out(
        f"target idle room: servers + haproxy < {100 * TARGET_IDLE_CORES:.0f}% of one core: "
        + (f"{100 * res.idle_cores:.1f}%" if res.idle_cores != float("inf") else "none")
        + f" -> {verdict(res.idle_cores < TARGET_IDLE_CORES)}"
    )
