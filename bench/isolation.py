"""One student cannot hurt the class: 10 sessions click Step once a second while one session
opens a 19 MiB upload and trains it to the end (no step records) and another runs a Compare of
six corpora; the steppers' latency, beside the same steppers on a quiet server measured in the
same run, and the memory of the server process and of its worker processes.

The sessions speak Streamlit's own protocol (bench/load.py's ``Session``, in
``bench/loadgen/client.py``); the big upload is put in a fresh store first and opened by its link
(``corpus=upload:<sha256>&big=final``), as a student's shared link would; the Compare opens in
headless Chromium by its link and is timed to its headlines.

    python bench/isolation.py [--seconds 60] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
from _common import ROOT, SAMPLES, Printer, fmt_s, write_section
from loadgen.client import STEP_TIMEOUT, Session
from loadgen.report import pct, spread
from loadgen.specs import session_specs

sys.path.insert(0, str(ROOT / "tests"))
from appserver import app_process, browser_page, wait_idle  # noqa: E402

TARGET_P95 = 0.5
TARGET_MAX = 1.5
TARGET_RSS = 1024**3
BIG_MIB = 19
STEPPERS = 10
COMPARED = (
    "english_tiny_shakespeare.txt",
    "english_frankenstein.txt",
    "english_wikitext2_excerpt.txt",
    "udhr_en.txt",
    "udhr_hi.txt",
    "udhr_ko.txt",
)


@dataclass(frozen=True)
class LinkSpec:
    """A session opened by any Train link (Session reads index, label and query)."""

    index: int
    label: str
    query: str


def big_corpus() -> bytes:
    """19 MiB of every bundled sample in turn (many scripts, a realistic vocabulary)."""
    blob = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt"))).encode()
    return (blob * (BIG_MIB * 2**20 // len(blob) + 1))[: BIG_MIB * 2**20].decode("utf-8", "ignore").encode()


class Memory:
    """The peak resident memory of a process and, separately, of its children (the workers)."""

    def __init__(self, pid: int):
        self.proc = psutil.Process(pid)
        self.server = 0
        self.workers: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            try:
                self.server = max(self.server, self.proc.memory_info().rss)
                for child in self.proc.children(recursive=True):
                    try:
                        self.workers[child.pid] = max(self.workers.get(child.pid, 0), child.memory_info().rss)
                    except psutil.Error:
                        pass
            except psutil.Error:
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


async def stepping(sessions: list[Session], seconds: int, phase, *, until=None) -> None:
    """Each session clicks Step once a second for ``seconds`` (or until ``until()`` holds); a
    step's latency is kept under ``phase()`` as of its click."""
    start = time.monotonic() + 0.5

    async def one(n: int, s: Session) -> None:
        for tick in range(seconds):
            if until is not None and until():
                return
            at = start + n / len(sessions) + tick
            if time.monotonic() < at:
                await asyncio.sleep(at - time.monotonic())
            elif tick:
                continue  # still waiting for the last step: the next tick is skipped
            if await s.step(phase(), STEP_TIMEOUT) is None:
                return

    await asyncio.gather(*(one(n, s) for n, s in enumerate(sessions)))


def latencies(sessions: list[Session], phase: str) -> list[float]:
    return [x for s in sessions for x in s.latencies.get(phase, [])]


def compare_in_browser(url: str, result: dict) -> None:
    query = "compare=" + ",".join(COMPARED) + "&compare_merges=1000"
    with browser_page(width=1280, height=720) as page:
        t0 = time.monotonic()
        page.goto(f"{url}/Compare?{query}")
        wait_idle(page, timeout=600, settle=0, until=page.locator(".bpe-card-panel", has_text="Parity"))
        result["compare"] = time.monotonic() - t0


async def scenario(url: str, digest: str, seconds: int, out: Printer, errors: list[str]) -> None:
    specs = session_specs(STEPPERS, 1000)
    steppers = [Session(spec, url, errors) for spec in specs]
    await asyncio.gather(*(s.open(240) for s in steppers))
    await stepping(steppers, min(seconds, 20), lambda: "quiet")
    quiet = latencies(steppers, "quiet")
    out(
        f"quiet: {STEPPERS} sessions clicking Step once a second, nothing else: {len(quiet)} steps, latency {spread(quiet)}"
    )

    big = Session(LinkSpec(99, "19 MiB upload", f"corpus=upload:{digest}&preset=gpt2&big=final"), url, errors)
    result: dict = {}
    browser = threading.Thread(target=compare_in_browser, args=(url, result), daemon=True)
    t0 = time.monotonic()

    async def open_big() -> None:
        await big.open(600)
        result["big"] = time.monotonic() - t0

    big_task = asyncio.create_task(open_big())
    browser.start()
    # the steps clicked while either heavy job runs are the ones that count
    await stepping(
        steppers,
        seconds,
        lambda: "after" if {"big", "compare"} <= result.keys() else "busy",
        until=lambda: {"big", "compare"} <= result.keys(),
    )
    await big_task
    await asyncio.to_thread(browser.join, 600)
    busy = latencies(steppers, "busy")
    ok = pct(busy, 0.95) <= TARGET_P95 and max(busy) <= TARGET_MAX
    out(
        f"busy: the same {STEPPERS} sessions while one opens a {BIG_MIB} MiB upload and trains it to the end "
        f"(done in {fmt_s(result.get('big', float('nan')))}, status: {big.status.text if big.status else None}) and "
        f"another compares six corpora (headlines in {fmt_s(result.get('compare', float('nan')))}): {len(busy)} steps "
        f"clicked while either ran, latency {spread(busy)}  (target p95 <= {fmt_s(TARGET_P95)}, max <= {fmt_s(TARGET_MAX)}: "
        f"{'met' if ok else 'MISSED'})"
    )
    for s in (*steppers, big):
        await s.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    args = parser.parse_args()
    out = Printer()
    errors: list[str] = []
    with tempfile.TemporaryDirectory() as data:
        os.environ["BPE_EXPLORER_DATA"] = data
        from explorer.serving.store import default_store

        digest = default_store().put(big_corpus(), kind="upload", name="big.txt", owner="bench")
        with open(Path(data) / "server.log", "w") as log, app_process(log=log) as (url, proc):
            memory = Memory(proc.pid)
            asyncio.run(scenario(url, digest, args.seconds, out, errors))
            memory.stop()
        tracebacks = (Path(data) / "server.log").read_text(errors="replace").count("Traceback")
    workers = sorted(memory.workers.values(), reverse=True)
    out(
        f"memory: server process peak RSS {memory.server / 2**20:,.0f} MB (target < {TARGET_RSS / 2**20:,.0f} MB: "
        f"{'met' if memory.server < TARGET_RSS else 'MISSED'}); worker processes' peaks "
        + (", ".join(f"{w / 2**20:,.0f} MB" for w in workers[:4]) or "none")
        + f" ({len(workers)} child processes seen)"
    )
    out(f"errors: {len(errors)}; tracebacks in the server log: {tracebacks}")
    for line in errors[:10]:
        out(f"  {line}")
    if args.write:
        write_section("isolation", "One student cannot hurt the class (bench/isolation.py)", out.lines)
    return 0 if not errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
