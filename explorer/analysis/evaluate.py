"""Evaluation: what a tokenizer makes of a text, and how that changes merge by merge.

``evaluate`` gives the counts the tokenization literature compares: bytes and characters per
token, and fertility, tokens per (whitespace) word (Rust et al. 2021). ``replay`` encodes a
text with every truncation of a tokenizer at once: the token count after 0, 1, ..., K merges,
so a held-out compression curve over 5,000 merges costs about one encode, not 5,000.

The replay is the encoder's own rule run over the whole corpus together. Data shapes, as in the
trainer (positions index flat arrays over the distinct pieces):

    sym[p]  token id at position p, -1 once merged into its left neighbour
    nxt[p], prv[p]  the live neighbours in the same piece, -1 at its ends
    heap    (rank, new id, p): the pair starting at p merges at that rank (stale entries skipped)

Encoding one piece merges the lowest-ranked pair, leftmost first, until none is left. Popping
the heap in (rank, position) order does exactly that in every piece at once, and a piece never
sees a pair of a rank below the one being merged except when a merge makes one (a split that
tiktoken's rules rank lower): that pair is popped next, as the encoder would. So when the heap
first reaches rank k, every piece is what ``tokenizer.truncate(k)`` makes of it.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..bpe.tokenizer import Tokenizer

__all__ = ["Evaluation", "evaluate", "evaluate_ids", "piece_counts", "replay", "curve", "curve_points"]


@dataclass(frozen=True)
class Evaluation:
    """Counts for one text under one tokenizer; the ratios are derived (None when undefined)."""

    bytes: int  # UTF-8 bytes of the text
    chars: int  # code points
    words: int  # whitespace-separated words
    tokens: int
    unk: int  # tokens that are the unknown token

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
        """The CLI's JSON fields (without "file"), in their order.

        >>> Evaluation(bytes=10, chars=8, words=2, tokens=4, unk=0).as_dict()
        {'bytes': 10, 'chars': 8, 'words': 2, 'tokens': 4, 'unk': 0, 'bytes_per_token': 2.5, 'chars_per_token': 2.0, 'tokens_per_word': 2.0}
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
        }


def evaluate(tokenizer: Tokenizer, text: str) -> Evaluation:
    """Encode ``text`` (special-token text as plain text, as tiktoken's ``encode_ordinary``)
    and count.

    >>> from explorer import load_pretrained
    >>> e = evaluate(load_pretrained("gpt2"), "Hello world, hello!")
    >>> e.tokens, e.words, round(e.bytes_per_token, 2), e.tokens_per_word
    (5, 3, 3.8, 1.6666666666666667)
    """
    return evaluate_ids(tokenizer, text, tokenizer.encode(text))


def evaluate_ids(tokenizer: Tokenizer, text: str, ids: Sequence[int]) -> Evaluation:
    """The counts of ``evaluate`` from an encoding already made (``ids`` is
    ``tokenizer.encode(text)``), for a caller that also needs the ids for something else.

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> ids = tok.encode("héllo wörld")
    >>> len(ids), evaluate_ids(tok, "héllo wörld", ids)
    (6, Evaluation(bytes=13, chars=11, words=2, tokens=6, unk=0))
    """
    return Evaluation(
        bytes=len(text.encode("utf-8", "surrogatepass")),
        chars=len(text),
        words=len(text.split()),
        tokens=len(ids),
        unk=ids.count(tokenizer.unk_id),
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
    rules = tokenizer.merge_rules()
    n_merges = tokenizer.num_merges
    sym: list[int] = []
    nxt: list[int] = []
    prv: list[int] = []
    wof: list[int] = []
    freqs: list[int] = []
    live: list[int] = []  # tokens left in each piece
    heap: list[tuple[int, int, int]] = []
    wholes: dict[int, int] = {}  # piece index -> its id, for pieces that are themselves tokens
    total = 0
    for wi, (piece, freq) in enumerate(pieces.items()):
        ids = tokenizer.initial_ids(piece)
        base, n = len(sym), len(ids)
        sym.extend(ids)
        nxt.extend(range(base + 1, base + n))
        if n:  # an empty piece has no positions
            nxt.append(-1)
            prv.append(-1)
        prv.extend(range(base, base + n - 1))
        wof.extend([wi] * n)
        freqs.append(freq)
        live.append(n)
        total += n * freq
        for p in range(base, base + n - 1):
            rule = rules.get((ids[p - base], ids[p - base + 1]))
            if rule is not None:
                heap.append((rule[0], rule[1], p))
        whole = tokenizer.whole_token(piece) if n > 1 else None
        if whole is not None:
            # tiktoken takes a piece that is a token whole: from that token's rank on, one token
            wholes[wi] = whole
            heap.append((tokenizer.merge_rank(whole), -1 - wi, base))
    heapq.heapify(heap)

    out = [total]
    pop, push, get = heapq.heappop, heapq.heappush, rules.get
    while heap:
        rank, new, p = pop(heap)
        if rank >= len(out):  # every merge below this rank is done: the counts up to it are final
            out.extend([total] * (min(rank, n_merges) + 1 - len(out)))
        if new < 0:  # the whole-piece rule
            wi = -1 - new
            if live[wi] > 1:
                total -= (live[wi] - 1) * freqs[wi]
                live[wi] = 1
                q = nxt[p]
                while q >= 0:
                    sym[q], q = -1, nxt[q]
                sym[p], nxt[p] = wholes[wi], -1
            continue
        a = sym[p]
        q = nxt[p] if a >= 0 else -1
        if q < 0 or get((a, sym[q])) != (rank, new):
            continue  # stale: this pair was merged away or changed
        r = nxt[q]
        sym[p], sym[q], nxt[p] = new, -1, r
        wi = wof[p]
        total -= freqs[wi]
        live[wi] -= 1
        if r >= 0:
            prv[r] = p
            rule = get((new, sym[r]))
            if rule is not None:
                push(heap, (rule[0], rule[1], p))
        left = prv[p]
        if left >= 0:
            rule = get((sym[left], new))
            if rule is not None:
                push(heap, (rule[0], rule[1], left))
    out.extend([total] * (n_merges + 1 - len(out)))
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
