"""The Class page's quiz with AppTest: an option tied with the merged pair scores and the reveal
says why, a Hindi or Korean room's options read as text where a merge completes a character,
the count question starts from a real sentence of the corpus, and names are kept as the room
shows them. What is right is checked against the engine and UTF-8 alone."""

from __future__ import annotations

import html
import re
import unicodedata

import pytest
from conftest import read_sample, unescaped
from test_class_page import fresh_rooms, markdown, opened, param, student, teacher  # noqa: F401 (an autouse fixture)

from explorer import Trainer, corpus_config
from explorer.stages.pipeline import count_words
from explorer.stages.units import display_to_bytes
from explorer.ui import class_view
from explorer.ui.render import style_of, token_text

SENTENCE_ENDS = (".", "!", "?", "।", "॥", "。", "？", "！", "؟")


def trained(corpus: str, steps: int = 40) -> Trainer:
    """The merges a room on ``corpus`` makes with the app's default preset (gpt2): the engine alone."""
    config = corpus_config("gpt2")
    trainer = Trainer(count_words((read_sample(corpus),), config), config)
    trainer.advance(steps)
    return trainer


def html_of(at, marker: str) -> str:
    return " ".join(h.proto.body for h in at.get("html") if marker in h.proto.body)


def text_of(body: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def shown(pair: tuple[str, str]) -> str:
    return " + ".join(token_text(t, style_of("byte")) for t in pair)


def test_an_option_tied_with_the_merged_pair_scores_and_the_reveal_says_the_tie_and_the_rule():
    truth = trained("udhr_en.txt")
    # the first step whose offered pairs (the 8 most frequent) hold one as frequent as the winner
    step = next(i for i, r in enumerate(truth.records) if sum(p.count == r.count for p in r.top_pairs[:8]) > 1)
    record = truth.records[step]
    t, code, key = teacher()
    class_view.rooms().set_step(code, key, step)
    ana, bo, cy = student(code, "Ana"), student(code, "Bo"), student(code, "Cy")
    t.run().button(key="class_ask_merge").click().run()
    question = class_view.rooms().question(code, 1)
    assert question.options[question.answer] == record.pair
    tied = next(i for i, p in enumerate(question.options) if p != record.pair and question.counts[i] == record.count)
    lower = next(i for i, c in enumerate(question.counts) if c < record.count)
    for at, choice in ((ana, question.answer), (bo, tied), (cy, lower)):
        at.run().button(key=f"class_opt_1_{choice}").click().run()
        assert not at.exception, at.exception
    t.run().button(key="class_reveal").click().run()
    reveal = text_of(html_of(t, "Merged:"))
    picked, other = shown(record.pair), shown(question.options[tied])
    tie = (
        f"Tie: {other} occurs as often as {picked} ({record.count:,} times), both merge-worthy (right answers); "
        f"the rule picked {picked} because it occurs first in the corpus (first-seen)."
    )
    assert f"Merged: {picked} · 2 of 3 right {tie}" in reveal, reveal
    assert html_of(t, "cls-tally").count("cls-bar-row cls-right") == 2  # both tied bars green
    assert unescaped(bo.run().success[0].value) == f"You got it! The answer: the pair {picked}. {tie}"
    assert unescaped(cy.run().info[0].value).startswith("Not this time.")
    board = html_of(bo, "cls-board")
    assert re.findall(r"<td>(Ana|Bo|Cy)</td><td>(\d+)</td>", board) == [("Ana", "1"), ("Bo", "1"), ("Cy", "0")]


@pytest.mark.parametrize("corpus", ["udhr_hi.txt", "udhr_ko.txt", "udhr_zh_hans.txt"])
def test_byte_level_options_read_as_text_where_the_merge_completes_a_character(corpus):
    truth = trained(corpus)

    def completes(pair: tuple[str, str]) -> bool:
        left, right = (display_to_bytes(t) for t in pair)
        return not (decodes(left) and decodes(right)) and decodes(left + right)

    step = next(i for i, r in enumerate(truth.records) if any(completes((p.left, p.right)) for p in r.top_pairs[:8]))
    t, code, key = teacher(corpus)
    # the count question's sentence: one of the corpus's own, not a row of frequent pieces
    sentence = t.text_input(key="w_class_sentence").value
    assert sentence in " ".join(read_sample(corpus).split()) and 30 <= len(sentence) <= 120, sentence
    assert sentence.endswith(SENTENCE_ENDS) and unicodedata.category(sentence[0])[0] != "M", sentence
    class_view.rooms().set_step(code, key, step)
    s = student(code, "Ana")
    t.run().button(key="class_ask_merge").click().run()
    question = class_view.rooms().question(code, 1)
    s.run()
    read = 0
    for i, pair in enumerate(question.options):
        label = unescaped(s.button(key=f"class_opt_1_{i}").label).removesuffix(f" ({question.counts[i]:,})")
        left, right = (display_to_bytes(t) for t in pair)
        if completes(pair):  # the parts in hex, then the character they make
            assert label.endswith(" → " + (left + right).decode("utf-8").replace(" ", "·")), label
            assert "⟨" in label.split(" → ")[0], label
            read += 1
        elif decodes(left) and decodes(right):  # text already: no arrow
            assert "→" not in label and "⟨" not in label, label
    assert read, [unescaped(s.button(key=f"class_opt_1_{i}").label) for i in range(len(question.options))]
    assert "→" in text_of(html_of(t.run(), "cls-tally"))  # the projected bars read the same way


def test_a_look_alike_name_is_suffixed_and_a_long_pasted_name_is_cut_with_a_note():
    _, code, _ = teacher()
    student(code, "Ana")
    twin = student(code, "\u0410na")  # a Cyrillic capital A
    assert "you are Аna 2" in markdown(twin).replace("*", "")
    assert "looks the same: you are “Аna 2”" in unescaped(twin.info[0].value)
    pasted = "Maria José da Silva Santos Oliveira Pereira Costa Rodrigues Sá"
    assert len(pasted) == 62  # over the 48 a name keeps: the field used to refuse the paste whole
    late = opened({"room": code})
    late.text_input(key="w_class_name").input(pasted).run()
    late.button(key="class_join").click().run()
    assert not late.exception and param(late, "member"), [e.value for e in late.error]
    assert "you are Maria José da Silva Santos Oliveira Pereira ·" in markdown(late).replace("*", "")  # whole words
    assert unescaped(late.info[0].value) == "Your name is cut short: a name has at most 48 characters."
