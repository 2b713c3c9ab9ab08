"""Right-to-left tokens as Chromium draws them (1280x720): an Arabic step sentence keeps its
left-to-right order around its tokens ("‘و’ + ‘ال’ → ‘وال’", never "وال → ال + و"), an Arabic
word's and a Hebrew text's tokens run in their reading order; and Back after Steps leaves the
Train page (a Step replaces the history entry). Positions are measured where the browser drew
each character and chip, not read from the text."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from appserver import ARTIFACTS, require_chromium, wait_idle

pytestmark = pytest.mark.browser

require_chromium()

PROJECTOR = {"width": 1280, "height": 720}
WAIT = 90.0  # s: waits end as soon as the text is drawn; a loaded machine may need long

# each character of an element's text as drawn: [character, left, right, top]
_DRAWN = """(el) => {
  const out = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    for (let i = 0; i < n.data.length; i++) {
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + 1);
      const b = r.getBoundingClientRect();
      out.push([n.data[i], b.left, b.right, b.top]);
    }
  return out;
}"""


def see(page, what, *, settle: float = 5.0):
    loc = (page.get_by_text(what) if isinstance(what, (str, re.Pattern)) else what).first
    wait_idle(page, timeout=WAIT, settle=settle, until=loc)
    return loc


def extent(drawn, start: int, end: int) -> tuple[float, float, float]:
    """Left, right and top of what characters ``start``..``end`` of the text drew (the isolates
    around a token draw nothing)."""
    boxes = [(left, right, top) for _, left, right, top in drawn[start:end] if right - left > 0.5]
    assert boxes, "".join(c for c, *_ in drawn[start:end])
    return min(b[0] for b in boxes), max(b[1] for b in boxes), boxes[0][2]


def assert_drawn_in_sentence_order(drawn) -> str:
    """In the sentence's "‘A’ + ‘B’ → ‘C’", A, the plus, B, the arrow and C lie left to right on
    one line, as an English sentence reads (a right-to-left run across them would reverse it)."""
    text = "".join(c for c, *_ in drawn)
    m = re.search(r"‘(.+?)’ \+ ‘(.+?)’ → ‘(.+?)’", text)
    assert m, text
    plus, arrow = text.index("+", m.end(1)), text.index("→", m.end(2))
    pieces = [
        extent(drawn, *m.span(1)),
        extent(drawn, plus, plus + 1),
        extent(drawn, *m.span(2)),
        extent(drawn, arrow, arrow + 1),
        extent(drawn, *m.span(3)),
    ]
    assert len({round(top) for *_, top in pieces}) == 1, pieces  # one line
    for (_, right, _), (left, _, _) in zip(pieces, pieces[1:]):
        assert right <= left + 1, (text[: m.end() + 1], pieces)
    return m.group(0)


def assert_words_before_their_counts(drawn) -> int:
    """In the sentence's "(W×7, W×2, …", each word W lies left of its "×7", and the count left of
    the next word, on one line (an unset-apart Arabic word would take its count and comma into its
    own right-to-left run); how many words were checked."""
    text = "".join(c for c, *_ in drawn)
    start = text.index("(")
    # found by the text alone (the isolates around a word may be there or not: the drawing says)
    words = list(re.finditer(r"([\u0600-\u06ff]+)[\u2066-\u2069]*×(\d+)", text[start:]))
    for m, after in zip(words, [*words[1:], None]):
        word = extent(drawn, start + m.start(1), start + m.end(1))
        count = extent(drawn, start + m.start(2) - 1, start + m.end(2))  # the × and the digits
        assert word[1] <= count[0] + 1 and word[2] == count[2], (m.group(0), word, count)
        if after is not None:
            following = extent(drawn, start + after.start(1), start + after.end(1))
            assert count[1] <= following[0] + 1, (m.group(0), count, following)
    return len(words)


def chip_lefts(locator) -> list[float]:
    return [box["x"] for box in (chip.bounding_box() for chip in locator.all())]


def test_arabic_and_hebrew_tokens_are_drawn_in_reading_order_and_back_leaves_the_train_page(app_url, new_page):
    link = urlencode(
        {
            "corpus": "udhr_ar.txt",
            "preset": "hf-course",
            "merges": "50",
            "step": "6",
            "tokenizers": "o200k_base",
            "text": "Hello שלום עולם",
        }
    )
    with new_page(**PROJECTOR) as page:
        page.goto(f"{app_url}/Playground?{link}")
        strip = see(page, page.locator(".bpe-strip .bpe-row"))
        # o200k_base: Hello | ·שלום | ·עולם; the Hebrew words right to left after the Latin one
        hello, shalom, olam = chip_lefts(strip.locator(".bpe-chip"))
        assert hello < olam < shalom, (hello, shalom, olam)

        page.locator('[data-testid="stSidebarNav"] a', has_text="Train").click()
        see(page, re.compile(r"^Step 6 of 6 trained"))
        step = page.get_by_role("button", name="Step", exact=True)
        for i in (7, 8, 9):
            step.click()
            see(page, re.compile(rf"^Step {i} of {i} trained"))
        # the step sentence: ‘و’ + ‘ال’ → ‘وال’ (udhr_ar.txt's merge 9), in the sentence's order,
        # and each word it occurs in before its count: "(والحريات×7, والجماعات×2, …"
        drawn = page.locator(".sp-sentence", has_text="Step 9.").evaluate(_DRAWN)
        assert assert_drawn_in_sentence_order(drawn) == "‘\u2067و\u2069’ + ‘\u2067ال\u2069’ → ‘\u2067وال\u2069’"
        assert assert_words_before_their_counts(drawn) >= 3
        # the history's pair and a segmented word: the first token on the right (read right to left)
        first, second = chip_lefts(page.locator("table.bpe-hist tr.bpe-now td:nth-child(2) .bpe-chip"))
        assert first > second
        word = page.locator(".bpe-row", has=page.locator(".bpe-seq[dir=rtl] .bpe-chip:nth-child(3)")).first
        lefts = chip_lefts(word.locator(".bpe-chip"))
        assert len(lefts) >= 3 and lefts == sorted(lefts, reverse=True), lefts
        page.screenshot(path=str(ARTIFACTS / "bidi_01_train_arabic_step.png"))

        # three Steps replaced the history entry: one Back leaves the Train page for the Playground
        page.go_back()
        page.wait_for_url(re.compile(r"/Playground\?"), timeout=15_000)  # a history step: at once
        see(page, "What each tokenizer makes of a text", settle=0)
        assert not page.errors, page.errors
