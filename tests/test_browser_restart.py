"""A server restart as a class sees it (headless Chromium, 1280x720, a server of the test's own):
while the server is down the page says "The class server is restarting — this page reconnects
by itself" instead of Streamlit's message for developers ("Is Streamlit still running? ...
streamlit run yourscript.py", or "Streamlit server is not responding" on another host), and
when the server is back on its port the page reconnects and redraws by itself (no reload)."""

from __future__ import annotations

import re

import pytest
from appserver import ARTIFACTS, app_process, look_until, require_chromium, wait_idle

from explorer.ui.page_shell import RESTART_MESSAGE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium()

WAIT = 90.0  # s: a cold server's first page on a busy machine
DOWN = 20.0  # s: Streamlit's own dialog comes after its sixth failed ping (~3 s), its pings every <= 4 s
STREAMLITS = re.compile(r"Is Streamlit still running|streamlit run yourscript\.py|Streamlit server is not responding")


def test_a_restart_shows_the_class_servers_sentence_and_the_page_reconnects_by_itself(new_page):
    with new_page(width=1280, height=720) as page:
        with app_process(timeout=WAIT) as (url, server):
            port = int(url.rsplit(":", 1)[1])
            page.goto(f"{url}/Class")  # a page other than the root: Streamlit gzips it
            wait_idle(page, timeout=WAIT, settle=0, until=page.locator("h1"))
            title = page.locator("h1").first.inner_text()
            page.evaluate("() => { window.__sameDocument = true; }")  # gone if the page reloads
            server.terminate()  # SIGTERM, as a restart sends
            server.wait(timeout=30)
            look_until(page, page.get_by_text(RESTART_MESSAGE), "visible", DOWN)
            # Streamlit's connection-error dialog comes too, and stays out of sight
            dialog = page.locator('[role="dialog"]', has_text="Connection error")
            dialog.wait_for(state="attached", timeout=DOWN * 1000)
            assert not dialog.is_visible()
            assert page.get_by_text(STREAMLITS).filter(visible=True).count() == 0
            assert page.get_by_text(RESTART_MESSAGE).is_visible()
            page.screenshot(path=str(ARTIFACTS / "restart_01_server_down.png"))
        with app_process(timeout=WAIT, port=port):
            look_until(page, page.get_by_text(RESTART_MESSAGE), "gone", WAIT)
            wait_idle(page, timeout=WAIT, settle=0)
            assert page.locator("h1").first.inner_text() == title
            assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"
            assert page.get_by_text(STREAMLITS).count() == 0
            assert page.locator('[role="dialog"]').count() == 0
        assert not page.errors, page.errors


def test_a_page_of_the_app_asks_for_its_server_once_not_first_at_its_own_path(app_url, new_page):
    """Streamlit guesses its server's address from the page's: at /Train it asked
    /Train/_stcore/health first (404), waited its retry delay and asked /_stcore/health. The page
    script (explorer/ui/page_shell.py) names the server's address for the app's pages: one health
    check, at the root, and the page connects and draws its heading; a path that is no page of the
    app keeps Streamlit's own guessing."""
    with new_page(width=1280, height=720) as page:
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url[len(app_url) :]) if "/_stcore/health" in r.url else None)
        for path, heading in (
            ("/Train?step=2", "Train, one merge at a time"),
            ("/Corpus", "Corpus"),
            ("/", "BPE Explorer"),
        ):
            asked.clear()
            page.goto(app_url + path)
            wait_idle(page, timeout=WAIT, settle=0, until=page.get_by_role("heading", name=heading).first)
            assert asked == ["/_stcore/health"], (path, asked)
        asked.clear()
        page.goto(app_url + "/NoSuchPage")
        look_until(page, page.locator("h1").first, "visible", WAIT)
        assert asked[:2] == ["/NoSuchPage/_stcore/health", "/_stcore/health"], asked
        assert not page.errors, page.errors
