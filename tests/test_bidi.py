"""Text that runs right to left (Arabic, Hebrew) inside the app's left-to-right sentences: every
token and user text that may reorder the sentence around it is isolated (``<bdi>`` in HTML,
Unicode's isolates in Markdown and plain text) by the helpers of ``explorer.ui.render``, on
every page that shows one; a segmentation runs in its text's reading order; escaping is
unchanged. What the browser draws is checked in tests/test_browser_bidi.py."""

from __future__ import annotations

import html
import re

from conftest import ROOT, step_sentence, train_html, unescaped
from streamlit.testing.v1 import AppTest
from test_class_page import start_room
from test_class_page import student as joined
from test_token_display import (
    rooms,  # noqa: F401  (the fixture: rooms of the test's own)
    stepped,
)

from explorer import make_config, train
from explorer.ui import render, tables
from explorer.ui.explain import explain
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
TIMEOUT = 120
LRI, RLI, FSI, PDI, LRM, RLM = "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f"
# a small Hebrew text of the test's own ("peace, world; peace to you, peace to all; the world and
# all in it"): its first merges join Hebrew letters
HEBREW = "שלום עולם. שלום לכם, שלום לכולם. עולם ומלואו.\n" * 12
ARABIC_PAIR = ("و", "ال", "وال")  # udhr_ar.txt's step 9 under hf-course


def isolated(text: str) -> str:
    """``text`` as a right-to-left isolate (what the helpers write for an Arabic or Hebrew text)."""
    return RLI + text + PDI


# ---- the helpers ----------------------------------------------------------------------------
def test_an_arabic_or_hebrew_token_is_isolated_wherever_it_goes_and_a_latin_one_is_left_as_it_is():
    left, right, merged = ARABIC_PAIR
    assert render.token_text(merged) == isolated("وال")
    assert render.token_text("ש", into="markdown") == isolated("ש")
    assert render.token_text("שׁ a", into="html") == '<bdi dir="rtl">שׁ·a</bdi>'
    assert render.token_text("low</w>") == "low</w>"  # nothing to isolate: the sentence reads as before
    assert render.token_text("·") == "·"
    # Arabic digits reorder a left-to-right sentence too; a token with no letter takes FSI
    assert render.token_text("١٢") == FSI + "١٢" + PDI
    # a byte-level token: its text decides (the hex of a partial character has no direction)
    assert render.token_text("Ġ×©", render.TokenStyle(byte_level=True)) == isolated("·ש")
    assert render.token_text("Ø", render.TokenStyle(byte_level=True)) == "⟨d8⟩"
    # the sentence around a pair reads left to right: each token set apart on its own, and the
    # words it occurs in too
    trainer = train("وال " * 4 + "و ال", make_config("hf-course", vocab_size=None, num_merges=1))
    assert explain(trainer.records[0], config=trainer.config) == (
        f"‘{isolated('ا')}’ + ‘{isolated('ل')}’ → ‘{isolated('ال')}’: the pair occurs 5 times "
        f"({isolated('وال')}×4, {isolated('ال')}×1); 5 tokens fewer."
    )


def test_escaping_holds_and_an_isolate_opened_inside_a_token_cannot_spill_out():
    # markup in a right-to-left token is escaped inside its isolate: isolates are characters, not markup
    assert render.token_text("<ש>", into="html") == '<bdi dir="rtl">&lt;ש&gt;</bdi>'
    assert render.token_text("*ש*", into="markdown") == isolated("\\*ש\\*")
    assert render.md_text(isolated("ש")) == isolated("ש") and html.escape(isolated("ש")) == isolated("ש")
    assert render.user_text("ون <b>", into="html") == '<bdi dir="rtl">ون &lt;b&gt;</bdi>'
    assert render.user_text("<b>ون", into="html") == '<bdi dir="ltr">&lt;b&gt;ون</bdi>'  # its first letter's way
    assert render.user_text("Ana", into="html") == "Ana"
    # a corpus's own bidi controls: a closing PDI that would end the isolate early is dropped, an
    # isolate or an override left open is closed with the token
    assert render.token_text("ש" + PDI + "x") == isolated("שx")
    assert render.token_text(RLI + "ש") == RLI + RLI + "ש" + PDI + PDI
    opened = render.user_text("\u202eש", into="text")
    assert opened.endswith(PDI) and opened.count(PDI) == 1


def test_a_segmentation_runs_in_its_texts_reading_order():
    # chips of a Hebrew word: each tied to its direction by marks, the row right to left
    row = render.chips(["ש", "לום"])
    assert row.startswith('<span class="bpe-seq" dir="rtl">' + RLM + '<span class="bpe-chip"')
    assert row.count(RLM) == 4 and row.index(">ש<") < row.index(">לום<")  # the text's order, kept
    # a Latin word inside: the row takes its first letter's direction, each chip its own
    mixed = render.chips(["Hello", "·שלום"])
    assert mixed.startswith('<span class="bpe-seq" dir="ltr">' + LRM) and mixed.count(RLM) == 2
    # a Latin row is drawn as before, with no marks
    assert render.chips(["lo", "w"]) == render.chips(["lo"]) + render.chips(["w"]).replace("#dbeafe", "#fde68a")
    assert LRM not in render.chips(["lo", "w"])
    # as text (a table's cell): the same rule, the row an isolate of its direction
    assert render.in_reading_order([render.token_text("ש"), render.token_text("לום")]) == (
        RLI + RLM + isolated("ש") + RLM + " | " + RLM + isolated("לום") + RLM + PDI
    )
    assert render.in_reading_order(["lo", "w"]) == "lo | w"
    # a list of tokens (not a text) keeps its order left to right
    tok = train(HEBREW, make_config("hf-course", vocab_size=None, num_merges=5)).tokenizer()
    ids = tok.encode("שלום")
    assert 'dir="rtl"' in render.encoded_chips(tok, ids)
    assert "dir=" not in render.encoded_chips(tok, ids, reading_order=False).replace('<bdi dir="rtl">', "")


def test_the_history_grid_sets_each_token_of_a_pair_apart():
    trainer = train(HEBREW, make_config("hf-course", vocab_size=None, num_merges=3))
    grid = tables.history_table(tables.history_rows(trainer.records, 3), columns=("pair", "new token"))
    first = trainer.records[0]
    assert grid["pair"].iloc[-1] == f"{isolated(first.left)} + {isolated(first.right)}"
    assert grid["new token"].iloc[-1] == isolated(first.token)


# ---- the pages (AppTest) ----------------------------------------------------------------------
def hebrew_session(steps: int, *, file_name: str | None = None) -> AppTest:
    """A session on the Hebrew text (pasted, or uploaded as ``file_name``), hf-course, ``steps``
    merges made on the Train page."""
    corpus = (
        CorpusChoice(samples=(), uploads=((file_name, HEBREW),))
        if file_name
        else CorpusChoice(samples=(), pasted=HEBREW)
    )
    return stepped(corpus, "hf-course", steps)


RTL_TEXT = re.compile(r"[\u0590-\u05ff\u0600-\u06ff]")


def bare_rtl(text: str) -> list[str]:
    """The right-to-left runs of a text that no isolate or <bdi> sets apart."""
    out, depth = [], 0
    for part in re.split(r"(<bdi[^>]*>|</bdi>|[\u2066-\u2069])", text):
        if part.startswith("<bdi") or part in (LRI, RLI, FSI):
            depth += 1
        elif part in ("</bdi>", PDI):
            depth -= 1
        elif depth == 0 and RTL_TEXT.search(re.sub(r"<[^>]+>", "", part)):
            out.append(part)
    return out


def test_the_train_and_playground_pages_set_every_hebrew_token_and_word_apart():
    at = hebrew_session(3, file_name="שלום.txt")
    # the corpus's file name, set apart in the page's caption (".txt" stays with its name)
    assert any(unescaped(c.value).startswith(f"{isolated('שלום.txt')} · hf-course") for c in at.caption), [
        c.value for c in at.caption
    ]
    record = at.session_state["live"].trainer.records[2]
    sentence = step_sentence(at)  # the stepper's sentence: plain text, drawn as text
    assert sentence.startswith(
        f"**Step 3.** ‘{isolated(record.left)}’ + ‘{isolated(record.right)}’ → ‘{isolated(record.token)}’:"
    ), sentence
    assert bare_rtl(sentence) == []
    # the pair counts, the history and the words: every token and word set apart, each word's
    # chips right to left
    panels = "".join(train_html(at))
    assert '<span class="bpe-word"><bdi dir="rtl">שלום</bdi></span>' in panels
    assert '<span class="bpe-seq" dir="rtl">' in panels
    assert bare_rtl(panels) == []
    at.toggle(key="w_full_history").set_value(True).run()
    grid = next(df.value for df in at.dataframe if "new token" in df.value.columns)
    assert set(grid["new token"]) == {isolated(r.token) for r in at.session_state["live"].trainer.records[:3]}

    at.switch_page("pages/3_Playground.py").run()
    at.multiselect(key="w_play_tokenizers").set_value(["trained", "o200k_base"]).run()
    at.text_area(key="w_play_text").input("Hello שלום עולם").run()
    assert not at.exception, at.exception
    strips = "".join(h.proto.body for h in at.get("html") if "bpe-strip" in h.proto.body)
    assert bare_rtl(strips) == [] and strips.count('class="bpe-row bpe-text" dir="ltr"') == 2
    at.radio(key="w_play_view").set_value("Why this split").run()
    at.selectbox(key="w_why_tok").set_value(1).run()  # o200k_base
    at.selectbox(key="w_why_piece").set_value(1).run()  # " שלום"
    assert at.selectbox(key="w_why_piece").format_func(1).startswith(f"2: {isolated('·שלום')} (")
    trace = next(df.value for df in at.dataframe if "tokens after" in df.value.columns)
    assert all(
        bare_rtl(str(cell)) == [] for column in ("left", "right", "new token", "tokens after") for cell in trace[column]
    )
    assert trace["tokens after"].iloc[-1] == isolated("·שלום")
    assert all(bare_rtl(unescaped(c.value)) == [] for c in at.caption)  # the lineage's caption names the token
    assert not at.exception, at.exception


def test_the_class_page_sets_hebrew_options_answers_and_names_apart(rooms):
    teacher = hebrew_session(0)
    code = start_room(teacher)
    teacher.button(key="class_step").click().run()
    student = joined(code, "נועה")
    assert not student.exception, student.exception
    teacher.run().button(key="class_ask_merge").click().run()
    student.run()
    options = [b.label for b in student.button if (b.key or "").startswith("class_opt_")]
    assert options and all(bare_rtl(unescaped(label)) == [] for label in options), options
    assert all(re.match(rf"^{RLI}[^{PDI}]+{PDI} \+ ", unescaped(label)) for label in options), options
    row = next(m.value for m in student.markdown if "you are" in m.value)
    assert f"you are **{isolated('נועה')}**" in row
    # a second נועה is told her name is taken, each name quoted apart from the sentence
    twin = joined(code, "נועה")
    note = unescaped(twin.info[0].value)
    assert note.startswith(f"The name “{isolated('נועה')}” is already in this room") and note.endswith(
        f"you are “{isolated('נועה 2')}”."
    ), note
    assert not twin.exception, twin.exception
    assert bare_rtl("".join(h.proto.body for h in teacher.run().get("html"))) == []  # the tally's options
    teacher.button(key="class_reveal").click().run()
    student.run()
    answer = unescaped((student.success or student.info)[0].value)
    assert "The answer: the pair " + RLI in answer and bare_rtl(answer) == [], answer
    board = "".join(h.proto.body for h in student.get("html") if "cls-board" in h.proto.body)
    assert '<bdi dir="rtl">נועה</bdi>' in board
    assert not student.exception and not teacher.exception
