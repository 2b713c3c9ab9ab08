"""The pipeline up to training: texts -> normalized -> sequences -> pieces -> word counts.

``inspect_str`` shows every stage for one text (what the corpus page draws); ``count_words``
is the fast path the trainer uses.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from .config import TrainerConfig
from .markers import apply_marker
from .normalizers import normalize_str
from .pretokenizers import Piece, iter_piece_texts, pre_tokenize_str, split_sequences
from .units import base_symbols

__all__ = ["InspectedPiece", "count_words", "inspect_str", "word_symbols", "iter_sequences"]


class InspectedPiece(NamedTuple):
    """A piece of one sequence with its offsets and the base symbols BPE starts from."""

    sequence: int
    text: str
    start: int
    end: int
    symbols: tuple[str, ...]


def iter_sequences(texts: str | Iterable[str], config: TrainerConfig) -> Iterable[str]:
    """Normalized sequences of one text or of several (each text is cut on its own).

    >>> list(iter_sequences(["a\\nb", "c"], TrainerConfig(sequences="documents")))
    ['a', 'b', 'c']
    """
    if isinstance(texts, str):
        texts = [texts]
    for text in texts:
        yield from split_sequences(normalize_str(text, normalizer=config.normalizer), mode=config.sequences)


def word_symbols(word: str, config: TrainerConfig) -> list[str]:
    """A piece's base symbols with the word marker written in.

    >>> word_symbols("low", TrainerConfig(unit="char", marker="eow"))
    ['l', 'o', 'w', '</w>']
    """
    return apply_marker(base_symbols(word, config.unit), config.marker)


def count_words(texts: str | Iterable[str], config: TrainerConfig) -> dict[str, int]:
    """Piece -> frequency, in order of first appearance (the trainer's input).

    >>> count_words("low low lower", TrainerConfig(pretokenizer="whitespace", unit="char"))
    {'low': 2, 'lower': 1}
    """
    counts: Counter[str] = Counter()
    for pieces in iter_piece_texts(iter_sequences(texts, config), pretokenizer=config.pretokenizer, pattern=config.pattern):
        counts.update(pieces)
    return dict(counts)


def inspect_str(text: str, config: TrainerConfig, *, max_pieces: int | None = None) -> list[InspectedPiece]:
    """Every piece of a text after normalizer, sequences and pre-tokenizer, with offsets into
    its normalized sequence and its base symbols.

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
