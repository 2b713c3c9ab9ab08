"""The step log: compact records for long runs lose the pair table and the examples, nothing else."""

from __future__ import annotations

import sys
from dataclasses import replace

import pytest
from conftest import read_sample

from explorer import StepLog, Trainer, corpus_config
from explorer.stages.pipeline import count_words


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
    for name in (
        "step",
        "left_id",
        "right_id",
        "token_id",
        "count",
        "replaced",
        "tokens_after",
        "n_tied",
        "words_affected",
    ):
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
        log.append(
            0,
            1,
            2,
            count=10**9,
            replaced=10**9,
            tokens_after=10**9,
            n_tied=3,
            words_affected=7,
            reused=False,
            top_pairs=(),
            examples=(),
        )
    size = sum(sys.getsizeof(x) for x in (log._ids, log._nums, log._reused, log._detail))
    assert size / len(log) < 64


def test_full_records_must_not_be_negative():
    with pytest.raises(ValueError):
        StepLog([], full=-1)


@pytest.mark.parametrize("preset", ["gpt2", "sennrich", "bytes", "hf-course", "suffix-marker", "gpt4"])
def test_a_copied_trainer_goes_on_exactly_as_the_original_and_apart_from_it(preset):
    """A session takes a copy of the trainer shared at a link's step (Trainer.__deepcopy__ copies
    attribute by attribute): the copy and the original must each go on as a trainer that never
    stopped, and neither may see the other's merges."""
    import copy

    from conftest import read_sample

    from explorer import corpus_config
    from explorer.stages.pipeline import count_words

    config = corpus_config(preset, merges=300)
    words = count_words((read_sample("udhr_en.txt"),), config)
    reference = Trainer(words, config, top_k=20, full_records=100).run()  # never copied
    original = Trainer(words, config, top_k=20, full_records=100)
    original.advance(120)
    twin = copy.deepcopy(original)
    twin.run()
    assert len(original.records) == 120  # the copy's merges did not reach the original
    original.run()
    for trainer in (twin, original):
        assert [(r.token, r.count, r.replaced, r.tokens_after, r.top_pairs, r.examples) for r in trainer.records] == [
            (r.token, r.count, r.replaced, r.tokens_after, r.top_pairs, r.examples) for r in reference.records
        ]
        assert trainer.tokenizer().encode("Human rights for all") == reference.tokenizer().encode(
            "Human rights for all"
        )
