"""Vocabularies numbered in another order than their merges make their tokens: SentencePiece's.

SentencePiece gives a piece the id of its score, so Llama 2's and Mistral 7B v0.1's
``tokenizer.json`` (and every file converted from a SentencePiece BPE model) list ``<unk>``,
``<s>``, ``</s>``, the 256 byte tokens, then merged pieces and single characters interleaved:
"▁t" is 261, "▁" 28705. HF ``tokenizers`` takes any numbering. Here the ids are derived from the
merges (special tokens, the alphabet, one per merge) and the file's numbering is kept beside
them as a ``FileIds`` table (derived id -> the file's id), which decides nothing: the file's
merge list still says how a text is cut. ``tokenizer_in_file_order`` derives the merges' order
and the table; what a file gets wrong is still a FormatError naming it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import compress
from operator import not_
from typing import cast

from ..bpe.tokenizer import Tokenizer
from ..errors import FormatError
from .base import require
from .shared import tokenizer_from_vocab_merges

__all__ = ["base_after_merged", "making_order", "tokenizer_in_file_order"]


def base_after_merged(
    vocab: Mapping[str, object],
    merges: Sequence[tuple[str, str]],
    *,
    skip: Collection[str | None] = (),
    made: Sequence[str] | None = None,
) -> bool:
    """Whether a base symbol (made by no merge; ``skip``: special and unknown tokens) has an id
    past a merged token's: SentencePiece's numbering, which ids derived from the merges never
    have, so a reader goes straight to ``tokenizer_in_file_order``. False when an id is no
    integer (the usual reading names the key). ``made``: the token each merge makes, when the
    caller has them.

    >>> base_after_merged({"<unk>": 0, "▁t": 1, "▁": 2, "t": 3}, [("▁", "t")], skip={"<unk>"})
    True
    >>> base_after_merged({"▁": 0, "t": 1, "▁t": 2, "<unk>": 3}, [("▁", "t")], skip={"<unk>"})
    False
    """
    if not {int} >= set(map(type, vocab.values())):
        return False
    ids = cast(Mapping[str, int], vocab)
    # in C, in the vocabulary's own order: every tokenizer.json import asks this. The merged
    # tokens' ids are read beside their keys (``compress``), not looked up by the strings the
    # merges join, nor in a set's order (both cost a walk over memory: 50 ms of GPT-2's 230, now 15)
    alone = ids.keys() - set(map("".join, merges) if made is None else made)
    first_made = min(compress(ids.values(), map(not_, map(alone.__contains__, ids))), default=None)
    if first_made is None:
        return False
    return any(ids[t] > first_made for t in alone - set(skip))


def making_order(
    products: Sequence[str], splits: Mapping[str, Sequence[tuple[str, str]]], made: set[str]
) -> list[tuple[str, str]]:
    """One merge per token, in an order where each merge's two tokens are made by then: the
    tokens in the order given (a file's ids), each by the first of its ``splits`` whose parts are
    ``made`` (base symbols, or a token made earlier); a token none of whose splits is ready yet
    waits for the next pass. A split's parts are shorter than the token, so every pass makes one
    at least, unless a part is no token at all.

    >>> making_order(["▁t", "he", "▁the", "▁th"], {"▁t": [("▁", "t")], "he": [("h", "e")],
    ...              "▁the": [("▁th", "e"), ("▁t", "he")], "▁th": [("▁t", "h")]}, {"▁", "t", "h", "e"})
    [('▁', 't'), ('h', 'e'), ('▁t', 'he'), ('▁t', 'h')]
    """
    made = set(made)
    order: list[tuple[str, str]] = []
    pending = list(products)
    while pending:
        waiting = []
        for token in pending:
            for a, b in splits[token]:
                if a in made and b in made:
                    order.append((a, b))
                    made.add(token)
                    break
            else:
                waiting.append(token)
        if len(waiting) == len(pending):
            raise FormatError(f"{waiting[0]!r} is made by no merge of tokens that exist")
        pending = waiting
    return order


def tokenizer_in_file_order(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    *,
    specials: Mapping[str, int],
    unk: str | None,
    where: Callable[[int], str],
    vocab_name: str,
    **options,
) -> Tokenizer:
    """A tokenizer from a vocabulary whose ids need not run as the merges make its tokens, with
    the file's ids kept as its ``file_ids``. Leading special tokens keep ids 0, 1, ..., the
    other tokens take the ids after them in any order, special tokens past them keep theirs. The
    derived ids: the leading special tokens, the base symbols (made by no merge) in the file's
    order, then one per merged token (``making_order``); the file's merge list, in its order,
    says which neighbours merge (``pair_rules``) unless it is that order already. ``options``
    are ``tokenizer_from_vocab_merges``'s (``pipeline``, ``encoding``).

    >>> from explorer.stages.pipeline import Pipeline
    >>> pipe = Pipeline(pretokenizer="none", unit="char")
    >>> v = {"<s>": 0, "ab": 1, "a": 2, "abc": 3, "b": 4, "c": 5}
    >>> tok = tokenizer_in_file_order(v, [("a", "b"), ("ab", "c")], specials={"<s>": 0}, unk=None, pipeline=pipe,
    ...                               where=str, vocab_name="v")
    >>> tok.vocab.tokens, tok.shown_ids(tok.encode("abcab")), tok.tokens(tok.encode("abcab"))
    (('<s>', 'a', 'b', 'c', 'ab', 'abc'), [3, 1], ['abc', 'ab'])
    >>> tokenizer_in_file_order({**v, "c": 7}, [("a", "b")], specials={"<s>": 0}, unk=None, pipeline=pipe,
    ...                         where=str, vocab_name="v")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: v: the tokens that are not special tokens must take ids 1 to 5, in any order (found 1 to 7, with gaps)
    >>> tokenizer_in_file_order({"a": "x"}, [], specials={}, unk=None, pipeline=pipe, where=str, vocab_name="v")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: v: 'a' has id 'x', not a non-negative integer
    """
    specials = dict(specials)
    for t, i in vocab.items():
        if type(i) is not int or i < 0:
            raise FormatError(f"{vocab_name}: {t!r} has id {i!r}, not a non-negative integer")
    for n, (a, b) in enumerate(merges):
        for part in (a, b, a + b):
            if part not in vocab:  # the sentence only then: a file has 100,000 merges
                raise FormatError(f"{where(n)}: {part!r} is not in {vocab_name}")
    own_unk = None
    if unk is not None and unk in vocab and unk not in specials:
        if vocab[unk] == max(vocab.values()):
            own_unk = unk  # our layout: the unknown token takes the first id past everything
        else:
            specials[unk] = vocab[unk]
    rest = {t: i for t, i in vocab.items() if t not in specials and t != own_unk}
    first = len([i for i in specials.values() if i < min(rest.values(), default=0)])
    ids = sorted(rest.values())
    require(
        ids == list(range(first, first + len(ids))),
        f"{vocab_name}: the tokens that are not special tokens must take ids {first} to {first + len(ids) - 1}, "
        f"in any order (found {ids[0] if ids else first} to {ids[-1] if ids else first}, with gaps)",
    )
    splits: dict[str, list[tuple[str, str]]] = {}
    for a, b in merges:
        splits.setdefault(a + b, []).append((a, b))
    base = sorted((t for t in rest if t not in splits), key=vocab.__getitem__)
    leading = [t for t in specials if specials[t] < first]
    try:
        order = making_order(sorted(splits, key=vocab.__getitem__), splits, {*base, *leading})
    except FormatError as err:
        raise FormatError(f"{vocab_name}: {err}") from None
    # the derived ids, and the file's beside them
    in_order = [*sorted(leading, key=specials.__getitem__), *base, *(a + b for a, b in order)]
    derived = {t: i for i, t in enumerate(in_order)}
    if own_unk is not None:
        derived[own_unk] = vocab[own_unk]  # past every other id, as there
    derived.update((t, i) for t, i in specials.items() if i >= first)
    rules: dict[tuple[int, int], tuple[int, int]] | None = None
    if list(merges) != order:  # the file's list, each pair at its place, in the derived ids
        rules = {}
        for n, (a, b) in enumerate(merges):
            rules.setdefault((derived[a], derived[b]), (n, derived[a + b]))
    # the vocabulary's tokens are ``in_order`` (their derived ids): the file's id of each
    return tokenizer_from_vocab_merges(
        derived,
        order,
        specials={t: derived[t] for t in specials},
        unk=unk,
        where=lambda i: where(merges.index(order[i])),
        vocab_name=vocab_name,
        pair_rules=rules,
        file_ids=[vocab[t] for t in in_order],
        **options,
    )
