"""The model apart from the trainer: a tokenizer is (pipeline, vocab, encoding); a TrainerConfig
holds its pipeline and what training decides; trace.json version 2 holds both, and version 1
files still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from explorer import EncodeOptions, Tokenizer, TrainerConfig, make_config, train
from explorer.bpe.vocab import Vocab
from explorer.errors import ConfigError, FormatError
from explorer.formats.trace import TRACE_VERSION, load_tokenizer, tokenizer_from_trace, trace_dict
from explorer.stages.pipeline import Pipeline

DATA = Path(__file__).parent / "data"
CORPUS = Path(__file__).parent.parent / "sample_corpora" / "demo_sentences.txt"


def test_a_flat_config_routes_the_stage_names_into_its_pipeline():
    cfg = TrainerConfig(pretokenizer="whitespace", unit="char", tie_break="hf")
    assert cfg.pipeline == Pipeline(pretokenizer="whitespace", unit="char")
    assert (cfg.unit, cfg.pretokenizer, cfg.tie_break) == ("char", "whitespace", "hf")
    moved = cfg.replace(marker="eow", num_merges=5)
    assert moved.pipeline == Pipeline(pretokenizer="whitespace", unit="char", marker="eow")
    assert (moved.num_merges, moved.tie_break) == (5, "hf")
    assert TrainerConfig(pipeline=moved.pipeline, tie_break="hf", num_merges=5) == moved
    assert make_config("sennrich").pipeline.marker == "eow"


def test_the_flat_dict_keeps_its_keys_and_comes_back_as_the_same_config():
    cfg = make_config("gpt2", unit="byte", sequences="lines")
    flat = cfg.to_dict()
    assert list(flat) == [
        *("normalizer", "pretokenizer", "pattern", "sequences", "unit", "marker"),
        *("alphabet", "alphabet_order", "special_tokens", "tie_break", "vocab_size", "num_merges"),
        *("min_frequency", "reuse_ids", "specials_in_text"),
    ]
    assert TrainerConfig.from_dict(flat) == cfg
    assert {**cfg.pipeline.to_dict(), **cfg.training_dict()} == flat
    assert "unit" not in cfg.training_dict()


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Pipeline(unit="bytes"), "unknown unit 'bytes'"),
        (lambda: Pipeline(pattern="a"), "a custom regex is used only by the 'regex' pre-tokenizer"),
        (lambda: TrainerConfig(unit="byte", marker="eow"), "word markers are for character-level BPE"),
        (lambda: TrainerConfig(tie_break="coin"), "unknown tie break 'coin'"),
        (lambda: TrainerConfig(vocab_size=0), "vocab size must be between"),
        (lambda: make_config("sennrich").replace(unit="byte"), "word markers are for character-level BPE"),
        (lambda: EncodeOptions(dropout_style="twice"), "unknown dropout style 'twice'"),
        (lambda: EncodeOptions(unk_token=""), "the unknown token must be a non-empty string"),
    ],
)
def test_a_config_that_exists_is_valid(build, message):
    with pytest.raises(ConfigError, match=message):
        build()


def test_a_tokenizer_is_its_pipeline_vocab_and_encoding():
    trainer = train(CORPUS.read_text(encoding="utf-8"), make_config("sennrich", num_merges=30))
    trained = trainer.tokenizer()
    vocab = Vocab((), tuple(trainer.alphabet), tuple(trained.merges), reuse_ids=True)
    tok = Tokenizer(pipeline=trainer.config.pipeline, vocab=vocab, encoding=EncodeOptions())
    assert tok.vocab == trained.vocab and tok.pipeline == trained.pipeline
    assert tok.vocab.tokens == tuple(trainer.vocab)
    text = "the lowest newer words"
    assert tok.encode(text) == trained.encode(text)
    assert tok.truncate(3).vocab == vocab.truncate(3) and len(tok.truncate(3).vocab) == len(trainer.alphabet) + 3
    # the compatibility view carries the pipeline and the vocab's id rule, no stop rule
    assert tok.config.pipeline == tok.pipeline and tok.config.num_merges is None
    with pytest.raises(TypeError):
        Tokenizer(pipeline=tok.pipeline, vocab=vocab, config=trainer.config, alphabet=(), merges=())


def test_a_vocab_derives_its_tokens_from_its_merges():
    vocab = Vocab(("<s>",), ("a", "b"), ((1, 2), (3, 3)))
    assert vocab.tokens == ("<s>", "a", "b", "ab", "abab") and vocab.merged_ids == (3, 4)
    assert "abab" in vocab and vocab.id("ab") == 3 and list(vocab) == list(vocab.tokens)
    with pytest.raises(FormatError, match="refers to an id that does not exist yet"):
        Vocab((), ("a",), ((0, 5),))


def _trained_trace() -> dict:
    """trace.json v2 of the training the golden v1 file recorded (sennrich, 20 merges)."""
    trainer = train(CORPUS.read_text(encoding="utf-8"), make_config("sennrich", num_merges=20))
    return json.loads(json.dumps(trace_dict(trainer)))


def test_a_version_1_trace_loads_and_encodes_as_version_2():
    v1 = json.loads((DATA / "trace_v1_sennrich.json").read_text(encoding="utf-8"))
    v2 = _trained_trace()
    assert v1["version"] == 1 and v2["version"] == TRACE_VERSION == 2
    # version 2 keeps every key version 1 has, with the same values (but the version)
    assert {k: v for k, v in v2.items() if k in v1 and k != "version"} == {
        k: v for k, v in v1.items() if k != "version"
    }
    assert v2["pipeline"] == make_config("sennrich").pipeline.to_dict()
    assert v2["vocab"] == {"special_tokens": [], "alphabet": v1["alphabet"], "reuse_ids": True}
    assert v2["training"]["num_merges"] == 20 and "unit" not in v2["training"]
    old, new = load_tokenizer(DATA / "trace_v1_sennrich.json"), tokenizer_from_trace(v2)
    text = CORPUS.read_text(encoding="utf-8") + " unseen wordsmiths ☃"
    assert old.encode(text) == new.encode(text)
    assert (old.pipeline, old.vocab) == (new.pipeline, new.vocab)


@pytest.mark.parametrize(
    "key, field, value",
    [("pipeline", "marker", "none"), ("pipeline", "unit", "byte"), ("vocab", "reuse_ids", False)],
)
def test_a_version_2_trace_whose_parts_disagree_with_its_config_is_refused(key, field, value):
    data = _trained_trace()
    data[key][field] = value
    with pytest.raises(FormatError, match=f"the trace's '{key}' disagrees with its"):
        tokenizer_from_trace(data)
