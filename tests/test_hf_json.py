"""HF ``tokenizers``' tokenizer.json as its makers write it: each BPE option either gives HF's
ids on a hostile multilingual text or is refused with a sentence naming it.

The files are made by the makers themselves: HF ``tokenizers`` (``models.BPE(..., ignore_merges=True)``,
its trainer) and transformers' tiktoken converter (``TikTokenConverter``, which writes Llama 3's,
gpt-oss's and Mistral's conversions: every split of a token listed as a merge, ``ignore_merges``
on). Our import of each file must give the ids HF gives loading the same file.
"""

from __future__ import annotations

import base64
import copy
import json
from functools import cache

import pytest
import tokenizers
from conftest import read_sample
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from explorer.errors import ConfigError, FormatError
from explorer.formats.exporters import export_files
from explorer.formats.importers import import_files, import_report
from explorer.stages.units import display_to_bytes

# numbers, whitespace runs, emoji (with a skin tone and a ZWJ family), CJK, Devanagari, Arabic,
# contractions, a lone combining mark, tabs and CRLF
HOSTILE = (
    "Hello, world! 1234567 3.14159 2024-11-27 ١٢٣٤ ۱۲۳\n\n   spaces\t\ttabs  \r\n"
    "🙂👍🏽 👨‍👩‍👧 東京タワーは日本語のテキストです。 中文字符 "
    "नमस्ते दुनिया, मानव अधिकार ।  العربية مرحبا بالعالم، حقوق الإنسان "
    "they'll we're don't  THE the then there other \u0301x  end\n"
)
# the pattern TikTokenConverter writes by default (cl100k's, as HF's regex engine needs it)
CONVERTER_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"""
    r"""\s+(?!\S)|\s+"""
)
CORPUS = "\n".join(read_sample(n) for n in ("udhr_en.txt", "udhr_hi.txt", "udhr_ar.txt", "udhr_zh_hans.txt"))


def hf_ids(data: dict, text: str = HOSTILE) -> list[int]:
    """HF's ids for a text, loading the tokenizer.json ``data`` as a file of it."""
    return tokenizers.Tokenizer.from_str(json.dumps(data)).encode(text, add_special_tokens=False).ids


def our_ids(data: dict, text: str = HOSTILE) -> list[int]:
    return import_files({"tokenizer.json": json.dumps(data).encode("utf-8")}).encode(text)


def refusal(data: dict) -> str:
    with pytest.raises(FormatError) as err:
        import_files({"tokenizer.json": json.dumps(data).encode("utf-8")})
    return str(err.value)


# ---- transformers' tiktoken converter ------------------------------------------------------------
@cache
def byte_level_trained() -> dict:
    """A byte-level BPE trained by HF's own trainer on four scripts (its ids are a rank table)."""
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=1200, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([CORPUS], trainer)
    return json.loads(tok.to_str())


@cache
def converted() -> dict:
    """A Llama-3-like tokenizer.json, as transformers' converter writes it: the trained table as
    tiktoken ranks, plus whole words of the hostile text added at the end (each with the prefixes
    that make it), as Llama 3 added 28,000 tokens to cl100k's."""
    from transformers.convert_slow_tokenizer import TikTokenConverter

    trained = byte_level_trained()
    ranks = {display_to_bytes(t): i for t, i in sorted(trained["model"]["vocab"].items(), key=lambda kv: kv[1])}
    merged = tokenizers.Tokenizer.from_str(json.dumps(trained))
    split = pre_tokenizers.Split(tokenizers.Regex(CONVERTER_PATTERN), behavior="isolated")
    for word, _ in split.pre_tokenize_str(HOSTILE):
        # a word the table merges into [a, bc, d] gets tokens "ab", "cd" and itself:
        # merging never makes "ab" there, so only ignore_merges takes the word whole
        segments = [display_to_bytes(t) for t in merged.encode(word).tokens]
        if len(segments) == 3 and len(segments[1]) == 2:
            left, right = segments[0] + segments[1][:1], segments[1][1:] + segments[2]
            for token in (left, right, left + right):
                ranks.setdefault(token, len(ranks))
    lines = "".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items())
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".tiktoken", delete=False) as f:
        f.write(lines)
    return json.loads(TikTokenConverter(vocab_file=f.name, pattern=CONVERTER_PATTERN).converted().to_str())
