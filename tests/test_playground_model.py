"""The Playground's model (explorer.ui.playground_model) without Streamlit: the rows, labels and
sentences its panels show, on small tokenizers trained here, written out as the page must show
them (golden examples) and counted against the engine; and its keys, which must be the keys the
page's widgets use."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter

import pytest
from conftest import ROOT, assert_keys_named, constants, widget_keys
from streamlit.testing.v1 import AppTest
from test_hf_json import hf_ids
from test_hf_sentencepiece import TEXT, hf_text, in_sentencepiece_order, sentencepiece_file

from explorer import Trainer, TrainerConfig, load_pretrained
from explorer.analysis.lineage import lineage
from explorer.analysis.text import sample_segmentations, twin_configs
from explorer.errors import ExplorerError
from explorer.formats.importers import import_files
from explorer.ui import playground_model as model
from explorer.ui.catalog import Entry
from explorer.ui.playground_model import Keys, Session
from explorer.ui.state import CorpusChoice

CORPUS = "low lower lowest newer newest"


@pytest.fixture(scope="module")
def trained() -> Entry:
    """The session's tokenizer as the catalog hands it over: four char-level merges (w+e, l+o,
    lo+we, s+t), with its trainer and corpus."""
    trainer = Trainer.from_texts(CORPUS, TrainerConfig(pretokenizer="whitespace", unit="char", num_merges=4))
    trainer.advance(4)
    return Entry("trained@4", "trained", "trained (4 merges)", "trained", trainer.tokenizer(), trainer, (CORPUS,))


@pytest.fixture(scope="module")
def twins() -> tuple[Trainer, Trainer]:
    """The char-vs-byte view's twins, configured as the page configures them."""
    char, byte = twin_configs(TrainerConfig(pretokenizer="whitespace"), merges=4)
    out = Trainer.from_texts(CORPUS, char), Trainer.from_texts(CORPUS, byte)
    for trainer in out:
        trainer.advance(4)
    return out


@pytest.fixture(scope="module")
def gpt2() -> Entry:
    return Entry("gpt2", "table", "GPT-2 (gpt2)", "gpt2", load_pretrained("gpt2"))


# ---- encode --------------------------------------------------------------------------------------
def test_the_comparison_counts_each_tokenizers_tokens_against_the_fewest(trained, gpt2):
    text = "slower é"
    rows = model.comparison_rows([model.encode(e, text, allow_special=False) for e in (trained, gpt2)])
    ours, theirs = len(trained.tokenizer.encode(text)), len(gpt2.tokenizer.encode(text))
    assert (ours, theirs) == (4, 3)  # s | lowe | r | <unk> (é: unseen); GPT-2's table: 3
    assert rows == [
        ("trained", 4, 8 / 4, 9 / 4, 1, 4 / 3, "lossy: unknown symbols"),
        ("gpt2", 3, 8 / 3, 9 / 3, 0, 1.0, "exact"),
    ]


def test_a_lossy_round_trip_lists_each_lost_symbol_with_its_code_point_or_its_byte(trained, twins):
    trip = model.encode(trained, "éé a😀", allow_special=False).trip
    assert not trip.exact and trip.unknown == Counter({"é": 2, "a": 1, "😀": 1})
    assert model.unknown_rows(trained.tokenizer, trip.unknown) == [
        {"symbol": "é", "code point": "U+00E9", "count": 2},
        {"symbol": "a", "code point": "U+0061", "count": 1},
        {"symbol": "😀", "code point": "U+1F600", "count": 1},
    ]
    assert model.unknown_rows(twins[1].tokenizer(), Counter({"Ã": 3})) == [
        {"symbol": "byte c3", "code point": "", "count": 3}  # a byte-level display: the byte it stands for
    ]


def test_the_twins_lines_count_each_ones_tokens_and_unknown_symbols(twins):
    char, byte = (t.tokenizer() for t in twins)
    ids, line = model.twin_line("Character level", char, "lowest 😀")
    assert ids == char.encode("lowest 😀") and line == f"Character level: {len(ids)} tokens, 1 unknown"
    ids, line = model.twin_line("Byte level", byte, "lowest 😀")
    assert line == f"Byte level: {len(byte.encode('lowest 😀'))} tokens, 0 unknown"


# ---- dropout -----------------------------------------------------------------------------------------
def test_dropout_rows_and_lengths_count_every_sample_the_engine_draws(trained):
    tok = trained.tokenizer
    counts = sample_segmentations(tok, "lowest newest", dropout=0.5, samples=6, seed=3)
    assert sum(k for _, k in counts) == 6
    assert model.segmentation_rows(tok, counts) == [
        {"times": 2, "tokens": 9, "segmentation": "lo | w | e | st | n | e | w | e | st"},
        {"times": 1, "tokens": 8, "segmentation": "lo | we | st | n | e | w | e | st"},
        {"times": 1, "tokens": 12, "segmentation": "l | o | w | e | s | t | n | e | w | e | s | t"},
        {"times": 1, "tokens": 6, "segmentation": "lowe | st | n | e | we | st"},
        {"times": 1, "tokens": 9, "segmentation": "lo | we | s | t | n | e | w | e | st"},
    ]
    assert model.length_counts(counts) == [(6, 1), (8, 1), (9, 3), (12, 1)]
    assert model.dropout_caption(counts, samples=6, seed=3, plain=len(tok.encode("lowest newest"))) == (
        "5 distinct segmentations in 6 samples (seeds 3…8); without dropout 6 tokens."
    )


# ---- the fewest tokens ------------------------------------------------------------------------------
def test_the_fewest_tokens_are_found_where_bpes_merges_spend_more(gpt2):
    tok = gpt2.tokenizer
    found = model.shortest(tok, "Caius and Marcius, wholesome")
    assert found.bpe == tok.encode("Caius and Marcius, wholesome") and len(found.fewest) == len(found.bpe) - 1
    assert found.rows == [{"piece": "Caius", "times": 1, "BPE": "C | ai | us", "fewest": "Ca | ius", "saved": 1}]
    assert model.positions(found.gaps, shortest=False) == {0, 1, 2}  # C | ai | us, outlined
    assert model.positions(found.gaps, shortest=True) == {0, 1}  # Ca | ius
    assert found.caption == (
        "Each piece cut into the fewest tokens of the same vocabulary (a shortest path; of equally short splits, "
        "the longest first token). BPE's merges spend 1 token(s) more (11.1% of BPE's), in 1 of 5 pieces "
        "(outlined). Special-token text is plain text here, as the CLI's evaluate counts it."
    )
    long = "Caius " * (model.SHORTEST_CHARS // 6 + 1)
    assert model.shortest(tok, long).caption.endswith(f" The first {model.SHORTEST_CHARS:,} characters.")


# ---- why this split -----------------------------------------------------------------------------------
def test_why_this_split_picks_the_most_merged_piece_and_its_longest_token_first(trained):
    tok = trained.tokenizer
    pieces = tok.encode_pieces("slower lowest")
    assert [model.piece_label(pieces, i) for i in range(len(pieces))] == [
        "1: slower (3 tokens)",
        "2: lowest (2 tokens)",
    ]
    assert model.default_piece(tok, pieces) == 1  # 6 symbols into 2 tokens: four merges, against three
    assert [tok.token_text(t) for t in model.piece_tokens(tok, pieces[0])] == ["lowe", "s", "r"]
    assert model.token_option(tok, tok.token_to_id("lowe")) == f"lowe  (id {tok.token_to_id('lowe')})"


def test_the_trace_lists_each_merge_encode_applies_with_the_step_that_learned_it(trained):
    rows = model.trace_rows(trained, "lowest")
    assert [(r["left"], r["right"], r["new token"]) for r in rows] == [
        ("w", "e", "we"),
        ("l", "o", "lo"),
        ("lo", "we", "lowe"),
        ("s", "t", "st"),
    ]
    records = trained.trainer.records
    assert [(r["merge rank"], r["learned at step"], r["pair count then"]) for r in rows] == [
        (k, records[k].step, records[k].count) for k in range(4)
    ]
    assert [r["tokens after"] for r in rows] == ["l | o | we | s | t", "lo | we | s | t", "lowe | s | t", "lowe | st"]
    assert model.trace_caption(trained, rows) == (
        "4 merge(s) applied to this piece, lowest rank first (leftmost on ties). "
        "Rank r is the merge learned at step r + 1."
    )
    assert model.trace_rows(trained, "n") == []
    assert model.trace_caption(trained, []) == "No merge applies to this piece: it stays as its base symbols."


def test_a_tables_and_an_imports_trace_say_what_their_ranks_are(gpt2, trained):
    rows = model.trace_rows(gpt2, "Caius")
    assert model.trace_caption(gpt2, rows) == (
        f"{len(rows)} merge(s) applied to this piece, lowest rank first (leftmost on ties). "
        "A table's rank is the token's id minus 256."
    )
    imported = Entry("imp", "imported", "mine.json", "mine", trained.tokenizer)
    assert model.trace_caption(imported, model.trace_rows(imported, "lowest")).endswith(
        "Rank r is the file's merge r + 1."
    )
    assert "learned at step" not in model.trace_rows(imported, "lowest")[0]  # no trainer: no step to say


def test_a_lineage_caption_counts_the_merges_and_base_symbols_that_built_the_token(trained):
    tok = trained.tokenizer
    lowe, st, low = tok.token_to_id("lowe"), tok.token_to_id("st"), tok.token_to_id("l")
    assert model.lineage_caption(trained, lowe, lineage(tok, lowe)) == (
        f"lowe (id {lowe}): learned at step 3; built by 3 merge(s) from 4 base symbol(s). "
        "Yellow chips are base symbols."
    )
    assert model.lineage_caption(trained, st, lineage(tok, st)).startswith(
        f"st (id {st}): learned at step 4; built by 1"
    )
    assert model.lineage_caption(trained, low, lineage(tok, low)) == f"l (id {low}) is a base symbol: no merge made it."


def test_a_lineage_caption_writes_the_tokens_markdown_characters_as_text():
    trainer = Trainer.from_texts("*a* *a*", TrainerConfig(pretokenizer="whitespace", unit="char", num_merges=2))
    trainer.advance(2)
    tok = trainer.tokenizer()
    (starred,) = tok.encode("*a*")
    entry = Entry("trained@2", "trained", "t", "t", tok, trainer)
    assert model.lineage_caption(entry, starred, lineage(tok, starred)) == (
        rf"\*a\* (id {starred}): learned at step 2; built by 2 merge(s) from 3 base symbol(s). "
        "Yellow chips are base symbols."
    )


@pytest.mark.parametrize(
    ("typed", "found"),
    [("3", 3), (" 7 ", 7), ("11", 11), ("12", None), ("²", None), ("-1", None), ("1e3", None), ("9" * 13, None)],
)
def test_a_typed_token_id_names_a_token_or_nothing(trained, typed, found):
    assert len(trained.tokenizer.vocab) == 12
    assert model.typed_token(trained.tokenizer, typed) == found


def test_a_bad_typed_id_is_told_the_range_of_ids(trained):
    assert model.bad_id_sentence(trained.tokenizer) == (
        "A token id is a whole number from 0 to 11 that names a token of this tokenizer."
    )


# ---- char vs byte, decode ------------------------------------------------------------------------------
def test_byte_level_spells_out_each_character_char_level_cannot(twins):
    byte = twins[1].tokenizer()
    rows = model.twin_unknown_rows(byte, Counter("éé😀"))
    assert [r["byte-level ids"] for r in rows] == [", ".join(map(str, byte.encode(ch))) for ch in "é😀"]
    for row in rows:
        del row["byte-level ids"]
    assert rows == [
        {
            "character": "é",
            "code point": "U+00E9",
            "count": 2,
            "UTF-8 bytes": "c3 a9",
            "byte-level tokens": "⟨c3⟩ | ⟨a9⟩",
        },
        {
            "character": "😀",
            "code point": "U+1F600",
            "count": 1,
            "UTF-8 bytes": "f0 9f 98 80",
            "byte-level tokens": "⟨f0⟩ | ⟨9f⟩ | ⟨98⟩ | ⟨80⟩",
        },
    ]
    config = twins[0].config
    assert model.twin_caption("a *starred* name", config) == (
        r"Both are trained on the session's corpus (a \*starred\* name) with the Train page's normalizer "
        f"({config.normalizer}) and pre-tokenizer (whitespace); only the unit differs."
    )


def test_decoding_ids_lists_a_partial_characters_tokens_as_bytes(twins):
    byte = twins[1].tokenizer()
    ids = byte.encode("lé")
    assert model.decode_rows(byte, ids) == [
        {"id": ids[0], "token": "l", "bytes": "6c", "note": ""},
        {"id": ids[1], "token": "⟨c3⟩", "bytes": "c3", "note": "part of a character: its bytes in hex"},
        {"id": ids[2], "token": "⟨a9⟩", "bytes": "a9", "note": "part of a character: its bytes in hex"},
    ]
    assert len(model.decode_rows(byte, ids * 100)) == model.DECODE_ROWS
    assert model.decode_caption(ids, "strict", byte.decode(ids)) == "decode(3 ids, errors='strict') gives 2 characters:"


def test_typed_ids_decode_in_the_files_numbering_and_none_typed_decode_the_text(twins, gpt2):
    byte = twins[1].tokenizer()
    ids, decoded = model.decode_ids(byte, "", "lé", errors="strict")
    assert ids == byte.encode("lé") and decoded == "lé"
    typed = ", ".join(map(str, ids[:2]))  # l and the first byte of é: half a character
    assert model.decode_ids(byte, f"[{typed}]", "ignored", errors="replace") == (ids[:2], "l\ufffd")
    assert model.decode_ids(byte, typed, "", errors="ignore") == (ids[:2], "l")
    with pytest.raises(ExplorerError):
        model.decode_ids(byte, typed, "", errors="strict")
    with pytest.raises(ExplorerError, match="'1e3' \\(position 0\\) is not a whole number"):
        model.decode_ids(gpt2.tokenizer, "1e3", "", errors="replace")
    long = "ab " * model.ID_LIMIT
    assert len(model.decode_ids(gpt2.tokenizer, " ", long, errors="replace")[0]) == model.ID_LIMIT


def test_a_sentencepiece_ordered_imports_ids_are_typed_listed_and_decoded_as_its_file_numbers_them():
    data = in_sentencepiece_order(sentencepiece_file())
    tok = import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    ids = [i for i in hf_ids(data, TEXT) if i >= 3][:8]  # HF's numbering; no special token
    assert tok.ids_from_shown(ids) != ids  # the file's numbers are not encode's
    assert model.decode_ids(tok, " ".join(map(str, ids)), "", errors="replace")[1] == hf_text(data, ids)
    listed = model.decode_rows(tok, model.decode_ids(tok, "", TEXT, errors="replace")[0])
    assert [row["id"] for row in listed] == hf_ids(data, TEXT)[: len(listed)]
    merged = max((a + b for a, b in data["model"]["merges"]), key=len)
    assert model.typed_token(tok, str(data["model"]["vocab"][merged])) == tok.token_to_id(merged)


def test_the_round_trip_sentence_says_exact_lossy_or_different(trained, gpt2):
    assert model.trip_sentence(model.encode(gpt2, "héllo", allow_special=False)) == (
        "Round trip: decode(encode(text)) gives the text back exactly."
    )
    assert model.trip_sentence(model.encode(trained, "éé a", allow_special=False)) == (
        "Round trip is lossy: 3 symbol(s) became the unknown token; 2 distinct, listed below."
    )


# ---- the link ----------------------------------------------------------------------------------------------
def test_the_links_view_params_name_the_view_and_only_its_own_choices():
    assert model.view_params({}) == {}  # Encode, whitespace shown, special tokens as text: the defaults
    why = {Keys.VIEW: "Why this split", Keys.WHY_TOKENIZER: 1, Keys.WHY_PIECE: 0, Session.SHOWN_TOKEN: 612}
    decode = {Keys.VIEW: "Decode ids", Keys.DECODE_IDS: " 15496, 11 ", Keys.DECODE_ERRORS: "strict"}
    assert model.view_params(why | {Keys.DECODE_IDS: "1 2"}) == {
        "view": "why",
        "why_tokenizer": "1",
        "piece": "0",
        "token": "612",
    }
    assert model.view_params(decode | {Keys.WHY_PIECE: 3, Keys.WHITESPACE: False}) == {
        "view": "decode",
        "whitespace": "0",
        "ids": "15496, 11",
        "errors": "strict",
    }
    assert model.view_params({Keys.VIEW: "Char vs byte", Keys.SPECIAL: True}) == {"view": "char-byte", "special": "1"}
    # ids past what a link carries stay out of it; the default errors mode is not written
    too_many = {Keys.VIEW: "Decode ids", Keys.DECODE_IDS: "1 " * model.INLINE_IDS, Keys.DECODE_ERRORS: "replace"}
    assert model.view_params(too_many) == {"view": "decode"}


@pytest.mark.parametrize(
    "values",
    [
        {Keys.VIEW: "Encode"},
        {Keys.VIEW: "Char vs byte", Keys.WHITESPACE: False, Keys.SPECIAL: True},
        {Keys.VIEW: "Decode ids", Keys.DECODE_IDS: "1, 2, 3", Keys.DECODE_ERRORS: "ignore"},
        {Keys.VIEW: "Why this split"},
    ],
)
def test_a_links_view_params_read_back_as_the_widgets_they_came_from(values):
    restored, problems = model.view_values(model.view_params(values))
    assert problems == [] and restored == values


def test_a_link_with_a_bad_view_or_errors_mode_says_so_and_keeps_the_rest():
    restored, problems = model.view_values({"view": "<b>x</b>", "errors": "loud", "special": "1", "ids": "9" * 3000})
    assert restored == {Keys.SPECIAL: True, Keys.DECODE_IDS: "9" * model.INLINE_IDS}
    # whitespace is shown unless a link says 0; special tokens allowed only when it says 1
    assert model.view_values({"whitespace": "yes", "special": "yes"})[0] == {
        Keys.VIEW: "Encode",
        Keys.WHITESPACE: True,
        Keys.SPECIAL: False,
    }
    assert problems == [
        "view='<b>x</b>' is not one of encode, why, char-byte, decode",
        "errors='loud' is not one of replace, strict, ignore",
    ]


def test_a_long_text_goes_in_the_link_by_its_digest_once_stored_else_its_start():
    assert model.text_params(model.EXAMPLES["English prose"], stored=True) == {}
    short = "x" * model.INLINE_TEXT
    assert model.text_params(short, stored=True) == {"text": short}  # as long as a link carries: itself
    long = "é\ud800" + short
    digest = hashlib.sha256(long.encode("utf-8", "surrogatepass")).hexdigest()
    assert model.text_params(long, stored=True) == {"text_id": digest}
    assert model.text_params(long, stored=False) == {"text": long[: model.INLINE_TEXT]}


# ---- the keys ---------------------------------------------------------------------------------------------
# widgets of the page that other modules draw (the import area, the projector switch)
FOREIGN = ("hub_", "import_", "w_hub_", "w_imp_", "projector_")


def test_every_key_the_model_names_is_a_widget_of_the_page_and_every_widget_is_named():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state["corpus_choice"] = CorpusChoice(samples=("udhr_en.txt",))
    at.run()
    at.switch_page("pages/2_Train.py").run()
    at.button(key="step10").click().run()  # the trained tokenizer's slider needs merges
    at.switch_page("pages/3_Playground.py").run()
    at.session_state[Keys.SHORTEST] = True  # opened: its tokenizer picker is drawn
    at.session_state[Keys.DROPOUT] = True  # and the BPE-dropout's widgets
    at.run()
    seen = widget_keys(at)
    for view in model.VIEWS[1:]:
        at.radio(key=Keys.VIEW).set_value(view).run()
        seen |= widget_keys(at)
    at.text_area(key=Keys.TEXT).input("x" * 500).run()  # a long text is stored: the link names it by hash
    assert not at.exception
    assert_keys_named(seen, Keys, foreign=FOREIGN, prefixes=("_AT", "_OF"))
    assert all(key in at.session_state for key in constants(Session).values())


def test_the_pages_models_import_no_streamlit():
    """Every page model (``explorer.ui.*_model``), imported alone: what a page computes is tested
    without a session, so no model may need Streamlit."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import explorer.ui\n"
        "names = [m.name for m in pkgutil.iter_modules(explorer.ui.__path__, 'explorer.ui.') if m.name.endswith('_model')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "assert {'explorer.ui.playground_model', 'explorer.ui.class_model'} <= set(names), names\n"
        "assert 'streamlit' not in sys.modules, [n for n in names if 'streamlit' in vars(sys.modules[n])]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
