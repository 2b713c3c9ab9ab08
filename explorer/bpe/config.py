"""One immutable configuration for the whole pipeline and the trainer, and the presets.

Each preset reproduces one seed notebook (see ``SEED_REPLAYS`` for the notebook's own corpus and
settings); any field can be overridden with ``dataclasses.replace`` or :func:`make_config`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from ..errors import ConfigError
from ..stages.pipeline import (
    PIPELINE_FIELDS,
    MarkerName,
    NormalizerName,
    Pipeline,
    SequencesName,
    UnitName,
    check_name,
)
from .variant import MAX_VOCAB_SIZE
from .variants import OPTIONS, check_variants, variant_of

__all__ = [
    "AlphabetName",
    "AlphabetOrderName",
    "DropoutStyleName",
    "MarkerName",
    "NormalizerName",
    "SequencesName",
    "SpecialsInTextName",
    "TieBreakName",
    "UnitName",
    "ALPHABETS",
    "ALPHABET_ORDERS",
    "DROPOUT_STYLES",
    "SPECIALS_IN_TEXT",
    "EncodeOptions",
    "TIE_BREAKS",
    "TrainerConfig",
    "Preset",
    "PRESETS",
    "SeedReplay",
    "SEED_REPLAYS",
    "make_config",
    "DEFAULT_MERGES",
    "corpus_config",
    "char_level_choices",
]

# The names a field takes; the stages' own (NormalizerName, SequencesName, UnitName, MarkerName)
# live with Pipeline and are re-exported here.
AlphabetName = Literal["present", "full-bytes"]
AlphabetOrderName = Literal["sorted", "first-seen", "byte"]
TieBreakName = Literal["first-seen", "hf", "subword-nmt", "bytes"]
SpecialsInTextName = Literal["split", "text", "refuse"]
DropoutStyleName = Literal["retry", "once"]

ALPHABETS: dict[str, str] = {
    "present": "the symbols that occur in the corpus",
    "full-bytes": "all 256 bytes, whether they occur or not (byte unit only)",
}
ALPHABET_ORDERS: dict[str, str] = {
    "sorted": "by code point of the display character (HF; for bytes this is GPT-2's order)",
    "first-seen": "in order of first appearance in the corpus (seeds 001 and 004)",
    "byte": "by byte value 0..255 (minbpe, seed 002; byte unit only)",
}
TIE_BREAKS: dict[str, str] = {
    "first-seen": "the pair seen first in the corpus wins (Python's max over a dict: seeds, minbpe)",
    "hf": "the pair with the smallest (left id, right id) wins (HF tokenizers' BpeTrainer)",
    "subword-nmt": "the lexicographically largest pair wins (subword-nmt's max over (count, pair))",
    "bytes": "the pair with the greatest (left bytes, right bytes) wins (Stanford CS336's BPE assignment)",
}

SPECIALS_IN_TEXT: dict[str, str] = {
    "split": "a special token found in the corpus is cut out of it and never merged (as HF tokenizers encode)",
    "text": "trained on as plain text (HF's BpeTrainer does this; it cuts them out only when encoding)",
    "refuse": "a corpus that contains a special token is refused, with where it occurs",
}

DROPOUT_STYLES: dict[str, str] = {
    "retry": "a skipped merge may apply again after the next merge (HF tokenizers)",
    "once": "each rule is tried once, in order; a skipped occurrence stays unmerged by it (seed 004)",
}


@dataclass(frozen=True, slots=True, init=False)
class TrainerConfig:
    """What training decides: the pipeline it trains under, the alphabet, the tie-break, the
    stop rules, the special tokens and the id rule. Defaults are the GPT-2 style byte-level
    setup. Valid once built (ConfigError otherwise).

    Built and read flat as well: the stage names (``unit="char"``, ``config.unit``) are the
    pipeline's, and each training variant's setting is named by the variant
    (``superbpe_transition=t``, ``config.picky``: ``bpe.variants.VARIANTS``, held here in
    ``variant_options``), so presets, the CLI, settings and links name every field in one place.

    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", num_merges=10, vocab_size=None)
    >>> cfg.pipeline.unit, cfg.unit, cfg.replace(marker="eow").pipeline.marker
    ('char', 'char', 'eow')
    >>> TrainerConfig(unit="char", alphabet="full-bytes")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: a full byte alphabet and byte order need the byte unit
    """

    pipeline: Pipeline
    alphabet: AlphabetName
    alphabet_order: AlphabetOrderName
    special_tokens: tuple[str, ...]
    tie_break: TieBreakName
    vocab_size: int | None
    num_merges: int | None
    min_frequency: int
    reuse_ids: bool
    specials_in_text: SpecialsInTextName
    # the variants' settings that are set, in the registry's order: (("picky", 0.1),)
    variant_options: tuple[tuple[str, Any], ...]

    def __init__(
        self,
        *,
        pipeline: Pipeline | None = None,
        normalizer: NormalizerName | None = None,
        pretokenizer: str | None = None,
        pattern: str | None = None,
        sequences: SequencesName | None = None,
        unit: UnitName | None = None,
        marker: MarkerName | None = None,
        alphabet: AlphabetName = "present",
        alphabet_order: AlphabetOrderName = "sorted",
        special_tokens: tuple[str, ...] = (),
        tie_break: TieBreakName = "first-seen",
        vocab_size: int | None = 1000,
        num_merges: int | None = None,
        min_frequency: int = 0,
        reuse_ids: bool = True,
        specials_in_text: SpecialsInTextName = "split",
        variant_options: Iterable[tuple[str, Any]] = (),
        **options: Any,
    ):
        # a stage name given flat (None: not given) is the pipeline's, over ``pipeline`` if both
        stages: dict[str, Any] = {
            k: v
            for k, v in zip(PIPELINE_FIELDS, (normalizer, pretokenizer, pattern, sequences, unit, marker))
            if v is not None
        }
        if pipeline is None:
            pipeline = Pipeline(**stages)
        elif stages:
            pipeline = dataclasses.replace(pipeline, **stages)
        own = {
            "pipeline": pipeline,
            "alphabet": alphabet,
            "alphabet_order": alphabet_order,
            "special_tokens": tuple(special_tokens),
            "tie_break": tie_break,
            "vocab_size": vocab_size,
            "num_merges": num_merges,
            "min_frequency": min_frequency,
            "reuse_ids": reuse_ids,
            "specials_in_text": specials_in_text,
            "variant_options": _variant_options({**dict(variant_options), **options}),
        }
        for name, value in own.items():
            object.__setattr__(self, name, value)
        self._check()

    def __getattr__(self, name: str) -> Any:
        # a variant's setting read flat (config.picky): None when not set
        if name in OPTIONS.values():
            return dict(self.variant_options).get(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- the pipeline's fields, read flat ----------------------------------------------------
    @property
    def normalizer(self) -> NormalizerName:
        return self.pipeline.normalizer

    @property
    def pretokenizer(self) -> str:
        return self.pipeline.pretokenizer

    @property
    def pattern(self) -> str | None:
        return self.pipeline.pattern

    @property
    def sequences(self) -> SequencesName:
        return self.pipeline.sequences

    @property
    def unit(self) -> UnitName:
        return self.pipeline.unit

    @property
    def marker(self) -> MarkerName:
        return self.pipeline.marker

    def _check(self) -> None:
        """ConfigError for unknown values or impossible combinations (the pipeline checked its own)."""
        for name, allowed in (
            ("alphabet", ALPHABETS),
            ("alphabet_order", ALPHABET_ORDERS),
            ("tie_break", TIE_BREAKS),
            ("specials_in_text", SPECIALS_IN_TEXT),
        ):
            check_name(name, getattr(self, name), allowed)
        if self.unit == "char" and (self.alphabet == "full-bytes" or self.alphabet_order == "byte"):
            raise ConfigError("a full byte alphabet and byte order need the byte unit")
        if self.vocab_size is not None and not (1 <= self.vocab_size <= MAX_VOCAB_SIZE):
            raise ConfigError(f"vocab size must be between 1 and {MAX_VOCAB_SIZE:,}")
        if self.num_merges is not None and not (0 <= self.num_merges <= MAX_VOCAB_SIZE):
            raise ConfigError(f"the number of merges must be between 0 and {MAX_VOCAB_SIZE:,}")
        if self.min_frequency < 0:
            raise ConfigError("min frequency cannot be negative")
        if len(set(self.special_tokens)) != len(self.special_tokens) or any(not t for t in self.special_tokens):
            raise ConfigError("special tokens must be distinct and non-empty")
        check_variants(self)

    def tokenizer_pipeline(self, merges: int) -> Pipeline:
        """The pipeline a tokenizer of the first ``merges`` merges encodes with: SuperBPE's past
        its transition (superwords), this config's otherwise.

        >>> cfg = TrainerConfig(superbpe_transition=10)
        >>> cfg.tokenizer_pipeline(10).pretokenizer, cfg.tokenizer_pipeline(11).pretokenizer
        ('gpt2', 'gpt2-superwords')
        """
        return variant_of(self).tokenizer_pipeline(self, merges)

    def replace(self, **changes) -> TrainerConfig:
        """A copy with some fields changed, stage names flat or a whole ``pipeline`` (unknown
        names raise ConfigError).

        >>> TrainerConfig(pretokenizer="regex", pattern="a").replace(pretokenizer="gpt2", pattern=None).pattern is None
        True
        """
        unknown = (
            set(changes)
            - set(PIPELINE_FIELDS)
            - _TRAINING_FIELDS
            - {"pipeline", "variant_options"}
            - set(OPTIONS.values())
        )
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        stages = {k: changes.pop(k) for k in PIPELINE_FIELDS if k in changes}
        pipeline = changes.pop("pipeline", self.pipeline)
        if stages:  # through the dataclass, so that pattern=None clears a pattern
            pipeline = dataclasses.replace(pipeline, **stages)
        return TrainerConfig(
            **{**self.training_dict(), "special_tokens": self.special_tokens, **changes}, pipeline=pipeline
        )

    def training_dict(self) -> dict:
        """The fields training decides beyond the pipeline (trace.json's "training" object).

        >>> list(TrainerConfig().training_dict())[:2]
        ['alphabet', 'alphabet_order']
        """
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name in _TRAINING_FIELDS}
        d["special_tokens"] = list(self.special_tokens)
        # the variants' settings last, flat, and only those set: files without them stay as they were
        return {**d, **dict(self.variant_options)}

    def to_dict(self) -> dict:
        """Flat: the pipeline's fields, then training's (trace.json's "config", share links).

        >>> list(TrainerConfig().to_dict())[:3]
        ['normalizer', 'pretokenizer', 'pattern']
        """
        return {**self.pipeline.to_dict(), **self.training_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> TrainerConfig:
        """From a flat dict (``to_dict``'s).

        >>> TrainerConfig.from_dict({"unit": "char", "top_k": 5}) == TrainerConfig(unit="char")
        True
        """
        # unknown keys are ignored: older traces kept here "top_k" (a recording option) and
        # "unk_token" / "dropout_style" (encoding options, see EncodeOptions.from_dict)
        names = set(PIPELINE_FIELDS) | set(OPTIONS.values()) | _TRAINING_FIELDS
        kwargs = {k: v for k, v in data.items() if k in names}
        if "special_tokens" in kwargs:
            kwargs["special_tokens"] = tuple(kwargs["special_tokens"])
        return cls(**kwargs)


# the fields a config's training dict holds by name (the pipeline's are flat; the variants' are
# their own settings, by name)
_TRAINING_FIELDS = frozenset(f.name for f in dataclasses.fields(TrainerConfig)) - {"pipeline", "variant_options"}


def _variant_options(given: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The variants' settings a config holds: those set, in the registry's order (so that two
    configs asking for the same are equal), a name no variant declares refused as Python
    refuses an unknown keyword.

    >>> _variant_options({"picky": 0.1, "superbpe_transition": None})
    (('picky', 0.1),)
    """
    unknown = set(given) - set(OPTIONS.values())
    if unknown:
        raise TypeError(f"TrainerConfig() got an unexpected keyword argument {sorted(unknown)[0]!r}")
    return tuple((name, given[name]) for name in OPTIONS.values() if given.get(name) is not None)


@dataclass(frozen=True, slots=True)
class EncodeOptions:
    """How a tokenizer encodes, which no training choice depends on: the string shown for a
    symbol it has no id for, which BPE-dropout rule ``encode(dropout=p)`` follows, and
    subword-nmt's ``apply_bpe`` options: ``keep_unknown`` (a character outside the alphabet
    keeps its text, with an id of its own past the vocabulary, instead of the unknown token;
    character level only) and ``glossaries`` (regexes: their matches inside a word are cut out
    and never split, each part of the word then merged on its own). Three rules of HF
    ``tokenizers``' BPE model: ``ignore_merges`` (a piece that is itself a token is that token,
    before any merge), ``fuse_unk`` (neighbouring unknown symbols of a piece are one unknown
    token) and ``drop_unknown`` (a symbol outside the vocabulary is dropped, as HF does when its
    model has no unknown token), and SentencePiece's ``byte_fallback`` (a character outside the
    vocabulary is its UTF-8 bytes, the tokens ``<0x00>`` ... ``<0xFF>``; character level only).
    ``refuse_surrogates``: text holding a lone surrogate (not Unicode text: UTF-8 cannot write
    it) is refused with a sentence, as HF ``tokenizers`` and GPT-2's ``encoder.py`` refuse it;
    otherwise a tokenizer that merges by rank makes it U+FFFD first (tiktoken) and one that
    merges by its merge list encodes its three surrogate-escaped bytes (``surrogatepass``).

    >>> EncodeOptions(glossaries=["USA", "[0-9]+"]).glossaries
    ('USA', '[0-9]+')
    >>> EncodeOptions(glossaries=("(",))
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: glossary 1 ('(') is not a regex: missing ), unterminated subpattern at position 0
    """

    unk_token: str = "<unk>"
    dropout_style: DropoutStyleName = "retry"
    keep_unknown: bool = False
    glossaries: tuple[str, ...] = ()
    ignore_merges: bool = False
    fuse_unk: bool = False
    drop_unknown: bool = False
    byte_fallback: bool = False
    refuse_surrogates: bool = False

    def __post_init__(self) -> None:
        if self.dropout_style not in DROPOUT_STYLES:
            raise ConfigError(
                f"unknown dropout style {self.dropout_style!r}; choose one of {', '.join(DROPOUT_STYLES)}"
            )
        if not isinstance(self.unk_token, str) or not self.unk_token:
            raise ConfigError(f"the unknown token must be a non-empty string, not {self.unk_token!r}")
        object.__setattr__(self, "glossaries", tuple(self.glossaries))
        for n, gloss in enumerate(self.glossaries, 1):
            if not isinstance(gloss, str) or not gloss:
                raise ConfigError(f"glossary {n} must be a non-empty string, not {gloss!r}")
            try:
                re.compile(gloss)
            except re.error as err:
                raise ConfigError(f"glossary {n} ({gloss!r}) is not a regex: {err}") from None

    def to_dict(self) -> dict:
        """The options a trace keeps; subword-nmt's and HF's rules left out when unused (traces
        written before them stay as they were).

        >>> EncodeOptions().to_dict(), EncodeOptions(ignore_merges=True).to_dict()["ignore_merges"]
        ({'unk_token': '<unk>', 'dropout_style': 'retry'}, True)
        """
        data = dataclasses.asdict(self)
        for name in ("keep_unknown", "ignore_merges", "fuse_unk", "drop_unknown", "byte_fallback", "refuse_surrogates"):
            if not data[name]:
                del data[name]
        if self.glossaries:
            data["glossaries"] = list(self.glossaries)
        else:
            del data["glossaries"]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> EncodeOptions:
        """From a trace's "encoding" object (or, in older traces, its "config" object).

        >>> EncodeOptions.from_dict({"dropout_style": "once", "tie_break": "hf"})
        EncodeOptions(unk_token='<unk>', dropout_style='once', keep_unknown=False, glossaries=(), ignore_merges=False, fuse_unk=False, drop_unknown=False, byte_fallback=False, refuse_surrogates=False)
        """
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class Preset(NamedTuple):
    name: str
    seed: str | None
    description: str
    config: TrainerConfig
    encoding: EncodeOptions = EncodeOptions()


_HF_COURSE = TrainerConfig(
    pretokenizer="whitespace",
    unit="char",
    special_tokens=("<|endoftext|>",),
    vocab_size=50,
    specials_in_text="text",  # the notebook trains with HF's BpeTrainer, which reads them as text
)
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "hf-course",
            "000",
            "HF course: split on whitespace, characters, '<|endoftext|>' + sorted alphabet, stop at vocab size",
            _HF_COURSE,
        ),
        Preset(
            "sennrich",
            "001",
            "Sennrich et al. 2016: split on whitespace, characters + a separate '</w>' symbol, fixed number of merges",
            TrainerConfig(
                pretokenizer="whitespace",
                unit="char",
                marker="eow",
                alphabet_order="first-seen",
                vocab_size=None,
                num_merges=15,
            ),
        ),
        Preset(
            "bytes",
            "002",
            "minbpe-style: the whole text as one byte sequence, ids 0-255 then 256+ per merge",
            TrainerConfig(
                pretokenizer="none",
                unit="byte",
                alphabet="full-bytes",
                alphabet_order="byte",
                vocab_size=280,
                reuse_ids=False,
            ),
        ),
        Preset(
            "gpt2",
            "003",
            "GPT-2: its regex pre-tokenizer, byte level (its files write bytes as GPT-2 chars, space = 'Ġ'), '<|endoftext|>' first",
            TrainerConfig(
                pretokenizer="gpt2",
                unit="byte",
                special_tokens=("<|endoftext|>",),
                vocab_size=100,
                specials_in_text="text",
            ),  # as HF's BpeTrainer, like the notebook
        ),
        Preset(
            "suffix-marker",
            "004",
            "Seed 004: collapse whitespace, 'Ġ' appended to every word, characters, until vocab size or no pair is left",
            TrainerConfig(
                normalizer="collapse-whitespace",
                pretokenizer="whitespace",
                unit="char",
                marker="g-suffix",
                alphabet_order="first-seen",
                vocab_size=1000,
            ),
            EncodeOptions(dropout_style="once"),
        ),
        Preset(
            "gpt4",
            None,
            "GPT-4 (cl100k_base) regex, byte level, all 256 bytes in the alphabet",
            TrainerConfig(pretokenizer="cl100k", unit="byte", alphabet="full-bytes", vocab_size=1000),
        ),
    )
}


class SeedReplay(NamedTuple):
    """How a seed notebook trained: its preset, its own corpus (in sample_corpora/seeds) and settings."""

    seed: str
    title: str
    preset: str
    corpus: str
    overrides: dict

    def config(self, **changes) -> TrainerConfig:
        """The notebook's own settings: its preset with its overrides (and any ``changes``).

        >>> SEED_REPLAYS["003"].config().sequences, SEED_REPLAYS["003"].config(vocab_size=50).vocab_size
        ('documents', 50)
        """
        return make_config(self.preset, **{**self.overrides, **changes})


SEED_REPLAYS: dict[str, SeedReplay] = {
    r.seed: r
    for r in (
        SeedReplay(
            "000",
            "HF course BPE on ten Frankenstein sentences",
            "hf-course",
            "seeds/seed000_hf_course_frankenstein.txt",
            {},
        ),
        SeedReplay(
            "001", "A simple walkthrough: Sennrich-style BPE with </w>", "sennrich", "seeds/seed001_ex_corpus.txt", {}
        ),
        SeedReplay(
            "002", "Byte-level BPE on the 'I'm Feeling Lucky' paragraph", "bytes", "seeds/seed002_feeling_lucky.txt", {}
        ),
        SeedReplay(
            "003",
            "HF course BPE with GPT-2's byte-level pre-tokenizer",
            "gpt2",
            "seeds/seed003_hf_course.txt",
            {"sequences": "documents"},
        ),
        SeedReplay(
            "004", "BPE with a 'Ġ' suffix marker and BPE-dropout", "suffix-marker", "seeds/seed004_bpe_dropout.txt", {}
        ),
    )
}


def make_config(preset: str | None = None, **overrides) -> TrainerConfig:
    """A validated config: a preset's, with some dimensions overridden.

    >>> make_config("sennrich", num_merges=10).marker
    'eow'
    >>> make_config("nope")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: unknown preset 'nope'; choose one of hf-course, sennrich, bytes, gpt2, suffix-marker, gpt4
    """
    if preset is None:
        base = TrainerConfig()
    elif preset in PRESETS:
        base = PRESETS[preset].config
    else:
        raise ConfigError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    return base.replace(**overrides)


DEFAULT_MERGES = 1_000


def corpus_config(preset: str, *, merges: int = DEFAULT_MERGES, **overrides) -> TrainerConfig:
    """A preset sized for any corpus instead of its seed notebook's toy one: its stop rule
    becomes a budget of ``merges`` (training also stops sooner when the corpus runs out of
    pairs), and byte level starts from all 256 bytes, so that every string stays encodable.
    This is what a preset name means in the app and the CLI alike (``train --preset``); a seed
    replay (``SeedReplay.config``, ``train --replay``) uses the notebook's own settings instead.

    >>> cfg = corpus_config("hf-course")
    >>> cfg.num_merges, cfg.vocab_size, cfg.unit
    (1000, None, 'char')
    >>> corpus_config("gpt2", merges=50).alphabet, make_config("gpt2").alphabet
    ('full-bytes', 'present')
    """
    base = make_config(preset)
    sized: dict[str, object] = {"num_merges": merges, "vocab_size": None}
    if base.unit == "byte":
        sized["alphabet"] = "full-bytes"
    return base.replace(**{**sized, **overrides})


def char_level_choices(choices: dict[str, Any]) -> dict[str, Any]:
    """Settings moved to character level: the byte-only choices among them (all 256 bytes, byte
    order) become the char-level ones, the rest stay. The app's advanced settings and the CLI's
    ``--unit char`` take a byte-level preset to characters through this one rule.

    >>> char_level_choices({"alphabet": "full-bytes", "alphabet_order": "byte", "tie_break": "hf"})
    {'alphabet': 'present', 'alphabet_order': 'sorted', 'tie_break': 'hf'}
    >>> char_level_choices({"alphabet_order": "first-seen"})
    {'alphabet_order': 'first-seen'}
    """
    byte_only = {"alphabet": ("full-bytes", "present"), "alphabet_order": ("byte", "sorted")}
    return {
        name: byte_only[name][1] if name in byte_only and value == byte_only[name][0] else value
        for name, value in choices.items()
    }
