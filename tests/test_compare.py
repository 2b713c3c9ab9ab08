"""The comparison engine without the page: the held-out split, overlaps, the shared memo."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import explorer.compare as compare_module
from conftest import read_sample
from explorer import PRESETS, corpus_config, load_pretrained
from explorer.compare import HELDOUT_FRACTION, Memo, compare_corpora, heldout_split, overlap


@given(st.text(min_size=1, max_size=400))
@settings(max_examples=200, deadline=None)
def test_heldout_split_keeps_every_character_and_holds_out_about_a_tenth(text):
    train, held = heldout_split(text)
    assert train + held == text
    # the cut moves at most 1/20 of the text to reach a line break
    assert abs(len(held) - len(text) * HELDOUT_FRACTION) <= len(text) / 20 + 1


def test_heldout_split_cuts_at_a_line_break_when_one_is_near():
    text = "".join(f"line {i:03d}\n" for i in range(100))
    train, held = heldout_split(text)
    assert train.endswith("\n") and held.startswith("line ") and held.count("\n") == 10


@given(st.sets(st.text(max_size=4), max_size=12), st.sets(st.text(max_size=4), max_size=12))
def test_overlap_counts_partition_the_union(a, b):
    o = overlap("A", a, "B", b)
    assert o.shared + o.only_a + o.only_b == len(a | b)
    assert o.jaccard == (len(a & b) / len(a | b) if a | b else 1.0)
    assert set(o.longest_only_a) <= a - b and set(o.longest_shared) <= a & b


def test_memo_computes_a_key_once_when_threads_ask_together():
    memo, calls = Memo(), []

    def slow():
        calls.append(1)
        time.sleep(0.2)
        return "value"

    results = []
    threads = [threading.Thread(target=lambda: results.append(memo.get("k", slow))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["value"] * 8 and len(calls) == 1


def test_memo_keeps_only_the_most_recently_used_entries():
    memo = Memo(max_entries=3)
    for key in "abcd":
        memo.get(key, lambda key=key: key.upper())
    assert len(memo) == 3
    made = []
    assert memo.get("a", lambda: made.append("a") or "A") == "A" and made == ["a"]  # evicted, made again
    assert memo.get("d", lambda: made.append("d") or "D") == "D" and made == ["a"]  # kept


def test_a_second_comparison_with_the_same_memo_trains_nothing(monkeypatch):
    texts = {name: read_sample(name) for name in ("udhr_en.txt", "udhr_ru.txt")}
    memo, trained = Memo(), []
    real = compare_module._trained
    monkeypatch.setattr(compare_module, "_trained", lambda *a: trained.append(a[0][:20]) or real(*a))
    first = compare_corpora(texts, config=corpus_config("gpt2", merges=200), encoding=PRESETS["gpt2"].encoding, memo=memo)
    assert len(trained) == 4  # each corpus whole and its first 90%
    second = compare_corpora(texts, config=corpus_config("gpt2", merges=200), encoding=PRESETS["gpt2"].encoding, memo=memo)
    assert len(trained) == 4
    assert second.cross == first.cross and second.overlaps == first.overlaps
    compare_corpora(texts, config=corpus_config("gpt2", merges=300), encoding=PRESETS["gpt2"].encoding, memo=memo)
    assert len(trained) == 8  # another configuration is another entry


def test_progress_reports_rise_to_one():
    seen = []
    compare_corpora({"a": "aa bb " * 50, "b": "ab ba " * 50}, config=corpus_config("sennrich", merges=5),
                    progress=lambda what, frac: seen.append(frac))
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 1.0


def test_a_configuration_is_either_trained_or_pretrained():
    with pytest.raises(ValueError):
        compare_corpora({"a": "x"})
    with pytest.raises(ValueError):
        compare_corpora({"a": "x"}, config=corpus_config("gpt2"), pretrained=("gpt2", load_pretrained("gpt2")))
