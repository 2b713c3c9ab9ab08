"""The Variants page with AppTest: every number it shows is recomputed here from the engine alone
(SuperBPE and classical training, the encoder, ``scaffold``, ``scan``), not read from the page's
own helpers."""

from __future__ import annotations

import html
import re
from collections import Counter

import pytest
from conftest import ROOT, read_sample, unescaped
from streamlit.testing.v1 import AppTest

from explorer import Trainer, load_pretrained, make_config
from explorer.analysis.fairness import renyi_efficiency
from explorer.analysis.health import scan
from explorer.analysis.scaffold import scaffold

APP = str(ROOT / "app.py")
TIMEOUT = 300
CORPUS, HELD_OUT = "english_tiny_shakespeare.txt", "english_frankenstein.txt"
MERGES = 500  # the tests' budget: the page's default trains 3,000


def cut(text: str, limit: int) -> str:
    """The page's rule, written again: at most ``limit`` characters, ending at a line end."""
    if len(text) <= limit:
        return text
    return text[: text.rfind("\n", 0, limit) + 1]


CORPUS_TEXT = cut(read_sample(CORPUS), 300_000)
HELD_OUT_TEXT = cut(read_sample(HELD_OUT), 100_000)


def trained(merges: int, transition: int | None) -> Trainer:
    cfg = make_config("gpt2", vocab_size=None, num_merges=merges, sequences="lines", superbpe_transition=transition)
    return Trainer.from_texts(CORPUS_TEXT, cfg).run()


def held_out(trainer: Trainer) -> dict:
    """What the engine's tokenizer makes of the held-out text, counted here."""
    ids = trainer.tokenizer().encode(HELD_OUT_TEXT)
    return {
        "tokens": len(ids),
        "bpt": len(HELD_OUT_TEXT.encode()) / len(ids),
        "renyi": renyi_efficiency(ids),
        "superwords": sum(
            1
            for i in trainer.tokenizer().merged_ids
            if " " in (t := trainer.tokenizer().decode([i]))[1:].rstrip(" ") and t.strip()
        ),
    }


def variants_page(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.switch_page("pages/7_Variants.py").run()  # a link opens its own page first
    assert not at.exception, at.exception
    return at


def cards(at: AppTest) -> dict[str, tuple[str, str]]:
    """The headline cards: {panel: (number, sentence)}, as a reader sees them."""
    body = next(e.proto.body for e in at.get("html") if "bpe-cards" in e.proto.body)
    found = re.findall(
        r'bpe-card-panel">(.*?)</div><div class="bpe-card-number">(.*?)</div><div class="bpe-card-text">(.*?)</div>',
        body,
    )
    return {html.unescape(p): (html.unescape(n), html.unescape(s)) for p, n, s in found}


def html_with(at: AppTest, marker: str) -> str:
    return next(e.proto.body for e in at.get("html") if marker in e.proto.body)


def open_tab(at: AppTest, label: str) -> AppTest:
    at.session_state["w_var_tab"] = label
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def page():
    """The page at the tests' budget (a link names it), transition 80%."""
    return variants_page(var_merges=str(MERGES))


@pytest.fixture(scope="module")
def classical():
    return trained(MERGES, None)


def test_the_default_view_draws_its_headline_charts_and_superwords_without_exception():
    at = variants_page()
    head = cards(at)
    assert list(head) == ["SuperBPE at t = 80%", "Bytes per token", "Rényi efficiency (α = 2.5)", "Superword tokens"]
    assert len(at.get("arrow_vega_lite_chart")) + len(at.get("vega_lite_chart")) == 3
    assert "superword tokens" in html_with(at, "var-superwords")
    assert at.query_params["var_merges"] == "3000" and at.query_params["var_t"] == "80"


@pytest.mark.parametrize("share", [80, 50, 100])
def test_the_transition_slider_gives_the_headline_the_engine_computes(page, classical, share):
    page.select_slider(key="w_var_share").set_value(share).run()
    assert not page.exception, page.exception
    c, s = held_out(classical), held_out(trained(MERGES, MERGES * share // 100))
    head = cards(page)
    change = (s["tokens"] - c["tokens"]) / c["tokens"]
    assert head[f"SuperBPE at t = {share}%"] == (
        f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}",
        f"tokens on held-out text ({HELD_OUT}): {s['tokens']:,} against classical BPE's {c['tokens']:,}",
    )
    assert head["Bytes per token"][0] == f"{c['bpt']:.2f} → {s['bpt']:.2f}"
    assert head["Rényi efficiency (α = 2.5)"][0] == f"{c['renyi']:.3f} → {s['renyi']:.3f}"
    assert head["Superword tokens"][0] == f"{s['superwords']:,}"
    t = MERGES * share // 100
    assert head["Superword tokens"][1].startswith(f"of the {MERGES - t:,} merges after the transition span a space")
    if share == 100:  # SuperBPE with t at the last merge is classical BPE
        assert s["tokens"] == c["tokens"] and s["superwords"] == 0
    assert page.query_params["var_t"] == str(share)


def scaffold_shown(at: AppTest) -> tuple[int, list[int]]:
    """(the count in the strip, the ids of the table's rows, in order)."""
    strip = html_with(at, "scaffold tokens at this")
    count = int(
        re.search(r'bpe-stat-value">([\d,]+)</div><div class="bpe-stat-label">scaffold', strip)[1].replace(",", "")
    )
    rows = [int(i) for i in re.findall(r'<tr data-id="(\d+)"', html_with(at, "var-scaffold"))] if count else []
    return count, rows


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.01])
def test_tau_changes_the_scaffold_list_as_scaffold_says(page, classical, tau):
    open_tab(page, "Scaffold tokens")
    page.select_slider(key="w_var_tau").set_value(tau).run()
    assert not page.exception, page.exception
    report = scaffold(classical.tokenizer(), CORPUS_TEXT, tau=tau)
    count, rows = scaffold_shown(page)
    assert count == len(report.scaffold) > 0
    assert rows == [u.id for u in report.scaffold][:40]
    assert page.query_params["var_tau"] == f"{tau:g}"


def test_tau_zero_shows_no_scaffold_token(page):
    open_tab(page, "Scaffold tokens")
    page.select_slider(key="w_var_tau").set_value(0.0).run()
    assert scaffold_shown(page) == (0, [])


def test_the_health_counts_are_scans_of_each_tokenizer(page):
    open_tab(page, "Token health")
    table = html_with(page, "var-health")
    rows = dict(re.findall(r'<tr data-name="([^"]+)">(.*?)</tr>', table))
    assert list(rows) == ["gpt2", "cl100k_base", "o200k_base", "trained"]
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        report = scan(load_pretrained(name), reference=CORPUS_TEXT)
        cells = re.findall(r'class="num">([^<]*)</td>', rows[name])
        unused = len(report.unused)
        assert cells == [
            f"{report.tokens:,}",
            f"{len(report.unreachable):,}",
            f"{len(report.partial_utf8):,}",
            f"{unused:,} ({unused / report.tokens:.0%})",
        ], name
    # the session's tokenizer (the default corpus and preset, at its step: 0 on a new session)
    live = page.session_state["live"]
    report = scan(live.tokenizer(live.view), reference=CORPUS_TEXT)
    cells = re.findall(r'class="num">([^<]*)</td>', rows["trained"])
    assert cells[:3] == [f"{report.tokens:,}", f"{len(report.unreachable):,}", f"{len(report.partial_utf8):,}"]
    assert cells[3].startswith(f"{len(report.unused):,} (")
    # o200k_base's unreachable " I'" (its pieces " I" + "'"), shown with a link into Why this split
    assert "Playground?text=+I%27&amp;tokenizers=o200k_base&amp;view=why" in html_with(page, "Unreachable")


def test_a_link_opens_its_tab_and_settings_and_a_bad_value_is_said_in_one_line():
    at = variants_page(var_merges=str(MERGES), var_t="50", var_tab="scaffold", var_tau="0.5", var_tok="superbpe")
    assert "SuperBPE at t = 50%" in cards(at)
    assert at.session_state["w_var_tab"] == "Scaffold tokens" and at.session_state["w_var_tau"] == 0.5
    report = scaffold(trained(MERGES, MERGES // 2).tokenizer(), CORPUS_TEXT, tau=0.5)
    assert scaffold_shown(at)[0] == len(report.scaffold)
    bad = variants_page(var_merges=str(MERGES), var_t="55", var_corpus="nope.txt")
    warning = unescaped(bad.warning[0].value)
    assert "var_t=55 is not a multiple of 10" in warning and "'nope.txt' is not a bundled sample" in warning
    assert "SuperBPE at t = 80%" in cards(bad)


def test_superword_tokens_are_listed_most_used_on_held_out_text_first(page):
    page.select_slider(key="w_var_share").set_value(50).run()
    open_tab(page, "Superwords")
    tok = trained(MERGES, MERGES // 2).tokenizer()
    used = Counter(tok.encode(HELD_OUT_TEXT))
    chips = re.findall(r'title="id (\d+) ', html_with(page, "var-superwords"))
    counts = [used[int(i)] for i in chips]
    assert chips and counts == sorted(counts, reverse=True)
    assert all(" " in tok.decode([int(i)]).strip() for i in chips)


def test_the_session_tokenizer_without_merges_says_to_step_it_first(page):
    open_tab(page, "Scaffold tokens")
    page.selectbox(key="w_var_scaffold_tok").set_value("trained").run()
    assert not page.exception, page.exception
    assert any("has no merges yet" in i.value for i in page.info)
    page.selectbox(key="w_var_scaffold_tok").set_value("classical").run()


def test_one_held_out_line_is_shown_both_ways_the_line_using_most_superwords(page, classical):
    page.select_slider(key="w_var_share").set_value(80).run()
    open_tab(page, "Superwords")
    superbpe = trained(MERGES, MERGES * 80 // 100).tokenizer()
    superwords = {i for i in superbpe.merged_ids if " " in (t := superbpe.decode([i]))[1:].rstrip(" ") and t.strip()}
    lines = [ln.strip() for ln in HELD_OUT_TEXT.splitlines() if len(ln.strip()) >= 50][:400]
    uses = [sum(i in superwords for i in superbpe.encode(ln)) for ln in lines]
    line = lines[uses.index(max(uses))]
    panel = html_with(page, "One held-out line, both ways")
    heads = re.findall(r'bpe-strip-head"><b>(.*?)</b> · ([\d,]+) tokens', panel)
    assert heads == [
        ("classical", f"{len(classical.tokenizer().encode(line)):,}"),
        ("SuperBPE", f"{len(superbpe.encode(line)):,}"),
    ]
    assert max(uses) > 0 and len(superbpe.encode(line)) < len(classical.tokenizer().encode(line))
