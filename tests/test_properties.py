"""Property-based tests of the engine (hypothesis).

- decode(encode(x)) == normalize(x) for every byte-level config with the full byte alphabet;
- encode never raises, for any valid config, and unseen symbols become the unk id, counted;
- BPE-dropout: p = 0 is plain BPE, a seed makes it reproducible, p = 1 leaves the base symbols;
- training never crashes on small generated corpora, its step records are consistent, the
  tokenizer as of step k reproduces the trainer's segmentation, and the whole run equals a slow,
  obviously correct reference implementation (the seeds' recount-everything loop);
- the engine imports no UI library.
"""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
from conftest import read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import ConfigError, EncodeOptions, make_config, train
from explorer.stages.markers import apply_marker
from explorer.stages.normalizers import normalize_str
from explorer.stages.pipeline import count_words, word_symbols
from explorer.stages.pretokenizers import pre_tokenize_str, split_sequences
from explorer.stages.units import BYTE_TO_UNICODE, base_symbols

ROOT = Path(__file__).resolve().parent.parent

TRAIN_TEXT = (
    read_sample("demo_sentences.txt")
    + read_sample("mixed_emoji_multilingual.txt")[:2500]
    + read_sample("python_stdlib_sample.txt")[:2500]
    + read_sample("udhr_ru.txt")[:1000]
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text: anything (hypothesis leaves out lone surrogates), or fragments of the training text
# glued to odd characters, so that learned merges actually fire.
_TRICKY = list(" \t\n\r\x0b\x0c\x85\xa0\u2028\u3000'’sdmtlvre aAzZ0159١२²½ǅʰ\u0301!?.,/-_👍🏽é中ßİΣ\ufb01")
_fragment = st.builds(lambda a, n: TRAIN_TEXT[a : a + n], st.integers(0, len(TRAIN_TEXT) - 1), st.integers(1, 50))
TEXT = st.one_of(
    st.text(max_size=80),
    st.lists(st.one_of(_fragment, st.text(st.sampled_from(_TRICKY), max_size=8), st.text(max_size=4)), max_size=6).map(
        "".join
    ),
)


@cache
def _trained(cfg, text: str = TRAIN_TEXT, encoding: EncodeOptions = EncodeOptions()):
    return train(text, cfg, encoding=encoding)


@cache  # one tokenizer a setting for all its examples (building one took ~3 ms, 1,800 times); its
# piece cache then holds the pieces of earlier examples, and each new piece still goes the full way
def _tok(cfg, encoding: EncodeOptions = EncodeOptions()):
    return _trained(cfg, encoding=encoding).tokenizer()


# ---- round trip ----------------------------------------------------------------------------------
def _byte(preset="gpt2", **kw):
    kw.setdefault("vocab_size", None)
    kw.setdefault("num_merges", 400)
    return make_config(preset, alphabet="full-bytes", **kw)


ROUND_TRIP = {
    "gpt2-text-hf": _byte(tie_break="hf"),
    "gpt2-lines-first-seen": _byte(sequences="lines"),
    "gpt2-documents-subword-nmt": _byte(sequences="documents", tie_break="subword-nmt"),
    "gpt2-first-seen-order": _byte(alphabet_order="first-seen", special_tokens=("<|endoftext|>", "<pad>")),
    "none-first-seen": _byte(pretokenizer="none"),  # long pieces: the heap merge path
    "none-lines-hf": _byte(pretokenizer="none", sequences="lines", tie_break="hf"),
    "bytes-preset": _byte("bytes", vocab_size=600, num_merges=None),  # byte order, ids not reused
    "cl100k-hf": _byte("gpt4", tie_break="hf"),
    "cl100k-lines-subword-nmt": _byte("gpt4", sequences="lines", tie_break="subword-nmt"),
    "o200k-first-seen": _byte(pretokenizer="o200k"),
    "o200k-hf-no-reuse": _byte(pretokenizer="o200k", tie_break="hf", reuse_ids=False),
    "regex-words": _byte(pretokenizer="regex", pattern=r"\w+|\W"),
    "regex-gaps-kept": _byte(pretokenizer="regex", pattern=r"[a-z]+", tie_break="hf"),
    "nfc": _byte(normalizer="nfc"),
    "nfkc": _byte(normalizer="nfkc", tie_break="hf"),
    "lowercase": _byte(normalizer="lowercase", sequences="lines"),
    "collapse-whitespace": _byte(normalizer="collapse-whitespace", pretokenizer="none"),
}


@SETTINGS
@given(text=TEXT)
@pytest.mark.parametrize("name", list(ROUND_TRIP))
def test_round_trip(name, text):
    cfg = ROUND_TRIP[name]
    tok = _tok(cfg)
    assert tok.num_merges > 0
    expected = normalize_str(text, normalizer=cfg.normalizer)
    ids = tok.encode(text)
    assert tok.unk_id not in ids  # the full byte alphabet covers everything
    assert tok.decode(ids) == expected
    assert tok.decode(tok.encode(text, dropout=0.3, seed=7)) == expected


# ---- encode never raises; unknown symbols ---------------------------------------------------------
UNITS_AND_MARKERS = [("byte", "none")] + [("char", m) for m in ("none", "eow", "eow-glued", "g-suffix", "sp-prefix")]
PATTERNS_FOR_REGEX = [
    r"\w+|\W",
    r"\s+|\S+",
    r"[a-z]+",
    r".",
    r"\w+(?:'\w+)?",
]  # none matches the empty string (refused)


@st.composite
def configs(draw, *, special_tokens=None):
    """Any valid TrainerConfig, each dimension sampled."""
    unit, marker = draw(st.sampled_from(UNITS_AND_MARKERS))
    pre = draw(st.sampled_from(["none", "whitespace", "gpt2", "cl100k", "o200k", "regex"]))
    byte = unit == "byte"
    if special_tokens is None:
        special_tokens = st.sampled_from([(), ("<|endoftext|>",), ("<s>", "</s>", "<unk>"), ("a",), ("Ġ", "e s")])
    return make_config(
        None,
        normalizer=draw(st.sampled_from(["none", "nfc", "nfkc", "lowercase", "collapse-whitespace"])),
        pretokenizer=pre,
        pattern=draw(st.sampled_from(PATTERNS_FOR_REGEX)) if pre == "regex" else None,
        sequences=draw(st.sampled_from(["text", "lines", "documents"])),
        unit=unit,
        marker=marker,
        alphabet=draw(st.sampled_from(["present", "full-bytes"] if byte else ["present"])),
        alphabet_order=draw(st.sampled_from(["sorted", "first-seen", "byte"] if byte else ["sorted", "first-seen"])),
        special_tokens=draw(special_tokens),
        tie_break=draw(st.sampled_from(["first-seen", "hf", "subword-nmt"])),
        vocab_size=draw(st.one_of(st.none(), st.integers(1, 500))),
        num_merges=draw(st.one_of(st.none(), st.integers(0, 80))),
        min_frequency=draw(st.integers(0, 3)),
        reuse_ids=draw(st.booleans()),
    )


def _pieces(text: str, cfg) -> list[str]:
    """The pieces encode sees ("documents" is cut like "lines" when encoding)."""
    mode = "text" if cfg.sequences == "text" else "lines"
    return [
        p.text
        for seq in split_sequences(normalize_str(text, normalizer=cfg.normalizer), mode=mode)
        for p in pre_tokenize_str(seq, pretokenizer=cfg.pretokenizer, pattern=cfg.pattern)
    ]


SMALL_TRAIN_TEXT = read_sample("demo_sentences.txt") + read_sample("demo_hug_pug.txt")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(), text=TEXT)
def test_encode_never_raises(cfg, text):
    tok = _trained(cfg, SMALL_TRAIN_TEXT).tokenizer()
    ids = tok.encode(text)
    pieces = _pieces(text, cfg)
    assert all(0 <= i < len(tok.vocab) or i == tok.unk_id for i in ids)
    assert len(ids) >= len(pieces)  # every piece gives at least one id: nothing is dropped
    assert (len(ids) > 0) == (len(pieces) > 0)
    assert sum(len(p.ids) for p in tok.encode_pieces(text)) == len(ids)
    assert len(tok.tokens(ids)) == len(ids)
    assert isinstance(tok.decode(ids), str)
    if cfg.unit == "byte" and cfg.alphabet == "full-bytes":
        assert tok.unk_id not in ids


def _my_symbols(word: str, unit: str, marker: str) -> list[str]:
    """Base symbols, written here independently of the engine."""
    if unit == "byte":
        return [BYTE_TO_UNICODE[b] for b in word.encode("utf-8")]
    chars = list(word)
    if marker == "eow":
        return chars + ["</w>"]
    if marker == "eow-glued":
        return chars[:-1] + [chars[-1] + "</w>"]
    if marker == "g-suffix":
        return chars + ["Ġ"]
    if marker == "sp-prefix":
        return ["▁"] + chars
    return chars


UNK_CONFIGS = {
    **{
        f"char-{m}": make_config("hf-course", marker=m, vocab_size=300)
        for m in ("none", "eow", "eow-glued", "g-suffix", "sp-prefix")
    },
    "char-nfkc-first-seen": make_config("suffix-marker", normalizer="nfkc", vocab_size=300),
    "byte-present": make_config("gpt2", pretokenizer="whitespace", vocab_size=300),
}


@SETTINGS
@given(text=TEXT)
@pytest.mark.parametrize("name", list(UNK_CONFIGS))
def test_unseen_symbols_become_unk_and_are_counted(name, text):
    cfg = UNK_CONFIGS[name]
    tok = _tok(cfg)
    known = set(tok.vocab)
    words = normalize_str(text, normalizer=cfg.normalizer).split()
    symbols = [s for w in words for s in _my_symbols(w, cfg.unit, cfg.marker)]
    ids = tok.encode(text)
    assert ids.count(tok.unk_id) == sum(s not in known for s in symbols)
    assert (len(ids) > 0) == (len(words) > 0)
    assert all(i < len(tok.vocab) for i in ids if i != tok.unk_id)


@pytest.mark.parametrize("unit", ["byte", "char"])
def test_learned_token_spelled_like_unk_token(unit):
    if unit == "byte":
        cfg = make_config(
            "gpt2", pretokenizer="whitespace", alphabet="full-bytes", special_tokens=(), vocab_size=None, num_merges=4
        )
    else:
        cfg = make_config("hf-course", special_tokens=(), vocab_size=None, num_merges=4)
    tok = train("<unk> " * 5, cfg).tokenizer()
    assert tok.vocab[-1] == "<unk>"  # the four merges spell it
    ids = tok.encode("<unk>")
    assert tok.decode(ids) == "<unk>"
    if unit == "char":
        assert tok.encode("z") != ids  # an unseen char is not the learned token "<unk>"


# ---- dropout ---------------------------------------------------------------------------------------
DROPOUT_CONFIGS = {
    k: (ROUND_TRIP[k], EncodeOptions()) for k in ("gpt2-text-hf", "none-first-seen", "o200k-hf-no-reuse")
} | {
    "char-eow": (make_config("sennrich", num_merges=300), EncodeOptions()),
    "char-g-suffix-once": (make_config("suffix-marker", vocab_size=400), EncodeOptions(dropout_style="once")),
    "char-g-suffix-retry": (make_config("suffix-marker", vocab_size=400), EncodeOptions()),
}


@SETTINGS
@given(text=TEXT, seed=st.integers(0, 2**32))
@pytest.mark.parametrize("name", list(DROPOUT_CONFIGS))
def test_dropout(name, text, seed):
    cfg, encoding = DROPOUT_CONFIGS[name]
    tok = _tok(cfg, encoding)
    plain = tok.encode(text)
    assert tok.encode(text, dropout=0.0, seed=seed) == plain
    assert tok.encode(text, dropout=0.5, seed=seed) == tok.encode(text, dropout=0.5, seed=seed)
    # a dropout too small to ever fire runs the heap merge loop: it must agree with the fast path
    assert tok.encode(text, dropout=1e-300, seed=seed) == plain
    none = tok.encode(text, dropout=1.0, seed=seed)
    base = [t for p in tok.encode_pieces(text) for t in tok.base_tokens(p.text)]
    assert tok.tokens(none) == base
    n_base = tok.n_special + len(tok.alphabet)
    assert all(i < n_base or i == tok.unk_id for i in none)


def test_dropout_changes_something():
    tok = _tok(ROUND_TRIP["gpt2-text-hf"])
    text = TRAIN_TEXT[:3000]
    outs = {tuple(tok.encode(text, dropout=0.2, seed=s)) for s in range(5)}
    assert len(outs) > 1 and tuple(tok.encode(text)) not in outs


# ---- training ---------------------------------------------------------------------------------------
CORPUS = st.one_of(
    st.text(max_size=300),
    st.text(st.sampled_from(list("aab bc\n'lowerst Ł😀é\u0301")), max_size=300),
    st.lists(
        st.sampled_from(["low", "lower", "newest", "widest", "aaa", "abab", "</w>", "<s>", "e s", "\n", " "]),
        max_size=60,
    ).map(" ".join),
)


def _segment(tok, piece: str) -> tuple[str, ...]:
    """The tokenizer's segmentation of one piece, without pre-tokenizing it again; the traced
    (heap) merge loop must agree with the fast one."""
    seg = tuple(tok.tokens(tok.encode_piece(piece)))
    trace = tok.encode_trace(piece)
    assert seg == (trace[-1].tokens if trace else tuple(tok.base_tokens(piece)))
    return seg


def _is_one_piece(word: str, cfg) -> bool:
    return _pieces(word, cfg) == [word]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(), text=CORPUS, top_k=st.sampled_from([0, 1, 3, 20]), data=st.data())
def test_training_invariants(cfg, text, top_k, data):
    t = train(text, cfg, top_k=top_k)
    words = count_words(text, cfg)
    assert list(words) == t.words and list(words.values()) == t.freqs
    assert t.initial_tokens == sum(len(_my_symbols(w, cfg.unit, cfg.marker)) * f for w, f in words.items())
    assert t.stop_reason in {"num_merges", "vocab_size", "no pairs left", "min_frequency"}

    prev = t.initial_tokens
    n_initial = len(t.vocab) - sum(not r.reused for r in t.records)  # special tokens + alphabet
    strings = set(t.vocab[:n_initial])
    next_id = n_initial
    for k, r in enumerate(t.records, 1):
        assert r.step == k
        assert (r.left_id, r.right_id) == t.merges[k - 1]
        assert (r.left, r.right) == (t.vocab[r.left_id], t.vocab[r.right_id])
        assert r.token == r.left + r.right == t.vocab[r.token_id]
        assert r.reused == (cfg.reuse_ids and r.token in strings)
        if not r.reused:
            assert r.token_id == next_id
            next_id += 1
        strings.add(r.token)
        assert 0 < r.replaced <= r.count
        assert r.count >= cfg.min_frequency
        assert r.tokens_after == prev - r.replaced
        assert 0 < r.words_affected <= len(words)
        prev = r.tokens_after
        assert len(r.top_pairs) <= top_k
        if top_k:
            top = r.top_pairs
            assert (top[0].left_id, top[0].right_id, top[0].count) == (r.left_id, r.right_id, r.count)
            assert [p.count for p in top] == sorted((p.count for p in top), reverse=True)
            assert list(r.ties) == [(p.left, p.right) for p in top[1:] if p.count == r.count]
            assert r.n_tied >= len(r.ties)
            if cfg.tie_break == "subword-nmt":
                assert all((r.left, r.right) >= tie for tie in r.ties)
    assert prev == t.tokens
    if t.stop_reason == "num_merges":
        assert len(t.merges) == cfg.num_merges
    if t.stop_reason == "vocab_size":
        assert len(t.vocab) >= cfg.vocab_size

    # every training word, segmented by the final tokenizer, spells its symbols; the fast encode
    # path agrees with the traced one on words that are a piece of their own
    tok = t.tokenizer()
    for w in words:
        seg = _segment(tok, w)
        assert "".join(seg) == "".join(word_symbols(w, cfg))
        if _is_one_piece(w, cfg):
            assert tuple(tok.tokens(tok.encode(w))) == seg

    # the tokenizer as of step k reproduces the trainer's token count after step k. This holds
    # only while no merge reused an existing id: a reused id may already have merges of lower
    # rank, which the tokenizer applies at once but the trainer only learns (again) later.
    n = len(t.merges)
    ks = {0, n, data.draw(st.integers(0, n), label="k")}
    for k in sorted(ks):
        tok_k = t.tokenizer(k)
        assert tok_k.vocab.tokens == t.tokenizer().truncate(k).vocab.tokens
        total = sum(len(_segment(tok_k, w)) * f for w, f in words.items())
        expected = t.initial_tokens if k == 0 else t.records[k - 1].tokens_after
        if not any(r.reused for r in t.records[:k]):
            assert total == expected, k


def test_token_count_with_reused_ids():
    """The counter-example behind the caveat above: "</w>" spelled out in the text is merged into
    the marker's own id at step 4, and the tokenizer then applies merge 1 ("a" + "</w>") at once."""
    text = "a a a a a a a</w> x</w> y</w> z</w>"
    cfg = make_config("sennrich", num_merges=None, vocab_size=None)
    reused = train(text, cfg)
    assert [r.reused for r in reused.records[:4]] == [False, False, False, True]
    words = count_words(text, cfg)
    count = sum(len(_segment(reused.tokenizer(4), w)) * f for w, f in words.items())
    assert count == reused.records[3].tokens_after - 1  # one merge ahead of the trainer
    # without reuse the literal "</w>" is a token of its own and the two views agree
    fresh = train(text, cfg.replace(reuse_ids=False))
    for k in range(len(fresh.merges) + 1):
        count = sum(len(_segment(fresh.tokenizer(k), w)) * f for w, f in words.items())
        assert count == (fresh.records[k - 1].tokens_after if k else fresh.initial_tokens)


def _reference_train(text: str, cfg) -> tuple[list[tuple], list[str], str]:
    """The seeds' loop: recount every pair of every word before each merge, pick the winner by
    the tie-break rule, merge left to right everywhere. Returns records, vocab, stop reason."""
    words = count_words(text, cfg)
    freqs = list(words.values())
    seen = list(dict.fromkeys(s for w in words for s in _my_symbols(w, cfg.unit, cfg.marker)))
    alphabet = list(seen)
    if cfg.alphabet == "full-bytes":
        alphabet += [c for c in (BYTE_TO_UNICODE[b] for b in range(256)) if c not in seen]
    if cfg.alphabet_order == "sorted":
        alphabet.sort()
    elif cfg.alphabet_order == "byte":
        byte_of = {c: b for b, c in BYTE_TO_UNICODE.items()}
        alphabet.sort(key=byte_of.__getitem__)
    vocab: list[str] = []
    ids: dict[str, int] = {}
    for s in [*cfg.special_tokens, *alphabet]:
        if s not in ids:
            ids[s] = len(vocab)
            vocab.append(s)
    # HF's ids: special tokens, then the alphabet sorted by code point, then merges
    hf_rank = {i: i for i in range(len(cfg.special_tokens))}
    for pos, s in enumerate(sorted(set(alphabet) - set(cfg.special_tokens))):
        hf_rank[ids[s]] = len(cfg.special_tokens) + pos
    segs = [[ids[s] for s in _my_symbols(w, cfg.unit, cfg.marker)] for w in words]
    tokens = sum(len(s) * f for s, f in zip(segs, freqs))
    records = []
    while True:
        if cfg.num_merges is not None and len(records) >= cfg.num_merges:
            return records, vocab, "num_merges"
        if cfg.vocab_size is not None and len(vocab) >= cfg.vocab_size:
            return records, vocab, "vocab_size"
        counts: dict[tuple[int, int], int] = {}
        for seg, f in zip(segs, freqs):
            for pair in zip(seg, seg[1:]):
                counts[pair] = counts.get(pair, 0) + f
        if not counts:
            return records, vocab, "no pairs left"
        best = max(counts.values())
        tied = [p for p, c in counts.items() if c == best]  # in order of first occurrence
        if cfg.tie_break == "first-seen":
            pair = tied[0]
        elif cfg.tie_break == "hf":
            pair = min(tied, key=lambda p: (hf_rank[p[0]], hf_rank[p[1]]))
        else:  # subword-nmt: max over the strings; equal strings (no reuse) -> smaller ids
            pair = min(tied, key=lambda p: (_desc(vocab[p[0]]), _desc(vocab[p[1]]), p))
        if best < cfg.min_frequency:
            return records, vocab, "min_frequency"
        a, b = pair
        new_str = vocab[a] + vocab[b]
        reused = cfg.reuse_ids and new_str in ids
        if reused:
            new = ids[new_str]
        else:
            new = len(vocab)
            vocab.append(new_str)
            ids.setdefault(new_str, new)
            hf_rank[new] = new
        replaced = affected = 0
        for wi, seg in enumerate(segs):
            out, i, hits = [], 0, 0
            while i < len(seg):
                if i + 1 < len(seg) and seg[i] == a and seg[i + 1] == b:
                    out.append(new)
                    i += 2
                    hits += 1
                else:
                    out.append(seg[i])
                    i += 1
            segs[wi] = out
            replaced += hits * freqs[wi]
            affected += hits > 0
        tokens -= replaced
        records.append((a, b, new, best, replaced, tokens, reused, len(tied) - 1, affected))


def _desc(s: str) -> tuple[int, ...]:
    return (*(-ord(c) for c in s), 1)


# Special tokens that are also alphabet symbols are left out here (the reference does not model
# HF's id rule for them); test_oracles checks that case against HF itself.
_NO_ALPHABET_SPECIALS = st.sampled_from([(), ("<|endoftext|>",), ("<s>", "</s>", "<unk>"), ("e s", "ab")])


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs(special_tokens=_NO_ALPHABET_SPECIALS), text=CORPUS)
def test_trainer_equals_reference_implementation(cfg, text):
    t = train(text, cfg)
    records, vocab, stop = _reference_train(text, cfg)
    ours = [
        (r.left_id, r.right_id, r.token_id, r.count, r.replaced, r.tokens_after, r.reused, r.n_tied, r.words_affected)
        for r in t.records
    ]
    assert ours == records
    assert t.vocab == vocab
    assert t.stop_reason == stop


@pytest.mark.parametrize(
    "bad",
    [
        dict(unit="byte", marker="eow"),
        dict(unit="char", alphabet="full-bytes"),
        dict(unit="char", alphabet_order="byte"),
        dict(pretokenizer="regex", pattern="("),
        dict(pretokenizer="regex", pattern=None),
        dict(special_tokens=("a", "a")),
        dict(vocab_size=0),
        dict(min_frequency=-1),
        dict(tie_break="random"),
    ],
)
def test_invalid_configs_raise_config_error(bad):
    with pytest.raises(ConfigError):
        make_config(None, **bad)


# ---- refusals are the engine's own errors -----------------------------------------------------
@pytest.mark.parametrize(
    "refusal",
    [
        lambda: normalize_str("x", normalizer="rot13"),
        lambda: base_symbols("x", "nibble"),
        lambda: apply_marker(["x"], "</x>"),
        lambda: (
            train("ab ab", make_config("bytes", num_merges=1, vocab_size=None)).tokenizer().encode("ab", dropout=1.5)
        ),
        lambda: (
            train("ab ab", make_config("bytes", num_merges=1, vocab_size=None)).tokenizer().decode([0], errors="loud")
        ),
        lambda: train("ab ab", make_config("sennrich", num_merges=1)).tokenizer().encode_bytes(b"ab"),
    ],
    ids=["normalizer", "unit", "marker", "dropout", "errors", "encode_bytes on characters"],
)
def test_the_engine_refuses_bad_input_with_a_config_error_fit_for_a_page(refusal):
    with pytest.raises(ConfigError) as caught:
        refusal()
    assert str(caught.value) and "\n" not in str(caught.value)


# ---- the engine imports no UI library ---------------------------------------------------------
def test_engine_imports_no_ui_library():
    """Every engine module (all but explorer.ui and the ``python -m explorer`` entry point)."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import explorer\n"
        "names = [m.name for m in pkgutil.walk_packages(explorer.__path__, 'explorer.')\n"
        "         if m.name not in ('explorer.ui', 'explorer.__main__') and not m.name.startswith('explorer.ui.')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "assert len(names) >= 8, names\n"
        "bad = sorted(m for m in ('streamlit', 'pandas', 'altair') if m in sys.modules)\n"
        "assert not bad, bad\n"
        "print(len(names))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("preset", ["gpt2", "bytes", "gpt4"])
def test_lone_surrogates_encode_as_their_bytes_instead_of_raising(preset):
    tok = train("abc abd", make_config(preset, alphabet="full-bytes", vocab_size=None, num_merges=2)).tokenizer()
    ids = tok.encode("a\ud800b")
    assert len(ids) >= 5  # a, the surrogate's three bytes, b
    assert tok.decode(ids).startswith("a") and tok.decode(ids).endswith("b")
