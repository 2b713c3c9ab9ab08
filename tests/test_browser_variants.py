"""The Variants page in Chromium at 1280x720 (a projector, sidebar open) and 1920x1080: the answer
(headline cards and the held-out chart) on the first screen with nothing cut short; moving the
transition slider and PickyBPE's τ slider redraws the headline at the engine's numbers; the
PickyBPE timeline lists the engine's removals as rows of their own; each tab draws its view (the
controls walked at 1280x720; at 1920x1080, each tab as drawn); a
health example's link opens the Playground's *Why this split* on that token. Screenshots land in
test-artifacts/variants_*.png (the README's is tests/screenshots/variants_page.png, copied from
the 1280x720 one).

Each action waits for the text it should draw, never merely for idle."""

from __future__ import annotations

import pytest
from appserver import ARTIFACTS, SIZE_IDS, SIZES, cut_by_box, full_screenshot, require_chromium, wait_idle
from test_browser_layout import _SPILLED, inside_viewport
from test_variants_page import MERGES, held_out, picky_trained, removal_text, trained

pytestmark = pytest.mark.browser

require_chromium()

from playwright.sync_api import expect  # noqa: E402

WAIT = 120.0

# headline numbers and sentences, buttons, tabs: text cut short by its box
_CUT = ".bpe-card-number, .bpe-card-text, button p, .bpe-stat-value"


def headline(share: int, merges: int) -> str:
    """The first card's number, as the engine computes it."""
    c, s = held_out(trained(merges, None)), held_out(trained(merges, merges * share // 100))
    change = (s["tokens"] - c["tokens"]) / c["tokens"]
    return f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}"


def picky_headline(tau: float, merges: int) -> str:
    """The PickyBPE card's number, as the engine computes it."""
    c, p = held_out(trained(merges, None)), held_out(picky_trained(merges, tau))
    change = (p["tokens"] - c["tokens"]) / c["tokens"]
    return f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}"


def open_tab(page, label: str, until) -> None:
    page.get_by_role("tab", name=label, exact=True).click()
    wait_idle(page, timeout=WAIT, until=until)


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_the_variants_page_answers_on_the_first_screen_and_each_tab_draws(app_url, new_page, size):
    name = f"{size['width']}x{size['height']}"
    # a smaller budget than the page's default 3,000 merges (the README's screenshot): the same
    # layout, and a first visit that trains in seconds, not a minute, beside the other test files
    merges = MERGES
    with new_page(**size) as page:
        page.goto(f"{app_url}/Variants?var_merges={MERGES}")
        cards = page.locator(".bpe-card")
        first = page.locator(".bpe-card").nth(0)
        wait_idle(page, timeout=WAIT, until=[cards.nth(3), page.locator(".var-superwords")])
        expect(first.locator(".bpe-card-panel")).to_have_text("SuperBPE at t = 80%")
        expect(first.locator(".bpe-card-number")).to_have_text(headline(80, merges))
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        expect(charts).to_have_count(3, timeout=WAIT * 1000)
        # the answer on one screen: the slider, the four cards and the held-out charts
        assert inside_viewport(page, page.get_by_role("slider").first)
        for i in range(4):
            assert inside_viewport(page, cards.nth(i)), cards.nth(i).bounding_box()
        for i in range(2):
            assert inside_viewport(page, charts.nth(i)), charts.nth(i).bounding_box()
        assert cut_by_box(page, _CUT) == []
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.screenshot(path=str(ARTIFACTS / f"variants_{name}.png"))
        full_screenshot(page, ARTIFACTS / f"variants_full_{name}.png")

        if size["width"] != 1280:
            # the sliders and the timeline do the same at any size: walked at the projector's;
            # here each tab as drawn
            for tab, shot, drawn in (
                ("PickyBPE timeline", "timeline", page.locator("table.var-timeline")),
                ("Scaffold tokens", "scaffold", page.locator("table.var-scaffold")),
                ("Token health", "health", page.locator("table.var-health tr[data-name='o200k_base']")),
            ):
                open_tab(page, tab, drawn)
                assert cut_by_box(page, _CUT) == [] and page.evaluate(_SPILLED) == []
                assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
                page.screenshot(path=str(ARTIFACTS / f"variants_{shot}_{name}.png"))
            return
        # the transition slider, by keyboard: 80% -> 60%
        slider = page.get_by_role("slider").first
        slider.focus()
        slider.press("ArrowLeft")
        slider.press("ArrowLeft")
        wait_idle(page, timeout=WAIT, until=page.get_by_text("SuperBPE at t = 60%", exact=True))
        expect(first.locator(".bpe-card-number")).to_have_text(headline(60, merges))
        assert "var_t=60" in page.url
        page.screenshot(path=str(ARTIFACTS / f"variants_t60_{name}.png"))

        # PickyBPE's τ slider, by keyboard: 0.1 -> 0.2
        tau = page.get_by_role("slider").nth(1)
        tau.focus()
        tau.press("ArrowRight")
        wait_idle(page, timeout=WAIT, until=page.get_by_text("PickyBPE at τ = 0.2", exact=True))
        expect(cards.nth(1).locator(".bpe-card-number")).to_have_text(picky_headline(0.2, merges))
        assert "var_picky=0.2" in page.url

        # the timeline, removals only: the engine's removals, each a row of its own
        open_tab(page, "PickyBPE timeline", page.locator("table.var-timeline"))
        page.get_by_text("Removals only", exact=True).click()
        wait_idle(page, timeout=WAIT, until=page.locator("table.var-timeline tr.var-tl-removal"))
        expect(page.locator("table.var-timeline tr.var-tl-merge")).to_have_count(0)
        trainer = picky_trained(merges, 0.2)
        removals = trainer.records.all_removals()
        rows = page.locator("table.var-timeline tr.var-tl-removal")
        expect(rows).to_have_count(min(200, len(removals)))
        expect(rows.first.locator("td").nth(2)).to_have_text(removal_text(trainer.tokenizer(), trainer, removals[0]))
        assert cut_by_box(page, _CUT) == [] and page.evaluate(_SPILLED) == []
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        page.screenshot(path=str(ARTIFACTS / f"variants_timeline_{name}.png"))

        open_tab(page, "Scaffold tokens", page.locator("table.var-scaffold"))
        expect(page.get_by_text("scaffold tokens at this τ")).to_be_visible()
        assert cut_by_box(page, _CUT) == [] and page.evaluate(_SPILLED) == []
        page.screenshot(path=str(ARTIFACTS / f"variants_scaffold_{name}.png"))

        open_tab(page, "Token health", page.locator("table.var-health tr[data-name='o200k_base']"))
        expect(page.locator("table.var-health tr")).to_have_count(5)  # a head and four tokenizers
        link = page.locator("a.var-why").first
        expect(link).to_be_visible(timeout=WAIT * 1000)
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        assert page.evaluate(_SPILLED) == []
        page.screenshot(path=str(ARTIFACTS / f"variants_health_{name}.png"))
        if size["width"] == 1280:
            # the example's link: the Playground's Why this split, o200k_base's " I'" cut in two
            link.click()
            wait_idle(page, timeout=WAIT, until=page.get_by_text("Lineage of a token"))
            expect(page.get_by_text("(id 3413)", exact=False).first).to_be_visible()
            assert "view=why" in page.url
