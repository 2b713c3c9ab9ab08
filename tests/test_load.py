"""bench/load.py in a tiny configuration: a few protocol sessions and one Chromium context
step, burst, run to the end and compare their histories with the engine's, with 0 errors and
0 leaks (the full classroom run is ``python bench/load.py``)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from appserver import chromium_path
from conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

if chromium_path() is None:
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)


def test_a_small_classroom_steps_without_errors_or_leaks():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "load.py"), "--sessions", "3", "--seconds", "4", "--merges", "60",
         "--bursts", "1", "--browsers", "1", "--deadline", "100"],
        capture_output=True, text=True, timeout=150, cwd=ROOT,
    )
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, report
    assert re.search(r"^errors: 0$", proc.stdout, re.M), report
    assert "target 0 leaks: 0 -> met" in proc.stdout, report
    # every session's history was read and compared, and every click made exactly one step
    assert "3 of 3 sessions' full history read from the page; identical to the engine alone on their corpus and preset: 3" in proc.stdout, report
    assert re.search(r"^steady: steps shown (\d+) of \1 clicked \(wrong step shown: 0\)", proc.stdout, re.M), report
    assert re.search(r"^browsers: 1 Chromium .* steps shown (\d+) of \1 clicked", proc.stdout, re.M), report
    assert "run to end: 3 sessions pressed Run to end together; 3 reached their last step" in proc.stdout, report
