"""Budgets: how much memory and time one training may take in a process that many people share.

A server steps every session's trainer in its own process, so one careless click ("until no pair
is left" on a text without pre-tokenization: its last merges join tokens a megabyte long) must not
take the memory every other session needs. A :class:`Budget` given to a trainer is checked before
each merge; the merge that would pass it is not made, the merges made so far stay, and
:class:`BudgetError` says why in one sentence::

    Budget(memory_bytes=256 * 2**20,  # the trainer's footprint (Trainer.footprint), at most
           seconds=300.0,             # CPU time spent training it (its threads'), at most
           step_work=200_000,         # positions one merge may have to visit (Trainer.step_work)
           ceiling=Ceiling(1536 * 2**20))  # the whole process's resident memory, at most

The footprint is an estimate kept up to date in O(1) a merge, in bytes::

    start   ~21 a position (sym, nxt, prv, wof, where: 4 bytes each, with slack) + ~310 a
            distinct pair (its count, its heap entry, its position array) + the words themselves
    growth  each new token's text, counted TOKEN_COPIES times (the trainer's, and the tokenizers
            a page derives from it), + its step record (~1.3 KB with its pair table, 64 bytes
            without) + ~126 a pair count the merge changed + ~16 a position it visited

:func:`start_footprint` estimates the start from the word counts alone, before anything is built,
so a corpus too heavy to step through is refused up front. :func:`step_work` is the most positions
one merge can visit: a pair's occurrences only shrink as merges go on, and a new token's pairs
occur at most as often as the pair that made it, so the count at the start bounds every step's
cost (a 4 MiB run of one character is one word whose first merge visits 4 million positions).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..errors import ExplorerError
from ..stages.pipeline import word_symbols
from .config import TrainerConfig

__all__ = [
    "Budget",
    "BudgetError",
    "Ceiling",
    "TOKEN_COPIES",
    "POSITION_BYTES",
    "PAIR_BYTES",
    "RECORD_BYTES",
    "COMPACT_RECORD_BYTES",
    "mib_text",
    "rss_bytes",
    "start_footprint",
    "step_work",
    "symbol_count",
    "require_start",
    "fitting_sample",
]

# Bytes each part of a trainer takes, fitted with tracemalloc on the bundled corpora under four
# presets at 500 and 3,000 merges (the estimate was within 0.85-1.2x of the measure on each;
# tests/test_budget.py holds it against a measurement).
POSITION_BYTES = 21  # the four int arrays and the pair's position array, 4 bytes each, with their slack
PAIR_BYTES = 310  # a distinct pair: its count in a dict, its heap entry, its position array
CHANGED_PAIR_BYTES = 126  # a merge pushes a new heap entry for each pair whose count it changed
VISITED_BYTES = 16  # ... and notes new pairs at the positions it visited
RECORD_BYTES = 1_320  # a step that keeps its pair table and example words
COMPACT_RECORD_BYTES = 64  # a step kept in ~50 bytes (see StepLog)
WORD_BYTES = 16  # a distinct word's slot in the word list and its frequency (its text counted apart)
CEILING_MARGIN = 16 * 2**20  # a training stops this far below the process's ceiling (what a page draws)
# A token's text lives in the trainer's vocabulary and in each tokenizer a page derives from it
# (the step shown, the one before it): counted three times.
TOKEN_COPIES = 3


class BudgetError(ExplorerError):
    """A training stopped (or refused) by its budget; the merges made so far stay. The message is
    one sentence fit for a page; ``over``: for a refused start, how many times the budget it
    would take (a sample that small fits)."""

    over: float = 0.0


def mib_text(n: int) -> str:
    """Bytes as a short MiB figure for a sentence.

    >>> mib_text(256 * 2**20), mib_text(3 * 2**19), mib_text(1536 * 2**20)
    ('256 MiB', '1.5 MiB', '1.5 GiB')
    """
    if n >= 2**30 and n % 2**30 == 0 or n >= 1.5 * 2**30:
        return f"{n / 2**30:.3g} GiB"
    if n >= 2**20:
        return f"{n / 2**20:.3g} MiB"
    return f"{round(n / 1024):,} KiB" if n >= 1024 else f"{n:,} bytes"


def symbol_count(words: Mapping[str, int], config: TrainerConfig) -> int:
    """The positions a trainer lays out: every base symbol of every distinct word (a byte-level
    word has one a byte).

    >>> symbol_count({"low": 5, "lowest": 2}, TrainerConfig(unit="char")), symbol_count({"é": 1}, TrainerConfig())
    (9, 2)
    """
    if config.unit == "byte":
        return sum(len(w.encode("utf-8", "surrogatepass")) for w in words)
    return sum(len(word_symbols(w, config)) for w in words)


def start_footprint(words: Mapping[str, int], config: TrainerConfig, *, positions: int | None = None) -> int:
    """The footprint of a trainer over ``words`` before its first merge, estimated from the word
    counts alone: its distinct pairs are taken as many as can be (every adjacent pair in a word,
    and no more than the base symbols can pair up), an upper bound.

    >>> start_footprint({"low": 5, "lowest": 2}, TrainerConfig(unit="char")) - 9 * 21 - 7 * 310  # 2 words
    139
    """
    n = symbol_count(words, config) if positions is None else positions
    if config.unit == "byte":
        symbols = 256
    else:
        symbols = len(set().union(*map(set, words))) if words else 0
    pairs = max(0, min(n - len(words), symbols * symbols))
    text = sum(map(sys.getsizeof, words))
    return n * POSITION_BYTES + pairs * PAIR_BYTES + len(words) * WORD_BYTES + text


@dataclass(frozen=True)
class Budget:
    """What one training may take (None: no limit of that kind). ``ceiling``: the resident memory
    of the whole process, at most (a server's, see :class:`Ceiling`); ``whose`` names who the
    budget is for in its sentences ("each session")."""

    memory_bytes: int | None = None
    seconds: float | None = None
    step_work: int | None = None
    ceiling: Ceiling | None = None
    whose: str = "each training"

    def too_heavy(self, footprint: int, *, what: str) -> BudgetError | None:
        """The error for a start over the memory budget (``what``: the corpus and settings), or None.

        >>> Budget(memory_bytes=2**20, whose="each session").too_heavy(3 * 2**20, what="This corpus")
        BudgetError('This corpus would take about 3 MiB of the server to step through, more than the 1 MiB each session may use.')
        """
        if self.memory_bytes is not None and footprint > self.memory_bytes:
            return BudgetError(
                f"{what} would take about {mib_text(footprint)} of the server to step through, more than the "
                f"{mib_text(self.memory_bytes)} {self.whose} may use."
            )
        return None

    def too_slow(self, work: int, *, what: str) -> BudgetError | None:
        """The error for a trainer whose merges could each visit more positions than a step may,
        or None.

        >>> Budget(step_work=1000, whose="each session").too_slow(4000, what="This corpus")
        BudgetError('This corpus has a pair that occurs 4,000 times within its distinct words: merging it would take the server longer than one step may (1,000 places at most, for each session).')
        """
        if self.step_work is not None and work > self.step_work:
            return BudgetError(
                f"{what} has a pair that occurs {work:,} times within its distinct words: merging it would take "
                f"the server longer than one step may ({self.step_work:,} places at most, for {self.whose})."
            )
        return None


def step_work(words: Mapping[str, int], config: TrainerConfig) -> int:
    """The most positions one merge of a trainer over ``words`` may visit: the most occurrences of
    one pair within the distinct words (frequencies aside: a merge visits each distinct word once).

    >>> step_work({"aaaa": 100, "ab": 7}, TrainerConfig(pretokenizer="none", unit="char"))
    3
    """
    best: Counter[tuple] = Counter()
    for w in words:
        symbols = w.encode("utf-8", "surrogatepass") if config.unit == "byte" else word_symbols(w, config)
        best.update(zip(symbols, symbols[1:]))
    return max(best.values(), default=0)


def require_start(words: Mapping[str, int], config: TrainerConfig, budget: Budget | None, *, what: str) -> float:
    """How much of ``budget`` a trainer over ``words`` takes at its start, as a fraction of the
    tighter of its memory and its step work (checked from the word counts, before anything is
    built); BudgetError, whose ``over`` is that fraction, when it is over 1.

    >>> require_start({"ab" * 50: 1}, TrainerConfig(unit="char"), Budget(memory_bytes=1000), what="This text")
    Traceback (most recent call last):
    ...
    explorer.bpe.budget.BudgetError: This text would take about 3 KiB of the server to step through, more than the 1,000 bytes each training may use.
    >>> require_start({"a" * 500: 1}, TrainerConfig(unit="char"), Budget(step_work=1000), what="This text")
    0.499
    """
    if budget is None:
        return 0.0
    positions = symbol_count(words, config)
    footprint = start_footprint(words, config, positions=positions)
    used = footprint / budget.memory_bytes if budget.memory_bytes else 0.0
    error = budget.too_heavy(footprint, what=what)
    if error is None and budget.step_work:
        # a merge visits at most every position: only a corpus with more than the bound is counted
        work = step_work(words, config) if positions > budget.step_work else positions - len(words)
        used = max(used, work / budget.step_work)
        error = budget.too_slow(work, what=what)
    if error is not None:
        error.over = used
        raise error
    return used


def rss_bytes() -> int | None:
    """This process's resident memory now (Linux: /proc/self/statm, a few microseconds), None
    where it cannot be read."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


@dataclass(frozen=True)
class Ceiling:
    """A process's memory ceiling: :meth:`room` is how many bytes it may still grow (its limit less
    its resident memory now), None where that cannot be read.

    >>> Ceiling(2**60).room() > 0
    True
    """

    limit_bytes: int

    def room(self) -> int | None:
        rss = rss_bytes()
        return None if rss is None else self.limit_bytes - rss


def fitting_sample(
    config: TrainerConfig,
    budget: Budget,
    *,
    limit_bytes: int,
    words_of: Callable[[int], Mapping[str, int]],
    tries: int = 6,
) -> Mapping[str, int]:
    """The word counts (``words_of(size)``: those of the corpus's leading ``size`` bytes) of the
    longest leading sample, up to ``limit_bytes``, whose trainer fits ``budget``: each try over it
    is cut by how far over it was.

    >>> from explorer.stages.pipeline import count_words
    >>> text = "a" * 10_000
    >>> words = fitting_sample(TrainerConfig(unit="char"), Budget(step_work=1000), limit_bytes=5_000, words_of=lambda n: count_words((text[:n],), TrainerConfig(unit="char")))
    >>> [len(w) for w in words]
    [900]
    """
    size = limit_bytes
    for _ in range(tries):
        words = words_of(size)
        try:
            require_start(words, config, budget, what="A sample of this corpus")
            return words
        except BudgetError as err:
            size = max(1, int(size / max(err.over, 1.0) * 0.9))
    raise BudgetError(
        "Even a small sample of this corpus is too heavy to step through on this server; train on all of it "
        "without step records instead."
    )
