"""SuperBPE (Liu et al. 2025): classical BPE up to a transition, then on over superwords (the
pre-tokenizer's pieces joined across spaces, digits kept apart). Checked against classical BPE,
a slow reference written here from the paper's description (recount everything at every
merge; at the transition, cut the text into superwords and segment each with the merges so
far), and the command line's contract."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import regex
from conftest import SAMPLES, merge_everywhere, read_sample
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_cli import run

from explorer import ConfigError, Trainer, TrainerConfig, corpus_config, make_config, train
from explorer.formats.trace import load_tokenizer
from explorer.stages.pretokenizers import GPT2_PATTERN


def _superwords(text: str) -> list[str]:
    """The paper's second stage, written out: GPT-2's pieces, runs of those without a digit
    joined into one."""
    out: list[str] = []
    run = ""
    for piece in regex.findall(GPT2_PATTERN, text):
        if regex.search(r"\p{N}", piece):
            out += [run, piece] if run else [piece]
            run = ""
        else:
            run += piece
    return out + ([run] if run else [])


def _reference(text: str, *, transition: int, merges: int) -> list[tuple[str, str]]:
    """Character-level SuperBPE by recounting: ties go to the lexicographically largest pair
    (subword-nmt's rule, our tie_break="subword-nmt")."""
    words = Counter(tuple(p) for p in regex.findall(GPT2_PATTERN, text))
    made: list[tuple[str, str]] = []
    for k in range(merges):
        if k == transition:
            words = Counter()
            for s in _superwords(text):
                seq = tuple(s)
                for pair in made:
                    seq = merge_everywhere(seq, *pair, "".join(pair))[0]
                words[seq] += 1
        counts: Counter = Counter()
        for w, f in words.items():
            for p in zip(w, w[1:]):
                counts[p] += f
        if not counts:
            break
        top = max(counts.values())
        pair = max(p for p, c in counts.items() if c == top)
        made.append(pair)
        words = Counter({merge_everywhere(w, *pair, "".join(pair))[0]: f for w, f in words.items()})
    return made


def _char_config(transition, merges):
    return TrainerConfig(
        pretokenizer="gpt2", unit="char", tie_break="subword-nmt", vocab_size=None, num_merges=merges,
        superbpe_transition=transition,
    )  # fmt: skip


@pytest.mark.parametrize(
    "name, preset",
    [("english_frankenstein.txt", "gpt2"), ("udhr_ru.txt", "gpt4"), ("python_stdlib_sample.txt", "gpt2")],
)
def test_a_transition_past_the_last_merge_is_classical_bpe(name, preset):
    text = read_sample(name)
    cfg = make_config(preset, vocab_size=None, num_merges=300)
    classical = train(text, cfg)
    for transition in (300, 301, 10_000):
        ours = train(text, cfg.replace(superbpe_transition=transition))
        assert ours.merges == classical.merges and ours.transitioned_at is None
        assert ours.tokenizer().pipeline == classical.tokenizer().pipeline
        assert ours.tokenizer().encode(text[:5000]) == classical.tokenizer().encode(text[:5000])


@pytest.mark.parametrize("transition", [0, 5, 40])
def test_merges_after_the_transition_are_the_slow_references(transition):
    text = read_sample("demo_sentences.txt")
    ours = train(text, _char_config(transition, 80))
    assert ours.merges[: min(transition, 80)] == train(text, _char_config(None, 80)).merges[:transition]
    assert [(r.left, r.right) for r in ours.records] == _reference(text, transition=transition, merges=80)
    assert ours.transitioned_at == transition
    assert any(" " in r.token[1:] for r in ours.records[transition:])  # a token spans a space: a superword


_WORD = st.sampled_from(["the", "cat", "sat", "on", "mat", "a", "42", "7", "by", "way"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.lists(_WORD, min_size=1, max_size=8).map(" ".join), min_size=1, max_size=12).map("\n".join),
    st.integers(min_value=0, max_value=12),
    st.integers(min_value=1, max_value=25),
)
def test_random_texts_train_as_the_slow_reference(text, transition, merges):
    ours = train(text, _char_config(transition, merges))
    assert [(r.left, r.right) for r in ours.records] == _reference(text, transition=transition, merges=merges)


def test_a_superbpe_tokenizer_encodes_superwords_and_round_trips():
    text = read_sample("english_frankenstein.txt")
    t = train(text, make_config("gpt2", vocab_size=None, num_merges=500, superbpe_transition=300))
    tok = t.tokenizer()
    assert tok.pipeline.pretokenizer == "gpt2-superwords"
    assert t.tokenizer(300).pipeline.pretokenizer == "gpt2"  # as of the transition: still classical
    ids = tok.encode("in the end of the day, 1818")
    assert "ĠofĠthe" in tok.tokens(ids) and tok.decode(ids) == "in the end of the day, 1818"
    classical = train(text, make_config("gpt2", vocab_size=None, num_merges=500)).tokenizer()
    assert len(tok.encode(text)) < len(classical.encode(text))  # fewer tokens for the same vocabulary size


def test_superbpe_needs_pieces_that_keep_their_spaces():
    with pytest.raises(ConfigError, match="pre-tokenizer gpt2, cl100k or o200k \\(not 'whitespace'\\)"):
        TrainerConfig(pretokenizer="whitespace", unit="char", superbpe_transition=3)
    with pytest.raises(ConfigError, match="between 0 and"):
        TrainerConfig(superbpe_transition=-1)
    with pytest.raises(ConfigError, match="start it with Trainer.from_texts"):
        Trainer({"a b": 1}, TrainerConfig(superbpe_transition=1))


def test_the_cli_writes_a_superbpe_trace_that_loads_as_the_same_tokenizer(tmp_path):
    path = str(SAMPLES / "english_frankenstein.txt")
    code, out, err = run(
        "train", path, "--preset", "gpt2", "--merges", "400", "--superbpe-transition", "250", "--out", str(tmp_path)
    )
    assert code == 0, err
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    assert trace["training"]["superbpe_transition"] == 250 and trace["config"]["superbpe_transition"] == 250
    tok = load_tokenizer(tmp_path)
    ours = train(
        read_sample("english_frankenstein.txt"),
        corpus_config("gpt2", merges=400, superbpe_transition=250),
    )
    sample = read_sample("udhr_en.txt")
    assert tok.encode(sample) == ours.tokenizer().encode(sample)
    code, _, err = run("export", str(tmp_path), "--format", "hf", "--out", str(tmp_path / "t.json"))
    assert code == 2 and err.count("\n") == 1 and "has no form in a Hugging Face tokenizer.json" in err


def test_a_trace_without_superbpe_keeps_its_keys():
    """The new field is left out of files that do not use it (older readers, golden files)."""
    assert "superbpe_transition" not in TrainerConfig().training_dict()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--preset", "sennrich", "--superbpe-transition", "5"], "not 'whitespace'"),
        (["--preset", "gpt2", "--superbpe-transition", "-3"], "between 0 and"),
        (["--preset", "gpt2", "--superbpe-transition", "x"], "argument --superbpe-transition: invalid int value"),
    ],
)
def test_cli_faults_exit_2_with_one_line(tmp_path, argv, message):
    code, out, err = run("train", str(SAMPLES / "udhr_en.txt"), *argv, "--out", str(tmp_path))
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err
