"""The pipeline up to training: texts -> normalized -> sequences -> pieces -> word counts.

``inspect_str`` shows every stage for one text (what the corpus page draws); ``count_words``
is the fast path the trainer uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from ..errors import CorpusError
from .markers import apply_marker
from .normalizers import normalize_str
from .pretokenizers import Piece, iter_piece_texts, pre_tokenize_str, special_tokens_re, split_sequences
from .units import base_symbols

__all__ = [
    "InspectedPiece",
    "PipelineConfig",
    "count_words",
    "inspect_str",
    "word_symbols",
    "iter_sequences",
    "split_specials",
]


class PipelineConfig(Protocol):
    """The settings the stages read, by name in their registries (``TrainerConfig`` has them;
    the stages depend on nothing of the BPE core)."""

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


def word_symbols(word: str, config: PipelineConfig) -> list[str]:
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
