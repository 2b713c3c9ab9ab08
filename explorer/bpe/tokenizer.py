"""The tokenizer: encode with learned merges, decode, trace, truncate, BPE-dropout.

A tokenizer is (pipeline, vocab, encoding): the stages that turn text into base symbols, the
special tokens + alphabet + merges its vocabulary is derived from, and the encoding options
(no training choice: the trainer's config stays with the trainer). Encoding a piece
repeatedly merges the adjacent pair whose merge rule has the lowest rank, leftmost first
(tiktoken's and minbpe's loop). For merges learned by our trainer that reproduces the trainer's
own segmentation of every training word (until a merge reuses an existing token's id, see
``encode_piece``), so "the tokenizer as of step k" is ``truncate(k)``.
"""

from __future__ import annotations

import random
import threading
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from operator import lshift, or_
from typing import Any, Literal, NamedTuple

from ..errors import ConfigError, DecodeError
from ..stages.markers import apply_marker, strip_markers
from ..stages.normalizers import denormalize_str, normalize_str
from ..stages.pipeline import Pipeline
from ..stages.pretokenizers import Piece, iter_piece_texts, pre_tokenize_str, special_tokens_re, split_sequences
from ..stages.units import base_symbols, byte_alphabet, bytes_to_display, display_to_bytes
from . import merging
from .config import EncodeOptions, TrainerConfig
from .file_ids import FileIds
from .glossaries import END_OF_WORD, OpenIds, glossary_regex, is_plain_word, isolate_glossaries
from .merging import ID_BITS, ID_MASK, SHORT_PIECE, Chain
from .picky import EventPlan, Replay
from .variant import PieceMerger
from .variants import piece_merger
from .vocab import Vocab

__all__ = ["DECODE_ERRORS", "ENCODING_RULES", "EncodedPiece", "PieceCache", "Tokenizer", "TraceStep"]

EncodingRules = Literal["merges", "tiktoken"]
DecodeErrors = Literal["replace", "strict", "ignore"]
DECODE_ERRORS: dict[DecodeErrors, str] = {
    "replace": "bytes that are not UTF-8 become U+FFFD (tiktoken's default)",
    "strict": "bytes that are not UTF-8 raise an error that says where",
    "ignore": "bytes that are not UTF-8 are dropped",
}
ENCODING_RULES: dict[str, str] = {
    "merges": "only a learned pair (a, b) merges, in the order learned (GPT-2's encoder.py, HF tokenizers)",
    "tiktoken": "any two neighbours whose bytes together are a token merge, lowest token rank first; "
    "lone surrogates become U+FFFD first (tiktoken)",
}

_CACHE_LIMIT = 200_000


class PieceCache(dict):
    """piece -> ids, merged on first look-up. Hits stay inside dict's C ``__getitem__`` (only a
    miss calls ``__missing__``), so encoding maps it over every piece of a text; 1 MB of
    Shakespeare has 300k pieces but 15k distinct ones, each merged once.

    >>> cache = PieceCache(lambda piece: (len(piece),))
    >>> cache["abc"], len(cache)
    ((3,), 1)
    """

    def __init__(self, merge: Callable[[str], tuple[int, ...]]):
        super().__init__()
        self._merge = merge

    def __missing__(self, piece: str) -> tuple[int, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        ids = self[piece] = self._merge(piece)
        return ids


class TraceStep(NamedTuple):
    """One merge applied while encoding a piece."""

    rank: int  # index of the merge rule (its training step - 1)
    position: int  # index of the left token before the merge
    left: str
    right: str
    token: str
    tokens: tuple[str, ...]  # the piece's tokens after this merge
    removed: bool = False  # PickyBPE: a removal (``left`` split into ``parts``), not a merge
    parts: tuple[str, ...] = ()  # a removal's parts (``right`` joins them with spaces)


class EncodedPiece(NamedTuple):
    """A pre-tokenized piece with its offsets in the normalized text and its token ids."""

    text: str
    start: int
    end: int
    ids: tuple[int, ...]


class Tokenizer:
    """Encode and decode with the merges of a trained BPE model.

    >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 0), (2, 1)])
    >>> tok.vocab.tokens, tok.pipeline.unit
    (('a', 'b', 'aa', 'aab'), 'char')
    >>> tok.tokens(tok.encode("aabab"))
    ['aab', 'a', 'b']
    >>> tok.tokens(tok.encode("aaabc"))
    ['aa', 'a', 'b', '<unk>']
    """

    def __init__(
        self,
        *,
        pipeline: Pipeline | None = None,
        vocab: Vocab | None = None,
        encoding: EncodeOptions = EncodeOptions(),
        special_ids: Mapping[str, int] | None = None,
        rules: EncodingRules = "merges",
        own_merges_suffice: bool = False,
        blank_ids: Sequence[int] = (),
        pair_rules: Mapping[tuple[int, int], tuple[int, int]] | None = None,
        file_ids: FileIds | Sequence[int] | None = None,
        config: TrainerConfig | None = None,
        alphabet: Sequence[str] | None = None,
        merges: Sequence[tuple[int, int]] | None = None,
    ):
        """A tokenizer is ``pipeline`` + ``vocab`` + ``encoding``. A trainer's config and what it
        learned make one with :meth:`from_merges`; the keyword form ``config=, alphabet=,
        merges=`` does the same (kept for compatibility).

        ``special_ids`` are special tokens with fixed ids past the vocabulary (tiktoken's
        ``special_tokens``, e.g. GPT-2's ``<|endoftext|>`` = 50256); ``vocab.special_tokens``
        instead take the first ids. ``rules`` says which neighbours may merge (ENCODING_RULES).

        ``own_merges_suffice`` (tiktoken's rules only) is the caller's word that merging each
        token's bytes by tiktoken's rules, ranks below the token's only, ends at its own merge
        (true of a table whose every token its merges rebuild, as the bundled tables', which the
        tests check). Then the only splits of a token that ever meet are its own merge's, and
        looking neighbours up by id pair among the merges gives tiktoken's ids, faster than by
        their joined texts.

        ``blank_ids`` are ids past the vocabulary that stand for no bytes at all: a rank table's
        empty token (Whisper's ``.tiktoken`` files end with ``= 50256``, base64 of nothing).
        tiktoken keeps such a rank, decodes it to ``b""`` and never encodes to it; so do we.

        ``pair_rules`` (``merges`` rules only) replaces the merges' own pairs with HF's merge list
        read from a file whose merges are not in the order their tokens are made (transformers'
        tiktoken converter lists every split of a token): ``{(left id, right id): (rank, new id)}``,
        each pair at its place in the file. ``vocab``'s merges then only derive the ids.

        ``file_ids`` are the ids a file gives the vocabulary's tokens when they are not the
        derived ones (SentencePiece's order: ``file_ids.FileIds``, derived id -> file id). They
        change no cut: ``shown_ids`` renames the ids ``encode`` gives, ``ids_from_shown`` takes
        them back, and the writers of files write them.

        >>> cfg = TrainerConfig(pretokenizer="none", unit="char")
        >>> vocab = Vocab(alphabet=("a", "b", "c"), merges=((1, 2), (0, 3)))  # bc, abc
        >>> tok = Tokenizer(pipeline=cfg.pipeline, vocab=vocab, pair_rules={(0, 3): (0, 4), (1, 2): (1, 3)})
        >>> tok.tokens(tok.encode("abc")), tok.tokens(tok.truncate(1).encode("abc"))
        (['abc'], ['a', 'bc'])
        """
        if config is not None:
            if pipeline is not None or vocab is not None:
                raise TypeError("give a tokenizer either pipeline= and vocab=, or config=, alphabet= and merges=")
            pipeline = config.pipeline
            vocab = _learned_vocab(config, alphabet or (), merges or ())
        elif pipeline is None or vocab is None or alphabet is not None or merges is not None:
            raise TypeError("give a tokenizer either pipeline= and vocab=, or config=, alphabet= and merges=")
        self.pipeline = pipeline
        self.vocab = vocab
        self.encoding = encoding
        if rules not in ENCODING_RULES:
            raise ConfigError(f"unknown encoding rules {rules!r}; choose one of {', '.join(ENCODING_RULES)}")
        if rules == "tiktoken" and pipeline.unit != "byte":
            raise ConfigError("tiktoken's rules rank byte strings: they need the byte unit")
        self.rules: EncodingRules = rules
        self.alphabet = vocab.alphabet
        self._ids = vocab.ids
        self.n_special = vocab.n_special
        self._tokens: tuple[str, ...] = vocab.tokens  # the hot paths index a tuple, not the Vocab
        self._set_merge_rules(vocab, own_merges_suffice, pair_rules)
        self._set_ids(vocab, special_ids, blank_ids, file_ids)
        self._set_options(pipeline, encoding)
        # a variant's own way of merging a piece, when the vocabulary needs one (PickyBPE's removals:
        # pieces replay the merges and removals in the order learned); None: by the merges' ranks
        self._merger: PieceMerger | None = piece_merger(self)
        self._cache = PieceCache(self._piece_encoder())
        self._special_re = special_tokens_re(tuple(self.special_ids)) if self.special_ids else None
        self._bytes_of: dict[int, bytes] = {}  # token id -> token_bytes(id), filled as ids are decoded
        self._made_whole: dict[int, bool] = {}  # token id -> made_whole(id), filled as asked

    @classmethod
    def from_merges(
        cls,
        config: TrainerConfig,
        alphabet: Sequence[str],
        merges: Sequence[tuple[int, int]],
        *,
        encoding: EncodeOptions = EncodeOptions(),
        **options: Any,
    ) -> Tokenizer:
        """A tokenizer of what a trainer learned: its config's pipeline, special tokens and id
        rule, the alphabet and the merges (``options``: the constructor's other keywords).

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 0), (2, 1)])
        >>> tok.tokens(tok.encode("aabab"))
        ['aab', 'a', 'b']
        """
        return cls(
            pipeline=config.pipeline, vocab=_learned_vocab(config, alphabet, merges), encoding=encoding, **options
        )

    def _set_merge_rules(
        self, vocab: Vocab, own_merges_suffice: bool, pair_rules: Mapping[tuple[int, int], tuple[int, int]] | None
    ) -> None:
        """What encoding needs of the merges: ``merged_ids``, each merge's rank, and ``_pair``,
        the look-up of two neighbours' merge by the tokenizer's rules."""
        rules = self.rules
        first_new = vocab.n_base
        # one id per merge: what encoding needs of the merges (a rank table's are derived when
        # asked for, ``merges``)
        self.merged_ids: list[int] = list(vocab.merged_ids)
        ranks = range(len(self.merged_ids))
        # token id -> rank of the first merge that made it: id - first_new when every merge made a
        # new id (a rank table, most trained tokenizers), else looked up
        self._first_new = first_new
        self._rank_of: dict[int, int] | None = (
            None if len(vocab) == first_new + len(ranks) else _first_wins(self.merged_ids, ranks)
        )
        # each merge packed into one int, rank above the new id (merging.pack): [0 << ID_BITS | 256,
        # 1 << ID_BITS | 257, ...], a range when merge k made id first_new + k (no list to build)
        step = (1 << ID_BITS) + 1
        packed: Sequence[int] = (
            range(first_new, first_new + len(ranks) * step, step)
            if self._rank_of is None
            else list(map(or_, map(lshift, ranks, repeat(ID_BITS)), self.merged_ids))
        )
        self.own_merges_suffice = rules == "tiktoken" and own_merges_suffice
        self._packed: dict[tuple[int, int], int]
        self._by_text: dict[str, int] | None = None
        self._pair: merging.Lookup  # (two neighbours' ids, default) -> their packed merge or the default
        if rules == "tiktoken" and not own_merges_suffice:
            # a merged token's text -> its packed merge at the first rank that made it (tiktoken has
            # one rank per byte string): {"Ġt": 0 << ID_BITS | 256, ...}. Two neighbours merge when
            # their texts joined are a key, so every split of a token merges into it.
            self._by_text = _first_wins(self._merged_texts(), packed)
            self._pair = self._pair_by_text
            self._splits: dict[tuple[int, int], tuple[int, int]] | None = None  # merge_rules(), built on first use
            self._splits_lock = threading.Lock()
        elif pair_rules is not None:
            if rules != "merges" or vocab.removals:
                raise ConfigError("a file's own merge list (pair_rules) goes with the merges' rules and no removals")
            self._packed = merging.packed_rules(pair_rules)
            self._pair = self._packed.get
        else:
            # (left id, right id) -> packed merge; a pair learned twice keeps its first rank (HF does
            # the same). Keyed by the pair itself so that zip() makes the keys.
            self._packed = _first_wins(self.merges, packed)
            self._pair = self._packed.get
        self.pair_rules: dict[tuple[int, int], tuple[int, int]] | None = (
            None if pair_rules is None else dict(pair_rules)
        )

    def _set_ids(
        self,
        vocab: Vocab,
        special_ids: Mapping[str, int] | None,
        blank_ids: Sequence[int],
        file_ids: FileIds | Sequence[int] | None,
    ) -> None:
        """The ids past the derived ones: a file's own ids, the trailing special tokens, the
        empty tokens, and the unknown token's."""
        table = file_ids if file_ids is None or isinstance(file_ids, FileIds) else FileIds(file_ids)
        if table is not None and len(table) != len(vocab):
            raise ConfigError(f"a file's ids name {len(table):,} tokens; the vocabulary has {len(vocab):,}")
        self.file_ids: FileIds | None = None if table is None or table.is_identity() else table
        # every special token -> its id: the leading ones (the vocab's) and the trailing ones
        self._trailing: dict[int, str] = {}
        self.special_ids: dict[str, int] = {t: self._ids[t] for t in vocab.special_tokens}
        self._blank = frozenset(map(int, blank_ids))
        if any(i < len(self._tokens) for i in self._blank):
            raise ConfigError(f"an empty token needs an id past the vocabulary, not {min(self._blank)}")
        first_free = max(len(self._tokens), 0 if self.file_ids is None else self.file_ids.extent)
        for tok, i in (special_ids or {}).items():
            if not tok or tok in self.special_ids or i in self._trailing or i < first_free or i in self._blank:
                raise ConfigError(f"special token {tok!r} needs a new id past the vocabulary, not {i}")
            self.special_ids[tok] = int(i)
            self._trailing[int(i)] = tok
        # Unseen characters must still be counted, never dropped: unless the unk token is one
        # of the special tokens, it gets the first id past every other.
        # (past every file id too: a file's ids of an earlier merge's tokens may pass the vocabulary's)
        self.unk_id: int = (
            self._ids[self.encoding.unk_token]
            if self.encoding.unk_token in vocab.special_tokens
            else max(
                [
                    len(self._tokens),
                    *(i + 1 for i in self._trailing),
                    *(i + 1 for i in self._blank),
                    0 if self.file_ids is None else self.file_ids.extent,
                ]
            )
        )

    def _set_options(self, pipeline: Pipeline, encoding: EncodeOptions) -> None:
        """What the encoding options need: subword-nmt's open ids and glossaries, SentencePiece's
        byte fallback, and the byte unit's byte -> id table."""
        # subword-nmt's apply_bpe: unknown symbols kept as themselves, glossaries never split
        self._open: OpenIds | None = None
        self._glossary_re = glossary_regex(encoding.glossaries)
        if encoding.keep_unknown or encoding.glossaries:
            if pipeline.unit != "char" or pipeline.marker not in ("none", "eow", "eow-glued"):
                raise ConfigError(
                    "unknown characters kept and glossaries are subword-nmt's: they need the char unit "
                    "and marker none, eow or eow-glued"
                )
            if encoding.keep_unknown:
                words = [g for g in encoding.glossaries if is_plain_word(g)]
                self._open = OpenIds(self.unk_id + 1, words, glued=pipeline.marker == "eow-glued")
        # SentencePiece's byte fallback: byte -> the id of its token "<0xXX>", and back
        self._fallback: list[int] | None = None
        self._fallback_byte: dict[int, int] = {}
        if encoding.byte_fallback:
            self._fallback = self._fallback_ids(pipeline)
            self._fallback_byte = {i: b for b, i in enumerate(self._fallback)}
        if pipeline.unit == "byte":
            # id of each single byte's display char, or unk when it is not in the alphabet
            self._byte_ids = [self._ids.get(c, self.unk_id) for c in byte_alphabet()]
            self._byte_id = self._byte_ids.__getitem__
            # bytes.translate() maps a whole piece in C when every byte's id fits in a byte
            self._byte_table = bytes(self._byte_ids) if max(self._byte_ids) < 256 else None

    def _piece_encoder(self) -> Callable[[str], tuple[int, ...]]:
        """The encoder factory: the piece encoder this tokenizer's rules, variant and options call
        for (``_ENCODERS``, the first that applies), cached per distinct piece by ``PieceCache``.

        >>> vocab = Vocab(alphabet=("a", "b"), merges=((0, 1), (2, 0)), removals=((2, 2),))
        >>> Tokenizer(pipeline=TrainerConfig(pretokenizer="none", unit="char").pipeline, vocab=vocab)._piece_encoder().__name__
        '_variant_merged'
        """
        name = next(name for name, applies in _ENCODERS if applies(self))
        return getattr(self, name)

    def _fallback_ids(self, pipeline: Pipeline) -> list[int]:
        """The ids of the 256 byte tokens ``<0x00>`` ... ``<0xFF>`` (HF's names), for byte
        fallback; ConfigError when one is missing (HF would then give the unknown token for a
        character whose bytes are not all there, in an order of its own) or the pipeline is not
        character level with no word marker."""
        if pipeline.unit != "char" or pipeline.marker != "none":
            raise ConfigError("byte fallback is SentencePiece's: it needs the char unit and no word marker")
        names = [f"<0x{b:02X}>" for b in range(256)]
        missing = [t for t in names if t not in self._ids]
        if missing:
            raise ConfigError(
                f"byte fallback needs the 256 byte tokens <0x00> ... <0xFF> in the vocabulary; "
                f"{len(missing)} are missing (the first: {missing[0]})"
            )
        return [self._ids[t] for t in names]

    def _merged_texts(self) -> Sequence[str]:
        """The text of the token each merge made, in rank order."""
        if self._rank_of is None:  # every merge made a new id: they follow the alphabet
            return self._tokens[self._first_new :]
        return [self._tokens[i] for i in self.merged_ids]

    def _pair_by_text(self, pair: tuple[int, int], default: int = merging.NO_MERGE) -> int:
        """tiktoken's rule for two neighbours: every split of a token's bytes into two tokens
        merges into it, at the token's rank, not only the split its merge was learned from.
        Byte-level display strings hold one character per byte, so joining two tokens' strings
        joins their bytes. Unknown bytes (ids past the vocabulary) merge with nothing.

        >>> cfg = TrainerConfig(pretokenizer="none", alphabet="full-bytes")
        >>> merges = [(98, 99), (97, 98), (257, 99)]  # bc, ab, abc = ab + c
        >>> Tokenizer.from_merges(cfg, byte_alphabet(), merges).encode("abc")
        [97, 256]
        >>> tok = Tokenizer.from_merges(cfg, byte_alphabet(), merges, rules="tiktoken")
        >>> tok.encode("abc"), tok._pair_by_text((97, 256)) == tok._pair_by_text((257, 99)) == merging.pack(2, 258)
        ([258], True)
        """
        a, b = pair
        vocab = self._tokens
        if a < len(vocab) and b < len(vocab):
            # installed as _pair only when the table exists: no None check per pair
            return self._by_text.get(vocab[a] + vocab[b], default)  # type: ignore[union-attr]
        return default

    def _split_rules(self) -> dict[tuple[int, int], tuple[int, int]]:
        """With tiktoken's rules, every pair of tokens that may merge -> (rank, new id): each
        split of each merged token into two tokens (cl100k_base: 530,000 pairs of 100,000
        tokens). Built once, on first use (``merge_rules``); encoding never needs it.

        >>> cfg = TrainerConfig(pretokenizer="none", alphabet="full-bytes")
        >>> tok = Tokenizer.from_merges(cfg, byte_alphabet(), [(98, 99), (97, 98), (257, 99)], rules="tiktoken")
        >>> tok._split_rules()
        {(98, 99): (0, 256), (97, 98): (1, 257), (97, 256): (2, 258), (257, 99): (2, 258)}
        """
        with self._splits_lock:
            if self._splits is None:
                assert self._by_text is not None  # built with tiktoken's rules only
                ids = self._ids
                splits: dict[tuple[int, int], tuple[int, int]] = {}
                setdefault = splits.setdefault
                for token, packed in self._by_text.items():  # in rank order: a pair keeps its lowest rank
                    rule = merging.unpack(packed)
                    for i in range(1, len(token)):
                        a = ids.get(token[:i])
                        if a is not None:
                            b = ids.get(token[i:])
                            if b is not None:
                                setdefault((a, b), rule)
                self._splits = splits
            return self._splits

    # ---- identity ------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        # a tokenizer crosses to and from worker processes (an import read there): the lock that
        # guards the lazy split table cannot be pickled, and each process needs its own anyway
        state = self.__dict__.copy()
        state.pop("_splits_lock", None)
        state["_bytes_of"] = {}  # a cache of decoded tokens: filled again where it is used
        return state

    def __setstate__(self, state: dict) -> None:
        if "_plan" in state:  # pickled before variants chose their piece merger
            plan = state.pop("_plan")
            state["_merger"] = None if plan is None else Replay(plan)
        self.__dict__.update(
            {"_blank": frozenset(), "_made_whole": {}, "_fallback": None, "_fallback_byte": {}, "file_ids": None}
            | state
        )  # pickled before they were
        if self._by_text is not None:
            self._splits_lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tokens)

    @property
    def config(self) -> TrainerConfig:
        """Compatibility, read-only: a TrainerConfig of this tokenizer's pipeline, special tokens
        and id rule (its other training fields are defaults, no stop rule). Read ``pipeline`` and
        ``vocab`` instead; a tokenizer keeps no training choice."""
        vocab = self.vocab
        return TrainerConfig(
            pipeline=self.pipeline,
            special_tokens=vocab.special_tokens,
            reuse_ids=vocab.reuse_ids,
            vocab_size=None,
            num_merges=None,
        )

    @property
    def n_vocab(self) -> int:
        """One past the largest id, special tokens and empty tokens included (tiktoken's ``n_vocab``)."""
        return max([len(self._tokens), *(i + 1 for i in self._trailing), *(i + 1 for i in self._blank)])

    @property
    def blank_ids(self) -> frozenset[int]:
        """Ids that stand for no bytes (a rank table's empty token): decoded, never encoded to."""
        return self._blank

    @property
    def merges(self) -> tuple[tuple[int, int], ...]:
        """The merges, (left id, right id) in rank order: the vocabulary's (a rank table's are
        recovered from its ranks on first use, ``ranks.RankVocab``; encoding never asks)."""
        return self.vocab.merges

    @property
    def num_merges(self) -> int:
        return len(self.merged_ids)

    def shown_ids(self, ids: Sequence[int]) -> list[int]:
        """The ids as this tokenizer's file numbers them, for showing and writing: ``encode``'s
        ids are the ones the merges derive, which a SentencePiece-ordered file numbers
        otherwise (``file_ids``); the same ids for every other tokenizer.

        >>> cfg = TrainerConfig(pretokenizer="none", unit="char")
        >>> tok = Tokenizer(pipeline=cfg.pipeline, vocab=Vocab(alphabet=("a", "b"), merges=((0, 1),)), file_ids=[1, 2, 0])
        >>> tok.encode("abb"), tok.shown_ids(tok.encode("abb")), tok.ids_from_shown([0, 2])
        ([2, 1], [0, 2], [2, 1])
        """
        return list(ids) if self.file_ids is None else self.file_ids.out_many(ids)

    def shown_id(self, token_id: int) -> int:
        """One id as the file numbers it (``shown_ids``)."""
        return token_id if self.file_ids is None else self.file_ids.out(token_id)

    def ids_from_shown(self, ids: Sequence[int]) -> list[int]:
        """Ids as the file numbers them (typed to decode, read from a link) back to ``encode``'s;
        DecodeError for a file id that names no token here (a later merge's, when truncated)."""
        return list(ids) if self.file_ids is None else self.file_ids.back_many(ids)

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token, self.special_ids.get(token))

    def merge_rank(self, token_id: int) -> int | None:
        """Rank of the merge that made a token (its training step - 1); None for the alphabet,
        special tokens and unk.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 1)])
        >>> tok.merge_rank(2), tok.merge_rank(0)
        (0, None)
        """
        if self._rank_of is None:
            rank = token_id - self._first_new
            return rank if 0 <= rank < len(self.merged_ids) else None
        return self._rank_of.get(token_id)

    def made_whole(self, token_id: int) -> bool:
        """True for a merged token that merging its own bytes never makes: with tiktoken's rules a
        rank table need not be made by merges (Llama 3's ``b"ektedir"``: its bytes merge, by the
        ranks below its own, into three parts). Its recorded merge is then one split that
        tiktoken would merge into it, not where it comes from; tiktoken makes it from a piece
        that is the token whole, or never (``analysis.health.scan`` says which).

        >>> from .ranks import tokenizer_from_ranks
        >>> table = [bytes([b]) for b in range(256)] + [b"ab", b"de", b"cd", b"abcd", b"abcde"]
        >>> tok = tokenizer_from_ranks(table, pretokenizer="none")
        >>> tok.made_whole(260), tok.made_whole(259), tok.made_whole(97)
        (True, False, False)
        >>> tok.encode("abcde"), tok.encode("xabcde")
        ([260], [120, 256, 99, 257])
        """
        rank = self.merge_rank(token_id)
        if rank is None or self._by_text is None:  # the merges' own rules: every token is its merge
            return False
        known = self._made_whole.get(token_id)
        if known is None:
            text = self._tokens[token_id]
            # two bytes are always their one merge; longer tokens merge by the lower ranks
            known = len(text) > 2 and (
                len(merging.lowest_first(list(text), self._by_text.get, joined=True, below=merging.pack(rank, 0))) != 2
            )
            self._made_whole[token_id] = known  # asked for every token by a scan, then by its pages
        return known

    def is_special(self, token_id: int) -> bool:
        return token_id < self.n_special or token_id in self._trailing

    def truncate(self, k: int) -> Tokenizer:
        """The tokenizer as it was after its first k merges.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a"], [(0, 0), (1, 1)])
        >>> tok.truncate(1).tokens(tok.truncate(1).encode("aaaa"))
        ['aa', 'aa']
        """
        vocab = self.vocab.truncate(k)
        rules = self.pair_rules
        if rules is not None:  # a file's own list: the rules whose tokens are all made by then
            end = len(vocab)
            rules = {(a, b): r for (a, b), r in rules.items() if a < end and b < end and r[1] < end}
        # a table's first k merges still rebuild their tokens: own_merges_suffice holds for them too;
        # the tokens kept keep their file's ids
        file_ids = None if self.file_ids is None else self.file_ids.truncate(len(vocab))
        return self._rebuilt(vocab=vocab, pair_rules=rules, file_ids=file_ids)

    def with_pipeline(self, pipeline: Pipeline) -> Tokenizer:
        """The same vocabulary, special tokens, rules and encoding options behind another
        pipeline (an import that names the normalizer its files do not hold).

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["é"], [])
        >>> nfc = tok.with_pipeline(Pipeline(pretokenizer="none", unit="char", normalizer="nfc"))
        >>> tok.tokens(tok.encode("e\u0301")), nfc.tokens(nfc.encode("e\u0301"))
        (['<unk>', '<unk>'], ['é'])
        """
        return self._rebuilt(pipeline=pipeline)

    def _rebuilt(self, **changed: Any) -> Tokenizer:
        """This tokenizer made again with some of its constructor's arguments changed, every
        other one as it is here (one list of them: an option added to the constructor is kept
        by every copy)."""
        given: dict[str, Any] = {
            "pipeline": self.pipeline,
            "vocab": self.vocab,
            "special_ids": {t: i for i, t in self._trailing.items()},
            "blank_ids": tuple(self._blank),
            "rules": self.rules,
            "encoding": self.encoding,
            "own_merges_suffice": self.own_merges_suffice,
            "pair_rules": self.pair_rules,
            "file_ids": self.file_ids,
        }
        return Tokenizer(**(given | changed))

    # ---- encoding --------------------------------------------------------------------------
    def _piece_ids(self, piece: str) -> list[int]:
        if self.pipeline.unit == "byte":
            raw = piece.encode("utf-8", "surrogatepass")
            ids = list(raw.translate(self._byte_table)) if self._byte_table else list(map(self._byte_id, raw))
        else:
            symbols = apply_marker(base_symbols(piece, "char"), self.pipeline.marker)
            if self._open is not None:
                ids = list(map(self._symbol_id, symbols))
            elif self._fallback is not None:
                ids = self._fallen_back(symbols)
            else:
                known, unk = self._ids, self.unk_id
                ids = [known.get(s, unk) for s in symbols]
        if self.encoding.drop_unknown:
            unk = self.unk_id
            return [i for i in ids if i != unk]
        return _fused(ids, self.unk_id) if self.encoding.fuse_unk else ids

    def _fallen_back(self, symbols: list[str]) -> list[int]:
        """Symbols' ids with byte fallback: a character outside the vocabulary is its UTF-8
        bytes' tokens (HF's BPE with ``byte_fallback``).

        >>> cfg = TrainerConfig(pretokenizer="none", unit="char")
        >>> vocab = Vocab(alphabet=(*(f"<0x{b:02X}>" for b in range(256)), "a"), merges=())
        >>> tok = Tokenizer(pipeline=cfg.pipeline, vocab=vocab, encoding=EncodeOptions(byte_fallback=True))
        >>> tok.tokens(tok.encode("aé")), tok.decode(tok.encode("aé"))
        (['a', '<0xC3>', '<0xA9>'], 'aé')
        """
        known, fallback = self._ids, self._fallback
        assert fallback is not None
        ids: list[int] = []
        for s in symbols:
            found = known.get(s)
            if found is None:
                ids += [fallback[b] for b in s.encode("utf-8", "surrogatepass")]
            else:
                ids.append(found)
        return ids

    def _fallback_text(self, ids: Sequence[int]) -> str:
        """The tokens of ids joined, each run of byte tokens read as UTF-8 as HF's ByteFallback
        decoder reads it: the run's text, or one U+FFFD per byte token when it is not UTF-8.

        >>> cfg = TrainerConfig(pretokenizer="none", unit="char")
        >>> vocab = Vocab(alphabet=(*(f"<0x{b:02X}>" for b in range(256)), "a"), merges=())
        >>> tok = Tokenizer(pipeline=cfg.pipeline, vocab=vocab, encoding=EncodeOptions(byte_fallback=True))
        >>> tok._fallback_text([0xE4, 0xBD, 0xA0, 256, 0xE4, 0xBD])
        '你a\ufffd\ufffd'
        """
        out: list[str] = []
        run: list[int] = []  # the bytes of the current run of byte tokens

        def flush() -> None:
            try:
                out.append(bytes(run).decode("utf-8"))
            except UnicodeDecodeError:
                out.append("\ufffd" * len(run))
            run.clear()

        for i in ids:
            byte = self._fallback_byte.get(i)
            if byte is not None:
                run.append(byte)
                continue
            if run:
                flush()
            out.append("\ufffd" if i == self.unk_id else self.id_to_token(i))
        if run:
            flush()
        return "".join(out)

    def _symbol_id(self, symbol: str) -> int:
        """A symbol's id: the vocabulary's, else its open id (``keep_unknown``), else unk."""
        found = self._ids.get(symbol)
        if found is not None:
            return found
        return self.unk_id if self._open is None else self._open.id_of(symbol)

    def _glossed(self, piece: str, *, merge: Callable[[str], Sequence[int]] | None = None) -> tuple[int, ...]:
        """A word's ids under glossaries (subword-nmt's ``segment_tokens``): cut around the
        glossaries' matches; a part that matches one in full is one token, kept whole, and each
        other part is merged as a word of its own, with its own end-of-word marker (as
        ``apply_bpe`` merges it). Only the word's last token keeps the marker, so that decoding
        gives the word back: a part before its end ends in the same token without it. ``merge``
        merges a part (BPE-dropout's); by default without dropout.

        >>> cfg = TrainerConfig(pretokenizer="spaces", unit="char", marker="eow-glued")
        >>> vocab = Vocab(alphabet=("a", "b", "b</w>"), merges=((0, 2),))
        >>> tok = Tokenizer(pipeline=cfg.pipeline, vocab=vocab, encoding=EncodeOptions(keep_unknown=True, glossaries=("USA",)))
        >>> tok.tokens(tok.encode("abUSAab USA")), tok.decode(tok.encode("abUSAab USA"))
        (['ab', 'USA', 'ab</w>', 'USA</w>'], 'abUSAab USA')
        """
        assert self._glossary_re is not None
        parts = isolate_glossaries(piece, self.encoding.glossaries)
        out: list[int] = []
        for k, part in enumerate(parts):
            last = k == len(parts) - 1
            if self._glossary_re.match(part):
                out += self._whole_ids(part, last=last)
            else:
                out += (merge or self._merged_piece)(part)
                if not last:
                    self._unmark_end(out)
        return tuple(out)

    def _unmark_end(self, ids: list[int]) -> None:
        """The last token without the end-of-word marker: dropped when it is the marker alone,
        else its text without it (a token of the vocabulary or an open id)."""
        text = self.id_to_token(ids[-1]) if ids else ""
        if text == END_OF_WORD:
            ids.pop()
        elif text.endswith(END_OF_WORD):
            ids[-1] = self._symbol_id(text[: -len(END_OF_WORD)])

    def _whole_ids(self, part: str, *, last: bool) -> list[int]:
        """A glossary's match as one token (with the end-of-word marker when it ends the word),
        unknown when it is no token and unknown symbols are not kept."""
        symbols = apply_marker([part], self.pipeline.marker) if last else [part]
        return [self._symbol_id(s) for s in symbols]

    def _piece_text(self, piece: str) -> str:
        """A piece as one token's text: its bytes' display string, or its characters with the
        word marker."""
        if self.pipeline.unit == "byte":
            return bytes_to_display(piece.encode("utf-8", "surrogatepass"))
        return "".join(apply_marker(base_symbols(piece, "char"), self.pipeline.marker))

    def _whole(self, piece: str) -> int | None:
        """HF's ``ignore_merges``: the id of a piece that is itself a token (special tokens
        aside), else None."""
        whole = self._ids.get(self._piece_text(piece))
        return whole if whole is not None and whole >= self.n_special else None

    def _whole_then_merged(self, piece: str) -> tuple[int, ...]:
        """A piece's ids under HF's ``ignore_merges``: the piece whole when it is a token, else
        merged.

        >>> cfg = TrainerConfig(pretokenizer="none", unit="char")
        >>> vocab = Vocab(alphabet=("a", "b", "c"), merges=((0, 1), (1, 2), (0, 4)))
        >>> merged = Tokenizer(pipeline=cfg.pipeline, vocab=vocab)
        >>> whole = Tokenizer(pipeline=cfg.pipeline, vocab=vocab, encoding=EncodeOptions(ignore_merges=True))
        >>> merged.tokens(merged.encode("abc")), whole.tokens(whole.encode("abc"))
        (['ab', 'c'], ['abc'])
        """
        whole = self._whole(piece)
        return (whole,) if whole is not None else self._merged_piece(piece)

    def _merged_piece(self, piece: str) -> tuple[int, ...]:
        """A piece's ids without dropout (``merging.encode``: the list scan for a short piece,
        ``rank_sweeps`` for a long one), once per distinct piece (``PieceCache``).

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 1), (0, 2)])
        >>> tok._merged_piece("aabb"), tok._merged_piece("ba")
        ((3, 1), (1, 0))
        """
        ids = self._piece_ids(piece)
        # merging.encode's choice made here: one call less per distinct piece on the hot path
        return tuple(
            merging.lowest_first(ids, self._pair) if len(ids) <= SHORT_PIECE else merging.encode(ids, self._pair)
        )

    def _variant_merged(self, piece: str) -> tuple[int, ...]:
        """A piece's ids by its variant's own merger (PickyBPE: the merges and removals
        replayed, ``picky.Replay``).

        >>> vocab = Vocab(alphabet=("a", "b"), merges=((0, 1), (2, 0)), removals=((2, 2),))
        >>> tok = Tokenizer(pipeline=TrainerConfig(pretokenizer="none", unit="char").pipeline, vocab=vocab)
        >>> tok.tokens(tok._variant_merged("ababa")), tok.tokens(tok._variant_merged("abaab"))
        (['a', 'b', 'aba'], ['aba', 'a', 'b'])
        """
        return self._merger.merge(self._piece_ids(piece))  # type: ignore[union-attr]  # chosen only with one

    def _whole_or_merged(self, piece: str) -> tuple[int, ...]:
        """tiktoken's shortcut: a piece that is a token is that token, before any merge."""
        raw = piece.encode("utf-8", "surrogatepass")
        text = bytes_to_display(raw)
        whole = self._ids.get(text)
        if whole is not None and whole >= self.n_special:
            return (whole,)
        return self._merged_bytes(raw, text)

    def _merged_bytes(self, raw: bytes, text: str) -> tuple[int, ...]:
        """With tiktoken's rules, the ids of bytes ``raw`` whose display string is ``text``. A
        short piece merges its characters by their joined texts (as tiktoken joins byte slices),
        a long one is merged by id pair (``merging.rank_sweeps``, pairs looked up by
        ``_pair_by_text``); by id pair among the merges when ``own_merges_suffice``.

        >>> cfg = TrainerConfig(pretokenizer="none", alphabet="full-bytes")
        >>> tok = Tokenizer.from_merges(cfg, byte_alphabet(), [(98, 99), (97, 98), (257, 99)], rules="tiktoken")
        >>> tok._merged_bytes(b"abcab", "abcab")
        (258, 257)
        """
        if self._by_text is None or len(raw) > SHORT_PIECE:
            return self._merge_ids(
                list(raw.translate(self._byte_table)) if self._byte_table else list(map(self._byte_id, raw))
            )
        # ["a", "b", "c"] -> ["ab", "c"] -> ["abc"]: a merged text's id is in its packed merge
        get, ids, unk = self._by_text.get, self._ids, self.unk_id
        parts = merging.lowest_first(list(text), get, joined=True)
        # a part longer than one byte is a merged text, so a key of the table
        return tuple(get(t) & ID_MASK if len(t) > 1 else ids.get(t, unk) for t in parts)  # type: ignore[operator]

    @property
    def events(self) -> EventPlan | None:
        """PickyBPE's timeline of merges and removals (``picky.EventPlan``); None for a
        tokenizer that only merges."""
        return self._merger.plan if isinstance(self._merger, Replay) else None

    def merge_symbols(self, ids: Sequence[int], *, short: int = SHORT_PIECE) -> tuple[int, ...]:
        """Base-symbol ids (one piece) merged as ``encode`` merges a piece's, with no look-up
        of the piece as a whole (tiktoken's shortcut). A piece of more than ``short`` symbols
        takes the long-piece path (``merging.encode``); both give the same ids.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 1), (2, 0)])
        >>> tok.merge_symbols([0, 1, 0, 1]), tok.merge_symbols([0, 1, 0]), tok.merge_symbols([0, 1, 0], short=1)
        ((2, 2), (3,), (3,))
        """
        return self._merge_ids(list(ids), short=short)

    def _merge_ids(self, ids: list[int], *, short: int = SHORT_PIECE) -> tuple[int, ...]:
        # neighbours looked up by id pair (``_pair``): the merges' rules, and tiktoken's when
        # own_merges_suffice or the piece is long
        if self._merger is not None:
            return self._merger.merge(ids)
        return tuple(merging.encode(ids, self._pair, short=short))

    def _dropped(self, ids: list[int], *, rng: random.Random, dropout: float) -> list[int]:
        """A piece's ids with BPE-dropout: each merge skipped with probability ``dropout``, in
        the tokenizer's style (``EncodeOptions.dropout_style``): skipped merges tried again
        after the next (HF), or each rule swept once (seed 004).

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a"], [(0, 0)])
        >>> tok._dropped([0, 0, 0, 0], rng=random.Random(0), dropout=0.0)
        [1, 1]
        """
        if self._merger is not None:
            raise ConfigError(self._merger.no_dropout)
        skip = lambda: rng.random() < dropout  # noqa: E731 - asked once per merge considered
        if self.encoding.dropout_style == "once":
            return merging.merge_once(ids, self._pair, skip=skip)
        return merging.encode(ids, self._pair, skip=skip)

    def _chunks(self, text: str, allow_special: bool) -> list[tuple[str, bool]]:
        """(text, is_special) chunks; specials are recognised only when allowed."""
        if not allow_special or self._special_re is None:
            return [(text, False)]
        out, last = [], 0
        for m in self._special_re.finditer(text):
            if m.start() > last:
                out.append((text[last : m.start()], False))
            out.append((m.group(), True))
            last = m.end()
        if last < len(text):
            out.append((text[last:], False))
        return out

    def _sequences(self, text: str) -> list[str]:
        # encoding keeps every character: "documents" is cut like "lines", newline kept
        mode = "text" if self.pipeline.sequences == "text" else "lines"
        return split_sequences(normalize_str(text, normalizer=self.pipeline.normalizer), mode=mode)

    def encode(
        self, text: str, *, allow_special: bool = False, dropout: float = 0.0, seed: int | None = None
    ) -> list[int]:
        """Token ids of a text. ``dropout=p`` skips each applicable merge with probability p
        (BPE-dropout, Provilkov et al. 2020), reproducibly for a given ``seed``.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="whitespace", unit="char"), ["a", "b"], [(0, 1)])
        >>> tok.encode("ab ba c")
        [2, 1, 0, 3]
        """
        if not 0.0 <= dropout <= 1.0:
            raise ConfigError("dropout must be between 0 and 1")
        rng = random.Random(seed) if dropout > 0 else None
        cfg = self.pipeline
        text = self._unicode(text)
        out: list[int] = []
        for chunk, special in self._chunks(text, allow_special):
            if special:
                out.append(self.special_ids[chunk])
                continue
            for pieces in iter_piece_texts(self._sequences(chunk), pretokenizer=cfg.pretokenizer, pattern=cfg.pattern):
                if rng is not None:
                    for piece in pieces:
                        merge = lambda part: self._dropped(self._piece_ids(part), rng=rng, dropout=dropout)  # noqa: E731
                        if self._glossary_re is not None:  # a glossary's match stays whole, as in apply_bpe
                            out.extend(self._glossed(piece, merge=merge))
                            continue
                        # no whole-piece look-up here: HF's ignore_merges skips it under dropout too
                        out.extend(merge(piece))
                else:
                    out += chain.from_iterable(map(self._cache.__getitem__, pieces))
        return out

    def _unicode(self, text: str) -> str:
        """The text as this tokenizer's reference reads a lone surrogate in it: tiktoken makes it
        U+FFFD; HF ``tokenizers`` refuses the text (ConfigError); a trained tokenizer keeps it.

        >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="byte")
        >>> Tokenizer.from_merges(cfg, byte_alphabet(), [], encoding=EncodeOptions(refuse_surrogates=True)).encode("ab\\ud800")
        Traceback (most recent call last):
        ...
        explorer.errors.ConfigError: the text holds a lone surrogate (U+D800, character 3), which is not Unicode text: HF tokenizers refuses such text, and so does a tokenizer read from its files
        """
        if self.rules == "tiktoken":
            return _fix_surrogates(text)
        if self.encoding.refuse_surrogates:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ConfigError(
                    f"the text holds a lone surrogate (U+{ord(text[err.start]):04X}, character {err.start + 1:,}), "
                    "which is not Unicode text: HF tokenizers refuses such text, and so does a tokenizer read from "
                    "its files"
                ) from None
        return text

    def piece_texts(self, text: str) -> Iterator[str]:
        """The pre-tokenized pieces that ``encode`` merges, in order (special-token text is plain
        text here, as in ``encode`` without ``allow_special``).

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="whitespace", unit="char"), ["a", "b"], [])
        >>> list(tok.piece_texts("ab  ba\\nb"))
        ['ab', 'ba', 'b']
        """
        text = self._unicode(text)
        cfg = self.pipeline
        for pieces in iter_piece_texts(self._sequences(text), pretokenizer=cfg.pretokenizer, pattern=cfg.pattern):
            yield from pieces

    def initial_ids(self, piece: str) -> list[int]:
        """A piece's ids before any merge: its characters (with the marker) or bytes; symbols
        outside the alphabet are ``unk_id``."""
        return self._piece_ids(piece)

    def whole_token(self, piece: str) -> int | None:
        """With tiktoken's rules or HF's ``ignore_merges``, the id of a piece that is itself a
        merged token (taken whole, before any merge); otherwise None."""
        if self.encoding.ignore_merges and self.rules == "merges" and self._merger is None:
            whole = self._whole(piece)
            return whole if whole is not None and self.merge_rank(whole) is not None else None
        if self.rules != "tiktoken":
            return None
        whole = self._ids.get(bytes_to_display(piece.encode("utf-8", "surrogatepass")))
        return whole if whole is not None and self.merge_rank(whole) is not None else None

    def merge_rules(self) -> Mapping[tuple[int, int], tuple[int, int]]:
        """(left id, right id) -> (rank, new id) of every pair that may merge (with tiktoken's
        rules every split of a token, at the token's rank; only the merges' own pairs when
        ``own_merges_suffice``, the others never meeting). A new mapping on each call.

        >>> Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 1)]).merge_rules()
        {(0, 1): (0, 2)}
        """
        if self._by_text is not None:
            return dict(self._split_rules())
        return {pair: merging.unpack(packed) for pair, packed in self._packed.items()}

    def encode_bytes(self, data: bytes) -> list[int]:
        """Ids of raw bytes taken as one piece: no normalizer, no pre-tokenizer, no special
        tokens, and no whole-piece shortcut (the merges alone); byte unit only.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", alphabet="full-bytes"), byte_alphabet(), [(228, 189)])
        >>> tok.encode_bytes("你".encode())
        [256, 160]
        """
        if self.pipeline.unit != "byte":
            raise ConfigError("encode_bytes needs a byte-level tokenizer")
        if self.rules == "tiktoken":
            return list(self._merged_bytes(data, bytes_to_display(data)))
        return list(self._merge_ids(list(map(self._byte_id, data))))

    def encode_pieces(self, text: str) -> list[EncodedPiece]:
        """Each piece of the (normalized) text with its offsets and ids, for display.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="whitespace", unit="char"), ["a", "b"], [(0, 1)])
        >>> tok.encode_pieces("ab ba")
        [EncodedPiece(text='ab', start=0, end=2, ids=(2,)), EncodedPiece(text='ba', start=3, end=5, ids=(1, 0))]
        """
        cfg = self.pipeline
        out: list[EncodedPiece] = []
        offset = 0
        for seq in self._sequences(text):
            piece: Piece
            for piece in pre_tokenize_str(seq, pretokenizer=cfg.pretokenizer, pattern=cfg.pattern):
                out.append(EncodedPiece(piece.text, offset + piece.start, offset + piece.end, self._cache[piece.text]))
            offset += len(seq)
        return out

    def encode_piece(self, piece: str) -> tuple[int, ...]:
        """Ids of one pre-tokenized piece: the trainer's segmentation of that word, as long as
        no merge so far reused an existing token's id (a reused id can let an earlier rule apply
        where training never merged, as in HF ``tokenizers``).

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="whitespace", unit="char", marker="eow"), ["l", "o", "w", "</w>"], [(0, 1)])
        >>> tok.tokens(tok.encode_piece("low"))
        ['lo', 'w', '</w>']
        """
        return self._cache[piece]

    def encode_trace(self, piece: str) -> list[TraceStep]:
        """The merges applied to one piece, in order: why it is segmented the way it is.

        >>> tok = Tokenizer.from_merges(TrainerConfig(pretokenizer="none", unit="char"), ["a", "b"], [(0, 1), (0, 2)])
        >>> [(s.rank, s.left, s.right, s.tokens) for s in tok.encode_trace("aab")]
        [(0, 'a', 'b', ('a', 'ab')), (1, 'a', 'ab', ('aab',))]
        """
        if self._glossary_re is not None:
            return self._glossed_trace(piece)
        links = Chain(self._piece_ids(piece))
        if self._merger is not None:
            return self._variant_trace(self._merger, links)
        return [
            TraceStep(
                packed >> ID_BITS,
                links.index(at),
                self.id_to_token(left),
                self.id_to_token(right),
                self._tokens[packed & ID_MASK],
                tuple(self.tokens(links.walk())),
            )
            for packed, at, left, right in merging.chain_merges(links, self._pair)
        ]

    def _glossed_trace(self, piece: str) -> list[TraceStep]:
        """``encode_trace`` under glossaries: the parts of the word merged (each a piece of its
        own, never a glossary's match), lowest rank first; positions and tokens are the whole
        word's, a part before its end shown without the end-of-word marker, as ``encode`` gives it.

        >>> cfg = TrainerConfig(pretokenizer="spaces", unit="char", marker="eow-glued")
        >>> vocab = Vocab(alphabet=("a", "b", "b</w>"), merges=((0, 2),))
        >>> tok = Tokenizer(pipeline=cfg.pipeline, vocab=vocab, encoding=EncodeOptions(keep_unknown=True, glossaries=("X",)))
        >>> [(s.position, s.token, s.tokens) for s in tok.encode_trace("abXab")]
        [(0, 'ab</w>', ('ab', 'X', 'a', 'b</w>')), (2, 'ab</w>', ('ab', 'X', 'ab</w>'))]
        """
        assert self._glossary_re is not None
        parts = isolate_glossaries(piece, self.encoding.glossaries)
        links = Chain()
        layout: list[int | list[int]] = []  # each part: its start in the chain, or a glossary match's ids
        for k, part in enumerate(parts):
            if self._glossary_re.match(part):
                layout.append(self._whole_ids(part, last=k == len(parts) - 1))
            else:
                layout.append(links.add(self._piece_ids(part)))
        starts = [item for item in layout if isinstance(item, int)]  # increasing: parts are added in order

        def now() -> list[list[int]]:
            out = []
            for k, item in enumerate(layout):
                ids = item if isinstance(item, list) else links.walk(item)
                if isinstance(item, int) and k < len(layout) - 1:
                    self._unmark_end(ids)
                out.append(ids)
            return out

        steps = []
        for packed, at, left, right in merging.chain_merges(links, self._pair):
            current = now()
            owner = layout.index(starts[bisect_right(starts, at) - 1])
            steps.append(
                TraceStep(
                    packed >> ID_BITS,
                    sum(map(len, current[:owner])) + links.index(at),
                    self.id_to_token(left),
                    self.id_to_token(right),
                    self._tokens[packed & ID_MASK],
                    tuple(self.tokens([i for ids in current for i in ids])),
                )
            )
        return steps

    def _variant_trace(self, merger: PieceMerger, links: Chain) -> list[TraceStep]:
        """``encode_trace`` by a variant's own merger (PickyBPE's): each merge, and each removal
        (``removed``: the token, ``left``, split into ``parts``; ``right`` joins them with spaces).

        >>> vocab = Vocab(alphabet=("a", "b"), merges=((0, 1), (2, 0)), removals=((2, 2),))
        >>> tok = Tokenizer(pipeline=TrainerConfig(pretokenizer="none", unit="char").pipeline, vocab=vocab)
        >>> [(s.rank, s.left, s.right, s.tokens, s.removed) for s in tok.encode_trace("abaab")][2:]
        [(1, 'ab', 'a', ('aba', 'ab'), False), (1, 'ab', 'a b', ('aba', 'a', 'b'), True)]
        >>> tok.encode_trace("abaab")[-1].parts
        ('a', 'b')
        """
        steps: list[TraceStep] = []
        for rank, at, ids, removed in merger.steps(links):
            if not removed:  # ids: (left, right, new)
                left, right, token = map(self.id_to_token, ids)
                parts: tuple[str, ...] = ()
            else:  # ids: (token, *parts)
                token = left = self._tokens[ids[0]]
                parts = tuple(self.tokens(ids[1:]))
                right = " ".join(parts)
            walked = tuple(self.tokens(links.walk()))
            steps.append(TraceStep(rank, links.index(at), left, right, token, walked, bool(parts), parts))
        return steps

    def base_tokens(self, piece: str) -> list[str]:
        """The piece's symbols before any merge (unknown ones as the unk token; a glossary's
        match whole)."""
        if self._glossary_re is not None:
            return self.tokens(self._glossed(piece, merge=self._piece_ids))
        return self.tokens(self._piece_ids(piece))

    # ---- decoding --------------------------------------------------------------------------
    def id_to_token(self, token_id: int) -> str:
        if token_id == self.unk_id:
            return self.encoding.unk_token
        if token_id in self._trailing:
            return self._trailing[token_id]
        if token_id in self._blank:
            return ""
        if self._open is not None and token_id >= len(self._tokens):
            text = self._open.text(token_id)
            if text is None:  # a glossary's match hashed in another process: its text is there
                raise DecodeError(f"id {token_id} is no token of this tokenizer here")
            return text
        return self._tokens[token_id]

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """Display strings of ids."""
        return [self.id_to_token(i) for i in ids]

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for (byte unit); specials give their text, <unk> U+FFFD."""
        if token_id == self.unk_id:
            return "\ufffd".encode()
        tok = self.id_to_token(token_id)
        if token_id in self._fallback_byte:
            return bytes([self._fallback_byte[token_id]])
        if self.is_special(token_id) or self.pipeline.unit == "char":
            return tok.encode("utf-8")
        return display_to_bytes(tok)

    def check_ids(self, ids: Sequence[int]) -> None:
        """Raise DecodeError naming the first id that is no token of this vocabulary.

        >>> tok = Tokenizer.from_merges(TrainerConfig(), ["a", "b"], [(0, 1)])
        >>> tok.check_ids([0, 2, 7])
        Traceback (most recent call last):
        ...
        explorer.errors.DecodeError: id 7 (position 2) is not a token id: this vocabulary has ids 0 to 2 (and 3 for unknown symbols)
        """
        size = len(self._tokens)
        if ids and set(map(type, ids)) == {int} and min(ids) >= 0 and max(ids) < size:
            return  # every id an int of the vocabulary (checked in C): nothing to name
        for k, i in enumerate(ids):
            if isinstance(i, bool) or not hasattr(i, "__index__"):
                raise DecodeError(f"{i!r} (position {k}) is not a token id: ids are whole numbers")
            if not (0 <= i < size or i in self._trailing or i in self._blank or i == self.unk_id or self._is_open(i)):
                extra = sorted(self._trailing)
                specials = f", {', '.join(map(str, extra))} for special tokens" if extra else ""
                specials += f", {', '.join(map(str, sorted(self._blank)))} for empty tokens" if self._blank else ""
                raise DecodeError(
                    f"id {i} (position {k}) is not a token id: this vocabulary has ids 0 to {size - 1}"
                    f"{specials} (and {self.unk_id} for unknown symbols)"
                )

    def _is_open(self, token_id: int) -> bool:
        """Whether an id is a kept unknown symbol's (``keep_unknown``)."""
        return self._open is not None and self._open.text(token_id) is not None

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of ids, byte level or not (tiktoken's ``decode_bytes``); unknown ids raise.

        >>> tok = Tokenizer.from_merges(TrainerConfig(), byte_alphabet(), [])
        >>> tok.decode_bytes(tok.encode("é"))
        b'\\xc3\\xa9'
        """
        self.check_ids(ids)
        known = self._bytes_of
        try:
            return b"".join(map(known.__getitem__, ids))  # each token's bytes looked up in C
        except KeyError:  # tokens not decoded before: their bytes worked out once, then kept
            for i in set(ids).difference(known):
                known[i] = self.token_bytes(i)
            return b"".join(map(known.__getitem__, ids))

    def decode(self, ids: Sequence[int], *, errors: DecodeErrors = "replace") -> str:
        """Text of ids, like tiktoken's ``decode(ids, errors=...)``. At byte level the tokens'
        bytes are joined and read as UTF-8 (a character may span tokens); ``errors`` says what
        becomes of bytes that are not UTF-8 (DECODE_ERRORS), and ``"strict"`` raises a
        DecodeError that names the token and byte. At char level the word markers are turned
        back into spaces. An id that is no token raises DecodeError whatever ``errors`` says.

        >>> tok = Tokenizer.from_merges(TrainerConfig(), byte_alphabet(), [])
        >>> ids = tok.encode("hé")
        >>> tok.decode(ids), tok.decode(ids[:2]), tok.decode(ids[:2], errors="ignore")
        ('hé', 'h\\ufffd', 'h')
        >>> tok.decode(ids[:2], errors="strict")
        Traceback (most recent call last):
        ...
        explorer.errors.DecodeError: the bytes do not end as UTF-8: byte 1 (in token 1, id 195) is 0xc3, unexpected end of data
        """
        if errors not in DECODE_ERRORS:
            raise ConfigError(f"unknown errors={errors!r}; choose one of {', '.join(DECODE_ERRORS)}")
        if self.pipeline.unit == "byte":
            data = self.decode_bytes(ids)
            try:
                return data.decode("utf-8", errors=errors)
            except UnicodeDecodeError as err:
                raise DecodeError(self._where_not_utf8(ids, data, err)) from None
        self.check_ids(ids)
        if self._fallback is not None:
            text = self._fallback_text(ids)
        else:
            text = "".join("\ufffd" if i == self.unk_id else self.id_to_token(i) for i in ids)
        # the word marker's spaces back, then the normalizer's (SentencePiece's "▁")
        return denormalize_str(strip_markers(text, self.pipeline.marker), normalizer=self.pipeline.normalizer)

    def _where_not_utf8(self, ids: Sequence[int], data: bytes, err: UnicodeDecodeError) -> str:
        end = 0
        for k, i in enumerate(ids):  # noqa: B007 - k, the token holding the bad byte, is read after the loop
            end += len(self.token_bytes(i))
            if end > err.start:
                break
        what = "do not end as UTF-8" if "end of data" in err.reason else "are not UTF-8"
        return (
            f"the bytes {what}: byte {err.start} (in token {k}, id {ids[k]}) is 0x{data[err.start]:02x}, {err.reason}"
        )

    def token_text(self, token_id: int) -> str | bytes:
        """One token as text when its bytes are UTF-8 on their own, else as its bytes (a token
        may hold part of a character: shown as bytes, not as U+FFFD).

        >>> tok = Tokenizer.from_merges(TrainerConfig(), byte_alphabet(), [])
        >>> tok.token_text(tok.encode("h")[0]), tok.token_text(tok.encode("é")[0])
        ('h', b'\\xc3')
        """
        self.check_ids([token_id])
        if token_id == self.unk_id:
            return self.encoding.unk_token
        data = self.token_bytes(token_id)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data


def _fix_surrogates(text: str) -> str:
    """tiktoken's fix-up before encoding: a surrogate pair becomes its character, a lone
    surrogate U+FFFD (only text that UTF-8 cannot encode is touched).

    >>> _fix_surrogates("a\\ud83d\\ude00b\\udc00") == "a\\U0001f600b\\ufffd"
    True
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _fused(ids: list[int], unk: int) -> list[int]:
    """HF's ``fuse_unk``: each run of unknown ids as one.

    >>> _fused([0, 9, 9, 1, 9], 9)
    [0, 9, 1, 9]
    """
    return [i for k, i in enumerate(ids) if i != unk or k == 0 or ids[k - 1] != unk]


def _first_wins(keys: Sequence[Hashable], values: Sequence[int]) -> dict:
    """key -> the value beside its first occurrence; ``dict(zip())`` (in C) when the keys are
    distinct, the usual case.

    >>> _first_wins(["a", "b", "a"], [1, 2, 3])
    {'a': 1, 'b': 2}
    """
    out = dict(zip(keys, values))
    if len(out) < len(keys):
        out = {}
        for key, value in zip(keys, values):
            out.setdefault(key, value)
    return out


def _learned_vocab(config: TrainerConfig, alphabet: Sequence[str], merges: Sequence[tuple[int, int]]) -> Vocab:
    """The vocabulary a trainer's config and what it learned derive: its special tokens first,
    the alphabet, then the merged tokens, ids by the config's rule."""
    return Vocab(config.special_tokens, tuple(alphabet), tuple(merges), config.reuse_ids)


# The piece encoders, in the order they are considered (``Tokenizer._piece_encoder``): a method
# name and when it applies. tiktoken's rules come first (they know no removals), then a
# variant's own encoder (PickyBPE's replay of merges and removals), then the encoding options'.
_ENCODERS: tuple[tuple[str, Callable[[Tokenizer], object]], ...] = (
    ("_whole_or_merged", lambda tok: tok.rules == "tiktoken"),
    ("_variant_merged", lambda tok: tok._merger),
    ("_glossed", lambda tok: tok._glossary_re),
    ("_whole_then_merged", lambda tok: tok.encoding.ignore_merges),
    ("_merged_piece", lambda tok: True),
)
