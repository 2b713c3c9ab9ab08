"""The merge history, one source of rows for every page that draws one (the Train page's panel
and full grid, the Class page's panel, the Home page's miniature): :func:`history_rows` gives
the merges with their place against the step shown; :func:`history_html` draws them as a table
of chips for the live panels and :func:`history_table` as a DataFrame for ``st.dataframe``.
Tokens are written by ``render.token_text`` in the page's style."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

import pandas as pd

from ..bpe.records import StepRecord
from .render import PLAIN, TokenStyle, chips, token_text

__all__ = [
    "Place",
    "HistoryRow",
    "HISTORY_COLUMNS",
    "GRID_COLUMNS",
    "matching",
    "recent",
    "history_rows",
    "history_html",
    "history_table",
    "style_history",
]

_NOW = "background-color: #bfdbfe; font-weight: 600"
_HISTORY_STYLE_LIMIT = 1500  # Styler gets slow beyond this; the ▶ column still marks the step

Place = Literal["now", "ahead", "past"]  # the step shown, trained past it (not shown yet), before it
# every column a history table may have, and the Train page's full grid's (the Home page's
# miniature shows step, pair, new token, count)
HISTORY_COLUMNS = ("now", "step", "left", "right", "pair", "new token", "id", "count", "replaced", "tokens after")
GRID_COLUMNS = tuple(c for c in HISTORY_COLUMNS if c != "pair")


class HistoryRow(NamedTuple):
    """One merge of a history and its place against the step shown."""

    record: StepRecord
    place: Place


def matching(records: Sequence[StepRecord], query: str, style: TokenStyle = PLAIN) -> list[StepRecord]:
    """The records whose pair or new token contains the query (case-insensitive), as the
    vocabulary writes them or as the page shows them (``style``: 'ब' finds a byte-level 'à¤¬').

    >>> from explorer.bpe.config import make_config
    >>> from explorer.bpe.trainer import train
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


def recent(records: Sequence[StepRecord], current: int, *, window: int, ahead: int = 0) -> Sequence[StepRecord]:
    """The last ``window`` merges up to ``ahead`` steps past the step shown (those trained).

    >>> recent(list(range(1, 31)), 10, window=4, ahead=2), recent(list(range(1, 11)), 10, window=3, ahead=2)
    ([9, 10, 11, 12], [8, 9, 10])
    """
    hi = min(len(records), current + ahead)
    return records[max(0, hi - window) : hi]


def history_rows(records: Sequence[StepRecord], current: int, *, newest_first: bool = True) -> list[HistoryRow]:
    """The rows every history table draws: each merge with its place against the step shown
    ``current``; newest first keeps the latest merge in sight while the class steps forward.

    >>> from explorer.bpe.config import make_config
    >>> from explorer.bpe.trainer import train
    >>> [(r.record.step, r.place) for r in history_rows(train("aaab", make_config("bytes", num_merges=2)).records, 1)]
    [(2, 'ahead'), (1, 'now')]
    """
    ordered = reversed(records) if newest_first else records
    return [HistoryRow(r, "now" if r.step == current else "ahead" if r.step > current else "past") for r in ordered]


def history_html(rows: Sequence[HistoryRow], *, style: TokenStyle = PLAIN) -> str:
    """History rows as an HTML table of chips: the step shown highlighted, steps trained past it
    greyed. Five columns, so that it fits half a page at 1280x720 in projector mode too; the id and
    the occurrences replaced are in the full grid (and the id in the new token's hover).

    >>> from explorer.bpe.config import make_config
    >>> from explorer.bpe.trainer import train
    >>> table = history_html(history_rows(train("aaab", make_config("bytes", num_merges=2)).records, 2))
    >>> table.count('class="bpe-now"'), table.count("<tr")
    (1, 3)
    """
    head = "<tr><th>step</th><th>pair</th><th>new token</th><th>count</th><th>tokens after</th></tr>"
    body = []
    for r, place in rows:
        cls = f' class="bpe-{place}"' if place != "past" else ""
        body.append(
            f'<tr{cls}><td class="num">{r.step:,}</td><td>{chips([r.left, r.right], style=style)}</td>'
            f'<td title="id {r.token_id:,}">{chips([r.token], style=style)}</td><td class="num">{r.count:,}</td>'
            f'<td class="num">{r.tokens_after:,}</td></tr>'
        )
    return f'<div class="bpe-scroll"><table class="bpe-hist">{head}{"".join(body)}</table></div>'


def history_table(
    rows: Sequence[HistoryRow], *, style: TokenStyle = PLAIN, columns: Sequence[str] = GRID_COLUMNS
) -> pd.DataFrame:
    """History rows as a DataFrame with ``columns`` of :data:`HISTORY_COLUMNS`; the ▶ column
    marks the step shown.

    >>> from explorer.bpe.config import make_config
    >>> from explorer.bpe.trainer import train
    >>> rows = history_rows(train("low low", make_config("sennrich", num_merges=2)).records, 1, newest_first=False)
    >>> history_table(rows, columns=("now", "pair", "new token")).values.tolist()
    [['▶', 'l + o', 'lo'], ['', 'lo + w', 'low']]
    """
    out = []
    for r, place in rows:
        left, right = token_text(r.left, style), token_text(r.right, style)
        cells = {
            "now": "▶" if place == "now" else "",
            "step": r.step,
            "left": left,
            "right": right,
            "pair": f"{left} + {right}",
            "new token": token_text(r.token, style),
            "id": r.token_id,
            "count": r.count,
            "replaced": r.replaced,
            "tokens after": r.tokens_after,
        }
        out.append([cells[c] for c in columns])
    return pd.DataFrame(out, columns=list(columns))


def style_history(df: pd.DataFrame):
    """Highlight the current step's row (small tables only; large ones rely on the ▶ column)."""
    if len(df) > _HISTORY_STYLE_LIMIT:
        return df
    # the style computed for the marked row alone: a function called per row of 1,500 took
    # more of a rerun than the grid's other work together
    marked = df.index[df["now"] != ""]
    return df.style.apply(lambda row: [_NOW] * len(row), axis=1, subset=pd.IndexSlice[marked, :])
