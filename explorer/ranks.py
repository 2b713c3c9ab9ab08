"""Merges from ranks: a ``.tiktoken`` table lists tokens by rank, not the merges that made them.

A token of rank r (longer than one byte) was made by one merge of two tokens of lower rank.
Which two: run rank-based BPE on the token's own bytes, using only the ranks below r; it stops
at exactly two parts, and those are the pair. With the merges recovered, a table's tokenizer is
an ordinary one: its lineage, its encode trace and "the tokenizer as of merge k" work as for a
trained tokenizer. It encodes with tiktoken's rules (``rules="tiktoken"``), so its ids are
tiktoken's by construction.

Data shapes::

    tokens   [b"!", b'"', ..., b"\\xff", b" t", b" a", ...]   bytes by rank; ranks 0-255 are the bytes
    merges   [(220, 83), (220, 64), ...]                       (left rank, right rank) for ranks 256...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .config import TrainerConfig
from .errors import FormatError
from .tokenizer import Tokenizer
from .units import bytes_to_display

__all__ = ["bpe_parts", "recover_merges", "tokenizer_from_ranks"]


def bpe_parts(token: bytes, ranks: Mapping[bytes, int], max_rank: int) -> list[bytes]:
    """Rank-based BPE on one byte string with only the ranks below ``max_rank``: repeatedly merge
    the neighbours whose concatenation has the lowest rank, leftmost first.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
    >>> bpe_parts(b"abc", ranks, 5), bpe_parts(b"abc", ranks, 4)
    ([b'a', b'bc'], [b'a', b'bc'])
    >>> bpe_parts(b"abc", ranks, 3)
    [b'a', b'b', b'c']
    """
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 1:
        best, at = max_rank, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best:
                best, at = r, i
        if at < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def recover_merges(tokens: Sequence[bytes]) -> list[tuple[int, int]]:
    """The merge that made each token of rank 256 and up, as (left rank, right rank).

    Most tokens split into two lower-ranked tokens in one way only, and then that split is
    the merge; the others run :func:`bpe_parts`.

    >>> singles = [bytes([b]) for b in range(256)]
    >>> recover_merges(singles + [b"bc", b"ab", b"abc", b"abcabc"])
    [(98, 99), (97, 98), (97, 256), (258, 258)]
    """
    if len(tokens) < 256 or any(len(t) != 1 for t in tokens[:256]) or len(set(tokens[:256])) != 256:
        raise FormatError("a rank table must list the 256 single bytes first (ranks 0-255)")
    rank = {t: r for r, t in enumerate(tokens)}
    if len(rank) != len(tokens):
        raise FormatError("the rank table lists a token twice")
    merges: list[tuple[int, int]] = []
    for r in range(256, len(tokens)):
        token = tokens[r]
        found: tuple[int, int] | None = None
        several = False
        for i in range(1, len(token)):
            a = rank.get(token[:i], r)
            if a < r:
                b = rank.get(token[i:], r)
                if b < r:
                    if found is not None:
                        several = True
                        break
                    found = (a, b)
        if several:
            parts = bpe_parts(token, rank, r)
            if len(parts) != 2:
                raise FormatError(f"token of rank {r} ({token!r}) is not one merge of two lower-ranked tokens")
            found = (rank[parts[0]], rank[parts[1]])
        if found is None:
            raise FormatError(f"token of rank {r} ({token!r}) cannot be split into two lower-ranked tokens")
        merges.append(found)
    return merges


def tokenizer_from_ranks(
    tokens: Sequence[bytes], *, pretokenizer: str, pattern: str | None = None,
    special_ids: Mapping[str, int] | None = None, leading: Sequence[str] = (),
) -> Tokenizer:
    """A byte-level tokenizer whose ids are the table's ranks, with recovered merges and
    tiktoken's encoding rules. ``leading`` special tokens take the ids before the table's
    (a table whose ranks start at ``len(leading)``); ``special_ids`` are those past it.

    >>> tok = tokenizer_from_ranks([bytes([b]) for b in range(256)] + [b"ab", b"abab"], pretokenizer="none")
    >>> tok.encode("ababab"), tok.tokens(tok.merges[1])
    ([257, 256], ['ab', 'ab'])
    """
    shift = len(leading)
    merges = [(a + shift, b + shift) for a, b in recover_merges(tokens)]
    config = TrainerConfig(
        pretokenizer=pretokenizer, pattern=pattern, unit="byte", alphabet="full-bytes",
        special_tokens=tuple(leading), vocab_size=None, num_merges=None,
    )
    alphabet = [bytes_to_display(t) for t in tokens[:256]]
    tok = Tokenizer(config=config, alphabet=alphabet, merges=merges, special_ids=special_ids, rules="tiktoken")
    if tok.merged_ids != list(range(256 + shift, len(tokens) + shift)):  # pragma: no cover - unique tokens make new ids
        raise FormatError("the recovered merges do not give the table's ranks as ids")
    return tok
