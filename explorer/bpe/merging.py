"""The merge core: BPE's encoding rule, written once.

Encoding a piece repeatedly merges the adjacent pair whose merge has the lowest rank, leftmost
first, until no pair merges (GPT-2's encoder.py, tiktoken, minbpe; HF ``tokenizers`` without
dropout). A merge is packed into one int, rank above the new id, so that the lowest rank is
``min()`` over plain ints and two pairs of one rank tie, the leftmost winning::

    packed   (rank << ID_BITS) | new_id           pack(0, 256) == 256, pack(1, 257) == 2097409
    lookup   dict.get-like: (key, default) -> packed merge, NO_MERGE (the default) when none:
             a dict's own ``.get`` (in C) keyed by id pairs {(97, 98): 256, ...}, or by the
             joined texts of two neighbours {"ab": 256, ...} (tiktoken: any split of a token
             merges into it)

The rule in three shapes, for three kinds of caller:

- ``lowest_first``: a short piece keeps the packed merge of each adjacent pair in a list, merges
  the leftmost minimum and looks up only its two new neighbours (the scans run in C): the
  encoder's hot path, one call per distinct piece.
- ``chain_merges``: pieces as linked lists over flat arrays (a ``Chain``) and a heap of candidate
  pairs: O(n log n) for a long piece, many pieces at once (a corpus replayed merge by merge). It
  yields each merge as made (an encode trace) and may skip some (BPE-dropout, HF's way: a
  skipped pair is tried again after the next merge).
- ``rank_sweeps``: one long piece, no trace: the positions of each packed merge kept together and
  swept left to right, lowest merge first, each pair's current merge kept per position (no heap
  entry per pair, no re-lookup of a stale one): ``encode``'s path for a long piece.
- ``merge_once``: seed 004's BPE-dropout: each rule once, in rank order, swept over the piece
  (minbpe's ``merge``, ``merge_all`` here), an occurrence skipped staying unmerged by it.

Truncation needs nothing of its own: merges of rank k and above are simply not in the lookup
(``Tokenizer.truncate``), or lie at or above ``below`` (``lowest_first``).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import add
from typing import Any

__all__ = [
    "ID_BITS",
    "ID_MASK",
    "NO_MERGE",
    "SHORT_PIECE",
    "Chain",
    "Lookup",
    "chain_merges",
    "encode",
    "lowest_first",
    "merge_all",
    "merge_once",
    "pack",
    "packed_rules",
    "pair_merges",
    "rank_sweeps",
    "unpack",
]

ID_BITS = 21  # ids below 2,097,152: o200k_base's 200,000 fit ten times over
ID_MASK = (1 << ID_BITS) - 1
NO_MERGE = 1 << 62  # above every packed merge: min() picks it only when no pair merges
# Pieces up to this many symbols are merged by rescanning a list (fast in C); longer ones (no
# pre-tokenization, a run of one character) by ``rank_sweeps`` (bench/long_piece.py: the two
# break even between 128 and 256 symbols on o200k_base).
SHORT_PIECE = 64

Lookup = Callable[[Any, int], int]  # (pair key, default) -> packed merge: a dict's .get


def pack(rank: int, new_id: int) -> int:
    """One merge as one int that orders by rank.

    >>> pack(0, 256), pack(1, 257), pack(1, 257) < pack(2, 3)
    (256, 2097409, True)
    """
    return rank << ID_BITS | new_id


def unpack(packed: int) -> tuple[int, int]:
    """(rank, new id) of a packed merge.

    >>> unpack(pack(7, 300))
    (7, 300)
    """
    return packed >> ID_BITS, packed & ID_MASK


def packed_rules(rules: Mapping[tuple[int, int], tuple[int, int]]) -> dict[tuple[int, int], int]:
    """``{pair: (rank, new id)}`` (``Tokenizer.merge_rules``) -> ``{pair: packed}``, a lookup.

    >>> packed_rules({(97, 98): (0, 256), (256, 99): (1, 257)})
    {(97, 98): 256, (256, 99): 2097409}
    """
    return {pair: pack(rank, new) for pair, (rank, new) in rules.items()}


def pair_merges(symbols: Sequence[Any], lookup: Lookup, *, joined: bool = False) -> list[int]:
    """The packed merge of each adjacent pair, NO_MERGE where none (minbpe's ``get_stats``, with
    ranks for counts). Pairs are keyed by (left, right), or by ``left + right`` when ``joined``.

    >>> lookup = {(97, 98): pack(0, 256), (98, 99): pack(1, 257)}.get
    >>> pair_merges([97, 98, 99, 97], lookup) == [pack(0, 256), pack(1, 257), NO_MERGE]
    True
    >>> pair_merges(["a", "b", "c"], {"bc": 5}.get, joined=True) == [NO_MERGE, 5]
    True
    """
    keys = map(add, symbols, symbols[1:]) if joined else zip(symbols, symbols[1:])
    return list(map(lookup, keys, repeat(NO_MERGE)))


def lowest_first(symbols: list[Any], lookup: Lookup, *, joined: bool = False, below: int = NO_MERGE) -> list[Any]:
    """Merge the lowest-ranked adjacent pair, leftmost first, until none is left (or none
    below ``below``); ``symbols`` is merged in place and returned. Symbols are ids, a merge
    giving its new id; or, when ``joined``, texts or bytes keyed and merged by joining them.

    A piece of n symbols costs O(n) per merge, the scans (min, index, the list splice) in C:
    faster than a heap for the short pieces pre-tokenization makes. Data shapes:

        symbols  [97, 98, 99]          -> [256, 99]     -> [258]
        merges   [ab=0|256, bc=1|257]  -> [abc=2|258]   -> []      (the packed merge of each pair)

    >>> lookup = {(97, 98): pack(0, 256), (256, 99): pack(2, 258), (98, 99): pack(1, 257)}.get
    >>> lowest_first([97, 98, 99, 98, 99], lookup)
    [258, 257]
    >>> ranks = {b"ab": 0, b"bc": 1, b"abc": 2}
    >>> lowest_first([b"a", b"b", b"c"], ranks.get, joined=True), lowest_first([b"a", b"b", b"c"], ranks.get, joined=True, below=2)
    ([b'abc'], [b'ab', b'c'])
    """
    keys = map(add, symbols, symbols[1:]) if joined else zip(symbols, symbols[1:])
    merges = list(map(lookup, keys, repeat(NO_MERGE)))  # pair_merges, inline: once per piece
    n = len(symbols)
    if n < 2:
        return symbols
    while True:
        best = min(merges)
        if best >= below:
            break
        i = merges.index(best)
        del merges[i]
        n -= 1
        # only the merged symbol's two pairs changed; n == 1 is tested only when the last pair
        # merged (the loop runs once per merge of every distinct piece)
        if not joined:
            new = best & ID_MASK
            symbols[i : i + 2] = (new,)
            if i:
                merges[i - 1] = lookup((symbols[i - 1], new), NO_MERGE)
            if i < n - 1:
                merges[i] = lookup((new, symbols[i + 1]), NO_MERGE)
            elif n == 1:
                break
        else:
            new = symbols[i] + symbols[i + 1]
            symbols[i : i + 2] = (new,)
            if i:
                merges[i - 1] = lookup(symbols[i - 1] + new, NO_MERGE)
            if i < n - 1:
                merges[i] = lookup(new + symbols[i + 1], NO_MERGE)
            elif n == 1:
                break
    return symbols


class Chain:
    """Pieces as linked lists over flat arrays, one position per symbol, so that a merge is O(1)
    and many pieces share one heap (``chain_merges``)::

        sym[p]          token id at position p, -1 once merged into its left neighbour
        nxt[p], prv[p]  the live neighbours in the same piece, -1 at its ends

    >>> chain = Chain([5, 6])
    >>> chain.add([7, 8, 9]), chain.sym, chain.nxt, chain.prv
    (2, [5, 6, 7, 8, 9], [1, -1, 3, 4, -1], [-1, 0, -1, 2, 3])
    """

    __slots__ = ("nxt", "prv", "sym")

    def __init__(self, ids: Sequence[int] = ()):
        self.sym: list[int] = []
        self.nxt: list[int] = []
        self.prv: list[int] = []
        self.add(ids)

    def add(self, ids: Sequence[int]) -> int:
        """Append a piece; returns the position of its first symbol."""
        base, n = len(self.sym), len(ids)
        self.sym.extend(ids)
        self.nxt.extend(range(base + 1, base + n))
        if n:  # an empty piece has no positions
            self.nxt.append(-1)
            self.prv.append(-1)
        self.prv.extend(range(base, base + n - 1))
        return base

    def walk(self, start: int = 0) -> list[int]:
        """The ids of the piece that starts at ``start``.

        >>> chain = Chain([1, 2, 3])
        >>> _ = list(chain_merges(chain, {(2, 3): pack(0, 4)}.get))
        >>> chain.walk()
        [1, 4]
        """
        sym, nxt = self.sym, self.nxt
        out = []
        p = start
        while p >= 0:
            out.append(sym[p])
            p = nxt[p]
        return out

    def index(self, p: int) -> int:
        """How many tokens precede live position ``p`` in its piece."""
        prv = self.prv
        n = 0
        while prv[p] >= 0:
            p = prv[p]
            n += 1
        return n


def chain_merges(
    chain: Chain, lookup: Lookup, *, skip: Callable[[], bool] | None = None
) -> Iterator[tuple[int, int, int, int]]:
    """Merge every piece of the chain, lowest-ranked pair first, leftmost among equals, and
    yield each merge as made: (packed merge, its position, left id, right id).

    Candidate pairs sit in a heap of (packed merge, left position); an entry whose pair has
    since changed is stale and dropped when popped. Pieces never meet, so popping in (rank,
    position) order merges each piece as ``lowest_first`` would, all at once. ``skip()``, asked
    before each merge, may refuse it: the pair waits until the next merge is made, then is
    tried again (BPE-dropout as HF ``tokenizers`` does it).

    >>> lookup = {(97, 98): pack(0, 256), (256, 99): pack(1, 257)}.get
    >>> chain = Chain([97, 98, 99])
    >>> chain.add([99, 97, 98])
    3
    >>> [(unpack(packed), at) for packed, at, _, _ in chain_merges(chain, lookup)]
    [((0, 256), 0), ((0, 256), 4), ((1, 257), 0)]
    >>> chain.walk(0), chain.walk(3)
    ([257], [99, 256])
    """
    sym, nxt, prv = chain.sym, chain.nxt, chain.prv
    heap = [(r, p) for p, q in enumerate(nxt) if q >= 0 and (r := lookup((sym[p], sym[q]), NO_MERGE)) != NO_MERGE]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    skipped: list[tuple[int, int]] = []
    while heap:
        entry = pop(heap)
        packed, i = entry
        left = sym[i]
        j = nxt[i] if left >= 0 else -1
        if j < 0:
            continue
        right = sym[j]
        if lookup((left, right), NO_MERGE) != packed:
            continue
        if skip is not None and skip():
            skipped.append(entry)
            continue
        new = packed & ID_MASK
        sym[i] = new
        sym[j] = -1
        k = nxt[j]
        nxt[i] = k
        if k >= 0:
            prv[k] = i
            r = lookup((new, sym[k]), NO_MERGE)
            if r != NO_MERGE:
                push(heap, (r, i))
        h = prv[i]
        if h >= 0:
            r = lookup((sym[h], new), NO_MERGE)
            if r != NO_MERGE:
                push(heap, (r, h))
        if skipped:
            for e in skipped:
                push(heap, e)
            skipped.clear()
        yield packed, i, left, right


def rank_sweeps(ids: list[int], lookup: Lookup) -> list[int]:
    """``lowest_first``'s result for a long piece in O(n log n): the positions where each packed
    merge applies are kept in one list per merge, and the lowest merge's list is swept left to
    right, merging each occurrence still there (equal merges go leftmost first, so one sweep
    makes them all in order). A merge that makes a pair of a lower merge than the one being
    swept stops the sweep: that pair goes first, and the rest of the list waits its turn again.
    ``ids`` is merged in place; the ids are returned.

    Data shapes (positions are the symbols' first indexes; a merged-away symbol is -1)::

        sym      [120, 120, 120, 120]  -> [1, -1, 1, -1]  -> [2, -1, -1, -1]
        cur      the packed merge of the pair starting at each position, NO_MERGE where none
        pending  {packed merge: [positions where it was found]}, the merges in a heap of ints

    >>> lookup = {(0, 0): pack(0, 1), (1, 1): pack(1, 2), (1, 0): pack(2, 3)}.get
    >>> rank_sweeps([0] * 7, lookup), lowest_first([0] * 7, lookup)
    ([2, 3], [2, 3])
    >>> lookup = {(0, 1): pack(1, 3), (3, 2): pack(0, 4), (1, 2): pack(2, 5)}.get  # 3 + 2 is lower than 0 + 1
    >>> rank_sweeps([0, 1, 2, 0, 1, 2], lookup), lowest_first([0, 1, 2, 0, 1, 2], lookup)
    ([4, 4], [4, 4])
    """
    n = len(ids)
    if n < 2:
        return ids
    sym = ids
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    cur = list(map(lookup, zip(sym, sym[1:]), repeat(NO_MERGE)))
    cur.append(NO_MERGE)
    pending: dict[int, list[int]] = {}
    get = pending.get
    for p, r in enumerate(cur):
        if r != NO_MERGE:
            found = get(r)
            if found is None:
                pending[r] = [p]
            else:
                found.append(p)
    heap = list(pending)
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        r = pop(heap)
        positions = pending.pop(r)
        positions.sort()  # appended as found: mostly in order already
        new = r & ID_MASK
        for at, i in enumerate(positions):
            if cur[i] != r:  # merged away, or its pair has changed since
                continue
            j = nxt[i]
            sym[i] = new
            sym[j] = -1
            cur[j] = NO_MERGE
            k = nxt[j]
            nxt[i] = k
            lower = False
            q = NO_MERGE
            if k >= 0:
                prv[k] = i
                q = lookup((new, sym[k]), NO_MERGE)
                if q != NO_MERGE:
                    found = get(q)
                    if found is None:
                        pending[q] = [i]
                        push(heap, q)
                    else:
                        found.append(i)
                    lower = q < r
            cur[i] = q
            h = prv[i]
            if h >= 0:
                q = cur[h] = lookup((sym[h], new), NO_MERGE)
                if q != NO_MERGE:
                    found = get(q)
                    if found is None:
                        pending[q] = [h]
                        push(heap, q)
                    else:
                        found.append(h)
                    lower = lower or q < r
            if lower:  # a lower merge goes first; r's other positions wait (no new one is r's)
                rest = positions[at + 1 :]
                if rest:
                    pending[r] = rest
                    push(heap, r)
                break
    return [s for s in sym if s >= 0]


def encode(
    ids: list[int], lookup: Lookup, *, skip: Callable[[], bool] | None = None, short: int = SHORT_PIECE
) -> list[int]:
    """A piece's ids after every merge: ``lowest_first`` for a piece of at most ``short``
    symbols, ``rank_sweeps`` for a longer one, the heap of ``chain_merges`` whenever ``skip``
    may refuse merges (the three give the same ids). ``ids`` may be merged in place.

    >>> lookup = {(0, 0): pack(0, 1), (1, 1): pack(1, 2)}.get
    >>> encode([0] * 7, lookup), encode([0] * 70, lookup) == [2] * 17 + [1], encode([0] * 7, lookup, short=1)
    ([2, 1, 0], True, [2, 1, 0])
    """
    if skip is None:
        return lowest_first(ids, lookup) if len(ids) <= short else rank_sweeps(ids, lookup)
    if len(ids) < 2:
        return ids
    chain = Chain(ids)
    deque(chain_merges(chain, lookup, skip=skip), maxlen=0)
    return chain.walk()


def merge_all(ids: Sequence[int], lookup: Lookup, packed: int, *, skip: Callable[[], bool] | None = None) -> list[int]:
    """Every occurrence of the merge ``packed`` made, left to right, none overlapping (minbpe's
    ``merge``); ``skip()``, asked at each, may leave one unmerged.

    >>> lookup = {(0, 0): pack(0, 1)}.get
    >>> merge_all([0, 0, 0, 2, 0, 0], lookup, pack(0, 1))
    [1, 0, 2, 1]
    """
    new = packed & ID_MASK
    out: list[int] = []
    i, n = 0, len(ids)
    while i < n:
        if i + 1 < n and lookup((ids[i], ids[i + 1]), NO_MERGE) == packed and (skip is None or not skip()):
            out.append(new)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def merge_once(ids: list[int], lookup: Lookup, *, skip: Callable[[], bool] | None = None) -> list[int]:
    """Seed 004's BPE-dropout: the rules in rank order, each that occurs in the piece swept once
    over it (``merge_all``); an occurrence skipped stays unmerged by that rule. Without skips it
    is ``lowest_first`` as long as no merge makes a pair of lower rank than its own.

    >>> lookup = {(0, 0): pack(0, 1), (1, 1): pack(1, 2)}.get
    >>> merge_once([0] * 7, lookup), merge_once([0] * 7, lookup, skip=iter([True] + [False] * 9).__next__)
    ([2, 1, 0], [0, 2, 1])
    """
    last = -1
    while len(ids) > 1:
        best = min((r for r in pair_merges(ids, lookup) if r > last), default=NO_MERGE)
        if best == NO_MERGE:
            break
        ids, last = merge_all(ids, lookup, best, skip=skip), best
    return ids
