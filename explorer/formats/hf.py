"""Hugging Face ``tokenizers``' ``tokenizer.json`` (format ``hf``), both ways: the BPE model
(vocab, merges, unk token, ``end_of_word_suffix``), the normalizer, the pre-tokenizer and the
decoder, each stage written and read through its registry's HF form, and the special tokens as
added tokens. A setting HF cannot represent is a ConfigError when writing; a file of a model or
stage we do not have is a FormatError when reading, as is any field or option we do not apply
as HF does (nothing in the file is skipped); ``ignore_merges``, ``fuse_unk``, a model with no unk
token (HF drops what it has no id for) and transformers' tiktoken converter's merge list (every
split of each token, in the order of the tokens it makes) encode as HF does. A vocabulary
numbered in SentencePiece's order (Llama 2, Mistral 7B v0.1: single characters after merged
pieces) keeps its ids beside the derived ones (``id_order``); the export writes them back.

    {"version": "1.0", "added_tokens": [...], "normalizer": null,
     "pre_tokenizer": {"type": "ByteLevel", ...}, "decoder": {"type": "ByteLevel", ...},
     "model": {"type": "BPE", "vocab": {"!": 0, ...}, "merges": [["Ġ", "t"], ...], ...}}
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from itertools import chain, repeat
from operator import itemgetter

import regex

from ..bpe.config import EncodeOptions
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError, FormatError
from ..stages.markers import EOW, MARKER_REGISTRY, SP_PREFIX
from ..stages.normalizers import NORMALIZER_REGISTRY
from ..stages.pipeline import Pipeline
from ..stages.pretokenizers import PRETOKENIZER_REGISTRY, SEQUENCE_REGISTRY, RegexSplit
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
from .id_order import base_after_merged, tokenizer_in_file_order
from .regex_dialects import oniguruma_pattern
from .shared import (
    full_vocab,
    in_making_order,
    one_id_per_token,
    pretokenizer_of_pattern,
    tokenizer_from_merge_list,
    tokenizer_from_vocab_merges,
)

__all__ = ["FORMAT", "dump_tokenizer_json", "to_hf_tokenizer_json", "tokenizer_from_hf"]


# ---- writing ----------------------------------------------------------------------------------
def _hf_pipeline(tok: Tokenizer) -> tuple[dict | None, dict | None, str | None]:
    """(pre_tokenizer, decoder, end_of_word_suffix) for a config, from its stages' HF forms, or
    ConfigError naming what HF cannot do."""
    cfg = tok.pipeline
    pre = PRETOKENIZER_REGISTRY.stage(cfg.pretokenizer)
    unit = UNIT_REGISTRY.stage(cfg.unit).to_hf(_for_oniguruma(pre.to_hf(pattern=cfg.pattern)))
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
    norm = NORMALIZER_REGISTRY.stage(cfg.normalizer)
    # a normalizer HF writes as a pre-tokenizer (Metaspace) acts on the whole text, before any split
    need(
        norm.hf_pre_tokenizer is None or sequences is None,
        f"HF writes the {cfg.normalizer!r} normalizer as a Metaspace pre-tokenizer, which would act on each "
        f"of the {cfg.sequences} instead of the whole text",
    )
    steps = [
        *([] if norm.hf_pre_tokenizer is None else [copy.deepcopy(norm.hf_pre_tokenizer)]),
        *([] if sequences is None else [sequences]),
        *unit.pre_tokenizers,
        *marker.pre_tokenizers,
    ]
    pre_tokenizer = None if not steps else steps[0] if len(steps) == 1 else {"type": "Sequence", "pretokenizers": steps}
    # a byte-level unit decodes with its own ByteLevel; characters with the marker's decoder, or
    # with no marker the normalizer's (SentencePiece's "▁" back to spaces, its byte tokens)
    decoder = unit.decoder or marker.decoder
    if cfg.unit == "char" and cfg.marker == "none":
        decoder = norm.to_hf_decoder(byte_fallback=tok.encoding.byte_fallback)
    return pre_tokenizer, decoder, marker.end_of_word_suffix


def _for_oniguruma(step: dict | None) -> dict | None:
    """A pre-tokenizer step with its regex as HF's Oniguruma must read it to cut as we do
    (cl100k's possessive ``\\p{N}{1,3}+``: ``regex_dialects``); ConfigError when no rewrite
    says the same.

    >>> _for_oniguruma({"type": "Split", "pattern": {"Regex": r"\\p{N}{1,3}+|\\s"}})["pattern"]
    {'Regex': '(?>\\\\p{N}{1,3})|\\\\s'}
    """
    if step is None or "Regex" not in step.get("pattern", {}):
        return step
    return {**step, "pattern": {"Regex": oniguruma_pattern(step["pattern"]["Regex"])}}


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
        for t, i in sorted(((t, tok.shown_id(i)) for t, i in tok.special_ids.items()), key=lambda kv: kv[1])
    ]


def _needs_unk(tok: Tokenizer) -> bool:
    """Text can hold a symbol outside the alphabet: every char-level one, byte-level without
    all 256 bytes."""
    return tok.pipeline.unit != "byte" or not set(byte_alphabet()) <= set(tok.alphabet)


def _merge_list(tok: Tokenizer) -> list[tuple[int, int]]:
    """The merges as HF lists them: the file's own list when one was read, else the merges."""
    if tok.pair_rules is None:
        return list(tok.merges)
    return sorted(tok.pair_rules, key=tok.pair_rules.__getitem__)


def to_hf_tokenizer_json(tok: Tokenizer) -> dict:
    """An HF ``tokenizers`` tokenizer.json for the same merges and the matching pipeline:
    normalizer, pre-tokenizer (a custom regex as ``Split``), model options, decoder, and the
    special tokens as added tokens, the ids those of the file it was read from when it keeps
    them (``Tokenizer.file_ids``). Settings HF cannot represent raise ConfigError.

    >>> from explorer import make_config, train
    >>> tj = to_hf_tokenizer_json(train("low lower", make_config("sennrich", marker="eow-glued", num_merges=2)).tokenizer())
    >>> tj["model"]["merges"], tj["model"]["end_of_word_suffix"], tj["pre_tokenizer"]["behavior"]
    ([['l', 'o'], ['lo', 'w</w>']], '</w>', 'Removed')
    """
    one_id_per_token(tok, "tokenizer.json")
    pre, decoder, suffix = _hf_pipeline(tok)
    vocab = full_vocab(tok)
    tokens = tok.vocab.tokens
    unk = None
    if _needs_unk(tok) and not tok.encoding.drop_unknown:
        # HF needs its unk token in the vocabulary: ours is the first id past it (or a special)
        unk = tok.encoding.unk_token
        vocab.setdefault(unk, tok.unk_id)
    if tok.file_ids is not None:  # the ids of the file it was read from (SentencePiece's order)
        vocab = {t: tok.shown_id(i) for t, i in vocab.items()}
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
            "fuse_unk": tok.encoding.fuse_unk,
            "byte_fallback": tok.encoding.byte_fallback,
            "ignore_merges": tok.encoding.ignore_merges,
            "vocab": dict(sorted(vocab.items(), key=itemgetter(1))),
            "merges": [[tokens[a], tokens[b]] for a, b in _merge_list(tok)],
        },
    }


# ---- reading ----------------------------------------------------------------------------------
# Every field of the file this reader knows, by where it is: a field not listed is refused with a
# sentence naming it, never skipped (an option HF applies and we did not would change the ids).
_TOP_FIELDS = frozenset(
    {"version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer", "post_processor"}
    | {"decoder", "model"}
)
_MODEL_FIELDS = frozenset(
    {"type", "dropout", "unk_token", "continuing_subword_prefix", "end_of_word_suffix", "fuse_unk"}
    | {"byte_fallback", "ignore_merges", "vocab", "merges"}
)
# pre-tokenizer type -> its fields (besides "type"); older files write Metaspace's
# add_prefix_space and str_rep
_STEP_FIELDS: dict[str, frozenset[str]] = {
    "ByteLevel": frozenset({"add_prefix_space", "trim_offsets", "use_regex"}),
    "Split": frozenset({"pattern", "behavior", "invert"}),
    "WhitespaceSplit": frozenset(),
    "Whitespace": frozenset(),
    "Metaspace": frozenset({"replacement", "prepend_scheme", "split", "add_prefix_space", "str_rep"}),
}
_ADDED_FIELDS = frozenset({"id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"})


def _shown(value: object) -> str:
    """A value of the file, short enough for a sentence."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _known_fields(obj: dict, known: frozenset[str], where: str) -> None:
    """FormatError naming the first field of ``obj`` that is not in ``known``.

    >>> _known_fields({"type": "BPE", "max_token_length": 16}, _MODEL_FIELDS, "model")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'model.max_token_length' is 16: this option is not supported
    """
    for key, value in obj.items():
        if key not in known and key != "type":  # the sentence only then: a value may be the whole vocabulary
            raise FormatError(
                f"tokenizer.json '{where + '.' if where else ''}{key}' is {_shown(value)}: this option is not supported"
            )


def _steps(sequence: dict) -> str:
    """A Sequence normalizer named by its steps, each in full (which one differs is the point).

    >>> _steps({"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Prepend", "prepend": "_"}]})
    "a Sequence of {'type': 'NFKC'}, {'type': 'Prepend', 'prepend': '_'}"
    """
    steps = sequence.get("normalizers")
    return "a Sequence of " + ", ".join(map(repr, steps)) if isinstance(steps, list) else _shown(sequence)


def _hf_normalizer(norm: object) -> str:
    """The registered normalizer whose HF form this is."""
    for name, stage in NORMALIZER_REGISTRY.items():
        if norm == stage.to_hf() and (norm is not None or stage.hf_pre_tokenizer is None):
            return name
    kind = norm.get("type") if isinstance(norm, dict) else norm
    raise FormatError(
        f"tokenizer.json 'normalizer': {_steps(norm) if isinstance(norm, dict) and kind == 'Sequence' else repr(kind)} is not supported "
        "(supported: none, NFC, NFKC, Lowercase, Strip, Replace of ' ' by '▁', Prepend '▁' then Replace ' ' "
        "by '▁' (Llama 2), and collapse-whitespace as Replace + Strip)"
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
        if isinstance(kind, str) and kind in _STEP_FIELDS:  # a list or an object is no key: the last branch says so
            _known_fields(step, _STEP_FIELDS[kind], f"pre_tokenizer ({kind})")
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
                isinstance(pattern, dict) and "Regex" in pattern,
                f"tokenizer.json 'pre_tokenizer': only a Split on a Regex is supported (found {_shown(pattern)})",
            )
            _check_split(step.get("behavior"), step.get("invert", False), pattern["Regex"])
            out["pretokenizer"], out["pattern"] = pretokenizer_of_pattern(pattern["Regex"], oniguruma=True)
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
        elif (
            kind == "Metaspace"
            and (out["sequences"], out["pretokenizer"], out["unit"], out["marker"]) == ("text", "none", "char", "none")
            and "normalizer" not in out
        ):
            out.update(_metaspace_alone(step))
        elif kind == "Metaspace" and out["pretokenizer"] == "whitespace" and out["unit"] == "char":
            # older files say add_prefix_space instead of prepend_scheme
            scheme = step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")
            require(
                step.get("split", True) is False,
                "tokenizer.json 'pre_tokenizer': Metaspace with split true (absent: true) cuts words at a '▁' "
                "they hold too, which is not supported",
            )
            require(
                step.get("replacement") == SP_PREFIX and scheme == "always",
                "tokenizer.json 'pre_tokenizer': only Metaspace with '▁' prepended always is supported "
                f"(found replacement {step.get('replacement')!r}, prepend_scheme {scheme!r})",
            )
            out["marker"] = "sp-prefix"
        else:
            raise FormatError(
                f"tokenizer.json 'pre_tokenizer': {kind!r} is not supported here (supported: WhitespaceSplit, "
                "a Split on a regex, ByteLevel, Metaspace after WhitespaceSplit, and a Sequence of them)"
            )
    return out


# Metaspace with split true: each piece starts at a "▁" (HF cuts before each one, MergedWithNext)
METASPACE_SPLIT = f"{SP_PREFIX}[^{SP_PREFIX}]*|[^{SP_PREFIX}]+"


def _metaspace_alone(step: dict) -> dict:
    """Our fields for a Metaspace pre-tokenizer that acts on the whole text (no split before
    it): its replacement and prepending are a normalizer ("metaspace", or "sp-spaces" when it
    never prepends), its split true a pre-tokenizer cutting before each "▁". Prepend scheme
    "first" prepends only to the text's first part, which differs from "always" only after a
    special token: a note says so.

    >>> _metaspace_alone({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True})["normalizer"]
    'sp-spaces'
    """
    scheme = step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")
    require(
        step.get("replacement") == SP_PREFIX and scheme in ("always", "first", "never"),
        "tokenizer.json 'pre_tokenizer': only a Metaspace with the replacement '▁' is supported "
        f"(found replacement {_shown(step.get('replacement'))}, prepend_scheme {_shown(scheme)})",
    )
    split = step.get("split", True)
    require(
        isinstance(split, bool),
        f"tokenizer.json 'pre_tokenizer': Metaspace's split must be true or false, not {_shown(split)}",
    )
    out: dict = {"normalizer": "sp-spaces" if scheme == "never" else "metaspace", "notes": []}
    if split:
        out["pretokenizer"], out["pattern"] = "regex", METASPACE_SPLIT
    if scheme == "first":
        out["notes"].append(
            "tokenizer.json's Metaspace prepends '▁' to the text's first part only (prepend_scheme first): "
            "here to every part a special token cuts the text into, as prepend_scheme always does"
        )
    return out


def _matches_everything(pattern: str) -> bool:
    """Whether a regex cuts every character into non-empty matches (checked as our built-in
    pre-tokenizers' patterns are, on probes of every kind of character)."""
    try:
        RegexSplit("", pattern)
    except (ConfigError, regex.error):
        return False
    return True


def _check_split(behavior: object, invert: object, pattern: str) -> None:
    """A Split that cuts as our regex pre-tokenizer does (each match a piece, the text between
    matches kept as pieces), else FormatError naming its behavior and invert. With invert true
    the matches are the pieces and HF's behavior acts on the text between them: Isolated keeps
    it as pieces, the same cut; Removed drops it (OLMo 2), the same cut when the pattern
    matches every character.

    >>> _check_split("Removed", True, r"\\p{L}+|\\s+|[^\\p{L}\\s]+")
    >>> _check_split("Removed", True, r"\\p{L}+")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'pre_tokenizer': a Split with invert true and behavior Removed drops the text between its matches, and '\\\\p{L}+' does not match every character: not supported
    """
    if behavior == "Isolated":
        require(
            isinstance(invert, bool),
            f"tokenizer.json 'pre_tokenizer': a Split's invert must be true or false, not {invert!r}",
        )
        return
    require(
        behavior == "Removed" and invert is True,
        f"tokenizer.json 'pre_tokenizer': a Split with behavior {_shown(behavior)} and invert {_shown(invert)} "
        "is not supported (supported: Isolated, and Removed with invert true)",
    )
    require(
        _matches_everything(pattern),
        "tokenizer.json 'pre_tokenizer': a Split with invert true and behavior Removed drops the text between "
        f"its matches, and {_shown(pattern)} does not match every character: not supported",
    )


def _hf_merges(raw: object) -> list[tuple[str, str]]:
    """tokenizer.json's merges as pairs: each ``["a", "b"]`` or, in older files, ``"a b"``.

    >>> _hf_merges([["a", "b"], "ab c"])
    [('a', 'b'), ('ab', 'c')]
    >>> _hf_merges([["a", "b", "c"]])
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'model.merges[0]': expected two tokens, found ['a', 'b', 'c']
    """
    merges = json_list(raw, "tokenizer.json 'model.merges' must be a list")
    # all of one layout, checked at once (the loop below says which entry is wrong)
    lists = merges if {list} >= set(map(type, merges)) else None
    if lists is None and {str} >= set(map(type, merges)):
        lists = list(map(str.split, merges, repeat(" ")))
    if lists is not None and {2} >= set(map(len, lists)) and {str} >= set(map(type, chain.from_iterable(lists))):
        return list(map(tuple, lists))
    out: list[tuple[str, str]] = []
    append = out.append
    for n, m in enumerate(merges):
        parts = m.split(" ") if type(m) is str else m  # "a b" (older files) or ["a", "b"]
        if type(parts) is list and len(parts) == 2:
            a, b = parts
            if type(a) is str and type(b) is str:
                append((a, b))
                continue
        raise FormatError(f"tokenizer.json 'model.merges[{n}]': expected two tokens, found {m!r}")
    return out


def _flag(model: dict, name: str) -> bool:
    """A true/false option of the BPE model (absent: false)."""
    value = model.get(name, False)
    require(isinstance(value, bool), f"tokenizer.json 'model.{name}' must be true or false, not {_shown(value)}")
    return value


def _hf_model_options(model: dict, fields: dict) -> dict:
    """EncodeOptions' fields for the BPE model's options (``fields``, the pipeline's, gets the
    word marker of ``end_of_word_suffix``); an option we do not apply as HF does is refused."""
    _known_fields(model, _MODEL_FIELDS, "model")
    dropout = model.get("dropout")
    require(
        dropout in (None, 0, 0.0),
        f"tokenizer.json 'model.dropout' is {_shown(dropout)}: HF skips merges at random on every encode "
        "with it, so no fixed ids match HF's (set it to null to import; BPE-dropout is an option of each "
        "encode here)",
    )
    prefix = model.get("continuing_subword_prefix")
    require(
        not prefix,
        f"tokenizer.json 'model.continuing_subword_prefix' is {_shown(prefix)}: word-continuation prefixes "
        "are not supported",
    )
    byte_fallback = _flag(model, "byte_fallback")
    require(
        not byte_fallback or (fields["unit"], fields["marker"]) == ("char", "none"),
        "tokenizer.json 'model.byte_fallback' is true on a byte-level or word-marked model: byte fallback is "
        "supported on character-level BPE with no end_of_word_suffix or Metaspace marker only",
    )
    suffix = model.get("end_of_word_suffix")
    if suffix:
        require(
            suffix == EOW and fields["unit"] == "char" and fields["marker"] == "none",
            f"tokenizer.json 'model.end_of_word_suffix' is {_shown(suffix)}: only '</w>' on character-level "
            "BPE is supported",
        )
        fields["marker"] = "eow-glued"
    ignore_merges = _flag(model, "ignore_merges")
    require(
        not (ignore_merges and suffix),
        "tokenizer.json 'model.ignore_merges' is true with an end_of_word_suffix: HF then looks a word up "
        "without its suffix, which is not supported",
    )
    return {"ignore_merges": ignore_merges, "fuse_unk": _flag(model, "fuse_unk"), "byte_fallback": byte_fallback}


# the decoder type each pipeline decodes as (None: our pieces join as they are, as Fuse does)
_DECODERS = {"byte": "ByteLevel", "eow-glued": "BPEDecoder", "sp-prefix": "Metaspace", "none": "Fuse"}


def _hf_decoder(decoder: object, fields: dict, *, byte_fallback: bool = False) -> list[str]:
    """Notes on the decoder: none when it decodes as ours does; a sentence when it is null (HF
    joins tokens with spaces then); a FormatError naming any other.

    >>> _hf_decoder({"type": "ByteLevel", "add_prefix_space": True}, {"unit": "byte", "marker": "none"})
    []
    >>> _hf_decoder({"type": "Fuse"}, {"unit": "char", "marker": "eow-glued"})
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'decoder': 'Fuse' is not supported with this pipeline (expected BPEDecoder or null)
    >>> _hf_decoder({"type": "ByteFallback"}, {"unit": "char", "marker": "none", "normalizer": "none"})
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: tokenizer.json 'decoder' is {'type': 'ByteFallback'}: with normalizer 'none' only {'type': 'Fuse'} is supported (it decodes as here)
    """
    if decoder is None:
        return ["tokenizer.json has no decoder: HF decodes by joining the tokens with spaces, here they decode as text"]
    step = json_dict(decoder, "tokenizer.json 'decoder' must be an object or null")
    if (fields["unit"], fields["marker"]) == ("char", "none"):
        # the normalizer's decoder: SentencePiece's "▁" back to spaces, byte tokens back to bytes
        wanted = NORMALIZER_REGISTRY.stage(fields["normalizer"]).to_hf_decoder(byte_fallback=byte_fallback)
        require(
            step == wanted,
            f"tokenizer.json 'decoder' is {_shown(step)}: with normalizer {fields['normalizer']!r}"
            f"{' and byte fallback' if byte_fallback else ''} only {_shown(wanted)} is supported (it decodes as here)",
        )
        return []
    expected = _DECODERS["byte"] if fields["unit"] == "byte" else _DECODERS[fields["marker"]]
    kind = step.get("type")
    require(
        kind == expected,
        f"tokenizer.json 'decoder': {_shown(kind)} is not supported with this pipeline (expected {expected} or null)",
    )
    if kind == "ByteLevel":
        _known_fields(step, _STEP_FIELDS["ByteLevel"], "decoder")  # its options change no decoding
    elif kind == "BPEDecoder":
        _known_fields(step, frozenset({"suffix"}), "decoder")
        require(
            step.get("suffix") == EOW,
            f"tokenizer.json 'decoder.suffix' is {_shown(step.get('suffix'))}: only '</w>' is supported",
        )
    elif kind == "Metaspace":
        _known_fields(step, _STEP_FIELDS["Metaspace"], "decoder")
        require(
            step.get("replacement") == SP_PREFIX,
            f"tokenizer.json 'decoder.replacement' is {_shown(step.get('replacement'))}: only '▁' is supported",
        )
    else:
        _known_fields(step, frozenset(), "decoder")
    return []


def _hf_notes(data: dict) -> list[str]:
    """Sentences on what HF's ``encode`` adds that these ids leave out: the post-processor's
    tokens (HF's ``add_special_tokens=False`` gives ours), truncation and padding."""
    notes = []
    post = data.get("post_processor")
    kind = post.get("type") if isinstance(post, dict) else post
    if post is not None and kind != "ByteLevel":  # ByteLevel's only trims offsets
        notes.append(
            f"tokenizer.json's post-processor ({_shown(kind)}) is not applied: the ids are HF's "
            "encode(text, add_special_tokens=False)"
        )
    for key in ("truncation", "padding"):
        if data.get(key) is not None:
            notes.append(
                f"tokenizer.json's {key} ({_shown(data[key])}) is not applied: ids are never cut or padded here"
            )
    return notes


def _hf_added(raw: object) -> dict[str, int]:
    """The added tokens, token -> id; an option that changes how HF finds one in a text
    (lstrip, rstrip, single_word) is refused."""
    wrong = "tokenizer.json 'added_tokens' must be a list of objects with 'id' and 'content'"
    added = [json_dict(a, wrong) for a in json_list(raw, wrong)]
    require(all(isinstance(a.get("content"), str) and isinstance(a.get("id"), int) for a in added), wrong)
    for n, a in enumerate(added):
        _known_fields(a, _ADDED_FIELDS, f"added_tokens[{n}]")
        for option in ("lstrip", "rstrip", "single_word"):
            require(
                not a.get(option),
                f"tokenizer.json 'added_tokens[{n}].{option}' is {_shown(a.get(option))} ({a['content']!r}): "
                "this option is not supported",
            )
    return {a["content"]: a["id"] for a in added}


def tokenizer_from_hf(data: object) -> Tokenizer:
    """An HF ``tokenizers`` tokenizer.json (a BPE model) as our tokenizer, with its normalizer,
    pre-tokenizer, word marker, model options and special tokens when we have the same; else a
    FormatError naming the first option we do not apply as HF does."""
    return _hf_import(data)[0]


def _hf_import(data: object) -> tuple[Tokenizer, list[str]]:
    """``tokenizer_from_hf`` and the notes for a page (``_hf_decoder``, ``_hf_notes``)."""
    no_model = "tokenizer.json has no 'model' object"
    data = json_dict(data, no_model)
    model = json_dict(data.get("model"), no_model)
    kind = model.get("type", "BPE" if "merges" in model else None)
    require(kind == "BPE", f"tokenizer.json 'model.type' is {kind!r}: only BPE models can be imported")
    _known_fields(data, _TOP_FIELDS, "")
    fields = _hf_pre_tokenizer(data.get("pre_tokenizer"))
    pre_notes = fields.pop("notes", [])
    normalizer = _hf_normalizer(data.get("normalizer"))
    require(
        normalizer == "none" or "normalizer" not in fields,
        f"tokenizer.json has a normalizer ({normalizer}) and a Metaspace pre-tokenizer on the whole text: "
        "two normalizing steps are not supported",
    )
    fields.setdefault("normalizer", normalizer)
    options = _hf_model_options(model, fields)
    notes = (
        pre_notes + _hf_decoder(data.get("decoder"), fields, byte_fallback=options["byte_fallback"]) + _hf_notes(data)
    )
    vocab = json_dict(model.get("vocab"), "tokenizer.json 'model.vocab' must be an object (token -> id)")
    specials = _hf_added(data.get("added_tokens") or [])
    unk = model.get("unk_token")
    require(unk is None or isinstance(unk, str), "tokenizer.json 'model.unk_token' must be a string or null")
    # with no unknown token HF drops a symbol it has no id for (any character, or a byte the
    # vocabulary lacks)
    options["refuse_surrogates"] = True  # HF refuses text that is not Unicode (a lone surrogate)
    options["drop_unknown"] = not unk and (
        fields["unit"] != "byte" or not all(map(vocab.__contains__, byte_alphabet()))
    )
    try:
        pipeline = Pipeline(**fields)
        encoding = EncodeOptions(unk_token=unk, **options) if unk else EncodeOptions(**options)
    except ConfigError as err:
        raise FormatError(f"tokenizer.json: {err}") from None
    full = {**vocab, **specials}
    ids = list(full.values())
    if not ({int} >= set(map(type, ids)) and min(ids, default=0) >= 0):  # before any reading compares ids
        t, i = next((t, i) for t, i in full.items() if type(i) is not int or i < 0)
        raise FormatError(f"tokenizer.json 'model.vocab': {t!r} has id {i!r}, not a non-negative integer")
    merges = _hf_merges(model.get("merges"))
    options = {
        "pipeline": pipeline,
        "specials": specials,
        "unk": unk,
        "encoding": encoding,
        "where": lambda n: f"tokenizer.json 'model.merges[{n}]'",
        "vocab_name": "tokenizer.json 'model.vocab'",
    }
    made = list(map("".join, merges))  # the token each merge makes: asked by each reading below
    if base_after_merged(full, merges, skip={*specials, unk}, made=made):
        # SentencePiece's numbering (Llama 2, Mistral 7B v0.1): the file's ids kept beside the
        # derived ones, the file's merge list as HF merges by it
        return _in_file_order(full, merges, options), notes
    if not in_making_order(full, merges, made=made):
        # transformers' tiktoken converter lists every split of each token: merged by the list
        # as HF does (SentencePiece's converted files too)
        try:
            return tokenizer_from_merge_list(full, merges, **options), notes
        except FormatError as err:
            return _in_file_order(full, merges, options, refused=err), notes
    try:  # a trainer's list, each token's id the next as it is made
        return tokenizer_from_vocab_merges(full, merges, made=made, **options), notes
    except FormatError as err:
        try:  # ids in another order than the merges' (HF takes any): merged by the list too
            return tokenizer_from_merge_list(full, merges, **options), notes
        except FormatError:
            return _in_file_order(full, merges, options, refused=err), notes


def _in_file_order(
    full: dict[str, int], merges: list[tuple[str, str]], options: dict, *, refused: FormatError | None = None
) -> Tokenizer:
    """The tokenizer of a vocabulary numbered otherwise than its merges make its tokens
    (SentencePiece's order: Llama 2's, Mistral 7B v0.1's single characters after merged pieces),
    its ids kept as ``file_ids`` (``id_order``). When it fails, ``refused``, the sentence of the
    reading that expected the merges' order, is raised instead (a file wrong in both ways is
    most likely wrong in that one)."""
    try:
        return tokenizer_in_file_order(full, merges, **options)
    except FormatError:
        if refused is None:
            raise
        raise refused from None


# ---- the format ---------------------------------------------------------------------------------
def _is_hf(upload: Upload) -> bool:
    return isinstance(upload.json.get("model"), dict)


def _write(tok: Tokenizer, trace: Mapping) -> Files:
    return {"tokenizer.json": dump_tokenizer_json(to_hf_tokenizer_json(tok))}


_json_str = json.encoder.encode_basestring  # type: ignore[attr-defined]  # C; characters unescaped, as dump_json


def dump_tokenizer_json(data: dict) -> str:
    """``dump_json``'s layout, but the model's vocab and merges one entry a line, each entry
    encoded at C speed (the indented encoder is pure Python: seconds for a 200k-token table).

    >>> print(dump_tokenizer_json({"model": {"type": "BPE", "vocab": {"a": 0, "é": 1}, "merges": [["a", "é"]]}}), end="")
    {
     "model": {
      "type": "BPE",
      "vocab": {
       "a": 0,
       "é": 1
      },
      "merges": [
       ["a", "é"]
      ]
     }
    }
    >>> json.loads(dump_tokenizer_json({"model": {"vocab": {}, "merges": []}}))
    {'model': {'vocab': {}, 'merges': []}}
    """
    model = data["model"]
    text = dump_json({**data, "model": {**model, "vocab": {}, "merges": []}})
    for key, opened, closed, rows in (
        ("vocab", "{", "}", (f"{_json_str(t)}: {i}" for t, i in model["vocab"].items())),
        ("merges", "[", "]", (f"[{_json_str(a)}, {_json_str(b)}]" for a, b in model["merges"])),
    ):
        body = ",\n".join("   " + row for row in rows)
        empty = f'\n  "{key}": {opened}{closed}'
        assert text.count(empty) == 1, key  # the model's own key, at its depth
        text = text.replace(empty, f'\n  "{key}": {opened}\n{body}\n  {closed}' if body else empty)
    return text


def _read(found: Found, options: ImportOptions) -> Imported:
    tok, notes = _hf_import(found["hf"].json)
    return Imported(tok, notes)


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
