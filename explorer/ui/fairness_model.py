"""What the Fairness page trains, as data: one balance trained to the budget (:class:`Side`, built
by :func:`build_side`) and classical against the variant on the same languages (:class:`Lab`).
No Streamlit here: the page (:mod:`explorer.ui.fairness_view`) builds them and
:mod:`explorer.ui.fairness_charts` draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..analysis.evaluate import piece_counts, replay
from ..analysis.fairness import gini
from ..bpe.parity import Balance, ParityStep, ParityTrainer
from . import render

__all__ = ["REFERENCE", "Side", "build_side", "Lab"]

REFERENCE = "English"  # parity is against English when it is among the languages


@dataclass(frozen=True)
class Side:
    """One balance trained to the budget. ``dev[k]``, ``train[k]``, ``test[k]``: every language's
    development, training and test text in tokens after k merges (k = 0..N); ``gini_dev[k]``,
    ``gini_test[k]``: their Gini coefficients over the languages."""

    balance: Balance
    records: tuple[ParityStep, ...]
    dev: tuple[tuple[int, ...], ...]
    train: tuple[tuple[int, ...], ...]
    test: tuple[tuple[int, ...], ...]
    gini_dev: tuple[float, ...]
    gini_test: tuple[float, ...]
    stop_reason: str | None

    @property
    def merges(self) -> int:
        return len(self.records)

    @property
    def mode(self) -> str:
        return self.balance.mode

    def at(self, k: int) -> int:
        """k within what this side trained (a side that ran out of pairs stopped sooner)."""
        return max(0, min(k, self.merges))

    def saved(self, k: int) -> list[int]:
        """Each language's development tokens that merge k (1..N) saved."""
        return [b - a for b, a in zip(self.dev[k - 1], self.dev[k])]

    def owner(self, k: int) -> tuple[int, bool]:
        """Merge k's language and whether it served that language (True), or was chosen over all
        languages and shortened that one's development text most (False; ties: the first)."""
        served = self.records[k - 1].served
        if served is not None:
            return served, True
        saved = self.saved(k)
        return max(range(len(saved)), key=lambda i: (saved[i], -i)), False


def build_side(trainer: ParityTrainer, tests: Sequence[str]) -> Side:
    """A trained ParityTrainer's run as a Side; ``tests``: each language's test text, counted after
    every k merges in one replay of the merges (``analysis.evaluate.replay``).

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> side = build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg).run(), ["aa aa", "bc"])
    >>> side.dev, side.test
    (((4, 4), (2, 4), (2, 2), (1, 2)), ((4, 2), (2, 2), (2, 1), (2, 1)))
    >>> [round(g, 3) for g in side.gini_test]
    [0.167, 0.0, 0.167, 0.167]
    """
    records = tuple(trainer.records)
    tok = trainer.tokenizer()
    curves = [replay(tok, piece_counts(tok, text)) for text in tests]
    dev = (trainer.initial_dev_tokens, *(r.dev_tokens for r in records))
    train = (trainer.initial_train_tokens, *(r.train_tokens for r in records))
    test = tuple(tuple(curve[k] for curve in curves) for k in range(len(records) + 1))
    return Side(
        balance=trainer.balance,
        records=records,
        dev=dev,
        train=train,
        test=test,
        gini_dev=tuple(gini(row) for row in dev),
        gini_test=tuple(gini(row) for row in test),
        stop_reason=trainer.stop_reason,
    )


@dataclass(frozen=True)
class Lab:
    """Classical and the variant on the same languages and budget."""

    names: tuple[str, ...]
    held_out: tuple[bool, ...]
    byte_level: bool
    budget: int
    classical: Side
    variant: Side
    key: str = ""  # the request's: the charts are kept under it

    @property
    def merges(self) -> int:
        """How far the slider goes: the longer of the two runs."""
        return max(self.classical.merges, self.variant.merges)

    @property
    def reference(self) -> int | None:
        """English's index, when it is among the languages (parity is against it)."""
        return self.names.index(REFERENCE) if REFERENCE in self.names else None

    @property
    def style(self) -> render.TokenStyle:
        return render.TokenStyle(byte_level=self.byte_level)
