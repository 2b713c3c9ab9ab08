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


def train_page(corpus: str, preset: str, *, merges: int | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(corpus,))
    at.session_state["preset_name"] = preset
    at.session_state["config"] = corpus_config(preset) if merges is None else corpus_config(preset, merges=merges)
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
