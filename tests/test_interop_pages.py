"""Downloads on the Train page and imports on the Playground and Compare pages, with AppTest: the
bytes a download button hands out are read back from Streamlit's media store and checked against
the engine's own export (and HF ``tokenizers``); an imported tokenizer encodes as its source did."""

from __future__ import annotations

import io
import json
import re
import unicodedata
import zipfile

import pytest
from conftest import ROOT, compare_chart, encode_view, open_importer, read_sample, unescaped, view_slider
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest
from subword_nmt.apply_bpe import BPE

from explorer import Trainer, corpus_config
from explorer.errors import FormatError
from explorer.formats.exporters import EXPORT_FORMATS, export_files, export_problem
from explorer.formats.importers import import_files
from explorer.formats.trace import trace_dict
from explorer.stages.pipeline import count_words
from explorer.ui import interop_view
from explorer.ui.playground_model import Keys
from explorer.ui.render import md_text
from explorer.ui.state import RECORDED_PAIRS, CorpusChoice

APP = str(ROOT / "app.py")
PLAYGROUND = "pages/3_Playground.py"
CORPUS = "udhr_en.txt"
TIMEOUT = 120
SHORT = "Hello, world! Tokenizers don't read words; 12345 ünïcode 你好.\n\tIndented line"
SUBMIT = "FormSubmitter:w_cmp_form-Compare"


# ---- helpers -----------------------------------------------------------------------------------
@pytest.fixture()
def media(monkeypatch):
    """Every file the app hands Streamlit's media store (download buttons' data), by file id."""
    stored: dict[str, tuple[bytes, str, str | None]] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def recording(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        stored[file_id] = (path_or_data, mimetype, filename)
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", recording)
    return stored


def button_file(at: AppTest, media: dict) -> tuple[str, bytes]:
    """(file name, bytes) behind the page's one download button."""
    (button,) = at.download_button
    file_id = re.search(r"/([0-9a-f]+)\.\w+$", button.proto.url).group(1)
    data, _mime, name = media[file_id]
    return name, data


def engine(steps: int, corpus: str = CORPUS) -> Trainer:
    """The session's trainer as the engine computes it (the page's default: gpt2 sized for the
    corpus; a trace says how many pair-table rows each step kept)."""
    config = corpus_config("gpt2")
    trainer = Trainer(count_words((read_sample(corpus),), config), config, top_k=RECORDED_PAIRS)
    trainer.advance(steps)
    return trainer


def train_page(steps: int, *, shown: int | None = None) -> AppTest:
    """A session on the Train page after ``steps`` merges (multiples of 10), its slider moved
    back to ``shown``, the download area open."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.run()
    at.switch_page("pages/2_Train.py").run()
    for _ in range(steps // 10):
        at.button(key="step10").click().run()
    if shown is not None:
        view_slider(at).set_value(shown).run()
    at.session_state["w_dl_open"] = True
    at.run()
    assert not at.exception, at.exception
    return at


def unpack(name: str, data: bytes) -> dict[str, bytes]:
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return {n: z.read(n) for n in z.namelist()}
    return {name: data}


def encode_ids(at: AppTest) -> dict[str, list[int]]:
    """Each tokenizer's ids in the Encode view, by its label."""
    return {panel.label: panel.ids for panel in encode_view(at)}


def playground(*, merges: int = 0) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.run()
    if merges:
        at.switch_page("pages/2_Train.py").run()
        for _ in range(merges // 10):
            at.button(key="step10").click().run()
    at.switch_page(PLAYGROUND).run()
    at.text_area(key="w_play_text").input(SHORT).run()
    assert not at.exception
    return at


def upload(
    at: AppTest,
    files: dict[str, bytes],
    *,
    name: str = "",
    pretokenizer: str | None = None,
    glossaries: str = "",
    normalizer: str | None = None,
) -> AppTest:
    """Files through the Playground's uploader, then Import."""
    (uploader,) = open_importer(at).file_uploader
    uploader.set_value([(n, d, "application/octet-stream") for n, d in files.items()])
    if name:
        at.text_input(key="w_imp_name").input(name)
    if glossaries:
        at.text_input(key="w_imp_gloss").input(glossaries)
    if normalizer:
        at.selectbox(key="w_imp_norm").set_value(normalizer)
    if pretokenizer:
        at.selectbox(key="w_imp_pretok").set_value(pretokenizer)
    at.run()
    at.button(key="import_go").click().run()
    assert not at.exception, at.exception
    return at


def imported_key(at: AppTest, name: str) -> str:
    """The picker key of the session's import of that name ("imported:" + its files' SHA-256)."""
    (key,) = [k for k, e in at.session_state["imported_tokenizers"].items() if e.name == name]
    return key


def hf_json(steps: int) -> bytes:
    return export_files(engine(steps).tokenizer(steps), "hf")["tokenizer.json"]


def wordpiece_json() -> bytes:
    from tokenizers import Tokenizer, models

    return Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]")).to_str().encode()


def format_error(files: dict[str, bytes]) -> str:
    with pytest.raises(FormatError) as err:
        import_files(files)
    return str(err.value)


# ---- downloads (Train page) ----------------------------------------------------------------------
def test_each_format_downloads_the_tokenizer_as_of_the_step_shown_not_the_last_trained(media):
    at = train_page(30, shown=20)
    ref = engine(30)
    tok = ref.tokenizer(20)
    assert len(ref.tokenizer(30).merges) == 30 and tok.merges != ref.tokenizer(30).merges
    seen_problem = seen_zip = False
    for fmt in EXPORT_FORMATS:
        at.selectbox(key="w_dl_format").set_value(fmt).run()
        assert not at.exception, at.exception
        problem = export_problem(tok, fmt)
        if problem is not None:
            assert not at.download_button, fmt
            assert any(unescaped(i.value) == f"This format cannot hold this tokenizer: {problem}." for i in at.info), (
                fmt
            )
            seen_problem = True
            continue
        name, data = button_file(at, media)
        expected = export_files(tok, fmt, trace=trace_dict(ref, steps=20))
        assert unpack(name, data) == expected, fmt
        if len(expected) > 1:
            assert name == f"bpe-udhr_en-20-merges-{fmt}.zip"
            seen_zip = True
        else:
            assert name == next(iter(expected))
        assert at.download_button[0].label == "Download as of step 20 (20 merges)"
    assert seen_problem and seen_zip  # the gpt2 preset: subword-nmt and minbpe cannot hold it


def test_the_hf_download_loads_in_tokenizers_and_gives_the_sessions_ids(media):
    from tokenizers import Tokenizer as HFTokenizer

    at = train_page(40, shown=25)
    at.selectbox(key="w_dl_format").set_value("hf").run()
    name, data = button_file(at, media)
    assert name == "tokenizer.json"
    hf = HFTokenizer.from_str(data.decode("utf-8"))
    ours = engine(40).tokenizer(25)
    for text in (SHORT, read_sample(CORPUS)[:3000]):
        assert hf.encode(text).ids == ours.encode(text)
    assert len(json.loads(data)["model"]["merges"]) == 25


def test_the_export_is_made_once_per_format_and_step_and_not_while_closed(monkeypatch):
    calls = []
    real = interop_view.export_files
    monkeypatch.setattr(interop_view, "export_files", lambda *a, **kw: calls.append(kw) or real(*a, **kw))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(CORPUS,))
    at.run()
    at.switch_page("pages/2_Train.py").run()
    at.button(key="step10").click().run()
    assert calls == []  # closed: nothing made
    at.session_state["w_dl_open"] = True
    at.run()
    assert len(calls) == 1 and calls[0]["trace"] is None  # hf reads no merge history
    at.text_input(key="w_history_search").input("th").run()  # a rerun at the same step
    at.toggle(key="w_full_history").set_value(True).run()
    assert len(calls) == 1
    at.selectbox(key="w_dl_format").set_value("csv").run()
    assert len(calls) == 2 and len(calls[1]["trace"]["merges"]) == 10
    at.button(key="step").click().run()  # another step: the file follows it
    assert len(calls) == 3 and len(calls[2]["trace"]["merges"]) == 11
    assert not at.exception


# ---- imports (Playground page) -------------------------------------------------------------------
def test_the_import_area_is_drawn_only_while_open_and_stays_open_with_its_result():
    """Shut, "Import a tokenizer" draws none of its widgets (the uploader alone cost every first
    visit of the Playground its code); opened, it keeps what was chosen in it, and stays open
    through the import's result and a removed file that takes its error with it."""
    at = playground()
    drawn = lambda: (len(at.file_uploader), [b.key for b in at.button if b.key in ("import_go", "hub_go")])  # noqa: E731
    assert drawn() == (0, [])
    open_importer(at)
    assert drawn() == (1, ["hub_go", "import_go"])
    at.file_uploader[0].set_value([("merges.csv", b"this,is\nnot,ours\n", "text/csv")]).run()
    at.button(key="import_go").click().run()
    assert at.error and drawn() == (1, ["hub_go", "import_go"])
    at.file_uploader[0].set_value(None).run()
    assert not at.error and drawn() == (1, ["hub_go", "import_go"])
    upload(at, {"tokenizer.json": hf_json(30)})
    assert at.success and drawn() == (1, ["hub_go", "import_go"])
    at.session_state[interop_view.IMPORT_OPEN] = False
    at.run()
    assert drawn() == (0, []) and not at.success and not at.exception
    assert "imported: tokenizer (hf)" in at.multiselect(key="w_play_tokenizers").options  # the import stays


def test_an_exported_tokenizer_json_imports_and_encodes_in_every_view_as_the_session_did():
    at = playground(merges=30)
    upload(at, {"tokenizer.json": hf_json(30)})
    ours = engine(30).tokenizer(30)
    label = "imported: tokenizer (hf)"
    (ok,) = at.success
    assert unescaped(ok.value).startswith(
        f"Imported 'tokenizer': format Hugging Face tokenizer.json, 30 merges, "
        f"vocabulary {len(ours.vocab):,} (1 special token)"
    )
    picker = at.multiselect(key="w_play_tokenizers")
    assert imported_key(at, "tokenizer") in picker.value and label in picker.options
    ids = encode_ids(at)
    assert ids[label] == ours.encode(SHORT) == ids["trained, as of merge 30 of 30"]

    at.radio(key="w_play_view").set_value("Why this split").run()
    at.selectbox(key="w_why_tok").set_value(at.selectbox(key="w_why_tok").options.index(label)).run()
    assert not at.exception and not at.error
    assert any('class="bpe-scroll bpe-lin"' in h.proto.body for h in at.get("html"))
    at.radio(key="w_play_view").set_value("Decode ids").run()
    at.selectbox(key="w_dec_tok").set_value(label).run()
    assert not at.exception and not at.error
    assert at.code[0].value == ours.decode(ours.encode(SHORT))
    at.session_state[Keys.DROPOUT] = True  # the BPE-dropout expander opened (drawn only while open)
    at.radio(key="w_play_view").set_value("Encode").run()
    at.selectbox(key="w_drop_tok").set_value(at.selectbox(key="w_drop_tok").options.index(label)).run()
    at.button(key="drop_sample").click().run()
    assert not at.exception and not at.error


@pytest.mark.parametrize("bad", ["truncated", "wordpiece"])
def test_a_bad_file_shows_the_importers_sentence_and_keeps_the_tokenizers_imported_before(bad):
    at = playground(merges=10)
    upload(at, {"tokenizer.json": hf_json(10)}, name="good")
    before = encode_ids(at)
    files = {"tokenizer.json": hf_json(10)[:500] if bad == "truncated" else wordpiece_json()}
    upload(at, files, name="bad")
    (error,) = at.error
    assert error.value == md_text(format_error(files))  # as text: no Markdown in a file's content takes effect
    assert ("cut short" if bad == "truncated" else "WordPiece") in error.value
    assert [e.name for e in at.session_state["imported_tokenizers"].values()] == ["good"]
    assert encode_ids(at) == before and "imported: good (hf)" in before
    at.text_area(key="w_play_text").input("still works").run()
    assert not at.exception
    assert encode_ids(at)["imported: good (hf)"] == engine(10).tokenizer(10).encode("still works")


def test_vocab_and_merges_use_the_chosen_pre_tokenizer_and_a_same_name_replaces():
    at = playground()
    files = export_files(engine(20).tokenizer(20), "gpt2")
    upload(at, files, name="mine", pretokenizer="none")
    tok = at.session_state["imported_tokenizers"][imported_key(at, "mine")].tokenizer
    assert tok.config.pretokenizer == "none" and tok.merges == engine(20).tokenizer(20).merges
    upload(at, {"tokenizer.json": hf_json(10)}, name="mine")
    kept = at.session_state["imported_tokenizers"]
    (entry,) = kept.values()
    assert entry.name == "mine" and entry.format == "hf" and len(entry.tokenizer.merges) == 10
    assert [k for k in at.multiselect(key="w_play_tokenizers").value if k.startswith("imported:")] == [entry.key]


def test_subword_nmt_codes_with_glossaries_and_nfc_encode_on_the_playground_as_apply_bpe():
    """subword-nmt's own codes (tests/data/subword_nmt) with glossaries typed in the import form
    and NFC chosen: the Encode view's ids are apply_bpe's segmentation of the NFC text, line by
    line; the options are kept with the stored files, so the same codes without them are
    another import."""
    codes = (ROOT / "tests" / "data" / "subword_nmt" / "bpe.ref").read_bytes()
    at = playground()
    upload(at, {"bpe.ref": codes}, name="snmt", glossaries="Tokenizers [0-9]+", normalizer="nfc")
    (message,) = at.success
    assert md_text("Glossaries never split: Tokenizers, [0-9]+. The files name no normalizer: nfc") in message.value
    text = SHORT + " cafe\u0301"
    at.text_area(key="w_play_text").input(text).run()
    tok = at.session_state["imported_tokenizers"][imported_key(at, "snmt")].tokenizer
    bpe = BPE(io.StringIO(codes.decode()), glossaries=["Tokenizers", "[0-9]+"])
    tokens = tok.tokens(encode_ids(at)["imported: snmt (subword-nmt)"])
    shown = "".join(t[:-4] + " " if t.endswith("</w>") else t + "@@ " for t in tokens).strip()
    assert shown == " ".join(bpe.segment(line) for line in unicodedata.normalize("NFC", text).splitlines())
    assert any("é" in t for t in tokens) and not any("\u0301" in t for t in tokens)
    assert "<unk>" not in tokens and "Tokenizers</w>" in tokens and "12345</w>" in tokens
    at.text_input(key="w_imp_gloss").input("")
    at.selectbox(key="w_imp_norm").set_value("none")
    upload(at, {"bpe.ref": codes}, name="plain")
    assert len({e.digest for e in at.session_state["imported_tokenizers"].values()}) == 2


# ---- imported tokenizers on the Compare page -----------------------------------------------------
def test_the_compare_page_offers_an_imported_tokenizer_and_keys_its_results_by_content():
    at = playground()
    upload(at, {"tokenizer.json": hf_json(10)}, name="mine")
    at.switch_page("pages/4_Compare.py").run()
    assert "imported: mine (hf)" in at.selectbox(key="w_cmp_pretrained").options
    at.multiselect(key="w_cmp_corpora").set_value(["udhr_en.txt", "udhr_ko.txt"])
    at.radio(key="w_cmp_mode").set_value("pretrained")
    at.selectbox(key="w_cmp_pretrained").set_value(imported_key(at, "mine"))
    at.button(key=SUBMIT).click().run()
    assert not at.exception, at.exception
    first = compare_chart(at, "bytes per token")
    # the same name, other merges: the page must not answer from what "mine" gave before
    at.switch_page(PLAYGROUND).run()
    upload(at, {"tokenizer.json": hf_json(200)}, name="mine")
    at.switch_page("pages/4_Compare.py").run()
    at.selectbox(key="w_cmp_pretrained").set_value(imported_key(at, "mine"))
    at.button(key=SUBMIT).click().run()
    assert not at.exception, at.exception
    second = compare_chart(at, "bytes per token")
    english = read_sample("udhr_en.txt")
    for df, merges in ((first, 10), (second, 200)):
        row = df[df["encoded"] == "udhr_en.txt"]
        tokens = len(engine(merges).tokenizer(merges).encode(english))
        assert row["bytes per token"].iloc[0] == pytest.approx(len(english.encode()) / tokens)


# ---- what the Train page writes, the Playground reads ------------------------------------------
# a preset each format can hold (the page's default, gpt2, for all but these)
_PRESET_FOR = {"subword-nmt": "sennrich", "minbpe": "bytes"}
# formats whose files give every id; arrow merges and subword-nmt codes hold no alphabet and no
# special tokens, so their ids are assigned afresh: the same tokens are what they can give
_GIVES_IDS = {"hf", "gpt2", "tiktoken", "minbpe", "csv", "trace"}


@pytest.mark.parametrize("fmt", list(EXPORT_FORMATS))
def test_every_download_at_step_20_imports_on_the_playground_as_the_tokenizer_it_came_from(fmt, media):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"corpus": CORPUS, "preset": _PRESET_FOR.get(fmt, "gpt2")})
    at.switch_page("pages/2_Train.py").run()
    at.button(key="step10").click().run()
    at.button(key="step10").click().run()
    at.session_state["w_dl_open"] = True
    at.run()
    at.selectbox(key="w_dl_format").set_value(fmt).run()
    name, data = button_file(at, media)
    live = at.session_state["live"]
    # text within the alphabet the merges imply (what arrow and codes files know): the tokens made
    made = " ".join(live.tokenizer(20).decode([r.token_id]) for r in live.trainer.records[:20])
    at.switch_page(PLAYGROUND).run()
    at.multiselect(key="w_play_tokenizers").set_value(["trained"]).run()
    at.text_area(key="w_play_text").input(SHORT if fmt in _GIVES_IDS else made).run()
    upload(at, {name: data}, name=fmt)
    assert not at.error, [e.value for e in at.error]
    ids = encode_ids(at)
    ours = ids["trained, as of merge 20 of 20"]
    theirs = ids[f"imported: {fmt} ({fmt})"]
    if fmt in _GIVES_IDS:
        assert theirs == ours
    else:
        trained = at.session_state["live"].tokenizer(20)
        imported = at.session_state["imported_tokenizers"][imported_key(at, fmt)].tokenizer
        assert imported.tokens(theirs) == trained.tokens(ours)


def test_a_zip_beside_a_loose_file_imports_and_is_stored_as_one_flat_zip():
    from explorer.formats.exporters import zip_files
    from explorer.serving.store import default_store

    files = export_files(engine(20).tokenizer(20), "gpt2")
    at = playground()
    upload(
        at, {"half.zip": zip_files({"vocab.json": files["vocab.json"]}), "merges.txt": files["merges.txt"]}, name="half"
    )
    assert not at.error, [e.value for e in at.error]
    entry = at.session_state["imported_tokenizers"][imported_key(at, "half")]
    assert entry.tokenizer.merges == engine(20).tokenizer(20).merges
    stored = default_store().get(entry.digest)
    assert sorted(unpack(stored.name, stored.data)) == ["merges.txt", "vocab.json"]


def test_an_imported_tokenizer_json_joins_the_compare_pages_parity_table_with_hf_counts():
    """A tokenizer.json that HF ``tokenizers`` wrote: "one pretrained" encodes with it, and the
    parity panel gives it a row per UDHR language beside the bundled tables, its token counts
    HF's own on the same text."""
    from conftest import chart_data, open_tab
    from test_cli_paths import hf_trained

    from explorer.formats.parallel import UDHR_LANGUAGES

    at = playground()
    upload(at, {"tokenizer.json": hf_trained().to_str().encode()}, name="<i>hf</i>")
    key = imported_key(at, "<i>hf</i>")
    at.switch_page("pages/4_Compare.py").run()
    at.multiselect(key="w_cmp_corpora").set_value(["udhr_en.txt", "udhr_hi.txt"])
    at.radio(key="w_cmp_mode").set_value("pretrained")
    at.selectbox(key="w_cmp_pretrained").set_value(key)
    at.button(key=SUBMIT).click().run()
    assert not at.exception, at.exception
    open_tab(at, "Parity across languages")
    df = chart_data(at, "Parity: tokens for the same text, relative to English")
    label = "imported: <i>hf</i> (hf)"
    assert list(dict.fromkeys(df["tokenizer"])) == ["gpt2", "cl100k_base", "o200k_base", label]
    mine = df[df["tokenizer"] == label].set_index("language")["tokens"]
    udhr = {name: f"udhr_{code}.txt" for code, name in UDHR_LANGUAGES.items()}
    assert len(mine) == 8
    assert {lang: int(n) for lang, n in mine.items()} == {
        lang: len(hf_trained().encode(read_sample(udhr[lang])).ids) for lang in mine.index
    }
    assert "<th>imported: &lt;i&gt;hf&lt;/i&gt; (hf)</th>" in "".join(e.proto.body for e in at.get("html"))
