"""Exports carry the same merges other tools read; a saved trace loads back identically."""

from __future__ import annotations

import base64
import json

import pytest
from conftest import ROOT, read_sample
from tokenizers import Tokenizer as HFTokenizer

from explorer import ConfigError, make_config, train
from explorer.formats.exporters import (
    to_arrow_merges,
    to_hf_tokenizer_json,
    to_subword_nmt_codes,
    to_tiktoken,
    to_tiktoken_meta,
)
from explorer.formats.trace import load_tokenizer, write_trace


@pytest.fixture(scope="module")
def byte_trainer():
    return train(read_sample("udhr_en.txt"), make_config("gpt2", alphabet="full-bytes", tie_break="hf", vocab_size=600))


def test_trace_round_trip_gives_the_same_encoding(byte_trainer, tmp_path):
    write_trace(byte_trainer, tmp_path)
    loaded = load_tokenizer(tmp_path)
    text = read_sample("udhr_ru.txt")[:3000]
    assert loaded.encode(text) == byte_trainer.tokenizer().encode(text)
    assert loaded.vocab.tokens == tuple(byte_trainer.vocab)


def test_hf_tokenizer_json_export_loads_in_hf_and_encodes_the_same(byte_trainer):
    hf = HFTokenizer.from_str(json.dumps(to_hf_tokenizer_json(byte_trainer.tokenizer())))
    ours = byte_trainer.tokenizer()
    text = read_sample("demo_sentences.txt")
    assert hf.encode(text).ids == ours.encode(text)


def test_tiktoken_export_lists_each_token_bytes_with_its_id(byte_trainer):
    tok = byte_trainer.tokenizer()
    lines = to_tiktoken(tok).splitlines()
    assert len(lines) == len(tok.vocab) - 1  # <|endoftext|> is kept apart, as tiktoken does
    b64, rank = lines[-1].split()
    assert base64.b64decode(b64) == tok.token_bytes(int(rank))


def test_tiktoken_export_refuses_char_level_tokenizers():
    tok = train("low lower", make_config("sennrich", num_merges=2)).tokenizer()
    with pytest.raises(ConfigError):
        to_tiktoken(tok)


def test_subword_nmt_and_arrow_merge_files_follow_their_layouts():
    tok = train(
        "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3, make_config("sennrich", num_merges=3)
    ).tokenizer()
    assert to_subword_nmt_codes(tok) == "#version: 0.1\ne s\nes t\nest </w>\n"  # separate </w>: 0.1
    assert to_arrow_merges(tok) == "e s -> es\nes t -> est\nest </w> -> est</w>\n"


def test_encoding_options_travel_in_the_trace_and_older_traces_still_load(tmp_path):
    from explorer import PRESETS, EncodeOptions, TrainerConfig
    from explorer.formats.trace import tokenizer_from_trace, trace_dict

    text = read_sample("demo_sentences.txt")
    trainer = train(text, make_config("suffix-marker", vocab_size=200), encoding=PRESETS["suffix-marker"].encoding)
    data = trace_dict(trainer)
    assert data["encoding"] == {"unk_token": "<unk>", "dropout_style": "once"}
    assert "dropout_style" not in data["config"] and "unk_token" not in data["config"]
    assert tokenizer_from_trace(data).encoding == EncodeOptions(dropout_style="once")
    # a trace written before the split kept them in "config"
    old = {**data, "config": {**data["config"], "dropout_style": "once", "unk_token": "<?>", "top_k": 20}}
    del old["encoding"]
    tok = tokenizer_from_trace(old)
    assert tok.encoding == EncodeOptions(unk_token="<?>", dropout_style="once")
    assert tok.tokens(tok.encode("zzz\u2603")).count("<?>") == 1  # ☃ is not in the corpus
    assert TrainerConfig.from_dict(old["config"]) == trainer.config


# the exported tokenizer.json in HF gives our ids: normalizers, and char level with its unk token
HF_EXPORTABLE = {
    "gpt2-lowercase": make_config("gpt2", normalizer="lowercase", alphabet="full-bytes", vocab_size=600),
    "gpt2-nfkc": make_config("gpt2", normalizer="nfkc", alphabet="full-bytes", vocab_size=600),
    "gpt2-nfc": make_config("gpt2", normalizer="nfc", alphabet="full-bytes", vocab_size=600),
    "hf-course": make_config("hf-course", num_merges=300),
    "sennrich-glued": make_config("sennrich", marker="eow-glued", num_merges=300),
}


@pytest.mark.parametrize("name", list(HF_EXPORTABLE))
def test_hf_tokenizer_json_gives_our_ids_in_hf(name):
    text = read_sample("udhr_en.txt")
    ours = train(text, HF_EXPORTABLE[name]).tokenizer()
    hf = HFTokenizer.from_str(json.dumps(to_hf_tokenizer_json(ours)))
    for sample in ("udhr_en.txt", "udhr_el.txt", "demo_sentences.txt", "mixed_emoji_multilingual.txt"):
        probe = read_sample(sample)
        ids = ours.encode(probe)
        assert hf.encode(probe).ids == ids, (name, sample)
    if ours.config.unit == "char":
        assert ours.unk_id in ours.encode("Ελληνικά")  # unseen letters: the unk token, in both


SAMPLES = sorted(p.name for p in (ROOT / "sample_corpora").glob("*.txt"))


@pytest.mark.parametrize("sample", SAMPLES)
def test_subword_nmt_apply_bpe_with_our_codes_segments_every_word_as_we_do(sample):
    import io

    from subword_nmt.apply_bpe import BPE

    text = read_sample(sample)
    tok = train(text, make_config("sennrich", marker="eow-glued", num_merges=500)).tokenizer()
    bpe = BPE(io.StringIO(to_subword_nmt_codes(tok)))
    words = list(dict.fromkeys(text.split()))
    assert words
    for word in words:
        # subword-nmt writes 'lo@@ wer': '@@' after every piece but the last, no '</w>'
        ours = [t[: -len("</w>")] if t.endswith("</w>") else t + "@@" for t in tok.tokens(tok.encode(word))]
        assert bpe.segment_tokens([word]) == ours, word


TIKTOKEN_CONFIGS = {
    "gpt2": make_config("gpt2", alphabet="full-bytes", num_merges=400),
    "gpt4": make_config("gpt4", alphabet="full-bytes", num_merges=400),
    "o200k": make_config("gpt2", pretokenizer="o200k", alphabet="full-bytes", num_merges=400),
    "bytes": make_config("bytes", num_merges=200, reuse_ids=True),  # tiktoken: one rank per distinct token
    "gpt2-specials": make_config(
        "gpt2", alphabet="full-bytes", num_merges=300, special_tokens=("<|endoftext|>", "<|pad|>")
    ),
}
_SMALL = [s for s in SAMPLES if (ROOT / "sample_corpora" / s).stat().st_size < 60_000]


@pytest.mark.parametrize("name", list(TIKTOKEN_CONFIGS))
def test_tiktoken_loads_our_rank_file_and_meta_and_gives_our_ids(name, tmp_path, monkeypatch):
    import tiktoken
    import tiktoken.load

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    # the bytes preset has no pre-tokenization: the whole text is one piece, slow for tiktoken on 1 MB
    samples = _SMALL if name == "bytes" else SAMPLES
    ours = train(read_sample("udhr_en.txt") + read_sample("demo_sentences.txt"), TIKTOKEN_CONFIGS[name]).tokenizer()
    path = tmp_path / "ours.tiktoken"
    path.write_text(to_tiktoken(ours), encoding="ascii")
    meta = json.loads(json.dumps(to_tiktoken_meta(ours)))  # as read back from the JSON file beside it
    enc = tiktoken.Encoding(
        "ours",
        pat_str=meta["pat_str"],
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens=meta["special_tokens"],
    )
    for sample in samples:
        text = read_sample(sample) + "<|endoftext|> <|pad|>"
        assert enc.encode(text, allowed_special="all") == ours.encode(text, allow_special=True), sample


@pytest.mark.parametrize(
    "config, setting",
    [
        (make_config("sennrich", num_merges=5), "character-level"),
        (
            make_config("gpt2", alphabet="full-bytes", normalizer="nfkc", num_merges=5),
            "normalizes its text first (nfkc)",
        ),
        (make_config("gpt2", alphabet="full-bytes", sequences="lines", num_merges=5), "cuts it into lines first"),
        (
            make_config("gpt2", alphabet="full-bytes", pretokenizer="regex", pattern=r"\w+", num_merges=5),
            "'regex' pre-tokenizer",
        ),
    ],
)
def test_tiktoken_meta_names_the_setting_tiktoken_cannot_represent(config, setting):
    tok = train("low lower lowest\nnew newer", config).tokenizer()
    with pytest.raises(ConfigError, match=setting.replace("(", r"\(").replace(")", r"\)")):
        to_tiktoken_meta(tok)
