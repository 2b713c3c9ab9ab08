"""The Train page's stepper on the server's side: the window of steps it is sent (rendered as the
engine has each step), what a report from the browser moves, and what it is not sent again.
The browser's side is in test_browser_stepper.py."""

from __future__ import annotations

import random

import pytest
from conftest import ROOT, drawn_step, engine_step, read_sample, reported, stepper_data, stepper_entry
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config
from explorer.stages.pipeline import count_words
from explorer.ui import stepper
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")


def train_page(corpus: str, preset: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(corpus,))
    at.session_state["preset_name"] = preset
    at.session_state["config"] = corpus_config(preset)
    at.run()
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    return at


def engine(corpus: str, preset: str, merges: int) -> Trainer:
    config = corpus_config(preset)
    trainer = Trainer(count_words((read_sample(corpus),), config), config)
    trainer.advance(merges)
    return trainer


def status(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Step **"))


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
    assert data["view"] == 40 and data["last"] >= 40 + stepper.AHEAD
    assert status(at).startswith(f"Step **40** of {data['last']:,} trained")
    sent = {e["step"] for e in data["entries"]}
    assert {39, 40, 41, 48} <= sent
    ref = engine(corpus, preset, data["last"])
    byte = preset == "gpt2"
    for k in [40, 39, *random.Random(7).sample(sorted(sent), 4)]:
        entry = stepper_entry(at, k)
        assert drawn_step([c for row in entry["rows"] for c in row]) == engine_step(ref, k, byte=byte), k
        assert entry["lead"] == f"Step {k}." and entry["final"]


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
    assert status(at).startswith("Step **20** ")
    at.button(key="reset").click().run()  # a new trainer at step 0: a new generation
    assert stepper_data(at)["gen"] != old and stepper_data(at)["view"] == 0
    reported(at, 30, gen=old, seq=3)  # the browser's report, sent before it saw the reset
    assert status(at).startswith("Step **0** ")
    reported(at, 5, seq=4)
    assert status(at).startswith("Step **5** ")


def test_a_window_of_steps_travels_as_pieces_that_join_back_to_the_rendered_panels():
    rows = (('<div class="bpe-panel"><table><tr><td>a</td></tr><tr><td>&lt;b&gt;</td></tr></table></div>',),)
    window = stepper.Window()
    entries = [stepper.Entry(k, 10, "", "x", "info", rows) for k in (1, 2)]
    pieces, packed = window.pack(entries, set())
    assert ["".join(pieces[i] for i in cell) for cell in packed[0]["rows"][0]] == list(rows[0])
    assert len(pieces) == 3  # both steps' pieces, each sent once
    pieces, _ = window.pack([stepper.Entry(3, 10, "", "x", "info", rows)], {1})
    assert pieces == {}  # the browser holds step 1, so it holds its pieces
