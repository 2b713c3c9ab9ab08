"""The Variants page with AppTest: every number it shows is recomputed here from the engine alone
(classical, SuperBPE and PickyBPE training, the encoder, ``scaffold``, ``scan``), not read from the
page's own helpers."""

from __future__ import annotations

import html
import re
from collections import Counter
from functools import cache

import pytest
from conftest import ROOT, chart_data, read_sample, unescaped
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config, load_pretrained, make_config
from explorer.analysis.fairness import renyi_efficiency
from explorer.analysis.health import scan
from explorer.analysis.scaffold import scaffold
from explorer.errors import ConfigError
from explorer.ui.render import token_label
from explorer.ui.variants_model import Keys

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


@cache  # read only: each test file trains a setting once
def trained(merges: int, transition: int | None) -> Trainer:
    cfg = make_config("gpt2", vocab_size=None, num_merges=merges, sequences="lines", superbpe_transition=transition)
    return Trainer.from_texts(CORPUS_TEXT, cfg).run()


@cache
def picky_trained(merges: int, tau: float) -> Trainer:
    """PickyBPE trained to as many live tokens as classical BPE has after ``merges`` merges."""
    size = len(trained(merges, None).tokenizer().vocab)
    cfg = make_config("gpt2", vocab_size=size, num_merges=None, sequences="lines", picky=tau)
    trainer = Trainer.from_texts(CORPUS_TEXT, cfg).run()
    assert len(trainer.tokenizer().vocab) - len(trainer.tokenizer().vocab.removed) == size
    return trainer


@cache  # the trainers are trained()'s and picky_trained()'s, read only
def held_out(trainer: Trainer) -> dict:
    """What the engine's tokenizer makes of the held-out text, counted here (the tokenizer built
    once: building it again for each merged id was ~2 s a PickyBPE trainer)."""
    tok = trainer.tokenizer()
    ids = tok.encode(HELD_OUT_TEXT)
    return {
        "tokens": len(ids),
        "bpt": len(HELD_OUT_TEXT.encode()) / len(ids),
        "renyi": renyi_efficiency(ids),
        "superwords": sum(1 for i in tok.merged_ids if " " in (t := tok.decode([i]))[1:].rstrip(" ") and t.strip()),
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
    at.session_state[Keys.TAB] = label
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
    assert list(head) == ["SuperBPE at t = 80%", "PickyBPE at τ = 0.1", "Tokens PickyBPE removed", "Superword tokens"]
    assert len(at.get("arrow_vega_lite_chart")) + len(at.get("vega_lite_chart")) == 3
    assert "superword tokens" in html_with(at, "var-superwords")
    assert at.query_params["var_merges"] == "3000" and at.query_params["var_t"] == "80"
    assert at.query_params["var_picky"] == "0.1"


@pytest.mark.parametrize("share", [80, 50, 100])
def test_the_transition_slider_gives_the_headline_the_engine_computes(page, classical, share):
    page.select_slider(key=Keys.SHARE).set_value(share).run()
    assert not page.exception, page.exception
    c, s = held_out(classical), held_out(trained(MERGES, MERGES * share // 100))
    head = cards(page)
    change = (s["tokens"] - c["tokens"]) / c["tokens"]
    assert head[f"SuperBPE at t = {share}%"] == (
        f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}",
        f"tokens on held-out text ({HELD_OUT}): {s['tokens']:,} against classical BPE's {c['tokens']:,}",
    )
    bpt = chart_data(page, "bytes per token").set_index("tokenizer")["value"]
    renyi = chart_data(page, "Rényi efficiency (α = 2.5)").set_index("tokenizer")["value"]
    assert bpt["classical"] == round(c["bpt"], 3) and bpt["SuperBPE"] == round(s["bpt"], 3)
    assert renyi["classical"] == round(c["renyi"], 3) and renyi["SuperBPE"] == round(s["renyi"], 3)
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
    page.select_slider(key=Keys.TAU).set_value(tau).run()
    assert not page.exception, page.exception
    report = scaffold(classical.tokenizer(), CORPUS_TEXT, tau=tau)
    count, rows = scaffold_shown(page)
    assert count == len(report.scaffold) > 0
    assert rows == [u.id for u in report.scaffold][:40]
    assert page.query_params["var_tau"] == f"{tau:g}"


def test_tau_zero_shows_no_scaffold_token(page):
    open_tab(page, "Scaffold tokens")
    page.select_slider(key=Keys.TAU).set_value(0.0).run()
    assert scaffold_shown(page) == (0, [])


def health_cells(report) -> list[str]:
    """A health row's number cells as the page writes them from a scan: tokens, unreachable,
    partial UTF-8, unused (and its share)."""
    unused = len(report.unused)
    return [
        f"{report.tokens:,}",
        f"{len(report.unreachable):,}",
        f"{len(report.partial_utf8):,}",
        f"{unused:,} ({unused / report.tokens:.0%})",
    ]


def test_the_health_counts_are_scans_of_each_tokenizer(page):
    open_tab(page, "Token health")
    table = html_with(page, "var-health")
    rows = dict(re.findall(r'<tr data-name="([^"]+)">(.*?)</tr>', table))
    assert list(rows) == ["gpt2", "cl100k_base", "o200k_base", "trained"]
    for name in ("gpt2", "cl100k_base", "o200k_base"):
        report = scan(load_pretrained(name), reference=CORPUS_TEXT)
        assert re.findall(r'class="num">([^<]*)</td>', rows[name]) == health_cells(report), name
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
    assert at.session_state[Keys.TAB] == "Scaffold tokens" and at.session_state[Keys.TAU] == 0.5
    report = scaffold(trained(MERGES, MERGES // 2).tokenizer(), CORPUS_TEXT, tau=0.5)
    assert scaffold_shown(at)[0] == len(report.scaffold)
    bad = variants_page(var_merges=str(MERGES), var_t="55", var_corpus="nope.txt")
    warning = unescaped(bad.warning[0].value)
    assert "var_t=55 is not a multiple of 10" in warning and "'nope.txt' is not a bundled sample" in warning
    assert "SuperBPE at t = 80%" in cards(bad)


def test_superword_tokens_are_listed_most_used_on_held_out_text_first(page):
    page.select_slider(key=Keys.SHARE).set_value(50).run()
    open_tab(page, "Superwords")
    tok = trained(MERGES, MERGES // 2).tokenizer()
    used = Counter(tok.encode(HELD_OUT_TEXT))
    chips = re.findall(r'title="id (\d+) ', html_with(page, "var-superwords"))
    counts = [used[int(i)] for i in chips]
    assert chips and counts == sorted(counts, reverse=True)
    assert all(" " in tok.decode([int(i)]).strip() for i in chips)


def test_the_session_tokenizer_without_merges_says_to_step_it_first(page):
    open_tab(page, "Scaffold tokens")
    page.selectbox(key=Keys.SCAFFOLD_TOKENIZER).set_value("trained").run()
    assert not page.exception, page.exception
    assert any("has no merges yet" in i.value for i in page.info)
    page.selectbox(key=Keys.SCAFFOLD_TOKENIZER).set_value("classical").run()


def test_one_held_out_line_is_shown_both_ways_the_line_using_most_superwords(page, classical):
    page.select_slider(key=Keys.SHARE).set_value(80).run()
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


# ---- PickyBPE ------------------------------------------------------------------------------------
def removal_text(tok, trainer: Trainer, r) -> str:
    """A removal's sentence, written here from the record and the tokenizer's tokens."""

    def q(i: int) -> str:
        return "‘" + token_label(tok, i) + "’"

    merged = trainer.records[r.after - 1].token_id
    parts = " + ".join(q(i) for i in r.parts)
    return (
        f"after merge {r.after:,}: {q(r.token_id)} removed — alone {r.alone:,}, inside {q(merged)} {r.inside:,} "
        f"— split into {parts}"
    )


def timeline_rows(at: AppTest) -> list[tuple[str, str, str]]:
    """The timeline's rows as (kind, merge number, what happened), as a reader sees them."""
    table = html_with(at, "var-timeline")
    rows = re.findall(r'<tr class="var-tl-(merge|removal)" data-(?:merge|after)="(\d+)".*?<td>([^<]*)</td></tr>', table)
    return [(kind, k, html.unescape(text)) for kind, k, text in rows]


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.0])
def test_the_tau_slider_gives_the_pickybpe_headline_and_bars_the_engine_computes(page, classical, tau):
    page.select_slider(key=Keys.PICKY).set_value(tau).run()
    assert not page.exception, page.exception
    picky = picky_trained(MERGES, tau)
    c, p = held_out(classical), held_out(picky)
    head = cards(page)
    change = (p["tokens"] - c["tokens"]) / c["tokens"]
    number, sentence = head[f"PickyBPE at τ = {tau:g}"]
    assert number == f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}"
    assert sentence.startswith(f"tokens on held-out text: {p['tokens']:,} against {c['tokens']:,}")
    assert f"T = {1 / (1 + tau):.2f}" in sentence
    removals = picky.records.all_removals()
    assert head["Tokens PickyBPE removed"][0] == f"{len(removals):,}"
    assert head["Tokens PickyBPE removed"][1].startswith(
        f"it made {len(picky.merges):,} merges to classical BPE's {MERGES:,}"
    )
    bpt = chart_data(page, "bytes per token").set_index("tokenizer")["value"]
    renyi = chart_data(page, "Rényi efficiency (α = 2.5)").set_index("tokenizer")["value"]
    assert list(bpt.index) == ["classical", "SuperBPE", "PickyBPE"]
    assert bpt["PickyBPE"] == round(p["bpt"], 3) and renyi["PickyBPE"] == round(p["renyi"], 3)
    # the training curve: the corpus's tokens after each merge and the removals after it, read
    # off a trainer stepped one merge at a time
    stepper = Trainer.from_texts(CORPUS_TEXT, picky.config)
    tokens = [stepper.tokens]
    while stepper.step() is not None:
        tokens.append(stepper.tokens)
    curve = chart_data(page, "Training corpus: tokens after each merge")
    line = curve[curve["tokenizer"] == "PickyBPE"]
    assert line["merge"].iloc[-1] == len(picky.merges) and len(line) > 100
    assert line["tokens"].tolist() == [tokens[k] for k in line["merge"]]
    if tau == 0:  # τ = 0 removes nothing: classical BPE
        assert removals == [] and p["tokens"] == c["tokens"] and len(picky.merges) == MERGES
    else:
        # each token removed for good freed a place: more merges for as many live tokens
        assert len(removals) > 0 and len(picky.merges) >= MERGES + len(picky.tokenizer().vocab.removed)
    assert page.query_params["var_picky"] == f"{tau:g}"
    page.select_slider(key=Keys.PICKY).set_value(0.1).run()


def test_the_timeline_shows_each_removal_as_a_row_of_its_own_after_its_merge(page):
    page.select_slider(key=Keys.PICKY).set_value(0.5).run()
    open_tab(page, "PickyBPE timeline")
    picky = picky_trained(MERGES, 0.5)
    tok = picky.tokenizer()
    removals = picky.records.all_removals()
    # the rule, checked here: what was left alone is under τ x the merge's count, and the parts
    # spell the token
    for r in removals:
        assert r.alone < 0.5 * r.inside
        assert b"".join(tok.token_bytes(i) for i in r.parts) == tok.token_bytes(r.token_id)
    page.toggle(key=Keys.TL_ONLY).set_value(True).run()
    assert not page.exception, page.exception
    rows = timeline_rows(page)
    assert [kind for kind, _, _ in rows] == ["removal"] * min(200, len(removals))
    assert [text for _, _, text in rows] == [removal_text(tok, picky, r) for r in removals[:200]]
    assert page.query_params["var_removals"] == "1" and page.query_params["var_tab"] == "picky"

    # every step in order, from the first removal's merge: the merge, then its removals
    first = removals[0].after
    page.toggle(key=Keys.TL_ONLY).set_value(False)
    page.number_input(key=Keys.TL_FROM).set_value(first).run()
    rows = timeline_rows(page)
    rec = picky.records[first - 1]
    assert rows[0] == (
        "merge",
        str(first),
        f"merge {first:,}: ‘{token_label(tok, rec.left_id)}’ + ‘{token_label(tok, rec.right_id)}’ → "
        f"‘{token_label(tok, rec.token_id)}’ ({rec.count:,} times)",
    )
    after_first = [r for r in removals if r.after == first]
    assert rows[1 : 1 + len(after_first)] == [("removal", str(first), removal_text(tok, picky, r)) for r in after_first]
    assert rows[1 + len(after_first)][:2] == ("merge", str(first + 1))
    merge_numbers = [int(k) for kind, k, _ in rows if kind == "merge"]
    assert merge_numbers == list(range(first, first + len(merge_numbers)))
    page.select_slider(key=Keys.PICKY).set_value(0.1).run()


def test_tau_zero_says_pickybpe_removed_nothing_and_a_late_start_fits_the_merges_made(page):
    open_tab(page, "PickyBPE timeline")
    page.select_slider(key=Keys.PICKY).set_value(1.0).run()
    page.number_input(key=Keys.TL_FROM).set_value(picky_trained(MERGES, 1.0).records.__len__()).run()
    page.select_slider(key=Keys.PICKY).set_value(0.0).run()
    assert not page.exception, page.exception
    assert page.session_state[Keys.TL_FROM] == MERGES  # τ = 0 makes fewer merges: the start is kept inside
    assert any("removed no token at τ = 0" in c.value for c in page.caption)
    page.toggle(key=Keys.TL_ONLY).set_value(True).run()
    assert not page.exception, page.exception
    assert not any("var-timeline" in e.proto.body for e in page.get("html"))
    page.toggle(key=Keys.TL_ONLY).set_value(False)
    page.number_input(key=Keys.TL_FROM).set_value(1)
    page.select_slider(key=Keys.PICKY).set_value(0.1).run()


def test_classical_scaffold_rows_mark_the_tokens_pickybpe_removed_too(page, classical):
    page.select_slider(key=Keys.PICKY).set_value(0.5).run()
    open_tab(page, "Scaffold tokens")
    page.selectbox(key=Keys.SCAFFOLD_TOKENIZER).set_value("classical")
    page.select_slider(key=Keys.TAU).set_value(0.1).run()
    assert not page.exception, page.exception
    tok = classical.tokenizer()
    picky_tok = picky_trained(MERGES, 0.5).tokenizer()
    gone = {picky_tok.id_to_token(i) for i in picky_tok.vocab.removed}
    report = scaffold(tok, CORPUS_TEXT, tau=0.1)
    both = [u.id for u in report.scaffold if tok.id_to_token(u.id) in gone]
    assert 0 < len(both) < len(report.scaffold)
    table = html_with(page, "var-scaffold")
    marked = [int(i) for i, row in re.findall(r'<tr data-id="(\d+)">(.*?)</tr>', table) if "✂ removed" in row]
    assert marked == [i for i in both if i in [u.id for u in report.scaffold[:40]]]
    strip = html_with(page, "removed too")
    assert f'bpe-stat-value">{len(both):,}</div><div class="bpe-stat-label">of them PickyBPE (τ = 0.5)' in strip
    chips = html_with(page, "var-removed")
    assert f"({len([t for t in gone if tok.token_to_id(t) is not None]):,} tokens classical BPE also has)" in chips
    page.select_slider(key=Keys.PICKY).set_value(0.1).run()


@pytest.mark.parametrize("bad", ["abc", "0.3", "-1"])
def test_a_link_with_a_bad_tau_says_so_in_one_line_and_trains_the_default(bad):
    at = variants_page(var_merges=str(MERGES), var_picky=bad, var_tab="picky", var_removals="1")
    warning = unescaped(at.warning[0].value)
    assert f"var_picky={bad!r} is not one of 0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1" in warning
    assert "PickyBPE at τ = 0.1" in cards(at)
    assert at.session_state[Keys.TAB] == "PickyBPE timeline" and at.session_state[Keys.TL_ONLY] is True
    assert timeline_rows(at) and all(kind == "removal" for kind, _, _ in timeline_rows(at))


def test_a_pickybpe_session_tokenizer_gets_the_engines_reason_in_the_scaffold_tab_and_a_health_row():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["preset_name"] = None
    at.session_state["config"] = corpus_config("gpt2", picky=0.5)
    at.run()
    at.switch_page("pages/2_Train.py").run()
    at.button(key="step100").click().run()
    at.query_params.update(var_merges=str(MERGES))
    at.switch_page("pages/7_Variants.py").run()
    open_tab(at, "Scaffold tokens")
    at.selectbox(key=Keys.SCAFFOLD_TOKENIZER).set_value("trained").run()
    assert not at.exception, at.exception
    live = at.session_state["live"]
    assert live.trainer.removals  # the session's tokenizer removed some
    with pytest.raises(ConfigError) as raised:
        scaffold(live.tokenizer(live.view), CORPUS_TEXT, tau=0.1)
    assert [unescaped(i.value) for i in at.info] == [str(raised.value)]
    open_tab(at, "Token health")
    rows = dict(re.findall(r'<tr data-name="([^"]+)">(.*?)</tr>', html_with(at, "var-health")))
    report = scan(live.tokenizer(live.view), reference=CORPUS_TEXT)
    assert re.findall(r'class="num">([^<]*)</td>', rows["trained"])[0] == f"{report.tokens:,}"


def rank_table() -> tuple[list[bytes], bytes]:
    """A rank file under Llama's name (tiktoken's format): "abcde"'s bytes merge by the lower
    ranks into three parts, so it is no merge of two lower-ranked tokens, as some of Llama 3's."""
    import base64

    table = [bytes([b]) for b in range(256)] + [b"ab", b"de", b"cd", b"abcd", b"abcde", b"th", b"the", b" the"]
    return table, "".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(table)).encode()


def test_an_imported_tokenizer_joins_the_health_scan_and_a_link_naming_it_reopens_it():
    import tiktoken
    from test_interop_pages import imported_key, playground, upload
    from tiktoken_ext.openai_public import r50k_pat_str

    from explorer.formats.importers import import_report

    table, data = rank_table()
    at = playground()
    upload(at, {"tokenizer.model": data}, name="<b>ranks</b>", pretokenizer="gpt2")
    key = imported_key(at, "<b>ranks</b>")
    # another session opens a link that names it: read back from the store by its hash
    page = variants_page(var_merges=str(MERGES), var_tab="health", var_health=key)
    assert page.session_state[Keys.HEALTH_TOKENIZER] == key
    rows = dict(re.findall(r'<tr data-name="([^"]+)">(.*?)</tr>', html_with(page, "var-health")))
    assert list(rows) == ["gpt2", "cl100k_base", "o200k_base", key, "trained"]
    assert "<td>imported: &lt;b&gt;ranks&lt;/b&gt; (tiktoken)</td>" in rows[key]  # the name as text
    report = scan(import_report({"tokenizer.model": data}, pretokenizer="gpt2").tokenizer, reference=CORPUS_TEXT)
    assert re.findall(r'class="num">([^<]*)</td>', rows[key]) == health_cells(report)
    # "abcde" is no merge; tiktoken gives it for the piece "abcde" alone, so the page says so
    ref = tiktoken.Encoding(
        "t", pat_str=r50k_pat_str, mergeable_ranks={t: r for r, t in enumerate(table)}, special_tokens={}
    )
    assert ref.encode_ordinary("abcde") == [table.index(b"abcde")]
    assert any(
        "imported: <b>ranks</b> (tiktoken): 1 tokens are not one merge" in unescaped(c.value)
        and "1 are given only for a piece that is the token whole, 0 never" in unescaped(c.value)
        for c in page.caption
    )
    # its examples link into the Playground under the import's key, which reopens it there
    links = "".join(e.proto.body for e in page.get("html"))
    assert "tokenizers=" + key.replace(":", "%3A") + "&amp;view=why" in links
