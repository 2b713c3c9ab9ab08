"""A budget for every training: one careless click cannot take the server's memory or time.

The probes are those a hostile student or a careless teacher makes: byte-level BPE without
pre-tokenization "until no pair is left" with a minimum count of 0 (the last merges join tokens
thousands of characters long, so the vocabulary's text grows with the square of the merges), a
link asking for step 200,000 of it, and a 19 MiB upload of one character (its first merge visits
every position). The engine's footprint is held against tracemalloc's measure, and each budget
against a trainer with none.
"""

from __future__ import annotations

import gc
import re
import subprocess
import sys
import tracemalloc

import pytest
from conftest import ROOT, read_sample, unescaped
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config
from explorer.bpe.budget import (
    TOKEN_COPIES,
    Budget,
    BudgetError,
    require_start,
    start_footprint,
    step_work,
)
from explorer.bpe.trainer import train_words_to_end
from explorer.stages.pipeline import count_words
from explorer.ui import server
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
MIB = 2**20


def greedy(preset: str = "bytes"):
    """The probe's settings: no stop but running out of pairs, pairs that occur once merged too."""
    return corpus_config(preset).replace(num_merges=None, vocab_size=None, min_frequency=0)


def trainer_on(names: tuple[str, ...], config, **kw) -> Trainer:
    return Trainer(count_words(tuple(read_sample(n) for n in names), config), config, top_k=50, full_records=2000, **kw)


# ---- the engine ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("preset", "names", "merges"),
    [
        ("gpt2", ("udhr_en.txt", "udhr_hi.txt"), 1000),
        ("sennrich", ("udhr_ru.txt",), 1000),
        ("bytes", ("udhr_en.txt",), 3000),  # long tokens: pairs met once merged too
    ],
)
def test_the_footprint_estimate_stays_near_what_tracemalloc_measures(preset, names, merges):
    """What a trainer holds, as tracemalloc counts it, against its footprint: never much more than
    it says (a budget must hold), and not so much less that a budget refuses what would fit."""
    config = greedy(preset) if preset == "bytes" else corpus_config(preset, merges=merges)
    words = count_words(tuple(read_sample(n) for n in names), config)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        trainer = Trainer(words, config, top_k=50, full_records=2000)
        at_start = tracemalloc.get_traced_memory()[0] - before
        start_estimate = trainer.footprint
        trainer.advance(merges)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # the words' text exists before the trainer (not traced above); the tokens' text is counted
    # once here, as the trainer holds it (the budget counts it for derived tokenizers too)
    own = trainer._words_bytes
    one_copy = trainer.footprint - own - trainer._text_bytes * (TOKEN_COPIES - 1) // TOKEN_COPIES
    assert 0.8 * at_start <= start_estimate - own <= 1.2 * at_start
    assert 0.95 * grown <= one_copy <= 1.45 * grown
    # the estimate from the word counts alone, before building, is an upper bound of the start
    assert start_footprint(words, config) >= start_estimate


def test_a_memory_budget_stops_at_the_merge_that_would_pass_it_and_keeps_the_merges_made():
    config = greedy()
    free = trainer_on(("udhr_en.txt",), config)
    free.advance(4000)
    budget = Budget(memory_bytes=24 * MIB, whose="each session")
    held = trainer_on(("udhr_en.txt",), config)
    held.budget = budget
    with pytest.raises(BudgetError) as raised:
        held.advance(4000)
    made = len(held.records)
    assert 0 < made < 4000 and held.footprint <= budget.memory_bytes
    assert held.merges == free.merges[:made]  # the budget changes when training stops, not what it merges
    message = str(raised.value)
    assert message == held.held
    assert message.startswith(
        f"Training stopped after {made:,} merges: the next would take this trainer past the 24 MiB"
    )
    assert "each session may use on this server" in message and "the text of its tokens" in message
    # asking again makes no merge and says the same; a bigger budget goes on from there
    with pytest.raises(BudgetError):
        held.advance(1)
    assert len(held.records) == made
    held.budget = Budget(memory_bytes=64 * MIB)
    held.advance(10)
    assert held.held is None and held.merges == free.merges[: made + 10]


def test_a_time_budget_counts_the_trainers_own_cpu_time():
    held = trainer_on(("english_frankenstein.txt",), corpus_config("gpt2", merges=3000))
    held.budget = Budget(seconds=1e-9)
    with pytest.raises(BudgetError, match=r"it has used \d+ s of the server's time, the most each training may use"):
        held.advance(3000)
    assert len(held.records) <= 64 and held.train_seconds > 0
    free = trainer_on(("english_frankenstein.txt",), corpus_config("gpt2", merges=3000))
    assert len(free.advance(3000)) == 3000 and free.train_seconds == 0  # no budget: nothing timed


_CEILING_PROBE = """
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from test_budget import MIB, greedy, trainer_on
from explorer.bpe.budget import Budget, BudgetError, Ceiling, rss_bytes

start = rss_bytes()
ceiling = Ceiling(start + 40 * MIB)  # this training grows the process by ~80 MiB without one
held = trainer_on(("udhr_en.txt", "udhr_ru.txt"), greedy())
held.budget = Budget(ceiling=ceiling)
try:
    while not held.done:
        held.advance(500)
except BudgetError as err:
    print(err)
print("under" if rss_bytes() < ceiling.limit_bytes else "over")
"""


def test_a_ceiling_stops_training_before_the_process_passes_it():
    # in a process of its own: a test process that has been bigger before keeps the freed memory
    # mapped, and a training there may never move its resident size at all
    code = _CEILING_PROBE.format(root=str(ROOT), tests=str(ROOT / "tests"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True).stdout
    said, where = out.splitlines()
    assert re.search(r"the server is at its memory ceiling \(\d+ MiB", said), out
    assert where == "under", out


def test_step_work_from_the_word_counts_is_the_longest_position_list_the_trainer_starts_with():
    """Two computations apart: the up-front count over the words, and the trainer's own index."""
    for text, preset in [
        ("a" * 5000, "gpt2"),
        (read_sample("english_frankenstein.txt"), "bytes"),
        (read_sample("udhr_hi.txt"), "sennrich"),
    ]:
        config = corpus_config(preset)
        words = count_words((text,), config)
        index = Trainer(words, config)._where
        assert step_work(words, config) == max(map(len, index.values()))


def test_a_run_of_one_character_is_refused_up_front_as_too_slow_to_step():
    config = corpus_config("gpt2")
    words = count_words(("a" * 1_000_000,), config)
    with pytest.raises(BudgetError) as raised:
        require_start(words, config, Budget(step_work=200_000, whose="each session"), what="This corpus")
    assert raised.value.over == pytest.approx(999_999 / 200_000)
    assert "has a pair that occurs 999,999 times within its distinct words" in str(raised.value)


def test_a_worker_run_keeps_within_the_budget_what_comes_back_and_lets_the_index_go():
    words = count_words((read_sample("udhr_en.txt"),), greedy())
    trained = train_words_to_end(words, greedy(), budget=Budget(memory_bytes=16 * MIB))
    assert trained.held is not None and trained.held.startswith("Training stopped after")
    assert not trained.done  # stopped short by its budget, not by a stop rule
    assert trained.footprint - trained._index_bytes <= 16 * MIB
    free = train_words_to_end(words, corpus_config("bytes", merges=300), budget=Budget(memory_bytes=16 * MIB))
    assert free.held is None and len(free.records) == 300 and free.footprint < 16 * MIB


# ---- the pages -------------------------------------------------------------------------------
def train_page(monkeypatch, **env) -> AppTest:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return AppTest.from_file(APP, default_timeout=90)


def warnings(at: AppTest) -> list[str]:
    return [unescaped(w.value) for w in at.warning]


def test_a_link_asking_for_200000_steps_of_the_probe_opens_where_the_budget_stopped_it(monkeypatch):
    at = train_page(monkeypatch, BPE_EXPLORER_SESSION_TRAIN_MIB="24")
    at.query_params.update(
        {"corpus": "udhr_en.txt", "preset": "bytes", "merges": "all", "min_frequency": "0", "step": "200000"}
    )
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    live = at.session_state["live"]
    made = live.trained
    assert 0 < made < 200_000 and live.view == made and live.trainer.footprint <= 24 * MIB
    warning = next(w for w in warnings(at) if "Training stopped after" in w)
    assert f"Training stopped after {made:,} merges" in warning and "24 MiB each session may use" in warning
    # a Step makes no merge and says so again; the session goes on working
    at.button(key="step").click().run()
    assert not at.exception and live.trained == made
    assert any("Training stopped after" in w for w in warnings(at))


def test_run_to_end_of_the_probe_stops_at_the_budget_with_a_sentence(monkeypatch):
    at = train_page(monkeypatch, BPE_EXPLORER_SESSION_TRAIN_MIB="24")
    at.query_params.update({"corpus": "udhr_ru.txt", "preset": "bytes", "merges": "all", "min_frequency": "0"})
    at.switch_page("pages/2_Train.py").run()
    at.button(key="run").click().run()
    assert not at.exception
    live = at.session_state["live"]
    assert not live.running and not live.trainer.done and live.trainer.footprint <= 24 * MIB
    assert any(f"Training stopped after {live.trained:,} merges" in w for w in warnings(at))


def test_a_19_mib_upload_of_one_character_steps_through_a_sample_small_enough(monkeypatch):
    at = train_page(monkeypatch)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), uploads=(("one.txt", "a" * (19 * MIB)),))
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception and at.button(key="big_sample")
    at.button(key="big_sample").click().run()
    assert not at.exception
    live = at.session_state["live"]
    trainer = live.trainer
    limit = server.session_budget().step_work
    # what makes a step slow is bounded: its first merge, the slowest, visits at most the limit
    assert trainer.step_work <= limit and trainer.corpus_bytes > limit // 2
    assert any(
        f"Stepping through the first {trainer.corpus_bytes / MIB:.1f} MiB" in unescaped(c.value) for c in at.caption
    )
    at.button(key="step").click().run()
    assert not at.exception and live.trained == 1 and trainer.records[0].replaced == trainer.corpus_bytes // 2


def test_a_corpus_under_the_size_limit_but_too_slow_to_step_is_offered_a_sample(monkeypatch):
    at = train_page(monkeypatch, BPE_EXPLORER_STEP_WORK="1000")
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), pasted="b" * 5000)
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception and at.session_state["live"].trainer is None
    assert any("has a pair that occurs 4,999 times" in w for w in warnings(at))
    at.button(key="big_sample").click().run()
    assert not at.exception and at.session_state["live"].trainer.step_work <= 1000
