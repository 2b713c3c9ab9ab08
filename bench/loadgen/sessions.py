"""The sessions run: many Train pages stepping at once, on one server, on K servers given the
sessions in turn, or through the launcher's haproxy (``--proxy``). What happens, in order:

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

- A click is what a browser sends for it. The Train page's stepper (``explorer/ui/stepper.py``)
  draws the next step in the browser and reports it: a click is a fragment rerun (``rerun_script``
  with the live area's ``fragment_id``) carrying the stepper's report (the step now shown, its
  generation and epoch) as its JSON widget state. Other buttons (Run to end) send a trigger value. Widgets a session never touched are left out of its messages:
  the server keeps their last values, which are what a browser would send back.
- Step latency: from just before the click's message is written to the websocket until the
  arrival of the first ``script_finished`` (other than "finished early for a rerun") that
  follows the stepper's data showing the step K the click should lead to (the server's side:
  its view, address bar and charts follow). In Chromium: from calling click() until the
  stepper's status reads ``Step K of`` (drawn in the browser, no server round trip).
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

import asyncio
import contextlib
import multiprocessing
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field

from _common import SAMPLES, Printer, fmt_s, write_section
from appserver import app_process, chromium_path

from .browsers import browser_worker
from .client import OPEN_TIMEOUT, STEP_TIMEOUT, Session, open_all
from .control import bounded, queue_get, start_worker, stop_worker, time_left, watchdog
from .report import mb, or_none, pct, per_server, report_errors, spread, verdict
from .servers import CpuSpan, ServerMonitor, client_cpu, cpu_span, serve_proxy
from .specs import PRESET_ORDER, Spec, corpus_bytes, references, session_specs

__all__ = ["Results", "check_args", "leak_lines", "main", "run"]

TARGET_STEADY_P95 = 1.0
TARGET_BURST_P95 = 3.0
TARGET_RSS_BYTES = 4 * 1024**3
RUN_TIMEOUT = 300.0
HISTORY_TIMEOUT = 120.0
SOLO_STEPS = 5
BURST_SPREAD_LIMIT = 0.1


@dataclass
class Results:
    """What a sessions run found: its errors and leaks, and the numbers its verdicts read."""

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


# ---- the run -----------------------------------------------------------------------------------
async def run(args, out: Printer, res: Results, specs, refs, urls: list[str], monitor: ServerMonitor) -> None:
    """The run's phases, in order, over protocol sessions given the ``urls`` in turn (all closed
    whatever happens)."""
    phases = _Phases(args, out, res, specs, refs, urls, monitor)
    try:
        await phases.run()
    finally:
        await asyncio.gather(*(s.close() for s in phases.sessions))


class _Phases:
    """One run's phases (the numbered steps of this module's docstring), sharing its sessions,
    the browsers' process and the run's deadline."""

    def __init__(self, args, out: Printer, res: Results, specs, refs, urls: list[str], monitor: ServerMonitor) -> None:
        self.args, self.out, self.res, self.monitor = args, out, res, monitor
        self.specs, self.refs, self.urls = specs, refs, urls
        self.errors = res.errors
        self.left = time_left(args.deadline_at)
        self.sessions = [Session(spec, urls[spec.index % len(urls)], res.errors, sticky=args.proxy) for spec in specs]
        self.live: list[Session] = []
        self.worker = self.results_q = self.go = self.go_at = None

    async def run(self) -> None:
        """Every phase; none after the sessions failed to open."""
        self.start_browsers()
        await self.open()
        if not self.live:
            return
        if self.worker is not None:  # the browsers' pages loaded too, before anything is timed
            try:
                await queue_get(self.results_q, self.left(OPEN_TIMEOUT + 60))
            except TimeoutError:
                self.errors.append("browsers: their pages did not load in time")
        await self.solo()
        await self.steady()
        await self.browsers_done()
        await self.bursts()
        await self.run_to_end()
        await self.histories()
        mb_in = sum(s.bytes_in for s in self.sessions)
        self.out(
            f"traffic: {sum(s.messages for s in self.sessions):,} messages to the protocol sessions ({mb(mb_in)}; "
            f"{sum(s.refs for s in self.sessions):,} of them references to cached ones)"
        )

    def start_browsers(self) -> None:
        """The browsers: their own process, loading their pages while the protocol sessions open."""
        args, specs = self.args, self.specs
        browser_specs = session_specs(len(specs) + args.browsers, args.merges, specs[0].corpus[0])[len(specs) :]
        if args.browsers:
            ctx = multiprocessing.get_context("spawn")
            self.results_q, self.go, self.go_at = ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
            self.worker = start_worker(
                self.res,
                ctx,
                browser_worker,
                (self.urls, browser_specs, self.results_q, self.go, self.go_at, args.seconds),
                "load-browsers",
            )

    async def open(self) -> None:
        """2. Open every session at once."""
        sessions = self.sessions
        opened = await open_all(sessions, self.left(OPEN_TIMEOUT), "the Train link")
        self.live = live = [s for s, t in zip(sessions, opened) if t is not None]
        bad_start = [s for s in live if s.status.step != 0]
        for s in bad_start:
            s.error(f"opened at step {s.status.step}, not 0")
        self.out(
            f"open: {len(live)} of {len(sessions)} sessions opened their Train link at once: "
            f"{spread([t for t in opened if t is not None])}  (RSS now {mb(self.monitor.rss())})"
        )
        if self.args.proxy:
            self.out(
                f"proxy: protocol sessions per server (haproxy's cookie): {per_server(s.server for s in sessions)}"
            )

    async def solo(self) -> None:
        """3. One session alone."""
        live, monitor = self.live, self.monitor
        c0, k0 = monitor.cpu(), client_cpu()
        for _ in range(SOLO_STEPS):
            await live[0].step("solo")
        solo = cpu_span(c0, monitor.cpu(), k0, client_cpu())
        solo_lat = live[0].latencies.get("solo", [])
        self.out(
            f"solo: one session stepping while the others wait: {spread(solo_lat)}; server CPU "
            f"{fmt_s(solo.server / max(1, len(solo_lat)))} per step"
        )
        self.res.solo_cpu = solo

    async def steady(self) -> None:
        """4. Steady, with the browsers alongside."""
        args, live, monitor, left = self.args, self.live, self.monitor, self.left
        start = time.monotonic() + 1.0
        if self.worker is not None:
            self.go_at.value = start
            self.go.set()
        skipped = 0

        async def steady(n: int, s: Session) -> None:
            nonlocal skipped
            for tick in range(args.seconds):
                at = start + n / len(live) + tick
                if time.monotonic() > at:
                    skipped += 1
                    continue
                await asyncio.sleep(at - time.monotonic())
                if time.monotonic() > args.deadline_at or await s.step("steady", left(STEP_TIMEOUT)) is None:
                    return

        await asyncio.sleep(max(0.0, start - time.monotonic() - 0.05))
        c0, k0 = monitor.cpu(), client_cpu()
        before = {id(s): s.status.step for s in live}
        await asyncio.gather(*(steady(n, s) for n, s in enumerate(live)))
        steady_cpu = cpu_span(c0, monitor.cpu(), k0, client_cpu())
        lat = [x for s in live for x in s.latencies.get("steady", [])]
        clicks = sum(s.sent.get("steady", 0) for s in live)
        shown = sum(s.status.step - before[id(s)] for s in live)
        self.out(
            f"steady {args.seconds} s: {len(live)} sessions each clicking Step once a second: {len(lat):,} steps "
            f"({len(lat) / steady_cpu.wall:.1f} a second), latency {spread(lat)}"
        )
        self.out(
            f"steady: steps shown {shown:,} of {clicks:,} clicked (wrong step shown: {sum(s.mismatches for s in live)}); "
            f"ticks skipped while a step was in flight: {skipped:,} of {len(live) * args.seconds:,}"
        )
        self.res.steady_p95 = pct(lat, 0.95) if lat else float("inf")
        self.res.steady_steps += len(lat)
        self.res.steady_cpu = steady_cpu

    async def browsers_done(self) -> None:
        """The browsers' results, once their steady phase is over."""
        browser_out = None
        if self.worker is not None:
            try:
                until = time.monotonic() + STEP_TIMEOUT * 2 + 30
                kind = None
                while kind != "done":  # a "ready" that came after its wait timed out may be first
                    kind, browser_out = await queue_get(self.results_q, self.left(until - time.monotonic()))
            except TimeoutError:
                self.errors.append("browsers: no results in time")
        if browser_out is None:
            return
        self.errors.extend(browser_out["errors"])
        b = browser_out
        self.out(
            f"browsers: {self.args.browsers} Chromium context(s) alongside, clicking Step once a second: {len(b['latencies'])} "
            f"steps, click to new step shown {spread(b['latencies'])}; steps shown {b['steps']} of {b['clicks']} clicked, "
            f"ticks skipped {b['skipped']}, page errors and exception boxes {len(b['errors'])}"
        )
        self.res.browser_cores = b["cpu"] / b["wall"] if b["wall"] else 0.0
        if self.args.proxy:
            self.out(f"proxy: browser contexts per server (haproxy's cookie): {per_server(b['servers'])}")
        self.res.steady_steps += len(b["latencies"])

    async def bursts(self) -> None:
        """5. Bursts: every session clicks Step at the same moment, the server idle before each."""
        args, live, left = self.args, self.live, self.left
        burst_lat, spreads = [], []
        c0 = self.monitor.cpu()
        for _ in range(args.bursts):
            await asyncio.sleep(2.0)
            if time.monotonic() > args.deadline_at - STEP_TIMEOUT:
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
            burst_cpu = cpu_span(c0, self.monitor.cpu(), 0.0, 0.0)
            self.out(
                f"burst x{len(spreads)}: all {len(live)} sessions click Step together (sent within "
                f"{fmt_s(max(spreads, default=0))}): latency {spread(burst_lat)}; server CPU "
                f"{fmt_s(burst_cpu.server / max(1, len(burst_lat)))} per step"
            )
            if max(spreads, default=0) > BURST_SPREAD_LIMIT:
                self.out(
                    f"burst: WARNING this load generator was slow: a burst's clicks left over {fmt_s(max(spreads))}, "
                    "not within 100 ms"
                )
        self.res.burst_p95 = pct(burst_lat, 0.95) if burst_lat else (float("inf") if args.bursts else 0.0)

    async def run_to_end(self) -> None:
        """6. Run to end, all together but a tenth of the sessions, which keep stepping once a
        second beside the others' heavy training (it takes turns in the app's heavy lane; a Step
        does not)."""
        live, left, deadline = self.live, self.left, self.args.deadline_at
        c0 = self.monitor.cpu()

        async def to_end(s: Session) -> float | None:
            return await s.run_to_end(self.refs[s.spec.index]["final"], left(RUN_TIMEOUT))

        n_beside = len(live) // 10
        runners, steppers = live[: len(live) - n_beside], live[len(live) - n_beside :]
        running = True

        async def step_beside(s: Session) -> None:
            while running and time.monotonic() < deadline - STEP_TIMEOUT:
                t0 = time.monotonic()
                if await s.step("beside", left(STEP_TIMEOUT)) is None:
                    return
                await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))

        beside_tasks = [asyncio.create_task(step_beside(s)) for s in steppers]
        ends = list(await asyncio.gather(*(to_end(s) for s in runners)))
        run_cpu = cpu_span(c0, self.monitor.cpu(), 0.0, 0.0)
        running = False
        await asyncio.gather(*beside_tasks)
        ends += await asyncio.gather(*(to_end(s) for s in steppers))
        done = [t for t in ends if t is not None]
        self.out(
            f"run to end: {len(runners)} sessions pressed Run to end together; {sum(1 for t in ends[: len(runners)] if t is not None)} "
            f"reached their last step (status 'training stopped'): {spread([t for t in ends[: len(runners)] if t is not None])}; "
            f"server CPU {fmt_s(run_cpu.server)} over {fmt_s(run_cpu.wall)}"
        )
        if steppers:
            beside = [x for s in steppers for x in s.latencies.get("beside", [])]
            self.out(
                f"beside the runs: {len(steppers)} other sessions clicking Step once a second meanwhile: {len(beside):,} "
                f"steps, latency {spread(beside)}; then they ran to the end too ({len(done)} of {len(live)} in all)"
            )

    async def histories(self) -> None:
        """7. Every session's history against the engine alone."""
        live, sessions = self.live, self.sessions
        histories = await asyncio.gather(*(s.full_history(self.left(HISTORY_TIMEOUT)) for s in live))
        leaks = leak_lines(live, histories, self.refs, self.specs)
        checked = sum(1 for r in histories if r is not None)
        self.res.leaks, self.res.unchecked = len(leaks), len(sessions) - checked
        self.out(
            f"history: {checked} of {len(sessions)} sessions' full history read from the page; identical to the engine "
            f"alone on their corpus and preset: {checked - len(leaks)}; leaks {len(leaks)}"
        )
        for line in leaks[:5]:
            self.out(f"    leak: {line}")


def leak_lines(
    live: list[Session], histories: list[list[tuple] | None], refs: list[dict], specs: list[Spec]
) -> list[str]:
    """A line for every session whose history (read, not None) differs from the engine's alone
    on its corpus and preset: whose history it is instead, or where it first differs."""
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
    return leaks


# ---- the command -------------------------------------------------------------------------------
def main(args) -> int:
    """The sessions run as ``bench/load.py`` runs it, its options checked (``check_args``): its
    lines printed (and stored with ``--write``); 1 when there were errors or leaks or the deadline
    passed, else 0."""
    t_start = time.monotonic()
    budget = args.deadline if args.deadline is not None else 600 + 3 * args.seconds
    args.deadline_at = t_start + budget
    watchdog(budget + 30)
    out, res = Printer(), Results()
    specs = session_specs(args.sessions, args.merges, args.corpus)
    _describe(args, out, specs)
    refs = _references(args, out, specs)
    log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
    monitor = None
    try:
        with contextlib.ExitStack() as stack:
            urls, monitor = _serve(args, out, res, stack, log)
            try:
                asyncio.run(bounded(run(args, out, res, specs, refs, urls, monitor), args.deadline_at))
            except TimeoutError:
                res.deadline_hit = True
                res.errors.append(f"the global deadline ({budget:.0f} s) passed; the run was cut short")
            monitor.stop()
    finally:
        stop_worker(res.worker)
    report_errors(out, res.errors, log)
    _verdicts(args, out, res, monitor)
    out(f"total {fmt_s(time.monotonic() - t_start)}")
    if args.write:
        write_section("load", "Classroom load (bench/load.py)", out.lines)
    return 1 if res.errors or res.leaks or res.unchecked or res.deadline_hit else 0


def check_args(args, error) -> None:
    """The sessions run's options, checked (``error``: argparse's, which exits); the defaults
    that depend on the scenario filled in."""
    args.browsers = 3 if args.browsers is None else args.browsers
    args.servers = 1 if args.servers is None else args.servers
    if any("=" not in o or o.startswith("-") for o in args.server_option):
        error("--server-option takes SECTION.OPTION=VALUE")
    if args.proxy and args.server_option:
        error("--server-option does not go with --proxy (the launcher runs the app with the repository's config)")
    if min(args.sessions, args.seconds, args.merges, args.servers) < 1 or min(args.bursts, args.browsers) < 0:
        error("--sessions, --seconds, --merges and --servers must be at least 1; --bursts and --browsers at least 0")
    if args.browsers and chromium_path() is None:
        error("Debian's chromium is not installed (apt-get install chromium); use --browsers 0")
    if not (SAMPLES / args.corpus).is_file() or not args.corpus.endswith(".txt"):
        error(f"--corpus: no bundled sample {args.corpus!r}")


def _describe(args, out: Printer, specs: list[Spec]) -> None:
    """The run's first lines: who connects to what, and the sessions' corpora."""
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


def _references(args, out: Printer, specs: list[Spec]) -> list[dict]:
    """1. The engine alone's merges for every session (and where a training stops short)."""
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
    return refs


def _serve(args, out: Printer, res: Results, stack: contextlib.ExitStack, log) -> tuple[list[str], ServerMonitor]:
    """The servers, started on ``stack`` (the launcher with ``--proxy``, else ``--servers`` app
    processes): the URLs the sessions are given in turn, and their monitor."""
    if args.proxy:
        url, monitor = serve_proxy(stack, args.servers, log, res.errors, out)
        return [url], monitor
    t0 = time.monotonic()
    server_args = tuple(x for o in args.server_option for x in (f"--{o.split('=', 1)[0]}", o.split("=", 1)[1]))
    servers = [
        stack.enter_context(app_process(timeout=120, log=log, extra_args=server_args)) for _ in range(args.servers)
    ]
    monitor = ServerMonitor([proc.pid for _, proc in servers])
    out(f"server: up in {fmt_s(time.monotonic() - t0)}; RSS baseline {mb(monitor.baseline)}")
    return [url for url, _ in servers], monitor


def _verdicts(args, out: Printer, res: Results, monitor: ServerMonitor | None) -> None:
    """The closing lines: the servers' memory and CPU, then each target met or missed."""
    errors, rss = res.errors, monitor.peak if monitor else 0
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
        out(_cpu_line(args, res))
    steady_p95, burst_p95 = res.steady_p95, res.burst_p95
    out(f"target 0 errors: {len(errors)} -> {verdict(not errors)}")
    out(
        f"target 0 leaks: {res.leaks}"
        + (f" ({res.unchecked} session(s) not checked)" if res.unchecked else "")
        + f" -> {verdict(res.leaks == 0 and res.unchecked == 0)}"
    )
    out(
        f"target steady p95 <= {fmt_s(TARGET_STEADY_P95)}: {or_none(steady_p95)} -> "
        f"{verdict(steady_p95 <= TARGET_STEADY_P95)}"
    )
    if args.bursts:
        out(
            f"target burst p95 <= {fmt_s(TARGET_BURST_P95)}: {or_none(burst_p95)} -> "
            f"{verdict(burst_p95 <= TARGET_BURST_P95)}"
        )
    out(f"target peak RSS < {TARGET_RSS_BYTES / 1024**3:.0f} GB: {mb(rss)} -> {verdict(rss < TARGET_RSS_BYTES)}")


def _cpu_line(args, res: Results) -> str:
    """The servers' CPU in the steady phase (haproxy's and the event loops' part), this client's
    and the browsers', and the servers' CPU per step."""
    solo, steady = res.solo_cpu, res.steady_cpu
    assert solo is not None and steady is not None
    return (
        f"CPU: server{'s + haproxy' if args.proxy else 's' if args.servers > 1 else ''} "
        f"{steady.cores(steady.server):.2f} cores of {os.cpu_count()} during the steady phase ("
        + (f"haproxy {steady.cores(steady.proxy):.2f}, " if args.proxy else "")
        + f"event-loop thread{'s' if args.servers > 1 else ''} {steady.cores(steady.server_main):.2f}, script runs the rest), "
        f"this client {steady.cores(steady.client):.2f}"
        + (f", the browsers {res.browser_cores:.2f}" if res.browser_cores is not None else "")
        + f"; server CPU per step: solo {fmt_s(solo.server / SOLO_STEPS)}, steady "
        f"{fmt_s(steady.server / max(1, res.steady_steps))} (browsers' steps included)"
    )
