"""Evaluation (explorer/analysis/evaluate.py) and ``python -m explorer evaluate``.

What is checked against what:

- ``replay`` against the encoder itself: its count after k merges equals
  ``len(tokenizer.truncate(k).encode(text))``, for tokenizers trained with every preset on every
  sample corpus, for the bundled gpt2 / cl100k_base / o200k_base, for generated text, for any
  mapping of pieces, and when a merge reuses an existing token's id;
- ``replay`` under tiktoken's rules against tiktoken itself, on small rank tables whose
  truncations are tiktoken Encodings (the whole-piece rule included);
- ``evaluate`` against tiktoken's own Encodings (built offline from the bundled files through
  ``tiktoken_ext.openai_public``) on every sample corpus, bytes / characters / words counted here
  independently;
- the CLI's JSON lines (keys, order, values, ``--curve``) against ``evaluate`` and truncated
  encodes, in process and once through ``python -m explorer``; its errors (status 2, one line);
- one hand-computed example (Sennrich et al.'s low / lower / newest / widest).
"""

from __future__ import annotations

import io
import json
import math
import subprocess
import sys
from collections import Counter
from functools import cache

import pytest
import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public
from conftest import ROOT, SAMPLE_FILES, SAMPLES, read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pretrained import _bundled_file  # tiktoken's downloads answered from the bundled files

from explorer import PRESETS, Tokenizer, Trainer, TrainerConfig, corpus_config, load_pretrained, make_config, train
from explorer.analysis.evaluate import Evaluation, curve, curve_points, evaluate, piece_counts, replay
from explorer.analysis.fairness import renyi_efficiency
from explorer.bpe.ranks import tokenizer_from_ranks
from explorer.cli import main
from explorer.formats.pretrained import PRETRAINED
from explorer.formats.trace import load_tokenizer
from explorer.stages.pipeline import count_words
from explorer.stages.pretokenizers import PATTERNS
from explorer.stages.units import bytes_to_display

KEYS = [
    "file",
    "bytes",
    "chars",
    "words",
    "tokens",
    "unk",
    "bytes_per_token",
    "chars_per_token",
    "tokens_per_word",
    "renyi_efficiency",
    "shortest_tokens",  # added after the others: a reader of the JSON finds every older key in its place
]
TABLES = list(PRETRAINED)
UDHR = sorted(name for name in SAMPLE_FILES if name.startswith("udhr_"))
UDHR_EN = read_sample("udhr_en.txt")
PREFIX = 20_000  # characters: the big corpora (up to 1.1 MB) are cut here where a test encodes them many times


def _prefix(name: str) -> str:
    return read_sample(name)[:PREFIX]


def _replayed(tok: Tokenizer, text: str) -> list[int]:
    return replay(tok, piece_counts(tok, text))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# ---- replay against truncated encodes: tokenizers trained with every preset ----------------------------
@cache
def _trained_on_udhr_en(preset: str) -> Tokenizer:
    cfg = corpus_config(preset, num_merges=300, vocab_size=None)
    return Trainer(count_words(UDHR_EN, cfg), cfg, encoding=PRESETS[preset].encoding).run().tokenizer()


@pytest.mark.parametrize("preset", list(PRESETS))
def test_replay_count_after_k_merges_equals_encoding_with_the_first_k_merges(preset):
    # Every preset but "bytes" trains with reuse_ids=True: a merge whose string already is a token
    # takes that token's id. The replay runs the encoder's greedy rule (lowest rank, leftmost
    # first), not the trainer's sequential one, so it is exact for those presets too. No merge
    # of these 300 on udhr_en happens to reuse an id; the next two tests make merges that do.
    assert PRESETS[preset].config.reuse_ids == (preset != "bytes")
    tok = _trained_on_udhr_en(preset)
    n = tok.num_merges
    assert n == 300
    # each truncation made once for every corpus (its pieces then merged once, not once a corpus)
    truncated = {k: tok.truncate(k) for k in (0, 1, 2, 37, n // 2, n - 1, n)}
    for name in SAMPLE_FILES:
        text = _prefix(name)
        counts = _replayed(tok, text)
        assert len(counts) == n + 1
        assert counts[-1] == len(tok.encode(text)), name
        assert {k: counts[k] for k in truncated} == {k: len(t.encode(text)) for k, t in truncated.items()}, name


@pytest.mark.parametrize("preset", [p for p in PRESETS if PRESETS[p].config.reuse_ids])
def test_replay_follows_the_encoder_when_a_merge_reuses_a_special_tokens_id(preset):
    """Merge 1, "a" + "b", makes the string of the special token "ab" and takes its id; merge 0,
    that special + "c", then applies at once (a pair of a lower rank than the merge that made
    it). The merges are written here: a trainer that cuts special tokens out of its corpus never
    learns such a merge."""
    cfg = corpus_config(preset, special_tokens=("ab",))
    alphabet = train("a b c", cfg.replace(num_merges=0)).alphabet
    special, a, b, c = map(Tokenizer(config=cfg, alphabet=alphabet, merges=[]).token_to_id, ("ab", "a", "b", "c"))
    tok = Tokenizer(config=cfg, alphabet=alphabet, merges=[(special, c), (a, b)], encoding=PRESETS[preset].encoding)
    assert tok.merged_ids[1] == special
    text = "abc cab abcabc"
    assert tok.tokens(tok.encode(text))[:1] == ["abc"]
    counts = _replayed(tok, text)
    assert counts == [len(tok.truncate(k).encode(text)) for k in range(3)]
    assert counts[1] - counts[2] == 7  # "ab" four times, then "ab" + "c" three times


def test_replay_follows_the_encoder_when_a_merge_reuses_an_id():
    """A literal "</w>" in the text is merged into the marker's own id at step 4; the encoder
    then applies merge 1 ("a" + "</w>") at once, one merge ahead of the trainer's count. The
    replay counts what the encoder does."""
    text = "a a a a a a a</w> x</w> y</w> z</w>"
    trainer = train(text, make_config("sennrich", num_merges=None, vocab_size=None))
    assert [r.reused for r in trainer.records[:4]] == [False, False, False, True]
    tok = trainer.tokenizer()
    counts = _replayed(tok, text)
    assert counts == [len(tok.truncate(k).encode(text)) for k in range(tok.num_merges + 1)]
    assert counts[4] == trainer.records[3].tokens_after - 1


# ---- replay against truncated encodes: the bundled tokenizers --------------------------------------------
@cache
def _pretrained_truncated(name: str, k: int) -> Tokenizer:
    return load_pretrained(name).truncate(k)


@pytest.mark.parametrize("corpus", UDHR + ["mixed_emoji_multilingual.txt"])
@pytest.mark.parametrize("name", TABLES)
def test_replay_of_a_bundled_tokenizer_equals_its_truncations(name, corpus):
    tok = load_pretrained(name)
    text = read_sample(corpus)
    counts = _replayed(tok, text)
    assert len(counts) == tok.num_merges + 1
    for k in (0, 255, 1000, 20_000):
        assert counts[k] == len(_pretrained_truncated(name, k).encode(text)), k
    # truncate(num_merges) keeps every merge: it is the tokenizer itself (built again it costs seconds)
    assert counts[tok.num_merges] == counts[-1] == len(tok.encode(text))
    assert counts[0] == len(text.encode("utf-8"))  # no merge: one token per byte


def _tiktoken_counts(tokens: list[bytes], text: str) -> list[int]:
    """tiktoken's token count of ``text`` with the table (GPT-2's pattern) cut after each number
    of merges."""
    out = []
    for k in range(len(tokens) - 255):
        ranks = {t: r for r, t in enumerate(tokens[: 256 + k])}
        enc = tiktoken.Encoding(f"first-{k}", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={})
        out.append(len(enc.encode_ordinary(text)))
    return out


def test_a_piece_that_is_a_token_counts_as_one_from_that_tokens_rank_on():
    """tiktoken takes a piece that is itself a token whole. Here "abcd" (= "ab" + "cd", rank 3)
    is never reached by merging: "bc" (rank 0) merges first and leaves a, bc, d, which no rule
    joins. (In the bundled gpt2, cl100k_base and o200k_base tables merging always reaches such a
    piece, so only a table like this one shows the rule.)"""
    tokens = [bytes([b]) for b in range(256)] + [b"bc", b"ab", b"cd", b"abcd"]
    tok = tokenizer_from_ranks(tokens, pretokenizer="gpt2")  # as the bundled tables are loaded
    assert tok.merges[3] == (257, 258)
    assert tok.whole_token("abcd") == 259
    assert tok.encode_trace("abcd")[-1].tokens == ("a", "bc", "d")  # merging alone stops here
    assert replay(tok, {"abcd": 1}) == [4, 3, 3, 3, 1]
    text = "abcd abcd\nabcd xabcd"
    counts = _replayed(tok, text)
    assert counts == _tiktoken_counts(tokens, text) == [len(tok.truncate(k).encode(text)) for k in range(5)]
    assert counts == [20, 16, 16, 16, 12]  # bc in four places; then the two pieces "abcd" are one token each


@pytest.mark.parametrize(
    "table, piece",
    [
        # "cc" (rank 0) first, then "cd" (rank 3) makes the pair (cc, cd) = "cccd", rank 2, on its left
        ([b"cc", b"ccd", b"cccd", b"cd"], "xcccd"),
        # "aa" (rank 0) first, then "aaa" (rank 3) makes the pair (aaa, b) = "aaab", rank 2, on its right
        ([b"aa", b"aab", b"aaab", b"aaa"], "xaaab"),
    ],
    ids=["on-the-left", "on-the-right"],
)
def test_a_merge_that_makes_a_lower_ranked_pair_is_followed_by_it_at_once(table, piece):
    """With tiktoken's rules the ranks applied to a piece need not increase: a merge can make a
    pair of a lower rank, which the encoder merges next. Only the tokenizer with every merge
    does both; "x" keeps the piece from being a token itself."""
    tokens = [bytes([b]) for b in range(256)] + table
    tok = tokenizer_from_ranks(tokens, pretokenizer="gpt2")
    ranks = [step.rank for step in tok.encode_trace(piece)]
    assert ranks == [0, 3, 2]
    assert replay(tok, {piece: 1}) == [5, 4, 4, 4, 2]
    text = f"{piece} {piece}\n{piece[1:]}"
    assert (
        _replayed(tok, text) == _tiktoken_counts(tokens, text) == [len(tok.truncate(k).encode(text)) for k in range(5)]
    )


# ---- evaluate against tiktoken itself -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiktoken_encoding(tmp_path_factory):
    """name -> tiktoken's own Encoding (its definition in ``tiktoken_ext.openai_public``: its
    pattern, special tokens and ranks), its downloads answered from the bundled files, which
    tiktoken checks against the sha256 it expects; an empty cache folder of our own."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    built: dict[str, tiktoken.Encoding] = {}

    def get(name: str) -> tiktoken.Encoding:
        if name not in built:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(tiktoken.load, "read_file", _bundled_file)
                mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
                built[name] = tiktoken.Encoding(**getattr(tiktoken_ext.openai_public, name)())
        return built[name]

    return get


@pytest.mark.parametrize("corpus", SAMPLE_FILES)
@pytest.mark.parametrize("name", TABLES)
def test_evaluate_counts_equal_tiktokens_on_every_sample_corpus(name, corpus, tiktoken_encoding):
    text = read_sample(corpus)
    got = evaluate(load_pretrained(name), text, shortest=True)
    ids = tiktoken_encoding(name).encode_ordinary(text)
    tokens = len(ids)
    n_bytes, chars, words = len(text.encode("utf-8")), len(text), len(text.split())
    renyi = renyi_efficiency(ids)
    fewest = got.shortest_tokens  # no reference has it: tests/test_shortest.py checks it by brute force
    assert got == Evaluation(
        bytes=n_bytes, chars=chars, words=words, tokens=tokens, unk=0, renyi_efficiency=renyi, shortest_tokens=fewest
    )
    assert fewest is not None and len(text.split()) <= fewest <= tokens
    assert got.bytes_per_token == n_bytes / tokens
    assert got.chars_per_token == chars / tokens
    assert got.tokens_per_word == tokens / words


def test_words_are_split_on_any_unicode_whitespace_and_unk_counts_unknown_symbols():
    tok = _trained_on_udhr_en("sennrich")  # characters: what udhr_en lacks is unknown
    text = "a\u3000b\u2028c\x85d\te\r\nf  人権 g"
    got = evaluate(tok, text)
    assert (got.words, got.chars, got.bytes) == (8, len(text), len(text.encode()))
    assert got.unk == 2 == tok.encode(text).count(tok.unk_id)


# ---- generated text -----------------------------------------------------------------------------------------
TRAIN_TEXT = read_sample("demo_sentences.txt") + read_sample("mixed_emoji_multilingual.txt")[:2500] + UDHR_EN[:3000]
_ODD = list(" \n\r\t\u3000\u2028\x85'sdtle aAzZ0159\u0301\u0308\u20dd👍🏽👩‍👩‍👧é中ßΣ\ufb01")
_fragment = st.builds(lambda a, n: TRAIN_TEXT[a : a + n], st.integers(0, len(TRAIN_TEXT) - 1), st.integers(1, 40))
TEXT = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(_fragment, st.text(st.sampled_from(_ODD), max_size=6), st.text(max_size=4)), max_size=6).map(
        "".join
    ),
)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CHAR_PRESETS = [p for p in PRESETS if PRESETS[p].config.unit == "char"]
BYTE_PRESETS = [p for p in PRESETS if PRESETS[p].config.unit == "byte"]


@cache
def _small(preset: str) -> Tokenizer:
    cfg = corpus_config(preset, num_merges=150, vocab_size=None)
    return train(TRAIN_TEXT, cfg, encoding=PRESETS[preset].encoding).tokenizer()


@SETTINGS
@given(text=TEXT, data=st.data())
@pytest.mark.parametrize("preset", CHAR_PRESETS + BYTE_PRESETS)
def test_replay_equals_truncated_encodes_on_generated_text(preset, text, data):
    tok = _small(preset)
    counts = _replayed(tok, text)
    k = data.draw(st.integers(0, tok.num_merges), label="k")
    assert len(counts) == tok.num_merges + 1
    assert counts[-1] == len(tok.encode(text))
    assert counts[k] == len(tok.truncate(k).encode(text))


@SETTINGS
@given(pieces=st.dictionaries(st.one_of(st.just(""), TEXT), st.integers(1, 5), max_size=5), data=st.data())
@pytest.mark.parametrize("preset", ["sennrich", "gpt2"])
def test_replay_of_any_pieces_is_the_sum_of_their_encodings(preset, pieces, data):
    """``replay`` takes any mapping, not only ``piece_counts``'s: empty pieces and pieces the
    pre-tokenizer would have split included."""
    tok = _small(preset)
    k = data.draw(st.sampled_from([0, 1, tok.num_merges // 2, tok.num_merges]), label="k")
    tok_k = tok.truncate(k)
    assert replay(tok, pieces)[k] == sum(len(tok_k.encode_piece(p)) * f for p, f in pieces.items())


@st.composite
def _table_and_text(draw) -> tuple[list[tuple[int, int]], str]:
    """A small tiktoken table, as merges past the 256 bytes (each joins two earlier tokens into a
    new one), and a text whose words are often its tokens: pieces that are tokens merging cannot
    reach, and merges that make a lower-ranked pair, turn up."""
    pool = [bytes([b]) for b in range(256)]
    merges: list[tuple[int, int]] = []
    for _ in range(draw(st.integers(0, 10))):
        a, b = (draw(st.sampled_from([*b"abc", *range(256, len(pool))])) for _ in range(2))
        if pool[a] + pool[b] not in pool:
            pool.append(pool[a] + pool[b])
            merges.append((a, b))
    words = [t.decode() for t in pool[256:]] + ["é"]
    word = st.one_of(st.sampled_from(words), st.text(st.sampled_from("abc"), min_size=1, max_size=8))
    parts = draw(st.lists(st.tuples(word, st.sampled_from(["\n", " ", "\n\n", "é "])), max_size=6))
    return merges, "".join(w + sep for w, sep in parts)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=_table_and_text())
def test_replay_with_tiktokens_rules_equals_tiktoken_at_every_truncation(table):
    merges, text = table
    config = TrainerConfig(pretokenizer="gpt2", unit="byte", alphabet="full-bytes", vocab_size=None, num_merges=None)
    tok = Tokenizer(
        config=config, alphabet=[bytes_to_display(bytes([b])) for b in range(256)], merges=merges, rules="tiktoken"
    )
    tokens = [tok.token_bytes(i) for i in range(len(tok.vocab))]
    assert len(set(tokens)) == len(tokens) == 256 + len(merges)  # ids are tiktoken's ranks
    assert _replayed(tok, text) == _tiktoken_counts(tokens, text)


# ---- the command line ---------------------------------------------------------------------------------------
def test_evaluate_prints_one_json_line_per_file_with_the_documented_keys_in_order():
    files = [SAMPLES / "udhr_en.txt", SAMPLES / "mixed_emoji_multilingual.txt"]
    code, out, err = run("evaluate", "--tokenizer", "gpt2", *map(str, files))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 3 and out.endswith("\n")  # a line per file, then the files together
    tok = load_pretrained("gpt2")
    for line, path in zip(lines, files):
        row = json.loads(line)
        assert list(row) == KEYS
        text = path.read_text(encoding="utf-8")
        assert row == {"file": str(path), **evaluate(tok, text, shortest=True).as_dict()}
        assert row["tokens"] == len(tok.encode(text)) and row["words"] == len(text.split())
        assert row["bytes_per_token"] == row["bytes"] / row["tokens"]
        assert row["chars_per_token"] == row["chars"] / row["tokens"]
        assert row["tokens_per_word"] == row["tokens"] / row["words"]


@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    """A tokenizer trained by the CLI itself: sennrich preset, 200 merges on udhr_en."""
    folder = tmp_path_factory.mktemp("sennrich-200")
    code, _, err = run(
        "train", str(SAMPLES / "udhr_en.txt"), "--preset", "sennrich", "--merges", "200", "--out", str(folder)
    )
    assert code == 0, err
    return folder


@pytest.mark.parametrize("tokenizer", ["trained", "gpt2"])
def test_curve_gives_truncated_counts_from_no_merge_to_every_merge(tokenizer, trained_dir):
    name = str(trained_dir) if tokenizer == "trained" else tokenizer
    tok = load_tokenizer(trained_dir) if tokenizer == "trained" else load_pretrained(tokenizer)
    path = SAMPLES / "udhr_en.txt"
    code, out, err = run("evaluate", "--tokenizer", name, str(path), "--curve", "5")
    assert code == 0, err
    row = json.loads(out)
    assert list(row) == KEYS + ["curve"]
    ks = [k for k, _ in row["curve"]]
    counts = [c for _, c in row["curve"]]
    assert ks == [i * tok.num_merges // 4 for i in range(5)] == curve_points(tok.num_merges, 5)  # 200 or 50,000 merges
    assert all(a >= b for a, b in zip(counts, counts[1:]))
    text = path.read_text(encoding="utf-8")
    assert counts == [len(tok.truncate(k).encode(text)) for k in ks]
    assert counts[-1] == row["tokens"]


def test_a_trained_folder_evaluates_as_the_trainers_tokenizer(trained_dir):
    path = SAMPLES / "udhr_zh_hans.txt"
    text = path.read_text(encoding="utf-8")
    code, out, err = run("evaluate", "--tokenizer", str(trained_dir), str(path))
    assert code == 0, err
    row = json.loads(out)
    tok = train(UDHR_EN, make_config("sennrich", num_merges=200)).tokenizer()
    assert row == {"file": str(path), **evaluate(tok, text, shortest=True).as_dict()}
    assert row["unk"] == tok.encode(text).count(tok.unk_id) > 0  # English characters only: Chinese is unknown


def test_an_empty_file_has_no_ratios(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    code, out, _ = run("evaluate", "--tokenizer", "cl100k_base", str(empty), "--curve", "3")
    assert code == 0
    assert json.loads(out) == {
        "file": str(empty),
        "bytes": 0,
        "chars": 0,
        "words": 0,
        "tokens": 0,
        "unk": 0,
        "bytes_per_token": None,
        "chars_per_token": None,
        "tokens_per_word": None,
        "renyi_efficiency": None,
        "shortest_tokens": 0,
        "curve": [[0, 0], [50_000, 0], [100_000, 0]],
    }


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--tokenizer", "gpt5", "{ok}"], "'gpt5' is neither a bundled tokenizer"),
        (["--tokenizer", "gpt2", "{ok}", "{missing}"], "no such file"),
        (["--tokenizer", "gpt2", "{ok}", "--curve", "1"], "--curve needs at least 2 points"),
        (["--tokenizer", "gpt2", "{ok}", "--curve", "0"], "--curve needs at least 2 points"),
        (["--tokenizer", "gpt2", "{ok}", "--curve", "x"], "invalid int value"),
        (["--tokenizer", "gpt2", "{ok}", "{latin1}"], "not valid UTF-8"),
        (["--tokenizer", "gpt2", "{tmp}"], "is a folder, not a text file"),
        (["--tokenizer", "{tmp}", "{ok}"], "no trace.json found"),
        (["--tokenizer", "gpt2"], "required: FILE"),
        (["{ok}"], "required: --tokenizer"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_prints_no_row(argv, message, tmp_path):
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    paths = {
        "ok": str(SAMPLES / "demo_hug_pug.txt"),
        "missing": str(tmp_path / "missing.txt"),
        "latin1": str(tmp_path / "latin1.txt"),
        "tmp": str(tmp_path),
    }
    code, out, err = run("evaluate", *(a.format(**paths) for a in argv))
    assert code == 2
    assert out == ""  # every file is read before any row is printed
    assert err.startswith("python -m explorer: error:") and err.count("\n") == 1 and err.endswith("\n")
    assert message in err and "Traceback" not in err


def test_the_module_entry_point_prints_the_same_rows():
    files = [str(SAMPLES / "demo_sennrich_low_lower.txt"), str(SAMPLES / "udhr_ko.txt")]
    argv = ["evaluate", "--tokenizer", "gpt2", *files, "--curve", "3"]
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", *argv], cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run(*argv)[1]
    rows = [list(json.loads(line)) for line in proc.stdout.splitlines()]
    assert rows == [KEYS + ["curve"]] * 2 + [["files", "gini", "parity"]]
    bad = subprocess.run(
        [sys.executable, "-m", "explorer", "evaluate", "--tokenizer", "gpt2", "missing.txt"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr == "python -m explorer: error: no such file: missing.txt\n"


# ---- a hand-computed example --------------------------------------------------------------------------------
def test_sennrich_low_lower_newest_widest_by_hand():
    """demo_sennrich_low_lower.txt: low x5, lower x2, newest x6, widest x3 on four lines, 95 bytes
    (16 words, each followed by a space or a newline). With "</w>" after every word that is
    4*5 + 6*2 + 7*6 + 7*3 = 95 symbols. The first four merges are e+s (9 times: newest, widest),
    es+t (9), est+</w> (9), l+o (7: low, lower): 95 -> 86 -> 77 -> 68 -> 61 tokens, 61/16 tokens
    per word. Then low = lo w </w> (3), lower = lo w e r </w> (5), newest = n e w est</w> (4),
    widest = w i d est</w> (4): 5*3 + 2*5 + 6*4 + 3*4 = 61."""
    path = SAMPLES / "demo_sennrich_low_lower.txt"
    text = path.read_text(encoding="utf-8")
    trainer = train(text, make_config("sennrich", num_merges=4))
    assert [r.token for r in trainer.records] == ["es", "est", "est</w>", "lo"]
    tok = trainer.tokenizer()
    assert tok.tokens(tok.encode("low newest")) == ["lo", "w", "</w>", "n", "e", "w", "est</w>"]
    assert replay(tok, piece_counts(tok, text)) == [95, 86, 77, 68, 61]
    assert piece_counts(tok, text) == {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    assert evaluate(tok, text).shortest_tokens is None  # asked for only
    got = evaluate(tok, text, shortest=True)
    # 61 tokens, 9 distinct: lo x7, w x16, </w> x7, e x8, r x2, n x6, est</w> x9, i x3, d x3
    counts = [7, 16, 7, 8, 2, 6, 9, 3, 3]
    assert sorted(Counter(tok.tokens(tok.encode(text))).values()) == sorted(counts)
    renyi = math.log(sum((c / 61) ** 2.5 for c in counts)) / (1 - 2.5) / math.log(9)
    # no token joins lo and w, or w and </w>: BPE's split is the shortest
    assert got == Evaluation(
        bytes=95, chars=95, words=16, tokens=61, unk=0, renyi_efficiency=pytest.approx(renyi), shortest_tokens=61
    )
    assert got.as_dict() == {
        "bytes": 95,
        "chars": 95,
        "words": 16,
        "tokens": 61,
        "unk": 0,
        "bytes_per_token": 95 / 61,
        "chars_per_token": 95 / 61,
        "tokens_per_word": 3.8125,
        "renyi_efficiency": pytest.approx(0.838587425043),
        "shortest_tokens": 61,
    }
    assert curve(tok, text, 3) == [(0, 95), (2, 77), (4, 61)]
