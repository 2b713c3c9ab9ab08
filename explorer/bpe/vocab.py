"""Vocabularies are derived, never stored: special tokens, then the alphabet, then one entry per
merge. This module holds the two rules both the trainer and the tokenizer follow, and ``Vocab``,
the value a tokenizer is made of (its merges are the only source of truth for its tokens). A file
that numbers the same tokens otherwise (SentencePiece's order) keeps its numbering beside the
derived ids, never in place of them (``file_ids.FileIds``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import cast

from ..errors import ConfigError, FormatError
from ..stages.units import UNICODE_TO_BYTE, byte_alphabet
from .config import TrainerConfig
from .picky import removal_parts

__all__ = ["Vocab", "VocabBuilder", "build_alphabet", "hf_alphabet_ranks", "int_pairs"]


class VocabBuilder:
    """Token display strings by id, grown one merge at a time.

    >>> v = VocabBuilder(["<s>"], ["a", "b"])
    >>> v.add_merge(1, 2), v.add_merge(1, 2), v.tokens
    ((3, False), (3, True), ['<s>', 'a', 'b', 'ab'])
    >>> VocabBuilder([], ["a"], reuse_ids=False).add_merge(0, 0)
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

        >>> v = VocabBuilder([], ["a", "b"])
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

        >>> v = VocabBuilder([], ["a", "b"])
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


@dataclass(frozen=True, eq=False)
class Vocab(Sequence[str]):
    """A vocabulary as a value: special tokens (the first ids), the alphabet, the merges (pairs of
    ids, in rank order) and the id rule (``reuse_ids``: a merge that makes an existing token's text
    takes its id, HF's rule). Its tokens and ids are derived from these when it is built (a merge
    naming an id not made yet is a FormatError); it reads as its tokens by id.

    >>> v = Vocab(special_tokens=("<s>",), alphabet=("a", "b"), merges=((1, 2), (3, 1)))
    >>> v.tokens, len(v), v[3], v.id("ab"), v.merged_ids
    (('<s>', 'a', 'b', 'ab', 'aba'), 5, 'ab', 3, (3, 4))
    >>> Vocab(alphabet=("a",), merges=((0, 0), (0, 0)), reuse_ids=False).tokens
    ('a', 'aa', 'aa')
    """

    special_tokens: tuple[str, ...] = ()
    alphabet: tuple[str, ...] = ()
    merges: tuple[tuple[int, int], ...] = ()
    reuse_ids: bool = True
    # PickyBPE's removals, ((after, id), ...): id removed right after merge number ``after`` (1-based)
    removals: tuple[tuple[int, int], ...] = ()
    # derived in __post_init__, never compared: tokens by id, token -> first id, each merge's id
    tokens: tuple[str, ...] = field(init=False, repr=False, compare=False)
    ids: dict[str, int] = field(init=False, repr=False, compare=False)
    merged_ids: tuple[int, ...] = field(init=False, repr=False, compare=False)
    n_special: int = field(init=False, repr=False, compare=False)
    n_base: int = field(init=False, repr=False, compare=False)  # ids before the merges'
    # each removal's parts (picky.removal_parts), and the ids removed for good (not made again)
    removal_parts: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    removed: frozenset[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.special_tokens)) != len(self.special_tokens) or not all(self.special_tokens):
            raise ConfigError("special tokens must be distinct and non-empty")
        merges = int_pairs(self.merges)
        built = VocabBuilder(self.special_tokens, self.alphabet, reuse_ids=self.reuse_ids)
        n_base = len(built)
        merged_ids = tuple(built.add_merges(merges))
        removals = int_pairs(self.removals)
        parts = removal_parts(n_base, merges, merged_ids, removals) if removals else ()
        derived = {
            "n_base": n_base,
            "special_tokens": tuple(self.special_tokens),
            "alphabet": tuple(self.alphabet),
            "merges": merges,
            "merged_ids": merged_ids,
            "tokens": tuple(built.tokens),
            "ids": built.ids,
            "n_special": built.n_special,
            "removals": removals,
            "removal_parts": parts,
            "removed": _removed_for_good(merged_ids, removals),
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of_new_tokens(
        cls,
        special_tokens: tuple[str, ...],
        alphabet: tuple[str, ...],
        merges: tuple[tuple[int, int], ...],
        made: Sequence[str],
        *,
        reuse_ids: bool = True,
    ) -> Vocab:
        """The ``Vocab`` of these merges when the caller has checked that merge k makes the new
        token ``made[k]`` of parts made before it (a file whose ids run: special tokens, the
        alphabet, one new token per merge): its tokens taken as they are, not made again.

        >>> v = Vocab.of_new_tokens(("<s>",), ("a", "b"), ((1, 2), (3, 1)), ["ab", "aba"])
        >>> v == Vocab(("<s>",), ("a", "b"), ((1, 2), (3, 1))), v.tokens, v.ids["aba"], v.merged_ids
        (True, ('<s>', 'a', 'b', 'ab', 'aba'), 4, (3, 4))
        """
        if len(set(special_tokens)) != len(special_tokens) or not all(special_tokens):
            raise ConfigError("special tokens must be distinct and non-empty")
        tokens = (*special_tokens, *alphabet, *made)
        n_base = len(special_tokens) + len(alphabet)
        vocab = object.__new__(cls)
        derived = {
            "special_tokens": special_tokens,
            "alphabet": alphabet,
            "merges": merges,
            "reuse_ids": reuse_ids,
            "removals": (),
            "tokens": tokens,
            "ids": dict(zip(tokens, range(len(tokens)))),
            "merged_ids": tuple(range(n_base, len(tokens))),
            "n_special": len(special_tokens),
            "n_base": n_base,
            "removal_parts": (),
            "removed": frozenset(),
        }
        for name, value in derived.items():
            object.__setattr__(vocab, name, value)
        return vocab

    def __len__(self) -> int:
        return len(self.tokens)

    def __getitem__(self, i):  # an id, or a slice of ids
        return self.tokens[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tokens)

    def __contains__(self, token: object) -> bool:
        return token in self.ids

    def _key(self) -> tuple:
        return (self.special_tokens, self.alphabet, self.merges, self.reuse_ids, self.removals)

    def __eq__(self, other: object) -> bool:
        # by value, whatever built it (a rank table's, whose merges are derived, equals the Vocab of
        # those merges)
        return isinstance(other, Vocab) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def n_live(self) -> int:
        """How many tokens the vocabulary has once PickyBPE's removed ones are left out.

        >>> Vocab(alphabet=("a", "b"), merges=((0, 1), (2, 0)), removals=((2, 2),)).n_live
        3
        """
        return len(self.tokens) - len(self.removed)

    def id(self, token: str) -> int | None:
        """The id of a token (the first, when ids are not reused), else None."""
        return self.ids.get(token)

    def truncate(self, k: int) -> Vocab:
        """The vocabulary after its first k merges (and the removals that followed them).

        >>> Vocab(alphabet=("a",), merges=((0, 0), (1, 1))).truncate(1).tokens
        ('a', 'aa')
        >>> v = Vocab(alphabet=("a", "b"), merges=((0, 1), (2, 0), (0, 0)), removals=((2, 2),))
        >>> v.truncate(1).removals, v.truncate(2).removed
        ((), frozenset({2}))
        """
        k = max(0, k)
        removals = tuple(r for r in self.removals if r[0] <= k)
        return Vocab(self.special_tokens, self.alphabet, self.merges[:k], self.reuse_ids, removals)

    def to_dict(self) -> dict:
        """trace.json's "vocab" object (the merges are its top-level "merges" list).

        >>> Vocab(("<s>",), ("a",)).to_dict()
        {'special_tokens': ['<s>'], 'alphabet': ['a'], 'reuse_ids': True}
        """
        return {
            "special_tokens": list(self.special_tokens),
            "alphabet": list(self.alphabet),
            "reuse_ids": self.reuse_ids,
        }


def _removed_for_good(merged_ids: Sequence[int], removals: Sequence[tuple[int, int]]) -> frozenset[int]:
    """The ids whose last event is a removal: no later merge made them again.

    >>> sorted(_removed_for_good([2, 3, 2], [(2, 2), (2, 3)]))
    [3]
    """
    if not removals:  # most vocabularies: no dict of every merge to build
        return frozenset()
    last_made = {made: k + 1 for k, made in enumerate(merged_ids)}
    return frozenset(token for after, token in removals if last_made[token] <= after)


def int_pairs(merges: Iterable[Sequence[int]]) -> tuple[tuple[int, int], ...]:
    """Merges as (int, int) tuples: checked in C when they already are (a table's 200,000 from
    its merges file), else converted one by one (lists from JSON, numpy ints).

    >>> int_pairs([[1, 2], (3, True)])
    ((1, 2), (3, 1))
    """
    pairs = tuple(merges)
    if {tuple} >= set(map(type, pairs)) and {2} >= set(map(len, pairs)):
        if {int} >= set(map(type, chain.from_iterable(pairs))):
            return cast(tuple[tuple[int, int], ...], pairs)
    return tuple((int(a), int(b)) for a, b in pairs)


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
