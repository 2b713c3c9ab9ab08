"""The trainer: incremental, steppable BPE that yields one immutable record per merge.

Data shapes (all positions index flat arrays over the distinct words, laid out in order of
first appearance, so "first occurrence" is simply "smallest position"):

    sym[p]   token id at position p, or -1 once p was swallowed by a merge on its left
    nxt[p]   next live position in the same word, -1 at the word's end
    prv[p]   previous live position in the same word, -1 at its start
    wof[p]   index of the word position p belongs to; freqs[wof[p]] is the weight of p

    count[pair]  sum of weights of the pair's occurrences          pair = left << 21 | right
    where[pair]  positions where the pair may still occur (stale entries are skipped lazily;
                 a min-heap when ties go to the first-seen pair)
    heap         (-count, tie key, pair) entries, stale ones dropped when popped

A merge visits only the recorded positions of the winning pair, so one step costs time in
proportion to that pair's occurrences, not to the corpus: the seeds' loop recounts everything.
With no pre-tokenization the whole text is a single "word" and the same arrays act as the
linked list over positions.

Variants (SuperBPE, PickyBPE) are strategies, each in its own module: the trainer looks its
config's up in ``bpe.variants.VARIANTS`` and calls its hooks (``bpe.variant``): what is read of
the texts, the start, the stop rule before each merge, a transition after a set number of
merges, and a hook after each merge, given the positions the merge visited. The index methods
a hook may call (``index``, ``bump``, ``note``, ``settle``, ``restart``) keep every count,
position list and the heap consistent, as a merge does.
"""

from __future__ import annotations

import copy
import dataclasses
import heapq
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property, partial
from operator import itemgetter
from typing import Generic, Self, TypeVar

from ..errors import ConfigError
from ..stages.pipeline import Pipeline, word_symbols
from ..stages.units import BYTE_TO_UNICODE, byte_alphabet, display_to_bytes
from . import budget as _budget
from .budget import Budget, BudgetError
from .config import EncodeOptions, TrainerConfig
from .records import PairStat, RemovalRecord, StepLog, StepRecord
from .variant import PAIR_MASK, PAIR_SHIFT, MergeEvent
from .variants import variant_of
from .vocab import Vocab, VocabBuilder, build_alphabet, hf_alphabet_ranks

__all__ = [
    "PairStat",
    "RemovalRecord",
    "StepRecord",
    "StepLog",
    "Trainer",
    "check_room",
    "train",
    "train_to_end",
    "train_words_to_end",
    "DEFAULT_TOP_K",
    "MAX_TOP_K",
]

DEFAULT_TOP_K = 20
MAX_TOP_K = 1000

_EXAMPLES = 5
_EXAMPLE_CHARS = 40


def _merges(n: int) -> str:
    """``n`` merges, in words.

    >>> _merges(1), _merges(41987)
    ('1 merge', '41,987 merges')
    """
    return f"{n:,} merge{'s' * (n != 1)}"


def _neg_str_key(s: str) -> tuple[int, ...]:
    """Sort key that orders strings in *descending* order under ascending sort.

    >>> sorted(["a", "ab", "b"], key=_neg_str_key)
    ['b', 'ab', 'a']
    """
    return (*(-ord(c) for c in s), 1)


def _neg_bytes_key(b: bytes) -> tuple[int, ...]:
    """Sort key that orders byte strings in *descending* order under ascending sort (CS336's
    rule compares tokens as bytes: a space, 0x20, sorts below letters, unlike its GPT-2
    character Ġ, U+0120).

    >>> sorted([b" a", b"a", b"ab"], key=_neg_bytes_key)
    [b'ab', b'a', b' a']
    """
    return (*(-x for x in b), 1)


def symbol_sequences(words: Sequence[str], config: TrainerConfig) -> tuple[list, list[str]]:
    """(each word as its base symbols, the symbols in order of first appearance): a byte-level
    word is its UTF-8 ``bytes``, a character-level one its list of symbols.

    >>> symbol_sequences(["low", "lot"], TrainerConfig(unit="char"))
    ([['l', 'o', 'w'], ['l', 'o', 't']], ['l', 'o', 'w', 't'])
    >>> symbol_sequences(["hé"], TrainerConfig())
    ([b'h\\xc3\\xa9'], ['h', 'Ã', '©'])
    """
    if config.unit == "byte":
        # each word as its UTF-8 bytes: as a list of display strings, a 20 MB text without
        # pre-tokenization was a 20-million-string list while it was read in
        raw: list = [w.encode("utf-8", "surrogatepass") for w in words]
        first: dict[int, None] = {}
        for b in raw:
            first.update(dict.fromkeys(b))  # the bytes in order of first appearance
        return raw, [BYTE_TO_UNICODE[b] for b in first]
    seqs = [word_symbols(w, config) for w in words]
    return seqs, list(dict.fromkeys(s for syms in seqs for s in syms))


def check_room(config: TrainerConfig, base: int, alphabet: int) -> None:
    """ConfigError when the vocabulary size leaves no room for a merge over ``base`` tokens (the
    special tokens and ``alphabet`` base symbols)."""
    if config.vocab_size is not None and config.vocab_size <= base:
        n = len(config.special_tokens)
        raise ConfigError(
            f"a vocabulary of {config.vocab_size:,} leaves no room for a merge: the base vocabulary already has "
            f"{base:,} tokens ({alphabet:,} base symbols"
            + (f" and {n} special token{'s' * (n != 1)}" if n else "")
            + f"); ask for at least {base + 1:,}"
        )


R = TypeVar("R")


class Stepping(Generic[R]):
    """``advance``, iteration, ``run`` and ``planned_merges`` for a trainer whose ``step`` makes
    one merge and returns its record, or None once a stop rule fired."""

    config: TrainerConfig
    encoding: EncodeOptions
    alphabet: list[str]
    merges: list[tuple[int, int]]
    _vocab: VocabBuilder

    removals: list[tuple[int, int]]  # PickyBPE's (after merge k, id); empty for other training
    removed: set[int]  # the ids removed now (PickyBPE)

    def tokenizer(self, k: int | None = None):
        """A Tokenizer holding the first k merges (all of them by default), and PickyBPE's
        removals that followed them."""
        merges = self.merges if k is None else self.merges[:k]
        removals = [r for r in self.removals if r[0] <= len(merges)]
        return self.tokenizer_with(merges, self.config.tokenizer_pipeline(len(merges)), removals)

    def tokenizer_with(
        self, merges: Sequence[tuple[int, int]], pipeline: Pipeline, removals: Sequence[tuple[int, int]] = ()
    ):
        """A Tokenizer of these merges and removals, encoding with ``pipeline``."""
        from .tokenizer import Tokenizer

        config = self.config
        vocab = Vocab(config.special_tokens, tuple(self.alphabet), tuple(merges), config.reuse_ids, tuple(removals))
        return Tokenizer(pipeline=pipeline, vocab=vocab, encoding=self.encoding)

    @property
    def n_live(self) -> int:
        """Tokens in the vocabulary now, PickyBPE's removed ones left out."""
        return len(self._vocab) - len(self.removed)

    @property
    def planned_merges(self) -> int | None:
        """How many merges the stop rules allow in all, as if the vocabulary grew by one a merge
        (with id reuse a merge can leave it as it was, and each PickyBPE removal makes room for
        one more); None when only running out of pairs stops training.

        >>> Trainer.from_texts("low lower", TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=10)).planned_merges
        5
        """
        cfg = self.config
        if cfg.num_merges is not None:
            return cfg.num_merges
        if cfg.vocab_size is not None:
            return max(0, cfg.vocab_size - self.n_live + len(self.merges))
        return None

    def step(self) -> R | None:
        raise NotImplementedError

    budget: Budget | None = None  # what training may take (None: no limit), see bpe.budget
    held: str | None = None  # the budget's sentence when it last stopped training short, else None
    train_seconds: float = 0.0  # CPU time spent in advance() (its thread's), counted under a budget
    _clock: float | None = None  # thread time when the running advance() began

    def advance(self, n: int = 1) -> list[R]:
        """Up to n merges; fewer when a stop rule fires. Under a ``budget``, the merge that would
        pass it raises BudgetError instead (the merges made before it stay)."""
        out: list[R] = []
        self.held = None
        timed = self.budget is not None and self.budget.seconds is not None
        if timed:
            self._clock = time.thread_time()
        try:
            for _ in range(n):
                rec = self.step()
                if rec is None:
                    break
                out.append(rec)
        finally:
            if timed and self._clock is not None:
                self.train_seconds += time.thread_time() - self._clock
                self._clock = None
        return out

    def __iter__(self) -> Iterator[R]:
        """Step until a stop rule fires, yielding each record."""
        while (rec := self.step()) is not None:
            yield rec

    def run(self) -> Self:
        """Train to the end; returns self."""
        for _ in self:
            pass
        return self


class Trainer(Stepping[StepRecord]):
    """Steppable BPE training over a word -> frequency table.

    >>> t = Trainer.from_texts("aaabdaaabac", TrainerConfig(pretokenizer="none", unit="char", vocab_size=None, num_merges=3))
    >>> [(r.left, r.right, r.count, r.replaced, r.tokens_after) for r in t]
    [('a', 'a', 4, 2, 9), ('aa', 'a', 2, 2, 7), ('aaa', 'b', 2, 2, 5)]
    >>> t.stop_reason
    'num_merges'
    """

    _seen_grown = 0  # the footprint's growth when the budget's ceiling was last read

    def __init__(
        self,
        words: Mapping[str, int],
        config: TrainerConfig,
        *,
        top_k: int = DEFAULT_TOP_K,
        full_records: int | None = None,
        encoding: EncodeOptions = EncodeOptions(),
        alphabet: Sequence[str] | None = None,
        variant_data: object = None,
    ):
        """``top_k``: rows of the pair table each step record keeps (what a view can show; it
        changes no merge, so it is not part of the config). ``full_records``: how many steps keep
        that table and their examples; later steps are logged compactly (see ``StepLog``; None:
        all of them in full). ``encoding``: how the tokenizers it hands out encode (unknown
        token, dropout rule); training never reads it. ``alphabet``: the base symbols in id order,
        when several trainers must share ids (see ``parity``); it must hold every symbol of the
        words (ConfigError otherwise). By default it is built from the words. ``variant_data``:
        what the config's variant read of the texts besides the words (``Variant.count``;
        SuperBPE: the texts counted as stage two's pieces, see ``from_texts``)."""
        self.config = config
        self.encoding = encoding
        if not 0 <= top_k <= MAX_TOP_K:
            raise ConfigError(f"top-K must be between 0 and {MAX_TOP_K:,}")
        self.top_k = top_k
        self._words = list(words)
        self._freqs = [words[w] for w in self._words]
        seqs, present = symbol_sequences(self._words, config)
        if alphabet is None:
            self.alphabet: list[str] = build_alphabet(present, config)
        else:
            self.alphabet = list(alphabet)
            known = set(self.alphabet)
            missing = [s for s in present if s not in known]
            if missing:
                raise ConfigError(
                    f"the given alphabet lacks {len(missing):,} symbol{'s' * (len(missing) != 1)} of the corpus "
                    f"(first: {missing[0]!r})"
                )
        self._vocab = VocabBuilder(config.special_tokens, self.alphabet, reuse_ids=config.reuse_ids)
        ids = self._vocab.ids
        if config.unit == "byte":
            by_byte = [ids.get(c, -1) for c in byte_alphabet()]  # byte value -> id (-1: not in the alphabet)
            to_ids = partial(map, by_byte.__getitem__)
        else:
            to_ids = partial(map, ids.__getitem__)
        self.records = StepLog(self._vocab.tokens, full=full_records)
        self.merges: list[tuple[int, int]] = []
        self.stop_reason: str | None = None

        if config.tie_break == "hf":
            # HF's ids: special tokens first, then the alphabet sorted by code point, skipping
            # any symbol that already is a special token (that symbol keeps the special's id)
            specials = set(config.special_tokens)
            ranks = hf_alphabet_ranks([s for s in self.alphabet if s not in specials])
            n_special = self._vocab.n_special
            self._hf_rank = list(range(len(self._vocab)))
            for symbol, rank in ranks.items():
                self._hf_rank[ids[symbol]] = n_special + rank
        self._neg_keys: dict[int, tuple[int, ...]] = {}
        self._rows: dict[tuple[int, int], PairStat] = {}  # (pair, count) -> its table row

        # the variant's hooks (bpe.variant): looked up once, called at fixed points of a step
        variant = self._variant = variant_of(config)
        self._after_merge = variant.after_merge
        self._transition_at = variant.transition_at(config)
        self.variant_state: object = None  # what the variant keeps between its hooks
        self.transitioned_at: int | None = None  # SuperBPE: the merges made before the texts were rejoined
        self.removals: list[tuple[int, int]] = []  # PickyBPE: (after merge k, id), see bpe.picky
        self.removed: set[int] = set()
        self.initial_tokens = self.tokens = self._index(map(to_ids, seqs))
        variant.start(self, variant_data)

    def _index(self, id_seqs: Iterable[Iterable[int]]) -> int:
        """Lay the words (as ids, in the order of ``self._words``) out in the position arrays,
        count their pairs and make the heap; return the number of tokens."""
        # flat C arrays, 4 bytes a position: as lists of int objects a 20 MB text without
        # pre-tokenization (one position per byte) took about 150 bytes a position
        sym = array("i")
        nxt = array("i")
        prv = array("i")
        wof = array("i")
        count: dict[int, int] = {}
        # pair -> its positions: a flat array in ascending order (4 bytes a position), as the
        # corpus is read and as a merge visits positions left to right; made a list heap only
        # when a position arrives out of order (a merge that reuses an existing id, see _heap_of)
        where: dict[int, array | list[int]] = {}
        total = 0
        for wi, (ids, freq) in enumerate(zip(id_seqs, self._freqs)):
            base = len(sym)
            sym.extend(ids)
            n = len(sym) - base
            nxt.extend(range(base + 1, base + n))
            nxt.append(-1)
            prv.append(-1)
            prv.extend(range(base, base + n - 1))
            wof.extend([wi] * n)
            total += n * freq
            for p in range(base, base + n - 1):
                pair = sym[p] << PAIR_SHIFT | sym[p + 1]
                count[pair] = count.get(pair, 0) + freq
                lst = where.get(pair)
                if lst is None:
                    where[pair] = array("i", (p,))
                else:
                    lst.append(p)  # ascending: already a valid min-heap
        self._sym, self._nxt, self._prv, self._wof = sym, nxt, prv, wof
        self._count, self._where = count, where
        self._hist = Counter(count.values())
        self._heap = [(-c, self._tie_key(pair), pair) for pair, c in count.items()]
        heapq.heapify(self._heap)
        self._front: list[tuple[int, object, int]] = []  # see _top
        # what a budget reads (bpe.budget): the most positions a merge can visit from now on, and
        # the footprint, kept up to date by each merge in O(1)
        self.step_work = max(map(len, where.values()), default=0)
        self._words_bytes = sum(map(sys.getsizeof, self._words)) + _budget.WORD_BYTES * len(self._words)
        self._index_bytes = len(sym) * _budget.POSITION_BYTES + len(count) * _budget.PAIR_BYTES
        self._grown = getattr(self, "_grown", 0)
        self._text_bytes = getattr(self, "_text_bytes", 0)  # the merged tokens' text (TOKEN_COPIES times)
        self._longest = getattr(self, "_longest", max(map(len, self._vocab.tokens), default=0))
        return total

    def restart(self, words: Mapping[str, int], encode: Callable[[str], Iterable[int]]) -> None:
        """Train on from here over other words (a variant's transition: SuperBPE's superwords),
        each as ``encode`` gives its ids, with the same vocabulary and merges: their index
        replaces the current one."""
        self._words = list(words)
        self._freqs = [words[w] for w in self._words]
        self.__dict__.pop("corpus_chars", None)
        self.__dict__.pop("corpus_bytes", None)
        self.tokens = self._index(map(encode, self._words))

    # ---- what a variant's hooks read and change (bpe.variant) ----------------------------
    @property
    def index(self) -> tuple[array, array, array, array, list[int]]:
        """The position index (module doc): ``sym``, ``nxt``, ``prv``, ``wof`` and the words'
        frequencies."""
        return self._sym, self._nxt, self._prv, self._wof, self._freqs

    @property
    def n_tokens(self) -> int:
        """Ids given so far (special tokens, alphabet, merged tokens), removed ones included."""
        return len(self._vocab)

    @classmethod
    def from_texts(
        cls,
        texts: str | Iterable[str],
        config: TrainerConfig,
        *,
        top_k: int = DEFAULT_TOP_K,
        full_records: int | None = None,
        encoding: EncodeOptions = EncodeOptions(),
    ) -> Trainer:
        """Count the words of one text or several (each pre-tokenized on its own) and start;
        the config's variant may read more of the texts (SuperBPE: their superwords, trained on
        after the transition)."""
        words, variant_data = variant_of(config).count(texts, config)
        return cls(
            words,
            config,
            top_k=top_k,
            full_records=full_records,
            encoding=encoding,
            variant_data=variant_data,
        )

    def require_room(self) -> Trainer:
        """Raise ConfigError when the vocabulary size leaves no room for a single merge (the app
        and the CLI refuse that; the engine itself trains 0 merges then, as HF does); return self.

        >>> Trainer({"ab": 1}, TrainerConfig(pretokenizer="none", unit="char", vocab_size=2)).require_room()
        Traceback (most recent call last):
        ...
        explorer.errors.ConfigError: a vocabulary of 2 leaves no room for a merge: the base vocabulary already has 2 tokens (2 base symbols); ask for at least 3
        """
        check_room(self.config, len(self._vocab), len(self.alphabet))
        return self

    # ---- derived views -------------------------------------------------------------------
    @property
    def vocab(self) -> list[str]:
        """Display strings by id: special tokens, alphabet, merged tokens."""
        return self._vocab.tokens

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return self.config.special_tokens

    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    @property
    def words(self) -> list[str]:
        """The distinct pieces, in order of first appearance."""
        return self._words

    @property
    def freqs(self) -> list[int]:
        return self._freqs

    @cached_property
    def corpus_chars(self) -> int:
        """Characters in all pieces (what pre-tokenization kept), counted with frequency."""
        return sum(len(w) * f for w, f in zip(self._words, self._freqs))

    @cached_property
    def corpus_bytes(self) -> int:
        """UTF-8 bytes in all pieces, counted with frequency (computed once: the charts ask on
        every step, and 40,000 distinct words take ~5 ms)."""
        return sum(len(w.encode("utf-8", "surrogatepass")) * f for w, f in zip(self._words, self._freqs))

    def peek(self, k: int | None = None) -> tuple[PairStat, ...]:
        """The pair table the next merge would be chosen from (winner first), without merging.

        >>> t = Trainer.from_texts("abab", TrainerConfig(pretokenizer="none", unit="char"))
        >>> [(p.left, p.right, p.count) for p in t.peek()]
        [('a', 'b', 2), ('b', 'a', 1)]
        >>> t.run().peek()  # nothing is left to choose from once training stopped
        ()
        """
        if self.done:
            return ()
        return tuple(map(self._pair_stat, self._top(max(1, self.top_k if k is None else k))))

    # ---- tie-breaking --------------------------------------------------------------------
    # How each attribute is copied by __deepcopy__: containers of immutable values (ints, strings,
    # tuples, PairStats) are copied one level deep; the position index holds an array or list per
    # pair; the vocabulary and the step log copy themselves (the log shares its immutable details).
    _SHALLOW = frozenset(
        {
            "_words",
            "_freqs",
            "alphabet",
            "merges",
            "_hf_rank",
            "_neg_keys",
            "_rows",
            "_count",
            "_heap",
            "_front",
            "_hist",
            "removals",
            "removed",
        }
    )
    _ARRAYS = frozenset({"_sym", "_nxt", "_prv", "_wof"})

    def __deepcopy__(self, memo: dict) -> Trainer:
        """An independent copy, made ~5x faster than Python's generic deep copy (a session takes
        one of the trainer shared at a link's step; 0.12 s for 500 steps of Frankenstein before).
        Attributes it does not know are deep-copied as usual.

        >>> import copy
        >>> from explorer import make_config
        >>> t = Trainer.from_texts("aaab aaab abab", make_config("bytes", vocab_size=None, num_merges=4), top_k=3)
        >>> _ = t.step(); twin = copy.deepcopy(t); _ = twin.run()
        >>> [r.token for r in twin.records], len(t.records)
        (['aa', 'ab', 'aaab', 'aaabĠ'], 1)
        >>> [r.top_pairs for r in twin.records] == [r.top_pairs for r in t.run().records]
        True
        """
        twin = object.__new__(type(self))
        memo[id(self)] = twin
        for name, value in self.__dict__.items():
            if name in self._SHALLOW:
                value = value.copy()
            elif name in self._ARRAYS:
                value = array(value.typecode, value)
            elif name == "_where":
                value = {pair: (array(v.typecode, v) if type(v) is array else list(v)) for pair, v in value.items()}
            else:
                value = copy.deepcopy(value, memo)
            twin.__dict__[name] = value
        return twin

    def _tie_key(self, pair: int):
        rule = self.config.tie_break
        if rule == "first-seen":
            return self._first_position(pair)
        if rule == "hf":
            r = self._hf_rank
            return r[pair >> PAIR_SHIFT] << PAIR_SHIFT | r[pair & PAIR_MASK]
        # the greatest (left, right) wins: as strings (subword-nmt) or as bytes (CS336)
        neg = self._neg_keys
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        for t in (left, right):
            if t not in neg:
                token = self._vocab.tokens[t]
                if rule == "bytes":
                    neg[t] = _neg_bytes_key(display_to_bytes(token) if self.config.unit == "byte" else token.encode())
                else:
                    neg[t] = _neg_str_key(token)
        return (neg[left], neg[right])

    def _heap_of(self, pair: int) -> list[int]:
        """The pair's positions as a list heap (an ascending array is one already)."""
        lst = self._where[pair]
        if type(lst) is not list:
            lst = self._where[pair] = list(lst)
        return lst

    def _first_position(self, pair: int) -> int:
        """Smallest position where the pair still occurs, dropping stale heap entries."""
        heap = self._where[pair]
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        sym, nxt = self._sym, self._nxt
        if type(heap) is not list:
            # still the ascending array from the start: skip the stale front, cut it off in C
            for i, p in enumerate(heap):
                if sym[p] == left:
                    q = nxt[p]
                    if q >= 0 and sym[q] == right:
                        if i:
                            del heap[:i]
                        return p
            raise AssertionError("a counted pair has no occurrence")  # pragma: no cover
        while heap:
            p = heap[0]
            if sym[p] == left:
                q = nxt[p]
                if q >= 0 and sym[q] == right:
                    return p
            heapq.heappop(heap)
        raise AssertionError("a counted pair has no occurrence")  # pragma: no cover

    def _valid(self, entry: tuple[int, object, int]) -> bool:
        """Whether a heap entry still holds its pair's count (and, first-seen, its first position)."""
        neg, key, pair = entry
        if self._count.get(pair, 0) != -neg:
            return False
        return self.config.tie_break != "first-seen" or key == self._first_position(pair)

    def _top(self, k: int) -> list[tuple[int, int]]:
        """The k best (pair, count) in tie-break order.

        The best entries of the last call stay off the heap, in order, in ``_front``: most of
        them are still valid after a merge, so a step pops only the few the merge changed
        instead of popping and pushing back the whole table."""
        heap, valid = self._heap, self._valid
        front = list(filter(valid, self._front))
        seen = {e[2] for e in front}
        out: list[tuple[int, object, int]] = []
        i = 0
        checked = False  # whether heap[0] is known to be valid and new
        while len(out) < k:
            if not checked:
                while heap and (heap[0][2] in seen or not valid(heap[0])):
                    heapq.heappop(heap)
                checked = True
            if i < len(front) and (not heap or front[i] < heap[0]):
                out.append(front[i])
                i += 1
            elif heap:
                entry = heapq.heappop(heap)
                seen.add(entry[2])
                out.append(entry)
                checked = False
            else:
                break
        for entry in front[i:]:
            heapq.heappush(heap, entry)
        self._front = out
        return [(pair, -neg) for neg, _, pair in out]

    # ---- stepping ------------------------------------------------------------------------
    def step(self) -> StepRecord | None:
        """Do one merge and return its record, or None (and set ``stop_reason``) when done."""
        return self.records[-1] if self._advance() else None

    @property
    def footprint(self) -> int:
        """The bytes this trainer holds, estimated (see ``bpe.budget``): its position index until
        it finishes, its words, and what each merge added (the new token's text, its record)."""
        return self._index_bytes + self._words_bytes + self._grown + self._text_bytes

    def _check_budget(self, best: int) -> None:
        """BudgetError when merging ``best`` would take this trainer past its budget."""
        budget = self.budget
        assert budget is not None
        tokens = self._vocab.tokens
        made = len(self.merges)
        ahead = (len(tokens[best >> PAIR_SHIFT]) + len(tokens[best & PAIR_MASK])) * 4 * _budget.TOKEN_COPIES
        if budget.memory_bytes is not None and self.footprint + ahead > budget.memory_bytes:
            raise BudgetError(
                f"Training stopped after {_merges(made)}: the next would take this trainer past the "
                f"{_budget.mib_text(budget.memory_bytes)} {budget.whose} may use on this server" + self._why_big()
            )
        if budget.seconds is not None and self._clock is not None and made % 32 == 0:
            spent = self.train_seconds + time.thread_time() - self._clock
            if spent > budget.seconds:
                raise BudgetError(
                    f"Training stopped after {_merges(made)}: it has used {spent:,.0f} s of the server's time, "
                    f"the most {budget.whose} may use; train the rest without step records (a worker process "
                    "does that) or with the command line."
                )
        ceiling = budget.ceiling
        grown = self._grown + self._text_bytes
        if ceiling is not None and (made % 256 == 0 or grown - self._seen_grown > 4 * 2**20 or ahead > 2**20):
            self._seen_grown = grown
            room = ceiling.room()
            if room is not None and room < ahead + _budget.CEILING_MARGIN:
                raise BudgetError(
                    f"Training stopped after {_merges(made)}: the server is at its memory ceiling "
                    f"({_budget.mib_text(ceiling.limit_bytes)}, every session's training counted); try again "
                    "later, or ask for fewer merges."
                )

    def _why_big(self) -> str:
        """The end of a memory sentence: what makes this training big, and what keeps it smaller."""
        if self._text_bytes > self.footprint / 2:
            return (
                f" (most of it is the text of its tokens, the longest already {self._longest:,} characters: merges "
                "of pairs that occur once join ever longer tokens). A minimum pair count of 2, a pre-tokenizer or "
                "fewer merges keep it smaller."
            )
        return f" (it holds about {_budget.mib_text(self.footprint)} now). Fewer merges or a smaller corpus fit."

    def _advance(self) -> bool:
        """Do one merge and log it; False (and set ``stop_reason``) when done. Makes no
        ``StepRecord``: ``run`` needs none, and the log makes them when they are read."""
        if self.stop_reason is not None:
            return False
        cfg = self.config
        reason = self._variant.stop(self)
        if reason is not None:
            return self._finish(reason)
        if self._transition_at is not None and len(self.merges) >= self._transition_at:
            self._transition_at = None
            self._variant.transition(self)
        log = self.records
        full = log.detailed
        top = self._top(max(self.top_k, 1) if full else 1)
        if not top:
            return self._finish("no pairs left")
        best, best_count = top[0]
        if best_count < cfg.min_frequency:
            return self._finish("min_frequency")
        if self.budget is not None:
            try:
                self._check_budget(best)
            except BudgetError as err:
                self.held = str(err)
                raise
        self._commit(best, best_count, top, full)
        return True

    def merge_pair(self, left_id: int, right_id: int) -> int:
        """Merge a pair chosen elsewhere (by a trainer over several corpora, see ``parity``),
        whatever its count here, even none: the vocabulary gains the token all the same, so
        trainers that make the same merges keep the same ids. Returns the merged token's id;
        the step is logged as ``step`` logs it. Stop rules are the caller's.

        >>> t = Trainer.from_texts("abab cd", TrainerConfig(pretokenizer="none", unit="char"))
        >>> t.merge_pair(3, 4), t.merge_pair(1, 2)
        (5, 6)
        >>> [(r.token, r.count, r.tokens_after) for r in t.records]
        [('cd', 1, 6), ('ab', 2, 4)]
        """
        if self.stop_reason is not None:
            raise ConfigError("this trainer has stopped: it makes no more merges")
        pair = left_id << PAIR_SHIFT | right_id
        full = self.records.detailed and self.top_k > 0
        return self._commit(pair, self._count.get(pair, 0), self._top(self.top_k) if full else [], full)

    def best_pair(self) -> tuple[int, int, int] | None:
        """(left id, right id, count) of the pair the next merge would take, None when no pair is
        left; cheaper than ``peek(1)`` (no table row is made).

        >>> Trainer.from_texts("abab", TrainerConfig(pretokenizer="none", unit="char")).best_pair()
        (0, 1, 2)
        """
        if self.done:
            return None
        top = self._top(1)
        if not top:
            return None
        pair, count = top[0]
        return pair >> PAIR_SHIFT, pair & PAIR_MASK, count

    def _commit(self, best: int, best_count: int, top: list[tuple[int, int]], full: bool) -> int:
        """Make the merge of ``best`` (``top``: the pair table it was chosen from), log it and
        return the merged token's id."""
        cfg = self.config
        log = self.records
        table = tuple(map(self._pair_stat, top[: self.top_k])) if full else ()
        n_tied = self._hist[best_count] - 1 if best_count else 0
        left, right = best >> PAIR_SHIFT, best & PAIR_MASK
        new_id, reused = self._vocab.add_merge(left, right)
        if cfg.tie_break == "hf" and not reused:
            self._hf_rank.append(new_id)
        if not reused:
            made = self._vocab.tokens[new_id]
            self._text_bytes += sys.getsizeof(made) * _budget.TOKEN_COPIES
            self._longest = max(self._longest, len(made))
        self._grown += _budget.RECORD_BYTES if full else _budget.COMPACT_RECORD_BYTES
        replaced, per_word, positions = self._merge(best, left, right, new_id) if best_count else (0, {}, ())
        self.tokens -= replaced
        self.merges.append((left, right))
        # nlargest equals a stable sort by count, descending: ties keep word order
        picked = heapq.nlargest(_EXAMPLES, per_word.items(), key=itemgetter(1)) if full else []
        examples = tuple((self._example(wi), n) for wi, n in picked)
        log.append(
            left,
            right,
            new_id,
            count=best_count,
            replaced=replaced,
            tokens_after=self.tokens,
            n_tied=n_tied,
            words_affected=len(per_word),
            reused=reused,
            top_pairs=table,
            examples=examples,
            example_words=tuple(wi for wi, _ in picked),
        )
        if self._after_merge is not None:
            self._after_merge(self, MergeEvent(left, right, new_id, replaced, positions, reused))
        return new_id

    def bump(self, pair: int, delta: int, before: dict[int, int]) -> None:
        """Change a pair's count, keeping its count before the change in ``before`` (``settle``)."""
        count = self._count
        old = count.get(pair, 0)
        before.setdefault(pair, old)
        count[pair] = old + delta

    def note(self, pair: int, p: int) -> None:
        """Record a position of a pair (ascending array while positions come in order, a heap after)."""
        lst = self._where.get(pair)
        if lst is None:
            self._where[pair] = array("i", (p,))
        elif type(lst) is list:
            heapq.heappush(lst, p)
        elif p >= lst[-1]:
            lst.append(p)
        else:
            heapq.heappush(self._heap_of(pair), p)

    def settle(self, before: dict[int, int]) -> None:
        """The count histogram and the heap brought up to date for the pairs whose counts
        changed (``before``: pair -> count before); a pair that is gone is forgotten."""
        count, where, hist, heap = self._count, self._where, self._hist, self._heap
        push = heapq.heappush
        self._grown += _budget.CHANGED_PAIR_BYTES * len(before)
        for changed, old in before.items():
            c = count.get(changed, 0)
            if old > 0:
                hist[old] -= 1
            if c <= 0:
                count.pop(changed, None)
                where.pop(changed, None)
            else:
                hist[c] += 1
                push(heap, (-c, self._tie_key(changed), changed))

    def _finish(self, reason: str) -> bool:
        """Stop for good: a finished trainer never merges again (another setting makes another
        trainer), so the position index, most of its memory, is let go (~500 MB for a 20 MB text
        without pre-tokenization); the merges, the log and the words stay. False: no merge made."""
        self.stop_reason = reason
        self._index_bytes = 0
        self._sym = self._nxt = self._prv = self._wof = array("i")
        self._count, self._where, self._heap, self._front, self._rows = {}, {}, [], [], {}
        self._hist = Counter()
        return False

    def _pair_stat(self, entry: tuple[int, int]) -> PairStat:
        """A pair-table row, shared between steps while the pair's count stays the same (most of
        the top-K table does not change from one merge to the next)."""
        row = self._rows.get(entry)
        if row is None:
            pair, c = entry
            left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
            tokens = self._vocab.tokens
            row = self._rows[entry] = PairStat(left, right, tokens[left], tokens[right], c)
        return row

    def _example(self, wi: int) -> str:
        word = self._words[wi]
        return word if len(word) <= _EXAMPLE_CHARS else word[: _EXAMPLE_CHARS - 1] + "…"

    def _merge(self, pair: int, a: int, b: int, new: int) -> tuple[int, dict[int, int], Sequence[int]]:
        """Merge every occurrence of ``pair`` = (a, b) into ``new``: (occurrences replaced,
        word -> its occurrences, the positions the pair was recorded at)."""
        sym, nxt, prv, wof, freqs = self._sym, self._nxt, self._prv, self._wof, self._freqs
        count, where, hist = self._count, self._where, self._hist
        push = heapq.heappush
        positions = where.pop(pair)
        self._grown += _budget.VISITED_BYTES * len(positions)
        if type(positions) is list:  # a heap; an array is still in ascending order
            positions.sort()
        before: dict[int, int] = {}  # pair -> its count before this merge, for pairs it touched
        per_word: dict[int, int] = {}
        replaced = 0
        new_left = new << PAIR_SHIFT
        for p in positions:
            if sym[p] != a:
                continue
            q = nxt[p]
            if q < 0 or sym[q] != b:
                continue
            wi = wof[p]
            w = freqs[wi]
            left = prv[p]
            right = nxt[q]
            if left >= 0:
                old = sym[left] << PAIR_SHIFT | a
                if old not in before:
                    before[old] = count[old]
                count[old] -= w
            if right >= 0:
                old = b << PAIR_SHIFT | sym[right]
                if old not in before:
                    before[old] = count[old]
                count[old] -= w
            sym[p] = new
            sym[q] = -1
            nxt[p] = right
            if right >= 0:
                prv[right] = p
                added = new_left | sym[right]
                if added not in before:
                    before[added] = count.get(added, 0)
                count[added] = count.get(added, 0) + w
                lst = where.get(added)
                if lst is None:
                    where[added] = array("i", (p,))
                elif type(lst) is list:
                    push(lst, p)
                elif p >= lst[-1]:
                    lst.append(p)  # positions come in ascending order: the array stays sorted
                else:
                    push(self._heap_of(added), p)
            if left >= 0:
                added = sym[left] << PAIR_SHIFT | new
                if added not in before:
                    before[added] = count.get(added, 0)
                count[added] = count.get(added, 0) + w
                lst = where.get(added)
                if lst is None:
                    where[added] = array("i", (left,))
                elif type(lst) is list:
                    push(lst, left)
                elif left >= lst[-1]:
                    lst.append(left)  # positions come in ascending order: the array stays sorted
                else:
                    push(self._heap_of(added), left)
            replaced += w
            per_word[wi] = per_word.get(wi, 0) + w

        merged_count = before.pop(pair, None)
        if merged_count is None:
            merged_count = count[pair]
        del count[pair]
        hist[merged_count] -= 1
        self.settle(before)
        return replaced, per_word, positions

    def run(self) -> Trainer:
        """Train to the end; returns self (the records are in ``records``)."""
        while self._advance():
            pass
        return self


def train_to_end(trainer: Trainer, *, progress: Callable[[float, str], None] | None = None, chunk: int = 50) -> Trainer:
    """Advance a trainer until a stop rule fires, ``chunk`` merges at a time, telling
    ``progress`` (fraction of the planned merges, "k merges") after each chunk; returns it (a
    worker process's job: the trainer goes there and comes back trained).

    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> seen = []
    >>> len(train_to_end(Trainer.from_texts("low lower lowest", cfg), progress=lambda f, t: seen.append(t)).records)
    3
    >>> seen
    ['3 of 3 merges']
    """
    planned = trainer.planned_merges
    try:
        _advance_to_end(trainer, planned, progress, chunk)
    except BudgetError:
        pass  # the trainer keeps its merges, and ``held`` says why it stopped short
    return trainer


def train_words_to_end(
    words: Mapping[str, int],
    config: TrainerConfig,
    *,
    encoding: EncodeOptions = EncodeOptions(),
    budget: Budget | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> Trainer:
    """A trainer built over ``words`` and trained to the end without step records (a worker
    process's job: the server never holds its position index). Under ``budget``, what it keeps
    once finished (its words, tokens and records; the index is let go) stays within the budget's
    memory: the index is allowed on top of it; ``held`` says why it stopped short, if it did.

    >>> t = train_words_to_end({"abab": 3}, TrainerConfig(pretokenizer="none", unit="char", vocab_size=None))
    >>> [r.token for r in t.records], t.held
    (['ab', 'abab'], None)
    >>> t = train_words_to_end({"ab" * 400: 1}, TrainerConfig(pretokenizer="none", unit="char", vocab_size=None), budget=Budget(memory_bytes=20_000))
    >>> len(t.records), t.held[:40]
    (4, 'Training stopped after 4 merges: the nex')
    """
    trainer = Trainer(words, config, top_k=0, full_records=0, encoding=encoding).require_room()
    if budget is not None and budget.memory_bytes is not None:
        trainer.budget = dataclasses.replace(budget, memory_bytes=budget.memory_bytes + trainer._index_bytes)
    return train_to_end(trainer, progress=progress)


def _advance_to_end(
    trainer: Trainer, planned: int | None, progress: Callable[[float, str], None] | None, chunk: int
) -> None:
    while trainer.advance(chunk) and not trainer.done:
        if progress is not None:
            done = len(trainer.records)
            progress(
                min(1.0, done / planned) if planned else 0.0,
                f"{done:,}" + (f" of {planned:,}" if planned else "") + " merges",
            )
    if progress is not None:
        done = len(trainer.records)
        progress(1.0, f"{done:,}" + (f" of {planned:,}" if planned else "") + " merges")


def train(
    texts: str | Iterable[str],
    config: TrainerConfig,
    *,
    top_k: int = DEFAULT_TOP_K,
    full_records: int | None = None,
    encoding: EncodeOptions = EncodeOptions(),
) -> Trainer:
    """Train to the end in one call.

    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", marker="eow", vocab_size=None, num_merges=4)
    >>> [r.token for r in train("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3, cfg).records]
    ['es', 'est', 'est</w>', 'lo']
    """
    return Trainer.from_texts(texts, config, top_k=top_k, full_records=full_records, encoding=encoding).run()
