"""The Fairness page with AppTest: classical and parity-aware BPE side by side. Every sentence and
number the page shows is checked against the engine run here on its own (ParityTrainer, the
tokenizer's own encode of the held-out articles, the Gini coefficient from its definition)."""

from __future__ import annotations

import html
import json
import re
import unicodedata

import pyarrow as pa
import pytest
from conftest import ROOT, as_drawn, counted, shown, unescaped
from streamlit.testing.v1 import AppTest
from test_compare_page import headlines as cards  # the headline cards: panel -> (number, sentence)

from explorer import Balance, ParityTrainer, corpus_config
from explorer.formats.parallel import UDHR_LANGUAGES, udhr_split
from explorer.ui.fairness_model import Keys, Session

APP = str(ROOT / "app.py")
PAGE = "pages/6_Fairness.py"
TIMEOUT = 120
DEFAULT = ("en", "hi", "zh_hans", "ar", "ru")
NAMES = [UDHR_LANGUAGES[c] for c in DEFAULT]
TRAIN_BOTH = Keys.TRAIN
ADD = Keys.ADD


# ---- the engine alone ----------------------------------------------------------------------
def engine(mode: str, codes=DEFAULT, merges: int = 500, **options) -> ParityTrainer:
    parts = [udhr_split(c) for c in codes]
    config = corpus_config("gpt2", merges=merges)
    return ParityTrainer(
        [p.train for p in parts], [p.dev for p in parts], config, balance=Balance(mode, **options)
    ).run()


@pytest.fixture(scope="module")
def runs() -> dict[str, ParityTrainer]:
    return {"classical": engine("classical"), "parity": engine("parity")}


def gini(xs: list[int]) -> float:
    """The definition: the mean absolute difference over all ordered pairs over twice the mean."""
    n, mean = len(xs), sum(xs) / len(xs)
    return sum(abs(a - b) for a in xs for b in xs) / (2 * n * n * mean)


def dev_before(t: ParityTrainer, k: int) -> tuple[int, ...]:
    return t.initial_dev_tokens if k == 1 else t.records[k - 2].dev_tokens


def set_apart(text: str) -> str:
    """A token that holds right-to-left letters, in a right-to-left isolate (U+2067 … U+2069), as
    issue 33 asks of every page: unicodedata's bidi classes, not the app's rule."""
    rtl = any(unicodedata.bidirectional(ch) in ("R", "AL", "AN") for ch in text)
    return f"\u2067{text}\u2069" if rtl else text


def pair(r, show=shown) -> str:
    left, right, token = (set_apart(show(t)) for t in (r.left, r.right, r.token))
    return f"(‘{left}’ + ‘{right}’ → ‘{token}’)"


def classical_sentence(t: ParityTrainer, k: int, names=NAMES, show=shown) -> str:
    r = t.records[k - 1]
    saved = [b - a for b, a in zip(dev_before(t, k), r.dev_tokens)]
    most = saved.index(max(saved))
    return (
        f"Merge {k} {pair(r, show)} was the most frequent pair of all languages together ({r.count:,} times); "
        f"it shortened {names[most]}'s development text most, by {saved[most]:,} token{'s' * (saved[most] != 1)}."
    )


def parity_sentence(t: ParityTrainer, k: int, names=NAMES) -> str:
    r = t.records[k - 1]
    before = dev_before(t, k)
    assert r.rule == "worst" and names[r.served] != "English", "pick a merge that served the worst, not English"
    english = names.index("English")
    return (
        f"Merge {k} {pair(r)} served {names[r.served]}, the worst-compressed language: "
        f"{before[r.served]:,} tokens on its development text, {before[r.served] / before[english]:.2f}× English's."
    )


# ---- the page, read back -------------------------------------------------------------------
def fairness_page(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if query:
        at.query_params.update(query)
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def sentences(at: AppTest) -> list[str]:
    """Each side's step sentence, left (classical) then right, as a reader sees it."""
    found = [
        m for h in at.get("html") for m in re.findall(r'<div class="fair-say"[^>]*>(.*?)</div>', h.proto.body, re.S)
    ]
    return [html.unescape(s) for s in found]


def charts(at: AppTest) -> list[tuple[dict, dict]]:
    """Every chart: (its spec, its named datasets as DataFrames), in page order."""
    out = []
    for el in at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart"):
        frames = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in el.proto.datasets}
        out.append((json.loads(el.proto.spec), frames))
    return out


def rules(at: AppTest) -> list[int]:
    """Where each chart's rule (the merge shown) stands."""
    return [spec["layer"][-1]["encoding"]["x"]["datum"] for spec, _ in charts(at)]


def merge_slider(at: AppTest):
    """The slider of the merge shown (a new one, under a new key, each time a button moves it)."""
    (slider,) = [s for s in at.slider if s.label == "Merge shown"]
    return slider


def shown_k(at: AppTest) -> int:
    return int(at.session_state[Session.K])


# ---- tests ---------------------------------------------------------------------------------
def test_the_default_view_leads_with_held_out_gini_worst_off_and_global_cost_at_the_last_merge(runs):
    at = fairness_page()
    assert not at.error and not at.warning
    assert shown_k(at) == 500
    tests = [udhr_split(c).test for c in DEFAULT]
    counts = {m: [len(t.tokenizer(500).encode(x)) for x in tests] for m, t in runs.items()}
    got = cards(at)
    assert list(got) == ["Gini at merge 500, held-out text", "Worst-off language", "Global cost at merge 500"]
    assert got["Gini at merge 500, held-out text"][0] == (
        f"{gini(counts['classical']):.3f} → {gini(counts['parity']):.3f}"
    )
    # the point of the page: parity-aware training spreads the cost more evenly, for some global tokens
    assert gini(counts["parity"]) < gini(counts["classical"]) / 2
    worst = {m: max(c[1:]) / c[0] for m, c in counts.items()}  # English first
    assert got["Worst-off language"][0] == f"{worst['classical']:.2f}× → {worst['parity']:.2f}×"
    cost = sum(counts["parity"]) / sum(counts["classical"]) - 1
    assert got["Global cost at merge 500"][0] == f"{cost:+.1%}"
    assert (
        f"{sum(counts['classical']):,} tokens classical, {sum(counts['parity']):,} with parity"
        in (got["Global cost at merge 500"][1])
    )
    assert sentences(at) == [classical_sentence(runs["classical"], 500), sentences(at)[1]]
    # the README quotes these numbers
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"({gini(counts['classical']):.3f} classical, {gini(counts['parity']):.3f} parity)" in readme
    assert f"(+{cost:.0%} at this small budget)" in readme


def test_the_charts_are_the_engines_counts_with_a_rule_at_the_merge_shown(runs):
    at = fairness_page({"fair_k": "120"})
    drawn = charts(at)
    assert [next(n for n in frames if not n.startswith("data-")) for _, frames in drawn] == [
        "curves",
        "curves",
        "strip",
        "strip",
        "gini",
        "tokens",
    ]
    assert rules(at) == [120] * 6
    for (_, frames), mode in ((drawn[0], "classical"), (drawn[1], "parity")):
        t = runs[mode]
        curves = frames["curves"]
        assert {0, 500} <= set(curves["merge"]) and curves["merge"].nunique() > 150  # thinned, ends kept
        for k in set(curves["merge"]):
            row = curves[curves["merge"] == k].set_index("language")["tokens"]
            want = t.initial_dev_tokens if k == 0 else t.records[k - 1].dev_tokens
            assert [row[n] for n in NAMES] == list(want)
    # the strip: runs of merges, each coloured by the language it served (parity) ...
    strip = drawn[3][1]["strip"]
    served = [NAMES[r.served] for r in runs["parity"].records]
    assert [lang for s, e, lang in zip(strip.start, strip.end, strip.language) for _ in range(s, e)] == served
    assert set(strip.how) == {"served"}
    # ... and on the classical side every merge was chosen over all languages together
    assert set(drawn[2][1]["strip"].how) == {"global"}
    totals = drawn[5][1]["tokens"]
    last = totals[(totals["merge"] == 500) & (totals.side == "classical")].tokens.item()
    assert last == sum(runs["classical"].records[-1].train_tokens)


def test_back_step_ten_and_the_slider_show_the_sentence_of_that_merge(runs):
    at = fairness_page()
    at.button(key=Keys.BACK).click().run()
    assert shown_k(at) == 499
    assert sentences(at)[0] == classical_sentence(runs["classical"], 499)
    worst = [k for k, r in enumerate(runs["parity"].records, 1) if r.rule == "worst" and r.served != 0]
    k = worst[len(worst) // 3]
    merge_slider(at).set_value(k - 11).run()
    assert shown_k(at) == k - 11 and rules(at) == [k - 11] * 6
    at.button(key=Keys.STEP).click().run()
    assert sentences(at)[0] == classical_sentence(runs["classical"], k - 10)
    at.button(key=Keys.STEP10).click().run()
    assert shown_k(at) == k
    assert sentences(at) == [classical_sentence(runs["classical"], k), parity_sentence(runs["parity"], k)]
    assert rules(at) == [k] * 6
    assert at.query_params["fair_k"] == str(k)
    merge_slider(at).set_value(0).run()
    assert sentences(at)[0].startswith("No merge yet: Hindi starts with the most tokens")
    assert at.button(key=Keys.BACK).disabled and not at.button(key=Keys.STEP).disabled


def test_quick_steps_each_move_one_merge_though_the_page_is_a_run_behind(runs):
    # three Step clicks 30 ms apart: the first run's answer arrives after the second and third
    # clicks have gone out, so those two carry the slider as it was drawn before (merge 14)
    at = fairness_page({"fair_k": "14"})
    before = as_drawn(at)
    counted(at, {Keys.STEP: 1}, before)
    assert shown_k(at) == 15
    counted(at, {Keys.STEP: 3}, before)  # the second and third clicks, in one run
    assert shown_k(at) == 17
    assert sentences(at)[0] == classical_sentence(runs["classical"], 17)
    assert rules(at) == [17] * 6
    counted(at, {Keys.STEP: 3, Keys.BACK: 1})  # the newest page: one Back
    assert shown_k(at) == 16


def test_the_window_variant_says_which_language_waited_and_why():
    t = engine("parity-window", merges=300, window=20, window_alpha=1.5)
    k = next(k for k, r in enumerate(t.records, 1) if r.rule == "window")
    at = fairness_page(
        {
            "fair_variant": "parity-window",
            "fair_merges": "300",
            "fair_window": "20",
            "fair_alpha": "1.5",
            "fair_k": str(k),
        }
    )
    r = t.records[k - 1]
    before = dev_before(t, k)
    recent = [x.served for x in t.records[: k - 1] if x.served is not None][-20:]
    waited = [i for i in sorted(range(5), key=lambda i: -before[i]) if before[i] > before[r.served]]
    said = sentences(at)[1]
    assert said.startswith(f"Merge {k} {pair(r)} served {NAMES[r.served]}, {before[r.served]:,} tokens")
    for i in waited:
        if recent.count(i) > 1.5 * 20 / 5:
            assert f"{NAMES[i]} ({recent.count(i)})" in said
    assert f"share of the last {len(recent)} merges (at most 6 each)" in said
    assert cards(at)["Gini at merge " + f"{k:,}" + ", held-out text"][1].startswith("classical → parity-window")


def test_train_both_applies_the_sidebars_settings_and_the_link_rebuilds_the_view():
    at = fairness_page()
    at.multiselect(key=Keys.LANGUAGES).set_value(["en", "ko", "el"])
    at.selectbox(key=Keys.PRESET).set_value("sennrich")
    at.number_input(key=Keys.MERGES).set_value(200)
    at.radio(key=Keys.VARIANT).set_value("parity-hybrid")
    at.number_input(key=Keys.GLOBAL).set_value(50)
    at.button(key=TRAIN_BOTH).click().run()
    assert not at.exception and shown_k(at) == 200
    merge_slider(at).set_value(73).run()
    link = dict(at.query_params)
    assert {k: v for k, v in link.items() if k.startswith("fair")} == {
        "fair": "en,ko,el",
        "fair_preset": "sennrich",
        "fair_merges": "200",
        "fair_variant": "parity-hybrid",
        "fair_global": "50",
        "fair_k": "73",
    }
    again = fairness_page(link)
    assert not again.warning
    assert sentences(again) == sentences(at) and cards(again) == cards(at)
    assert again.multiselect(key=Keys.LANGUAGES).value == ["en", "ko", "el"]
    assert again.radio(key=Keys.VARIANT).value == "parity-hybrid"
    # hybrid: its first 50 merges are classical ones, chosen over all languages together
    codes = ("en", "ko", "el")
    hybrid = ParityTrainer(
        [udhr_split(c).train for c in codes],
        [udhr_split(c).dev for c in codes],
        corpus_config("sennrich", merges=200),
        balance=Balance("parity-hybrid", global_merges=50),
    ).run()
    assert hybrid.records[49].served is None and hybrid.records[50].served is not None
    merge_slider(at).set_value(50).run()
    names = ["English", "Korean", "Greek"]
    assert sentences(at)[1] == classical_sentence(hybrid, 50, names, show=str)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"fair": "en,xx"}, "fair names a language that is neither bundled nor added: 'xx'"),
        ({"fair_preset": "nope"}, "fair_preset='nope' is not one of"),
        ({"fair_merges": "5"}, "fair_merges='5' in the link is not a whole number from 10 to 5,000"),
        ({"fair_variant": "fair"}, "fair_variant='fair' is not one of parity, parity-window, parity-hybrid"),
        ({"fair_alpha": "0.5", "fair_variant": "parity-window"}, "fair_alpha='0.5' is not a number from 1 to 20"),
        ({"fair": "up:" + "ab" * 32}, "a language you added it names (abababababab…) is no longer on this server"),
    ],
)
def test_a_link_with_a_bad_value_says_so_in_one_line_and_opens_the_nearest_view(query, message):
    at = fairness_page(query)
    (warning,) = at.warning
    assert message in unescaped(warning.value)
    assert cards(at)  # the nearest view: still trained and drawn


def test_a_hybrid_with_no_merge_left_for_parity_says_what_to_change():
    at = fairness_page({"fair_variant": "parity-hybrid", "fair_merges": "100", "fair_global": "100"})
    (error,) = at.error
    assert "global merges leave none of the 100 for parity" in unescaped(error.value)
    assert not cards_or_none(at)


def cards_or_none(at: AppTest):
    return [h for h in at.get("html") if 'class="bpe-cards"' in h.proto.body]


# ---- uploads -------------------------------------------------------------------------------
SWAHILI_TRAIN = "Kila mtu ana haki ya kuishi, uhuru na usalama wa maisha yake.\n" * 40
SWAHILI_DEV = "Hakuna mtu atakayefanywa mtumwa au kutumikishwa.\n" * 6


def add_language(at: AppTest, name: str, train=None, dev=None, test=None) -> AppTest:
    at.text_input(key=Keys.UPLOAD_NAME).input(name)
    for uploader, part in zip(at.file_uploader, (train, dev, test)):
        if part is not None:
            uploader.upload(*part)
    return at.button(key=ADD).click().run()


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (
            {"train": ("sw.txt", b"caf\xe9 ok", "text/plain")},
            "the training file sw.txt: the file is not valid UTF-8: byte 0xe9 at offset 3 cannot be decoded. "
            "Save it as UTF-8 text",
        ),
        ({"train": ("sw.txt", SWAHILI_TRAIN.encode(), "text/plain")}, "choose the development file"),
        (
            {"train": ("sw.txt", b" \n\t ", "text/plain"), "dev": ("d.txt", b"x", "text/plain")},
            "the training file sw.txt is empty",
        ),
        (
            {"train": ("big.txt", b"a" * (2 * 1024 * 1024 + 1), "text/plain"), "dev": ("d.txt", b"x", "text/plain")},
            "the training file big.txt is 2.0 MiB; the Fairness page takes up to 2.0 MiB a file",
        ),
        (
            {"train": ("b.bin", b"\x00\x01" * 10, "application/octet-stream"), "dev": ("d.txt", b"x", "text/plain")},
            "NUL bytes",
        ),
    ],
)
def test_a_bad_upload_says_what_is_wrong_and_adds_nothing(parts, message):
    at = fairness_page()
    add_language(at, "Swahili", parts.get("train"), parts.get("dev"), parts.get("test"))
    assert not at.exception
    (error,) = at.error
    assert unescaped(error.value).startswith("Swahili was not added: ")
    assert message in unescaped(error.value)
    assert not [o for o in at.multiselect(key=Keys.LANGUAGES).options if "Swahili" in o]


def test_a_name_taken_or_missing_is_refused():
    at = fairness_page()
    add_language(at, "english", ("a.txt", b"abc", "text/plain"), ("b.txt", b"abc", "text/plain"))
    assert "there is a language called english already" in unescaped(at.error[0].value)
    add_language(at, "   ", ("a.txt", b"abc", "text/plain"), ("b.txt", b"abc", "text/plain"))
    assert "give the language a name" in unescaped(at.error[0].value)


def test_an_added_language_trains_beside_the_bundled_ones_shows_escaped_and_travels_in_the_link():
    at = fairness_page()
    name = "<b>Swa*hili*</b>"
    add_language(
        at,
        name,
        ("sw.txt", SWAHILI_TRAIN.encode(), "text/plain"),
        ("dev.txt", SWAHILI_DEV.encode(), "text/plain"),
    )
    assert not at.error
    assert "added: press Train both" in unescaped(at.success[0].value)
    at.button(key=TRAIN_BOTH).click().run()
    assert not at.exception and not at.error
    bodies = " ".join(h.proto.body for h in at.get("html"))
    assert "<b>Swa" not in bodies and "&lt;b&gt;Swa*hili*&lt;/b&gt;" in bodies  # legend, sentences, cards
    legend = next(h.proto.body for h in at.get("html") if "fair-legend" in h.proto.body)
    assert "&lt;b&gt;Swa*hili*&lt;/b&gt;" in legend
    assert f"{name} (no test file)" in at.multiselect(key=Keys.LANGUAGES).format_func(
        at.session_state[Keys.LANGUAGES][-1]
    )
    # no test file: its development text stands in, and the headline says so
    assert f"({name}: development text)" in next(iter(cards(at).values()))[1]
    key = at.query_params["fair"].split(",")[-1]
    assert key.startswith("up:") and len(key) == 3 + 64
    curves = charts(at)[0][1]["curves"]
    assert name in set(curves.language)
    # a new session opened on the link reads the language back from the store
    again = fairness_page(dict(at.query_params))
    assert not again.warning and cards(again) == cards(at)


def language_table(at: AppTest) -> list[list[str]]:
    body = next(h.proto.body for h in at.get("html") if "fair-langs" in h.proto.body)
    rows = re.findall(r"<tr><td>(.*?)</tr>", body, re.S)
    return [[html.unescape(c) for c in re.findall(r"(?:^|<td[^>]*>)([^<]*)</td>", "<td>" + row)] for row in rows]


def test_the_table_gives_each_languages_test_tokens_and_the_merges_it_got_at_k(runs):
    at = fairness_page({"fair_k": "200"})
    served = [r.served for r in runs["parity"].records[:200]]
    helped = []  # each classical merge counts for the language whose development text it shortened most
    for k in range(1, 201):
        saved = [b - a for b, a in zip(dev_before(runs["classical"], k), runs["classical"].records[k - 1].dev_tokens)]
        helped.append(saved.index(max(saved)))
    tests = [udhr_split(c).test for c in DEFAULT]
    counts = {m: [len(t.tokenizer(200).encode(x)) for x in tests] for m, t in runs.items()}
    rows = language_table(at)
    assert [r[0] for r in rows] == NAMES
    for i, row in enumerate(rows):
        c, p = counts["classical"], counts["parity"]
        assert row[1:] == [
            f"{c[i]:,}",
            f"{c[i] / c[0]:.2f}",
            f"{helped.count(i):,}",
            f"{p[i]:,}",
            f"{p[i] / p[0]:.2f}",
            f"{served.count(i):,}",
        ]
    # the classical merges go mostly to the languages with the most text to gain from
    assert int(rows[NAMES.index("Hindi")][6]) > int(rows[NAMES.index("Hindi")][3])
