"""Step records: what each merge did, kept in a log that stays small on long runs.

Data shapes (one row per merge, in flat arrays; a record object is made when asked for):

    ids     array('i'), 3 a step     left_id, right_id, token_id
    nums    array('q'), 5 a step     count, replaced, tokens_after, n_tied, words_affected
    reused  bytearray, 1 a step
    detail  list, one entry for each of the first ``full`` steps:
            (top_pairs, examples, example_words)

About 53 bytes a step, plus the detail of the first ``full`` steps (~1 KB each with a 50-row pair
table): a run of 100,000 merges keeps ~5 MB of compact rows where records as objects took ~110 MB.
A compact step's record has only the winning pair in its table and no examples.
"""

from __future__ import annotations

import copy
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import NamedTuple, overload

__all__ = ["PairStat", "RemovalRecord", "StepRecord", "StepLog"]


class PairStat(NamedTuple):
    """One row of the pair-frequency table."""

    left_id: int
    right_id: int
    left: str
    right: str
    count: int  # type: ignore[assignment]  # the table's column: shadows tuple.count on purpose


@dataclass(frozen=True, slots=True)
class RemovalRecord:
    """A token PickyBPE removed right after a merge (``bpe.picky``): each of its occurrences
    left standing alone was split into ``parts``."""

    after: int  # the step (merge) it followed
    token_id: int
    token: str
    parts: tuple[int, ...]
    part_tokens: tuple[str, ...]
    alone: int  # its occurrences standing alone after that merge (each one split)
    inside: int  # the occurrences that merge took (alone < τ x inside)
    tokens_after: int  # tokens in the corpus once it was split
    words_affected: int


@dataclass(frozen=True, slots=True)
class StepRecord:
    """What one merge did. ``count`` counts overlapping occurrences ("aaa" has two (a, a)),
    ``replaced`` the occurrences actually merged, left to right (one in "aaa")."""

    step: int
    left_id: int
    right_id: int
    left: str
    right: str
    token_id: int
    token: str
    count: int
    replaced: int
    tokens_after: int
    reused: bool  # the merged string already was a token, whose id was reused
    n_tied: int  # how many other pairs had the same count
    top_pairs: tuple[PairStat, ...]  # the pair table before the merge, winner first
    words_affected: int
    examples: tuple[tuple[str, int], ...]  # (word as in the corpus, occurrences merged there x its frequency)
    example_words: tuple[int, ...] = ()  # the examples' indices in Trainer.words (a long word is cut above)
    compact: bool = False  # kept without its pair table and examples (a step past the log's ``full``)
    removals: tuple[RemovalRecord, ...] = ()  # PickyBPE: the tokens removed right after this merge

    @property
    def pair(self) -> tuple[str, str]:
        return (self.left, self.right)

    @property
    def ties(self) -> tuple[tuple[str, str], ...]:
        """The pairs of the table that had the winner's count, in tie-break order (the first
        ``top_k - 1`` of the ``n_tied``): the table is sorted by count, so they follow the winner."""
        return tuple((p.left, p.right) for p in takewhile(lambda p: p.count == self.count, self.top_pairs[1:]))


_NUMS = 5


class StepLog(Sequence[StepRecord]):
    """The records of a run, as a read-only sequence; step ``i + 1`` is ``log[i]``.

    ``tokens`` is the vocabulary's live list of display strings (ids never change meaning, so a
    record's strings are looked up when it is read). The first ``full`` steps keep their pair
    table and examples; later ones are compact (None: every step is kept in full).

    >>> log = StepLog(["a", "b", "ab"], full=0)
    >>> log.append(0, 1, 2, count=4, replaced=3, tokens_after=9, n_tied=0, words_affected=2, reused=False,
    ...            top_pairs=(PairStat(0, 1, "a", "b", 4), PairStat(1, 0, "b", "a", 1)), examples=(("abab", 3),))
    >>> r = log[0]
    >>> (r.step, r.pair, r.token, r.count, r.compact, len(r.top_pairs), r.examples)
    (1, ('a', 'b'), 'ab', 4, True, 1, ())
    >>> log.column("tokens_after")
    [9]
    """

    __slots__ = ("_tokens", "full", "_ids", "_nums", "_reused", "_detail", "_removals")

    def __init__(self, tokens: Sequence[str], *, full: int | None = None):
        if full is not None and full < 0:
            raise ValueError("full must be >= 0 or None")
        self._tokens = tokens
        self.full = full
        self._ids = array("i")
        self._nums = array("q")
        self._reused = bytearray()
        self._detail: list[tuple[tuple[PairStat, ...], tuple[tuple[str, int], ...], tuple[int, ...]]] = []
        # PickyBPE: step index -> its removals, (token id, parts, alone, inside, tokens after, words)
        self._removals: dict[int, list[tuple[int, tuple[int, ...], int, int, int, int]]] = {}

    def append(
        self,
        left_id: int,
        right_id: int,
        token_id: int,
        *,
        count: int,
        replaced: int,
        tokens_after: int,
        n_tied: int,
        words_affected: int,
        reused: bool,
        top_pairs: tuple[PairStat, ...],
        examples: tuple[tuple[str, int], ...],
        example_words: tuple[int, ...] = (),
    ) -> None:
        """Log the next step; its detail is dropped when the log is past ``full`` steps."""
        if self.detailed:
            self._detail.append((top_pairs, examples, example_words))
        self._ids.extend((left_id, right_id, token_id))
        self._nums.extend((count, replaced, tokens_after, n_tied, words_affected))
        self._reused.append(reused)

    def append_removal(
        self, token_id: int, parts: tuple[int, ...], *, alone: int, inside: int, tokens_after: int, words_affected: int
    ) -> None:
        """Log a removal that followed the last step logged.

        >>> log = StepLog(["a", "b", "ab", "abb"])
        >>> log.append(0, 1, 2, count=3, replaced=3, tokens_after=6, n_tied=0, words_affected=1, reused=False,
        ...            top_pairs=(), examples=())
        >>> log.append(2, 1, 3, count=3, replaced=3, tokens_after=3, n_tied=0, words_affected=1, reused=False,
        ...            top_pairs=(), examples=())
        >>> log.append_removal(2, (0, 1), alone=0, inside=3, tokens_after=3, words_affected=0)
        >>> [(r.after, r.token, r.part_tokens) for r in log[1].removals], log[0].removals, len(log.all_removals())
        ([(2, 'ab', ('a', 'b'))], (), 1)
        """
        if not len(self):
            raise ValueError("a removal follows a step: log the step first")
        row = (token_id, tuple(parts), alone, inside, tokens_after, words_affected)
        self._removals.setdefault(len(self) - 1, []).append(row)

    def _removal(self, i: int, row: tuple[int, tuple[int, ...], int, int, int, int]) -> RemovalRecord:
        token_id, parts, alone, inside, after, words = row
        tokens = self._tokens
        return RemovalRecord(
            after=i + 1,
            token_id=token_id,
            token=tokens[token_id],
            parts=parts,
            part_tokens=tuple(tokens[t] for t in parts),
            alone=alone,
            inside=inside,
            tokens_after=after,
            words_affected=words,
        )

    def all_removals(self) -> list[RemovalRecord]:
        """Every removal logged, in the order made."""
        return [self._removal(i, row) for i in sorted(self._removals) for row in self._removals[i]]

    def __deepcopy__(self, memo: dict) -> StepLog:
        """A copy that shares the logged details: they are tuples of immutable values (pair rows,
        example words), and copying them one by one was most of copying a trainer (a session
        takes a copy of a shared one at a link's step). The token list is the trainer's own, so
        it goes through ``memo`` like the rest of the trainer.

        >>> import copy
        >>> log = StepLog(["a", "b", "ab"])
        >>> log.append(0, 1, 2, count=4, replaced=4, tokens_after=9, n_tied=0, words_affected=1, reused=False,
        ...            top_pairs=(), examples=(("ab", 4),))
        >>> twin = copy.deepcopy(log); twin.append(2, 2, 2, count=1, replaced=1, tokens_after=8, n_tied=0,
        ...                                        words_affected=1, reused=True, top_pairs=(), examples=())
        >>> len(log), len(twin), twin[0] == log[0]
        (1, 2, True)
        """
        twin = StepLog.__new__(StepLog)
        memo[id(self)] = twin
        twin._tokens = copy.deepcopy(self._tokens, memo)
        twin.full = self.full
        twin._ids, twin._nums, twin._reused = array("i", self._ids), array("q", self._nums), bytearray(self._reused)
        twin._detail = list(self._detail)
        twin._removals = {i: list(rows) for i, rows in self._removals.items()}
        return twin

    @property
    def detailed(self) -> bool:
        """Whether the next step logged keeps its pair table and examples (the trainer skips
        computing them otherwise)."""
        return self.full is None or len(self._reused) < self.full

    def __len__(self) -> int:
        return len(self._reused)

    @overload
    def __getitem__(self, i: int) -> StepRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[StepRecord]: ...
    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._record(j) for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("step record index out of range")
        return self._record(i)

    def __iter__(self) -> Iterator[StepRecord]:
        return map(self._record, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"StepLog({len(self):,} steps, full={self.full})"

    def _record(self, i: int) -> StepRecord:
        tokens = self._tokens
        left, right, new = self._ids[3 * i : 3 * i + 3]
        count, replaced, after, tied, affected = self._nums[_NUMS * i : _NUMS * i + _NUMS]
        if i < len(self._detail):
            top, examples, words = self._detail[i]
            compact = False
        else:
            top, examples, words = (PairStat(left, right, tokens[left], tokens[right], count),), (), ()
            compact = True
        return StepRecord(
            step=i + 1,
            left_id=left,
            right_id=right,
            left=tokens[left],
            right=tokens[right],
            token_id=new,
            token=tokens[new],
            count=count,
            replaced=replaced,
            tokens_after=after,
            reused=bool(self._reused[i]),
            n_tied=tied,
            top_pairs=top,
            words_affected=affected,
            examples=examples,
            example_words=words,
            compact=compact,
            removals=tuple(self._removal(i, row) for row in self._removals.get(i, ())),
        )

    def column(self, name: str) -> list[int]:
        """One number per step without making records (what the charts plot, for every step).

        ``name``: step, left_id, right_id, token_id, count, replaced, tokens_after, n_tied,
        words_affected."""
        if name == "step":
            return list(range(1, len(self) + 1))
        if name in _ID_COLUMNS:
            return self._ids[_ID_COLUMNS.index(name) :: 3].tolist()
        if name in _NUM_COLUMNS:
            return self._nums[_NUM_COLUMNS.index(name) :: _NUMS].tolist()
        raise KeyError(f"no column {name!r}")


_ID_COLUMNS = ("left_id", "right_id", "token_id")
_NUM_COLUMNS = ("count", "replaced", "tokens_after", "n_tied", "words_affected")
