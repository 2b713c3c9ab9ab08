"""The fewest tokens: each piece split into as few tokens of the vocabulary as it allows.

BPE applies its merges greedily, lowest rank first, so it need not find the split with the
fewest tokens (Schmidt et al. 2024, "Tokenization Is More Than Compression").
``shortest_segmentation`` keeps everything else the tokenizer does (normalizer, pre-tokenizer,
special-token text as plain text, as ``encode`` without ``allow_special``) and cuts each piece
by a shortest path over its base symbols: bytes for a byte-level tokenizer (a token may hold
part of a character), characters with the word marker for a character-level one. An edge is a
run of symbols whose joined display string is a token (special tokens excluded); a symbol
outside the alphabet is its own edge, the unknown token, and no token crosses it.

Ties: among the splits with the fewest tokens, the one whose first token is longest, then its
second, and so on (the longest first token that still allows the fewest). Data shapes::

    symbols   ["Ġ", "h", "Ã", "©"]         the piece's base symbols, as the tokenizer makes them
    offsets   [0, 1, 2, 3, 4]               where each symbol starts in their joined string
    fewest[i] the fewest tokens of symbols[i:]; fewest[n] = 0
    cut[i]    (end j, token id) of the first token of that split of symbols[i:]
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from itertools import accumulate, chain

from ..bpe.tokenizer import PieceCache, Tokenizer
from ..stages.markers import apply_marker
from ..stages.units import base_symbols

__all__ = ["OptimalityGap", "PieceGap", "optimality_gap", "piece_gaps", "shortest_count", "shortest_segmentation"]


class _Shortest:
    """One tokenizer's shortest splits: its token strings (special tokens left out), the longest
    of them in characters (no token is longer, so no edge either), and a cache piece -> ids."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        n_special = tokenizer.vocab.n_special
        tokens = tokenizer.vocab.tokens
        # a text made twice (reused ids) keeps its first id, as the vocabulary's own look-up;
        # PickyBPE's removed tokens are no longer in the vocabulary
        removed = tokenizer.vocab.removed
        self.ids: dict[str, int] = {}
        for i in range(n_special, len(tokens)):
            if i not in removed:
                self.ids.setdefault(tokens[i], i)
        self.longest = max(map(len, self.ids), default=1)
        self.cache = PieceCache(self.split)

    def symbols(self, piece: str) -> list[str]:
        unit = self.tokenizer.pipeline.unit
        if unit == "byte":
            return base_symbols(piece, unit)
        return apply_marker(base_symbols(piece, unit), self.tokenizer.pipeline.marker)

    def split(self, piece: str) -> tuple[int, ...]:
        symbols = self.symbols(piece)
        base = self.tokenizer.initial_ids(piece)  # aligned with symbols; unknown ones are unk_id
        unk, ids, longest = self.tokenizer.unk_id, self.ids, self.longest
        joined = "".join(symbols)
        offsets = [0, *accumulate(map(len, symbols))]
        n = len(symbols)
        fewest = [0] * (n + 1)
        cut: list[tuple[int, int]] = [(0, 0)] * n
        for i in range(n - 1, -1, -1):
            best, best_cut = fewest[i + 1] + 1, (i + 1, base[i])
            if base[i] != unk:
                start = offsets[i]
                for j in range(i + 2, n + 1):
                    if base[j - 1] == unk or offsets[j] - start > longest:
                        break
                    token = ids.get(joined[start : offsets[j]])
                    # <=: of equally few, the longer first token wins (the rule of ties)
                    if token is not None and fewest[j] + 1 <= best:
                        best, best_cut = fewest[j] + 1, (j, token)
            fewest[i], cut[i] = best, best_cut
        out = []
        i = 0
        while i < n:
            i, token = cut[i]
            out.append(token)
        return tuple(out)


_SEGMENTERS: weakref.WeakKeyDictionary[Tokenizer, _Shortest] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _segmenter(tokenizer: Tokenizer) -> _Shortest:
    # built once per tokenizer (cl100k_base: a dict of 100k strings), shared by the page's threads
    with _LOCK:
        found = _SEGMENTERS.get(tokenizer)
        if found is None:
            found = _SEGMENTERS[tokenizer] = _Shortest(tokenizer)
        return found


def shortest_segmentation(tokenizer: Tokenizer, text: str) -> list[int]:
    """Ids of ``text`` with each of the tokenizer's pieces cut into the fewest tokens.

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char")
    >>> tok = Tokenizer(config=cfg, alphabet=["a", "b", "c"], merges=[(1, 2), (0, 1), (4, 2)])
    >>> tok.tokens(tok.encode("abc")), tok.tokens(shortest_segmentation(tok, "abc"))
    (['a', 'bc'], ['abc'])
    >>> tok.tokens(shortest_segmentation(tok, "abcx ab"))
    ['abc', '<unk>', 'ab']
    """
    cache = _segmenter(tokenizer).cache
    return list(chain.from_iterable(map(cache.__getitem__, tokenizer.piece_texts(text))))


def shortest_count(tokenizer: Tokenizer, text: str) -> int:
    """``len(shortest_segmentation(tokenizer, text))``, without the list.

    >>> from explorer import load_pretrained
    >>> shortest_count(load_pretrained("gpt2"), "Hello world")
    2
    """
    cache = _segmenter(tokenizer).cache
    return sum(map(len, map(cache.__getitem__, tokenizer.piece_texts(text))))


@dataclass(frozen=True)
class PieceGap:
    """One piece: BPE's ids and the fewest; ``gap`` is the tokens BPE spends beyond them."""

    text: str
    bpe: tuple[int, ...]
    shortest: tuple[int, ...]

    @property
    def gap(self) -> int:
        return len(self.bpe) - len(self.shortest)


def piece_gaps(tokenizer: Tokenizer, text: str) -> list[PieceGap]:
    """Each piece of the text, in order, with BPE's split and the shortest (their ids joined are
    ``encode(text)`` and ``shortest_segmentation(tokenizer, text)``).

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char")
    >>> tok = Tokenizer(config=cfg, alphabet=["a", "b", "c"], merges=[(1, 2), (0, 1), (4, 2)])
    >>> [(g.text, g.bpe, g.shortest, g.gap) for g in piece_gaps(tok, "abc ab")]
    [('abc', (0, 3), (5,), 1), ('ab', (4,), (4,), 0)]
    """
    short = _segmenter(tokenizer).cache
    return [PieceGap(piece, tokenizer.encode_piece(piece), short[piece]) for piece in tokenizer.piece_texts(text)]


@dataclass(frozen=True)
class OptimalityGap:
    """A text's optimality gap: BPE's tokens, the fewest, and the pieces that differ."""

    tokens: int
    shortest_tokens: int
    pieces: int
    pieces_differing: int

    @property
    def gap(self) -> int:
        return self.tokens - self.shortest_tokens

    @property
    def share(self) -> float | None:
        """The gap over BPE's tokens: the share of them a shortest split saves."""
        return self.gap / self.tokens if self.tokens else None


def optimality_gap(tokenizer: Tokenizer, text: str) -> OptimalityGap:
    """BPE's tokens against the fewest over a whole text.

    >>> from explorer import load_pretrained
    >>> optimality_gap(load_pretrained("gpt2"), "Hello world")
    OptimalityGap(tokens=2, shortest_tokens=2, pieces=2, pieces_differing=0)
    """
    gaps = piece_gaps(tokenizer, text)
    return OptimalityGap(
        tokens=sum(len(g.bpe) for g in gaps),
        shortest_tokens=sum(len(g.shortest) for g in gaps),
        pieces=len(gaps),
        pieces_differing=sum(g.gap > 0 for g in gaps),
    )
