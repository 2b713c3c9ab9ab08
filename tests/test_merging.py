"""The merge core (explorer.bpe.merging): exact outputs of each function, and hypothesis
properties against a reference written from the definition of BPE encoding: each merge, in rank
order, lowest rank first, applied to the whole piece (every occurrence, left to right), as
Sennrich's ``apply_bpe`` does. For merges that each make a new token, the encoder's "lowest-ranked
pair first, leftmost first" gives the same ids; the tokenizer's encode, truncation, dropout that
drops nothing (both styles) and trace all go through the core, so all must agree with it.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import EncodeOptions, Tokenizer, TrainerConfig
from explorer.bpe.merging import (
    NO_MERGE,
    SHORT_PIECE,
    Chain,
    chain_merges,
    encode,
    lowest_first,
    merge_all,
    merge_once,
    pack,
    packed_rules,
    pair_merges,
    unpack,
)
from explorer.bpe.ranks import bpe_parts

SETTINGS = settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])

# Sennrich's toy merges over ids: l=0 o=1 w=2 e=3 r=4 n=5 s=6 t=7
TOY = [(3, 6), (8, 7), (0, 1), (10, 2), (3, 4)]  # es, est, lo, low, er
TOY_LOOKUP = {pair: pack(rank, 8 + rank) for rank, pair in enumerate(TOY)}.get
LOWEST = [0, 1, 2, 3, 6, 7]  # "lowest"
NEWER = [5, 3, 2, 3, 4]  # "newer"


def reference(ids: list[int], merges: list[tuple[int, int]], first_new: int) -> list[int]:
    """BPE from its definition: merge k (left, right) -> first_new + k, in order, each replacing
    every occurrence in the whole piece, left to right."""
    for rank, pair in enumerate(merges):
        out: list[int] = []
        i = 0
        while i < len(ids):
            if tuple(ids[i : i + 2]) == pair:
                out.append(first_new + rank)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out
    return ids


def tiktoken_reference(data: bytes, ranks: dict[bytes, int], max_rank: int) -> list[bytes]:
    """tiktoken's byte-pair rule from its definition: while some two neighbours joined have a
    rank below max_rank, join the lowest-ranked, the leftmost of equals."""
    parts = [bytes([b]) for b in data]
    while True:
        joined = [(ranks.get(a + b, max_rank), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        rank, i = min(joined, default=(max_rank, 0))
        if rank >= max_rank:
            return parts
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


# ---- exact outputs ------------------------------------------------------------------------


def test_packed_merges_order_by_rank_then_id():
    assert pack(0, 256) == 256 and pack(1, 0) == 1 << 21 and unpack(pack(3, 99)) == (3, 99)
    assert sorted([pack(2, 5), pack(1, 900), pack(1, 7)]) == [pack(1, 7), pack(1, 900), pack(2, 5)]
    assert packed_rules({(0, 1): (4, 10)}) == {(0, 1): pack(4, 10)}


def test_pair_merges_give_each_pairs_merge():
    assert pair_merges(LOWEST, TOY_LOOKUP) == [pack(2, 10), NO_MERGE, NO_MERGE, pack(0, 8), NO_MERGE]
    assert pair_merges([], TOY_LOOKUP) == [] and pair_merges([3], TOY_LOOKUP) == []
    assert pair_merges(["l", "o", "w"], {"lo": 7}.get, joined=True) == [7, NO_MERGE]


def test_lowest_first_on_the_toy_merges():
    assert lowest_first(list(LOWEST), TOY_LOOKUP) == [11, 9]  # low + est
    assert lowest_first(list(NEWER), TOY_LOOKUP) == [5, 3, 2, 12]  # n e w er
    assert lowest_first([3, 6, 7, 3, 6], TOY_LOOKUP) == [9, 8]  # est es
    # truncation: merges of rank 2 and above are not made
    assert lowest_first(list(LOWEST), TOY_LOOKUP, below=pack(2, 0)) == [0, 1, 2, 9]
    assert lowest_first([], TOY_LOOKUP) == [] and lowest_first([4], TOY_LOOKUP) == [4]


def test_lowest_first_joined_is_tiktokens_rule():
    # any split of a token merges into it: a+bc joins into abc though abc was learned as ab+c
    ranks = {b"bc": 0, b"ab": 1, b"abc": 2, b"cd": 3}
    assert lowest_first([b"a", b"b", b"c", b"d"], ranks.get, joined=True) == [b"abc", b"d"]
    assert lowest_first([b"a", b"b", b"c", b"d"], ranks.get, joined=True, below=2) == [b"a", b"bc", b"d"]
    assert lowest_first(list("abcab"), {"ab": 0, "abc": 1}.get, joined=True) == ["abc", "ab"]
    assert bpe_parts(b"abcd", ranks, 3) == [b"abc", b"d"]


def test_chain_links_pieces_and_merges_them_in_rank_then_position_order():
    chain = Chain(LOWEST)
    assert chain.add(NEWER) == 6 and chain.add([]) == 11 and chain.add([3, 6]) == 11
    assert chain.nxt[5:7] == [-1, 7] and chain.prv[6] == -1
    steps = [(unpack(packed), at, left, right) for packed, at, left, right in chain_merges(chain, TOY_LOOKUP)]
    assert steps == [
        ((0, 8), 3, 3, 6),
        ((0, 8), 11, 3, 6),
        ((1, 9), 3, 8, 7),
        ((2, 10), 0, 0, 1),
        ((3, 11), 0, 10, 2),
        ((4, 12), 9, 3, 4),
    ]
    assert [chain.walk(start) for start in (0, 6, 11)] == [[11, 9], [5, 3, 2, 12], [8]]
    assert chain.index(9) == 3 and chain.index(0) == 0


def test_a_skipped_merge_is_tried_again_after_the_next():
    # "aa b aa" with aa: the first aa skipped, the second merged, then the first after all (HF);
    # seed 004's style leaves it
    lookup = {(0, 0): pack(0, 1)}.get
    chain = Chain([0, 0, 2, 0, 0])
    steps = [at for _, at, _, _ in chain_merges(chain, lookup, skip=iter([True, False, False]).__next__)]
    assert steps == [3, 0] and chain.walk() == [1, 2, 1]
    assert merge_once([0, 0, 2, 0, 0], lookup, skip=iter([True, False]).__next__) == [0, 0, 2, 1]
    # a skipped pair whose neighbour merged meanwhile is gone: "aaa" skips (0, 1), merges (1, 2)
    chain = Chain([0, 0, 0])
    assert [at for _, at, _, _ in chain_merges(chain, lookup, skip=iter([True, False]).__next__)] == [1]
    assert chain.walk() == [0, 1]
    assert encode([0, 0, 0, 0], lookup, skip=lambda: False) == [1, 1]


def test_encode_goes_to_the_heap_for_long_pieces_with_the_same_ids():
    lookup = {(0, 0): pack(0, 1), (1, 1): pack(1, 2), (2, 2): pack(2, 3)}.get
    short, long_ = [0] * 9, [0] * (SHORT_PIECE + 9)
    assert encode(list(short), lookup) == [3, 0]
    assert encode(list(long_), lookup) == [3] * 9 + [0] == encode(list(long_), lookup, skip=lambda: False)


def test_merge_all_and_merge_once_sweep_each_rule_once():
    lookup = {(0, 0): pack(0, 1), (1, 1): pack(1, 2)}.get
    assert merge_all([0, 0, 0, 1, 0, 0], lookup, pack(0, 1)) == [1, 0, 1, 1]
    assert merge_all([0, 0, 0], lookup, pack(1, 2)) == [0, 0, 0]
    assert merge_once([0] * 6, lookup) == [2, 1]
    # the first occurrence of aa skipped stays unmerged by that rule
    assert merge_once([0] * 6, lookup, skip=iter([True] + [False] * 9).__next__) == [0, 2, 0]
    # a rule already swept is not swept again, even when a later merge makes its pair
    remade = {(0, 1): pack(0, 2), (1, 1): pack(1, 0)}.get  # rank 1 makes a pair of rank 0
    assert merge_once([1, 1, 1], remade) == [0, 1] and lowest_first([1, 1, 1], remade) == [2]


# ---- properties against the definition ------------------------------------------------------


@st.composite
def merge_lists(draw, *, alphabet: int = 3, most: int = 12) -> list[tuple[int, int]]:
    """Merges as training makes them: two tokens that exist -> a new token, no pair twice."""
    merges: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(0, most))):
        size = alphabet + len(merges)
        pair = (draw(st.integers(0, size - 1)), draw(st.integers(0, size - 1)))
        if pair not in merges:
            merges.append(pair)
    return merges


PIECE = st.lists(st.integers(0, 2), max_size=SHORT_PIECE + 40)


@SETTINGS
@given(merges=merge_lists(), ids=PIECE, data=st.data())
def test_the_core_encodes_as_the_definition(merges, ids, data):
    lookup = {pair: pack(rank, 3 + rank) for rank, pair in enumerate(merges)}.get
    expected = reference(ids, merges, 3)
    assert encode(list(ids), lookup) == expected  # the scan, or the heap past SHORT_PIECE
    assert encode(list(ids), lookup, skip=lambda: False) == expected  # the heap
    assert lowest_first(list(ids), lookup) == expected
    assert merge_once(list(ids), lookup) == expected
    k = data.draw(st.integers(0, len(merges)), label="k")
    assert lowest_first(list(ids), lookup, below=pack(k, 0)) == reference(ids, merges[:k], 3)
    # many pieces in one chain (a corpus replayed): each merged as on its own, ranks never falling
    pieces = [ids[: len(ids) // 2], ids, ids[len(ids) // 2 :]]
    chain = Chain()
    starts = [chain.add(piece) for piece in pieces]
    ranks = [packed >> 21 for packed, *_ in chain_merges(chain, lookup)]
    assert ranks == sorted(ranks)
    assert [chain.walk(s) for s, piece in zip(starts, pieces) if piece] == [
        reference(p, merges, 3) for p in pieces if p
    ]


@st.composite
def rank_tables(draw) -> dict[bytes, int]:
    """Ranked byte strings over a few letters, single bytes first; ranks in any order of length."""
    tokens = [b"a", b"b", b"c"]
    for _ in range(draw(st.integers(0, 12))):
        token = draw(st.sampled_from(tokens)) + draw(st.sampled_from(tokens))
        if token not in tokens:
            tokens.append(token)
    return {t: r for r, t in enumerate(tokens)}


@SETTINGS
@given(
    ranks=rank_tables(),
    data=st.binary(max_size=40).map(lambda b: bytes(b"abc"[x % 3] for x in b)),
    cut=st.integers(0, 20),
)
def test_the_joined_core_is_tiktokens_rule(ranks, data, cut):
    max_rank = 3 + cut
    assert bpe_parts(data, ranks, max_rank) == tiktoken_reference(data, ranks, max_rank)
    assert b"".join(bpe_parts(data, ranks, max_rank)) == data


@st.composite
def char_tokenizers(draw) -> tuple[Tokenizer, list[tuple[int, int]]]:
    """A char-level tokenizer over "abc" whose every merge makes a new token."""
    vocab, merges = ["a", "b", "c"], []
    for _ in range(draw(st.integers(0, 12))):
        a, b = draw(st.integers(0, len(vocab) - 1)), draw(st.integers(0, len(vocab) - 1))
        if vocab[a] + vocab[b] not in vocab:
            merges.append((a, b))
            vocab.append(vocab[a] + vocab[b])
    style = draw(st.sampled_from(["retry", "once"]))
    config = TrainerConfig(pretokenizer="none", unit="char")
    tok = Tokenizer(config=config, alphabet="abc", merges=merges, encoding=EncodeOptions(dropout_style=style))
    return tok, merges


@SETTINGS
@given(built=char_tokenizers(), text=st.text("abc", max_size=SHORT_PIECE + 30), data=st.data())
def test_the_tokenizers_paths_encode_as_the_definition(built, text, data):
    tok, merges = built
    base = ["abc".index(c) for c in text]
    expected = reference(base, merges, 3)
    assert tok.encode(text) == expected
    assert tok.encode(text, dropout=1e-300, seed=data.draw(st.integers(0, 9), label="seed")) == expected
    k = data.draw(st.integers(0, len(merges)), label="k")
    assert tok.truncate(k).encode(text) == reference(base, merges[:k], 3)
    trace = tok.encode_trace(text)
    assert ([tok.token_to_id(t) for t in trace[-1].tokens] if trace else base) == expected
    assert [s.rank for s in trace] == sorted(s.rank for s in trace)
    for step in trace:
        assert step.tokens[step.position] == step.token == step.left + step.right
    # a dropout that drops everything leaves the symbols; any dropout keeps the text
    assert tok.encode(text, dropout=1.0, seed=1) == base
    assert tok.decode(tok.encode(text, dropout=0.5, seed=random.Random(text).randrange(99))) == text
