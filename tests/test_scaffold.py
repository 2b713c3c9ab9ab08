"""Scaffold tokens (PickyBPE's intersection over self, after training): the counts from one pass
of the merge core against two slow references written here — the paper's definition (apply the
merges one by one to every word, counting each token before and after each merge) and the
tokenizer truncated after each merge (our ``truncate``, and tiktoken's own encoder over GPT-2's
ranks cut at the same rank) — on hand-made corpora with golden outputs, trained tokenizers over
sample corpora, generated corpora, and GPT-2 on Shakespeare."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from fractions import Fraction

import pytest
import tiktoken
import tiktoken.load
from conftest import merge_everywhere, read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import (
    ConfigError,
    Tokenizer,
    TrainerConfig,
    export_files,
    import_files,
    load_pretrained,
    make_config,
    train,
)
from explorer.analysis.evaluate import piece_counts
from explorer.analysis.scaffold import (
    Feed,
    ScaffoldReport,
    TokenUse,
    describe,
    ios_threshold,
    is_scaffold,
    scaffold,
    tau_for_threshold,
)
from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR
from explorer.stages.pretokenizers import PATTERNS
from explorer.stages.units import byte_alphabet


# ---- the references ------------------------------------------------------------------------------
def _report(tok: Tokenizer, alone: Counter[int], feeds: dict[int, list[Feed]], tau: float) -> ScaffoldReport:
    """A report from counts made elsewhere: merged tokens seen, those with a merge where fewer
    than τ × inside were left, highest IoS first (then most merges inside, then id)."""
    merged = [x for x in sorted(set(alone) | set(feeds)) if x < len(tok) and tok.merge_rank(x) is not None]
    uses = [TokenUse(x, alone[x], tuple(sorted(feeds.get(x, []), key=lambda f: f.rank))) for x in merged]
    scaffold_uses = [u for u in uses if any(f.alone_after < tau * f.inside for f in u.feeds)]
    scaffold_uses.sort(key=lambda u: (-max(f.inside / (f.inside + f.alone_after) for f in u.feeds), -u.inside, u.id))
    return ScaffoldReport(tau, sum(alone.values()), tuple(uses), tuple(scaffold_uses))


def _by_recount(tok: Tokenizer, text: str, tau: float) -> ScaffoldReport:
    """The paper's counts, merge by merge: before merging (a, b) count each token in every word
    (f(x)), merge it everywhere (f(a, b) merges made), and what is left of x is f(x) minus the
    occurrences those merges took."""
    words = Counter(tuple(tok.initial_ids(piece)) for piece in tok.piece_texts(text))
    feeds: dict[int, list[Feed]] = defaultdict(list)
    for rank, ((a, b), new) in enumerate(zip(tok.merges, tok.merged_ids)):
        before: Counter[int] = Counter()
        for word, freq in words.items():
            for s in word:
                before[s] += freq
        after: Counter[tuple[int, ...]] = Counter()
        made = 0
        for word, freq in words.items():
            merged, n = merge_everywhere(word, a, b, new)
            after[merged] += freq
            made += n * freq
        words = after
        if made:
            for x in {a, b}:
                feeds[x].append(Feed(new, rank, made, before[x] - made * (2 if a == b else 1)))
    alone: Counter[int] = Counter()
    for word, freq in words.items():
        for s in word:
            alone[s] += freq
    return _report(tok, alone, feeds, tau)


def _by_truncation(tok: Tokenizer, text: str, tau: float, encode=None) -> ScaffoldReport:
    """Encode the text with the tokenizer cut after each merge: merge r was made as many times
    as the text has tokens fewer after it, and x was left as often as the cut after r holds x."""
    encode = encode or (lambda k: tok.truncate(k).encode(text))
    counts = [Counter(encode(k)) for k in range(tok.num_merges + 1)]
    feeds: dict[int, list[Feed]] = defaultdict(list)
    for rank, ((a, b), new) in enumerate(zip(tok.merges, tok.merged_ids)):
        made = counts[rank].total() - counts[rank + 1].total()
        if made:
            for x in {a, b}:
                feeds[x].append(Feed(new, rank, made, counts[rank + 1][x]))
    return _report(tok, counts[-1], feeds, tau)


def _shown(tok: Tokenizer, report: ScaffoldReport) -> list[tuple[str, int, float]]:
    return [(tok.id_to_token(u.id), u.alone, round(u.ios, 4)) for u in report.scaffold]


# ---- golden examples -----------------------------------------------------------------------------
KENTUCKY = Tokenizer(
    config=TrainerConfig(pretokenizer="whitespace", unit="char"),
    alphabet=list("Kentucky"),  # K e n t u c k y: ids 0-7
    merges=[(1, 2), (6, 7), (8, 3), (10, 4), (11, 5), (12, 9), (0, 13)],  # en ky ent entu entuc entucky Kentucky
)


def test_entucky_fed_kentucky_and_is_scaffold_with_every_step_before_it():
    text = "Kentucky " * 412 + "entucky entucky ten"
    report = scaffold(KENTUCKY, text)
    assert report.tokens == len(KENTUCKY.encode(text)) == 416
    entucky = next(u for u in report.uses if KENTUCKY.id_to_token(u.id) == "entucky")
    assert entucky == TokenUse(13, 2, (Feed(parent=14, rank=6, inside=412, alone_after=2),))
    assert describe(KENTUCKY, entucky) == "entucky → Kentucky: used alone 2 times, inside Kentucky 412 times"
    assert _shown(KENTUCKY, report) == [
        ("ky", 0, 1.0),
        ("ent", 0, 1.0),
        ("entu", 0, 1.0),
        ("entuc", 0, 1.0),
        ("en", 1, 0.9976),  # 414 merges into ent, "ten" keeps it once
        ("entucky", 2, 0.9952),  # 412 / 414
    ]
    assert report == _by_recount(KENTUCKY, text, 0.1) == _by_truncation(KENTUCKY, text, 0.1)


def test_tau_is_the_share_of_the_count_inside_that_standing_alone_stays_under():
    text = "Kentucky " * 10 + "entucky " * 3
    names = lambda tau: {KENTUCKY.id_to_token(u.id) for u in scaffold(KENTUCKY, text, tau=tau).scaffold}  # noqa: E731
    assert "entucky" not in names(0.3)  # 3 alone, 10 inside: 3 < 0.3 × 10 is false
    assert "entucky" in names(0.31)
    assert names(0.0) == set()  # τ = 0 is classical BPE: nothing goes
    assert names(0.3) == {"en", "ky", "ent", "entu", "entuc"}  # never alone once the next merge exists


def test_sennrichs_corpus_by_hand():
    """low ×5, lower ×2, newest ×6, widest ×3, the sennrich preset's 10 merges: es est est</w> lo
    low ne new newest</w> low</w> wi. est</w> stands alone 3 times (widest) against 6 inside
    newest</w>: not under τ = 0.5; low 2 times (lower) against 5 inside low</w>: under."""
    text = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3
    tok = train(text, make_config("sennrich", num_merges=10)).tokenizer()
    report = scaffold(tok, text, tau=0.5)
    assert _shown(tok, report) == [
        ("es", 0, 1.0),
        ("est", 0, 1.0),
        ("lo", 0, 1.0),
        ("ne", 0, 1.0),
        ("new", 0, 1.0),
        ("low", 2, 0.7143),
    ]
    est_end = report.uses[2]
    assert (tok.id_to_token(est_end.id), est_end.alone, est_end.feeds) == ("est</w>", 3, (Feed(18, 7, 6, 3),))
    assert [describe(tok, u, show=tok.id_to_token) for u in report.scaffold[-2:]] == [
        "new → newest</w>: used alone 0 times, inside newest</w> 6 times",
        "low → low</w>: used alone 2 times, inside low</w> 5 times",
    ]
    assert report == _by_recount(tok, text, 0.5) == _by_truncation(tok, text, 0.5)


def test_a_token_merged_with_itself_is_taken_twice_by_each_merge():
    """aa, aab = aa + b, aaaa = aa + aa over aab ×3, aa, aaaa ×2: at aab's merge 5 aa are left
    (1 kept, 4 in the two aaaa), and each of the two aaaa merges takes two aa."""
    tok = Tokenizer(
        config=TrainerConfig(pretokenizer="whitespace", unit="char"),
        alphabet=["a", "b"],
        merges=[(0, 0), (2, 1), (2, 2)],
    )
    text = "aab aab aab aa aaaa aaaa"
    report = scaffold(tok, text, tau=0.5)
    assert report.uses[0] == TokenUse(2, 1, (Feed(3, 1, 3, 5), Feed(4, 2, 2, 1)))
    assert [u.id for u in report.scaffold] == []  # 5 ≥ 0.5 × 3 and 1 ≥ 0.5 × 2
    assert [u.id for u in scaffold(tok, text, tau=0.6).scaffold] == [2]  # 1 < 0.6 × 2
    assert report == _by_recount(tok, text, 0.5) == _by_truncation(tok, text, 0.5)


# ---- trained tokenizers, generated corpora -----------------------------------------------------
@pytest.mark.parametrize(
    ("name", "preset", "merges"),
    [("english_frankenstein.txt", "gpt2", 150), ("udhr_hi.txt", "bytes", 120), ("demo_sentences.txt", "hf-course", 80)],
)
def test_a_tokenizer_trained_on_a_sample_corpus_agrees_with_both_references(name, preset, merges):
    text = read_sample(name)[:4_000]
    tok = train(text, make_config(preset, vocab_size=None, num_merges=merges)).tokenizer()
    report = scaffold(tok, text)
    assert report.tokens == len(tok.encode(text))
    assert report.scaffold, "a trained vocabulary has tokens that only ever build longer ones"
    assert report == _by_recount(tok, text, 0.1) == _by_truncation(tok, text, 0.1)


_WORDS = st.text(alphabet=st.sampled_from("aaaabcd"), min_size=1, max_size=9)  # runs of a: x + x merges


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(_WORDS, min_size=1, max_size=25),
    merges=st.integers(0, 14),
    tau=st.sampled_from([0.0, 0.05, 0.25, 0.5, 1.0, 3.0]),
)
def test_generated_corpora_agree_with_the_papers_recount(words, merges, tau):
    text = " ".join(words)
    cfg = TrainerConfig(pretokenizer="whitespace", unit="char", marker="eow", num_merges=merges, reuse_ids=False)
    tok = train(text, cfg).tokenizer()
    assert scaffold(tok, text, tau=tau) == _by_recount(tok, text, tau)
    assert scaffold(tok, piece_counts(tok, text), tau=tau) == scaffold(tok, text, tau=tau)


@st.composite
def _merge_lists(draw) -> Tokenizer:
    """Any merges over a and b, each of two tokens made before it (often a token with itself)."""
    merges: list[tuple[int, int]] = []
    for k in range(draw(st.integers(0, 12))):
        a = draw(st.integers(0, 1 + k))
        merges.append((a, a if draw(st.booleans()) else draw(st.integers(0, 1 + k))))
    cfg = TrainerConfig(pretokenizer="whitespace", unit="char", reuse_ids=False)
    return Tokenizer(config=cfg, alphabet=["a", "b"], merges=merges)


@settings(max_examples=150)
@given(
    tok=_merge_lists(),
    words=st.lists(st.text(alphabet=st.sampled_from("aaab"), min_size=1, max_size=12), min_size=1, max_size=12),
)
def test_any_merge_list_agrees_with_both_references(tok, words):
    text = " ".join(words)
    assert scaffold(tok, text, tau=0.5) == _by_recount(tok, text, 0.5) == _by_truncation(tok, text, 0.5)


@settings(max_examples=200)
@given(inside=st.integers(1, 10_000), alone=st.integers(0, 10_000), eighths=st.integers(0, 40))
def test_under_tau_is_an_ios_above_the_papers_threshold(inside, alone, eighths):
    """alone < τ · inside ⟺ IoS = inside / (inside + alone) > T = 1 / (1 + τ), exactly."""
    tau = Fraction(eighths, 8)  # a float without rounding
    use = TokenUse(300, alone, (Feed(301, 45, inside, alone),))
    assert is_scaffold(use, float(tau)) == (Fraction(inside, inside + alone) > 1 / (1 + tau))
    assert math.isclose(ios_threshold(float(tau)), float(1 / (1 + tau)))
    assert math.isclose(tau_for_threshold(ios_threshold(float(tau))), float(tau), abs_tol=1e-12)


@pytest.mark.parametrize("tau", [-0.1, math.nan, math.inf, "0.1", None, True])
def test_tau_must_be_a_number_of_at_least_zero(tau):
    with pytest.raises(ConfigError, match="τ"):
        scaffold(KENTUCKY, "Kentucky", tau=tau)


@pytest.mark.parametrize("threshold", [0.0, -1.0, 1.5])
def test_an_ios_threshold_lies_in_zero_to_one(threshold):
    with pytest.raises(ConfigError):
        tau_for_threshold(threshold)


def test_a_piece_tiktoken_takes_whole_merges_nothing():
    """tiktoken's rules take a piece that is a token whole, even when merging its bytes would
    not make it: abcd = ab + cd, but b + c merges first and a, bc, d never merge on."""
    cfg = TrainerConfig(pretokenizer="whitespace", alphabet="full-bytes")
    merges = [(98, 99), (97, 98), (99, 100), (257, 258)]  # bc ab cd abcd
    tok = Tokenizer(config=cfg, alphabet=byte_alphabet(), merges=merges, rules="tiktoken")
    assert tok.tokens(tok.encode("abcd")) == ["abcd"] and tok.tokens(tok.encode_bytes(b"abcd")) == ["a", "bc", "d"]
    report = scaffold(tok, "abcd abcd xabcd")
    assert Counter({u.id: u.alone for u in report.uses if u.alone}) == Counter(
        i for i in tok.encode("abcd abcd xabcd") if tok.merge_rank(i) is not None
    )
    assert report.uses == (TokenUse(256, 1, ()), TokenUse(259, 2, ()))  # bc once (xabcd), abcd twice, whole
    assert report.tokens == len(tok.encode("abcd abcd xabcd"))


# ---- GPT-2 ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gpt2():
    return load_pretrained("gpt2")


@pytest.fixture(scope="module")
def gpt2_ranks(tmp_path_factory) -> dict[bytes, int]:
    """GPT-2's ranks as tiktoken's own loader reads the bundled files (its cache kept to a folder
    of this test's own)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path_factory.mktemp("tiktoken")))
        return tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(PRETRAINED_DIR / "gpt2" / "vocab.bpe"),
            encoder_json_file=str(PRETRAINED_DIR / "gpt2" / "encoder.json"),
        )


def _tiktoken_cut(ranks: dict[bytes, int], below: int) -> tiktoken.Encoding:
    """tiktoken over GPT-2's ranks below ``below`` only: the table as of that many tokens."""
    kept = {b: r for b, r in ranks.items() if r < below}
    return tiktoken.Encoding(
        f"gpt2-below-{below}",
        pat_str=PATTERNS[PRETRAINED["gpt2"].pretokenizer],
        mergeable_ranks=kept,
        special_tokens={},
    )


@pytest.fixture(scope="module")
def shakespeare() -> str:
    return read_sample("english_tiny_shakespeare.txt")


@pytest.fixture(scope="module")
def gpt2_report(gpt2, shakespeare) -> ScaffoldReport:
    return scaffold(gpt2, shakespeare)


def test_gpt2_on_shakespeare_keeps_exactly_tiktokens_tokens(gpt2, gpt2_ranks, gpt2_report, shakespeare):
    theirs = Counter(_tiktoken_cut(gpt2_ranks, len(gpt2_ranks)).encode_ordinary(shakespeare))
    assert gpt2_report.tokens == theirs.total()
    assert {u.id: u.alone for u in gpt2_report.uses if u.alone} == {i: n for i, n in theirs.items() if i >= 256}


@pytest.mark.parametrize("token", ["riend", "irst", "rom"])
def test_gpt2_scaffold_tokens_on_shakespeare_as_tiktoken_cut_after_each_merge_counts_them(
    gpt2, gpt2_ranks, gpt2_report, shakespeare, token
):
    """ "riend" builds " friend" 229 times and never stands alone in Shakespeare; each merge it
    fed is checked against tiktoken's encoder over the ranks up to that merge's token and below."""
    x = gpt2.token_to_id(token)
    use = next(u for u in gpt2_report.uses if u.id == x)
    assert use in gpt2_report.scaffold and use.alone == 0 and use.ios == 1.0
    assert len(use.feeds) >= 3
    for feed in use.feeds:
        assert gpt2.merge_rank(feed.parent) == feed.parent - 256  # GPT-2's ids follow its merges
        before = _tiktoken_cut(gpt2_ranks, feed.parent).encode_ordinary(shakespeare)
        after = Counter(_tiktoken_cut(gpt2_ranks, feed.parent + 1).encode_ordinary(shakespeare))
        assert (feed.inside, feed.alone_after) == (len(before) - after.total(), after[x]), gpt2.decode([feed.parent])


def test_gpt2_imported_from_a_tiktoken_file_gives_the_bundled_tables_report(gpt2):
    """Imported ranks merge any split of a token (no merges file says which); GPT-2's own merges
    are the only splits that ever meet, so the counts are the bundled table's."""
    imported = import_files(
        {"gpt2.tiktoken": export_files(gpt2, "tiktoken")["tokenizer.tiktoken"]}, pretokenizer="gpt2"
    )
    assert imported.rules == "tiktoken" and not imported.own_merges_suffice
    text = read_sample("english_frankenstein.txt")[:100_000]
    report = scaffold(imported, text)
    assert report == scaffold(gpt2, text)
    assert report.tokens == len(gpt2.encode(text)) and len(report.scaffold) > 500


def test_gpt2_scaffold_on_shakespeare_reads_as_known_fragments(gpt2, gpt2_report):
    top = [gpt2.decode([u.id]) for u in gpt2_report.scaffold[:12]]
    assert top[:4] == ["nd", "ich", "rom", "ther"]
    friend = next(u for u in gpt2_report.scaffold if gpt2.decode([u.id]) == "riend")
    assert describe(gpt2, friend, limit=1) == (
        "riend →  friend and 3 more: used alone 0 times, inside  friend 229 times, and 6 times inside 3 more"
    )
    # a whole word is never scaffold here: " the" stands alone far more than it builds " there"
    assert gpt2.token_to_id("Ġthe") not in {u.id for u in gpt2_report.scaffold}
