"""``--tokenizer PATH`` of ``encode``, ``evaluate`` and ``scan``: a tokenizer file of any format the
importers read, or a folder of a model's tokenizer files, opens as the library that wrote it reads
it (HF ``tokenizers``, tiktoken). Files here are written by those libraries, not by us."""

from __future__ import annotations

import base64
import json
from functools import cache

import pytest
import tiktoken
from conftest import SAMPLES, read_sample
from test_cli import run
from tiktoken.load import load_tiktoken_bpe
from tiktoken_ext.openai_public import r50k_pat_str
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HOSTILE = "Hello, wörld! 1234567 naïve café 你好 👩🏽‍💻  tabs\tand\n\nnewlines ἀρχή"
FILES = ("udhr_en.txt", "udhr_ru.txt")


@cache
def hf_trained() -> Tokenizer:
    """A byte-level BPE that HF ``tokenizers`` trains on two UDHR texts (its own tokenizer.json)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([read_sample(name) for name in FILES], trainer)
    return tok


def test_evaluate_a_tokenizer_json_file_counts_the_tokens_hf_gives(tmp_path):
    path = tmp_path / "tokenizer.json"
    hf_trained().save(str(path))
    code, out, err = run("evaluate", "--tokenizer", str(path), *(str(SAMPLES / f) for f in FILES))
    assert code == 0, err
    *rows, last = map(json.loads, out.splitlines())
    expected = [len(hf_trained().encode(read_sample(f)).ids) for f in FILES]
    assert [row["tokens"] for row in rows] == expected
    assert last["parity"][str(SAMPLES / FILES[1])] == pytest.approx(expected[1] / expected[0])


def test_encode_a_folder_of_vocab_and_merges_gives_hf_ids(tmp_path):
    """A folder as a model ships it (no trace.json): vocab.json + merges.txt, read with GPT-2's
    split as the format's own default, the normalizer named for it."""
    hf_trained().model.save(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merges.txt", "vocab.json"]
    code, out, err = run("encode", "--tokenizer", str(tmp_path), "--text", HOSTILE)
    assert code == 0, err
    assert json.loads(out)["ids"] == hf_trained().encode(HOSTILE).ids
    code, out, err = run("encode", "--tokenizer", str(tmp_path), "--normalizer", "nfc", "--text", "cafe\u0301")
    assert code == 0, err
    assert json.loads(out)["ids"] == hf_trained().encode("caf\u00e9").ids


def test_scan_a_rank_file_says_which_tokens_no_merge_makes_as_tiktoken_gives_them(tmp_path):
    """A rank file under Llama's name: "abcde"'s bytes merge by the lower ranks into "ab", "cd",
    "e" (not one merge), and tiktoken gives it for a piece that is it whole; "ab c!" is cut by
    GPT-2's pattern, so tiktoken never gives it."""
    table = [bytes([b]) for b in range(256)]
    table += [b"ab", b"de", b"cd", b"abcd", b"abcde", b"c!", b" c", b"ab c", b"ab c!"]
    path = tmp_path / "tokenizer.model"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(table)))
    code, out, err = run("scan", "--tokenizer", str(path), "--pretokenizer", "gpt2")
    assert code == 0, err
    report = json.loads(out)
    ref = tiktoken.Encoding("t", pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={})
    whole, never = report["not_one_merge"]["whole_piece_only"], report["not_one_merge"]["never"]
    assert (len(whole), len(never)) == (1, 1)
    assert ref.encode_ordinary(table[whole[0]].decode()) == whole
    assert ref.encode_ordinary(table[never[0]].decode()) != never and never[0] in report["unreachable"]
    # the scan's count of tokens: every rank, as tiktoken counts them
    assert report["tokens"] == ref.n_vocab


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tokenizer", "gpt2", "--pretokenizer", "gpt2"], "--pretokenizer is used only with tokenizer files"),
        (["--tokenizer", "{tmp}/model.tiktoken"], "pre-tokenizer"),
        (["--tokenizer", "{tmp}/empty"], "no trace.json found"),
    ],
)
def test_a_path_that_cannot_be_read_is_one_line(tmp_path, args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "model.tiktoken").write_text(
        "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256))
    )
    code, out, err = run("encode", *[a.format(tmp=tmp_path) for a in args], "--text", "x")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err
