"""The bundled pretrained tokenizers (gpt2, cl100k_base, o200k_base) against tiktoken.

The oracle is tiktoken itself, built offline from the bundled files with tiktoken's own
loaders (``data_gym_to_mergeable_bpe_ranks`` for GPT-2's encoder.json + vocab.bpe,
``load_tiktoken_bpe`` for the ``.tiktoken`` tables): the ranks, the byte-pair merging, the
special-token handling and the surrogate fix-up are tiktoken's code, not ours. The pattern and
special ids are ours (``PATTERNS``, ``PRETRAINED``); ``test_bundled_tables_are_tiktokens_own_encodings``
checks those, and the tables' hashes, against tiktoken's own definitions of the encodings.

- ids equal tiktoken's on every sample corpus, on tricky strings and on generated text;
- special tokens, allowed or not, as tiktoken encodes them;
- the merges recovered from ranks rebuild every token, agree with GPT-2's own vocab.bpe and
  with a reference written here from the definition of the recovery rule;
- the merges files shipped beside the ``.tiktoken`` tables (what a table loads from) are the
  merges recovered from the table as tiktoken reads it, and make its tokens, ranks as ids; every
  bundled file's sha256 is the spec's and SOURCES.md's;
- the paths that merge without the whole-piece cache (long pieces, ``encode_bytes``, dropout,
  traces, ``truncate``, ``merge_rules`` through ``evaluate.replay``) give tiktoken's ids too;
- a damaged table is refused with a message naming it, and damaged GPT-2 files the same way;
- ``warm_pretrained`` loads the tables in the background, once, and leaves errors to ``load_pretrained``.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import random
import re
import shutil
import threading
from typing import NamedTuple

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public
from conftest import SAMPLE_FILES, read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_oracles import _unicode_table_differences, _version_stable_text

import explorer.formats.bundled as pretrained_module  # where the tables are read and kept
from explorer import ConfigError, FormatError, Tokenizer, TrainerConfig, load_pretrained
from explorer.analysis.evaluate import piece_counts, replay
from explorer.bpe.ranks import recover_merges
from explorer.cli import main as cli_main
from explorer.formats.importers import tokenizer_from_gpt2
from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR, TIKTOKEN_TABLES, warm_pretrained
from explorer.stages.pretokenizers import PATTERNS
from explorer.stages.units import byte_alphabet, bytes_to_display, display_to_bytes

TABLES = list(PRETRAINED)
RANK_TABLES = [name for name in TABLES if name != "gpt2"]  # the .tiktoken ones: ranks only, merges recovered


# ---- the oracle ----------------------------------------------------------------------------------
class Oracle(NamedTuple):
    enc: tiktoken.Encoding
    ranks: dict[bytes, int]  # token bytes -> rank, as tiktoken's loader read them


def _load_ranks(name: str, folder) -> dict[bytes, int]:
    spec = PRETRAINED[name]
    if name == "gpt2":
        return tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(PRETRAINED_DIR / "gpt2" / "vocab.bpe"),
            encoder_json_file=str(PRETRAINED_DIR / "gpt2" / "encoder.json"),
        )
    (rel,) = spec.files
    plain = folder / f"{name}.tiktoken"
    plain.write_bytes(gzip.decompress((PRETRAINED_DIR / rel).read_bytes()))
    return tiktoken.load.load_tiktoken_bpe(str(plain))


@pytest.fixture(scope="session")
def oracle(tmp_path_factory):
    """name -> Oracle, each built once per session. tiktoken's loaders cache what they read by
    path (and, without an expected hash, trust that cache); a fresh cache folder of our own keeps
    a stale copy from elsewhere out and leaves nothing behind."""
    folder = tmp_path_factory.mktemp("tiktoken")
    built: dict[str, Oracle] = {}

    def get(name: str) -> Oracle:
        if name not in built:
            spec = PRETRAINED[name]
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("TIKTOKEN_CACHE_DIR", str(folder / "cache"))
                ranks = _load_ranks(name, folder)
            enc = tiktoken.Encoding(
                f"oracle-{name}",
                pat_str=PATTERNS[spec.pretokenizer],
                mergeable_ranks=ranks,
                special_tokens=spec.special_ids,
            )
            built[name] = Oracle(enc, ranks)
        return built[name]

    return get


def _first_difference(tok: Tokenizer, enc: tiktoken.Encoding, ours: list[int], theirs: list[int]) -> str | None:
    """None when equal, else where and how the two id lists first differ (as token bytes)."""
    if ours == theirs:
        return None
    i = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return (
        f"first difference at token {i} of {len(ours)} (ours) / {len(theirs)} (tiktoken): "
        f"ours {ours[i : i + 5]} = {[tok.token_bytes(t) for t in ours[i : i + 5]]}, "
        f"tiktoken {theirs[i : i + 5]} = {[enc.decode_single_token_bytes(t) for t in theirs[i : i + 5]]}"
    )


def _assert_same_ids(tok, enc, ours, theirs, what: str) -> None:
    diff = _first_difference(tok, enc, ours, theirs)
    if diff:
        pytest.fail(f"{what}: {diff}")


# ---- the bundled files and settings are tiktoken's -------------------------------------------------
_URL_FILES = {  # the file name in tiktoken's download address -> bundled file (gunzipped)
    "vocab.bpe": "gpt2/vocab.bpe",
    "encoder.json": "gpt2/encoder.json",
    "cl100k_base.tiktoken": "tiktoken/cl100k_base.tiktoken.gz",
    "o200k_base.tiktoken": "tiktoken/o200k_base.tiktoken.gz",
}


def _bundled_file(url: str) -> bytes:
    data = (PRETRAINED_DIR / _URL_FILES[url.rsplit("/", 1)[-1]]).read_bytes()
    return gzip.decompress(data) if url.endswith(".tiktoken") else data


@pytest.mark.parametrize("name", TABLES)
def test_bundled_tables_are_tiktokens_own_encodings(name, oracle, tmp_path, monkeypatch):
    """tiktoken's own definition of each encoding (``tiktoken_ext.openai_public``), its downloads
    answered from the bundled files: tiktoken checks each file against the sha256 it expects, and
    its pattern, special tokens and ranks must be the ones we use."""
    monkeypatch.setattr(tiktoken.load, "read_file", _bundled_file)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: every file is read and hash-checked
    definition = getattr(tiktoken_ext.openai_public, name)()
    spec, tok, mine = PRETRAINED[name], load_pretrained(name), oracle(name)
    assert definition["special_tokens"] == spec.special_ids == tok.special_ids
    assert definition["mergeable_ranks"] == mine.ranks
    theirs = tiktoken.Encoding(**definition)
    assert tok.n_vocab == theirs.n_vocab
    if definition["pat_str"] != PATTERNS[spec.pretokenizer]:
        # GPT-2: tiktoken writes an equivalent, faster form of GPT-2's own regex; same ids
        assert name == "gpt2"
        for corpus in SAMPLE_FILES:
            text = read_sample(corpus)
            _assert_same_ids(tok, theirs, tok.encode(text), theirs.encode_ordinary(text), corpus)
        for key, text in TRICKY.items():
            _assert_same_ids(tok, theirs, tok.encode(text), theirs.encode_ordinary(text), key)


# ---- ids equal tiktoken's ---------------------------------------------------------------------------
@pytest.mark.parametrize("corpus", SAMPLE_FILES)
@pytest.mark.parametrize("name", TABLES)
def test_ids_equal_tiktoken_on_every_sample_corpus(name, corpus, oracle):
    tok, enc = load_pretrained(name), oracle(name).enc
    text = read_sample(corpus)
    _assert_same_ids(tok, enc, tok.encode(text), enc.encode_ordinary(text), corpus)


TRICKY = {
    "zwj-family": "👩‍👩‍👧‍👦",
    "zwj-technologist": "🧑🏽‍💻 at work",
    "skin-tones": "👍🏻👍🏼👍🏽👍🏾👍🏿 👋🏿 hi",
    "flags": "🇺🇸🇯🇵🇰🇷 🇫🇷 and 🏴󠁧󠁢󠁳󠁣󠁴󠁿",
    "keycaps": "1️⃣ #️⃣ *️⃣ 0⃣",
    "combining-acute": "cafe\u0301 e\u0301e\u0301 \u0301a",
    "hangul-jamo": "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af",
    "cjk": "中文分词测试，漢字とかなカナ。",
    "korean": "안녕하세요, 세계! 대한민국",
    "hindi": "नमस्ते दुनिया, हिन्दी में लिखा",
    "arabic": "مرحبا بالعالم ١٢٣",
    "nul": "a\x00b\x00\x00 c",
    "crlf": "line one\r\nline two\r\n",
    "crlf-crlf": "\r\n\r\n",
    "crlf-text": "x\r\n\r\n  y\r\n",
    "digits": "1234567890" * 20,
    "digits-spaced": " 1234567 89,000.5",
    "trailing-spaces": "hello world   ",
    "only-spaces": "     ",
    "one-space": " ",
    "tabs": "\tindented\t\tcode\t",
    "line-separator": "a\u2028b\u2029c \u2028",
    "nbsp-ideographic-space": "a\xa0b\u3000c",
    "contractions": "I'LL've they'RE we'd O'Neil's",
    "curly-apostrophe": "don’t it’s",
    "camel-case": "camelCaseHTTPServer getX",
    "empty": "",
    "mixed": "Hello, 世界! 🌍 x=1+2; // ok\n\n\tdone.",
}
SURROGATES = {
    "lone-high": "a\ud800b",
    "lone-low": "\udc00",
    "pair-as-code-units": "\ud83d\ude00",
    "mixed-surrogates": "x\ud83d\ude00y\udfff z\ud83d",
}


@pytest.mark.parametrize("key", list(TRICKY))
@pytest.mark.parametrize("name", TABLES)
def test_ids_equal_tiktoken_on_tricky_strings(name, key, oracle):
    tok, enc = load_pretrained(name), oracle(name).enc
    text = TRICKY[key]
    ours = tok.encode(text)
    _assert_same_ids(tok, enc, ours, enc.encode_ordinary(text), repr(text))
    assert tok.decode(ours) == text


@pytest.mark.parametrize("key", list(SURROGATES))
@pytest.mark.parametrize("name", TABLES)
def test_lone_surrogates_are_fixed_up_as_tiktoken_does(name, key, oracle):
    """Text UTF-8 cannot encode: tiktoken's ``encode`` joins a pair written as two code units and
    turns a lone surrogate into U+FFFD before encoding."""
    tok, enc = load_pretrained(name), oracle(name).enc
    text = SURROGATES[key]
    ours = tok.encode(text)
    theirs = enc.encode(text, disallowed_special=())
    _assert_same_ids(tok, enc, ours, theirs, repr(text))
    assert tok.decode(ours) == enc.decode(theirs)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(text=_version_stable_text())
@pytest.mark.parametrize("name", TABLES)
def test_ids_equal_tiktoken_on_generated_text(name, text, oracle):
    """Characters whose Unicode class differs between the `regex` module and tiktoken's regex
    (newer tables) are left out: there the pieces differ by design, not the BPE."""
    tok, enc = load_pretrained(name), oracle(name).enc
    _assert_same_ids(tok, enc, tok.encode(text), enc.encode_ordinary(text), repr(text))


def _stable_after_fix_up(text: str) -> bool:
    fixed = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return not any(c in _unicode_table_differences() for c in fixed)


_WITH_SURROGATES = (
    st.lists(
        st.one_of(
            _version_stable_text(), st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"])
        ),
        min_size=1,
        max_size=6,
    )
    .map("".join)
    .filter(_stable_after_fix_up)
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(text=_WITH_SURROGATES)
@pytest.mark.parametrize("name", TABLES)
def test_ids_equal_tiktoken_on_generated_text_with_surrogates(name, text, oracle):
    tok, enc = load_pretrained(name), oracle(name).enc
    _assert_same_ids(tok, enc, tok.encode(text), enc.encode(text, disallowed_special=()), repr(text))


# ---- special tokens -------------------------------------------------------------------------------------
def _special_texts(specials: list[str]) -> list[str]:
    texts = ["".join(specials), " ".join(specials), "\n".join(specials) + "\n"]
    for s in specials:
        texts += [
            s,
            s + "hello",
            "hello" + s,
            "hello " + s + " world",
            "wor" + s + "ld",  # start, end, middle, inside a word
            s + s,
            s + " " + s,
            s + specials[0] + s,  # adjacent
            "<|" + s + "|>",
            s[:-1],
            s[1:],
            s[:-1] + s,
            s.upper(),
            " " + s + "\n\n",  # near misses
            "1234" + s + "5678",
            "\u4e2d" + s + "🙂",
        ]
    return texts


@pytest.mark.parametrize("name", TABLES)
def test_special_tokens_encode_as_tiktoken_allowed_or_not(name, oracle):
    tok, enc = load_pretrained(name), oracle(name).enc
    specials = list(PRETRAINED[name].special_ids)
    for text in _special_texts(specials):
        allowed = tok.encode(text, allow_special=True)
        _assert_same_ids(tok, enc, allowed, enc.encode(text, allowed_special="all"), f"{text!r}, allowed")
        plain = tok.encode(text)
        _assert_same_ids(tok, enc, plain, enc.encode(text, disallowed_special=()), f"{text!r}, as plain text")
        assert tok.decode(allowed) == text and tok.decode(plain) == text, repr(text)
    for special, i in PRETRAINED[name].special_ids.items():
        assert tok.encode("a" + special, allow_special=True)[-1] == i
        assert i not in tok.encode("a" + special)


# ---- decode, n_vocab, token bytes ----------------------------------------------------------------------
@pytest.mark.parametrize("name", TABLES)
def test_decode_inverts_encode_on_every_sample_corpus(name):
    tok = load_pretrained(name)
    broken = [corpus for corpus in SAMPLE_FILES if tok.decode(tok.encode(read_sample(corpus))) != read_sample(corpus)]
    assert not broken


@pytest.mark.parametrize("name", TABLES)
def test_n_vocab_and_token_bytes_equal_tiktoken(name, oracle):
    tok, enc = load_pretrained(name), oracle(name).enc
    assert tok.n_vocab == enc.n_vocab
    specials = list(PRETRAINED[name].special_ids.values())
    ids = [*range(256), *random.Random(7).sample(range(256, len(tok.vocab)), 3000), len(tok.vocab) - 1, *specials]
    wrong = [
        (i, tok.token_bytes(i), enc.decode_single_token_bytes(i))
        for i in ids
        if tok.token_bytes(i) != enc.decode_single_token_bytes(i)
    ]
    assert not wrong, wrong[:5]


# ---- recovered merges -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", TABLES)
def test_merges_rebuild_every_token_as_one_id(name):
    """Encoding a token's own bytes with the plain pair rule (only learned pairs merge, no
    whole-token shortcut, no other splits) gives that token: every token is reachable. This is
    what lets the bundled tables look neighbours up among their merges only
    (``own_merges_suffice``): tiktoken's other splits of a token then never meet."""
    tok = load_pretrained(name)
    assert tok.own_merges_suffice
    plain = Tokenizer(config=tok.config, alphabet=tok.alphabet, merges=tok.merges)
    assert plain.rules == "merges"
    wrong = [
        (i, tok.token_bytes(i), plain.encode_bytes(tok.token_bytes(i)))
        for i in range(256, len(tok.vocab))
        if plain.encode_bytes(tok.token_bytes(i)) != [i]
    ]
    assert not wrong, f"{len(wrong)} tokens do not rebuild, e.g. {wrong[:5]}"


def test_gpt2_merges_recovered_from_encoder_ranks_are_vocab_bpe():
    """GPT-2 ships its merges; recovering them from encoder.json's ids alone (as for a .tiktoken
    table) gives the same 50,000 pairs, so the recovery rule is right on a table whose merges
    are known."""
    encoder = json.loads((PRETRAINED_DIR / "gpt2" / "encoder.json").read_text(encoding="utf-8"))
    by_id = sorted((i, t) for t, i in encoder.items() if t not in PRETRAINED["gpt2"].special_ids)
    assert [i for i, _ in by_id] == list(range(len(by_id)))
    recovered = recover_merges([display_to_bytes(t) for _, t in by_id])
    # vocab.bpe read here, line by line: "left right" display strings -> encoder ids
    lines = (PRETRAINED_DIR / "gpt2" / "vocab.bpe").read_text(encoding="utf-8").splitlines()[1:]
    vocab_bpe = [tuple(encoder[s] for s in line.split(" ")) for line in lines if line]
    assert len(vocab_bpe) == 50_000
    diff = [(256 + k, a, b) for k, (a, b) in enumerate(zip(recovered, vocab_bpe)) if a != b]
    assert not diff, f"{len(diff)} merges differ (id, recovered, vocab.bpe), e.g. {diff[:5]}"
    assert recovered == vocab_bpe == list(load_pretrained("gpt2").merges)


def _pair_by_definition(token: bytes, ranks: dict[bytes, int], r: int) -> tuple[int, int]:
    """The merge that made the token of rank r, from the definition: rank-based BPE on the
    token's own bytes with only the ranks below r (lowest rank first, leftmost on a tie) stops
    at two parts; they are the pair."""
    parts = [bytes([b]) for b in token]
    while True:
        candidates = [
            (ranks[parts[i] + parts[i + 1]], i)
            for i in range(len(parts) - 1)
            if ranks.get(parts[i] + parts[i + 1], r) < r
        ]
        if not candidates:
            break
        _, i = min(candidates)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    assert len(parts) == 2, f"rank {r} {token!r} stops at {parts}"
    return ranks[parts[0]], ranks[parts[1]]


@pytest.mark.parametrize("name", RANK_TABLES)
def test_recovered_merges_follow_the_definition(name, oracle):
    tok, ranks = load_pretrained(name), oracle(name).ranks
    by_rank = {r: t for t, r in ranks.items()}
    sample = random.Random(2024).sample(range(256, len(ranks)), 3000)
    # the sample must hold many tokens with several splits into two lower-ranked tokens: there
    # the rule matters (one split is the merge at once)
    several = sum(
        sum(ranks.get(t[:i], r) < r and ranks.get(t[i:], r) < r for i in range(1, len(t))) > 1
        for r in sample
        for t in [by_rank[r]]
    )
    assert several > 1000
    wrong = [
        (r, by_rank[r], tok.merges[r - 256], _pair_by_definition(by_rank[r], ranks, r))
        for r in sample
        if tok.merges[r - 256] != _pair_by_definition(by_rank[r], ranks, r)
    ]
    assert not wrong, f"{len(wrong)} of {len(sample)} differ (rank, token, ours, definition), e.g. {wrong[:5]}"


def test_a_piece_that_is_a_token_is_that_token_as_in_tiktoken():
    """tiktoken's whole-piece shortcut. In the bundled tables every token is reachable by merging
    its bytes (above), so there it never changes an id; this table has one that is not: "abcd"
    (= ab + cd), whose bytes merge b+c first and then stop at a, bc, d."""
    cfg = TrainerConfig(pretokenizer="gpt2", alphabet="full-bytes")
    alphabet = byte_alphabet()
    a, b, c, d = (alphabet.index(ch) for ch in "abcd")
    tok = Tokenizer(config=cfg, alphabet=alphabet, merges=[(b, c), (a, b), (c, d), (257, 258)], rules="tiktoken")
    ranks = {tok.token_bytes(i): i for i in range(len(tok.vocab))}
    enc = tiktoken.Encoding("shortcut", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={})
    for text in ("abcd", " abcd", "abcd abcde xabcd"):
        _assert_same_ids(tok, enc, tok.encode(text), enc.encode_ordinary(text), repr(text))
    assert tok.encode("abcd") == [259]
    assert tok.encode_bytes(b"abcd") == [a, 256, d]  # raw bytes: the merges alone, no shortcut


# ---- the merges files shipped beside the .tiktoken tables ------------------------------------------------
def _shipped(name: str) -> dict:
    """The bundled merges file of a rank table, read here with gzip and json only."""
    rel, _ = PRETRAINED[name].derived
    return json.loads(gzip.decompress((PRETRAINED_DIR / rel).read_bytes()))


@pytest.mark.parametrize("name", RANK_TABLES)
def test_shipped_merges_are_those_recovered_from_the_table(name, oracle):
    """The file names the table it was recovered from (the decompressed .tiktoken, by the hash
    tiktoken checks), lists its single bytes in rank order, and its merges are the merges
    recovered from the ranks tiktoken's own loader reads."""
    doc, ranks = _shipped(name), oracle(name).ranks
    by_rank = sorted(ranks, key=ranks.__getitem__)
    assert [ranks[t] for t in by_rank] == list(range(len(ranks)))
    assert doc["table"] == f"{name}.tiktoken sha256:{TIKTOKEN_TABLES[name][1]}"
    assert [bytes([b]) for b in doc["bytes"]] == by_rank[:256]
    flat = doc["merges"]
    assert list(zip(flat[::2], flat[1::2])) == recover_merges(by_rank)


@pytest.mark.parametrize("name", RANK_TABLES)
def test_shipped_merges_make_the_tables_tokens_with_their_ranks_as_ids(name, oracle):
    """Token 256 + k is the token of merges[2k] followed by that of merges[2k + 1]: made here by
    joining bytes, they are tiktoken's tokens rank for rank, and so are the loaded tokenizer's."""
    doc, enc = _shipped(name), oracle(name).enc
    tokens = [bytes([b]) for b in doc["bytes"]]
    flat = doc["merges"]
    for a, b in zip(flat[::2], flat[1::2]):
        assert a < len(tokens) and b < len(tokens)
        tokens.append(tokens[a] + tokens[b])
    theirs = [enc.decode_single_token_bytes(i) for i in range(len(oracle(name).ranks))]
    wrong = [(i, t, u) for i, (t, u) in enumerate(zip(tokens, theirs)) if t != u]
    assert len(tokens) == len(theirs) and not wrong, wrong[:5]
    tok = load_pretrained(name)
    assert [tok.token_bytes(i) for i in range(len(tok.vocab))] == theirs


_SOURCES_ROW = re.compile(r"^\| `([^`]+)` \|.*\| ([0-9,]+) \| `([0-9a-f]{64})` \|$", re.M)


def test_every_bundled_file_has_the_sha256_of_the_spec_and_of_sources_md():
    listed = {
        m[1]: (int(m[2].replace(",", "")), m[3])
        for m in _SOURCES_ROW.finditer((PRETRAINED_DIR / "SOURCES.md").read_text(encoding="utf-8"))
    }
    files = {rel: digest for spec in PRETRAINED.values() for rel, digest in (*spec.files.items(), *spec.reads.items())}
    assert len(files) == 6
    for rel, digest in files.items():
        data = (PRETRAINED_DIR / rel).read_bytes()
        assert listed.get(rel) == (len(data), digest) == (len(data), hashlib.sha256(data).hexdigest()), rel


# ---- the paths that merge without the piece cache, with tiktoken's rules ------------------------------------
def _truncated(name: str, oracle, k: int) -> tiktoken.Encoding:
    """tiktoken with the table's first 256 + k ranks only: the table as of its merge k."""
    spec, ranks = PRETRAINED[name], oracle(name).ranks
    return tiktoken.Encoding(
        f"{name}-{k}",
        pat_str=PATTERNS[spec.pretokenizer],
        mergeable_ranks={t: r for t, r in ranks.items() if r < 256 + k},
        special_tokens={},
    )


@pytest.mark.parametrize("name", TABLES)
def test_truncated_tables_and_replay_equal_tiktoken_with_the_first_ranks(name, oracle):
    """``truncate(k)`` is tiktoken on the first 256 + k ranks, and ``evaluate.replay`` (which merges
    by ``merge_rules``, every split of every token) counts what each truncation encodes."""
    tok, text = load_pretrained(name), read_sample("udhr_hi.txt")[:3000] + read_sample("udhr_en.txt")[:3000]
    counts = replay(tok, piece_counts(tok, text))
    assert counts[-1] == len(oracle(name).enc.encode_ordinary(text))
    for k in (0, 1, 700, 5000, 40_000):
        enc = _truncated(name, oracle, k)
        small = tok.truncate(k)
        assert small.own_merges_suffice  # a table's first merges rebuild their tokens too
        _assert_same_ids(small, enc, small.encode(text), enc.encode_ordinary(text), f"truncate({k})")
        assert counts[k] == len(small.encode(text))


def _long_pieces(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    words = read_sample("udhr_hi.txt").split() + read_sample("udhr_en.txt").split()
    out = [" ".join(rng.sample(words, 40)).encode() for _ in range(6)]  # 65 bytes and more: the heap
    out += [b"a" * 300, b" " * 129, "\u4e2d\u6587".encode() * 40, bytes(rng.randrange(256) for _ in range(200))]
    return out


@pytest.mark.parametrize("name", TABLES)
def test_long_pieces_and_raw_bytes_equal_tiktoken(name, oracle):
    """Pieces longer than 64 bytes merge in the heap: raw bytes (``encode_bytes``; tiktoken's
    ``_encode_single_piece``, no regex, whose whole-piece shortcut cannot apply to these), and
    whole texts as one piece by a tokenizer of the same merges that looks every split up by its
    joined text (not ``own_merges_suffice``)."""
    tok, enc = load_pretrained(name), oracle(name).enc
    one_piece = Tokenizer(
        config=tok.config.replace(pretokenizer="none", pattern=None),
        alphabet=tok.alphabet,
        merges=tok.merges,
        rules="tiktoken",
    )
    whole = tiktoken.Encoding(
        f"{name}-whole", pat_str=r"[\s\S]+", mergeable_ranks=oracle(name).ranks, special_tokens={}
    )
    for data in _long_pieces(1):
        theirs = enc._encode_single_piece(data)
        _assert_same_ids(tok, enc, tok.encode_bytes(data), theirs, f"encode_bytes({data[:20]!r})")
        text = data.decode("utf-8", "replace")
        _assert_same_ids(tok, whole, one_piece.encode(text), whole.encode_ordinary(text), f"one piece {text[:20]!r}")


@pytest.mark.parametrize("name", TABLES)
def test_traces_and_dropout_follow_tiktokens_merges(name, oracle):
    """A trace (the heap, step by step) ends at tiktoken's tokens; dropout that skips nothing
    gives tiktoken's ids in both dropout styles, and any dropout decodes back to the text; with
    the merges looked up by id pair (the loaded table) and by joined text (the other two)."""
    tok, enc = load_pretrained(name), oracle(name).enc
    by_text = Tokenizer(
        config=tok.config, alphabet=tok.alphabet, merges=tok.merges, rules="tiktoken", special_ids=tok.special_ids
    )
    assert not by_text.own_merges_suffice
    text = read_sample("udhr_hi.txt")[:1500] + " " + read_sample("udhr_en.txt")[:1500]
    for piece in list(tok.piece_texts(text))[:300]:
        theirs = tuple(tok.tokens(enc.encode_ordinary(piece)))
        for t in (tok, by_text):
            steps = t.encode_trace(piece)
            assert (steps[-1].tokens if steps else tuple(t.base_tokens(piece))) == theirs, piece
    once = Tokenizer(
        config=tok.config,
        alphabet=tok.alphabet,
        merges=tok.merges,
        rules="tiktoken",
        encoding=tok.encoding.__class__(dropout_style="once"),
    )
    for t in (tok, by_text, once):
        _assert_same_ids(t, enc, t.encode(text, dropout=1e-12, seed=3), enc.encode_ordinary(text), "dropout 1e-12")
        dropped = t.encode(text, dropout=0.3, seed=3)
        assert t.decode(dropped) == text and len(dropped) > len(enc.encode_ordinary(text))


@st.composite
def _table_and_words(draw) -> tuple[list[tuple[int, int]], list[str]]:
    """A small table whose merges join any two earlier tokens (so a token's bytes often merge
    another way than its own merge: there tiktoken's rule, every split of a token merges into it,
    decides), and words over its letters, some longer than 64 bytes (the heap)."""
    pool = [bytes([b]) for b in range(256)]
    merges: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(1, 12))):
        a, b = (draw(st.sampled_from([*b"abcd", *range(256, len(pool))])) for _ in range(2))
        if pool[a] + pool[b] not in pool:
            pool.append(pool[a] + pool[b])
            merges.append((a, b))
    tokens = [t.decode() for t in pool[256:]]
    word = st.one_of(
        st.sampled_from(tokens),
        st.text(st.sampled_from("abcd"), min_size=1, max_size=90),
        st.lists(st.sampled_from(tokens), min_size=1, max_size=40).map("".join),
    )
    return merges, draw(st.lists(word, min_size=1, max_size=5))


def _bpe_by_definition(data: bytes, rank: dict[bytes, int]) -> list[int]:
    """tiktoken's merging as its definition says, without the whole-piece shortcut: join the two
    neighbours whose bytes together have the lowest rank, leftmost on a tie, until none do."""
    parts = [bytes([b]) for b in data]
    while True:
        joined = [(rank[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1) if parts[i] + parts[i + 1] in rank]
        if not joined:
            return [rank[p] for p in parts]
        _, i = min(joined)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


def _check_tiktokens_rule(merges: list[tuple[int, int]], words: list[str]) -> None:
    """Every way of merging, against tiktoken with the same ranks: encode (the piece cache, with
    the whole-piece shortcut) against ``encode_ordinary``; ``encode_bytes``, traces and dropout
    that skips nothing, which merge without the shortcut, against the definition, itself checked
    against tiktoken's ``_encode_single_piece`` on pieces that are not tokens; ``merge_rules``
    against the rule's definition. (Dropout's "once" style applies the rules in rank order, so
    here, where a merge can make a lower-ranked pair, it stops where tiktoken goes on.)"""
    cfg = TrainerConfig(pretokenizer="gpt2", unit="byte", alphabet="full-bytes", vocab_size=None, num_merges=None)
    tok = Tokenizer(
        config=cfg, alphabet=[bytes_to_display(bytes([i])) for i in range(256)], merges=merges, rules="tiktoken"
    )
    rank = {tok.token_bytes(i): i for i in range(len(tok.vocab))}
    assert len(rank) == len(tok.vocab)
    enc = tiktoken.Encoding("table", pat_str=PATTERNS["gpt2"], mergeable_ranks=rank, special_tokens={})
    text = " ".join(words)
    _assert_same_ids(tok, enc, tok.encode(text), enc.encode_ordinary(text), repr(text))
    plain = []
    for piece in tok.piece_texts(text):
        data = piece.encode()
        ref = _bpe_by_definition(data, rank)
        if data not in rank:
            assert ref == enc._encode_single_piece(data)
        _assert_same_ids(tok, enc, tok.encode_bytes(data), ref, f"encode_bytes({piece!r})")
        steps = tok.encode_trace(piece)
        assert (steps[-1].tokens if steps else tuple(tok.base_tokens(piece))) == tuple(tok.tokens(ref))
        plain += ref
    _assert_same_ids(tok, enc, tok.encode(text, dropout=1e-12, seed=1), plain, "dropout")
    splits = {
        (rank[t[:i]], rank[t[i:]]): (r - 256, r)
        for t, r in rank.items()
        for i in range(1, len(t))
        if t[:i] in rank and t[i:] in rank
    }
    assert tok.merge_rules() == splits


def test_every_split_of_a_token_merges_into_it_in_every_path():
    """bc, ab, then abc = ab + c: the bytes of "abc" merge b + c first, and a + bc is a split of
    abc too. With learned pairs only "abc" would stay [a, bc]. (In the bundled tables every
    token's bytes merge by its own merge, so they cannot tell the two rules apart.)"""
    a, b, c = b"abc"
    _check_tiktokens_rule([(b, c), (a, b), (257, c)], ["abc", "abc" * 30, "xabcab", "cabcabcabc"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=_table_and_words())
def test_tiktokens_rule_in_every_path_equals_tiktoken_on_generated_tables(table):
    _check_tiktokens_rule(*table)


def test_unknown_bytes_merge_with_nothing_under_tiktokens_rules():
    """A byte-level alphabet without some bytes: they encode as the unknown id, one per byte,
    and no merge takes them in, in the short and in the long (heap) path."""
    cfg = TrainerConfig(pretokenizer="none", unit="byte")
    tok = Tokenizer(config=cfg, alphabet=["a", "b", "c"], merges=[(0, 1), (3, 2), (2, 2)], rules="tiktoken")
    assert tok.vocab.tokens == ("a", "b", "c", "ab", "abc", "cc") and tok.unk_id == 6
    assert tok.encode("abcxabc") == [4, 6, 4]
    assert tok.encode("aéb") == [0, 6, 6, 1]
    assert tok.encode("ab" * 40 + "é" + "c" * 40) == [3] * 40 + [6, 6] + [5] * 20
    assert tok.encode_bytes(b"cc\xffab") == [5, 6, 3]
    assert tok.merge_rules() == {(0, 1): (0, 3), (3, 2): (1, 4), (2, 2): (2, 5)}  # no "bc": "abc" = "ab" + "c" only


# ---- GPT-2's files read in bulk, or merge by merge ------------------------------------------------------------
def _gpt2_files() -> tuple[str, str]:
    return tuple((PRETRAINED_DIR / "gpt2" / f).read_text(encoding="utf-8") for f in ("encoder.json", "vocab.bpe"))


def test_gpt2_files_that_differ_from_the_shipped_ones_are_read_merge_by_merge():
    """Line endings and blank lines the bulk reading does not take are read as before, to the
    same tokenizer; a merge list cut short leaves the token it no longer makes a special token,
    read in bulk or merge by merge."""
    encoder, merges = _gpt2_files()
    tok = load_pretrained("gpt2")
    for variant in (merges.replace("\n", "\r\n"), merges.replace("\n", "\n\n", 3)):
        other = tokenizer_from_gpt2(encoder, variant)
        assert (other.vocab.tokens, other.merges, other.special_ids) == (tok.vocab.tokens, tok.merges, tok.special_ids)
    cut = merges.rstrip("\n").rsplit("\n", 1)[0] + "\n"
    for variant in (cut, cut.replace("\n", "\r\n")):
        short = tokenizer_from_gpt2(encoder, variant)
        assert short.vocab.tokens == tok.vocab[:-1] and short.special_ids == {
            tok.vocab[-1]: 50255,
            "<|endoftext|>": 50256,
        }


def _swap_lines(text: str, i: int, j: int) -> str:
    lines = text.split("\n")
    lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


@pytest.mark.parametrize(
    "damage, message",
    [
        (
            lambda e, m: (e, _swap_lines(m, 1, 2)),
            "vocab.bpe line 2 makes 'Ġa' id 256, but encoder.json gives it id 257",
        ),
        (
            lambda e, m: (e, m.replace("\nĠ t\n", "\nĠ tt\n", 1)),
            "encoder.json: special token 'Ġt' has id 256, among the ids the merges make",
        ),
        (
            lambda e, m: (e.replace('"<|endoftext|>": 50256', '"<|endoftext|>": 50256.0'), m),
            "encoder.json: '<|endoftext|>' has id 50256.0, not a non-negative integer",
        ),
        (
            lambda e, m: (e.replace('"<|endoftext|>": 50256', '"<|endoftext|>": 50256, "<|x|>": 50256'), m),
            "encoder.json: '<|endoftext|>' and '<|x|>' both have id 50256",
        ),
    ],
)
def test_damaged_gpt2_files_are_refused_where_they_go_wrong(damage, message):
    encoder, merges = damage(*_gpt2_files())
    with pytest.raises(FormatError, match=re.escape(message)):
        tokenizer_from_gpt2(encoder, merges)


# ---- damaged tables ------------------------------------------------------------------------------------
_FILES = [(name, rel) for name, spec in PRETRAINED.items() for rel in spec.reads]


def _copy_tables(name: str, folder):
    for rel in PRETRAINED[name].reads:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PRETRAINED_DIR / rel, folder / rel)


@pytest.mark.parametrize("name, rel", _FILES)
def test_a_damaged_table_is_refused_by_name(name, rel, tmp_path, monkeypatch):
    _copy_tables(name, tmp_path)
    data = bytearray((tmp_path / rel).read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / rel).write_bytes(bytes(data))
    monkeypatch.setattr(pretrained_module, "PRETRAINED_DIR", tmp_path)
    monkeypatch.setattr(pretrained_module, "_loaded", {})  # a fresh cache: the real one stays clean
    with pytest.raises(FormatError) as err:
        load_pretrained(name)
    message = str(err.value)
    assert name in message and rel in message and "damaged" in message
    assert name not in pretrained_module._loaded
    # the CLI says the same in one line, status 2
    errs = io.StringIO()
    assert cli_main(["encode", "--tokenizer", name, "--text", "x"], out=io.StringIO(), err=errs) == 2
    assert errs.getvalue().count("\n") == 1 and rel in errs.getvalue() and "Traceback" not in errs.getvalue()


@pytest.mark.parametrize("name", TABLES)
def test_a_missing_table_is_refused_by_name(name, tmp_path, monkeypatch):
    monkeypatch.setattr(pretrained_module, "PRETRAINED_DIR", tmp_path)
    monkeypatch.setattr(pretrained_module, "_loaded", {})
    with pytest.raises(FormatError, match=f"cannot read the bundled {name} table"):
        load_pretrained(name)


# ---- warm_pretrained -----------------------------------------------------------------------------------
@pytest.fixture
def fresh_process(monkeypatch):
    """load_pretrained's and warm_pretrained's state as in a process that loaded nothing yet."""
    monkeypatch.setattr(pretrained_module, "_loaded", {})
    monkeypatch.setattr(pretrained_module, "_warm_names", {})
    monkeypatch.setattr(pretrained_module, "_warmer", None)


def test_warm_pretrained_loads_every_table_once_in_a_daemon_thread(fresh_process):
    thread = warm_pretrained()
    assert thread.daemon and thread is not threading.current_thread()
    thread.join(timeout=120)
    assert not thread.is_alive() and set(pretrained_module._loaded) == set(PRETRAINED)
    loaded = dict(pretrained_module._loaded)
    assert warm_pretrained() is thread and warm_pretrained(["gpt2"]) is thread  # nothing new asked: no new thread
    assert all(load_pretrained(name) is loaded[name] for name in PRETRAINED)
    with pytest.raises(ConfigError, match="unknown pretrained tokenizer"):
        warm_pretrained(["gpt3"])


def test_warm_pretrained_leaves_a_failed_load_to_load_pretrained(fresh_process, tmp_path, monkeypatch):
    monkeypatch.setattr(pretrained_module, "PRETRAINED_DIR", tmp_path)  # no tables there
    raised: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: raised.append(args.exc_value))
    thread = warm_pretrained(["cl100k_base"])
    thread.join(timeout=60)
    assert not thread.is_alive() and not raised and pretrained_module._loaded == {}
    with pytest.raises(FormatError, match="cannot read the bundled cl100k_base table"):
        load_pretrained("cl100k_base")


def test_a_loaded_table_is_served_while_another_is_loading():
    """One lock per table, and none for a table already loaded: a page asking for gpt2 never
    waits for o200k_base to finish loading in the background."""
    load_pretrained("gpt2")
    with pretrained_module._locks["o200k_base"]:  # o200k_base is being loaded elsewhere
        done = threading.Event()
        threading.Thread(target=lambda: (load_pretrained("gpt2"), done.set()), daemon=True).start()
        assert done.wait(timeout=5)
