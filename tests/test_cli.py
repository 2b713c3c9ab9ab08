"""The CLI contract: trace.json's fields, encode's JSON, one-line errors with status 2."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES

from explorer import load_pretrained
from explorer.cli import main
from explorer.formats.exporters import zip_files


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        old, sys.stdin = sys.stdin, io.StringIO(stdin)
    try:
        code = main(list(argv), out=out, err=err)
    finally:
        if stdin is not None:
            sys.stdin = old
    return code, out.getvalue(), err.getvalue()


def test_train_writes_trace_with_every_documented_field(tmp_path):
    code, out, err = run(
        "train",
        str(SAMPLES / "udhr_en.txt"),
        "--preset",
        "gpt2",
        "--vocab-size",
        "400",
        "--full-byte-alphabet",
        "--tie-break",
        "hf",
        "--out",
        str(tmp_path),
    )
    assert code == 0, err
    assert "merges" in err  # the progress bar went to stderr
    trace = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    assert set(trace) >= {"config", "special_tokens", "alphabet", "merges"}
    assert trace["special_tokens"] == ["<|endoftext|>"]
    assert len(trace["alphabet"]) == 256 and trace["alphabet"][0] == "!"  # GPT-2 order, as HF
    assert len(trace["special_tokens"]) + len(trace["alphabet"]) + len(trace["merges"]) == 400
    first = trace["merges"][0]
    assert set(first) >= {"left", "right", "token", "id", "count", "replaced", "tokens_after", "ties"}
    assert first["token"] == first["left"] + first["right"]
    assert first["id"] == 257
    counts = [m["count"] for m in trace["merges"]]
    assert counts[0] == max(counts)


def test_encode_prints_ids_and_display_tokens_from_text_or_stdin(tmp_path):
    assert (
        run("train", str(SAMPLES / "demo_sentences.txt"), "--preset", "gpt2", "--merges", "50", "--out", str(tmp_path))[
            0
        ]
        == 0
    )
    code, out, _ = run("encode", "--tokenizer", str(tmp_path), "--text", "The cat sat.")
    assert code == 0
    enc = json.loads(out)
    assert len(enc["ids"]) == len(enc["tokens"]) < len("The cat sat.")
    assert "".join(enc["tokens"]) == "TheĠcatĠsat."
    code2, out2, _ = run("encode", "--tokenizer", str(tmp_path), stdin="The cat sat.")
    assert code2 == 0 and json.loads(out2) == enc


def test_encode_dropout_is_reproducible_with_a_seed(tmp_path):
    run(
        "train", str(SAMPLES / "seeds" / "seed004_bpe_dropout.txt"), "--preset", "suffix-marker", "--out", str(tmp_path)
    )
    a = run(
        "encode",
        "--tokenizer",
        str(tmp_path),
        "--text",
        "BPE will result in a higher BLEU score.",
        "--dropout",
        "0.3",
        "--seed",
        "7",
    )
    b = run(
        "encode",
        "--tokenizer",
        str(tmp_path),
        "--text",
        "BPE will result in a higher BLEU score.",
        "--dropout",
        "0.3",
        "--seed",
        "7",
    )
    plain = run("encode", "--tokenizer", str(tmp_path), "--text", "BPE will result in a higher BLEU score.")
    assert a == b
    assert json.loads(plain[1])["tokens"] == [
        "BPEĠ",
        "willĠ",
        "resultĠ",
        "inĠ",
        "aĠ",
        "higherĠ",
        "BLEUĠ",
        "scor",
        "e",
        ".Ġ",
    ]
    assert len(json.loads(a[1])["ids"]) > len(json.loads(plain[1])["ids"])


@pytest.mark.parametrize(
    "name, ids", [("gpt2", [31373, 995]), ("cl100k_base", [15339, 1917]), ("o200k_base", [24912, 2375])]
)
def test_encode_with_a_bundled_tokenizer_prints_its_ids(name, ids):
    code, out, err = run("encode", "--tokenizer", name, "--text", "hello world")
    assert code == 0, err
    enc = json.loads(out)
    assert enc["ids"] == ids
    assert enc["tokens"] == ["hello", "Ġworld"]


def test_encode_allow_special_turns_special_tokens_into_their_ids():
    code, out, _ = run("encode", "--tokenizer", "cl100k_base", "--text", "a<|endoftext|>", "--allow-special")
    assert code == 0
    assert json.loads(out)["ids"] == [64, 100257]
    code, out, _ = run("encode", "--tokenizer", "cl100k_base", "--text", "a<|endoftext|>")
    assert code == 0
    plain = json.loads(out)["ids"]
    assert 100257 not in plain and len(plain) > 2  # "<|endoftext|>" as ordinary text


def test_encode_with_an_unknown_tokenizer_names_the_bundled_ones():
    code, out, err = run("encode", "--tokenizer", "gpt5", "--text", "x")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "'gpt5'" in err and all(name in err for name in ("gpt2", "cl100k_base", "o200k_base"))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "missing.txt", "--preset", "gpt2", "--out", "x"], "no such file"),
        (["train", "README.md", "--preset", "nope", "--out", "x"], "invalid choice"),
        (["train", "README.md", "--preset", "gpt2", "--marker", "eow", "--out", "x"], "word markers"),
        (
            ["train", "README.md", "--preset", "gpt2", "--pretokenizer", "regex", "--pattern", "(", "--out", "x"],
            "does not compile",
        ),
        (["train", "README.md", "--preset", "gpt2", "--vocab-size", "0", "--out", "x"], "vocab size"),
        (
            ["train", "README.md", "--preset", "gpt2", "--vocab-size", "10", "--merges", "3", "--out", "x"],
            "not allowed with",
        ),
        (["encode", "--tokenizer", "no-such-dir", "--text", "x"], "neither a bundled tokenizer"),
        (["encode"], "required"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_no_traceback(argv, message, tmp_path):
    code, out, err = run(*argv)
    assert code == 2
    assert err.count("\n") == 1 and message in err
    assert "Traceback" not in err


def test_undecodable_and_binary_files_are_refused_cleanly(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9".encode("latin-1"))
    code, _, err = run("train", str(bad), "--preset", "gpt2", "--out", str(tmp_path / "o"))
    assert code == 2 and "not valid UTF-8" in err and "offset 3" in err
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\x00\x01\x02abc")
    code, _, err = run("train", str(binary), "--preset", "gpt2", "--out", str(tmp_path / "o"))
    assert code == 2 and "binary" in err


@pytest.mark.parametrize(
    "payload, message",
    [
        ("{not json", "not valid JSON"),
        ('{"format": "other"}', "not a BPE Explorer trace"),
        (
            '{"format": "bpe-explorer-trace", "config": {}, "alphabet": ["a"], "merges": [{"left_id": 0, "right_id": 9, "id": 1}]}',
            "inconsistent",
        ),
        (
            '{"format": "bpe-explorer-trace", "config": {}, "alphabet": ["a"], "merges": [{"left_id": 0, "right_id": 0, "id": 5}]}',
            "derives id 1",
        ),
        (
            '{"format": "bpe-explorer-trace", "config": {"unit": "qubit"}, "alphabet": [], "merges": []}',
            "config is invalid",
        ),
    ],
)
def test_malformed_trace_files_are_refused_with_a_clear_message(payload, message, tmp_path):
    (tmp_path / "trace.json").write_text(payload, encoding="utf-8")
    code, _, err = run("encode", "--tokenizer", str(tmp_path), "--text", "a")
    assert code == 2 and message in err


def test_module_entry_point_runs_in_a_subprocess(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "train", "nope.txt", "--preset", "gpt2", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        proc.returncode == 2 and proc.stderr.startswith("python -m explorer: error:") and "Traceback" not in proc.stderr
    )


@pytest.mark.parametrize("content", ["", "  \n\t\n", "\n\n"])
def test_an_empty_or_whitespace_only_corpus_is_refused_before_any_output(content, tmp_path):
    corpus = tmp_path / "empty.txt"
    corpus.write_text(content, encoding="utf-8")
    code, out, err = run("train", str(corpus), "--preset", "gpt2", "--out", str(tmp_path / "model"))
    assert code == 2 and out == "" and "the corpus is empty (or only whitespace)" in err and err.count("\n") == 1
    assert not (tmp_path / "model").exists()


def test_a_vocab_size_with_no_room_for_a_merge_is_refused_with_the_size_to_ask_for(tmp_path):
    corpus = tmp_path / "a.txt"
    corpus.write_text("hello world hello", encoding="utf-8")  # 7 symbols + <|endoftext|> = 8 base tokens
    code, _, err = run("train", str(corpus), "--preset", "hf-course", "--vocab-size", "8", "--out", str(tmp_path / "m"))
    assert code == 2 and "a vocabulary of 8 leaves no room for a merge" in err and "ask for at least 9" in err
    code, out, _ = run("train", str(corpus), "--preset", "hf-course", "--vocab-size", "9", "--out", str(tmp_path / "m"))
    assert code == 0 and out.startswith("1 merges, vocab 9")


@pytest.mark.parametrize(
    ("pattern", "sentence"),
    [
        (
            r"(?:[\s\S]|[\s\S]|[\s\S])*#|.",
            "takes too long on a test string: a repeated group of alternatives that can "
            "match the same text, such as (?:a|a)*, backtracks exponentially",
        ),
        ("(" * 90 + "a" + ")" * 90 + "|.", "nests groups 90 deep; at most 32 levels are allowed"),
        ("a{2000000000}", "spells out 2,000,000,000 items once its counted repeats are expanded"),
        ("(?:a{10000}){10000}|.", "spells out 100,020,002 items"),
    ],
)
def test_a_hostile_custom_regex_exits_2_with_what_to_change(pattern, sentence, tmp_path):
    code, out, err = run(
        "train",
        "README.md",
        "--preset",
        "gpt2",
        "--pretokenizer",
        "regex",
        "--pattern",
        pattern,
        "--out",
        str(tmp_path / "m"),
    )
    assert code == 2 and not out
    assert err.count("\n") == 1 and sentence in err and "Traceback" not in err


@pytest.mark.parametrize("pattern", ["x*", "a|", "(?:)", r"\b", "(a)?"])
def test_a_custom_regex_that_can_match_nothing_is_refused(pattern, tmp_path):
    code, _, err = run(
        "train",
        "README.md",
        "--preset",
        "gpt2",
        "--pretokenizer",
        "regex",
        "--pattern",
        pattern,
        "--out",
        str(tmp_path / "m"),
    )
    assert code == 2 and "can match the empty string" in err and err.count("\n") == 1


def test_a_custom_regex_without_the_regex_pre_tokenizer_is_refused_not_ignored(tmp_path):
    code, _, err = run("train", "README.md", "--preset", "gpt2", "--pattern", r"\w+", "--out", str(tmp_path / "m"))
    assert code == 2 and "only by the 'regex' pre-tokenizer" in err and "--pretokenizer regex" in err


@pytest.mark.parametrize(
    "make_out, message",
    [
        (lambda tmp: tmp / "a-file.txt", "a file of that name exists"),
        (lambda tmp: tmp / "a-file.txt" / "below", "cannot create the folder"),
    ],
)
def test_a_bad_out_is_reported_before_training(make_out, message, tmp_path, monkeypatch):
    (tmp_path / "a-file.txt").write_text("x", encoding="utf-8")
    trained = []
    monkeypatch.setattr("explorer.cli.Trainer.step", lambda self: trained.append(1))
    code, _, err = run("train", str(SAMPLES / "udhr_en.txt"), "--preset", "gpt2", "--out", str(make_out(tmp_path)))
    assert code == 2 and message in err and trained == []


def test_size_limits_are_the_same_in_the_cli_and_the_app_and_stated_in_mib(tmp_path):
    from explorer.formats.corpora import MAX_CORPUS_BYTES, decode_bytes, read_text_file

    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (MAX_CORPUS_BYTES + 1))  # 20 MiB and one byte
    code, _, err = run("train", str(big), "--preset", "gpt2", "--out", str(tmp_path / "m"))
    assert code == 2 and "big.txt is 20.0 MiB; the limit is 20.0 MiB" in err
    with pytest.raises(Exception, match="the text is 20.0 MiB; the limit is 20.0 MiB"):
        decode_bytes(big.read_bytes())  # what an upload of the same file meets in the app
    big.write_bytes(b"a" * MAX_CORPUS_BYTES)  # exactly at the limit: accepted by both
    assert len(read_text_file(big)) == len(decode_bytes(big.read_bytes()).text) == MAX_CORPUS_BYTES


def test_special_tokens_in_the_corpus_are_cut_out_trained_as_text_or_refused(tmp_path):
    corpus = tmp_path / "with-specials.txt"
    corpus.write_text("hello world<|endoftext|>" * 20 + "bye<s>", encoding="utf-8")
    code, _, err = run(
        "train",
        str(corpus),
        "--preset",
        "gpt2",
        "--special",
        "<|endoftext|>",
        "<s>",
        "--specials-in-text",
        "refuse",
        "--out",
        str(tmp_path / "m"),
    )
    assert code == 2 and "the corpus contains the special token '<|endoftext|>' (first at character 11)" in err
    code, _, _ = run(
        "train",
        str(corpus),
        "--preset",
        "gpt2",
        "--special",
        "<|endoftext|>",
        "<s>",
        "--merges",
        "30",
        "--specials-in-text",
        "split",
        "--out",
        str(tmp_path / "split"),
    )
    trace = json.loads((tmp_path / "split" / "trace.json").read_text(encoding="utf-8"))
    assert code == 0 and trace["config"]["specials_in_text"] == "split"
    assert not any("endoftext" in m["token"] or "|>" in m["token"] for m in trace["merges"])
    # the gpt2 preset, like its notebook and HF's BpeTrainer, trains on them as text
    code, _, _ = run(
        "train",
        str(corpus),
        "--preset",
        "gpt2",
        "--special",
        "<|endoftext|>",
        "<s>",
        "--merges",
        "30",
        "--out",
        str(tmp_path / "text"),
    )
    trace = json.loads((tmp_path / "text" / "trace.json").read_text(encoding="utf-8"))
    assert code == 0 and trace["config"]["specials_in_text"] == "text"
    assert any("endoftext" in m["token"] for m in trace["merges"])


# ---- export / import ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def trained_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("trained")
    assert run("train", str(SAMPLES / "udhr_en.txt"), "--preset", "gpt4", "--merges", "200", "--out", str(out))[0] == 0
    return out


EXPORTS = {  # format -> the files it writes (a folder for several)
    "hf": None,
    "gpt2": ["merges.txt", "vocab.json"],
    "tiktoken": ["tokenizer.json", "tokenizer.tiktoken"],
    "arrow": None,
    "csv": None,
    "trace": None,
}


@pytest.mark.parametrize("fmt", list(EXPORTS))
def test_export_writes_the_format_and_import_gives_back_a_tokenizer_with_the_same_ids(fmt, trained_dir, tmp_path):
    target = tmp_path / f"out_{fmt}"
    code, out, err = run("export", str(trained_dir), "--format", fmt, "--out", str(target))
    assert code == 0, err
    assert "wrote" in out and "200 merges" in out
    if EXPORTS[fmt]:
        assert sorted(p.name for p in target.iterdir()) == EXPORTS[fmt]
        files = sorted(str(p) for p in target.iterdir())
    else:
        assert target.is_file() and target.stat().st_size > 0
        files = [str(target)]
    # vocab.json + merges.txt, arrow merges and the CSV name no regex
    extra = ["--pretokenizer", "cl100k"] if fmt in ("gpt2", "arrow", "csv") else []
    code, out, err = run("import", *files, "--out", str(tmp_path / "imported"), *extra)
    assert code == 0, err
    imported = json.loads((tmp_path / "imported" / "trace.json").read_text(encoding="utf-8"))
    assert imported["config"]["pretokenizer"] == "cl100k"
    text = "The Universal Declaration of Human Rights, 1948. Всеобщая декларация"
    ours = json.loads(run("encode", "--tokenizer", str(trained_dir), "--text", text)[1])
    back = json.loads(run("encode", "--tokenizer", str(tmp_path / "imported"), "--text", text)[1])
    assert back == ours


def test_export_csv_keeps_the_training_counts(trained_dir, tmp_path):
    assert run("export", str(trained_dir), "--format", "csv", "--out", str(tmp_path / "m.csv"))[0] == 0
    lines = (tmp_path / "m.csv").read_text(encoding="utf-8").splitlines()
    trace = json.loads((trained_dir / "trace.json").read_text(encoding="utf-8"))
    assert lines[0].startswith("step,left,right,token,id,count")
    assert len(lines) == 201
    first = lines[1].split(",")
    assert first[:5] == [
        "1",
        trace["merges"][0]["left"],
        trace["merges"][0]["right"],
        trace["merges"][0]["token"],
        "256",
    ]
    assert int(first[5]) == trace["merges"][0]["count"]


def test_a_bundled_tokenizer_exports_to_tiktoken_and_imports_with_its_own_ids(tmp_path):
    assert run("export", "gpt2", "--format", "tiktoken", "--out", str(tmp_path / "g"))[0] == 0
    meta = json.loads((tmp_path / "g" / "tokenizer.json").read_text(encoding="utf-8"))
    assert meta["special_tokens"] == {"<|endoftext|>": 50256}
    code, out, err = run("import", *(str(p) for p in (tmp_path / "g").iterdir()), "--out", str(tmp_path / "imp"))
    assert code == 0, err
    assert "50,000 merges" in out
    text = "Hello world<|endoftext|>"
    assert (
        run("encode", "--tokenizer", str(tmp_path / "imp"), "--text", text, "--allow-special")[1]
        == run("encode", "--tokenizer", "gpt2", "--text", text, "--allow-special")[1]
    )


@pytest.mark.parametrize(
    ("fmt", "message"),
    [
        ("subword-nmt", "subword-nmt merges characters; this tokenizer is byte-level"),
        ("minbpe", "minbpe's ids 0-255 are the 256 bytes in byte order"),
    ],
)
def test_export_names_the_setting_a_format_cannot_represent(fmt, message, trained_dir, tmp_path):
    code, out, err = run("export", str(trained_dir), "--format", fmt, "--out", str(tmp_path / "x"))
    assert code == 2 and out == ""
    assert err.startswith("python -m explorer: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            "tokenizer.json",
            '{"model": {"type": "BPE", "vocab": {',
            "tokenizer.json is not valid JSON (cut short?): line 1",
        ),
        ("tokenizer.json", '{"model": {"type": "WordPiece", "vocab": {}}}', "'model.type' is 'WordPiece': only BPE"),
        ("cl.tiktoken", "IQ== 0\nnot-base64! 1\n", "cl.tiktoken line 2: bad base64"),
        ("codes.txt", "e s\nes t\n", "codes.txt line 1: a '#version' header is missing"),
        ("tok.model", "minbpe v2\n\n0\n", "tok.model line 1: expected 'minbpe v1'"),
        ("vocab.json", '{"a": 0}', "a vocab.json needs its merges.txt"),
    ],
)
def test_import_of_a_malformed_file_exits_2_with_where_it_goes_wrong(name, content, message, tmp_path):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code, out, err = run("import", str(path), "--out", str(tmp_path / "imp"))
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "imp" / "trace.json").exists()


# ---- export -> import -> encode, per format, as files and as a zip ------------------------------
@pytest.fixture(scope="module")
def small_models(tmp_path_factory):
    """preset -> a folder trained to 20 merges by the CLI (gpt2 as the app trains it: all 256 bytes)."""
    out = {}
    for preset, extra in (("gpt2", ["--full-byte-alphabet"]), ("bytes", []), ("sennrich", [])):
        folder = tmp_path_factory.mktemp(f"small-{preset}")
        assert (
            run(
                "train",
                str(SAMPLES / "udhr_en.txt"),
                "--preset",
                preset,
                "--merges",
                "20",
                *extra,
                "--out",
                str(folder),
            )[0]
            == 0
        )
        out[preset] = folder
    return out


SUMMARY = re.compile(
    r"^[^:]+: [\d,]+ merges, vocab [\d,]+, (byte|char) level, pre-tokenizer \S+; wrote \S+trace\.json$"
)
# (preset, format, compared): "ids" where the files give every id, "tokens" where they cannot
# (arrow merges hold no special tokens: gpt2's <|endoftext|> takes id 0; subword-nmt codes, arrow
# merges and the CSV of a character-level tokenizer know only the characters their merges use)
CLI_CASES = [
    ("gpt2", "hf", "ids"),
    ("gpt2", "gpt2", "ids"),
    ("gpt2", "tiktoken", "ids"),
    ("gpt2", "arrow", "tokens"),
    ("gpt2", "csv", "ids"),
    ("gpt2", "trace", "ids"),
    ("bytes", "minbpe", "ids"),
    ("sennrich", "subword-nmt", "tokens"),
    ("sennrich", "arrow", "tokens"),
    ("sennrich", "csv", "tokens"),
]


def _encoded(tokenizer: str, text: str) -> dict:
    code, out, err = run("encode", "--tokenizer", tokenizer, "--text", text)
    assert code == 0, err
    return json.loads(out)


def _import_and_compare(files: list[str], source: Path, out: Path, compared: str) -> list[str]:
    code, printed, err = run("import", *files, "--out", str(out))
    assert code == 0 and err == "", err
    lines = printed.splitlines()
    assert SUMMARY.match(lines[0]), lines[0]  # the summary line keeps its format
    assert all(line.startswith("note: ") for line in lines[1:])
    alphabet = set(json.loads((out / "trace.json").read_text(encoding="utf-8"))["alphabet"])
    text = "The Universal Declaration of Human Rights: everyone has the right to life, liberty and security."
    if compared == "tokens":  # only words the imported alphabet can spell ("</w>" is the sennrich marker)
        text = " ".join(w for w in text.split() if set(w) <= alphabet)
        assert len(text.split()) >= 5
    ours, back = _encoded(str(source), text), _encoded(str(out), text)
    assert back["tokens"] == ours["tokens"]
    if compared == "ids":
        assert back["ids"] == ours["ids"]
    return lines[1:]


@pytest.mark.parametrize("preset, fmt, compared", CLI_CASES)
def test_export_then_import_then_encode_gives_the_sources_tokens_for_every_format(
    preset, fmt, compared, small_models, tmp_path
):
    source = small_models[preset]
    target = tmp_path / "exported"
    code, _, err = run("export", str(source), "--format", fmt, "--out", str(target))
    assert code == 0, err
    files = sorted(str(p) for p in target.iterdir()) if target.is_dir() else [str(target)]
    notes = _import_and_compare(files, source, tmp_path / "imported", compared)
    if fmt in ("arrow", "csv", "subword-nmt"):
        assert any("carry no alphabet" in n for n in notes)
    if len(files) > 1:  # the folder's files as one zip, as the Train page downloads them
        zipped = tmp_path / f"bpe-{fmt}.zip"
        zipped.write_bytes(zip_files({Path(f).name: Path(f).read_bytes() for f in files}))
        assert _import_and_compare([str(zipped)], source, tmp_path / "from-zip", compared) == notes


def test_import_of_arrow_merges_prints_what_was_assumed_after_the_summary(small_models, tmp_path):
    assert run("export", str(small_models["gpt2"]), "--format", "arrow", "--out", str(tmp_path / "merges.txt"))[0] == 0
    code, out, _ = run("import", str(tmp_path / "merges.txt"), "--out", str(tmp_path / "imp"))
    assert code == 0
    first, *notes = out.splitlines()
    assert first.startswith("merges as 'a b -> ab': 20 merges, vocab 276, byte level, pre-tokenizer gpt2; wrote ")
    assert notes == [
        "note: arrow merges carry no alphabet: read as byte level (the merges use GPT-2's byte symbols, such as 'Ġ' "
        "for a space), with all 256 bytes in the presets' sorted order",
        "note: arrow merges hold no ids and no special tokens: the alphabet takes the first ids, then one per merge",
        "note: arrow merges name no pre-tokenizer: gpt2 assumed (choose another when importing)",
    ]


def test_a_bare_cl100k_base_tiktoken_imports_as_the_bundled_tokenizer(tmp_path):
    import gzip

    from explorer.formats.pretrained import PRETRAINED_DIR

    table = tmp_path / "cl100k_base.tiktoken"
    table.write_bytes(gzip.decompress((PRETRAINED_DIR / "tiktoken" / "cl100k_base.tiktoken.gz").read_bytes()))
    code, out, err = run("import", str(table), "--out", str(tmp_path / "imp"))
    assert code == 0, err
    assert out.splitlines()[1] == (
        "note: recognised as the bundled cl100k_base table: its regex (cl100k) and special tokens come with it"
    )
    text = "hello world<|endoftext|>"
    assert (
        run("encode", "--tokenizer", str(tmp_path / "imp"), "--text", text, "--allow-special")[1]
        == run("encode", "--tokenizer", "cl100k_base", "--text", text, "--allow-special")[1]
    )


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bomb.zip", zip_files({"merges.txt": bytes(8 << 20)}), "bomb.zip: 'merges.txt' unpacks "),
        (
            "bad.zip",
            zip_files({"../tokenizer.json": b"{}"}),
            "bad.zip: the member '../tokenizer.json' points outside the zip",
        ),
        ("merges.csv", b"step,left,right,token\n1,a,b,ab\n", "merges.csv line 1: the header has no 'id' column"),
        ("merges.txt", b"a b -> ab\nab c -> abd\n", "merges.txt line 2: 'ab' + 'c' makes 'abc', not 'abd'"),
    ],
    ids=["bomb.zip", "bad.zip", "merges.csv", "merges.txt"],
)  # a zip's bytes hold the time it was made
def test_import_of_a_refused_zip_or_merge_list_exits_2_with_one_line_and_writes_nothing(
    name, content, message, tmp_path
):
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run("import", str(path), "--out", str(tmp_path / "imp"))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert not (tmp_path / "imp").exists()


# ---- evaluate: the Rényi efficiency and, over several files, their Gini and parity -----------------------------
def _evaluate_lines(*argv: str) -> list[dict]:
    code, out, err = run("evaluate", *argv)
    assert code == 0 and err == "", err
    return [json.loads(line) for line in out.splitlines()]


def _direct_gini(counts: list[int]) -> float:
    mean = sum(counts) / len(counts)
    return sum(abs(a - b) for a in counts for b in counts) / len(counts) ** 2 / (2 * mean)


def test_evaluate_of_several_files_ends_with_the_gini_of_their_token_counts_and_parity_against_the_first():
    files = [str(SAMPLES / f"udhr_{lang}.txt") for lang in ("hi", "en", "ko", "zh_hans")]
    lines = _evaluate_lines("--tokenizer", "gpt2", *files)
    assert len(lines) == 5
    rows, last = lines[:4], lines[4]
    assert [r["file"] for r in rows] == files
    # the newer fields end the counts, in the order they came
    assert all(list(r)[-2:] == ["renyi_efficiency", "shortest_tokens"] for r in rows)
    tokens = [r["tokens"] for r in rows]
    assert list(last) == ["files", "gini", "parity"] and last["files"] == 4
    assert last["gini"] == pytest.approx(_direct_gini(tokens), abs=1e-12)
    assert list(last["parity"]) == files  # in the files' order, the first against itself
    assert last["parity"] == {f: pytest.approx(n / tokens[0], abs=1e-12) for f, n in zip(files, tokens)}
    assert last["parity"][files[0]] == 1.0 and last["parity"][files[1]] < 0.2  # English: a fraction of Hindi's


def test_evaluate_of_one_file_prints_no_gini_line():
    lines = _evaluate_lines("--tokenizer", "cl100k_base", str(SAMPLES / "udhr_en.txt"))
    assert len(lines) == 1 and "gini" not in lines[0] and lines[0]["renyi_efficiency"] > 0


def test_evaluate_of_the_same_file_twice_has_a_gini_of_0_and_an_empty_first_file_no_parity(tmp_path):
    same = str(SAMPLES / "udhr_ru.txt")
    assert _evaluate_lines("--tokenizer", "gpt2", same, same)[-1] == {"files": 2, "gini": 0.0, "parity": {same: 1.0}}
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    last = _evaluate_lines("--tokenizer", "gpt2", str(empty), same)[-1]
    assert last == {"files": 2, "gini": 0.5, "parity": {str(empty): None, same: None}}


def test_alpha_sets_the_order_of_the_renyi_efficiency_and_nothing_else():
    path = str(SAMPLES / "udhr_el.txt")
    ids = load_pretrained("o200k_base").encode((SAMPLES / "udhr_el.txt").read_text(encoding="utf-8"))
    shares = [n / len(ids) for n in Counter(ids).values()]
    distinct = math.log(len(shares))
    rows = {}
    for alpha in (None, "1", "2.5", "7"):
        argv = ["--tokenizer", "o200k_base", path] + ([] if alpha is None else ["--alpha", alpha])
        [rows[alpha]] = _evaluate_lines(*argv)
    shannon = -sum(p * math.log(p) for p in shares) / distinct
    assert rows["1"]["renyi_efficiency"] == pytest.approx(shannon, abs=1e-12)
    for a in (2.5, 7.0):
        renyi = math.log(sum(p**a for p in shares)) / (1 - a) / distinct
        assert rows[f"{a:g}"]["renyi_efficiency"] == pytest.approx(renyi, abs=1e-12)
    assert rows[None] == rows["2.5"]  # 2.5 by default
    assert rows["1"]["renyi_efficiency"] > rows["2.5"]["renyi_efficiency"] > rows["7"]["renyi_efficiency"]
    for row in rows.values():
        assert {k: v for k, v in row.items() if k != "renyi_efficiency"} == {
            k: v for k, v in rows[None].items() if k != "renyi_efficiency"
        }


@pytest.mark.parametrize(
    "alpha, message",
    [
        ("0", "--alpha must be a number above 0 (got 0)"),
        ("-2", "--alpha must be a number above 0 (got -2)"),
        ("nan", "--alpha must be a number above 0 (got nan)"),
        ("inf", "--alpha must be a number above 0 (got inf)"),
        ("two", "argument --alpha: invalid float value: 'two'"),
    ],
)
def test_a_bad_alpha_exits_2_with_one_line_before_reading_anything(alpha, message):
    code, out, err = run("evaluate", "--tokenizer", "gpt2", "missing.txt", "--alpha", alpha)
    assert code == 2 and out == ""
    assert err.startswith("python -m explorer: error: ") and err.count("\n") == 1
    assert message in err and "Traceback" not in err and "missing.txt" not in err


@pytest.mark.parametrize(
    ("argv", "stdin", "said"),
    [
        (
            (),
            b"ab\xffcd",
            "standard input is not valid UTF-8: byte 0xff at offset 2 cannot be decoded (convert the text to UTF-8 "
            "first, e.g. with iconv)",
        ),
        (
            ("--text", b"caf\xe9"),
            b"",
            "--text is not valid UTF-8: character 3 is a lone surrogate (U+DCE9, an undecodable byte 0xe9 from the "
            "command line)",
        ),
    ],
    ids=["stdin", "argument"],
)
def test_encode_refuses_invalid_utf8_in_one_line_and_exit_2_instead_of_replacing_it(argv, stdin, said):
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "encode", "--tokenizer", "gpt2", *argv],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    assert proc.returncode == 2 and proc.stdout == b""
    assert proc.stderr.decode().splitlines() == [f"python -m explorer: error: {said}"]


def test_encode_reads_valid_utf8_from_stdin_as_bytes_whatever_the_locale():
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "encode", "--tokenizer", "gpt2"],
        input="héllo 世界".encode(),
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "LC_ALL": "C"},
    )
    assert proc.returncode == 0, proc.stderr
    # the same ids as the text given in this process (under the C locale, stdin read as text
    # would have been ASCII with escapes)
    assert json.loads(proc.stdout)["ids"] == load_pretrained("gpt2").encode("héllo 世界")
