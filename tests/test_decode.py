"""Decoding: ids back to text, against tiktoken (byte level, every ``errors`` mode, unknown ids)
and Hugging Face's decoders (char level, every word marker)."""

from __future__ import annotations

import functools

import pytest
import tiktoken
from conftest import read_sample
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_pretrained import oracle  # noqa: F401  (the session fixture: tiktoken's Encoding of each bundled table)
from tokenizers import decoders

from explorer import DecodeError, load_pretrained, make_config, train

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TABLES = ["gpt2", "cl100k_base"]


@pytest.fixture(scope="module")
def tables():
    return {name: load_pretrained(name) for name in TABLES}


@functools.cache  # a scan of the table, once a table: it was 85% of the time of 900 examples
def _partial_ids(enc: tiktoken.Encoding, limit: int = 400) -> list[int]:
    """Ids whose bytes are not UTF-8 on their own (a piece of a character): where decoding errs."""
    out = []
    for i in range(enc.n_vocab):
        try:
            data = enc.decode_single_token_bytes(i)
        except KeyError:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            out.append(i)
            if len(out) >= limit:
                break
    return out


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("name", TABLES)
@pytest.mark.parametrize("errors", ["replace", "ignore", "strict"])
def test_byte_level_decode_agrees_with_tiktoken_on_any_ids(oracle, tables, name, errors, data):  # noqa: F811
    enc = oracle(name).enc
    tok = tables[name]
    partial = data.draw(st.just(_partial_ids(enc)))
    ids = data.draw(st.lists(st.one_of(st.integers(0, enc.n_vocab - 1), st.sampled_from(partial)), max_size=12))
    try:
        theirs = enc.decode(ids, errors=errors)
    except KeyError:  # an id in a gap of the table (cl100k has some): no token
        with pytest.raises(DecodeError, match=r"is not a token id"):
            tok.decode(ids, errors=errors)
        return
    except UnicodeDecodeError:
        with pytest.raises(
            DecodeError, match=r"^the bytes (do not end as|are not) UTF-8: byte \d+ \(in token \d+, id \d+\)"
        ):
            tok.decode(ids, errors=errors)
        return
    assert tok.decode(ids, errors=errors) == theirs
    assert tok.decode_bytes(ids) == enc.decode_bytes(ids)


@pytest.mark.parametrize("name", TABLES)
def test_one_token_that_is_part_of_a_character_shows_as_its_bytes(oracle, tables, name):  # noqa: F811
    enc = oracle(name).enc
    tok = tables[name]
    partial = _partial_ids(enc, limit=50)
    assert partial
    for i in partial:
        assert tok.token_text(i) == enc.decode_single_token_bytes(i)
    whole = enc.encode_ordinary(" hello")[0]
    assert tok.token_text(whole) == " hello"


def test_strict_names_the_token_and_byte_that_break_utf8(tables):
    tok = tables["gpt2"]
    ids = tok.encode("a😀")  # 😀 is four bytes; GPT-2 splits them over tokens
    assert len(ids) > 2
    with pytest.raises(DecodeError) as err:
        tok.decode(ids[:-1], errors="strict")
    assert str(err.value).startswith("the bytes do not end as UTF-8: byte 1 (in token 1, id ")
    assert tok.decode(ids, errors="strict") == "a😀"


@pytest.mark.parametrize("bad", [[-1], [50257 + 5], [10**9], ["7"], [1.0], [True]])
def test_an_id_that_is_no_token_is_refused_with_its_position(tables, bad):
    tok = tables["gpt2"]
    for errors in ("replace", "ignore", "strict"):
        with pytest.raises(DecodeError, match=r"\(position 1\) is not a token id"):
            tok.decode([15496, *bad], errors=errors)


def test_an_unknown_errors_mode_is_refused(tables):
    with pytest.raises(ValueError, match="unknown errors='surrogateescape'"):
        tables["gpt2"].decode([15496], errors="surrogateescape")


# ---- char level: every word marker, against Hugging Face's decoders --------------------------------
CHAR_TEXT = read_sample("demo_sentences.txt") + read_sample("udhr_en.txt")
MARKER_CONFIGS = {
    "eow": make_config("sennrich", num_merges=300),
    "eow-glued": make_config("sennrich", marker="eow-glued", num_merges=300),
    "g-suffix": make_config("suffix-marker", num_merges=300),
    "sp-prefix": make_config("sennrich", marker="sp-prefix", num_merges=300),
    "none": make_config("hf-course", pretokenizer="gpt2", num_merges=300),  # the space stays in the pieces
}
# what Hugging Face's decoders do with each marker's tokens
HF_DECODERS = {
    "eow": decoders.BPEDecoder(suffix="</w>"),
    "eow-glued": decoders.BPEDecoder(suffix="</w>"),
    "g-suffix": decoders.BPEDecoder(suffix="Ġ"),
    "sp-prefix": decoders.Metaspace(replacement="▁", prepend_scheme="always"),
}


@pytest.fixture(scope="module")
def char_tokenizers():
    return {m: train(CHAR_TEXT, cfg).tokenizer() for m, cfg in MARKER_CONFIGS.items()}


_WORD = st.text(
    st.sampled_from(sorted({c for c in CHAR_TEXT if not c.isspace()} - {"Ġ", "▁"})), min_size=1, max_size=10
)
_SAMPLE_WORD = st.sampled_from(CHAR_TEXT.split())


@SETTINGS
@given(words=st.lists(st.one_of(_WORD, _SAMPLE_WORD), min_size=1, max_size=8))
@pytest.mark.parametrize("marker", list(MARKER_CONFIGS))
def test_char_level_decode_gives_the_words_back_for_every_marker(char_tokenizers, marker, words):
    tok = char_tokenizers[marker]
    text = " ".join(words)
    assume("</w>" not in text)
    ids = tok.encode(text)
    assume(tok.unk_id not in ids)  # eow-glued: a character never seen ending a word is unknown there
    assert tok.decode(ids) == text
    if marker in HF_DECODERS:
        assert HF_DECODERS[marker].decode(tok.tokens(ids)) == text


def test_char_level_unknown_symbols_decode_as_replacement_characters(char_tokenizers):
    tok = char_tokenizers["eow"]
    ids = tok.encode("low 中")
    assert tok.unk_id in ids
    assert tok.decode(ids) == "low \ufffd"


def test_an_id_in_the_gap_before_a_tables_special_tokens_is_a_decode_error_as_tiktoken_refuses_it(oracle):
    enc = oracle("cl100k_base").enc
    ours = load_pretrained("cl100k_base")
    gap = len(ours.vocab)  # cl100k_base's ranks end at 100255; <|endoftext|> is 100257
    assert gap == 100256
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(gap)
    with pytest.raises(DecodeError, match=r"id 100256 \(position 0\) is not a token id"):
        ours.decode([gap])
    assert ours.decode([gap + 1]) == enc.decode([gap + 1]) == "<|endoftext|>"
