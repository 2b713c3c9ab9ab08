"""The merge history as a DataFrame, for ``st.dataframe``, and the search over it."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..trainer import StepRecord

__all__ = ["matching", "history_table", "style_history"]

_NOW = "background-color: #bfdbfe; font-weight: 600"
_HISTORY_STYLE_LIMIT = 1500  # Styler gets slow beyond this; the ▶ column still marks the step


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
