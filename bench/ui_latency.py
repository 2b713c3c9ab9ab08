"""UI latency in a real browser: the app served locally, driven in headless Debian chromium.

On english_tiny_shakespeare.txt with the gpt2 preset (vocab 5,000):
- the time from clicking Step to the history table showing the new row, over 50 clicks
  (median and p95), and
- the time from clicking "Run to end" to the final chart being drawn.

    python bench/ui_latency.py [--clicks 50] [--write]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time

from _common import CORPUS_NAME, ROOT, Printer, fmt_s, write_section

sys.path.insert(0, str(ROOT / "tests"))
from appserver import browser_page, serve_app, wait_idle  # noqa: E402

VOCAB = 5000
TARGET_STEP_P95 = 0.250
TARGET_RUN = 3.0

# the history table's highlighted row shows the step just made
_HISTORY_ROW = """(n) => {
    const cell = document.querySelector('table.bpe-hist tr.bpe-now td');
    return cell !== null && cell.innerText.trim() === n.toLocaleString('en-US');
}"""


def _nav(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    wait_idle(page, timeout=120)


def _setup(page) -> None:
    """Corpus: Tiny Shakespeare only; preset gpt2 with vocab 5,000."""
    _nav(page, "Corpus")
    box = page.locator('[data-testid="stMultiSelect"]')
    box.locator("input").click()
    page.keyboard.type(CORPUS_NAME)
    page.keyboard.press("Enter")
    wait_idle(page, timeout=120)
    page.keyboard.press("Escape")
    box.get_by_role("button", name=re.compile("english_frankenstein")).click()
    wait_idle(page, timeout=120)
    _nav(page, "Train")
    page.get_by_text("Advanced settings").click()
    amount = page.get_by_label("Vocab size / merges")
    amount.fill(str(VOCAB))
    page.get_by_role("button", name="Apply and restart training").click()
    wait_idle(page, timeout=120)
    status = page.get_by_text(re.compile(r"^Step 0 of 0")).inner_text()
    assert "Step 0 of 0" in status, status


def _step_latencies(page, clicks: int) -> list[float]:
    step = page.get_by_role("button", name="Step", exact=True)
    out = []
    for i in range(1, clicks + 1):
        t0 = time.perf_counter()
        step.click()
        page.wait_for_function(_HISTORY_ROW, arg=i, polling="raf", timeout=30_000)
        out.append(time.perf_counter() - t0)
        wait_idle(page, settle=0.05)
    return out


def _run_to_end(page) -> float:
    t0 = time.perf_counter()
    page.get_by_role("button", name="Run to end").click()
    page.get_by_text(re.compile("training stopped")).wait_for(timeout=120_000)
    page.locator('[data-testid="stVegaLiteChart"]').first.locator("canvas, svg").first.wait_for(state="visible")
    wait_idle(page, settle=0.0, timeout=120)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=50)
    parser.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    args = parser.parse_args()
    out = Printer()
    with serve_app() as url, browser_page() as page:
        page.goto(url)
        wait_idle(page, timeout=120)
        _setup(page)
        lat = sorted(_step_latencies(page, args.clicks))
        p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
        out(f"ui step  {CORPUS_NAME}, gpt2 preset, {args.clicks} clicks: median {fmt_s(statistics.median(lat))}  "
            f"p95 {fmt_s(p95)}  max {fmt_s(lat[-1])}  (target p95 <= {fmt_s(TARGET_STEP_P95)}: {'met' if p95 <= TARGET_STEP_P95 else 'MISSED'})")
        run = _run_to_end(page)
        status = page.get_by_text(re.compile(r"^Step \d[\d,]* of")).inner_text()
        out(f"ui run-to-end vocab {VOCAB:,}: {fmt_s(run)} from click to final chart ({status.split(' · ')[0]})  "
            f"(target <= {fmt_s(TARGET_RUN)}: {'met' if run <= TARGET_RUN else 'MISSED'})")
        if page.errors:
            out(f"page errors: {page.errors}")
    if args.write:
        write_section("ui_latency", "UI latency (bench/ui_latency.py)", out.lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
