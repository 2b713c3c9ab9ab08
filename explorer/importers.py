"""Importers: tokenizers made elsewhere, read into ours.

``import_files`` takes the uploaded files by name and finds their format from what they hold::

    {"tokenizer.json": b'{"model": {"type": "BPE", ...'}               -> hf
    {"vocab.json": ..., "merges.txt": b"#version: 0.2\\n..."}           -> gpt2
    {"cl100k_base.tiktoken": ..., ["tokenizer.json": {"pat_str": ...}]} -> tiktoken
    {"codes.txt": b"#version: 0.2\\ne s\\n..."}                          -> subword-nmt
    {"tokenizer.model": b"minbpe v1\\n...", ["tokenizer.vocab"]}         -> minbpe
    {"trace.json": ...}                                                 -> trace

Merges are the source of truth here too: the ids a file gives must be the ids its merges derive
(special tokens, the alphabet, one id per merge), and a file that says otherwise is refused with
the line or key where it goes wrong, never half-loaded. Every failure is a FormatError with one
sentence that names the file.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from .config import EncodeOptions, TrainerConfig
from .errors import ConfigError, FormatError
from .exporters import HF_NORMALIZERS, HF_WHITESPACE, SUBWORD_NMT_VERSIONS, TIKTOKEN_PATTERNS
from .formats import TRACE_FORMAT, tokenizer_from_trace
from .markers import EOW, SP_PREFIX
from .ranks import tokenizer_from_ranks
from .tokenizer import Tokenizer
from .units import byte_alphabet, bytes_to_display
from .vocab import Vocab

__all__ = [
    "IMPORT_FORMATS",
    "ImportFormat",
    "needs_pretokenizer",
    "import_files",
    "import_with_format",
    "read_tiktoken",
    "tokenizer_from_gpt2",
    "tokenizer_from_hf",
    "tokenizer_from_vocab_merges",
    "tokenizer_from_tiktoken",
    "tokenizer_from_subword_nmt",
    "tokenizer_from_minbpe",
]


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise FormatError(message)


def pretokenizer_of_pattern(pattern: str) -> tuple[str, str | None]:
    """(pre-tokenizer, custom pattern) for a regex found in a file: a built-in name when the
    regex is one of ours.

    >>> pretokenizer_of_pattern(r"[\\s\\S]+"), pretokenizer_of_pattern(r"\\w+")
    (('none', None), ('regex', '\\\\w+'))
    """
    for name, pat in TIKTOKEN_PATTERNS.items():
        if pattern == pat:
            return name, None
    return "regex", pattern


# ---- the general assembly: vocab + merges -> tokenizer --------------------------------------
def tokenizer_from_vocab_merges(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    *,
    config: TrainerConfig,
    specials: Mapping[str, int] | None = None,
    unk: str | None = None,
    encoding: EncodeOptions = EncodeOptions(),
    rules: str = "merges",
    where: Callable[[int], str] = lambda i: f"merge {i + 1}",
    vocab_name: str = "the vocabulary",
) -> Tokenizer:
    """A tokenizer from a vocabulary (token -> id) and merges as token pairs, checked: the ids
    must run special tokens, the alphabet (tokens no merge makes), one per merge in order, and
    special tokens past them. ``unk`` at the first free id is the unknown token (ours is there
    too); ``where(i)`` says where merge i is in its file.

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char")
    >>> tokenizer_from_vocab_merges({"<s>": 0, "a": 1, "b": 2, "ab": 3}, [("a", "b")], config=cfg, specials={"<s>": 0}).vocab
    ('<s>', 'a', 'b', 'ab')
    >>> tokenizer_from_vocab_merges({"a": 0, "b": 1, "ab": 3}, [("a", "b")], config=cfg)
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merge 1 makes 'ab' id 2, but the vocabulary gives it id 3 (ids must run: special tokens, the alphabet, one per merge in order)
    """
    specials = dict(specials or {})
    by_id: dict[int, str] = {}
    for t, i in vocab.items():
        _require(isinstance(i, int) and not isinstance(i, bool) and i >= 0,
                 f"{vocab_name}: {t!r} has id {i!r}, not a non-negative integer")
        _require(i not in by_id, f"{vocab_name}: {by_id.get(i)!r} and {t!r} both have id {i}")
        by_id[i] = t
    for n, pair in enumerate(merges):
        for part in pair:
            _require(part in vocab, f"{where(n)}: {part!r} is not in {vocab_name}")
    products = {a + b for a, b in merges}
    own_unk = None
    if unk is not None and unk in vocab and unk not in specials:
        if vocab[unk] == max(by_id):
            own_unk = unk  # our layout: the unknown token takes the first id past everything
        else:
            specials[unk] = vocab[unk]
    for t, i in specials.items():
        _require(vocab.get(t, i) == i, f"{vocab_name}: special token {t!r} has id {vocab[t]} there and {i} elsewhere")
    base = sorted((i, t) for t, i in vocab.items() if t not in specials and t not in products and t != own_unk)
    _require(bool(base), f"{vocab_name} holds no alphabet (every token is made by a merge or special)")
    first = base[0][0]
    leading = sorted((i, t) for t, i in specials.items() if i < first)
    _require([i for i, _ in leading] == list(range(len(leading))),
             f"{vocab_name}: the special tokens before the alphabet must take ids 0, 1, 2, ... (they take "
             f"{[i for i, _ in leading]})")
    for k, (i, t) in enumerate(base):
        _require(i == first + k, f"{vocab_name}: {t!r} (id {i}) is made by no merge, so it belongs to the alphabet, "
                                 f"which must take ids {first}-{first + len(base) - 1} without gaps")
    if config.unit == "byte":
        alphabet = set(byte_alphabet())
        for i, t in base:
            _require(t in alphabet, f"{vocab_name}: {t!r} (id {i}) is neither a byte, a special token nor made by a merge")
    end = first + len(base) + len(merges)
    trailing = {t: i for t, i in specials.items() if i >= first}
    for t, i in trailing.items():
        _require(i >= end, f"{vocab_name}: special token {t!r} has id {i}, among the ids the merges make")
    # each merge in turn, through the Vocab rule the tokenizer derives its ids with: its parts must
    # exist by then and the token it makes must have the id the file gives, so that a wrong id is
    # reported at the merge that makes it
    derived = Vocab([t for _, t in leading], [t for _, t in base], reuse_ids=config.reuse_ids)
    for n, (a, b) in enumerate(merges):
        for part in (a, b):
            _require(part in derived.ids, f"{where(n)}: {part!r} is made only by a later merge")
        made, _ = derived.add_merge(derived.ids[a], derived.ids[b])
        _require(a + b in vocab, f"{where(n)} makes {a + b!r}, which is not in {vocab_name}")
        _require(vocab[a + b] == made, f"{where(n)} makes {a + b!r} id {made}, but {vocab_name} gives it id "
                                       f"{vocab[a + b]} (ids must run: special tokens, the alphabet, one per merge in order)")
    pairs = [(vocab[a], vocab[b]) for a, b in merges]
    try:
        tok = Tokenizer(config=config.replace(special_tokens=tuple(t for _, t in leading)),
                        alphabet=[t for _, t in base], merges=pairs, special_ids=trailing, rules=rules, encoding=encoding)
    except ValueError as err:  # ConfigError too: a special token the config refuses
        raise FormatError(f"{vocab_name}: {err}") from None
    if own_unk is not None:
        _require(tok.unk_id == vocab[own_unk], f"{vocab_name}: the unknown token {own_unk!r} has id {vocab[own_unk]}, "
                                               f"expected {tok.unk_id}")
    return tok


# ---- Hugging Face tokenizer.json ------------------------------------------------------------
def _hf_normalizer(norm: object) -> str:
    for name, hf in HF_NORMALIZERS.items():
        if norm == hf:
            return name
    kind = norm.get("type") if isinstance(norm, dict) else norm
    raise FormatError(f"tokenizer.json 'normalizer': {kind!r} is not supported (supported: none, NFC, NFKC, Lowercase, "
                      "and collapse-whitespace as Replace + Strip)")


def _hf_pre_tokenizer(pre: object) -> dict:
    """Our config fields for an HF pre-tokenizer (what ``exporters._hf_pipeline`` writes)."""
    steps = [] if pre is None else pre.get("pretokenizers") if isinstance(pre, dict) and pre.get("type") == "Sequence" else [pre]
    _require(isinstance(steps, list) and all(isinstance(s, dict) for s in steps),
             "tokenizer.json 'pre_tokenizer' must be an object (or a Sequence of them)")
    out: dict = {"sequences": "text", "pretokenizer": "none", "unit": "char", "marker": "none"}
    rest = list(steps)
    if rest and rest[0].get("type") == "Split" and rest[0].get("pattern") in ({"Regex": "\n"}, {"String": "\n"}) \
            and rest[0].get("behavior") == "MergedWithPrevious":
        out["sequences"] = "lines"
        rest.pop(0)
    for step in rest:
        kind = step.get("type")
        if (kind == "WhitespaceSplit" or step == HF_WHITESPACE) and out["pretokenizer"] == "none" and out["unit"] == "char":
            # WhitespaceSplit leaves U+001C-U+001F inside words where ours splits: the one place
            # an HF file's whitespace split and ours differ
            out["pretokenizer"] = "whitespace"
        elif kind == "Split" and out["pretokenizer"] == "none" and out["unit"] == "char":
            pattern = step.get("pattern") or {}
            _require(step.get("behavior") == "Isolated" and not step.get("invert") and "Regex" in pattern,
                     "tokenizer.json 'pre_tokenizer': only a Split on a Regex with behavior Isolated is supported "
                     f"(found behavior {step.get('behavior')!r})")
            out["pretokenizer"], out["pattern"] = pretokenizer_of_pattern(pattern["Regex"])
            _require(out["pretokenizer"] != "none", "tokenizer.json 'pre_tokenizer': a Split that keeps the whole text")
        elif kind == "ByteLevel" and out["unit"] == "char" and out["marker"] == "none":
            _require(not step.get("add_prefix_space"),
                     "tokenizer.json 'pre_tokenizer': ByteLevel with add_prefix_space=true is not supported")
            if step.get("use_regex", True):
                _require(out["pretokenizer"] == "none", "tokenizer.json 'pre_tokenizer': ByteLevel with use_regex=true "
                                                        "after another split is not supported")
                out["pretokenizer"] = "gpt2"
            out["unit"] = "byte"
        elif kind == "Metaspace" and out["pretokenizer"] == "whitespace" and out["unit"] == "char":
            _require(step.get("replacement") == SP_PREFIX and step.get("prepend_scheme", "always") == "always",
                     "tokenizer.json 'pre_tokenizer': only Metaspace with '▁' prepended always is supported")
            out["marker"] = "sp-prefix"
        else:
            raise FormatError(f"tokenizer.json 'pre_tokenizer': {kind!r} is not supported here (supported: WhitespaceSplit, "
                              "a Split on a regex, ByteLevel, Metaspace after WhitespaceSplit, and a Sequence of them)")
    return out


def _hf_merges(raw: object) -> list[tuple[str, str]]:
    _require(isinstance(raw, list), "tokenizer.json 'model.merges' must be a list")
    out = []
    for n, m in enumerate(raw):
        if isinstance(m, str):
            parts = m.split(" ")
        else:
            parts = m
        _require(isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) for p in parts),
                 f"tokenizer.json 'model.merges[{n}]': expected two tokens, found {m!r}")
        out.append((parts[0], parts[1]))
    return out


def tokenizer_from_hf(data: object) -> Tokenizer:
    """An HF ``tokenizers`` tokenizer.json (a BPE model) as our tokenizer, with its normalizer,
    pre-tokenizer, word marker and special tokens when we have the same; else FormatError."""
    _require(isinstance(data, dict) and isinstance(data.get("model"), dict), "tokenizer.json has no 'model' object")
    assert isinstance(data, dict)
    model = data["model"]
    kind = model.get("type", "BPE" if "merges" in model else None)
    _require(kind == "BPE", f"tokenizer.json 'model.type' is {kind!r}: only BPE models can be imported")
    fields = _hf_pre_tokenizer(data.get("pre_tokenizer"))
    fields["normalizer"] = _hf_normalizer(data.get("normalizer"))
    _require(not model.get("continuing_subword_prefix"),
             f"tokenizer.json 'model.continuing_subword_prefix' is {model.get('continuing_subword_prefix')!r}: "
             "word-continuation prefixes are not supported")
    _require(not model.get("byte_fallback"), "tokenizer.json 'model.byte_fallback' is true: byte fallback is not supported")
    suffix = model.get("end_of_word_suffix")
    if suffix:
        _require(suffix == EOW and fields["unit"] == "char" and fields["marker"] == "none",
                 f"tokenizer.json 'model.end_of_word_suffix' is {suffix!r}: only '</w>' on character-level BPE is supported")
        fields["marker"] = "eow-glued"
    vocab = model.get("vocab")
    _require(isinstance(vocab, dict), "tokenizer.json 'model.vocab' must be an object (token -> id)")
    added = data.get("added_tokens") or []
    _require(isinstance(added, list) and all(isinstance(a, dict) and isinstance(a.get("content"), str)
                                             and isinstance(a.get("id"), int) for a in added),
             "tokenizer.json 'added_tokens' must be a list of objects with 'id' and 'content'")
    specials = {a["content"]: a["id"] for a in added}
    unk = model.get("unk_token")
    _require(unk is None or isinstance(unk, str), "tokenizer.json 'model.unk_token' must be a string or null")
    try:
        config = TrainerConfig(**fields, vocab_size=None, num_merges=None).validate()
        encoding = EncodeOptions(unk_token=unk) if unk else EncodeOptions()
    except ConfigError as err:
        raise FormatError(f"tokenizer.json: {err}") from None
    full = {**vocab, **specials}
    return tokenizer_from_vocab_merges(full, _hf_merges(model.get("merges")), config=config, specials=specials, unk=unk,
                                       encoding=encoding, where=lambda n: f"tokenizer.json 'model.merges[{n}]'",
                                       vocab_name="tokenizer.json 'model.vocab'")


# ---- merges files: GPT-2's merges.txt, subword-nmt codes ------------------------------------
def _merge_lines(text: str, name: str) -> tuple[list[tuple[str, str]], list[int]]:
    """``#version`` then ``left right`` per line -> the pairs and the line each is on (for the
    errors found later, at a merge).

    >>> _merge_lines("#version: 0.2\\na b\\n\\nab c\\n", "merges.txt")
    ([('a', 'b'), ('ab', 'c')], [2, 4])
    """
    lines = text.splitlines()
    _require(bool(lines) and lines[0].startswith("#version"),
             f"{name} line 1: a '#version' header is missing (found {lines[0][:40]!r})" if lines else f"{name} is empty")
    pairs, where = [], []
    for n, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        parts = line.rstrip("\r\n").split(" ")
        _require(len(parts) == 2 and all(parts), f"{name} line {n}: expected two tokens separated by one space, "
                                                 f"found {line[:60]!r}")
        pairs.append((parts[0], parts[1]))
        where.append(n)
    return pairs, where


def _json_object(text: str, name: str) -> dict:
    """A JSON object, or where the JSON goes wrong."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise FormatError(f"{name} is not valid JSON (cut short?): line {err.lineno}, column {err.colno}: "
                          f"{err.msg}") from None
    _require(isinstance(obj, dict), f"{name}: expected a JSON object")
    return obj


def _byte_vocab_merges(vocab: object, merges_text: str, *, config: TrainerConfig, rules: str, vocab_name: str,
                       merges_name: str) -> Tokenizer:
    """GPT-2's two files, parsed vocabulary first: tokens that are neither bytes nor made by a
    merge are special tokens (``<|endoftext|>``)."""
    _require(isinstance(vocab, dict), f"{vocab_name} must map tokens to ids")
    assert isinstance(vocab, dict)
    merges, lines = _merge_lines(merges_text, merges_name)
    products = {a + b for a, b in merges}
    singles = set(byte_alphabet())
    specials = {t: i for t, i in vocab.items() if t not in singles and t not in products}
    if singles <= vocab.keys():
        config = config.replace(alphabet="full-bytes")
    return tokenizer_from_vocab_merges(vocab, merges, config=config, specials=specials, rules=rules,
                                       where=lambda n: f"{merges_name} line {lines[n]}", vocab_name=vocab_name)


def tokenizer_from_gpt2_files(vocab_json: str, merges_txt: str, *, pretokenizer: str = "gpt2",
                              pattern: str | None = None) -> Tokenizer:
    """GPT-2's ``vocab.json`` + ``merges.txt`` (HF's BPE files) as a byte-level tokenizer. The
    files carry no regex: ``pretokenizer`` (default GPT-2's). Tokens that are neither bytes nor
    made by a merge are special tokens (``<|endoftext|>``)."""
    return _gpt2_files(_json_object(vocab_json, "vocab.json"), merges_txt, pretokenizer=pretokenizer, pattern=pattern)


def _gpt2_files(vocab: dict, merges_txt: str, *, pretokenizer: str, pattern: str | None) -> Tokenizer:
    try:
        config = TrainerConfig(pretokenizer=pretokenizer, pattern=pattern, unit="byte", vocab_size=None,
                               num_merges=None).validate()
    except ConfigError as err:
        raise FormatError(str(err)) from None
    return _byte_vocab_merges(vocab, merges_txt, config=config, rules="merges", vocab_name="vocab.json",
                              merges_name="merges.txt")


def tokenizer_from_subword_nmt(codes: str, *, name: str = "codes") -> Tokenizer:
    """subword-nmt codes as a character-level tokenizer: whitespace-split words, ``</w>`` glued
    to the last character (``#version: 0.2``) or a symbol of its own (``0.1``). The codes list
    no alphabet: it is the symbols the merges use that no merge makes, in order of first use
    (characters outside it encode as unknown).

    >>> tokenizer_from_subword_nmt("#version: 0.2\\nl o\\nlo w</w>\\n").vocab
    ('l', 'o', 'w</w>', 'lo', 'low</w>')
    """
    merges, lines = _merge_lines(codes, name)
    version = codes.split("\n", 1)[0].partition(":")[2].strip()
    markers = {v: m for m, v in SUBWORD_NMT_VERSIONS.items()}
    _require(version in markers, f"{name} line 1: version {version!r} (subword-nmt writes 0.1 or 0.2)")
    products = {a + b for a, b in merges}
    alphabet = [s for s in dict.fromkeys(p for pair in merges for p in pair) if s not in products]
    vocab = {s: i for i, s in enumerate(alphabet)}
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    config = TrainerConfig(pretokenizer="whitespace", unit="char", marker=markers[version], alphabet_order="first-seen",
                           vocab_size=None, num_merges=None)
    return tokenizer_from_vocab_merges(vocab, merges, config=config, where=lambda n: f"{name} line {lines[n]}",
                                       vocab_name=name)


# ---- tiktoken -------------------------------------------------------------------------------
def read_tiktoken(data: bytes, *, name: str = ".tiktoken") -> list[bytes]:
    """A ``.tiktoken`` file (``base64(token) rank`` per line) -> the tokens in rank order.

    >>> read_tiktoken(b"IQ== 0\\nIg== 1\\n")
    [b'!', b'"']
    >>> read_tiktoken(b"IQ== 0\\nIg== 2\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: .tiktoken line 2: rank 2 where rank 1 was expected (ranks must run 0, 1, 2, ...)
    """
    return [t for t, _ in read_ranks(data, name=name, start=0)]


def read_ranks(data: bytes, *, name: str = ".tiktoken", start: int | None = None) -> list[tuple[bytes, int]]:
    """(token, rank) per line, ranks consecutive from ``start`` (from the first line's when None).

    >>> read_ranks(b"IQ== 1\\nIQ== 2\\n")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: .tiktoken line 2: the token b'!' already has rank 1 (line 1)
    """
    out: list[tuple[bytes, int]] = []
    seen: dict[bytes, tuple[int, int]] = {}
    ranks: dict[int, int] = {}
    for n, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        _require(len(fields) == 2 and fields[1].isdigit(), f"{name} line {n}: expected 'base64 rank'")
        try:
            token = base64.b64decode(fields[0], validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f"{name} line {n}: bad base64 {fields[0][:40].decode('ascii', 'replace')!r}") from None
        rank = int(fields[1])
        _require(rank not in ranks, f"{name} line {n}: rank {rank} is given twice (also on line {ranks.get(rank)})")
        if token in seen:
            raise FormatError(f"{name} line {n}: the token {token!r} already has rank {seen[token][0]} "
                              f"(line {seen[token][1]})")
        expected = (start if start is not None else rank) if not out else out[-1][1] + 1
        _require(rank == expected, f"{name} line {n}: rank {rank} where rank {expected} was expected "
                                   "(ranks must run 0, 1, 2, ...)")
        ranks[rank] = n
        seen[token] = (rank, n)
        out.append((token, rank))
    _require(bool(out), f"{name} holds no ranks")
    return out


def tokenizer_from_tiktoken(data: bytes, meta: Mapping | None = None, *, pretokenizer: str | None = None,
                            pattern: str | None = None, name: str = ".tiktoken") -> Tokenizer:
    """A ``.tiktoken`` rank file (and the JSON beside it: ``pat_str``, ``special_tokens``) as a
    tokenizer with tiktoken's rules; its merges are recovered from the ranks. Without the JSON,
    ``pretokenizer`` (and ``pattern``) say how text is split; with it they are not used."""
    specials: dict[str, int] = {}
    if meta is not None:
        _require(isinstance(meta.get("pat_str"), str), "the tiktoken JSON needs 'pat_str' (a string)")
        specials = meta.get("special_tokens") or {}
        _require(isinstance(specials, dict) and all(isinstance(i, int) for i in specials.values()),
                 "the tiktoken JSON's 'special_tokens' must map names to integer ids")
        pretokenizer, pattern = pretokenizer_of_pattern(meta["pat_str"])  # the file's own regex wins
    ranked = read_ranks(data, name=name)
    _require(pretokenizer is not None, f"{name} holds no regex: give the JSON beside it (pat_str) or choose the "
                                       "pre-tokenizer (gpt2, cl100k, o200k, none)")
    first, last = ranked[0][1], ranked[-1][1]
    leading = sorted((i, t) for t, i in specials.items() if i < first)
    _require([i for i, _ in leading] == list(range(first)),
             f"{name}: ranks start at {first}, so the special tokens must take ids 0-{first - 1}" if first else
             f"{name}: a special token's id is negative")
    trailing = {t: i for t, i in specials.items() if i >= first}
    for t, i in trailing.items():
        _require(i > last, f"the tiktoken JSON gives special token {t!r} id {i}, a rank of {name}")
    try:
        config = TrainerConfig(pretokenizer=pretokenizer, pattern=pattern, unit="byte").validate()
        return tokenizer_from_ranks([t for t, _ in ranked], pretokenizer=config.pretokenizer, pattern=config.pattern,
                                    special_ids=trailing, leading=[t for _, t in leading])
    except ValueError as err:  # ConfigError, FormatError, and the tokenizer's own checks of special ids
        raise FormatError(f"{name}: {err}") from None


def tokenizer_from_gpt2(encoder_json: str, vocab_bpe: str, *, pretokenizer: str = "gpt2") -> Tokenizer:
    """GPT-2's own ``encoder.json`` (token -> id) and ``vocab.bpe`` (its merges, in order), encoding
    as tiktoken's ``gpt2`` does (the bundled GPT-2). Ids 0-255 must be the 256 bytes and entries
    past the merges (``<|endoftext|>``) become special tokens.

    >>> tok = tokenizer_from_gpt2(json.dumps({bytes_to_display(bytes([b])): b for b in range(256)} | {"ab": 256, "<|endoftext|>": 257}), "#version: 0.2\\na b\\n")
    >>> tok.encode("abab<|endoftext|>", allow_special=True)
    [256, 256, 257]
    """
    encoder = _json_object(encoder_json, "encoder.json")
    first = sorted((i, t) for t, i in encoder.items() if isinstance(i, int) and 0 <= i < 256)
    _require([i for i, _ in first] == list(range(256)) and sorted(t for _, t in first) == sorted(byte_alphabet()),
             "ids 0-255 of encoder.json must be the 256 byte symbols")
    config = TrainerConfig(pretokenizer=pretokenizer, unit="byte", vocab_size=None, num_merges=None)
    return _byte_vocab_merges(encoder, vocab_bpe, config=config, rules="tiktoken", vocab_name="encoder.json",
                              merges_name="vocab.bpe")


# ---- minbpe ---------------------------------------------------------------------------------
def tokenizer_from_minbpe(model: str, *, name: str = "tokenizer.model") -> Tokenizer:
    """minbpe's ``.model`` (``minbpe v1``, pattern, special tokens, ``left right`` id pairs):
    bytes 0-255, merge i makes id 256 + i, special tokens at their own ids."""
    lines = model.split("\n")
    _require(lines[0].strip() == "minbpe v1", f"{name} line 1: expected 'minbpe v1', found {lines[0][:40]!r}")
    _require(len(lines) >= 3 and lines[2].strip().isdigit(), f"{name} line 3: expected the number of special tokens")
    pattern = lines[1]
    n_special = int(lines[2])
    specials: dict[str, int] = {}
    for n in range(3, 3 + n_special):
        parts = lines[n].rsplit(" ", 1) if n < len(lines) else []
        _require(len(parts) == 2 and parts[1].isdigit(), f"{name} line {n + 1}: expected 'special_token id'")
        taken = next((t for t, i in specials.items() if i == int(parts[1])), None)
        _require(taken is None and parts[0] not in specials,
                 f"{name} line {n + 1}: special token {parts[0]!r} or id {parts[1]} is given twice")
        specials[parts[0]] = int(parts[1])
    merges = []
    for n in range(3 + n_special, len(lines)):
        if not lines[n].strip():
            continue
        parts = lines[n].split()
        _require(len(parts) == 2 and all(p.isdigit() for p in parts), f"{name} line {n + 1}: expected two ids")
        a, b = int(parts[0]), int(parts[1])
        new = 256 + len(merges)
        _require(a < new and b < new, f"{name} line {n + 1}: id {max(a, b)} is not made before merge {len(merges) + 1} "
                                      f"(which makes id {new})")
        merges.append((a, b))
    end = 256 + len(merges)
    for t, i in specials.items():
        _require(i >= end, f"{name}: special token {t!r} has id {i}, among the ids the merges make (below {end})")
    pretok, custom = ("none", None) if pattern == "" else pretokenizer_of_pattern(pattern)
    try:
        config = TrainerConfig(pretokenizer=pretok, pattern=custom, unit="byte", alphabet="full-bytes",
                               alphabet_order="byte", reuse_ids=False, vocab_size=None, num_merges=None).validate()
        return Tokenizer(config=config, alphabet=[bytes_to_display(bytes([b])) for b in range(256)], merges=merges,
                         special_ids=specials)
    except ValueError as err:  # ConfigError too
        raise FormatError(f"{name}: {err}") from None


# ---- which files are which ------------------------------------------------------------------
class ImportFormat(NamedTuple):
    name: str
    title: str
    files: str  # what to upload, for people


IMPORT_FORMATS: dict[str, ImportFormat] = {
    f.name: f
    for f in (
        ImportFormat("hf", "Hugging Face tokenizer.json", "tokenizer.json (a BPE model)"),
        ImportFormat("gpt2", "GPT-2 vocab.json + merges.txt", "vocab.json and merges.txt (byte level)"),
        ImportFormat("tiktoken", "tiktoken rank file", "a .tiktoken file (and the JSON with pat_str beside it)"),
        ImportFormat("subword-nmt", "subword-nmt codes", "a codes file ('#version: 0.2' then 'a b' lines)"),
        ImportFormat("minbpe", "minbpe .model", "a .model file (its .vocab is optional)"),
        ImportFormat("trace", "BPE Explorer trace.json", "trace.json, as this app and its CLI write"),
    )
}


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if err.reason == "unexpected end of data":
            raise FormatError(f"{name} is cut short inside a character (byte {err.start})") from None
        raise FormatError(f"{name} is not UTF-8 text (byte {err.start})") from None


def _kind(name: str, data: bytes) -> tuple[str, object]:
    """What one file is, and its parsed content: trace, hf, tiktoken-meta, vocab-json,
    tiktoken, minbpe-model, minbpe-vocab or merges."""
    lower = name.lower()
    if lower.endswith(".tiktoken"):
        return "tiktoken", data
    text = _text(name, data)
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{") or lower.endswith(".json"):
        obj = _json_object(stripped, name)
        if obj.get("format") == TRACE_FORMAT:
            return "trace", obj
        # a vocabulary may hold the tokens "model" and "pat_str" (GPT-2's holds "model"): only
        # token -> id entries make a vocab.json
        if obj and all(isinstance(v, int) and not isinstance(v, bool) for v in obj.values()):
            return "vocab-json", obj
        if isinstance(obj.get("model"), dict):
            return "hf", obj
        if "pat_str" in obj:
            return "tiktoken-meta", obj
        raise FormatError(f"{name}: a JSON file of no known layout (expected a tokenizer.json with 'model', a trace.json, "
                          "a vocab.json of token -> id, or a tiktoken JSON with 'pat_str')")
    if stripped.startswith("minbpe") or lower.endswith(".model"):
        return "minbpe-model", text
    if lower.endswith(".vocab"):
        return "minbpe-vocab", text
    first = stripped.split("\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit() and not stripped.startswith("#"):
        return "tiktoken", data
    return "merges", text


def _classify(files: Mapping[str, bytes]) -> tuple[str, dict[str, tuple[str, object]]]:
    _require(bool(files), "no file given")
    kinds = {name: _kind(name, data) for name, data in files.items()}
    found = sorted(k for k, _ in kinds.values())
    for fmt, wanted in (("trace", ["trace"]), ("hf", ["hf"]), ("gpt2", ["merges", "vocab-json"]),
                        ("tiktoken", ["tiktoken"]), ("tiktoken", ["tiktoken", "tiktoken-meta"]),
                        ("subword-nmt", ["merges"]), ("minbpe", ["minbpe-model"]),
                        ("minbpe", ["minbpe-model", "minbpe-vocab"])):
        if found == wanted:
            return fmt, kinds
    names = ", ".join(f"{n} ({k})" for n, (k, _) in kinds.items())
    hints = {"vocab-json": "a vocab.json needs its merges.txt", "tiktoken-meta": "a tiktoken JSON needs its .tiktoken file",
             "minbpe-vocab": "a minbpe .vocab needs its .model (only the .model is read)"}
    hint = next((hints[k] for k in found if k in hints and len(found) == 1), None)
    raise FormatError(f"cannot tell which tokenizer these files make: {names}" + (f"; {hint}" if hint else
                      "; give one of: " + "; ".join(f.files for f in IMPORT_FORMATS.values())))


def needs_pretokenizer(files: Mapping[str, bytes]) -> bool:
    """Whether these files leave the pre-tokenizer to the caller (vocab.json + merges.txt, a
    .tiktoken without its JSON): a page asks for it only then."""
    fmt, kinds = _classify(files)
    return fmt == "gpt2" or (fmt == "tiktoken" and "tiktoken-meta" not in {k for k, _ in kinds.values()})


def import_files(files: Mapping[str, bytes], *, pretokenizer: str | None = None, pattern: str | None = None) -> Tokenizer:
    """The tokenizer the given files make (name -> content). ``pretokenizer`` (and ``pattern``
    for ``regex``) choose the split for formats that hold none (vocab.json + merges.txt: GPT-2's
    regex by default; a .tiktoken without its JSON: required).

    >>> from explorer import make_config, train
    >>> from explorer.exporters import export_files
    >>> tok = train("low lower lowest", make_config("gpt4", num_merges=4)).tokenizer()
    >>> import_files(export_files(tok, "hf")).merges == tok.merges
    True
    """
    return import_with_format(files, pretokenizer=pretokenizer, pattern=pattern)[1]


def import_with_format(files: Mapping[str, bytes], *, pretokenizer: str | None = None,
                       pattern: str | None = None) -> tuple[str, Tokenizer]:
    """(format, tokenizer): :func:`import_files` with the format it found (each file is read
    once)."""
    fmt, kinds = _classify(files)
    by_kind = {k: (name, content) for name, (k, content) in kinds.items()}
    if fmt == "trace":
        return fmt, tokenizer_from_trace(by_kind["trace"][1])
    if fmt == "hf":
        return fmt, tokenizer_from_hf(by_kind["hf"][1])
    if fmt == "gpt2":
        return fmt, _gpt2_files(by_kind["vocab-json"][1], by_kind["merges"][1], pretokenizer=pretokenizer or "gpt2",
                                pattern=pattern)
    if fmt == "tiktoken":
        name, data = by_kind["tiktoken"]
        meta = by_kind.get("tiktoken-meta", (None, None))[1]
        return fmt, tokenizer_from_tiktoken(data, meta, pretokenizer=pretokenizer, pattern=pattern, name=name)
    if fmt == "subword-nmt":
        name, text = by_kind["merges"]
        return fmt, tokenizer_from_subword_nmt(text, name=name)
    name, text = by_kind["minbpe-model"]
    return fmt, tokenizer_from_minbpe(text, name=name)
