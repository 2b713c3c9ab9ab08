"""Page tests with Streamlit's AppTest: what each page shows is what the engine computes."""

from __future__ import annotations

import hashlib
import html
import json
import re

import pandas as pd
import pytest
from conftest import (
    ROOT,
    encode_view,
    open_advanced,
    read_sample,
    shown,
    step_chart,
    step_chart_spec,
    step_sentence,
    stepper_entry,
    train_html,
    train_text,
    unescaped,
    view_slider,
)
from streamlit.testing.v1 import AppTest

from explorer import SEED_REPLAYS, Trainer, corpus_config, make_config
from explorer.stages.pipeline import count_words
from explorer.ui import state
from explorer.ui.render import visible
from explorer.ui.settings import ADVANCED_OPEN
from explorer.ui.state import DEFAULT_SAMPLE, TRAINED_AHEAD, CorpusChoice

APP = str(ROOT / "app.py")
CORPUS = "udhr_en.txt"
TIMEOUT = 60
APPLY = "FormSubmitter:w_advanced_form-Apply and restart training"

_ROW = re.compile(r'<div class="bpe-row[^"]*"><span class="bpe-word">(.*?)</span>(.*?)<span class="bpe-freq">', re.S)
_CHIP = re.compile(r'<span class="bpe-chip[^"]*" style="[^"]*">(.*?)</span>', re.S)


def fresh_app(*, corpus: str | None = CORPUS) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if corpus is not None:
        at.session_state["corpus_choice"] = CorpusChoice(samples=(corpus,))
    return at.run()


def train_page(**kw) -> AppTest:
    at = fresh_app(**kw)
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    return at


def engine(corpus: str = CORPUS, **overrides) -> Trainer:
    """What the page should show, computed by the engine directly (the page's default config)."""
    config = corpus_config("gpt2", **overrides)
    return Trainer(count_words((read_sample(corpus),), config), config)


def history(at: AppTest):
    """The full merge history grid (switched on first)."""
    if not at.toggle(key="w_full_history").value:
        at.toggle(key="w_full_history").set_value(True).run()
    return next(df.value for df in at.dataframe if "new token" in df.value.columns)


_TR = re.compile(r"<tr([^>]*)>(.*?)</tr>", re.S)
_TD = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


def pair_table(at: AppTest) -> pd.DataFrame:
    """The "Pair counts now" table read back from its HTML: one row per pair, the chips' text
    unescaped, the row's class ("bpe-next", "bpe-tied" or none) as ``row_class``."""
    body = next(h for h in train_html(at) if 'class="bpe-pairs"' in h)
    rows = []
    for attrs, cells in _TR.findall(body.split('class="bpe-pairs">', 1)[1]):
        tds = _TD.findall(cells)
        if not tds:
            continue  # the header row
        rank, left, right, merged, count, status_ = tds
        rows.append(
            {
                "rank": int(rank),
                "left": html.unescape(_CHIP.findall(left)[0]),
                "right": html.unescape(_CHIP.findall(right)[0]),
                "merged": html.unescape(_CHIP.findall(merged)[0]),
                "count": int(count.replace(",", "")),
                "status": status_,
                "row_class": attrs.strip(),
            }
        )
    return pd.DataFrame(rows, columns=["rank", "left", "right", "merged", "count", "status", "row_class"])


def segmented_words(at: AppTest) -> dict[str, list[str]]:
    """Word -> its chips, from the "Words, segmented" panel."""
    body = next(h for h in train_html(at) if 'class="bpe-freq"' in h)
    return {html.unescape(word): [html.unescape(c) for c in _CHIP.findall(chips)] for word, chips in _ROW.findall(body)}


def status(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Step **"))


@pytest.mark.parametrize("page", [None, "pages/1_Corpus.py", "pages/2_Train.py"])
def test_every_page_renders_without_exception_on_a_fresh_session(page):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    if page:
        at.switch_page(page).run()
    assert not at.exception
    assert not at.error
    assert at.title


def test_app_opens_on_a_bundled_corpus_ready_to_train():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/2_Train.py").run()
    assert unescaped(at.main.caption[0].value).startswith("english_frankenstein.txt · gpt2 · 1,000 merges")
    assert status(at).startswith("Step **0** of 0 trained")
    assert len(pair_table(at)) == 10


def test_pair_table_marks_the_winner_green_and_the_pairs_tied_with_it_yellow():
    at = train_page()
    ref = engine()
    for _ in range(7):  # udhr_en at step 7: 'r'+'e' and 'Ġt'+'he' both occur 128 times
        at.button(key="step").click().run()
    ref.advance(7)
    table, top = pair_table(at), ref.peek(10)
    assert table["count"].tolist() == [p.count for p in top]
    expected = ["bpe-next"] + ["bpe-tied" if p.count == top[0].count else "" for p in top[1:]]
    assert [c.removeprefix('class="').removesuffix('"') for c in table["row_class"]] == expected
    assert table["status"].tolist() == [c.removeprefix("bpe-") for c in expected]
    assert expected.count("bpe-tied") >= 1
    assert f"{expected.count('bpe-tied')} pair(s) shown tie with the winner" in train_text(at)


def test_chip_and_table_styles_are_sent_once_per_page_not_with_every_table():
    at = train_page()
    at.button(key="step").click().run()
    styled = [h.proto.body for h in at.get("html") if ".bpe-chip{" in h.proto.body]
    assert len(styled) == 1 and ".bpe-pairs tr.bpe-next td" in styled[0]
    tables = [h for h in train_html(at) if 'class="bpe-pairs"' in h or 'class="bpe-hist"' in h]
    assert len(tables) == 2 and not any("<style>" in b for b in tables)


def test_stepping_updates_pair_table_history_and_charts_as_the_engine_says():
    at = train_page()
    ref = engine()
    # byte-level tokens read as the text their bytes spell (' t', not GPT-2's 'Ġt')
    assert pair_table(at)[["left", "right", "count"]].values.tolist() == [
        [shown(p.left), shown(p.right), p.count] for p in ref.peek(10)
    ]
    for _ in range(3):
        at.button(key="step").click().run()
    ref.advance(3)
    hist = history(at)  # newest first
    assert hist[["step", "left", "right", "new token", "count", "replaced", "tokens after"]].values.tolist() == [
        [r.step, shown(r.left), shown(r.right), shown(r.token), r.count, r.replaced, r.tokens_after]
        for r in reversed(ref.records)
    ]
    assert hist["now"].tolist() == ["▶", "", ""]
    # the grid colours the row shown, every cell of it, and no other
    grid = next(df for df in at.dataframe if "new token" in df.value.columns)
    coloured = re.findall(r"_row(\d+)_col(\d+)", grid.proto.arrow_data.styler.styles)
    assert sorted({int(c) for _, c in coloured}) == list(range(len(hist.columns))) and {r for r, _ in coloured} == {"0"}
    assert pair_table(at)[["left", "right", "count"]].values.tolist() == [
        [shown(p.left), shown(p.right), p.count] for p in ref.peek(10)
    ]
    tokens = step_chart(at, "Tokens in the corpus")
    assert tokens["tokens"].tolist() == [ref.initial_tokens] + [r.tokens_after for r in ref.records]
    r = ref.records[2]
    sentence = step_sentence(at)
    assert sentence.startswith(
        f"**Step 3.** ‘{shown(r.left)}’ + ‘{shown(r.right)}’ → ‘{shown(r.left + r.right)}’: the pair occurs {r.count:,}"
    )


def test_the_words_a_step_changed_are_marked_and_no_others():
    at = train_page()
    for _ in range(4):
        at.button(key="step").click().run()
    ref = engine()
    ref.advance(4)
    now, before = ref.tokenizer(4), ref.tokenizer(3)
    body = next(h for h in train_html(at) if 'class="bpe-freq"' in h)
    rows = re.findall(r'<div class="(bpe-row[^"]*)"><span class="bpe-word">(.*?)</span>', body, re.S)
    words = {visible(w): w for w in ref.words}
    marked = {html.unescape(word): "bpe-changed" in cls for cls, word in rows}
    expected = {word: now.encode_piece(words[word]) != before.encode_piece(words[word]) for word in marked}
    assert marked == expected and any(expected.values()) and not all(expected.values())


def test_plus_ten_and_plus_hundred_train_that_many_merges():
    at = train_page()
    at.button(key="step10").click().run()
    assert len(history(at)) == 10
    at.button(key="step100").click().run()
    assert len(history(at)) == 110
    assert status(at).startswith("Step **110** of 110")


def test_run_to_end_makes_the_merge_budget():
    at = train_page()
    at.button(key="run").click().run()
    assert not at.exception
    ref = engine().run()
    assert len(history(at)) == len(ref.records) == 1000
    assert f"vocabulary {len(ref.vocab):,}" in status(at) and "1,000 merges done" in status(at)
    assert at.button(key="step").disabled


def test_slider_shows_a_past_steps_segmentation_exactly_as_the_engine_computes_it():
    at = train_page()
    at.button(key="step100").click().run()
    view_slider(at).set_value(7).run()
    assert status(at).startswith("Step **7** of 100")
    ref = engine()
    ref.advance(100)
    tok = ref.tokenizer(7)
    top = sorted(range(len(ref.words)), key=lambda i: -ref.freqs[i])[:24]
    expected = {visible(ref.words[i]): [shown(t) for t in tok.tokens(tok.encode_piece(ref.words[i]))] for i in top}
    assert segmented_words(at) == expected
    assert any(len(chips) < len(word.encode()) for word, chips in expected.items())  # step 7 did merge something
    # the history table highlights the step shown and greys the steps trained beyond it
    hist_html = next(h for h in train_html(at) if 'class="bpe-hist"' in h)
    assert re.search(r'<tr class="bpe-now"><td class="num">7</td>', hist_html)
    assert re.search(r'<tr class="bpe-ahead"><td class="num">9</td>', hist_html)
    # the pair table at a past step is the one the engine saw before merge 8
    assert pair_table(at)[["left", "right", "count"]].values.tolist() == [
        [shown(p.left), shown(p.right), p.count] for p in ref.records[7].top_pairs[:10]
    ]


def test_past_the_full_records_a_step_shows_its_winner_and_says_the_log_is_compact(monkeypatch):
    monkeypatch.setattr("explorer.ui.state.FULL_RECORDS", 5)
    at = train_page()
    at.button(key="step10").click().run()
    ref = engine()
    ref.advance(10)
    assert history(at)["new token"].tolist()[::-1] == [shown(r.token) for r in ref.records]
    view_slider(at).set_value(7).run()
    # the table before merge 8: only the winner, with a note; merge 7's sentence names no example words
    assert pair_table(at)[["left", "right", "count"]].values.tolist() == [
        [shown(ref.records[7].left), shown(ref.records[7].right), ref.records[7].count]
    ]
    assert "keeps the full pair table for the first 5 steps only" in train_text(at)
    assert f"({ref.records[6].words_affected:,} words)" not in step_sentence(at)
    assert f"(in {ref.records[6].words_affected:,} words)" in step_sentence(at)
    view_slider(at).set_value(3).run()
    assert len(pair_table(at)) == 10
    assert "keeps the full pair table" not in train_text(at)


def test_a_whole_text_without_pre_tokenization_is_drawn_only_in_part():
    # the bytes preset trains on the text as one sequence: the words panel shows its start
    at = train_page(corpus="english_tiny_shakespeare.txt")
    at.selectbox(key="w_preset").set_value("bytes").run()
    at.button(key="step10").click().run()
    assert not at.exception
    body = next(h for h in train_html(at) if "segmented on their own" in h)
    assert "the first 1,000 of 1,115,394 characters" in body
    ((word, chips),) = segmented_words(at).items()
    tok = Trainer.from_texts(read_sample("english_tiny_shakespeare.txt"), make_config("bytes")).run().tokenizer(10)
    start = read_sample("english_tiny_shakespeare.txt")[:1000]
    assert chips == [shown(t) for t in tok.tokens(tok.encode_piece(start))] and word == visible(start)


def test_switching_pages_keeps_the_trainer_and_the_settings():
    at = train_page()
    at.button(key="step10").click().run()
    at.switch_page("pages/1_Corpus.py").run()
    at.switch_page("pages/0_Home.py").run()
    at.switch_page("pages/2_Train.py").run()
    assert status(at).startswith("Step **10** of 10")
    assert len(history(at)) == 10


def test_choosing_a_preset_restarts_training_with_its_settings():
    at = train_page()
    at.button(key="step10").click().run()
    at.selectbox(key="w_preset").set_value("sennrich").run()
    assert not at.exception
    assert status(at).startswith("Step **0** of 0")
    at.button(key="run").click().run()
    assert "1,000 merges done" in status(at)  # sized for the corpus, not seed 001's 15
    ref = Trainer.from_texts(read_sample(CORPUS), corpus_config("sennrich")).run()
    assert history(at)["new token"].tolist() == [r.token for r in reversed(ref.records)]
    assert history(at)["new token"].str.contains("</w>").any()


def test_the_advanced_settings_are_drawn_only_while_open_and_show_the_settings_in_force():
    """Shut, the sidebar's "Advanced settings" draws none of its sixteen widgets (they cost every
    Train run the browser's time); opened, they show the settings in force, a preset chosen while
    it was shut included."""
    at = train_page()

    def advanced() -> list[str]:
        kinds = (at.selectbox, at.text_input, at.radio)
        return [w.key for kind in kinds for w in kind if w.key.startswith("w_cfg_")]

    assert advanced() == []
    open_advanced(at)
    assert len(advanced()) == 12 and at.selectbox(key="w_cfg_unit").value == "byte"
    at.session_state[ADVANCED_OPEN] = False
    at.selectbox(key="w_preset").set_value("sennrich").run()
    assert advanced() == [] and not at.exception
    open_advanced(at)
    assert at.selectbox(key="w_cfg_unit").value == "char" and at.selectbox(key="w_cfg_marker").value == "eow"


def test_advanced_settings_apply_and_impossible_ones_are_explained():
    at = train_page()
    # form widgets commit only on submit: set them, then click Apply (no run in between)
    open_advanced(at)
    at.selectbox(key="w_cfg_unit").set_value("char")
    at.selectbox(key="w_cfg_pretokenizer").set_value("whitespace")
    at.selectbox(key="w_cfg_marker").set_value("eow")
    at.button(key=APPLY).click().run()
    assert not at.exception and not at.error
    at.button(key="step10").click().run()
    ref = Trainer.from_texts(
        read_sample(CORPUS),
        corpus_config("gpt2", unit="char", pretokenizer="whitespace", marker="eow", alphabet="present"),
    )
    ref.advance(10)
    assert history(at)["new token"].tolist() == [r.token for r in reversed(ref.records)]
    assert any(r.token.endswith("</w>") for r in ref.records)
    at.selectbox(key="w_cfg_unit").set_value("byte")
    at.button(key=APPLY).click().run()
    assert "word markers are for character-level BPE" in unescaped(at.error[0].value)
    assert not at.exception


def test_a_hostile_custom_regex_gives_a_message_not_a_hang():
    at = train_page()
    open_advanced(at)
    at.selectbox(key="w_cfg_pretokenizer").set_value("regex")
    at.text_input(key="w_cfg_pattern").input("(")
    at.button(key=APPLY).click().run()
    assert "does not compile" in unescaped(at.error[0].value)
    # compiles, but backtracks catastrophically on a run of x's: a time limit turns that into a message
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), pasted="x" * 3000)
    at.text_input(key="w_cfg_pattern").input("(x+x+)+y")
    at.button(key=APPLY).click().run()
    assert not at.exception
    assert "takes too long on this text" in unescaped(at.error[0].value)


# the two patterns a probe of the page found crashing it (a timeout and a memory error escaped)
HOSTILE_PATTERNS = {
    r"(?:[\s\S]|[\s\S]|[\s\S])*#|.": "takes too long on a test string: a repeated group of alternatives",
    "(" * 90 + "a" + ")" * 90 + "|.": "nests groups 90 deep; at most 32 levels",
}


@pytest.mark.parametrize("pattern", sorted(HOSTILE_PATTERNS))
def test_a_pattern_that_once_crashed_the_page_gives_a_sentence_saying_what_to_change(pattern):
    at = train_page()
    open_advanced(at)
    at.selectbox(key="w_cfg_pretokenizer").set_value("regex")
    at.text_input(key="w_cfg_pattern").input(pattern)
    at.button(key=APPLY).click().run()
    assert not at.exception
    assert HOSTILE_PATTERNS[pattern] in unescaped(at.error[0].value)
    # the session goes on: back to a built-in pre-tokenizer, it trains
    at.selectbox(key="w_cfg_pretokenizer").set_value("gpt2")
    at.button(key=APPLY).click().run()
    at.button(key="step").click().run()
    assert not at.exception and not at.error


@pytest.mark.parametrize("seed", sorted(SEED_REPLAYS))
def test_each_seed_notebook_replays_on_the_train_page(seed):
    at = train_page()
    at.selectbox(key="w_seed").set_value(seed).run()
    at.button(key="replay").click().run()
    at.button(key="run").click().run()
    assert not at.exception
    replay = SEED_REPLAYS[seed]
    config = make_config(replay.preset, **replay.overrides)
    ref = Trainer.from_texts(read_sample(replay.corpus), config).run()
    # byte level reads as text, except seed 003, whose replay shows GPT-2's characters as the notebook prints them
    as_shown = shown if config.unit == "byte" and replay.preset != "gpt2" else (lambda t: t)
    assert history(at)["new token"].tolist() == [as_shown(r.token) for r in reversed(ref.records)]
    assert at.toggle(key="w_gpt2_chars").value == (replay.preset == "gpt2") if config.unit == "byte" else True
    assert unescaped(at.main.caption[0].value).startswith(f"{replay.corpus} · {replay.preset} · ")


def test_pasted_html_is_shown_as_text_never_as_markup():
    at = fresh_app(corpus=None)
    at.switch_page("pages/1_Corpus.py").run()
    at.multiselect(key="w_samples").set_value([]).run()
    at.text_area(key="w_pasted").input("<script>alert('x')</script> <b>bold</b>").run()
    assert not at.exception
    bodies = "".join(h.proto.body for h in at.get("html"))
    assert "<script>" not in bodies and "&lt;script&gt;" in bodies and "<b>" not in bodies
    at.switch_page("pages/2_Train.py").run()
    at.button(key="step").click().run()
    assert not at.exception
    assert "<script>" not in "".join(h.proto.body for h in at.get("html"))


def test_an_empty_corpus_is_explained_on_both_pages():
    at = fresh_app(corpus=None)
    at.switch_page("pages/1_Corpus.py").run()
    at.multiselect(key="w_samples").set_value([]).run()
    assert "The corpus is empty" in at.warning[0].value
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    assert "the corpus is empty" in unescaped(at.error[0].value)


def test_corpus_page_shows_sizes_the_text_really_has():
    at = fresh_app()
    at.switch_page("pages/1_Corpus.py").run()
    text = read_sample(CORPUS)
    strip = next(h.proto.body for h in at.get("html") if 'class="bpe-stats"' in h.proto.body)
    metrics = {
        html.unescape(label): value
        for value, label in re.findall(
            r'<div class="bpe-stat-value">(.*?)</div><div class="bpe-stat-label">(.*?)</div>', strip
        )
    }
    assert metrics["Bytes"] == f"{len(text.encode()):,}"
    assert metrics["Characters"] == f"{len(text):,}"
    assert metrics["Words"] == f"{len(text.split()):,}"
    assert metrics["Distinct words"] == f"{len(set(text.split())):,}"
    assert metrics["Alphabet (chars)"] == f"{len(set(text)):,}"


def test_word_lookup_explains_a_segmentation_merge_by_merge():
    at = train_page()
    at.button(key="step100").click().run()
    at.text_input(key="w_word_search").input("declaration").run()
    assert not at.exception
    assert "got its tokens, merge by merge" in train_text(at)
    # each line names the step that learned its merge, as the history does
    lines = " ".join(h for h in train_html(at) if "bpe-row" in h and "←" in h)
    steps = [int(n) for n in re.findall(r'<div class="bpe-row">step (\d+):', lines)]
    ref = engine()
    ref.advance(100)
    learned = {r.token: r.step for r in ref.records}
    assert steps and steps == sorted(steps) and all(1 <= n <= 100 for n in steps)
    assert "rule " not in lines
    assert set(steps) <= set(learned.values())


# ---- presets sized for any corpus (a seed's own sizes only when replaying it) ------------------
@pytest.mark.parametrize("preset", ["hf-course", "sennrich", "bytes", "gpt2", "suffix-marker", "gpt4"])
def test_every_preset_makes_a_real_number_of_merges_on_a_non_seed_corpus(preset):
    at = train_page(corpus="udhr_en.txt")
    at.selectbox(key="w_preset").set_value(preset).run()
    at.button(key="run").click().run()
    assert not at.exception
    ref = Trainer.from_texts(read_sample("udhr_en.txt"), corpus_config(preset)).run()
    trained = len(history(at))
    assert trained == len(ref.records) >= 100
    assert f"{trained:,} merges done" in status(at) or "no pair of tokens is left" in status(at)
    assert at.number_input(key="w_size").value == 1000


@pytest.mark.parametrize("preset", ["bytes", "gpt2", "gpt4"])
def test_byte_level_presets_never_produce_unk_outside_a_seed_replay(preset):
    at = train_page(corpus="udhr_en.txt")
    at.selectbox(key="w_preset").set_value(preset).run()
    at.button(key="step10").click().run()
    at.switch_page("pages/3_Playground.py").run()
    at.multiselect(key="w_play_tokenizers").set_value(["trained"]).run()
    text = "模 😀 ünï Ωmega \x00 \U0001f469\u200d\U0001f4bb"  # nothing of it is in the English corpus
    at.text_area(key="w_play_text").input(text).run()
    assert not at.exception
    (panel,) = encode_view(at)
    assert panel.metrics["Unknown symbols"] == "0"
    tok = Trainer.from_texts(read_sample("udhr_en.txt"), corpus_config(preset)).run().tokenizer(10)
    assert tok.unk_id not in tok.encode(text) and tok.decode(tok.encode(text)) == text


def test_a_seed_replay_keeps_its_notebook_sizes_and_says_when_bytes_are_missing():
    at = train_page()
    at.selectbox(key="w_seed").set_value("003").run()
    at.button(key="replay").click().run()
    assert at.number_input(key="w_size").value == 100 and at.number_input(key="w_size").label == "Vocabulary size"
    note = unescaped(" ".join(c.value for c in at.sidebar.caption))
    assert "Replaying seed 003" in note and "only the bytes present in its corpus" in note
    # another corpus ends the replay: the preset is sized for it again
    at.switch_page("pages/1_Corpus.py").run()
    at.multiselect(key="w_samples").set_value(["udhr_en.txt"]).run()
    at.switch_page("pages/2_Train.py").run()
    assert unescaped(at.main.caption[0].value).startswith("udhr_en.txt · gpt2 · 1,000 merges")
    assert "Replaying" not in " ".join(c.value for c in at.sidebar.caption)


def test_the_merge_budget_is_editable_and_restarts_training():
    at = train_page()
    at.button(key="step10").click().run()
    at.number_input(key="w_size").set_value(30).run()
    assert status(at).startswith("Step **0** of 0")
    at.button(key="run").click().run()
    assert "30 merges done" in status(at) and len(history(at)) == 30
    assert unescaped(at.main.caption[0].value).startswith(f"{CORPUS} · gpt2 · 30 merges")


def test_a_first_visit_of_the_default_corpus_holds_the_steps_its_stepper_asks_for_first_not_reached():
    """The server's warm-up trains the default corpus's trainer the merges a stepper's first report
    asks for; a first visit copies it: those merges held, the engine's own, and not reached (the
    status, the slider's end and Run to end are as at step 0). Another corpus's trainer is built at
    its step alone (its first screen waits for no merge nobody asked for)."""
    state.warm_default()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/2_Train.py").run()
    live = at.session_state["live"]
    ref = Trainer(count_words((read_sample(DEFAULT_SAMPLE),), corpus_config("gpt2")), corpus_config("gpt2"))
    ref.advance(TRAINED_AHEAD)
    assert (live.view, live.trained, live.recorded) == (0, 0, TRAINED_AHEAD)
    assert [r.token for r in live.trainer.records] == [r.token for r in ref.records]
    assert status(at).startswith("Step **0** of 0 trained") and not at.button(key="run").disabled
    at.button(key="step").click().run()
    assert status(at).startswith("Step **1** of 1 trained") and live.recorded == TRAINED_AHEAD
    other = train_page()  # another corpus
    assert other.session_state["live"].recorded == 0


def test_a_link_to_a_step_of_the_default_run_copies_the_run_the_warm_up_trained_to_its_end():
    """The warm-up also trains the default corpus's run to its end (its 1,000 merges): a link to
    one of its steps copies that trainer, holding the engine's merges past the step as trained
    ahead, not reached (the status, the slider's end and Run to end are as at that step, and
    Step goes on from it). A link into another corpus's run trains to its step alone."""
    state.warm_default()

    def link(**query) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"step": "120", **query})
        at.switch_page("pages/2_Train.py").run()
        assert not at.exception, at.exception
        return at

    config = corpus_config("gpt2")
    ref = Trainer(count_words((read_sample(DEFAULT_SAMPLE),), config), config)
    ref.advance(10_000)  # to its end: the preset's 1,000 merges
    assert len(ref.records) == 1_000
    at = link()
    live = at.session_state["live"]
    assert (live.view, live.trained, live.recorded) == (120, 120, 1_000)
    assert [r.token for r in live.trainer.records] == [r.token for r in ref.records]
    assert status(at).startswith("Step **120** of 120 trained") and "training stopped" not in status(at)
    assert not at.button(key="run").disabled
    at.button(key="step").click().run()
    assert status(at).startswith("Step **121** of 121 trained") and live.recorded == 1_000
    other = link(corpus=CORPUS)
    assert other.session_state["live"].recorded == 120


def test_a_training_that_ended_among_the_steps_trained_ahead_is_said_once_the_last_is_reached():
    """A stepper's report trains ahead of the step shown; when training ends there, the page does
    not say so (nor disable Run to end and Step) until the person reaches that last step."""
    at = fresh_app(corpus=None)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), pasted="low lower newest widest " * 5)
    at.switch_page("pages/2_Train.py").run()
    live = at.session_state["live"]
    live.train_ahead(TRAINED_AHEAD)  # as a stepper's first report does
    at.run()
    assert live.trainer.done and 0 == live.trained < live.recorded
    assert "training stopped" not in status(at)
    assert not at.button(key="run").disabled and not at.button(key="step").disabled
    at.button(key="run").click().run()
    assert f"Step **{live.recorded}** of {live.recorded} trained" in status(at) and "training stopped" in status(at)
    assert at.button(key="run").disabled and at.button(key="step").disabled


def test_no_merge_possible_is_said_without_inviting_a_click_on_step():
    at = train_page()
    at.number_input(key="w_size").set_value(0).run()
    at.button(key="run").click().run()
    assert at.button(key="step").disabled
    assert "Press Step" not in step_sentence(at) and stepper_entry(at)["tone"] == "warning"
    assert "No merge can be made: 0 merges done" in step_sentence(at)


def test_the_status_reports_the_vocabulary_of_the_step_shown():
    at = train_page()
    at.button(key="step10").click().run()
    view_slider(at).set_value(4).run()
    ref = engine()
    ref.advance(10)
    assert status(at).startswith(f"Step **4** of 10 trained · vocabulary {len(ref.tokenizer(4).vocab):,}")
    assert len(ref.tokenizer(4).vocab) == len(ref.tokenizer(10).vocab) - 6


# ---- shareable links -----------------------------------------------------------------------------
def link_page(query: dict[str, str]) -> AppTest:
    """A new session opened on /Train with these URL params (as a shared link or a refresh does)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.switch_page("pages/2_Train.py")  # a browser opening the link runs that page first
    at.run()
    assert not at.exception
    return at


def test_a_link_opens_the_step_it_names_trained_on_its_corpus_and_preset():
    at = link_page({"corpus": "demo_sennrich_low_lower.txt", "preset": "sennrich", "step": "3"})
    assert status(at).startswith("Step **3** of 3 trained")
    assert step_sentence(at).startswith("**Step 3.**") and "est</w>" in step_sentence(at)
    assert unescaped(at.main.caption[0].value).startswith("demo_sennrich_low_lower.txt · sennrich · 1,000 merges")
    assert at.query_params["step"] == "3" and at.query_params["preset"] == "sennrich"


def test_the_url_follows_the_steps_and_settings_of_the_session():
    at = train_page()
    at.button(key="step10").click().run()
    assert dict(at.query_params) == {"corpus": CORPUS, "preset": "gpt2", "merges": "1000", "step": "10"}
    at.number_input(key="w_size").set_value(40).run()
    at.button(key="step").click().run()
    assert at.query_params["merges"] == "40" and at.query_params["step"] == "1"
    # a refresh is a new session with the same URL: it shows the same step, trained the same way
    again = link_page(dict(at.query_params))
    assert (
        status(again).startswith("Step **1** of 1 trained")
        and history(again)["new token"].tolist() == history(at)["new token"].tolist()
    )


def test_a_seed_replay_link_keeps_the_notebooks_settings():
    at = link_page({"seed": "003", "step": "5"})
    replay = SEED_REPLAYS["003"]
    ref = Trainer.from_texts(read_sample(replay.corpus), make_config(replay.preset, **replay.overrides))
    ref.advance(5)
    assert history(at)["new token"].tolist() == [r.token for r in reversed(ref.records)]
    assert "Replaying seed 003" in unescaped(" ".join(c.value for c in at.sidebar.caption))


@pytest.mark.parametrize(
    "query, message",
    [
        ({"corpus": "../../etc/passwd"}, "not bundled: '../../etc/passwd'"),
        ({"preset": "gpt5"}, "unknown preset 'gpt5'"),
        ({"step": "²"}, "step='²' in the link is not a whole number"),
        ({"step": "9" * 5000}, "is not a whole number"),
        ({"merges": "10", "vocab": "300"}, "both merges and vocab"),
        ({"tie": "coin"}, "unknown tie-break 'coin'"),
    ],
)
def test_a_bad_link_gets_a_message_and_the_default_view(query, message):
    at = link_page(query)
    assert message in unescaped(at.warning[0].value) and at.warning[0].value.startswith("This link cannot be opened")
    assert status(at).startswith("Step **0** of 0 trained")


def test_a_link_from_a_session_with_pasted_text_names_the_stored_text():
    at = fresh_app()
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,), pasted="my own words")
    at.run()
    at.switch_page("pages/2_Train.py").run()
    digest = hashlib.sha256(b"my own words").hexdigest()
    assert at.query_params["corpus"] == f"{CORPUS},pasted:{digest}"
    assert not any("Link to this view" in c.value for c in at.caption)


def test_pairs_shown_is_a_view_setting_that_keeps_the_trainer():
    at = train_page()
    at.button(key="step10").click().run()
    before = history(at)["new token"].tolist()
    ref = engine()
    ref.advance(10)
    text = shown
    for rows in (50, 5):
        at.selectbox(key="w_top_k").set_value(rows).run()
        assert status(at).startswith("Step **10** of 10 trained")
        assert history(at)["new token"].tolist() == before
        assert pair_table(at)[["left", "right", "count"]].values.tolist() == [
            [text(p.left), text(p.right), p.count] for p in ref.peek(rows)
        ]
    view_slider(at).set_value(3).run()  # a past step shows the table recorded then
    assert pair_table(at)[["left", "right", "count"]].values.tolist() == [
        [text(p.left), text(p.right), p.count] for p in ref.records[3].top_pairs[:5]
    ]


# ---- uploads and preview settings persist ------------------------------------------------------
LATIN = "Café crème brûlée, naïve façade".encode("latin-1")


def corpus_page() -> AppTest:
    at = fresh_app()
    at.switch_page("pages/1_Corpus.py").run()
    assert not at.exception
    return at


def test_the_corpus_pages_most_frequent_words_are_whitespace_counts_drawn_as_text_bars():
    """The bar list (drawn by the page, no chart library): the 30 most frequent words of the
    corpus split on whitespace, counted here with collections.Counter, largest first, each as
    text, its bar as long as its share of the largest count."""
    import collections

    at = fresh_app()
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), pasted="<b>x</b> **y** a a a b b $z$ " * 3 + "c")
    at.switch_page("pages/1_Corpus.py").run()
    assert not at.exception
    (bars,) = [h.proto.body for h in at.get("html") if 'class="bpe-bars"' in h.proto.body]
    rows = re.findall(
        r'<td class="bpe-bar-word">(.*?)</td><td class="bpe-bar-cell"><span class="bpe-bar" style="width:([\d.]+)%">'
        r'</span></td><td class="bpe-bar-count">([\d,]+)</td>',
        bars,
    )
    counted = collections.Counter(("<b>x</b> **y** a a a b b $z$ " * 3 + "c").split())
    top = max(counted.values())
    assert sorted((html.unescape(w), int(n)) for w, _width, n in rows) == sorted(counted.items())
    assert [int(n) for _w, _width, n in rows] == sorted((int(n) for _w, _width, n in rows), reverse=True)
    assert all(float(width) == pytest.approx(100 * int(n) / top, abs=0.05) for _w, width, n in rows)
    assert "<b>x</b>" not in bars and "&lt;b&gt;x&lt;/b&gt;" in bars  # the word as text
    assert not at.get("vega_lite_chart") and not at.get("arrow_vega_lite_chart")


def uploaded_names(at: AppTest) -> list[str]:
    return [unescaped(c.value).split(" · ")[0].strip("*") for c in at.caption if " bytes · " in c.value]


def test_a_latin1_upload_survives_reruns_and_page_switches_and_can_be_removed():
    at = corpus_page()
    at.file_uploader[0].upload("latin.txt", LATIN, "text/plain").run()
    assert "not valid UTF-8: byte 0xe9 at offset 3" in unescaped(at.error[0].value)
    at.radio[0].set_value("latin-1").run()
    assert not at.error and not at.exception
    assert uploaded_names(at) == ["latin.txt"]
    assert any("decoded as Latin-1" in c.value for c in at.caption)
    for page in ("pages/2_Train.py", "pages/0_Home.py", "pages/1_Corpus.py"):
        at.switch_page(page).run()
        assert not at.exception and not at.error
    assert uploaded_names(at) == ["latin.txt"] and any("decoded as Latin-1" in c.value for c in at.caption)
    assert at.session_state["corpus_choice"].uploads == (("latin.txt", LATIN.decode("latin-1")),)
    at.button(key="remove_1").click().run()
    assert uploaded_names(at) == [] and at.session_state["corpus_choice"].uploads == ()


def test_two_undecodable_files_with_one_name_each_get_their_own_choice():
    at = corpus_page()
    at.file_uploader[0].set_value(
        [("notes.txt", LATIN, "text/plain"), ("notes.txt", b"\xff\xfeA\x00", "text/plain")]
    ).run()
    assert not at.exception
    assert len(at.error) == 2 and len(at.radio) == 2
    at.radio[1].set_value("utf-16").run()
    at.radio[0].set_value("cp1252").run()
    assert not at.exception and not at.error
    assert at.session_state["corpus_choice"].uploads == (("notes.txt", LATIN.decode("cp1252")), ("notes (2).txt", "A"))


def test_the_preview_shows_any_chosen_text_and_keeps_its_settings():
    at = corpus_page()
    at.text_area(key="w_pasted").input("zebra quagga okapi").run()
    at.selectbox(key="w_prev_text").set_value("pasted text").run()
    at.selectbox(key="w_prev_norm").set_value("lowercase").run()
    at.number_input(key="w_prev_lines").set_value(3).run()
    assert any("zebra" in h.proto.body and "quagga" in h.proto.body for h in at.get("html"))
    at.switch_page("pages/2_Train.py").run()
    at.switch_page("pages/1_Corpus.py").run()
    assert at.selectbox(key="w_prev_text").value == "pasted text"
    assert at.selectbox(key="w_prev_norm").value == "lowercase" and at.number_input(key="w_prev_lines").value == 3
    assert any("zebra" in h.proto.body for h in at.get("html"))


# ---- charts people can read ------------------------------------------------------------------------
def chart_spec(at: AppTest, title: str) -> dict:
    for el in at.get("vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        if title in [spec.get("title")] + [layer.get("title") for layer in spec.get("layer", [])]:
            return spec
    raise AssertionError(f"no chart titled {title!r}")


def _encodings(spec: dict) -> list[dict]:
    return [layer.get("encoding", {}) for layer in spec.get("layer", [spec])]


def test_charts_have_whole_steps_real_axes_at_step_zero_and_mark_the_step_shown():
    at = train_page()
    ref = engine()
    tokens = step_chart_spec(at, "Tokens in the corpus")
    assert tokens["x"] == [0] and tokens["shown"] == 0
    low, high = tokens["y_domain"]  # one point: an axis around it, not a zero-height one
    assert low < ref.initial_tokens < high
    # bytes and characters per token at step 0 (1.00 and ~0.99): an axis wide enough for distinct
    # two-decimal labels, not "1.00 1.00 1.00"
    per_token = [ref.corpus_bytes / ref.initial_tokens, ref.corpus_chars / ref.initial_tokens]
    low, high = step_chart_spec(at, "Compression")["y_domain"]
    assert low < min(per_token) <= max(per_token) < high and high - low >= 0.1
    assert step_chart_spec(at, "Count of the winning pair")["x"] == []  # no merge, no winner yet
    at.button(key="step10").click().run()
    ref.advance(10)
    for title, series in (
        ("Tokens in the corpus", ["tokens"]),
        ("Compression", ["bytes per token", "chars per token"]),
        ("Count of the winning pair", ["winning count"]),
    ):
        chart = step_chart_spec(at, title)
        assert [s["name"] for s in chart["series"]] == series and chart["shown"] == 10, title
    count = step_chart(at, "Count of the winning pair")
    assert count["step"].tolist() == list(range(1, 11)) and count["winning count"].tolist() == [
        r.count for r in ref.records
    ]
    per_token = step_chart(at, "Compression")
    assert per_token["bytes per token"].tolist() == pytest.approx(
        [ref.corpus_bytes / t for t in [ref.initial_tokens] + [r.tokens_after for r in ref.records]]
    )
    view_slider(at).set_value(4).run()
    chart = step_chart_spec(at, "Tokens in the corpus")
    assert chart["shown"] == 4 and max(chart["x"]) == 10  # the rule moves; the curve keeps every step trained
    lengths = step_chart(at, "Token lengths in the vocabulary so far")
    tok = ref.tokenizer(4)
    made = [len(tok.token_bytes(i)) for i in range(tok.n_special, len(tok.vocab))]
    assert dict(zip(lengths["length (bytes)"], lengths["tokens"])) == {n: made.count(n) for n in set(made)}


def test_home_miniature_lists_the_merges_so_far_as_the_engine_makes_them():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    toy = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
    ref = Trainer.from_texts(toy, make_config("sennrich", num_merges=10)).run()
    for k in (0, 3, 10):
        at.slider(key="w_home_step").set_value(k).run()
        # the miniature's stepper (explorer/ui/stepper.py): its entry at the step the slider set
        (table,) = [cell for row in stepper_entry(at)["rows"] for cell in row if 'class="bpe-hist"' in cell]
        rows = [
            [html.unescape(re.sub(r"<[^>]+>", " ", cell)).split() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table)[1:]
        ]
        assert rows == [
            [[f"{r.step}"], [r.left, r.right], [r.token], [f"{r.count}"], [f"{r.tokens_after}"]]
            for r in ref.records[:k]
        ]
        assert table.count('class="bpe-now"') == (1 if k else 0)
    assert step_chart(at, "Tokens in the corpus")["tokens"].tolist() == [ref.initial_tokens] + [
        r.tokens_after for r in ref.records
    ]
    assert not at.get("vega_lite_chart") and not at.get("arrow_vega_lite_chart")  # no Vega on the first page


def test_a_word_with_an_ellipsis_is_quoted_not_taken_for_running_text():
    from explorer.ui.explain import explain

    trainer = Trainer.from_texts("wait… wait… wait… hmm…", corpus_config("sennrich", merges=1))
    trainer.advance(1)
    sentence = explain(trainer.records[0], config=trainer.config)
    assert "running text" not in sentence and "wait…×3" in sentence
    assert [trainer.words[i] for i in trainer.records[0].example_words] == [w for w, _ in trainer.records[0].examples]
    running = Trainer.from_texts("abab abab", corpus_config("bytes", merges=1))
    running.advance(1)
    assert "(across the running text)" in explain(running.records[0], config=running.config)


def _projector_css(at: AppTest) -> bool:
    return any("<style>\nhtml{font-size:clamp(" in h.proto.body for h in at.get("html"))


def _chart_configs(at: AppTest) -> list[dict]:
    charts = at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart")
    assert charts
    return [json.loads(chart.proto.spec).get("config", {}) for chart in charts]


def test_projector_mode_is_a_view_setting_held_in_the_link_and_sizes_the_charts():
    """Train's sidebar switch (where *Big text* was): larger text, in the link; a page switch
    keeps it and sizes that page's Vega charts (the Fairness page's); switched off, both go."""
    at = train_page()
    at.button(key="step10").click().run()
    assert not _projector_css(at) and "projector" not in at.query_params
    at.toggle(key="projector_on").set_value(True).run()
    assert _projector_css(at) and at.query_params["projector"] == "1"
    assert status(at).startswith("Step **10** of 10 trained")  # training untouched
    at.switch_page("pages/6_Fairness.py").run()
    assert not at.exception and _projector_css(at) and at.query_params["projector"] == "1"
    for config in _chart_configs(at):  # Vega draws in px: the spec carries the sizes
        sizes = [config[part][size] for part in ("axis", "legend") for size in ("labelFontSize", "titleFontSize")]
        assert min(sizes + [config["title"]["fontSize"]]) >= 14, config
    at.toggle(key="projector_on").set_value(False).run()
    assert not _projector_css(at) and "projector" not in at.query_params
    assert all("labelFontSize" not in config.get("axis", {}) for config in _chart_configs(at))


DANGEROUS = [
    "**bold**",
    "`code`",
    "$x^2$",
    "[link](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    ":red[c]",
    "# head",
    "> quote",
    "_it_",
    "~~s~~",
    "\\*",
    ":material/home:",
]


@pytest.mark.parametrize("construct", DANGEROUS)
def test_md_text_shows_every_dangerous_construct_as_typed(construct):
    from explorer.ui.render import md_text

    escaped = md_text(construct)
    assert unescaped(escaped) == construct
    assert not re.search(r"(?<!\\)[*`$\[\]()<>:_~#]", escaped)  # no Markdown, LaTeX, link or tag character left bare


def test_a_hostile_link_is_refused_with_its_text_escaped():
    at = link_page({"preset": "[x](javascript:alert(1))"})
    message = at.warning[0].value
    assert "](javascript" not in message and unescaped(message).endswith(
        "unknown preset '[x](javascript:alert(1))'; choose one of hf-course, sennrich, bytes, gpt2, suffix-marker, gpt4"
        ". It shows the nearest view it allows."
    )


def test_encode_options_follow_the_preset_and_are_no_training_setting():
    at = train_page()
    at.selectbox(key="w_preset").set_value("suffix-marker").run()
    at.button(key="step10").click().run()
    live = at.session_state["live"]
    assert live.trainer.encoding.dropout_style == "once" and live.tokenizer(10).encoding.dropout_style == "once"
    assert not hasattr(live.config, "dropout_style") and not hasattr(live.config, "unk_token")


# ---- bad input gets a message and the session keeps working ------------------------------------------
def steps_after(at: AppTest, n: int = 2) -> None:
    """The session still trains: back on the bundled corpus and default settings, n steps."""
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.switch_page("pages/2_Train.py").run()
    for _ in range(n):
        at.button(key="step").click().run()
    assert not at.exception and status(at).startswith(f"Step **{n}** of {n} trained")


def test_a_binary_file_is_refused_with_replacement_decoding_too():
    at = corpus_page()
    at.file_uploader[0].upload("blob.bin", b"\x00\x01\xffPK\x03\x04" * 50, "application/octet-stream").run()
    at.radio[0].set_value("utf-8-replace").run()
    assert not at.exception
    assert "contains NUL bytes" in unescaped(at.error[0].value)
    assert at.session_state["corpus_choice"].uploads == ()
    steps_after(at)


def test_pasting_more_than_the_limit_says_so_and_leaves_it_out():
    at = corpus_page()
    # the browser stops a paste at max_chars; a client that sends more anyway meets the server's check
    at.session_state["w_pasted"] = "ab " * (7 * 2**20 + 1)  # 21 MiB
    at.run()
    assert not at.exception
    message = unescaped(at.error[0].value)
    assert message.startswith("The pasted text is larger than 20.0 MiB, the limit for an uploaded file too")
    assert at.session_state["corpus_choice"].pasted == ""
    assert at.text_area(key="w_pasted").proto.max_chars == 20 * 2**20 + 1  # the browser stops a paste beyond it too
    steps_after(at)


def test_a_whitespace_only_corpus_is_called_empty_on_the_train_page():
    at = fresh_app(corpus=None)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), pasted=" \n\t \n")
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    assert unescaped(at.error[0].value).startswith("the corpus is empty (or only whitespace)")
    steps_after(at)


def test_a_vocab_size_below_the_base_vocabulary_is_explained_not_reported_as_reached():
    at = train_page()
    open_advanced(at)
    at.radio(key="w_cfg_stop").set_value("vocab size")
    at.number_input(key="w_cfg_amount").set_value(5)
    at.button(key=APPLY).click().run()
    assert not at.exception
    message = unescaped(at.error[0].value)
    assert "a vocabulary of 5 leaves no room for a merge" in message and "ask for at least 258" in message
    assert not any("the vocabulary reached" in m.value for m in at.markdown)
    at.number_input(key="w_cfg_amount").set_value(300)
    at.button(key=APPLY).click().run()
    at.button(key="step").click().run()
    assert not at.error and status(at).startswith("Step **1** of 1 trained")


@pytest.mark.parametrize(
    "amount, message",
    [(0, "vocab size must be between 1 and 1,000,000"), (5_000_000, "vocab size must be between 1 and 1,000,000")],
)
def test_out_of_range_numbers_in_the_settings_get_a_message(amount, message):
    at = train_page()
    open_advanced(at)
    at.radio(key="w_cfg_stop").set_value("vocab size")
    at.number_input(key="w_cfg_amount").set_value(amount)
    at.button(key=APPLY).click().run()
    assert not at.exception and message in unescaped(at.error[0].value)
    at.number_input(key="w_size").set_value(-3).run()
    assert "-3 cannot be used: the number of merges must be between 0 and 1,000,000. Kept 1,000." in unescaped(
        at.error[0].value
    )
    assert at.number_input(key="w_size").value == 1000
    at.button(key="step").click().run()
    assert status(at).startswith("Step **1** of 1 trained")


def test_a_corpus_with_special_tokens_can_be_refused_with_where_they_are():
    at = fresh_app(corpus=None)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(), pasted="one two<|endoftext|>three four " * 20)
    at.switch_page("pages/2_Train.py").run()
    open_advanced(at)
    at.text_input(key="w_cfg_special").input("<|endoftext|>")
    at.selectbox(key="w_cfg_specials_in_text").set_value("refuse")
    at.button(key=APPLY).click().run()
    assert not at.exception
    assert "the corpus contains the special token '<|endoftext|>' (first at character 7)" in unescaped(
        at.error[0].value
    )
    at.selectbox(key="w_cfg_specials_in_text").set_value("split")
    at.button(key=APPLY).click().run()
    at.button(key="step100").click().run()
    assert not at.error and not any("endoftext" in t for t in history(at)["new token"])


def test_home_has_a_card_for_every_page_compare_included():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert [el.proto.page for el in at.get("page_link")] == ["Corpus", "Train", "Playground", "Compare"]
    assert any("what each language pays in tokens" in c.value for c in at.caption)


# ---- one rule for showing a token ------------------------------------------------------------
_DEVANAGARI = re.compile(r"[\u0900-\u097f]")
_HEX_SPAN = re.compile(r'<span class="bpe-hex">([0-9a-f ]+)</span>')


def chip_texts(body: str) -> list[str]:
    """The text of each chip in an HTML body as a reader sees it, a hex box as ⟨..⟩."""
    out = []
    for chip in body.split('<span class="bpe-chip')[1:]:
        inner = chip[chip.index(">") + 1 :]
        inner = _HEX_SPAN.sub(lambda m: f"⟨{m.group(1)}⟩", inner)
        out.append(html.unescape(inner.split("</span>", 1)[0]))
    return out


def test_byte_level_hindi_reads_as_devanagari_in_every_panel_and_the_same_on_the_playground():
    at = train_page(corpus="udhr_hi.txt")  # the gpt2 preset: byte level
    for _ in range(3):
        at.button(key="step10").click().run()
    assert status(at).startswith("Step **30** of 30")
    ref = engine("udhr_hi.txt")
    ref.advance(30)
    record = ref.records[29]
    sentence = step_sentence(at)
    pairs_html = next(h for h in train_html(at) if 'class="bpe-pairs"' in h)
    hist_html = next(h for h in train_html(at) if 'class="bpe-hist"' in h)
    grid = history(at)
    for shown_text in (
        sentence,
        " ".join(chip_texts(pairs_html)),
        " ".join(chip_texts(hist_html)),
        " ".join(grid["new token"]),
    ):
        assert _DEVANAGARI.search(shown_text) and "à¤" not in shown_text and "Ġ" not in shown_text, shown_text
    assert not any("à" in t or "Ġ" in t for t in grid["left"].tolist() + grid["right"].tolist())
    # the sentence and the history's highlighted row name step 30's merge as the pages write it
    assert f"‘{shown(record.left)}’ + ‘{shown(record.right)}’ → ‘{shown(record.token)}’" in sentence
    now_row = hist_html.split('<tr class="bpe-now">', 1)[1].split("</tr>", 1)[0]
    assert chip_texts(now_row) == [shown(record.left), shown(record.right), shown(record.token)]
    assert grid["new token"].tolist()[0] == shown(record.token)

    # the Playground's chips and the token's lineage write it the same way
    at.switch_page("pages/3_Playground.py").run()
    at.multiselect(key="w_play_tokenizers").set_value(["trained"]).run()
    word = next(
        w
        for w in sorted(ref.words, key=lambda w: -ref.freqs[ref.words.index(w)])
        if record.token_id in ref.tokenizer(30).encode_piece(w)
    )
    at.text_area(key="w_play_text").input(word).run()
    assert not at.exception
    tok = ref.tokenizer(30)
    ids = tok.encode(word)
    chips_shown = next(chip_texts(h.proto.body) for h in at.get("html") if 'title="id ' in h.proto.body)
    assert chips_shown[ids.index(record.token_id)] == shown(record.token)
    at.radio(key="w_play_view").set_value("Why this split").run()
    at.text_input(key="w_why_id").input(str(record.token_id)).run()
    (tree,) = [h.proto.body for h in at.get("html") if 'class="bpe-scroll bpe-lin"' in h.proto.body]
    root = tree.split(f'<li data-id="{record.token_id}">', 1)[1]
    assert chip_texts(root)[0] == shown(record.token)
