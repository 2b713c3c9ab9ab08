"""Projector-first: each page's answer on its first screen at 1280x720 (sidebar open), measured
by positions, not pixels; tables inside their columns; nothing a teacher reads cut to "…"; the
lineage's text readable; screenshots of every page at 1280x720 and 1920x1080 with Devanagari,
Hangul, CJK and emoji glyphs (test-artifacts/layout_*.png).

Each action waits for the text or element it should draw before anything is measured."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from appserver import ARTIFACTS, full_screenshot, require_chromium, wait_idle

pytestmark = pytest.mark.browser

require_chromium()

from playwright.sync_api import expect  # noqa: E402

PROJECTOR = {"width": 1280, "height": 720}
WIDE = {"width": 1920, "height": 1080}
KOREAN = "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다."
MIXED = "सभी मनुष्यों को गौरव 모든 인간은 人人生而自由 👨‍👩‍👧‍👦 🧑🏽‍💻"
FOUR = "trained,gpt2,cl100k_base,o200k_base"
WAIT = 120.0


def open_page(page, url: str, until) -> None:
    page.goto(url)
    wait_idle(page, timeout=WAIT, until=until)


def inside_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["x"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] + box["width"] <= size["width"]
    )


# Elements whose text is cut short: a button's label, a metric's value, a select's value, a
# stat or a headline number narrower than its text (CSS ellipsis or overflow hidden).
_CUT = """() => {
  const cut = [];
  const visible = (e) => e.offsetParent !== null && e.getClientRects().length > 0;
  const check = (e, what) => {
    if (visible(e) && e.scrollWidth > e.clientWidth + 1) cut.push(what + ": " + (e.innerText || e.textContent).trim().slice(0, 60));
  };
  document.querySelectorAll('button').forEach((b) => b.querySelectorAll('p, div, span').forEach((e) => check(e, 'button')));
  document.querySelectorAll('[data-testid="stMetricValue"], [data-testid="stMetricValue"] div').forEach((e) => check(e, 'metric'));
  document.querySelectorAll('[data-baseweb="select"] [value], [data-baseweb="select"] div[title], [data-baseweb="select"] span')
    .forEach((e) => check(e, 'select'));
  document.querySelectorAll('.bpe-stat-value, .bpe-card-number').forEach((e) => check(e, 'number'));
  return cut;
}"""

# Tables drawn as HTML whose right edge passes the column (or page block) they sit in.
_SPILLED = """() => [...document.querySelectorAll('table.bpe-hist, table.bpe-pairs, table.bpe-cmp')].flatMap((t) => {
  const box = t.closest('.bpe-scroll') || t;
  const col = t.closest('.lv-cell') || t.closest('[data-testid="stColumn"]') || t.closest('[data-testid="stVerticalBlock"]');
  const right = box.getBoundingClientRect().right, limit = col.getBoundingClientRect().right;
  return right > limit + 1 ? [t.className + ' ' + Math.round(right) + ' > ' + Math.round(limit)] : [];
})"""


def cut_short(page) -> list[str]:
    return page.evaluate(_CUT)


def test_playground_korean_with_four_tokenizers_shows_every_count_on_the_first_screen(app_url, new_page):
    with new_page(**PROJECTOR) as page:
        rows = page.locator("table.bpe-cmp tr[data-name]")
        open_page(page, f"{app_url}/Playground?text={quote(KOREAN)}&tokenizers={FOUR}", until=rows.nth(3))
        expect(rows).to_have_count(4, timeout=WAIT * 1000)
        names = [rows.nth(i).get_attribute("data-name") for i in range(4)]
        assert names == ["trained (merge 0)", "gpt2", "cl100k_base", "o200k_base"]
        for i in range(4):
            count = rows.nth(i).locator("td").nth(1)  # the token count
            assert re.fullmatch(r"[\d,]+", count.inner_text()), count.inner_text()
            assert inside_viewport(page, count), (names[i], count.bounding_box())
        assert cut_short(page) == [] and page.evaluate(_SPILLED) == []
        page.screenshot(path=str(ARTIFACTS / "layout_playground_korean_1280x720.png"))
        assert not page.errors, page.errors


def test_compare_shows_the_parity_headline_on_the_first_screen_after_compare(app_url, new_page):
    with new_page(**PROJECTOR) as page:
        open_page(page, f"{app_url}/Compare", until=page.get_by_role("button", name="Compare", exact=True))
        chosen = page.locator('[data-testid="stMultiSelect"]').first.inner_text()
        assert all(name in chosen for name in ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt"))
        page.get_by_role("button", name="Compare", exact=True).click()
        card = page.locator(".bpe-card").filter(has=page.locator(".bpe-card-panel", has_text="Parity"))
        wait_idle(page, timeout=WAIT, until=card)
        number = card.locator(".bpe-card-number")
        assert re.fullmatch(r"\d+\.\d×", number.inner_text())
        assert inside_viewport(page, card), card.bounding_box()
        # the parity tables fit (parity, fertility, Rényi efficiency): no sideways scroll inside them
        page.get_by_role("tab", name="Parity across languages").click()
        grids = page.locator('[role="tabpanel"]:visible .bpe-scroll')
        expect(grids).to_have_count(3)
        for i in range(3):
            assert grids.nth(i).evaluate("(e) => e.scrollWidth <= e.clientWidth + 1")
        assert cut_short(page) == [] and page.evaluate(_SPILLED) == []
        page.screenshot(path=str(ARTIFACTS / "layout_compare_pressed_1280x720.png"))
        assert not page.errors, page.errors


@pytest.mark.parametrize("big", [False, True], ids=["normal-text", "projector-mode"])
def test_train_at_step_1000_keeps_every_table_inside_its_column(app_url, new_page, big):
    with new_page(**PROJECTOR) as page:
        # step 999: at 1,000 the run is known to be finished (the stepper trains ahead) and no
        # pair table is left to draw
        status = page.get_by_text(re.compile(r"^Step 999 of 999 trained"))
        open_page(page, f"{app_url}/Train?step=999", until=[status, page.locator("table.bpe-hist tr.bpe-now")])
        if big:
            page.get_by_text("Projector mode", exact=True).click()
            # the projector mode's stylesheet comes with the page's rerun (20 px at 1280x720)
            expect(page.locator("html")).to_have_css("font-size", "20px", timeout=WAIT * 1000)
            wait_idle(page, timeout=WAIT, settle=0, until=status)
        assert page.evaluate(_SPILLED) == []
        first_pair = page.locator("table.bpe-pairs tr").nth(1)
        assert inside_viewport(page, page.get_by_role("button", name="Step", exact=True))
        assert inside_viewport(page, first_pair), first_pair.bounding_box()
        assert cut_short(page) == []
        page.screenshot(path=str(ARTIFACTS / f"layout_train_1000{'_big' if big else ''}_1280x720.png"))
        assert not page.errors, page.errors


def test_a_long_tokens_lineage_keeps_its_text_at_least_12_px(app_url, new_page):
    with new_page(**PROJECTOR) as page:
        why = f"{app_url}/Playground?tokenizers=o200k_base&view=why"
        open_page(page, why, until=page.get_by_role("heading", name="Lineage of a token"))
        # the English example's most merged piece under o200k_base is " accomplishment"
        tree = page.locator(".bpe-lin")
        wait_idle(page, timeout=WAIT, settle=0, until=tree.locator(".bpe-chip", has_text="·accomplishment"))
        sizes = tree.evaluate("""(t) => [...t.querySelectorAll('.bpe-chip, .bpe-lin-meta')]
            .map((e) => parseFloat(getComputedStyle(e).fontSize))""")
        assert len(sizes) >= 2 * 13 and min(sizes) >= 12, sizes
        # a wide tree scrolls inside its box; the page itself does not grow sideways
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1")
        tree.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "layout_lineage_accomplishment_1280x720.png"))
        assert not page.errors, page.errors


PAGES = {
    "home": ("/", lambda page: page.locator(".bpe-row").first),
    "corpus": ("/Corpus?corpus=udhr_hi.txt", lambda page: page.locator(".bpe-stat-value").first),
    "train_hindi": ("/Train?corpus=udhr_hi.txt&step=40", lambda page: page.locator("table.bpe-hist tr.bpe-now")),
    "playground_scripts": (
        f"/Playground?text={quote(MIXED)}&tokenizers={FOUR}",
        lambda page: page.locator("table.bpe-cmp tr[data-name]").nth(3),
    ),
    "compare": ("/Compare", lambda page: page.get_by_role("button", name="Compare", exact=True)),
}


@pytest.mark.parametrize("size", [PROJECTOR, WIDE], ids=["1280x720", "1920x1080"])
def test_every_page_fits_and_shows_real_glyphs_in_every_script(app_url, new_page, size):
    with new_page(**size) as page:
        for name, (path, ready) in PAGES.items():
            open_page(page, app_url + path, until=ready(page))
            assert cut_short(page) == [], name
            assert page.evaluate(_SPILLED) == [], name
            assert page.locator('[data-testid="stException"]').count() == 0, name
            page.screenshot(path=str(ARTIFACTS / f"layout_{name}_{size['width']}x{size['height']}.png"))
            full_screenshot(page, ARTIFACTS / f"layout_{name}_{size['width']}x{size['height']}_full.png")
        # the glyphs are drawn by real fonts: Devanagari, Hangul, Han and emoji each take width
        # (a missing font draws every character as the same empty box)
        widths = page.evaluate("""() => ['स', 'म', '모', '든', '人', '由', '👨‍👩‍👧‍👦'].map((c) => {
            const s = document.createElement('span'); s.textContent = c; s.style.fontSize = '32px';
            document.body.appendChild(s); const w = s.getBoundingClientRect().width; s.remove(); return w; })""")
        assert all(w > 8 for w in widths) and len({round(w) for w in widths[:2]}) >= 1, widths
        assert not page.errors, page.errors
