"""Altair charts of a training run, with tooltips."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd

from ..trainer import StepRecord

__all__ = [
    "progress_frame", "tokens_chart", "compression_chart", "count_chart", "length_chart", "length_frame", "twin_chart",
]


def progress_frame(records: Sequence[StepRecord], *, initial_tokens: int, corpus_bytes: int, corpus_chars: int) -> pd.DataFrame:
    """One row per step (0 = before any merge): corpus tokens, compression, winning count.

    >>> from explorer import make_config, train
    >>> t = train("aaabdaaabac", make_config("bytes", vocab_size=None, num_merges=2))
    >>> progress_frame(t.records, initial_tokens=11, corpus_bytes=11, corpus_chars=11)["tokens"].tolist()
    [11, 9, 7]
    """
    steps = [0] + [r.step for r in records]
    tokens = [initial_tokens] + [r.tokens_after for r in records]
    counts = [None] + [r.count for r in records]
    df = pd.DataFrame({"step": steps, "tokens": tokens, "winning count": counts})
    df["bytes per token"] = corpus_bytes / df["tokens"].clip(lower=1)
    df["chars per token"] = corpus_chars / df["tokens"].clip(lower=1)
    return df


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


def _rule(current: int) -> alt.Chart:
    return alt.Chart(pd.DataFrame({"step": [current]})).mark_rule(color="#dc2626", strokeDash=[4, 3]).encode(x="step:Q")


def _step_x(df: pd.DataFrame, title: str = "merge step") -> alt.X:
    """Whole-number step ticks, and a real axis even at step 0 (one point would give 0.000000)."""
    last = int(df["step"].max()) if len(df) else 0
    return alt.X("step:Q", title=title, scale=alt.Scale(domain=[0, max(1, last)], nice=False),
                 axis=alt.Axis(format="d", tickMinStep=1))


def _y_scale(values: pd.Series, **kw) -> alt.Scale:
    """zero=False, with room around a single value (at step 0 every point is the same)."""
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        pad = max(abs(lo) * 0.05, 1.0 if lo >= 1 else 0.05)
        return alt.Scale(domain=[lo - pad, hi + pad], **kw)
    return alt.Scale(zero=False, **kw)


def _hover(wide: pd.DataFrame, tooltip: list) -> list[alt.Chart]:
    """A rule that follows the pointer to the nearest step, its tooltip giving every series'
    value there: hovering anywhere over the chart works, not only the 1-pixel line."""
    nearest = alt.selection_point(name="nearest", nearest=True, on="pointerover", fields=["step"], empty=False,
                                  clear="pointerout")
    # the invisible points that catch the pointer carry the same tooltip as the rule
    pick = alt.Chart(wide).mark_point(opacity=0, size=600).encode(x="step:Q", tooltip=tooltip).add_params(nearest)
    rule = (
        alt.Chart(wide).mark_rule(color="#475569", strokeWidth=1.5)
        .encode(x="step:Q", opacity=alt.condition(nearest, alt.value(0.9), alt.value(0)), tooltip=tooltip)
    )
    return [pick, rule]


_STEP_TIP = alt.Tooltip("step:Q", title="step", format=",")


def tokens_chart(df: pd.DataFrame, current: int) -> alt.LayerChart:
    data = thin(df)
    line = (
        alt.Chart(data, title="Tokens in the corpus")
        .mark_line(color="#2563eb", point=len(data) <= 60)
        .encode(x=_step_x(data), y=alt.Y("tokens:Q", title="tokens", scale=_y_scale(data["tokens"]), axis=alt.Axis(format=",d")))
    )
    tips = [_STEP_TIP, alt.Tooltip("tokens:Q", format=","), alt.Tooltip("bytes per token:Q", format=".3f")]
    return alt.layer(line, *_hover(data, tips), _rule(current)).properties(height=260)


def compression_chart(df: pd.DataFrame, current: int) -> alt.LayerChart:
    data = thin(df)
    long = data.melt(id_vars=["step"], value_vars=["bytes per token", "chars per token"], var_name="measure", value_name="ratio")
    line = (
        alt.Chart(long, title="Compression")
        .mark_line(point=len(data) <= 60)
        .encode(
            x=_step_x(data),
            y=alt.Y("ratio:Q", title="per token", scale=_y_scale(long["ratio"]), axis=alt.Axis(format=".2f")),
            color=alt.Color("measure:N", legend=alt.Legend(orient="bottom", title=None)),
        )
    )
    tips = [_STEP_TIP, alt.Tooltip("bytes per token:Q", format=".3f"), alt.Tooltip("chars per token:Q", format=".3f")]
    return alt.layer(line, *_hover(data, tips), _rule(current)).properties(height=260)


def count_chart(df: pd.DataFrame, current: int) -> alt.LayerChart:
    pts = thin(df.dropna(subset=["winning count"]))
    line = (
        alt.Chart(pts, title="Count of the winning pair")
        .mark_line(color="#7c3aed", point=len(pts) <= 60)
        .encode(
            x=_step_x(pts),
            y=alt.Y("winning count:Q", title="count (log scale)", scale=alt.Scale(type="log"), axis=alt.Axis(format=",d")),
        )
    )
    tips = [_STEP_TIP, alt.Tooltip("winning count:Q", format=",")]
    return alt.layer(line, *_hover(pts, tips), _rule(current)).properties(height=260)


def length_frame(lengths: Sequence[int]) -> pd.DataFrame:
    s = pd.Series(list(lengths), dtype="int64")
    counts = s.value_counts().sort_index()
    return pd.DataFrame({"length": counts.index.astype(int), "tokens": counts.values.astype(int)})


def length_chart(df: pd.DataFrame, unit: str) -> alt.Chart:
    return (
        alt.Chart(df, title="Token lengths in the vocabulary so far")
        .mark_bar(color="#0d9488")
        .encode(
            x=alt.X("length:O", title=f"length ({'bytes' if unit == 'byte' else 'characters'})",
                    axis=alt.Axis(labelAngle=0, labelOverlap=False)),
            y=alt.Y("tokens:Q", title="tokens"),
            tooltip=["length", "tokens"],
        )
        .properties(height=260)
    )


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
