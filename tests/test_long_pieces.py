"""Long pieces (pre-tokenization leaves them whole, or raw bytes taken as one piece) take their
own merge path (``merging.rank_sweeps``); each is checked against tiktoken's own Encoding of the
same table: the bundled o200k_base and cl100k_base (merged by id pair among their merges) and
Whisper's ``multilingual.tiktoken`` (any two neighbours whose bytes joined are a token).

The hypothesis property sets the long-piece threshold low (``merge_symbols(short=...)``), so
that both paths run on small random byte strings, each compared with tiktoken, not with the other.
"""

from __future__ import annotations

import gzip
import random
from functools import cache

import pytest
import tiktoken
from conftest import ROOT
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext.openai_public import r50k_pat_str

from explorer import load_pretrained
from explorer.bpe.merging import SHORT_PIECE
from explorer.bpe.tokenizer import Tokenizer
from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR
from explorer.formats.tiktoken_ranks import tokenizer_from_tiktoken
from explorer.stages.pretokenizers import PATTERNS

WHISPER = ROOT / "tests" / "data" / "whisper" / "multilingual.tiktoken.gz"
TABLES = ("o200k_base", "cl100k_base", "whisper")
LONG = 3 * SHORT_PIECE


@cache
def pair(name: str, folder: str) -> tuple[Tokenizer, tiktoken.Encoding]:
    """Ours and tiktoken's encoding of the same rank file (written to ``folder`` for tiktoken)."""
    from pathlib import Path

    if name == "whisper":
        data, pattern = gzip.decompress(WHISPER.read_bytes()), r50k_pat_str
        ours = tokenizer_from_tiktoken(data, {"pat_str": pattern, "special_tokens": {}})
    else:
        (rel,) = PRETRAINED[name].files
        data, pattern = gzip.decompress((PRETRAINED_DIR / rel).read_bytes()), PATTERNS[PRETRAINED[name].pretokenizer]
        ours = load_pretrained(name)
    path = Path(folder) / f"{name}.tiktoken"
    path.write_bytes(data)
    ranks = load_tiktoken_bpe(str(path))
    return ours, tiktoken.Encoding(f"test-{name}", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, tuple[Tokenizer, tiktoken.Encoding]]:
    folder = str(tmp_path_factory.mktemp("tables"))
    return {name: pair(name, folder) for name in TABLES}


def _letters(n: int, seed: int) -> str:
    return "".join(random.Random(seed).choices("abcdefghijklmnopqrstuvwxyz", k=n))


LONG_TEXTS = {
    "one letter repeated": "x" * 5000,
    "random letters": _letters(5000, 1),
    "a word repeated without spaces": "hello" * 700,
    "a run of spaces": " " * 3000,
}
LONG_BYTES = {
    "digits": b"1234567890" * 300,
    "whitespace": b" \t\n\r  \n\n" * 300,
    "emoji bytes": "👩‍👩‍👧‍👦🇯🇵😀✊🏽".encode() * 100,
    "mixed scripts": "中文分词हिन्दीالعربيةviệc".encode() * 80,
}


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("label", LONG_TEXTS)
def test_a_long_piece_of_text_encodes_to_tiktokens_ids(tables, name, label):
    tok, enc = tables[name]
    text = LONG_TEXTS[label]
    if label != "a run of spaces":  # whitespace runs are cut before their last space
        assert [len(p) for p in tok.piece_texts(text)] == [len(text)]  # one piece, the long path
    assert tok.encode(text) == enc.encode_ordinary(text)


@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("label", LONG_BYTES)
def test_long_raw_bytes_as_one_piece_encode_as_tiktokens_single_piece(tables, name, label):
    tok, enc = tables[name]
    data = LONG_BYTES[label]
    assert tok.encode_bytes(data) == enc._encode_single_piece(data)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(TABLES),
    data=st.one_of(
        st.binary(min_size=2, max_size=40),
        # few distinct bytes: long runs and repeats, where a merge's neighbours merge again
        st.lists(st.sampled_from(b"ab x\xe4\xb8"), min_size=2, max_size=60).map(bytes),
        st.text(min_size=1, max_size=20).map(str.encode),
    ),
    short=st.integers(1, 8),
)
def test_both_merge_paths_give_tiktokens_ids_on_random_bytes(tables, name, data, short):
    tok, enc = tables[name]
    expected = enc._encode_single_piece(data)
    if len(expected) == 1:  # a piece that is a token is taken whole by tiktoken, before any merge
        return
    ids = [tok.encode_bytes(bytes([b]))[0] for b in data]  # each byte's own id
    assert list(tok.merge_symbols(ids, short=len(ids))) == expected  # the short-piece scan
    assert list(tok.merge_symbols(ids, short=short)) == expected  # the long-piece sweeps


@st.composite
def rank_tables(draw) -> list[bytes]:
    """A rank table: the 256 bytes, then tokens each joined from two tokens before it. A later
    token may be a part of an earlier one ("ab" after "abc" = "a" + "bc"), so that a merge can
    make a pair of a lower rank than its own, which must then merge first."""
    tokens = [bytes([b]) for b in range(256)]
    made = [b"a", b"b", b"c"]
    for _ in range(draw(st.integers(1, 14))):
        token = draw(st.sampled_from(made)) + draw(st.sampled_from(made))
        if token not in made:
            made.append(token)
            tokens.append(token)
    return tokens


SINGLES = [bytes([b]) for b in range(256)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=rank_tables(),
    data=st.lists(st.sampled_from(b"abc"), min_size=2, max_size=40).map(bytes),
    short=st.integers(1, 8),
)
# found by a random search: in "abb abb a" the first "abb" (rank 260) and "ab" make "abbab" (259),
# lower, while the sweep of "abb" has an occurrence left, which "abbab" takes first
@example(table=SINGLES + [b"ab", b"bb", b"bbab", b"abbab", b"abb", b"bba", b"cabbab"], data=b"abbabba", short=1)
def test_both_merge_paths_give_tiktokens_ids_on_any_rank_table(table, data, short):
    from explorer.bpe.ranks import tokenizer_from_ranks

    ranks = {token: rank for rank, token in enumerate(table)}
    enc = tiktoken.Encoding("table", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    expected = enc._encode_single_piece(data)
    if len(expected) == 1:
        return
    tok = tokenizer_from_ranks(table, pretokenizer="none")
    ids = list(data)  # each byte's id is its rank
    assert list(tok.merge_symbols(ids, short=len(ids))) == expected
    assert list(tok.merge_symbols(ids, short=short)) == expected
