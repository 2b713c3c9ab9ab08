"""Serve the app on a free loopback port and drive it in headless Chromium (Debian's build,
through Playwright). Used by the browser tests and by bench/ui_latency.py."""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Literal

__all__ = [
    "ARTIFACTS",
    "CHROMIUM_ARGS",
    "AppRuns",
    "IdleWaitWarning",
    "SharedChromium",
    "app_process",
    "browser_page",
    "chromium_path",
    "follow_runs",
    "full_screenshot",
    "launch_chromium",
    "look_until",
    "require_chromium",
    "wait_idle",
]

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# The suite's own Chromium also runs its pages' JavaScript without V8's optimising compiler: a
# test page lives for seconds, so compiling its hot functions again in the background is work
# that never pays back (~10% of the browser's CPU per page load and ~5% per Step, measured; the
# same results). The benchmarks time what a user's browser does: CHROMIUM_ARGS, as is.
SUITE_CHROMIUM_ARGS = [*CHROMIUM_ARGS, "--js-flags=--no-opt"]


def chromium_path() -> str | None:
    """Debian's chromium, if installed (Playwright's own browser download is not used)."""
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def require_chromium() -> None:
    """Call at the top of a browser test module: without Debian's chromium the module is skipped,
    except in CI, where that is an error (.ci/run installs it)."""
    import pytest

    if chromium_path() is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must install Debian's chromium for the browser tests (see .ci/run)")
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def app_process(
    *,
    timeout: float = 60.0,
    log: IO | None = None,
    extra_args: tuple[str, ...] = (),
    script: Path | None = None,
    env: dict[str, str] | None = None,
    port: int | None = None,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start ``streamlit run app.py``; yield its base URL and its process (for its memory and
    CPU); stop exactly that process after. Writes the server's stdout and stderr to ``log`` (an
    open file) instead of discarding them, and passes ``extra_args`` (more ``--section.option
    value`` pairs) to ``streamlit run``;
    ``script`` serves another Streamlit script instead of the app (a benchmark's reference);
    ``env``: the server's environment (default: the test process's); ``port``: a given one (a
    restarted server where its pages reconnect) instead of a free one."""
    port = port or _free_port()
    output = log if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(script or ROOT / "app.py"),
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
            *extra_args,
        ],
        cwd=ROOT,
        stdout=output,
        stderr=output,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError(f"the app exited with status {proc.returncode} before answering")
            if time.monotonic() > deadline:
                raise RuntimeError("the app did not answer its health check in time")
            time.sleep(0.2)
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def launch_chromium(pw):
    """Debian's chromium, headless, launched through a started Playwright ``pw``."""
    exe = chromium_path()
    if exe is None:
        raise RuntimeError("Debian's chromium is not installed (apt-get install chromium)")
    return pw.chromium.launch(executable_path=exe, args=SUITE_CHROMIUM_ARGS)


@contextlib.contextmanager
def browser_page(*, width: int = 1400, height: int = 1000, browser=None, profile=None):
    """A Playwright page, closed after; page errors are collected in ``page.errors``, and the
    app's runs are followed (``page.app_runs``, in the page too) for :func:`wait_idle`. Where it
    opens:

    - ``profile``: a persistent context (:meth:`SharedChromium.profile`), one page at a time, its
      cookies cleared first and the app's storage after (no app session or file owner of the
      page before); it keeps the profile's disk cache and compiled scripts, so a page load costs
      about 40% less CPU than in a fresh context. The tab itself is kept for the next page (see
      :func:`_profile_page`): about half the wall time and CPU of a first page load again.
    - ``browser``: a running Chromium: a context of its own (its own cookies, storage and cache),
      for pages open together that must not share a cookie, or one that never saw the app.
    - neither: Playwright and a Chromium are started for this page alone.
    """
    if profile is None and browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            own = launch_chromium(pw)
            try:
                with browser_page(width=width, height=height, browser=own) as page:
                    yield page
            finally:
                own.close()
        return
    if profile is not None:
        with _profile_page(profile, width=width, height=height) as page:
            yield page
        return
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        follow_runs(page)
        with shot_on_failure(page):
            yield page
    finally:
        context.close()


def _listeners(page) -> dict[str, int]:
    """How many listeners each event of ``page`` has (Playwright's own included)."""
    impl = page._impl_obj
    return {e: n for e in impl.event_names() if (n := len(impl.listeners(e)))}


def _left_as_found(page, listeners: dict[str, int], origins: set[str]) -> bool:
    """Whether a kept tab is as the next test should find it: open, with no listener or route a
    test added, and no storage of a second origin (only the page's last one is cleared)."""
    try:
        return (
            not page.is_closed() and _listeners(page) == listeners and not page._impl_obj._routes and len(origins) <= 1
        )
    except Exception:  # noqa: BLE001 - Playwright's inside changed: close the tab, as before
        return False


@contextlib.contextmanager
def shot_on_failure(page) -> Iterator[None]:
    """A test that fails with ``page`` open leaves a screenshot of it in the artifacts folder,
    ``FAILED-<test>-<time>.png``, and its address and step in the failure's text (what a flaky
    browser test saw is otherwise gone with the page)."""
    try:
        yield
    except BaseException as failure:
        test = os.environ.get("PYTEST_CURRENT_TEST", "test").split(" ")[0].split("::")[-1]
        name = re.sub(r"[^\w.-]+", "_", test)[:120]
        path = ARTIFACTS / f"FAILED-{name}-{time.strftime('%H%M%S')}.png"
        with contextlib.suppress(Exception):  # a closed or crashed page has nothing to show
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(path), full_page=True, timeout=5000)
            steppers = page.evaluate("() => [...document.querySelectorAll('.sp-root')].map((r) => ({...r.dataset}))")
            if isinstance(failure, Exception) and hasattr(failure, "add_note"):
                failure.add_note(f"the page at {page.url} when it failed: {path.name}; its steppers: {steppers}")
        raise


@contextlib.contextmanager
def _profile_page(profile, *, width: int, height: int):
    """A page of the shared profile (see :func:`browser_page`). Its tab is kept after the test and
    handed to the next one, navigated to about:blank, with its cookies and the app's storage
    cleared as a new page would have them: a new tab starts a renderer process and reads every
    script of the app again, a kept one has them in memory (a page load ~1.5 s instead of ~3 s).
    A tab that a test left otherwise (a listener or route of its own, a second origin's
    storage, closed) is closed instead, and the next test gets a new one."""
    kept = getattr(profile, "bpe_kept", None)
    if getattr(profile, "bpe_busy", False) or any(p is not kept for p in profile.pages):
        raise RuntimeError("the shared profile holds one page at a time: open the second one with a browser")
    profile.clear_cookies()
    if kept is None or kept.is_closed():
        kept = profile.new_page()
        kept.add_init_script(script=f"({_RUN_COUNTER})()")
        kept.bpe_listeners = _listeners(kept)
    page, profile.bpe_kept, profile.bpe_busy = kept, None, True
    page.set_viewport_size({"width": width, "height": height})
    page.errors = []
    page.app_runs = AppRuns()
    origins: set[str] = set()

    def on_error(error) -> None:
        page.errors.append(str(error))

    def on_navigation(frame) -> None:
        if frame == page.main_frame and frame.url.startswith("http"):
            origins.add("/".join(frame.url.split("/")[:3]))

    ours = {"pageerror": on_error, "websocket": page.app_runs.on_websocket, "framenavigated": on_navigation}
    for event, listener in ours.items():
        page.on(event, listener)
    try:
        with shot_on_failure(page):
            yield page
    finally:
        profile.bpe_busy = False
        with contextlib.suppress(Exception):  # a page on no origin has no storage to clear
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        with contextlib.suppress(Exception):  # a closed page has no listeners left
            for event, listener in ours.items():
                page.remove_listener(event, listener)
        if _left_as_found(page, page.bpe_listeners, origins):
            try:
                page.goto("about:blank")  # the app's session ends with its websocket
                profile.bpe_kept = page
            except Exception:  # noqa: BLE001 - a tab that cannot leave the app is not kept
                page.close()
        elif not page.is_closed():
            page.close()


class SharedChromium:
    """One Playwright and one Chromium for a test process, started on first use and kept for every
    browser test that follows (about 3 s saved per test: Playwright's driver and the browser start
    once), with a profile on disk whose cache and compiled scripts every page shares (see
    :func:`browser_page`). :meth:`stop` ends them: a live sync Playwright holds an asyncio loop
    running in its thread, so ``asyncio.run`` fails until then (the suite stops it before any test
    that does not ask for it)."""

    def __init__(self) -> None:
        self._playwright = None
        self._profile = None  # the persistent context; its browser serves contexts of their own
        self._folder: str | None = None  # kept from one start to the next (see :meth:`stop`)

    def profile(self):
        """The persistent context (started again if Chromium crashed or was stopped)."""
        if self._profile is not None and not self._profile.browser.is_connected():
            self.stop()
        if self._profile is None:
            from playwright.sync_api import sync_playwright

            exe = chromium_path()
            if exe is None:
                raise RuntimeError("Debian's chromium is not installed (apt-get install chromium)")
            if self._folder is None:
                self._folder = tempfile.mkdtemp(prefix="bpe-explorer-chromium-")
                atexit.register(shutil.rmtree, self._folder, ignore_errors=True)
            self._playwright = sync_playwright().start()
            self._profile = self._playwright.chromium.launch_persistent_context(
                self._folder, executable_path=exe, args=SUITE_CHROMIUM_ARGS
            )
            for page in self._profile.pages:  # the blank page a persistent context opens with
                page.close()
        return self._profile

    def browser(self):
        """The running Chromium, for contexts of their own."""
        return self.profile().browser

    def stop(self) -> None:
        """End Playwright and Chromium. The profile's folder stays for the next start in this
        process (removed when the process exits): its disk cache and compiled scripts make the
        first page load after a restart cost about a third less CPU (~1 s) than in a new folder;
        the cookies and storage a page left are cleared before the next page as always."""
        profile, playwright = self._profile, self._playwright
        self._profile = self._playwright = None
        try:
            if profile is not None:
                with contextlib.suppress(Exception):  # already gone with a crashed browser
                    profile.close()
        finally:
            if playwright is not None:
                playwright.stop()


class AppRuns:
    """The app's runs as its server announces them over the page's websocket: every run (a
    fragment's too) opens with a ``new_session`` message, and ``session_status_changed`` says
    whether a script is running. Unlike the page's own state attribute, which can skip a run
    that starts and ends between two renders, no run goes unseen here."""

    def __init__(self) -> None:
        self.started = 0  # runs begun since the page was made
        self.seen = 0  # ``started`` when wait_idle last found the app idle
        self.running = False

    def on_websocket(self, ws) -> None:
        self.running = False  # a new connection (a reload): nothing runs for it yet
        ws.on("framereceived", self.on_frame)

    def on_frame(self, payload) -> None:
        if not isinstance(payload, (bytes, bytearray)):
            return
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            msg = ForwardMsg.FromString(bytes(payload))
        except Exception:  # not one of Streamlit's messages
            return
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self.started += 1
            self.running = True
        elif kind == "session_status_changed":
            self.running = msg.session_status_changed.script_is_running


def follow_runs(page) -> None:
    """Follow the app's runs in ``page`` (before its first ``goto``): from the server's messages
    (``page.app_runs``) and from stApp's script state in the page (``window.__bpeRuns``)."""
    page.app_runs = AppRuns()
    page.on("websocket", page.app_runs.on_websocket)
    page.add_init_script(script=f"({_RUN_COUNTER})()")


# Counts the app's runs in the page: each time stApp's script state leaves "not running" (for
# running, rerunRequested or stopRequested), window.__bpeRuns goes up by one; wait_idle marks the
# count it has seen (window.__bpeRunsSeen). The fallback for a page follow_runs was not given:
# wait_idle installs it there, and it can miss a run short enough to start and end between two
# renders (the server's messages, AppRuns, do not).
_RUN_COUNTER = """() => {
    if (window.__bpeRuns !== undefined) return false;
    window.__bpeRuns = 0;
    window.__bpeRunsSeen = 0;
    const busy = (state) => state === 'running' || state === 'rerunRequested' || state === 'stopRequested';
    let last = null;
    const check = () => {
        const app = document.querySelector('[data-testid="stApp"]');
        const state = app ? app.getAttribute('data-test-script-state') : null;
        if (busy(state) && !busy(last)) window.__bpeRuns += 1;
        last = state;
    };
    new MutationObserver(check).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
    check();
    return true;
}"""

# The page shows the app idle: connected, script not running, no skeletons, on two polls in a
# row (one animation frame apart: the last messages of a run are drawn by then).
_IDLE = """(token) => {
    const app = document.querySelector('[data-testid="stApp"]');
    const idle = app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stSkeleton"]');
    if (!window.__bpeIdle || window.__bpeIdle.token !== token) window.__bpeIdle = {token, polls: 0};
    window.__bpeIdle.polls = idle ? window.__bpeIdle.polls + 1 : 0;
    if (window.__bpeIdle.polls < 2) return false;
    if (window.__bpeRuns !== undefined) window.__bpeRunsSeen = window.__bpeRuns;
    return true;
}"""

_idle_tokens = itertools.count(1)


def _locators(page, what) -> list:
    """``what`` (a Playwright locator, a text, a compiled regex, or a list or tuple of these) as
    locators; a text or regex is matched as ``page.get_by_text`` does (the text a reader sees)."""
    if what is None:
        return []
    if isinstance(what, (list, tuple)):
        return [loc for item in what for loc in _locators(page, item)]
    if isinstance(what, (str, re.Pattern)):
        return [page.get_by_text(what)]
    return [what]


# Resolves once the page's document has changed since ``seen`` (a [document, count] pair this
# returned before), but not before ``gap`` ms, or after ``most`` ms whatever happened: a
# MutationObserver counts the document's changes (installed on the first call in a document).
_NEXT_CHANGE = """([seen, gap, most]) => new Promise((done) => {
    let box = window.__bpeChanges;
    if (!box) {
        box = window.__bpeChanges = {doc: Math.random(), count: 0, wake: null};
        new MutationObserver(() => { box.count += 1; if (box.wake) box.wake(); })
            .observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
    }
    const now = () => [box.doc, box.count];
    const changed = () => !seen || seen[0] !== box.doc || seen[1] !== box.count;
    const end = setTimeout(() => { box.wake = null; done(now()); }, most);
    setTimeout(() => {
        if (changed()) { clearTimeout(end); done(now()); return; }
        box.wake = () => { box.wake = null; clearTimeout(end); done(now()); };
    }, gap);
})"""


def look_until(page, loc, state: Literal["visible", "gone"], timeout: float) -> None:
    """Look until ``loc`` is visible (or has no match left): again each time the page's document
    changes, at most every 50 ms, and at least every 0.5 s; past ``timeout`` seconds,
    Playwright's ``expect`` says what it found instead. (``expect`` alone looks again after
    0.1, 0.25, 0.5, then every 1 s: a text drawn after 2 s is seen ~0.3 s late on average, on
    each of the suite's waits; a look every 50 ms whatever happens took ~0.15 s of CPU per
    second of waiting, from the server and the browser that the test waits for.)"""
    from playwright.sync_api import Error, expect

    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        try:
            if loc.is_visible() if state == "visible" else loc.count() == 0:
                return
            left = max(1, int((deadline - time.monotonic()) * 1000))
            seen = page.evaluate(_NEXT_CHANGE, [seen, min(50, left), min(500, left)])
        except Error:  # the page is between two documents (a navigation): look again
            seen = None
            page.wait_for_timeout(50)
    if state == "visible":
        expect(loc).to_be_visible(timeout=1000)
    else:
        expect(loc).to_have_count(0, timeout=1000)


class IdleWaitWarning(UserWarning):
    """:func:`wait_idle` spent its whole ``settle`` waiting for a rerun that never began: time
    lost on every run of the suite; the call wants ``settle=0``."""


def _rerun_began(page, runs: AppRuns | None) -> bool:
    if runs is not None and runs.started > runs.seen:
        return True
    return bool(page.evaluate("() => window.__bpeRuns > window.__bpeRunsSeen"))


def wait_idle(page, *, timeout: float = 30.0, settle: float = 5.0, until=None, gone=None) -> None:
    """Wait until the app has finished reacting to the last action: what the action's rerun
    draws is there (when given), a rerun has begun since the last ``wait_idle``, and the app
    is idle again (the server says no script runs; the page is connected, shows no script
    running and no skeletons).

    - ``until``: a locator, a text or a regex (or a list of them) that must be visible first;
      a text or regex is found as ``page.get_by_text`` finds it (the text a reader sees).
    - ``gone``: the same, for what must have no match left.
    - ``settle``: the longest wait (seconds) for a rerun to begin when none has begun since the
      last ``wait_idle`` on this page. Runs are counted as they start, so one that already
      began (or even ended) ends this wait at once; an action that starts no rerun costs the
      whole ``settle``: pass ``settle=0`` after one (a viewport change, an expander opened, a
      second look after a wait that saw the rerun). Such a wait gives an
      :class:`IdleWaitWarning` (listed in pytest's summary, at the caller's line).
    - ``timeout``: the longest wait (seconds) for each of the rest.

    Prefer ``until``/``gone``: they wait for the action's own effect, not for any rerun.
    """
    ms = timeout * 1000
    for loc in _locators(page, until):
        look_until(page, loc.filter(visible=True).first, "visible", timeout)
    for loc in _locators(page, gone):
        look_until(page, loc, "gone", timeout)
    runs = getattr(page, "app_runs", None)
    fresh = page.evaluate(_RUN_COUNTER)  # on a page follow_runs was not given: count from now on
    if settle > 0:
        if runs is None and fresh:
            time.sleep(min(settle, 0.25))  # nothing counted a rerun the action may have begun
        else:
            deadline = time.monotonic() + settle
            while not _rerun_began(page, runs) and time.monotonic() < deadline:
                page.wait_for_timeout(50)  # none began in time: an action the browser handled alone
            if not _rerun_began(page, runs):
                warnings.warn(IdleWaitWarning(f"waited {settle:g} s for a rerun that never began"), stacklevel=2)
    if runs is not None:
        deadline = time.monotonic() + timeout
        while runs.running:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the app's script was still running after {timeout:g} s")
            page.wait_for_timeout(50)
        started = runs.started
    page.wait_for_function(_IDLE, arg=next(_idle_tokens), timeout=ms)
    if runs is not None:
        runs.seen = started


def stepper_settled(page) -> None:
    """Wait until the stepper on the page has had the answer to its first report, and the app is
    idle: a page's first run sends the step shown alone, the report's rerun the steps around it.
    A person does not act within that tenth of a second; a test that changed a sidebar setting
    then was seen, once a run, to lose the choice. (Leaving for another page then once left it
    blank: fixed in the stepper, tested in ``test_browser_stepper``.) No stepper on the page (a
    corpus over the step limit offers a choice first): nothing to wait for."""
    if not page.locator(".sp-root").count():
        return
    page.wait_for_function(
        "() => { const r = document.querySelector('.sp-root[data-drawn]');"
        " return !!r && JSON.parse(r.dataset.held || '[]').reduce((n, [lo, hi]) => n + hi - lo + 1, 0) >= 2; }",
        timeout=60_000,
    )
    wait_idle(page, settle=0)


# a projector and a desktop screen: the sizes each page's browser test opens it at
SIZES = [{"width": 1280, "height": 720}, {"width": 1920, "height": 1080}]
SIZE_IDS = ["1280x720", "1920x1080"]

_CUT_BY_BOX = """(selectors) => [...document.querySelectorAll(selectors)]
  .filter((e) => e.offsetParent !== null && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1))
  .map((e) => e.innerText.slice(0, 60))"""


def cut_by_box(page, selectors: str) -> list[str]:
    """The start of each visible text matching ``selectors`` (CSS) that its box cuts short,
    wider or taller than the box."""
    return page.evaluate(_CUT_BY_BOX, selectors)


_TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def full_screenshot(page, path: Path) -> None:
    """Streamlit scrolls inside stMain: grow the viewport to its height, then shoot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]'); return m ? m.scrollHeight : document.body.scrollHeight; }"
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height) + 40, 12000))})
    # the width stays, so nothing is laid out anew but what hangs on the height (stMain's box):
    # two frames drawn, not a fixed half second (30 shots in the suite)
    page.evaluate(_TWO_FRAMES)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
