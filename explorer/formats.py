"""Formats: save and load what training produced.

``trace.json`` is the project's own format and the CLI's contract::

    {
      "format": "bpe-explorer-trace", "version": 1,
      "config": {...TrainerConfig fields...}, "encoding": {"unk_token": "<unk>", "dropout_style": "retry"},
      "top_k": 20,
      "special_tokens": ["<|endoftext|>"],
      "alphabet": ["!", "\\"", ...],            # display strings, in id order after the specials
      "initial_tokens": 1115394, "stop_reason": "vocab_size",
      "merges": [{"step": 1, "left": "Ġ", "right": "t", "left_id": 94, "right_id": 84,
                  "token": "Ġt", "id": 256, "count": 31072, "replaced": 31072,
                  "tokens_after": 1084322, "reused": false, "n_tied": 0, "ties": [],
                  "words_affected": 3054}, ...]
    }

Merges are the source of truth: a loaded tokenizer re-derives every id and checks it against
the file. Exporters write the same merges in the formats other tools read: HF ``tokenizer.json``,
subword-nmt codes, a ``.tiktoken`` rank file, and seed 004's ``a b -> ab`` lines.
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path

from .config import EncodeOptions, TrainerConfig
from .errors import ConfigError, FormatError
from .tokenizer import Tokenizer
from .trainer import StepRecord, Trainer
from .pretokenizers import PATTERNS
from .units import byte_alphabet, bytes_to_display  # bytes_to_display: used by the doctests

__all__ = [
    "TRACE_FORMAT",
    "trace_dict",
    "write_trace",
    "tokenizer_from_trace",
    "load_tokenizer",
    "to_hf_tokenizer_json",
    "to_subword_nmt_codes",
    "to_tiktoken",
    "to_tiktoken_meta",
    "to_arrow_merges",
    "read_tiktoken",
    "tokenizer_from_gpt2",
]

TRACE_FORMAT = "bpe-explorer-trace"
TRACE_FILE = "trace.json"


def _record_dict(r: StepRecord) -> dict:
    return {
        "step": r.step,
        "left": r.left,
        "right": r.right,
        "left_id": r.left_id,
        "right_id": r.right_id,
        "token": r.token,
        "id": r.token_id,
        "count": r.count,
        "replaced": r.replaced,
        "tokens_after": r.tokens_after,
        "reused": r.reused,
        "n_tied": r.n_tied,
        "ties": [list(t) for t in r.ties],
        "words_affected": r.words_affected,
    }


def trace_dict(trainer: Trainer) -> dict:
    """The trainer's state as a JSON-ready dict (the ``trace.json`` layout)."""
    return {
        "format": TRACE_FORMAT,
        "version": 1,
        "config": trainer.config.to_dict(),
        "encoding": trainer.encoding.to_dict(),
        "top_k": trainer.top_k,
        "special_tokens": list(trainer.config.special_tokens),
        "alphabet": list(trainer.alphabet),
        "initial_tokens": trainer.initial_tokens,
        "stop_reason": trainer.stop_reason,
        "merges": [_record_dict(r) for r in trainer.records],
    }


def write_trace(trainer: Trainer, out_dir: str | Path) -> Path:
    """Write ``out_dir/trace.json`` (creating the folder) and return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / TRACE_FILE
    path.write_text(json.dumps(trace_dict(trainer), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise FormatError(message)


def tokenizer_from_trace(data: object) -> Tokenizer:
    """Rebuild a Tokenizer from a parsed trace, checking every derived id against the file."""
    _require(isinstance(data, dict) and data.get("format") == TRACE_FORMAT, "not a BPE Explorer trace (no 'format' field)")
    assert isinstance(data, dict)
    _require(isinstance(data.get("config"), dict), "the trace has no 'config' object")
    _require(isinstance(data.get("alphabet"), list) and all(isinstance(s, str) for s in data["alphabet"]),
             "the trace's 'alphabet' must be a list of strings")
    merges = data.get("merges")
    _require(isinstance(merges, list), "the trace's 'merges' must be a list")
    try:
        config = TrainerConfig.from_dict(data["config"]).validate()
        # older traces kept the encoding options inside "config"
        encoding = EncodeOptions.from_dict(data.get("encoding", data["config"]))
    except (ConfigError, TypeError, AttributeError) as err:
        raise FormatError(f"the trace's config is invalid: {err}") from None
    pairs = []
    for i, m in enumerate(merges):
        _require(isinstance(m, dict), f"merge {i + 1} is not an object")
        _require(all(isinstance(m.get(k), int) and not isinstance(m.get(k), bool) for k in ("left_id", "right_id", "id")),
                 f"merge {i + 1} needs integer 'left_id', 'right_id' and 'id'")
        pairs.append((m["left_id"], m["right_id"]))
    try:
        tok = Tokenizer(config=config, alphabet=data["alphabet"], merges=pairs, encoding=encoding)
    except ValueError as err:
        raise FormatError(f"the trace's merges are inconsistent: {err}") from None
    for i, (m, new_id) in enumerate(zip(merges, tok.merged_ids)):
        _require(m["id"] == new_id, f"merge {i + 1} says id {m['id']} but its pair derives id {new_id}")
        if "token" in m:
            _require(m["token"] == tok.vocab[new_id], f"merge {i + 1} says token {m['token']!r} but derives {tok.vocab[new_id]!r}")
    return tok


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer from a folder holding ``trace.json`` (or from the file itself)."""
    p = Path(path)
    if p.is_dir():
        p = p / TRACE_FILE
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(f"no {TRACE_FILE} found at {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise FormatError(f"cannot read {p}: {err}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise FormatError(f"{p.name} is not valid JSON: {err}") from None
    return tokenizer_from_trace(data)


# ---- rank tables ---------------------------------------------------------------------------
def read_tiktoken(data: bytes) -> list[bytes]:
    """A ``.tiktoken`` file (``base64(token) rank`` per line) -> the tokens in rank order.

    >>> read_tiktoken(b"IQ== 0\\nIg== 1\\n")
    [b'!', b'"']
    >>> read_tiktoken(b"IQ== 0\\nIg== 2\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: .tiktoken line 2: rank 2 where rank 1 was expected (ranks must run 0, 1, 2, ...)
    """
    tokens: list[bytes] = []
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        _require(len(fields) == 2 and fields[1].isdigit(), f".tiktoken line {n}: expected 'base64 rank'")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f".tiktoken line {n}: bad base64") from None
        rank = int(fields[1])
        _require(rank == len(tokens), f".tiktoken line {n}: rank {rank} where rank {len(tokens)} was expected "
                                      "(ranks must run 0, 1, 2, ...)")
        tokens.append(token)
    return tokens


def tokenizer_from_gpt2(encoder_json: str, vocab_bpe: str, *, pretokenizer: str = "gpt2") -> Tokenizer:
    """GPT-2's ``encoder.json`` (token -> id) and ``vocab.bpe`` (its merges, in order) as a
    tokenizer. The merges are the source of truth: the ids they derive must be the encoder's,
    and encoder entries past them (``<|endoftext|>``) become special tokens. Encoding follows
    tiktoken's rules, as tiktoken's ``gpt2`` encoding does.

    >>> tok = tokenizer_from_gpt2(json.dumps({bytes_to_display(bytes([b])): b for b in range(256)} | {"ab": 256, "<|endoftext|>": 257}), "#version: 0.2\\na b\\n")
    >>> tok.encode("abab<|endoftext|>", allow_special=True)
    [256, 256, 257]
    """
    try:
        encoder = json.loads(encoder_json)
    except json.JSONDecodeError as err:
        raise FormatError(f"encoder.json is not valid JSON: {err}") from None
    _require(isinstance(encoder, dict) and all(isinstance(v, int) for v in encoder.values()),
             "encoder.json must map tokens to integer ids")
    lines = vocab_bpe.splitlines()
    _require(bool(lines) and lines[0].startswith("#version"), "vocab.bpe must start with a '#version' line")
    by_id = {i: t for t, i in encoder.items()}
    _require(len(by_id) == len(encoder), "encoder.json gives two tokens the same id")
    _require(all(i in by_id for i in range(256)), "encoder.json must hold ids 0-255 for the 256 bytes")
    alphabet = [by_id[i] for i in range(256)]
    _require(sorted(alphabet) == sorted(byte_alphabet()), "ids 0-255 of encoder.json must be the 256 byte symbols")
    ids = {t: i for i, t in enumerate(alphabet)}
    merges: list[tuple[int, int]] = []
    for n, line in enumerate(lines[1:], 2):
        if not line:
            continue
        parts = line.split(" ")
        _require(len(parts) == 2, f"vocab.bpe line {n}: expected two tokens separated by one space")
        a, b = parts
        _require(a in ids and b in ids, f"vocab.bpe line {n}: {a!r} or {b!r} is not a token made by an earlier line")
        merges.append((ids[a], ids[b]))
        ids.setdefault(a + b, 256 + len(merges) - 1)
    config = TrainerConfig(pretokenizer=pretokenizer, unit="byte", alphabet="full-bytes", special_tokens=(),
                           vocab_size=None, num_merges=None)
    specials = {t: i for t, i in encoder.items() if i >= 256 + len(merges)}
    try:
        tok = Tokenizer(config=config, alphabet=alphabet, merges=merges, special_ids=specials, rules="tiktoken")
    except ValueError as err:
        raise FormatError(f"encoder.json and vocab.bpe do not fit together: {err}") from None
    for rank, new in enumerate(tok.merged_ids):
        token = tok.vocab[new]
        _require(encoder.get(token) == new, f"vocab.bpe line {rank + 2} makes {token!r} id {new}; encoder.json says "
                                            f"{encoder.get(token)}")
    return tok


# ---- exporters ---------------------------------------------------------------------------
# our normalizers as HF normalizer objects (collapse-whitespace: runs of whitespace to one space,
# both ends stripped)
_HF_NORMALIZERS: dict[str, dict | None] = {
    "none": None,
    "nfc": {"type": "NFC"},
    "nfkc": {"type": "NFKC"},
    "lowercase": {"type": "Lowercase"},
    "collapse-whitespace": {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
        {"type": "Strip", "strip_left": True, "strip_right": True}]},
}


def to_hf_tokenizer_json(tok: Tokenizer) -> dict:
    """An HF ``tokenizers`` tokenizer.json for the same merges (BPE model + matching pipeline)."""
    cfg = tok.config
    if cfg.unit == "byte" and cfg.pretokenizer == "gpt2":
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
        decoder = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    elif cfg.unit == "byte":
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
        decoder = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    elif cfg.pretokenizer == "whitespace":
        pre, decoder = {"type": "WhitespaceSplit"}, None
    else:
        pre, decoder = None, None
    vocab = {t: i for i, t in reversed(list(enumerate(tok.vocab)))}
    unk = None
    if cfg.unit != "byte":
        # HF needs its unk token in the vocabulary: ours is the first id past it (or a special)
        unk = tok.encoding.unk_token
        vocab.setdefault(unk, tok.unk_id)
    merges = [[tok.vocab[a], tok.vocab[b]] for a, b in tok.merges]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for i, t in enumerate(tok.vocab[: tok.n_special])
        ],
        "normalizer": _HF_NORMALIZERS[cfg.normalizer],
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": decoder,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": "</w>" if cfg.marker == "eow-glued" else None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": vocab,
            "merges": merges,
        },
    }


def to_subword_nmt_codes(tok: Tokenizer) -> str:
    """subword-nmt 0.2 codes: ``#version: 0.2`` then ``left right`` per merge."""
    return "#version: 0.2\n" + "".join(f"{tok.vocab[a]} {tok.vocab[b]}\n" for a, b in tok.merges)


def to_arrow_merges(tok: Tokenizer) -> str:
    """Seed 004's merges file: ``left right -> token`` per merge."""
    return "".join(f"{tok.vocab[a]} {tok.vocab[b]} -> {tok.vocab[n]}\n" for (a, b), n in zip(tok.merges, tok.merged_ids))


def to_tiktoken(tok: Tokenizer) -> str:
    """A ``.tiktoken`` rank file (``base64(bytes) rank`` per line) for a byte-level tokenizer
    whose alphabet holds all 256 bytes; special tokens are left out, as tiktoken keeps them apart."""
    if tok.config.unit != "byte":
        raise ConfigError("a .tiktoken file holds byte-level tokens; this tokenizer is character-level")
    if not set(byte_alphabet()) <= set(tok.alphabet):
        raise ConfigError("tiktoken needs all 256 bytes in the alphabet: train with the full byte alphabet")
    if not tok.config.reuse_ids:
        raise ConfigError("tiktoken needs one rank per distinct token: train with id reuse on")
    lines = []
    for i in range(tok.n_special, len(tok.vocab)):
        lines.append(f"{base64.b64encode(tok.token_bytes(i)).decode('ascii')} {i}\n")
    return "".join(lines)


# what tiktoken's pat_str is for each pre-tokenizer it can represent: tiktoken encodes only the
# regex's matches, so "none" is one match over the whole text
_TIKTOKEN_PATTERNS = {**PATTERNS, "none": r"[\s\S]+"}


def to_tiktoken_meta(tok: Tokenizer) -> dict:
    """The JSON file that goes beside a ``.tiktoken``: tiktoken's own keys ``pat_str`` and
    ``special_tokens`` (name -> id), so that ``tiktoken.Encoding(name, pat_str=...,
    mergeable_ranks=load_tiktoken_bpe(path), special_tokens=...)`` encodes as we do. A setting
    tiktoken cannot represent raises ConfigError that names it.

    >>> from explorer import make_config, train
    >>> to_tiktoken_meta(train("hello world", make_config("gpt2", alphabet="full-bytes", num_merges=2)).tokenizer())["special_tokens"]
    {'<|endoftext|>': 0}
    """
    cfg = tok.config
    if cfg.unit != "byte":
        raise ConfigError("tiktoken ranks byte strings; this tokenizer is character-level")
    if cfg.normalizer != "none":
        raise ConfigError(f"tiktoken has no normalizer; this tokenizer normalizes its text first ({cfg.normalizer})")
    if cfg.sequences != "text":
        raise ConfigError(f"tiktoken reads a text as one sequence; this tokenizer cuts it into {cfg.sequences} first")
    if cfg.pretokenizer not in _TIKTOKEN_PATTERNS:
        raise ConfigError(f"tiktoken encodes only what its regex matches; the {cfg.pretokenizer!r} pre-tokenizer "
                          "keeps other text too (use gpt2, cl100k, o200k or none)")
    return {"pat_str": _TIKTOKEN_PATTERNS[cfg.pretokenizer], "special_tokens": dict(tok.special_ids)}
