"""PickyBPE (Chizhov et al. 2024): after each merge, a merged token of the pair whose occurrences
left standing alone are under τ times the merge's count is removed, each occurrence split into
the tokens it was made from. Checked against classical BPE (τ = 0), a slow reference written
here from the paper (recount every pair and token at every step, split by rewriting every
word), and the encoder: a tokenizer at any step gives each training word the segmentation
training had then."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from conftest import merge_everywhere, read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import ConfigError, FormatError, Tokenizer, Trainer, TrainerConfig, Vocab, make_config, replay, train
from explorer.analysis.evaluate import piece_counts

Seg = tuple[str, ...]


def _reference(words: dict[str, int], tau: float, merges: int):
    """Character-level PickyBPE by recounting. Ties go to the lexicographically largest pair
    (tie_break="subword-nmt"). Returns the merges, the removals as (merges made, token) and the
    segmentation of every word after each step k (``snapshots[k]``)."""
    segs: dict[str, Seg] = {w: tuple(w) for w in words}
    base = {c for w in words for c in w}
    parents: dict[str, tuple[str, str]] = {}
    removed: set[str] = set()
    made: list[tuple[str, str]] = []
    removals: list[tuple[int, str]] = []
    snapshots = [dict(segs)]

    def token_counts() -> Counter:
        counts: Counter = Counter()
        for w, seg in segs.items():
            for t in seg:
                counts[t] += words[w]
        return counts

    def parts(token: str) -> list[str]:
        a, b = parents[token]
        return [p for t in (a, b) for p in (parts(t) if t in removed else [t])]

    for _ in range(merges):
        pairs: Counter = Counter()
        for w, seg in segs.items():
            for p in zip(seg, seg[1:]):
                pairs[p] += words[w]
        if not pairs:
            break
        top = max(pairs.values())
        pair = max(p for p, c in pairs.items() if c == top)
        replaced = 0
        for w, seg in segs.items():
            segs[w], n = merge_everywhere(seg, *pair, "".join(pair))
            replaced += n * words[w]
        made.append(pair)
        parents[pair[0] + pair[1]] = pair
        removed.discard(pair[0] + pair[1])
        for x in dict.fromkeys(pair):
            if x not in base and x not in removed and token_counts()[x] < tau * replaced:
                split = parts(x)
                removed.add(x)
                segs = {w: tuple(t for tok in seg for t in (split if tok == x else [tok])) for w, seg in segs.items()}
                removals.append((len(made), x))
        snapshots.append(dict(segs))
    return made, removals, snapshots


def _config(tau: float | None, merges: int, **changes) -> TrainerConfig:
    return TrainerConfig(
        pretokenizer="whitespace", unit="char", tie_break="subword-nmt", vocab_size=None, num_merges=merges, picky=tau,
        **changes,
    )  # fmt: skip


def _removed_tokens(trainer) -> list[tuple[int, str]]:
    return [(after, trainer.vocab[t]) for after, t in trainer.removals]


def _check_against_reference(text: str, tau: float, merges: int, *, steps=None) -> None:
    words = Counter(text.split())
    ours = train(text, _config(tau, merges))
    made, removals, snapshots = _reference(dict(words), tau, merges)
    assert [(r.left, r.right) for r in ours.records] == made
    assert _removed_tokens(ours) == removals
    for k in steps if steps is not None else range(len(made) + 1):
        tok = ours.tokenizer(k)
        assert {w: tuple(tok.tokens(tok.encode_piece(w))) for w in words} == snapshots[k], k


@pytest.mark.parametrize(
    "name, preset",
    [("english_frankenstein.txt", "gpt2"), ("udhr_ru.txt", "sennrich"), ("python_stdlib_sample.txt", "hf-course")],
)
def test_tau_zero_is_classical_bpe(name, preset):
    text = read_sample(name)[:60_000]
    cfg = make_config(preset, vocab_size=None, num_merges=400)
    classical = train(text, cfg)
    picky = train(text, cfg.replace(picky=0.0))
    assert picky.merges == classical.merges and picky.removals == []
    assert picky.tokenizer().encode(text[:5000]) == classical.tokenizer().encode(text[:5000])


@pytest.mark.parametrize("tau", [0.1, 0.5, 2.0])
def test_removals_and_segmentations_are_the_slow_references(tau):
    text = read_sample("english_frankenstein.txt")[:12_000]
    _check_against_reference(text, tau, 120, steps=[0, 1, 30, 60, 90, 120])
    assert train(text, _config(tau, 120)).removals  # the corpus is one where PickyBPE removes


def test_a_removed_token_can_come_back_and_a_split_goes_through_removed_parents():
    text = "abcdab cd bcd bcd"
    _check_against_reference(text, 0.5, 12)
    ours = train(text, _config(0.5, 12))
    assert [
        (r.step, r.token, [(x.token, x.part_tokens, x.alone, x.inside) for x in r.removals]) for r in ours.records
    ] == [
        (1, "cd", []),
        (2, "bcd", [("cd", ("c", "d"), 1, 3)]),  # the "cd" standing alone: 1 < 0.5 x 3
        (3, "cd", []),  # made again: back in the vocabulary
        (4, "bcda", []),
        (5, "bcdab", [("bcda", ("bcd", "a"), 0, 1)]),
        (6, "abcdab", [("bcdab", ("bcd", "a", "b"), 0, 1)]),  # its parent bcda is gone: split through it
    ]
    vocab = ours.tokenizer().vocab
    assert {vocab[t] for t in vocab.removed} == {"bcda", "bcdab"} and vocab.n_live == len(vocab) - 2


_WORD = st.sampled_from(["kentucky", "ken", "tucky", "lucky", "luck", "tuck", "ky", "ab", "abab", "a"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_WORD, min_size=1, max_size=30).map(" ".join),
    st.sampled_from([0.05, 0.3, 1.0, 5.0]),
    st.integers(min_value=1, max_value=25),
)
def test_random_texts_train_as_the_slow_reference(text, tau, merges):
    _check_against_reference(text, tau, merges)


def test_the_vocabulary_size_counts_live_tokens():
    text = read_sample("english_frankenstein.txt")[:30_000]
    ours = train(text, make_config("gpt2", vocab_size=600, picky=0.5))
    vocab = ours.tokenizer().vocab
    assert ours.removals and vocab.n_live == 600 == len(vocab) - len(vocab.removed)
    assert len(ours.merges) > 600 - 256  # each removal made room for one more merge


def test_removal_records_follow_their_merge():
    text = read_sample("english_frankenstein.txt")[:30_000]
    ours = train(text, make_config("gpt2", vocab_size=None, num_merges=300, picky=0.5))
    seen = [(rm.after, rm.token_id) for r in ours.records for rm in r.removals]
    assert seen == ours.removals
    for r in ours.records:
        for rm in r.removals:
            assert rm.after == r.step and rm.token in (r.left, r.right)
            assert "".join(rm.part_tokens) == rm.token and rm.alone < 0.5 * rm.inside
            assert rm.inside == r.replaced


def test_the_tokenizer_never_gives_a_removed_token_and_round_trips():
    text = read_sample("english_frankenstein.txt")
    tok = train(text, make_config("gpt2", vocab_size=None, num_merges=500, picky=0.3)).tokenizer()
    assert tok.vocab.removed
    ids = tok.encode(text)
    assert not set(ids) & tok.vocab.removed
    assert tok.decode(ids) == text


def test_replay_counts_each_step_as_the_tokenizer_at_that_step():
    text = read_sample("english_frankenstein.txt")[:20_000]
    tok = train(text, make_config("gpt2", vocab_size=None, num_merges=200, picky=0.5)).tokenizer()
    held_out = read_sample("udhr_en.txt")[:4000]
    counts = replay(tok, piece_counts(tok, held_out))
    assert len(counts) == 201
    for k in (0, 1, 50, 123, 200):
        assert counts[k] == len(tok.truncate(k).encode(held_out)), k


def test_a_picky_trace_of_a_word_shows_its_removals():
    tok = Tokenizer(
        pipeline=_config(None, 1).pipeline,
        vocab=Vocab(alphabet=("a", "b", "c"), merges=((0, 1), (3, 2)), removals=((2, 3),)),
    )
    steps = tok.encode_trace("abc")
    assert [(s.left, s.right, s.removed) for s in steps] == [("a", "b", False), ("ab", "c", False)]
    steps = tok.encode_trace("abab")
    assert [(s.left, s.right, s.tokens, s.removed) for s in steps][-2:] == [
        ("ab", "a b", ("a", "b", "ab"), True),
        ("ab", "a b", ("a", "b", "a", "b"), True),
    ]


@pytest.mark.parametrize(
    "removals, message",
    [
        (((1, 0),), "removes id 0, which is not a merged token live then"),
        (((1, 4),), "removes id 4, which is not a merged token live then"),  # made by merge 2, not yet
        (((1, 3), (1, 3)), "removes id 3, which is not a merged token live then"),  # already removed
        (((3, 3),), "comes after merge 3"),
        (((2, 3), (1, 3)), "comes after merge 1"),
    ],
)
def test_a_removal_training_cannot_have_made_is_a_format_error(removals, message):
    with pytest.raises(FormatError, match=message):
        Vocab(alphabet=("a", "b", "c"), merges=((0, 1), (3, 2)), removals=removals)


def test_picky_settings_are_checked():
    with pytest.raises(ConfigError, match="τ must be a number from 0"):
        TrainerConfig(picky=-0.1)
    with pytest.raises(ConfigError, match="cannot be combined"):
        TrainerConfig(picky=0.5, superbpe_transition=10)
    assert "picky" not in TrainerConfig().training_dict()  # files without it keep their keys
    tok = train("abcdab cd bcd bcd", _config(0.5, 12)).tokenizer()
    with pytest.raises(ConfigError, match="no dropout"):
        tok.encode("abc", dropout=0.5, seed=1)


def test_a_copy_taken_mid_training_trains_on_as_the_original():
    text = read_sample("english_frankenstein.txt")[:30_000]
    cfg = make_config("gpt2", vocab_size=None, num_merges=300, picky=0.5)
    whole = train(text, cfg)
    t = Trainer.from_texts(text, cfg)
    t.advance(150)
    twin = copy.deepcopy(t)
    t.advance(20)  # the original goes on: the copy must not see it
    twin.run()
    assert twin.merges == whole.merges and twin.removals == whole.removals
    assert twin.records.all_removals() == whole.records.all_removals()
