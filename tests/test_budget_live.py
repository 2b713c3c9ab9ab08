"""The memory probes against a live server: three browsers ask, at once, for byte-level BPE without
pre-tokenization "until no pair is left" with pairs met once merged too (two by a link to step
200,000, one by *Run to end*). Unbounded, each takes gigabytes within seconds (its last merges join
tokens tens of thousands of characters long). Each page must show the budget's sentence, with no
exception element and no traceback in the server's log, and the server's resident memory, sampled
all along and read at its high-water mark after, must stay under its ceiling.

The server runs at smaller budgets than the defaults (96 MiB a session instead of 256,
a ceiling of 832 MiB instead of 1,536, over the server's own ~350 MiB): the same three sentences and
the same room under the ceiling, for a third of the training each probe does before its sentence.
"""

from __future__ import annotations

import os
import re
import threading

import pytest
from appserver import app_process, require_chromium, wait_idle

from explorer.settings import default_number

pytestmark = pytest.mark.browser

require_chromium()

SESSION_MIB, SERVER_MIB = 96, 832
assert SESSION_MIB < default_number("BPE_EXPLORER_SESSION_TRAIN_MIB") and SERVER_MIB < default_number(
    "BPE_EXPLORER_SERVER_MIB"
)
CEILING = SERVER_MIB * 2**20
PROBE = {"preset": "bytes", "merges": "200000", "min_frequency": "0"}
LINKS = [
    {"corpus": "udhr_zh_hans.txt,udhr_ja.txt,udhr_ko.txt,udhr_hi.txt", **PROBE, "step": "200000"},
    {"corpus": "udhr_ar.txt,udhr_el.txt,udhr_ru.txt,udhr_en.txt", **PROBE, "step": "200000"},
]
RUN_TO_END = {"corpus": "udhr_hi.txt,udhr_el.txt,udhr_ru.txt", **PROBE}
STOPPED = re.compile(r"Training stopped after [\d,]+ merges")


def memory_kib(pid: int, field: str) -> int:
    """A line of the process's /proc status (VmRSS: now, VmHWM: its high-water mark), in KiB."""
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(rf"{field}:\s+(\d+) kB", f.read()).group(1))


class Watch(threading.Thread):
    """Samples a process's resident memory every 50 ms; stops the process at once when it passes
    ``limit`` (an unbounded training would otherwise take the machine's memory before the test
    could say so)."""

    def __init__(self, proc, limit: int):
        super().__init__(daemon=True)
        self.proc, self.limit, self.peak, self.passed = proc, limit, 0, False
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            try:
                rss = memory_kib(self.proc.pid, "VmRSS") * 1024
            except (OSError, AttributeError):
                return
            self.peak = max(self.peak, rss)
            if rss > self.limit:
                self.passed = True
                self.proc.kill()
                return


def url_of(base: str, params: dict[str, str]) -> str:
    return base + "/Train?" + "&".join(f"{k}={v}" for k, v in params.items())


def test_three_memory_probes_at_once_get_a_sentence_each_and_the_server_stays_under_its_ceiling(new_page, tmp_path):
    log_path = tmp_path / "server.log"
    env = {**os.environ, "BPE_EXPLORER_SESSION_TRAIN_MIB": str(SESSION_MIB), "BPE_EXPLORER_SERVER_MIB": str(SERVER_MIB)}
    with open(log_path, "w") as log, app_process(log=log, env=env) as (url, proc):
        watch = Watch(proc, CEILING)
        watch.start()
        try:
            with (
                new_page(width=1280, height=720, isolated=True) as a,
                new_page(width=1280, height=720, isolated=True) as b,
                new_page(width=1280, height=720, isolated=True) as c,
            ):
                c.goto(url_of(url, RUN_TO_END))
                wait_idle(c, timeout=90, settle=0, until=c.get_by_role("button", name="Run to end"))
                c.get_by_role("button", name="Run to end").click()
                for page, params in zip((a, b), LINKS):
                    page.goto(url_of(url, params))
                for page in (a, b, c):
                    try:
                        wait_idle(page, timeout=120, settle=0, until=page.get_by_text(STOPPED))
                    finally:
                        assert not watch.passed, f"the server passed its ceiling: {watch.peak / 2**20:,.0f} MiB"
                    assert page.locator('[data-testid="stException"]').count() == 0
                    assert not page.errors
                    # the status line says where the training stopped, far short of what was asked
                    status = page.get_by_text(re.compile(r"^Step [\d,]+ of [\d,]+ trained")).first.inner_text()
                    stopped = int(
                        STOPPED.search(page.get_by_text(STOPPED).first.inner_text())
                        .group(0)
                        .split()[3]
                        .replace(",", "")
                    )
                    assert status.startswith(f"Step {stopped:,} of {stopped:,} trained") and stopped < 200_000
        finally:
            watch.done.set()
            watch.join(5)
            high_water = memory_kib(proc.pid, "VmHWM") * 1024 if proc.poll() is None else None
    print("PEAK", watch.peak // 2**20, "HWM", high_water // 2**20 if high_water else None)
    assert not watch.passed, f"the server passed its ceiling: {watch.peak / 2**20:,.0f} MiB"
    assert high_water is not None and high_water < CEILING, f"VmHWM {high_water / 2**20:,.0f} MiB"
    text = log_path.read_text(errors="replace")
    assert "Traceback" not in text and "Uncaught app exception" not in text
