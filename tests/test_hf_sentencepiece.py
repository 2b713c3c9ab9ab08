"""SentencePiece-style BPE tokenizer.json, as Llama 2, Mistral 7B v0.1 and Gemma ship it: a
character-level BPE with ``byte_fallback`` (a character outside the vocabulary is its UTF-8
bytes, the tokens ``<0x00>`` ... ``<0xFF>``), spaces written as "▁" by the normalizers
``Prepend("▁")`` + ``Replace(" ", "▁")`` (Llama 2, Mistral 7B v0.1), ``Replace`` alone (Gemma) or
a ``Metaspace`` pre-tokenizer (transformers' non-legacy Llama conversion: prepend_scheme first,
split false), and the decoder ``Replace("▁", " ")``, ``ByteFallback``, ``Fuse``, ``Strip``.

The files mirror those: HF ``tokenizers`` trains the merges itself (its BpeTrainer, on UDHR
samples in four scripts) and writes each file through its own API (``models.BPE(...,
byte_fallback=True, fuse_unk=True)`` with the byte tokens after ``<unk>``, ``<s>``, ``</s>``, as
Llama 2's vocabulary has them). Our import of each file must give the ids HF gives loading it,
and decode them to HF's text, on a hostile multilingual text; each option we do not apply as HF
does is refused with a sentence naming it. A vocabulary in SentencePiece's own id order (single
characters after the merged pieces) keeps the file's ids beside the derived ones: shown, decoded
and written as HF numbers them (a real one, Mistral 7B v0.1's: ``test_sentencepiece_ids.py``).
"""

from __future__ import annotations

import copy
import io
import json
from functools import cache

import pytest
import tokenizers
from conftest import ROOT, encode_view, open_importer
from streamlit.testing.v1 import AppTest
from test_hf_json import CORPUS, HOSTILE, hf_ids, our_ids, refusal
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from explorer.cli import main
from explorer.formats.exporters import export_files
from explorer.formats.importers import import_files
from explorer.ui.state import CorpusChoice

# leading, trailing and doubled spaces (the dummy prefix meets them), and characters no UDHR
# sample holds (emoji, kana, "東京"), which only byte fallback encodes; U+001C last, which HF's
# Strip keeps and Python's str.strip does not
TEXT = "  " + HOSTILE + "  ▁x  1234567 \n\x1c"
SPECIALS = ["<unk>", "<s>", "</s>"]
LLAMA_DECODER = decoders.Sequence(
    [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
)


def _llama_normalizer() -> normalizers.Normalizer:
    return normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])


@cache
def _trained() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Merges HF's BpeTrainer learns on the samples with Llama 2's normalizer, each line one
    piece (no pre-tokenizer), and its vocabulary."""
    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>"))
    tok.normalizer = _llama_normalizer()
    trainer = trainers.BpeTrainer(vocab_size=900, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(CORPUS.splitlines(), trainer)
    model = json.loads(tok.to_str())["model"]
    return model["vocab"], [tuple(m) for m in model["merges"]]


def sentencepiece_file(
    *,
    normalizer: normalizers.Normalizer | None = None,
    pre_tokenizer: pre_tokenizers.PreTokenizer | None = None,
    decoder: decoders.Decoder = LLAMA_DECODER,
    byte_fallback: bool = True,
) -> dict:
    """A tokenizer.json in Llama 2's layout (Prepend + Replace, no pre-tokenizer, byte fallback,
    fuse_unk) unless told otherwise, written by HF ``tokenizers``."""
    vocab, merges = _trained()
    shifted = {t: i + (256 if i >= len(SPECIALS) else 0) for t, i in vocab.items()}
    byte_tokens = {f"<0x{b:02X}>": len(SPECIALS) + b for b in range(256)}
    model = models.BPE(
        {**shifted, **byte_tokens}, merges, unk_token="<unk>", fuse_unk=True, byte_fallback=byte_fallback
    )
    tok = tokenizers.Tokenizer(model)
    tok.normalizer = _llama_normalizer() if normalizer is None else normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoder
    tok.add_special_tokens(SPECIALS)
    return json.loads(tok.to_str())


def hf_text(data: dict, ids: list[int]) -> str:
    return tokenizers.Tokenizer.from_str(json.dumps(data)).decode(ids)


def our_text(data: dict, ids: list[int]) -> str:
    return import_files({"tokenizer.json": json.dumps(data).encode("utf-8")}).decode(ids)


def _metaspace(scheme: str, split: bool) -> dict:
    data = sentencepiece_file(
        normalizer=normalizers.Sequence([]),
        pre_tokenizer=pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split),
        decoder=LLAMA_DECODER
        if scheme != "never"
        else decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]),
    )
    data["normalizer"] = None
    return data


LAYOUTS = {
    "Llama 2 / Mistral 7B v0.1 (Prepend + Replace)": lambda: sentencepiece_file(),
    "Gemma (Replace only)": lambda: sentencepiece_file(
        normalizer=normalizers.Replace(" ", "▁"),
        decoder=decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()]),
    ),
    **{
        f"Metaspace prepend_scheme {scheme}, split {split}": (lambda s=scheme, sp=split: _metaspace(s, sp))
        for scheme in ("first", "always", "never")
        for split in (False, True)
    },
    "Strip, no byte fallback": lambda: sentencepiece_file(
        normalizer=normalizers.Strip(), decoder=decoders.Fuse(), byte_fallback=False
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_sentencepiece_style_file_encodes_and_decodes_as_hf_does(layout):
    data = LAYOUTS[layout]()
    ids = hf_ids(data, TEXT)
    assert our_ids(data, TEXT) == ids
    # HF's decode leaves the special tokens out (<unk>, where there is no byte fallback)
    kept = [i for i in ids if i >= len(SPECIALS)]
    assert our_text(data, kept) == hf_text(data, kept)


def test_characters_outside_the_vocabulary_fall_back_to_their_utf8_byte_tokens_as_in_hf():
    data = sentencepiece_file()
    text = "東京 🙂"  # in no UDHR sample: every one of their bytes is a <0xXX> token
    ids = hf_ids(data, text)
    tok = import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    assert tok.encode(text) == ids
    assert "<0xF0>" in tok.tokens(ids) and tok.decode(ids) == text == hf_text(data, ids)
    # a run of byte tokens that is not UTF-8 decodes to one U+FFFD per token, as HF's ByteFallback
    assert tok.decode(ids[1:3]) == hf_text(data, ids[1:3]) == "\ufffd\ufffd"


def test_our_export_of_a_sentencepiece_style_import_loads_in_hf_with_the_same_ids():
    for layout in ("Llama 2 / Mistral 7B v0.1 (Prepend + Replace)", "Metaspace prepend_scheme always, split True"):
        tok = import_files({"tokenizer.json": json.dumps(LAYOUTS[layout]()).encode("utf-8")})
        exported = json.loads(export_files(tok, "hf")["tokenizer.json"])
        assert hf_ids(exported, TEXT) == tok.encode(TEXT), layout
        assert hf_text(exported, tok.encode(TEXT)) == tok.decode(tok.encode(TEXT)), layout


def in_sentencepiece_order(data: dict) -> dict:
    """The file with Llama 2's and Mistral's numbering: <unk>, <s>, </s>, the byte tokens, the
    merged pieces, and the single characters last (SentencePiece's trainer gives them low
    scores; HF's trainer puts them first), written by HF ``tokenizers``."""
    vocab = data["model"]["vocab"]
    products = {a + b for a, b in data["model"]["merges"]}
    chars = [t for t, i in vocab.items() if i >= len(SPECIALS) + 256 and t not in products]
    order = [t for t in vocab if t not in chars] + chars
    sp_order = models.BPE(
        {t: i for i, t in enumerate(order)},
        [tuple(m) for m in data["model"]["merges"]],
        unk_token="<unk>",
        fuse_unk=True,
        byte_fallback=True,
    )
    tok = tokenizers.Tokenizer.from_str(json.dumps(data))
    tok.model = sp_order
    return json.loads(tok.to_str())


def test_a_vocabulary_in_sentencepieces_own_id_order_keeps_hfs_ids_and_decodes_hfs_ids_to_hfs_text():
    data = in_sentencepiece_order(sentencepiece_file())
    assert data["model"]["vocab"]["▁"] > data["model"]["vocab"]["▁t"]
    tok = import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    ids = hf_ids(data, TEXT)
    assert tok.shown_ids(tok.encode(TEXT)) == ids and tok.encode(TEXT) != ids
    kept = [i for i in ids if i >= len(SPECIALS)]
    assert tok.decode(tok.ids_from_shown(kept)) == hf_text(data, kept)


def test_the_cli_and_a_trace_keep_the_files_own_ids_of_a_sentencepiece_ordered_import(tmp_path):
    data = in_sentencepiece_order(sentencepiece_file())
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["import", str(path), "--out", str(tmp_path / "t")], out=out, err=err) == 0, err.getvalue()
    for tokenizer in (str(path), str(tmp_path / "t")):  # the file itself, and the trace written of it
        out, err = io.StringIO(), io.StringIO()
        assert main(["encode", "--tokenizer", tokenizer, "--text", TEXT], out=out, err=err) == 0, err.getvalue()
        assert json.loads(out.getvalue())["ids"] == hf_ids(data, TEXT), tokenizer
    # scan's ids too: each example's id is the one the file gives its token
    (tmp_path / "ref.txt").write_text("hello", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["scan", "--tokenizer", str(path), "--reference", str(tmp_path / "ref.txt")], out=out, err=err) == 0
    notes = [n for kind in json.loads(out.getvalue())["examples"].values() for n in kind]
    vocab = data["model"]["vocab"]
    assert any(n["token"] in {a + b for a, b in data["model"]["merges"]} for n in notes)  # merged: ids that move
    assert [n["id"] for n in notes] == [vocab[n["token"]] for n in notes]


def test_the_playground_lists_and_decodes_the_files_own_ids_of_a_sentencepiece_ordered_import():
    data = in_sentencepiece_order(sentencepiece_file())
    ids = hf_ids(data, TEXT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=("udhr_en.txt",))
    at.run()
    at.switch_page("pages/3_Playground.py").run()
    at.radio(key="w_play_view").set_value("Decode ids")
    at.text_area(key="w_play_text").input(TEXT)
    (uploader,) = open_importer(at).file_uploader
    uploader.set_value([("tokenizer.json", json.dumps(data).encode("utf-8"), "application/json")])
    at.run()
    at.button(key="import_go").click().run()
    (name,) = [o for o in at.selectbox(key="w_dec_tok").options if o.startswith("imported: ")]
    at.selectbox(key="w_dec_tok").set_value(name).run()
    assert not at.exception, at.exception
    # the text's ids, listed as the file numbers them
    listed = list(at.dataframe[0].value["id"])
    assert listed == ids[: len(listed)] and len(listed) > 20
    # ids typed are the file's: HF's text back
    at.text_area(key="w_dec_ids").input(", ".join(map(str, ids[4:12]))).run()
    assert not at.error, [e.value for e in at.error]
    assert at.code[0].value == hf_text(data, ids[4:12])
    assert list(at.dataframe[0].value["id"]) == ids[4:12]
    # Why this split: an id typed is the file's, and the lineage names the token by it
    at.radio(key="w_play_view").set_value("Why this split").run()
    why = at.selectbox(key="w_why_tok")
    why.set_value(why.options.index(name)).run()
    token = max((a + b for a, b in data["model"]["merges"]), key=len)
    at.text_input(key="w_why_id").input(str(data["model"]["vocab"][token])).run()
    assert not at.error, [e.value for e in at.error]
    shown = f"{token} (id {data['model']['vocab'][token]}): merge rank"
    assert any(c.value.replace("\\", "").startswith(shown) for c in at.caption), [c.value for c in at.caption]
    # Encode: the ids in the import's tab of the details (the import alone, so nothing else is encoded)
    picked = at.multiselect(key="w_play_tokenizers")
    picked.set_value([k for k in picked.value if k.startswith("imported:")])
    at.radio(key="w_play_view").set_value("Encode").run()
    (panel,) = encode_view(at)
    assert panel.ids == ids


def _model(**changes):
    return lambda d: d["model"].update(changes)


REFUSED = {
    "continuing_subword_prefix": (_model(continuing_subword_prefix="##"), "'model.continuing_subword_prefix' is '##'"),
    "end_of_word_suffix": (_model(end_of_word_suffix="_"), "'model.end_of_word_suffix' is '_': only '</w>'"),
    "max_token_length": (_model(max_token_length=16), "'model.max_token_length' is 16: this option is not supported"),
    "dropout": (_model(dropout=0.1), "'model.dropout' is 0.1: HF skips merges at random"),
    "a decoder without ByteFallback": (
        lambda d: d.update(decoder={"type": "Fuse"}),
        "'decoder' is {'type': 'Fuse'}: with normalizer 'sp-prepend' and byte fallback only",
    ),
    "a normalizer and a Metaspace": (
        lambda d: d.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}),
        "has a normalizer (sp-prepend) and a Metaspace pre-tokenizer on the whole text",
    ),
    "another replacement": (
        lambda d: d.update(normalizer=None, pre_tokenizer={"type": "Metaspace", "replacement": "_", "split": False}),
        "only a Metaspace with the replacement '▁' is supported (found replacement '_'",
    ),
    "Prepend of another string": (
        lambda d: d["normalizer"]["normalizers"][0].update(prepend="_"),
        "'normalizer': a Sequence of {'type': 'Prepend', 'prepend': '_'}, {'type': 'Replace'",
    ),
    "NFKC before Prepend": (
        lambda d: d["normalizer"]["normalizers"].insert(0, {"type": "NFKC"}),
        "'normalizer': a Sequence of {'type': 'NFKC'}, {'type': 'Prepend', 'prepend': '▁'}, {'type': 'Replace'",
    ),
}


@pytest.mark.parametrize("case", REFUSED)
def test_a_sentencepiece_option_we_do_not_apply_as_hf_does_is_refused_with_a_sentence_naming_it(case):
    change, expected = REFUSED[case]
    data = copy.deepcopy(sentencepiece_file())
    change(data)
    msg = refusal(data)
    assert msg.startswith("tokenizer.json") and expected in msg, msg
