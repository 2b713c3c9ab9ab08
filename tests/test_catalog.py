"""The session's tokenizer catalog (``explorer.ui.catalog``) with AppTest: every key names one
tokenizer, which comes back under the same key (key -> tokenizer -> key), and is the tokenizer
the engine makes; links that name imported tokenizers by the hash of their files, as links did
before the catalog, still open them."""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import ROOT, compare_chart, encode_view, read_sample, unescaped
from streamlit.testing.v1 import AppTest
from test_links import engine, open_link  # the engine's trainer; a new session opened on a link

from explorer import load_pretrained
from explorer.formats.exporters import export_files, zip_files
from explorer.serving.store import default_store
from explorer.ui import catalog
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
PLAYGROUND, COMPARE = "pages/3_Playground.py", "pages/4_Compare.py"
CORPUS = "udhr_en.txt"
TIMEOUT = 120
TEXT = "Everyone has the right to life, liberty and security of person. 1948!"
STEPS = 12


def _probe() -> None:
    """A page that trains the session's tokenizer, imports files and reads the catalog: each key
    asked for (``probe_keys``) -> its entry and label, kept in the session for the test."""
    import streamlit as st

    from explorer.ui import catalog, state

    state.keep_widget_state()
    live = state.live()
    live.forward(st.session_state["probe_steps"] - live.view)
    if "probe_files" in st.session_state and not catalog.imported():
        catalog.add_import(st.session_state["probe_files"], name="mine")
    keys = [*st.session_state["probe_keys"], *catalog.imported()]
    st.session_state["probe_entries"] = {key: catalog.get(key) for key in keys}
    st.session_state["probe_labels"] = {key: catalog.label(key) for key in keys}


def probe(keys: list[str], files: dict[str, bytes] | None = None) -> AppTest:
    at = AppTest.from_function(_probe, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.session_state["probe_steps"] = STEPS
    at.session_state["probe_keys"] = keys
    if files is not None:
        at.session_state["probe_files"] = files
    at.run()
    assert not at.exception, at.exception
    return at


def test_every_key_names_the_engines_tokenizer_and_comes_back_as_itself():
    files = export_files(engine(STEPS).tokenizer(STEPS), "hf")
    at = probe(["trained@0", "trained@5", f"trained@{STEPS}", "gpt2", "cl100k_base", "o200k_base"], files)
    entries, labels = at.session_state["probe_entries"], at.session_state["probe_labels"]
    (imported,) = [k for k in entries if k.startswith("imported:")]
    assert imported == "imported:" + hashlib.sha256(files["tokenizer.json"]).hexdigest()  # the files' hash
    ref = engine(STEPS)
    for key, entry in entries.items():
        assert entry is not None and entry.key == key and catalog.key_of(catalog.parse(entry.key)) == key
        kind = catalog.parse(key).kind
        assert entry.kind == kind
        if kind == "trained":
            k = catalog.parse(key).k
            assert entry.tokenizer.merges == ref.tokenizer(k).merges and entry.trainer is not None
            assert labels[key] == entry.label == f"trained, as of merge {k:,} of {STEPS}"
            assert entry.short == f"trained (merge {k:,})"
        elif kind == "bundled":
            assert entry.tokenizer.encode(TEXT) == load_pretrained(key).encode(TEXT)
            assert labels[key] == entry.label == key
        else:
            assert entry.tokenizer.merges == ref.tokenizer(STEPS).merges and entry.tokenizer.encode(TEXT) == (
                ref.tokenizer(STEPS).encode(TEXT)
            )
            assert labels[key] == entry.label == "imported: mine (hf)"


def test_the_trainer_without_a_merge_is_the_one_shown_and_a_key_past_it_names_nothing():
    at = probe(["trained", f"trained@{STEPS + 1}", "gpt9", "imported:" + "ab" * 32])
    entries, labels = at.session_state["probe_entries"], at.session_state["probe_labels"]
    assert entries["trained"].key == f"trained@{STEPS}" and labels["trained"] == "trained in this session"
    assert entries[f"trained@{STEPS + 1}"] is None  # not trained yet
    assert entries["gpt9"] is None and entries["imported:" + "ab" * 32] is None  # no key; not imported here


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("gpt9", "'gpt9' is no tokenizer this app knows"),
        ("imported:../etc/passwd", "names no tokenizer"),
        ("imported:" + "ab" * 32 + ":klingon", "names no tokenizer"),  # no such pre-tokenizer
    ],
)
def test_a_key_that_names_no_tokenizer_is_refused_with_a_sentence(key, message):
    from explorer.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        catalog.restore(key)


# ---- links -----------------------------------------------------------------------------------
def stored(files: dict[str, bytes], label: str) -> str:
    """Files kept in the store as the Playground's import kept them before the catalog (one file
    as it is, several as a zip), as another browser's session: their SHA-256."""
    name, data = next(iter(files.items())) if len(files) == 1 else (f"{label}.zip", zip_files(files))
    return default_store().put(data, kind="tokenizer", name=name, meta={"label": label}, owner="s:" + "0" * 32)


def test_an_old_playground_link_naming_imports_by_their_files_hash_still_opens_them():
    tok = engine(STEPS).tokenizer(STEPS)
    one = stored(export_files(tok, "hf"), "old")
    two = stored(export_files(tok, "gpt2"), "pair")  # vocab.json + merges.txt: the link names the pre-tokenizer
    keys = f"gpt2,imported:{one},imported:{two}:gpt2"
    at = open_link(PLAYGROUND, {"tokenizers": keys, "text": TEXT})
    assert not at.warning, [w.value for w in at.warning]
    ids = {panel.label: panel.ids for panel in encode_view(at)}
    assert ids["imported: old (hf)"] == ids["imported: pair (gpt2)"] == tok.encode(TEXT)
    assert ids["gpt2"] == load_pretrained("gpt2").encode(TEXT)
    assert dict(at.query_params)["tokenizers"] == keys  # written back as the same keys


def test_a_playground_link_may_name_the_trained_tokenizer_at_a_merge():
    at = open_link(PLAYGROUND, {"corpus": CORPUS, "step": "20", "tokenizers": "trained@7", "text": TEXT})
    assert not at.warning, [w.value for w in at.warning]
    assert at.slider(key="w_play_k").value == 7
    params = dict(at.query_params)
    assert params["tokenizers"] == "trained" and params["k"] == "7"
    ids = {panel.label: panel.ids for panel in encode_view(at)}
    assert ids["trained, as of merge 7 of 20"] == engine(20).tokenizer(7).encode(TEXT)


def compare_link_for_all(key: str) -> tuple[AppTest, float]:
    """A Compare link naming ``key`` as the one tokenizer for English and Korean: the session it
    opens (no warning, the picker and the link on ``key``) and the bytes per token its chart
    gives English."""
    at = open_link(COMPARE, {"compare": "udhr_en.txt,udhr_ko.txt", "compare_tokenizer": key})
    assert not at.warning, [unescaped(w.value) for w in at.warning]
    whole, _, k = key.partition("@")
    assert at.selectbox(key="w_cmp_pretrained").value == whole  # the picker holds it whole...
    assert at.number_input(key="w_cmp_at").value == (int(k) if k else None)  # ...and the box beside it its k
    assert dict(at.query_params)["compare_tokenizer"] == key
    cross = compare_chart(at, "bytes per token")
    return at, cross[cross["encoded"] == "udhr_en.txt"]["bytes per token"].iloc[0]


def test_an_old_compare_link_naming_an_import_still_opens_it():
    tok = engine(STEPS).tokenizer(STEPS)
    key = "imported:" + stored(export_files(tok, "hf"), "old")
    at, english_bpt = compare_link_for_all(key)
    english = read_sample("udhr_en.txt")
    assert english_bpt == pytest.approx(len(english.encode()) / len(tok.encode(english)))
    specs = [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]
    heat = next(s for s in specs if s.get("title") == "bytes per token")
    assert heat["layer"][0]["encoding"]["y"]["title"] == "imported: old (hf) on the corpus"  # its label, not its key
