"""bench/load.py in a tiny configuration: a few protocol sessions and one Chromium context
step, burst, run to the end and compare their histories with the engine's, with 0 errors and
0 leaks (the full classroom run is ``python bench/load.py``), through ``python -m explorer serve
--servers 2`` (haproxy, sticky sessions): every check of a run on one server, plus the proxy's.
One run, not one per layout: the servers behind haproxy are the same app a single server is, and
each run costs about twenty seconds of the suite.

This checks what the run did, not how fast: each session waits for its step before it clicks
again, and every wait is bounded well past what a busy machine needs, so it runs with the rest
of the suite. The Class room's run is a timing (each student's page must show every one of the
teacher's steps, 2 s apart): it is a ``load`` test, run with no other test beside it but autoplay's pace."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from appserver import chromium_path
from conftest import ROOT

from explorer.errors import ExplorerError
from explorer.serving.serve import find_haproxy

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if chromium_path() is None:
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)


def run_bench(*args: str) -> subprocess.CompletedProcess:
    """bench/load.py with these options, bounded in time (its own --deadline is shorter)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load.py"), *args], capture_output=True, text=True, timeout=150, cwd=ROOT
    )


def require_haproxy() -> None:
    """Skip without Debian's haproxy, except in CI, where that is an error (.ci/run installs it)."""
    try:
        find_haproxy()
    except ExplorerError:
        if os.environ.get("CI"):
            raise RuntimeError("CI must install Debian's haproxy (see .ci/run)") from None
        pytest.skip("haproxy is not installed (apt-get install haproxy)")


# the smoke runs' corpora: Frankenstein (0.4 MB) plus a small sample each, not Tiny Shakespeare
# (1.1 MB): what they check (errors, leaks, histories, clicks shown) does not need the size
SMALL = ("--corpus", "english_frankenstein.txt")


def _smoke_run(sessions: int, *extra: str) -> tuple[str, str]:
    """A short load run of ``sessions`` protocol sessions and one browser; the checks every run
    passes: no error, no leak, every session's history read and equal to the engine's, every
    click one step. Returns (stdout, the whole report)."""
    proc = run_bench(
        *("--sessions", str(sessions), "--browsers", "1", "--seconds", "4", "--merges", "60"),
        *("--bursts", "1", "--deadline", "100", *SMALL, *extra),
    )
    out, report = proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert re.search(r"^errors: 0$", out, re.M), report  # a websocket off its page's server is one
    assert "target 0 leaks: 0 -> met" in out, report
    assert (
        f"{sessions} of {sessions} sessions' full history read from the page; identical to the engine alone on "
        f"their corpus and preset: {sessions}"
    ) in out, report
    assert re.search(r"^steady: steps shown (\d+) of \1 clicked \(wrong step shown: 0\)", out, re.M), report
    return out, report


def test_a_small_classroom_through_the_sticky_proxy_steps_without_errors_or_leaks():
    require_haproxy()
    out, report = _smoke_run(4, "--servers", "2", "--proxy")
    assert re.search(r"^browsers: 1 Chromium .* steps shown (\d+) of \1 clicked", out, re.M), report
    assert "run to end: 4 sessions pressed Run to end together; 4 reached their last step" in out, report
    # haproxy gave new sessions to the two servers in turn (the browser's first request may come
    # between two sessions'); the browser has a server too
    assert re.search(
        r"^proxy: protocol sessions per server \(haproxy's cookie\): app1 [1-3], app2 [1-3]$", out, re.M
    ), report
    assert re.search(r"^proxy: browser contexts per server \(haproxy's cookie\): app[12] 1$", out, re.M), report
    assert "server RSS (all servers and haproxy added up)" in out, report


@pytest.mark.load  # a step the students' pages miss in the 2 s before the next is an error
def test_a_small_class_follows_answers_once_and_sits_idle_without_errors():
    """``--class`` in a tiny room on SQLite: 3 protocol students and one Chromium student follow
    3 steps, the 3 answers are counted once each, the servers idle."""
    require_haproxy()
    proc = run_bench(
        "--class",
        "--store",
        "sqlite",
        "--students",
        "3",
        "--steps",
        "3",
        "--browsers",
        "1",
        "--idle-seconds",
        "3",
        "--deadline",
        "100",
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert re.search(r"^errors: 0$", proc.stdout, re.M), report
    assert (
        "the store counts 3 answers to question 1 (one per member: yes; each the option clicked: yes)" in proc.stdout
    ), report
    assert "target answers counted = answers sent, one per member: 3 of 3 sent -> met" in proc.stdout, report
    assert "never shown 0" in proc.stdout and "(3 of 3);" in proc.stdout, report  # every step on every page
