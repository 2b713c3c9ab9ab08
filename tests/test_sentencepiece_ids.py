"""A real SentencePiece BPE vocabulary, in SentencePiece's own id order, as HF ``tokenizers`` reads it.

Mistral 7B v0.1's ``tokenizer.model`` ships in ``mistral_common`` (``data/tokenizer.model.v1``,
Apache-2.0; read from the installed package, not vendored). transformers' ``LlamaTokenizer``
converts it to the ``tokenizer.json`` that transformers writes today (a Metaspace pre-tokenizer,
every split of each piece listed as a merge); the same file with Llama 2's own layout
(``Prepend`` + ``Replace`` normalizer, ``<unk>``) is the second file. Their vocabulary is
numbered as SentencePiece numbers it: ``<unk>``, ``<s>``, ``</s>``, the 256 byte tokens, then
merged pieces and single characters interleaved by score ("▁t" 261, "▁" 28705). Our ids are
derived from the merges and the file's are kept beside them (``Tokenizer.file_ids``): every id
we show or write must be HF's, and every text HF decodes ours must decode the same.
"""

from __future__ import annotations

import json
import shutil
from importlib.resources import files

import pytest
import tokenizers
from conftest import HOSTILE_SCRIPTS
from test_hf_json import HOSTILE

from explorer.errors import DecodeError
from explorer.formats.exporters import EXPORT_FORMATS, export_files, export_problem, file_ids_problem
from explorer.formats.importers import import_files

# the hostile texts, leading/trailing/doubled spaces (the dummy prefix meets them), a "▁" typed
# as text, characters outside the vocabulary (byte fallback: Gothic, mathematical letters, rare
# CJK), a control character
TEXT = "  " + HOSTILE + HOSTILE_SCRIPTS + "  ▁x  𐍈𝔘 龘 \u0301 1234567 \n\x1c"


@pytest.fixture(scope="module")
def converted(tmp_path_factory) -> dict[str, dict]:
    """layout -> the tokenizer.json (parsed) of Mistral 7B v0.1's tokenizer.model."""
    from transformers import LlamaTokenizer

    folder = tmp_path_factory.mktemp("mistral-7b-v0.1")
    with (files("mistral_common") / "data" / "tokenizer.model.v1").open("rb") as src:
        with open(folder / "tokenizer.model", "wb") as dst:
            shutil.copyfileobj(src, dst)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")  # a local folder: nothing to fetch
        written = json.loads(LlamaTokenizer.from_pretrained(folder)._tokenizer.to_str())
    llama2 = json.loads(json.dumps(written))
    llama2["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    }
    llama2["pre_tokenizer"] = None
    llama2["model"]["unk_token"] = "<unk>"
    llama2["model"]["merges"] = [f"{a} {b}" for a, b in llama2["model"]["merges"]]  # Llama 2's files: "▁ t"
    return {"transformers (Metaspace)": written, "Llama 2 (Prepend + Replace)": llama2}


@pytest.fixture(scope="module")
def loaded(converted) -> dict[str, tuple]:
    """layout -> (file, HF's tokenizer of it, ours)."""
    return {
        name: (data, tokenizers.Tokenizer.from_str(json.dumps(data)), import_files({"tokenizer.json": _raw(data)}))
        for name, data in converted.items()
    }


def _raw(data: dict) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


LAYOUTS = ["transformers (Metaspace)", "Llama 2 (Prepend + Replace)"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_mistral_7b_v01_in_sentencepieces_order_gives_hfs_ids_and_hfs_text(loaded, layout):
    data, hf, tok = loaded[layout]
    vocab = data["model"]["vocab"]
    assert vocab["▁t"] < vocab["▁"]  # the order this is about
    ids = hf.encode(TEXT, add_special_tokens=False).ids
    assert tok.shown_ids(tok.encode(TEXT)) == ids
    assert tok.tokens(tok.encode(TEXT)) == hf.encode(TEXT, add_special_tokens=False).tokens
    assert tok.decode(tok.ids_from_shown(ids)) == hf.decode(ids)
    # every token keeps the file's id, the specials and the byte tokens included
    assert all(tok.shown_id(tok.token_to_id(t)) == i for t, i in vocab.items())


def test_characters_outside_the_vocabulary_fall_back_to_byte_tokens_with_hfs_ids(loaded):
    data, hf, tok = loaded["Llama 2 (Prepend + Replace)"]
    text = "𐍈𝔘 龘"
    ids = hf.encode(text, add_special_tokens=False).ids
    assert tok.shown_ids(tok.encode(text)) == ids
    assert "<0xF0>" in tok.tokens(tok.encode(text))
    # a run of byte tokens that is not UTF-8: one U+FFFD per token, as HF's ByteFallback
    part = ids[2:4]
    assert tok.decode(tok.ids_from_shown(part)) == hf.decode(part) == "\ufffd\ufffd"


def test_the_tokenizer_json_export_writes_the_files_ids_back_and_other_formats_say_why_not(loaded):
    data, hf, tok = loaded["Llama 2 (Prepend + Replace)"]
    exported = json.loads(export_files(tok, "hf")["tokenizer.json"])
    assert exported["model"]["vocab"] == data["model"]["vocab"]
    again = tokenizers.Tokenizer.from_str(json.dumps(exported))
    assert again.encode(TEXT, add_special_tokens=False).ids == hf.encode(TEXT, add_special_tokens=False).ids
    for fmt, spec in EXPORT_FORMATS.items():
        if fmt not in ("hf", "trace"):
            assert export_problem(tok, fmt) == file_ids_problem(spec.title), fmt


def test_a_rewound_import_keeps_the_files_ids_of_the_tokens_it_has(loaded):
    data, hf, tok = loaded["transformers (Metaspace)"]
    vocab = data["model"]["vocab"]
    early = tok.truncate(2_000)
    assert all(early.shown_id(i) == vocab[t] for i, t in enumerate(early.vocab.tokens))
    shown = early.shown_ids(early.encode(TEXT))
    assert set(shown) <= {vocab[t] for t in early.vocab.tokens}
    assert early.decode(early.ids_from_shown(shown)) == tok.decode(tok.encode(TEXT))
    later = vocab[tok.vocab.tokens[-1]]  # the piece the last merge makes
    with pytest.raises(DecodeError, match=f"id {later} .* is no token of this tokenizer"):
        early.ids_from_shown([later])
