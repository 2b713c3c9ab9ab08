"""The tokenizers real models use, bundled and loaded offline: GPT-2, cl100k_base, o200k_base.

The tables live in ``explorer/data/pretrained`` (with their SOURCES.md and licences); each file's
sha256 is checked on load. GPT-2 keeps its own merges (``vocab.bpe``); the two ``.tiktoken``
tables list ranks only, and their merges are recovered (:mod:`explorer.ranks`). All three encode
with tiktoken's rules, so their ids are tiktoken's.

>>> tok = load_pretrained("cl100k_base")
>>> tok.encode("hello world"), len(tok.merges)
([15339, 1917], 100000)
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from pathlib import Path
from typing import NamedTuple

from .errors import ConfigError, FormatError
from .formats import load_tokenizer
from .importers import read_tiktoken, tokenizer_from_gpt2
from .ranks import tokenizer_from_ranks
from .tokenizer import Tokenizer

__all__ = ["PRETRAINED", "PRETRAINED_DIR", "PretrainedSpec", "TIKTOKEN_TABLES", "bundled_table", "load_pretrained",
           "resolve_tokenizer"]

PRETRAINED_DIR = Path(__file__).resolve().parent / "data" / "pretrained"


class PretrainedSpec(NamedTuple):
    name: str
    title: str
    description: str
    pretokenizer: str  # one of the built-in patterns (explorer.pretokenizers.PATTERNS)
    files: dict[str, str]  # path under PRETRAINED_DIR -> sha256 (as in SOURCES.md)
    special_ids: dict[str, int]  # tiktoken's special_tokens for this encoding


PRETRAINED: dict[str, PretrainedSpec] = {
    s.name: s
    for s in (
        PretrainedSpec(
            "gpt2", "GPT-2", "GPT-2 / r50k_base (2019): 50,257 tokens, GPT-2's regex",
            "gpt2",
            {"gpt2/encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
             "gpt2/vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"},
            {"<|endoftext|>": 50256},
        ),
        PretrainedSpec(
            "cl100k_base", "cl100k_base", "GPT-3.5 / GPT-4 (2023): 100,256 tokens, digits in groups of three",
            "cl100k",
            {"tiktoken/cl100k_base.tiktoken.gz": "fc41a727e9805107673135c211cd4103f52e397e58dbe28678dae8f3fbd1f8f7"},
            {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
             "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
        ),
        PretrainedSpec(
            "o200k_base", "o200k_base", "GPT-4o (2024): 199,998 tokens, many languages, splits camelCase",
            "o200k",
            {"tiktoken/o200k_base.tiktoken.gz": "4b853e30c4b17ae1ec71de9031c25f3b157453511d586e1f01c9424266254058"},
            {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        ),
    )
}

# the bundled .tiktoken tables as tiktoken downloads and caches them (decompressed): name -> (bytes,
# sha256), the hashes tiktoken itself checks (SOURCES.md); a test derives them from the .gz files
TIKTOKEN_TABLES: dict[str, tuple[int, str]] = {
    "cl100k_base": (1_681_126, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": (3_613_922, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}


def bundled_table(data: bytes) -> str | None:
    """The bundled tokenizer whose ``.tiktoken`` table is byte for byte ``data`` (a
    ``cl100k_base.tiktoken`` as tiktoken caches it), or None. Only a file of a table's exact size
    is hashed.

    >>> bundled_table(b"IQ== 0\\n") is None
    True
    """
    for name, (size, digest) in TIKTOKEN_TABLES.items():
        if len(data) == size and hashlib.sha256(data).hexdigest() == digest:
            return name
    return None


_loaded: dict[str, Tokenizer] = {}
_lock = threading.Lock()


def _read(spec: PretrainedSpec, rel: str) -> bytes:
    path = PRETRAINED_DIR / rel
    try:
        data = path.read_bytes()
    except OSError as err:
        raise FormatError(f"cannot read the bundled {spec.name} table {rel}: {err.strerror or err}") from None
    if hashlib.sha256(data).hexdigest() != spec.files[rel]:
        raise FormatError(f"the bundled {spec.name} table {rel} is damaged (its sha256 differs from SOURCES.md)")
    return data


def load_pretrained(name: str) -> Tokenizer:
    """A bundled tokenizer by name, loaded once per process (tokenizers are read-only, so every
    caller, and every session of the app, shares it)."""
    if name not in PRETRAINED:
        raise ConfigError(f"unknown pretrained tokenizer {name!r}; choose one of {', '.join(PRETRAINED)}")
    with _lock:
        tok = _loaded.get(name)
        if tok is None:
            spec = PRETRAINED[name]
            if name == "gpt2":
                encoder, merges = (_read(spec, rel).decode("utf-8") for rel in spec.files)
                tok = tokenizer_from_gpt2(encoder, merges, pretokenizer=spec.pretokenizer)
            else:
                (rel,) = spec.files
                tokens = read_tiktoken(gzip.decompress(_read(spec, rel)))
                tok = tokenizer_from_ranks(tokens, pretokenizer=spec.pretokenizer, special_ids=spec.special_ids)
            if tok.special_ids != spec.special_ids:  # pragma: no cover - the bundled files are fixed
                raise FormatError(f"{name}: special tokens {tok.special_ids} differ from tiktoken's {spec.special_ids}")
            _loaded[name] = tok
        return tok


def resolve_tokenizer(name_or_dir: str) -> Tokenizer:
    """A bundled tokenizer's name (``gpt2``, ``cl100k_base``, ``o200k_base``) or a folder
    holding a ``trace.json`` (write ``./gpt2`` for a folder of that name)."""
    if name_or_dir in PRETRAINED:
        return load_pretrained(name_or_dir)
    if not Path(name_or_dir).exists():
        raise ConfigError(f"{name_or_dir!r} is neither a bundled tokenizer ({', '.join(PRETRAINED)}) "
                          "nor a folder holding trace.json")
    return load_tokenizer(name_or_dir)
