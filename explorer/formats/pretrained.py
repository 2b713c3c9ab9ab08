"""The tokenizers real models use, bundled and loaded offline (GPT-2, cl100k_base, o200k_base:
:mod:`explorer.formats.bundled`), and any other tokenizer by where it is: a path on disk or a Hub
id (:func:`resolve_tokenizer`, as the command line takes them).

All three bundled tables encode with tiktoken's rules, so their ids are tiktoken's.
``warm_pretrained`` loads them in the background (the app's server, at start).
"""

from __future__ import annotations

import gzip
from pathlib import Path

from ..bpe.ranks import merges_file
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError
from ..stages.pipeline import NormalizerName
from .bundled import (
    PRETRAINED,
    PRETRAINED_DIR,
    TIKTOKEN_TABLES,
    PretrainedSpec,
    bundled_table,
    load_pretrained,
    merges_source,
    read_bundled,
    warm_pretrained,
)
from .hub import choose_files, is_hub_id, open_hub
from .importers import import_report, read_tiktoken
from .trace import TRACE_FILE, load_tokenizer

__all__ = [
    "PRETRAINED",
    "PRETRAINED_DIR",
    "PretrainedSpec",
    "TIKTOKEN_TABLES",
    "bundled_table",
    "derive_merges",
    "load_pretrained",
    "open_path",
    "resolve_tokenizer",
    "warm_pretrained",
]


def derive_merges(name: str) -> bytes:
    """A bundled ``.tiktoken`` table's merges file as shipped (``spec.derived``): the merges
    recovered from the table (:func:`explorer.bpe.ranks.merges_file`), gzipped without a timestamp.
    SOURCES.md says how to write it back; the gzip bytes may differ with another zlib, the text
    inside may not.

    >>> lines = gzip.decompress(derive_merges("cl100k_base")).decode("ascii").splitlines()
    >>> lines[1][:18], lines[3]  # ranks 0 and 1 are the bytes "!" and '"'; rank 256 is "  " = " " + " "
    ('"bytes": [33, 34, ', '220, 220,')
    """
    spec = PRETRAINED[name]
    if spec.derived is None:
        raise ConfigError(f"{name} ships its own merges: nothing to derive")
    ((rel, digest),) = spec.files.items()
    tokens = read_tiktoken(gzip.decompress(read_bundled(spec, rel, digest)), name=rel)
    return gzip.compress(merges_file(tokens, source=merges_source(name)).encode("ascii"), compresslevel=9, mtime=0)


def open_path(
    path: str | Path, *, pretokenizer: str | None = None, normalizer: NormalizerName | None = None
) -> Tokenizer:
    """The tokenizer a path on disk holds: a folder holding ``trace.json`` (or that file), any
    other tokenizer file (``tokenizer.json``, a ``.tiktoken`` or ``tokenizer.model`` of ranks, a
    minbpe ``.model``, subword-nmt codes...), or a folder of a model's tokenizer files, picked as
    from a Hub repository (:func:`explorer.formats.hub.choose_files`: ``tokenizer.json`` first,
    then ``vocab.json`` + ``merges.txt``, ...). ``pretokenizer`` and ``normalizer`` are for files
    that name none, as :func:`importers.import_report` takes them. Raises FormatError or
    ConfigError with the sentence to show.

    >>> import tempfile
    >>> from explorer import make_config, train
    >>> from explorer.formats.exporters import export_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "tokenizer.json").write_bytes(export_files(tok, "hf")["tokenizer.json"])
    ...     open_path(Path(d) / "tokenizer.json").merges == open_path(d).merges == tok.merges
    True
    """
    p = Path(path)
    if (p / TRACE_FILE).is_file() or p.name == TRACE_FILE:
        if pretokenizer is not None or normalizer is not None:
            raise ConfigError(f"{TRACE_FILE} names its own pre-tokenizer and normalizer: give no other")
        return load_tokenizer(p)
    if p.is_dir():
        names = [f.name for f in p.iterdir() if f.is_file()]
        if (p / "original").is_dir():  # where Meta keeps Llama 3's ranks
            names += [f"original/{f.name}" for f in (p / "original").iterdir() if f.is_file()]
        chosen = choose_files(names)
        if chosen is None:
            raise FormatError(
                f"no {TRACE_FILE} found in {p}, nor a tokenizer file read here (tekken.json, tokenizer.json, "
                "vocab.json + merges.txt, *.tiktoken, tokenizer.model)"
            )
        files = {Path(name).name: (p / name).read_bytes() for name in chosen}
    else:
        try:
            files = {p.name: p.read_bytes()}
        except OSError as err:
            raise FormatError(f"cannot read {p}: {err.strerror or err}") from None
    return import_report(files, pretokenizer=pretokenizer, normalizer=normalizer).tokenizer


def resolve_tokenizer(
    name: str,
    *,
    revision: str | None = None,
    pretokenizer: str | None = None,
    normalizer: NormalizerName | None = None,
) -> Tokenizer:
    """A bundled tokenizer's name (``gpt2``, ``cl100k_base``, ``o200k_base``), a path on disk
    (:func:`open_path`: a folder holding a ``trace.json``, a tokenizer file, or a folder of a
    model's tokenizer files; write ``./gpt2`` for a folder of that name), or a Hugging Face Hub
    repository id (``Qwen/Qwen2.5-7B``: :func:`explorer.formats.hub.open_hub`, at ``revision``).
    ``pretokenizer`` and ``normalizer`` are for files that name none. A folder of the name of a
    repository wins over the Hub. Any of them followed by ``@K`` is that tokenizer as of its
    merge K (a rank table: its 256 + K lowest ranks), as the Playground's links write it.

    >>> resolve_tokenizer("gpt2@3").num_merges, resolve_tokenizer("gpt2@3").encode(" the")
    (3, [256, 258])
    >>> resolve_tokenizer("gpt2@60000")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: gpt2 has 50,000 merges: it cannot be rewound to merge 60,000
    """
    if name in PRETRAINED:
        return load_pretrained(name)
    if Path(name).exists():
        return open_path(name, pretokenizer=pretokenizer, normalizer=normalizer)
    whole, at, k = name.rpartition("@")
    if at and whole and k.isascii() and k.isdigit() and len(k) <= 9:
        tok = resolve_tokenizer(whole, revision=revision, pretokenizer=pretokenizer, normalizer=normalizer)
        if int(k) > tok.num_merges:
            raise ConfigError(f"{whole} has {tok.num_merges:,} merges: it cannot be rewound to merge {int(k):,}")
        return tok.truncate(int(k))
    if is_hub_id(name):
        return open_hub(name, revision=revision, pretokenizer=pretokenizer, normalizer=normalizer).tokenizer
    raise ConfigError(
        f"{name!r} is neither a bundled tokenizer ({', '.join(PRETRAINED)}), a tokenizer file or folder, "
        "nor a Hugging Face Hub repository id (owner/name)"
    )
