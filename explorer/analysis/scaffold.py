"""Scaffold tokens: merged tokens that exist on the way to longer ones and seldom stand alone.

BPE keeps every token it makes, so ``entucky`` stays in the vocabulary although the text
almost only ever sees it inside ``Kentucky``: PickyBPE's "intermediate" tokens (Chizhov et al.
2024, arXiv 2409.04599), Scaffold-BPE's scaffold tokens (Lian et al. 2024, arXiv 2404.17808;
its parameter-free rule compares a token's count with the count of the pair merged next, this
module keeps PickyBPE's ratio).

**PickyBPE's intersection over self.** When training merges x and y into z, the authors count
in the corpus as it is segmented at that moment: f(x, y), the merges made (once each, also
when x = y), and f(x), x's occurrences just before them. Then IoS(x | x, y) = f(x, y) / f(x),
and x is removed when IoS > T (the authors' code compares strictly; their example uses
T = 0.9). Their code divides by x's occurrences left after the merge plus f(x, y): f(x) itself
when x != y, one merge's worth less for x + x (each such merge took two x); so does this module.

**Here, after training**, the text is encoded by the tokenizer's own rule (one pass over its
distinct pieces, ``merging.chain_merges``) and each merge made is counted. For a merged token
x and each merge p it fed (p made the longer token, its parent, from x):

    inside(x, p)       how many merges p took x in (once per merge, x + x too), each piece
                       counted with its frequency: the paper's f(x, y) at p's moment
    alone_after(x, p)  x's occurrences left once p's merges are made: those the encoding keeps
                       (``alone``, x in the final ids) plus those merges ranked after p take
    IoS(x | p)         inside / (inside + alone_after): the authors' IoS, as their code divides

Merges are made in rank order (the encoder's lowest rank first), so alone_after(x, p) is the
count of x in what ``tokenizer.truncate(rank + 1)`` makes of the text, and inside(x, p) the
count of p's token there: the tests' slow reference.

**τ.** The issue says a token goes "when its standalone frequency falls under τ of its
frequency inside the merge it fed": alone_after < τ · inside. That is IoS > 1 / (1 + τ), the
paper's T = 1 / (1 + τ), τ = (1 − T) / T: τ = 0 removes nothing (classical BPE), the authors'
T = 0.9 is τ = 1/9, and the default τ = 0.1 is T ≈ 0.909. A token is scaffold when that holds
for some merge it fed. alone_after is the issue's standalone frequency at that merge's moment:
the final ``alone`` when x fed no later merge. Nothing is removed here: each merge is judged
with every earlier token kept, which is what PickyBPE sees only while it has removed none.
Data shapes::

    TokenUse(id=9012, alone=2, feeds=(Feed(parent=9530, rank=9274, inside=412, alone_after=2),))
    ScaffoldReport(tau=0.1, tokens=301_245, uses=(TokenUse, ...) by id, scaffold=(most first))
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple

from ..bpe import picky
from ..bpe.merging import ID_BITS, ID_MASK, Chain, chain_merges, packed_rules
from ..bpe.picky import ios_threshold
from ..bpe.tokenizer import Tokenizer
from ..errors import ConfigError
from .evaluate import piece_counts
from .lineage import token_surface

__all__ = [
    "DEFAULT_TAU",
    "Feed",
    "MergeCounts",
    "ScaffoldReport",
    "TokenUse",
    "count_merges",
    "describe",
    "ios_threshold",
    "is_scaffold",
    "scaffold",
    "tau_for_threshold",
    "token_uses",
]

DEFAULT_TAU = 0.1  # PickyBPE's T = 1 / 1.1, about 0.909 (the authors' example: 0.9)


def tau_for_threshold(threshold: float) -> float:
    """The issue's τ for PickyBPE's IoS threshold T (0 < T ≤ 1): τ = (1 − T) / T.

    >>> tau_for_threshold(1.0), round(tau_for_threshold(0.9), 4), tau_for_threshold(0.5)
    (0.0, 0.1111, 1.0)
    """
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"an IoS threshold is above 0 and at most 1, not {threshold}")
    return (1.0 - threshold) / threshold


class Feed(NamedTuple):
    """One merge a token fed: the longer token it made and how the token was used around it."""

    parent: int  # the id that merge made
    rank: int  # the merge's rank
    inside: int  # merges of that rank that took the token (once each)
    alone_after: int  # the token's occurrences left once those merges were made

    @property
    def ios(self) -> float:
        """PickyBPE's intersection over self at this merge, inside / (inside + alone_after).

        >>> Feed(parent=9, rank=4, inside=412, alone_after=2).ios
        0.9951690821256038
        """
        return self.inside / (self.inside + self.alone_after)


class TokenUse(NamedTuple):
    """A merged token in the encoding of a text: kept ``alone`` times, and the merges it fed."""

    id: int
    alone: int  # occurrences in the final ids
    feeds: tuple[Feed, ...]  # by rank

    @property
    def inside(self) -> int:
        """How many merges took the token, over every merge it fed."""
        return sum(f.inside for f in self.feeds)

    @property
    def ios(self) -> float:
        """The highest IoS over the merges it fed (0.0 when it fed none).

        >>> TokenUse(5, 3, (Feed(7, 2, 1, 9), Feed(8, 3, 6, 3))).ios
        0.6666666666666666
        """
        return max((f.ios for f in self.feeds), default=0.0)


@dataclass(frozen=True)
class ScaffoldReport:
    """Every merged token the text uses or merges (``uses``, by id), and those that are scaffold
    under ``tau`` (``scaffold``, highest IoS first, then most merges inside, then id)."""

    tau: float
    tokens: int  # tokens the text encodes to, each piece counted with its frequency
    uses: tuple[TokenUse, ...]
    scaffold: tuple[TokenUse, ...]

    @property
    def threshold(self) -> float:
        """PickyBPE's IoS threshold for this report's τ."""
        return ios_threshold(self.tau)


class MergeCounts(NamedTuple):
    """What encoding the pieces made, each piece counted with its frequency::

    alone    Counter {id: occurrences in the final ids}, every id (alphabet, unk too)
    inside   Counter {(id, packed merge): merges of that packed merge that took the id}
    twice    Counter {(id, packed merge): those of them that took it twice (x + x)}
    """

    alone: Counter[int]
    inside: Counter[tuple[int, int]]
    twice: Counter[tuple[int, int]]


def _pieces(tokenizer: Tokenizer, text_or_pieces: str | Mapping[str, int]) -> Mapping[str, int]:
    return piece_counts(tokenizer, text_or_pieces) if isinstance(text_or_pieces, str) else text_or_pieces


def _taken_whole(tokenizer: Tokenizer, piece: str) -> int | None:
    """The id tiktoken's shortcut takes a piece as, when merging its bytes would not give that
    one id (then no merge is made); None when the merges make what the encoder makes."""
    whole = tokenizer.whole_token(piece)
    if whole is None or tokenizer.own_merges_suffice:
        return None  # own merges rebuild every token: the shortcut changes nothing
    return None if tokenizer.encode_bytes(piece.encode("utf-8", "surrogatepass")) == [whole] else whole


def count_merges(tokenizer: Tokenizer, pieces: Mapping[str, int]) -> MergeCounts:
    """Encode each distinct piece once, all in one chain (``merging.chain_merges``, the
    encoder's rule), and count every merge made and every id kept, weighted by the pieces'
    frequencies. Data shapes: ``owner[p]`` the piece of chain position p, ``freqs[w]`` its count.

    >>> from explorer import TrainerConfig
    >>> tok = Tokenizer(config=TrainerConfig(pretokenizer="whitespace", unit="char"), alphabet=["a", "b"], merges=[(0, 0), (2, 1)])
    >>> counts = count_merges(tok, {"aab": 3, "aa": 1})
    >>> dict(counts.alone), dict(counts.inside), dict(counts.twice)
    ({3: 3, 2: 1}, {(0, 2): 4, (2, 2097155): 3, (1, 2097155): 3}, {(0, 2): 4})
    """
    if tokenizer.events is not None:
        raise ConfigError(
            "scaffold tokens are read from a classical BPE tokenizer: this one was trained with PickyBPE, "
            "which removed its own (see its removals)"
        )
    chain = Chain()
    owner: list[int] = []
    freqs: list[int] = []
    alone: Counter[int] = Counter()
    for piece, freq in pieces.items():
        whole = _taken_whole(tokenizer, piece)
        if whole is not None:
            alone[whole] += freq
            continue
        ids = tokenizer.initial_ids(piece)
        chain.add(ids)
        owner.extend(repeat(len(freqs), len(ids)))
        freqs.append(freq)
    inside: Counter[tuple[int, int]] = Counter()
    twice: Counter[tuple[int, int]] = Counter()
    for packed, p, left, right in chain_merges(chain, packed_rules(tokenizer.merge_rules()).get):
        f = freqs[owner[p]]
        inside[left, packed] += f
        if right != left:
            inside[right, packed] += f
        else:
            twice[left, packed] += f
    for i, w in zip(chain.sym, owner):
        if i >= 0:  # -1: merged into its left neighbour
            alone[i] += freqs[w]
    return MergeCounts(alone, inside, twice)


def token_uses(tokenizer: Tokenizer, counts: MergeCounts) -> list[TokenUse]:
    """Each merged token (no alphabet symbol, special token or unk) that the counts keep or
    merge, by id, with the merges it fed by rank. alone_after sums, from the last merge back,
    the occurrences each later merge took (two for x + x).

    >>> from explorer import TrainerConfig
    >>> tok = Tokenizer(config=TrainerConfig(pretokenizer="whitespace", unit="char"), alphabet=["a", "b"], merges=[(0, 0), (2, 1), (2, 2)])
    >>> token_uses(tok, count_merges(tok, {"aab": 3, "aa": 1, "aaaa": 2}))
    [TokenUse(id=2, alone=1, feeds=(Feed(parent=3, rank=1, inside=3, alone_after=5), Feed(parent=4, rank=2, inside=2, alone_after=1))), TokenUse(id=3, alone=3, feeds=()), TokenUse(id=4, alone=2, feeds=())]
    """
    fed: dict[int, list[int]] = {}
    for x, packed in counts.inside:
        fed.setdefault(x, []).append(packed)
    out: list[TokenUse] = []
    for x in sorted(set(counts.alone) | set(fed)):
        if x >= len(tokenizer) or tokenizer.is_special(x) or tokenizer.merge_rank(x) is None:
            continue
        left = counts.alone[x]
        feeds: list[Feed] = []
        for packed in sorted(fed.get(x, ()), reverse=True):
            n = counts.inside[x, packed]
            feeds.append(Feed(packed & ID_MASK, packed >> ID_BITS, n, left))
            left += n + counts.twice[x, packed]
        out.append(TokenUse(x, counts.alone[x], tuple(reversed(feeds))))
    return out


def is_scaffold(use: TokenUse, tau: float) -> bool:
    """Whether some merge the token fed left it fewer than τ times its merges there:
    alone_after < τ · inside, i.e. IoS > 1 / (1 + τ) (PickyBPE removes it).

    >>> use = TokenUse(9012, 2, (Feed(9530, 9274, 412, 2),))
    >>> is_scaffold(use, 0.1), is_scaffold(use, 0.0), is_scaffold(use, 2 / 412)
    (True, False, False)
    """
    return any(picky.is_scaffold(f.alone_after, f.inside, tau) for f in use.feeds)


def _check_tau(tau: float) -> float:
    if isinstance(tau, bool) or not isinstance(tau, int | float) or not math.isfinite(tau) or tau < 0:
        raise ConfigError(f"τ is a number of at least 0 (standalone count under τ × count inside), not {tau!r}")
    return float(tau)


def scaffold(
    tokenizer: Tokenizer, text_or_pieces: str | Mapping[str, int], *, tau: float = DEFAULT_TAU
) -> ScaffoldReport:
    """The merged tokens a text uses and merges, and those that are scaffold under τ, from one
    encoding of the text (its distinct pieces, each once; ``text_or_pieces`` is a text or the
    pieces with their counts, ``evaluate.piece_counts``). Any tokenizer: trained, bundled or
    imported.

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char")
    >>> tok = Tokenizer(config=cfg, alphabet=list("Kentucky"), merges=[(1, 2), (6, 7), (8, 3), (10, 4), (11, 5), (12, 9), (0, 13)])
    >>> tok.tokens(tok.merged_ids)
    ['en', 'ky', 'ent', 'entu', 'entuc', 'entucky', 'Kentucky']
    >>> report = scaffold(tok, "Kentucky " * 412 + "entucky entucky ten")
    >>> [(tok.id_to_token(u.id), u.alone, round(u.ios, 3)) for u in report.scaffold]
    [('ky', 0, 1.0), ('ent', 0, 1.0), ('entu', 0, 1.0), ('entuc', 0, 1.0), ('en', 1, 0.998), ('entucky', 2, 0.995)]
    >>> report.tokens, round(report.threshold, 3), [tok.id_to_token(u.id) for u in report.uses if u not in report.scaffold]
    (416, 0.909, ['Kentucky'])
    >>> describe(tok, report.scaffold[-1])
    'entucky → Kentucky: used alone 2 times, inside Kentucky 412 times'
    """
    tau = _check_tau(tau)
    counts = count_merges(tokenizer, _pieces(tokenizer, text_or_pieces))
    uses = token_uses(tokenizer, counts)
    picked = sorted((u for u in uses if is_scaffold(u, tau)), key=lambda u: (-u.ios, -u.inside, u.id))
    return ScaffoldReport(tau, counts.alone.total(), tuple(uses), tuple(picked))


def describe(
    tokenizer: Tokenizer, use: TokenUse, *, show: Callable[[int], str] | None = None, limit: int | None = None
) -> str:
    """One line for a token: the longer tokens it fed, how often it stood alone and how often
    each merge took it (most first; the first ``limit`` of them, then how many more); tokens
    shown by ``show`` (their text by default).

    >>> from explorer import TrainerConfig
    >>> tok = Tokenizer(config=TrainerConfig(pretokenizer="whitespace", unit="char"), alphabet=["a", "b"], merges=[(0, 1), (2, 0), (2, 1)])
    >>> use = TokenUse(2, 1, (Feed(3, 1, 5, 6), Feed(4, 2, 9, 1)))
    >>> describe(tok, use)
    'ab → abb, aba: used alone 1 time, inside abb 9 times, inside aba 5 times'
    >>> describe(tok, use, show=lambda i: f"<{tok.id_to_token(i)}>", limit=1)
    '<ab> → <abb> and 1 more: used alone 1 time, inside <abb> 9 times, and 5 times inside 1 more'
    """
    name = show or (lambda i: token_surface(tokenizer, i))
    feeds = sorted(use.feeds, key=lambda f: (-f.inside, f.rank))
    shown, rest = feeds[:limit], feeds[len(feeds) if limit is None else limit :]
    parents = ", ".join(name(f.parent) for f in shown)
    parts = [f"used alone {_times(use.alone)}", *(f"inside {name(f.parent)} {_times(f.inside)}" for f in shown)]
    if rest:
        parents += f" and {len(rest):,} more"
        parts.append(f"and {_times(sum(f.inside for f in rest))} inside {len(rest):,} more")
    return f"{name(use.id)} → {parents}: " + ", ".join(parts)


def _times(n: int) -> str:
    return f"{n:,} time" if n == 1 else f"{n:,} times"
