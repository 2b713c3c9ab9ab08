"""Headless Chromium alongside the protocol sessions (Debian's chromium through Playwright), in a
process of its own so that its CPU is not the load generator's: Train pages clicking Step once a
second (``browser_worker``), or Class students following the teacher by their page's own script
(``class_browser_worker``). Each reports to the parent on a queue: ``("ready", None)`` once its
pages have loaded (or failed to), then ``("done", out)`` with what it measured and its errors."""

from __future__ import annotations

import asyncio
import re
import time

import psutil
from appserver import CHROMIUM_ARGS, chromium_path

from explorer.serving.serve import COOKIE as PROXY_COOKIE
from explorer.serving.serve import SERVED_BY

from .class_client import FOLLOW_TIMEOUT, STEP_GAP
from .client import OPEN_TIMEOUT, STEP_TIMEOUT
from .servers import proc_cpu
from .specs import Spec

__all__ = ["browser_worker", "class_browser_worker"]

# ---- headless Chromium alongside (a process of its own) ----------------------------------------
_STATUS_JS = """(n) => [...document.querySelectorAll('p, .sp-status')].some(p => p.innerText.startsWith(`Step ${n.toLocaleString('en-US')} of`))"""
_IDLE_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stSkeleton"]');
}"""
_FOLLOW_JS = """(n) => [...document.querySelectorAll('p, .sp-status')].some(p => {
    const m = /following the teacher at step ([\\d,]+)/.exec(p.innerText);
    return m !== null && Number(m[1].replace(/,/g, '')) >= n;
})"""
_SHOWN_JS = "() => ([...document.querySelectorAll('p, .sp-status')].find(p => /^Step [\\d,]+ of/.test(p.innerText)) || {}).innerText || ''"


# ---- shared: a Chromium run reporting to its parent, a page per context, the proxy's cookie -----
async def _in_chromium(results, out: dict, body) -> None:
    """Launch Chromium and ``await body(browser, ready)`` (``ready()``: the pages loaded); any
    failure becomes one of ``out``'s errors. The parent always gets "ready", then "done"."""
    from playwright.async_api import async_playwright

    told = False

    def ready() -> None:
        nonlocal told
        results.put(("ready", None))
        told = True

    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            await body(browser, ready)
            await browser.close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out["errors"].append(f"browsers: {exc!r}"[:400])
        if not told:
            results.put(("ready", None))  # unblock the parent waiting for the pages
    results.put(("done", out))


async def _new_page(browser, i: int, out: dict, served: dict[int, set]):
    """A page in a context of its own; its page errors go to ``out``, the server that answered
    each of its responses (behind the proxy) to ``served[i]``."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.on("pageerror", lambda e: out["errors"].append(f"browser {i}: page error: {e}"))
    page.on("response", lambda r: served.setdefault(i, set()).add(r.headers.get(SERVED_BY.lower())))
    return page


async def _check_cookie(out: dict, i: int, page, served: dict[int, set], *, proxied: bool) -> None:
    """The proxy's cookie of page ``i`` into ``out["servers"]``; an error unless every answer came
    from the server it names. Not ``proxied``: only a page that has a cookie or was answered by a
    named server is checked."""
    cookie = next((c["value"] for c in await page.context.cookies() if c["name"] == PROXY_COOKIE), None)
    answered = served.get(i, set()) - {None}
    if proxied or cookie is not None or answered:
        out["servers"].append(cookie)
        if answered != {cookie}:
            out["errors"].append(f"browser {i}: cookie {cookie}, answers from {sorted(answered)}")


def _tree_cpu() -> float:
    """CPU seconds of this process and its children (Chromium's)."""
    me = psutil.Process()
    try:
        procs = [me, *me.children(recursive=True)]
    except psutil.Error:
        procs = [me]
    return proc_cpu(procs)


# ---- Train pages clicking Step -----------------------------------------------------------------
def browser_worker(urls: list[str], specs: list[Spec], results, go, go_at, seconds: int) -> None:
    """Open each spec's Train link in its own Chromium context; after ``go``, click Step once a
    second for ``seconds`` in every context, timing each click until the new step shows."""
    out = {"latencies": [], "errors": [], "clicks": 0, "steps": 0, "skipped": 0, "cpu": 0.0, "wall": 0.0, "servers": []}

    async def body(browser, ready) -> None:
        served: dict[int, set] = {}  # behind the proxy: the servers that answered each context
        pages = [(spec, await _new_page(browser, spec.index, out, served)) for spec in specs]

        async def load(spec, page):
            await page.goto(f"{urls[spec.index % len(urls)]}/Train?{spec.query}")
            await page.wait_for_function(_STATUS_JS, arg=0, timeout=OPEN_TIMEOUT * 1000)
            await page.wait_for_function(_IDLE_JS, timeout=OPEN_TIMEOUT * 1000)

        await asyncio.gather(*(load(s, p) for s, p in pages))
        ready()
        if not await asyncio.to_thread(go.wait, OPEN_TIMEOUT + 60):
            raise RuntimeError("never told to start")
        start = go_at.value
        cpu0, wall0 = _tree_cpu(), time.monotonic()
        ticks = [[start + n / len(pages) + tick for tick in range(seconds)] for n in range(len(pages))]
        await asyncio.gather(*(_click_steps(out, s, p, at) for (s, p), at in zip(pages, ticks)))
        out["cpu"], out["wall"] = _tree_cpu() - cpu0, time.monotonic() - wall0
        for spec, page in pages:  # the proxy's cookie, and every answer from the server it names
            await _check_cookie(out, spec.index, page, served, proxied=False)

    asyncio.run(_in_chromium(results, out, body))


async def _click_steps(out: dict, spec: Spec, page, ticks: list[float]) -> None:
    """Click Step at each tick (one that has passed already is skipped), each time until the new
    step shows; then the step the page shows must be the number of clicks seen."""
    step = page.get_by_role("button", name="Step", exact=True)
    done = 0
    for at in ticks:
        if time.monotonic() > at:
            out["skipped"] += 1
            continue
        await asyncio.sleep(at - time.monotonic())
        t0 = time.monotonic()
        await step.click(timeout=STEP_TIMEOUT * 1000)
        out["clicks"] += 1
        try:
            await page.wait_for_function(_STATUS_JS, arg=done + 1, polling="raf", timeout=STEP_TIMEOUT * 1000)
        except Exception:  # noqa: BLE001 - a timeout, reported as an error
            out["errors"].append(
                f"browser {spec.index} ({spec.label}): step {done + 1} not shown within {STEP_TIMEOUT:.0f} s"
            )
            break
        out["latencies"].append(time.monotonic() - t0)
        done += 1
    await page.wait_for_function(_IDLE_JS, timeout=STEP_TIMEOUT * 1000)
    if await page.locator('[data-testid="stException"]').count():
        out["errors"].append(f"browser {spec.index}: an exception box on the page")
    shown = await page.evaluate(_SHOWN_JS)
    m = re.match(r"Step ([\d,]+) of", shown)
    made = int(m.group(1).replace(",", "")) if m else -1
    out["steps"] += made
    if made != done:
        out["errors"].append(
            f"browser {spec.index} ({spec.label}): {done} steps clicked and seen, page shows {shown!r}"
        )


# ---- Class students following the teacher ------------------------------------------------------
def class_browser_worker(url: str, paths: list[str], results, stop, steps: int, first: int) -> None:
    """Open each student's Class page in its own Chromium context and note when each step the
    teacher makes (``first`` + 1 ... ``first`` + ``steps``) shows, then when a question's options
    show; the pages follow by their own script. Then sit idle until ``stop``."""
    out = {"shown": [], "options": [], "polls": [], "errors": [], "servers": []}

    async def body(browser, ready) -> None:
        served: dict[int, set] = {}
        pages = []
        for i in range(len(paths)):
            page = await _new_page(browser, i, out, served)
            polls: list[float] = []  # when the page's poller asked /room-rev
            page.on("request", lambda r, polls=polls: polls.append(time.monotonic()) if "/room-rev" in r.url else None)
            out["polls"].append(polls)
            out["shown"].append({})
            out["options"].append(None)
            pages.append(page)

        async def load(page, path):
            await page.goto(url + path)
            await page.wait_for_function(_FOLLOW_JS, arg=first, timeout=OPEN_TIMEOUT * 1000)
            await page.wait_for_function(_IDLE_JS, timeout=OPEN_TIMEOUT * 1000)

        await asyncio.gather(*(load(p, path) for p, path in zip(pages, paths)))
        ready()
        await asyncio.gather(
            *(_follow(out, results, i, p, range(first + 1, first + steps + 1)) for i, p in enumerate(pages))
        )
        if not await asyncio.to_thread(stop.wait, 600):
            raise RuntimeError("never told to stop")
        for i, page in enumerate(pages):
            await _check_class_page(out, i, page, served)

    asyncio.run(_in_chromium(results, out, body))


async def _follow(out: dict, results, i: int, page, steps: range) -> None:
    """When student page ``i`` shows each of the teacher's ``steps``, then the question's options
    (told to the parent at once: it waits for every student's)."""
    for k in steps:
        try:
            await page.wait_for_function(_FOLLOW_JS, arg=k, polling=20, timeout=(STEP_GAP + FOLLOW_TIMEOUT) * 1000)
        except Exception:  # noqa: BLE001 - a timeout, reported as an error
            out["errors"].append(f"browser {i}: step {k} not shown within {STEP_GAP + FOLLOW_TIMEOUT:.0f} s")
            return
        out["shown"][i][k] = time.monotonic()
    try:  # then the question's options (the teacher asks after the last step)
        await page.locator('[class*="st-key-class_opt_"] button').first.wait_for(
            state="visible", timeout=(STEP_GAP + 2 * FOLLOW_TIMEOUT) * 1000
        )
    except Exception:  # noqa: BLE001 - a timeout, reported as an error
        out["errors"].append(f"browser {i}: the question's options not shown")
        return
    out["options"][i] = time.monotonic()
    results.put(("options", i))


async def _check_class_page(out: dict, i: int, page, served: dict[int, set]) -> None:
    """After the idle room: no exception box, still connected, every answer from its server."""
    if await page.locator('[data-testid="stException"]').count():
        out["errors"].append(f"browser {i}: an exception box on the page")
    state = await page.evaluate(
        "() => document.querySelector('[data-testid=\"stApp\"]')?.getAttribute('data-test-connection-state')"
    )
    if state != "CONNECTED":
        out["errors"].append(f"browser {i}: the connection is {state}")
    await _check_cookie(out, i, page, served, proxied=True)
