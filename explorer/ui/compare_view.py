"""The Compare page's panels: choose corpora and a configuration, then curves, the
cross-evaluation matrix, vocabulary overlap, token lengths, fertility and parity."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import altair as alt
import pandas as pd
import streamlit as st

from ..analysis.compare import (
    Comparison,
    LanguageRow,
    Memo,
    compare_job,
    comparison_key,
    language_gini,
    language_rows,
    table_language_rows,
)
from ..analysis.fairness import RENYI_ALPHA
from ..bpe.config import PRESETS, EncodeOptions, TrainerConfig, corpus_config
from ..bpe.tokenizer import Tokenizer
from ..errors import ExplorerError
from ..formats.parallel import UDHR_LANGUAGES
from ..formats.pretrained import PRETRAINED
from . import catalog, data, links, projector, render, server, state
from .params import choice_or

__all__ = [
    "Request",
    "request_form",
    "run",
    "curves_panel",
    "cross_panel",
    "overlap_panel",
    "lengths_panel",
    "languages_panel",
    "language_table",
    "headlines",
    "summary",
    "PANELS",
    "METRICS",
    "link_params",
    "apply_link",
]

MIN_CORPORA, MAX_CORPORA = 2, 6
REFERENCE = "udhr_en.txt"
_DEFAULT = ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt")
_PASTED = "pasted text (Corpus page)"
_UPLOAD = "uploaded: "
_REQUEST = "compare_request"
_STOPPED = "compare_stopped"  # Stop was pressed: the page says so once
_AT = "w_cmp_at"  # the pretrained tokenizer's merge k (None: the whole of it)

METRICS = r"""
- **Bytes per token** $= \dfrac{\text{UTF-8 bytes of the text}}{\text{tokens}}$ and **characters per token**
  $= \dfrac{\text{characters}}{\text{tokens}}$: how much text one token carries (higher is better compression).
- **Fertility** (Rust et al. 2021) $= \dfrac{\text{tokens}}{\text{words}}$, words split at whitespace: how many
  pieces an average word is cut into (1 is a whole word per token). Chinese and Japanese do not put spaces
  between words, so their "words" are whole phrases and their fertility is not comparable with the others'.
- **Parity** (Petrov et al. 2023) $= \dfrac{\text{tokens of the text in language } L}{\text{tokens of the same
  text in English}}$, with one tokenizer, on parallel texts (the UDHR translations): 2.0 means a speaker of $L$
  pays twice the tokens, twice the context and twice the price for the same content.
- **Gini coefficient** of one tokenizer's token counts $x_1, \dots, x_n$ over the $n$ languages
  $= \dfrac{\sum_i \sum_j |x_i - x_j|}{2 n^2 \bar{x}}$ (as in Foroutan et al. 2025, parity-aware BPE): 0 when every
  language pays the same tokens for the same content, towards 1 when one language pays nearly all of them.
- **Rényi efficiency** (Zouhar et al. 2023) $= \dfrac{H_\alpha(p)}{\log |V|}$, with
  $H_\alpha(p) = \dfrac{1}{1 - \alpha} \log \sum_t p(t)^\alpha$ over the share $p(t)$ of each token $t$ in the
  text and $|V|$ the number of distinct tokens in it, $\alpha = 2.5$: 1 when the tokens used are used equally
  often; a few very frequent tokens and a long tail of rare ones bring it down.
- **Cross-evaluation**: train on corpus A, encode corpus B; the cell is bytes(B) / tokens of B under A's tokenizer.
- **Jaccard overlap** $= \dfrac{|V_A \cap V_B|}{|V_A \cup V_B|}$ of the tokens the merges made (with one pretrained
  tokenizer, of the merged tokens each corpus uses).
- **Held-out curve**: a tokenizer trained on the first 90% of a corpus, replayed merge by merge on the last 10%.
"""


@dataclass(frozen=True)
class Request:
    """What the user asked to compare: corpus labels and one configuration."""

    corpora: tuple[str, ...]
    preset: str | None  # train this preset on each corpus...
    merges: int
    pretrained: str | None  # ...or use this bundled tokenizer for all


@st.cache_resource(show_spinner=False)
def _memo() -> Memo:
    """Per-corpus results shared by every session of this server (trained tokenizers, curves)."""
    return Memo(max_entries=256)


def _sources() -> list[str]:
    """The labels of every text the page can compare: samples, the session's uploads and its
    pasted text (``_text`` gives a label's text)."""
    choice = state.corpus_choice()
    return [
        *data.sample_names(),
        *(_UPLOAD + name for name, _ in choice.uploads),
        *([_PASTED] if choice.pasted.strip() else []),
    ]


def _text(label: str) -> str:
    if label == _PASTED:
        return state.corpus_choice().pasted
    if label.startswith(_UPLOAD):
        return dict(state.corpus_choice().uploads).get(label[len(_UPLOAD) :], "")
    return data.sample_text(label)


def _submit() -> None:
    corpora = tuple(st.session_state["w_cmp_corpora"])
    mode = st.session_state["w_cmp_mode"]
    st.session_state[_REQUEST] = Request(
        corpora,
        st.session_state["w_cmp_preset"] if mode == "train" else None,
        int(st.session_state["w_cmp_merges"]),
        _pretrained_key() if mode == "pretrained" else None,
    )


def _pretrained_key() -> str:
    """The picker's tokenizer as of the merge in its "as of merge" box (empty: whole)."""
    chosen, at = st.session_state["w_cmp_pretrained"], st.session_state.get(_AT)
    return chosen if at is None else catalog.rewound_key(chosen, int(at))


def _keep_pretrained(key: str) -> None:
    """Put a tokenizer's key into the picker and its merge k (None: whole) into the box beside it."""
    parts = catalog.parse(key)
    st.session_state["w_cmp_pretrained"] = catalog.whole_key(key)
    st.session_state[_AT] = parts.k if parts is not None and parts.kind != "trained" else None


def _pretrained(key: str) -> tuple[str, Tokenizer] | None:
    """(key, tokenizer) of a bundled or imported tokenizer of the catalog; the key keys the
    server-wide memo, so an imported one's names its content, not what the user called it."""
    entry = catalog.get(key)
    return None if entry is None else (entry.key, entry.tokenizer)


def request_form() -> Request | None:
    """The corpora and configuration controls; the last submitted request (kept across reruns
    and page switches), or None before the first."""
    sources = _sources()
    state.widget_default("w_cmp_corpora", [c for c in _DEFAULT if c in sources])
    state.widget_default("w_cmp_mode", "train")
    state.widget_default("w_cmp_preset", "gpt2")
    state.widget_default("w_cmp_merges", 1000)
    state.widget_default("w_cmp_pretrained", "cl100k_base")
    st.session_state["w_cmp_corpora"] = [c for c in st.session_state["w_cmp_corpora"] if c in sources]
    state.widget_default(_AT, None)
    pretrained = catalog.keys(trained=False)  # the bundled ones and the session's imports, whole
    if catalog.whole_key(st.session_state["w_cmp_pretrained"]) != st.session_state["w_cmp_pretrained"]:
        _keep_pretrained(st.session_state["w_cmp_pretrained"])  # a key rewound to merge k: picker and box
    if st.session_state["w_cmp_pretrained"] not in pretrained:
        st.session_state["w_cmp_pretrained"] = "cl100k_base"
    # two rows, so that the answer under them starts on the first screen at 1280x720
    with st.form("w_cmp_form", border=True):
        st.multiselect(
            f"Corpora ({MIN_CORPORA} to {MAX_CORPORA})",
            sources,
            key="w_cmp_corpora",
            max_selections=MAX_CORPORA,
            help="Bundled texts, and the uploads and pasted text of the Corpus page.",
        )
        c1, c2, c3, c4, c6, c5 = st.columns([1.55, 1.15, 0.95, 1.55, 0.95, 1.15], vertical_alignment="bottom")
        c1.radio(
            "Configuration",
            ["train", "pretrained"],
            key="w_cmp_mode",
            horizontal=True,
            format_func={"train": "train each corpus", "pretrained": "one pretrained"}.get,
            help="Train the preset on each corpus (a tokenizer each), or encode every corpus with one "
            "pretrained tokenizer.",
        )
        c2.selectbox("Preset", list(PRESETS), key="w_cmp_preset", help="When training.")
        c3.number_input("Merges", min_value=10, max_value=20_000, step=100, key="w_cmp_merges")
        # labels looked up, not computed: a format_func may be called outside the session's run
        labels = {k: catalog.label(k) for k in pretrained}
        c4.selectbox(
            "Pretrained",
            pretrained,
            key="w_cmp_pretrained",
            format_func=labels.__getitem__,
            help="When one pretrained tokenizer encodes all.  \n" + catalog.picker_help(),
        )
        # the picker's choice is not known until the form is sent: k is checked against its merges then
        c6.number_input(
            "As of merge",
            min_value=0,
            max_value=catalog.MAX_TABLE_K,
            value=None,  # empty: the whole of it (a None default beside session state draws no warning)
            step=1000,
            key=_AT,
            placeholder="all",
            help="The pretrained tokenizer as of its merge k: its first k merges only (a table's first "
            "256 + k ranks). Empty: the whole of it.",
        )
        c5.form_submit_button("Compare", type="primary", on_click=_submit, width="stretch")
    return st.session_state.get(_REQUEST)


def idle_note() -> None:
    """What the page says before a comparison (or after Stop)."""
    if st.session_state.pop(_STOPPED, False):
        st.info("Stopped. Change the corpora or the configuration if you like, then press **Compare** again.")
    else:
        st.info("Choose two to six corpora and a configuration, then press **Compare**.")


def _stop() -> None:
    st.session_state.pop(_REQUEST, None)
    st.session_state[_STOPPED] = True


def run(request: Request) -> Comparison | None:
    """The comparison, computed by a worker process (the server's interpreter stays free for
    every other session's Step) with a progress bar and a Stop button; whole results are kept
    in the server's memo, so a tab switch or a second session asking the same is instant."""
    if not MIN_CORPORA <= len(request.corpora) <= MAX_CORPORA:
        st.warning(f"Choose {MIN_CORPORA} to {MAX_CORPORA} corpora, then press Compare.")
        return None
    corpora = {label: _text(label) for label in request.corpora}
    empty = [label for label, text in corpora.items() if not text.strip()]
    if empty:
        st.error(
            "Nothing to compare in: "
            + ", ".join(render.user_text(label, into="markdown") for label in empty)
            + ". Choose other corpora."
        )
        return None
    pretrained = _pretrained(request.pretrained) if request.pretrained else None
    if request.pretrained and pretrained is None:
        past = catalog.past_last_merge(request.pretrained)
        st.warning(
            render.md_text(
                f'{past}. Empty the "As of merge" box for the whole of it, or give a smaller merge.'
                if past
                else f"{catalog.label(request.pretrained)} is no longer in this session "
                "(a session keeps the last few imports): import it again on the Playground page, "
                "or choose another tokenizer."
            )
        )
        return None
    if pretrained:
        config, encoding = None, EncodeOptions()
    else:
        preset = request.preset
        assert preset is not None  # a request names a preset or a pretrained tokenizer, never neither
        config, encoding = corpus_config(preset, merges=request.merges), PRESETS[preset].encoding
    key = comparison_key(corpora, config=config, encoding=encoding, pretrained=pretrained[0] if pretrained else None)
    try:
        result = _memo().get(key, lambda: _in_worker(corpora, config, encoding, pretrained))
    except ExplorerError as err:
        st.error(render.md_text(str(err)))
        return None
    if pretrained:  # the worker sends the runs back without the table: this process has it; named as shown
        runs = {n: replace(r, tokenizer=pretrained[1]) for n, r in result.runs.items()}
        result = replace(result, runs=runs, pretrained=catalog.label(pretrained[0]))
    return result


def _in_worker(
    corpora: dict[str, str],
    config: TrainerConfig | None,
    encoding: EncodeOptions,
    pretrained: tuple[str, Tokenizer] | None,
) -> Comparison:
    # a bundled table is named, not sent: the worker loads its own copy once
    sent = None if pretrained is None else (pretrained[0], None if pretrained[0] in PRETRAINED else pretrained[1])
    job = server.pool().submit(compare_job, corpora, config=config, encoding=encoding, pretrained=sent, progress=True)
    slot = st.empty()
    slot.button("Stop comparing", key="cmp_stop", on_click=_stop)  # not "Stop": Streamlit's toolbar has one
    bar = st.progress(0.0, text="Comparing…")
    try:
        # Stop (or any rerun) interrupts the wait: the worker is stopped, not left computing
        return server.wait_for(job, lambda fraction, text: bar.progress(fraction, text=render.md_text(text)))
    finally:
        bar.empty()
        slot.empty()


def headlines(result: Comparison, rows: list[LanguageRow]) -> list[render.Headline]:
    """One number per panel, for the summary above them: the language that pays most (and
    what the best production tokenizer charges it), the compression each corpus reaches, the
    vocabulary that travels worst, and the pair of vocabularies that share most."""
    out = []
    # the production tokenizers tell the story (a tokenizer trained on one corpus is lopsided by design)
    parity = [r for r in rows if r.parity is not None and r.tokenizer in PRETRAINED] or [
        r for r in rows if r.parity is not None
    ]
    if parity:
        # every row here has a parity: "or 0.0" only tells the type checker so
        first = parity[0].tokenizer  # GPT-2, the oldest
        worst = max((r for r in parity if r.tokenizer == first), key=lambda r: r.parity or 0.0)
        same = [r for r in parity if r.language == worst.language and r.tokenizer != worst.tokenizer]
        best = min(same, key=lambda r: r.parity or 0.0) if same else None
        spread = language_gini(rows)
        out.append(
            render.Headline(
                "Parity",
                f"{worst.parity:.1f}×",
                f"{worst.language} costs {worst.tokenizer} {worst.parity:.1f}× the "
                "tokens of the same English text"
                + (f"; {best.tokenizer} {best.parity:.1f}×" if best else "")
                + f". Gini across languages: {spread[first]:.2f}"
                + (f" vs {spread[best.tokenizer]:.2f}" if best else ""),
            )
        )
    bpt = {
        name: run.corpus_bytes / max(run.train_curve[-1][1], 1) for name, run in result.runs.items() if run.train_curve
    }
    if bpt:
        top = max(bpt, key=bpt.__getitem__)
        out.append(
            render.Headline(
                "Compression",
                f"{bpt[top]:.2f}",
                "bytes per token: " + ", ".join(f"{n} {v:.2f}" for n, v in bpt.items()),
            )
        )
    # each corpus under its own tokenizer, kept when it can divide (some bytes per token)
    own = {b: e.bytes_per_token for (a, b), e in result.cross.items() if a == b and e.bytes_per_token}
    away = [(a, b, (e.bytes_per_token or 0.0) / own[b]) for (a, b), e in result.cross.items() if a != b and b in own]
    if away:
        a, b, ratio = min(away, key=lambda t: t[2])
        out.append(
            render.Headline(
                "Cross-evaluation",
                f"{ratio:.0%}",
                f"{b} encoded with {a}'s tokenizer keeps {ratio:.0%} of the compression {b}'s own gives",
            )
        )
    if result.overlaps:
        o = max(result.overlaps, key=lambda o: o.jaccard)
        out.append(
            render.Headline(
                "Overlap", f"{o.jaccard:.3f}", f"Jaccard of {o.a} and {o.b}, the pair of vocabularies that share most"
            )
        )
    return out


def summary(result: Comparison, rows: list[LanguageRow]) -> None:
    """The headline of every panel in one row of cards, above the panels' tabs."""
    st.html(render.headline_cards(headlines(result, rows)))


PANELS = (
    "Parity across languages",
    "Compression curves",
    "Cross-evaluation",
    "Vocabulary overlap",
    "Token lengths",
    "What the numbers mean",
)


def _describe(request: Request) -> str:
    if request.pretrained:
        return f"one tokenizer for all: {catalog.label(request.pretrained)}"
    return f"{request.preset} trained on each corpus, {request.merges:,} merges at most"


# ---- panels ------------------------------------------------------------------------------
def curves_frame(result: Comparison) -> pd.DataFrame:
    """Long form: corpus, curve (train / held-out), merges, bytes per token."""
    rows = []
    for name, run in result.runs.items():
        label = "as of merge k" if result.pretrained else "while training"
        for k, tokens in run.train_curve:
            rows.append((name, label, k, run.corpus_bytes / max(tokens, 1)))
        for k, tokens in run.heldout_curve:
            rows.append((name, "held-out 10%", k, run.heldout_bytes / max(tokens, 1)))
    return pd.DataFrame(rows, columns=["corpus", "curve", "merges", "bytes per token"])


def curves_panel(result: Comparison, request: Request) -> None:
    st.caption(
        render.md_text(_describe(request))
        + ". Solid: the whole corpus; dashed: its last 10%, "
        + (
            "which this tokenizer never needed to see."
            if result.pretrained
            else "encoded by a tokenizer trained on the first 90% (replayed merge by merge)."
        )
    )
    df = curves_frame(result)
    chart = (
        alt.Chart(df, title="Bytes per token after k merges")
        .mark_line(strokeWidth=2.5)
        .encode(
            x=alt.X("merges:Q", title="merges", axis=alt.Axis(format=",d", tickMinStep=1)),
            y=alt.Y("bytes per token:Q", scale=alt.Scale(zero=False)),
            color=alt.Color("corpus:N", legend=alt.Legend(orient="bottom", title=None, labelLimit=300)),
            strokeDash=alt.StrokeDash(
                "curve:N",
                legend=alt.Legend(orient="bottom", title=None),
                scale=alt.Scale(
                    domain=["as of merge k" if result.pretrained else "while training", "held-out 10%"],
                    range=[[1, 0], [6, 4]],
                ),
            ),
            tooltip=[
                "corpus",
                "curve",
                alt.Tooltip("merges:Q", format=","),
                alt.Tooltip("bytes per token:Q", format=".3f"),
            ],
        )
        .properties(height=340)
    )
    st.altair_chart(projector.altair_chart(chart), width="stretch")


def cross_frame(result: Comparison) -> pd.DataFrame:
    rows = [
        {
            "trained on": a,
            "encoded": b,
            "bytes per token": e.bytes_per_token,
            "tokens per word": e.tokens_per_word,
            "tokens": e.tokens,
            "unk": e.unk,
        }
        for (a, b), e in result.cross.items()
    ]
    return pd.DataFrame(rows)


def _heatmap(
    df: pd.DataFrame, value: str, fmt: str, scheme: Literal["greens", "oranges"], *, rows: str
) -> alt.LayerChart:
    base = alt.Chart(df).encode(
        x=alt.X("encoded:N", title="encoded corpus", sort=None, axis=alt.Axis(labelAngle=-30, labelLimit=160)),
        y=alt.Y("trained on:N", title=rows, sort=None, axis=alt.Axis(labelLimit=160)),
    )
    cells = base.mark_rect().encode(
        color=alt.Color(f"{value}:Q", scale=alt.Scale(scheme=scheme), legend=None),
        tooltip=["trained on", "encoded", alt.Tooltip(f"{value}:Q", format=fmt)],
    )
    text = base.mark_text(fontSize=15, fontWeight="bold").encode(text=alt.Text(f"{value}:Q", format=fmt))
    return (cells + text).properties(title=value)


def cross_panel(result: Comparison) -> None:
    if result.pretrained:
        st.caption("One tokenizer for every corpus: one row per corpus (train a preset to see A on B).")
    else:
        st.caption(
            "Row A, column B: corpus B encoded with the tokenizer trained on A. The diagonal is each corpus "
            "under its own tokenizer; off the diagonal, how well a vocabulary travels."
        )
    df = cross_frame(result)
    height = 110 + 48 * df["trained on"].nunique()  # room for the rows and the slanted corpus names
    c1, c2 = st.columns(2)
    rows = f"{result.pretrained} on the corpus" if result.pretrained else "tokenizer trained on"
    c1.altair_chart(
        projector.altair_chart(_heatmap(df, "bytes per token", ".2f", "greens", rows=rows)),
        width="stretch",
        height=height,
    )
    c2.altair_chart(
        projector.altair_chart(_heatmap(df, "tokens per word", ".2f", "oranges", rows=rows)),
        width="stretch",
        height=height,
    )


def overlap_frame(result: Comparison) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"A": o.a, "B": o.b, "Jaccard": o.jaccard, "shared": o.shared, "only A": o.only_a, "only B": o.only_b}
            for o in result.overlaps
        ]
    )


def _token_chips(tok: Tokenizer, tokens: tuple[str, ...]) -> str:
    ids = [i for i in (tok.token_to_id(t) for t in tokens) if i is not None]
    # a list of tokens, not a text: left to right in the list's order, each chip isolated
    return render.encoded_chips(tok, ids, reading_order=False) if ids else '<div class="bpe-row">—</div>'


def overlap_panel(result: Comparison) -> None:
    what = "merged tokens each corpus uses" if result.pretrained else "merged tokens of each corpus's tokenizer"
    st.caption(f"Pairs of corpora: Jaccard, shared and unique {what}. Pick a pair to see its longest tokens.")
    if not result.overlaps:
        return
    st.dataframe(
        overlap_frame(result),
        hide_index=True,
        width="stretch",
        column_config={"Jaccard": st.column_config.NumberColumn(format="%.3f")},
    )
    labels = [f"{render.isolate(o.a, into='text')}  ↔  {render.isolate(o.b, into='text')}" for o in result.overlaps]
    pick = st.selectbox("Pair", range(len(labels)), format_func=labels.__getitem__, key="w_cmp_pair")
    o = result.overlaps[min(pick or 0, len(labels) - 1)]
    tok_a, tok_b = result.runs[o.a].tokenizer, result.runs[o.b].tokenizer
    c1, c2, c3 = st.columns(3)
    c1.caption("Longest only in " + render.user_text(o.a, into="markdown"))
    c1.html(_token_chips(tok_a, o.longest_only_a))
    c2.caption("Longest shared")
    c2.html(_token_chips(tok_a, o.longest_shared))
    c3.caption("Longest only in " + render.user_text(o.b, into="markdown"))
    c3.html(_token_chips(tok_b, o.longest_only_b))


def lengths_frame(result: Comparison) -> pd.DataFrame:
    rows = []
    for name, run in result.runs.items():
        total = sum(run.lengths.values()) or 1
        for size, n in sorted(run.lengths.items()):
            rows.append((name, size, n, n / total))
    return pd.DataFrame(rows, columns=["corpus", "length", "tokens", "share"])


def lengths_panel(result: Comparison) -> None:
    unit = next(iter(result.runs.values())).tokenizer.pipeline.unit
    st.caption(
        f"How the tokens each corpus is cut into are spread over lengths (in {unit}s); share of the "
        "corpus's tokens, so corpora of any size compare."
    )
    df = lengths_frame(result)
    df = df[df["length"] <= 24]
    chart = (
        alt.Chart(df, title=f"Token length ({unit}s)")
        .mark_bar()
        .encode(
            x=alt.X("length:O", title=f"length ({unit}s)", axis=alt.Axis(labelAngle=0)),
            xOffset="corpus:N",
            y=alt.Y("share:Q", title="share of tokens", axis=alt.Axis(format="%")),
            color=alt.Color("corpus:N", legend=alt.Legend(orient="bottom", title=None, labelLimit=300)),
            tooltip=["corpus", "length", alt.Tooltip("tokens:Q", format=","), alt.Tooltip("share:Q", format=".1%")],
        )
        .properties(height=300)
    )
    st.altair_chart(projector.altair_chart(chart), width="stretch")


@st.cache_data(show_spinner=False, max_entries=16)
def _language_rows(trained_key: str | None, _trained: Tokenizer | None) -> list[LanguageRow]:
    """The trained tokenizer's rows (when there is one), then the bundled tables' (counted once
    per server process, or ahead of any request by ``compare.warm_languages`` at server start)."""
    for name in PRETRAINED:
        data.pretrained(name)  # loaded once per server (a spinner says so if it is not yet)
    texts = {_language(n): data.sample_text(n) for n in data.sample_names() if n.startswith("udhr_")}
    reference = _language(REFERENCE)
    trained = [] if _trained is None else language_rows({"trained here": _trained}, texts, reference=reference)
    return [*trained, *table_language_rows(texts, reference=reference, tables=tuple(PRETRAINED))]


@st.cache_data(show_spinner=False, max_entries=16)
def _import_rows(key: str, label: str, _tok: Tokenizer) -> list[LanguageRow]:
    """An imported tokenizer's rows, under the name it is shown by (kept per content key and name)."""
    texts = {_language(n): data.sample_text(n) for n in data.sample_names() if n.startswith("udhr_")}
    return language_rows({label: _tok}, texts, reference=_language(REFERENCE))


def _imported_rows() -> list[LanguageRow]:
    """The session's imported tokenizers' rows, beside the bundled tables' (the catalog's order)."""
    rows = []
    for key in catalog.keys(trained=False):
        entry = catalog.get(key) if key not in PRETRAINED else None
        if entry is not None:
            with st.spinner(render.md_text(f"Counting the eight languages' tokens with {entry.short}…")):
                rows += _import_rows(entry.key, entry.short, entry.tokenizer)
    return rows


def _language(sample: str) -> str:
    code = sample.removeprefix("udhr_").removesuffix(".txt")
    return UDHR_LANGUAGES.get(code, code)


def languages_frame(rows: list[LanguageRow]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "language": r.language,
                "tokenizer": r.tokenizer,
                "tokens": r.evaluation.tokens,
                "words": r.evaluation.words,
                "fertility": r.fertility,
                "parity": r.parity,
                "bytes per token": r.evaluation.bytes_per_token,
                "renyi efficiency": r.renyi_efficiency,
            }
            for r in rows
        ]
    )


def _languages_trained_on(result: Comparison) -> str | None:
    """The corpus whose tokenizer joins the production ones in the languages panel: English when
    it is compared, else the first corpus (None with one pretrained tokenizer)."""
    if result.pretrained:
        return None
    return REFERENCE if REFERENCE in result.runs else result.names[0]


def language_table(result: Comparison) -> list[LanguageRow]:
    """Fertility and parity of the UDHR translations under the production tokenizers, the
    session's imported ones and, when training, the tokenizer of :func:`_languages_trained_on`
    (labelled "trained here")."""
    name = _languages_trained_on(result)
    trained = None if name is None else result.runs[name].tokenizer
    key = None if trained is None else str(hash((trained.config, trained.alphabet, trained.merges)))
    return [*_language_rows(key, trained), *_imported_rows()]


def languages_panel(result: Comparison, request: Request, rows: list[LanguageRow]) -> None:
    name = _languages_trained_on(result)
    if name is not None:
        st.caption(
            "The Universal Declaration of Human Rights in eight languages (parallel texts), under "
            + render.md_text(f'the {request.preset} tokenizer trained on {name} ("trained here")')
            + " and the three production tokenizers (and this session's imported ones). Parity is against "
            "English with the same tokenizer."
        )
    else:
        st.caption(
            "The Universal Declaration of Human Rights in eight languages (parallel texts) under the three "
            "production tokenizers (and this session's imported ones). Parity is against English with the same "
            "tokenizer."
        )
    df = languages_frame(rows)
    chart = (
        alt.Chart(df, title="Parity: tokens for the same text, relative to English")
        .mark_bar()
        .encode(
            y=alt.Y("language:N", sort=None, title=None),
            yOffset="tokenizer:N",
            x=alt.X("parity:Q", title="tokens / tokens in English"),
            color=alt.Color("tokenizer:N", legend=alt.Legend(orient="bottom", title=None)),
            tooltip=[
                "language",
                "tokenizer",
                alt.Tooltip("parity:Q", format=".2f"),
                alt.Tooltip("fertility:Q", format=".2f"),
                alt.Tooltip("renyi efficiency:Q", title="Rényi efficiency", format=".3f"),
                alt.Tooltip("tokens:Q", format=","),
            ],
        )
        .properties(height=34 * df["language"].nunique() + 40)
    )
    rule = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(color="#475569", strokeDash=[4, 3]).encode(x="x:Q")
    c1, c2 = st.columns(2)
    c1.altair_chart(projector.altair_chart(chart + rule), width="stretch")
    # how evenly each tokenizer spreads its cost over the languages, and how evenly it uses its
    # tokens, under the chart: the two columns end about level
    c1.html(
        '<div class="bpe-grid-title">Gini of the token counts over the languages (0: all pay alike)</div>'
        + render.stat_strip(
            [(name.removesuffix("_base"), f"{value:.3f}") for name, value in language_gini(rows).items()]
        )
        + render.language_grid(rows, "renyi_efficiency", title=f"Rényi efficiency (α = {RENYI_ALPHA:g})")
    )
    # two narrow tables that fit the page instead of one wide grid that scrolls sideways
    c2.html(
        render.language_grid(rows, "parity", title="Parity (tokens / English's)")
        + render.language_grid(rows, "fertility", title="Fertility (tokens per word)")
    )


# ---- the page's link -----------------------------------------------------------------------
def _label_refs() -> dict[str, str]:
    """Each comparable text's label -> how a link names it (bundled name, upload or pasted ref)."""
    choice = state.corpus_choice()
    out = {name: name for name in data.sample_names()}
    for (name, _), ref in zip(choice.uploads, choice.upload_refs):
        out[_UPLOAD + name] = ref
    try:
        pasted = links.pasted_ref(choice)
    except ExplorerError:
        pasted = None
    if pasted:
        out[_PASTED] = pasted
    return out


def link_params() -> dict[str, str]:
    """The comparison shown (the last one submitted) as URL params; none before the first."""
    request: Request | None = st.session_state.get(_REQUEST)
    if request is None:
        return {}
    refs = _label_refs()
    params = {"compare": ",".join(refs[c] for c in request.corpora if c in refs)}
    if request.pretrained:
        params["compare_tokenizer"] = request.pretrained
    else:
        params["compare_preset"] = request.preset or "gpt2"
        params["compare_merges"] = str(request.merges)
    return params


def apply_link(params: dict[str, str]) -> list[str]:
    """Submit the comparison a link names (its results come from the server's shared memo when
    another session made them); what it had to leave out."""
    if "compare" not in params:
        return []
    problems: list[str] = []
    labels = {ref: label for label, ref in _label_refs().items()}
    corpora = []
    for ref in (r for r in params["compare"].split(",") if r):
        if ref in labels:
            corpora.append(labels[ref])
        else:
            problems.append(f"it compares a text that is neither bundled nor in the link's corpus: {ref[:40]!r}")
    pretrained = params.get("compare_tokenizer")
    if pretrained is not None:
        try:
            pretrained = catalog.restore(pretrained)
        except ExplorerError as err:
            problems.append(str(err))
            pretrained = "cl100k_base"
    preset = choice_or(params, "compare_preset", PRESETS, problems, default="gpt2")
    try:
        merges = links.count_param(params, "compare_merges", low=10, high=20_000) or 1000
    except ExplorerError as err:
        problems.append(str(err))
        merges = 1000
    ss = st.session_state
    ss["w_cmp_corpora"] = corpora[:MAX_CORPORA]
    ss["w_cmp_mode"] = "pretrained" if pretrained else "train"
    ss["w_cmp_preset"] = preset
    ss["w_cmp_merges"] = merges
    if pretrained:
        _keep_pretrained(pretrained)
    ss[_REQUEST] = Request(tuple(corpora[:MAX_CORPORA]), None if pretrained else preset, merges, pretrained)
    return problems
