"""subword-nmt codes encode as subword-nmt's own ``apply_bpe`` does: checked against the
installed package (``subword_nmt.apply_bpe.BPE``) on its own test corpus and codes (vendored in
tests/data/subword_nmt, see SOURCE.md there), on codes its ``learn_bpe`` learns from our sample
corpora and on codes we export, line by line, with hostile lines: characters no merge uses,
no-break spaces, tabs, runs of spaces, emoji, CJK. The cases adapted from subword-nmt's own
tests (its tests/test_bpe.py and tests/test_glossaries.py) are named after them.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
from pathlib import Path

import pytest
from subword_nmt import apply_bpe
from subword_nmt.apply_bpe import BPE
from subword_nmt.learn_bpe import learn_bpe

from explorer import make_config, train
from explorer.bpe.glossaries import isolate_glossaries, isolate_glossary
from explorer.cli import main
from explorer.errors import FormatError
from explorer.formats.exporters import export_files, export_problem
from explorer.formats.importers import import_report
from explorer.formats.subword_nmt import to_subword_nmt_codes, tokenizer_from_subword_nmt

DATA = Path(__file__).parent / "data" / "subword_nmt"
SAMPLES = Path(__file__).parent.parent / "sample_corpora"
CODES = (DATA / "bpe.ref").read_text(encoding="utf-8")
CORPUS = (DATA / "corpus.en").read_text(encoding="utf-8").splitlines(keepends=True)

HOSTILE = [
    "iron\xa0cement  and\tsteel\n",  # NBSP and a tab inside words, two spaces between
    "   leading and trailing   \n",
    "emoji 👩‍👩‍👧 party 🎉🎉 ok\n",
    "中文字符 and 日本語のテキスト mixed\n",
    "combining e\u0301 and ñ, Zoë's café\n",
    "x  y\r\n",
    "single a b c letters\n",
    "\n",
    "    \n",
    'Ω≈ç√∫ ¡™£¢∞§¶•ªº ÅÍÎÏ˝ÓÔÒÚÆ☃ 1234567890 -- "quoted" (paren) [bracket]\n',
]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def segmented(tok, line: str) -> str:
    """Our encoding of a line as apply_bpe prints it: the words joined by one space, the tokens
    of a word by ``@@ ``, the ``</w>`` marker not shown (a token that is only the marker is
    not shown at all)."""
    words = []
    for piece in tok.piece_texts(line):
        shown = [t.replace("</w>", "") for t in tok.tokens(tok.encode_piece(piece))]
        words.append("@@ ".join(t for t in shown if t))
    return " ".join(words)


def assert_as_apply_bpe(tok, bpe: BPE, lines: list[str]) -> None:
    """Every line segmented as apply_bpe's ``segment``; the ids of the whole line are those of
    its words and decode to its words joined by single spaces."""
    wrong = [
        (line, bpe.segment(line), segmented(tok, line)) for line in lines if bpe.segment(line) != segmented(tok, line)
    ]
    assert not wrong, f"{len(wrong)} of {len(lines)} lines differ, the first: {wrong[0]}"
    for line in lines:
        ids = tok.encode(line)
        assert ids == [i for piece in tok.piece_texts(line) for i in tok.encode_piece(piece)]
        assert tok.decode(ids) == " ".join(w for w in re.split("[ \r\n]", line) if w)


def codes_bpe(codes: str, **options) -> BPE:
    return BPE(io.StringIO(codes), **options)


def test_bpe_segment_method_test_apply_bpe_every_line_of_subword_nmts_corpus():
    """test_bpe.py TestBPESegmentMethod.test_apply_bpe: its 1,015 lines with its 1,000 codes
    (845 lines had a character that no merge uses, which became <unk>)."""
    tok = tokenizer_from_subword_nmt(CODES)
    assert_as_apply_bpe(tok, codes_bpe(CODES), CORPUS)
    assert "<unk>" not in tok.tokens(tok.encode("".join(CORPUS)))


@pytest.mark.parametrize(
    "case, line",
    [
        ("test_trailing_whitespace", "  iron cement  \n"),
        ("test_utf8_whitespace", "iron\xa0cement\n"),
        ("test_empty_line", "\n"),
    ],
)
def test_bpe_segment_method_cases(case, line):
    """test_bpe.py TestBPESegmentMethod: leading and trailing spaces dropped (process_line puts
    them back around the segmented words), UTF-8 whitespace a character like any other."""
    tok = tokenizer_from_subword_nmt(CODES)
    bpe = codes_bpe(CODES)
    assert segmented(tok, line) == bpe.segment(line)
    out = bpe.process_line(line)
    start, end = len(line) - len(line.lstrip("\r\n ")), len(line.rstrip("\r\n "))
    assert out == line[:start] + segmented(tok, line) + (line[end:] if end else "")


def test_hostile_lines_segmented_as_apply_bpe_with_subword_nmts_codes():
    tok = tokenizer_from_subword_nmt(CODES)
    assert_as_apply_bpe(tok, codes_bpe(CODES), HOSTILE)
    ids = tok.encode("iron\xa0cement 中")
    assert tok.tokens(ids)[-1] == "中</w>" and tok.decode(ids) == "iron\xa0cement 中"


@pytest.fixture(scope="module")
def learned_codes() -> str:
    """Codes subword-nmt's learn_bpe learns from English, CJK and emoji sample text."""
    text = "".join(
        (SAMPLES / name).read_text(encoding="utf-8") for name in ("udhr_en.txt", "mixed_emoji_multilingual.txt")
    )
    out = io.StringIO()
    learn_bpe(io.StringIO(text), out, 400, min_frequency=2)
    return out.getvalue()


def test_codes_learned_by_learn_bpe_segment_sample_and_hostile_lines_as_apply_bpe(learned_codes):
    lines = [
        *(SAMPLES / "udhr_zh_hans.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:40],
        *(SAMPLES / "udhr_ru.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:40],
        *(SAMPLES / "mixed_emoji_multilingual.txt").read_text(encoding="utf-8").splitlines(keepends=True),
        *HOSTILE,
    ]
    assert_as_apply_bpe(tokenizer_from_subword_nmt(learned_codes), codes_bpe(learned_codes), lines)


def test_version_0_1_codes_we_export_segment_as_apply_bpe():
    """Our Sennrich preset writes version 0.1 codes ('</w>' a symbol of its own)."""
    text = (SAMPLES / "udhr_en.txt").read_text(encoding="utf-8")
    codes = to_subword_nmt_codes(train(text, make_config("sennrich", num_merges=300)).tokenizer())
    assert codes.startswith("#version: 0.1\n")
    lines = [*text.splitlines(keepends=True)[:60], *HOSTILE]
    assert_as_apply_bpe(tokenizer_from_subword_nmt(codes), codes_bpe(codes), lines)


# ---- glossaries (subword-nmt's tests/test_glossaries.py) --------------------------------------
@pytest.mark.parametrize(
    "case, word, expected",
    [
        ("test_empty_string", "", [""]),
        ("test_no_glossary", "word", ["word"]),
        ("test_isolated_glossary", "like", ["like"]),
        ("test_word_one_side", "likeword", ["like", "word"]),
        ("test_words_both_sides", "wordlikeword", ["word", "like", "word"]),
        ("test_back_to_back_glossary", "likelike", ["like", "like"]),
        ("test_multiple_glossaries", "wordlikewordlike", ["word", "like", "word", "like"]),
    ],
)
def test_isolate_glossary_function(case, word, expected):
    """TestIsolateGlossaryFunction, with the glossary 'like'; subword-nmt's own function agrees."""
    assert isolate_glossary(word, "like") == expected == apply_bpe.isolate_glossary(word, "like")


def test_bpe_isolate_glossaries_method_test_multiple_glossaries():
    glossaries = ["like", "Manuel", "USA"]
    word = "wordlikeUSAwordManuelManuelwordUSA"
    expected = ["word", "like", "USA", "word", "Manuel", "Manuel", "word", "USA"]
    assert (
        isolate_glossaries(word, glossaries)
        == expected
        == codes_bpe(CODES, glossaries=glossaries)._isolate_glossaries(word)
    )


def test_regex_isolate_glossaries_test_regex_glossaries():
    glossaries = [r"<country>\w*</country>", r"<name>\w*</name>", r"\d+"]
    word = "wordlike<country>USA</country>word10001word<name>Manuel</name>word<country>USA</country>"
    expected = [
        "wordlike",
        "<country>USA</country>",
        "word",
        "10001",
        "word",
        "<name>Manuel</name>",
        "word",
        "<country>USA</country>",
    ]
    assert isolate_glossaries(word, glossaries) == expected
    assert codes_bpe(CODES, glossaries=glossaries)._isolate_glossaries(word) == expected


@pytest.mark.parametrize(
    "glossaries",
    [
        ["like", "Manuel", "USA"],
        [r"<country>\w*</country>", r"<name>\w*</name>", r"\d+"],
        ["the", "[A-Z][a-z]+", "e"],
    ],
    ids=["words", "regexes", "overlapping"],
)
def test_bpe_segment_method_test_multiple_glossaries(glossaries):
    """TestBPESegmentMethod.test_multiple_glossaries (there with a mocked encoder; here with
    real codes): glossaries never split, the other parts of a word merged as words."""
    lines = [
        "wordlikeword likeManuelword\n",
        "wordlike<country>USA</country>word10001word<name>Manuel</name>word<country>USA</country> x\n",
        "in the USA, Manuel likes 1934USABUSA\xa0and other things\n",
        *CORPUS[:150],
        *HOSTILE,
    ]
    tok = tokenizer_from_subword_nmt(CODES, glossaries=glossaries)
    assert_as_apply_bpe(tok, codes_bpe(CODES, glossaries=glossaries), lines)


# ---- the import path: the CLI and import_report ------------------------------------------------
def shown_as_apply_bpe(tokens: list[str]) -> str:
    """Tokens with '</w>' glued to each word's last one (version 0.2) as apply_bpe prints them."""
    return "".join(t[:-4] + " " if t.endswith("</w>") else t + "@@ " for t in tokens).strip()


def test_cli_import_with_glossaries_and_a_normalizer_then_encode_segments_as_apply_bpe(tmp_path):
    """`import codes --glossaries ... --normalizer nfc` keeps both in trace.json; `encode` then
    segments as `subword-nmt apply-bpe -c codes --glossaries ...` does the NFC text."""
    glossaries = ["USA", "[0-9]+"]
    argv = ["import", str(DATA / "bpe.ref"), "--out", str(tmp_path), "--normalizer", "nfc", "--glossaries", *glossaries]
    code, printed, err = run(*argv)
    assert code == 0 and err == "", err
    assert "pre-tokenizer spaces" in printed and "note: glossaries never split: USA, [0-9]+" in printed
    assert "note: the files name no normalizer: nfc, as chosen" in printed
    text = "in 1934USABUSA\xa0the  iron\tcement 中文 cafe\u0301 ok"
    code, printed, err = run("encode", "--tokenizer", str(tmp_path), "--text", text)
    assert code == 0, err
    tokens = json.loads(printed)["tokens"]
    assert shown_as_apply_bpe(tokens) == codes_bpe(CODES, glossaries=glossaries).segment(
        unicodedata.normalize("NFC", text)
    )
    assert "<unk>" not in tokens


def test_glossaries_or_a_normalizer_for_files_that_cannot_take_them_are_refused_with_a_sentence(tmp_path):
    tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    files = export_files(tok, "hf")
    with pytest.raises(FormatError, match="glossaries are subword-nmt's .*tokenizer.json"):
        import_report(files, glossaries=["low"])
    (tmp_path / "tokenizer.json").write_bytes(files["tokenizer.json"])
    code, _, err = run("import", str(tmp_path / "tokenizer.json"), "--out", str(tmp_path / "o"), "--glossaries", "x")
    assert code == 2 and "glossaries are subword-nmt's" in err and "Traceback" not in err
    code, _, err = run("import", str(tmp_path / "tokenizer.json"), "--out", str(tmp_path / "o"), "--normalizer", "nfc")
    assert code == 2 and "names its own normalizer" in err and "Traceback" not in err


def test_import_report_of_codes_keeps_unknown_characters_and_names_the_glossaries():
    report = import_report({"codes.txt": CODES.encode()}, glossaries=["USA"])
    tok = report.tokenizer
    assert report.format == "subword-nmt" and tok.pipeline.pretokenizer == "spaces"
    assert "kept as themselves" in report.notes[0] and report.notes[1] == "glossaries never split: USA"
    assert tok.tokens(tok.encode("USA★")) == ["USA", "★</w>"]


def test_the_trace_of_a_word_cut_by_glossaries_ends_in_its_encoding_and_never_merges_a_glossary():
    """The Playground's trace table: the merges of each part of the word, the glossary's match
    whole from the first symbols to the last step, the last step's tokens those of ``encode``."""
    tok = tokenizer_from_subword_nmt(CODES, glossaries=["USA", "[0-9]+"])
    for word in ("cement1934USABUSAcement", "theUSA", "USAthe", "x★USA"):
        steps = tok.encode_trace(word)
        last = list(steps[-1].tokens) if steps else tok.base_tokens(word)  # 'x★USA': no merge applies
        assert last == tok.tokens(tok.encode(word))
        assert {"USA", "USA</w>"} & set(tok.base_tokens(word))
        assert all(t.removesuffix("</w>") not in ("USA", "1934") for s in steps for t in (s.left, s.right))
        for s in steps:  # each merge makes the token at its position (shown unmarked before the word's end)
            assert s.tokens[s.position] in (s.token, s.token.removesuffix("</w>"))


def test_codes_imported_with_a_normalizer_segment_decomposed_text_as_apply_bpe_segments_it_normalized():
    """`import codes --normalizer nfc`: subword-nmt has no normalizer (its users normalize
    before apply_bpe); named on import, the text is normalized first."""
    report = import_report({"codes.txt": CODES.encode()}, normalizer="nfc")
    tok, bpe = report.tokenizer, codes_bpe(CODES)
    decomposed = "Cafe\u0301 and re\u0301sume\u0301 , Zoe\u0308 ' s cafe\u0301 ."
    assert segmented(tok, decomposed) == bpe.segment(unicodedata.normalize("NFC", decomposed))
    assert segmented(tok, decomposed) != bpe.segment(decomposed)
    assert report.notes[-1] == "the files name no normalizer: nfc, as chosen"


def test_codes_imported_export_back_to_the_same_codes_and_other_formats_refuse_with_a_sentence():
    """apply_bpe's ways (unknown characters kept, glossaries) are not HF's, tiktoken's or
    minbpe's: those exports are refused, naming why, instead of writing files that give <unk>."""
    tok = tokenizer_from_subword_nmt(CODES, glossaries=["USA"])
    assert export_files(tok, "subword-nmt")["codes.txt"].decode() == CODES
    for fmt in ("hf", "gpt2", "tiktoken", "minbpe", "arrow", "csv"):
        assert "keeps characters outside its alphabet as themselves" in export_problem(tok, fmt)
    assert export_problem(tok, "trace") is None


def test_dropout_never_splits_a_glossary_and_drops_merges_elsewhere():
    """apply_bpe --dropout with glossaries: a glossary's match stays whole, the other parts'
    merges are skipped at random (at p = 1 none is made: the characters)."""
    tok = tokenizer_from_subword_nmt(CODES, glossaries=["USA"])
    word = "cementUSAcement"
    assert tok.tokens(tok.encode(word, dropout=1.0, seed=0)) == [*"cement", "USA", *"cemen", "t</w>"]
    seen = {tuple(tok.encode(word, dropout=0.5, seed=s)) for s in range(20)}
    assert len(seen) > 1 and all(tok.tokens(ids).count("USA") == 1 for ids in seen)
    assert (
        codes_bpe(CODES, glossaries=["USA"]).segment(word, dropout=1.0)
        == "c@@ e@@ m@@ e@@ n@@ t@@ USA@@ c@@ e@@ m@@ e@@ n@@ t"
    )


def test_a_tokenizer_trained_on_spaces_goes_to_hf_and_back_with_hfs_ids():
    """The 'spaces' pre-tokenizer (subword-nmt's split) as HF writes it: a Split on spaces and
    line breaks, removed; tokenizers gives our ids, tabs and no-break spaces inside words."""
    tokenizers = pytest.importorskip("tokenizers")
    text = (SAMPLES / "udhr_en.txt").read_text(encoding="utf-8")
    config = make_config("sennrich", num_merges=200).replace(pretokenizer="spaces", marker="eow-glued")
    tok = train(text, config).tokenizer()
    files = export_files(tok, "hf")
    hf = tokenizers.Tokenizer.from_str(files["tokenizer.json"].decode())
    back = import_report(files).tokenizer
    assert back.pipeline.pretokenizer == "spaces"
    for line in [*text.splitlines(keepends=True)[:30], *HOSTILE]:
        assert hf.encode(line).ids == tok.encode(line) == back.encode(line)
