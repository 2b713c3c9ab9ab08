"""The CLI contract for training over several languages: ``train FILE ... --balance B --dev DEV
...`` writes trace.json with the language each merge served and every language's counts, and
every fault the user can fix exits 2 with one line."""

from __future__ import annotations

import json

import pytest
from test_cli import run

from explorer.formats.parallel import udhr_split
from explorer.formats.trace import load_tokenizer

CODES = ("en", "hi", "zh_hans")


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """{code: {"train": path, "dev": path, "test": path}} for three UDHR languages."""
    folder = tmp_path_factory.mktemp("udhr")
    out = {}
    for code in CODES:
        split = udhr_split(code)
        out[code] = {}
        for part in ("train", "dev", "test"):
            path = folder / f"{code}.{part}.txt"
            path.write_text(getattr(split, part), encoding="utf-8")
            out[code][part] = str(path)
    return out


def _train(parts, out, *extra):
    files = [parts[c]["train"] for c in CODES]
    dev = [parts[c]["dev"] for c in CODES]
    return run("train", *files, "--preset", "gpt2", "--merges", "300", "--dev", *dev, "--out", str(out), *extra)


def _trace(folder) -> dict:
    return json.loads((folder / "trace.json").read_text(encoding="utf-8"))


def test_a_parity_run_records_whom_each_merge_served_and_every_languages_counts(parts, tmp_path):
    code, out, err = _train(parts, tmp_path, "--balance", "parity")
    assert code == 0, err
    trace = _trace(tmp_path)
    files = [parts[c]["train"] for c in CODES]
    balance = trace["balance"]
    assert balance["mode"] == "parity" and balance["languages"] == files
    assert len(trace["merges"]) == 300 and trace["stop_reason"] == "num_merges"
    tok = load_tokenizer(tmp_path)  # the file is an ordinary trace: it loads and encodes
    dev_texts = [open(parts[c]["dev"], encoding="utf-8").read() for c in CODES]
    assert balance["initial_dev_tokens"] == [len(t.encode("utf-8")) for t in dev_texts]
    last = trace["merges"][-1]
    assert last["dev_tokens"] == [len(tok.encode(t)) for t in dev_texts]
    assert set(last) >= {"step", "left", "right", "token", "id", "count", "tokens_after", "language", "rule"}
    assert trace["initial_tokens"] - sum(m["replaced"] for m in trace["merges"]) == last["tokens_after"]
    assert last["tokens_after"] == sum(last["train_tokens"])
    served = {m["language"] for m in trace["merges"]}
    assert served == set(files)  # each language got merges, none was chosen globally
    # the worst-compressed language before each merge is the one served, unless the rule says why not
    before = balance["initial_dev_tokens"]
    for m in trace["merges"]:
        worst = files[max(range(len(files)), key=lambda i: (before[i], -i))]
        assert m["rule"] != "worst" or m["language"] == worst, m
        before = m["dev_tokens"]
    for name in CODES:
        assert f"{parts[name]['train']}: " in out


def test_hybrid_makes_its_global_merges_first(parts, tmp_path):
    code, _, err = _train(parts, tmp_path, "--balance", "parity-hybrid", "--global-merges", "50")
    assert code == 0, err
    merges = _trace(tmp_path)["merges"]
    assert {(m["language"], m["rule"]) for m in merges[:50]} == {(None, "global")}
    assert all(m["language"] is not None for m in merges[50:])


def test_classical_with_development_texts_serves_no_language_but_keeps_the_counts(parts, tmp_path):
    code, _, err = _train(parts, tmp_path, "--balance", "classical")
    assert code == 0, err
    trace = _trace(tmp_path)
    assert {m["language"] for m in trace["merges"]} == {None}
    assert len(trace["merges"][0]["dev_tokens"]) == 3
    # the same merges as training on the files joined, without --dev (today's trace, no "balance")
    plain = tmp_path / "plain"
    files = [parts[c]["train"] for c in CODES]
    code, _, err = run("train", *files, "--preset", "gpt2", "--merges", "300", "--out", str(plain))
    assert code == 0, err
    assert "balance" not in _trace(plain)
    assert [m["token"] for m in _trace(plain)["merges"]] == [m["token"] for m in trace["merges"]]


def test_parity_on_held_out_text_is_fairer_by_the_evaluate_command(parts, tmp_path):
    """The two commands together, as a class would use them: train both ways, evaluate both on
    the test articles, compare the Gini coefficients the last line prints."""
    gini = {}
    for balance in ("classical", "parity"):
        folder = tmp_path / balance
        code, _, err = _train(parts, folder, "--balance", balance)
        assert code == 0, err
        code, out, err = run("evaluate", "--tokenizer", str(folder), *[parts[c]["test"] for c in CODES])
        assert code == 0, err
        summary = json.loads(out.strip().split("\n")[-1])
        assert summary["files"] == 3
        gini[balance] = summary["gini"]
    assert gini["parity"] < gini["classical"], gini


@pytest.mark.parametrize(
    "extra, dev_count, message",
    [
        (("--balance", "parity"), 0, "--balance parity needs --dev: one development text per training file"),
        (("--balance", "parity-window"), 2, "3 training files but 2 development files: give one --dev file per"),
        (
            ("--balance", "parity", "--global-merges", "5"),
            3,
            "--global-merges is used only with --balance parity-hybrid",
        ),
        (("--balance", "parity-hybrid"), 3, "the parity-hybrid balance needs at least 1 global merge"),
        (("--balance", "parity", "--window", "9"), 3, "--window is used only with --balance parity-window"),
        (("--balance", "parity-window", "--window-alpha", "0.5"), 3, "the window's alpha must be at least 1"),
        (("--balance", "parity-window", "--window", "0"), 3, "the window must hold at least 1 merge"),
        (("--balance", "fair"), 3, "argument --balance: invalid choice: 'fair'"),
    ],
)
def test_faults_exit_2_with_one_line(parts, tmp_path, extra, dev_count, message):
    files = [parts[c]["train"] for c in CODES]
    dev = [parts[c]["dev"] for c in CODES][:dev_count]
    argv = ["train", *files, "--preset", "gpt2", "--merges", "10", "--out", str(tmp_path / "out"), *extra]
    if dev:
        argv += ["--dev", *dev]
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("which", ["train", "dev"])
def test_an_empty_language_exits_2_naming_its_file(parts, tmp_path, which):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n", encoding="utf-8")
    files = [parts[c]["train"] for c in CODES]
    dev = [parts[c]["dev"] for c in CODES]
    (files if which == "train" else dev)[1] = str(empty)
    code, _, err = run(
        "train", *files, "--preset", "gpt2", "--merges", "10", "--balance", "parity", "--dev", *dev,
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    # a language is named by its training file
    expected = (
        f"{empty}: the training text is empty" if which == "train" else f"{files[1]}: the development text is empty"
    )
    assert code == 2 and err.count("\n") == 1 and expected in err, err
