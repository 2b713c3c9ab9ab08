"""The token health scan (``explorer.analysis.health``) against tiktoken and direct checks.

The oracle for "unreachable" is tiktoken's own Encoding (its definitions in
``tiktoken_ext.openai_public``, its files answered from the bundled ones): a token is reachable
when ``enc._encode_bytes(enc.decode_single_token_bytes(i)) == [i]``. ``encode_single_token``
only looks the bytes up in the table (it gives every token back, reachable or not), so it
cannot tell; ``_encode_bytes`` is ``encode_ordinary`` for UTF-8 bytes and tiktoken's own rule
for bytes that are not, the rule the scan follows.

- unreachable and partial_utf8 for GPT-2, cl100k_base and o200k_base equal tiktoken's, every id;
- ``bytes_ids`` equals tiktoken's ``_encode_bytes`` on arbitrary bytes (hypothesis);
- a hand-made rank table (tiktoken's rules) and trained tokenizers (the merges' rules) against
  tiktoken's Encoding of the same ranks and against the tokenizer's own ``encode`` by brute force;
- hand-made tokenizers with a known unreachable token give exactly it (a merge order that
  splits the token's text otherwise, a pre-tokenizer boundary, a normalizer, lines);
- unused against a direct encode of the reference; the CLI's JSON and its errors.
"""

from __future__ import annotations

import json

import pytest
import tiktoken
from conftest import SAMPLES, is_utf8, read_sample
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run
from test_evaluate import tiktoken_encoding  # noqa: F401 - the fixture: name -> tiktoken's own Encoding

import explorer.cli
from explorer import Tokenizer, TrainerConfig, load_pretrained, make_config, train
from explorer.analysis.health import EXAMPLES, bytes_ids, encode_own_text, scan
from explorer.bpe.ranks import tokenizer_from_ranks
from explorer.bpe.vocab import Vocab
from explorer.formats.pretrained import PRETRAINED
from explorer.formats.trace import save_trace, trace_from_tokenizer
from explorer.stages.pipeline import Pipeline
from explorer.stages.pretokenizers import PATTERNS
from explorer.stages.units import byte_alphabet

TABLES = list(PRETRAINED)
ABC = [(98, 99), (97, 98), (257, 99)]  # b+c, a+b, ab+c: "abc" is cut a, bc before ab + c can apply


def tiktoken_unreachable(enc: tiktoken.Encoding) -> list[int]:
    """Ordinary ids whose bytes tiktoken does not encode back as that one id."""
    return [i for i, data in ordinary_tokens(enc) if enc._encode_bytes(data) != [i]]


def ordinary_tokens(enc: tiktoken.Encoding) -> list[tuple[int, bytes]]:
    """(id, bytes) of every token that is not special (tiktoken's ids may have gaps)."""
    special = set(enc._special_tokens.values())
    out = []
    for i in range(enc.n_vocab):
        if i not in special:
            try:
                out.append((i, enc.decode_single_token_bytes(i)))
            except KeyError:  # a gap before the special tokens (cl100k_base)
                pass
    return out


def ranks_encoding(tok: Tokenizer) -> tiktoken.Encoding:
    """tiktoken's Encoding whose ranks are a byte-level tokenizer's ids (no special tokens)."""
    return tiktoken.Encoding(
        "health-test",
        pat_str=PATTERNS[tok.pipeline.pretokenizer],
        mergeable_ranks={tok.token_bytes(i): i for i in range(len(tok))},
        special_tokens={},
    )


def byte_tokenizer(merges, *, rules="merges", **pipeline) -> Tokenizer:
    vocab = Vocab((), tuple(byte_alphabet()), tuple(merges), False)
    return Tokenizer(pipeline=Pipeline(unit="byte", **pipeline), vocab=vocab, rules=rules)


# ---- the bundled tables against tiktoken ----------------------------------------------------------------
@pytest.mark.parametrize("name", TABLES)
def test_unreachable_and_partial_tokens_of_a_bundled_table_are_tiktokens(name, tiktoken_encoding):  # noqa: F811
    enc = tiktoken_encoding(name)
    tokens = ordinary_tokens(enc)
    report = scan(load_pretrained(name))
    assert report.tokens == len(tokens)
    assert report.special == len(enc._special_tokens)
    assert list(report.unreachable) == tiktoken_unreachable(enc)
    assert list(report.partial_utf8) == [i for i, data in tokens if not is_utf8(data)]
    for note in report.examples["unreachable"]:
        assert list(note.encodes_as) == enc._encode_bytes(enc.decode_single_token_bytes(note.id))
    assert report.unused is None and report.reference_tokens is None and "unused" not in report.examples


def test_the_bundled_tables_unreachable_tokens_are_o200k_bases_twelve():
    """Golden: tiktoken's _encode_bytes gives every token of GPT-2 and cl100k_base back; twelve
    of o200k_base are cut by its own pattern (" I'" is " I" + "'", "\\n//" is "\\n" + "//")."""
    reports = {name: scan(load_pretrained(name)) for name in TABLES}
    assert [len(reports[n].unreachable) for n in TABLES] == [0, 0, 12]
    assert [len(reports[n].partial_utf8) for n in TABLES] == [344, 773, 1562]
    o200k = load_pretrained("o200k_base")
    examples = reports["o200k_base"].examples["unreachable"]
    assert len(examples) == EXAMPLES
    assert [(n.token, o200k.tokens(n.encodes_as)) for n in examples[:2]] == [
        ("ĠI'", ["ĠI", "'"]),
        ("Ċ//", ["Ċ", "//"]),
    ]


@pytest.mark.parametrize("name", TABLES)
@settings(max_examples=150, deadline=None)
@given(data=st.one_of(st.binary(max_size=12), st.text(max_size=8).map(str.encode).map(lambda b: b[:-1])))
def test_bytes_are_encoded_as_tiktokens_encode_bytes(name, data, tiktoken_encoding):  # noqa: F811
    """Any bytes, UTF-8 or cut inside a character: the valid prefix's pieces, the last one
    joined to the rest (tiktoken's _encode_bytes)."""
    assert list(bytes_ids(load_pretrained(name), data)) == tiktoken_encoding(name)._encode_bytes(data)


@pytest.mark.parametrize(
    "data",
    [b"a, b\xe4\xbd", b"x  \xe2\x80", b"\n\n \xe2", b"\xe4", b"\xe4\xbd\xa0\xe5", b"12345\xf0\x9f", b"\xa0abc"],
)
def test_bytes_that_end_inside_a_character_as_tiktoken(data, tiktoken_encoding):  # noqa: F811
    for name in TABLES:
        assert list(bytes_ids(load_pretrained(name), data)) == tiktoken_encoding(name)._encode_bytes(data)


# ---- hand-made and trained tokenizers -----------------------------------------------------------------
def test_a_token_the_earlier_merges_always_split_otherwise_is_unreachable():
    """b + c merges first, so "abc" is a, bc and ab + c never meets; tiktoken's rules take the
    piece whole, so there it is reached."""
    tok = byte_tokenizer(ABC, pretokenizer="none")
    assert scan(tok).unreachable == (258,)
    assert tok.tokens(encode_own_text(tok, 258)) == ["a", "bc"] == tok.tokens(tok.encode("abc"))
    assert scan(byte_tokenizer(ABC, pretokenizer="none", rules="tiktoken")).unreachable == ()


def test_character_level_tokens_are_their_symbols_merged_alone():
    cfg = TrainerConfig(pretokenizer="whitespace", unit="char", marker="eow")
    # l+o, lo+w, o+w, l+ow: "low" is made by lo + w, so l + ow (the same token, id reused) is never
    # needed; t+</w> and e+s, es+t</w>: "est</w>" is es + t</w>, but the symbols e s t </w> merge
    # t</w> and es first, then es + t</w>: reached
    tok = Tokenizer(
        config=cfg, alphabet=["l", "o", "w", "e", "s", "t", "</w>"], merges=[(0, 1), (3, 6), (4, 5), (9, 8)]
    )
    assert scan(tok).unreachable == ()
    # c+d, b+c (never: c+d comes first in "bcd"), then bc+d: "bcd" is b, cd
    tok = Tokenizer(config=cfg, alphabet=["b", "c", "d"], merges=[(1, 2), (0, 1), (4, 2)])
    assert tok.tokens([5]) == ["bcd"]
    assert scan(tok).unreachable == (5,)
    assert tok.tokens(encode_own_text(tok, 5)) == ["b", "cd"]


@pytest.mark.parametrize(
    ("pipeline", "merges", "token", "also"),
    [
        # "a" + " ": GPT-2's pattern cuts "a " into "a", " "
        ({"pretokenizer": "gpt2"}, [(97, 32)], "a ", ()),
        # "AB" is lowercased before it is encoded, and so is every capital letter
        ({"pretokenizer": "none", "normalizer": "lowercase"}, [(65, 66)], "AB", tuple(range(65, 91))),
        # a line ends after its newline: "\nx" is two sequences
        ({"pretokenizer": "none", "sequences": "lines"}, [(10, 120)], "\nx", ()),
    ],
)
@pytest.mark.parametrize("rules", ["merges", "tiktoken"])
def test_a_token_the_pipeline_cuts_or_changes_is_unreachable(pipeline, merges, token, also, rules):
    tok = byte_tokenizer(merges, rules=rules, **pipeline)
    (new,) = tok.merged_ids
    assert tok.token_text(new) == token
    assert scan(tok).unreachable == (*also, new)
    assert list(encode_own_text(tok, new)) == tok.encode(token) != [new]


@pytest.mark.parametrize(
    ("pattern", "unreachable"),
    [
        ("gpt2", {"a b", "a,", b"a,\xe2"}),
        # o200k cuts "\n " into "\n", " " (GPT-2's and cl100k's patterns keep it whole): tiktoken
        # gives the whitespace tokens before the last piece back as bytes too, so "\n \xe2" is
        # one piece again, and reached; "\n " itself is not
        ("o200k", {"a b", "a,", b"a,\xe2", "\n "}),
    ],
)
def test_a_hand_made_rank_table_against_tiktoken(pattern, unreachable):
    """Tokens across the pattern's cuts, parts of characters after text and after whitespace,
    and bytes whose merges never rebuild them (b"\x81\x82" merges first) but that are a token."""
    tokens = [bytes([b]) for b in range(256)] + [
        b"ab", b" a", b" b", b"a b", b" ab", b"b\xe2", b"\xe2\x80", b" \xe2", b" \xe2\x80", b"\n\n", b"\n\n\xe2",
        b"ab\xe2", b"a,", b"a,\xe2", b" \n", b"\n ", b"\n \xe2",
        b"\x81\x82", b"\x80\x81", b"\x82\x83", b"\x80\x81\x82\x83",
    ]  # fmt: skip
    tok = tokenizer_from_ranks(tokens, pretokenizer=pattern)
    report = scan(tok)
    enc = ranks_encoding(tok)
    assert list(report.unreachable) == tiktoken_unreachable(enc)
    assert {tok.token_text(i) for i in report.unreachable} == unreachable
    assert list(report.partial_utf8) == [i for i, data in ordinary_tokens(enc) if not is_utf8(data)]
    assert len(tok.encode_bytes(b"\x80\x81\x82\x83")) == 3  # merged alone: \x80, \x81\x82, \x83


@pytest.mark.parametrize(
    ("preset", "sample", "pretokenizer"),
    [
        ("gpt2", "udhr_hi.txt", None),
        ("gpt4", "mixed_emoji_multilingual.txt", None),
        # merges learned across words, encoded with GPT-2's pattern (a minbpe model imported with
        # --pretokenizer gpt2): the tokens that cross its cuts are unreachable
        ("bytes", "udhr_en.txt", "gpt2"),
    ],
)
def test_trained_tokenizers_against_their_own_encode_and_tiktoken(preset, sample, pretokenizer):
    """The merges' rules: a UTF-8 token is unreachable exactly when ``encode`` of its text is not
    that one id (brute force); the same vocabulary with tiktoken's rules against tiktoken."""
    text = read_sample(sample)[:20_000]
    cfg = make_config(preset, alphabet="full-bytes", tie_break="hf", num_merges=600, special_tokens=())
    trained = train(text, cfg).tokenizer()
    pipeline = Pipeline(unit="byte", pretokenizer=pretokenizer or trained.pipeline.pretokenizer)
    tok = Tokenizer(pipeline=pipeline, vocab=trained.vocab)
    report = scan(tok)
    brute = [i for i in range(len(tok)) if is_utf8(tok.token_bytes(i)) and tok.encode(tok.decode([i])) != [i]]
    assert [i for i in report.unreachable if i not in report.partial_utf8] == brute
    assert bool(brute) == (pretokenizer is not None)
    as_tiktoken = Tokenizer(pipeline=pipeline, vocab=trained.vocab, rules="tiktoken")
    assert list(scan(as_tiktoken).unreachable) == tiktoken_unreachable(ranks_encoding(tok))


# ---- unused -------------------------------------------------------------------------------------------------
def test_unused_tokens_are_those_a_direct_encode_of_the_reference_never_gives(tiktoken_encoding):  # noqa: F811
    text = read_sample("udhr_en.txt")
    enc = tiktoken_encoding("gpt2")
    report = scan(load_pretrained("gpt2"), reference=text)
    used = enc.encode_ordinary(text)
    assert report.reference_tokens == len(used)
    assert set(report.unused) == {i for i, _ in ordinary_tokens(enc)} - set(used)
    assert list(report.unused) == sorted(report.unused)
    # merged tokens first, the earliest merges first
    assert [n.id for n in report.examples["unused"]] == [i for i in report.unused if i >= 256][:EXAMPLES]


def test_unused_on_a_trained_tokenizer_and_its_own_corpus():
    text = "low lower lowest newer wider " * 3
    tok = train(text, make_config("sennrich", num_merges=8)).tokenizer()
    report = scan(tok, reference="low low")
    used = set(tok.encode("low low"))
    assert set(report.unused) == {i for i in range(len(tok)) if not tok.is_special(i)} - used
    assert scan(tok, reference="").unused == tuple(i for i in range(len(tok)) if not tok.is_special(i))


# ---- the CLI ------------------------------------------------------------------------------------------------
def test_cli_scan_prints_one_json_object_with_the_contracts_keys_first(tmp_path):
    reference = tmp_path / "ref.txt"
    reference.write_text("hello world", encoding="utf-8")
    code, out, err = run("scan", "--tokenizer", "gpt2", "--reference", str(reference))
    assert (code, err) == (0, "")
    assert out.count("\n") == 1
    row = json.loads(out)
    assert list(row)[:4] == ["tokens", "unreachable", "partial_utf8", "unused"]
    assert row | {"examples": None} == {
        "tokens": 50256,
        "unreachable": [],
        "partial_utf8": 344,
        "unused": 50254,
        "special": 1,
        "reference_tokens": 2,
        "examples": None,
    }
    assert [e["token"] for e in row["examples"]["partial_utf8"]][:2] == ["âĢ", "ĠâĢ"]
    assert json.loads(run("scan", "--tokenizer", "gpt2")[1])["unused"] is None


def test_cli_scan_of_a_trained_tokenizers_folder(tmp_path):
    tok = byte_tokenizer(ABC, pretokenizer="none")
    save_trace(trace_from_tokenizer(tok), tmp_path / "abc")
    code, out, _ = run("scan", "--tokenizer", str(tmp_path / "abc"))
    row = json.loads(out)
    assert (code, row["tokens"], row["unreachable"], row["partial_utf8"]) == (0, 259, [258], 128)
    assert row["examples"]["unreachable"] == [{"id": 258, "token": "abc", "hex": "61 62 63", "encodes_as": [97, 256]}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tokenizer", "nope"], "'nope' is neither a bundled tokenizer"),
        (["--tokenizer", "{tmp}"], "no trace.json"),
        (["--tokenizer", "gpt2", "--reference", "{tmp}/missing.txt"], "no such file"),
        (["--tokenizer", "gpt2", "--reference", "{tmp}/binary.txt"], "not valid UTF-8"),
        (["--tokenizer", "gpt2", "--reference", "{tmp}"], "is a folder"),
        ([], "--tokenizer"),
    ],
)
def test_cli_scan_errors_exit_2_with_one_line(tmp_path, args, message):
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00abc\x94")
    code, out, err = run("scan", *[a.format(tmp=tmp_path) for a in args])
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_readme_and_usage_describe_the_scan_as_it_is():
    readme = (SAMPLES.parent / "README.md").read_text(encoding="utf-8")
    assert "`scan --tokenizer T [--reference FILE]`" in readme
    assert '{"tokens": N, "unreachable": [ids], "partial_utf8": n, "unused": n, ...}' in readme
    assert f"o200k_base has {len(scan(load_pretrained('o200k_base')).unreachable)}," in readme
    assert "python -m explorer scan --tokenizer NAME|DIR|FILE|OWNER/REPO [--reference FILE]" in explorer.cli.__doc__
