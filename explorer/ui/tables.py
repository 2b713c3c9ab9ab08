"""DataFrames built from engine records, for ``st.dataframe``."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..trainer import PairStat, StepRecord

__all__ = ["pair_table", "style_pair_table", "matching", "history_table", "style_history"]

_WINNER = "background-color: #bbf7d0; font-weight: 600"
_TIED = "background-color: #fef08a"
_NOW = "background-color: #bfdbfe; font-weight: 600"
_HISTORY_STYLE_LIMIT = 1500  # Styler gets slow beyond this; the ▶ column still marks the step


def pair_table(pairs: Sequence[PairStat]) -> pd.DataFrame:
    """The pair-frequency table: the winner first, then the rest in tie-break order.

    >>> from explorer import PairStat
    >>> pair_table([PairStat(0, 1, "e", "s", 9), PairStat(1, 2, "s", "t", 9), PairStat(2, 3, "l", "o", 7)])["status"].tolist()
    ['next', 'tied', '']
    """
    if not pairs:
        return pd.DataFrame(columns=["rank", "left", "right", "merged", "count", "status"])
    best = pairs[0].count
    rows = [
        {
            "rank": i + 1,
            "left": p.left,
            "right": p.right,
            "merged": p.left + p.right,
            "count": p.count,
            "status": "next" if i == 0 else ("tied" if p.count == best else ""),
        }
        for i, p in enumerate(pairs)
    ]
    return pd.DataFrame(rows)


def style_pair_table(df: pd.DataFrame):
    def row_style(row):
        style = _WINNER if row["status"] == "next" else (_TIED if row["status"] == "tied" else "")
        return [style] * len(row)

    return df.style.apply(row_style, axis=1)


def matching(records: Sequence[StepRecord], query: str) -> list[StepRecord]:
    """The records whose pair or new token contains the query (case-insensitive).

    >>> from explorer import make_config, train
    >>> [r.token for r in matching(train("low lower", make_config("sennrich", num_merges=3)).records, "LO")]
    ['lo', 'low', 'low</w>']
    """
    q = query.strip().lower()
    return [r for r in records if not q or q in r.token.lower() or q in r.left.lower() or q in r.right.lower()]


def history_table(records: Sequence[StepRecord], current: int, query: str = "", *, newest_first: bool = False) -> pd.DataFrame:
    """Merge history, one row per step; ``query`` keeps rows whose pair or token contains it.

    The ▶ column marks the step being viewed; newest first keeps the latest merge in sight
    while the class steps forward."""
    found = matching(records, query)
    rows = [
        {
            "now": "▶" if r.step == current else "",
            "step": r.step,
            "left": r.left,
            "right": r.right,
            "new token": r.token,
            "id": r.token_id,
            "count": r.count,
            "replaced": r.replaced,
            "tokens after": r.tokens_after,
        }
        for r in (reversed(found) if newest_first else found)
    ]
    return pd.DataFrame(rows, columns=["now", "step", "left", "right", "new token", "id", "count", "replaced", "tokens after"])


def style_history(df: pd.DataFrame):
    """Highlight the current step's row (small tables only; large ones rely on the ▶ column)."""
    if len(df) > _HISTORY_STYLE_LIMIT:
        return df
    return df.style.apply(lambda row: [_NOW if row["now"] else ""] * len(row), axis=1)
