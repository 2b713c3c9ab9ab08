"""Parity-aware BPE (Foroutan et al. 2025): one vocabulary trained on several languages, each
merge serving the language that compresses worst right now on a parallel development text.

Classical BPE gives each merge to the most frequent pair of all the text together, so the
language with the most text gets most merges. Parity-aware BPE measures every language's token
count on its development text (the same content in each language) and takes the most frequent
pair *of the language with the most tokens*. Variants (``Balance``):

    classical       the most frequent pair over all languages together (the yardstick)
    parity          the worst-compressed language's most frequent pair
    parity-window   as parity, but a language that served more than ``window_alpha / L`` of
                    the last ``window`` parity merges waits while a better-off one is served
    parity-hybrid   classical for the first ``global_merges`` merges, then parity

Data shapes (L languages; every trainer is an ordinary ``Trainer`` that is told which pair to
merge, so a step visits only that pair's positions in each text, never recounts):

    train[l]    Trainer over language l's training words; all share one alphabet, so one id
                means one token in all of them and in the shared vocabulary
    joint       Trainer over all languages' words together (classical and hybrid only)
    dev[l]      Trainer over language l's development words, which may hold symbols the
                training texts lack; dev_ids[l][shared id] is the id of the same token there
    window      the languages served by the last ``window`` parity merges, and their counts

A language whose training text has no pair left at ``min_frequency`` is passed over; training
stops when every language is.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal

from ..errors import ConfigError
from ..stages.pipeline import count_words
from ..stages.registry import Registry
from .config import EncodeOptions, TrainerConfig
from .trainer import DEFAULT_TOP_K, Stepping, Trainer, check_room, symbol_sequences
from .variant import CLASSICAL, PAIR_MASK, PAIR_SHIFT
from .variants import variant_of
from .vocab import VocabBuilder, build_alphabet

__all__ = [
    "BalanceName",
    "BALANCES",
    "BALANCE_RULES",
    "BalanceRule",
    "RuleName",
    "Balance",
    "ParityStep",
    "ParityTrainer",
    "train_balanced",
    "worst_first",
]

BalanceName = Literal["classical", "parity", "parity-window", "parity-hybrid"]
RuleName = Literal["global", "worst", "window", "exhausted"]

Choice = tuple[int, int, int | None, RuleName]  # (pair, its count, language served or None, rule)


class BalanceRule:
    """How a balance chooses each merge among the languages: a strategy that ``ParityTrainer``
    asks before every merge (``choose``: the choice, or why training stops). One per entry of
    ``BALANCE_RULES``, the one place a balance is added."""

    description = ""
    per_language = True  # whether some merges are chosen per language
    joint = False  # whether it reads the trainer over all languages together

    def check(self, balance: Balance) -> None:
        """ConfigError for settings this balance cannot have."""
        if balance.global_merges:
            raise ConfigError("global merges are for the parity-hybrid balance only")

    def choose(self, trainer: ParityTrainer, balance: Balance) -> Choice | str:
        raise NotImplementedError


class Classical(BalanceRule):
    description = "the most frequent pair of all languages together (classical BPE on the joined texts)"
    per_language = False
    joint = True

    def choose(self, trainer: ParityTrainer, balance: Balance) -> Choice | str:
        return trainer.joint_choice()


class Parity(BalanceRule):
    description = "the most frequent pair of the language whose development text has the most tokens now"

    def choose(self, trainer: ParityTrainer, balance: Balance) -> Choice | str:
        candidates = trainer.candidates(every=False)
        if isinstance(candidates, str):
            return candidates
        return trainer.serve(candidates[0], candidates)


class ParityWindow(BalanceRule):
    description = "parity, but a language that served more than its share of the recent merges waits its turn"

    def choose(self, trainer: ParityTrainer, balance: Balance) -> Choice | str:
        candidates = trainer.candidates(every=True)
        if isinstance(candidates, str):
            return candidates
        share = balance.window_alpha / len(trainer.languages)
        allowed = [c for c in candidates if trainer.served_recently(c[0]) / balance.window <= share]
        return trainer.serve(allowed[0] if allowed else candidates[0], candidates)


class ParityHybrid(Parity):
    description = "classical for a number of merges first, then parity"
    joint = True

    def check(self, balance: Balance) -> None:
        if balance.global_merges < 1:
            raise ConfigError("the parity-hybrid balance needs at least 1 global merge")

    def choose(self, trainer: ParityTrainer, balance: Balance) -> Choice | str:
        if len(trainer.merges) < balance.global_merges:
            return trainer.joint_choice()
        return super().choose(trainer, balance)


BALANCE_RULES: Registry[BalanceRule] = Registry(
    "balance",
    {
        "classical": Classical(),
        "parity": Parity(),
        "parity-window": ParityWindow(),
        "parity-hybrid": ParityHybrid(),
    },
)
BALANCES: dict[str, str] = BALANCE_RULES.descriptions  # name -> what it does, kept in step


@dataclass(frozen=True, slots=True)
class Balance:
    """How a merge is chosen among languages (see the module docstring). Valid once built.

    >>> Balance("parity-hybrid", global_merges=200).global_merges
    200
    >>> Balance("parity", global_merges=5)
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: global merges are for the parity-hybrid balance only
    """

    mode: BalanceName = "parity"
    global_merges: int = 0
    window: int = 100
    window_alpha: float = 2.0

    def __post_init__(self) -> None:
        if self.mode not in BALANCE_RULES.stages:
            raise ConfigError(f"unknown balance {self.mode!r}: choose one of {', '.join(BALANCES)}")
        self.rule.check(self)
        if self.window < 1:
            raise ConfigError("the window must hold at least 1 merge")
        if not self.window_alpha >= 1:
            # below 1 every language could be over its share at once, and none could be served
            raise ConfigError("the window's alpha must be at least 1")

    @property
    def rule(self) -> BalanceRule:
        """The strategy that chooses each merge (``BALANCE_RULES``)."""
        return BALANCE_RULES[self.mode]

    @property
    def per_language(self) -> bool:
        """Whether some merges are chosen per language (all but classical)."""
        return self.rule.per_language


@dataclass(frozen=True, slots=True)
class ParityStep:
    """What one merge did to every language. ``served``: the language whose pair count chose it
    (None when all languages' counts together did); ``count``: the pair's count there."""

    step: int
    left_id: int
    right_id: int
    token_id: int
    left: str
    right: str
    token: str
    served: int | None
    rule: RuleName
    count: int
    dev_tokens: tuple[int, ...]  # each language's development text, in tokens, after this merge
    train_tokens: tuple[int, ...]  # each language's training text, in tokens, after this merge

    @property
    def pair(self) -> tuple[str, str]:
        return (self.left, self.right)


def worst_first(tokens: Sequence[int]) -> list[int]:
    """Languages from the most tokens to the fewest, ties in the given order: the order in which
    parity-aware BPE looks for the language to serve.

    >>> worst_first([5, 9, 9, 1])
    [1, 2, 0, 3]
    """
    return sorted(range(len(tokens)), key=lambda i: (-tokens[i], i))


def _texts(t: str | Iterable[str]) -> list[str]:
    return [t] if isinstance(t, str) else list(t)


class ParityTrainer(Stepping[ParityStep]):
    """Steppable BPE over several languages, one training and one development text each.

    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> t = ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, names=["A", "B"])
    >>> [(r.token, t.languages[r.served], r.dev_tokens) for r in t]
    [('aa', 'A', (2, 4)), ('bc', 'B', (2, 2)), ('aaaa', 'A', (1, 2))]
    >>> ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, balance=Balance("classical")).run().vocab[-3:]
    ['aa', 'aaaa', 'bc']
    """

    def __init__(
        self,
        train: Sequence[str | Iterable[str]],
        dev: Sequence[str | Iterable[str]],
        config: TrainerConfig,
        *,
        balance: Balance = Balance(),
        names: Sequence[str] | None = None,
        top_k: int = DEFAULT_TOP_K,
        encoding: EncodeOptions = EncodeOptions(),
    ):
        """``train`` and ``dev``: one text (or list of texts) per language, in the same order;
        ``names``: the languages' names for messages (default "language 1", ...). ``top_k``: the rows
        of a language's pair table (``language_trainer(l).peek()``)."""
        if not train:
            raise ConfigError("give at least one language: a training text and a development text")
        if len(dev) != len(train):
            raise ConfigError(
                f"{len(train)} training text{'s' * (len(train) != 1)} but {len(dev)} development "
                f"text{'s' * (len(dev) != 1)}: give one development text per language, in the same order"
            )
        self.languages: tuple[str, ...] = (
            tuple(names) if names is not None else tuple(f"language {i + 1}" for i in range(len(train)))
        )
        if len(self.languages) != len(train):
            raise ConfigError(f"{len(self.languages)} names for {len(train)} languages")
        variant = variant_of(config)
        if variant is not CLASSICAL:
            raise ConfigError(variant.not_with_parity)
        self.config = config
        self.balance = balance
        self.encoding = encoding
        self.top_k = top_k
        train_texts, dev_texts = [_texts(t) for t in train], [_texts(d) for d in dev]
        for name, t, d in zip(self.languages, train_texts, dev_texts):
            # whitespace alone makes pieces (a byte-level pre-tokenizer keeps it) but no language
            if not any(x.strip() for x in t):
                raise ConfigError(f"{name}: the training text is empty (or only whitespace)")
            if not any(x.strip() for x in d):
                raise ConfigError(f"{name}: the development text is empty (or only whitespace)")
        words = [count_words(t, config) for t in train_texts]
        dev_words = [count_words(d, config) for d in dev_texts]
        present = chain.from_iterable(symbol_sequences(list(w), config)[1] for w in words)
        self.alphabet: list[str] = build_alphabet(present, config)
        self._vocab = VocabBuilder(config.special_tokens, self.alphabet, reuse_ids=config.reuse_ids)
        # no step is logged in full by the trainers themselves: they are told each merge, and a
        # language's pair table is there live (peek) when a view asks for it
        self._train = [Trainer(w, config, top_k=top_k, full_records=0, alphabet=self.alphabet) for w in words]
        self._joint: Trainer | None = None
        if balance.rule.joint:
            joint: dict[str, int] = {}
            for w in words:  # the words in order of first appearance over the texts joined
                for word, freq in w.items():
                    joint[word] = joint.get(word, 0) + freq
            self._joint = Trainer(joint, config, top_k=top_k, full_records=0, alphabet=self.alphabet)
        self._dev: list[Trainer] = []
        self._dev_ids: list[list[int]] = []
        known = set(self.alphabet)
        for counts in dev_words:
            extra = [s for s in symbol_sequences(list(counts), config)[1] if s not in known]
            self._dev.append(Trainer(counts, config, top_k=0, full_records=0, alphabet=self.alphabet + extra))
            self._dev_ids.append(list(range(len(self._vocab))))  # specials and alphabet: the same ids
        self._window: deque[int] = deque(maxlen=balance.window)
        self._served = Counter[int]()
        self.merges: list[tuple[int, int]] = []
        self.removals: list[tuple[int, int]] = []
        self.removed: set[int] = set()
        self.records: list[ParityStep] = []
        self.stop_reason: str | None = None
        self.initial_dev_tokens: tuple[int, ...] = self.dev_tokens
        self.initial_train_tokens: tuple[int, ...] = self.train_tokens

    # ---- derived views -------------------------------------------------------------------
    @property
    def vocab(self) -> list[str]:
        """Display strings by id: special tokens, alphabet, merged tokens."""
        return self._vocab.tokens

    @property
    def dev_tokens(self) -> tuple[int, ...]:
        """Each language's development text in tokens now."""
        return tuple(t.tokens for t in self._dev)

    @property
    def train_tokens(self) -> tuple[int, ...]:
        """Each language's training text in tokens now."""
        return tuple(t.tokens for t in self._train)

    @property
    def done(self) -> bool:
        return self.stop_reason is not None

    def require_room(self) -> ParityTrainer:
        """ConfigError when the vocabulary size leaves no room for a merge (as Trainer's)."""
        check_room(self.config, len(self._vocab), len(self.alphabet))
        return self

    def language_trainer(self, language: int) -> Trainer:
        """Language ``language``'s own trainer (its pair table: ``.peek(k)``)."""
        return self._train[language]

    # ---- choosing ------------------------------------------------------------------------
    def worst_first(self) -> list[int]:
        """The languages from the most development tokens to the fewest (ties: given order)."""
        return worst_first(self.dev_tokens)

    def joint_choice(self) -> Choice | str:
        """The most frequent pair of all languages together (classical BPE's choice)."""
        assert self._joint is not None  # made for every balance whose rule reads it
        best = self._joint.best_pair()
        if best is None:
            return "no pairs left"
        if best[2] < self.config.min_frequency:
            return "min_frequency"
        return best[0] << PAIR_SHIFT | best[1], best[2], None, "global"

    def candidates(self, *, every: bool) -> list[tuple[int, int, int]] | str:
        """(language, pair, count) of each language's most frequent pair at ``min_frequency``,
        worst language first: only the first such language unless ``every``; or why training
        stops when there is none."""
        min_frequency = self.config.min_frequency
        out: list[tuple[int, int, int]] = []
        some_pair = False
        for lang in self.worst_first():
            best = self._train[lang].best_pair()
            if best is not None:
                some_pair = True
                if best[2] >= min_frequency:
                    out.append((lang, best[0] << PAIR_SHIFT | best[1], best[2]))
                    if not every:
                        break  # the worst language with a pair is served: the rest need not be asked
        if not out:
            return "min_frequency" if some_pair else "no pairs left"
        return out

    def serve(self, chosen: tuple[int, int, int], candidates: list[tuple[int, int, int]]) -> Choice:
        """The choice of ``chosen`` among ``candidates``, named by why: the worst language's
        pair ("worst"), a better-off one's while the worse ones wait ("window"), or the first
        language that still has a pair ("exhausted")."""
        lang, pair, count = chosen
        if lang == self.worst_first()[0]:
            rule: RuleName = "worst"
        elif chosen is not candidates[0]:
            rule = "window"
        else:
            rule = "exhausted"
        return pair, count, lang, rule

    def served_recently(self, language: int) -> int:
        """How many of the last ``window`` per-language merges served ``language``."""
        return self._served[language]

    def _choose(self) -> Choice | str:
        """(pair, its count, language served or None, rule), or why training stops."""
        return self.balance.rule.choose(self, self.balance)

    # ---- stepping ------------------------------------------------------------------------
    def step(self) -> ParityStep | None:
        """Do one merge and return its record, or None (and set ``stop_reason``) when done."""
        if self.stop_reason is not None:
            return None
        cfg = self.config
        if cfg.num_merges is not None and len(self.merges) >= cfg.num_merges:
            self.stop_reason = "num_merges"
            return None
        if cfg.vocab_size is not None and len(self._vocab) >= cfg.vocab_size:
            self.stop_reason = "vocab_size"
            return None
        choice = self._choose()
        if isinstance(choice, str):
            self.stop_reason = choice
            return None
        pair, count, served, rule = choice
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        new_id, _ = self._vocab.add_merge(left, right)
        for t in chain(self._train, [self._joint] if self._joint is not None else []):
            if t.merge_pair(left, right) != new_id:  # pragma: no cover - the same merges, the same ids
                raise AssertionError("a language's trainer gave the merge another id")
        for t, ids in zip(self._dev, self._dev_ids):
            made = t.merge_pair(ids[left], ids[right])
            if new_id == len(ids):
                ids.append(made)
        if served is not None:
            if len(self._window) == self._window.maxlen:
                self._served[self._window[0]] -= 1
            self._window.append(served)
            self._served[served] += 1
        self.merges.append((left, right))
        tokens = self._vocab.tokens
        record = ParityStep(
            step=len(self.merges),
            left_id=left,
            right_id=right,
            token_id=new_id,
            left=tokens[left],
            right=tokens[right],
            token=tokens[new_id],
            served=served,
            rule=rule,
            count=count,
            dev_tokens=self.dev_tokens,
            train_tokens=self.train_tokens,
        )
        self.records.append(record)
        return record


def train_balanced(
    train: Sequence[str | Iterable[str]],
    dev: Sequence[str | Iterable[str]],
    config: TrainerConfig,
    *,
    balance: Balance = Balance(),
    names: Sequence[str] | None = None,
    top_k: int = DEFAULT_TOP_K,
) -> ParityTrainer:
    """Train to the end in one call.

    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=2)
    >>> [r.token for r in train_balanced(["the the the", "ok"], ["the", "okay"], cfg).records]
    ['ok', 'th']
    """
    return ParityTrainer(train, dev, config, balance=balance, names=names, top_k=top_k).run()
