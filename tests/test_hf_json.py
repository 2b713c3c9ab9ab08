"""HF ``tokenizers``' tokenizer.json as its makers write it: each BPE option either gives HF's
ids on a hostile multilingual text or is refused with a sentence naming it.

The files are made by the makers themselves: HF ``tokenizers`` (``models.BPE(..., ignore_merges=True)``,
its trainer) and transformers' tiktoken converter (``TikTokenConverter``, which writes Llama 3's,
gpt-oss's and Mistral's conversions: every split of a token listed as a merge, ``ignore_merges``
on). Our import of each file must give the ids HF gives loading the same file.
"""

from __future__ import annotations

import base64
import copy
import json
import tempfile
from functools import cache
from pathlib import Path

import pytest
import tokenizers
from conftest import read_sample
from tokenizers import decoders, models, pre_tokenizers, trainers

from explorer.errors import ConfigError, FormatError
from explorer.formats.exporters import export_files
from explorer.formats.importers import import_files, import_report
from explorer.formats.shared import in_making_order
from explorer.stages.units import display_to_bytes

# numbers, whitespace runs, emoji (with a skin tone and a ZWJ family), CJK, Devanagari, Arabic,
# contractions, a lone combining mark, tabs and CRLF
HOSTILE = (
    "Hello, world! 1234567 3.14159 2024-11-27 ١٢٣٤ ۱۲۳\n\n   spaces\t\ttabs  \r\n"
    "🙂👍🏽 👨‍👩‍👧 東京タワーは日本語のテキストです。 中文字符 "
    "नमस्ते दुनिया, मानव अधिकार ।  العربية مرحبا بالعالم، حقوق الإنسان "
    "they'll we're don't  THE the then there other \u0301x  end\n"
)
# the pattern TikTokenConverter writes by default (cl100k's, as HF's regex engine needs it)
CONVERTER_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)
CORPUS = "\n".join(read_sample(n) for n in ("udhr_en.txt", "udhr_hi.txt", "udhr_ar.txt", "udhr_zh_hans.txt"))


def hf_ids(data: dict, text: str = HOSTILE) -> list[int]:
    """HF's ids for a text, loading the tokenizer.json ``data`` as a file of it."""
    return tokenizers.Tokenizer.from_str(json.dumps(data)).encode(text, add_special_tokens=False).ids


def our_ids(data: dict, text: str = HOSTILE) -> list[int]:
    """Our ids for a text, as we show them (the file's own, ``Tokenizer.shown_ids``)."""
    tok = import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    return tok.shown_ids(tok.encode(text))


def refusal(data: dict) -> str:
    with pytest.raises(FormatError) as err:
        import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    return str(err.value)


# ---- transformers' tiktoken converter ------------------------------------------------------------
@cache
def byte_level_trained() -> dict:
    """A byte-level BPE trained by HF's own trainer on four scripts (its ids are a rank table)."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1200, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([CORPUS], trainer)
    return json.loads(tok.to_str())


@cache
def converted() -> dict:
    """A Llama-3-like tokenizer.json, as transformers' converter writes it: the trained table as
    tiktoken ranks, plus words of the hostile text added at the end with two tokens that straddle
    the table's cuts of them, as Llama 3 added 28,000 tokens to cl100k's."""
    from transformers.convert_slow_tokenizer import TikTokenConverter

    trained = byte_level_trained()
    ranks = {display_to_bytes(t): i for t, i in sorted(trained["model"]["vocab"].items(), key=lambda kv: kv[1])}
    merged = tokenizers.Tokenizer.from_str(json.dumps(trained))
    split = pre_tokenizers.Split(tokenizers.Regex(CONVERTER_PATTERN), behavior="isolated")
    for word, _ in split.pre_tokenize_str(HOSTILE):
        # a word the table merges into [a, bc, d] gets tokens "ab", "cd" and itself:
        # merging never makes "ab" there, so only ignore_merges takes the word whole
        segments = [display_to_bytes(t) for t in merged.encode(word).tokens]
        if len(segments) == 3 and len(segments[1]) == 2:
            left, right = segments[0] + segments[1][:1], segments[1][1:] + segments[2]
            for token in (left, right, left + right):
                ranks.setdefault(token, len(ranks))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tokenizer.tiktoken"
        path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
        return json.loads(TikTokenConverter(vocab_file=str(path), pattern=CONVERTER_PATTERN).converted().to_str())


def test_a_tokenizer_json_from_transformers_tiktoken_converter_gives_hf_ids_with_and_without_ignore_merges():
    data = converted()
    merges = [tuple(m) for m in data["model"]["merges"]]
    assert not in_making_order(data["model"]["vocab"], merges)  # the layout refused before: parts made later
    assert data["model"]["ignore_merges"] is True  # as the converter writes it
    merging_only = copy.deepcopy(data)
    merging_only["model"]["ignore_merges"] = False
    assert hf_ids(data) != hf_ids(merging_only)  # whole words in the table: the option matters here
    assert our_ids(data) == hf_ids(data)
    assert our_ids(merging_only) == hf_ids(merging_only)


def test_a_converter_layout_file_exports_back_to_tokenizer_json_and_hf_reads_our_ids():
    tok = import_files({"tokenizer.json": json.dumps(converted()).encode("utf-8")})
    back = json.loads(export_files(tok, "hf")["tokenizer.json"])
    assert back["model"]["ignore_merges"] is True
    assert hf_ids(back) == tok.encode(HOSTILE) == hf_ids(converted())


def test_a_converter_layout_file_keeps_its_merge_list_and_options_through_trace_json():
    # the CLI's import writes a trace.json, which every command reads
    tok = import_files({"tokenizer.json": json.dumps(converted()).encode("utf-8")})
    again = import_files(export_files(tok, "trace"))
    assert again.pair_rules == tok.pair_rules and again.encoding.ignore_merges
    assert again.encode(HOSTILE) == hf_ids(converted())


@pytest.mark.parametrize("fmt", ["gpt2", "tiktoken"])
def test_a_converter_layout_file_is_not_exported_where_its_merge_list_would_be_lost(fmt):
    tok = import_files({"tokenizer.json": json.dumps(converted()).encode("utf-8")})
    with pytest.raises(ConfigError, match="cannot hold HF's a merge list of every split"):
        export_files(tok, fmt)


def test_a_converter_layout_file_rewound_to_a_merge_encodes_with_the_merges_made_by_then():
    tok = import_files({"tokenizer.json": json.dumps(converted()).encode("utf-8")})
    early = tok.truncate(10)
    assert max(early.encode(HOSTILE)) < len(early.vocab)
    assert all(max(r[1], *pair) < len(early.vocab) for pair, r in early.merge_rules().items())


def test_a_token_with_a_lower_id_than_its_parts_opens_with_hfs_ids():
    """Once refused ("made by no merge of two tokens with lower ids"): HF takes any numbering,
    so the file's ids are kept beside the derived ones (``Tokenizer.file_ids``)."""
    data = copy.deepcopy(converted())
    vocab = data["model"]["vocab"]
    # the last word added (Llama 3's case): it takes the id of the first part it is made of
    word = max(vocab, key=vocab.__getitem__)
    part = next(a for a, b in data["model"]["merges"] if a + b == word)
    vocab[word], vocab[part] = vocab[part], vocab[word]
    tok = import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    text = HOSTILE + word + part
    assert tok.shown_ids(tok.encode(text)) == hf_ids(data, text)
    assert tok.shown_id(tok.token_to_id(word)) == vocab[word] < vocab[part] == tok.shown_id(tok.token_to_id(part))


@pytest.mark.parametrize("bad", ["x", -1, True, 1.5])
def test_an_id_that_is_no_whole_number_is_refused_with_a_sentence_whichever_order_the_ids_are_in(bad):
    """A trainer's order (its reading fails, then the converter's reading compared ids and raised
    TypeError) and the converter's layout."""
    big = converted()["model"]
    for vocab, merges in (({"a": 0, "b": 1, "ab": 2}, [["a", "b"]]), (big["vocab"], big["merges"])):
        data = {"model": {"type": "BPE", "vocab": {**vocab, "a": bad}, "merges": merges}}
        assert refusal(data) == f"tokenizer.json 'model.vocab': 'a' has id {bad!r}, not a non-negative integer"


@pytest.mark.parametrize("kind", [[], {"a": 1}, None, 7])
def test_a_pre_tokenizer_whose_type_is_no_name_is_refused_with_a_sentence(kind):
    # found by hypothesis in test_interop: a list as the type was looked up as a key (TypeError)
    data = {
        "pre_tokenizer": {"type": kind},
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
    }
    assert refusal(data) == (
        f"tokenizer.json 'pre_tokenizer': {kind!r} is not supported here (supported: WhitespaceSplit, "
        "a Split on a regex, ByteLevel, Metaspace after WhitespaceSplit, and a Sequence of them)"
    )


# ---- HF-built BPE models with each option ---------------------------------------------------------
def char_model(**options) -> dict:
    """A character-level BPE that HF's trainer learns on the four scripts, saved with ``options``
    set on its model, as HF writes them."""
    trained = char_trained()
    model = models.BPE(
        vocab=trained["model"]["vocab"], merges=[tuple(m) for m in trained["model"]["merges"]], **options
    )
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.Fuse()
    return json.loads(tok.to_str())


@cache
def char_trained() -> dict:
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # characters seen fewer than 5 times stay out: the hostile text has unknown runs
    tok.train_from_iterator(
        [CORPUS], trainers.BpeTrainer(vocab_size=900, min_frequency=5, special_tokens=["<unk>"], limit_alphabet=120)
    )
    return json.loads(tok.to_str())


def test_ignore_merges_takes_a_word_of_the_vocabulary_whole_as_hf_does():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    merges = [("b", "c"), ("a", "b"), ("ab", "c")]
    expected = {False: [0, 4, 0, 4, 3], True: [5, 0, 4, 3]}  # "abc" is one token only with the option
    for ignore in (False, True):
        tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=ignore))
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
        data = json.loads(tok.to_str())
        assert our_ids(data, "abc abcab") == hf_ids(data, "abc abcab") == expected[ignore]


@pytest.mark.parametrize("ignore_merges", [False, True])
@pytest.mark.parametrize("fuse_unk", [False, True])
def test_a_character_level_file_with_ignore_merges_and_fuse_unk_gives_hf_ids(ignore_merges, fuse_unk):
    data = char_model(unk_token="<unk>", ignore_merges=ignore_merges, fuse_unk=fuse_unk)
    assert data["model"]["fuse_unk"] is fuse_unk and data["model"]["ignore_merges"] is ignore_merges
    assert our_ids(data) == hf_ids(data)


def test_fuse_unk_changes_hf_ids_on_the_hostile_text():
    # the test above compares something: runs of unknown characters fuse here
    plain = hf_ids(char_model(unk_token="<unk>"))
    assert len(hf_ids(char_model(unk_token="<unk>", fuse_unk=True))) < len(plain)


# ---- the refusal net: every option we do not apply as HF does is named ----------------------------
def _set(path: str, value: object):
    """A change to a tokenizer.json: ``path`` is dotted keys ("model.dropout")."""

    def change(data: dict) -> None:
        *outer, last = path.split(".")
        for key in outer:
            data = data[key]
        data[last] = value

    return change


def _added(**options):
    def change(data: dict) -> None:
        data["added_tokens"] = [{"id": 0, "content": "<unk>", "special": True, "normalized": False, **options}]

    return change


REFUSED = {
    "dropout": (_set("model.dropout", 0.1), "'model.dropout' is 0.1: HF skips merges at random on every encode"),
    "byte_fallback without its byte tokens": (
        lambda d: d.update(
            model={**d["model"], "byte_fallback": True},
            decoder={"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
        ),
        "byte fallback needs the 256 byte tokens <0x00> ... <0xFF> in the vocabulary",
    ),
    "continuing_subword_prefix": (
        _set("model.continuing_subword_prefix", "##"),
        "'model.continuing_subword_prefix' is '##': word-continuation prefixes are not supported",
    ),
    "end_of_word_suffix": (
        _set("model.end_of_word_suffix", "_"),
        "'model.end_of_word_suffix' is '_': only '</w>' on character-level BPE is supported",
    ),
    "max_token_length": (
        _set("model.max_token_length", 16),
        "'model.max_token_length' is 16: this option is not supported",
    ),
    "ignore_merges with a suffix": (
        lambda d: d["model"].update(ignore_merges=True, end_of_word_suffix="</w>"),
        "'model.ignore_merges' is true with an end_of_word_suffix",
    ),
    "a flag that is not a flag": (_set("model.fuse_unk", "yes"), "'model.fuse_unk' must be true or false, not 'yes'"),
    "an unknown top-level field": (_set("extras", {"a": 1}), "'extras' is {'a': 1}: this option is not supported"),
    "Prepend normalizer": (
        _set("normalizer", {"type": "Prepend", "prepend": "▁"}),
        "'normalizer': 'Prepend' is not supported",
    ),
    "Split Removed": (
        _set("pre_tokenizer", {"type": "Split", "pattern": {"Regex": " "}, "behavior": "Removed", "invert": False}),
        "a Split with behavior 'Removed' and invert False is not supported",
    ),
    "Split MergedWithNext": (
        _set(
            "pre_tokenizer", {"type": "Split", "pattern": {"Regex": "x"}, "behavior": "MergedWithNext", "invert": True}
        ),
        "a Split with behavior 'MergedWithNext' and invert True is not supported",
    ),
    "Split invert Removed on a pattern with gaps": (
        _set(
            "pre_tokenizer", {"type": "Split", "pattern": {"Regex": "\\p{L}+"}, "behavior": "Removed", "invert": True}
        ),
        "drops the text between its matches, and '\\\\p{L}+' does not match every character: not supported",
    ),
    "Split on a string": (
        _set("pre_tokenizer", {"type": "Split", "pattern": {"String": "x"}, "behavior": "Isolated", "invert": False}),
        "only a Split on a Regex is supported (found {'String': 'x'})",
    ),
    "an unknown ByteLevel option": (
        _set("pre_tokenizer", {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True, "shout": 1}),
        "'pre_tokenizer (ByteLevel).shout' is 1: this option is not supported",
    ),
    "Metaspace never prepended": (
        _set(
            "pre_tokenizer",
            {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "WhitespaceSplit"},
                    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": False},
                ],
            },
        ),
        "found replacement '▁', prepend_scheme 'never'",
    ),
    "Metaspace split": (
        _set(
            "pre_tokenizer",
            {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "WhitespaceSplit"},
                    {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
                ],
            },
        ),
        "Metaspace with split true (absent: true) cuts words at a '▁' they hold too",
    ),
    "Digits": (_set("pre_tokenizer", {"type": "Digits", "individual_digits": True}), "'Digits' is not supported"),
    "a Sequence decoder": (
        _set("decoder", {"type": "Sequence", "decoders": [{"type": "ByteFallback"}]}),
        "'decoder' is {'type': 'Sequence', 'decoders': [{'type': 'ByteFallback'}]}: with normalizer 'none' only "
        "{'type': 'Fuse'} is supported",
    ),
    "a BPEDecoder suffix": (
        lambda d: d.update(
            decoder={"type": "BPEDecoder", "suffix": "_"}, model={**d["model"], "end_of_word_suffix": "</w>"}
        ),
        "'decoder.suffix' is '_': only '</w>' is supported",
    ),
    "lstrip": (_added(lstrip=True), "'added_tokens[0].lstrip' is True ('<unk>'): this option is not supported"),
    "single_word": (_added(single_word=True), "'added_tokens[0].single_word' is True ('<unk>')"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_an_option_we_do_not_apply_as_hf_does_is_refused_with_a_sentence_naming_it(case):
    change, expected = REFUSED[case]
    data = copy.deepcopy(char_model(unk_token="<unk>"))
    change(data)
    msg = refusal(data)
    assert msg.startswith("tokenizer.json ") and expected in msg, msg


def test_hf_decodes_without_a_decoder_and_adds_post_processor_tokens_and_the_import_says_so():
    data = copy.deepcopy(char_model(unk_token="<unk>"))
    data["decoder"] = None
    data["post_processor"] = {"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {}}
    notes = import_report({"tokenizer.json": json.dumps(data).encode("utf-8")}).notes
    assert notes == (
        "tokenizer.json has no decoder: HF decodes by joining the tokens with spaces, here they decode as text",
        "tokenizer.json's post-processor ('TemplateProcessing') is not applied: the ids are HF's "
        "encode(text, add_special_tokens=False)",
    )
    assert import_report({"tokenizer.json": json.dumps(converted()).encode("utf-8")}).notes == ()


@pytest.mark.parametrize("behavior, invert", [("removed", True), ("isolated", True), ("isolated", False)])
def test_an_olmo2_style_split_gives_hf_ids(behavior, invert):
    # OLMo 2: a Split on cl100k's regex, invert true, behavior Removed, then ByteLevel
    trained = byte_level_trained()["model"]
    tok = tokenizers.Tokenizer(models.BPE(vocab=trained["vocab"], merges=[tuple(m) for m in trained["merges"]]))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(tokenizers.Regex(CONVERTER_PATTERN), behavior=behavior, invert=invert),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    data = json.loads(tok.to_str())
    assert our_ids(data) == hf_ids(data)


def test_bpe_dropout_on_an_ignore_merges_file_merges_whole_words_too_as_hf_does():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}
    merges = [("b", "c"), ("a", "b"), ("ab", "c")]
    tok = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    ours = import_files({"tokenizer.json": tok.to_str().encode("utf-8")})
    # HF with dropout looks no word up whole (only its cached path does): 1.0 skips every merge
    tok.model = models.BPE(vocab=vocab, merges=merges, ignore_merges=True, dropout=1.0)
    assert ours.encode("abc abcab", dropout=1.0, seed=0) == tok.encode("abc abcab").ids == [0, 1, 2, 0, 1, 2, 0, 1]
    assert ours.encode("abc abcab") == [5, 0, 4, 3]


def test_a_file_with_no_unknown_token_drops_unknown_characters_as_hf_does_and_exports_so():
    data = char_model()  # HF's BPE with unk_token null drops what it has no id for
    assert data["model"]["unk_token"] is None
    assert len(hf_ids(data)) < len(hf_ids(char_model(unk_token="<unk>")))  # the hostile text has such characters
    tok = import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    assert tok.encode(HOSTILE) == hf_ids(data)
    assert hf_ids(json.loads(export_files(tok, "hf")["tokenizer.json"])) == hf_ids(data)
    with pytest.raises(ConfigError, match="cannot hold HF's dropping of characters outside the vocabulary"):
        export_files(tok, "gpt2")


@pytest.mark.parametrize("layout", ["tokenizer.json", "vocab.json + merges.txt"])
def test_text_with_a_lone_surrogate_is_refused_with_a_sentence_as_hf_refuses_it(layout):
    from explorer.formats.pretrained import load_pretrained

    files = export_files(load_pretrained("gpt2").truncate(300), "hf" if layout == "tokenizer.json" else "gpt2")
    ours = import_files(files)
    if layout == "tokenizer.json":
        theirs = tokenizers.Tokenizer.from_str(files["tokenizer.json"].decode())
    else:
        with tempfile.TemporaryDirectory() as d:
            for name, data in files.items():
                (Path(d) / name).write_bytes(data)
            model = models.BPE.from_file(str(Path(d) / "vocab.json"), str(Path(d) / "merges.txt"))
        theirs = tokenizers.Tokenizer(model)
        theirs.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    text = "naïve \ud83d text"  # half of an emoji's surrogate pair
    with pytest.raises(TypeError):  # HF takes only Unicode text
        theirs.encode(text)
    with pytest.raises(ConfigError, match=r"lone surrogate \(U\+D83D, character 7\), which is not Unicode text"):
        ours.encode(text)
    assert ours.encode("naïve 😀 text") == theirs.encode("naïve 😀 text").ids  # whole, the pair is a character
    # a rank table's rule is tiktoken's: a lone surrogate is U+FFFD first, as tiktoken encodes it
    assert load_pretrained("gpt2").encode(text) == load_pretrained("gpt2").encode("naïve \ufffd text")
