"""Evaluation: what a tokenizer makes of a text, and how that changes merge by merge.

``evaluate`` gives the counts the tokenization literature compares: bytes and characters per
token, fertility, tokens per (whitespace) word (Rust et al. 2021), the Rényi efficiency of
the tokens' distribution (Zouhar et al. 2023, ``fairness.renyi_efficiency``), and, when asked,
the fewest tokens the vocabulary allows (``shortest.shortest_count``: the optimality gap's other
end). ``replay`` encodes a text with every truncation of a tokenizer at once: the token count after 0, 1, ..., K merges,
so a held-out compression curve over 5,000 merges costs about one encode, not 5,000.

The replay is the encoder's own rule (``merging.chain_merges``) run over every distinct piece
of the corpus at once. Popping the heap in (rank, position) order merges each piece as the
encoder would, and a piece never sees a pair of a rank below the one being merged except when a
merge makes one (a split that tiktoken's rules rank lower): that pair is popped next, as the
encoder would. So when the merges first reach rank k, every piece is what
``tokenizer.truncate(k)`` makes of it, and the count of tokens then is ``out[k]``. Data shapes::

    chain   every piece's ids, as linked lists over flat positions (``merging.Chain``)
    owner[p]        the piece that position p belongs to
    freqs[w], live[w]   piece w's count in the text and its tokens now (freq 0 once it is whole)
    wholes  [(rank, w), ...]: pieces that are themselves tokens, taken whole from that rank on
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import mul

from ..bpe.merging import ID_BITS, Chain, chain_merges, pack, packed_rules
from ..bpe.picky import EventPlan
from ..bpe.picky import replay as picky_replay
from ..bpe.tokenizer import Tokenizer
from .fairness import RENYI_ALPHA, renyi_efficiency
from .shortest import shortest_count

__all__ = ["Evaluation", "evaluate", "evaluate_ids", "piece_counts", "replay", "curve", "curve_points"]


@dataclass(frozen=True)
class Evaluation:
    """Counts for one text under one tokenizer; the ratios are derived (None when undefined).
    The Rényi efficiency needs the encoding itself: ``evaluate`` gives it (None when the text has
    fewer than two distinct tokens, or when an Evaluation is made by hand); so does the fewest
    tokens the vocabulary allows (None when not asked for)."""

    bytes: int  # UTF-8 bytes of the text
    chars: int  # code points
    words: int  # whitespace-separated words
    tokens: int
    unk: int  # tokens that are the unknown token
    renyi_efficiency: float | None = None  # of the tokens' unigram distribution, at the alpha asked
    shortest_tokens: int | None = None  # each piece in the fewest tokens (shortest.shortest_count)

    @property
    def bytes_per_token(self) -> float | None:
        return self.bytes / self.tokens if self.tokens else None

    @property
    def chars_per_token(self) -> float | None:
        return self.chars / self.tokens if self.tokens else None

    @property
    def tokens_per_word(self) -> float | None:
        """Fertility (Rust et al. 2021)."""
        return self.tokens / self.words if self.words else None

    def as_dict(self) -> dict[str, int | float | None]:
        """The CLI's JSON fields (without "file"), in their order: a field added later comes last.

        >>> Evaluation(bytes=10, chars=8, words=2, tokens=4, unk=0, renyi_efficiency=0.75, shortest_tokens=3).as_dict()
        {'bytes': 10, 'chars': 8, 'words': 2, 'tokens': 4, 'unk': 0, 'bytes_per_token': 2.5, 'chars_per_token': 2.0, 'tokens_per_word': 2.0, 'renyi_efficiency': 0.75, 'shortest_tokens': 3}
        """
        return {
            "bytes": self.bytes,
            "chars": self.chars,
            "words": self.words,
            "tokens": self.tokens,
            "unk": self.unk,
            "bytes_per_token": self.bytes_per_token,
            "chars_per_token": self.chars_per_token,
            "tokens_per_word": self.tokens_per_word,
            "renyi_efficiency": self.renyi_efficiency,
            "shortest_tokens": self.shortest_tokens,
        }


def evaluate(tokenizer: Tokenizer, text: str, *, alpha: float = RENYI_ALPHA, shortest: bool = False) -> Evaluation:
    """Encode ``text`` (special-token text as plain text, as tiktoken's ``encode_ordinary``)
    and count; the Rényi efficiency is of order ``alpha``. ``shortest=True`` adds the fewest
    tokens (the CLI asks for them): a second pass over the text's distinct pieces, about twice
    an encode's time, that the pages comparing many texts do without.

    >>> from explorer import load_pretrained
    >>> e = evaluate(load_pretrained("gpt2"), "Hello world, hello!")
    >>> e.tokens, e.words, round(e.bytes_per_token, 2), e.tokens_per_word, e.renyi_efficiency
    (5, 3, 3.8, 1.6666666666666667, 1.0)
    >>> e = evaluate(load_pretrained("gpt2"), " Caius Marcius", shortest=True)
    >>> e.tokens, e.shortest_tokens, evaluate(load_pretrained("gpt2"), "x").shortest_tokens
    (5, 4, None)
    """
    count = shortest_count(tokenizer, text) if shortest else None
    return evaluate_ids(tokenizer, text, tokenizer.encode(text), alpha=alpha, shortest_tokens=count)


def evaluate_ids(
    tokenizer: Tokenizer,
    text: str,
    ids: Sequence[int],
    *,
    alpha: float = RENYI_ALPHA,
    shortest_tokens: int | None = None,
) -> Evaluation:
    """The counts of ``evaluate`` from an encoding already made (``ids`` is
    ``tokenizer.encode(text)``), for a caller that also needs the ids for something else; the
    fewest tokens are the caller's to give (``shortest.shortest_count``), or None.

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> ids = tok.encode("héllo héllo")
    >>> len(ids), evaluate_ids(tok, "héllo héllo", ids, alpha=1)
    (6, Evaluation(bytes=13, chars=11, words=2, tokens=6, unk=0, renyi_efficiency=0.9591479170272448, shortest_tokens=None))
    """
    return Evaluation(
        bytes=len(text.encode("utf-8", "surrogatepass")),
        chars=len(text),
        words=len(text.split()),
        tokens=len(ids),
        unk=ids.count(tokenizer.unk_id),
        renyi_efficiency=renyi_efficiency(ids, alpha=alpha),
        shortest_tokens=shortest_tokens,
    )


def piece_counts(tokenizer: Tokenizer, texts: str | Iterable[str]) -> Counter[str]:
    """Each distinct piece the tokenizer's pre-tokenizer cuts from the texts, with its count.

    >>> from explorer import load_pretrained
    >>> piece_counts(load_pretrained("gpt2"), "the cat the")
    Counter({'the': 1, ' cat': 1, ' the': 1})
    """
    counts: Counter[str] = Counter()
    for text in [texts] if isinstance(texts, str) else texts:
        counts.update(tokenizer.piece_texts(text))
    return counts


def _piece_chain(tokenizer: Tokenizer, pieces: Mapping[str, int]) -> tuple[Chain, list[int], list[int], list[int]]:
    """Every distinct piece's base ids in one chain: (chain, owner[p] the piece of position p,
    freqs[w] piece w's count, lengths[w] its base symbols).

    >>> from explorer import TrainerConfig
    >>> tok = Tokenizer(config=TrainerConfig(pretokenizer="whitespace", unit="char"), alphabet=["a", "b"], merges=[])
    >>> chain, owner, freqs, lengths = _piece_chain(tok, {"ab": 2, "b": 1})
    >>> chain.sym, owner, freqs, lengths
    ([0, 1, 1], [0, 0, 1], [2, 1], [2, 1])
    """
    chain = Chain()
    owner: list[int] = []
    freqs: list[int] = []
    lengths: list[int] = []
    for w, (piece, freq) in enumerate(pieces.items()):
        ids = tokenizer.initial_ids(piece)
        chain.add(ids)
        owner.extend(repeat(w, len(ids)))
        freqs.append(freq)
        lengths.append(len(ids))
    return chain, owner, freqs, lengths


def replay(tokenizer: Tokenizer, pieces: Mapping[str, int]) -> list[int]:
    """``out[k]`` = the number of tokens ``tokenizer.truncate(k)`` makes of the pieces (each
    counted with its frequency), for every k from 0 to the tokenizer's number of merges.

    >>> from explorer import TrainerConfig
    >>> tok = Tokenizer(config=TrainerConfig(pretokenizer="whitespace", unit="char"), alphabet=["a", "b"], merges=[(0, 0), (2, 1), (0, 1)])
    >>> replay(tok, {"aab": 2, "ab": 1, "c": 1})
    [9, 7, 5, 4]
    >>> [len(tok.truncate(k).encode("aab aab ab c")) for k in range(4)]
    [9, 7, 5, 4]
    """
    if tokenizer.events is not None:
        return _replay_events(tokenizer, pieces, tokenizer.events)
    n_merges = tokenizer.num_merges
    pieces_chain, owner, freqs, live = _piece_chain(tokenizer, pieces)
    total = sum(map(mul, live, freqs))
    wholes: list[tuple[int, int]] = []
    for w, piece in enumerate(pieces):
        whole = tokenizer.whole_token(piece) if live[w] > 1 else None
        rank = None if whole is None else tokenizer.merge_rank(whole)
        if rank is not None:
            wholes.append((rank, w))
    wholes.append((n_merges + 1, -1))  # past every step: never taken
    wholes.sort(reverse=True)  # lowest rank last, popped first

    out = [total]
    next_whole = wholes[-1][0]
    # one step past every rank settles the counts still open and the wholes not yet taken
    steps = chain_merges(pieces_chain, packed_rules(tokenizer.merge_rules()).get)
    for packed, p, _, _ in chain(steps, [(pack(n_merges, 0), -1, -1, -1)]):
        rank = packed >> ID_BITS
        while rank >= next_whole:
            # tiktoken takes a piece that is a token whole: one token from that token's rank on
            at, w = wholes.pop()
            out.extend([total] * (at + 1 - len(out)))
            total -= (live[w] - 1) * freqs[w]
            freqs[w] = 0  # what else merges in it changes nothing
            next_whole = wholes[-1][0]
        if rank >= len(out):  # every merge below this rank is done: the counts up to it are final
            out.extend([total] * (rank + 1 - len(out)))
        if p >= 0:
            w = owner[p]
            total -= freqs[w]
            live[w] -= 1
    return out


def _replay_events(tokenizer: Tokenizer, pieces: Mapping[str, int], plan: EventPlan) -> list[int]:
    """``replay`` for a PickyBPE tokenizer: its merges and removals made on every piece at once
    (``picky.replay``); a merge takes one token off a piece, a removal adds its parts less one,
    and ``out[k]`` is the count once the removals after merge k are made too.

    >>> from explorer import TrainerConfig, Vocab
    >>> vocab = Vocab(alphabet=("a", "b"), merges=((0, 1), (2, 0)), removals=((2, 2),))
    >>> tok = Tokenizer(pipeline=TrainerConfig(pretokenizer="whitespace", unit="char").pipeline, vocab=vocab)
    >>> replay(tok, {"abab": 2, "aba": 1}), [len(tok.truncate(k).encode("abab abab aba")) for k in range(3)]
    ([11, 6, 9], [11, 6, 9])
    """
    pieces_chain, owner, freqs, lengths = _piece_chain(tokenizer, pieces)
    total = sum(map(mul, lengths, freqs))
    out = [total]
    after = plan.after
    for t, kind, p, made in picky_replay(pieces_chain, plan):
        k = after[t]
        if k > len(out):  # the events up to merge k - 1 are all made: their counts are final
            out.extend([total] * (k - len(out)))
        # made: (left, right, new) for a merge, (token, *parts) for a removal
        total += -freqs[owner[p]] if kind == "merge" else (len(made) - 2) * freqs[owner[p]]
    out.extend([total] * (tokenizer.num_merges + 1 - len(out)))
    return out


def curve_points(n_merges: int, points: int) -> list[int]:
    """About ``points`` merge counts from 0 to ``n_merges``, evenly spaced, both ends included.

    >>> curve_points(10, 5), curve_points(3, 10), curve_points(0, 4)
    ([0, 2, 5, 8, 10], [0, 1, 2, 3], [0])
    """
    if points < 2 or n_merges == 0:
        return [0] if n_merges == 0 or points < 1 else [n_merges]
    return sorted({round(i * n_merges / (points - 1)) for i in range(points)})


def curve(tokenizer: Tokenizer, texts: str | Iterable[str], points: int) -> list[tuple[int, int]]:
    """(merges k, tokens) at about ``points`` evenly spaced k: the compression curve of a text
    under the tokenizer truncated to k merges, from one replay."""
    counts = replay(tokenizer, piece_counts(tokenizer, texts))
    return [(k, counts[k]) for k in curve_points(tokenizer.num_merges, points)]
