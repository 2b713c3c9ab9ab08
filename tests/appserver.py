"""Serve the app on a free loopback port and drive it in headless Chromium (Debian's build,
through Playwright). Used by the browser tests and by bench/ui_latency.py."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
]


def chromium_path() -> str | None:
    """Debian's chromium, if installed (Playwright's own browser download is not used)."""
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or ""):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(*, timeout: float = 60.0) -> Iterator[str]:
    """Start ``streamlit run app.py`` and yield its base URL; stop exactly that process after."""
    with app_process(timeout=timeout) as (url, _proc):
        yield url


@contextlib.contextmanager
def app_process(*, timeout: float = 60.0, log: IO | None = None,
                extra_args: tuple[str, ...] = ()) -> Iterator[tuple[str, subprocess.Popen]]:
    """:func:`serve_app` that also yields the server's process (for its memory and CPU), writes
    the server's stdout and stderr to ``log`` (an open file) instead of discarding them, and
    passes ``extra_args`` (more ``--section.option value`` pairs) to ``streamlit run``."""
    port = _free_port()
    output = log if log is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", *extra_args],
        cwd=ROOT, stdout=output, stderr=output,
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


@contextlib.contextmanager
def browser_page(*, width: int = 1400, height: int = 1000):
    """A Playwright page in headless Debian chromium; page errors are collected in ``page.errors``."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("Debian's chromium is not installed (apt-get install chromium)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.errors = []
            page.on("pageerror", lambda e: page.errors.append(str(e)))
            yield page
        finally:
            browser.close()


def wait_idle(page, *, timeout: float = 30.0, settle: float = 0.25) -> None:
    """Wait until the app has finished reacting: connected, script not running, no skeletons."""
    time.sleep(settle)
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            return app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
                && app.getAttribute('data-test-script-state') === 'notRunning'
                && !document.querySelector('[data-testid="stSkeleton"]');
        }""",
        timeout=timeout * 1000,
    )


def full_screenshot(page, path: Path) -> None:
    """Streamlit scrolls inside stMain: grow the viewport to its height, then shoot."""
    path.parent.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        "() => { const m = document.querySelector('[data-testid=\"stMain\"]'); return m ? m.scrollHeight : document.body.scrollHeight; }"
    )
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height) + 40, 12000))})
    time.sleep(0.5)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(size)
