"""Altair charts of a training run, with tooltips."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..records import StepLog, StepRecord

__all__ = [
    "progress_frame", "tokens_chart", "compression_chart", "count_chart", "length_chart", "length_frame", "twin_chart",
    "steps_spec",
]


def progress_frame(records: Sequence[StepRecord], *, initial_tokens: int, corpus_bytes: int, corpus_chars: int) -> pd.DataFrame:
    """One row per step (0 = before any merge): corpus tokens, compression, winning count.

    >>> from explorer import make_config, train
    >>> t = train("aaabdaaabac", make_config("bytes", vocab_size=None, num_merges=2))
    >>> progress_frame(t.records, initial_tokens=11, corpus_bytes=11, corpus_chars=11)["tokens"].tolist()
    [11, 9, 7]
    """
    # built from plain lists: column arithmetic in pandas cost ~10 ms a step for a few rows; a
    # step log gives its columns without making a record per step
    def column(name: str) -> list[int]:
        return records.column(name) if isinstance(records, StepLog) else [getattr(r, name) for r in records]

    steps = [0] + column("step")
    tokens = [initial_tokens] + column("tokens_after")
    counts = [float("nan"), *map(float, column("count"))]
    return pd.DataFrame({
        "step": steps, "tokens": tokens, "winning count": counts,
        "bytes per token": [corpus_bytes / max(t, 1) for t in tokens],
        "chars per token": [corpus_chars / max(t, 1) for t in tokens],
    })


MAX_POINTS = 2000


def thin(df: pd.DataFrame, max_points: int = MAX_POINTS) -> pd.DataFrame:
    """Every k-th row and the last one, so a 20,000-step curve costs what a 2,000-step one does.

    >>> t = thin(pd.DataFrame({"step": range(10_001)}), 1000)
    >>> len(t) <= 1001, int(t["step"].iloc[0]), int(t["step"].iloc[-1])
    (True, 0, 10000)
    """
    if len(df) <= max_points:
        return df
    k = -(-len(df) // max_points)
    picked = df.iloc[::k]
    if picked.index[-1] != df.index[-1]:
        picked = pd.concat([picked, df.iloc[[-1]]])
    return picked


# The three per-step curves redraw on every Step click, so they are written as Vega-Lite specs
# directly: building and validating them through altair cost ~80 ms each per click.
def _padded(values: pd.Series) -> dict:
    """zero=False, with room around a single value (at step 0 every point is the same)."""
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        pad = max(abs(lo) * 0.05, 1.0 if lo >= 1 else 0.05)
        return {"domain": [lo - pad, hi + pad]}
    return {"zero": False}


def steps_spec(data: pd.DataFrame, *, title: str, series: list[str], y_title: str, y_format: str,
               tips: list[tuple[str, str]], log: bool = False, color: str | None = None) -> dict:
    """A Vega-Lite spec for curves over merge steps: whole-number step ticks, a real axis even
    at step 0, a dashed rule at the step shown (the row whose ``shown`` is true), and a hover
    rule at the nearest step whose tooltip gives every series there (hovering anywhere works,
    not only the 1-pixel line). Past step 0 the spec does not change from step to step, so the
    browser only swaps the data.

    >>> df = pd.DataFrame({"step": [0], "tokens": [11], "shown": [True]})
    >>> spec = steps_spec(df, title="T", series=["tokens"], y_title="tokens", y_format=",d", tips=[("tokens", ",")])
    >>> spec["layer"][0]["encoding"]["x"]["scale"]["domain"], spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    ([0, 1], [10.0, 12.0])
    """
    single = data["step"].nunique() <= 1
    x = {"field": "step", "type": "quantitative", "title": "merge step",
         "scale": {"domain": [0, 1]} if single else {"nice": False}, "axis": {"format": "d", "tickMinStep": 1}}
    values = pd.concat([data[s] for s in series]).dropna()
    y_scale = {"type": "log"} if log else (_padded(values) if single and len(values) else {"zero": False})
    mark = {"type": "line", "point": len(data) <= 60, **({"color": color} if color else {})}
    if len(series) == 1:
        line = {"mark": mark, "encoding": {"x": x, "y": {"field": series[0], "type": "quantitative", "title": y_title,
                                                        "scale": y_scale, "axis": {"format": y_format}}}}
    else:
        line = {"transform": [{"fold": series, "as": ["measure", "value"]}], "mark": mark,
                "encoding": {"x": x, "y": {"field": "value", "type": "quantitative", "title": y_title, "scale": y_scale,
                                           "axis": {"format": y_format}},
                             "color": {"field": "measure", "type": "nominal", "legend": {"orient": "bottom", "title": None}}}}
    tooltip = [{"field": "step", "type": "quantitative", "format": ","}] + [
        {"field": f, "type": "quantitative", "format": fmt} for f, fmt in tips]
    at = {"field": "step", "type": "quantitative"}
    pick = {"params": [{"name": "nearest", "select": {"type": "point", "nearest": True, "on": "pointerover",
                                                      "fields": ["step"], "clear": "pointerout"}}],
            "mark": {"type": "point", "opacity": 0, "size": 600}, "encoding": {"x": at, "tooltip": tooltip}}
    hover = {"mark": {"type": "rule", "color": "#475569", "strokeWidth": 1.5},
             "encoding": {"x": at, "tooltip": tooltip,
                          "opacity": {"condition": {"param": "nearest", "empty": False, "value": 0.9}, "value": 0}}}
    now = {"transform": [{"filter": "datum.shown"}], "mark": {"type": "rule", "color": "#dc2626", "strokeDash": [4, 3]},
           "encoding": {"x": at}}
    return {"title": title, "height": 260, "layer": [line, pick, hover, now]}


def _shown(df: pd.DataFrame, current: int) -> pd.DataFrame:
    """The thinned curve with the step shown kept in it and marked (``shown``)."""
    data = thin(df)
    if not (data["step"] == current).any():
        data = pd.concat([data, df[df["step"] == current]]).sort_values("step")
    return data.assign(shown=data["step"] == current)


def tokens_chart(df: pd.DataFrame, current: int) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of the corpus's token count after each merge."""
    data = _shown(df, current)
    return data, steps_spec(data, title="Tokens in the corpus", series=["tokens"], y_title="tokens", y_format=",d",
                            tips=[("tokens", ","), ("bytes per token", ".3f")], color="#2563eb")


def compression_chart(df: pd.DataFrame, current: int) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of bytes and characters per token after each merge."""
    data = _shown(df, current)
    return data, steps_spec(data, title="Compression", series=["bytes per token", "chars per token"], y_title="per token",
                            y_format=".2f", tips=[("bytes per token", ".3f"), ("chars per token", ".3f")])


def count_chart(df: pd.DataFrame, current: int) -> tuple[pd.DataFrame, dict]:
    """(data, spec) of the winning pair's count at each merge, on a log scale."""
    data = _shown(df.dropna(subset=["winning count"]), current)
    return data, steps_spec(data, title="Count of the winning pair", series=["winning count"], y_title="count (log scale)",
                            y_format=",d", tips=[("winning count", ",")], log=True, color="#7c3aed")


def length_frame(lengths: Sequence[int]) -> pd.DataFrame:
    s = pd.Series(list(lengths), dtype="int64")
    counts = s.value_counts().sort_index()
    return pd.DataFrame({"length": counts.index.astype(int), "tokens": counts.values.astype(int)})


def length_chart(df: pd.DataFrame, unit: str) -> tuple[pd.DataFrame, dict]:
    """(data, Vega-Lite spec) of how many vocabulary tokens have each length; every bar labelled.

    >>> data, spec = length_chart(length_frame([1, 1, 2]), "byte")
    >>> data["tokens"].tolist(), spec["encoding"]["x"]["title"]
    ([2, 1], 'length (bytes)')
    """
    return df, {
        "title": "Token lengths in the vocabulary so far", "height": 260,
        "mark": {"type": "bar", "color": "#0d9488"},
        "encoding": {
            "x": {"field": "length", "type": "ordinal", "title": f"length ({'bytes' if unit == 'byte' else 'characters'})",
                  "axis": {"labelAngle": 0, "labelOverlap": False}},
            "y": {"field": "tokens", "type": "quantitative", "title": "tokens", "axis": {"format": ",d"}},
            "tooltip": [{"field": "length", "type": "ordinal"}, {"field": "tokens", "type": "quantitative", "format": ","}],
        },
    }


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
            tooltip=["run", "step", alt.Tooltip("tokens:Q", format=","), alt.Tooltip("bytes per token:Q", format=".3f")],
        )
        .properties(height=300)
    )

