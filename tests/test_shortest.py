"""The fewest tokens (explorer/analysis/shortest.py): each piece's split against every split of
it enumerated here (brute force), never more tokens than BPE, decoding to what BPE's decodes to,
and golden examples where GPT-2's and cl100k_base's greedy merges spend a token more."""

from __future__ import annotations

from functools import cache
from itertools import combinations

import pytest
from conftest import read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import Tokenizer, TrainerConfig, load_pretrained, make_config, train
from explorer.analysis.evaluate import evaluate
from explorer.analysis.shortest import optimality_gap, piece_gaps, shortest_count, shortest_segmentation

CORPUS = read_sample("english_tiny_shakespeare.txt")[:20_000]
# (preset, overrides): every word marker, the byte unit with and without a pre-tokenizer
TRAINED = {
    "char eow": ("sennrich", {}),
    "char eow-glued": ("sennrich", {"marker": "eow-glued"}),
    "char g-suffix": ("suffix-marker", {}),
    "char sp-prefix": ("hf-course", {"marker": "sp-prefix"}),
    "char none": ("hf-course", {}),
    "byte gpt2": ("gpt2", {}),
    "byte no pre-tokenizer": ("bytes", {}),
    "byte superwords": ("gpt2", {"vocab_size": None, "superbpe_transition": 200}),  # pieces span words
}
TOKENIZERS = ["gpt2", "cl100k_base", *TRAINED]
# text a tokenizer may never have seen: accents, CJK, emoji, markers and special tokens as plain text
FRAGMENTS = [
    *CORPUS[:3000].split()[:300],
    " ",
    "  ",
    "\n",
    ",",
    "é",
    "你好",
    "👍🏽",
    "Ġ",
    "▁",
    "</w>",
    "<|endoftext|>",
    "x",
    "qq",
    "zzz",
    "1234",
]


@cache
def tokenizer(name: str) -> Tokenizer:
    if name in TRAINED:
        preset, overrides = TRAINED[name]
        return train(CORPUS, make_config(preset, num_merges=300, **overrides)).tokenizer()
    return load_pretrained(name)


def units_of(tok: Tokenizer, piece: str) -> tuple[list, list[bool], set]:
    """A piece's units as the test sees them, which of them are unknown, and every
    (non-special) token as the same kind of unit run: bytes for a byte-level tokenizer, the
    base symbols' strings (marker included) for a character-level one."""
    unknown = [i == tok.unk_id for i in tok.initial_ids(piece)]
    if tok.pipeline.unit == "byte":
        return [bytes([b]) for b in piece.encode("utf-8", "surrogatepass")], unknown, token_runs(tok)
    return tok.base_tokens(piece), unknown, token_runs(tok)


@cache
def token_runs(tok: Tokenizer) -> frozenset:
    real = range(tok.vocab.n_special, len(tok.vocab))
    if tok.pipeline.unit == "byte":
        return frozenset(tok.token_bytes(i) for i in real)
    return frozenset(tok.id_to_token(i) for i in real)


def every_split(n: int):
    """Every way to cut n units into runs, as run lengths: 2^(n-1) of them."""
    for k in range(n):
        for cuts in combinations(range(1, n), k):
            bounds = (0, *cuts, n)
            yield tuple(b - a for a, b in zip(bounds, bounds[1:]))


def brute_force(tok: Tokenizer, piece: str) -> tuple[int, list[tuple[int, ...]]]:
    """The fewest tokens of every allowed split of a piece, and the splits (run lengths) that
    reach it: a run is allowed when its units joined are a token, or it is one unknown unit."""
    units, unknown, vocab = units_of(tok, piece)
    allowed = []
    for lengths in every_split(len(units)):
        at, ok = 0, True
        for n in lengths:
            run = units[at : at + n]
            joined = b"".join(run) if isinstance(run[0], bytes) else "".join(run)
            ok = (n == 1 and unknown[at]) or (not any(unknown[at : at + n]) and joined in vocab)
            if not ok:
                break
            at += n
        if ok:
            allowed.append(lengths)
    fewest = min(map(len, allowed))
    return fewest, [s for s in allowed if len(s) == fewest]


def run_lengths(tok: Tokenizer, piece: str, ids: tuple[int, ...]) -> tuple[int, ...]:
    """How many units each token of a piece's split covers."""
    if tok.pipeline.unit == "byte":
        return tuple(1 if i == tok.unk_id else len(tok.token_bytes(i)) for i in ids)
    symbols = tok.base_tokens(piece)
    out, at = [], 0
    for i in ids:
        text, n = tok.id_to_token(i), 0
        while text:
            assert text.startswith(symbols[at + n]) or i == tok.unk_id, (piece, text, symbols)
            text = "" if i == tok.unk_id else text[len(symbols[at + n]) :]
            n += 1
        out.append(n)
        at += n
    return tuple(out)


def short_pieces(tok: Tokenizer, limit: int = 9) -> list[str]:
    """Distinct pieces of the corpus and of the fragments with at most ``limit`` units."""
    texts = [CORPUS[:4000], *FRAGMENTS, *(a + " " + b for a, b in zip(FRAGMENTS, FRAGMENTS[1:]))]
    seen = dict.fromkeys(piece for text in texts for piece in tok.piece_texts(text))
    return [p for p in seen if 0 < len(units_of(tok, p)[0]) <= limit]


# ---- against brute force ------------------------------------------------------------------------
@pytest.mark.parametrize("name", TOKENIZERS)
def test_each_short_piece_gets_the_fewest_tokens_every_split_allows_and_the_tie_rule_picks_among_them(name):
    tok = tokenizer(name)
    pieces = short_pieces(tok)
    assert len(pieces) > 40
    for piece in pieces:
        fewest, best = brute_force(tok, piece)
        [gap] = piece_gaps(tok, piece) if len(list(tok.piece_texts(piece))) == 1 else [None]
        if gap is None:  # a piece that is cut again alone (a space before it is gone): only as part of a text
            continue
        assert len(gap.shortest) == fewest, (piece, tok.tokens(gap.shortest))
        # of the fewest, the one with the longest first token, then second...: the largest run lengths
        assert run_lengths(tok, piece, gap.shortest) == max(best), (piece, tok.tokens(gap.shortest))


# ---- properties ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", TOKENIZERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=25), glue=st.sampled_from(["", " "]))
def test_never_more_tokens_than_bpe_and_decodes_to_what_bpe_decodes_to(name, parts, glue):
    tok = tokenizer(name)
    text = glue.join(parts)
    ids, fewest = tok.encode(text), shortest_segmentation(tok, text)
    assert len(fewest) <= len(ids)
    assert shortest_count(tok, text) == len(fewest)
    assert tok.decode(fewest) == tok.decode(ids)
    if name in ("gpt2", "cl100k_base"):  # all 256 bytes: any text comes back, from either split
        assert tok.decode(fewest) == text
    assert not any(tok.is_special(i) for i in fewest)  # special-token text is plain text, as in evaluate
    gaps = piece_gaps(tok, text)
    assert [i for g in gaps for i in g.bpe] == ids and [i for g in gaps for i in g.shortest] == fewest
    assert optimality_gap(tok, text).gap == len(ids) - len(fewest) == sum(g.gap for g in gaps)
    assert all(g.gap >= 0 for g in gaps)


@pytest.mark.parametrize("name", TOKENIZERS)
def test_evaluate_counts_the_shortest_split_of_the_same_pieces(name):
    tok = tokenizer(name)
    got = evaluate(tok, CORPUS, shortest=True)
    assert got.shortest_tokens == len(shortest_segmentation(tok, CORPUS)) <= got.tokens
    assert tok.decode(shortest_segmentation(tok, CORPUS)) == tok.decode(tok.encode(CORPUS))


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_the_longest_tokens_of_a_table_are_each_one_token_of_their_own_text(name):
    tok = tokenizer(name)
    # the length bound must let the longest token through
    longest = sorted(range(len(tok.vocab)), key=lambda i: -len(tok.token_bytes(i)))[:200]
    whole = [i for i in longest if list(tok.piece_texts(tok.decode([i]))) == [tok.decode([i])]]
    assert len(whole) > 20 and len(tok.token_bytes(whole[0])) == max(len(tok.token_bytes(i)) for i in longest)
    for i in whole:
        assert shortest_segmentation(tok, tok.decode([i])) == [i]


# ---- golden examples ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, text, bpe, fewest",
    [
        ("gpt2", " Caius", ["ĠC", "ai", "us"], ["ĠCa", "ius"]),
        ("gpt2", "crammed", ["c", "ram", "med"], ["cr", "ammed"]),
        ("cl100k_base", "wholesome", ["wh", "oles", "ome"], ["whole", "some"]),
        ("cl100k_base", " Marcius", ["ĠMar", "ci", "us"], ["ĠMarc", "ius"]),
        ("char eow", "relieve", ["r", "el", "i", "e", "ve</w>"], ["re", "li", "ev", "e</w>"]),
        ("char g-suffix", "while", ["w", "hi", "l", "eĠ"], ["wh", "il", "eĠ"]),
    ],
)
def test_golden_words_where_greedy_merges_spend_more(name, text, bpe, fewest):
    tok = tokenizer(name)
    assert tok.tokens(tok.encode(text)) == bpe
    assert tok.tokens(shortest_segmentation(tok, text)) == fewest


def test_of_two_splits_equally_short_the_longer_first_token_wins_whatever_bpe_chose():
    cfg = TrainerConfig(pretokenizer="whitespace", unit="char")
    for merges, bpe in (([(1, 2), (0, 1)], ["a", "bc"]), ([(0, 1), (1, 2)], ["ab", "c"])):
        tok = Tokenizer(config=cfg, alphabet=["a", "b", "c"], merges=merges)
        assert tok.tokens(tok.encode("abc")) == bpe
        assert tok.tokens(shortest_segmentation(tok, "abc")) == ["ab", "c"]


def test_an_unknown_symbol_is_one_unknown_token_that_no_token_crosses():
    cfg = TrainerConfig(pretokenizer="none", unit="char")
    # "axb" is no token made of known symbols: x is outside the alphabet
    tok = Tokenizer(config=cfg, alphabet=["a", "b"], merges=[(0, 1), (0, 0)])
    assert tok.tokens(shortest_segmentation(tok, "aaxab")) == ["aa", "<unk>", "ab"]
    assert shortest_segmentation(tok, "") == []
    assert optimality_gap(tok, "") == optimality_gap(tok, "").__class__(0, 0, 0, 0)
    # "<" unknown, "/w>" known, and the marker's symbol "</w>" a token whose text the symbols spell
    tok = Tokenizer(config=TrainerConfig(pretokenizer="none", unit="char", marker="eow"), alphabet=[*"/w>", "</w>"])
    assert tok.tokens(shortest_segmentation(tok, "</w>")) == ["<unk>", "/", "w", ">", "</w>"]
    tok = Tokenizer(config=TrainerConfig(pretokenizer="none", unit="char", marker="eow"), alphabet=[*"<w>", "</w>"])
    assert tok.tokens(shortest_segmentation(tok, "</w>")) == ["<", "<unk>", "w", ">", "</w>"]  # "/" unknown inside


def test_special_token_text_is_plain_text_even_where_its_characters_spell_it():
    cfg = TrainerConfig(pretokenizer="none", unit="char", special_tokens=("<s>",))
    tok = Tokenizer(config=cfg, alphabet=["<", "s", ">"], merges=[])
    assert tok.tokens(shortest_segmentation(tok, "<s><s>")) == ["<", "s", ">", "<", "s", ">"]


def test_a_byte_level_token_may_hold_part_of_a_character():
    tok = tokenizer("gpt2")
    text = " 你好"
    fewest = shortest_segmentation(tok, text)
    assert tok.decode(fewest) == text and len(fewest) <= len(tok.encode(text))
    assert any(isinstance(tok.token_text(i), bytes) for i in fewest)  # a token of part of a character
