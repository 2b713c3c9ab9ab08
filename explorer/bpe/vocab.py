"""Vocabularies are derived, never stored: special tokens, then the alphabet, then one entry per
merge. This module holds the two rules both the trainer and the tokenizer follow.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import FormatError
from ..stages.units import UNICODE_TO_BYTE, byte_alphabet
from .config import TrainerConfig

__all__ = ["Vocab", "build_alphabet", "hf_alphabet_ranks"]

# Pairs of token ids are packed into one int (left << PAIR_SHIFT | right): cheaper to hash and
# compare than tuples, and the packed ints order exactly as (left, right) tuples do.
PAIR_SHIFT = 21
PAIR_MASK = (1 << PAIR_SHIFT) - 1


class Vocab:
    """Token display strings by id, grown one merge at a time.

    >>> v = Vocab(["<s>"], ["a", "b"])
    >>> v.add_merge(1, 2), v.add_merge(1, 2), v.tokens
    ((3, False), (3, True), ['<s>', 'a', 'b', 'ab'])
    >>> Vocab([], ["a"], reuse_ids=False).add_merge(0, 0)
    (1, False)
    """

    __slots__ = ("tokens", "ids", "reuse_ids", "n_special")

    def __init__(self, special_tokens: Iterable[str], alphabet: Iterable[str], *, reuse_ids: bool = True):
        self.tokens: list[str] = []
        self.ids: dict[str, int] = {}
        self.reuse_ids = reuse_ids
        for tok in special_tokens:
            self._append(tok)
        self.n_special = len(self.tokens)
        for sym in alphabet:
            if sym not in self.ids:
                self._append(sym)

    def _append(self, tok: str) -> int:
        new = len(self.tokens)
        self.tokens.append(tok)
        self.ids.setdefault(tok, new)
        return new

    def add_merge(self, left: int, right: int) -> tuple[int, bool]:
        """The id of ``left + right`` and whether an existing token's id was reused (HF rule)."""
        text = self.tokens[left] + self.tokens[right]
        if self.reuse_ids and text in self.ids:
            return self.ids[text], True
        return self._append(text), False

    def add_merges(self, merges: Iterable[tuple[int, int]]) -> list[int]:
        """``add_merge`` for each pair in turn (one loop for a whole merge list, the tokenizer's
        and a table's 200,000): the id each makes. A pair naming an id not made yet raises
        FormatError (a merge list read from a file that is out of order).

        >>> v = Vocab([], ["a", "b"])
        >>> v.add_merges([(0, 1), (2, 2), (0, 1)]), v.tokens
        ([2, 3, 2], ['a', 'b', 'ab', 'abab'])
        >>> v.add_merges([(0, 9)])
        Traceback (most recent call last):
        ...
        explorer.errors.FormatError: merge 0 refers to an id that does not exist yet: (0, 9)
        """
        merges = list(merges)
        made = self._add_new(merges)
        if made is not None:
            return made
        tokens, made = self.tokens, []
        setdefault, append, reuse = self.ids.setdefault, tokens.append, self.reuse_ids
        n = len(tokens)
        for a, b in merges:
            if not (0 <= a < n and 0 <= b < n):
                raise FormatError(f"merge {len(made)} refers to an id that does not exist yet: {(a, b)}")
            text = tokens[a] + tokens[b]
            old = setdefault(text, n)
            if old == n or not reuse:
                append(text)
                made.append(n)
                n += 1
            else:
                made.append(old)
        return made

    def _add_new(self, merges: list[tuple[int, int]]) -> list[int] | None:
        """``add_merges`` when every merge makes a new token (a rank table, most trained
        tokenizers): the tokens in one tight loop, then the ids in C. None, and nothing added,
        when a merge refers to an id not made yet or some token is made twice or is already
        there (the careful loop then says which).

        >>> v = Vocab([], ["a", "b"])
        >>> v._add_new([(0, 1), (2, 2)]), v._add_new([(0, 1)]), v.tokens
        ([2, 3], None, ['a', 'b', 'ab', 'abab'])
        """
        tokens, ids = self.tokens, self.ids
        start = len(tokens)
        append = tokens.append
        try:
            for a, b in merges:
                if a < 0 or b < 0:  # would index from the end; an id not made yet is past it
                    raise IndexError
                append(tokens[a] + tokens[b])
        except IndexError:
            del tokens[start:]
            return None
        before = ids.copy()
        made = list(range(start, len(tokens)))
        ids.update(zip(tokens[start:], made))
        if len(ids) < len(before) + len(made):  # a token made twice, or one that was there
            del tokens[start:]
            ids.clear()
            ids.update(before)
            return None
        return made

    def __len__(self) -> int:
        return len(self.tokens)


def build_alphabet(symbols_in_order: Iterable[str], config: TrainerConfig) -> list[str]:
    """The base symbols in id order, from the symbols as they first appear in the corpus.

    >>> build_alphabet(["l", "o", "w", "e"], TrainerConfig(unit="char"))
    ['e', 'l', 'o', 'w']
    >>> build_alphabet(["l", "o", "w", "e"], TrainerConfig(unit="char", alphabet_order="first-seen"))
    ['l', 'o', 'w', 'e']
    >>> a = build_alphabet(["Ġ"], TrainerConfig(alphabet="full-bytes", alphabet_order="byte")); a[32], len(a)
    ('Ġ', 256)
    """
    seen = list(dict.fromkeys(symbols_in_order))
    if config.alphabet == "full-bytes":
        present = set(seen)
        seen += [c for c in byte_alphabet() if c not in present]
    if config.alphabet_order == "sorted":
        return sorted(seen)
    if config.alphabet_order == "byte":
        return sorted(seen, key=lambda c: UNICODE_TO_BYTE.get(c, 256 + ord(c[0])))
    return seen


def hf_alphabet_ranks(alphabet: list[str]) -> dict[str, int]:
    """Where HF ``tokenizers`` would put each alphabet symbol: sorted by code point.

    >>> hf_alphabet_ranks(["b", "a", "Ġ"])
    {'a': 0, 'b': 1, 'Ġ': 2}
    """
    return {sym: i for i, sym in enumerate(sorted(alphabet))}
