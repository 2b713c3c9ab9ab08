"""Projector mode, live (one page object in the test process's served app): switched on from the
sidebar, it holds through a refresh and a page switch by the link (``projector=1``); every page
opened by such a link shows its first screen in text of at least 16 px at 1280x720 and larger
at 1920x1080 (the root size grows with the window), chart labels and titles of at least 14 px
(Vega draws them as SVG text in the page, so they are measured as drawn), data grid cells of at
least 16 px; no button's label or menu's value is cut short. On the Class page's presenter view
(the room's projected screen, its link made by a teacher in the mode keeps it) the reveal keeps
the right answer on the first screen at 1280x720, in text of at least 20 px, and the bars marked
right lead the tally. Switched off, the page and its link are as before. Screenshots of every
page at both sizes: test-artifacts/projector_*.png.

Each action waits for what it should draw (the page's answer, the root font size) before
anything is measured."""

from __future__ import annotations

import re

import pytest
from appserver import ARTIFACTS, require_chromium, wait_idle
from test_browser_layout import cut_short, inside_viewport
from test_variants_page import MERGES

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # ~40 s: scheduled among the first files

require_chromium()

from playwright.sync_api import expect  # noqa: E402

PROJECTOR = {"width": 1280, "height": 720}
WIDE = {"width": 1920, "height": 1080}
WAIT = 120.0
TEXT_PX, CHART_PX, ANSWER_PX = 16, 14, 20

# Every text node drawn on the first screen (in the viewport, visible): its font size, its text,
# and whether it is a chart's (SVG text); then each data grid's cell font (a canvas: its size is
# in the grid's style, as Streamlit hands it to the grid).
_SIZES = """() => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, text = node.textContent.trim(), e = node.parentElement;
    if (!text || !e || e.closest('script, style, noscript, title')) continue;
    const range = document.createRange(); range.selectNodeContents(node);
    const box = [...range.getClientRects()].find((b) => b.width > 0 && b.height > 0);
    if (!box || box.bottom <= 0 || box.top >= innerHeight || box.right <= 0 || box.left >= innerWidth) continue;
    const style = getComputedStyle(e);
    if (style.visibility === 'hidden' || +style.opacity === 0) continue;
    out.push({px: parseFloat(style.fontSize), text: text.slice(0, 40), chart: !!e.closest('svg')});
  }
  for (const grid of document.querySelectorAll('[data-testid="stDataFrame"]')) {
    const box = grid.getBoundingClientRect();
    if (box.bottom <= 0 || box.top >= innerHeight) continue;
    const font = grid.querySelector('[style*="--gdg-base-font-style"]') || grid;
    const m = /--gdg-base-font-style:\\s*\\d+\\s+([\\d.]+)px/.exec(font.getAttribute('style') || '');
    out.push({px: m ? parseFloat(m[1]) : 0, text: 'data grid cells', chart: false});
  }
  return out;
}"""

_SIDEBAR_AT = (
    """(px) => document.querySelector('section[data-testid="stSidebar"]').getBoundingClientRect().width >= px - 1"""
)

# A menu's value cut by its box (Streamlit's select box draws it in an input, which cut_short's
# selectors do not reach), in the page's main part
_CUT_MENUS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stSelectbox"] input')]
  .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1).map((e) => 'menu: ' + e.value)"""

# page: (the link's path, what the page draws once it has answered); the labs on smaller
# requests than their defaults (the same layout, a first visit that trains in a few seconds)
PAGES = {
    "home": ("/", lambda page: page.locator(".bpe-row").first),
    "corpus": ("/Corpus", lambda page: page.locator(".bpe-stat-value").first),
    "playground": ("/Playground", lambda page: page.locator("table.bpe-cmp tr[data-name]").first),
    "compare": (  # its answer: the headline cards and the parity chart (a link that compares)
        "/Compare?compare=udhr_en.txt,udhr_hi.txt&compare_merges=100",
        lambda page: page.locator(".bpe-card-panel", has_text="Parity"),
    ),
    "fairness": ("/Fairness?fair_merges=100", lambda page: page.locator(".fair-say").nth(1)),
    "variants": (
        f"/Variants?var_corpus=udhr_en.txt&var_merges={MERGES}",
        lambda page: page.locator(".bpe-card").nth(3),
    ),
}


def root_px(page) -> float:
    return page.evaluate("() => parseFloat(getComputedStyle(document.documentElement).fontSize)")


def with_param(path: str) -> str:
    return path + ("&" if "?" in path else "?") + "projector=1"


def measure(page, name: str, root: float) -> list[str]:
    """At the page's size: its first screen's small text and cut labels (none expected), and a
    screenshot. ``root``: the root font size the window should give."""
    expect(page.locator("html")).to_have_css("font-size", f"{root:g}px")
    # the sidebar (15 rem wide in the mode) widens with a transition: shoot it once it has
    page.wait_for_function(_SIDEBAR_AT, arg=15 * root, timeout=WAIT * 1000)
    size = page.viewport_size
    page.screenshot(path=str(ARTIFACTS / f"projector_{name}_{size['width']}x{size['height']}.png"))
    drawn = page.evaluate(_SIZES)
    assert len(drawn) >= 10, (name, drawn)  # the page's first screen, not a blank one
    small = [f"{n['px']:g}px {n['text']!r}" for n in drawn if n["px"] < (CHART_PX if n["chart"] else TEXT_PX)]
    cut = cut_short(page) + page.evaluate(_CUT_MENUS)
    return [f"{name} {size['width']}: {what}" for what in small + cut]


def both_sizes(page, name: str) -> list[str]:
    """Measure at 1280x720, then at 1920x1080 (the same page: the root size follows the window)."""
    page.set_viewport_size(PROJECTOR)
    problems = measure(page, name, 20)
    page.set_viewport_size(WIDE)
    problems += measure(page, name, 26)
    page.set_viewport_size(PROJECTOR)
    return problems


def reveal_a_question(page, app_url: str) -> None:
    """As a teacher: start a room, ask which pair merges next, reveal it (no student needed)."""
    page.goto(f"{app_url}/Class?projector=1")
    start = page.get_by_role("button", name="Start a room")
    wait_idle(page, timeout=WAIT, until=start)
    start.click()
    wait_idle(page, timeout=WAIT, until=page.get_by_role("button", name="Ask: which pair merges next?"))
    page.get_by_role("button", name="Ask: which pair merges next?").click()
    wait_idle(page, timeout=WAIT, until=page.get_by_role("button", name="Reveal", exact=True))
    page.get_by_role("button", name="Reveal", exact=True).click()
    wait_idle(page, timeout=WAIT, until=page.locator(".cls-bar-row.cls-right"))


def test_projector_mode_holds_through_the_link_and_sizes_every_page(app_url, new_page):
    problems: list[str] = []
    with new_page(**PROJECTOR) as page:
        # ---- switched on from the sidebar; a refresh and a page switch keep it by the link ----
        page.goto(app_url)
        wait_idle(page, timeout=WAIT, until=PAGES["home"][1](page))
        assert root_px(page) == 16 and "projector" not in page.url
        switch = page.get_by_role("switch", name="Projector mode")
        page.get_by_text("Projector mode", exact=True).click()
        wait_idle(page, timeout=WAIT, until=PAGES["home"][1](page))
        expect(page.locator("html")).to_have_css("font-size", "20px")
        page.wait_for_url(re.compile(r"[?&]projector=1(&|$)"))
        page.reload()  # F5: a new session, rebuilt from the link
        wait_idle(page, timeout=WAIT, until=PAGES["home"][1](page))
        expect(switch).to_be_checked()
        problems += both_sizes(page, "home")
        page.get_by_test_id("stSidebarNavItems").get_by_role(
            "link", name="Train"
        ).click()  # the sidebar's navigation: a page switch
        wait_idle(page, timeout=WAIT, until=page.locator("table.bpe-pairs tr").nth(1))
        page.wait_for_url(re.compile(r"/Train\?.*projector=1"))
        expect(switch).to_be_checked()
        problems += both_sizes(page, "train")

        # ---- every other page, opened by a link that asks for the mode ----
        for name, (path, ready) in PAGES.items():
            if name == "home":
                continue
            page.goto(app_url + with_param(path))
            wait_idle(page, timeout=WAIT, until=ready(page))
            assert "projector=1" in page.url, (name, page.url)
            problems += both_sizes(page, name)

        # ---- the Class page: the teacher's controls, then the presenter view (what a room projects):
        # the reveal keeps the right answer on its first screen ----
        reveal_a_question(page, app_url)
        problems += both_sizes(page, "class_teacher")
        presenter = page.get_by_role("link", name="Presenter view").get_attribute("href")
        assert "projector=1" in presenter, presenter  # the teacher's mode goes with the link
        page.goto(presenter)
        answer, bars = page.locator(".cls-option.cls-right"), page.locator(".cls-tally .cls-bar-row")
        wait_idle(page, timeout=WAIT, until=bars.nth(1))
        assert inside_viewport(page, answer), answer.bounding_box()
        answer_px = float(answer.evaluate("(e) => getComputedStyle(e).fontSize")[:-2])
        assert answer_px >= ANSWER_PX and answer_px > root_px(page), answer_px  # the largest text of the quiz
        right = page.locator(".cls-tally .cls-bar-row.cls-right").first
        assert inside_viewport(page, right), right.bounding_box()
        tops = [bars.nth(i).bounding_box()["y"] for i in range(bars.count())]
        assert bars.count() >= 2 and right.bounding_box()["y"] == min(tops), tops  # the right bar leads
        problems += both_sizes(page, "class_presenter")

        # ---- switched off: the usual sizes, and the link without it ----
        page.get_by_text("Projector mode", exact=True).click()
        expect(page.locator("html")).to_have_css("font-size", "16px", timeout=WAIT * 1000)
        page.wait_for_url(lambda url: "projector=" not in url)
        assert not page.errors, page.errors
    assert problems == [], problems
