"""Interop: other tools read our exports as we encode, our importers read them back, malformed
files are refused with where they go wrong, and decoding gives the text back.

- Hugging Face ``tokenizers`` (tokenizer.json), ``tiktoken`` (.tiktoken + its JSON) and
  ``subword-nmt`` (codes) give our ids / segmentation on every sample corpus and on generated text;
- each format refuses, naming the setting, a tokenizer it cannot represent;
- ``import_files(export_files(tok, fmt))`` gives the same merges and ids (subword-nmt: the same
  merges and segmentation, its codes hold no alphabet), the bundled GPT-2 and cl100k_base too;
- every malformed file is a FormatError naming the file and the line or key, never another error;
- decode: byte level gives any text back, char level gives the words back for every marker,
  ``errors="strict"`` raises exactly when the bytes are not UTF-8.
"""

from __future__ import annotations

import base64
import io
import json
import os
import re
import tempfile
from functools import cache

import pytest
import tiktoken
import tiktoken.load
import tokenizers
from conftest import SAMPLE_FILES, is_utf8, read_sample
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from subword_nmt.apply_bpe import BPE

from explorer import (
    ConfigError,
    DecodeError,
    FormatError,
    Tokenizer,
    corpus_config,
    load_pretrained,
    make_config,
    train,
)
from explorer.formats.exporters import EXPORT_FORMATS, export_files, export_problem
from explorer.formats.importers import IMPORT_FORMATS, import_files
from explorer.stages.markers import EOW, G_SUFFIX, SP_PREFIX
from explorer.stages.normalizers import normalize_str
from explorer.stages.units import byte_alphabet

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ~30 KB of varied text: Latin, Cyrillic, emoji, code; every config trains 200 merges on it
TRAIN_TEXT = (
    read_sample("udhr_en.txt")
    + read_sample("demo_sentences.txt")
    + read_sample("mixed_emoji_multilingual.txt")
    + read_sample("udhr_ru.txt")[:4000]
    + read_sample("python_stdlib_sample.txt")[:6000]
)
SPECIALS = ("<|endoftext|>", "<pad>")


def _bytes_preset(**kw):
    return make_config("bytes", vocab_size=456, **kw)  # 200 merges, minbpe's layout


CONFIGS = {
    "gpt2": corpus_config("gpt2", merges=200),
    "gpt4": corpus_config("gpt4", merges=200),
    "o200k": corpus_config("gpt2", merges=200, pretokenizer="o200k"),
    "bytes": _bytes_preset(),
    "bytes-cl100k": _bytes_preset(pretokenizer="cl100k"),
    "byte-whitespace": corpus_config("gpt2", merges=200, pretokenizer="whitespace"),
    "byte-lines": corpus_config("gpt2", merges=200, sequences="lines"),
    "byte-specials": corpus_config("gpt2", merges=200, special_tokens=SPECIALS),
    "byte-lowercase": corpus_config("gpt2", merges=200, normalizer="lowercase"),
    "byte-regex": corpus_config("gpt2", merges=200, pretokenizer="regex", pattern=r" ?[A-Za-z]+|[0-9]{1,3}|[.,;:!?]"),
    "byte-present": corpus_config("gpt2", merges=200, alphabet="present"),  # bytes never seen: the unknown id
    "hf-course": corpus_config("hf-course", merges=200),
    "char-nfkc": corpus_config("hf-course", merges=200, normalizer="nfkc"),
    "char-gpt2": corpus_config("hf-course", merges=200, pretokenizer="gpt2"),  # the space stays in the pieces
    "char-collapse": corpus_config("hf-course", merges=200, pretokenizer="none", normalizer="collapse-whitespace"),
    "sennrich": corpus_config("sennrich", merges=200),  # marker eow: '</w>' a symbol of its own
    "sennrich-glued": corpus_config("sennrich", merges=200, marker="eow-glued"),
    "sp-prefix": corpus_config("sennrich", merges=200, marker="sp-prefix"),
    "g-suffix": corpus_config("suffix-marker", merges=200),
}

# the formats each config can be exported in (the others refuse it); arrow and csv are merge
# lists no tool encodes with
EXPORTS = {
    "gpt2": {"hf", "gpt2", "tiktoken"},
    "gpt4": {"hf", "gpt2", "tiktoken"},
    "o200k": {"hf", "gpt2", "tiktoken"},
    "bytes": {"hf", "gpt2", "tiktoken", "minbpe"},
    "bytes-cl100k": {"hf", "gpt2", "tiktoken", "minbpe"},
    "byte-whitespace": {"hf", "gpt2"},
    "byte-lines": {"hf"},
    "byte-specials": {"hf", "gpt2", "tiktoken"},
    "byte-lowercase": {"hf"},
    "byte-regex": {"hf", "gpt2"},
    "byte-present": {"hf", "gpt2"},
    "hf-course": {"hf"},
    "char-nfkc": {"hf"},
    "char-gpt2": {"hf"},
    "char-collapse": {"hf"},
    "sennrich": {"subword-nmt"},
    "sennrich-glued": {"hf", "subword-nmt"},
    "sp-prefix": {"hf"},
    "g-suffix": set(),
}
ENCODING_FORMATS = ("hf", "gpt2", "tiktoken", "subword-nmt", "minbpe")
HF_CONFIGS = [n for n, fmts in EXPORTS.items() if "hf" in fmts]
TIKTOKEN_CONFIGS = [n for n, fmts in EXPORTS.items() if "tiktoken" in fmts]
BYTE_CONFIGS = [n for n, cfg in CONFIGS.items() if cfg.unit == "byte"]


@cache
def tokenizer(name: str):
    return train(TRAIN_TEXT, CONFIGS[name]).tokenizer()


@cache
def exported(name: str, fmt: str) -> dict[str, bytes]:
    return export_files(tokenizer(name), fmt)


@cache
def probe(sample: str) -> str:
    """A sample corpus's first 4,000 characters, with the special tokens in it."""
    return read_sample(sample)[:4000] + "<|endoftext|>x<pad> <pad>\n"


def string_merges(tok) -> list[tuple[str, str]]:
    return [(tok.vocab[a], tok.vocab[b]) for a, b in tok.merges]


@cache
def hf_tokenizer(name: str) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(exported(name, "hf")["tokenizer.json"].decode("utf-8"))


@cache
def tiktoken_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken's Encoding from our two files of a bundled tokenizer, as a user builds it."""
    return tiktoken_from_files(exported(name, "tiktoken"), name=name)


def tiktoken_from_files(files: dict[str, bytes], *, name: str = "ours") -> tiktoken.Encoding:
    """tiktoken's Encoding from a .tiktoken rank file and its JSON: load_tiktoken_bpe on the rank
    file's path (with tiktoken's download cache off), pat_str and special_tokens from the JSON."""
    meta = json.loads(files["tokenizer.json"])
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = ""  # "": read the file itself, cache nothing
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "tokenizer.tiktoken")
            with open(path, "wb") as f:
                f.write(files["tokenizer.tiktoken"])
            ranks = tiktoken.load.load_tiktoken_bpe(path)
    finally:
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved
    return tiktoken.Encoding(
        name, pat_str=meta["pat_str"], mergeable_ranks=ranks, special_tokens=meta["special_tokens"]
    )


# ---- 1. real loaders give our ids ---------------------------------------------------------------
def test_each_config_exports_in_exactly_the_formats_that_can_represent_it():
    for name in CONFIGS:
        tok = tokenizer(name)
        assert tok.num_merges == 200, name
        ok = {fmt for fmt in ENCODING_FORMATS if export_problem(tok, fmt) is None}
        assert ok == EXPORTS[name], name


@pytest.mark.parametrize("sample", SAMPLE_FILES)
@pytest.mark.parametrize("name", HF_CONFIGS)
def test_hf_loads_our_tokenizer_json_and_gives_our_ids_on_every_sample(name, sample):
    tok, hf = tokenizer(name), hf_tokenizer(name)
    text = probe(sample)
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allow_special=True)


# generated text: any characters, stretches of the training text so that merges fire, odd
# whitespace and letters, and the special tokens
_TRICKY = list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000'’sdmtlvreAZ0159١२²½ǅʰ\u0301!?.,/-_👍🏽é中ßİΣςﬁ")
_fragment = st.builds(lambda a, n: TRAIN_TEXT[a : a + n], st.integers(0, len(TRAIN_TEXT) - 1), st.integers(1, 40))
_ANY_CHAR = st.characters(exclude_categories=("Cs",))  # no lone surrogates: UTF-8 cannot hold them


def texts(chars: st.SearchStrategy[str] = _ANY_CHAR) -> st.SearchStrategy[str]:
    free = st.text(chars, max_size=30)
    parts = st.one_of(free, _fragment, st.text(st.sampled_from(_TRICKY), max_size=6), st.sampled_from(SPECIALS))
    return st.lists(parts, max_size=6).map("".join)


# char level: the training alphabet plus characters it never saw (the export's unk token)
_SEEN = sorted(set(TRAIN_TEXT))
CHAR_TEXT = texts(st.one_of(st.sampled_from(_SEEN), st.sampled_from(_SEEN), _ANY_CHAR))


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("name", HF_CONFIGS)
def test_hf_gives_our_ids_on_generated_text(name, data):
    tok, hf = tokenizer(name), hf_tokenizer(name)
    text = data.draw(texts() if tok.config.unit == "byte" else CHAR_TEXT, label="text")
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allow_special=True)


def test_the_exported_whitespace_class_is_exactly_pythons_whitespace():
    from explorer.formats.exporters import PY_SPACE

    every = "".join(map(chr, range(0x110000)))
    assert re.findall(PY_SPACE, every) == [c for c in every if c.isspace()]


@pytest.mark.parametrize("name", ["hf-course", "byte-whitespace", "char-collapse"])
def test_hf_whitespace_split_cuts_where_our_whitespace_pre_tokenizer_does(name):
    tok, hf = tokenizer(name), hf_tokenizer(name)
    text = "and\x1fthe\x1cof"
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def test_hf_lowercase_normalizer_lowercases_as_ours():
    tok, hf = tokenizer("byte-lowercase"), hf_tokenizer("byte-lowercase")
    text = "ΟΔΟΣ ΑΣ"
    assert hf.normalizer.normalize_str(text) == normalize_str(text, normalizer="lowercase") == "οδοσ ασ"
    assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


@pytest.mark.parametrize("name", [n for n in HF_CONFIGS if CONFIGS[n].unit == "char"])
def test_hf_char_level_export_writes_our_unknown_token_at_our_unk_id(name):
    tok, hf = tokenizer(name), hf_tokenizer(name)
    text = "the ☃ ꙮ world"
    assert "☃" not in TRAIN_TEXT and "ꙮ" not in TRAIN_TEXT
    ids = tok.encode(text)
    assert ids.count(tok.unk_id) == 2
    assert hf.encode(text, add_special_tokens=False).ids == ids
    assert hf.token_to_id(tok.encoding.unk_token) == tok.unk_id


@pytest.mark.parametrize("sample", SAMPLE_FILES)
@pytest.mark.parametrize("name", TIKTOKEN_CONFIGS)
def test_tiktoken_loads_our_files_and_gives_our_ids_on_every_sample(name, sample):
    tok, enc = tokenizer(name), tiktoken_encoding(name)
    text = probe(sample)
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allow_special=True)


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("name", TIKTOKEN_CONFIGS)
def test_tiktoken_gives_our_ids_on_generated_text(name, data):
    tok, enc = tokenizer(name), tiktoken_encoding(name)
    text = data.draw(texts(), label="text")
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allow_special=True)


def as_subword_nmt(tokens: list[str], word: str, unk: str) -> list[str]:
    """Our tokens of a word as apply_bpe writes them: '</w>' dropped, '@@' after every piece but
    the last; apply_bpe keeps a character it has no code for, where we write the unknown token."""
    pieces, pos = [], 0
    for t in tokens:
        if t == EOW:  # marker eow: the separate end symbol, when no merge took it
            continue
        s = word[pos] if t == unk else t.removesuffix(EOW)
        assert word.startswith(s, pos), (tokens, word)
        pieces.append(s)
        pos += len(s)
    assert pos == len(word), (tokens, word)
    return [p + "@@" for p in pieces[:-1]] + pieces[-1:]


@pytest.mark.parametrize("sample", SAMPLE_FILES)
@pytest.mark.parametrize("name, version", [("sennrich", "0.1"), ("sennrich-glued", "0.2")])
def test_subword_nmt_apply_bpe_with_our_codes_segments_every_word_as_we_do(name, version, sample):
    tok = tokenizer(name)
    codes = exported(name, "subword-nmt")["codes.txt"].decode("utf-8")
    assert codes.startswith(f"#version: {version}\n")
    bpe = BPE(io.StringIO(codes))
    words = list(dict.fromkeys(tok.piece_texts(read_sample(sample)[:6000])))
    assert words
    for word in words:
        ours = as_subword_nmt(tok.tokens(tok.encode(word)), word, tok.encoding.unk_token)
        assert bpe.segment_tokens([word]) == ours, word


# what each format cannot represent, and the setting its refusal names
def _small(preset, **kw):
    return make_config(preset, vocab_size=None, num_merges=5, **kw)


REFUSALS = [
    ("hf", _small("sennrich"), "cannot write the 'eow' word marker"),
    ("hf", _small("suffix-marker"), "cannot write the 'g-suffix' word marker"),
    ("hf", _small("sennrich", marker="sp-prefix", pretokenizer="gpt2"), "'gpt2' pieces keep their spaces"),
    ("tiktoken", _small("sennrich", marker="eow-glued"), "character-level"),
    ("tiktoken", _small("gpt4", normalizer="nfkc"), "normalizes its text first (nfkc)"),
    ("tiktoken", _small("gpt4", normalizer="lowercase"), "normalizes its text first (lowercase)"),
    ("tiktoken", _small("gpt4", sequences="lines"), "cuts it into lines first"),
    ("tiktoken", _small("gpt4", pretokenizer="whitespace"), "'whitespace' pre-tokenizer"),
    ("tiktoken", _small("gpt2"), "all 256 bytes"),  # alphabet "present"
    ("gpt2", _small("hf-course"), "character-level"),
    ("gpt2", _small("gpt2", normalizer="nfc"), "normalizes its text first (nfc)"),
    ("gpt2", _small("gpt2", sequences="documents"), "cuts it into documents first"),
    ("minbpe", _small("gpt2", alphabet="full-bytes"), "special tokens the first ids"),
    ("minbpe", _small("bytes", alphabet_order="sorted"), "256 bytes in byte order"),
    ("minbpe", "reused-id", "reused an id"),
    ("hf", "twice-made", "two merges made 'abc' (ids 257 and 259; id reuse is off)"),
    ("gpt2", "twice-made", "two merges made 'abc' (ids 257 and 259; id reuse is off)"),
    ("tiktoken", "twice-made", "two merges made 'abc' (ids 257 and 259; id reuse is off)"),
    ("minbpe", _small("bytes", pretokenizer="whitespace"), "'whitespace' pre-tokenizer"),
    ("minbpe", _small("sennrich"), "character-level"),
    ("subword-nmt", _small("gpt2"), "byte-level"),
    ("subword-nmt", _small("sennrich", marker="sp-prefix"), "marker is 'sp-prefix'"),
    ("subword-nmt", _small("hf-course"), "marker is 'none'"),
    ("subword-nmt", _small("sennrich", pretokenizer="gpt2"), "the 'gpt2' pre-tokenizer"),
    ("subword-nmt", _small("sennrich", normalizer="nfkc"), "normalizes (nfkc)"),
    ("arrow", _small("hf-course", pretokenizer="gpt2"), "holds a space"),
]


@pytest.mark.parametrize("fmt, config, setting", REFUSALS, ids=[f"{f}-{s[:30]}" for f, _, s in REFUSALS])
def test_each_format_refuses_what_it_cannot_represent_naming_the_setting(fmt, config, setting):
    if config in ("reused-id", "twice-made"):  # 'ab' + 'c', then 'a' + 'bc': 'abc' again, the same id with reuse on
        reuse = config == "reused-id"
        tok = Tokenizer(
            config=_small("bytes", reuse_ids=reuse),
            alphabet=byte_alphabet(),
            merges=[(97, 98), (256, 99), (98, 99), (97, 258)],
        )
        assert tok.merged_ids == ([256, 257, 258, 257] if reuse else [256, 257, 258, 259])
    else:
        tok = train("low lower lowest aa aa aa\nnewer  newest wider  widest\n" * 3, config).tokenizer()
    assert tok.num_merges > 0
    with pytest.raises(ConfigError, match=re.escape(setting)):
        export_files(tok, fmt)
    assert setting in export_problem(tok, fmt)


# ---- 2. round trips: export, import, the same tokenizer -----------------------------------------
IMPORTABLE = ("hf", "gpt2", "tiktoken", "minbpe", "trace")
ROUND_TRIPS = [(fmt, name) for name, fmts in EXPORTS.items() for fmt in IMPORTABLE if fmt in fmts or fmt == "trace"]


def reimport(name: str, fmt: str):
    cfg = CONFIGS[name]
    # vocab.json + merges.txt hold no regex: the user names the pre-tokenizer when importing
    kw = {"pretokenizer": cfg.pretokenizer, "pattern": cfg.pattern} if fmt == "gpt2" else {}
    return import_files(exported(name, fmt), **kw)


def test_every_importable_format_is_round_tripped_here():
    # subword-nmt above; arrow and csv (merge lists without an alphabet) in test_import_files.py;
    # Mistral's tekken.json is read only (tests/test_tekken.py reads Mistral's own files)
    assert set(IMPORTABLE) | {"subword-nmt", "arrow", "csv", "tekken"} == set(IMPORT_FORMATS)
    assert {fmt for fmt, _ in ROUND_TRIPS} == set(IMPORTABLE)
    assert set(EXPORT_FORMATS) == set(IMPORT_FORMATS) - {"tekken"}


@pytest.mark.parametrize("fmt, name", ROUND_TRIPS)
def test_import_of_our_export_gives_the_same_merges_and_ids(fmt, name):
    tok = tokenizer(name)
    back = reimport(name, fmt)
    assert string_merges(back) == string_merges(tok)
    assert back.special_ids == tok.special_ids
    for sample in SAMPLE_FILES:
        text = probe(sample)
        assert back.encode(text, allow_special=True) == tok.encode(text, allow_special=True), sample


@pytest.mark.parametrize("fmt, name", [(f, n) for f, n in ROUND_TRIPS if f in ("hf", "trace")])
def test_tokenizer_json_and_trace_round_trips_keep_the_config_and_unknown_token(fmt, name):
    tok = tokenizer(name)
    back = reimport(name, fmt)
    assert back.vocab.tokens == tok.vocab.tokens
    assert back.unk_id == tok.unk_id
    for field in ("normalizer", "pretokenizer", "pattern", "sequences", "unit", "marker", "special_tokens"):
        assert getattr(back.config, field) == getattr(tok.config, field), field
    if tok.config.unit == "char":
        assert back.encode("the ☃ world") == tok.encode("the ☃ world")


@pytest.mark.parametrize("name", ["sennrich", "sennrich-glued"])
def test_subword_nmt_codes_round_trip_to_the_same_merges_and_segmentation(name):
    tok = tokenizer(name)
    back = import_files(exported(name, "subword-nmt"))
    assert back.config.marker == tok.config.marker
    assert string_merges(back) == string_merges(tok)
    # the codes list no alphabet: the imported one is the symbols the merges use
    assert set(back.alphabet) < set(tok.alphabet)
    compared = 0
    for sample in SAMPLE_FILES:
        for word in dict.fromkeys(tok.piece_texts(probe(sample))):
            if set(tok.base_tokens(word)) <= set(back.alphabet):
                assert back.tokens(back.encode(word)) == tok.tokens(tok.encode(word)), word
                compared += 1
    assert compared > 1000


def test_bundled_cl100k_round_trips_through_tiktoken_files():
    tok = load_pretrained("cl100k_base")
    files = export_files(tok, "tiktoken")
    assert json.loads(files["tokenizer.json"])["special_tokens"] == tok.special_ids
    back = import_files(files)
    assert back.merges == tok.merges and back.special_ids == tok.special_ids
    for sample in ("udhr_en.txt", "udhr_hi.txt", "python_stdlib_sample.txt", "mixed_emoji_multilingual.txt"):
        text = probe(sample)
        assert back.encode(text, allow_special=True) == tok.encode(text, allow_special=True), sample


def test_bundled_gpt2_round_trips_through_vocab_json_and_merges_txt_files():
    from explorer.formats.importers import tokenizer_from_gpt2_files

    tok = load_pretrained("gpt2")
    files = export_files(tok, "gpt2")
    back = tokenizer_from_gpt2_files(files["vocab.json"].decode("utf-8"), files["merges.txt"].decode("utf-8"))
    assert back.merges == tok.merges and back.special_ids == tok.special_ids
    for sample in ("udhr_en.txt", "udhr_hi.txt", "python_stdlib_sample.txt", "mixed_emoji_multilingual.txt"):
        text = probe(sample)
        assert back.encode(text, allow_special=True) == tok.encode(text, allow_special=True), sample


@pytest.mark.parametrize("fmt", ["trace", "tiktoken", "hf"])
def test_an_imported_tokenizer_with_special_tokens_past_its_vocabulary_round_trips(fmt):
    tok = load_pretrained("cl100k_base").truncate(3000)  # tiktoken's rules, <|endoftext|> = 100257, ...
    assert tok.rules == "tiktoken" and min(tok.special_ids.values()) > len(tok.vocab)
    back = import_files(export_files(tok, fmt))
    assert back.merges == tok.merges and back.special_ids == tok.special_ids
    for sample in ("udhr_en.txt", "python_stdlib_sample.txt", "mixed_emoji_multilingual.txt"):
        text = probe(sample) + "<|endoftext|><|fim_prefix|> <|endofprompt|>"
        assert back.encode(text, allow_special=True) == tok.encode(text, allow_special=True), sample


def test_import_files_reads_a_vocab_json_holding_the_token_model():
    tok = train("model " * 20 + "modal mode", corpus_config("gpt2", merges=20)).tokenizer()
    files = export_files(tok, "gpt2")
    assert '"model":' in files["vocab.json"].decode("utf-8")
    assert string_merges(import_files(files)) == string_merges(tok)


# ---- 3. malformed files: a FormatError naming the file and the line or key ----------------------
def refused(files: dict[str, bytes], **kw) -> str:
    """The FormatError's message (any other exception fails the test)."""
    with pytest.raises(FormatError) as err:
        import_files(files, **kw)
    return str(err.value)


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def test_a_truncated_tokenizer_json_is_not_valid_json_at_its_line_and_column():
    text = exported("gpt2", "hf")["tokenizer.json"].decode("utf-8")
    cut = text[: len(text) // 2]
    msg = refused({"tokenizer.json": cut.encode("utf-8")})
    line = cut.count("\n") + 1
    assert re.fullmatch(rf"tokenizer\.json is not valid JSON \(cut short\?\): line {line}, column \d+: .+", msg), msg


@pytest.mark.parametrize(
    "model, kind",
    [
        (lambda: tokenizers.models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"), "WordPiece"),
        (lambda: tokenizers.models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0)], unk_id=0), "Unigram"),
    ],
)
def test_a_tokenizer_json_of_another_model_is_refused_naming_its_type(model, kind):
    data = tokenizers.Tokenizer(model()).to_str().encode("utf-8")
    assert (
        refused({"tokenizer.json": data}) == f"tokenizer.json 'model.type' is '{kind}': only BPE models can be imported"
    )


def test_a_tokenizer_json_merge_of_unknown_tokens_is_refused_naming_its_index():
    data = json.loads(exported("hf-course", "hf")["tokenizer.json"])
    data["model"]["merges"].insert(7, ["qq", "zz"])
    msg = refused({"tokenizer.json": json.dumps(data).encode("utf-8")})
    assert msg == "tokenizer.json 'model.merges[7]': 'qq' is not in tokenizer.json 'model.vocab'"


def test_a_merges_txt_line_of_unknown_tokens_is_refused_naming_its_line():
    files = dict(exported("gpt2", "gpt2"))
    lines = _lines(files["merges.txt"])
    lines.insert(5, "Ġqqqq zz".encode())  # after the header and four merges: line 6
    files["merges.txt"] = b"\n".join(lines)
    assert refused(files) == "merges.txt line 6: 'Ġqqqq' is not in vocab.json"


def _tiktoken_with_line_300(make) -> dict[str, bytes]:
    """The gpt4 export with its .tiktoken's line 300 replaced by ``make(lines)``."""
    files = dict(exported("gpt4", "tiktoken"))
    lines = _lines(files["tokenizer.tiktoken"])
    lines[299] = make(lines)
    files["tokenizer.tiktoken"] = b"\n".join(lines)
    return files


def test_bad_base64_in_a_tiktoken_file_is_refused_naming_its_line():
    files = _tiktoken_with_line_300(lambda lines: b"#%!! " + lines[299].split()[1])
    assert refused(files) == "tokenizer.tiktoken line 300: bad base64 '#%!!'"


def test_a_rank_given_twice_in_a_tiktoken_file_is_refused_naming_both_lines():
    files = _tiktoken_with_line_300(lambda lines: lines[299].split()[0] + b" " + lines[298].split()[1])
    assert refused(files) == "tokenizer.tiktoken line 300: rank 298 is given twice (also on line 299)"


def test_a_token_given_twice_in_a_tiktoken_file_is_refused_naming_both_lines():
    files = _tiktoken_with_line_300(lambda lines: lines[9].split()[0] + b" " + lines[299].split()[1])
    token = base64.b64decode(_lines(files["tokenizer.tiktoken"])[9].split()[0])
    assert refused(files) == f"tokenizer.tiktoken line 300: the token {token!r} already has rank 9 (line 10)"


@pytest.mark.parametrize(
    "name, fmt, file",
    [
        ("gpt2", "gpt2", "merges.txt"),
        ("sennrich", "subword-nmt", "codes.txt"),
        ("sennrich-glued", "subword-nmt", "codes.txt"),
    ],
)
def test_a_merges_or_codes_file_without_its_version_header_is_refused_at_line_1(name, fmt, file):
    files = dict(exported(name, fmt))
    first, rest = files[file].split(b"\n", 1)
    assert first.startswith(b"#version: 0.")
    files[file] = rest
    msg = refused(files)
    assert msg.startswith(f"{file} line 1: a '#version' header is missing (found "), msg


def test_a_subword_nmt_codes_file_of_an_unknown_version_is_refused_at_line_1():
    codes = exported("sennrich", "subword-nmt")["codes.txt"].replace(b"#version: 0.1", b"#version: 0.3", 1)
    assert refused({"codes.txt": codes}) == "codes.txt line 1: version '0.3' (subword-nmt writes 0.1 or 0.2)"


def test_a_minbpe_model_with_a_wrong_version_line_is_refused_at_line_1():
    model = exported("bytes", "minbpe")["tokenizer.model"].replace(b"minbpe v1", b"minbpe v2", 1)
    assert refused({"tokenizer.model": model}) == "tokenizer.model line 1: expected 'minbpe v1', found 'minbpe v2'"


def test_a_minbpe_model_merging_an_id_not_made_yet_is_refused_naming_its_line():
    lines = _lines(exported("bytes", "minbpe")["tokenizer.model"])
    assert lines[:3] == [b"minbpe v1", b"", b"0"]
    lines[9] = b"97 400"  # line 10 is merge 7, which makes id 262
    msg = refused({"tokenizer.model": b"\n".join(lines)})
    assert msg == "tokenizer.model line 10: id 400 is not made before merge 7 (which makes id 262)"


def test_a_vocab_json_whose_ids_disagree_with_its_merges_is_refused_naming_the_merge_line():
    files = dict(exported("gpt2", "gpt2"))
    vocab = json.loads(files["vocab.json"])
    merges = files["merges.txt"].decode("utf-8").split("\n")
    a, b = "".join(merges[1].split(" ")), "".join(merges[4].split(" "))  # lines 2 and 5 make ids 257 and 260
    assert (vocab[a], vocab[b]) == (257, 260)
    vocab[a], vocab[b] = vocab[b], vocab[a]
    files["vocab.json"] = json.dumps(vocab).encode("utf-8")
    msg = refused(files)
    assert msg.startswith(f"merges.txt line 2 makes {a!r} id 257, but vocab.json gives it id 260"), msg


def test_a_vocab_json_id_past_the_merges_is_reported_at_the_merge_that_makes_the_token():
    files = {
        "vocab.json": json.dumps({"a": 0, "b": 1, "c": 2, "ab": 9, "abc": 4}).encode("utf-8"),
        "merges.txt": b"#version: 0.2\na b\nab c\n",
    }
    assert refused(files).startswith("merges.txt line 2 makes 'ab' id 3, but vocab.json gives it id 9")


def test_a_vocab_json_without_its_merges_txt_is_refused_saying_what_is_missing():
    msg = refused({"vocab.json": exported("gpt2", "gpt2")["vocab.json"]})
    assert (
        msg
        == "cannot tell which tokenizer these files make: vocab.json (vocab-json); a vocab.json needs its merges.txt"
    )


def test_a_tiktoken_json_without_its_rank_file_is_refused_saying_what_is_missing():
    msg = refused({"tokenizer.json": exported("gpt4", "tiktoken")["tokenizer.json"]})
    assert msg.endswith("a tiktoken JSON needs its .tiktoken file"), msg


@pytest.mark.parametrize(
    "name, fmt, file",
    [
        ("gpt2", "gpt2", "merges.txt"),
        ("gpt2", "hf", "tokenizer.json"),
        ("sennrich", "subword-nmt", "codes.txt"),
        ("gpt2", "trace", "trace.json"),
        ("bytes", "minbpe", "tokenizer.model"),
    ],
)
def test_a_file_that_is_not_utf8_is_refused_naming_the_file_and_byte(name, fmt, file):
    files = dict(exported(name, fmt))
    at = files[file].index(b"\n", len(files[file]) // 3) + 1  # a line's start: no character is cut
    files[file] = files[file][:at] + b"\xff\xfe" + files[file][at:]
    assert refused(files).startswith(f"{file} is not UTF-8 text (byte {at})")


# any bytes, and valid exports cut short, with lines dropped, repeated or swapped, bytes changed,
# or one JSON value replaced: import_files reads them or raises FormatError, nothing else
FUZZ_EXPORTS = [
    ("gpt2", "hf"),
    ("sennrich-glued", "hf"),
    ("sp-prefix", "hf"),
    ("byte-specials", "gpt2"),
    ("byte-specials", "tiktoken"),
    ("bytes", "tiktoken"),
    ("sennrich", "subword-nmt"),
    ("sennrich-glued", "subword-nmt"),
    ("bytes-cl100k", "minbpe"),
    ("hf-course", "trace"),
    ("byte-specials", "trace"),
]
FILE_NAMES = [
    "tokenizer.json",
    "vocab.json",
    "merges.txt",
    "codes.txt",
    "cl100k_base.tiktoken",
    "tokenizer.model",
    "tokenizer.vocab",
    "trace.json",
    "codes",
]
_JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**6),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.just([]),
    st.just({}),
    st.just(["a", "b"]),
    st.just([1, 2]),
    st.just({"a": 1}),
)


@st.composite
def mutated_json(draw, data: bytes) -> bytes:
    obj = json.loads(data)
    node = obj
    while True:  # walk down to a random value and replace it
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = draw(st.sampled_from(keys[:50]))
        if isinstance(node[key], (dict, list)) and node[key] and draw(st.booleans()):
            node = node[key]
            continue
        if isinstance(node, dict) and draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(_JSON_VALUES)
        break
    return json.dumps(obj).encode("utf-8")


@st.composite
def mutated_lines(draw, data: bytes) -> bytes:
    lines = data.split(b"\n")
    i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["drop", "repeat", "swap", "replace"]))
    if how == "drop":
        del lines[i]
    elif how == "repeat":
        lines.insert(j, lines[i])
    elif how == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i] = draw(
            st.one_of(st.binary(max_size=12), st.sampled_from([b"", b"a b", b"1 2", b"IQ== 5", b"0", b"Zg=="]))
        )
    return b"\n".join(lines)


@st.composite
def damaged_exports(draw) -> dict[str, bytes]:
    name, fmt = draw(st.sampled_from(FUZZ_EXPORTS))
    files = dict(exported(name, fmt))
    file = draw(st.sampled_from(sorted(files)))
    data = files[file]
    how = draw(st.sampled_from(["cut", "lines", "byte", "json", "drop-file"]))
    if how == "cut":
        files[file] = data[: draw(st.integers(0, len(data)))]
    elif how == "lines":
        files[file] = draw(mutated_lines(data))
    elif how == "byte":
        at = draw(st.integers(0, len(data) - 1))
        files[file] = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
    elif how == "json" and file.endswith(".json"):
        files[file] = draw(mutated_json(data))
    elif how == "drop-file" and len(files) > 1:
        del files[file]
    return files


_ANY_FILES = st.dictionaries(
    st.sampled_from(FILE_NAMES),
    st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200).map(str.encode),
        st.sampled_from(
            [
                b"{}",
                b"[]",
                b'{"model": {}}',
                b"#version: 0.2\n",
                b"minbpe v1\n\n0\n",
                b"IQ== 0\n",
                b'{"a": 0}',
                b'{"pat_str": 1}',
                b'{"format": "bpe-explorer-trace"}',
            ]
        ),
    ),
    max_size=3,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.one_of(_ANY_FILES, damaged_exports()))
def test_import_files_reads_any_files_or_raises_format_error(files):
    try:
        tok = import_files(files)
    except FormatError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert isinstance(tok, Tokenizer)
    tok.decode(tok.encode("a Ab 1\n"))


@pytest.mark.parametrize("specials", [{"<a>": 600, "<b>": 600}, {"": 600}])
def test_a_tiktoken_json_with_special_tokens_sharing_an_id_is_a_format_error(specials):
    files = dict(exported("gpt4", "tiktoken"))
    files["tokenizer.json"] = json.dumps(
        {"pat_str": json.loads(files["tokenizer.json"])["pat_str"], "special_tokens": specials}
    ).encode("utf-8")
    assert "tiktoken" in refused(files)


def test_a_trace_whose_unknown_token_is_not_a_string_is_a_format_error():
    trace = json.loads(exported("hf-course", "trace")["trace.json"])
    trace["encoding"] = {"unk_token": 5, "dropout_style": "retry"}
    refused({"trace.json": json.dumps(trace).encode("utf-8")})


# ---- 4. decoding gives the text back ------------------------------------------------------------
# test_properties checks decode(encode(x)) == normalize(x) at byte level (no special tokens) and
# test_decode checks single-spaced words at char level and the bundled tables against tiktoken;
# here: special tokens, imported tokenizers, any whitespace at char level, and errors="strict".
@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize(
    "name",
    [
        n
        for n in BYTE_CONFIGS
        if CONFIGS[n].normalizer == "none"
        and CONFIGS[n].alphabet == "full-bytes"
        and CONFIGS[n].pretokenizer != "whitespace"
    ],
)
def test_byte_level_decode_gives_back_any_text_with_special_tokens_also_once_imported(name, data):
    text = data.draw(texts(), label="text")
    tok = tokenizer(name)
    assert tok.decode(tok.encode(text, allow_special=True)) == text
    fmt = "tiktoken" if "tiktoken" in EXPORTS[name] else "hf"
    back = reimport(name, fmt)  # tiktoken's rules when read from a .tiktoken
    assert back.decode(back.encode(text, allow_special=True)) == text


MARKERS = ("none", "eow", "eow-glued", "g-suffix", "sp-prefix")
MARKER_TEXT = {"eow": EOW, "eow-glued": EOW, "g-suffix": G_SUFFIX, "sp-prefix": SP_PREFIX}


@cache
def char_tokenizer(marker: str, pretokenizer: str):
    return train(
        TRAIN_TEXT, corpus_config("sennrich", merges=200, marker=marker, pretokenizer=pretokenizer)
    ).tokenizer()


def decoded_text(tok, text: str) -> str:
    """What char-level decode gives back: the pieces, joined as the marker says. No marker: the
    pieces as they are (all of the text, but the whitespace the whitespace pre-tokenizer drops);
    a suffix marker ('</w>', 'Ġ') becomes one space after each piece, the last one dropped; the
    prefix '▁' one space before each piece, the first one dropped."""
    pieces = list(tok.piece_texts(text))
    marker = tok.config.marker
    if marker == "none":
        return "".join(pieces)
    joined = " ".join(pieces)
    return joined.lstrip(" ") if marker == "sp-prefix" else joined.rstrip(" ")


_SPACES = list(" \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000")
_TRAIN_WORDS = sorted(set(TRAIN_TEXT.split()))


@cache
def marked_text(tok) -> st.SearchStrategy[str]:
    """Training words, characters and whitespace a char-level tokenizer knows in every place
    (eow-glued: also ending a word), so that few texts hold the unknown token. Made once a
    tokenizer: hypothesis builds a strategy drawn from ``data`` again at every example."""
    ok = {c for c in tok.alphabet if len(c) == 1 and (tok.config.marker != "eow-glued" or c + EOW in tok.alphabet)}
    chars = sorted(ok - set(_SPACES))
    spaces = [c for c in _SPACES if c in ok or tok.config.pretokenizer == "whitespace"]
    return st.lists(
        st.one_of(
            st.sampled_from(_TRAIN_WORDS),
            st.text(st.sampled_from(chars), min_size=1, max_size=8),
            st.text(st.sampled_from(spaces), min_size=1, max_size=3),
        ),
        max_size=8,
    ).map("".join)


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize(
    "marker, pretokenizer", [(m, p) for m in MARKERS for p in ("whitespace", "gpt2")] + [("none", "none")]
)  # a marker marks words: not without pre-tokenization
def test_char_level_decode_gives_the_text_back_as_each_marker_writes_it(marker, pretokenizer, data):
    tok = char_tokenizer(marker, pretokenizer)
    text = data.draw(marked_text(tok), label="text")
    assume(marker == "none" or MARKER_TEXT[marker] not in text)  # the text would spell a marker
    ids = tok.encode(text)
    assume(tok.unk_id not in ids)  # a character never seen (eow-glued: never seen ending a word)
    out = tok.decode(ids)
    assert out == decoded_text(tok, text)
    if pretokenizer == "whitespace":  # the words, whitespace runs as one space (none: no space)
        assert out == ("" if marker == "none" else " ").join(text.split())
    elif marker == "none":  # the pieces cover the text: all of it
        assert out == text


@cache
def _id_lists(tok):
    """Any ids of a tokenizer: tokens, pieces of a character, special tokens, the unknown id
    (made once a tokenizer: finding the pieces of a character reads the whole vocabulary)."""
    partial = [i for i in range(len(tok.vocab)) if not is_utf8(tok.token_bytes(i))] or [0]
    extra = sorted(tok.special_ids.values()) + [tok.unk_id]
    return st.lists(
        st.one_of(st.integers(0, len(tok.vocab) - 1), st.sampled_from(partial), st.sampled_from(extra)), max_size=10
    )


STRICT_CONFIGS = ["gpt2", "bytes", "byte-specials", "byte-present", "hf-course", "sennrich", "sp-prefix"]


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("name", STRICT_CONFIGS)
def test_strict_decode_raises_exactly_when_the_bytes_are_not_utf8(name, data):
    tok = tokenizer(name)
    ids = data.draw(_id_lists(tok), label="ids")
    raw = tok.decode_bytes(ids)
    if is_utf8(raw):
        text = tok.decode(ids, errors="strict")
        assert text == tok.decode(ids, errors="replace") == tok.decode(ids, errors="ignore")
        if tok.config.unit == "byte":
            assert text == raw.decode("utf-8")
    else:
        assert tok.config.unit == "byte"
        with pytest.raises(
            DecodeError, match=r"^the bytes (do not end as|are not) UTF-8: byte \d+ \(in token \d+, id \d+\)"
        ):
            tok.decode(ids, errors="strict")
        assert tok.decode(ids, errors="replace") == raw.decode("utf-8", errors="replace")


def test_a_pre_tokenizer_choice_is_used_only_by_files_that_name_no_regex():
    from explorer.formats.importers import needs_pretokenizer

    tiktoken_files = exported("gpt4", "tiktoken")
    rank_file = {"tokenizer.tiktoken": tiktoken_files["tokenizer.tiktoken"]}
    assert not needs_pretokenizer(tiktoken_files) and needs_pretokenizer(rank_file)
    assert needs_pretokenizer(exported("gpt4", "gpt2")) and not needs_pretokenizer(exported("gpt4", "hf"))
    # the JSON's pat_str (cl100k) wins over a choice made for other files
    assert import_files(tiktoken_files, pretokenizer="gpt2").config.pretokenizer == "cl100k"
    assert import_files(exported("gpt4", "hf"), pretokenizer="gpt2").config.pretokenizer == "cl100k"
    assert import_files(rank_file, pretokenizer="o200k").config.pretokenizer == "o200k"
    assert import_files(exported("gpt4", "gpt2"), pretokenizer="o200k").config.pretokenizer == "o200k"
