"""The running app in headless Chromium: a person picks a corpus, steps ten merges, sees the
history and charts, visits every page; full-page screenshots land in test-artifacts/.

After every click, fill, upload or key press a test waits for what that action's rerun draws
(``wait_idle(page, until=..., gone=...)``, ``wait_status``, ``nav``, Playwright's retrying
``expect``) before it checks anything: the rerun may start late on a busy machine.

``BROWSER_REPEAT=N`` runs every test of this module N times (to hunt for flaky ones)."""

from __future__ import annotations

import os
import re
import time

import pytest
from appserver import ARTIFACTS, full_screenshot, require_chromium, stepper_settled, wait_idle
from conftest import read_sample

pytestmark = pytest.mark.browser

require_chromium()

from playwright.sync_api import expect  # noqa: E402  (after the skip: no Playwright, no browser tests)


def pytest_generate_tests(metafunc):
    """``BROWSER_REPEAT=N``: every test here N times over (rounds 1..N)."""
    rounds = int(os.environ.get("BROWSER_REPEAT", "1") or 1)
    if rounds > 1:
        metafunc.fixturenames.append("browser_round")
        metafunc.parametrize("browser_round", range(1, rounds + 1), ids=lambda r: f"round{r}")


# Each page's st.title: nav() waits for it, so a check after nav sees the new page.
HEADINGS = {
    "Home": "BPE Explorer",
    "Corpus": "Corpus",
    "Train": "Train, one merge at a time",
    "Playground": "Playground",
    "Compare": "Compare corpora and languages",
}


@pytest.fixture()
def page(app_url, new_page):
    """A new session's tab: the test's first :func:`nav` opens its page by its address (a load of
    the Home page first and a move from there cost ~1.4 s more of the browser's CPU)."""
    with new_page() as page:
        page.app_url, page.opened = app_url, False
        yield page
        assert not page.errors, page.errors


def heading(page, title: str):
    """The h1 of the page named ``title`` in the sidebar."""
    return page.get_by_role("heading", level=1, name=HEADINGS[title], exact=True)


def nav(page, title: str, *, timeout: float = 60.0) -> None:
    """Open a page from the sidebar (the session's first page: by its address); return once its
    heading is drawn and its run has ended."""
    if page.opened:
        page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    else:
        page.goto(page.app_url + ("/" if title == "Home" else f"/{title}"))
        page.opened = True
        timeout = max(timeout, 90.0)  # a first visit may wait for the server's warm-up
    wait_idle(page, timeout=timeout, until=heading(page, title))
    if title == "Train":
        stepper_settled(page)


def becomes_visible(locator, *, timeout: float = 30.0) -> bool:
    """``locator.is_visible()``, retried until it is true or ``timeout`` (seconds) runs out."""
    try:
        expect(locator).to_be_visible(timeout=timeout * 1000)
    except AssertionError:
        return False
    return True


def pick_corpus(page, name: str) -> None:
    """On the Corpus page, add a bundled corpus and remove the default one."""
    nav(page, "Corpus")
    corpus = page.locator('[data-testid="stMultiSelect"]')
    corpus.locator("input").click()
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    wait_idle(page, until=page.get_by_text(f"{name} —"))  # the chosen corpus's caption
    page.keyboard.press("Escape")
    corpus.get_by_role("button", name=re.compile("english_frankenstein")).click()
    wait_idle(page, gone=page.get_by_text("english_frankenstein.txt —"))


def status_text(page) -> str:
    return page.get_by_text(re.compile(r"^Step \d[\d,]* of")).inner_text()


def wait_status(page, pattern: str, *, timeout: float = 60.0) -> str:
    """Wait (retrying) until the status line ("Step k of n trained ...") matches a regex and the
    run that drew it has ended; return the status line."""
    wait_idle(page, timeout=timeout, until=page.get_by_text(re.compile(pattern)))
    return status_text(page)


# Streamlit's Markdown draws these when typed between spaces (as a "-> " in a caption)
_DRAWN_AS = ((r"<->", "↔"), (r"->", "→"), (r"<-", "←"), (r"--", "—"), (r">=", "≥"), (r"<=", "≤"), (r"~=", "≈"))


def as_shown(text: str) -> str:
    """Plain text as a Markdown element (a caption, say) shows it: "a -> b" reads "a → b".

    >>> as_shown("one 'left right -> token' line; a->b")
    "one 'left right → token' line; a->b"
    """
    for typed, drawn in _DRAWN_AS:
        text = re.sub(rf"(^|\s){re.escape(typed)}(\s|$)", rf"\g<1>{drawn}\g<2>", text)
    return text


def bytes_metric(page):
    """The Corpus page's first metric: the corpus's size in bytes."""
    return page.locator(".bpe-stat-value").first


def test_teacher_picks_a_corpus_steps_ten_times_and_sees_history_and_charts(page):
    nav(page, "Home")
    assert page.locator('[data-testid="stException"]').count() == 0
    full_screenshot(page, ARTIFACTS / "01_home.png")

    pick_corpus(page, "udhr_en.txt")
    assert page.get_by_text("udhr_en.txt —").count() >= 1
    expect(bytes_metric(page)).to_contain_text("10,712", timeout=30_000)
    assert "10,712" in bytes_metric(page).inner_text()
    assert page.locator('[data-testid="stException"]').count() == 0
    full_screenshot(page, ARTIFACTS / "02_corpus.png")

    nav(page, "Train")
    assert becomes_visible(page.get_by_text(re.compile(r"^udhr_en\.txt · gpt2 · 1,000 merges")))
    step = page.get_by_role("button", name="Step", exact=True)
    for i in range(1, 11):
        step.click()
        wait_status(page, rf"^Step {i} of {i} trained")
    rows = page.locator("table.bpe-hist tr")
    expect(rows).to_have_count(11, timeout=30_000)
    assert rows.count() == 11  # header + ten merges, newest first
    assert rows.nth(1).get_attribute("class") == "bpe-now" and rows.nth(1).locator("td").first.inner_text() == "10"
    page.get_by_text("Full history", exact=True).click()
    grid = page.locator('[data-testid="stDataFrame"] [role="grid"]')  # the only grid: the pair table is HTML
    wait_idle(page, until=page.locator('[data-testid="stDataFrame"]'))
    grid.wait_for(state="attached", timeout=30_000)
    assert grid.get_attribute("aria-rowcount") == "11"
    charts = page.locator(".lc-box svg")
    expect(charts).to_have_count(4, timeout=30_000)
    assert charts.first.locator("polyline").count() == 1
    # hovering anywhere over a curve (not only its 1-pixel line) shows every series at that step
    compression = page.locator('.lc-box:has(svg[data-title="Compression"])')
    compression.scroll_into_view_if_needed()
    box = compression.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.55, box["y"] + box["height"] * 0.4)
    tooltip = compression.locator(".lc-tip")
    tooltip.wait_for(state="visible", timeout=10_000)
    assert "bytes per token" in tooltip.inner_text() and "chars per token" in tooltip.inner_text()
    assert page.locator(".bpe-chip").count() > 20
    assert page.locator('[data-testid="stException"]').count() == 0
    full_screenshot(page, ARTIFACTS / "03_train_after_10_steps.png")


def test_play_advances_pauses_on_a_page_switch_resumes_on_return_and_run_to_end_draws_the_final_chart(page):
    """One session's Train page through play, a page switch, pause and run to end (each of these
    opened a page and trained from step 0 in a test of its own)."""
    nav(page, "Train")
    play, pause = (page.get_by_role("button", name=label, exact=True) for label in ("Play", "Pause"))
    play.click()
    wait_status(page, r"^Step [3-9]\d* of")
    # a page switch pauses autoplay; the return resumes it
    nav(page, "Corpus")
    nav(page, "Train")
    assert becomes_visible(pause)
    speed = page.get_by_role("combobox", name="Play speed")
    speed.select_option(label="fast (0.4 s)")
    expect(speed).to_have_value("400", timeout=30_000)
    first = int(re.match(r"Step ([\d,]+) of", status_text(page)).group(1).replace(",", ""))
    # two more steps drawn while nobody clicks (waited for, not timed: a slow machine only takes longer)
    page.wait_for_function(
        "n => Number(document.querySelector('.sp-root[data-drawn]')?.dataset.step) >= n", arg=first + 2, timeout=30_000
    )
    assert pause.is_visible()
    # Pause stops it: a step already on its way lands, none follows (at 0.4 s a step, 1.5 s is
    # three steps' time)
    pause.click()
    wait_idle(page, until=play)
    wait_idle(page, settle=0)  # no new action: only let a run still going end
    paused = status_text(page)
    page.wait_for_timeout(1500)
    assert status_text(page) == paused and play.is_visible()
    # Run to end from there: the last merge and the final charts
    page.get_by_role("button", name="Run to end").click()
    assert "training stopped: 1,000 merges done" in wait_status(page, r"^Step .* training stopped", timeout=120)
    expect(page.locator(".lc-box svg")).to_have_count(4, timeout=30_000)
    full_screenshot(page, ARTIFACTS / "07_train_run_to_end.png")


def test_an_undecodable_upload_gets_a_choice_survives_a_page_switch_and_can_be_removed(page):
    nav(page, "Corpus")
    page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        files=[{"name": "latin.txt", "mimeType": "text/plain", "buffer": "Café crème brûlée".encode("latin-1")}]
    )
    # the upload's rerun draws the error; it may start well after set_input_files returns
    undecodable = page.get_by_text("latin.txt: the file is not valid UTF-8: byte 0xe9 at offset 3")
    wait_idle(page, until=undecodable)
    assert undecodable.is_visible()
    page.get_by_text("Latin-1: every byte").click()
    decoded = page.get_by_text(re.compile(r"^latin\.txt · 17 bytes · decoded as Latin-1"))
    wait_idle(page, until=decoded, gone="not valid UTF-8")
    assert decoded.is_visible()
    assert page.get_by_text("not valid UTF-8").count() == 0
    # english_frankenstein.txt (421,530 bytes) + the upload as UTF-8 (21 bytes)
    expect(bytes_metric(page)).to_contain_text("421,551", timeout=30_000)
    assert "421,551" in bytes_metric(page).inner_text()
    full_screenshot(page, ARTIFACTS / "08_corpus_upload.png")
    nav(page, "Train")
    assert becomes_visible(page.get_by_text(re.compile(r"^english_frankenstein\.txt, latin\.txt · gpt2")))
    nav(page, "Corpus")
    assert becomes_visible(decoded)
    expect(bytes_metric(page)).to_contain_text("421,551", timeout=30_000)
    assert "421,551" in bytes_metric(page).inner_text()
    page.get_by_role("button", name="Remove", exact=True).click()
    wait_idle(page, gone="latin.txt")
    assert page.get_by_text("latin.txt").count() == 0
    expect(bytes_metric(page)).to_contain_text("421,530", timeout=30_000)
    assert "421,530" in bytes_metric(page).inner_text()


def test_stop_interrupts_run_to_end_and_keeps_the_merges_done(page):
    # The 'bytes' preset does not pre-tokenize: the default corpus (0.4 MB) is one sequence and
    # 150,000 of its merges take minutes (the first 5,000 alone seconds), so Stop lands mid-run
    # however fast the machine is.
    nav(page, "Train")
    preset = page.locator('[data-testid="stSelectbox"]').filter(has_text="Preset")
    preset.locator("input").click()
    page.get_by_role("option", name="bytes (seed 002)").click()
    wait_idle(page, until=re.compile(r"^english_frankenstein\.txt · bytes · "))  # the settings line under the title
    stepper_settled(page)  # another trainer: the stepper starts again from the step shown alone
    merges = page.get_by_role("spinbutton", name="Merges", exact=True)
    merges.fill("200000")
    merges.press("Enter")
    wait_idle(page, until=re.compile(r"· bytes · 200,000 merges"))
    page.get_by_role("button", name="Run to end").click()
    stop = page.get_by_role("button", name="Stop training")
    stop.wait_for(timeout=30_000)
    page.wait_for_timeout(800)
    stop.click()
    # the stopped page: no Stop button, the step controls back
    wait_idle(page, timeout=60, until=page.get_by_role("button", name="Step", exact=True), gone=stop)
    text = status_text(page)
    steps = int(re.match(r"Step ([\d,]+) of", text).group(1).replace(",", ""))
    assert 0 < steps < 150_000 and "training stopped" not in text
    assert f"vocabulary {256 + steps:,}" in text  # the bytes preset: 256 byte ids, one per merge
    page.get_by_role("button", name="Step", exact=True).click()
    wait_status(page, rf"^Step {steps + 1:,} of {steps + 1:,}")
    assert status_text(page).startswith(f"Step {steps + 1:,} of {steps + 1:,}")


HOSTILE = "Hi <script>alert(1)</script> and <img src=x onerror=alert(1)> **bold** $x^2$ <|endoftext|>"


def test_playground_shows_hostile_text_literally_with_cl100k_and_the_trained_tokenizer(page):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    nav(page, "Train")  # the default corpus: its preset's full byte alphabet spells any text (no <unk>)
    page.get_by_role("button", name="+10", exact=True).click()
    wait_status(page, r"^Step 10 of 10 trained")
    nav(page, "Playground")
    box = page.locator('[data-testid="stTextArea"] textarea')
    box.fill(HOSTILE)
    box.press("Control+Enter")
    rows = page.locator("div.bpe-text")  # trained, cl100k_base (the dropout sample is drawn only when opened)
    # chips read back as text spell the input (spaces shown as ·): both tokenizers' rows
    wait_idle(
        page,
        timeout=120,
        until=[
            rows.nth(0).filter(has_text="<script>alert(1)</script>"),
            rows.nth(1).filter(has_text="<script>alert(1)</script>"),
        ],
    )
    chosen = page.locator('[data-testid="stMultiSelect"]').inner_text()
    assert "trained in this session" in chosen and "cl100k_base" in chosen
    assert page.locator('tr[data-name="trained (merge 10)"]').is_visible()
    expect(rows).to_have_count(2, timeout=30_000)
    assert rows.count() == 2
    # each tokenizer's chips, read back as text, spell the input exactly (spaces shown as ·)
    for i in range(2):
        assert rows.nth(i).inner_text().replace("\n", "") == HOSTILE.replace(" ", "·")
    assert page.locator("img[src='x']").count() == 0
    assert page.locator('script:text("alert(1)")').count() == 0
    assert page.locator("strong", has_text="bold").count() == 0 and page.locator(".katex").count() == 0
    assert not dialogs
    page.set_viewport_size({"width": 1280, "height": 720})
    page.screenshot(path=str(ARTIFACTS / "09_playground_1280x720.png"))
    full_screenshot(page, ARTIFACTS / "09_playground.png")

    page.get_by_text("Why this split").click()
    wait_idle(page, timeout=60, until=page.get_by_role("heading", name="Lineage of a token"))
    page.get_by_role("combobox", name="Tokenizer", exact=True).click()
    page.get_by_role("option", name="cl100k_base").click()
    # a bundled tokenizer's token tells its merge rank (the trained one's, the step it was learned at)
    wait_idle(page, timeout=60, until=re.compile(r"\(id \d+\): merge rank [\d,]+; built by"))
    graph = page.locator(".bpe-lin")
    graph.wait_for(timeout=30_000)
    assert graph.locator("li").count() >= 3  # the default token is the piece's most merged one
    full_screenshot(page, ARTIFACTS / "10_playground_lineage.png")

    page.get_by_text("Char vs byte").click()
    wait_idle(page, timeout=120, until=page.get_by_role("heading", name="The playground's text, encoded by both"))
    page.get_by_role("button", name="Korean").last.click()
    wait_idle(page, timeout=60, until="Character level cannot represent")
    assert page.get_by_text("Character level cannot represent").is_visible()
    assert page.locator('[data-testid="stVegaLiteChart"]').count() == 1
    full_screenshot(page, ARTIFACTS / "11_playground_char_vs_byte.png")
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.screenshot(path=str(ARTIFACTS / "11_playground_char_vs_byte_1920x1080.png"))
    assert not dialogs
    assert page.locator('[data-testid="stException"]').count() == 0


def _in_viewport(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return (
        box is not None
        and box["y"] >= 0
        and box["y"] + box["height"] <= size["height"]
        and box["x"] + box["width"] <= size["width"]
    )


def _ellipsized_buttons(page) -> list[str]:
    """Labels of visible buttons whose text does not fit (cut to "S…" by CSS)."""
    return page.evaluate("""() => [...document.querySelectorAll('button')]
        .filter(b => b.offsetParent !== null)
        .flatMap(b => [...b.querySelectorAll('p, div, span')].filter(e => e.scrollWidth > e.clientWidth + 1).map(() => b.innerText))""")


@pytest.mark.parametrize("width, height, zoom", [(1280, 720, 1.0), (1920, 1080, 1.5)])
def test_train_page_fits_a_projector_controls_explanation_and_pairs_in_one_screen(
    app_url, new_page, width, height, zoom
):
    # 150% browser zoom on 1920x1080 is a 1280x720 CSS viewport with bigger pixels
    with new_page(width=round(width / zoom), height=round(height / zoom)) as page:
        page.goto(f"{app_url}/Train?corpus=english_frankenstein.txt&preset=gpt2&step=2")
        step = page.get_by_role("button", name="Step", exact=True)
        explanation = page.get_by_text(re.compile(r"^Step 2\. ")).first
        first_pair = page.locator("table.bpe-pairs tr").nth(1)  # row 0 is the header
        wait_idle(page, timeout=90, until=[step, explanation, first_pair])
        first_pair.wait_for()
        assert _in_viewport(page, step) and _in_viewport(page, explanation) and _in_viewport(page, first_pair)
        assert _ellipsized_buttons(page) == []
        page.screenshot(path=str(ARTIFACTS / f"13_train_{width}x{height}_zoom{zoom}.png"))
        assert not page.errors, page.errors


@pytest.mark.load  # a pace measured over twenty seconds: .ci/run's load step, beside the other timing only
def test_autoplay_at_the_fastest_speed_keeps_going_for_twenty_seconds(page):
    nav(page, "Train")
    speed = page.get_by_role("combobox", name="Play speed")  # the stepper's (explorer/ui/stepper.py)
    speed.select_option(label="fast (0.4 s)")
    expect(speed).to_have_value("400", timeout=30_000)
    start = int(re.match(r"Step ([\d,]+) of", status_text(page)).group(1).replace(",", ""))
    page.get_by_role("button", name="Play", exact=True).click()
    t0 = time.monotonic()
    page.wait_for_timeout(20_000)  # 50 steps: a missed tenth is 2 s of steps, past any one hiccup
    steps = int(re.match(r"Step ([\d,]+) of", status_text(page)).group(1).replace(",", "")) - start
    elapsed = time.monotonic() - t0
    assert page.get_by_role("button", name="Pause", exact=True).is_visible()  # still playing
    assert steps >= 0.9 * elapsed / 0.4, f"{steps} steps in {elapsed:.1f} s at 0.4 s per step"
    page.get_by_role("button", name="Pause", exact=True).click()
    wait_idle(page, until=page.get_by_role("button", name="Play", exact=True))
    shown = int(re.match(r"Step ([\d,]+) of", status_text(page)).group(1).replace(",", ""))
    page.wait_for_function(f"() => location.search.includes('step={shown}')", timeout=10_000)  # the link caught up


def _quick_clicks(page, label: str, n: int, gap_ms: int = 30) -> None:
    """n clicks on a button, gap_ms apart: each lands while the rerun of the one before is going."""
    page.evaluate(
        """async ([label, n, gap]) => {
        const button = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === label);
        for (let i = 0; i < n; i++) { button.click(); await new Promise(r => setTimeout(r, gap)); }
    }""",
        [label, n, gap_ms],
    )


def test_quick_clicks_queue_five_steps_make_five_merges(page):
    nav(page, "Train")
    # the stepper's script steps in the browser: each click a step, none waiting for the server
    page.wait_for_function("() => document.querySelector('.sp-root[data-drawn]')", timeout=30_000)
    for round_ in range(1, 4):
        _quick_clicks(page, "Step", 5)
        # an extra merge of this round would show in the next round's count (the last round's
        # is waited for below)
        wait_status(page, rf"^Step {5 * round_} of {5 * round_} trained")
    _quick_clicks(page, "+10", 3)
    wait_status(page, r"^Step 45 of 45 trained")
    page.wait_for_timeout(1500)
    wait_idle(page, settle=0)
    assert status_text(page).startswith("Step 45 of 45 trained")


def test_compare_page_runs_english_hindi_and_korean_and_shows_every_panel(page):
    nav(page, "Compare")
    chosen = page.locator('[data-testid="stMultiSelect"]').first.inner_text()
    assert all(name in chosen for name in ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt"))
    page.get_by_role("button", name="Compare", exact=True).click()
    wait_idle(page, timeout=180, until=page.locator(".bpe-card-panel", has_text="Parity"))
    assert page.locator('[data-testid="stException"]').count() == 0
    # each panel in its tab, its charts drawn when the tab is opened
    for tab, charts in (
        ("Parity across languages", 1),
        ("Compression curves", 1),
        ("Cross-evaluation", 2),
        ("Token lengths", 1),
    ):
        page.get_by_role("tab", name=tab).click()
        panel = page.locator('[role="tabpanel"]:visible')
        drawn = panel.locator('[data-testid="stVegaLiteChart"]')
        expect(drawn).to_have_count(charts, timeout=30_000)
        for i in range(charts):
            drawn.nth(i).locator("canvas, svg").first.wait_for(state="visible", timeout=30_000)
    page.get_by_role("tab", name="Vocabulary overlap").click()
    wait_idle(page, settle=0, until="Longest only in udhr_en.txt")
    assert page.locator(".bpe-chip:visible").count() >= 10
    full_screenshot(page, ARTIFACTS / "14_compare_en_hi_ko.png")


def test_markdown_and_latex_in_corpus_tokens_show_literally_in_the_step_sentence(page):
    nav(page, "Corpus")
    corpus = page.locator('[data-testid="stMultiSelect"]').first
    corpus.get_by_role("button", name=re.compile("english_frankenstein")).click()
    wait_idle(page, until="The corpus is empty", gone="english_frankenstein.txt —")
    box = page.get_by_label("Or paste text")
    box.fill("$$ " * 50 + "** " * 40 + "[a](javascript:alert(1)) " * 30)
    box.press("Control+Enter")
    # the pasted text is the corpus: its first lines cut into pieces
    wait_idle(page, until=re.compile(r"^\d+ pieces in these \d+ lines?;"), gone="The corpus is empty")
    nav(page, "Train")
    step = page.get_by_role("button", name="Step", exact=True)
    sentences = []
    for i in range(1, 7):
        step.click()
        wait_status(page, rf"^Step {i} of {i} trained")
        sentences.append(page.get_by_text(re.compile(rf"^Step {i}\. ")).first.inner_text())
    shown = "\n".join(sentences)
    # $$ would open LaTeX, ** bold, ]( a link: all show as typed
    assert "‘$’ + ‘$’ → ‘$$’" in shown and "‘·*’ + ‘*’ → ‘·**’" in shown and "(·**×40)" in shown, shown
    assert "‘]’ + ‘(’ → ‘](’" in shown, shown
    assert page.locator(".katex, .katex-display").count() == 0  # no LaTeX
    assert page.locator('a[href^="javascript"]').count() == 0  # no link
    assert page.locator('[data-testid="stMain"] strong', has_text="$").count() == 0
    page.screenshot(path=str(ARTIFACTS / "15_train_markdown_literal.png"))


def test_a_corpus_over_the_step_limit_offers_a_sample_or_a_run_without_records(page):
    # 5 MiB + the default sample (0.4 MiB): over the default 4 MiB step-through limit
    text = (read_sample("english_tiny_shakespeare.txt") * 5)[: 5 * 2**20].encode()
    nav(page, "Corpus")
    page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        files=[{"name": "big.txt", "mimeType": "text/plain", "buffer": text}]
    )
    wait_idle(page, timeout=120, until=re.compile(r"^big\.txt · 5,242,880 bytes · UTF-8"))
    nav(page, "Train")
    page.set_viewport_size({"width": 1280, "height": 720})
    offer = page.get_by_text(
        re.compile(r"^This corpus is 5\.4 MiB: stepping through it merge by merge is limited to 4\.0 MiB")
    )
    offer.wait_for(timeout=30_000)
    sample = page.get_by_role("button", name="Step through its first 4.0 MiB")
    whole = page.get_by_role("button", name="Train on all of it, to the end, without step records")
    assert _in_viewport(page, sample) and _in_viewport(page, whole) and not _ellipsized_buttons(page)
    full_screenshot(page, ARTIFACTS / "16_big_corpus_offer.png")
    whole.click()
    text = wait_status(page, r"training stopped", timeout=120)
    assert text.startswith("Step 1,000 of 1,000 trained")
    assert page.get_by_text(re.compile(r"^Trained on the whole 5\.4 MiB corpus without step records")).is_visible()
    full_screenshot(page, ARTIFACTS / "17_big_corpus_trained.png")


def _pick(page, label: str, option: str, *, until=None) -> None:
    """Choose ``option`` in the selectbox ``label``; wait for ``until`` (what the choice draws)."""
    box = page.get_by_role("combobox", name=label, exact=True)
    # the select's list closes when the page scrolls under it: bring it into view first, and
    # open it again if a late scroll closed it
    box.scroll_into_view_if_needed()
    choice = page.get_by_role("option", name=option, exact=True)
    chosen = box.input_value() == option  # choosing it again reruns nothing: no rerun to wait for
    for _ in range(3):
        box.click()
        if becomes_visible(choice, timeout=3):
            break
    choice.click()
    wait_idle(page, timeout=60, until=until, settle=0 if chosen else 5.0)


def _shoot_at(page, locator, name: str) -> None:
    """The viewport at 1280x720 and 1920x1080 with ``locator`` scrolled into it; nothing on a
    button may be cut to "…" at either size."""
    for width, height in ((1280, 720), (1920, 1080)):
        page.set_viewport_size({"width": width, "height": height})
        wait_idle(page, settle=0)  # a new viewport size starts no rerun
        locator.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        assert _ellipsized_buttons(page) == [], (width, height)
        page.screenshot(path=str(ARTIFACTS / f"{name}_{width}x{height}.png"))


def test_download_every_format_then_import_the_tokenizer_json_on_the_playground(page, tmp_path):
    from tokenizers import Tokenizer as HFTokenizer

    from explorer import Trainer, corpus_config
    from explorer.formats.exporters import EXPORT_FORMATS
    from explorer.stages.pipeline import count_words

    nav(page, "Train")
    for i in (10, 20):
        page.get_by_role("button", name="+10", exact=True).click()
        wait_status(page, rf"^Step {i} of {i} trained")
    page.get_by_text("Download this tokenizer").click()
    area = page.locator('[data-testid="stExpander"]').filter(has_text="Download this tokenizer")
    wait_idle(page, until=area.get_by_role("combobox", name="Format", exact=True))
    downloads, refused = {}, []
    for fmt in EXPORT_FORMATS.values():
        _pick(page, "Format", fmt.title, until=area.get_by_text(as_shown(fmt.description)))  # each format's own caption
        button = area.get_by_role("button", name="Download as of step 20 (20 merges)")
        if area.get_by_text("This format cannot hold this tokenizer").count():
            assert button.count() == 0
            refused.append(fmt.name)
            continue
        with page.expect_download() as got:
            button.click()
        path = tmp_path / got.value.suggested_filename
        got.value.save_as(path)
        assert path.stat().st_size > 0, fmt.name
        downloads[fmt.name] = path
    assert refused == ["subword-nmt", "minbpe"]  # the gpt2 preset is byte level with <|endoftext|> first
    assert downloads["gpt2"].name == "bpe-english_frankenstein-20-merges-gpt2.zip"
    hf = downloads["hf"]
    assert hf.name == "tokenizer.json"
    config = corpus_config("gpt2")
    text = "It was on a dreary night of November that I beheld the accomplishment of my toils."
    trainer = Trainer(count_words((read_sample("english_frankenstein.txt"),), config), config)
    trainer.advance(20)
    ours = trainer.tokenizer(20)
    assert HFTokenizer.from_file(str(hf)).encode(text).ids == ours.encode(text)
    _pick(
        page, "Format", EXPORT_FORMATS["hf"].title, until=area.get_by_text(as_shown(EXPORT_FORMATS["hf"].description))
    )
    _shoot_at(page, area, "18_train_download")

    page.set_viewport_size({"width": 1400, "height": 1000})
    nav(page, "Playground")
    page.get_by_text("Import a tokenizer").click()  # opened, a rerun draws what it holds
    importer = page.locator('[data-testid="stExpander"]').filter(has_text="Import a tokenizer")
    wait_idle(page, settle=0, until=importer.get_by_role("button", name="Import", exact=True))
    importer.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(str(hf))
    # the upload's rerun names the import after the file: the Name box's placeholder changes
    wait_idle(page, timeout=60, gone=importer.get_by_placeholder("from the file names"))
    page.get_by_role("button", name="Import", exact=True).click()
    imported = page.get_by_text(re.compile(r"^Imported 'tokenizer': format Hugging Face tokenizer\.json, 20 merges"))
    row = page.locator('tr[data-name="imported: tokenizer (hf)"]')  # its row in the comparison
    wait_idle(page, timeout=60, until=[imported, row])
    assert imported.is_visible()
    assert "imported: tokenizer (hf)" in page.locator('[data-testid="stMultiSelect"]').inner_text()
    rows = page.locator("div.bpe-text")  # trained, cl100k_base, imported
    expect(rows).to_have_count(3, timeout=30_000)
    assert rows.count() == 3
    sample = page.locator('[data-testid="stTextArea"] textarea').input_value()
    assert rows.nth(2).locator(".bpe-chip").count() == len(ours.encode(sample))
    assert rows.nth(2).inner_text() == rows.nth(0).inner_text()  # the session's own tokenizer at step 20
    assert page.locator('[data-testid="stException"]').count() == 0
    _shoot_at(
        page, page.locator('[data-testid="stExpander"]').filter(has_text="Import a tokenizer"), "19_playground_import"
    )
