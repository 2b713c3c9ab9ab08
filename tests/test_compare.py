"""The comparison engine without the page: the held-out split, overlaps, the shared memo, the
curves against truncated encodes, one encoding per corpus, and the bundled tables' language
counts made once per process."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import ROOT, read_sample
from hypothesis import given, settings
from hypothesis import strategies as st

import explorer.analysis.compare as compare_module
from explorer import PRESETS, Tokenizer, corpus_config, load_pretrained, make_config, train
from explorer.analysis.compare import (
    HELDOUT_FRACTION,
    Memo,
    compare_corpora,
    heldout_split,
    language_gini,
    language_rows,
    overlap,
    parallel_samples,
    table_language_rows,
    used_tokens,
    warm_languages,
)
from explorer.analysis.fairness import renyi_efficiency

THREE = ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt")


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
    first = compare_corpora(
        texts, config=corpus_config("gpt2", merges=200), encoding=PRESETS["gpt2"].encoding, memo=memo
    )
    assert len(trained) == 4  # each corpus whole and its first 90%
    second = compare_corpora(
        texts, config=corpus_config("gpt2", merges=200), encoding=PRESETS["gpt2"].encoding, memo=memo
    )
    assert len(trained) == 4
    assert second.cross == first.cross and second.overlaps == first.overlaps
    compare_corpora(texts, config=corpus_config("gpt2", merges=300), encoding=PRESETS["gpt2"].encoding, memo=memo)
    assert len(trained) == 8  # another configuration is another entry


def test_progress_reports_rise_to_one():
    seen = []
    compare_corpora(
        {"a": "aa bb " * 50, "b": "ab ba " * 50},
        config=corpus_config("sennrich", merges=5),
        progress=lambda what, frac: seen.append(frac),
    )
    assert seen == sorted(seen) and seen[0] == 0 and seen[-1] == 1.0


def test_a_configuration_is_either_trained_or_pretrained():
    with pytest.raises(ValueError):
        compare_corpora({"a": "x"})
    with pytest.raises(ValueError):
        compare_corpora({"a": "x"}, config=corpus_config("gpt2"), pretrained=("gpt2", load_pretrained("gpt2")))


@pytest.fixture(scope="module")
def three():
    """The Compare page's default: UDHR English, Hindi and Korean, gpt2 preset, 1,000 merges."""
    texts = {name: read_sample(name) for name in THREE}
    return texts, compare_corpora(texts, config=corpus_config("gpt2", merges=1000), encoding=PRESETS["gpt2"].encoding)


def test_training_curve_points_are_the_corpus_encoded_with_that_many_merges(three):
    # the curve is read off the trainer's step log; the encoder gets there on its own
    texts, result = three
    for name, text in texts.items():
        run = result.runs[name]
        assert run.train_curve[0] == (0, len(text.encode("utf-8"))) and len(run.train_curve) > 30
        for k, tokens in run.train_curve[:: len(run.train_curve) // 6]:
            assert len(run.tokenizer.truncate(k).encode(text)) == tokens, (name, k)
        assert run.train_curve[-1] == (run.tokenizer.num_merges, len(run.tokenizer.encode(text)))


def test_each_corpus_is_encoded_once_by_its_own_tokenizer_and_that_encoding_is_the_diagonal(monkeypatch):
    texts = {name: read_sample(name) for name in ("udhr_en.txt", "udhr_ru.txt")}
    calls: list[tuple[int, str]] = []
    real = Tokenizer.encode
    monkeypatch.setattr(
        Tokenizer, "encode", lambda self, text, **kw: calls.append((id(self), text)) or real(self, text, **kw)
    )
    result = compare_corpora(texts, config=corpus_config("gpt2", merges=300), encoding=PRESETS["gpt2"].encoding)
    monkeypatch.undo()
    assert len(calls) == len(set(calls)) == 4  # 2 corpora x 2 tokenizers, none twice
    for name, text in texts.items():
        tok = result.runs[name].tokenizer
        ids = tok.encode(text)
        cell = result.cross[name, name]
        assert (cell.tokens, cell.bytes, cell.words) == (len(ids), len(text.encode("utf-8")), len(text.split()))
        assert sum(result.runs[name].lengths.values()) == len(ids)


def test_used_tokens_are_the_multi_byte_tokens_of_a_byte_level_encoding():
    tok = load_pretrained("gpt2")
    ids = tok.encode(read_sample("udhr_en.txt") + read_sample("udhr_ko.txt") + " <|endoftext|>", allow_special=True)
    used = used_tokens(tok, ids)
    # at byte level the alphabet is the single bytes: a merge made every longer token
    assert used == {t for t in tok.tokens(ids) if len(t) > 1 and t not in tok.special_ids}
    assert len(used) > 50 and "<|endoftext|>" in tok.tokens(ids)


def test_the_bundled_tables_count_a_text_once_per_process_and_warming_counts_ahead(monkeypatch):
    texts = {name: read_sample(name) for name in ("udhr_en.txt", "udhr_hi.txt", "udhr_zh_hans.txt")}
    assert warm_languages(texts.values(), tables=("gpt2",)) == 3

    def no_encoding(*args):
        raise AssertionError("a table's count was made again")

    monkeypatch.setattr(compare_module, "evaluate", no_encoding)
    rows = table_language_rows(texts, reference="udhr_en.txt", tables=("gpt2",))
    monkeypatch.undo()
    gpt2 = load_pretrained("gpt2")
    tokens = {name: len(gpt2.encode(text)) for name, text in texts.items()}
    assert [(r.tokenizer, r.language) for r in rows] == [("gpt2", name) for name in texts]
    for r in rows:
        assert r.evaluation.tokens == tokens[r.language]
        assert r.parity == pytest.approx(tokens[r.language] / tokens["udhr_en.txt"])
    # the default warms every text the page's languages panel asks about
    assert parallel_samples() == sorted(p.name for p in (ROOT / "sample_corpora").glob("udhr_*.txt"))
    assert len(parallel_samples()) >= 8


def test_the_warmed_table_counts_carry_each_languages_renyi_efficiency_without_a_second_encoding(monkeypatch):
    texts = {name: read_sample(name) for name in ("udhr_en.txt", "udhr_ru.txt", "udhr_ja.txt")}
    warm_languages(texts.values(), tables=("cl100k_base",))
    monkeypatch.setattr(compare_module, "evaluate", lambda *args, **kwargs: pytest.fail("encoded again"))
    rows = table_language_rows(texts, reference="udhr_en.txt", tables=("cl100k_base",))
    monkeypatch.undo()
    tok = load_pretrained("cl100k_base")
    for r in rows:
        assert r.renyi_efficiency == renyi_efficiency(tok.encode(texts[r.language])) is not None


def test_language_gini_is_the_gini_of_each_tokenizers_token_counts_over_the_languages():
    texts = {name: read_sample(name) for name in ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt", "udhr_el.txt")}
    trained = train(texts["udhr_en.txt"], make_config("gpt2", num_merges=200)).tokenizer()
    tables = {"trained": trained, "gpt2": load_pretrained("gpt2"), "o200k_base": load_pretrained("o200k_base")}
    rows = language_rows(tables, texts, reference="udhr_en.txt")
    got = language_gini(rows)
    assert list(got) == ["trained", "gpt2", "o200k_base"]
    for name, tok in tables.items():
        counts = [len(tok.encode(text)) for text in texts.values()]
        mean = sum(counts) / len(counts)
        direct = sum(abs(a - b) for a in counts for b in counts) / len(counts) ** 2 / (2 * mean)
        assert got[name] == pytest.approx(direct, abs=1e-12)
    assert got["gpt2"] > got["o200k_base"]
