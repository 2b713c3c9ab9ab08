"""The Variants page's model (explorer.ui.variants_model) without Streamlit: the cards, rows,
tables and sentences its tabs show, on three small tokenizers trained here (classical, SuperBPE,
PickyBPE), written out as the page must show them (golden examples) and counted against the
engine; the link's params, read back; and its keys, which must be the keys the page's widgets
use."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest
from conftest import ROOT, assert_keys_named, constants, widget_keys
from streamlit.testing.v1 import AppTest

from explorer import make_config, train
from explorer.analysis.health import HealthReport, TokenNote, scan
from explorer.analysis.scaffold import scaffold
from explorer.errors import ExplorerError
from explorer.ui import catalog, links
from explorer.ui import variants_model as model
from explorer.ui.state import CorpusChoice
from explorer.ui.variants_model import Keys, Lab, Request, Session

CORPUS = "ab abc\nof the cat\n" * 5
HELD_OUT = "the cat of the cat ab abc ab abc ab abc of the cat of the cat\nab\n"


def config(**options: object):
    """The page's configuration (GPT-2's pieces, each line its own text), at six merges."""
    return make_config(model.PRESET, sequences="lines", **({"vocab_size": None, "num_merges": 6} | options))


@pytest.fixture(scope="module")
def lab() -> Lab:
    """The page's three variants of CORPUS, as ``variants_view.train`` makes them: SuperBPE's
    transition at half the merges, PickyBPE (τ = 1) trained to classical BPE's live tokens."""
    classical = model.build_variant("classical", train(CORPUS, config()), HELD_OUT)
    superbpe = model.build_variant("SuperBPE", train(CORPUS, config(superbpe_transition=3)), HELD_OUT)
    size = classical.tokenizer.vocab.n_live
    picky = model.build_variant(
        "PickyBPE", train(CORPUS, config(vocab_size=size, num_merges=None, picky=1.0)), HELD_OUT
    )
    return Lab("<b>mine</b>.txt", "held.txt", len(CORPUS), classical, superbpe, 50, HELD_OUT, picky, 1.0)


# ---- the request and the headline ------------------------------------------------------------------
def test_a_widget_change_makes_a_request_that_keeps_the_old_values_of_the_others():
    old = Request(corpus=model.SESSION, merges=500, share=50)
    new = model.request_from({Keys.MERGES: 1500.0, Keys.PICKY: 0.5, "w_other": 7}, old)
    assert new == Request(corpus=model.SESSION, held_out=model.DEFAULT_HELD_OUT, merges=1500, share=50, tau=0.5)
    assert new.transition == 750 and Request().transition == 2400


def test_the_headline_says_each_variants_saving_its_removals_and_superwords_against_classical(lab):
    held = {v.name: len(v.tokenizer.encode(HELD_OUT)) for v in lab.variants}
    assert held == {"classical": 40, "SuperBPE": 46, "PickyBPE": 28}  # the engine's encodings, counted here
    assert [tuple(h) for h in model.headlines(lab)] == [
        ("SuperBPE at t = 50%", "15.0% more", "tokens on held-out text (held.txt): 46 against classical BPE's 40"),
        (
            "PickyBPE at τ = 1",
            "30.0% fewer",
            "tokens on held-out text: 28 against 40, with as many live tokens (IoS threshold T = 0.50)",
        ),
        ("Tokens PickyBPE removed", "5", "it made 10 merges to classical BPE's 6; the first, ‘·ab’ after merge 3"),
        ("Superword tokens", "2", "of the 3 merges after the transition span a space, e.g. ‘ab·abc’"),
    ]
    assert model.describe_request(lab, Request(merges=6, share=50)) == (
        r"\<b\>mine\<\/b\>\.txt \(first 90 characters\) · 6 merges\, 17 tokens each · GPT\-2\'s pieces\, byte level"
        r" · held out\: held\.txt"
    )


def test_the_training_curve_counts_the_corpus_tokens_after_each_merge_and_removal(lab):
    assert lab.classical.curve == (90, 80, 75, 70, 65, 60, 55)
    # PickyBPE's removals split tokens back, yet its curve is the corpus's tokens after each step
    assert lab.picky.curve == (90, 80, 75, 70, 65, 60, 55, 50, 45, 40, 35)
    assert [r.tokens_after for r in lab.picky.removals] == [70, 55, 50, 40, 35]
    # a removal that splits occurrences left alone: the corpus has more tokens after it than after its merge
    picky = model.build_variant("PickyBPE", train("ab abc ab\n" * 5, config(num_merges=4, picky=1.0)), "ab")
    assert [(r.after, r.token, r.alone, r.inside, r.tokens_after) for r in picky.removals] == [(2, "ab", 5, 10, 30)]
    assert picky.curve == (50, 35, 30, 25, 20)  # 10 bytes a line


def test_superword_chips_show_each_with_its_held_out_count_and_say_how_many_are_not_shown(lab):
    sw = lab.superbpe
    assert [(sw.tokenizer.decode([i]), n) for i, n in sw.superwords] == [("ab abc", 0), ("ab abc\n", 0)]
    chips = model.superword_chips(sw)
    assert re.findall(
        r'class="bpe-chip" title="id (\d+) [^"]*">([^<]*)</span><span class="bpe-freq">×(\d+)', chips
    ) == [
        ("14", "ab·abc", "0"),
        ("15", "ab·abc↵", "0"),
    ]
    many = model.Variant("SuperBPE", sw.tokenizer, 3, sw.curve, sw.held_out, ((14, 2),) * 65)
    assert model.superword_chips(many).endswith('<div class="bpe-freq">5 more superword tokens not shown</div>')
    assert model.superword_chips(many).count('class="bpe-chip"') == model.SUPERWORD_CHIPS == 60
    assert "more superword" not in model.superword_chips(dataclasses.replace(many, superwords=((14, 2),) * 60))


def test_one_held_out_line_is_shown_both_ways_with_each_tokenizers_count(lab):
    line = HELD_OUT.splitlines()[0]
    assert model.example_line(lab.superbpe.tokenizer, HELD_OUT, [14, 15]) == line  # the one line of 50 or more
    tok = lab.superbpe.tokenizer
    assert tok.encode("ab abc") == [14]  # a superword
    assert model.example_line(tok, "the cat\nab abc\nof the\n", [14, 15], min_chars=3) == "ab abc"
    assert model.example_line(tok, "the cat\nof the\n", [14, 15], min_chars=3) == "the cat"  # none: the first
    heads = re.findall(r'bpe-strip-head"><b>(.*?)</b> · ([\d,]+) tokens', model.both_ways(lab))
    assert heads == [("classical", "37"), ("SuperBPE", "43")]
    assert [len(v.tokenizer.encode(line)) for v in (lab.classical, lab.superbpe)] == [37, 43]
    assert model.both_ways(dataclasses.replace(lab, held_out_text="short line\n")) == ""  # none of 50 characters


# ---- PickyBPE's timeline ---------------------------------------------------------------------------
def test_the_timeline_lists_each_merge_then_the_removals_right_after_it(lab):
    p = lab.picky
    rows = model.timeline(p.merges, p.removals, start=6, limit=4)
    table = model.timeline_rows(p, rows)
    assert re.findall(r'<tr class="var-tl-(\w+)" data-(?:merge|after)="(\d+)".*?<td>([^<]*)</td></tr>', table) == [
        ("merge", "6", "merge 6: ‘·t’ + ‘h’ → ‘·th’ (5 times)"),
        ("removal", "6", "after merge 6: ‘·t’ removed — alone 0, inside ‘·th’ 5 — split into ‘·’ + ‘t’"),
        ("merge", "7", "merge 7: ‘·th’ + ‘e’ → ‘·the’ (5 times)"),
        ("removal", "7", "after merge 7: ‘·th’ removed — alone 0, inside ‘·the’ 5 — split into ‘·’ + ‘t’ + ‘h’"),
    ]
    only = model.timeline(p.merges, p.removals, removals_only=True, start=8)
    assert [(row.after, p.tokenizer.decode([row.removal.token_id])) for row in only] == [(9, " c"), (10, " ca")]
    assert model.timeline_stats(p, lab.tau) == [
        ("merges", "10"),
        ("removals", "5"),
        ("live tokens (as classical BPE)", "16"),  # one short of classical's 17: no pair left in this corpus
        ("IoS threshold T = 1 / (1 + τ)", "0.500"),
    ]
    assert model.timeline_caption(lab.tau).startswith(
        "After each merge PickyBPE checks the two tokens it merged: one whose occurrences left standing alone are "
        "fewer than τ = 1 times the merge's count is removed"
    )


def test_a_timeline_start_past_the_merges_made_is_kept_inside_them():
    assert [model.timeline_start(k, 500) for k in (900, 500, 7, 1, 0, -3)] == [500, 500, 7, 1, 1, 1]
    assert model.timeline_start(40, 0) == 1  # no merge made: the first


# ---- scaffold tokens -------------------------------------------------------------------------------
def test_scaffold_rows_list_scaffold_tokens_and_mark_those_pickybpe_removed_too(lab):
    tok = lab.classical.tokenizer
    uses = scaffold(tok, CORPUS, tau=0.0).uses
    picked = model.scaffold_list(uses, 1.0)
    assert [u.id for u in picked] == [u.id for u in scaffold(tok, CORPUS, tau=1.0).scaffold] == [12, 15]
    removed = model.picky_removed(tok, lab.picky.tokenizer)
    assert sorted(tok.decode([i]) for i in removed) == [" ab", " t", " th"]  # removed for good; ' c', ' ca' came back
    table = model.scaffold_rows(tok, picked, {12})
    assert "<th>IoS</th><th>PickyBPE</th><th>lineage</th>" in table
    assert re.findall(r'<tr data-id="(\d+)">.*?<td class="num">([\d.]+)</td>(<td class="var-both">[^<]*</td>|<td></td>)<td>(.*?)</td>', table) == [
        ("12", "1.000", '<td class="var-both">✂ removed</td>', "‘·ab’ → ‘·abc’: used alone 0 times, inside ‘·abc’ 5 times"),
        ("15", "1.000", "<td></td>", "‘·t’ → ‘·th’: used alone 0 times, inside ‘·th’ 5 times"),
    ]  # fmt: skip
    assert "PickyBPE" not in model.scaffold_rows(tok, picked)  # no column beside another tokenizer
    assert model.scaffold_stats(picked, len(uses), 1.0, both=2, picky_tau=0.5) == [
        ("scaffold tokens at this τ", "2"),
        ("merged tokens the text uses or merges", "6"),
        ("IoS threshold 1 / (1 + τ)", "0.500"),
        ("of them PickyBPE (τ = 0.5) removed too", "2"),
    ]
    assert len(model.scaffold_stats(picked, 6, 1.0)) == 3
    chips = model.removed_chips(tok, 1.0, removed, {15})  # the scaffold ones first
    assert "Removed by PickyBPE at τ = 1 (3 tokens classical BPE also has)" in chips
    assert re.findall(r'<span class="bpe-chip( var-both)?"[^>]*>([^<]*)</span>', chips) == [
        (" var-both", "✂ ·t"),
        ("", "·ab"),
        ("", "·th"),
    ]
    assert "a scaffold token above too, at this τ (1)." in chips


def test_the_scaffold_pickers_labels_and_memo_keys():
    choices = model.scaffold_choices(["gpt2", "imported:ab"])
    assert choices == ["classical", "superbpe", catalog.TRAINED, "gpt2", "imported:ab"]
    assert [model.scaffold_label(k, lambda k: f"<{k}>") for k in choices] == [
        "classical BPE trained here",
        "SuperBPE trained here",
        "this session's tokenizer (Train page)",
        "<gpt2>",
        "<imported:ab>",
    ]
    # classical BPE does not depend on the transition: moving it counts nothing again
    keys = {model.own_scaffold_key(k, "text", Request(share=s)) for k in ("classical", "superbpe") for s in (50, 80)}
    assert keys == {"classical:372ea08cab33e71c:3000", "superbpe:372ea08cab33e71c:3000:1500",
                    "superbpe:372ea08cab33e71c:3000:2400"}  # fmt: skip
    assert model.scaffold_caption("<b>x</b>.txt").startswith(r"Measured on \<b\>x\<\/b\>\.txt\. A scaffold token")


# ---- token health ----------------------------------------------------------------------------------
def test_the_health_table_escapes_each_name_and_writes_a_dash_without_a_corpus(lab):
    tok = lab.classical.tokenizer
    scanned = scan(tok, reference="ab abc\n")
    assert (scanned.tokens, len(scanned.unused)) == (16, 13)
    reports = {"imported:<x>": scanned, "gpt2": HealthReport(9, (1, 2), (3,), None, 0)}
    table = model.health_table(reports, {"imported:<x>": "imported: <x> (tiktoken)", "gpt2": "GPT-2"}, '"c".txt')
    assert '<th title="&quot;c&quot;.txt">unused on the corpus</th>' in table
    assert re.findall(r'<tr data-name="([^"]+)"><td>([^<]*)</td>(.*?)</tr>', table) == [
        ("imported:&lt;x&gt;", "imported: &lt;x&gt; (tiktoken)",
         '<td class="num">16</td><td class="num">0</td><td class="num">0</td><td class="num">13 (81%)</td>'),
        ("gpt2", "GPT-2", '<td class="num">9</td><td class="num">2</td><td class="num">1</td><td class="num">–</td>'),
    ]  # fmt: skip
    assert [model.health_label(model.TRAINED, str.upper, live_view=v) for v in (1234, None)] == [
        "this session's (merge 1,234)",
        "this session's",
    ]
    assert model.health_label("gpt2", str.upper, live_view=3) == "GPT2"


def test_a_health_example_links_into_why_this_split_and_a_partial_character_does_not(lab):
    tok = lab.classical.tokenizer
    note = scan(tok, reference="ab abc\n").examples["unused"][0]
    assert (note.id, note.hex) == (12, "20 61 62")
    row = model.note_row(tok, "trained@6", note, {"corpus": "sample:x.txt"})
    assert '<span class="bpe-freq">id 12 · bytes 20 61 62</span>' in row and "encodes as" not in row
    assert re.findall(r'<a href="([^"]+)"', row) == [
        "Playground?corpus=sample%3Ax.txt&amp;text=+ab&amp;tokenizers=trained%406&amp;view=why&amp;why_tokenizer=0"
        "&amp;piece=0&amp;token=12"
    ]
    half = model.note_row(tok, "gpt2", TokenNote(12, "x", "e2 82", encodes_as=(10, 11)), {})
    assert "<a " not in half and '<span class="bpe-freq">its own text encodes as</span>' in half
    assert model.not_one_merge_note("t", HealthReport(9, (), (), None, 0, whole_piece_only=(5,), never_made=())) == (
        "t: 1 tokens are not one merge of two lower-ranked tokens (a rank table need not be made by merges): 1 are "
        "given only for a piece that is the token whole, 0 never (counted as unreachable)"
    )


# ---- the page's link -------------------------------------------------------------------------------
REQUEST = Request(corpus=model.SESSION, held_out="udhr_en.txt", merges=500, share=50, tau=0.5)


def test_the_link_names_the_request_and_only_the_open_tabs_settings():
    base = {"var_corpus": "session", "var_held": "udhr_en.txt", "var_merges": "500", "var_t": "50", "var_picky": "0.5"}
    values = {Session.REQUEST: REQUEST, Keys.TL_ONLY: True, Keys.SCAFFOLD_TOKENIZER: "gpt2", Keys.TAU: 0.02}
    assert model.link_params(values) == base
    assert model.link_params(values | {Keys.TAB: "PickyBPE timeline"}) == base | {
        "var_tab": "picky",
        "var_removals": "1",
    }
    assert model.link_params(values | {Keys.TAB: "Scaffold tokens"}) == base | {
        "var_tab": "scaffold",
        "var_tok": "gpt2",
        "var_tau": "0.02",
    }
    assert model.link_params({Keys.TAB: "Token health"}) == {
        "var_corpus": model.DEFAULT_CORPUS,
        "var_held": model.DEFAULT_HELD_OUT,
        "var_merges": "3000",
        "var_t": "80",
        "var_picky": "0.1",
        "var_tab": "health",
        "var_health": "o200k_base",
    }


def read(params: dict[str, str], restore=lambda param, value: value):
    return model.link_values(params, samples=["udhr_en.txt", "x.txt"], count=links.count_or, restore=restore)


def test_a_link_read_back_sets_the_widgets_it_was_made_from():
    values = {
        Session.REQUEST: REQUEST,
        Keys.TAB: "Scaffold tokens",
        Keys.SCAFFOLD_TOKENIZER: "superbpe",
        Keys.TAU: 0.02,
    }
    back, problems = read(model.link_params(values))
    assert problems == []
    assert back == values | {
        Keys.CORPUS: model.SESSION,
        Keys.HELD_OUT: "udhr_en.txt",
        Keys.MERGES: 500,
        Keys.SHARE: 50,
        Keys.PICKY: 0.5,
    }
    assert model.link_params(back) == model.link_params(values)
    assert read({"text": "hi"}) == ({}, [])  # another page's link


def test_each_bad_value_of_a_link_is_said_once_and_its_default_kept():
    def refuse(param: str, value: str) -> str:
        raise ExplorerError(f"no import {value!r} in the store")

    params = {
        "var_corpus": "nope.txt",
        "var_held": "session",
        "var_merges": "50",
        "var_t": "55",
        "var_picky": "0.3",
        "var_tab": "fun",
        "var_tok": "imported:zz",
        "var_health": "gpt2",
        "var_tau": "x",
    }
    values, problems = read(params, refuse)
    assert problems == [
        "var_corpus='nope.txt' is not a bundled sample",
        "var_held='session' is not a bundled sample",
        "var_merges='50' in the link is not a whole number from 100 to 10,000",
        "var_t=55 is not a multiple of 10",
        "var_picky='0.3' is not one of 0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1",
        "var_tab='fun' is not one of superwords, picky, scaffold, health",
        "var_tok: no import 'imported:zz' in the store",
        "var_health: no import 'gpt2' in the store",
        "var_tau='x' is not one of 0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1",
    ]
    assert values == {
        Session.REQUEST: Request(),
        Keys.CORPUS: model.DEFAULT_CORPUS,
        Keys.HELD_OUT: model.DEFAULT_HELD_OUT,
        Keys.MERGES: 3000,
        Keys.SHARE: 80,
        Keys.PICKY: 0.1,
        Keys.TAU: 0.1,
    }


# ---- keys, and no Streamlit ------------------------------------------------------------------------


def test_every_key_the_model_names_is_a_widget_of_the_page_and_every_widget_is_named():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    small = "demo_sentences.txt"  # trained in well under a second at the least merges
    at.session_state["corpus_choice"] = CorpusChoice(samples=(small,))  # the session's tokenizer: its corpus
    at.query_params.update(var_corpus=small, var_held=small, var_merges=str(model.MIN_MERGES))
    at.switch_page("pages/7_Variants.py").run()
    seen = widget_keys(at)
    for tab in model.TABS[1:]:
        at.session_state[Keys.TAB] = tab
        at.run()
        seen |= widget_keys(at)
    assert not at.exception, at.exception
    assert_keys_named(seen, Keys, prefixes=())
    assert all(key in at.session_state for key in constants(Session).values())
    assert model.TRAINED == catalog.TRAINED  # the model names the session's tokenizer as the catalog does


def test_the_variants_model_imports_no_streamlit():
    code = (
        "import sys\n"
        "import explorer.ui.variants_model\n"
        "assert not {'streamlit', 'pandas', 'altair'} & set(sys.modules), sorted(sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
