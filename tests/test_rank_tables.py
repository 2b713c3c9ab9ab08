"""Rank tables as their makers publish them, read by content and encoded as tiktoken encodes them.

- Llama 3's ``tokenizer.model`` (shipped by Meta's ``llama-models`` package): tiktoken ranks under
  minbpe's file name, with 678 tokens that are not one merge of two lower-ranked tokens.
- Whisper's ``multilingual.tiktoken`` (vendored under tests/data/whisper with its licence): its
  last line is ``= 50256``, the empty token.

Each is checked against ``tiktoken.Encoding`` built from the same file with
``tiktoken.load.load_tiktoken_bpe`` and the maker's own pattern and special tokens.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.resources
import io
import json
from functools import cache

import pytest
import tiktoken
from conftest import HOSTILE_SCRIPTS, ROOT, read_sample
from llama_models.llama3.tokenizer import Tokenizer as MetaLlama3
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext.openai_public import r50k_pat_str

from explorer.analysis.health import scan
from explorer.analysis.lineage import lineage, not_one_merge
from explorer.bpe.ranks import recover_merges, tokenizer_from_merges
from explorer.bpe.tokenizer import Tokenizer
from explorer.cli import main
from explorer.errors import FormatError
from explorer.formats.exporters import to_tiktoken
from explorer.formats.importers import import_report
from explorer.formats.registry import sniff
from explorer.formats.tiktoken_ranks import read_ranks
from explorer.formats.trace import load_tokenizer, save_trace, trace_from_tokenizer

LLAMA3 = importlib.resources.files("llama_models") / "llama3" / "tokenizer.model"
WHISPER = ROOT / "tests" / "data" / "whisper" / "multilingual.tiktoken.gz"
WHISPER_SHA256 = "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"  # as published (SOURCES.md)
WHISPER_SPECIALS = {"<|endoftext|>": 50257, "<|startoftranscript|>": 50258}  # Whisper's: past the 50,257 ranks

# numbers, whitespace runs, emoji (ZWJ, flags, skin tones), CJK, Devanagari, Arabic, Vietnamese and
# Turkish words that Llama 3 holds as tokens no merge makes, a long single piece
HOSTILE = HOSTILE_SCRIPTS + (
    "việc hợp nhiều nghiệp; gelecektedir, ektedir, .:.:.:.: I'm  'll  DON'T\u00a0nbsp " + "x" * 300 + " " * 50 + "end\n"
)


def _texts() -> list[str]:
    return [HOSTILE, read_sample("udhr_ru.txt")[:2000], read_sample("demo_sentences.txt")[:2000]]


@cache
def llama3() -> tuple[Tokenizer, tiktoken.Encoding]:
    """Ours, imported from the file alone and its pattern; tiktoken's, from the same file."""
    meta = MetaLlama3.get_instance()  # Meta's own loader: its pattern and special tokens
    data = LLAMA3.read_bytes()
    report = import_report(
        {
            "tokenizer.model": data,
            "llama3.json": json.dumps({"pat_str": MetaLlama3.pat_str, "special_tokens": meta.special_tokens}).encode(),
        }
    )
    assert report.format == "tiktoken"
    ranks = load_tiktoken_bpe(str(LLAMA3))
    ref = tiktoken.Encoding(
        "llama3", pat_str=MetaLlama3.pat_str, mergeable_ranks=ranks, special_tokens=meta.special_tokens
    )
    return report.tokenizer, ref


def test_llama3_tokenizer_model_is_read_as_ranks_by_its_content_not_its_name():
    fmt, found = sniff({"tokenizer.model": LLAMA3.read_bytes()})
    assert (fmt.name, list(found)) == ("tiktoken", ["tiktoken"])


def test_llama3_ranks_with_tokens_no_merge_makes_encode_as_tiktoken():
    """Llama 3's table holds tokens (b"ektedir", " việc") that merging their own bytes never
    makes; ids equal tiktoken's on hostile text, and on every such token's text alone and inside
    words, where only the whole-piece rule or context can give it."""
    tok, ref = llama3()
    assert tok.n_vocab == ref.n_vocab == 128_256
    whole = [i for i in range(256, 128_000) if tok.made_whole(i)]
    assert len(whole) == 678 and ref.decode_single_token_bytes(whole[0]) == b".:.:"
    for text in _texts():
        assert tok.encode(text) == ref.encode_ordinary(text)
        assert tok.encode(text, allow_special=True) == ref.encode(text, allowed_special="all")
    texts = [tok.token_bytes(i).decode("utf-8", "replace") for i in whole]
    for context in ("{}", "a{}s", " {}", "{}{}", "x{}1"):
        batch = [context.format(t, t) for t in texts]
        assert [tok.encode(t) for t in batch] == ref.encode_ordinary_batch(batch)


def test_llama3_rewound_to_merge_k_is_tiktoken_with_the_ranks_below():
    tok, ref = llama3()
    k = 100_421 - 256 + 1  # the first token no merge makes (".:.:") is the last one kept
    ranks = {ref.decode_single_token_bytes(r): r for r in range(256 + k)}
    cut = tiktoken.Encoding("llama3-cut", pat_str=MetaLlama3.pat_str, mergeable_ranks=ranks, special_tokens={})
    rewound = tok.truncate(k)
    assert rewound.made_whole(100_421)
    for text in _texts():
        assert rewound.encode(text) == cut.encode_ordinary(text)


def test_llama3_tokens_no_merge_makes_are_said_so_in_lineage_and_scan():
    """No merge is made up: lineage stops at such a token, and the scan says whether tiktoken
    gives it for a piece that is it whole, or never (as encoding its own text with tiktoken says)."""
    tok, ref = llama3()
    ektedir = tok.token_to_id("ektedir")
    tree = lineage(tok, ektedir)
    assert (tree.whole, tree.left, tree.right, tree.rank) == (True, None, None, 101_673 - 256)
    assert "only for a piece that is this token whole" in not_one_merge(tok, ektedir)
    assert lineage(tok, tok.token_to_id("ĠThe")).left is not None  # a token its merge makes
    report = scan(tok).as_dict()["not_one_merge"]
    assert len(report["whole_piece_only"]) == 678 and report["never"] == []  # Llama 3's pattern keeps each whole
    for i in report["whole_piece_only"]:
        assert ref.encode_ordinary(ref.decode_single_token_bytes(i).decode("utf-8")) == [i]


def test_a_token_no_merge_makes_that_the_pattern_cuts_is_never_given_as_tiktoken_never_gives_it():
    """A generated table (no published one has such a token): "ab c!" is not one merge (its bytes
    merge to "ab", " ", "c!") and GPT-2's pattern cuts it ("ab", " c", "!"): never given."""
    table = [bytes([b]) for b in range(256)] + [b"ab", b"c!", b" c", b"ab c", b"ab c!"]
    data = "".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(table)).encode()
    tok = import_report({"t.tiktoken": data}, pretokenizer="gpt2").tokenizer
    ref = tiktoken.Encoding(
        "t", pat_str=r50k_pat_str, mergeable_ranks={t: r for r, t in enumerate(table)}, special_tokens={}
    )
    assert [tok.made_whole(i) for i in range(256, 261)] == [False, False, False, False, True]
    report = scan(tok)
    assert (report.never_made, report.whole_piece_only) == ((260,), ())
    assert ref.encode_ordinary("ab c!") != [260] and tok.encode("ab c!") == ref.encode_ordinary("ab c!")
    assert ref._encode_bytes(b"ab c!") != [260]
    assert "tiktoken never gives it (its own text encodes as 3 tokens)" in not_one_merge(tok, 260)
    tree = lineage(tok, 260)
    assert (tree.whole, tree.left) == (True, None)


def test_the_cli_imports_a_tokenizer_model_of_ranks_and_its_scan_says_which_tokens_no_merge_makes(tmp_path):
    table = [bytes([b]) for b in range(256)]
    table += [b"ab", b"de", b"cd", b"abcd", b"abcde", b"c!", b" c", b"ab c", b"ab c!"]
    model = tmp_path / "tokenizer.model"  # Llama's name for its ranks
    model.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(table)))
    out, err = io.StringIO(), io.StringIO()
    assert main(["import", str(model), "--pretokenizer", "gpt2", "--out", str(tmp_path / "t")], out=out, err=err) == 0
    assert out.getvalue().startswith("tiktoken rank file: 9 merges"), err.getvalue()
    out = io.StringIO()
    assert main(["scan", "--tokenizer", str(tmp_path / "t")], out=out, err=err) == 0
    report = json.loads(out.getvalue())
    assert report["not_one_merge"] == {"whole_piece_only": [260], "never": [264]}
    assert 264 in report["unreachable"] and 260 not in report["unreachable"]


@cache
def whisper_table() -> bytes:
    data = gzip.decompress(WHISPER.read_bytes())
    assert hashlib.sha256(data).hexdigest() == WHISPER_SHA256
    return data


def test_whispers_empty_token_line_is_read_as_tiktoken_reads_it(tmp_path):
    """``= 50256``: base64 of nothing, as load_tiktoken_bpe reads it; the rank decodes to no
    bytes, encoding never gives it, and the special tokens follow it."""
    data = whisper_table()
    assert data.endswith(b"\n= 50256\n")
    (tmp_path / "multilingual.tiktoken").write_bytes(data)
    ranks = load_tiktoken_bpe(str(tmp_path / "multilingual.tiktoken"))
    ref = tiktoken.Encoding("whisper", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens=WHISPER_SPECIALS)
    meta = json.dumps({"pat_str": r50k_pat_str, "special_tokens": WHISPER_SPECIALS}).encode()
    tok = import_report({"multilingual.tiktoken": data, "multilingual.json": meta}).tokenizer
    assert tok.n_vocab == ref.n_vocab == 50_259
    assert tok.decode_bytes([50256, 50257, 50256]) == ref.decode_bytes([50256, 50257, 50256]) == b"<|endoftext|>"
    for text in _texts():
        assert tok.encode(text) == ref.encode_ordinary(text)
        assert tok.encode(text, allow_special=True) == ref.encode(text, allowed_special="all")
    # written back, the file is Whisper's byte for byte, and a saved trace keeps the empty token
    assert to_tiktoken(tok).encode() == data
    write = tmp_path / "saved"
    save_trace(trace_from_tokenizer(tok), write)
    assert load_tokenizer(write).decode_bytes([50256, 50257]) == b"<|endoftext|>"
    # alone, the file needs a pre-tokenizer chosen, and then it opens too
    alone = import_report({"multilingual.tiktoken": data}, pretokenizer="gpt2").tokenizer
    assert alone.encode(HOSTILE) == ref.encode_ordinary(HOSTILE) and alone.blank_ids == {50256}


def test_an_empty_token_before_the_last_rank_is_refused_saying_where():
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    data = "\n".join([*lines, "= 256", "YWI= 257"]).encode()
    with pytest.raises(FormatError, match="rank 256 is the empty token: only the last rank may be empty"):
        import_report({"t.tiktoken": data}, pretokenizer="gpt2")


def test_a_model_file_of_no_known_layout_says_what_was_tried_and_how_it_starts():
    with pytest.raises(FormatError) as err:
        import_report({"tokenizer.model": b"just some words here\n"})
    msg = str(err.value)
    assert "tokenizer.model is a file of no known layout (it starts 'just some words here')" in msg
    assert "a .tiktoken file" in msg and "a .model file" in msg
    with pytest.raises(FormatError, match="perhaps a SentencePiece model"):
        import_report({"tokenizer.model": b"\n\x0e\n\x05<unk>\x15\x00\x00\x00\x00\x18\x02\xff"})


def _rank_file(table: list[bytes], first: int = 0) -> bytes:
    return "".join(f"{base64.b64encode(t).decode() or '='} {r}\n" for r, t in enumerate(table, first)).encode()


def test_a_rank_files_merges_wait_until_asked_for_and_are_then_those_an_eager_recovery_gives():
    """Encoding needs only the ranks: Whisper's first 20,000 ranks and a token that merging its
    own bytes never makes (as Llama 3's 678) encode as tiktoken encodes them with no merge
    recovered; asked for afterwards, the merges, tokens and ids are those of the vocabulary built
    from ``recover_merges`` at once, and "the tokenizer as of merge k" encodes as before."""
    table = [t for t, _ in read_ranks(whisper_table())][:20_000]
    table += [b"\x01\x02", b"\x04\x05", b"\x03\x04", b"\x01\x02\x03\x04", b"\x01\x02\x03\x04\x05"]
    meta = json.dumps({"pat_str": r50k_pat_str, "special_tokens": {"<|endoftext|>": len(table)}}).encode()
    tok = import_report({"t.tiktoken": _rank_file(table), "t.json": meta}).tokenizer
    ref = tiktoken.Encoding(
        "t", pat_str=r50k_pat_str, mergeable_ranks={t: r for r, t in enumerate(table)}, special_tokens={}
    )
    for text in [*_texts(), "\x01\x02\x03\x04\x05 x\x01\x02\x03\x04\x05"]:
        assert tok.encode(text) == ref.encode_ordinary(text)
    assert [tok.made_whole(r) for r in range(20_000, 20_005)] == [False, False, False, False, True]
    assert tok.num_merges == len(table) - 256 and tok.merge_rank(20_004) == 20_004 - 256
    assert "merges" not in vars(tok.vocab)  # nothing above asked for them
    eager = tokenizer_from_merges(
        table[:256],
        recover_merges(table, strict=False),
        pretokenizer=tok.pipeline.pretokenizer,
        pattern=tok.pipeline.pattern,
        special_ids={"<|endoftext|>": len(table)},
    )
    assert tok.merges == eager.merges and tok.vocab == eager.vocab
    assert tok.vocab.tokens == eager.vocab.tokens and tok.vocab.ids == eager.vocab.ids
    assert tok.truncate(5_000).encode(HOSTILE) == eager.truncate(5_000).encode(HOSTILE)


def test_a_table_behind_leading_special_tokens_recovers_its_merges_at_their_ids():
    """Ranks from 2, ids 0 and 1 special tokens: the merges name ids, as the eager vocabulary's."""
    table = [bytes([b]) for b in range(256)] + [b"ab", b"cd", b"abcd", b"de", b"abcde"]
    meta = json.dumps({"pat_str": r50k_pat_str, "special_tokens": {"<s>": 0, "</s>": 1}}).encode()
    tok = import_report({"t.tiktoken": _rank_file(table, first=2), "t.json": meta}).tokenizer
    ref = tiktoken.Encoding(
        "t", pat_str=r50k_pat_str, mergeable_ranks={t: r for r, t in enumerate(table, 2)}, special_tokens={}
    )
    assert tok.encode("abcde xabcde") == ref.encode_ordinary("abcde xabcde")
    eager = tokenizer_from_merges(
        table[:256], recover_merges(table, strict=False), pretokenizer="gpt2", leading=["<s>", "</s>"]
    )
    assert tok.merges == eager.merges == ((99, 100), (101, 102), (258, 259), (102, 103), (260, 103))
    assert tok.vocab == eager.vocab and tok.vocab.tokens == eager.vocab.tokens


@pytest.mark.parametrize(
    ("added", "rank"),
    [
        ([b"xyz"], 256),  # no split at all
        ([b"ab", b"ef", b"abcdef", b"xyz"], 258),  # the lower-ranked of two, though "xyz" is shorter
        ([b"ab", b"cd", b"abcdef", b"ef", b"cdef"], 258),  # its only split's parts come after it
        ([b"ab", b"cd", b"abcd", b"ef", b"abcdef", b"abcdefg", b"gh", b"xyzw"], 263),  # 262 = 261 + "g"
    ],
)
def test_a_token_that_splits_into_no_two_lower_ranked_tokens_is_refused_at_import_as_recovery_refuses_it(added, rank):
    """The merges are recovered later, but what recovering them refuses is refused at import, in
    its words: the lowest such rank, whatever the split that fails."""
    table = [bytes([b]) for b in range(256)] + added
    with pytest.raises(FormatError, match=f"rank {rank} ") as recovered:
        recover_merges(table, strict=False)
    with pytest.raises(FormatError) as imported:
        import_report({"t.tiktoken": _rank_file(table)}, pretokenizer="gpt2")
    assert str(imported.value) == f"t.tiktoken: {recovered.value}"
    assert "cannot be split into two lower-ranked tokens" in str(imported.value)
    ok = [bytes([b]) for b in range(256)] + [b"ab", b"cd", b"abcd", b"ef", b"abcdef"]
    assert import_report({"t.tiktoken": _rank_file(ok)}, pretokenizer="gpt2").tokenizer.encode("abcdef") == [260]


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        (b"QUI== 257\n", "t.tiktoken line 258: bad base64 'QUI=='"),  # three characters and two '='
        (b"QUI 257\n", "t.tiktoken line 258: bad base64 'QUI'"),  # no padding at all
        (b"= 257\n", "t.tiktoken: rank 257 is the empty token: only the last rank may be empty"),
    ],
)
def test_a_well_formed_rank_file_is_refused_where_base64_refuses_a_line(line, refusal):
    """A file of 'base64 rank' lines is read all at once, with the lenient decoder on whole quads;
    a line strict base64 refuses (as b64decode(validate=True)), or an empty token before the last
    rank, is refused as the line-by-line reader refuses it, at its line."""
    table = [bytes([b]) for b in range(256)] + [b"ab"]
    rest = _rank_file([b"xy"], first=258)
    with pytest.raises(FormatError) as refused:
        import_report({"t.tiktoken": _rank_file(table) + line + rest}, pretokenizer="gpt2")
    assert str(refused.value) == refusal
