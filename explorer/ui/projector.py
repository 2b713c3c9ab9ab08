"""Projector mode: every page in text a room can read, switched from the sidebar on every page and
held in the link (``projector=1``), so a refresh, a page switch or a shared link keeps it.

What it changes (a view setting: nothing is retrained, no page is laid out anew):

- the root font size grows with the window: 20 px at 1280×720, 26 px at 1920×1080 (the smaller
  of the width's and the height's share, so a wide but short window is not overfilled). Streamlit
  and the app size their text in rem, so all of it grows alike (the smallest, 0.8 rem, is 16 px
  at the smallest window);
- Vega-Lite charts (:func:`chart_spec`, :func:`altair_chart`): Vega draws in pixels, not rem, so
  their labels, titles and legends get sizes of their own in the spec's config;
- the Train page's SVG charts (``live_view``) and the Class page's answer, through their CSS.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

import streamlit as st

__all__ = [
    "PARAM",
    "KEY",
    "CSS",
    "CHART_LABEL_PX",
    "CHART_TITLE_PX",
    "start",
    "on",
    "keep_in_link",
    "link_params",
    "chart_config",
    "chart_spec",
    "chart_height",
    "altair_chart",
]

PARAM = "projector"  # the link's parameter: projector=1
KEY = "projector_on"  # the sidebar switch's key: drawn by every page run, so it outlives page switches
# (not a ``w_`` key: ``state.keep_widget_state`` stores those again after this switch is drawn)
CHART_LABEL_PX = 16  # axis and legend labels, a text mark's numbers
CHART_TITLE_PX = 18  # chart, axis and legend titles

# Why each rule: the root size is what every rem-sized text follows; the page's top padding
# makes room for Streamlit's header, not for text, so it does not grow as much; the sidebar
# (300 px, or as wide as its reader drags it) grows with the text, and buttons in narrow columns
# keep their labels whole with less padding (the Train page's stepper is sized in rem: it grows
# with the text); Markdown's inline code (0.75 em) stays at 16 px or more. The Train page's charts are
# SVG drawn by the app (``live_view``) in px. On the Class page the answer is the largest text,
# and after the reveal the bars marked right lead the tally: with eight options the right one
# could otherwise sit below a 1280x720 screen (the bars keep their labels; only their order on
# the screen changes).
CSS = """
<style>
html{font-size:clamp(20px, calc(min(0.9375vw, 1.6667vh) + 8px), 32px);}
.stMainBlockContainer{padding-top:3.5rem;}
section[data-testid="stSidebar"]{min-width:15rem;}
.stButton button{padding-left:.5rem;padding-right:.5rem;}
[data-testid="stMarkdownContainer"] :is(p,li) code{font-size:max(.85em,.8rem);}
.lc-box svg,.lc-axis text,.lc-label,.lc-legend,.lc-tip{font-size:16px;}
.lc-title{font-size:18px;}
.cls-option.cls-right{font-size:1.25rem;}
.cls-tally{display:flex;flex-direction:column;}
.cls-tally .cls-count{order:-2;}
.cls-tally .cls-right{order:-1;}
</style>
"""


def on() -> bool:
    """Whether this session shows the projector mode."""
    return bool(st.session_state.get(KEY, False))


def link_params() -> dict[str, str]:
    """The mode's part of a page's link (nothing when it is off: the usual link stays as it was).

    >>> link_params()
    {}
    """
    return {PARAM: "1"} if on() else {}


def keep_in_link() -> None:
    """Write the mode into the address bar when the page's own params left it out (the Class
    page writes its room's params whole, and a page switch starts from an empty query)."""
    if on():
        if st.query_params.get(PARAM) != "1":
            st.query_params[PARAM] = "1"
    elif PARAM in st.query_params:
        del st.query_params[PARAM]


def start() -> None:
    """Run before every page (``nav.run_app``): on a session's first run read the mode from the
    link, draw the sidebar's switch, send the styles when it is on, and keep it in the link."""
    if KEY not in st.session_state:
        st.session_state[KEY] = st.query_params.get(PARAM) == "1"
    st.sidebar.toggle(
        "Projector mode",
        key=KEY,
        help="Larger text on every page, growing with the window, for a room's screen; kept in the link "
        "(nothing is retrained).",
    )
    if on():
        st.html(CSS)
    keep_in_link()


# ---- charts: Vega draws text in pixels --------------------------------------------------------
def chart_config() -> dict[str, Any]:
    """A Vega-Lite ``config`` with every text of a chart at the projector's sizes, and the
    paddings pinned in px: Streamlit's chart theme sizes them in rem, so the larger root font
    would widen them and squeeze the plot out of a chart of fixed height."""
    label, title = CHART_LABEL_PX, CHART_TITLE_PX
    return {
        "axis": {"labelFontSize": label, "titleFontSize": title, "labelPadding": 6, "titlePadding": 8},
        "legend": {
            "labelFontSize": label,
            "titleFontSize": title,
            "padding": 4,
            "titlePadding": 4,
            "labelPadding": 6,
            "columnPadding": 8,
            "rowPadding": 2,
        },
        "header": {"labelFontSize": label, "titleFontSize": title},
        "title": {"fontSize": title, "subtitleFontSize": label},
        "text": {"fontSize": label},
    }


_SIZES = {"fontSize", "labelFontSize", "titleFontSize", "subtitleFontSize"}


def _lifted(node: Any, floor: int) -> Any:
    """``node`` (a spec's part) with every font size set below ``floor`` raised to it (a size a
    chart sets on its own title or legend beats the config's).

    >>> _lifted({"title": {"text": "t", "fontSize": 13}, "layer": [{"mark": {"fontSize": 20}}]}, 16)
    {'title': {'text': 't', 'fontSize': 16}, 'layer': [{'mark': {'fontSize': 20}}]}
    """
    if isinstance(node, dict):
        return {
            k: max(v, floor) if k in _SIZES and isinstance(v, int | float) else _lifted(v, floor)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_lifted(v, floor) for v in node]
    return node


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in, key by key (``extra`` wins).

    >>> _merged({"axis": {"grid": False, "labelFontSize": 11}}, {"axis": {"labelFontSize": 16}})
    {'axis': {'grid': False, 'labelFontSize': 16}}
    """
    out = dict(base)
    for k, v in extra.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def chart_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """A Vega-Lite spec as this session shows it: in projector mode, its texts at the projector's
    sizes (the spec given is left as it is: specs are cached and shared); otherwise ``spec``."""
    if not on():
        return spec
    sized = _lifted(copy.deepcopy(spec), CHART_LABEL_PX)
    sized["config"] = _merged(sized.get("config", {}), chart_config())
    return sized


def chart_height(px: int) -> int:
    """A chart's fixed height as this session shows it: in projector mode a third taller, for
    its text is (16 px labels against 12 px), so its plot keeps its room.

    >>> chart_height(140)
    140
    """
    return round(px * CHART_LABEL_PX / 12) if on() else px


Chart = TypeVar("Chart")


def altair_chart(chart: Chart) -> Chart:
    """An altair chart as this session shows it (see :func:`chart_spec`): in projector mode a copy
    with the projector's config; font sizes the chart sets itself are the chart's to keep at 16 px
    or more."""
    if not on():
        return chart
    sized = chart.copy(deep=False)  # type: ignore[attr-defined]
    config = chart_config()
    return (
        sized.configure_axis(**config["axis"])
        .configure_legend(**config["legend"])
        .configure_header(**config["header"])
        .configure_title(**config["title"])
        .configure_text(**config["text"])
    )
