"""The merge history as a DataFrame, for ``st.dataframe``, and the search over it."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..bpe.trainer import StepRecord
from .render import PLAIN, TokenStyle, token_text

__all__ = ["matching", "history_table", "style_history"]

_NOW = "background-color: #bfdbfe; font-weight: 600"
_HISTORY_STYLE_LIMIT = 1500  # Styler gets slow beyond this; the ▶ column still marks the step


def matching(records: Sequence[StepRecord], query: str, style: TokenStyle = PLAIN) -> list[StepRecord]:
    """The records whose pair or new token contains the query (case-insensitive), as the
    vocabulary writes them or as the page shows them (``style``: 'ब' finds a byte-level 'à¤¬').

    >>> from explorer import make_config, train
    >>> [r.token for r in matching(train("low lower", make_config("sennrich", num_merges=3)).records, "LO")]
    ['lo', 'low', 'low</w>']
    """
    q = query.strip().lower()
    if not q:
        return list(records)
    shown = (lambda t: token_text(t, style).lower()) if style.byte_level and not style.gpt2_chars else None
    return [
        r
        for r in records
        if q in r.token.lower()
        or q in r.left.lower()
        or q in r.right.lower()
        or (shown is not None and q in shown(r.token))
    ]


def history_table(
    records: Sequence[StepRecord],
    current: int,
    query: str = "",
    *,
    newest_first: bool = False,
    style: TokenStyle = PLAIN,
) -> pd.DataFrame:
    """Merge history, one row per step; ``query`` keeps rows whose pair or token contains it.
    Tokens are written as every panel writes them (``style``).

    The ▶ column marks the step being viewed; newest first keeps the latest merge in sight
    while the class steps forward."""
    found = matching(records, query, style)
    rows = [
        {
            "now": "▶" if r.step == current else "",
            "step": r.step,
            "left": token_text(r.left, style),
            "right": token_text(r.right, style),
            "new token": token_text(r.token, style),
            "id": r.token_id,
            "count": r.count,
            "replaced": r.replaced,
            "tokens after": r.tokens_after,
        }
        for r in (reversed(found) if newest_first else found)
    ]
    return pd.DataFrame(
        rows, columns=["now", "step", "left", "right", "new token", "id", "count", "replaced", "tokens after"]
    )


def style_history(df: pd.DataFrame):
    """Highlight the current step's row (small tables only; large ones rely on the ▶ column)."""
    if len(df) > _HISTORY_STYLE_LIMIT:
        return df
    return df.style.apply(lambda row: [_NOW if row["now"] else ""] * len(row), axis=1)
