"""The Class page's model (explorer.ui.class_model) without Streamlit: the questions it builds
against the engine's training, and the bars, boards and sentences teacher, projector and
students see, written out as the page must show them (golden examples); and its keys, which
must be the keys the page's widgets use."""

from __future__ import annotations

import dataclasses
import re
from zoneinfo import ZoneInfo

import pytest
from conftest import assert_keys_named, constants, widget_keys
from test_class_page import fresh_rooms, opened, student, teacher  # noqa: F401 - fresh_rooms: autouse

from explorer import Trainer, TrainerConfig
from explorer.serving.rooms import MAX_SENTENCE, Answer, Member, Question, RoomError, Standing, Wait, follow_token
from explorer.serving.store import QuotaError, StoreError
from explorer.ui import class_model as model
from explorer.ui.class_model import Keys, Session
from explorer.ui.render import PLAIN, TokenStyle

CORPUS = "low lower lowest newer newest"
BYTE = TokenStyle(byte_level=True)
CHIP = '<span class="bpe-chip" style="background:#dbeafe">{}</span>'


def chip(text: str) -> str:
    return CHIP.format(text)


def room_run(merges: int = 6) -> model.RoomRun:
    """A room's trainer, as the room's process keeps it: nothing trained until asked."""
    return model.RoomRun(
        Trainer.from_texts(CORPUS, TrainerConfig(pretokenizer="whitespace", unit="char", num_merges=merges))
    )


MERGE = Question(
    4, "merge", 2, options=(("s", "t"), ("lo", "we"), ("lo", "w")), counts=(2, 2, 1), show_counts=True, answer=1
)
COUNT = Question(5, "count", 3, sentence="lowest newer", merges=3, answer=5)


# ---- questions, against the engine ---------------------------------------------------------------
def test_the_room_trains_one_merge_past_its_step_and_no_further():
    run = room_run()
    assert len(run.at(0).records) == 1  # step 0 shows the pair table of merge 1: its record
    assert len(run.at(2).records) == 3 and len(run.at(1).records) == 3  # never back
    assert len(run.at(40).records) == 6  # its stop rule: six merges


def test_a_merge_question_offers_the_engines_next_merge_among_its_pair_table():
    run = room_run()
    trainer = run.at(2)
    question = model.merge_question(trainer, 2, show_counts=False, seed="K7QX2M:1")
    record = trainer.records[2]
    assert question.options[question.answer] == (record.left, record.right) == ("lo", "we")
    assert sorted(zip(question.options, question.counts)) == sorted(
        ((p.left, p.right), p.count) for p in record.top_pairs
    )
    assert (question.kind, question.step, question.show_counts) == ("merge", 2, False)
    assert model.question_text(question) == "which pair merges at step 3? (intuition: no counts)"
    with pytest.raises(RoomError, match="Training has finished: no merge is left to guess."):
        model.merge_question(run.at(6), 6, show_counts=True, seed="x")


def test_a_count_question_counts_the_sentences_tokens_after_the_merges_ahead():
    run = room_run()
    question = model.count_question(run, 2, "  lowest newer  ", 3)
    assert (question.sentence, question.merges) == ("lowest newer", 3)
    assert question.answer == len(run.trainer.tokenizer(5).encode("lowest newer")) == 5
    # past the training's end the question counts what is left: one merge
    assert model.count_question(run, 5, "lowest", 10).merges == 1
    assert len(model.count_question(run, 0, "low " * 100, 1).sentence) == MAX_SENTENCE
    with pytest.raises(RoomError, match="no merge is left to count ahead"):
        model.count_question(run, 6, "lowest", 10)
    with pytest.raises(RoomError, match="Type the sentence whose tokens the class should count."):
        model.count_question(run, 0, "   ", 1)


def test_the_last_step_of_a_pickybpe_room_is_not_known():
    picky = Trainer.from_texts(CORPUS, TrainerConfig(pretokenizer="whitespace", unit="char", num_merges=3, picky=0.9))
    assert model.last_step(picky) is None and model.last_step(None) is None
    assert model.last_step(room_run().trainer) == 6


# ---- what the room shows ---------------------------------------------------------------------------
def test_the_pair_table_shows_the_engines_next_pairs_unless_a_question_hides_them():
    run = room_run()
    trainer = run.at(2)
    html = model.pairs_panel(trainer, 2, quiz=False, top=2, style=PLAIN)
    shown = re.findall(r'<td><span class="bpe-chip"[^>]*>([^<]*)</span></td><td class="num">(\d+)</td>', html)
    assert shown == [(p.left + p.right, str(p.count)) for p in trainer.records[2].top_pairs[:2]]
    assert shown[0][0] == trainer.records[2].token == "lowe"
    hidden = model.pairs_panel(trainer, 2, quiz=True, top=2, style=PLAIN)
    assert "Hidden until the reveal" in hidden and "lowe" not in hidden
    done = run.at(6)
    assert "Training finished: no pair is left to merge." in model.pairs_panel(done, 6, quiz=False, top=5, style=PLAIN)


def test_the_history_lists_the_rooms_merges_newest_first_and_never_the_one_trained_ahead():
    trainer = room_run().at(2)  # three merges trained, the room at step 2
    html = model.history_panel(trainer, 2, PLAIN)
    steps = re.findall(r'<tr(?: class="bpe-now")?><td class="num">(\d+)</td>', html)
    made = re.findall(r'<td title="id \d+"><span class="bpe-chip"[^>]*>([^<]*)</span>', html)
    assert steps == ["2", "1"] and made == [trainer.records[1].token, trainer.records[0].token] == ["lo", "we"]
    assert trainer.records[2].token not in made and html.endswith(
        '<p class="bpe-cap">2 merges made in this room</p></div>'
    )


def test_the_tally_counts_each_options_answers_and_outlines_the_right_ones_at_the_reveal():
    answers = [Answer("a", 1, 1.0), Answer("b", 2, 2.0), Answer("c", 2, 2.5)]
    bars = [
        (chip("s") + " + " + chip("t"), 0, 0),
        (chip("lo") + " + " + chip("we"), 50, 1),
        (chip("lo") + " + " + chip("w"), 100, 2),
    ]

    def expected(right: set[int]) -> str:
        rows = "".join(
            f'<div class="cls-bar-row{" cls-right" if i in right else ""}"><div class="cls-bar-label">{label}</div>'
            f'<div class="cls-bar"><span style="width:{width}%"></span></div><b>{n}</b></div>'
            for i, (label, width, n) in enumerate(bars)
        )
        return f'<div class="cls-tally"><div class="cls-count"><b>3</b> answers in / <b>4</b> students present</div>{rows}</div>'

    assert model.tally_html(MERGE, answers, PLAIN, present=4, reveal=False) == expected(set())
    assert model.tally_html(MERGE, answers, PLAIN, present=4, reveal=True) == expected({0, 1})  # s+t ties lo+we
    # no answer yet: the options' bars are empty, a count question has no guess to draw
    assert model.tally_html(MERGE, [], PLAIN, present=2, reveal=False).count("<b>0</b>") == 4  # 0 in, 3 bars
    assert "No answer yet." in model.tally_html(COUNT, [], PLAIN, present=2, reveal=False)


def test_a_count_questions_tally_is_per_guess_with_the_closest_outlined():
    answers = [Answer("a", 9, 1.0), Answer("b", 4, 1.0), Answer("c", 6, 1.0), Answer("d", 4, 1.0)]
    html = model.tally_html(COUNT, answers, PLAIN, present=4, reveal=True)
    labels = [part.split("</div>")[0] for part in html.split('<div class="cls-bar-label">')[1:]]
    assert labels == ["4 tokens", "6 tokens", "9 tokens"]
    assert html.count('<div class="cls-bar-row cls-right">') == 2  # 4 and 6: both one away from 5


def test_the_reveal_says_the_merged_pair_its_ties_and_who_was_right():
    revealed = dataclasses.replace(MERGE, state="revealed")
    answers = [Answer("a", 0, 1.0), Answer("b", 2, 2.0), Answer("c", 2, 2.5)]
    assert model.reveal_html(revealed, answers, PLAIN, rule="first-seen") == (
        f'<div class="cls-option cls-right">Merged: {chip("lo")} + {chip("we")} · 1 of 3 right<br>'
        "Tie: s + t occurs as often as lo + we (2 times), both merge-worthy (right answers); the rule picked "
        "lo + we because it occurs first in the corpus (first-seen).</div>"
    )
    assert model.missed_html(revealed, answers, PLAIN) == (
        f'<div class="cls-missed">Most missed: {chip("lo")} + {chip("w")} · chosen by 2 of the 2 wrong answers (3 in all)</div>'
    )
    count = dataclasses.replace(COUNT, state="revealed")
    guesses = [Answer("a", 5, 1.0), Answer("b", 7, 1.0)]
    assert model.reveal_html(count, guesses, PLAIN, rule="first-seen") == (
        '<div class="cls-option cls-right">5 tokens · 1 closest of 2</div>'
    )
    assert model.missed_html(count, guesses, PLAIN) == (
        '<div class="cls-missed">Most missed: 7 tokens · chosen by 1 of the 1 wrong answer (2 in all)</div>'
    )
    assert model.missed_html(count, guesses[:1], PLAIN) == ""


def test_a_pair_of_partial_bytes_says_the_character_it_completes():
    assert model.pair_text(("à¤", "ķ"), BYTE) == "⟨e0 a4⟩ + ⟨95⟩ → क"
    assert model.pair_text(("e", "r"), BYTE) == "e + r"
    assert model.pair_html(("à¤", "ķ"), BYTE).endswith(' → <span class="bpe-chip" style="background:#dbeafe">क</span>')


def test_a_three_way_tie_names_every_pair_that_tied():
    question = Question(1, "merge", 0, options=(("a", "b"), ("c", "d"), ("e", "f")), counts=(3, 3, 3), answer=2)
    assert model.tie_text(question, PLAIN, "first-seen", into="text") == (
        "Tie: a + b and c + d occur as often as e + f (3 times), all merge-worthy (right answers); the rule "
        "picked e + f because it occurs first in the corpus (first-seen)."
    )
    assert model.tie_text(dataclasses.replace(question, counts=(3, 2, 4)), PLAIN, "first-seen", into="text") == ""


def test_the_leaderboard_escapes_names_marks_the_reader_and_stops_at_its_limit():
    board = [Standing("<b>Ana</b>", 2, 3.25, 2), Standing("Bo", 1, 1.0, 2), Standing("Cy", 0, 0.0, 1)]
    assert model.board_html(board, me="Bo", limit=2) == (
        '<table class="cls-board"><tr><th>#</th><th>name</th><th>points</th><th>time</th></tr>'
        "<tr><td>1</td><td>&lt;b&gt;Ana&lt;/b&gt;</td><td>2</td><td>3.2 s</td></tr>"
        '<tr class="cls-me"><td>2</td><td>Bo</td><td>1</td><td>1.0 s</td></tr></table>'
    )
    assert "Nobody has joined yet." in model.board_html([])


def test_a_students_lines_say_its_answer_then_its_result():
    mine = Answer("a", 0, 1.0)
    assert model.answer_caption(MERGE, mine, PLAIN) == (
        "Your answer: s + t — you can change it until the teacher closes the question."
    )
    assert model.answer_caption(COUNT, None, PLAIN) == (
        "Your answer: none yet — you can change it until the teacher closes the question."
    )
    assert model.answer_caption(dataclasses.replace(COUNT, state="closed"), mine, PLAIN) == (
        "Answers are closed: wait for the reveal."
    )
    revealed = dataclasses.replace(MERGE, state="revealed")
    assert model.answer_caption(revealed, mine, PLAIN) is None
    assert model.result_sentence(revealed, won=True, style=PLAIN, rule="first-seen") == (
        "You got it! The answer: the pair lo + we. Tie: s + t occurs as often as lo + we (2 times), both "
        "merge-worthy (right answers); the rule picked lo + we because it occurs first in the corpus (first-seen)."
    )
    count = dataclasses.replace(COUNT, state="revealed", answer=1234)
    assert model.result_sentence(count, won=False, style=PLAIN, rule="first-seen") == (
        "Not this time. The answer: 1,234 tokens."
    )
    assert model.options_html(revealed, mine, PLAIN) == (
        '<div class="cls-options">'
        f'<div class="cls-option cls-right">{chip("s")} + {chip("t")} · your answer</div>'
        f'<div class="cls-option cls-right">{chip("lo")} + {chip("we")}</div>'
        f'<div class="cls-option">{chip("lo")} + {chip("w")}</div></div>'
    )
    assert "cls-right" not in model.options_html(dataclasses.replace(MERGE, state="closed"), mine, PLAIN)


def test_a_students_status_writes_its_name_as_text():
    member = Member("m1", "**Ana** <i>", 0.0)
    assert model.student_status("K7QX2M", member, 1234) == (
        r"Room **K7QX2M** · you are **\*\*Ana\*\* \<i\>** · following the teacher at step **1,234**"
    )
    assert model.student_status("K7QX2M", member, 12, own=15).endswith(
        "· on your own at step **15** (the teacher is at 12)"
    )


def test_a_room_cannot_start_on_a_corpus_it_cannot_step_through_or_name():
    assert model.start_refusal(stepping=False, left_out=None) == (
        "A room steps through merges one at a time: choose a corpus under the server's step-through limit, "
        "or its sample, on the Train page first."
    )
    assert model.start_refusal(stepping=True, left_out=None) is None


def test_a_limit_that_frees_by_itself_says_when_in_the_readers_time_zone():
    err = Wait("Too many rooms", frees_at=720.0, now=0.0)  # 1970-01-01 00:12 UTC
    assert model.said(err, ZoneInfo("UTC")) == "Too many rooms: the next one frees at 00:12, in 12 minutes."
    assert model.said(err, ZoneInfo("Asia/Kolkata")) == "Too many rooms: the next one frees at 05:42, in 12 minutes."
    # the store out of reach is one sentence whatever its cause; a quota is the reader's to know
    assert model.said(StoreError("database is locked")) == model.UNREACHABLE
    assert model.said(QuotaError("This file is over your 8 MiB.")) == "This file is over your 8 MiB."


def test_the_teacher_is_at_the_end_once_training_stops_and_every_merge_is_shown():
    run = room_run(merges=2)
    trainer = run.at(5)
    assert trainer.done and len(trainer.records) == 2
    assert [model.at_end(trainer, step) for step in (0, 1, 2)] == [False, False, True]
    assert not model.at_end(room_run().at(2), 3)  # more to train


def test_the_teachers_cookies_keep_each_rooms_key_and_delete_the_rooms_gone():
    assert model.cookies({"k7qx2m": "s3cret", "AB12CD": "other"}, ["ZZ99ZZ", "AA11AA"], lifetime=14_400) == [
        {"name": "bpe_teacher_K7QX2M", "value": "s3cret", "max_age": 14_400},
        {"name": "bpe_teacher_AB12CD", "value": "other", "max_age": 14_400},
        {"name": "bpe_teacher_AA11AA", "value": "", "max_age": 0},
        {"name": "bpe_teacher_ZZ99ZZ", "value": "", "max_age": 0},
    ]


@pytest.mark.parametrize(
    ("page", "base"),
    [
        ("http://192.168.1.20:8501/Class?room=K7QX2M", "http://192.168.1.20:8501"),
        ("https://school.example/bpe/class/", "https://school.example/bpe"),
        ("", ""),  # no address known (no browser): relative
    ],
)
def test_the_presenter_address_carries_the_follow_token_never_the_key(page, base):
    url = model.presenter_address(page, "K7QX2M", "s3cret-key", {"projector": "1"})
    assert url == f"{base}/Class?room=K7QX2M&present={follow_token('s3cret-key')}&projector=1"
    assert "s3cret" not in url


def test_moderation_names_a_hidden_student_and_the_leaderboard_hides_it():
    members = [Member("m1", "Ana", 0.0), Member("m2", "<b>Bo</b>", 0.0, hidden=True)]
    label = model.member_label({m.id: m for m in members})
    assert [label("m1"), label("m2"), label("gone")] == ["Ana", "<b>Bo</b> · hidden on the leaderboard", "(gone)"]
    shown = model.hidden_names(members)
    assert shown == [members[0], Member("m2", "(name hidden)", 0.0, hidden=True)]


# ---- the keys ---------------------------------------------------------------------------------------------


def test_every_key_the_model_names_is_a_widget_of_the_class_page_and_every_widget_is_named():
    t, code, key = teacher()
    seen = widget_keys(opened({}))  # the lobby, as a student finds it
    s = student(code, "Ana")
    t.run()
    t.button(key=Keys.STEP).click().run()  # the slider: a step trained
    seen |= widget_keys(t)
    t.button(key=Keys.MOD_HIDE).click().run()
    seen |= widget_keys(t)
    t.button(key=Keys.PLAY).click().run()
    seen |= widget_keys(t)
    t.button(key=Keys.PAUSE).click().run()
    s.run()
    seen |= widget_keys(s)
    s.button(key=Keys.OWN).click().run()
    seen |= widget_keys(s)
    s.button(key=Keys.FOLLOW).click().run()
    t.button(key=Keys.ASK_MERGE).click().run()
    seen |= widget_keys(t, s.run())
    t.button(key=Keys.REVEAL).click().run()
    t.button(key=Keys.ASK_COUNT).click().run()
    seen |= widget_keys(s.run(), opened({"room": code, "present": follow_token(key)}))
    t.button(key=Keys.TO_LOBBY).click().run()
    seen |= widget_keys(t)
    assert not (t.exception or s.exception)
    assert_keys_named(seen, Keys)
    kept = {
        Session.TEACHER_KEYS,
        Session.CHOSEN,
        Session.PLAYING,
        Session.ROOM_LIVE,
    }  # what the teacher's session holds
    assert kept <= set(constants(Session).values()) and all(k in t.session_state for k in kept)
