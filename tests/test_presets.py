"""One preset name is one tokenizer: ``python -m explorer train --preset P`` (a process of its
own, as outside checks run it) and the Train page's preset give the same configuration, encoding
options, alphabet, vocabulary and merges for the same corpus and size request; a seed notebook's
replay likewise (``train --replay SEED`` and the Train page's *Replay*), with the notebook's own
settings on both sides."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLES, open_advanced
from streamlit.testing.v1 import AppTest
from test_cli import run

from explorer import PRESETS, SEED_REPLAYS
from explorer.formats.trace import trace_dict
from explorer.ui.state import RECORDED_PAIRS, CorpusChoice

APP = str(ROOT / "app.py")
APPLY = "FormSubmitter:w_advanced_form-Apply and restart training"
CORPUS = "demo_sentences.txt"  # small enough that the default budget runs out of pairs quickly
# the rows of the pair table each step keeps: a recording option (no training setting), the page's
TOP_K = ["--top-k", str(RECORDED_PAIRS)]
# each preset with a size request as the CLI takes it: none (the budget both sides default to),
# --merges (the Train page's merges box) or --vocab-size (the advanced settings' vocabulary size)
SIZES: dict[str, list[str]] = {
    "hf-course": ["--vocab-size", "150"],
    "sennrich": ["--merges", "40"],
    "bytes": ["--merges", "40"],
    "gpt2": [],
    "suffix-marker": ["--merges", "40"],
    "gpt4": [],
}


@pytest.fixture(scope="module")
def cli_models(tmp_path_factory):
    """preset -> (its ``python -m explorer train`` process, the folder it writes), all started at
    once so that they train while the Train page does."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = {}
    for preset in PRESETS:
        out = tmp_path_factory.mktemp(f"cli-{preset}")
        argv = ["train", str(SAMPLES / CORPUS), "--preset", preset, *SIZES[preset], *TOP_K, "--out", str(out)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "explorer", *argv],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started[preset] = (proc, out)
    yield started
    for proc, _ in started.values():
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def cli_trace(cli_models, preset: str) -> tuple[dict, Path]:
    proc, out = cli_models[preset]
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return read_trace(out), out


@pytest.fixture(scope="module")
def train_page(cli_models):
    """One Train page session on the corpus, going from preset to preset, then from replay to
    replay (each loads its notebook's corpus); opened after the CLI runs started, so that both
    train at once."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.run()
    at.switch_page("pages/2_Train.py").run()
    assert not at.exception
    return at


def trained(at: AppTest) -> dict:
    """Run to the end, then the session's trainer as trace.json writes it."""
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    return trace_dict(at.session_state["live"].trainer)


def read_trace(folder: Path) -> dict:
    return json.loads((folder / "trace.json").read_text(encoding="utf-8"))


def ask_size(at: AppTest, flags: list[str]) -> None:
    """The CLI's size request made on the Train page: the merges box or the advanced settings'
    vocabulary size (no flag: the page's default)."""
    if flags[:1] == ["--merges"]:
        at.number_input(key="w_size").set_value(int(flags[1])).run()
    elif flags[:1] == ["--vocab-size"]:
        open_advanced(at)
        at.radio(key="w_cfg_stop").set_value("vocab size")
        at.number_input(key="w_cfg_amount").set_value(int(flags[1]))
        at.button(key=APPLY).click().run()
    assert not at.exception and not at.error


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_preset_trains_one_tokenizer_in_the_cli_and_on_the_train_page(preset, cli_models, train_page):
    cli, _ = cli_trace(cli_models, preset)
    train_page.selectbox(key="w_preset").set_value(preset).run()
    ask_size(train_page, SIZES[preset])
    app = trained(train_page)
    assert app["merges"] and app["alphabet"]  # a real training on both sides
    if app["config"]["unit"] == "byte":
        assert len(app["alphabet"]) == 256  # every byte: the model can go to tiktoken
    assert app == cli


def test_the_cli_s_gpt2_model_goes_to_tiktoken_and_back_with_its_ids(cli_models, tmp_path):
    _, model = cli_trace(cli_models, "gpt2")
    code, _, err = run("export", str(model), "--format", "tiktoken", "--out", str(tmp_path / "tt"))
    assert code == 0, err
    files = sorted(str(p) for p in (tmp_path / "tt").iterdir())
    assert run("import", *files, "--out", str(tmp_path / "back"))[0] == 0
    text = "Tokenizers cut text into pieces: ünïcode too."
    back = run("encode", "--tokenizer", str(tmp_path / "back"), "--text", text)[1]
    assert back == run("encode", "--tokenizer", str(model), "--text", text)[1]


def test_a_byte_preset_taken_to_characters_is_the_same_in_the_cli_and_the_advanced_settings(train_page, tmp_path):
    code, _, err = run(
        "train",
        str(SAMPLES / CORPUS),
        "--preset",
        "bytes",
        "--unit",
        "char",
        "--merges",
        "30",
        *TOP_K,
        "--out",
        str(tmp_path),
    )
    assert code == 0, err
    train_page.selectbox(key="w_preset").set_value("bytes").run()
    train_page.number_input(key="w_size").set_value(30).run()
    open_advanced(train_page)
    train_page.selectbox(key="w_cfg_unit").set_value("char")
    train_page.button(key=APPLY).click().run()
    app = trained(train_page)
    assert app["config"]["unit"] == "char" and app["config"]["alphabet"] == "present"
    assert app == read_trace(tmp_path)


@pytest.mark.parametrize("seed", list(SEED_REPLAYS))
def test_a_seed_replay_trains_the_notebooks_tokenizer_in_the_cli_and_on_the_train_page(seed, train_page, tmp_path):
    code, _, err = run("train", "--replay", seed, *TOP_K, "--out", str(tmp_path))  # the notebook's own corpus
    assert code == 0, err
    train_page.selectbox(key="w_seed").set_value(seed).run()
    train_page.button(key="replay").click().run()
    app = trained(train_page)
    assert app["config"] == SEED_REPLAYS[seed].config().to_dict()  # the notebook's settings, not the preset's
    assert app == read_trace(tmp_path)


def test_a_replay_on_other_files_keeps_the_notebooks_settings_and_names_no_other_preset(tmp_path):
    corpus = str(SAMPLES / CORPUS)
    code, _, err = run("train", corpus, "--replay", "003", "--merges", "20", "--out", str(tmp_path / "m"))
    assert code == 0, err
    config = read_trace(tmp_path / "m")["config"]
    assert config == SEED_REPLAYS["003"].config(num_merges=20, vocab_size=None).to_dict()
    assert config["alphabet"] == "present" and config["sequences"] == "documents"  # the notebook's, not the preset's
    code, out, err = run("train", corpus, "--replay", "003", "--preset", "sennrich", "--out", str(tmp_path / "x"))
    assert code == 2 and not out and err.count("\n") == 1
    assert "--replay 003 trains the gpt2 preset with its notebook's settings: drop --preset sennrich" in err
    code, _, err = run("train", "--out", str(tmp_path / "y"))
    assert code == 2 and "the following arguments are required: FILE, --preset" in err
