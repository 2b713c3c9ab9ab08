"""What a training variant is: a strategy the trainer calls at fixed points, classical BPE's
behaviour by default.

A variant (SuperBPE, PickyBPE, ...) is one module that subclasses :class:`Variant` and one line
in ``bpe.variants.VARIANTS``. The trainer knows no variant by name: it asks the registry which
variant a config turns on (``variant_of``) and calls its hooks:

    count(texts, config)        the texts read once: the words, and anything else the variant
                                needs of them (SuperBPE: the superwords), handed to ``start``
    start(trainer, extra)       after the position index is made
    stop(trainer)               before each merge: the stop rule's reason, or None to go on
    transition_at(config)       the number of merges after which ``transition(trainer)`` runs
                                once, before the next merge (SuperBPE: the texts rejoined)
    after_merge(trainer, event) after each merge (None: nothing to do, no call made)

and, outside training, ``check(config)`` (a ConfigError for settings the variant cannot train
with), ``tokenizer_pipeline(config, merges)`` (the pipeline its tokenizer after ``merges``
merges encodes with) and ``piece_merger(tokenizer)``: the encoder factory's question,
whether a tokenizer's vocabulary needs the variant's own way of merging a piece (PickyBPE's,
for a vocabulary with removals) instead of the merge list's ranks.

A variant also declares its one setting, which everything else reads from here: its name
(``option``: a ``TrainerConfig`` keyword and attribute, a ``trace.json`` key, a link's value),
the command line's flag for it (``flag``, ``metavar``, ``help``, read through ``parse``),
whether ``train --balance/--dev`` may take it (``one_text``) and the line ``train`` prints
after its summary (``summary``). So adding a variant touches its module and one registry line.

A variant holds no state: the trainer keeps what a variant needs between hooks in its
``variant_state`` attribute (copied with the trainer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from ..errors import ConfigError
from ..stages.pipeline import Pipeline, PipelineConfig, count_words
from .merging import Chain

__all__ = [
    "CLASSICAL",
    "MAX_VOCAB_SIZE",
    "PAIR_MASK",
    "PAIR_SHIFT",
    "MergeEvent",
    "PieceMerger",
    "Training",
    "Variant",
    "VariantConfig",
    "TokenizerView",
    "VocabView",
]

# Pairs of token ids are packed into one int (left << PAIR_SHIFT | right), in the trainer's index
# and the hooks alike: cheaper to hash and compare than tuples, and the packed ints order exactly
# as (left, right) tuples do.
PAIR_SHIFT = 21
PAIR_MASK = (1 << PAIR_SHIFT) - 1

# the largest vocabulary (and number of merges) a config may ask for
MAX_VOCAB_SIZE = 1_000_000


class VariantConfig(PipelineConfig, Protocol):
    """What a variant reads of a ``TrainerConfig`` (the config module sits above the variants)."""

    @property
    def pipeline(self) -> Pipeline: ...

    @property
    def num_merges(self) -> int | None: ...

    @property
    def vocab_size(self) -> int | None: ...

    def replace(self, **changes: Any) -> Any: ...


class MergeEvent(NamedTuple):
    """A merge just made, as ``after_merge`` is told it."""

    left: int
    right: int
    new_id: int
    replaced: int  # occurrences merged, weighted by frequency
    positions: Sequence[int]  # where the pair was recorded (stale entries included)
    reused: bool  # the merged token already had an id


class Training(Protocol):
    """What a variant's hooks read and call on a trainer."""

    config: Any
    merges: list[tuple[int, int]]
    variant_state: Any
    transitioned_at: int | None

    @property
    def n_live(self) -> int: ...

    def tokenizer_with(self, merges: Sequence[tuple[int, int]], pipeline: Pipeline) -> Any: ...

    def restart(self, words: Mapping[str, int], encode: Callable[[str], Iterable[int]]) -> None: ...


class VocabView(Protocol):
    """What a variant reads of a ``Vocab`` to choose its encoder (the vocabulary sits above)."""

    @property
    def n_base(self) -> int: ...

    @property
    def removals(self) -> tuple[tuple[int, int], ...]: ...

    @property
    def removal_parts(self) -> tuple[tuple[int, ...], ...]: ...

    def __len__(self) -> int: ...


class TokenizerView(Protocol):
    """What a variant reads of a ``Tokenizer`` to choose its piece merger (read lazily: a rank
    table's merges are recovered only when asked for)."""

    @property
    def vocab(self) -> VocabView: ...

    @property
    def rules(self) -> str: ...

    @property
    def merges(self) -> Sequence[tuple[int, int]]: ...

    @property
    def merged_ids(self) -> Sequence[int]: ...


class PieceMerger(Protocol):
    """A variant's own way of merging one piece's base-symbol ids, which a tokenizer uses in
    place of the merge list's ranks (``Variant.piece_merger``)."""

    # the sentence BPE-dropout is refused with (it skips merges in rank order)
    no_dropout: str

    def merge(self, ids: list[int]) -> tuple[int, ...]:
        """The piece's ids once merged."""
        ...

    def steps(self, links: Chain) -> Iterator[tuple[int, int, tuple[int, ...], bool]]:
        """Merge the chain, yielding each change as made: (rank of the merge it follows, the
        position, its ids, removed): ids (left, right, new) for a merge, (token, *parts) for a
        removal."""
        ...


class Variant:
    """Classical BPE: count the words, merge the most frequent pair until the number of merges
    or the vocabulary size is reached. Subclasses override the hooks they change (module doc).

    >>> v = Variant()
    >>> v.name, v.option, v.transition_at(None)
    ('classical', None, None)
    """

    name = "classical"
    title = "classical BPE"
    description = "the most frequent pair merges, one merge a step (Sennrich et al. 2016)"
    # the TrainerConfig field that turns the variant on when it is not None (None: always on,
    # when no other variant is)
    option: str | None = None
    # the sentence parity-aware training refuses the variant with
    not_with_parity = ""
    # the command line's flag for the option ("--picky"), its metavar and help; None: no flag
    flag: str | None = None
    metavar = ""
    help = ""
    # trains one text only: ``train`` refuses it with --balance or --dev
    one_text = False
    after_merge: Callable[[Training, MergeEvent], None] | None = None

    def parse(self, text: str) -> Any:
        """The option's value from the command line's text: a whole number by default (a
        ConfigError for a bad one, its sentence in argparse's own words).

        >>> Variant().parse("12")
        12
        >>> Variant().parse("x")
        Traceback (most recent call last):
        ...
        explorer.errors.ConfigError: invalid int value: 'x'
        """
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"invalid int value: {text!r}") from None

    def summary(self, trainer: Any) -> str:
        """A line ``train`` prints after its summary for a trainer of this variant ("": none)."""
        return ""

    def is_on(self, config: VariantConfig) -> bool:
        """Whether ``config`` asks for this variant."""
        return self.option is not None and getattr(config, self.option) is not None

    def setting(self, config: VariantConfig) -> Any:
        """The value of the variant's option in ``config`` (None for classical BPE)."""
        return None if self.option is None else getattr(config, self.option)

    def check(self, config: VariantConfig) -> None:
        """ConfigError when the variant cannot train under ``config``."""

    def count(self, texts: str | Iterable[str], config: VariantConfig) -> tuple[dict[str, int], Any]:
        """The words of the texts with their counts, and what ``start`` needs besides (None)."""
        return count_words(texts, config), None

    def start(self, trainer: Training, extra: Any) -> None:
        """Called once the trainer has indexed its words."""

    def stop(self, trainer: Training) -> str | None:
        """The stop rule that fires before the next merge ("num_merges", "vocab_size"), or None."""
        cfg = trainer.config
        if cfg.num_merges is not None and len(trainer.merges) >= cfg.num_merges:
            return "num_merges"
        if cfg.vocab_size is not None and trainer.n_live >= cfg.vocab_size:
            return "vocab_size"
        return None

    def transition_at(self, config: VariantConfig) -> int | None:
        """After how many merges ``transition`` runs (None: never)."""
        return None

    def transition(self, trainer: Training) -> None:
        """The variant's change of stage (``transition_at``)."""

    def tokenizer_pipeline(self, config: VariantConfig, merges: int) -> Pipeline:
        """The pipeline a tokenizer of the first ``merges`` merges encodes with."""
        return config.pipeline

    def piece_merger(self, tokenizer: TokenizerView) -> PieceMerger | None:
        """The variant's own piece merger when the tokenizer's vocabulary needs one (None: the
        merge list's ranks merge its pieces); a ConfigError when its ``rules`` cannot have it."""
        return None

    def __repr__(self) -> str:
        return f"<variant {self.name}>"

    def __reduce__(self) -> str:
        # one object per variant, a module-level constant named after it (CLASSICAL, SUPERBPE):
        # a trainer pickled to a worker, or copied, finds the same one there
        return self.name.upper().replace("-", "_")


CLASSICAL = Variant()
