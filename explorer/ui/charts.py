"""Charts of a training run: the data of its per-step curves (drawn on the Train and Home pages by
``live_view``), altair for the rest."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..bpe.records import StepLog, StepRecord

__all__ = [
    "progress_columns",
    "progress_frame",
    "thin_rows",
    "twin_chart",
    "Columns",
    "shown_rows",
    "y_domain",
]


Columns = dict[str, list]  # column name -> one value per row: what a chart's data is built from


def progress_columns(
    records: Sequence[StepRecord], *, initial_tokens: int, corpus_bytes: int, corpus_chars: int
) -> Columns:
    """One row per step (0 = before any merge): corpus tokens, compression, winning count.

    >>> from explorer import make_config, train
    >>> t = train("aaabdaaabac", make_config("bytes", vocab_size=None, num_merges=2))
    >>> progress_columns(t.records, initial_tokens=11, corpus_bytes=11, corpus_chars=11)["tokens"]
    [11, 9, 7]
    """

    # plain lists: a step log gives its columns without making a record per step
    def column(name: str) -> list[int]:
        return records.column(name) if isinstance(records, StepLog) else [getattr(r, name) for r in records]

    tokens = [initial_tokens] + column("tokens_after")
    return {
        "step": [0] + column("step"),
        "tokens": tokens,
        "winning count": [float("nan"), *map(float, column("count"))],
        "bytes per token": [corpus_bytes / max(t, 1) for t in tokens],
        "chars per token": [corpus_chars / max(t, 1) for t in tokens],
    }


def progress_frame(
    records: Sequence[StepRecord], *, initial_tokens: int, corpus_bytes: int, corpus_chars: int
) -> pd.DataFrame:
    """:func:`progress_columns` as a DataFrame (for altair charts that combine runs)."""
    return pd.DataFrame(
        progress_columns(records, initial_tokens=initial_tokens, corpus_bytes=corpus_bytes, corpus_chars=corpus_chars)
    )


# Points a per-step curve is drawn with: the browser redraws every chart on each Step, and 400
# points keep a 20,000-step curve's shape at a fifth of 2,000 points' drawing time.
MAX_POINTS = 400


def thin_rows(n: int, max_points: int = MAX_POINTS) -> list[int]:
    """Every k-th row of n and the last one, so a 20,000-step curve costs what a 400-step one does.

    >>> rows = thin_rows(10_001, 1000)
    >>> len(rows) <= 1001, rows[0], rows[-1], thin_rows(3)
    (True, 0, 10000, [0, 1, 2])
    """
    if n <= max_points:
        return list(range(n))
    rows = list(range(0, n, -(-n // max_points)))
    if rows[-1] != n - 1:
        rows.append(n - 1)
    return rows


def thin(df: pd.DataFrame, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """:func:`thin_rows` of a DataFrame."""
    return df.iloc[thin_rows(len(df), max_points)]


# The three per-step curves redraw on every Step click, so their specs are written directly (built
# and validated through altair they cost ~80 ms each per click) and their data goes to Streamlit as
# Arrow tables made from lists (from pandas, the conversion was a third of a step's server time).
def _padded(values: list[float]) -> dict:
    """zero=False, with room around values that (nearly) agree: at step 0 every point of a curve
    is the same, and bytes and characters per token are 1.00 and 0.99 on English, which an axis
    of their own span labels "1.00 1.00 1.00".

    >>> _padded([11.0]), _padded([0.99, 1.0]), _padded([3.0, 5.0])
    ({'domain': [10.0, 12.0]}, {'domain': [0.89, 1.1]}, {'zero': False})
    """
    lo, hi = float(min(values)), float(max(values))
    size = max(abs(lo), abs(hi))
    if lo == hi:
        pad = max(size * 0.05, 1.0 if lo >= 1 else 0.05)
    elif hi - lo < 0.05 * size:
        pad = 0.1 * size
    else:
        return {"zero": False}
    return {"domain": [round(lo - pad, 6), round(hi + pad, 6)]}


def y_domain(values: Sequence[float]) -> list[float] | None:
    """A y axis's range for values that (nearly) agree, padded so that its labels differ; None
    lets the chart take the data's own range.

    >>> y_domain([11.0]), y_domain([3.0, 5.0])
    ([10.0, 12.0], None)
    """
    finite = [v for v in values if v == v]
    if not finite:
        return None
    return _padded(finite).get("domain")


def shown_rows(cols: Columns, current: int, names: list[str], *, first: int = 0) -> Columns:
    """The thinned curve (rows from ``first`` on) with the step shown kept in it and marked
    (``shown``).

    >>> shown_rows({"step": list(range(5)), "tokens": [9, 8, 7, 6, 5]}, 3, ["tokens"], first=1)
    {'step': [1, 2, 3, 4], 'tokens': [8, 7, 6, 5], 'shown': [False, False, True, False]}
    """
    steps = cols["step"]
    rows = [first + i for i in thin_rows(len(steps) - first)]
    if first <= current < len(steps) and steps[current] == current and current not in rows:
        rows = sorted([*rows, current])
    out = {name: [cols[name][i] for i in rows] for name in ["step", *names]}
    out["shown"] = [s == current for s in out["step"]]
    return out


def twin_chart(frames: dict[str, pd.DataFrame]) -> alt.Chart:
    """Compression curves of several runs on one chart: bytes per token after each merge.

    >>> from explorer import make_config, train
    >>> t = train("aaabdaaabac", make_config("bytes", vocab_size=None, num_merges=2))
    >>> df = progress_frame(t.records, initial_tokens=11, corpus_bytes=11, corpus_chars=11)
    >>> twin_chart({"byte level": df}).to_dict()["mark"]["type"]
    'line'
    """
    long = pd.concat([thin(df).assign(run=name) for name, df in frames.items()], ignore_index=True)
    return (
        alt.Chart(long, title="Compression on the training corpus")
        .mark_line(strokeWidth=2.5)
        .encode(
            x=alt.X("step:Q", title="merges"),
            y=alt.Y("bytes per token:Q", title="bytes per token", scale=alt.Scale(zero=False)),
            color=alt.Color("run:N", legend=alt.Legend(orient="bottom", title=None, labelLimit=400)),
            strokeDash=alt.StrokeDash("run:N", legend=None),
            tooltip=[
                "run",
                "step",
                alt.Tooltip("tokens:Q", format=","),
                alt.Tooltip("bytes per token:Q", format=".3f"),
            ],
        )
        .properties(height=300)
    )
