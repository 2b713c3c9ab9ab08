"""UI latency in a real browser (headless Debian chromium), each figure beside its reference
measured in the same run:

- the reference: a one-button Streamlit app (bench/one_button_app.py) on a fresh server: its
  first page load after the server started, and the time from a click to the text it changes;
  and the floor under a Step (bench/step_floor_app.py): a fragment redrawing the same kinds of
  element as the Step fragment with no work behind them, to tell Streamlit's cost from ours; and
  a plain page with no server behind it, a click and the → key on it: the floor of this timing;
- the first visit of each page after a server start (a fresh server per page, its start-up
  warm-up done: ``/warm`` says ready), until the page's answer is drawn (Home: the miniature's
  words; Corpus: the size strip; Train: the first pair row; Playground: the comparison's rows;
  Compare: its form; looked for again at each change of the page) and the app is idle; in
  ``--rounds`` rounds (5), each round the one-button page's first load and then every page's, the
  medians compared (one load of each moved the ratios by 0.2 from run to run: the one-button page
  alone took 1.2 to 2.1 s; three rounds still moved them by 0.1);
- Step on the Train page (english_frankenstein, gpt2 preset): from the click to the stepper
  drawing the new step (``explorer/ui/stepper.py``: no rerun), p95 against the one-button app's
  click p95; the same for the → key;
- Play at its fastest speed: merges drawn per second, and whether any step was skipped; Space to
  pause, until the Play button is back;
- a link to step 500 opened in a new browser session, until the stepper draws step 500 (and
  until the app is idle, the steps around it sent): the first session (which trains) and the
  next (which copies the shared trainer), against the one-button app's page load;
- a drag of the slider across 500 steps (once the window sent ahead holds them): the step's
  panels redrawn per second;
- a cold Compare of the UDHR English, Hindi and Korean texts (default settings) on a fresh,
  warmed-up server, from the press until the headlines are drawn and the app is idle;
- a page's code (the files its document names) over six kept-alive connections, as a browser
  fetches it: from our server and from the one-button app's (Streamlit's own socket settings,
  its files uncompressed): the time and the bytes;
- loading the bundled tables against tiktoken building an Encoding of the same files
  (bench/tables.py, fresh processes).

Times from a click to what it draws are measured in the page, from the input event (the click's
pointerdown, a key's keydown) to the frame that shows what it changes (a requestAnimationFrame poll
of the one element the action changes), not by Playwright's text search, which itself costs the
page CPU on every poll.

    python bench/ui_latency.py [--clicks 40] [--rounds 5] [--write]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse
import urllib.request

from _common import BENCH_DIR, ROOT, Printer, fmt_s, write_section

sys.path.insert(0, str(ROOT / "tests"))
from appserver import app_process, browser_page, look_until, wait_idle  # noqa: E402

from explorer.ui.assets import named_files  # noqa: E402

TARGET_STEPPER_RATIO = 0.5  # Step (or a key) p95 / one-button click p95
TARGET_PLAY = 20  # merges drawn per second at Play's fastest speed
TARGET_DRAG = 30  # redraws per second while the slider is dragged
TARGET_LINK_RATIO = 1.3  # a link to step 500 drawn / one-button page load
TARGET_FIRST_VISIT = 1.5  # seconds (the first visits' own target)
TARGET_FIRST_VISIT_RATIO = 1.3  # a first visit / the one-button page's first load (issue 36)
TARGET_COMPARE = 1.5

# Resolves with the milliseconds until ``test`` (a predicate over the document) holds, polled
# once a frame. Started just before the action; awaited after it.
_ARM = """([kind, arg]) => {
  const tests = {
    p: (doc) => [...doc.querySelectorAll('[data-testid="stMarkdownContainer"] p')].some((p) => p.textContent.startsWith(arg)),
    button: (doc) => [...doc.querySelectorAll('button')].some((b) => b.offsetParent !== null && b.innerText.trim() === arg),
    css: (doc) => doc.querySelector(arg) !== null,
  };
  const test = tests[kind];
  // from the input event itself (the click's pointerdown, a key's keydown), not from before
  // Playwright's own checks that precede it: what the person waits for, the same for every app here
  let t0 = performance.now();
  let pressed = false;  // the first of them: a press's pointerdown comes before its mousedown
  for (const type of ["pointerdown", "mousedown", "keydown"]) {
    window.addEventListener(type, () => { if (!pressed) { pressed = true; t0 = performance.now(); } }, {once: true, capture: true});
  }
  window.__bench = new Promise((resolve) => {
    const poll = () => test(document) ? resolve(performance.now() - t0) : requestAnimationFrame(poll);
    requestAnimationFrame(poll);
  });
  return true;
}"""


def timed_action(page, action, kind: str, arg: str) -> float:
    """Seconds from just before ``action()`` until the page shows what ``kind``/``arg`` name."""
    page.evaluate(_ARM, [kind, arg])
    action()
    return page.evaluate("() => window.__bench") / 1000


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def spread(values: list[float]) -> str:
    return f"median {fmt_s(statistics.median(values))}  p95 {fmt_s(p95(values))}  max {fmt_s(max(values))}"


def met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def wait_warm(url: str, timeout: float = 120.0) -> float:
    """Seconds until the server's start-up warm-up reports ready."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        with contextlib.suppress(OSError, ValueError):
            with urllib.request.urlopen(f"{url}/warm", timeout=5) as r:
                if json.loads(r.read()).get("ready"):
                    return time.monotonic() - t0
        time.sleep(0.1)
    raise TimeoutError("the server did not finish warming up")


def new_page(page):
    """A fresh browser session (a new context) in the same browser."""
    context = page.context.browser.new_context(viewport={"width": 1280, "height": 720})
    fresh = context.new_page()
    fresh.errors = []
    fresh.on("pageerror", lambda e: fresh.errors.append(str(e)))
    return fresh


def first_visit(page, url: str, ready) -> float:
    """Seconds from opening ``url`` in a fresh session until ``ready`` is drawn and the app idle."""
    return first_visit_times(page, url, ready)[1]


def first_visit_times(page, url: str, ready) -> tuple[float, float]:
    """Seconds from opening ``url`` in a fresh session until ``ready`` is drawn, and until the app
    is idle after it."""
    fresh = new_page(page)
    try:
        t0 = time.perf_counter()
        fresh.goto(url)
        # looked for again at each change of the page (``look_until``): Playwright's own wait looks
        # again after 0.1, 0.25, 0.5 s and then every 0.5 s, and put up to half a second, at random,
        # on a first visit that takes two (on the one-button page's as on ours)
        look_until(fresh, ready(fresh).first, "visible", 120)
        drawn = time.perf_counter() - t0
        wait_idle(fresh, settle=0, timeout=120)
        return drawn, time.perf_counter() - t0
    finally:
        fresh.context.close()


def click_times(page, button, clicks: int, shows) -> list[float]:
    """Seconds from each of ``clicks`` clicks to the paragraph ``shows(i)`` starts with (click i)."""
    times = []
    for i in range(1, clicks + 1):
        times.append(timed_action(page, button.click, "p", shows(i)))
        wait_idle(page, settle=0)
    return times


def reference(out: Printer, clicks: int) -> tuple[float, float]:
    """(first page load, click p95) of the one-button app."""
    with (
        app_process(script=BENCH_DIR / "one_button_app.py") as (url, _proc),
        browser_page(width=1280, height=720) as page,
    ):
        load = first_visit(page, url, lambda p: p.get_by_text("Clicked 0 times"))
        again = first_visit(page, url, lambda p: p.get_by_text("Clicked 0 times"))
        page.goto(url)
        page.get_by_text("Clicked 0 times").wait_for()
        wait_idle(page, settle=0)
        times = click_times(page, page.get_by_role("button", name="Click"), clicks, lambda i: f"Clicked {i} times")
    out(
        f"reference one-button Streamlit app: first page load after its server started {fmt_s(load)} (next session "
        f"{fmt_s(again)}); click -> its text, {clicks} clicks: {spread(times)}"
    )
    return load, p95(times)


def step_floor(out: Printer, clicks: int, ref_click: float) -> None:
    """The Step fragment's elements with no work behind them, against the one-button app."""
    with (
        app_process(script=BENCH_DIR / "step_floor_app.py") as (url, _proc),
        browser_page(width=1280, height=720) as page,
    ):
        page.goto(url)
        page.get_by_text("Step 0 of 0").wait_for(timeout=120_000)
        wait_idle(page, settle=0)
        times = click_times(
            page, page.get_by_role("button", name="Step", exact=True), clicks, lambda i: f"Step {i:,} of {i:,}"
        )
    out(
        f"floor under a Step (the same elements, no work): click -> status, {clicks} clicks: {spread(times)}; "
        f"ratio p95 {p95(times) / ref_click:.2f} against the one-button app"
    )


# a page with no Streamlit behind it: a button whose click changes a text (and redraws a table
# the size of a step's panels), the floor of this way of timing (a change shows at the next frame)
_PLAIN = """<html><body><button>Step</button><p id="o">Step 0</p><div id="t"></div><script>
let k = 0;
const step = () => {
  k += 1; const o = document.getElementById("o"); o.textContent = "Step " + k; o.dataset.k = k;
  document.getElementById("t").innerHTML = ("<table>" + "<tr><td>" + k + "</td><td>a row of a panel</td></tr>".repeat(60) + "</table>").repeat(3);
};
const button = document.querySelector("button");
button.addEventListener("click", step);
button.addEventListener("keydown", (ev) => { if (ev.key === "ArrowRight") { ev.preventDefault(); step(); } });
</script></body></html>"""


def plain_floor(out: Printer, clicks: int, ref_click: float) -> None:
    """A click, and the → key, on a page with no server behind it, timed as every click and key
    here is: the step a frame takes is the floor under both (a key comes at any moment of a frame,
    a click shortly after one: Playwright moves the pointer there first, and a move waits for a
    frame)."""
    with browser_page(width=1280, height=720) as page:
        page.set_content(_PLAIN)
        button = page.get_by_role("button", name="Step")
        times = [timed_action(page, button.click, "css", f'#o[data-k="{i}"]') for i in range(1, clicks + 1)]
        button.focus()
        keys = [
            timed_action(page, lambda: page.keyboard.press("ArrowRight"), "css", f'#o[data-k="{clicks + i}"]')
            for i in range(1, clicks + 1)
        ]
    out(
        f"floor of this timing (a plain page, no server: click -> its text, shown at the next frame), {clicks} clicks: "
        f"{spread(times)}; ratio p95 {p95(times) / ref_click:.2f} against the one-button app; the → key, {clicks} "
        f"presses: {spread(keys)}; ratio p95 {p95(keys) / ref_click:.2f}"
    )


PAGES = {
    "Home": ("/", lambda p: p.locator(".bpe-row")),
    "Corpus": ("/Corpus", lambda p: p.locator(".bpe-stat-value")),
    "Train": ("/Train", lambda p: p.locator("table.bpe-pairs tr").nth(1)),
    "Playground": ("/Playground", lambda p: p.locator("table.bpe-cmp tr[data-name]").nth(1)),
    "Compare": ("/Compare", lambda p: p.get_by_role("button", name="Compare", exact=True)),
}


def first_visits(out: Printer, rounds: int) -> float:
    """Each page's first visit after a server start and the one-button page's first load, in
    ``rounds`` interleaved rounds; returns the one-button page's median."""
    seconds: dict[str, list[float]] = {"one-button": [], **{name: [] for name in PAGES}}
    warmed: dict[str, list[float]] = {name: [] for name in PAGES}
    for _ in range(rounds):
        with (
            app_process(script=BENCH_DIR / "one_button_app.py") as (url, _proc),
            browser_page(width=1280, height=720) as page,
        ):
            seconds["one-button"].append(first_visit(page, url, lambda p: p.get_by_text("Clicked 0 times")))
        for name, (path, ready) in PAGES.items():
            with app_process() as (url, _proc), browser_page(width=1280, height=720) as page:
                warmed[name].append(wait_warm(url))
                seconds[name].append(first_visit(page, url + path, ready))
    ref = statistics.median(seconds["one-button"])
    each = lambda values: ", ".join(fmt_s(v) for v in values)  # noqa: E731
    out(
        f"first visits after a server start, {rounds} rounds (each: the one-button page's first load, then every "
        f"page's), medians: one-button page {fmt_s(ref)} ({each(seconds['one-button'])})"
    )
    for name in PAGES:
        median = statistics.median(seconds[name])
        out(
            f"ui first visit {name:<10} after a server start (warmed up in {fmt_s(statistics.median(warmed[name]))}): "
            f"{fmt_s(median)} ({each(seconds[name])})  (target <= {fmt_s(TARGET_FIRST_VISIT)}: "
            f"{met(median <= TARGET_FIRST_VISIT)}); ratio {median / ref:.2f}  "
            f"(target <= {TARGET_FIRST_VISIT_RATIO}: {met(median <= TARGET_FIRST_VISIT_RATIO * ref)})"
        )
    return ref


_DRAWN = '.sp-root[data-drawn="{}"]'  # the stepper has drawn this step from an entry it holds
# every step the stepper draws from now on, with the time (a MutationObserver on its root)
_RECORD = """() => {
  const root = document.querySelector('.sp-root');
  window.__draws = [];
  new MutationObserver(() => {
    const k = Number(root.dataset.drawn), seen = window.__draws;
    if (root.dataset.drawn && (!seen.length || seen[seen.length - 1][1] !== k)) seen.push([performance.now(), k]);
  })
    .observe(root, {attributes: true, attributeFilter: ['data-draws']});
}"""


# Drag the stepper's slider from one step to another, a step a frame (as a pointer dragged across
# the track sends its moves); resolves with the milliseconds from the first move to the last draw.
_DRAG = """async ([from, to]) => {
  const slider = document.querySelector('.sp-slider'), by = from < to ? 1 : -1;
  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const t0 = performance.now();
  for (let k = from; k !== to + by; k += by) {
    slider.value = String(k);
    slider.dispatchEvent(new Event('input', {bubbles: true}));
    await frame();
  }
  return performance.now() - t0;
}"""


def stepper_times(page, action, clicks: int, start: int, by: int = 1) -> list[float]:
    """Seconds from each of ``clicks`` actions to the stepper drawing the step it moves to."""
    times = []
    for i in range(1, clicks + 1):
        times.append(timed_action(page, action, "css", _DRAWN.format(start + by * i)))
        wait_idle(page, settle=0)  # as the one-button app's clicks: each on a page done with the last
    return times


def holds(page, lo: int, hi: int) -> None:
    """Wait until the stepper holds every step from lo to hi (the server sends the window ahead)."""
    page.wait_for_function(
        f"() => {{ const r = document.querySelector('.sp-root'); return r && JSON.parse(r.dataset.held || '[]')"
        f".some(([a, b]) => a <= {lo} && b >= {hi}); }}",
        timeout=180_000,
        polling=250,
    )


def train_page(out: Printer, clicks: int, ref_click: float, ref_load: float) -> None:
    with app_process() as (url, _proc), browser_page(width=1280, height=720) as page:
        wait_warm(url)
        # Step: from the click to the stepper drawing the new step
        page.goto(f"{url}/Train?step=0")
        page.locator(_DRAWN.format(0)).wait_for(timeout=120_000)
        wait_idle(page, settle=0)
        holds(page, 0, clicks + 1)
        step = page.locator(".sp-root").get_by_role("button", name="Step", exact=True)
        steps = stepper_times(page, step.click, clicks, 0)
        ratio = p95(steps) / ref_click
        out(
            f"ui step  english_frankenstein, gpt2 preset, {clicks} clicks, click -> step drawn: {spread(steps)}; "
            f"one-button p95 {fmt_s(ref_click)}; ratio p95 {ratio:.2f}  (target <= {TARGET_STEPPER_RATIO}: "
            f"{met(ratio <= TARGET_STEPPER_RATIO)})"
        )
        # → from the keyboard, as fast as Step
        wait_idle(page, settle=0)
        holds(page, clicks, 2 * clicks + 1)
        step.focus()
        keys = stepper_times(page, lambda: page.keyboard.press("ArrowRight"), clicks, clicks)
        ratio = p95(keys) / ref_click
        out(
            f"ui key → ({clicks} presses) -> step drawn: {spread(keys)}; ratio p95 {ratio:.2f}  "
            f"(target <= {TARGET_STEPPER_RATIO}: {met(ratio <= TARGET_STEPPER_RATIO)})"
        )

        # Play at the fastest speed: merges drawn per second, and none skipped
        wait_idle(page, settle=0)
        page.locator(".sp-speed").select_option(label="fastest (0.04 s)")
        page.evaluate(_RECORD)
        page.keyboard.press("Space")
        page.wait_for_function("() => window.__draws.length >= 100", timeout=120_000)
        pause = timed_action(page, lambda: page.keyboard.press("Space"), "button", "Play")
        draws = page.evaluate("() => window.__draws")
        played = [k for _, k in draws]
        rate = (len(draws) - 1) / ((draws[-1][0] - draws[0][0]) / 1000)
        skipped = sum(1 for a, b in zip(played, played[1:], strict=False) if b != a + 1)
        out(
            f"ui play at its fastest (0.04 s), {len(draws)} merges: {rate:.1f} merges drawn/s, {skipped} skipped  "
            f"(target >= {TARGET_PLAY} and none skipped: {met(rate >= TARGET_PLAY and not skipped)}); Space to pause -> "
            f"Play back {fmt_s(pause)}"
        )

        # a link to step 500, in new sessions, until the stepper draws it
        ready = lambda p: p.locator(_DRAWN.format(500))  # noqa: E731
        (first, first_idle), (second, second_idle) = (
            first_visit_times(page, f"{url}/Train?step=500", ready) for _ in range(2)
        )
        ratio = max(first, second) / ref_load
        out(
            f"ui link to step 500 (english_frankenstein, gpt2 preset), new session -> step drawn: first {fmt_s(first)}, "
            f"next {fmt_s(second)}; one-button page {fmt_s(ref_load)}; ratio {ratio:.2f}  "
            f"(target <= {TARGET_LINK_RATIO}: {met(ratio <= TARGET_LINK_RATIO)}); app idle after it (the steps around "
            f"it sent): first {fmt_s(first_idle)}, next {fmt_s(second_idle)}"
        )

        # a drag of the slider across 500 steps (the window sent ahead of it: steps 0 to 500 held)
        page.goto(f"{url}/Train?step=500")
        page.locator(_DRAWN.format(500)).wait_for(timeout=120_000)
        holds(page, 0, 500)
        # a drag moves the slider once a frame at most (the browser coalesces pointer moves to
        # frames): here the slider's value is set and its input event sent once a frame, in the page
        # (a Playwright mouse move per step is a round trip of its own, slower than any frame)
        page.evaluate(_RECORD)
        span = page.evaluate(_DRAG, [500, 0]) / 1000
        draws = page.evaluate("() => window.__draws")
        rate = (len(draws) - 1) / span
        out(
            f"ui slider drag over 500 steps (500 -> 0, one move a frame): {len(draws)} redraws of the step's panels "
            f"in {fmt_s(span)}, {rate:.0f} redraws/s  (target >= {TARGET_DRAG}: {met(rate >= TARGET_DRAG)})"
        )
        if page.errors:
            out(f"page errors: {page.errors}")


def compare_cold(out: Printer) -> None:
    with app_process() as (url, _proc), browser_page(width=1280, height=720) as page:
        wait_warm(url)
        page.goto(f"{url}/Compare")
        button = page.get_by_role("button", name="Compare", exact=True)
        button.wait_for(timeout=120_000)
        wait_idle(page, settle=0)
        t0 = time.perf_counter()
        button.click()
        look_until(page, page.locator(".bpe-card-panel", has_text="Parity").first, "visible", 120)
        wait_idle(page, settle=0, timeout=120)
        seconds = time.perf_counter() - t0
    out(
        f"ui compare cold (udhr_en, udhr_hi, udhr_ko; gpt2 preset, 1,000 merges; fresh server, warmed up): press -> "
        f"headlines drawn, app idle {fmt_s(seconds)}  (target <= {fmt_s(TARGET_COMPARE)}: {met(seconds <= TARGET_COMPARE)})"
    )


def fetch_page_code(url: str, *, connections: int = 6) -> tuple[int, int, float]:
    """The files the app's document names (its scripts, styles and fonts), fetched over
    ``connections`` kept-alive connections as Chromium does (it takes gzip): how many, the bytes
    sent, and the seconds taken."""
    with urllib.request.urlopen(url + "/", timeout=30) as answer:
        document = answer.read().decode()
    paths = ["/" + name for name in named_files(document)]
    todo, lock = list(paths), threading.Lock()
    sent: list[int] = []
    host = urllib.parse.urlsplit(url).netloc

    def fetch() -> None:
        conn = http.client.HTTPConnection(host, timeout=30)
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    path = todo.pop()
                conn.request("GET", path, headers={"Accept-Encoding": "gzip, deflate, br, zstd"})
                size = len(conn.getresponse().read())
                with lock:
                    sent.append(size)
        finally:
            conn.close()

    workers = [threading.Thread(target=fetch) for _ in range(connections)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return len(paths), sum(sent), time.perf_counter() - t0


def page_code(out: Printer, rounds: int = 5) -> None:
    seconds: dict[str, list[float]] = {"ours": [], "one-button": []}
    sent: dict[str, int] = {}
    files = 0
    with app_process() as (url, _proc), app_process(script=BENCH_DIR / "one_button_app.py") as (ref_url, _ref):
        wait_warm(url)
        for _ in range(rounds):
            for name, at in (("ours", url), ("one-button", ref_url)):
                files, sent[name], took = fetch_page_code(at)
                seconds[name].append(took)
    ours, ref = statistics.median(seconds["ours"]), statistics.median(seconds["one-button"])
    out(
        f"page code over 6 kept-alive connections ({files} files, median of {rounds}): ours {fmt_s(ours)} "
        f"({sent['ours'] / 1e6:.2f} MB sent), the one-button app's server {fmt_s(ref)} ({sent['one-button'] / 1e6:.2f} MB); "
        f"ratio {ours / ref:.2f} in time, {sent['ours'] / sent['one-button']:.2f} in bytes"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of first visits (medians compared)")
    parser.add_argument("--no-tables", action="store_true", help="leave out bench/tables.py's lines")
    parser.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    args = parser.parse_args()
    out = Printer()
    _load, ref_click = reference(out, args.clicks)
    step_floor(out, args.clicks, ref_click)
    plain_floor(out, args.clicks, ref_click)
    ref_load = first_visits(out, args.rounds)  # the one-button page's median first load
    train_page(out, args.clicks, ref_click, ref_load)
    compare_cold(out)
    page_code(out)
    if not args.no_tables:
        from tables import table_lines

        for line in table_lines():
            out(line)
    if args.write:
        write_section("ui_latency", "UI latency (bench/ui_latency.py)", out.lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
