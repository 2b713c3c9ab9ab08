"""The tokenizers real models use, as bundled: GPT-2, cl100k_base, o200k_base, each file checked
against its sha256 on load, each table loaded once per process.

The tables live in ``explorer/data/pretrained`` (with their SOURCES.md and licences). GPT-2 keeps
its own merges (``vocab.bpe``); the two ``.tiktoken`` tables list ranks only, so their merges were
recovered (:mod:`explorer.bpe.ranks`) once and ship beside them (``NAME.merges.json.gz``, derived:
:func:`explorer.formats.pretrained.derive_merges`), and a table loads from those. This module sits
below the file formats (the ``tiktoken`` format recognises a bundled table by its bytes and loads
it from here); :mod:`explorer.formats.pretrained` adds what needs the formats (a path on disk, a
Hub id) and names all of it.

>>> tok = load_pretrained("cl100k_base")
>>> tok.encode("hello world"), len(tok.merges)
([15339, 1917], 100000)
"""

from __future__ import annotations

import gzip
import hashlib
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from ..bpe.ranks import read_merges_file, tokenizer_from_merges
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError
from .gpt2 import tokenizer_from_gpt2

__all__ = [
    "PRETRAINED",
    "PRETRAINED_DIR",
    "PretrainedSpec",
    "TIKTOKEN_TABLES",
    "bundled_table",
    "load_pretrained",
    "merges_source",
    "read_bundled",
    "warm_pretrained",
]

PRETRAINED_DIR = Path(__file__).resolve().parent.parent / "data" / "pretrained"


class PretrainedSpec(NamedTuple):
    name: str
    title: str
    description: str
    pretokenizer: str  # one of the built-in patterns (explorer.stages.pretokenizers.PATTERNS)
    files: dict[str, str]  # the table as published: path under PRETRAINED_DIR -> sha256 (as in SOURCES.md)
    special_ids: dict[str, int]  # tiktoken's special_tokens for this encoding
    # a .tiktoken table's merges file, derived here from ``files``: (path, sha256), as in SOURCES.md
    derived: tuple[str, str] | None = None

    @property
    def reads(self) -> dict[str, str]:
        """The files ``load_pretrained`` reads (path -> sha256): a rank table's merges file, else
        the table's own files."""
        return dict([self.derived]) if self.derived else self.files


PRETRAINED: dict[str, PretrainedSpec] = {
    s.name: s
    for s in (
        PretrainedSpec(
            "gpt2",
            "GPT-2",
            "GPT-2 / r50k_base (2019): 50,257 tokens, GPT-2's regex",
            "gpt2",
            {
                "gpt2/encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
                "gpt2/vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            },
            {"<|endoftext|>": 50256},
        ),
        PretrainedSpec(
            "cl100k_base",
            "cl100k_base",
            "GPT-3.5 / GPT-4 (2023): 100,256 tokens, digits in groups of three",
            "cl100k",
            {"tiktoken/cl100k_base.tiktoken.gz": "fc41a727e9805107673135c211cd4103f52e397e58dbe28678dae8f3fbd1f8f7"},
            {
                "<|endoftext|>": 100257,
                "<|fim_prefix|>": 100258,
                "<|fim_middle|>": 100259,
                "<|fim_suffix|>": 100260,
                "<|endofprompt|>": 100276,
            },
            ("tiktoken/cl100k_base.merges.json.gz", "639c81530d25a2ac914154c5bd24eb017f63c96e6cf073af4272ca0f2dfeb4b2"),
        ),
        PretrainedSpec(
            "o200k_base",
            "o200k_base",
            "GPT-4o (2024): 199,998 tokens, many languages, splits camelCase",
            "o200k",
            {"tiktoken/o200k_base.tiktoken.gz": "4b853e30c4b17ae1ec71de9031c25f3b157453511d586e1f01c9424266254058"},
            {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
            ("tiktoken/o200k_base.merges.json.gz", "9038281fbe01b2d56f261c2e55917da9baf814f9399cdadf1dbb2344c021e09c"),
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
_locks = {name: threading.Lock() for name in PRETRAINED}  # one per table: a load never waits for another's


def read_bundled(spec: PretrainedSpec, rel: str, digest: str) -> bytes:
    path = PRETRAINED_DIR / rel
    try:
        data = path.read_bytes()
    except OSError as err:
        raise FormatError(f"cannot read the bundled {spec.name} table {rel}: {err.strerror or err}") from None
    if hashlib.sha256(data).hexdigest() != digest:
        raise FormatError(f"the bundled {spec.name} table {rel} is damaged (its sha256 differs from SOURCES.md)")
    return data


def merges_source(name: str) -> str:
    """The table a merges file names as its source: the decompressed ``.tiktoken``, by its hash."""
    return f"{name}.tiktoken sha256:{TIKTOKEN_TABLES[name][1]}"


def _load(spec: PretrainedSpec) -> Tokenizer:
    # every token of the bundled tables is rebuilt by its own merges (tests check it), so
    # tiktoken's rules need no more than their merges: own_merges_suffice
    if spec.derived is None:
        encoder, merges_txt = (read_bundled(spec, rel, digest).decode("utf-8") for rel, digest in spec.files.items())
        return tokenizer_from_gpt2(encoder, merges_txt, pretokenizer=spec.pretokenizer, own_merges_suffice=True)
    rel, digest = spec.derived
    text = gzip.decompress(read_bundled(spec, rel, digest)).decode("ascii")
    singles, merges = read_merges_file(text, source=merges_source(spec.name), name=rel)
    return tokenizer_from_merges(
        singles, merges, pretokenizer=spec.pretokenizer, special_ids=spec.special_ids, own_merges_suffice=True
    )


def load_pretrained(name: str) -> Tokenizer:
    """A bundled tokenizer by name, loaded once per process (tokenizers are read-only, so every
    caller, and every session of the app, shares it)."""
    if name not in PRETRAINED:
        raise ConfigError(f"unknown pretrained tokenizer {name!r}; choose one of {', '.join(PRETRAINED)}")
    tok = _loaded.get(name)  # loaded: no lock, so a table being loaded elsewhere holds up no other
    if tok is not None:
        return tok
    with _locks[name]:
        tok = _loaded.get(name)
        if tok is None:
            spec = PRETRAINED[name]
            tok = _load(spec)
            if tok.special_ids != spec.special_ids:  # pragma: no cover - the bundled files are fixed
                raise FormatError(f"{name}: special tokens {tok.special_ids} differ from tiktoken's {spec.special_ids}")
            _loaded[name] = tok
        return tok


_warm_names: dict[str, None] = {}  # every table warm_pretrained was asked for, in order
_warmer: threading.Thread | None = None
_warm_lock = threading.Lock()


def warm_pretrained(names: Iterable[str] | None = None) -> threading.Thread:
    """Load bundled tables (all by default) in a daemon thread, so that the first page to use
    one finds it loaded. Once per process: a call that asks for no table not asked for before
    returns the thread already started; one that does starts a thread loading every table asked
    for so far (those loaded return at once), so joining the returned thread waits for all of
    them. A table that fails to load is left unloaded: ``load_pretrained`` raises its error.

    >>> t = warm_pretrained(["gpt2"]); t.join(); t is warm_pretrained(["gpt2"]), "gpt2" in _loaded
    (True, True)
    """
    global _warmer
    wanted = list(PRETRAINED) if names is None else list(names)
    for name in wanted:
        if name not in PRETRAINED:
            raise ConfigError(f"unknown pretrained tokenizer {name!r}; choose one of {', '.join(PRETRAINED)}")
    with _warm_lock:
        if _warmer is None or any(name not in _warm_names for name in wanted):
            _warm_names.update(dict.fromkeys(wanted))
            _warmer = threading.Thread(target=_warm, args=(list(_warm_names),), name="warm-pretrained", daemon=True)
            _warmer.start()
        return _warmer


def _warm(names: list[str]) -> None:
    for name in names:
        try:
            load_pretrained(name)
        except Exception:  # noqa: BLE001 - not cached: the caller that needs the table gets the error
            pass
