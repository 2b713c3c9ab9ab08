"""The fairness measures against references: Rényi efficiency against the `tokenization-scorer`
package (Zouhar et al.'s own) on bundled and trained tokenizers and every sample corpus; Gini
and parity against their definitions written out here."""

from __future__ import annotations

import math
from collections import Counter
from functools import cache

import pytest
from conftest import SAMPLE_FILES, read_sample
from hypothesis import given
from hypothesis import strategies as st
from tokenization_scorer import score

from explorer import Tokenizer, load_pretrained, make_config, train
from explorer.analysis.evaluate import evaluate
from explorer.analysis.fairness import check_alpha, gini, parity, renyi_efficiency
from explorer.errors import ConfigError

PREFIX = 50_000  # characters: the big corpora (up to 1.1 MB) are cut here
TOKENIZERS = ["gpt2", "cl100k_base", "sennrich on English", "bytes on Hindi"]
ALPHAS = [0.5, 2.5, 3.0, 10.0]


@cache
def tokenizer(name: str) -> Tokenizer:
    if name == "sennrich on English":  # characters: what English lacks is <unk>, itself a token
        return train(read_sample("udhr_en.txt"), make_config("sennrich", num_merges=300)).tokenizer()
    if name == "bytes on Hindi":
        return train(read_sample("udhr_hi.txt"), make_config("bytes", num_merges=300)).tokenizer()
    return load_pretrained(name)


@cache
def ids(name: str, sample: str) -> tuple[int, ...]:
    return tuple(tokenizer(name).encode(read_sample(sample)[:PREFIX]))


def scorer_text(token_ids) -> str:
    """The package reads whitespace-separated token strings: each id as a word without spaces."""
    return " ".join(f"t{i}" for i in token_ids)


# ---- Rényi efficiency ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sample", SAMPLE_FILES)
@pytest.mark.parametrize("name", TOKENIZERS)
def test_renyi_efficiency_equals_tokenization_scorers_for_every_alpha(name, sample):
    encoded = ids(name, sample)
    assert len(set(encoded)) > 1
    for alpha in ALPHAS:
        expected = score(scorer_text(encoded), metric="renyi", power=alpha)
        assert renyi_efficiency(encoded, alpha=alpha) == pytest.approx(expected, rel=0, abs=1e-9), alpha
    # alpha = 1 is Shannon's entropy: the package's "shannon" metric (its "renyi" with power 1
    # reads the tokens twice from one generator and so answers 0.0 whatever the text)
    expected = score(scorer_text(encoded), metric="shannon")
    assert renyi_efficiency(encoded, alpha=1) == pytest.approx(expected, rel=0, abs=1e-9)


def test_renyi_efficiency_takes_token_counts_as_well_as_tokens_and_ignores_zero_counts():
    encoded = ids("gpt2", "udhr_ko.txt")
    counts = Counter(encoded)
    assert renyi_efficiency(counts) == renyi_efficiency(encoded)
    assert renyi_efficiency({**counts, -1: 0}) == renyi_efficiency(encoded)
    as_text = Counter(tokenizer("gpt2").tokens(list(encoded)))
    assert renyi_efficiency(as_text) == pytest.approx(renyi_efficiency(encoded), abs=1e-12)


def test_renyi_efficiency_by_hand():
    # p = (1/2, 1/4, 1/4): Σ p^2 = 3/8, H_2 = log(8/3); over log 3 distinct tokens
    assert renyi_efficiency("aabc", alpha=2) == pytest.approx(math.log(8 / 3) / math.log(3), abs=1e-15)
    # Shannon: H = 1.5 bits over log2(3) bits
    assert renyi_efficiency("aabc", alpha=1) == pytest.approx(1.5 / math.log2(3), abs=1e-15)
    assert renyi_efficiency([1, 2, 3, 4], alpha=2.5) == pytest.approx(1.0, abs=1e-15)  # uniform: 1 at any alpha


def test_renyi_efficiency_stays_finite_for_a_large_alpha():
    # (1/10,000)^700 underflows to 0 term by term: the sum is taken relative to the largest share
    tokens = Counter(range(10_000))
    tokens[-1] = 5
    got = renyi_efficiency(tokens, alpha=700)
    top = 5 / 10_005
    assert got == pytest.approx(700 / 699 * -math.log(top) / math.log(10_001), rel=1e-9)


@pytest.mark.parametrize("tokens", [[], [7], [7, 7, 7], {"a": 4, "b": 0}])
def test_renyi_efficiency_of_fewer_than_two_distinct_tokens_is_none_where_the_package_gives_nan(tokens):
    assert renyi_efficiency(tokens) is None
    if tokens:
        counts = tokens if isinstance(tokens, dict) else Counter(tokens)
        words = [f"t{t}" for t, n in counts.items() for _ in range(n)]
        with pytest.warns(RuntimeWarning):  # 0 / 0
            assert math.isnan(score(" ".join(words), metric="renyi", power=2.5))


@pytest.mark.parametrize("alpha", [0, -1, float("nan"), float("inf"), -float("inf")])
def test_an_alpha_that_is_not_a_number_above_0_is_refused(alpha):
    with pytest.raises(ConfigError, match="alpha must be a number above 0"):
        renyi_efficiency([1, 2], alpha=alpha)
    with pytest.raises(ConfigError, match="^--alpha must be a number above 0"):
        check_alpha(alpha, name="--alpha")


@pytest.mark.parametrize("alpha", [1, 2.5, 4])
def test_evaluate_gives_the_renyi_efficiency_of_its_encoding_at_the_alpha_asked(alpha):
    text = read_sample("udhr_ru.txt")
    tok = tokenizer("cl100k_base")
    got = evaluate(tok, text, alpha=alpha).renyi_efficiency
    assert got == renyi_efficiency(tok.encode(text), alpha=alpha)
    assert evaluate(tok, text).renyi_efficiency == renyi_efficiency(tok.encode(text), alpha=2.5)


# ---- Gini ----------------------------------------------------------------------------------------------------
def direct_gini(values: list[float]) -> float:
    """Mean absolute difference over all n² ordered pairs over twice the mean."""
    n = len(values)
    mean = sum(values) / n
    return sum(abs(a - b) for a in values for b in values) / (n * n) / (2 * mean)


@given(st.lists(st.integers(0, 10**7), min_size=1, max_size=30).filter(any))
def test_gini_of_counts_equals_the_mean_absolute_difference_over_twice_the_mean(values):
    assert gini(values) == pytest.approx(direct_gini(values), rel=1e-12, abs=1e-15)


@given(st.lists(st.floats(0, 1e9, allow_subnormal=False), min_size=1, max_size=30).filter(lambda v: sum(v) > 1e-6))
def test_gini_of_any_non_negative_numbers_equals_the_direct_computation(values):
    assert gini(values) == pytest.approx(direct_gini(values), rel=1e-9, abs=1e-12)


@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=12).filter(any), st.integers(1, 50))
def test_gini_ignores_order_and_scale(values, factor):
    assert gini(values) == pytest.approx(gini(sorted(values, reverse=True)), abs=1e-12)
    assert gini(values) == pytest.approx(gini([v * factor for v in values]), abs=1e-12)


@pytest.mark.parametrize(
    "values, expected",
    [
        ([2016, 2016, 2016], 0.0),  # all equal
        ([0, 0, 0, 12], 0.75),  # one holds everything: (n - 1) / n
        ([0, 5], 0.5),
        ([9], 0.0),
        ([0, 0], 0.0),  # nothing to share
        ([], 0.0),
        ([1, 2, 3], 2 / 9),
        ([4, 12], 0.25),
    ],
)
def test_gini_golden_values(values, expected):
    assert gini(values) == pytest.approx(expected, abs=1e-15)


def test_gini_refuses_negative_numbers():
    with pytest.raises(ValueError, match="0 or more"):
        gini([3, -1, 5])


def test_gini_of_the_udhr_token_counts_falls_from_gpt2_to_o200k_base():
    samples = [s for s in SAMPLE_FILES if s.startswith("udhr_")]
    by_table = {}
    for name in ("gpt2", "o200k_base"):
        counts = [len(load_pretrained(name).encode(read_sample(s))) for s in samples]
        by_table[name] = gini(counts)
        assert by_table[name] == pytest.approx(direct_gini(counts), abs=1e-12)
    assert by_table["gpt2"] > by_table["o200k_base"] > 0


# ---- parity --------------------------------------------------------------------------------------------------
@given(st.dictionaries(st.text(max_size=4), st.integers(0, 10**6), min_size=1, max_size=8), st.data())
def test_parity_is_each_count_over_the_references(values, data):
    reference = data.draw(st.sampled_from(sorted(values)))
    got = parity(values, reference)
    assert list(got) == list(values)
    ref = values[reference]
    assert got == {key: (value / ref if ref else None) for key, value in values.items()}
    if ref:
        assert got[reference] == 1.0


def test_parity_golden_values_and_a_missing_reference():
    assert parity({"udhr_en.txt": 2016, "udhr_hi.txt": 11229}, "udhr_en.txt") == {
        "udhr_en.txt": 1.0,
        "udhr_hi.txt": 11229 / 2016,
    }
    assert parity({"en": 0, "hi": 7}, "en") == {"en": None, "hi": None}
    with pytest.raises(KeyError):
        parity({"en": 3}, "de")
