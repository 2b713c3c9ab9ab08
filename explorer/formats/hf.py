"""Hugging Face ``tokenizers``' ``tokenizer.json`` (format ``hf``), both ways: the BPE model
(vocab, merges, unk token, ``end_of_word_suffix``), the normalizer, the pre-tokenizer and the
decoder, each stage written and read through its registry's HF form, and the special tokens as
added tokens. A setting HF cannot represent is a ConfigError when writing; a file of a model or
stage we do not have is a FormatError when reading.

    {"version": "1.0", "added_tokens": [...], "normalizer": null,
     "pre_tokenizer": {"type": "ByteLevel", ...}, "decoder": {"type": "ByteLevel", ...},
     "model": {"type": "BPE", "vocab": {"!": 0, ...}, "merges": [["Ġ", "t"], ...], ...}}
"""

from __future__ import annotations

from collections.abc import Mapping

from ..bpe.config import EncodeOptions
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError
from ..stages.markers import EOW, MARKER_REGISTRY, SP_PREFIX
from ..stages.normalizers import NORMALIZER_REGISTRY
from ..stages.pipeline import Pipeline
from ..stages.pretokenizers import PRETOKENIZER_REGISTRY, SEQUENCE_REGISTRY
from ..stages.units import HF_BYTE_LEVEL_REGEX, UNIT_REGISTRY, byte_alphabet
from .base import (
    FileFormat,
    FileKind,
    Files,
    Found,
    Imported,
    ImportOptions,
    Upload,
    dump_json,
    json_dict,
    json_list,
    need,
    require,
)
from .shared import full_vocab, one_id_per_token, pretokenizer_of_pattern, tokenizer_from_vocab_merges

__all__ = ["FORMAT", "to_hf_tokenizer_json", "tokenizer_from_hf"]


# ---- writing ----------------------------------------------------------------------------------
def _hf_pipeline(tok: Tokenizer) -> tuple[dict | None, dict | None, str | None]:
    """(pre_tokenizer, decoder, end_of_word_suffix) for a config, from its stages' HF forms, or
    ConfigError naming what HF cannot do."""
    cfg = tok.pipeline
    pre = PRETOKENIZER_REGISTRY.stage(cfg.pretokenizer)
    unit = UNIT_REGISTRY.stage(cfg.unit).to_hf(pre.to_hf(pattern=cfg.pattern))
    marker = MARKER_REGISTRY.stage(cfg.marker).to_hf()
    if marker is None:
        raise ConfigError(
            f"HF tokenizers cannot write the {cfg.marker!r} word marker "
            "(it has end_of_word_suffix, '</w>' glued to the last character, and Metaspace's '▁' prefix: "
            "choose marker eow-glued or sp-prefix)"
        )
    need(
        not (marker.pre_tokenizers and pre.spaces_in_pieces),
        "HF writes the '▁' marker with Metaspace, which also turns spaces inside a piece into '▁'; "
        f"this tokenizer's {cfg.pretokenizer!r} pieces keep their spaces (use the whitespace pre-tokenizer)",
    )
    sequences = SEQUENCE_REGISTRY.stage(cfg.sequences).to_hf()
    steps = [*([] if sequences is None else [sequences]), *unit.pre_tokenizers, *marker.pre_tokenizers]
    pre_tokenizer = None if not steps else steps[0] if len(steps) == 1 else {"type": "Sequence", "pretokenizers": steps}
    # a byte-level unit decodes with its own ByteLevel; characters with the marker's decoder
    return pre_tokenizer, unit.decoder or marker.decoder, marker.end_of_word_suffix


def _added_tokens(tok: Tokenizer) -> list[dict]:
    return [
        {
            "id": i,
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for t, i in sorted(tok.special_ids.items(), key=lambda kv: kv[1])
    ]


def _needs_unk(tok: Tokenizer) -> bool:
    """Text can hold a symbol outside the alphabet: every char-level one, byte-level without
    all 256 bytes."""
    return tok.pipeline.unit != "byte" or not set(byte_alphabet()) <= set(tok.alphabet)


def to_hf_tokenizer_json(tok: Tokenizer) -> dict:
    """An HF ``tokenizers`` tokenizer.json for the same merges and the matching pipeline:
    normalizer, pre-tokenizer (a custom regex as ``Split``), model options, decoder, and the
    special tokens as added tokens. Settings HF cannot represent raise ConfigError.

    >>> from explorer import make_config, train
    >>> tj = to_hf_tokenizer_json(train("low lower", make_config("sennrich", marker="eow-glued", num_merges=2)).tokenizer())
    >>> tj["model"]["merges"], tj["model"]["end_of_word_suffix"], tj["pre_tokenizer"]["behavior"]
    ([['l', 'o'], ['lo', 'w</w>']], '</w>', 'Removed')
    """
    one_id_per_token(tok, "tokenizer.json")
    pre, decoder, suffix = _hf_pipeline(tok)
    vocab = full_vocab(tok)
    unk = None
    if _needs_unk(tok):
        # HF needs its unk token in the vocabulary: ours is the first id past it (or a special)
        unk = tok.encoding.unk_token
        vocab.setdefault(unk, tok.unk_id)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": _added_tokens(tok),
        "normalizer": NORMALIZER_REGISTRY.stage(tok.pipeline.normalizer).to_hf(),
        "pre_tokenizer": pre,
        "post_processor": None,
        "decoder": decoder,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": unk,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": suffix,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": dict(sorted(vocab.items(), key=lambda kv: kv[1])),
            "merges": [[tok.vocab[a], tok.vocab[b]] for a, b in tok.merges],
        },
    }


# ---- reading ----------------------------------------------------------------------------------
def _hf_normalizer(norm: object) -> str:
    """The registered normalizer whose HF form this is."""
    for name, stage in NORMALIZER_REGISTRY.items():
        if norm == stage.to_hf():
            return name
    kind = norm.get("type") if isinstance(norm, dict) else norm
    raise FormatError(
        f"tokenizer.json 'normalizer': {kind!r} is not supported (supported: none, NFC, NFKC, Lowercase, "
        "and collapse-whitespace as Replace + Strip)"
    )


def _hf_pre_tokenizer(pre: object) -> dict:
    """Our config fields for an HF pre-tokenizer (what ``_hf_pipeline`` writes)."""
    listed: object = (
        []
        if pre is None
        else pre.get("pretokenizers")
        if isinstance(pre, dict) and pre.get("type") == "Sequence"
        else [pre]
    )
    wrong = "tokenizer.json 'pre_tokenizer' must be an object (or a Sequence of them)"
    rest = [json_dict(step, wrong) for step in json_list(listed, wrong)]
    out: dict = {"sequences": "text", "pretokenizer": "none", "unit": "char", "marker": "none"}
    if (
        rest
        and rest[0].get("type") == "Split"
        and rest[0].get("pattern") in ({"Regex": "\n"}, {"String": "\n"})
        and rest[0].get("behavior") == "MergedWithPrevious"
    ):
        out["sequences"] = "lines"
        rest.pop(0)
    for step in rest:
        kind = step.get("type")
        if (
            (kind == "WhitespaceSplit" or step == PRETOKENIZER_REGISTRY.stage("whitespace").to_hf())
            and out["pretokenizer"] == "none"
            and out["unit"] == "char"
        ):
            # WhitespaceSplit leaves U+001C-U+001F inside words where ours splits: the one place
            # an HF file's whitespace split and ours differ
            out["pretokenizer"] = "whitespace"
        elif step == PRETOKENIZER_REGISTRY.stage("spaces").to_hf() and out["pretokenizer"] == "none":
            out["pretokenizer"] = "spaces"  # ours, as written: subword-nmt's split on spaces only
        elif kind == "Split" and out["pretokenizer"] == "none" and out["unit"] == "char":
            pattern = step.get("pattern") or {}
            require(
                step.get("behavior") == "Isolated" and not step.get("invert") and "Regex" in pattern,
                "tokenizer.json 'pre_tokenizer': only a Split on a Regex with behavior Isolated is supported "
                f"(found behavior {step.get('behavior')!r})",
            )
            out["pretokenizer"], out["pattern"] = pretokenizer_of_pattern(pattern["Regex"])
            require(out["pretokenizer"] != "none", "tokenizer.json 'pre_tokenizer': a Split that keeps the whole text")
        elif kind == "ByteLevel" and out["unit"] == "char" and out["marker"] == "none":
            require(
                not step.get("add_prefix_space"),
                "tokenizer.json 'pre_tokenizer': ByteLevel with add_prefix_space=true is not supported",
            )
            if step.get("use_regex", True):
                require(
                    out["pretokenizer"] == "none",
                    "tokenizer.json 'pre_tokenizer': ByteLevel with use_regex=true "
                    "after another split is not supported",
                )
                out["pretokenizer"], out["pattern"] = pretokenizer_of_pattern(HF_BYTE_LEVEL_REGEX)
            out["unit"] = "byte"
        elif kind == "Metaspace" and out["pretokenizer"] == "whitespace" and out["unit"] == "char":
            require(
                step.get("replacement") == SP_PREFIX and step.get("prepend_scheme", "always") == "always",
                "tokenizer.json 'pre_tokenizer': only Metaspace with '▁' prepended always is supported",
            )
            out["marker"] = "sp-prefix"
        else:
            raise FormatError(
                f"tokenizer.json 'pre_tokenizer': {kind!r} is not supported here (supported: WhitespaceSplit, "
                "a Split on a regex, ByteLevel, Metaspace after WhitespaceSplit, and a Sequence of them)"
            )
    return out


def _hf_merges(raw: object) -> list[tuple[str, str]]:
    out = []
    for n, m in enumerate(json_list(raw, "tokenizer.json 'model.merges' must be a list")):
        parts = m.split(" ") if isinstance(m, str) else m  # "a b" (older files) or ["a", "b"]
        if not (isinstance(parts, list) and len(parts) == 2 and all(isinstance(p, str) for p in parts)):
            raise FormatError(f"tokenizer.json 'model.merges[{n}]': expected two tokens, found {m!r}")
        out.append((parts[0], parts[1]))
    return out


def tokenizer_from_hf(data: object) -> Tokenizer:
    """An HF ``tokenizers`` tokenizer.json (a BPE model) as our tokenizer, with its normalizer,
    pre-tokenizer, word marker and special tokens when we have the same; else FormatError."""
    no_model = "tokenizer.json has no 'model' object"
    data = json_dict(data, no_model)
    model = json_dict(data.get("model"), no_model)
    kind = model.get("type", "BPE" if "merges" in model else None)
    require(kind == "BPE", f"tokenizer.json 'model.type' is {kind!r}: only BPE models can be imported")
    fields = _hf_pre_tokenizer(data.get("pre_tokenizer"))
    fields["normalizer"] = _hf_normalizer(data.get("normalizer"))
    require(
        not model.get("continuing_subword_prefix"),
        f"tokenizer.json 'model.continuing_subword_prefix' is {model.get('continuing_subword_prefix')!r}: "
        "word-continuation prefixes are not supported",
    )
    require(
        not model.get("byte_fallback"), "tokenizer.json 'model.byte_fallback' is true: byte fallback is not supported"
    )
    suffix = model.get("end_of_word_suffix")
    if suffix:
        require(
            suffix == EOW and fields["unit"] == "char" and fields["marker"] == "none",
            f"tokenizer.json 'model.end_of_word_suffix' is {suffix!r}: only '</w>' on character-level BPE is supported",
        )
        fields["marker"] = "eow-glued"
    vocab = json_dict(model.get("vocab"), "tokenizer.json 'model.vocab' must be an object (token -> id)")
    added = data.get("added_tokens") or []
    require(
        isinstance(added, list)
        and all(
            isinstance(a, dict) and isinstance(a.get("content"), str) and isinstance(a.get("id"), int) for a in added
        ),
        "tokenizer.json 'added_tokens' must be a list of objects with 'id' and 'content'",
    )
    specials = {a["content"]: a["id"] for a in added}
    unk = model.get("unk_token")
    require(unk is None or isinstance(unk, str), "tokenizer.json 'model.unk_token' must be a string or null")
    try:
        pipeline = Pipeline(**fields)
        encoding = EncodeOptions(unk_token=unk) if unk else EncodeOptions()
    except ConfigError as err:
        raise FormatError(f"tokenizer.json: {err}") from None
    full = {**vocab, **specials}
    return tokenizer_from_vocab_merges(
        full,
        _hf_merges(model.get("merges")),
        pipeline=pipeline,
        specials=specials,
        unk=unk,
        encoding=encoding,
        where=lambda n: f"tokenizer.json 'model.merges[{n}]'",
        vocab_name="tokenizer.json 'model.vocab'",
    )


# ---- the format ---------------------------------------------------------------------------------
def _is_hf(upload: Upload) -> bool:
    return isinstance(upload.json.get("model"), dict)


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"tokenizer.json": dump_json(to_hf_tokenizer_json(tok))}


def _read(found: Found, options: ImportOptions) -> Imported:
    return Imported(tokenizer_from_hf(found["hf"].json), [])


FORMAT = FileFormat(
    name="hf",
    title="Hugging Face tokenizer.json",
    description="tokenizers.Tokenizer.from_file(...): model, normalizer, pre-tokenizer, decoder, special tokens",
    files="tokenizer.json (a BPE model)",
    write=_write,
    read=_read,
    # after trace.json and vocab.json, whose objects may hold a "model" key too
    kinds=(FileKind("hf", "json", 30, _is_hf, what="a tokenizer.json with 'model'"),),
    file_sets=(("hf",),),
    holds_normalizer=True,
)
