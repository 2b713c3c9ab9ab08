"""UI latency in a real browser: the app served locally, driven in headless Debian chromium.

Cold start, on a fresh server with the default corpus (Frankenstein, gpt2 preset sized for it):
the Home page's first load, the first visit to Train from the sidebar (until the step status
and the pair table show), and the first Step; then the same for a second browser session.

On english_tiny_shakespeare.txt with the gpt2 preset (vocab 5,000):
- the time from clicking Step to the history table showing the new row, and to the whole page
  redrawn (charts included), over 50 clicks (median and p95), and
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
TARGET_FIRST_TRAIN = 2.0
TARGET_FIRST_STEP = 0.5

# the history table's highlighted row shows the step just made
_HISTORY_ROW = """(n) => {
    const cell = document.querySelector('table.bpe-hist tr.bpe-now td');
    return cell !== null && cell.innerText.trim() === n.toLocaleString('en-US');
}"""


def _nav(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    wait_idle(page, timeout=120)


def _setup(page, url: str) -> None:
    """Tiny Shakespeare, gpt2 preset with vocab 5,000: a link to the Train page says it all."""
    page.goto(f"{url}/Train?corpus={CORPUS_NAME}&preset=gpt2&vocab={VOCAB}&step=0")
    wait_idle(page, timeout=120)
    status = page.get_by_text(re.compile(r"^Step 0 of 0")).inner_text()
    assert "Step 0 of 0" in status, status


def _cold_start(page, url: str) -> tuple[float, float, float]:
    """(Home load, first Train render from the sidebar, first Step) in seconds."""
    t0 = time.perf_counter()
    page.goto(url)
    wait_idle(page, settle=0.0, timeout=120)
    home = time.perf_counter() - t0
    t0 = time.perf_counter()
    page.locator('[data-testid="stSidebarNav"] a', has_text="Train").click()
    page.get_by_text(re.compile(r"^Step 0 of 0")).wait_for(timeout=120_000)
    page.locator("table.bpe-pairs tr").nth(1).wait_for(timeout=120_000)  # the pair table's first row
    train = time.perf_counter() - t0
    wait_idle(page, settle=0.0, timeout=120)
    t0 = time.perf_counter()
    page.get_by_role("button", name="Step", exact=True).click()
    page.wait_for_function(_HISTORY_ROW, arg=1, polling="raf", timeout=30_000)
    return home, train, time.perf_counter() - t0


def _step_latencies(page, clicks: int) -> tuple[list[float], list[float]]:
    """Per click: (seconds until the new history row shows, seconds until the page is idle:
    every panel and chart redrawn)."""
    step = page.get_by_role("button", name="Step", exact=True)
    row, done = [], []
    for i in range(1, clicks + 1):
        t0 = time.perf_counter()
        step.click()
        page.wait_for_function(_HISTORY_ROW, arg=i, polling="raf", timeout=30_000)
        row.append(time.perf_counter() - t0)
        wait_idle(page, settle=0.0)
        done.append(time.perf_counter() - t0)
        time.sleep(0.05)
    return row, done


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


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
    with serve_app() as url:
        for session in ("first session of a fresh server", "second session"):
            with browser_page(width=1280, height=720) as page:
                home, train, step = _cold_start(page, url)
            met = train <= TARGET_FIRST_TRAIN and step <= TARGET_FIRST_STEP
            out(f"ui cold start, {session}: Home {fmt_s(home)}, first Train render {fmt_s(train)}, first Step {fmt_s(step)}  "
                f"(targets Train <= {fmt_s(TARGET_FIRST_TRAIN)}, Step <= {fmt_s(TARGET_FIRST_STEP)}: {'met' if met else 'MISSED'})")
    with serve_app() as url, browser_page() as page:
        _setup(page, url)
        row, done = _step_latencies(page, args.clicks)
        p95 = _p95(row)
        out(f"ui step  {CORPUS_NAME}, gpt2 preset, {args.clicks} clicks, to the new history row: median "
            f"{fmt_s(statistics.median(row))}  p95 {fmt_s(p95)}  max {fmt_s(max(row))}  "
            f"(target p95 <= {fmt_s(TARGET_STEP_P95)}: {'met' if p95 <= TARGET_STEP_P95 else 'MISSED'})")
        out(f"ui step  to every panel and chart redrawn (page idle): median {fmt_s(statistics.median(done))}  "
            f"p95 {fmt_s(_p95(done))}  max {fmt_s(max(done))}")
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
