"""Merges from ranks: a ``.tiktoken`` table lists tokens by rank, not the merges that made them.

A token of rank r (longer than one byte) was made by one merge of two tokens of lower rank.
Which two: run rank-based BPE on the token's own bytes, using only the ranks below r; it stops
at exactly two parts, and those are the pair. With the merges recovered, a table's tokenizer is
an ordinary one: its lineage, its encode trace and "the tokenizer as of merge k" work as for a
trained tokenizer. It encodes with tiktoken's rules (``rules="tiktoken"``), so its ids are
tiktoken's by construction.

Recovering is slow for a big table (cl100k_base: about a second), so the bundled tables ship
their merges beside them, recovered once (``merges_file``) and read back at load
(``read_merges_file``); the vocabulary is then derived from the merges alone. Any other rank
file's tokenizer (``tokenizer_from_ranks``) holds the file's tokens, its source of truth, in a
``RankVocab``, and recovers their merges only when something asks for them (lineage, exports,
"the tokenizer as of merge k", scans): encoding needs only the tokens' ranks. What the recovery
would refuse is refused at load all the same (``first_unsplit``, a cheap test of each token).

Data shapes::

    tokens       [b"!", b'"', ..., b"\\xff", b" t", b" a", ...]   bytes by rank; ranks 0-255 are the bytes
    merges       [(220, 83), (220, 64), ...]                       (left rank, right rank) for ranks 256...
    merges file  {"table": "cl100k_base.tiktoken sha256:2239...",   JSON, one merge per line
                  "bytes": [33, 34, ..., 255],                     the byte of ranks 0-255
                  "merges": [                                      flat: rank 256 + k is merges[2k] + merges[2k + 1]
                  220, 220,
                  ...
                  ]}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from itertools import compress, repeat
from operator import itemgetter, lt, not_
from typing import AnyStr, cast

from ..errors import FormatError
from ..stages.pipeline import Pipeline
from ..stages.units import byte_alphabet, bytes_to_display, bytes_to_displays
from .merging import lowest_first
from .tokenizer import Tokenizer
from .vocab import Vocab

__all__ = [
    "RankVocab",
    "bpe_parts",
    "first_unsplit",
    "merges_file",
    "read_merges_file",
    "recover_merges",
    "tokenizer_from_merges",
    "tokenizer_from_ranks",
]


def bpe_parts(token: AnyStr, ranks: Mapping[AnyStr, int], max_rank: int) -> list[AnyStr]:
    """Rank-based BPE on one byte string with only the ranks below ``max_rank``: repeatedly merge
    the neighbours whose concatenation has the lowest rank, leftmost first (the encoder's rule,
    ``merging.lowest_first`` on bytes joined: here a rank is all there is to a merge). A byte-level
    display string (one character per byte) merges as its bytes do.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4, b"abc": 5}
    >>> bpe_parts(b"abc", ranks, 5), bpe_parts(b"abc", ranks, 4)
    ([b'a', b'bc'], [b'a', b'bc'])
    >>> bpe_parts(b"abc", ranks, 3)
    [b'a', b'b', b'c']
    """
    return lowest_first([token[i : i + 1] for i in range(len(token))], ranks.get, joined=True, below=max_rank)


def recover_merges(tokens: Sequence[AnyStr], *, strict: bool = True) -> list[tuple[int, int]]:
    """The merge that made each token of rank 256 and up, as (left rank, right rank). The
    tokens are bytes, or their byte-level display strings (the same merges).

    Most tokens split into two lower-ranked tokens in one way only, and then that split is
    the merge; the others run :func:`bpe_parts`.

    A table need not be made by merges: tiktoken merges any two neighbours whose bytes joined
    are a token, lowest rank first, so a token may be one that merging its own bytes never
    reaches (Llama 3's ``b"ektedir"``: its bytes merge into three parts below its rank).
    ``strict`` refuses such a token; otherwise it is recorded by its first split into two
    lower-ranked tokens: a rule tiktoken does apply (those two neighbours merge into it), not
    how its own bytes are merged, which :func:`own_merge` tells.

    >>> singles = [bytes([b]) for b in range(256)]
    >>> recover_merges(singles + [b"bc", b"ab", b"abc", b"abcabc"])
    [(98, 99), (97, 98), (97, 256), (258, 258)]
    >>> table = singles + [b"ab", b"de", b"cd", b"abcd", b"abcde"]
    >>> recover_merges(table, strict=False)[-1]  # abcd + e, though "abcde"'s bytes merge to ab, c, de
    (259, 101)
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
            if len(parts) == 2:
                found = (rank[parts[0]], rank[parts[1]])
            elif strict:
                raise FormatError(f"token of rank {r} ({token!r}) is not one merge of two lower-ranked tokens")
            else:
                found = _first_split(token, rank, r)
        if found is None:
            raise FormatError(
                f"token of rank {r} ({token!r}) cannot be split into two lower-ranked tokens: tiktoken takes "
                "it only as a whole piece, and a table with such a token cannot be opened here"
            )
        merges.append(found)
    return merges


def _first_split(token: AnyStr, rank: Mapping[AnyStr, int], r: int) -> tuple[int, int]:
    """The first split of a token into two tokens of rank below ``r`` (one exists)."""
    for i in range(1, len(token)):
        a, b = rank.get(token[:i], r), rank.get(token[i:], r)
        if a < r and b < r:
            return a, b
    raise AssertionError("a token of several splits has one")  # pragma: no cover


def first_unsplit(tokens: Sequence[AnyStr], rank: Mapping[AnyStr, int]) -> int | None:
    """The lowest rank from 256 whose token splits into no two tokens of lower rank (the token
    ``recover_merges`` refuses whatever ``strict`` says), else None. Each split point is tried
    for all the tokens not split yet at once, the slices and look-ups mapped in C: first the
    splits that cut off the last or the first byte (a byte's rank is below every merged token's:
    one look-up each, and most tokens split so), then those that cut off the last 2, 3, ...
    bytes, the right part looked up only where the left one is a token of lower rank. Bytes
    are looked up faster than their display strings (half the bytes to hash).

    >>> table = [bytes([b]) for b in range(256)] + [b"ab", b"cd", b"abcd", b"xyz", b"bc"]
    >>> rank = {t: r for r, t in enumerate(table)}
    >>> first_unsplit(table, rank), first_unsplit(table[:259], rank)
    (259, None)
    >>> table = [bytes([b]) for b in range(256)] + [b"ab", b"ef", b"abcdef", b"xyz"]
    >>> first_unsplit(table, {t: r for r, t in enumerate(table)})  # "abcdef", though "xyz" is shorter
    258
    >>> table = [bytes([b]) for b in range(256)] + [b"ab", b"cd", b"abcd", b"ef", b"abcdef"]
    >>> first_unsplit(table, {t: r for r, t in enumerate(table)})  # "abcd" + "ef"
    """
    end = len(tokens)
    rank_or_end = cast(Callable[[object, int], int], rank.get)  # a part that is no token: ``end``

    def lower(toks: Iterable[AnyStr], ranks: Iterable[int], cut: slice) -> Iterator[bool]:
        """Whether the part ``cut`` of each token (of rank ``ranks``) is a token of lower rank."""
        return map(lt, map(rank_or_end, map(itemgetter(cut), toks), repeat(end)), ranks)

    # the tokens not split yet and their ranks, side by side (filtered by the same masks)
    ranks: Sequence[int] = range(256, end)
    toks: Sequence[AnyStr] = tokens[256:]
    for cut in (slice(None, -1), slice(1, None)):  # the other part is one byte
        keep = list(map(not_, lower(toks, ranks, cut)))
        ranks, toks = list(compress(ranks, keep)), list(compress(toks, keep))
    unsplit: list[int] = []
    k = 2
    while ranks:
        # the splits with both parts of 2 bytes or more are left: a token shorter than k + 2
        # has tried every one
        more = list(map(lt, repeat(k + 1), map(len, toks)))
        if not all(more):
            unsplit += compress(ranks, map(not_, more))
            ranks, toks = list(compress(ranks, more)), list(compress(toks, more))
        heads = list(lower(toks, ranks, slice(None, -k)))
        head_ranks = list(compress(ranks, heads))
        split = set(compress(head_ranks, lower(compress(toks, heads), head_ranks, slice(-k, None))))
        if split:
            keep = list(map(not_, map(split.__contains__, ranks)))
            ranks, toks = list(compress(ranks, keep)), list(compress(toks, keep))
        k += 1
    return min(unsplit, default=None)


def _check_table(tokens: Sequence[bytes], index: Mapping[bytes, int] | None = None) -> None:
    """The refusals of ``recover_merges(strict=False)``, in its order and its words, without
    recovering a merge. ``index``: each token's position, when the caller has built it (and
    found the tokens distinct).

    >>> singles = [bytes([b]) for b in range(256)]
    >>> _check_table(singles + [b"xyz"])
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: token of rank 256 (b'xyz') cannot be split into two lower-ranked tokens: tiktoken takes it only as a whole piece, and a table with such a token cannot be opened here
    """
    if len(tokens) < 256 or any(len(t) != 1 for t in tokens[:256]) or len(set(tokens[:256])) != 256:
        raise FormatError("a rank table must list the 256 single bytes first (ranks 0-255)")
    if index is None:
        index = dict(zip(tokens, range(len(tokens))))
        if len(index) != len(tokens):
            raise FormatError("the rank table lists a token twice")
    r = first_unsplit(tokens, index)
    if r is not None:
        raise FormatError(
            f"token of rank {r} ({tokens[r]!r}) cannot be split into two lower-ranked tokens: tiktoken takes "
            "it only as a whole piece, and a table with such a token cannot be opened here"
        )


class RankVocab(Vocab):
    """A rank table's vocabulary: the leading special tokens, then the table's tokens in rank
    order, as the file lists them (its source of truth); the merges are derived from the tokens
    when first asked for (``recover_merges(strict=False)``, a second for 100,000 tokens), as
    encoding with tiktoken's rules never asks. Equal to the ``Vocab`` of those merges, whose
    tokens and ids it has; its truncations are ordinary ones.

    >>> table = [bytes([b]) for b in range(256)] + [b"bc", b"bcbc"]
    >>> v = RankVocab.of_table(["<s>"], bytes_to_displays(table))
    >>> "merges" in vars(v), v.tokens[257:], v.merged_ids, v.merges, "merges" in vars(v)
    (False, ('bc', 'bcbc'), (257, 258), ((99, 100), (257, 257)), True)
    >>> v == Vocab(("<s>",), v.alphabet, ((99, 100), (257, 257))), v.truncate(1).tokens[257:]
    (True, ('bc',))
    """

    @classmethod
    def of_table(cls, leading: Sequence[str], texts: Sequence[str]) -> RankVocab | None:
        """The vocabulary of a checked table (``_check_table``: its tokens all distinct, so are
        their display strings ``texts``) behind ``leading`` special tokens; None when a special
        token is also one of its texts (the ``Vocab`` of its merges would give that token the
        special's id: the caller builds it, to say so)."""
        shift = len(leading)
        tokens = (*leading, *texts)
        ids = dict(zip(tokens, range(len(tokens))))
        if len(ids) != len(tokens):
            return None
        vocab = object.__new__(cls)
        derived = {
            "special_tokens": tuple(leading),
            "alphabet": tuple(texts[:256]),
            "reuse_ids": True,
            "removals": (),
            "tokens": tokens,
            "ids": ids,
            "merged_ids": tuple(range(shift + 256, len(tokens))),
            "n_special": shift,
            "n_base": shift + 256,
            "removal_parts": (),
            "removed": frozenset(),
        }
        vocab.__dict__.update(derived)  # frozen: the fields are set once, here
        return vocab

    @cached_property
    def merges(self) -> tuple[tuple[int, int], ...]:  # type: ignore[override]
        """The merge of each token past the bytes, recovered from the ranks on first use."""
        shift = self.n_special
        merges = recover_merges(self.tokens[shift:], strict=False)
        return tuple((a + shift, b + shift) for a, b in merges) if shift else tuple(merges)


def merges_file(tokens: Sequence[bytes], *, source: str) -> str:
    """A rank table's merges as a JSON document, one merge per line: ``table`` names the table
    they were recovered from (``source``), ``bytes`` the byte of each rank 0-255, ``merges``
    the two lower ranks whose tokens join into each rank from 256 on, flat (JSON's parser makes
    no list per merge).

    >>> singles = [bytes([b]) for b in range(256)]
    >>> text = merges_file(singles + [b"ab", b"abab"], source="t.tiktoken")
    >>> text.splitlines()[0], text.splitlines()[-3:]
    ('{"table": "t.tiktoken",', ['97, 98,', '256, 256', ']}'])
    """
    singles = ", ".join(str(t[0]) for t in tokens[:256])
    merges = ",\n".join(f"{a}, {b}" for a, b in recover_merges(tokens))
    return f'{{"table": {json.dumps(source)},\n"bytes": [{singles}],\n"merges": [\n{merges}\n]}}\n'


def read_merges_file(text: str, *, source: str, name: str = "merges file") -> tuple[list[bytes], list[tuple[int, int]]]:
    """``merges_file``'s text -> (the bytes of ranks 0-255, the merges of ranks 256 and up). Its
    ``table`` must be ``source``; that each merge's ranks are lower than its own is the
    tokenizer's check (it makes the tokens).

    >>> doc = {"table": "t", "bytes": list(range(255, -1, -1)), "merges": [0, 1, 256, 0]}
    >>> singles, merges = read_merges_file(json.dumps(doc), source="t")
    >>> singles[:2], merges
    ([b'\\xff', b'\\xfe'], [(0, 1), (256, 0)])
    >>> read_merges_file(json.dumps(doc | {"merges": [0, 1, 2]}), source="t")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merges file: 'merges' must be a flat list of whole numbers, two per merge
    """
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise FormatError(f"{name} is not valid JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("table") != source:
        raise FormatError(
            f"{name}: expected the merges of {source}, found those of "
            f"{doc.get('table') if isinstance(doc, dict) else None!r}"
        )
    alphabet, flat = doc.get("bytes"), doc.get("merges")
    if not (isinstance(alphabet, list) and {int} >= set(map(type, alphabet)) and sorted(alphabet) == list(range(256))):
        raise FormatError(f"{name}: 'bytes' must give each byte 0-255 once")
    if not (isinstance(flat, list) and len(flat) % 2 == 0 and {int} >= set(map(type, flat))):
        raise FormatError(f"{name}: 'merges' must be a flat list of whole numbers, two per merge")
    ranks = iter(flat)
    return [bytes([b]) for b in alphabet], list(zip(ranks, ranks))


def tokenizer_from_merges(
    singles: Sequence[bytes],
    merges: Sequence[tuple[int, int]],
    *,
    pretokenizer: str,
    pattern: str | None = None,
    special_ids: Mapping[str, int] | None = None,
    leading: Sequence[str] = (),
    own_merges_suffice: bool = False,
    blank_ids: Sequence[int] = (),
) -> Tokenizer:
    """A byte-level tokenizer of a rank table given by its 256 single bytes (in rank order) and
    its merges (rank 256 + k = merges[k], two lower ranks), with tiktoken's encoding rules: its
    ids are the ranks. ``leading`` special tokens take the ids before the table's (a table whose
    ranks start at ``len(leading)``); ``special_ids`` are those past it. ``own_merges_suffice``
    and ``blank_ids`` (ranks of the empty token, past the others): see ``Tokenizer``.

    >>> singles = [bytes([b]) for b in range(256)]
    >>> tok = tokenizer_from_merges(singles, [(97, 98), (256, 256)], pretokenizer="none")
    >>> tok.encode("ababab"), tok.vocab[256:]
    ([257, 256], ('ab', 'abab'))
    >>> tokenizer_from_merges(singles, [(97, 98), (97, 98)], pretokenizer="none")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merge 1 (rank 257) makes 'ab' again: a rank table's tokens are distinct
    """
    shift = len(leading)
    pipeline = Pipeline(pretokenizer=pretokenizer, pattern=pattern, unit="byte")
    alphabet = [bytes_to_display(t) for t in singles]
    if sorted(alphabet) != sorted(byte_alphabet()):
        raise FormatError("a rank table must list the 256 single bytes first (ranks 0-255)")
    if shift:
        merges = [(a + shift, b + shift) for a, b in merges]
    tok = Tokenizer(
        pipeline=pipeline,
        vocab=Vocab(tuple(leading), tuple(alphabet), tuple(merges)),
        special_ids=special_ids,
        rules="tiktoken",
        own_merges_suffice=own_merges_suffice,
        blank_ids=blank_ids,
    )
    if len(tok.vocab) != 256 + shift + len(merges):  # a merge made a token already there: its id was reused
        k = next(k for k, i in enumerate(tok.merged_ids) if i != 256 + shift + k)
        raise FormatError(
            f"merge {k} (rank {256 + shift + k}) makes {tok.vocab[tok.merged_ids[k]]!r} again: "
            "a rank table's tokens are distinct"
        )
    return tok


def tokenizer_from_ranks(
    tokens: Sequence[bytes],
    *,
    pretokenizer: str,
    pattern: str | None = None,
    special_ids: Mapping[str, int] | None = None,
    leading: Sequence[str] = (),
    index: Mapping[bytes, int] | None = None,
) -> Tokenizer:
    """A byte-level tokenizer whose ids are the table's ranks, with tiktoken's encoding rules:
    its ids are tiktoken's by construction. Its vocabulary is the table's tokens
    (``RankVocab``): the merges are recovered when first asked for, a token that merging its
    own bytes never reaches kept (``recover_merges(strict=False)``); what that recovery refuses
    is refused here (``_check_table``). An empty token (Whisper's last rank) must be the last:
    it stands for no bytes (``Tokenizer``'s ``blank_ids``). ``index``: each token's position in
    ``tokens``, when the caller has built it (a reader that found them distinct).

    >>> tok = tokenizer_from_ranks([bytes([b]) for b in range(256)] + [b"ab", b"abab", b""], pretokenizer="none")
    >>> tok.encode("ababab"), tok.tokens(tok.merges[1]), tok.decode_bytes([258]), tok.n_vocab
    ([257, 256], ['ab', 'ab'], b'', 259)
    """
    blank: list[int] = []
    if tokens and tokens[-1] == b"":
        tokens = tokens[:-1]
        blank = [len(tokens) + len(leading)]
    if (b"" in tokens) if index is None else index.get(b"", len(tokens)) < len(tokens):
        raise FormatError(
            f"rank {list(tokens).index(b'') + len(leading)} is the empty token: only the last rank may be empty"
        )
    _check_table(tokens, index)
    texts = bytes_to_displays(tokens)
    pipeline = Pipeline(pretokenizer=pretokenizer, pattern=pattern, unit="byte")
    vocab = RankVocab.of_table(leading, texts)
    if vocab is None:  # a special token's text is a token of the table: the merges' vocabulary says so
        return tokenizer_from_merges(
            tokens[:256],
            recover_merges(tokens, strict=False),
            blank_ids=blank,
            pretokenizer=pretokenizer,
            pattern=pattern,
            special_ids=special_ids,
            leading=leading,
        )
    return Tokenizer(pipeline=pipeline, vocab=vocab, special_ids=special_ids, rules="tiktoken", blank_ids=blank)
