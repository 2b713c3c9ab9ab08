"""The Fairness page in Chromium at 1280x720 (a projector, sidebar open) and 1920x1080: the
answer (headline cards, both sides' sentences, curves and served-language strips) on the first
screen with nothing cut short; the stepper's Back, Step, +10 and keys each change both
sentences to the merge they name at once in the browser (checked against the engine alone), the
charts and the languages' table follow its report, and three quick Steps move three merges
(the controls walked at 1280x720; at 1920x1080, Back and the page as drawn). Screenshots land in
test-artifacts/fairness_*.png (the README's is tests/screenshots/fairness_page.png, copied from
the 1280x720 one).

Each action waits for the text it should draw, never merely for idle."""

from __future__ import annotations

import pytest
from appserver import ARTIFACTS, SIZE_IDS, SIZES, cut_by_box, full_screenshot, require_chromium, wait_idle
from test_browser import _quick_clicks as quick_clicks
from test_browser_layout import inside_viewport
from test_fairness_page import classical_sentence, engine

pytestmark = pytest.mark.browser

require_chromium()

from playwright.sync_api import expect  # noqa: E402

WAIT = 120.0


@pytest.fixture(scope="module")
def classical():
    return engine("classical")


# headline numbers, buttons, the slider's value and the sentences: text cut short by its box
_CUT = ".bpe-card-number, .bpe-card-text, .fair-say, button p"


def says(page, k: int, classical) -> None:
    """Wait until both sides speak of merge k, and the classical one as the engine says."""
    left, right = page.locator(".fair-say").nth(0), page.locator(".fair-say").nth(1)
    expect(left).to_have_text(classical_sentence(classical, k), timeout=WAIT * 1000)
    expect(right).to_contain_text(f"Merge {k} (", timeout=WAIT * 1000)
    expect(page.get_by_text(f"Merge {k:,} of 500")).to_be_visible()


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_the_fairness_page_answers_on_the_first_screen_and_steps_merge_by_merge(app_url, new_page, classical, size):
    name = f"{size['width']}x{size['height']}"
    with new_page(**size) as page:
        page.goto(f"{app_url}/Fairness")
        cards = page.locator(".bpe-card")
        wait_idle(page, timeout=WAIT, until=[cards.nth(2), page.locator(".fair-say").nth(1)])
        says(page, 500, classical)  # a new run opens at its last merge: the answer first
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        expect(charts).to_have_count(6, timeout=WAIT * 1000)
        # the main view on one screen: the three cards, both sentences, both curves and strips
        for i in range(3):
            assert inside_viewport(page, cards.nth(i)), cards.nth(i).bounding_box()
        for i in range(2):
            assert inside_viewport(page, page.locator(".fair-say").nth(i))
        for i in range(4):
            assert inside_viewport(page, charts.nth(i)), (i, charts.nth(i).bounding_box())
        assert cut_by_box(page, _CUT) == []
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.screenshot(path=str(ARTIFACTS / f"fairness_{name}.png"))

        page.get_by_role("button", name="Back", exact=True).click()
        says(page, 499, classical)
        if size["width"] != 1280:
            # the controls do the same at any size: walked at the projector's; here the page as drawn
            assert cut_by_box(page, _CUT) == []
            full_screenshot(page, ARTIFACTS / f"fairness_{name}_full.png")
            return
        # both sides' sentences are announced (the stepper's live region), not drawn twice
        live = page.locator('.sp-sentence[aria-live="polite"]')
        expect(live).to_contain_text(classical_sentence(classical, 499))
        box = live.bounding_box()
        assert box is not None and box["height"] <= 1 and box["width"] <= 1, box
        # the charts and the table below follow the stepper's report
        expect(page.get_by_text("Each language at merge 499 ")).to_be_visible(timeout=WAIT * 1000)
        slider = page.get_by_role("slider", name="Step shown")
        slider.focus()
        page.keyboard.press("Home")  # the slider to merge 0
        expect(page.locator(".fair-say").nth(0)).to_contain_text("No merge yet", timeout=WAIT * 1000)
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        says(page, 3, classical)
        page.get_by_role("button", name="Step", exact=True).click()
        says(page, 4, classical)
        page.get_by_role("button", name="+10", exact=True).click()
        says(page, 14, classical)
        # three quick Steps, 30 ms apart, each drawn in the browser at once: three merges, and the
        # server's merge shown (its reports) ends there too
        quick_clicks(page, "Step", 3)
        says(page, 17, classical)
        expect(page.get_by_text("Each language at merge 17 ")).to_be_visible(timeout=WAIT * 1000)
        page.wait_for_timeout(1500)  # a merge too many, or one taken back, would land by now
        wait_idle(page, timeout=WAIT, settle=0)
        says(page, 17, classical)
        expect(page.get_by_text("Each language at merge 17 ")).to_be_visible()
        assert page.locator('[data-testid="stException"]').count() == 0
        assert cut_by_box(page, _CUT) == []
        page.screenshot(path=str(ARTIFACTS / f"fairness_{name}_merge_17.png"))
        full_screenshot(page, ARTIFACTS / f"fairness_{name}_full.png")
        page.wait_for_function("() => location.search.includes('fair_k=17')", timeout=10_000)  # the link caught up
        assert not page.errors, page.errors
