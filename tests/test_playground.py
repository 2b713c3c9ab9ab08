"""Playground page tests with Streamlit's AppTest: every number, id and table the page shows is
checked against the engine, computed here on its own (never with a copy of the page's code)."""

from __future__ import annotations

import html
import json
import re
from collections import Counter

import pandas as pd
import pyarrow as pa
import pytest
from conftest import ROOT, Panel, chart_data, encode_view, is_utf8, open_importer, read_sample, train_html, unescaped
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config, load_pretrained
from explorer.analysis.text import sample_segmentations, twin_configs
from explorer.errors import ConfigError
from explorer.formats.trace import trace_dict
from explorer.stages.pipeline import count_words
from explorer.ui.playground_model import Keys
from explorer.ui.render import APP_CSS, chips, style_of, token_label
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
PAGE = "pages/3_Playground.py"
CORPUS = "udhr_en.txt"
TIMEOUT = 120  # a cold run loads the pretrained tables (o200k_base takes seconds)
PRETRAINED = ["gpt2", "cl100k_base", "o200k_base"]
VIEWS = ["Encode", "Why this split", "Char vs byte", "Decode ids"]
KOREAN = "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다."
SPECIAL_CHIP = 'class="bpe-chip bpe-special"'
SHORT = "Hello, world! Tokenizers don't read words; 12345 ünïcode 你好.\n\tIndented line"


# ---- helpers -----------------------------------------------------------------------------------
def playground(*, corpus: str | None = CORPUS, merges: int = 0, config=None, tokenizers=None, text=None) -> AppTest:
    """A session on the Playground page: corpus seeded, ``merges`` trained on the Train page's
    buttons (multiples of 10), then tokenizers and text chosen."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if corpus is not None:
        at.session_state["corpus_choice"] = CorpusChoice(samples=(corpus,))
    if config is not None:
        at.session_state["preset_name"] = None
        at.session_state["config"] = config
    at.run()
    if merges:
        assert merges % 10 == 0
        at.switch_page("pages/2_Train.py").run()
        for _ in range(merges // 100):
            at.button(key="step100").click().run()
        for _ in range(merges % 100 // 10):
            at.button(key="step10").click().run()
    at.switch_page(PAGE).run()
    if tokenizers is not None:
        at.multiselect(key="w_play_tokenizers").set_value(tokenizers).run()
    if text is not None:
        at.text_area(key="w_play_text").input(text).run()
    assert not at.exception
    return at


def engine(merges: int, corpus: str = CORPUS, **overrides) -> Trainer:
    """The session's trainer as the engine computes it (the page's default config: the gpt2
    preset sized for the corpus)."""
    config = corpus_config("gpt2", **overrides)
    trainer = Trainer(count_words((read_sample(corpus),), config), config)
    trainer.advance(merges)
    return trainer


def html_bodies(at: AppTest) -> list[str]:
    """The page's st.html bodies in order, without the app-wide stylesheet."""
    return [h.proto.body for h in at.get("html") if h.proto.body.strip() != APP_CSS.strip()]


def encode_panels(at: AppTest) -> list[Panel]:
    return encode_view(at)


def text_of(at: AppTest) -> str:
    return at.text_area(key="w_play_text").value


def frame(at: AppTest, column: str) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if column in df.value.columns)


def token_picker(at: AppTest):
    """The lineage's token picker (its key names the tokenizer and the piece)."""
    (picker,) = [s for s in at.selectbox if s.label == "Token"]
    return picker


def picked_token(at: AppTest) -> int:
    """The id of the token the lineage picker shows ("label  (id N)")."""
    picker = token_picker(at)
    return int(re.search(r"\(id (\d+)\)$", picker.options[picker.value]).group(1))


def tree(at: AppTest) -> str:
    """The lineage tree's HTML (one nested list)."""
    (body,) = [h.proto.body for h in at.get("html") if 'class="bpe-scroll bpe-lin"' in h.proto.body]
    return body


def has_tree(at: AppTest) -> bool:
    return any('class="bpe-scroll bpe-lin"' in h.proto.body for h in at.get("html"))


def chart_data(at: AppTest, title: str) -> pd.DataFrame:
    for el in at.get("vega_lite_chart"):
        if json.loads(el.proto.spec).get("title") == title:
            # the line's data: the largest of the layers' datasets (the others are a rule's one row)
            arrows = [d.data.data for d in el.proto.datasets] + (
                [el.proto.data.data] if el.proto.HasField("data") else []
            )
            frames = [pa.ipc.open_stream(a).read_all().to_pandas() for a in arrows if a]
            return max(frames, key=len)
    raise AssertionError(f"no chart titled {title!r}")


def tree_ids(tok, token_id: int) -> list[int]:
    """Every node of a token's merge tree (a base symbol is a leaf), by recursing over the merges."""
    rank = tok.merge_rank(token_id)
    if rank is None:
        return [token_id]
    left, right = tok.merges[rank]
    return [token_id, *tree_ids(tok, left), *tree_ids(tok, right)]


def merges_in(tok, token_id: int) -> int:
    return sum(tok.merge_rank(i) is not None for i in tree_ids(tok, token_id))


def tree_nodes(body: str) -> list[int]:
    """The ids of the lineage tree's nodes, parents before children."""
    return [int(i) for i in re.findall(r'<li data-id="(\d+)">', body)]


def root_meta(body: str) -> str:
    return re.search(r'<div class="bpe-lin-meta">(.*?)</div>', body).group(1)


def chip_bytes(body: str) -> list[bytes]:
    """The bytes each chip shows: text runs as UTF-8, ``bpe-hex`` runs as the hex they spell."""
    out = []
    for chip in body.split('<span class="bpe-chip')[1:]:
        inner = chip[chip.index(">") + 1 : chip.rindex("</span>")]
        data = b""
        for text, hexed in re.findall(r'([^<]*)(?:<span class="bpe-hex">([0-9a-f ]+)</span>)?', inner):
            data += html.unescape(text).replace("·", " ").replace("↵", "\n").replace("→", "\t").encode()
            data += bytes.fromhex(hexed) if hexed else b""
        out.append(data)
    return out


def expected_metrics(tok, text: str, ids: list[int], unknown: int = 0) -> dict[str, str]:
    n = len(ids)
    return {
        "Tokens": f"{n:,}",
        "Characters per token": f"{len(text) / n:.2f}",
        "Bytes per token": f"{len(text.encode()) / n:.2f}",
        "Unknown symbols": f"{unknown:,}",
    }


# ---- tests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("view", VIEWS)
def test_every_view_renders_without_exception_on_a_fresh_session(view):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(PAGE).run()
    at.radio(key="w_play_view").set_value(view).run()
    assert not at.exception
    assert not at.error
    assert at.title[0].value == "Playground"
    assert at.radio(key="w_play_view").value == view
    assert at.radio(key="w_play_view").options == VIEWS


def test_counts_chips_and_ids_of_every_tokenizer_are_the_engines():
    at = playground(merges=100, tokenizers=["trained", *PRETRAINED], text=SHORT)
    text = text_of(at)
    assert text == SHORT
    trained = engine(100).tokenizer(100)
    expected = {"trained, as of merge 100 of 100": trained} | {name: load_pretrained(name) for name in PRETRAINED}
    panels = encode_panels(at)
    assert [p.label for p in panels] == list(expected)
    for panel, tok in zip(panels, expected.values()):
        ids = tok.encode(text)
        assert panel.metrics == expected_metrics(tok, text, ids), panel.label
        assert panel.chips.count('class="bpe-chip') == len(ids), panel.label
        assert panel.ids == ids, panel.label
    # 你好 and ü are not in the English corpus, but byte level starts from all 256 bytes
    assert not set("你好ü") & set(read_sample(CORPUS)) and trained.unk_id not in trained.encode(text)


def test_allow_special_tokens_turns_endoftext_into_one_id():
    at = playground(tokenizers=["trained", *PRETRAINED])
    at.button(key="example_7").click().run()  # "A special token"
    text = text_of(at)
    assert "<|endoftext|>" in text and not at.exception
    toks = [engine(0).tokenizer(0)] + [load_pretrained(name) for name in PRETRAINED]

    assert not at.toggle(key="w_play_special").value
    for panel, tok in zip(encode_panels(at), toks):
        ids = tok.encode(text)
        assert panel.ids == ids and panel.metrics["Tokens"] == f"{len(ids):,}", panel.label
        assert not any(tok.is_special(i) for i in ids) and SPECIAL_CHIP not in panel.chips

    at.toggle(key="w_play_special").set_value(True).run()
    assert not at.exception
    for panel, tok in zip(encode_panels(at), toks):
        ids = tok.encode(text, allow_special=True)
        assert panel.ids == ids and panel.metrics["Tokens"] == f"{len(ids):,}", panel.label
        assert [i for i in ids if tok.is_special(i)] == [tok.special_ids["<|endoftext|>"]]
        assert panel.chips.count(SPECIAL_CHIP) == 1
    assert 100257 in encode_panels(at)[2].ids  # cl100k_base's <|endoftext|>
    assert 50256 in encode_panels(at)[1].ids  # GPT-2's


def test_trained_tokenizer_as_of_merge_k_counts_as_the_engine():
    at = playground(merges=100, tokenizers=["trained"])
    text = text_of(at)
    ref = engine(100)
    slider = at.slider(key="w_play_k")
    assert (slider.min, slider.max, slider.value) == (0, 100, 100)
    counts = {}
    for k in (100, 40, 7, 0):
        at.slider(key="w_play_k").set_value(k).run()
        assert not at.exception
        (panel,) = encode_panels(at)
        ids = ref.tokenizer(k).encode(text)
        assert panel.label == f"trained, as of merge {k} of 100"
        assert panel.ids == ids and panel.metrics["Tokens"] == f"{len(ids):,}"
        counts[k] = len(ids)
    assert counts[100] <= counts[40] <= counts[7] <= counts[0]
    assert counts[100] < counts[0]
    assert counts[0] == len(text.encode())  # no merge: one token per byte


@pytest.mark.parametrize("unit", ["byte", "char"])
def test_unknown_symbols_are_those_the_corpus_never_had(unit):
    # a seed replay's alphabet: only what the corpus holds (a preset's byte level has all 256)
    config = corpus_config("gpt2", unit=unit, alphabet="present")
    at = playground(merges=10, config=config, tokenizers=["trained"])
    text = KOREAN + " Korean and English."
    at.text_area(key="w_play_text").input(text).run()
    assert not at.exception
    corpus = read_sample(CORPUS)
    if unit == "byte":
        missing = Counter(f"byte {b:02x}" for b in text.encode() if b not in set(corpus.encode()))
    else:
        missing = Counter(ch for ch in text if ch not in set(corpus))
    tok = engine(10, unit=unit, alphabet="present").tokenizer(10)
    ids = tok.encode(text)
    assert ids.count(tok.unk_id) == sum(missing.values()) > 0
    (panel,) = encode_panels(at)
    assert panel.metrics["Unknown symbols"] == f"{sum(missing.values()):,}"
    assert panel.ids == ids
    assert panel.chips.count('class="bpe-chip bpe-unk"') == sum(missing.values())
    table = frame(at, "symbol")
    assert dict(zip(table["symbol"], table["count"])) == dict(missing)
    assert table["count"].is_monotonic_decreasing
    if unit == "char":
        assert table["code point"].tolist() == [f"U+{ord(ch):04X}" for ch in table["symbol"]]
    assert any("Round trip is lossy" in w.value for w in at.warning)


def test_a_token_holding_part_of_a_character_shows_hex_never_a_replacement_char():
    at = playground(tokenizers=["gpt2"], text="你好")
    tok = load_pretrained("gpt2")
    ids = tok.encode("你好")
    partial = [i for i in ids if not is_utf8(tok.token_bytes(i))]
    assert partial  # GPT-2 cuts these characters inside their bytes
    (panel,) = encode_panels(at)
    assert 'class="bpe-hex"' in panel.chips and "\ufffd" not in panel.chips
    assert chip_bytes(panel.chips) == [tok.token_bytes(i) for i in ids]
    # the pickers of the Why view show the same tokens without U+FFFD either
    at.radio(key="w_play_view").set_value("Why this split").run()
    assert not at.exception
    options = token_picker(at).options
    assert len(options) == len(set(ids)) and all("\ufffd" not in o for o in options)
    assert any("⟨" in o for o in options)
    assert all("\ufffd" not in h.proto.body for h in at.get("html"))
    assert "\ufffd" not in tree(at)


def test_why_this_split_traces_the_merges_the_engine_applies():
    at = playground(merges=100)
    at.radio(key="w_play_view").set_value("Why this split").run()
    text = text_of(at)
    ref = engine(100)
    tok = ref.tokenizer(100)
    pieces = tok.encode_pieces(text)
    # the piece with the longest trace
    i = max(range(len(pieces)), key=lambda j: len(tok.encode_trace(pieces[j].text)))
    piece = pieces[i].text
    at.selectbox(key="w_why_piece").set_value(i).run()
    assert not at.exception
    steps = tok.encode_trace(piece)
    assert len(steps) >= 3
    table = frame(at, "merge rank")
    assert table["#"].tolist() == list(range(1, len(steps) + 1))
    assert table["merge rank"].tolist() == [s.rank for s in steps]
    assert table["learned at step"].tolist() == [s.rank + 1 for s in steps]
    assert table["pair count then"].tolist() == [ref.records[s.rank].count for s in steps]
    assert table["new token"].tolist() == [token_label(tok, ref.records[s.rank].token_id) for s in steps]
    final = tok.encode_piece(piece)
    assert table["tokens after"].iloc[-1].split(" | ") == [token_label(tok, t) for t in final]
    assert len(table["tokens after"].iloc[0].split(" | ")) == len(piece.encode()) - 1  # one merge on the bytes

    # a bundled table: same trace, ranks only
    at.selectbox(key="w_why_tok").set_value(1).run()  # cl100k_base
    cl = load_pretrained("cl100k_base")
    cl_pieces = cl.encode_pieces(text)
    j = max(range(len(cl_pieces)), key=lambda j: len(cl.encode_trace(cl_pieces[j].text)))
    at.selectbox(key="w_why_piece").set_value(j).run()
    assert not at.exception
    steps = cl.encode_trace(cl_pieces[j].text)
    table = frame(at, "merge rank")
    assert table["merge rank"].tolist() == [s.rank for s in steps]
    assert [cl.token_to_id(s.token) - 256 for s in steps] == [s.rank for s in steps]  # what the caption says
    assert "learned at step" not in table.columns
    assert table["tokens after"].iloc[-1].split(" | ") == [
        token_label(cl, t) for t in cl.encode_piece(cl_pieces[j].text)
    ]


def test_lineage_graph_keyword_in_context_and_typed_ids():
    at = playground(merges=100)
    at.radio(key="w_play_view").set_value("Why this split").run()
    tok = engine(100).tokenizer(100)
    corpus_lines = read_sample(CORPUS).splitlines()

    # the token picked by default: its tree has 2m + 1 nodes and every node's id
    token_id = picked_token(at)
    m = merges_in(tok, token_id)
    assert m >= 2
    body = tree(at)
    # every node drawn, each merge's two parts in a list under it, text kept at its size
    assert tree_nodes(body) == tree_ids(tok, token_id) and body.count("<ul>") == 1 + m
    for node in tree_ids(tok, token_id):
        assert f"id {node:,} ·" in body
    # keyword in context: lines of the corpus where the token occurs, its surface text marked
    surface = tok.token_bytes(token_id).decode()
    body = next(h.proto.body for h in at.get("html") if 'class="bpe-kwic"' in h.proto.body)
    lines = re.findall(r'<div class="bpe-kwic"><span class="n">line ([\d,]+)</span>(.*?)</div>', body)
    assert lines
    for number, row in lines:
        assert re.findall(r"<mark>(.*?)</mark>", row) == [html.escape(surface)]
        assert surface in html.unescape(re.sub(r"<[^>]+>", "", row))
        assert surface in corpus_lines[int(number.replace(",", "")) - 1]

    # any id typed in: the deepest token the session learned
    deepest = max(range(len(tok.vocab)), key=lambda i: (merges_in(tok, i), -i))
    at.text_input(key="w_why_id").input(str(deepest)).run()
    assert not at.exception and not at.error
    body = tree(at)
    assert tree_nodes(body) == tree_ids(tok, deepest) and len(tree_nodes(body)) == 2 * merges_in(tok, deepest) + 1
    assert root_meta(body) == f"id {deepest:,} · merge rank {tok.merge_rank(deepest):,}"
    assert any(f"(id {deepest}): learned at step {tok.merge_rank(deepest) + 1}" in c.value for c in at.caption)
    # a base symbol's tree is one box
    at.text_input(key="w_why_id").input(str(tok.token_to_id("e"))).run()
    assert len(tree_nodes(tree(at))) == 1

    # ids that are not ids: an error message, no graph, no exception
    for typed in ("abc", "-1", "1.5", str(len(tok.vocab)), "99999999999"):
        at.text_input(key="w_why_id").input(typed).run()
        assert not at.exception, typed
        assert at.error and "whole number from 0 to" in at.error[0].value, typed
        assert not has_tree(at), typed

    # a bundled table's lineage, from the same picker
    at.text_input(key="w_why_id").input("").run()
    at.selectbox(key="w_why_tok").set_value(1).run()  # cl100k_base
    cl = load_pretrained("cl100k_base")
    token_id = picked_token(at)
    body = tree(at)
    assert tree_nodes(body) == tree_ids(cl, token_id) and len(tree_nodes(body)) == 2 * merges_in(cl, token_id) + 1
    assert all(f"id {node:,} ·" in body for node in tree_ids(cl, token_id))
    assert not any('class="bpe-kwic"' in h.proto.body for h in at.get("html"))  # no training corpus


@pytest.mark.parametrize("typed", ["²", "9" * 5000], ids=["superscript-digit", "4300-plus-digits"])
def test_a_typed_id_that_int_rejects_is_explained_not_raised(typed):
    at = playground(tokenizers=["gpt2"])
    at.radio(key="w_play_view").set_value("Why this split").run()
    at.text_input(key="w_why_id").input(typed).run()
    assert not at.exception
    assert "whole number from 0 to" in at.error[0].value


def test_char_vs_byte_twins_are_trained_as_the_engine_trains_them():
    at = playground()
    at.radio(key="w_play_view").set_value("Char vs byte").run()
    assert not at.exception
    corpus = read_sample(CORPUS)
    merges = at.number_input(key="w_cb_merges").value
    char_cfg, byte_cfg = twin_configs(corpus_config("gpt2"), merges=merges)
    char_t = Trainer(count_words((corpus,), char_cfg), char_cfg).run()
    byte_t = Trainer(count_words((corpus,), byte_cfg), byte_cfg).run()
    char_alphabet = set("".join(count_words((corpus,), char_cfg)))
    assert len(char_alphabet) == len(set(corpus))
    assert [(m.label, m.value) for m in at.metric] == [
        ("Base alphabet", f"{len(char_alphabet):,}"),
        ("Vocabulary", f"{len(char_t.vocab):,}"),
        ("Base alphabet", "256"),
        ("Vocabulary", f"{len(byte_t.vocab):,}"),
    ]
    data = chart_data(at, "Compression on the training corpus")
    runs = list(dict.fromkeys(data["run"]))
    assert len(runs) == 2
    for run, trainer in zip(runs, (char_t, byte_t)):
        rows = data[data["run"] == run]
        steps = rows["step"].tolist()
        # a thinned curve: its first and last step, evenly spaced between, each point the engine's count
        assert steps[0] == 0 and steps[-1] == len(trainer.records) and steps == sorted(set(steps))
        assert len(steps) <= 401 and len({b - a for a, b in zip(steps, steps[1:-1])}) <= 1
        counts = [trainer.initial_tokens] + [r.tokens_after for r in trainer.records]
        assert rows["tokens"].tolist() == [counts[k] for k in steps]

    # Korean on an English corpus: the characters char level lacks, spelt in bytes by byte level
    at.button(key="cb_example_1").click().run()
    assert not at.exception
    text = text_of(at)
    assert text == KOREAN
    table = frame(at, "byte-level ids")
    missing = Counter(ch for ch in text if ch not in char_alphabet)
    assert dict(zip(table["character"], table["count"])) == dict(missing)
    byte_tok = byte_t.tokenizer()
    assert table["byte-level ids"].tolist() == [", ".join(map(str, byte_tok.encode(ch))) for ch in table["character"]]
    assert table["UTF-8 bytes"].tolist() == [ch.encode().hex(" ") for ch in table["character"]]
    char_tok = char_t.tokenizer()
    captions = [c.value for c in at.caption]
    n_char, n_byte = len(char_tok.encode(text)), len(byte_tok.encode(text))
    assert f"Character level: {n_char:,} tokens, {sum(missing.values()):,} unknown" in captions
    assert f"Byte level: {n_byte:,} tokens, 0 unknown" in captions


def open_dropout(at: AppTest) -> None:
    """Open the BPE-dropout expander (drawn only while open, as a click opens it) and rerun."""
    at.session_state[Keys.DROPOUT] = True
    at.run()


def test_bpe_dropout_samples_are_the_engines_and_reproducible():
    at = playground(tokenizers=["cl100k_base"])
    text = text_of(at)
    tok = load_pretrained("cl100k_base")
    open_dropout(at)

    at.slider(key="w_drop_p").set_value(0.0)
    at.number_input(key="w_drop_n").set_value(20)
    at.button(key="drop_sample").click().run()
    assert not at.exception
    table = frame(at, "segmentation")
    assert table["times"].tolist() == [20]
    assert table["tokens"].tolist() == [len(tok.encode(text))]
    assert "1 distinct segmentations in 20 samples" in " ".join(c.value for c in at.caption)

    at.slider(key="w_drop_p").set_value(0.5)
    at.number_input(key="w_drop_seed").set_value(7)
    at.number_input(key="w_drop_n").set_value(30)
    at.button(key="drop_sample").click().run()
    assert not at.exception
    table = frame(at, "segmentation")
    counts = sample_segmentations(tok, text, dropout=0.5, samples=30, seed=7)
    assert len(counts) > 1
    assert table["times"].tolist() == [k for _, k in counts]
    assert table["tokens"].tolist() == [len(seg) for seg, _ in counts]
    assert table["segmentation"].tolist() == [" | ".join(token_label(tok, i) for i in seg) for seg, _ in counts]
    # every segmentation still spells the text
    assert all("".join(s.split(" | ")).replace("·", " ") == text for s in table["segmentation"])
    # the chips above the table: one draw with the seed itself
    body = html_bodies(at)[-1]
    assert body.count('class="bpe-chip') == len(tok.encode(text, dropout=0.5, seed=7))

    at.button(key="drop_sample").click().run()
    assert frame(at, "segmentation").equals(table)


HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(1)>"
MARKDOWN = "**b** $x$ [l](javascript:x)"
RAW = ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "**b**", "$x$", "[l](javascript:x)")


def _markdown_values(at: AppTest) -> list[str]:
    elements = [
        *at.markdown,
        *at.caption,
        *at.title,
        *at.header,
        *at.subheader,
        *at.info,
        *at.warning,
        *at.error,
        *at.success,
    ]
    return [e.value for e in elements]


def _assert_nothing_raw(at: AppTest, where: str) -> None:
    assert not at.exception, where
    for body in (h.proto.body for h in at.get("html")):
        assert "<script" not in body and "<img" not in body, where
    for value in _markdown_values(at):
        for raw in RAW:
            assert raw not in value, (where, raw, value)


def test_hostile_text_is_shown_as_text_never_as_markup_or_markdown():
    at = playground(merges=10, tokenizers=["trained", "gpt2", "cl100k_base"], text=HOSTILE + "\n" + MARKDOWN)
    _assert_nothing_raw(at, "Encode")
    # the bundled tables' chips spell the text, escaped
    for panel in encode_panels(at)[1:]:
        assert b"".join(chip_bytes(panel.chips)).decode() == HOSTILE + "\n" + MARKDOWN, panel.label
        assert "&lt;" in panel.chips and "&gt;" in panel.chips
    open_dropout(at)
    _assert_nothing_raw(at, "dropout sample")
    at.button(key="drop_sample").click().run()
    _assert_nothing_raw(at, "dropout")
    assert frame(at, "segmentation")["times"].sum() == at.number_input(key="w_drop_n").value

    at.radio(key="w_play_view").set_value("Why this split").run()
    for i in range(3):
        at.selectbox(key="w_why_tok").set_value(i).run()
        _assert_nothing_raw(at, f"Why, tokenizer {i}")
        n_pieces = len(at.selectbox(key="w_why_piece").options)
        for piece in range(n_pieces):
            at.selectbox(key="w_why_piece").set_value(piece).run()
            _assert_nothing_raw(at, f"Why, tokenizer {i}, piece {piece}")

    at.radio(key="w_play_view").set_value("Char vs byte").run()
    _assert_nothing_raw(at, "Char vs byte")
    byte_level = html_bodies(at)[-1]  # the byte-level twin spells every character
    assert b"".join(chip_bytes(byte_level)).decode() == HOSTILE + "\n" + MARKDOWN


def test_a_tokens_label_in_the_lineage_caption_is_not_read_as_markdown():
    at = playground(tokenizers=["cl100k_base"])
    at.radio(key="w_play_view").set_value("Why this split").run()
    cl = load_pretrained("cl100k_base")
    token_id = next(i for i in range(len(cl.vocab)) if cl.token_bytes(i) == b"`.`")
    at.text_input(key="w_why_id").input(str(token_id)).run()
    assert not at.exception
    caption = next(c.value for c in at.caption if f"(id {token_id})" in c.value)
    assert "`.`" not in caption  # raw backticks would make a code span
    assert unescaped(caption).startswith(f"`.` (id {token_id})")  # still there, escaped


# ---- decode ids ------------------------------------------------------------------------------------
def decode_view(at: AppTest, tokenizer: str, ids: str, errors: str = "replace") -> AppTest:
    at.radio(key="w_play_view").set_value("Decode ids").run()
    at.selectbox(key="w_dec_tok").set_value(tokenizer).run()
    at.selectbox(key="w_dec_errors").set_value(errors).run()
    at.text_area(key="w_dec_ids").input(ids).run()
    assert not at.exception
    return at


def test_decode_ids_gives_the_text_and_each_partial_token_as_bytes():
    # (the engine's decode itself is checked against tiktoken's in test_decode.py)
    at = playground(tokenizers=["gpt2", "cl100k_base"], text=SHORT)
    tok = load_pretrained("gpt2")
    ids = tok.encode("a😀 b")[:-2] + tok.encode(" ok")  # the emoji cut after 3 of its 4 bytes
    decode_view(at, "gpt2", ", ".join(map(str, ids)))
    data = b"".join(tok.token_bytes(i) for i in ids)
    assert at.code[-1].value == data.decode("utf-8", "replace")
    table = at.dataframe[-1].value
    assert table["id"].tolist() == ids
    partial = [i for i in ids if not is_utf8(tok.token_bytes(i))]
    assert partial
    for i in partial:
        row = table[table["id"] == i].iloc[0]
        assert row["bytes"] == tok.token_bytes(i).hex(" ") and "bytes" in row["note"]
        assert row["token"].startswith("⟨") and "\ufffd" not in row["token"]
    # whole characters read as text, never as GPT-2's stand-ins
    assert table[table["id"] == ids[-1]].iloc[0]["token"] == "·ok"
    # strict: one message naming the token; ignore: the broken bytes dropped
    decode_view(at, "gpt2", ", ".join(map(str, ids)), errors="strict")
    assert (
        at.error
        and "the bytes are not UTF-8" in unescaped(at.error[0].value)
        and "(in token 1, id" in unescaped(at.error[0].value)
    )
    decode_view(at, "gpt2", ", ".join(map(str, ids)), errors="ignore")
    assert at.code[-1].value == data.decode("utf-8", "ignore") == "a ok"


@pytest.mark.parametrize(
    "typed, message",
    [
        ("15496, 99999999", "id 99999999 (position 1) is not a token id"),
        ("15496 -4", "id -4 (position 1) is not a token id"),
        ("15496, **x**", "'**x**' (position 1) is not a whole number"),
    ],
)
def test_decode_ids_explains_ids_that_are_no_token_and_keeps_working(typed, message):
    at = playground(tokenizers=["gpt2"], text=SHORT)
    decode_view(at, "gpt2", typed)
    assert message in unescaped(at.error[0].value)
    decode_view(at, "gpt2", "15496, 11")
    assert not at.error and at.code[-1].value == "Hello,"


def test_decode_ids_of_the_trained_char_level_tokenizer_strips_its_markers():
    at = playground(config=corpus_config("sennrich"), merges=100, tokenizers=["trained"], text="the rights of all")
    at.radio(key="w_play_view").set_value("Decode ids").run()
    assert not at.exception
    # empty box: the playground text's own ids, decoded back to the words
    assert at.code[-1].value == "the rights of all"


# ---- the fewest tokens and the dropout histogram ------------------------------------------------
GAP_TEXT = "wholesome Marcius, wholesome crammed <b>Caius</b>."


def shortest_strips(at: AppTest) -> dict[str, str]:
    """The fewest-tokens panel's two strips: name -> chips' HTML."""
    strip = re.compile(
        r'<div class="bpe-strip"><div class="bpe-strip-head"><b>(.*?)</b>.*?</div>(.*?)</div></div>', re.S
    )
    found = {html.unescape(name): chips for body in html_bodies(at) for name, chips in strip.findall(body)}
    return {name: found[name] for name in ("BPE's merges", "The fewest tokens") if name in found}


def test_the_fewest_tokens_panel_shows_bpes_split_above_the_shortest_with_the_pieces_that_differ():
    at = playground(tokenizers=["gpt2", "cl100k_base"], text=GAP_TEXT)
    assert shortest_strips(at) == {}  # folded: drawn only when opened
    at.session_state["w_play_shortest"] = True
    at.run()
    at.selectbox(key="w_short_tok").set_value(1).run()  # cl100k_base
    assert not at.exception
    tok = load_pretrained("cl100k_base")
    strips = shortest_strips(at)
    assert list(strips) == ["BPE's merges", "The fewest tokens"]  # one above the other
    bpe, fewest = strips["BPE's merges"], strips["The fewest tokens"]
    assert chip_bytes(bpe) == [tok.token_bytes(i) for i in tok.encode(GAP_TEXT)]
    # "wholesome" wh|oles|ome -> whole|some, " Marcius" Mar|ci|us -> Marc|ius: 18 tokens, 16 at the fewest
    assert len(chip_bytes(fewest)) == 16 and b"".join(chip_bytes(fewest)) == GAP_TEXT.encode()
    assert chip_bytes(fewest)[:2] == [b"whole", b"some"] and chip_bytes(fewest)[2:4] == [b" Marc", b"ius"]
    assert bpe.count("bpe-new") == 6 and fewest.count("bpe-new") == 4  # the two pieces' tokens outlined
    assert "spend 2 token(s) more (11.1% of BPE's), in 2 of 11 pieces" in " ".join(c.value for c in at.caption)
    table = frame(at, "fewest")
    assert table.to_dict("records") == [
        {"piece": "wholesome", "times": 1, "BPE": "wh | oles | ome", "fewest": "whole | some", "saved": 1},
        {"piece": "·Marcius", "times": 1, "BPE": "·Mar | ci | us", "fewest": "·Marc | ius", "saved": 1},
    ]

    at.selectbox(key="w_short_tok").set_value(0).run()  # gpt2: only "Caius" (C|ai|us -> Ca|ius)
    table = frame(at, "fewest")
    assert table.to_dict("records") == [
        {"piece": "Caius", "times": 1, "BPE": "C | ai | us", "fewest": "Ca | ius", "saved": 1}
    ]
    at.text_area(key="w_play_text").input(HOSTILE).run()
    _assert_nothing_raw(at, "fewest tokens")
    assert "BPE's merges already cut every piece" in " ".join(c.value for c in at.caption)


def test_the_dropout_histogram_counts_every_sample_by_its_length():
    text = "Tokenizers read pieces."  # short: a segmentation is drawn more than once
    at = playground(tokenizers=["cl100k_base"], text=text)
    open_dropout(at)
    at.slider(key="w_drop_p").set_value(0.1)
    at.number_input(key="w_drop_seed").set_value(3)
    at.number_input(key="w_drop_n").set_value(40)
    at.button(key="drop_sample").click().run()
    assert not at.exception
    counts = sample_segmentations(load_pretrained("cl100k_base"), text, dropout=0.1, samples=40, seed=3)
    assert counts[0][1] > 1 and len(counts) > 5
    lengths: Counter[int] = Counter()
    for seg, k in counts:
        lengths[len(seg)] += k
    shown = chart_data(at, "Segmentation lengths")
    assert dict(zip(shown["tokens"], shown["samples"])) == lengths and shown["samples"].sum() == 40
    assert len(lengths) > 3


# ---- PickyBPE: removals in Why this split, no dropout -----------------------------------------
PICKY_TEXT = "Everyone has the right to freedom of thought, through independent courts."


@pytest.fixture(scope="module")
def picky_playground():
    """A session whose own tokenizer is PickyBPE's (τ = 0.5, 200 merges), on Why this split."""
    at = playground(config=corpus_config("gpt2", picky=0.5), merges=200, tokenizers=["trained"], text=PICKY_TEXT)
    at.radio(key="w_play_view").set_value("Why this split").run()
    assert not at.exception, at.exception
    return at


def removal_rows_shown(at: AppTest, ref: Trainer, *, trained: bool) -> None:
    """Why this split on the piece of PICKY_TEXT whose trace removes most: each row as the
    engine's trace, a removal as the token and the parts training split it into."""
    tok = ref.tokenizer(len(ref.merges))
    assert ref.records.all_removals()
    pieces = tok.encode_pieces(PICKY_TEXT)
    i = max(range(len(pieces)), key=lambda j: sum(s.removed for s in tok.encode_trace(pieces[j].text)))
    at.selectbox(key="w_why_piece").set_value(i).run()
    assert not at.exception, at.exception
    steps = tok.encode_trace(pieces[i].text)
    assert any(s.removed for s in steps) and any(not s.removed for s in steps)
    table = frame(at, "merge rank")
    assert table["merge rank"].tolist() == [s.rank for s in steps]
    assert ("learned at step" in table.columns) == trained
    for (_, row), s in zip(table.iterrows(), steps):
        if not s.removed:
            assert row["step"] == f"{row['left']} + {row['right']} → {row['new token']}"
            assert not trained or row["pair count then"] == ref.records[s.rank].count
            continue
        # a removal: the token, and the parts it was split into, which spell it byte for byte
        removed = tok.token_to_id(s.left)
        (record,) = [r for r in ref.records[s.rank].removals if r.token_id == removed]  # what training did
        assert row["left"] == token_label(tok, removed)
        assert pd.isna(row["right"]) and pd.isna(row["new token"])
        if trained:
            assert row["learned at step"] == s.rank + 1 and pd.isna(row["pair count then"])
        assert len(record.parts) >= 2
        assert b"".join(tok.token_bytes(p) for p in record.parts) == tok.token_bytes(removed)
        assert row["step"] == f"✂ {token_label(tok, removed)} removed → " + " + ".join(
            token_label(tok, p) for p in record.parts
        )
    final = tok.encode_piece(pieces[i].text)
    assert table["tokens after"].iloc[-1].split(" | ") == [token_label(tok, t) for t in final]
    assert "removal(s) (✂)" in " ".join(c.value for c in at.caption)


def test_why_this_split_shows_a_pickybpe_removal_as_a_removal_not_a_merge(picky_playground):
    removal_rows_shown(picky_playground, engine(200, picky=0.5), trained=True)


def test_an_imported_pickybpe_trace_shows_its_removals_and_has_no_dropout():
    ref = engine(200, picky=0.5)
    at = playground(text=PICKY_TEXT)
    (uploader,) = open_importer(at).file_uploader
    uploader.set_value([("trace.json", json.dumps(trace_dict(ref)).encode(), "application/json")])
    at.run()
    at.button(key="import_go").click().run()
    assert not at.exception, at.exception
    (key,) = at.session_state["imported_tokenizers"]
    at.session_state[Keys.DROPOUT] = True  # the BPE-dropout expander opened
    at.multiselect(key="w_play_tokenizers").set_value([key]).run()
    at.selectbox(key="w_drop_tok").set_value(0).run()
    assert not at.exception, at.exception
    with pytest.raises(ConfigError) as raised:
        ref.tokenizer().encode(PICKY_TEXT, dropout=0.1, seed=0)
    assert [unescaped(e.value) for e in at.error] == [str(raised.value)]
    at.radio(key="w_play_view").set_value("Why this split").run()
    removal_rows_shown(at, ref, trained=False)


def test_dropout_of_a_pickybpe_tokenizer_says_the_engines_reason_in_the_page(picky_playground):
    at = picky_playground
    at.session_state[Keys.DROPOUT] = True  # the BPE-dropout expander opened
    at.radio(key="w_play_view").set_value("Encode").run()
    at.selectbox(key="w_drop_tok").set_value(0).run()
    assert not at.exception, at.exception
    tok = engine(200, picky=0.5).tokenizer(200)
    with pytest.raises(ConfigError) as raised:
        tok.encode(PICKY_TEXT, dropout=0.1, seed=0)
    assert [unescaped(e.value) for e in at.error] == [str(raised.value)]
    assert all(b.key != "drop_sample" for b in at.button)


def test_the_train_pages_look_up_shows_a_removal_as_a_removal():
    at = playground(config=corpus_config("gpt2", picky=0.5), merges=200)
    at.switch_page("pages/2_Train.py").run()
    tok = engine(200, picky=0.5).tokenizer(200)
    word = "independent"
    steps = tok.encode_trace(tok.encode_pieces(word)[0].text)
    assert any(s.removed for s in steps)
    at.text_input(key="w_word_search").input(word).run()
    assert not at.exception, at.exception
    body = next(b for b in train_html(at) if "got its tokens" in b)
    rows = re.findall(r'<div class="bpe-row( bpe-removal)?">(after step|step) (\d+):', body)
    assert [(bool(r), int(k)) for r, _, k in rows] == [(s.removed, s.rank + 1) for s in steps]
    assert all(kind == "after step" for r, kind, _ in rows if r)
    style = style_of("byte")
    for s in steps:  # each removal row shows the parts the engine split its token into
        if s.removed:
            assert f"removed → {chips(list(s.parts), style=style)}" in body


def test_a_rank_tables_token_no_merge_makes_is_said_so_in_why_this_split_with_no_made_up_merge():
    """A .tiktoken table whose "abcde" merges from its bytes to ab, c, de (no two parts) and
    whose "ab c!" merges to ab, " ", c! and is cut by GPT-2's pattern: the lineage shows each as one
    box saying what tiktoken does with it (whole piece only / never), no merge made up."""
    import base64

    table = [bytes([b]) for b in range(256)]
    table += [b"ab", b"de", b"cd", b"abcd", b"abcde", b"c!", b" c", b"ab c", b"ab c!"]
    data = "".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(table)).encode()
    at = playground(corpus=None, text="abcde ab c!")
    (uploader,) = open_importer(at).file_uploader
    uploader.set_value([("ranks.tiktoken", data, "application/octet-stream")])
    at.run()
    at.button(key="import_go").click().run()
    assert not at.exception, at.exception
    at.radio(key="w_play_view").set_value("Why this split").run()
    why = at.selectbox(key="w_why_tok")
    why.set_value(len(why.options) - 1).run()
    captions = []
    for token_id in (260, 264, 263):
        at.text_input(key="w_why_id").input(str(token_id)).run()
        assert not at.exception and not at.error
        captions.append(next(unescaped(c.value) for c in at.caption if f"(id {token_id})" in c.value))
        body = tree(at)
        assert tree_nodes(body)[0] == token_id
        if token_id != 263:
            assert tree_nodes(body) == [token_id] and "not one merge of two lower-ranked tokens" in root_meta(body)
    assert captions[0] == (
        "abcde (id 260): merge rank 4, not one merge of two lower-ranked tokens: merging its bytes by the ranks "
        "below its own ends in 3 parts; tiktoken gives it only for a piece that is this token whole."
    )
    assert "tiktoken never gives it (its own text encodes as 3 tokens)" in captions[1]
    assert tree_nodes(tree(at)) == [263, 256, 97, 98, 262, 32, 99]  # "ab c" is its merge ab + " c"
