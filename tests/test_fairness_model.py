"""The Fairness page's model (explorer.ui.fairness_model) without Streamlit: the sentences, cards,
rows and captions it shows of two small runs trained here, the checks an uploaded language goes
through, the request its form and its link hold, written out as the page must show them (golden
examples); and its keys, which must be the keys the page's widgets use."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest
from conftest import ROOT, assert_keys_named, constants, widget_keys
from streamlit.testing.v1 import AppTest

from explorer import TrainerConfig
from explorer.bpe.config import PRESETS
from explorer.bpe.parity import Balance, ParityTrainer
from explorer.errors import ConfigError
from explorer.ui import fairness_model as model
from explorer.ui.fairness_model import Keys, Language, Request, Session
from explorer.ui.render import PLAIN

# English's text is full of one frequent pair; B's is short on it but long on its development
# text: classical BPE serves English first, parity-aware BPE serves B first
TRAIN = ["the the the the the the", "xyxy"]
DEV = ["the the", "xyxyxyxy"]
TEST = ["the then", "xyxy xy"]
CONFIG = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)


def side(mode: str, **options) -> model.Side:
    return model.build_side(ParityTrainer(TRAIN, DEV, CONFIG, balance=Balance(mode, **options)).run(), TEST)


@pytest.fixture(scope="module")
def lab() -> model.Lab:
    """Classical against parity on English and an upload named with markup, without a test file."""
    return model.Lab(("English", "<b>B</b>"), (True, False), False, 3, side("classical"), side("parity"), key="k")


# ---- what a step says --------------------------------------------------------------------------
def test_a_classical_merge_names_the_language_whose_development_text_it_shortened_most(lab):
    say = [model.merge_sentence(lab.classical, k, lab.names, reference=0, style=PLAIN) for k in range(4)]
    assert say == [
        "No merge yet: <b>B</b> starts with the most tokens, 8 on its development text, 1.33× English's.",
        "Merge 1 (‘t’ + ‘h’ → ‘th’) was the most frequent pair of all languages together (6 times); "
        "it shortened English's development text most, by 2 tokens.",
        "Merge 2 (‘th’ + ‘e’ → ‘the’) was the most frequent pair of all languages together (6 times); "
        "it shortened English's development text most, by 2 tokens.",
        "Merge 3 (‘x’ + ‘y’ → ‘xy’) was the most frequent pair of all languages together (2 times); "
        "it shortened <b>B</b>'s development text most, by 4 tokens.",
    ]


def test_a_parity_merge_serves_the_worst_compressed_language_against_english_or_the_fewest(lab):
    assert model.merge_sentence(lab.variant, 1, lab.names, reference=0, style=PLAIN) == (
        "Merge 1 (‘x’ + ‘y’ → ‘xy’) served <b>B</b>, the worst-compressed language: "
        "8 tokens on its development text, 1.33× English's."
    )
    # English served: no ratio against itself
    assert model.merge_sentence(lab.variant, 3, lab.names, reference=0, style=PLAIN) == (
        "Merge 3 (‘th’ + ‘e’ → ‘the’) served English, the worst-compressed language: 4 tokens on its development text."
    )
    # no English among the languages: against the best-compressed one, said so
    assert model.merge_sentence(lab.variant, 1, ["A", "B"], reference=None, style=PLAIN).endswith(
        "8 tokens on its development text, 1.33× A's (the fewest)."
    )
    # past a side's last merge: its last merge is said
    assert model.merge_sentence(lab.variant, 9, lab.names, reference=0, style=PLAIN).startswith("Merge 3 (")


def test_a_window_merge_names_who_waited_and_why_and_an_exhausted_one_who_had_no_pair_left():
    train, dev = ["abab abab abab", "cdcd cdcd", "efg efg"], ["abab abab", "cdcd", "efg"]
    config = dataclasses.replace(CONFIG, num_merges=8)
    names = ["English", "B", "C"]
    windowed = ParityTrainer(train, dev, config, balance=Balance("parity-window", window=2, window_alpha=1.0)).run()
    assert [r.rule for r in windowed.records] == ["worst", "window", "window", "worst", "exhausted", "exhausted"]
    got = model.build_side(windowed, ["ab", "cd", "efg"])
    say = [model.merge_sentence(got, k, names, reference=0, style=PLAIN) for k in (2, 3, 5)]
    assert say == [
        "Merge 2 (‘c’ + ‘d’ → ‘cd’) served B, 4 tokens on its development text, 1.00× English's: the "
        "worse-compressed English (1) had served more than its share of the last 1 merges (at most 0.666667 each).",
        "Merge 3 (‘e’ + ‘f’ → ‘ef’) served C, 3 tokens on its development text, 0.75× English's: the "
        "worse-compressed English (1) had served more than its share of the last 2 merges (at most 0.666667 each).",
        "Merge 5 (‘cd’ + ‘cd’ → ‘cdcd’) served B, 2 tokens on its development text, 1.00× English's: the "
        "worse-compressed English had no pair left to merge.",
    ]
    assert model.merge_sentence(got, 0, ["A", "B", "C"], reference=None, style=PLAIN) == (
        "No merge yet: A starts with the most tokens, 8 on its development text, 2.67× C's (the fewest)."
    )


# ---- the answer at merge k ----------------------------------------------------------------------
def test_the_cards_give_gini_the_worst_off_against_english_and_the_global_cost(lab):
    cards = model.lab_headlines(lab, 2)  # classical: English 3, B 6 test tokens; parity: English 5, B 3
    assert cards == [
        (
            "Gini at merge 2, held-out text",
            "0.167 → 0.125",
            "classical → parity, on test text neither side trained on (<b>B</b>: development text); "
            "0: every language pays alike",
        ),
        (
            "Worst-off language",
            "2.00× → 0.60×",
            "tokens against English's for the same text: <b>B</b> classically, <b>B</b> with parity",
        ),
        ("Global cost at merge 2", "-11.1%", "all languages' test text: 9 tokens classical, 8 with parity"),
    ]


def test_without_english_the_worst_off_pays_against_the_best_compressed_language(lab):
    plain = dataclasses.replace(lab, names=("A", "B"), held_out=(True, True))
    cards = model.lab_headlines(plain, 2)
    assert cards[0].sentence == "classical → parity, on test text neither side trained on; 0: every language pays alike"
    assert cards[1] == (
        "Worst-off language",
        "2.00× → 1.67×",
        "tokens against the best-compressed language's for the same text: B classically, A with parity",
    )


def test_the_table_counts_each_languages_test_tokens_and_the_merges_it_got(lab):
    assert model.language_rows(lab, 2) == [
        ("English", 3, 1.0, 5, 1.0, 2, 1),
        ("<b>B</b>", 6, 2.0, 3, 0.6, 0, 1),
    ]
    cells = '<td class="num">{}</td>' * 6
    assert model.language_table(lab, 2) == (
        '<div class="bpe-grid-title">Each language at merge 2 (test text; a merge chosen over all languages counts '
        'for the one it shortened most)</div><div class="bpe-scroll"><table class="bpe-cmp fair-langs"><tr>'
        "<th>language</th><th>classical: test tokens</th><th>× English</th><th>merges it got</th>"
        "<th>parity: test tokens</th><th>× English</th><th>merges it got</th></tr>"
        f"<tr><td>English</td>{cells.format(3, '1.00', 2, 5, '1.00', 1)}</tr>"
        f"<tr><td>&lt;b&gt;B&lt;/b&gt;</td>{cells.format(6, '2.00', 0, 3, '0.60', 1)}</tr></table></div>"
    )
    assert "<th>× fewest</th>" in model.language_table(dataclasses.replace(lab, names=("A", "B")), 2)


def test_the_legend_and_a_sides_heading_write_names_and_sentences_as_text():
    assert model.legend_html(["<i>x</i>", "B"], ["#111", "#222"]) == (
        '<div class="fair-legend" style="font-size:.9rem;color:#334155;line-height:1.6">'
        "<b>Development-text tokens:</b> "
        '<span style="white-space:nowrap;margin-right:1.1em"><span style="display:inline-block;width:.8em;'
        'height:.8em;border-radius:2px;background:#111;margin-right:.3em"></span>&lt;i&gt;x&lt;/i&gt;</span>'
        '<span style="white-space:nowrap;margin-right:1.1em"><span style="display:inline-block;width:.8em;'
        'height:.8em;border-radius:2px;background:#222;margin-right:.3em"></span>B</span></div>'
    )
    html = model.side_html("Classical BPE", "Merge 1 (‘&’ + ‘<’ → ‘&<’)")
    assert '<div class="fair-say"' in html and "Merge 1 (‘&amp;’ + ‘&lt;’ → ‘&amp;&lt;’)</div></div>" in html


def test_a_side_that_ran_out_of_pairs_is_said_to_have_stopped_early(lab):
    assert model.stop_caption(lab) is None  # both trained their budget
    short = model.build_side(ParityTrainer(["ab ab", "cd"], ["ab", "cd"], CONFIG).run(), ["ab", "cd"])
    assert model.stop_caption(dataclasses.replace(lab, variant=short)) == (
        "parity stopped after 2 merges (no pairs left)"
    )


# ---- the request, trained ------------------------------------------------------------------------
def test_the_settings_forms_widgets_and_the_request_read_each_other_back():
    request = Request(("en", "up:" + "ab" * 32), "sennrich", 200, "parity-window", 20, 1.5, 50)
    values = model.widget_values(request)
    assert values == {
        "w_fair_langs": ["en", "up:" + "ab" * 32],
        "w_fair_preset": "sennrich",
        "w_fair_merges": 200,
        "w_fair_variant": "parity-window",
        "w_fair_window": 20,
        "w_fair_alpha": 1.5,
        "w_fair_global": 50,
    }
    assert model.request_from(values) == request


def test_the_memos_key_changes_with_what_changes_a_merge_only():
    base = Request()
    assert base.key() == Request(window=7, alpha=3.0, global_merges=9).key()  # parity reads none of them
    assert base.key() != Request(merges=501).key() != Request(languages=("en", "hi")).key()
    window = Request(variant="parity-window")
    assert window.key() != Request(variant="parity-window", window=7).key()
    assert window.key() == Request(variant="parity-window", global_merges=9).key()


def test_a_variants_balance_carries_its_options_and_a_hybrid_must_leave_merges_for_parity():
    assert Request(variant="parity-window", window=20, alpha=1.5).balance() == Balance(
        "parity-window", window=20, window_alpha=1.5
    )
    assert Request(variant="parity-hybrid", global_merges=499).balance() == Balance("parity-hybrid", global_merges=499)
    with pytest.raises(ConfigError) as err:
        Request(merges=100, variant="parity-hybrid", global_merges=100).balance()
    assert str(err.value) == (
        "the hybrid's 100 global merges leave none of the 100 for parity: give fewer global merges or a bigger budget"
    )


def test_a_request_is_refused_with_too_few_or_too_many_languages_or_one_gone():
    en = model.udhr_language("en")
    assert model.refusal(Request(("en",)), [en]) == "Choose 2 to 12 languages in the sidebar, then press Train both."
    assert model.refusal(Request(tuple(f"l{i}" for i in range(13))), [en] * 13) == (
        "Choose 2 to 12 languages in the sidebar, then press Train both."
    )
    assert model.refusal(Request(("en", "up:x")), [en, None]) == (
        "A language you added is no longer in this session: add it again in the sidebar."
    )
    assert model.refusal(Request(("en", "hi")), [en, en]) is None
    assert model.refusal(Request(tuple(f"l{i}" for i in range(12))), [en] * 12) is None


def test_both_sides_train_the_requests_languages_under_its_preset_and_budget():
    langs = [Language("a", "A", *(["the the then"] * 3)), Language("b", "B", "xyxy xy", "xyxy", "xy", held_out=False)]
    request = Request(("a", "b"), "sennrich", 10)
    trainer = model.side_trainer(langs, request, Balance("parity"))
    assert (trainer.languages, trainer.config.num_merges, trainer.records) == (("A", "B"), 10, [])
    trainer.run()
    lab = model.lab_of(langs, request, model.build_side(trainer, ["the", "xy"]), model.build_side(trainer, ["t", "x"]))
    assert (lab.names, lab.held_out, lab.byte_level, lab.budget, lab.key) == (
        ("A", "B"),
        (True, False),
        False,
        10,
        request.key(),
    )
    assert model.lab_of(langs, dataclasses.replace(request, preset="gpt2"), lab.classical, lab.variant).byte_level


def test_the_progress_bar_fills_over_both_sides():
    assert [
        model.progress(i, m, n, 500) for i, m, n in ((0, "classical", 0), (0, "classical", 100), (1, "parity", 500))
    ] == [
        (0.0, "Training classical… 0 merges"),
        (0.1, "Training classical… 100 merges"),
        (1.0, "Training parity… 500 merges"),
    ]


def test_the_merge_shown_stays_within_the_run_and_opens_at_its_end():
    assert [model.shown(k, 300) for k in (None, 0, 120, 301, -5)] == [300, 0, 120, 300, 0]
    assert [model.moved(k, n, 300) for k, n in ((None, 1), (None, -1), (5, -10), (295, 10), (14, 3))] == [
        300,
        299,
        0,
        300,
        17,
    ]
    assert model.position(1234, 5000) == "Merge **1,234** of 5,000"


def test_the_line_under_the_title_says_what_is_compared():
    assert model.describe(Request(("en", "hi", "ko"), "sennrich", 1200, "parity-hybrid")) == (
        r"3 languages · sennrich \(characters\) · 1\,200 merges each · classical BPE \(left\) against "
        r"parity\-hybrid \(right\)\; change them in the sidebar"
    )


# ---- languages of one's own ------------------------------------------------------------------------
def test_an_uploaded_language_is_stored_as_one_bundle_and_read_back():
    data = model.language_bundle("Kiswahili", "train", "dev", "test")
    assert data == b'{"dev": "dev", "name": "Kiswahili", "test": "test", "train": "train"}'
    assert model.read_bundle(data, "up:k") == Language("up:k", "Kiswahili", "train", "dev", "test", held_out=True)
    # no test file: its development text stands in, and it is not held out
    no_test = model.read_bundle(model.language_bundle("Kiswahili", "train", "dev", None), "up:k")
    assert (no_test.test, no_test.held_out) == ("dev", False)
    for bad in (
        b"\xff",
        b"[]",
        b'{"name": "x", "train": " ", "dev": "d"}',
        b'{"name": "x", "train": "t", "dev": "d", "test": 3}',
    ):
        with pytest.raises(ConfigError, match="^the stored file is not a language of the Fairness page$"):
            model.read_bundle(bad, "up:k")


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (None, "choose the training file"),
        (
            ("sw.txt", b"caf\xe9 ok"),
            "the training file sw.txt: the file is not valid UTF-8: byte 0xe9 at offset 3 "
            "cannot be decoded. Save it as UTF-8 text",
        ),
        (("sw.txt", b" \n\t "), "the training file sw.txt is empty (or only whitespace)"),
        (
            ("big.txt", b"a" * (model.MAX_UPLOAD_BYTES + 1)),
            "the training file big.txt is 2.0 MiB; the Fairness page "
            "takes up to 2.0 MiB a file (it trains while you wait)",
        ),
    ],
)
def test_an_uploaded_part_that_cannot_be_read_says_what_to_do(upload, message):
    with pytest.raises(ConfigError) as err:
        model.upload_text("training", upload, required=True)
    assert str(err.value) == message


def test_an_uploaded_part_is_its_text_and_an_optional_one_may_be_absent():
    assert model.upload_text("test", None, required=False) is None
    assert model.upload_text("development", ("d.txt", "Habari, dunia ✓".encode()), required=True) == "Habari, dunia ✓"


def test_a_new_languages_name_is_tidied_and_refused_when_empty_long_or_taken():
    uploads = {"up:k": Language("up:k", "Kiswahili", "t", "d", "d", held_out=False)}
    taken = model.taken_names(uploads)
    assert {"english", "hindi", "kiswahili", "kiswahili (no test file)"} <= taken
    assert model.tidy_name("  Kiswahili \n sanifu ") == "Kiswahili sanifu"
    model.check_name("Kiswahili sanifu", taken)  # free: no error
    cases = {"": "give the language a name", "x" * 41: "a name of at most 40 characters, please"}
    cases |= {"ENGLISH": "there is a language called ENGLISH already: give another name"}
    cases |= {"kiswahili": "there is a language called kiswahili already: give another name"}
    for name, message in cases.items():
        with pytest.raises(ConfigError) as err:
            model.check_name(name, taken)
        assert str(err.value) == message
    model.check_name("x" * 40, taken)
    assert model.refused_note("", ConfigError("give the language a name")) == (
        "The language was not added: give the language a name."
    )
    assert model.refused_note("Kiswahili", ConfigError("choose the development file")) == (
        "Kiswahili was not added: choose the development file."
    )
    assert model.added_note("Kiswahili") == "Kiswahili added: press Train both."


def test_the_language_picker_labels_an_upload_without_a_test_file_and_adds_new_ones_last():
    uploads = {
        "up:k": Language("up:k", "Kiswahili", "t", "d", "d", held_out=False),
        "up:y": Language("up:y", "Yoruba", "t", "d", "x"),
    }
    labels = [model.language_label(k, uploads) for k in ("zh_hans", "up:k", "up:y", "up:gone")]
    assert labels == ["Chinese (simplified)", "Kiswahili (no test file)", "Yoruba", "up:gone"]
    assert model.with_language(["en", "up:k", "hi"], "up:k") == ["en", "hi", "up:k"]
    full = [f"l{i}" for i in range(model.MAX_LANGUAGES)]
    assert model.with_language(full, "up:k") == full[1:] + ["up:k"]


# ---- the link ------------------------------------------------------------------------------------------
def test_the_link_names_the_request_the_merge_shown_and_only_its_variants_options():
    assert model.link_params(Request(), None) == {
        "fair": "en,hi,zh_hans,ar,ru",
        "fair_preset": "gpt2",
        "fair_merges": "500",
        "fair_variant": "parity",
    }
    window = Request(("en", "ko"), "sennrich", 300, "parity-window", 20, 1.5, 77)
    assert model.link_params(window, 0) == {
        "fair": "en,ko",
        "fair_preset": "sennrich",
        "fair_merges": "300",
        "fair_variant": "parity-window",
        "fair_window": "20",
        "fair_alpha": "1.5",
        "fair_k": "0",
    }
    hybrid = dataclasses.replace(window, variant="parity-hybrid")
    assert {k: v for k, v in model.link_params(hybrid, 7).items() if k not in ("fair", "fair_preset")} == {
        "fair_merges": "300",
        "fair_variant": "parity-hybrid",
        "fair_global": "77",
        "fair_k": "7",
    }


@pytest.mark.parametrize(
    "request_",
    [
        Request(),
        Request(("en", "ko", "el"), "sennrich", 200, "parity-hybrid", global_merges=50),
        Request(("ar", "ru"), "bytes", 5000, "parity-window", 1, 20.0),
    ],
)
def test_a_link_reads_back_as_the_request_and_merge_it_came_from(request_):
    link = model.read_link(model.link_params(request_, 42), restore=pytest.fail)
    assert link == (request_, 42, [])


def test_a_link_with_bad_values_says_each_and_opens_the_nearest_view():
    gone: list[str] = []

    def restore(key: str) -> str | None:
        gone.append(key)
        return None if key == "up:" + "ab" * 32 else f"{key[:6]} is gone"

    params = {
        "fair": "en,xx,up:" + "ab" * 32 + ",up:cd,hi,,ko",
        "fair_preset": "nope",
        "fair_merges": "5",
        "fair_variant": "fair",
        "fair_window": "0",
        "fair_alpha": "0.5",
        "fair_global": "x",
        "fair_k": "9999",
    }
    link = model.read_link(params, restore=restore)
    assert gone == ["up:" + "ab" * 32, "up:cd"]
    assert link == (
        Request(("en", "up:" + "ab" * 32, "hi", "ko")),
        None,
        [
            "fair names a language that is neither bundled nor added: 'xx'",
            "up:cd is gone",
            "fair_preset='nope' is not one of " + ", ".join(PRESETS),
            "fair_variant='fair' is not one of parity, parity-window, parity-hybrid",
            "fair_merges='5' in the link is not a whole number from 10 to 5,000",
            "fair_window='0' in the link is not a whole number from 1 to 5,000",
            "fair_global='x' in the link is not a whole number from 1 to 5,000",
            "fair_alpha='0.5' is not a number from 1 to 20",
            "fair_k='9999' in the link is not a whole number from 0 to 5,000",
        ],
    )


def test_a_link_with_too_few_languages_trains_the_defaults_beside_them_and_no_more_than_twelve():
    assert model.read_link({"fair": "hi"}, restore=pytest.fail).request.languages == ("hi", "en", "zh_hans", "ar", "ru")
    many = [*model.UDHR_LANGUAGES, *(f"up:{i:064x}" for i in range(6))]  # 8 bundled, 6 added
    assert len(many) == 14
    link = model.read_link({"fair": ",".join(many)}, restore=lambda key: None)
    assert link.request.languages == tuple(many[:12])
    assert model.read_link({"preset": "gpt2", "k": "3"}, restore=pytest.fail) is None  # not this page's link


# ---- the keys ---------------------------------------------------------------------------------------------


def test_every_key_the_model_names_is_a_widget_of_the_fairness_page_and_every_widget_is_named():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.query_params.update({"fair": "en,hi", "fair_preset": "sennrich", "fair_merges": "10"})
    at.switch_page("pages/6_Fairness.py").run()  # the settings, the upload form, the controls: all drawn
    seen = widget_keys(at)
    assert not at.exception and at.session_state[Session.REQUEST] == Request(("en", "hi"), "sennrich", 10)
    assert_keys_named(seen, Keys)
    # an added language: the next round of file pickers, and every session key the page keeps
    at.text_input(key=Keys.UPLOAD_NAME).input("Kiswahili")
    for uploader, part in zip(at.file_uploader, (b"habari habari dunia", b"habari dunia")):
        uploader.upload("sw.txt", part, "text/plain")
    at.button(key=Keys.ADD).click().run()
    assert not at.error and at.success[0].value.startswith("Kiswahili added")
    assert {Keys.upload_part(p, 1) for p in ("train", "dev", "test")} <= widget_keys(at)
    kept = set(constants(Session).values()) - {Session.UPLOAD_NOTE}  # the note is said once, then dropped
    assert [k for k in kept if k not in at.session_state] == []


def test_the_fairness_model_imports_no_streamlit():
    """Imported alone, the model (and the link's counts it reads) needs no Streamlit, nor the
    frames and charts the page draws with."""
    code = (
        "import sys\n"
        "import explorer.ui.fairness_model\n"
        "assert 'explorer.ui.params' in sys.modules\n"
        "drawing = [m for m in ('streamlit', 'pandas', 'altair') if m in sys.modules]\n"
        "assert not drawing, drawing\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
