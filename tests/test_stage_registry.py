"""A regex pre-tokenizer is one registry entry: registered at run time (a fixture, undone after
each test), it is a CLI choice, a choice of the Train page's settings, a name trace.json keeps,
and a Split in the HF export that HF's own tokenizer encodes with as we do. The config's
Literal names and the registries agree."""

from __future__ import annotations

import io
import json
from typing import get_args

import pytest
from conftest import ROOT, SAMPLE_FILES, open_advanced, read_sample
from streamlit.testing.v1 import AppTest

from explorer import make_config, train
from explorer.bpe import config as cfg
from explorer.cli import main
from explorer.errors import ConfigError
from explorer.formats.exporters import export_files
from explorer.formats.importers import import_files
from explorer.formats.trace import load_tokenizer, write_trace
from explorer.stages.markers import MARKERS
from explorer.stages.normalizers import NORMALIZERS
from explorer.stages.pretokenizers import (
    PATTERNS,
    PATTERNS_COMPILED,
    PRETOKENIZER_REGISTRY,
    PRETOKENIZERS,
    SEQUENCE_MODES,
    TIKTOKEN_PATTERNS,
    RegexSplit,
    builtin_pieces,
    hf_split,
)
from explorer.stages.units import UNITS
from explorer.ui import settings  # noqa: F401 - imported before any entry is registered, as in a running app
from explorer.ui.state import CorpusChoice

NAME = "digits-apart"
# GPT-2's regex, but every digit is a piece of its own (as LLaMA's tokenizer cuts numbers)
PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
TEXT = "In 1948, 48 states signed; it's Zoë's 2024 copy.\n\tÜber 12 Straßen!\n"


@pytest.fixture
def digits_apart(monkeypatch):
    """The whole of adding a regex pre-tokenizer: one entry in the registry."""
    monkeypatch.setitem(PRETOKENIZER_REGISTRY, NAME, RegexSplit("GPT-2's regex with every digit apart", PATTERN))
    return NAME


def config(**overrides):
    return make_config("gpt2", pretokenizer=NAME, alphabet="full-bytes", num_merges=40, vocab_size=None, **overrides)


def trained():
    return train(read_sample("udhr_en.txt"), config())


def run_cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out=out, err=err), err.getvalue()


def test_the_entry_is_in_every_map_of_the_registry_while_registered_and_gone_after(monkeypatch):
    with monkeypatch.context() as m:
        m.setitem(PRETOKENIZER_REGISTRY, NAME, RegexSplit("digits apart", PATTERN))
        assert PRETOKENIZERS[NAME] == "digits apart"
        assert PATTERNS[NAME] == TIKTOKEN_PATTERNS[NAME] == PATTERN
        assert PATTERNS_COMPILED[NAME].pattern == PATTERN
        assert list(PRETOKENIZERS)[-1] == NAME  # after the built-in ones, which keep their order
    assert NAME not in PRETOKENIZERS and NAME not in PATTERNS and NAME not in TIKTOKEN_PATTERNS
    with pytest.raises(ConfigError, match="unknown pretokenizer 'digits-apart'"):
        config()


def test_its_fast_path_cuts_every_sample_as_its_pattern_does(digits_apart):
    stage = PRETOKENIZER_REGISTRY[digits_apart]
    assert stage.fast is not None and stage.stretches  # derived from the pattern, not written
    assert builtin_pieces("Hi 2024, Zoë!", digits_apart) == ["Hi", " ", "2", "0", "2", "4", ",", " Zoë", "!"]
    for sample in SAMPLE_FILES:
        text = read_sample(sample)
        assert builtin_pieces(text, digits_apart) == PATTERNS_COMPILED[digits_apart].findall(text), sample


def test_it_is_a_choice_of_the_cli_and_training_with_it_writes_its_name_in_trace_json(digits_apart, tmp_path):
    code, err = run_cli(
        "train", str(ROOT / "sample_corpora" / "udhr_en.txt"), "--preset", "gpt2", "--pretokenizer", digits_apart,
        "--full-byte-alphabet", "--merges", "40", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err
    saved = json.loads((tmp_path / "trace.json").read_text(encoding="utf-8"))
    assert saved["config"]["pretokenizer"] == digits_apart
    assert load_tokenizer(tmp_path).encode(TEXT) == trained().tokenizer().encode(TEXT)
    code, err = run_cli("import", str(tmp_path / "trace.json"), "--pretokenizer", digits_apart, "--out", str(tmp_path))
    assert code == 0, err


def test_trace_json_keeps_the_name_and_loads_back_encoding_the_same(digits_apart, tmp_path):
    tok = trained().tokenizer()
    assert tok.tokens(tok.encode("Year 2024"))[-4:] == ["2", "0", "2", "4"]
    path = write_trace(trained(), tmp_path)
    assert json.loads(path.read_text(encoding="utf-8"))["config"]["pretokenizer"] == digits_apart
    again = load_tokenizer(path)
    assert again.config.pretokenizer == digits_apart and again.encode(TEXT) == tok.encode(TEXT)


def test_the_hf_export_holds_its_regex_in_a_split_and_hf_encodes_as_we_do(digits_apart):
    tok = trained().tokenizer()
    tokenizer_json = export_files(tok, "hf")["tokenizer.json"]
    pre = json.loads(tokenizer_json)["pre_tokenizer"]
    assert pre["type"] == "Sequence" and pre["pretokenizers"][0] == hf_split(PATTERN)
    assert pre["pretokenizers"][1]["type"] == "ByteLevel" and not pre["pretokenizers"][1]["use_regex"]
    back = import_files({"tokenizer.json": tokenizer_json})
    assert back.config.pretokenizer == digits_apart and back.encode(TEXT) == tok.encode(TEXT)
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    for sample in ("udhr_en.txt", "udhr_ru.txt", "udhr_hi.txt", "mixed_emoji_multilingual.txt"):
        text = read_sample(sample)[:4000]
        assert hf.encode(text).ids == tok.encode(text), sample


def test_tiktoken_and_minbpe_exports_carry_its_pattern(digits_apart):
    tok = train(
        read_sample("udhr_en.txt"), config(alphabet_order="byte", reuse_ids=False, special_tokens=())
    ).tokenizer()
    assert json.loads(export_files(tok, "tiktoken")["tokenizer.json"])["pat_str"] == PATTERN
    model = export_files(tok, "minbpe")["tokenizer.model"]
    assert (model if isinstance(model, str) else model.decode()).split("\n")[1] == PATTERN


def test_it_is_a_choice_of_the_train_pages_settings_and_training_uses_it(digits_apart):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=("udhr_en.txt",))
    at.run()
    at.switch_page("pages/2_Train.py").run()
    open_advanced(at)
    picker = at.selectbox(key="w_cfg_pretokenizer")
    assert digits_apart in picker.options
    picker.set_value(digits_apart)
    at.button(key="FormSubmitter:w_advanced_form-Apply and restart training").click().run()
    assert not at.exception and not at.error
    at.button(key="step10").click().run()
    assert at.session_state["config"].pretokenizer == digits_apart


@pytest.mark.parametrize(
    "alias, names",
    [
        (cfg.NormalizerName, NORMALIZERS),
        (cfg.SequencesName, SEQUENCE_MODES),
        (cfg.UnitName, UNITS),
        (cfg.MarkerName, MARKERS),
        (cfg.AlphabetName, cfg.ALPHABETS),
        (cfg.AlphabetOrderName, cfg.ALPHABET_ORDERS),
        (cfg.TieBreakName, cfg.TIE_BREAKS),
        (cfg.SpecialsInTextName, cfg.SPECIALS_IN_TEXT),
        (cfg.DropoutStyleName, cfg.DROPOUT_STYLES),
    ],
)
def test_the_configs_literal_names_are_the_names_its_check_accepts(alias, names):
    assert get_args(alias) == tuple(names)
