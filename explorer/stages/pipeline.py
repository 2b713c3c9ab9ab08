"""The pipeline up to training: texts -> normalized -> sequences -> pieces -> word counts.

``Pipeline`` names the stages that turn text into base symbols (one entry of each stage
registry); ``inspect_str`` shows every stage for one text (what the corpus page draws);
``count_words`` is the fast path the trainer uses.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple, Protocol

from ..errors import ConfigError, CorpusError
from .markers import MARKERS, apply_marker
from .normalizers import NORMALIZERS, normalize_str
from .pretokenizers import (
    PRETOKENIZERS,
    SEQUENCE_MODES,
    Piece,
    compile_pattern,
    iter_piece_texts,
    pre_tokenize_str,
    special_tokens_re,
    split_sequences,
)
from .units import UNITS, base_symbols

__all__ = [
    "MarkerName",
    "NormalizerName",
    "SequencesName",
    "UnitName",
    "PIPELINE_FIELDS",
    "Pipeline",
    "InspectedPiece",
    "PipelineConfig",
    "count_words",
    "inspect_str",
    "word_symbols",
    "iter_sequences",
    "split_specials",
]


# The names a stage field takes. The stages' names are their registries' entries (a test checks
# that they agree); the pre-tokenizer is a plain str, since a regex pre-tokenizer is added with one
# registry entry (explorer.stages.pretokenizers.PRETOKENIZER_REGISTRY) and no type changes.
NormalizerName = Literal[
    "none", "nfc", "nfkc", "lowercase", "collapse-whitespace", "strip", "sp-prepend", "sp-spaces", "metaspace"
]
SequencesName = Literal["text", "lines", "documents"]
UnitName = Literal["char", "byte"]
MarkerName = Literal["none", "eow", "eow-glued", "g-suffix", "sp-prefix"]


def check_name(field: str, value: object, allowed: Collection[str]) -> None:
    """ConfigError unless ``value`` is one of a registry's names (every config field's message).

    >>> check_name("tie_break", "x", ["hf", "first-seen"])
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: unknown tie break 'x'; choose one of hf, first-seen
    """
    if value not in allowed:
        raise ConfigError(f"unknown {field.replace('_', ' ')} {value!r}; choose one of {', '.join(allowed)}")


@dataclass(frozen=True, slots=True)
class Pipeline:
    """What turns text into base symbols: normalizer -> sequences -> pre-tokenizer -> unit ->
    word marker, each a name in its stage registry. Valid once built (ConfigError otherwise).

    >>> Pipeline(pretokenizer="whitespace", unit="char", marker="eow").marker
    'eow'
    >>> Pipeline(unit="byte", marker="eow")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: word markers are for character-level BPE; byte-level BPE keeps the space inside the next piece instead (choose marker 'none' or unit 'char')
    """

    normalizer: NormalizerName = "none"
    pretokenizer: str = "gpt2"  # a name in PRETOKENIZER_REGISTRY, which is open
    pattern: str | None = None
    sequences: SequencesName = "text"
    unit: UnitName = "byte"
    marker: MarkerName = "none"

    def __post_init__(self) -> None:
        for name, allowed in (
            ("normalizer", NORMALIZERS),
            ("pretokenizer", PRETOKENIZERS),
            ("sequences", SEQUENCE_MODES),
            ("unit", UNITS),
            ("marker", MARKERS),
        ):
            check_name(name, getattr(self, name), allowed)
        if self.pretokenizer == "regex":
            compile_pattern(self.pattern or "")
        elif self.pattern is not None:
            raise ConfigError(
                f"a custom regex is used only by the 'regex' pre-tokenizer, not by {self.pretokenizer!r} "
                "(CLI: add --pretokenizer regex)"
            )
        if self.unit == "byte" and self.marker != "none":
            raise ConfigError(
                "word markers are for character-level BPE; byte-level BPE keeps the space inside the "
                "next piece instead (choose marker 'none' or unit 'char')"
            )

    def to_dict(self) -> dict:
        """The stages by name (trace.json's "pipeline" object).

        >>> Pipeline(unit="char").to_dict()["unit"]
        'char'
        """
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Pipeline:
        """From a dict holding the stage fields (others, such as a flat config's training
        fields, are ignored).

        >>> Pipeline.from_dict({"unit": "char", "tie_break": "hf"}) == Pipeline(unit="char")
        True
        """
        return cls(**{k: data[k] for k in PIPELINE_FIELDS if k in data})


PIPELINE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Pipeline))


class PipelineConfig(Protocol):
    """The settings the stages read, by name in their registries: a ``Pipeline``'s and the
    special tokens (``TrainerConfig`` has them all; the stages depend on nothing of the BPE core)."""

    @property
    def normalizer(self) -> str: ...
    @property
    def sequences(self) -> str: ...
    @property
    def pretokenizer(self) -> str: ...
    @property
    def pattern(self) -> str | None: ...
    @property
    def unit(self) -> str: ...
    @property
    def marker(self) -> str: ...
    @property
    def special_tokens(self) -> tuple[str, ...]: ...
    @property
    def specials_in_text(self) -> str: ...


class InspectedPiece(NamedTuple):
    """A piece of one sequence with its offsets and the base symbols BPE starts from."""

    sequence: int
    text: str
    start: int
    end: int
    symbols: tuple[str, ...]


def split_specials(text: str, config: PipelineConfig) -> list[str]:
    """The text around the special tokens it contains: with ``specials_in_text="split"`` they
    are cut out (before normalization, as HF does when it encodes: a special token is never
    merged into a neighbour), with ``"text"`` they stay plain text, with ``"refuse"`` a text
    holding one is a CorpusError.

    >>> from explorer import TrainerConfig
    >>> split_specials("a<s>b<s>", TrainerConfig(special_tokens=("<s>",)))
    ['a', 'b']
    >>> split_specials("a<s>b", TrainerConfig(special_tokens=("<s>",), specials_in_text="refuse"))
    Traceback (most recent call last):
    ...
    explorer.errors.CorpusError: the corpus contains the special token '<s>' (first at character 1): remove it, or let special tokens be cut out of the text
    """
    if not config.special_tokens or config.specials_in_text == "text":
        return [text]
    specials = special_tokens_re(config.special_tokens)
    if config.specials_in_text == "refuse":
        found = specials.search(text)
        if found is not None:
            raise CorpusError(
                f"the corpus contains the special token {found.group()!r} (first at character "
                f"{found.start():,}): remove it, or let special tokens be cut out of the text"
            )
        return [text]
    return [part for part in specials.split(text) if part]


def iter_sequences(texts: str | Iterable[str], config: PipelineConfig) -> Iterable[str]:
    """Normalized sequences of one text or of several (each text is cut on its own, and at
    every special token it holds, see ``split_specials``).

    >>> from explorer import TrainerConfig
    >>> list(iter_sequences(["a\\nb", "c"], TrainerConfig(sequences="documents")))
    ['a', 'b', 'c']
    """
    if isinstance(texts, str):
        texts = [texts]
    for text in texts:
        for part in split_specials(text, config):
            yield from split_sequences(normalize_str(part, normalizer=config.normalizer), mode=config.sequences)


def word_symbols(word: str, config: PipelineConfig | Pipeline) -> list[str]:
    """A piece's base symbols with the word marker written in.

    >>> from explorer import TrainerConfig
    >>> word_symbols("low", TrainerConfig(unit="char", marker="eow"))
    ['l', 'o', 'w', '</w>']
    """
    return apply_marker(base_symbols(word, config.unit), config.marker)


def count_words(texts: str | Iterable[str], config: PipelineConfig) -> dict[str, int]:
    """Piece -> frequency, in order of first appearance (the trainer's input).

    >>> from explorer import TrainerConfig
    >>> count_words("low low lower", TrainerConfig(pretokenizer="whitespace", unit="char"))
    {'low': 2, 'lower': 1}
    """
    counts: Counter[str] = Counter()
    for pieces in iter_piece_texts(
        iter_sequences(texts, config), pretokenizer=config.pretokenizer, pattern=config.pattern
    ):
        counts.update(pieces)
    return dict(counts)


def inspect_str(text: str, config: PipelineConfig, *, max_pieces: int | None = None) -> list[InspectedPiece]:
    """Every piece of a text after normalizer, sequences and pre-tokenizer, with offsets into
    its normalized sequence and its base symbols.

    >>> from explorer import TrainerConfig
    >>> [(p.text, p.symbols) for p in inspect_str("Hi there", TrainerConfig())]
    [('Hi', ('H', 'i')), (' there', ('Ġ', 't', 'h', 'e', 'r', 'e'))]
    """
    out: list[InspectedPiece] = []
    for i, seq in enumerate(iter_sequences(text, config)):
        piece: Piece
        for piece in pre_tokenize_str(seq, pretokenizer=config.pretokenizer, pattern=config.pattern):
            out.append(InspectedPiece(i, piece.text, piece.start, piece.end, tuple(word_symbols(piece.text, config))))
            if max_pieces is not None and len(out) >= max_pieces:
                return out
    return out
