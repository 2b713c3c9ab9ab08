"""PickyBPE (``train --picky TAU``) through the command line and the files: the contract (the
summary line of classical training, then one line of what was removed), its trace.json (every
key of a classical trace plus the removals) loading back as the trainer's tokenizer, a reader
replaying the file's own strings (written here, from the paper: merges and removals in the order
made) getting the same tokens, HF ``tokenizers`` reading what still has a tokenizer.json, the
errors (exit 2, one line), and every format of merges alone refusing a tokenizer that removed
tokens, in the CLI and on the Train page's download."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import regex
from conftest import SAMPLES, merge_everywhere, read_sample, unescaped
from test_cli import run

from explorer import FormatError, corpus_config, train
from explorer.formats.exporters import EXPORT_FORMATS, export_files, export_problem
from explorer.formats.importers import import_files
from explorer.formats.trace import load_tokenizer, tokenizer_from_trace, trace_dict, trace_from_tokenizer

CORPUS = "english_frankenstein.txt"
HELD_OUT = "udhr_en.txt"
MERGES = 400
TAU = 0.3
# the first line of classical training's summary, which PickyBPE keeps as it is
SUMMARY = re.compile(r"^[\d,]+ merges, vocab [\d,]+, stopped: \w+; tokens [\d,]+ -> [\d,]+; wrote \S+trace\.json$")
GPT2_PIECES = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""  # DESIGN's pinned pattern
)


def _gpt2_chars() -> dict[int, str]:
    """GPT-2's byte -> character table, as its encoder.py defines it: printable bytes stand for
    themselves, the other 68, in byte order, for chr(256 + n)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    for n, b in enumerate(b for b in range(256) if b not in table):
        table[b] = chr(256 + n)
    return table


def _cli_train(out: Path, *extra: str) -> tuple[str, dict]:
    code, stdout, err = run(
        "train", str(SAMPLES / CORPUS), "--preset", "gpt2", "--merges", str(MERGES), *extra, "--out", str(out)
    )
    assert code == 0, err
    return stdout, json.loads((out / "trace.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def picky_run(tmp_path_factory):
    """The CLI's PickyBPE training (its output, trace and folder) and the same in-process."""
    out = tmp_path_factory.mktemp("picky")
    stdout, trace = _cli_train(out, "--picky", str(TAU))
    ours = train(read_sample(CORPUS), corpus_config("gpt2", merges=MERGES, picky=TAU))
    assert ours.removals  # the budget and τ remove tokens: what this file checks
    return stdout, trace, out, ours


# ---- the contract --------------------------------------------------------------------------------
def test_picky_training_prints_the_classical_summary_then_what_it_removed(picky_run):
    stdout, _, out, ours = picky_run
    first, second = stdout.splitlines()
    assert SUMMARY.match(first) and first.endswith(f"wrote {out / 'trace.json'}")
    assert first.startswith(f"{MERGES} merges, vocab {len(ours.vocab)}, stopped: num_merges; ")
    gone = len(ours.tokenizer().vocab.removed)
    assert second == (
        f"PickyBPE τ {TAU:g} (IoS threshold T {1 / (1 + TAU):.3g}): {gone} tokens removed "
        f"({len(ours.removals)} removals), vocab {len(ours.vocab) - gone} live"
    )


def test_a_picky_trace_keeps_every_classical_key_and_adds_the_removals(picky_run, tmp_path):
    _, trace, _, ours = picky_run
    _, classical = _cli_train(tmp_path)
    assert set(trace) == set(classical) | {"removals"}
    assert trace["training"] == {**classical["training"], "picky": TAU}
    assert trace["config"] == {**classical["config"], "picky": TAU}
    assert trace["removals"] == [list(r) for r in ours.removals]
    assert [(m["left_id"], m["right_id"]) for m in trace["merges"]] == ours.merges
    for m, r in zip(trace["merges"], ours.records):
        assert set(m) - {"removals"} == set(classical["merges"][0])
        expected = [
            {
                "id": rm.token_id,
                "token": rm.token,
                "parts": list(rm.parts),
                "part_tokens": list(rm.part_tokens),
                "alone": rm.alone,
                "inside": rm.inside,
                "tokens_after": rm.tokens_after,
                "words_affected": rm.words_affected,
            }
            for rm in r.removals
        ]
        assert m.get("removals", []) == expected
        assert "removals" in m or not r.removals  # a merge without removals keeps its keys


def test_a_trace_that_removed_nothing_is_the_classical_trace_with_tau_in_its_config(tmp_path):
    _, classical = _cli_train(tmp_path / "classical")
    _, zero = _cli_train(tmp_path / "zero", "--picky", "0")
    assert zero["training"].pop("picky") == 0 and zero["config"].pop("picky") == 0
    assert zero == classical  # no "removals" anywhere: the file is the classical one


def test_the_trace_loads_as_the_trainers_tokenizer_and_encodes_held_out_text_alike(picky_run):
    _, _, out, ours = picky_run
    held_out = read_sample(HELD_OUT)
    expected = ours.tokenizer().encode(held_out)
    loaded = load_tokenizer(out)
    assert loaded.vocab.removals == tuple(ours.removals)
    assert loaded.encode(held_out) == expected
    assert set(expected) & ours.tokenizer().vocab.removed == set()
    again = tokenizer_from_trace(json.loads(json.dumps(trace_from_tokenizer(loaded))))
    assert again.vocab.removals == loaded.vocab.removals and again.encode(held_out) == expected
    in_process = tokenizer_from_trace(json.loads(json.dumps(trace_dict(ours))))
    assert in_process.encode(held_out) == expected
    truncated = tokenizer_from_trace(json.loads(json.dumps(trace_dict(ours, steps=200))))
    assert truncated.encode(held_out) == ours.tokenizer(200).encode(held_out)


def test_a_reader_replaying_the_files_strings_gets_the_loaded_tokenizers_tokens(picky_run):
    """The merges' "left"/"right"/"token" and the removals' "token"/"part_tokens", replayed in
    the file's order on each held-out piece (every occurrence of a pair merged left to right,
    every occurrence of a removed token split), are all a reader needs."""
    _, trace, out, _ = picky_run
    events: list[tuple[str, str, tuple[str, ...]]] = []  # ("merge", token, (left, right)) | ("split", token, parts)
    for m in trace["merges"]:
        events.append(("merge", m["token"], (m["left"], m["right"])))
        events += [("split", r["token"], tuple(r["part_tokens"])) for r in m.get("removals", [])]
    assert sum(kind == "split" for kind, _, _ in events) == len(trace["removals"])
    table, alphabet = _gpt2_chars(), set(trace["alphabet"])
    loaded = load_tokenizer(out)
    checked = 0
    for piece in sorted(set(regex.findall(GPT2_PIECES, read_sample(HELD_OUT)[:6000]))):
        seg = [table[b] for b in piece.encode("utf-8")]
        if not set(seg) <= alphabet:
            continue
        for kind, token, parts in events:
            seg = (
                list(merge_everywhere(seg, *parts, token)[0])
                if kind == "merge"
                else [p for t in seg for p in (parts if t == token else [t])]
            )
        assert loaded.tokens(loaded.encode(piece)) == seg, piece
        checked += 1
    assert checked > 300


# ---- errors --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, message",
    [
        (["--picky", "-0.5"], "argument --picky: τ is from 0 (classical BPE) to 1,000, not -0.5"),
        (["--picky", "nan"], "argument --picky: τ is from 0 (classical BPE) to 1,000, not nan"),
        (["--picky", "1001"], "argument --picky: τ is from 0 (classical BPE) to 1,000, not 1001"),
        (["--picky", "lots"], "argument --picky: τ must be a number (e.g. 0.11, the paper's T = 0.9), not 'lots'"),
        (["--picky"], "argument --picky: expected one argument"),
        (["--picky", "0.1", "--superbpe-transition", "50"], "--picky and --superbpe-transition cannot be combined"),
        (["--picky", "0.1", "--balance", "parity"], "--picky cannot be combined with --balance or --dev"),
        (["--picky", "0.1", "--dev", str(SAMPLES / HELD_OUT)], "--picky cannot be combined with --balance or --dev"),
    ],
)
def test_bad_picky_values_exit_2_with_one_line_naming_the_fault(tmp_path, argv, message):
    out = tmp_path / "out"
    code, stdout, err = run(
        "train", str(SAMPLES / CORPUS), "--preset", "gpt2", "--merges", "20", *argv, "--out", str(out)
    )
    assert (code, stdout) == (2, "") and err.count("\n") == 1 and message in err, err
    assert not out.exists()  # refused before the output folder is made


def _broken(trace: dict, change) -> dict:
    data = json.loads(json.dumps(trace))
    change(data)
    return data


def _first_with_removals(data: dict) -> dict:
    return next(m for m in data["merges"] if "removals" in m)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d.update(removals="all"), "the trace's 'removals' must be a list of [after merge, id] pairs"),
        (lambda d: d["removals"].insert(0, [5]), "pairs of integers; item 0 is [5]"),
        (lambda d: d["removals"].__setitem__(0, [1, True]), "item 0 is [1, True]"),
        (lambda d: d["removals"].__setitem__(0, [MERGES + 1, d["removals"][0][1]]), "comes after merge"),
        (lambda d: d["removals"].__setitem__(0, [d["removals"][0][0], 65]), "removes id 65, which is not a merged"),
        (lambda d: d["removals"].pop(0), "'removals' name ids"),
        (lambda d: _first_with_removals(d)["removals"][0].update(parts=[1, 2]), "says parts [1, 2] but derives"),
        (lambda d: _first_with_removals(d).update(removals={}), "'removals' must be a list of objects"),
    ],
)
def test_a_malformed_removals_list_is_a_format_error_naming_it(picky_run, tmp_path, change, message):
    data = _broken(picky_run[1], change)
    with pytest.raises(FormatError, match=re.escape(message)):
        tokenizer_from_trace(data)
    (tmp_path / "trace.json").write_text(json.dumps(data), encoding="utf-8")
    code, _, err = run("encode", "--tokenizer", str(tmp_path), "--text", "a")
    assert code == 2 and err.count("\n") == 1 and message in err, err


# ---- exporters -----------------------------------------------------------------------------------
MERGES_ONLY = [f for f in EXPORT_FORMATS if f != "trace"]


@pytest.mark.parametrize("fmt", MERGES_ONLY)
def test_every_format_of_merges_alone_refuses_a_tokenizer_that_removed_tokens(picky_run, tmp_path, fmt):
    _, trace, out, ours = picky_run
    tok = ours.tokenizer()
    n = len(ours.removals)
    why = (
        f"{EXPORT_FORMATS[fmt].title} holds merges only, and this PickyBPE tokenizer also removes tokens after "
        f"their merges ({n} removals): its merges alone would encode differently; export BPE Explorer's trace.json instead"
    )
    with pytest.raises(FormatError) as err:
        export_files(tok, fmt, trace=trace)
    assert str(err.value) == why and export_problem(tok, fmt) == why
    code, stdout, err_text = run("export", str(out), "--format", fmt, "--out", str(tmp_path / "x"))
    assert (code, stdout, err_text) == (2, "", f"python -m explorer: error: {why}\n")
    assert not (tmp_path / "x").exists()
    # before the first removal the tokenizer is plain BPE: no refusal on that account
    first = ours.removals[0][0]
    assert "PickyBPE" not in (export_problem(ours.tokenizer(first - 1), fmt) or "")


def test_the_trace_export_keeps_the_removals_and_imports_back(picky_run, tmp_path):
    _, trace, out, ours = picky_run
    code, _, err = run("export", str(out), "--format", "trace", "--out", str(tmp_path / "again.json"))
    assert code == 0, err
    assert json.loads((tmp_path / "again.json").read_text(encoding="utf-8")) == trace
    tok = ours.tokenizer()
    assert export_problem(tok, "trace") is None
    imported = import_files(export_files(tok, "trace"))
    held_out = read_sample(HELD_OUT)
    assert imported.vocab.removals == tok.vocab.removals and imported.encode(held_out) == tok.encode(held_out)


def test_picky_training_that_removed_nothing_exports_a_tokenizer_json_hf_reads_alike(tmp_path):
    from tokenizers import Tokenizer as HFTokenizer

    _cli_train(tmp_path, "--picky", "0")
    code, _, err = run("export", str(tmp_path), "--format", "hf", "--out", str(tmp_path / "tokenizer.json"))
    assert code == 0, err
    hf = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path)
    held_out = read_sample(HELD_OUT)
    assert hf.encode(held_out).ids == ours.encode(held_out)


def test_the_train_pages_download_of_a_picky_tokenizer_shows_why_instead_of_a_button(picky_run, monkeypatch):
    """The Train page trains no PickyBPE yet: its export is handed the PickyBPE tokenizer."""
    from test_interop_pages import train_page

    from explorer.ui import interop_view

    tok = picky_run[3].tokenizer()
    real = interop_view.export_files
    monkeypatch.setattr(interop_view, "export_files", lambda _tok, fmt, *, trace=None: real(tok, fmt, trace=trace))
    at = train_page(10)
    at.selectbox(key="w_dl_format").set_value("gpt2").run()
    assert not at.exception, at.exception
    assert not at.download_button
    assert [unescaped(i.value) for i in at.info if "PickyBPE" in i.value] == [
        f"This format cannot hold this tokenizer: {export_problem(tok, 'gpt2')}."
    ]


def test_the_scan_of_a_picky_tokenizer_says_its_removed_tokens_apart(picky_run):
    """Removed tokens are no longer in the vocabulary: neither scanned nor called unreachable,
    but listed as removed; the other tokens are checked as any tokenizer's."""
    _, _, out, ours = picky_run
    code, stdout, err = run("scan", "--tokenizer", str(out))
    assert code == 0, err
    report = json.loads(stdout)
    removed = sorted(ours.tokenizer().vocab.removed)
    assert report["removed"] == removed and list(report)[:5] == [
        "tokens",
        "unreachable",
        "partial_utf8",
        "unused",
        "removed",
    ]
    assert report["tokens"] == ours.tokenizer().vocab.n_live - len(ours.config.special_tokens)
    assert not set(report["unreachable"]) & set(removed)
    tok = ours.tokenizer()
    # the ids still scanned: each reachable unless its own text encodes otherwise
    for i in report["unreachable"]:
        assert tok.encode_bytes(tok.token_bytes(i)) != [i]
