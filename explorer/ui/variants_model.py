"""What the Variants page trains, as data: one tokenizer trained to the budget (:class:`Variant`)
and the three of one request (:class:`Lab`). No Streamlit here: the page
(:mod:`explorer.ui.variants_view`) builds them and :mod:`explorer.ui.variants_charts` draws them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.evaluate import Evaluation
from ..bpe.records import RemovalRecord, StepLog
from ..bpe.tokenizer import Tokenizer

__all__ = ["DEFAULT_TAU", "Variant", "Lab"]

DEFAULT_TAU = 0.1  # PickyBPE's τ when a request names none


@dataclass(frozen=True)
class Variant:
    """One tokenizer trained to the budget. ``curve[k]``: the training corpus's tokens after k
    merges (and PickyBPE's removals after merge k); ``superwords``: (id, uses in the held-out
    encoding), most used first, then in the order learned; ``removals``: PickyBPE's, in the
    order made, with ``records`` (its merges) for the timeline."""

    name: str
    tokenizer: Tokenizer
    transition: int | None  # as configured (None: classical); training may end before it
    curve: tuple[int, ...]
    held_out: Evaluation
    superwords: tuple[tuple[int, int], ...]
    removals: tuple[RemovalRecord, ...] = ()
    records: StepLog | None = None  # PickyBPE only: its merges, for the timeline

    @property
    def merges(self) -> int:
        return len(self.curve) - 1


@dataclass(frozen=True)
class Lab:
    """Classical BPE, SuperBPE and PickyBPE on one corpus and vocabulary size."""

    corpus_name: str
    held_out_name: str
    corpus_chars: int
    classical: Variant
    superbpe: Variant
    share: int
    held_out_text: str = ""
    picky: Variant | None = None
    tau: float = DEFAULT_TAU

    @property
    def variants(self) -> tuple[Variant, ...]:
        return (self.classical, self.superbpe) + ((self.picky,) if self.picky is not None else ())
