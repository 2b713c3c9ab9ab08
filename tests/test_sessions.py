"""A server shared by a class: a corpus over the step-through limit, idle sessions letting
their trainers go, and heavy training taking turns."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import ROOT, read_sample, shown, step_chart, train_text, unescaped, view_slider
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config
from explorer.formats.corpora import leading_sample
from explorer.stages.pipeline import count_words
from explorer.ui import server, state
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
CORPUS = "udhr_ru.txt"  # 21,792 bytes


def train_page(monkeypatch, *, step_kib: float | None = None) -> AppTest:
    if step_kib is not None:
        monkeypatch.setenv("BPE_EXPLORER_STEP_MIB", str(step_kib / 1024))
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.run()
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    return at


def status(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Step **"))


def history(at: AppTest):
    if not at.toggle(key="w_full_history").value:
        at.toggle(key="w_full_history").set_value(True).run()
    return next(df.value for df in at.dataframe if "new token" in df.value.columns)


def engine(texts, **kw) -> Trainer:
    config = corpus_config("gpt2")
    return Trainer(count_words(texts, config), config, **kw)


def test_a_corpus_over_the_step_limit_is_not_counted_until_the_user_chooses(monkeypatch):
    at = train_page(monkeypatch, step_kib=10)
    assert "This corpus is 0.0 MiB" in at.warning[0].value or "limited to" in at.warning[0].value
    assert "limited to 0.0 MiB per session" in at.warning[0].value
    assert at.button(key="big_sample") and at.button(key="big_final")
    assert not any(b.key == "step" for b in at.button)
    assert state.live_sessions() and at.session_state["live"].trainer is None


def test_the_sample_steps_through_the_leading_stretch_of_the_corpus(monkeypatch):
    at = train_page(monkeypatch, step_kib=10)
    at.button(key="big_sample").click().run()
    assert not at.exception
    assert any("Stepping through the first" in c.value for c in at.caption)
    at.button(key="step100").click().run()
    sample = leading_sample([read_sample(CORPUS)], 10 * 1024)
    ref = engine(sample)
    ref.advance(100)
    assert history(at)["new token"].tolist()[::-1] == [shown(r.token) for r in ref.records]
    assert status(at).startswith("Step **100** of 100")
    # what the page compresses is the sample: its token count before any merge
    tokens = step_chart(at, "Tokens in the corpus")
    assert tokens["tokens"].iloc[0] == ref.initial_tokens < engine([read_sample(CORPUS)]).initial_tokens


def test_all_of_it_without_step_records_trains_to_the_end_at_once(monkeypatch):
    at = train_page(monkeypatch, step_kib=10)
    at.button(key="big_final").click().run()
    assert not at.exception
    ref = engine([read_sample(CORPUS)]).run()
    assert "training stopped" in status(at) and f"of {len(ref.records):,} trained" in status(at)
    assert history(at)["new token"].tolist()[::-1] == [shown(r.token) for r in ref.records]
    assert any("without step records" in c.value for c in at.caption)
    # a past step shows its winner and says the log is compact
    view_slider(at).set_value(3).run()
    assert "keeps the full pair table for the first 0 steps only" in train_text(at)


def test_an_idle_session_lets_its_trainer_go_and_gets_it_back_at_the_same_step(monkeypatch):
    at = train_page(monkeypatch)
    at.button(key="step10").click().run()
    view_slider(at).set_value(6).run()
    mine = at.session_state["live"]
    before = history(at)
    # not idle yet: nothing is released
    assert state.release_idle(now=time.monotonic()) == 0 or mine.trainer is not None
    released = state.release_idle(now=time.monotonic() + server.idle_seconds() + 1)
    assert released >= 1 and mine.trainer is None and mine.trained == 10
    at.run()
    assert not at.exception
    assert any("was idle for over 30 minutes" in unescaped(i.value) for i in at.info)
    assert status(at).startswith("Step **6** of 10")
    assert history(at).equals(before)
    at.button(key="step").click().run()
    assert status(at).startswith("Step **7** of 10")
    at.run()
    assert not any("was idle" in unescaped(i.value) for i in at.info)  # said once


def test_a_session_busy_running_is_not_released(monkeypatch):
    at = train_page(monkeypatch)
    mine = at.session_state["live"]
    mine.running = True
    try:
        assert not mine.release()
    finally:
        mine.running = False
    assert mine.release() and mine.trainer is None


def test_the_heavy_lane_serves_jobs_first_come_first_served_one_at_a_time():
    lane = server.Lane()
    order: list[int] = []
    active = []
    gate = threading.Event()

    def job(i: int) -> None:
        with lane.turn():
            active.append(i)
            assert len(active) == 1
            if i == 0:
                gate.wait(5)
            order.append(i)
            active.remove(i)

    first = threading.Thread(target=job, args=(0,))
    first.start()
    while lane.busy == 0:
        time.sleep(0.001)
    others = []
    for i in range(1, 6):
        t = threading.Thread(target=job, args=(i,))
        t.start()
        others.append(t)
        while lane.waiting < i:  # queued in this order
            time.sleep(0.001)
    gate.set()
    for t in [first, *others]:
        t.join(5)
    assert order == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("raw", ["0", "-3", "nan", "inf", "four"])
def test_a_bad_limit_in_the_environment_falls_back_to_the_default(monkeypatch, raw):
    monkeypatch.setenv("BPE_EXPLORER_STEP_MIB", raw)
    monkeypatch.setenv("BPE_EXPLORER_IDLE_MINUTES", raw)
    assert server.step_limit() == int(server.DEFAULT_STEP_MIB * 2**20)
    assert server.idle_seconds() == server.DEFAULT_IDLE_MINUTES * 60


def test_the_server_config_runs_no_collection_after_each_rerun_and_watches_no_files():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # a full gc.collect() after every Step click walked every session's objects (bench/load.py)
    assert config["runner"]["postScriptGC"] is False
    assert config["server"]["fileWatcherType"] == "none"


@pytest.mark.parametrize("preset", ["gpt2", "sennrich", "bytes"])
def test_word_counts_shared_per_text_equal_counting_the_corpus_at_once(preset):
    from explorer.ui import data

    texts = (read_sample("udhr_en.txt"), read_sample("demo_sentences.txt"), read_sample("udhr_en.txt")[:3000])
    config = corpus_config(preset)
    # same counts and the same first-appearance order (the first-seen tie-break depends on it)
    assert list(data.word_counts(texts, config).items()) == list(count_words(texts, config).items())


def test_a_session_that_ended_takes_its_trainer_with_it(monkeypatch):
    # Streamlit drops an ended session's state (server.disconnectedSessionTTL after the tab
    # closed); nothing else (the idle janitor's registry, a cache) may keep its trainer alive
    import gc
    import weakref

    at = train_page(monkeypatch)
    at.button(key="step10").click().run()
    trainer = weakref.ref(at.session_state["live"].trainer)
    assert trainer() is not None and any(lv.trainer is trainer() for lv in state.live_sessions())
    del at  # the session and its state
    gc.collect()
    assert trainer() is None
