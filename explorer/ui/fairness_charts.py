"""The Fairness page's charts (Altair): each language's development-text tokens over merges, the
strip of which language each merge served, the Gini coefficient and the global cost over merges,
each with a rule at the merge shown.

Every chart's x axis is merges 0..N of the longer run, and every y axis has the same width, so
the curves and the strip under them line up merge for merge. Language names go into Vega's
text (SVG), never into HTML.

A step moves only the rule: each chart is built and validated once per trained pair of runs
(:func:`lab_specs`, about half a second for all six) and kept as a Vega-Lite spec with its data
as Arrow; :func:`at_merge` moves the rule of a copy (Streamlit takes the datasets out of the
spec it is given)::

    lab_specs(lab)  {"curves:classical": spec, "curves:variant": ..., "strip:classical": ...,
                     "strip:variant": ..., "gini": ..., "totals": ...}
    spec            {"layer": [..., rule], "datasets": {name: Arrow IPC bytes}, ...}
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import pandas as pd
import pyarrow as pa

from .charts import thin_rows
from .fairness_model import Lab, Side

__all__ = [
    "lab_specs",
    "at_merge",
    "colours",
    "curves_frame",
    "strip_runs",
    "gini_frame",
    "totals_frame",
    "curves_spec",
    "strip_spec",
    "gini_spec",
    "totals_spec",
]

# tableau10 and two more: neighbours differ, and twelve languages (the page's most) get a colour each
_COLOURS = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
    "#b07aa1", "#ff9da7", "#9c755f", "#17becf", "#bcbd22", "#7f7f7f",
)  # fmt: skip
_SIDE_COLOURS = ("#64748b", "#2563eb")  # classical grey, the variant blue
_RULE = "#dc2626"  # the merge shown, as on the Train page
_Y_WIDTH = 46  # every y axis this wide: the strip lines up with the curves above it
_POINTS = 250  # per line: the browser redraws every chart on each step
_BELOW = 290  # the charts under the fold: room for a title, a legend and a plot of about 200 px


def colours(n: int) -> list[str]:
    """A colour per language, in the languages' order.

    >>> colours(2)
    ['#4e79a7', '#f28e2b']
    """
    return [_COLOURS[i % len(_COLOURS)] for i in range(n)]


def _x(merges: int) -> alt.X:
    return alt.X(
        "merge:Q",
        title=None,
        scale=alt.Scale(domain=[0, max(merges, 1)], nice=False),
        axis=alt.Axis(format=",d", tickMinStep=1, labelFlush=True),
    )


def _y_axis(fmt: str = "~s") -> alt.Axis:
    return alt.Axis(format=fmt, minExtent=_Y_WIDTH, maxExtent=_Y_WIDTH, tickCount=4)


def _rule() -> alt.Chart:
    """The merge shown: a datum that :func:`at_merge` sets."""
    return (
        alt.Chart(alt.InlineData(values=[{"k": 0}]))
        .mark_rule(color=_RULE, strokeDash=[4, 3], strokeWidth=1.5)
        .encode(x=alt.datum(0))
    )


def _arrow(values: pd.DataFrame | list[dict]) -> bytes:
    table = (
        pa.Table.from_pandas(values, preserve_index=False)
        if isinstance(values, pd.DataFrame)
        else pa.Table.from_pylist(values)
    )
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _spec(chart: alt.LayerChart, frames: dict[str, pd.DataFrame]) -> dict:
    """A chart as a Vega-Lite spec whose datasets (its named frames, the rule's row) are Arrow."""
    spec = chart.to_dict()
    spec.pop("config", None)  # Altair's default theme's view size: Streamlit sizes the chart
    datasets = {name: _arrow(values) for name, values in spec.get("datasets", {}).items()}
    datasets.update({name: _arrow(df) for name, df in frames.items()})
    spec["datasets"] = datasets
    return spec


def at_merge(spec: dict, k: int) -> dict:
    """A copy of a kept spec with its rule at merge k.

    >>> spec = {"layer": [{"mark": "line"}, {"mark": "rule", "encoding": {"x": {"datum": 0}}}], "datasets": {}}
    >>> at_merge(spec, 37)["layer"][1]["encoding"]["x"], spec["layer"][1]["encoding"]["x"]
    ({'datum': 37}, {'datum': 0})
    """
    rule = spec["layer"][-1]
    moved = {**rule, "encoding": {**rule["encoding"], "x": {**rule["encoding"]["x"], "datum": k}}}
    return {**spec, "layer": [*spec["layer"][:-1], moved], "datasets": dict(spec["datasets"])}


def curves_frame(side: Side, names: Sequence[str]) -> pd.DataFrame:
    """Long form: merge, language, development-text tokens (every merge up to a few hundred
    points per language, then thinned).

    >>> from explorer import TrainerConfig
    >>> from explorer.bpe.parity import ParityTrainer
    >>> from explorer.ui.fairness_view import build_side
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=2)
    >>> side = build_side(ParityTrainer(["aaaa", "bcbc"], ["aaaa", "bcbc"], cfg).run(), ["a", "b"])
    >>> curves_frame(side, ["A", "B"]).values.tolist()
    [[0, 'A', 4], [0, 'B', 4], [1, 'A', 2], [1, 'B', 4], [2, 'A', 2], [2, 'B', 2]]
    """
    rows = [(k, name, side.dev[k][i]) for k in thin_rows(len(side.dev), _POINTS) for i, name in enumerate(names)]
    return pd.DataFrame(rows, columns=["merge", "language", "tokens"])


def curves_spec(side: Side, names: Sequence[str], *, top: int, merges: int) -> dict:
    """A line per language: its development text in tokens after each merge (``top``: the y
    axis's end, shared by both sides so that the same height means the same count)."""
    colour = alt.Color("language:N", scale=alt.Scale(domain=list(names), range=colours(len(names))), legend=None)
    lines = (
        alt.Chart(alt.NamedData("curves"))
        .mark_line(strokeWidth=2)
        .encode(
            x=_x(merges),
            y=alt.Y("tokens:Q", title=None, scale=alt.Scale(domain=[0, top]), axis=_y_axis(",d")),
            color=colour,
            tooltip=["language:N", alt.Tooltip("merge:Q", format=","), alt.Tooltip("tokens:Q", format=",")],
        )
    )
    return _spec((lines + _rule()).properties(height=175), {"curves": curves_frame(side, names)})


def strip_runs(side: Side, names: Sequence[str]) -> pd.DataFrame:
    """Runs of merges that served one language: start, end (merges start+1..end), language, and
    whether that language's count chose them ("served") or all languages' together did
    ("global", then the language whose development text the merge shortened most).

    >>> from explorer import TrainerConfig
    >>> from explorer.bpe.parity import Balance, ParityTrainer
    >>> from explorer.ui.fairness_view import build_side
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=3)
    >>> side = build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg).run(), ["a", "b"])
    >>> strip_runs(side, ["A", "B"]).values.tolist()
    [[0, 1, 'A', 'served'], [1, 2, 'B', 'served'], [2, 3, 'A', 'served']]
    >>> side = build_side(ParityTrainer(["aaaa aaaa aaaa", "bcbc"], ["aaaa", "bcbc"], cfg, balance=Balance("classical")).run(), ["a", "b"])
    >>> strip_runs(side, ["A", "B"]).values.tolist()
    [[0, 2, 'A', 'global'], [2, 3, 'B', 'global']]
    """
    runs: list[list] = []
    for k in range(1, side.merges + 1):
        lang, served = side.owner(k)
        how = "served" if served else "global"
        if runs and runs[-1][2] == names[lang] and runs[-1][3] == how and runs[-1][1] == k - 1:
            runs[-1][1] = k
        else:
            runs.append([k - 1, k, names[lang], how])
    return pd.DataFrame(runs, columns=["start", "end", "language", "how"])


def strip_spec(side: Side, names: Sequence[str], *, merges: int) -> dict:
    """A band, one slice per merge, coloured by the language it served (pale: chosen over all
    languages together, coloured by the language it helped most)."""
    df = strip_runs(side, names)
    df["row"] = "helped" if side.mode == "classical" else "served"
    band = (
        alt.Chart(alt.NamedData("strip"))
        .mark_rect()
        .encode(
            x=alt.X("start:Q", title=None, scale=alt.Scale(domain=[0, max(merges, 1)], nice=False), axis=None),
            x2="end:Q",
            y=alt.Y("row:N", title=None, axis=alt.Axis(minExtent=_Y_WIDTH, maxExtent=_Y_WIDTH, ticks=False)),
            color=alt.Color("language:N", scale=alt.Scale(domain=list(names), range=colours(len(names))), legend=None),
            opacity=alt.Opacity("how:N", scale=alt.Scale(domain=["served", "global"], range=[1.0, 0.4]), legend=None),
            tooltip=[
                "language:N",
                alt.Tooltip("how:N", title="chosen"),
                alt.Tooltip("start:Q", title="after merge", format=","),
                alt.Tooltip("end:Q", title="to merge", format=","),
            ],
        )
    )
    return _spec((band + _rule()).properties(height=34), {"strip": df})


def gini_frame(lab: Lab) -> pd.DataFrame:
    """Long form: merge, side (classical or the variant), text (held-out test, development), Gini."""
    rows = []
    for side in (lab.classical, lab.variant):
        for k in thin_rows(len(side.dev), _POINTS):
            rows.append((k, side.mode, "held-out test", side.gini_test[k]))
            rows.append((k, side.mode, "development", side.gini_dev[k]))
    return pd.DataFrame(rows, columns=["merge", "side", "text", "gini"])


def _side_colour(lab: Lab) -> alt.Color:
    return alt.Color(
        "side:N",
        scale=alt.Scale(domain=[lab.classical.mode, lab.variant.mode], range=list(_SIDE_COLOURS)),
        legend=alt.Legend(orient="top", title=None, labelFontSize=12),
    )


def _sides_spec(
    lab: Lab,
    frame: pd.DataFrame,
    title: str,
    *,
    value: str,
    axis_format: str,
    tip_format: str,
    zero: bool,
    dash: alt.StrokeDash | None = None,
) -> dict:
    """A line per side (classical grey, the variant blue; ``dash``: a second split) of ``value``
    over merges, titled, with the rule. The frame's name in the spec is the value's."""
    tips = ["side:N", *(["text:N"] if dash is not None else [])]
    encodings = {} if dash is None else {"strokeDash": dash}
    lines = (
        alt.Chart(alt.NamedData(value), title=alt.Title(title, fontSize=13))
        .mark_line(strokeWidth=2)
        .encode(
            x=_x(lab.merges),
            y=alt.Y(f"{value}:Q", title=None, scale=alt.Scale(zero=zero), axis=_y_axis(axis_format)),
            color=_side_colour(lab),
            tooltip=[*tips, alt.Tooltip("merge:Q", format=","), alt.Tooltip(f"{value}:Q", format=tip_format)],
            **encodings,
        )
    )
    return _spec((lines + _rule()).properties(height=_BELOW), {value: frame})


def gini_spec(lab: Lab) -> dict:
    """The Gini coefficient of the languages' token counts over merges, both sides, held-out test
    text solid and development text dashed."""
    dash = alt.StrokeDash(
        "text:N",
        scale=alt.Scale(domain=["held-out test", "development"], range=[[1, 0], [5, 3]]),
        legend=alt.Legend(orient="top", title=None, labelFontSize=12),
    )
    title = "Gini over the languages, after each merge (0: all pay alike)"
    return _sides_spec(
        lab, gini_frame(lab), title, value="gini", axis_format=".2f", tip_format=".3f", zero=True, dash=dash
    )


def totals_frame(lab: Lab) -> pd.DataFrame:
    """Long form: merge, side, tokens of every language's training text together."""
    rows = [
        (k, side.mode, sum(side.train[k]))
        for side in (lab.classical, lab.variant)
        for k in thin_rows(len(side.train), _POINTS)
    ]
    return pd.DataFrame(rows, columns=["merge", "side", "tokens"])


def totals_spec(lab: Lab) -> dict:
    """The global compression each side gets: all training text in tokens over merges."""
    title = "Global: all languages' training text in tokens, after each merge"
    return _sides_spec(lab, totals_frame(lab), title, value="tokens", axis_format=",d", tip_format=",", zero=False)


def lab_specs(lab: Lab) -> dict[str, dict]:
    """Every chart of the page for both runs, built once (see the module's docstring)."""
    top = max(max(row) for side in (lab.classical, lab.variant) for row in side.dev)
    specs = {"gini": gini_spec(lab), "totals": totals_spec(lab)}
    for name, side in (("classical", lab.classical), ("variant", lab.variant)):
        specs[f"curves:{name}"] = curves_spec(side, lab.names, top=top, merges=lab.merges)
        specs[f"strip:{name}"] = strip_spec(side, lab.names, merges=lab.merges)
    return specs
