"""The Train page's live area as one small component: its panels (HTML, escaped by
``render``) in rows, and its four charts, which it draws as SVG itself.

Why a component: a Step redraws the live area, and every Streamlit element it redraws costs
the browser time (React, styles, an HTML sanitizer pass, a layout); four Vega views cost ~0.15 s
of every Step. Here one element gets the panels' HTML (each set again only when it changed) and a
few hundred numbers per curve, and draws three polylines and a bar chart (a few milliseconds);
the tooltip, the dashed rule at the step shown and the axes are drawn by the same script.

The panels' HTML comes from ``explorer.ui.render``, where every string from a corpus or a user is
escaped: the component puts it in the page as it is.

Data shape (what Python sends, and what the tests read back from the element's JSON)::

    {"rows": [["<div class=bpe-panel>...pairs...</div>", "<div ...>...history...</div>"],
              ["<div ...>...words...</div>"]],                     # a row's panels side by side
     "charts": [{"title": "Tokens in the corpus", "kind": "line",  # or "bars"
                 "x": [0, 1, ...], "x_title": "merge step",
                 "series": [{"name": "tokens", "values": [...], "color": "#2563eb"}],
                 "y_title": "tokens", "y_format": "int",            # or "2f"
                 "log": false, "y_domain": [lo, hi] | null, "shown": 12}, ...]}
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import streamlit as st

from . import charts

__all__ = ["chart_data", "tokens_chart", "live_view"]

_JS = r"""
const NS = "http://www.w3.org/2000/svg";
const H0 = 230, M0 = {l: 70, r: 12, t: 26, b: 40};  // at 12 px text; larger text (projector mode) scales them

function el(name, attrs, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
function fmt(v, f) {
  if (v === null || v === undefined || Number.isNaN(v)) return "";
  return f === "2f" ? v.toFixed(2) : Math.round(v).toLocaleString("en-US");
}
function niceTicks(lo, hi, n) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => (hi - lo) / s <= n) || 10 * mag;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}
function logTicks(lo, hi) {
  const out = [];
  for (let p = Math.floor(Math.log10(lo)); p <= Math.ceil(Math.log10(hi)); p++)
    for (const m of [1, 2, 5]) { const v = m * Math.pow(10, p); if (v >= lo && v <= hi) out.push(v); }
  return out.length ? out : [lo, hi];
}
function draw(box, c, width) {
  box.textContent = "";
  const W = Math.max(260, width);
  const svg = el("svg", {width: W, role: "img", "aria-label": c.title, "data-title": c.title}, box);
  const u = (parseFloat(getComputedStyle(svg).fontSize) || 12) / 12;
  const M = {l: M0.l * u, r: M0.r, t: M0.t * u, b: M0.b * u};
  const title = el("text", {x: M.l, y: 15 * u, class: "lc-title"}, svg);
  title.textContent = c.title;
  // a legend that does not fit beside the title gets a line of its own under it
  const legend = c.kind !== "bars" && c.series.length > 1 ? c.series.map((s) => "— " + s.name) : [];
  const widths = legend.map((text) => {
    const t = el("text", {class: "lc-legend"}, svg); t.textContent = text;
    const w = t.getComputedTextLength(); t.remove(); return w + 14;
  });
  const below = legend.length && M.l + title.getComputedTextLength() + 14 + widths.reduce((a, b) => a + b, 0) > W - M.r;
  if (below) M.t += 16 * u;
  const H = H0 * u + (below ? 16 * u : 0);
  svg.setAttribute("height", H);
  const xs = c.x, n = xs.length;
  const vals = c.series.flatMap((s) => s.values).filter((v) => v !== null && !Number.isNaN(v) && (!c.log || v > 0));
  if (!n || !vals.length) {
    el("text", {x: M.l, y: M.t + 30, class: "lc-label"}, svg).textContent = c.empty || "";
    return;
  }
  let lo = Math.min(...vals), hi = Math.max(...vals);
  if (c.y_domain) [lo, hi] = c.y_domain;
  else if (c.kind === "bars") lo = 0;
  if (c.log) { lo = Math.max(lo, 1e-9); if (hi <= lo) hi = lo * 10; }
  else if (hi <= lo) { hi = lo + 1; lo = lo - 1; }
  const iw = W - M.l - M.r, ih = H - M.t - M.b;
  const band = c.kind === "bars" ? iw / n : 0;
  const x0 = xs[0], x1 = xs[n - 1] > x0 ? xs[n - 1] : x0 + 1;
  const X = c.kind === "bars" ? (i) => M.l + band * (i + 0.5) : (v) => M.l + (v - x0) / (x1 - x0) * iw;
  const Y = c.log ? (v) => M.t + ih - (Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * ih
                  : (v) => M.t + ih - (v - lo) / (hi - lo) * ih;
  const g = el("g", {class: "lc-axis"}, svg);
  for (const t of (c.log ? logTicks(lo, hi) : niceTicks(lo, hi, 4))) {
    const y = Y(t);
    el("line", {x1: M.l, x2: M.l + iw, y1: y, y2: y, class: "lc-grid"}, g);
    el("text", {x: M.l - 6, y: y + 4 * u, "text-anchor": "end"}, g).textContent = fmt(t, c.y_format);
  }
  const xt = c.kind === "bars" ? xs.map((v, i) => [i, v]) : niceTicks(x0, x1, Math.max(2, Math.floor(iw / (70 * u))))
      .filter((v) => Number.isInteger(v)).map((v) => [v, v]);
  const every = Math.max(1, Math.ceil(xt.length / Math.max(1, Math.floor(iw / (34 * u)))));
  xt.forEach(([at, label], i) => {
    if (i % every) return;
    el("text", {x: X(at), y: M.t + ih + 16 * u, "text-anchor": "middle"}, g).textContent = label.toLocaleString("en-US");
  });
  el("line", {x1: M.l, x2: M.l + iw, y1: M.t + ih, y2: M.t + ih, class: "lc-base"}, g);
  el("text", {x: M.l + iw / 2, y: H - 4, "text-anchor": "middle", class: "lc-label"}, g).textContent = c.x_title;
  el("text", {x: 12 * u, y: M.t + ih / 2, "text-anchor": "middle", class: "lc-label",
              transform: `rotate(-90 ${12 * u} ${M.t + ih / 2})`}, g).textContent = c.y_title;
  if (c.kind === "bars") {
    const s = c.series[0];
    s.values.forEach((v, i) => el("rect", {x: X(i) - band * 0.4, width: band * 0.8, y: Y(v), height: M.t + ih - Y(v),
                                            fill: s.color}, svg));
  } else {
    for (const s of c.series) {
      const pts = [];
      s.values.forEach((v, i) => { if (v !== null && !Number.isNaN(v) && (!c.log || v > 0)) pts.push(`${X(xs[i]).toFixed(1)},${Y(v).toFixed(1)}`); });
      el("polyline", {points: pts.join(" "), fill: "none", stroke: s.color, "stroke-width": 2}, svg);
      if (n <= 60) pts.forEach((p) => { const [px, py] = p.split(","); el("circle", {cx: px, cy: py, r: 2.5, fill: s.color}, svg); });
    }
    if (c.series.length > 1) {
      let lx = M.l + iw;
      [...c.series].reverse().forEach((s) => {
        const t = el("text", {x: lx, y: (below ? 31 : 15) * u, "text-anchor": "end", fill: s.color, class: "lc-legend"}, svg);
        t.textContent = "— " + s.name; lx -= t.getComputedTextLength() + 14;
      });
    }
    if (c.shown !== null && c.shown !== undefined && c.shown >= x0 && c.shown <= x1)
      el("line", {x1: X(c.shown), x2: X(c.shown), y1: M.t, y2: M.t + ih, class: "lc-shown"}, svg);
  }
  const hover = el("line", {y1: M.t, y2: M.t + ih, class: "lc-hover", visibility: "hidden"}, svg);
  const tip = document.createElement("div"); tip.className = "lc-tip"; box.appendChild(tip);
  const pad = el("rect", {x: M.l, y: M.t, width: iw, height: ih, fill: "transparent"}, svg);
  pad.addEventListener("pointermove", (ev) => {
    const r = svg.getBoundingClientRect(), px = ev.clientX - r.left;
    let i = 0, best = Infinity;
    xs.forEach((v, j) => { const d = Math.abs((c.kind === "bars" ? X(j) : X(v)) - px); if (d < best) { best = d; i = j; } });
    const hx = c.kind === "bars" ? X(i) : X(xs[i]);
    hover.setAttribute("x1", hx); hover.setAttribute("x2", hx); hover.setAttribute("visibility", "visible");
    tip.textContent = `${c.kind === "bars" ? c.x_title : "step"} ${xs[i].toLocaleString("en-US")} · ` +
      c.series.map((s) => `${s.name} ${fmt(s.values[i], c.y_format)}`).join(" · ");
    tip.style.left = Math.min(hx + 8, W - 180) + "px"; tip.style.display = "block";
  });
  pad.addEventListener("pointerleave", () => { hover.setAttribute("visibility", "hidden"); tip.style.display = "none"; });
}
function panels(root, rows) {
  // one div a row, one cell a panel; a cell's HTML is set again only when it changed
  while (root.children.length > rows.length) root.lastChild.remove();
  rows.forEach((cells, r) => {
    let row = root.children[r];
    if (!row) { row = document.createElement("div"); row.className = "lv-row"; root.appendChild(row); }
    row.style.gridTemplateColumns = `repeat(${cells.length}, minmax(0, 1fr))`;
    while (row.children.length > cells.length) row.lastChild.remove();
    cells.forEach((html, c) => {
      let cell = row.children[c];
      if (!cell) { cell = document.createElement("div"); cell.className = "lv-cell"; row.appendChild(cell); }
      if (cell.__html !== html) { cell.innerHTML = html; cell.__html = html; }
    });
  });
}
export default function (component) {
  const { data, parentElement } = component;
  let top = parentElement.querySelector(".lv-panels");
  if (!top) { top = document.createElement("div"); top.className = "lv-panels"; parentElement.appendChild(top); }
  panels(top, (data && data.rows) || []);
  const charts = (data && data.charts) || [];
  let root = parentElement.querySelector(".lc-grid-root");
  if (!root && charts.length) { root = document.createElement("div"); root.className = "lc-grid-root"; parentElement.appendChild(root); }
  if (!root) return;
  while (root.children.length > charts.length) root.lastChild.remove();
  while (root.children.length < charts.length) { const b = document.createElement("div"); b.className = "lc-box"; root.appendChild(b); }
  const render = () => charts.forEach((c, i) => draw(root.children[i], c, root.children[i].clientWidth));
  render();
  if (!root.__observer) {
    let last = root.clientWidth;
    root.__observer = new ResizeObserver(() => { if (root.clientWidth !== last) { last = root.clientWidth; root.__render(); } });
    root.__observer.observe(root);
  }
  root.__render = render;
}
"""

# its styles live in render.APP_CSS (sent once per page run, not with every Step's element)

_component = st.components.v2.component("bpe_explorer_live_view", js=_JS, isolate_styles=False)


def _values(values: Sequence[float]) -> list[float | None]:
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]


def tokens_chart(cols: charts.Columns, current: int) -> dict:
    """The corpus's token count after each merge (thinned, the step shown kept in), the step shown
    marked: the first of :func:`chart_data`'s charts, and the Home miniature's.

    >>> chart = tokens_chart({"step": [0, 1, 2], "tokens": [11, 9, 7]}, 1)
    >>> chart["series"][0]["values"], chart["shown"]
    ([11, 9, 7], 1)
    """
    tokens = charts.shown_rows(cols, current, ["tokens"])
    return {
        "title": "Tokens in the corpus",
        "kind": "line",
        "x": tokens["step"],
        "x_title": "merge step",
        "series": [{"name": "tokens", "values": tokens["tokens"], "color": "#2563eb"}],
        "y_title": "tokens",
        "y_format": "int",
        "log": False,
        "y_domain": charts.y_domain(tokens["tokens"]),
        "shown": current,
    }


def chart_data(cols: charts.Columns, current: int, *, lengths: Sequence[int], unit: str) -> list[dict]:
    """The four charts' data at the step shown: tokens, compression and the winning count over
    the steps (thinned, the step shown kept in), and how many vocabulary tokens have each length.

    >>> from explorer import make_config, train
    >>> t = train("aaabdaaabac", make_config("bytes", vocab_size=None, num_merges=2))
    >>> cols = charts.progress_columns(t.records, initial_tokens=11, corpus_bytes=11, corpus_chars=11)
    >>> data = chart_data(cols, 1, lengths=[1, 1, 2], unit="byte")
    >>> [(c["title"], c["shown"]) for c in data]
    [('Tokens in the corpus', 1), ('Compression', 1), ('Count of the winning pair', 1), ('Token lengths in the vocabulary so far', None)]
    >>> data[0]["series"][0]["values"], data[3]["x"], data[3]["series"][0]["values"]
    ([11, 9, 7], [1, 2], [2, 1])
    """
    per_token = charts.shown_rows(cols, current, ["bytes per token", "chars per token"])
    counts = charts.shown_rows(cols, current, ["winning count"], first=1)
    by_length = sorted(Counter(lengths).items())  # [(length, tokens of that length), ...], shortest first
    return [
        tokens_chart(cols, current),
        {
            "title": "Compression",
            "kind": "line",
            "x": per_token["step"],
            "x_title": "merge step",
            "series": [
                {"name": "bytes per token", "values": per_token["bytes per token"], "color": "#0ea5e9"},
                {"name": "chars per token", "values": per_token["chars per token"], "color": "#f97316"},
            ],
            "y_title": "per token",
            "y_format": "2f",
            "log": False,
            "y_domain": charts.y_domain(per_token["bytes per token"] + per_token["chars per token"]),
            "shown": current,
        },
        {
            "title": "Count of the winning pair",
            "kind": "line",
            "x": counts["step"],
            "x_title": "merge step",
            "series": [{"name": "winning count", "values": _values(counts["winning count"]), "color": "#7c3aed"}],
            "y_title": "count (log scale)",
            "y_format": "int",
            "log": True,
            "y_domain": None,
            "shown": current,
            "empty": "The winning pair's count appears after the first merge.",
        },
        {
            "title": "Token lengths in the vocabulary so far",
            "kind": "bars",
            "x": [n for n, _ in by_length],
            "x_title": f"length ({'bytes' if unit == 'byte' else 'characters'})",
            "series": [{"name": "tokens", "values": [c for _, c in by_length], "color": "#0d9488"}],
            "y_title": "tokens",
            "y_format": "int",
            "log": False,
            "y_domain": None,
            "shown": None,
        },
    ]


def live_view(rows: Sequence[Sequence[str]], charts: Sequence[dict] = (), *, key: str) -> None:
    """Draw rows of panels (HTML from ``render``) and the charts (``chart_data``) as one element;
    a Step swaps their contents."""
    _component(key=key, data={"rows": [list(r) for r in rows], "charts": list(charts)}, height="content")
