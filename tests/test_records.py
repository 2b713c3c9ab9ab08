"""The step log: compact records for long runs lose the pair table and the examples, nothing else."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest

from explorer import StepLog, Trainer, corpus_config
from explorer.pipeline import count_words
from conftest import read_sample


@pytest.fixture(scope="module")
def runs():
    text = read_sample("english_frankenstein.txt")
    config = corpus_config("gpt2").replace(num_merges=600, vocab_size=None)
    words = count_words([text], config)
    full = Trainer(words, config, top_k=30).run()
    compact = Trainer(words, config, top_k=30, full_records=100).run()
    return full, compact


def test_compact_log_keeps_the_same_merges_and_numbers(runs):
    full, compact = runs
    assert compact.merges == full.merges
    assert len(compact.records) == len(full.records) == 600
    for a, b in zip(full.records, compact.records):
        if a.step <= 100:
            assert b == a
            assert not b.compact
        else:
            assert b.compact
            assert b == replace(a, top_pairs=a.top_pairs[:1], examples=(), example_words=(), compact=True)


def test_compact_steps_still_say_how_many_pairs_tied(runs):
    full, compact = runs
    tied = [r.step for r in full.records if r.n_tied and r.step > 100]
    assert tied, "the corpus should have ties past step 100"
    assert all(compact.records[s - 1].n_tied == full.records[s - 1].n_tied for s in tied)


def test_columns_equal_the_records_fields(runs):
    _, compact = runs
    log = compact.records
    for name in ("step", "left_id", "right_id", "token_id", "count", "replaced", "tokens_after", "n_tied", "words_affected"):
        assert log.column(name) == [getattr(r, name) for r in log], name
    with pytest.raises(KeyError):
        log.column("top_pairs")


def test_a_log_reads_like_a_list(runs):
    full, _ = runs
    log = full.records
    as_list = list(log)
    assert log == as_list and as_list == list(log)
    assert log[-1] == as_list[-1] and log[5:8] == as_list[5:8] and log[:0] == []
    assert log[::-100] == as_list[::-100]
    with pytest.raises(IndexError):
        log[600]
    with pytest.raises(IndexError):
        log[-601]


def test_a_compact_step_costs_a_few_dozen_bytes():
    log = StepLog(["a", "b", "ab"], full=0)
    for _ in range(10_000):
        log.append(0, 1, 2, count=10**9, replaced=10**9, tokens_after=10**9, n_tied=3, words_affected=7,
                   reused=False, top_pairs=(), examples=())
    size = sum(sys.getsizeof(x) for x in (log._ids, log._nums, log._reused, log._detail))
    assert size / len(log) < 64


def test_full_records_must_not_be_negative():
    with pytest.raises(ValueError):
        StepLog([], full=-1)
