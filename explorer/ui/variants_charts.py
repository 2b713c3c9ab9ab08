"""The Variants page's charts (Altair): classical BPE against SuperBPE and PickyBPE on held-out
text (bytes per token and Rényi efficiency, side by side), and the training corpus's tokens after
each merge, with a rule at SuperBPE's transition (PickyBPE's line runs on: it makes more merges
for the same vocabulary size). Names go into Vega's text (SVG), never into HTML.

Frames::

    measures_frame   tokenizer, measure, value          6 rows: 3 tokenizers x 2 measures
    curves_frame     merge, tokens, tokenizer           one row per merge shown, per tokenizer
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from .charts import thin_rows
from .variants_model import Lab

__all__ = [
    "MEASURES",
    "MEASURE_HEIGHT",
    "CURVES_HEIGHT",
    "measures_frame",
    "curves_frame",
    "measure_chart",
    "curves_chart",
]

MEASURES = ("bytes per token", "Rényi efficiency (α = 2.5)")
_NAMES = ("classical", "SuperBPE", "PickyBPE")
# classical grey, SuperBPE blue (as the Fairness page's sides), PickyBPE green
_COLOURS = ("#64748b", "#2563eb", "#059669")
_RULE = "#dc2626"
_POINTS = 300
MEASURE_HEIGHT = 140  # pixels, the title and axis included
CURVES_HEIGHT = 230


def measures_frame(lab: Lab) -> pd.DataFrame:
    """Each tokenizer's held-out measures, one row per (tokenizer, measure)."""
    rows = []
    for variant in lab.variants:
        name, e = variant.name, variant.held_out
        rows.append({"tokenizer": name, "measure": MEASURES[0], "value": round(e.bytes_per_token or 0.0, 3)})
        rows.append({"tokenizer": name, "measure": MEASURES[1], "value": round(e.renyi_efficiency or 0.0, 3)})
    return pd.DataFrame(rows)


def curves_frame(lab: Lab) -> pd.DataFrame:
    """The training corpus's tokens after each merge, thinned to a few hundred points a line."""
    frames = []
    for variant in lab.variants:
        rows = thin_rows(len(variant.curve), _POINTS)
        frames.append(
            pd.DataFrame({"merge": rows, "tokens": [variant.curve[k] for k in rows], "tokenizer": variant.name})
        )
    return pd.concat(frames, ignore_index=True)


def _colour(*, legend: bool = True) -> alt.Color:
    return alt.Color(
        "tokenizer:N",
        scale=alt.Scale(domain=list(_NAMES), range=list(_COLOURS)),
        legend=alt.Legend(orient="top", title=None) if legend else None,
    )


def measure_chart(lab: Lab, measure: str) -> alt.LayerChart:
    """One measure of each tokenizer on held-out text, a bar each labelled with its number (one
    chart per measure: a single chart stretches to its column, a concatenation does not)."""
    df = measures_frame(lab)
    part = df[df["measure"] == measure]
    base = alt.Chart(part).encode(
        # three bands in a short chart: Vega would drop every other label where they crowd
        y=alt.Y("tokenizer:N", title=None, sort=list(_NAMES), axis=alt.Axis(labelOverlap=False)),
        x=alt.X("value:Q", title=None, scale=alt.Scale(zero=True)),
    )
    bars = base.mark_bar().encode(color=_colour(legend=False), tooltip=["tokenizer", "measure", "value"])
    labels = base.mark_text(align="right", dx=-4, color="white", fontWeight="bold").encode(
        text=alt.Text("value:Q", format=".3~f")
    )
    return (bars + labels).properties(title=measure)


def curves_chart(lab: Lab) -> alt.LayerChart | alt.FacetChart:
    """The training corpus's tokens after each merge: classical's and SuperBPE's lines are one up
    to the transition, where SuperBPE starts merging across spaces; PickyBPE's steps up at each
    removal and runs past the budget (a removal frees a place in its vocabulary)."""
    df = curves_frame(lab)
    lines = (
        alt.Chart(df)
        .mark_line()
        .encode(
            x=alt.X("merge:Q", title="merges"),
            y=alt.Y("tokens:Q", title="tokens", scale=alt.Scale(zero=False)),
            color=_colour(),
            tooltip=["tokenizer", "merge", "tokens"],
        )
    )
    layers: list[alt.Chart] = [lines]
    if lab.superbpe.transition is not None:
        rule = pd.DataFrame({"merge": [lab.superbpe.transition], "label": [f"t = {lab.superbpe.transition:,}"]})
        mark = alt.Chart(rule).mark_rule(color=_RULE, strokeDash=[4, 3]).encode(x="merge:Q")
        text = alt.Chart(rule).mark_text(align="left", dx=4, dy=-60, color=_RULE).encode(x="merge:Q", text="label:N")
        layers += [mark, text]
    return alt.layer(*layers).properties(title="Training corpus: tokens after each merge")
