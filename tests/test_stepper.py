"""The Train page's stepper on the server's side: the window of steps it is sent (rendered as the
engine has each step), what a report from the browser moves, and what it is not sent again.
The browser's side is in test_browser_stepper.py."""

from __future__ import annotations

import random

import pytest
from conftest import ROOT, drawn_step, engine_step, read_sample, reported, step_chart_spec, stepper_data, stepper_entry
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config, make_config
from explorer.stages.pipeline import count_words
from explorer.ui import stepper
from explorer.ui.explain import explain
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
BEFORE_ANY_MERGE = "Before any merge every word is its letters plus the end-of-word symbol </w>."


def train_page(corpus: str, preset: str, *, merges: int | None = None, looks: dict | None = None) -> AppTest:
    """The Train page on ``corpus`` with ``preset``'s settings and the view settings ``looks``
    (widget key -> value)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(corpus,))
    at.session_state["preset_name"] = preset
    at.session_state["config"] = corpus_config(preset) if merges is None else corpus_config(preset, merges=merges)
    for key, value in (looks or {}).items():
        at.session_state[key] = value
    at.run()
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    return at


def engine(corpus: str, preset: str, merges: int) -> Trainer:
    config = corpus_config(preset)
    trainer = Trainer(count_words((read_sample(corpus),), config), config)
    trainer.advance(merges)
    return trainer


@pytest.mark.parametrize(
    ("corpus", "preset"), [("udhr_en.txt", "gpt2"), ("udhr_hi.txt", "sennrich")], ids=["byte-level", "hindi-chars"]
)
def test_a_report_moves_the_view_and_the_link_and_brings_the_steps_around_it_as_the_engine_has_them(corpus, preset):
    at = train_page(corpus, preset)
    first = stepper_data(at)
    assert [e["step"] for e in first["entries"]] == [0]  # nothing trained yet, nothing trained ahead
    reported(at, 0)  # the browser's first report: it steps by itself, so the steps ahead are trained
    reported(at, 40, seq=2)
    assert not at.exception
    assert at.query_params["step"] == "40"
    data = stepper_data(at)
    # the steps ahead are trained and sent, but the session has reached step 40, no further
    assert data["view"] == 40 and data["last"] == 40
    held = held_window(at, 40)  # what a browser holds once it asked for the rest (``more``)
    assert set(range(0, 40 + stepper.AHEAD + 1)) <= set(held)
    ref = engine(corpus, preset, 40 + stepper.AHEAD + 2)
    byte = preset == "gpt2"
    for k in [40, 39, 41, 104, *random.Random(7).sample(sorted(held), 4)]:
        entry = held[k]
        assert drawn_step([c for row in entry["rows"] for c in row]) == engine_step(ref, k, byte=byte), k
        assert entry["lead"] == (f"Step {k}." if k else "") and entry["final"]


def held_window(at: AppTest, step: int, *, rounds: int = 60) -> dict[int, dict]:
    """Report ``step`` as the browser does while the server says there is more, holding what
    came (its pieces joined): the entries a browser ends up with, by step."""
    held: dict[int, dict] = {}
    pieces: dict[str, str] = {}
    for seq in range(100, 100 + rounds):
        data = stepper_data(at)
        pieces.update(data["pieces"])
        for e in data["entries"]:
            held[e["step"]] = e | {"rows": [["".join(pieces[i] for i in cell) for cell in row] for row in e["rows"]]}
        if not data["more"]:
            return held
        ranges = [(k, k) for k in sorted(k for k, e in held.items() if e["final"])]
        reported(at, step, held=ranges, seq=seq)
    raise AssertionError(f"the window was still not complete after {rounds} reports")


def test_steps_the_browser_holds_are_not_sent_again_nor_their_rows():
    at = train_page("udhr_en.txt", "gpt2")
    reported(at, 0)
    first = stepper_data(at)
    sent = sorted(e["step"] for e in first["entries"])
    held = (sent[0], sent[-1])
    reported(at, 3, held=[held], seq=2)
    again = stepper_data(at)
    assert again["ack"] == 2
    assert not {e["step"] for e in again["entries"]} & set(range(held[0], held[1] + 1))
    pieces_held = {i for e in first["entries"] for row in e["rows"] for cell in row for i in cell}
    assert again["entries"] and not set(again["pieces"]) & pieces_held


def test_a_report_from_before_the_server_moved_the_view_is_not_followed():
    at = train_page("udhr_en.txt", "gpt2")
    reported(at, 0)
    old = stepper_data(at)["gen"]
    reported(at, 20, seq=2)
    assert stepper_data(at)["view"] == 20
    at.button(key="reset").click().run()  # a new trainer at step 0: a new generation
    assert stepper_data(at)["gen"] != old and stepper_data(at)["view"] == 0
    reported(at, 30, gen=old, seq=3)  # the browser's report, sent before it saw the reset
    assert stepper_data(at)["view"] == 0 and at.query_params["step"] == "0"
    reported(at, 5, seq=4)
    assert stepper_data(at)["view"] == 5 and at.query_params["step"] == "5"


def test_run_to_end_reaches_the_last_step_when_the_stepper_already_trained_to_it():
    """A short training the stepper trained to its end ahead of the person (who is at step 1):
    Run to end is still offered, and goes to the last step, the status saying training stopped
    (a browser reads it from the stepper's data: ``done``, ``final`` and ``tail``)."""
    at = train_page("udhr_en.txt", "gpt2", merges=30)
    reported(at, 0)
    reported(at, 1, seq=2)
    data = stepper_data(at)
    assert data["view"] == 1 and data["last"] == 1 and data["done"] and data["final"] == 30  # trained ahead
    assert not at.button(key="run").disabled
    at.button(key="run").click().run()
    assert not at.exception
    data = stepper_data(at)
    assert (data["view"], data["last"], data["final"]) == (30, 30, 30) and data["done"]
    assert "training stopped: 30 merges done" in data["tail"]
    assert at.query_params["step"] == "30" and at.button(key="run").disabled


def test_a_window_of_steps_travels_as_pieces_that_join_back_to_the_rendered_panels():
    rows = (('<div class="bpe-panel"><table><tr><td>a</td></tr><tr><td>&lt;b&gt;</td></tr></table></div>',),)
    window = stepper.Window()
    entries = [stepper.Entry(k, 10, "", "x", "info", rows) for k in (1, 2)]
    pieces, packed = window.pack(entries, set())
    assert ["".join(pieces[i] for i in cell) for cell in packed[0]["rows"][0]] == list(rows[0])
    assert len(pieces) == 3  # both steps' pieces, each sent once
    pieces, _ = window.pack([stepper.Entry(3, 10, "", "x", "info", rows)], {1})
    assert pieces == {}  # the browser holds step 1, so it holds its pieces


def test_the_home_miniature_is_the_stepper_over_the_toys_steps_as_the_engine_makes_them():
    """The Home page's miniature is drawn by the same stepper: every one of its steps sent at
    once, each one's words and history as the engine alone has them; a report moves the step,
    the link and the chart, one from before the server moved the view does not."""
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    toy = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
    ref = Trainer.from_texts(toy, make_config("sennrich", num_merges=10)).run()
    data = stepper_data(at)
    assert (data["view"], data["last"], data["final"], data["done"]) == (3, 10, 10, True)
    assert sorted(e["step"] for e in data["entries"]) == list(range(11))
    for k in range(11):
        entry = stepper_entry(at, k)
        drawn = drawn_step([cell for row in entry["rows"] for cell in row])
        engine = engine_step(ref, k, byte=False)
        assert (drawn["history"], drawn["words"]) == (engine["history"], engine["words"]), k
        assert len(drawn["words"]) == 4 and (drawn["history"] is None) == (k == 0)
        assert entry["text"] == (explain(ref.records[k - 1], config=ref.config) if k else BEFORE_ANY_MERGE)
        assert entry["vocab"] == len(ref.tokenizer(k).vocab)
    reported(at, 7)
    assert not at.exception and at.query_params["toy_step"] == "7" and stepper_data(at)["view"] == 7
    assert step_chart_spec(at, "Tokens in the corpus")["shown"] == 7
    reported(at, 2, gen="toy.earlier", seq=2)  # not this page's generation: nothing moves
    assert at.query_params["toy_step"] == "7" and stepper_data(at)["view"] == 7


def counted_renders(monkeypatch) -> list[int]:
    """The steps the Train page renders from now on (not those it takes from another session's),
    with the steps sessions share emptied first."""
    from explorer.ui import train_view

    monkeypatch.setattr(train_view, "_SHARED", {})
    made: list[int] = []
    render = train_view._entry

    def counting(live, k, look):
        made.append(k)
        return render(live, k, look)

    monkeypatch.setattr(train_view, "_entry", counting)
    return made


def test_a_second_session_is_sent_the_steps_another_rendered_drawn_as_the_engine_has_them(monkeypatch):
    made = counted_renders(monkeypatch)
    first = train_page("udhr_en.txt", "gpt2")
    reported(first, 0)
    held_window(first, 0)
    assert len(made) > stepper.AHEAD  # the first session rendered its window
    second = train_page("udhr_en.txt", "gpt2")  # its first run: step 0, not trained past yet
    made.clear()
    reported(second, 0)
    data = stepper_data(second)
    # the whole window in the first report's answer (no rendering to spread over runs)
    assert not data["more"] and {e["step"] for e in data["entries"]} >= set(range(1, stepper.AHEAD + 1))
    assert made == []
    ref = engine("udhr_en.txt", "gpt2", stepper.AHEAD + 2)
    held = held_window(second, 0)
    for k in [0, 1, 2, *random.Random(3).sample(range(3, stepper.AHEAD + 1), 5)]:
        assert drawn_step([c for row in held[k]["rows"] for c in row]) == engine_step(ref, k, byte=True), k


@pytest.mark.parametrize(
    "other",
    [
        {"w_top_k": 5},  # another look: the pair table's rows
        {"w_gpt2_chars": True},  # byte-level tokens as GPT-2's characters
    ],
    ids=["pairs-shown", "gpt2-chars"],
)
def test_a_session_with_another_look_renders_its_own_steps(monkeypatch, other):
    made = counted_renders(monkeypatch)
    first = train_page("udhr_en.txt", "gpt2")
    reported(first, 0)
    held_window(first, 0)
    made.clear()
    at = train_page("udhr_en.txt", "gpt2", looks=other)
    reported(at, 0)
    held = held_window(at, 0)
    assert set(made) >= set(range(0, stepper.AHEAD + 1))
    ref = engine("udhr_en.txt", "gpt2", stepper.AHEAD + 2)
    if "w_top_k" in other:
        assert drawn_step([c for row in held[7]["rows"] for c in row]) == engine_step(ref, 7, byte=True, top=5)


def test_a_history_search_is_drawn_for_the_merges_each_session_reached(monkeypatch):
    """The history's matches are among the merges a session reached: two sessions with the same
    search, one at step 0 and one at step 20, draw step 3 each with its own count."""
    counted_renders(monkeypatch)
    search = {"w_history_search": "e"}
    first = train_page("udhr_en.txt", "gpt2", looks=search)
    reported(first, 0)
    assert " of 0 merges match" in "".join(c for row in held_window(first, 0)[3]["rows"] for c in row)
    second = train_page("udhr_en.txt", "gpt2", looks=search)
    reported(second, 0)
    reported(second, 20, seq=2)
    assert " of 20 merges match" in "".join(c for row in held_window(second, 20)[3]["rows"] for c in row)


def test_after_the_warm_up_a_first_visit_of_the_default_corpus_renders_no_step(monkeypatch):
    """The server's warm-up renders the steps a first visit of the default corpus and preset asks
    for first: that visit's first run and the answer to its stepper's first report render none,
    and the answer holds them all."""
    from explorer.ui import startup

    made = counted_renders(monkeypatch)
    startup._default_corpus()
    assert len(made) == stepper.AHEAD + 1
    made.clear()
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/2_Train.py").run()
    assert [e["step"] for e in stepper_data(at)["entries"]] == [0]
    reported(at, 0)
    data = stepper_data(at)
    assert made == [] and not data["more"]
    assert {e["step"] for e in data["entries"]} == set(range(stepper.AHEAD + 1))
