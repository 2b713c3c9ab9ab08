"""The Compare page with AppTest: every number it shows is recomputed here from scratch (the
engine's trainer and encoder run directly, tiktoken for the production tokenizers)."""

from __future__ import annotations

import html
import json
import re

import pandas as pd
import pytest
from conftest import ROOT, compare_chart, open_tab, read_sample, unescaped
from streamlit.testing.v1 import AppTest
from test_pretrained import oracle  # noqa: F401  (the tiktoken oracle fixture)
from tokenization_scorer import score

from explorer import PRESETS, Trainer, corpus_config
from explorer.analysis.compare import heldout_split
from explorer.stages.pipeline import count_words
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
TIMEOUT = 180
SUBMIT = "FormSubmitter:w_cmp_form-Compare"
THREE = ["udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt"]
UDHR = {
    "Arabic": "udhr_ar.txt",
    "Greek": "udhr_el.txt",
    "English": "udhr_en.txt",
    "Hindi": "udhr_hi.txt",
    "Japanese": "udhr_ja.txt",
    "Korean": "udhr_ko.txt",
    "Russian": "udhr_ru.txt",
    "Chinese (simplified)": "udhr_zh_hans.txt",
}


def compare_page(
    *, corpora=None, mode="train", preset="gpt2", merges=1000, pretrained="cl100k_base", at=None, choice=None
) -> AppTest:
    page = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if choice is not None:
        page.session_state["corpus_choice"] = choice
    page.run()
    page.switch_page("pages/4_Compare.py").run()
    assert not page.exception
    if corpora is not None:
        page.multiselect(key="w_cmp_corpora").set_value(corpora)
    page.radio(key="w_cmp_mode").set_value(mode)
    page.selectbox(key="w_cmp_preset").set_value(preset)
    page.number_input(key="w_cmp_merges").set_value(merges)
    page.selectbox(key="w_cmp_pretrained").set_value(pretrained)
    page.number_input(key="w_cmp_at").set_value(at)  # the pretrained one as of merge k (None: whole)
    page.button(key=SUBMIT).click().run()
    assert not page.exception, page.exception
    return page


@pytest.fixture(scope="module")
def three():
    """The default comparison: UDHR English, Hindi and Korean, gpt2 preset, 1,000 merges."""
    return compare_page(corpora=THREE)


def trained(text: str, preset: str = "gpt2", merges: int = 1000) -> Trainer:
    config = corpus_config(preset, merges=merges)
    return Trainer(count_words((text,), config), config, encoding=PRESETS[preset].encoding).run()


def cross_cells(at: AppTest):
    """The cross-evaluation heatmap's data, one row per cell (column names with underscores)."""
    return compare_chart(at, "bytes per token").rename(columns=lambda c: c.replace(" ", "_"))


def frame(at: AppTest, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


def language_grids(at: AppTest) -> dict[str, pd.DataFrame]:
    """The languages panel's tables ("Parity ...", "Fertility ...", "Rényi ..."), language x
    tokenizer, read back from their HTML."""
    body = "".join(h.proto.body for h in at.get("html") if 'class="bpe-grid-title"' in h.proto.body)
    out = {}
    for title, table in re.findall(
        r'<div class="bpe-grid-title">([^<]*)</div><div class="bpe-scroll">(.*?)</table>', body, re.S
    ):
        head = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", table)]
        rows = [
            [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(<td.*?)</tr>", table)
        ]
        df = pd.DataFrame(rows, columns=head).set_index("language")
        out[html.unescape(title).split(" ")[0]] = df.apply(pd.to_numeric, errors="coerce")
    return out


def gini_strip(at: AppTest) -> dict[str, float]:
    """The languages panel's Gini coefficients: tokenizer (as labelled) -> the number shown."""
    body = next(h.proto.body for h in at.get("html") if ">Gini of the token counts" in h.proto.body)
    strip = body.split('<div class="bpe-stats">', 1)[1].split('<div class="bpe-grid-title">', 1)[0]
    pairs = re.findall(r'<div class="bpe-stat-value">(.*?)</div><div class="bpe-stat-label">(.*?)</div>', strip)
    return {html.unescape(label): float(value) for value, label in pairs}


def headlines(at: AppTest) -> dict[str, tuple[str, str]]:
    """The summary's cards: panel -> (number, sentence)."""
    body = next(h.proto.body for h in at.get("html") if 'class="bpe-cards"' in h.proto.body)
    cards = re.findall(
        r'<div class="bpe-card-panel">(.*?)</div><div class="bpe-card-number">(.*?)</div>'
        r'<div class="bpe-card-text">(.*?)</div>',
        body,
    )
    return {html.unescape(p): (html.unescape(n), html.unescape(t)) for p, n, t in cards}


def test_three_corpora_show_every_panel_and_no_error(three):
    # the answer first: a headline per panel, then the panels in tabs, parity the first
    assert list(headlines(three)) == ["Parity", "Compression", "Cross-evaluation", "Overlap"]
    assert [t.label for t in three.tabs] == [
        "Parity across languages",
        "Compression curves",
        "Cross-evaluation",
        "Vocabulary overlap",
        "Token lengths",
        "What the numbers mean",
    ]
    assert not three.error and not three.warning
    assert set(compare_chart(three, "Bytes per token after k merges")["corpus"]) == set(THREE)
    metrics = next(m.value for m in open_tab(three, "What the numbers mean").markdown if "Fertility" in m.value)
    assert "Parity" in metrics and "Jaccard" in metrics and "dfrac" in metrics  # each metric with its formula


def test_cross_evaluation_cell_is_bytes_of_b_over_tokens_under_the_tokenizer_trained_on_a(three):
    cells = cross_cells(three)
    assert len(cells) == 9
    toks = {name: trained(read_sample(name)).tokenizer() for name in THREE}
    for row in cells.itertuples(index=False):
        text = read_sample(row.encoded)
        tokens = len(toks[row.trained_on].encode(text))
        assert row.tokens == tokens
        assert row.bytes_per_token == pytest.approx(len(text.encode("utf-8")) / tokens)
        assert row.tokens_per_word == pytest.approx(tokens / len(text.split()))
    # an English byte-level vocabulary carries Hindi at about one byte per token
    hi_under_en = cells[(cells.trained_on == "udhr_en.txt") & (cells.encoded == "udhr_hi.txt")].bytes_per_token.item()
    assert hi_under_en < 1.1


def test_curves_end_where_training_and_the_held_out_encoding_end(three):
    curves = compare_chart(three, "Bytes per token after k merges")
    for name in THREE:
        text = read_sample(name)
        whole = curves[(curves.corpus == name) & (curves.curve == "while training")]
        trainer = trained(text)
        assert whole.merges.iloc[-1] == len(trainer.records)
        assert whole["bytes per token"].iloc[-1] == pytest.approx(len(text.encode()) / trainer.tokens)
        train_part, held = heldout_split(text)
        assert train_part + held == text and 0.05 < len(held) / len(text) < 0.15
        held_tok = trained(train_part).tokenizer()
        held_curve = curves[(curves.corpus == name) & (curves.curve == "held-out 10%")]
        assert held_curve.merges.iloc[-1] == held_tok.num_merges
        assert held_curve["bytes per token"].iloc[-1] == pytest.approx(len(held.encode()) / len(held_tok.encode(held)))
        k = int(held_curve.merges.iloc[len(held_curve) // 2])  # a point inside the curve: the tokenizer truncated
        at_k = held_curve[held_curve.merges == k]["bytes per token"].item()
        assert at_k == pytest.approx(len(held.encode()) / len(held_tok.truncate(k).encode(held)))


def test_overlap_counts_are_set_arithmetic_on_each_trainers_merged_tokens(three):
    table = frame(open_tab(three, "Vocabulary overlap"), "Jaccard")
    made = {name: {r.token for r in trained(read_sample(name)).records} for name in THREE}
    assert len(table) == 3
    for row in table.to_dict("records"):
        a, b = made[row["A"]], made[row["B"]]
        assert (row["shared"], row["only A"], row["only B"]) == (len(a & b), len(a - b), len(b - a))
        assert row["Jaccard"] == pytest.approx(len(a & b) / len(a | b))


def test_fertility_and_parity_of_the_production_tokenizers_are_tiktokens_counts(three, oracle):  # noqa: F811
    grids = language_grids(open_tab(three, "Parity across languages"))
    parity, fertility = grids["Parity"], grids["Fertility"]
    texts = {
        "English": read_sample("udhr_en.txt"),
        "Hindi": read_sample("udhr_hi.txt"),
        "Korean": read_sample("udhr_ko.txt"),
        "Russian": read_sample("udhr_ru.txt"),
    }
    for name, column in (("gpt2", "gpt2"), ("cl100k_base", "cl100k"), ("o200k_base", "o200k")):
        enc = oracle(name).enc
        english = len(enc.encode_ordinary(texts["English"]))
        for language, text in texts.items():
            tokens = len(enc.encode_ordinary(text))
            # the tables show two decimals
            assert parity.loc[language, column] == pytest.approx(tokens / english, abs=0.005)
            assert fertility.loc[language, column] == pytest.approx(tokens / len(text.split()), abs=0.005)
    # the point of the table: an English-heavy tokenizer costs Hindi speakers several times more
    assert parity.loc["Hindi", "gpt2"] > 3 > parity.loc["Hindi", "o200k"]
    # the headline names the language GPT-2 charges most of all eight, with its parity
    enc = oracle("gpt2").enc
    english = len(enc.encode_ordinary(texts["English"]))
    by_language = {
        language: len(enc.encode_ordinary(read_sample(sample))) / english for language, sample in UDHR.items()
    }
    assert set(by_language) == set(parity.index)
    worst = max(by_language, key=by_language.get)
    number, sentence = headlines(three)["Parity"]
    assert number == f"{by_language[worst]:.1f}×" and sentence.startswith(f"{worst} costs gpt2 ")
    # the tokenizer trained here: on the English corpus, with the preset chosen
    en = trained(texts["English"]).tokenizer()
    hi = len(en.encode(texts["Hindi"])) / len(en.encode(texts["English"]))
    assert parity.loc["Hindi", "trained here"] == pytest.approx(hi, abs=0.005)


def test_one_pretrained_tokenizer_gives_one_row_per_corpus_with_tiktokens_counts(oracle):  # noqa: F811
    at = compare_page(corpora=["udhr_en.txt", "udhr_ru.txt"], mode="pretrained", pretrained="o200k_base")
    cells = cross_cells(at)
    enc = oracle("o200k_base").enc
    assert sorted(zip(cells.trained_on, cells.encoded)) == [
        ("udhr_en.txt", "udhr_en.txt"),
        ("udhr_ru.txt", "udhr_ru.txt"),
    ]
    for row in cells.itertuples(index=False):
        assert row.tokens == len(enc.encode_ordinary(read_sample(row.encoded)))
    curves = compare_chart(at, "Bytes per token after k merges")
    assert set(curves.curve) == {"as of merge k", "held-out 10%"}
    assert curves.merges.max() == 199_742  # o200k_base: 199,998 ranked tokens less the 256 single bytes
    assert "trained here" not in language_grids(open_tab(at, "Parity across languages"))["Parity"].columns
    assert list(headlines(at)) == ["Parity", "Compression", "Overlap"]  # one tokenizer: no cross-evaluation headline


def test_uploads_and_pasted_text_are_compared_and_their_names_shown_as_text():
    name = "**notes** $x$ [l](javascript:x).txt"
    choice = CorpusChoice(
        samples=(),
        uploads=((name, "a tiny <b>upload</b> text, a tiny text, tiny " * 30),),
        pasted="pasted words, pasted words again " * 30,
    )
    at = compare_page(
        corpora=["uploaded: " + name, "pasted text (Corpus page)"], preset="sennrich", merges=50, choice=choice
    )
    assert not at.error
    captions = [c.value for c in open_tab(at, "Vocabulary overlap").caption]
    shown = [unescaped(c) for c in captions if "notes" in c]
    assert any(s.startswith("Longest only in uploaded") for s in shown)
    assert shown and all(f"only in uploaded: {name}" in s for s in shown if s.startswith("Longest only in uploaded"))
    assert not any("**notes**" in c for c in captions)  # escaped, never bold
    assert all("<b>" not in h.proto.body for h in at.get("html"))


@pytest.mark.parametrize("corpora", [["udhr_en.txt"], []])
def test_fewer_than_two_corpora_get_a_message_not_a_traceback(corpora):
    at = compare_page(corpora=corpora)
    assert not at.exception
    assert [w.value for w in at.warning] == ["Choose 2 to 6 corpora, then press Compare."]
    assert not at.subheader


def test_results_stay_after_a_page_switch(three):
    at = compare_page(corpora=["udhr_en.txt", "udhr_ko.txt"], merges=200)
    at.switch_page("pages/2_Train.py").run()
    at.switch_page("pages/4_Compare.py").run()
    assert not at.exception
    assert at.multiselect(key="w_cmp_corpora").value == ["udhr_en.txt", "udhr_ko.txt"]
    assert set(compare_chart(at, "bytes per token").encoded) == {"udhr_en.txt", "udhr_ko.txt"}


def test_token_length_shares_are_the_corpus_encoded_by_its_own_tokenizer(three):
    bars = compare_chart(three, "Token length (bytes)")
    for name in THREE:
        text = read_sample(name)
        tok = trained(text).tokenizer()
        sizes = [len(tok.token_bytes(i)) for i in tok.encode(text)]
        shown = bars[bars.corpus == name].set_index("length")
        for size in set(sizes):
            if size <= 24:  # the chart stops at 24 bytes
                assert shown.loc[size, "tokens"] == sizes.count(size)
                assert shown.loc[size, "share"] == pytest.approx(sizes.count(size) / len(sizes))


def test_heatmap_rows_name_the_one_pretrained_tokenizer_not_a_training():
    at = open_tab(
        compare_page(corpora=["udhr_en.txt", "udhr_ko.txt"], mode="pretrained", pretrained="gpt2"), "Cross-evaluation"
    )
    specs = [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]
    heat = next(s for s in specs if s.get("title") == "bytes per token")
    assert heat["layer"][0]["encoding"]["y"]["title"] == "gpt2 on the corpus"


def direct_gini(counts: list[int]) -> float:
    """Mean absolute difference over all ordered pairs over twice the mean, as written."""
    mean = sum(counts) / len(counts)
    return sum(abs(a - b) for a in counts for b in counts) / len(counts) ** 2 / (2 * mean)


def test_renyi_efficiency_and_gini_of_every_tokenizer_are_those_of_its_own_ids(three, oracle):  # noqa: F811
    """The Rényi efficiency of each language's text is tokenization-scorer's over the tokenizer's
    ids (tiktoken's for the production tables), and the Gini is over the eight token counts."""
    at = open_tab(three, "Parity across languages")
    renyi, ginis = language_grids(at)["Rényi"], gini_strip(at)
    texts = {language: read_sample(sample) for language, sample in UDHR.items()}
    en = trained(texts["English"]).tokenizer()
    encoders = {"gpt2": "gpt2", "cl100k": "cl100k_base", "o200k": "o200k_base"}
    encode = {column: oracle(name).enc.encode_ordinary for column, name in encoders.items()}
    assert list(ginis) == ["trained here", "gpt2", "cl100k", "o200k"]
    assert list(renyi.columns) == ["trained here", "gpt2", "cl100k", "o200k"]
    for column, enc in [("trained here", en.encode), *encode.items()]:
        counts = []
        for language, text in texts.items():
            ids = enc(text)
            counts.append(len(ids))
            expected = score(" ".join(f"t{i}" for i in ids), metric="renyi", power=2.5)
            assert renyi.loc[language, column] == pytest.approx(expected, abs=0.005)  # shown with two decimals
        assert ginis[column] == pytest.approx(direct_gini(counts), abs=0.0005)  # three decimals
    # the older table spreads its cost over the languages less evenly
    assert ginis["gpt2"] > ginis["o200k"] > 0
    number, sentence = headlines(three)["Parity"]
    assert sentence.endswith(f". Gini across languages: {ginis['gpt2']:.2f} vs {ginis['o200k']:.2f}")
    metrics = next(m.value for m in open_tab(three, "What the numbers mean").markdown if "Fertility" in m.value)
    assert "**Rényi efficiency**" in metrics and "**Gini coefficient**" in metrics


def test_one_pretrained_tokenizer_shows_the_gini_of_the_production_tables_only():
    at = open_tab(
        compare_page(corpora=["udhr_en.txt", "udhr_ko.txt"], mode="pretrained", pretrained="gpt2"),
        "Parity across languages",
    )
    assert list(gini_strip(at)) == ["gpt2", "cl100k", "o200k"]
    assert "trained here" not in language_grids(at)["Rényi"].columns
