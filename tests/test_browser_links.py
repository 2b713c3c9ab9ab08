"""A lesson survives (headless Chromium at 1280x720): a reload on any page shows the same view, and
a link to an uploaded corpus still opens on a new server (its first visit), in a browser context
(no cookie, no storage, no cache) that never saw the app, and goes on stepping from there; a
refresh keeps the step."""

from __future__ import annotations

import re

import pytest
from appserver import ARTIFACTS, app_process, full_screenshot, require_chromium, wait_idle

pytestmark = pytest.mark.browser

require_chromium()

PROJECTOR = {"width": 1280, "height": 720}
WAIT = 90_000  # ms: waits return as soon as the text is drawn; a loaded machine may need long


def see(page, text, *, timeout: float = WAIT, more: bool = False):
    """Wait until the text (or a locator) is drawn (what the last action should show), then until
    the app is idle. ``more``: more of what the last ``see`` waited for (no action between), so
    no new rerun is waited for (one that never comes cost 5 s)."""
    locator = (page.get_by_text(text) if isinstance(text, (str, re.Pattern)) else text).first
    wait_idle(page, timeout=timeout / 1000, settle=0 if more else 5.0, until=locator)
    return locator


def nav(page, title: str, heading: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    see(page, heading)


def chips(page) -> list[str]:
    """The tokens of the first Encode panel, as its chips show them."""
    return page.locator(".bpe-chip").all_inner_texts()


def test_a_reload_on_the_playground_and_compare_pages_shows_the_same_view(app_url, new_page):
    with new_page(**PROJECTOR) as page:
        page.goto(f"{app_url}/Train?corpus=udhr_en.txt&preset=gpt2&step=20")
        see(page, re.compile(r"^Step 20 of 20 trained"))
        step = page.get_by_role("button", name="Step", exact=True)
        for i in range(21, 26):
            step.click()
            see(page, re.compile(rf"^Step {i} of {i} trained"))
        page.wait_for_url(re.compile(r"step=25"), timeout=WAIT)  # the stepper reports without waiting

        nav(page, "Playground", "What each tokenizer makes of a text")
        see(page, page.locator('tr[data-name="trained (merge 25)"]'), more=True)
        page.wait_for_url(re.compile(r"k=25"), timeout=WAIT)
        before = chips(page)
        assert len(before) > 10
        full_screenshot(page, ARTIFACTS / "links_01_playground_before_reload.png")
        page.reload()
        see(page, page.locator('tr[data-name="trained (merge 25)"]'))
        assert chips(page) == before
        full_screenshot(page, ARTIFACTS / "links_02_playground_after_reload.png")

        nav(page, "Compare", "Compare corpora and languages")
        page.get_by_role("button", name="Compare", exact=True).click()
        see(page, "Compression curves")
        page.wait_for_url(re.compile(r"compare=udhr_en\.txt"), timeout=WAIT)
        shown = page.locator('[data-testid="stVegaLiteChart"]').count()  # the open tab's charts
        page.reload()
        see(page, "Compression curves")
        assert page.locator('[data-testid="stVegaLiteChart"]').count() == shown >= 1
        assert page.get_by_text("then press Compare").count() == 0
        full_screenshot(page, ARTIFACTS / "links_03_compare_after_reload.png")
        nav(page, "Train", "Train, one merge at a time")
        see(page, re.compile(r"^Step 25 of 25 trained"), more=True)
        assert not page.errors, page.errors


def test_a_link_to_an_uploaded_corpus_opens_after_a_server_restart_in_a_fresh_browser(app_url, new_page):
    text = ("The lesson survives a restart. " * 30 + "Zürich ünïcode naïve café\n").encode()
    with new_page(**PROJECTOR) as page:
        page.goto(f"{app_url}/Corpus")
        see(page, "Pick bundled texts")
        page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
            files=[{"name": "lesson.txt", "mimeType": "text/plain", "buffer": text}]
        )
        see(page, re.compile(r"^lesson\.txt · \d[\d,]* bytes · UTF-8"))
        page.wait_for_url(re.compile(r"upload%3A[0-9a-f]{64}|upload:[0-9a-f]{64}"), timeout=WAIT)
        nav(page, "Train", "Train, one merge at a time")
        step = page.get_by_role("button", name="Step", exact=True)
        for i in range(1, 4):
            step.click()
            see(page, re.compile(rf"^Step {i} of {i} trained"))
        page.wait_for_url(re.compile(r"step=3"), timeout=WAIT)
        address = page.url
        merges = page.locator("table.bpe-hist tr").all_inner_texts()
    # a new server (the same data folder, none of the first one's memory) and a browser context
    # that never saw the app (no cookie, no storage)
    with app_process() as (url2, _proc), new_page(**PROJECTOR, isolated=True) as fresh:
        port = re.match(r"http://127\.0\.0\.1:(\d+)", address).group(1)
        fresh.goto(address.replace(f"127.0.0.1:{port}", url2.removeprefix("http://")))
        see(fresh, re.compile(r"^Step 3 of 3 trained"))
        assert fresh.get_by_text(re.compile(r"^english_frankenstein\.txt, lesson\.txt · gpt2")).is_visible()
        assert fresh.locator("table.bpe-hist tr").all_inner_texts() == merges
        full_screenshot(fresh, ARTIFACTS / "links_04_train_after_restart.png")
        sidebar = fresh.locator('[data-testid="stSidebarNav"]')  # the pages by their titles, not "app"
        assert sidebar.get_by_role("link", name="Home").is_visible() and "app" not in sidebar.inner_text().split()
        # the link's session goes on from there, and a refresh keeps its next step
        fresh.get_by_role("button", name="Step", exact=True).click()
        see(fresh, re.compile(r"^Step 4 of 4 trained"))
        fresh.wait_for_url(re.compile(r"step=4"), timeout=WAIT)
        fresh.reload()
        see(fresh, re.compile(r"^Step 4 of 4 trained"))
        fresh.screenshot(path=str(ARTIFACTS / "12_train_from_link_1280x720.png"))
        nav(fresh, "Corpus", "Pick bundled texts")
        see(fresh, re.compile(r"^lesson\.txt · \d[\d,]* bytes · UTF-8"), more=True)
        full_screenshot(fresh, ARTIFACTS / "links_05_corpus_after_restart.png")
        assert not fresh.errors, fresh.errors
