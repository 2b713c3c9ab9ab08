"""Hand ours back exactly: each export of the bundled tables and of a tokenizer trained with
each preset loads in the library that reads its files (HF ``tokenizers``, tiktoken,
subword-nmt's ``apply_bpe``, minbpe) and gives our ids on one hostile multilingual text; a
format that cannot hold a tokenizer says why instead of writing a file. HF's Oniguruma reads some
regexes apart from ``regex`` (cl100k's possessive ``\\p{N}{1,3}+``): the tokenizer.json carries
the pattern it needs. A model minbpe wrote goes back to minbpe byte for byte.

minbpe is not published as a package: its own code is vendored in ``tests/vendor/minbpe``
(unchanged, with its licence). The bundled tables are large: each library and format is checked on
one of them, each table's own risk once (the list below says which and why), each file exported
and read once per module (``functools.cache``).
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from functools import cache
from pathlib import Path

import pytest
import regex
import tokenizers
from subword_nmt.apply_bpe import BPE
from test_interop import as_subword_nmt, tiktoken_from_files
from tokenizers import Regex, pre_tokenizers

from explorer import corpus_config, load_pretrained, train
from explorer.bpe.config import PRESETS
from explorer.formats.exporters import export_files, export_problem
from explorer.formats.importers import import_files
from explorer.formats.pretrained import PRETRAINED
from explorer.formats.regex_dialects import oniguruma_pattern
from explorer.stages.pretokenizers import PATTERNS

sys.path.insert(0, str(Path(__file__).resolve().parent / "vendor"))
from minbpe import BasicTokenizer, RegexTokenizer  # noqa: E402  (vendored: tests/vendor/minbpe)
from minbpe.regex import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN  # noqa: E402

# numbers, whitespace runs (spaces, tabs, newlines, \r\n, trailing), emoji with ZWJ and
# modifiers, CJK, Devanagari, Arabic, upper-case contractions, code, odd letters and case folds
HOSTILE = (
    "1234567 2024 3.14159 ١٢٣٤٥٦٧ ²³½ v2.0.1-rc3 0x1F600\n"
    "DON'T I'M WE'RE YOU'LL SHE'D THEY'VE it's 'ſ 'K\n"
    "  leading\t\ttabs   and  runs   \n\n\n\r\n\r\n  x \r\n \t \n"
    "👨\u200d👩\u200d👧\u200d👦 👍🏽 🏳️\u200d🌈 中文字符测试 日本語のテキスト 한국어 "
    "नमस्ते दुनिया مرحبا بالعالم ΟΔΟΣ İstanbul ǅ ﬁ e\u0301 \u00a0\u3000\u2028\x85\x0b\x0c\x1c\n"
    'def f(x: int) -> int:\n    return x**2  # squared\n\tif (a != b) { print("hi"); }\n'
    "camelCaseWord HTTPServer2024 trailing spaces   "
)
# the text each preset trains on: enough for merges that cross digits, spaces and scripts
TRAIN = HOSTILE * 3 + "the cat sat on the mat 123 456 7890 " * 20
PRESET_MERGES = 120
BUNDLED = list(PRETRAINED)


def our_ids(tok, text: str = HOSTILE) -> list[int]:
    return tok.encode(text, allow_special=True)


# ---- the libraries, each reading our files as a user does ---------------------------------------
def hf_from_tokenizer_json(files: dict[str, bytes]) -> tokenizers.Tokenizer:
    return tokenizers.Tokenizer.from_str(files["tokenizer.json"].decode("utf-8"))


def hf_pre_tokenizer(tokenizer_json: bytes) -> pre_tokenizers.PreTokenizer | None:
    """The pre-tokenizer of a tokenizer.json, read by HF without its (large) model."""
    shell = json.loads(tokenizers.Tokenizer(tokenizers.models.BPE()).to_str())
    shell["pre_tokenizer"] = json.loads(tokenizer_json)["pre_tokenizer"]
    return tokenizers.Tokenizer.from_str(json.dumps(shell)).pre_tokenizer


def hf_from_vocab_merges(
    files: dict[str, bytes], pre_tokenizer: pre_tokenizers.PreTokenizer | None
) -> tokenizers.Tokenizer:
    """vocab.json + merges.txt through HF's own reader (``BPE.from_file``); the files hold no
    pre-tokenizer, so the user gives one (GPT-2's: ByteLevel)."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("vocab.json", "merges.txt"):
            Path(tmp, name).write_bytes(files[name])
        model = tokenizers.models.BPE.from_file(str(Path(tmp, "vocab.json")), str(Path(tmp, "merges.txt")))
    hf = tokenizers.Tokenizer(model)
    if pre_tokenizer is not None:
        hf.pre_tokenizer = pre_tokenizer
    return hf


def minbpe_from_model(model: bytes) -> RegexTokenizer | BasicTokenizer:
    """minbpe's ``Tokenizer.load`` on the .model file: a BasicTokenizer for an empty pattern
    line, else a RegexTokenizer. Its load reads the pattern line but keeps the regex compiled
    at construction, so the tokenizer is made with the file's pattern first, as a user who
    saved with that pattern does."""
    pattern = model.decode("utf-8").split("\n")[1]
    mb = RegexTokenizer(pattern) if pattern else BasicTokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "tokenizer.model")
        path.write_bytes(model)
        mb.load(str(path))
    if isinstance(mb, RegexTokenizer):
        mb.register_special_tokens(mb.special_tokens)
    return mb


def library_ids(
    tok,
    fmt: str,
    files: dict[str, bytes],
    text: str = HOSTILE,
    *,
    pre_tokenizer: pre_tokenizers.PreTokenizer | None = None,
) -> list[int] | list[str]:
    """What the library that reads ``fmt`` gives for ``text`` from our files (subword-nmt:
    its segmentation of each piece, compared with ours turned into its notation); vocab.json +
    merges.txt take ``pre_tokenizer`` (by default the one of our tokenizer.json) and our special
    tokens."""
    if fmt == "hf":
        return hf_from_tokenizer_json(files).encode(text, add_special_tokens=False).ids
    if fmt == "gpt2":
        hf = hf_from_vocab_merges(files, pre_tokenizer or hf_pre_tokenizer(export_files(tok, "hf")["tokenizer.json"]))
        hf.add_special_tokens([tokenizers.AddedToken(t, special=True, normalized=False) for t in tok.special_ids])
        return hf.encode(text, add_special_tokens=False).ids
    if fmt == "tiktoken":
        return tiktoken_from_files(files).encode(text, allowed_special="all")
    if fmt == "minbpe":
        mb = minbpe_from_model(files["tokenizer.model"])
        return mb.encode(text) if isinstance(mb, BasicTokenizer) else mb.encode(text, allowed_special="all")
    assert fmt == "subword-nmt"
    bpe = BPE(io.StringIO(files["codes.txt"].decode("utf-8")))
    return [p for word in tok.piece_texts(text) for p in bpe.segment_tokens([word])]


def wanted(tok, fmt: str, text: str = HOSTILE) -> list[int] | list[str]:
    if fmt != "subword-nmt":
        return our_ids(tok, text)
    unk = tok.encoding.unk_token
    return [p for word in tok.piece_texts(text) for p in as_subword_nmt(tok.tokens(tok.encode(word)), word, unk)]


ENCODING_FORMATS = ("hf", "gpt2", "tiktoken", "subword-nmt", "minbpe")


# ---- the bundled tables -------------------------------------------------------------------------
# Each library and format is checked on one large table, and each table's own risk once:
# - cl100k_base in all three formats, its possessive \p{N}{1,3}+ rewritten for HF's Oniguruma;
# - GPT-2 in its own vocab.json + merges.txt, with HF's own GPT-2 pre-tokenizer (ByteLevel, the
#   one our tokenizer.json writes for it);
# - o200k_base through tokenizer.json: its regex, special tokens and first merges. Its regex has
#   no possessive or anchor (Oniguruma reads it as written: the pattern test below cuts the
#   hostile text with it); its 200k merges are written and read as cl100k_base's are, and
#   HF takes seconds to read them.
# Not repeated: a second table through the same writer and reader (o200k_base's vocab.json +
# merges.txt, the merges of its tokenizer.json; its and GPT-2's rank files, written as
# cl100k_base's); GPT-2's tokenizer.json (its merges and pre-tokenizer are those above). Each
# file is exported once, and HF reads each tokenizer.json once, per module.
BUNDLED_EXPORTS = [
    ("gpt2", "gpt2"),
    ("cl100k_base", "hf"),
    ("cl100k_base", "gpt2"),
    ("cl100k_base", "tiktoken"),
    ("o200k_base", "hf"),
]
O200K_MERGES = 30_000
GPT2_PRE_TOKENIZER = pre_tokenizers.ByteLevel(add_prefix_space=False)  # HF's GPT-2


@cache
def bundled(name: str):
    """A bundled table as checked here: o200k_base cut to its first ``O200K_MERGES`` merges."""
    tok = load_pretrained(name)
    return tok.truncate(O200K_MERGES) if name == "o200k_base" else tok


@cache
def bundled_files(name: str, fmt: str) -> dict[str, bytes]:
    return export_files(bundled(name), fmt)


@cache
def bundled_hf(name: str) -> tokenizers.Tokenizer:
    return hf_from_tokenizer_json(bundled_files(name, "hf"))


def test_the_bundled_tables_say_why_subword_nmt_and_minbpe_cannot_hold_them():
    # hf, gpt2 and tiktoken: written and read back below; arrow, csv and trace hold any merges
    for name in BUNDLED:
        tok = load_pretrained(name)
        assert "byte-level" in export_problem(tok, "subword-nmt"), name
        assert "256 bytes in byte order" in export_problem(tok, "minbpe"), name  # tiktoken's tables shuffle the bytes


@pytest.mark.parametrize("name, fmt", BUNDLED_EXPORTS, ids=[f"{n}-{f}" for n, f in BUNDLED_EXPORTS])
def test_a_bundled_table_exported_loads_in_its_library_with_our_ids_on_hostile_text(name, fmt):
    tok = bundled(name)
    text = HOSTILE + "<|endoftext|>x"
    if fmt == "hf":
        ids = bundled_hf(name).encode(text, add_special_tokens=False).ids
    elif fmt == "gpt2":
        pre = GPT2_PRE_TOKENIZER if name == "gpt2" else bundled_hf(name).pre_tokenizer  # our tokenizer.json's
        ids = library_ids(tok, fmt, bundled_files(name, fmt), text, pre_tokenizer=pre)
    else:
        ids = library_ids(tok, fmt, bundled_files(name, fmt), text)
    assert ids == our_ids(tok, text)


# tiktoken's regexes cut digits in threes: cl100k's \p{N}{1,3}+ is possessive (rewritten for
# Oniguruma), o200k's \p{N}{1,3} greedy (written as it is)
NUMBERS = {
    "1234567": ["123", "456", "7"],
    "2024": ["202", "4"],
    "3.14159": ["3", ".", "141", "59"],
    "١٢٣٤٥٦٧": ["١٢٣", "٤٥٦", "٧"],
}


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_numbers_come_back_from_hf_in_the_groups_tiktoken_cuts(name):
    tok = bundled(name)
    for number, groups in NUMBERS.items():
        assert list(tok.piece_texts(number)) == groups
        assert bundled_hf(name).encode(number, add_special_tokens=False).ids == tok.encode(number), number


# ---- a tokenizer of each preset -----------------------------------------------------------------
@cache
def preset_tokenizer(preset: str):
    return train(TRAIN, corpus_config(preset, merges=PRESET_MERGES)).tokenizer()


PRESET_FORMATS = [(p, f) for p in PRESETS for f in ENCODING_FORMATS]


@pytest.mark.parametrize("preset, fmt", PRESET_FORMATS, ids=[f"{p}-{f}" for p, f in PRESET_FORMATS])
def test_each_preset_exports_to_its_library_with_our_ids_or_says_why_it_cannot(preset, fmt):
    tok = preset_tokenizer(preset)
    assert tok.num_merges == PRESET_MERGES
    problem = export_problem(tok, fmt)
    if problem is not None:
        assert problem.strip() and "\n" not in problem
        return
    assert library_ids(tok, fmt, export_files(tok, fmt)) == wanted(tok, fmt)


# ---- minbpe, both ways --------------------------------------------------------------------------
@pytest.mark.parametrize("pattern", [GPT4_SPLIT_PATTERN, GPT2_SPLIT_PATTERN, PATTERNS["cl100k"], ""])
def test_a_model_minbpe_wrote_imports_and_exports_back_to_the_same_files(pattern):
    mb = RegexTokenizer(pattern) if pattern else BasicTokenizer()
    mb.train(TRAIN, 256 + 60)
    if pattern:  # minbpe's BasicTokenizer has no special tokens
        mb.register_special_tokens({"<|endoftext|>": 256 + 60, "<|fim|>": 256 + 61})
    with tempfile.TemporaryDirectory() as tmp:
        mb.save(str(Path(tmp, "tokenizer")))
        written = {name: Path(tmp, name).read_bytes() for name in ("tokenizer.model", "tokenizer.vocab")}
    tok = import_files({"tokenizer.model": written["tokenizer.model"]})
    text = HOSTILE + "<|endoftext|>x<|fim|>"
    assert our_ids(tok, text) == (mb.encode(text, allowed_special="all") if pattern else mb.encode(text))
    assert export_problem(tok, "minbpe") is None
    back = export_files(tok, "minbpe")
    assert back["tokenizer.model"] == written["tokenizer.model"]
    # minbpe's .vocab lists the special tokens too, after the merges
    ours_vocab = back["tokenizer.vocab"].decode("utf-8")
    assert written["tokenizer.vocab"].decode("utf-8").startswith(ours_vocab)
    assert library_ids(tok, "minbpe", back, text) == our_ids(tok, text)


def test_a_minbpe_model_whose_pattern_skips_characters_is_refused_on_import():
    mb = RegexTokenizer(r"\p{L}+")  # minbpe drops every character that is not a letter
    mb.train("low lower lowest " * 5, 256 + 5)
    with tempfile.TemporaryDirectory() as tmp:
        mb.save(str(Path(tmp, "tokenizer")))
        model = Path(tmp, "tokenizer.model").read_bytes()
    with pytest.raises(Exception, match=r"line 2: minbpe keeps only the matches of its pattern"):
        import_files({"tokenizer.model": model})


# ---- HF's regex engine --------------------------------------------------------------------------
def regex_pieces(pattern: str, text: str) -> list[str]:
    """Our regex pre-tokenizers' cut: the matches, and the text between them as pieces."""
    out, pos = [], 0
    for m in regex.finditer(pattern, text):
        out += [text[pos : m.start()]] * (m.start() > pos) + [m.group()] * (m.end() > m.start())
        pos = m.end()
    return out + [text[pos:]] * (pos < len(text))


def oniguruma_pieces(pattern: str, text: str) -> list[str]:
    return [p for p, _ in pre_tokenizers.Split(Regex(pattern), "isolated").pre_tokenize_str(text)]


L = r"[\p{L}\p{N}]"  # \w is read apart (refused below)
CUSTOM = [
    r"\p{N}{2}+|\D+|\d",
    rf"{L}+$|{L}+|[\s\S]",
    rf"^{L}+|[\s\S]",
    rf"{L}+\Z|{L}+|[\s\S]",
    r"(?:[a-z]|\d){3}+|[\s\S]",
]


@pytest.mark.parametrize("pattern", [*PATTERNS.values(), *CUSTOM])
def test_hfs_oniguruma_cuts_the_written_pattern_as_regex_cuts_ours(pattern):
    text = HOSTILE + "\nabcdefg 12345\n"
    assert oniguruma_pieces(oniguruma_pattern(pattern), text) == regex_pieces(pattern, text)


def test_the_possessive_digit_groups_are_read_apart_by_oniguruma_unless_rewritten():
    # the reason for the rewrite: as written for regex, Oniguruma keeps 1234567 whole
    assert oniguruma_pieces(r"\p{N}{1,3}+", "1234567") == ["1234567"]
    assert oniguruma_pieces(oniguruma_pattern(r"\p{N}{1,3}+"), "1234567") == ["123", "456", "7"]


@pytest.mark.parametrize(
    "pattern, named",
    [
        (r"(?s).+|\n", "inline flag s"),
        (r"\h+|[\s\S]", r"escape '\\h'"),
        (r"\w+|\W", r"escape '\\w'"),
        (r"(?x) a |[\s\S]", "x"),
    ],
)
def test_a_custom_regex_oniguruma_would_read_apart_is_refused_for_hf_naming_the_construct(pattern, named):
    tok = train(
        "low lower lowest 12", corpus_config("gpt2", merges=3, pretokenizer="regex", pattern=pattern)
    ).tokenizer()
    problem = export_problem(tok, "hf")
    assert problem is not None and "Oniguruma" in problem and named in problem, problem
