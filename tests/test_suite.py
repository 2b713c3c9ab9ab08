"""The suite's own rules. Every property test runs under conftest's hypothesis profile: its budget
(``max_examples``) and the health checks it suppresses are written at the test, and nothing else
(no deadline, no example database, random examples) differs from test to test. CI runs every test
in one of its two steps: the suite without the ``load`` marker, then the timings with no other test on the
machine."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import importlib
import inspect
import json
import re
import shlex
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT, SUITE_PROFILE
from hypothesis import settings

TESTS = Path(__file__).resolve().parent
# what a test may set for itself; the rest is the profile's
OWN_SETTINGS = ("max_examples", "suppress_health_check")


def property_tests() -> Iterator[tuple[str, object]]:
    """``(module::name, test)`` for every @given test of the suite's modules (a module that skips
    itself at import, as the browser modules do without Chromium, is left out)."""
    for path in sorted(TESTS.glob("test_*.py")):
        try:
            module = importlib.import_module(path.stem)  # the module pytest imported, by the same name
        except pytest.skip.Exception:
            continue
        for name, test in vars(module).items():
            if name.startswith("test_") and hasattr(test, "hypothesis"):
                yield f"{path.stem}::{name}", test


def settings_apart(test, profile: settings) -> dict[str, tuple]:
    """The settings a @given test runs under that differ from ``profile``, besides its own
    (``OWN_SETTINGS``): ``{name: (the test's, the profile's)}``."""
    used = test._hypothesis_internal_use_settings
    return {
        name: (getattr(used, name), getattr(profile, name))
        for name in inspect.signature(settings).parameters
        if name not in ("parent", *OWN_SETTINGS) and getattr(used, name) != getattr(profile, name)
    }


def test_every_property_test_runs_under_the_suite_profile_with_its_budget_at_the_test():
    profile = settings.get_profile(SUITE_PROFILE)
    assert profile.deadline is None and profile.database is None and not profile.derandomize
    found = dict(property_tests())
    assert len(found) >= 25, sorted(found)  # the suite's @given tests were found
    apart = {name: diff for name, test in found.items() if (diff := settings_apart(test, profile))}
    assert not apart, apart
    budgets = {name: test._hypothesis_internal_use_settings.max_examples for name, test in found.items()}
    assert all(1 <= n <= 500 for n in budgets.values()), budgets


def pytest_commands(script: Path) -> list[list[str]]:
    """The ``python -m pytest`` command lines of a shell script, as argument lists.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "run").write_text("set -e\\npython -m pytest -m 'not load'  # the suite\\n")
    ...     pytest_commands(Path(d) / "run")
    [['-m', 'not load']]
    """
    commands = []
    for line in script.read_text().splitlines():
        words = shlex.split(line, comments=True)
        if words[:3] == ["python", "-m", "pytest"]:
            commands.append(words[3:])
    return commands


def marker_expression(args: list[str]) -> str | None:
    """The ``-m`` expression of a pytest command line (None: every test).

    >>> marker_expression(["-m", "not load", "-q"]), marker_expression(["-q"])
    ('not load', None)
    """
    return args[args.index("-m") + 1] if "-m" in args else None


def test_ci_runs_the_suite_then_the_load_measurements_and_so_every_test():
    commands = pytest_commands(ROOT / ".ci" / "run")
    assert [marker_expression(args) for args in commands] == ["not load", "load"], commands
    # the load step: no test but the timings, each in a worker of its own (one worker, or as many
    # as there are timings: two light ones side by side measured their full pace, 49 steps of 50
    # and p95 0.2 s of 1 s, against 35 s instead of 52 one after the other)
    workers = re.search(r"-n (\d+)", " ".join(commands[1]))
    assert workers and int(workers.group(1)) in (0, 1, len(load_tests())), commands[1]


def load_tests() -> list[str]:
    """The tests marked ``load``, read from the test modules' source."""
    found = []
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        found += re.findall(r"^@pytest\.mark\.load\b.*\n(?:@.*\n)*def (\w+)", path.read_text(), re.M)
    return found


def marks(obj) -> set[str]:
    """The names of the pytest marks set on a module (its ``pytestmark``) or a test function."""
    found = getattr(obj, "pytestmark", [])
    return {mark.name for mark in (found if isinstance(found, list) else [found])}


def test_the_class_rooms_load_run_is_a_load_measurement():
    # its students must show each of the teacher's steps, 2 s apart; the classroom smoke runs and
    # the memory high-water marks check no time and run with the rest (their modules say why)
    load = importlib.import_module("test_load")
    assert "load" in marks(load.test_a_small_class_follows_answers_once_and_sits_idle_without_errors)
    assert "load" not in marks(load) | marks(importlib.import_module("test_memory"))


def test_thirty_seconds_of_autoplay_is_a_load_measurement():
    browser = pytest.importorskip("test_browser", reason="the browser tests skip themselves without Chromium")
    assert "load" in marks(browser.test_autoplay_at_the_fastest_speed_keeps_going_for_twenty_seconds)


# ---- the order files are handed out in (tests/conftest.py) -----------------------------------------
def test_the_files_that_drive_chromium_are_handed_out_first_each_kind_longest_first(request):
    """In the order this process collected (every file of the run, as each xdist worker collects
    them all): no file with a Chromium test after one without, and each kind by its recorded or
    estimated seconds, longest first."""
    import conftest

    files: dict[str, list[pytest.Item]] = {}
    for item in request.session.items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    kinds = [conftest._uses_chromium(items) for items in files.values()]
    if len(set(kinds)) < 2:
        pytest.skip("one kind of file collected: run with a browser test file and another")
    assert kinds == sorted(kinds, reverse=True), [f for f, b in zip(files, kinds) if b]
    recorded = json.loads(conftest.DURATIONS.read_text()) if conftest.DURATIONS.exists() else {}
    for kind in (True, False):
        costs = [conftest._file_cost(f, items, recorded) for (f, items), b in zip(files.items(), kinds) if b == kind]
        assert costs == sorted(costs, reverse=True), kind


# ---- the test process's Chromium: shared by consecutive browser tests, stopped after them -----
# (these three run in this order, in one process: pytest keeps a file's order, xdist a file whole)
_SHARED: list = []


def test_a_browser_test_gets_the_test_processs_chromium(chromium):
    assert chromium.is_connected()
    _SHARED.append(chromium)


def test_the_next_browser_test_gets_the_same_chromium(chromium):
    assert _SHARED and chromium is _SHARED[-1]  # not a second Playwright and browser


def test_a_test_after_them_can_run_asyncio():
    # a live sync Playwright keeps its asyncio loop running in this thread: asyncio.run would refuse
    async def answer() -> int:
        return 42

    assert asyncio.run(answer()) == 42


def _on_a_test_origin(page) -> None:
    """Open http://bpe.test/ in ``page``, answered by the page's own route (no server)."""
    page.route("http://bpe.test/**", lambda route: route.fulfill(body="<p>test</p>", content_type="text/html"))
    page.goto("http://bpe.test/")


def test_a_page_of_the_shared_profile_starts_without_the_cookies_and_storage_of_the_one_before(new_page):
    with new_page() as page:
        _on_a_test_origin(page)
        in_an_hour = time.time() + 3600  # a session cookie goes with the profile's last page anyway
        page.context.add_cookies(
            [{"name": "owner", "value": "before", "url": "http://bpe.test/", "expires": in_an_hour}]
        )
        page.evaluate("() => localStorage.setItem('left', 'behind')")
    with new_page() as page:
        _on_a_test_origin(page)
        assert page.context.cookies() == []
        assert page.evaluate("() => localStorage.getItem('left')") is None
        with pytest.raises(RuntimeError, match="one page at a time"), new_page():
            pass  # a second page would share the first one's cookies


@contextlib.contextmanager
def _loopback_site() -> Iterator[str]:
    """A page served on 127.0.0.1 by a server of the test's own (a kept tab is one no test
    routed: its requests go to a real origin)."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<p>test</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:  # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_the_next_test_gets_the_kept_tab_without_the_cookies_and_storage_of_the_one_before(new_page):
    with _loopback_site() as url:
        with new_page(width=1280, height=720) as page:
            page.goto(url)
            page.context.add_cookies([{"name": "owner", "value": "before", "url": url, "expires": time.time() + 3600}])
            page.evaluate("() => { localStorage.setItem('left', 'behind'); sessionStorage.setItem('tab', 'behind'); }")
            page.errors.append("a script error of the test before")
            kept = page
        with new_page(width=1400, height=1000) as page:
            assert page is kept  # the same tab: no new renderer, the app's scripts in memory
            assert page.url == "about:blank" and page.viewport_size == {"width": 1400, "height": 1000}
            assert page.errors == [] and page.app_runs.started == 0
            page.goto(url)
            assert page.context.cookies() == []
            assert page.evaluate("() => [localStorage.getItem('left'), sessionStorage.getItem('tab')]") == [None, None]
