"""PickyBPE (Chizhov et al. 2024, "BPE Gets Picky"): training that removes the tokens a merge
has made useless, and the encoder that follows the merges and removals in the order learned.

After each merge (a, b) -> ab, each merged token among a and b is checked: when what is left of
it standing alone is under τ times the merge's count (``is_scaffold``), it is removed and every
occurrence is split into its parts: the two tokens it was merged from, each split further when
it was itself removed (``live_parts``). A removed token may come back: a later merge that makes
it again restores it. τ = 0 removes nothing (classical BPE); the paper's threshold T on the
intersection-over-self is τ = (1 - T) / T (T = 0.9 is τ ≈ 0.11).

Data shapes::

    removals   ((after, id), ...)   id removed right after the merge numbered ``after`` (1-based),
                                    in the order made (after nondecreasing)
    events     merge k (0-based) and the removals after it, in one timeline; time = index:
               [merge 0, merge 1, removal (2, id), merge 2, ...]
    plan.merges[(a, b)]  -> ([time, ...], [new id, ...])   every time the pair merges
    plan.removals[id]    -> ([time, ...], [parts, ...])    every time the token is removed

Encoding replays the timeline on each piece (``replay``): the next event that applies to the
piece (its earliest pair merge or token removal after "now") is made, everywhere in the piece at
once, as training made it everywhere in the corpus. So the tokenizer after k merges gives every
training word exactly the segmentation training had then.
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import Iterator, Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, cast

from ..errors import ConfigError, FormatError
from .merging import Chain
from .variant import PAIR_SHIFT, MergeEvent, TokenizerView, Training, Variant, VariantConfig

__all__ = [
    "MAX_PICKY",
    "PICKY",
    "PickyBPE",
    "PickyState",
    "EventPlan",
    "Replay",
    "is_scaffold",
    "live_parts",
    "removal_parts",
    "event_plan",
    "replay",
    "lay_out",
    "ios_threshold",
]


# PickyBPE's τ: removed when standalone < τ x inside; past 1,000 every merged token fed to a merge
# goes whatever its count, so larger values change nothing a reader could tell apart
MAX_PICKY = 1000.0


def is_scaffold(alone: int, inside: int, tau: float) -> bool:
    """PickyBPE's rule: a token whose occurrences left standing alone after a merge are under
    τ times the occurrences that merge took (its intersection-over-self above 1 / (1 + τ)).

    >>> is_scaffold(1, 10, 0.2), is_scaffold(2, 10, 0.2), is_scaffold(0, 10, 0.0)
    (True, False, False)
    """
    return alone < tau * inside


def ios_threshold(tau: float) -> float:
    """The paper's IoS threshold T for a τ: a token goes when IoS > T = 1 / (1 + τ).

    >>> round(ios_threshold(1 / 9), 6), ios_threshold(0.0)
    (0.9, 1.0)
    """
    return 1 / (1 + tau)


def live_parts(token: int, parents: Mapping[int, tuple[int, int]], removed: set[int] | frozenset[int]) -> list[int]:
    """A removed token's parts: the two it was merged from, each split further while removed.

    >>> live_parts(5, {3: (0, 1), 4: (3, 2), 5: (4, 0)}, {4, 5, 3})
    [0, 1, 2, 0]
    >>> live_parts(5, {3: (0, 1), 4: (3, 2), 5: (4, 0)}, {5})
    [4, 0]
    """
    out: list[int] = []
    stack = list(reversed(parents[token]))
    while stack:
        t = stack.pop()
        if t in removed:
            a, b = parents[t]
            stack += (b, a)
        else:
            out.append(t)
    return out


def removal_parts(
    n_base: int, merges: Sequence[tuple[int, int]], merged_ids: Sequence[int], removals: Sequence[tuple[int, int]]
) -> tuple[tuple[int, ...], ...]:
    """Each removal's parts, as training split the token then (``live_parts`` with the parents
    of the merge that last made it). FormatError for a removal that training cannot have made:
    out of order, past the merges, of a base symbol, or of a token not live then.

    >>> removal_parts(2, [(0, 1), (2, 1), (0, 1)], [2, 3, 2], [(2, 2), (3, 2)])
    ((0, 1), (0, 1))
    >>> removal_parts(2, [(0, 1)], [2], [(1, 0)])
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: removal 0 (after merge 1) removes id 0, which is not a merged token live then
    """
    parents: dict[int, tuple[int, int]] = {}
    removed: set[int] = set()
    out: list[tuple[int, ...]] = []
    k = 0
    for r, (after, token) in enumerate(removals):
        if not k <= after <= len(merges) or after < 1:
            raise FormatError(
                f"removal {r} comes after merge {after}: removals follow a merge, in order, "
                f"at most the last ({len(merges)})"
            )
        for pair, made in zip(merges[k:after], merged_ids[k:after]):
            parents[made] = pair
            removed.discard(made)
        k = after
        if token < n_base or token not in parents or token in removed:
            raise FormatError(
                f"removal {r} (after merge {after}) removes id {token}, which is not a merged token live then"
            )
        out.append(tuple(live_parts(token, parents, removed)))
        removed.add(token)
    return tuple(out)


T = TypeVar("T")


@dataclass(frozen=True)
class EventPlan:
    """The merges and removals as one timeline, looked up by pair and by token (module doc)."""

    merges: dict[tuple[int, int], tuple[list[int], list[int]]]
    removals: dict[int, tuple[list[int], list[tuple[int, ...]]]]
    after: list[int]  # time -> the merges made once that event is made
    base_len: list[int]  # id -> how many base symbols it spans (a removal's parts sit side by side)

    def next_merge(self, pair: tuple[int, int], now: int) -> tuple[int, int] | None:
        """(time, new id) of the pair's first merge after ``now``, None if none."""
        return _next_after(self.merges.get(pair), now)

    def next_removal(self, token: int, now: int) -> tuple[int, tuple[int, ...]] | None:
        """(time, parts) of the token's first removal after ``now``, None if none."""
        return _next_after(self.removals.get(token), now)


def _next_after(events: tuple[list[int], list[T]] | None, now: int) -> tuple[int, T] | None:
    """(time, what) of the first of ``events`` (times ascending, what happens then) after ``now``.

    >>> _next_after(([2, 5], ["x", "y"]), 2), _next_after(([2, 5], ["x", "y"]), 5), _next_after(None, 0)
    ((5, 'y'), None, None)
    """
    if events is None:
        return None
    times, what = events
    i = bisect_right(times, now)
    return (times[i], what[i]) if i < len(times) else None


def lay_out(
    sym: MutableSequence[int],
    nxt: MutableSequence[int],
    prv: MutableSequence[int],
    p: int,
    parts: Sequence[int],
    base_len: Sequence[int],
) -> list[int]:
    """A removal at position p: its parts written over the positions the token spans (one per
    base symbol), linked in order, the last to what followed the token; their positions.

    >>> sym, nxt, prv = [5, -1, -1, 7], [3, -1, -1, -1], [-1, -1, -1, 0]  # token 5 spans 3 symbols
    >>> lay_out(sym, nxt, prv, 0, (1, 2), [1, 1, 2]), sym, nxt, prv
    ([0, 1], [1, 2, -1, 7], [1, 3, -1, -1], [-1, 0, -1, 1])
    """
    end = nxt[p]
    at: list[int] = []
    q = p
    for part in parts:
        sym[q] = part
        if at:
            prv[q] = at[-1]
            nxt[at[-1]] = q
        at.append(q)
        q += base_len[part]
    nxt[at[-1]] = end
    if end >= 0:
        prv[end] = at[-1]
    return at


def event_plan(
    n_tokens: int,
    n_base: int,
    merges: Sequence[tuple[int, int]],
    merged_ids: Sequence[int],
    removals: Sequence[tuple[int, int]],
    parts: Sequence[tuple[int, ...]],
) -> EventPlan:
    """The timeline of a vocabulary's merges and removals (``removal_parts`` gives ``parts``).

    >>> plan = event_plan(4, 2, [(0, 1), (2, 0)], [2, 3], [(2, 2)], [(0, 1)])
    >>> plan.merges, plan.removals, plan.after
    ({(0, 1): ([0], [2]), (2, 0): ([1], [3])}, {2: ([2], [(0, 1)])}, [1, 2, 2])
    """
    plan_merges: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
    plan_removals: dict[int, tuple[list[int], list[tuple[int, ...]]]] = {}
    after: list[int] = []
    base_len = [1] * max(n_tokens, n_base)
    r = 0
    for k, (pair, made) in enumerate(zip(merges, merged_ids)):
        times, ids = plan_merges.setdefault(pair, ([], []))
        times.append(len(after))
        ids.append(made)
        after.append(k + 1)
        base_len[made] = base_len[pair[0]] + base_len[pair[1]]
        while r < len(removals) and removals[r][0] == k + 1:
            token = removals[r][1]
            rtimes, rparts = plan_removals.setdefault(token, ([], []))
            rtimes.append(len(after))
            rparts.append(parts[r])
            after.append(k + 1)
            r += 1
    return EventPlan(plan_merges, plan_removals, after, base_len)


EventKind = Literal["merge", "removal"]


def replay(chain: Chain, plan: EventPlan) -> Iterator[tuple[int, EventKind, int, tuple[int, ...]]]:
    """Make the timeline's events on every piece of the chain, earliest first, left to right
    within one event, and yield each as made: (time, kind, position, tokens) with tokens
    (left, right, new) for a merge, (token, *parts) for a removal. The chain must hold the
    pieces' base symbols, one a position: a removal lays its parts out over the positions
    the token spans.

    Candidates sit in a heap of (time, position, kind); an entry whose tokens have since changed
    is stale and dropped when popped. Each change pushes the next event of the pairs and tokens
    it made, after now.

    >>> plan = event_plan(4, 2, [(0, 1), (2, 0)], [2, 3], [(2, 2)], [(0, 1)])
    >>> chain = Chain([0, 1, 0, 0, 1])  # a b a a b -> ab a ab -> aba ab -> aba a b
    >>> [(t, kind, p) for t, kind, p, _ in replay(chain, plan)], chain.walk()
    ([(0, 'merge', 0), (0, 'merge', 3), (1, 'merge', 0), (2, 'removal', 3)], [3, 0, 1])
    """
    sym, nxt, prv = chain.sym, chain.nxt, chain.prv
    base_len = plan.base_len
    heap: list[tuple[int, int, int]] = []  # (time, position, 0 merge | 1 removal)
    push = heapq.heappush

    def pair_at(p: int, now: int) -> None:
        q = nxt[p]
        if q >= 0:
            found = plan.next_merge((sym[p], sym[q]), now)
            if found is not None:
                push(heap, (found[0], p, 0))

    def token_at(p: int, now: int) -> None:
        found = plan.next_removal(sym[p], now)
        if found is not None:
            push(heap, (found[0], p, 1))

    for p in range(len(sym)):
        if sym[p] >= 0:
            pair_at(p, -1)
            token_at(p, -1)
    while heap:
        t, p, kind = heapq.heappop(heap)
        x = sym[p]
        if x < 0:
            continue
        if kind == 0:
            q = nxt[p]
            if q < 0:
                continue
            found = plan.next_merge((x, sym[q]), t - 1)
            if found is None or found[0] != t:
                continue
            y, new = sym[q], found[1]
            sym[p] = new
            sym[q] = -1
            nxt[p] = nxt[q]
            if nxt[q] >= 0:
                prv[nxt[q]] = p
            pair_at(p, t)
            if prv[p] >= 0:
                pair_at(prv[p], t)
            token_at(p, t)
            yield t, "merge", p, (x, y, new)
        else:
            found_r = plan.next_removal(x, t - 1)
            if found_r is None or found_r[0] != t:
                continue
            parts = found_r[1]
            for q in lay_out(sym, nxt, prv, p, parts, base_len):
                token_at(q, t)
                pair_at(q, t)
            if prv[p] >= 0:
                pair_at(prv[p], t)
            yield t, "removal", p, (x, *parts)


# ---- training: the variant's hooks ----------------------------------------------------------
class PickyTraining(Training, Protocol):
    """What PickyBPE's hooks read and change of a trainer besides a variant's usual: the
    position index (``bpe.trainer``'s module doc) and its count updates."""

    tokens: int
    removals: list[tuple[int, int]]
    removed: set[int]
    records: Any

    @property
    def index(self) -> tuple[array, array, array, array, list[int]]: ...

    @property
    def n_tokens(self) -> int: ...

    def bump(self, pair: int, delta: int, before: dict[int, int]) -> None: ...

    def note(self, pair: int, p: int) -> None: ...

    def settle(self, before: dict[int, int]) -> None: ...


class PickyState:
    """PickyBPE's bookkeeping while it trains (a trainer's ``variant_state``)::

    alone[id]      occurrences of the token in the corpus now (weighted by frequency)
    base_len[id]   base symbols it spans: a removal lays its parts out from its position
    parents[id]    the pair that last made it
    made[id]       positions where it was made (stale ones skipped when it is removed)
    n_base         special tokens and the alphabet: never removed
    """

    __slots__ = ("alone", "base_len", "parents", "made", "n_base")

    def __init__(self, trainer: PickyTraining) -> None:
        sym, _, _, wof, freqs = trainer.index
        n = trainer.n_tokens
        alone = [0] * n
        for t, wi in zip(sym, wof):
            alone[t] += freqs[wi]
        self.alone = alone
        self.n_base = n
        self.base_len = [1] * n
        self.parents: dict[int, tuple[int, int]] = {}
        self.made: dict[int, array] = {}

    def __deepcopy__(self, memo: dict) -> PickyState:
        # containers of ints copied one level deep (a session copies the trainer it steps)
        twin = object.__new__(PickyState)
        twin.alone, twin.base_len, twin.parents = self.alone.copy(), self.base_len.copy(), self.parents.copy()
        twin.made = {t: array(v.typecode, v) for t, v in self.made.items()}
        twin.n_base = self.n_base
        return twin

    def __getstate__(self) -> tuple:
        return self.alone, self.base_len, self.parents, self.made, self.n_base

    def __setstate__(self, state: tuple) -> None:
        self.alone, self.base_len, self.parents, self.made, self.n_base = state


class Replay:
    """PickyBPE's piece merger (``variant.PieceMerger``): the vocabulary's merges and removals
    replayed on the piece in the order learned (``replay``).

    >>> plan = event_plan(4, 2, [(0, 1), (2, 0)], [2, 3], [(2, 2)], [(0, 1)])
    >>> Replay(plan).merge([0, 1, 0, 0, 1])  # a b a a b -> ab a ab -> aba ab -> aba a b
    (3, 0, 1)
    >>> list(Replay(plan).steps(Chain([0, 1, 0, 0, 1])))[-2:]  # (rank, position, ids, removed)
    [(1, 0, (2, 0, 3), False), (1, 3, (2, 0, 1), True)]
    """

    no_dropout = (
        "BPE-dropout skips merges in rank order; a PickyBPE tokenizer also removes tokens, so it has no dropout here"
    )

    def __init__(self, plan: EventPlan) -> None:
        self.plan = plan

    def merge(self, ids: list[int]) -> tuple[int, ...]:
        chain = Chain(ids)
        deque(replay(chain, self.plan), maxlen=0)
        return tuple(chain.walk())

    def steps(self, links: Chain) -> Iterator[tuple[int, int, tuple[int, ...], bool]]:
        after = self.plan.after
        for t, kind, at, ids in replay(links, self.plan):
            yield after[t] - 1, at, ids, kind == "removal"


class PickyBPE(Variant):
    """PickyBPE's hooks: after each merge, the check of its two tokens (``is_scaffold``) and
    the removal of a scaffold token (every occurrence split into its live parts).

    >>> from explorer import TrainerConfig, train
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=2, picky=0.5)
    >>> t = train("abc abc abc abd", cfg)  # "ab" is left alone once, under 0.5 x the 3 "abc" took
    >>> [r.token for r in t.records], [t.vocab[i] for _, i in t.removals], t.n_live
    (['ab', 'abc'], ['ab'], 5)
    """

    name = "picky"
    title = "PickyBPE"
    description = "after each merge, a token left mostly inside the new one is removed (Chizhov et al. 2024)"
    option = "picky"
    not_with_parity = "parity-aware training removes no tokens: leave PickyBPE's τ out"
    flag = "--picky"
    metavar = "TAU"
    help = (
        "PickyBPE: after each merge, remove a merged token of its pair whose occurrences left standing alone "
        "are under TAU x the merge's count (the paper's IoS threshold T = 1/(1+TAU): 0.11 is T = 0.9; 0 removes "
        "nothing)"
    )
    one_text = True

    def parse(self, text: str) -> float:
        """τ from the command line: a number from 0 to ``MAX_PICKY``.

        >>> PICKY.parse("0.11"), PICKY.parse("0")
        (0.11, 0.0)
        >>> PICKY.parse("-1")
        Traceback (most recent call last):
        ...
        explorer.errors.ConfigError: τ is from 0 (classical BPE) to 1,000, not -1
        """
        try:
            tau = float(text)
        except ValueError:
            raise ConfigError(f"τ must be a number (e.g. 0.11, the paper's T = 0.9), not {text!r}") from None
        if not 0 <= tau <= MAX_PICKY:  # NaN too
            raise ConfigError(f"τ is from 0 (classical BPE) to {MAX_PICKY:,g}, not {text}")
        return tau

    def summary(self, trainer: Any) -> str:
        """What PickyBPE removed, the line after train's summary (that line stays as it is).

        >>> from explorer import make_config, train
        >>> PICKY.summary(train("ab ab abc abc abc", make_config("sennrich", num_merges=3, picky=0.5)))
        'PickyBPE τ 0.5 (IoS threshold T 0.667): 1 token removed (1 removal), vocab 6 live\\n'
        """
        tau: float = self.setting(trainer.config)
        n, gone = len(trainer.removals), len(trainer.vocab) - trainer.n_live  # gone: removed and not made again
        return (
            f"PickyBPE τ {tau:g} (IoS threshold T {ios_threshold(tau):.3g}): {gone:,} token{'s' * (gone != 1)} removed "
            f"({n:,} removal{'s' * (n != 1)}), vocab {trainer.n_live:,} live\n"
        )

    def check(self, config: VariantConfig) -> None:
        tau = self.setting(config)
        if not (isinstance(tau, int | float) and 0 <= tau <= MAX_PICKY):
            raise ConfigError(f"PickyBPE's τ must be a number from 0 to {MAX_PICKY:g} (0 removes nothing)")

    def start(self, trainer: Training, extra: Any) -> None:
        trainer.variant_state = PickyState(cast(PickyTraining, trainer))

    def piece_merger(self, tokenizer: TokenizerView) -> Replay | None:
        """A vocabulary with removals is encoded by replaying them with its merges."""
        vocab = tokenizer.vocab
        if not vocab.removals:
            return None
        if tokenizer.rules == "tiktoken":
            raise ConfigError("tiktoken's rules know no removed tokens: a PickyBPE vocabulary encodes by its merges")
        return Replay(
            event_plan(
                len(vocab), vocab.n_base, tokenizer.merges, tokenizer.merged_ids, vocab.removals, vocab.removal_parts
            )
        )

    def after_merge(self, trainer: Training, event: MergeEvent) -> None:  # type: ignore[override]
        """After the merge (a, b) -> new: the counts, then the check of a and b (a merged token
        whose occurrences left alone are under τ x the merge's is removed)."""
        t = cast(PickyTraining, trainer)
        state: PickyState = t.variant_state
        a, b, new, replaced = event.left, event.right, event.new_id, event.replaced
        alone, base_len = state.alone, state.base_len
        sym = t.index[0]
        if not event.reused:
            alone.append(0)
            base_len.append(0)
        base_len[new] = base_len[a] + base_len[b]
        state.parents[new] = (a, b)
        t.removed.discard(new)
        alone[new] += replaced
        alone[a] -= replaced
        alone[b] -= replaced
        made = state.made.setdefault(new, array("i"))
        made.extend(p for p in event.positions if sym[p] == new)
        tau: float = self.setting(t.config)
        for x in (a,) if a == b else (a, b):
            if x >= state.n_base and x not in t.removed and is_scaffold(alone[x], replaced, tau):
                _remove(t, state, x, replaced)


def _remove(trainer: PickyTraining, state: PickyState, x: int, inside: int) -> None:
    """Remove token x: every occurrence split into its live parts (``live_parts``), pair counts,
    positions and the heap updated as a merge updates them."""
    sym, nxt, prv, wof, freqs = trainer.index
    alone, base_len, made = state.alone, state.base_len, state.made
    removed = trainer.removed
    parts = live_parts(x, state.parents, removed)
    removed.add(x)
    before: dict[int, int] = {}
    bump, note = trainer.bump, trainer.note
    first_merged = state.n_base
    at_x = sorted({p for p in made.pop(x, ()) if sym[p] == x})
    words: set[int] = set()
    split = 0
    for p in at_x:
        wi = wof[p]
        w = freqs[wi]
        left, right = prv[p], nxt[p]
        if left >= 0:
            bump(sym[left] << PAIR_SHIFT | x, -w, before)
        if right >= 0:
            bump(x << PAIR_SHIFT | sym[right], -w, before)
        at = lay_out(sym, nxt, prv, p, parts, base_len)
        for a, b, q in zip(parts, parts[1:], at):
            pair = a << PAIR_SHIFT | b
            bump(pair, w, before)
            note(pair, q)
        for part, q in zip(parts, at):
            if part >= first_merged:
                made.setdefault(part, array("i")).append(q)
            alone[part] += w
        if right >= 0:
            pair = parts[-1] << PAIR_SHIFT | sym[right]
            bump(pair, w, before)
            note(pair, at[-1])
        if left >= 0:
            pair = sym[left] << PAIR_SHIFT | parts[0]
            bump(pair, w, before)
            note(pair, left)
        split += w
        words.add(wi)
    alone[x] -= split
    trainer.tokens += (len(parts) - 1) * split
    trainer.settle(before)
    trainer.removals.append((len(trainer.merges), x))
    trainer.records.append_removal(
        x, tuple(parts), alone=split, inside=inside, tokens_after=trainer.tokens, words_affected=len(words)
    )


PICKY = PickyBPE()
