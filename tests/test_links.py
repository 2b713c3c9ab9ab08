"""Every page is a link (AppTest): each page writes its view into the URL as the user works, and a
new session opened on that URL (a refresh, a shared link) shows the same view; files a link
names come back from the store; a link with bad values or an evicted file opens the nearest
valid view and says what it left out."""

from __future__ import annotations

import hashlib
import html
import re

import pytest
from conftest import ROOT, compare_chart, encode_view, open_importer, read_sample, unescaped
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config
from explorer.formats.exporters import export_files
from explorer.serving.store import default_store
from explorer.stages.pipeline import count_words
from explorer.ui.links import count_or, parse_link
from explorer.ui.state import RECORDED_PAIRS

APP = str(ROOT / "app.py")
TRAIN, PLAYGROUND, COMPARE, CORPUS_PAGE = (
    "pages/2_Train.py",
    "pages/3_Playground.py",
    "pages/4_Compare.py",
    "pages/1_Corpus.py",
)
CORPUS = "udhr_en.txt"
TIMEOUT = 120
TEXT = "Everyone has the right to life, liberty and security of person. 1948!"
SUBMIT = "FormSubmitter:w_cmp_form-Compare"


def open_link(page: str, query: dict[str, str]) -> AppTest:
    """A new session opened on ``page`` with these URL params, as a browser opening a link (or
    reloading) runs that page first."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(query)
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def url(at: AppTest) -> dict[str, str]:
    return dict(at.query_params)


def engine(steps: int, corpus: str = CORPUS) -> Trainer:
    config = corpus_config("gpt2")
    trainer = Trainer(count_words((read_sample(corpus),), config), config, top_k=RECORDED_PAIRS)
    trainer.advance(steps)
    return trainer


def encode_ids(at: AppTest) -> dict[str, list[int]]:
    """Each tokenizer's ids in the Encode view, by its label."""
    return {panel.label: panel.ids for panel in encode_view(at)}


def warnings(at: AppTest) -> str:
    return " ".join(unescaped(w.value) for w in at.warning)


def trained_session(steps: int) -> AppTest:
    at = open_link(TRAIN, {"corpus": CORPUS})
    for _ in range(steps // 10):
        at.button(key="step10").click().run()
    assert url(at)["step"] == str(steps)
    return at


# ---- Playground --------------------------------------------------------------------------------
def test_a_playground_reload_shows_the_same_merge_and_the_same_tokens():
    at = trained_session(20)
    at.switch_page(PLAYGROUND).run()
    at.text_area(key="w_play_text").input(TEXT).run()
    before = encode_ids(at)
    assert "trained, as of merge 20 of 20" in before
    params = url(at)
    assert params["step"] == "20" and params["k"] == "20" and params["text"] == TEXT
    assert params["tokenizers"] == "trained,cl100k_base" and params["corpus"] == CORPUS

    again = open_link(PLAYGROUND, params)
    assert encode_ids(again) == before
    assert before["trained, as of merge 20 of 20"] == engine(20).tokenizer(20).encode(TEXT)
    assert url(again) == params


def test_a_playground_link_keeps_merge_k_view_and_options():
    at = trained_session(20)
    at.switch_page(PLAYGROUND).run()
    at.slider(key="w_play_k").set_value(7).run()
    at.toggle(key="w_play_ws").set_value(False).run()
    at.radio(key="w_play_view").set_value("Decode ids").run()
    at.text_area(key="w_dec_ids").input("15, 16, 17").run()
    at.selectbox(key="w_dec_errors").set_value("strict").run()
    params = url(at)
    assert params["k"] == "7" and params["view"] == "decode" and params["whitespace"] == "0"
    assert params["ids"] == "15, 16, 17" and params["errors"] == "strict"

    again = open_link(PLAYGROUND, params)
    assert again.slider(key="w_play_k").value == 7 and again.toggle(key="w_play_ws").value is False
    assert again.radio(key="w_play_view").value == "Decode ids"
    assert (
        again.text_area(key="w_dec_ids").value == "15, 16, 17" and again.selectbox(key="w_dec_errors").value == "strict"
    )


def test_a_long_playground_text_is_stored_and_named_by_its_hash():
    text = read_sample("udhr_ko.txt")[:3000]
    at = open_link(PLAYGROUND, {})
    at.text_area(key="w_play_text").input(text).run()
    params = url(at)
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert "text" not in params and params["text_id"] == digest
    assert default_store().get(digest).data == text.encode()
    again = open_link(PLAYGROUND, params)
    assert again.text_area(key="w_play_text").value == text


def test_a_why_this_split_link_shows_the_same_piece_and_token():
    at = open_link(PLAYGROUND, {"tokenizers": "cl100k_base", "text": TEXT})
    at.radio(key="w_play_view").set_value("Why this split").run()
    at.selectbox(key="w_why_piece").set_value(3).run()
    at.text_input(key="w_why_id").input("1919").run()
    params = url(at)
    assert params["view"] == "why" and params["piece"] == "3" and params["token"] == "1919"
    again = open_link(PLAYGROUND, params)
    assert again.selectbox(key="w_why_piece").value == 3 and again.text_input(key="w_why_id").value == "1919"


def test_an_imported_tokenizer_is_named_by_its_files_hash_and_reopens_from_the_store():
    data = export_files(engine(30).tokenizer(30), "hf")["tokenizer.json"]
    at = open_link(PLAYGROUND, {"text": TEXT})
    open_importer(at).file_uploader[0].set_value([("tokenizer.json", data, "application/json")]).run()
    at.button(key="import_go").click().run()
    assert not at.exception
    key = "imported:" + hashlib.sha256(data).hexdigest()
    params = url(at)
    assert key in params["tokenizers"].split(",")
    before = encode_ids(at)["imported: tokenizer (hf)"]
    assert before == engine(30).tokenizer(30).encode(TEXT)

    again = open_link(PLAYGROUND, params)
    assert encode_ids(again)["imported: tokenizer (hf)"] == before


def test_an_import_error_goes_when_its_files_are_removed():
    at = open_link(PLAYGROUND, {})
    open_importer(at).file_uploader[0].set_value([("merges.csv", b"this,is\nnot,ours\n", "text/csv")]).run()
    at.button(key="import_go").click().run()
    assert at.error and "version" not in at.error[0].value
    at.file_uploader[0].set_value(None).run()
    assert not at.error


# ---- Compare -----------------------------------------------------------------------------------
def test_a_compare_reload_shows_the_same_results_without_pressing_compare():
    at = open_link(COMPARE, {})
    at.radio(key="w_cmp_mode").set_value("pretrained")
    at.selectbox(key="w_cmp_pretrained").set_value("gpt2")
    at.button(key=SUBMIT).click().run()
    assert not at.exception
    params = url(at)
    assert params["compare"] == "udhr_en.txt,udhr_hi.txt,udhr_ko.txt" and params["compare_tokenizer"] == "gpt2"
    curves = compare_chart(at, "Bytes per token after k merges")

    again = open_link(COMPARE, params)
    assert not any("press **Compare**" in i.value for i in again.info)
    assert compare_chart(again, "Bytes per token after k merges").equals(curves)
    assert (
        again.radio(key="w_cmp_mode").value == "pretrained" and again.selectbox(key="w_cmp_pretrained").value == "gpt2"
    )


def test_a_compare_link_of_trained_presets_keeps_preset_and_merges():
    params = {"compare": "udhr_en.txt,udhr_ru.txt", "compare_preset": "gpt4", "compare_merges": "60"}
    at = open_link(COMPARE, params)
    assert at.multiselect(key="w_cmp_corpora").value == ["udhr_en.txt", "udhr_ru.txt"]
    assert at.number_input(key="w_cmp_merges").value == 60 and at.selectbox(key="w_cmp_preset").value == "gpt4"
    assert set(compare_chart(at, "Bytes per token after k merges")["corpus"]) == {"udhr_en.txt", "udhr_ru.txt"}
    assert {k: url(at)[k] for k in params} == params


# ---- corpus uploads and the store --------------------------------------------------------------
def upload_corpus(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader[0].set_value([(name, data, "text/plain")]).run()
    assert not at.exception


def test_an_uploaded_corpus_is_named_by_hash_and_a_new_session_trains_on_it():
    text = "lowest newest widest " * 40 + "ünïcode is here\n"
    at = open_link(CORPUS_PAGE, {})
    upload_corpus(at, "my notes.txt", text.encode())
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert url(at)["corpus"] == f"english_frankenstein.txt,upload:{digest}"
    at.switch_page(TRAIN).run()
    for _ in range(3):
        at.button(key="step").click().run()
    params = url(at)
    again = open_link(TRAIN, params)
    assert unescaped(again.caption[0].value).startswith("english_frankenstein.txt, my notes.txt · gpt2")
    assert again.session_state["live"].trained == 3 and again.session_state["live"].view == 3
    # the merges reached (each trainer holds state.TRAINED_AHEAD more, trained ahead of the step shown)
    assert [r.token for r in again.session_state["live"].trainer.records[:3]] == [
        r.token for r in at.session_state["live"].trainer.records[:3]
    ]
    corpus = open_link(CORPUS_PAGE, params)  # the Corpus page lists it, with Remove
    assert any("my notes.txt** · 858 bytes" in unescaped(c.value) for c in corpus.caption)


def test_a_non_utf8_upload_keeps_its_decoding_in_the_link():
    at = open_link(CORPUS_PAGE, {})
    upload_corpus(at, "latin.txt", "Café crème brûlée".encode("latin-1"))
    at.radio(key="w_decode_1").set_value("latin-1").run()
    ref = url(at)["corpus"].split(",")[1]
    assert ref.endswith(":latin-1")
    again = open_link(CORPUS_PAGE, url(at))
    assert again.session_state["corpus_choice"].uploads == (("latin.txt", "Café crème brûlée"),)


def test_pasted_corpus_text_is_stored_and_reopens():
    at = open_link(CORPUS_PAGE, {})
    at.text_area(key="w_pasted").input("a pasted corpus of words words words").run()
    ref = url(at)["corpus"].split(",")[-1]
    assert ref == "pasted:" + hashlib.sha256(b"a pasted corpus of words words words").hexdigest()
    again = open_link(TRAIN, url(at))
    assert again.session_state["corpus_choice"].pasted == "a pasted corpus of words words words"


def test_a_link_to_an_evicted_upload_says_so_and_opens_the_rest():
    missing = "ab" * 32
    at = open_link(TRAIN, {"corpus": f"udhr_en.txt,upload:{missing}", "preset": "sennrich", "step": "2"})
    assert "is no longer on this server" in warnings(at)
    assert at.session_state["corpus_choice"].samples == ("udhr_en.txt",)
    assert at.session_state["live"].trained == 2


def test_forget_my_uploads_removes_the_files_from_the_store_and_the_session():
    at = open_link(CORPUS_PAGE, {})
    upload_corpus(at, "mine.txt", b"my words are mine " * 20)
    params = url(at)
    digest = hashlib.sha256(b"my words are mine " * 20).hexdigest()
    assert default_store().get(digest) is not None
    at.button(key="forget_uploads").click().run()
    assert default_store().get(digest) is None
    assert at.session_state["corpus_choice"].uploads == () and "upload:" not in url(at)["corpus"]
    assert any("Removed 1 file" in s.value for s in at.success)
    later = open_link(TRAIN, params)
    assert "is no longer on this server" in warnings(later)


# ---- the other pages, and bad links --------------------------------------------------------------
def test_the_corpus_page_keeps_its_preview_settings_in_the_link():
    at = open_link(CORPUS_PAGE, {})
    at.selectbox(key="w_prev_pretok").set_value("o200k").run()
    at.number_input(key="w_prev_lines").set_value(9).run()
    params = url(at)
    assert params["pretokenizer_preview"] == "o200k" and params["lines"] == "9"
    again = open_link(CORPUS_PAGE, params)
    assert again.selectbox(key="w_prev_pretok").value == "o200k" and again.number_input(key="w_prev_lines").value == 9


def test_the_home_page_keeps_the_miniatures_step():
    at = open_link("pages/0_Home.py", {"toy_step": "7"})
    assert at.slider(key="w_home_step").value == 7 and url(at)["toy_step"] == "7"


def test_custom_training_settings_travel_in_the_link():
    params = {
        "corpus": CORPUS,
        "preset": "gpt2",
        "unit": "char",
        "alphabet": "present",
        "pretokenizer": "whitespace",
        "special_tokens": '["<s>", "a,b"]',
        "min_frequency": "2",
        "merges": "50",
        "step": "4",
    }
    at = open_link(TRAIN, params)
    config = at.session_state["config"]
    assert (config.unit, config.pretokenizer, config.special_tokens, config.min_frequency, config.num_merges) == (
        "char",
        "whitespace",
        ("<s>", "a,b"),
        2,
        50,
    )
    assert at.session_state["preset_name"] is None and at.session_state["live"].trained == 4
    assert {k: url(at)[k] for k in params} == params


def test_a_tie_break_other_than_the_presets_travels_in_the_link_and_decides_the_merges():
    params = {
        "corpus": "demo_sennrich_low_lower.txt",
        "preset": "sennrich",
        "tie": "subword-nmt",
        "merges": "10",
        "step": "1",
    }
    at = open_link(TRAIN, params)
    assert at.session_state["config"].tie_break == "subword-nmt" and url(at)["tie"] == "subword-nmt"
    # Sennrich's toy corpus: (e, s), (s, t) and (t, </w>) tie at 9; the preset's own rule takes the
    # pair seen first, subword-nmt's the largest
    first = at.session_state["live"].trainer.records[0]
    assert (first.left, first.right) == ("t", "</w>")
    config = corpus_config("sennrich")
    own_rule = Trainer(count_words((read_sample("demo_sennrich_low_lower.txt"),), config), config)
    assert own_rule.advance(1)[0].pair == ("e", "s")
    at.button(key="step").click().run()
    assert url(at)["tie"] == "subword-nmt" and url(at)["step"] == "2"


@pytest.mark.parametrize(
    "query, message, kept",
    [
        ({"corpus": "udhr_ko.txt,../../etc/passwd", "step": "3"}, "not bundled: '../../etc/passwd'", "udhr_ko.txt"),
        ({"corpus": "udhr_ko.txt", "step": "3", "unit": "qubit"}, "unknown unit 'qubit'", "udhr_ko.txt"),
        (
            {"corpus": "udhr_ko.txt", "step": "3", "special_tokens": "[1, 2]"},
            "not a JSON list of strings",
            "udhr_ko.txt",
        ),
    ],
)
def test_a_link_with_a_bad_value_opens_the_nearest_view_and_says_what_it_left_out(query, message, kept):
    at = open_link(TRAIN, query)
    assert message in warnings(at) and warnings(at).startswith("This link cannot be opened as it is")
    assert at.session_state["corpus_choice"].samples == (kept,) and at.session_state["live"].trained == 3


def test_a_playground_link_with_unknown_tokenizers_and_views_says_so():
    at = open_link(PLAYGROUND, {"tokenizers": "gpt2,gpt9,imported:" + "cd" * 32, "view": "xray", "k": "-1"})
    said = warnings(at)
    assert "'gpt9' is no tokenizer" in said and "no longer on this server" in said and "view='xray'" in said
    assert at.multiselect(key="w_play_tokenizers").value == ["gpt2"]


def test_the_corpus_preview_link_keeps_its_start_line_and_refuses_a_bad_one():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"from_line": "7", "lines": "3"})
    at.switch_page("pages/1_Corpus.py").run()
    assert not at.exception
    assert at.number_input(key="w_prev_start").value == 7 and at.number_input(key="w_prev_lines").value == 3
    # the preview shows the seventh non-blank line of the default corpus first
    seventh = [line for line in read_sample("english_frankenstein.txt").splitlines() if line.strip()][6]
    preview = next(
        h.proto.body for h in at.get("html") if 'class="bpe-row"' in h.proto.body and "bpe-chip" in h.proto.body
    )
    first_line = html.unescape(re.sub(r"<[^>]+>", "", preview.split("</div>", 1)[0]))
    assert first_line.replace("·", " ").replace("↵", "") == seventh[:400].rstrip("\n")
    bad = AppTest.from_file(APP, default_timeout=TIMEOUT)
    bad.query_params.update({"from_line": "0"})
    bad.switch_page("pages/1_Corpus.py").run()
    assert "from_line='0' in the link is not a whole number" in unescaped(bad.warning[0].value)


def test_a_links_counts_are_taken_up_to_their_bounds_and_one_past_is_refused_in_one_sentence():
    # the bounds are the link format's: a step up to 200,000, a vocabulary of at least 1 token
    link, problems = parse_link({"corpus": CORPUS, "step": "200000", "vocab": "1"}, samples=[CORPUS])
    assert problems == [] and link is not None and (link.step, link.config.vocab_size) == (200_000, 1)
    link, problems = parse_link({"corpus": CORPUS, "step": "200001", "vocab": "0"}, samples=[CORPUS])
    assert link is not None and link.step == 0 and link.config.vocab_size != 0
    assert problems == [
        "vocab='0' in the link is not a whole number from 1 to 200,000",
        "step='200001' in the link is not a whole number from 0 to 200,000",
    ]
    # a page's own count (the Home page's miniature step, 0..high): its highest is taken, one more is not
    kept: list[str] = []
    assert count_or({"toy_step": "9"}, "toy_step", kept, low=0, high=9, default=3) == 9 and kept == []
    assert count_or({"toy_step": "10"}, "toy_step", kept, low=0, high=9, default=3) == 3
    assert kept == ["toy_step='10' in the link is not a whole number from 0 to 9"]
