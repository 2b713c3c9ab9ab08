"""One rule shows a token on every page (AppTest): tokens made of markup, ``<b>x</b>`` and ``$x$``,
learned from a pasted corpus and typed into the Playground, are shown as the text they are on
each page that draws tokens (Train, Playground, Compare, Class), never taken for HTML or for
Markdown (bold, LaTeX): every view writes a token through ``render.token_text``, which escapes it
for where it goes."""

from __future__ import annotations

import html
import re

import pytest
from conftest import ROOT, open_tab, step_sentence, train_html, unescaped
from streamlit.testing.v1 import AppTest
from test_class_page import start_room
from test_class_page import student as joined

from explorer import corpus_config
from explorer.serving.rooms import Limits, SqliteRooms
from explorer.serving.store import SqliteStore
from explorer.ui import class_room
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
TIMEOUT = 120
TEXT = "<b>x</b> $x$ " * 30 + "a plain line of words\n"  # sennrich: <b>x</b></w> by step 7, $x$</w> by step 10
TOKENS = ("<b>x</b>", "$x$")
SUBMIT = "FormSubmitter:w_cmp_form-Compare"


# ---- what a page shows, read back ----------------------------------------------------------
def html_bodies(at: AppTest) -> list[str]:
    """Every HTML block of the page: st.html elements and the Train page's live panels."""
    bodies = [h.proto.body for h in at.get("html")]
    try:
        bodies += train_html(at)
    except AssertionError:  # a page without the live area
        pass
    return bodies


def markdown_values(at: AppTest) -> list[str]:
    """Everything the page hands Streamlit's Markdown: texts, boxes, captions, button labels."""
    elements = [*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success, *at.subheader]
    return [e.value for e in elements] + [b.label for b in at.button]


def shown_text(at: AppTest) -> str:
    """What a reader sees: HTML with its tags dropped and entities undone, Markdown unescaped."""
    texts = [html.unescape(re.sub(r"<[^>]+>", "", body)) for body in html_bodies(at)]
    return " ".join(texts + [unescaped(v) for v in markdown_values(at)])


def assert_shown_literally(at: AppTest, where: str, *, tokens: tuple[str, ...] = TOKENS) -> None:
    """The tokens are on the page as text, and nowhere as markup: no HTML block holds the tag
    ``<b>`` unescaped, and no Markdown holds a ``$`` (LaTeX) or ``<b`` without their backslashes."""
    assert not at.exception, (where, at.exception)
    for body in html_bodies(at):
        assert "<b>x" not in body, (where, body[:300])
    for value in markdown_values(at):
        bare = re.sub(r"\\.", "", value)  # what is left once every escaped character is taken out
        assert "$" not in bare and "<b" not in bare, (where, value)
    seen = shown_text(at)
    for token in tokens:
        assert token in seen, (where, token)


# ---- a session trained on the markup corpus ----------------------------------------------------
def trained(steps: int = 10) -> AppTest:
    """A session on the pasted markup corpus with the sennrich preset, ``steps`` merges made."""
    return stepped(CorpusChoice(samples=(), pasted=TEXT), "sennrich", steps)


def stepped(corpus: CorpusChoice, preset: str, steps: int) -> AppTest:
    """A session on ``corpus`` with ``preset``, ``steps`` merges made on the Train page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = corpus
    at.session_state["preset_name"] = preset
    at.session_state["config"] = corpus_config(preset)
    at.run()
    at.switch_page("pages/2_Train.py").run()
    for _ in range(steps):
        at.button(key="step").click().run()
    assert not at.exception, at.exception
    return at


def test_the_train_page_shows_markup_tokens_as_text():
    at = trained()
    # the step sentence (Markdown), the pair table, history and words (HTML)
    assert_shown_literally(at, "Train")
    assert "$x$" in step_sentence(at)  # step 10 merged '$x$' + '</w>'
    at.text_input(key="w_word_search").input("<b>x</b> $x$").run()  # the look-up, merge by merge
    assert_shown_literally(at, "Train, look-up")
    at.toggle(key="w_full_history").set_value(True).run()  # the grid shows text as it is
    grid = next(df.value for df in at.dataframe if "new token" in df.value.columns)
    assert {"<b>x</b>", "$x$"} <= set(grid["new token"])


def test_the_playground_shows_markup_tokens_as_text_in_every_view():
    at = trained()
    at.switch_page("pages/3_Playground.py").run()
    at.multiselect(key="w_play_tokenizers").set_value(["trained", "gpt2"]).run()
    at.text_area(key="w_play_text").input("<b>x</b> $x$ <b>x</b>").run()
    assert_shown_literally(at, "Encode")
    at.radio(key="w_play_view").set_value("Why this split").run()
    assert_shown_literally(at, "Why this split", tokens=("<b>x</b>",))
    live = at.session_state["live"]
    token = live.tokenizer(10).token_to_id("$x$")
    at.text_input(key="w_why_id").input(str(token)).run()  # its lineage, under a caption naming it
    assert_shown_literally(at, "Why this split, lineage of $x$")
    assert any(unescaped(c.value).startswith("$x$ (id") for c in at.caption)


def test_the_compare_page_shows_markup_tokens_as_text():
    at = trained(0)
    at.switch_page("pages/4_Compare.py").run()
    at.multiselect(key="w_cmp_corpora").set_value(["pasted text (Corpus page)", "udhr_en.txt"])
    at.selectbox(key="w_cmp_preset").set_value("sennrich")
    at.number_input(key="w_cmp_merges").set_value(10)
    at.button(key=SUBMIT).click().run()
    assert not at.exception, at.exception
    open_tab(at, "Vocabulary overlap")  # the longest tokens of each corpus, as chips
    assert_shown_literally(at, "Compare, overlap", tokens=("<b>x</b>",))


@pytest.fixture()
def rooms(tmp_path, monkeypatch):
    """Rooms of the test's own, in place of the process's."""
    made = SqliteRooms(SqliteStore(tmp_path, cap_bytes=2**24, session_quota=2**24), limits=Limits(rooms=2, members=3))
    monkeypatch.setattr(class_room, "_rooms", [made])
    yield made
    made.close()


def test_the_class_page_shows_markup_tokens_as_text_in_its_questions(rooms):
    teacher = trained(0)
    code = start_room(teacher)
    for _ in range(7):  # the next merge is '$' + 'x', tied with 'x' + '$' and '$' + '</w>'
        teacher.button(key="class_step").click().run()
    student = joined(code, "Ana")
    assert_shown_literally(student, "Class, following", tokens=("<b>x</b>",))
    teacher.run().button(key="class_ask_merge").click().run()
    student.run()  # the options as buttons (Markdown labels)
    assert_shown_literally(student, "Class, a next-merge question", tokens=("<b>x</b>", "$ + x"))
    teacher.run().button(key="class_reveal").click().run()
    student.run()
    assert_shown_literally(student, "Class, revealed", tokens=("<b>x</b>", "$ + x"))
