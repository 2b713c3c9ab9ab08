"""What several formats share: the checks writers make on a tokenizer, and the assembly readers
make of a vocabulary (token -> id) and merges (token pairs) into a tokenizer.

Merges are the source of truth here too: the ids a file gives must be the ids its merges derive
(special tokens, the alphabet, one id per merge), and a file that says otherwise is refused with
the line or key where it goes wrong, never half-loaded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import chain, repeat
from operator import itemgetter, lt
from typing import Literal, cast

from ..bpe.config import EncodeOptions
from ..bpe.tokenizer import Tokenizer
from ..bpe.vocab import Vocab, VocabBuilder
from ..errors import FormatError
from ..stages.pipeline import Pipeline
from ..stages.pretokenizers import TIKTOKEN_PATTERNS
from ..stages.units import byte_alphabet
from .base import need, require
from .regex_dialects import oniguruma_pattern

__all__ = [
    "byte_pipeline_only",
    "full_vocab",
    "implied_alphabet",
    "in_making_order",
    "one_id_per_token",
    "pretokenizer_note",
    "pretokenizer_of_pattern",
    "tokenizer_from_merge_list",
    "tokenizer_from_vocab_merges",
]


# ---- writers ----------------------------------------------------------------------------------
def one_id_per_token(tok: Tokenizer, fmt: str) -> None:
    """A vocabulary file maps each token to one id; with id reuse off two merges can make the
    same string (bytes preset: ``a b`` and ``ab`` + nothing is impossible, but ``a bc`` and
    ``ab c`` are not)."""
    tokens = tok.vocab.tokens
    if len(set(tokens)) == len(tokens):  # the usual case, at C speed (a rank table's 200k tokens)
        return
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        need(
            t not in seen,
            f"{fmt} maps each token to one id, but two merges made {t!r} (ids {seen.get(t)} and {i}; "
            "id reuse is off): train with id reuse on",
        )
        seen[t] = i


def byte_pipeline_only(tok: Tokenizer, fmt: str) -> None:
    """The pipeline of the formats that hold bytes and nothing else: byte level, no normalizer,
    the text as one sequence."""
    cfg = tok.pipeline
    need(cfg.unit == "byte", f"{fmt} holds byte-level tokens; this tokenizer is character-level (export hf instead)")
    need(
        cfg.normalizer == "none",
        f"{fmt} has no normalizer; this tokenizer normalizes its text first ({cfg.normalizer})",
    )
    need(
        cfg.sequences == "text",
        f"{fmt} reads a text as one sequence; this tokenizer cuts it into {cfg.sequences} first",
    )


def full_vocab(tok: Tokenizer) -> dict[str, int]:
    """token -> id for every id, special tokens past the vocabulary included."""
    vocab = {t: i for i, t in enumerate(tok.vocab)}
    vocab.update(tok.special_ids)
    return vocab


# ---- readers ----------------------------------------------------------------------------------
def pretokenizer_of_pattern(pattern: str, *, oniguruma: bool = False) -> tuple[str, str | None]:
    """(pre-tokenizer, custom pattern) for a regex found in a file: a registered name when the
    regex is one of ours (its tiktoken form; with ``oniguruma``, a tokenizer.json's, also the
    form written for HF's Oniguruma, ``regex_dialects``).

    >>> pretokenizer_of_pattern(r"[\\s\\S]+"), pretokenizer_of_pattern(r"\\w+")
    (('none', None), ('regex', '\\\\w+'))
    """
    for name, pat in TIKTOKEN_PATTERNS.items():
        if pattern == pat or (oniguruma and pattern == oniguruma_pattern(pat)):
            return name, None
    return "regex", pattern


def tokenizer_from_vocab_merges(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    *,
    pipeline: Pipeline,
    reuse_ids: bool = True,
    specials: Mapping[str, int] | None = None,
    unk: str | None = None,
    encoding: EncodeOptions = EncodeOptions(),
    rules: Literal["merges", "tiktoken"] = "merges",
    where: Callable[[int], str] = lambda i: f"merge {i + 1}",
    vocab_name: str = "the vocabulary",
    pair_rules: Mapping[tuple[int, int], tuple[int, int]] | None = None,
    made: Sequence[str] | None = None,
    file_ids: Sequence[int] | None = None,
) -> Tokenizer:
    """A tokenizer from a vocabulary (token -> id) and merges as token pairs, checked: the ids
    must run special tokens, the alphabet (tokens no merge makes), one per merge in order, and
    special tokens past them. ``unk`` at the first free id is the unknown token (ours is there
    too); ``where(i)`` says where merge i is in its file. ``pair_rules`` are the file's own merge
    list when the merges given only derive the ids (``tokenizer_from_merge_list``); ``made``: the
    token each merge makes (its parts joined), when the caller has them; ``file_ids``: the ids
    another file gives the vocabulary's tokens (``id_order``: ``Tokenizer.file_ids``).

    >>> pipe = Pipeline(pretokenizer="whitespace", unit="char")
    >>> tokenizer_from_vocab_merges({"<s>": 0, "a": 1, "b": 2, "ab": 3}, [("a", "b")], pipeline=pipe, specials={"<s>": 0}).vocab.tokens
    ('<s>', 'a', 'b', 'ab')
    >>> tokenizer_from_vocab_merges({"a": 0, "b": 1, "ab": 3}, [("a", "b")], pipeline=pipe)
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merge 1 makes 'ab' id 2, but the vocabulary gives it id 3 (ids must run: special tokens, the alphabet, one per merge in order)
    """
    # each check is made over all the entries at once, in C; the loops over every token and
    # merge that build the sentence run only when a check fails
    specials = dict(specials or {})
    ids = list(vocab.values())
    if not ({int} >= set(map(type, ids)) and min(ids, default=0) >= 0 and len(set(ids)) == len(ids)):
        _refuse_ids(vocab, vocab_name)
    # each merge's two ids (None: a token the vocabulary lacks)
    lefts, rights = (list(map(vocab.get, map(itemgetter(side), merges))) for side in (0, 1))
    if None in lefts or None in rights:
        _refuse_parts(vocab, merges, where, vocab_name)
    if made is None:
        made = list(map("".join, merges))
    products = set(made)
    own_unk = None
    if unk is not None and unk in vocab and unk not in specials:
        if vocab[unk] == max(ids):
            own_unk = unk  # our layout: the unknown token takes the first id past everything
        else:
            specials[unk] = vocab[unk]
    for t, i in specials.items():
        require(vocab.get(t, i) == i, f"{vocab_name}: special token {t!r} has id {vocab[t]} there and {i} elsewhere")
    alone = vocab.keys() - products - specials.keys() - {own_unk}  # made by no merge
    base = sorted((vocab[t], t) for t in alone)
    require(bool(base), f"{vocab_name} holds no alphabet (every token is made by a merge or special)")
    first = base[0][0]
    leading = sorted((i, t) for t, i in specials.items() if i < first)
    require(
        [i for i, _ in leading] == list(range(len(leading))),
        f"{vocab_name}: the special tokens before the alphabet must take ids 0, 1, 2, ... (they take "
        f"{[i for i, _ in leading]})",
    )
    for k, (i, t) in enumerate(base):
        require(
            i == first + k,
            f"{vocab_name}: {t!r} (id {i}) is made by no merge, so it belongs to the alphabet, "
            f"which must take ids {first}-{first + len(base) - 1} without gaps",
        )
    if pipeline.unit == "byte":
        alphabet = set(byte_alphabet())
        for i, t in base:
            require(
                t in alphabet, f"{vocab_name}: {t!r} (id {i}) is neither a byte, a special token nor made by a merge"
            )
    end = first + len(base) + len(merges)
    trailing = {t: i for t, i in specials.items() if i >= first}
    for t, i in trailing.items():
        require(i >= end, f"{vocab_name}: special token {t!r} has id {i}, among the ids the merges make")
    leading_tokens, alphabet_tokens = tuple(t for _, t in leading), tuple(t for _, t in base)
    pairs = cast(tuple[tuple[int, int], ...], tuple(zip(lefts, rights)))  # no None: refused above
    # the vocabulary the tokenizer derives from the merges, built once: taken from the file when
    # its ids run (``_running_vocab``), else made and compared with the file's ids
    # (``_ids_agree``); else the merges are followed one by one, to say at which one they go wrong
    built = _running_vocab(vocab, leading_tokens, alphabet_tokens, pairs, made, first=first, reuse_ids=reuse_ids)
    if built is None:
        built = _vocab_or_none(leading_tokens, alphabet_tokens, pairs, reuse_ids)
        if built is None or not _ids_agree(built, vocab):
            _check_merges_in_turn(
                vocab, merges, leading_tokens, alphabet_tokens, reuse_ids=reuse_ids, where=where, vocab_name=vocab_name
            )
    try:
        tok = Tokenizer(
            pipeline=pipeline,
            vocab=built or Vocab(leading_tokens, alphabet_tokens, pairs, reuse_ids),
            special_ids=trailing,
            rules=rules,
            encoding=encoding,
            pair_rules=pair_rules,
            file_ids=file_ids,
        )
    except ValueError as err:  # ConfigError too: a special token given twice
        raise FormatError(f"{vocab_name}: {err}") from None
    if own_unk is not None:
        require(
            tok.unk_id == vocab[own_unk],
            f"{vocab_name}: the unknown token {own_unk!r} has id {vocab[own_unk]}, expected {tok.unk_id}",
        )
    return tok


def _refuse_ids(vocab: Mapping[str, object], vocab_name: str) -> None:
    """FormatError naming the first entry whose id is not a non-negative integer, or the second
    of two entries with the same id.

    >>> _refuse_ids({"a": 0, "b": 0}, "v")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: v: 'a' and 'b' both have id 0
    """
    by_id: dict[object, str] = {}
    for t, i in vocab.items():
        if type(i) is not int or i < 0:
            raise FormatError(f"{vocab_name}: {t!r} has id {i!r}, not a non-negative integer")
        if i in by_id:
            raise FormatError(f"{vocab_name}: {by_id[i]!r} and {t!r} both have id {i}")
        by_id[i] = t


def _refuse_parts(
    vocab: Mapping[str, int], merges: Sequence[tuple[str, str]], where: Callable[[int], str], vocab_name: str
) -> None:
    """FormatError naming the first merge with a token the vocabulary lacks."""
    for n, pair in enumerate(merges):
        for part in pair:
            if part not in vocab:
                raise FormatError(f"{where(n)}: {part!r} is not in {vocab_name}")


def _vocab_or_none(
    leading: tuple[str, ...], alphabet: tuple[str, ...], pairs: tuple[tuple[int, int], ...], reuse_ids: bool
) -> Vocab | None:
    """``Vocab(leading, alphabet, pairs, reuse_ids)``, or None when it refuses them (a merge of
    an id not made yet, special tokens given twice: said where the merges are followed in turn,
    or when the tokenizer is built)."""
    try:
        return Vocab(leading, alphabet, pairs, reuse_ids)
    except ValueError:
        return None


def _running_vocab(
    vocab: Mapping[str, int],
    leading: tuple[str, ...],
    alphabet: tuple[str, ...],
    pairs: tuple[tuple[int, int], ...],
    made: Sequence[str],
    *,
    first: int,
    reuse_ids: bool,
) -> Vocab | None:
    """The vocabulary of a file whose ids run: the alphabet right after the leading special
    tokens (its first id ``first``), each merge's token new, at the next id, made of two ids
    below it. Then its tokens are the ones ``Vocab`` would make of the merges, at the ids the
    file gives, and they are taken as the file has them; None otherwise.

    >>> v = _running_vocab({"a": 0, "b": 1, "ab": 2}, (), ("a", "b"), ((0, 1),), ["ab"], first=0, reuse_ids=True)
    >>> v.tokens, _running_vocab({"a": 0, "b": 1, "ab": 3}, (), ("a", "b"), ((0, 1),), ["ab"], first=0, reuse_ids=True)
    (('a', 'b', 'ab'), None)
    """
    n_base = len(leading) + len(alphabet)
    new_ids = range(n_base, n_base + len(made))
    if first != len(leading) or list(map(vocab.get, made)) != list(new_ids):
        return None
    if not all(all(map(lt, map(itemgetter(side), pairs), new_ids)) for side in (0, 1)):
        return None  # a part made only at or after the merge
    try:
        return Vocab.of_new_tokens(leading, alphabet, pairs, made, reuse_ids=reuse_ids)
    except ValueError:  # special tokens given twice: said when the tokenizer is built
        return None


def _ids_agree(built: Vocab, vocab: Mapping[str, int]) -> bool:
    """Whether each token of ``built`` is once in it and has the id ``vocab`` gives it: then the
    ids ``vocab`` gives the merges' parts are the ids ``built`` made them, merge after merge.

    >>> v = Vocab(alphabet=("a", "b"), merges=((0, 1),))
    >>> _ids_agree(v, {"a": 0, "b": 1, "ab": 2, "<s>": 3}), _ids_agree(v, {"a": 0, "b": 1, "ab": 3})
    (True, False)
    """
    return len(built.ids) == len(built.tokens) and built.ids.items() <= vocab.items()


def _check_merges_in_turn(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    leading: Sequence[str],
    alphabet: Sequence[str],
    *,
    reuse_ids: bool,
    where: Callable[[int], str],
    vocab_name: str,
) -> None:
    """Each merge in turn, through the Vocab rule the tokenizer derives its ids with: its parts
    must exist by then and the token it makes must have the id the file gives, so that a wrong
    id is reported at the merge that makes it."""
    derived = VocabBuilder(leading, alphabet, reuse_ids=reuse_ids)
    ids = derived.ids
    for n, (a, b) in enumerate(merges):
        for part in (a, b):
            if part not in ids:
                raise FormatError(f"{where(n)}: {part!r} is made only by a later merge")
        made, _ = derived.add_merge(ids[a], ids[b])
        given = vocab.get(a + b)
        if given is None:
            raise FormatError(f"{where(n)} makes {a + b!r}, which is not in {vocab_name}")
        if given != made:
            raise FormatError(
                f"{where(n)} makes {a + b!r} id {made}, but {vocab_name} gives it id "
                f"{given} (ids must run: special tokens, the alphabet, one per merge in order)"
            )


def in_making_order(
    vocab: Mapping[str, int], merges: Sequence[tuple[str, str]], *, made: Sequence[str] | None = None
) -> bool:
    """Whether each merge's two tokens are made by then (the alphabet: tokens no merge makes), as
    a trainer writes merges; transformers' tiktoken converter lists every split of each token
    instead, some of whose parts a later merge makes.

    >>> in_making_order({"a": 0, "b": 1, "ab": 2}, [("a", "b")]), in_making_order({"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4}, [("a", "bc"), ("b", "c")])
    (True, False)
    """
    if all(map(vocab.__contains__, chain.from_iterable(merges))):
        # each merge's parts are then made by then when neither is a token a merge makes
        # first at or after it: the first merge making each token, looked up for all at once
        if made is None:
            made = list(map("".join, merges))
        first = dict(zip(reversed(made), range(len(made) - 1, -1, -1)))
        return all(
            all(map(lt, map(first.get, map(itemgetter(side), merges), repeat(-1)), range(len(merges))))
            for side in (0, 1)
        )
    products = {a + b for a, b in merges}
    made_set = {t for t in vocab if t not in products}
    for a, b in merges:
        if a not in made_set or b not in made_set:
            return False
        made_set.add(a + b)
    return True


def tokenizer_from_merge_list(
    vocab: Mapping[str, int],
    merges: Sequence[tuple[str, str]],
    *,
    where: Callable[[int], str],
    vocab_name: str,
    **options,
) -> Tokenizer:
    """A tokenizer that merges by a file's merge list as HF ``tokenizers`` does (the adjacent pair
    listed first merges first, whatever order its tokens are made in), for a list not in making
    order (``in_making_order``). Its ids are derived by one merge per token, the first listed
    whose two tokens have lower ids, so they must run as ``tokenizer_from_vocab_merges`` says;
    ``options`` are that function's.

    >>> pipe = Pipeline(pretokenizer="none", unit="char")
    >>> vocab = {"a": 0, "b": 1, "c": 2, "bc": 3, "abc": 4}
    >>> tok = tokenizer_from_merge_list(vocab, [("a", "bc"), ("b", "c")], pipeline=pipe, where=str, vocab_name="v")
    >>> tok.merges, tok.merge_rules()
    (((1, 2), (0, 3)), {(0, 3): (0, 4), (1, 2): (1, 3)})
    >>> tokenizer_from_merge_list({**vocab, "abc": 3, "bc": 4}, [("a", "bc"), ("b", "c")], pipeline=pipe, where=str, vocab_name="v")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: v: 'abc' (id 3) is made by no merge of two tokens with lower ids, so its id cannot be derived
    """
    first: dict[str, tuple[str, str]] = {}  # token -> its deriving merge
    rules: dict[tuple[int, int], tuple[int, int]] = {}
    for n, (a, b) in enumerate(merges):
        for part in (a, b, a + b):
            require(part in vocab, f"{where(n)}: {part!r} is not in {vocab_name}")
        made = vocab[a + b]
        rules.setdefault((vocab[a], vocab[b]), (n, made))  # a pair listed twice keeps its first place
        if a + b not in first and vocab[a] < made and vocab[b] < made:
            first[a + b] = (a, b)
    products = {a + b for a, b in merges}
    for t in sorted(products - set(first), key=vocab.__getitem__):
        raise FormatError(
            f"{vocab_name}: {t!r} (id {vocab[t]}) is made by no merge of two tokens with lower ids, "
            "so its id cannot be derived"
        )
    derived = [first[t] for t in sorted(first, key=vocab.__getitem__)]
    return tokenizer_from_vocab_merges(
        vocab,
        derived,
        where=lambda i: where(merges.index(derived[i])),
        vocab_name=vocab_name,
        pair_rules=rules,
        **options,
    )


def implied_alphabet(merges: Sequence[tuple[str, str]]) -> list[str]:
    """The symbols merges use that no merge makes, in order of first use: the alphabet a merge
    list implies when its file names none.

    >>> implied_alphabet([("l", "o"), ("lo", "w"), ("e", "r")])
    ['l', 'o', 'w', 'e', 'r']
    """
    products = {a + b for a, b in merges}
    return [s for s in dict.fromkeys(p for pair in merges for p in pair) if s not in products]


def pretokenizer_note(what: str, choice: str | None, used: str) -> str:
    if choice is None:
        return f"{what} name no pre-tokenizer: {used} assumed (choose another when importing)"
    return f"{what} name no pre-tokenizer: {used}, as chosen"
