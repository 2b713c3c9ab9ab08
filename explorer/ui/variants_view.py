"""The Variants page, drawn: classical BPE against SuperBPE and PickyBPE on one corpus and
vocabulary size, PickyBPE's merges and removals in order, the scaffold tokens of a tokenizer
(PickyBPE's intermediate tokens), and the health of each tokenizer's vocabulary. What the page
knows and computes (its keys, the request, the cards, rows, tables and sentences) is
:mod:`explorer.ui.variants_model`; here are the widgets, the training and scans on the server's
heavy lane, and the session.

Training is kept for the whole server (``compare.Memo``), so the next visitor, a refresh or
moving the slider back does not train again; the scaffold counts and health scans likewise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, cast

import streamlit as st

from ..analysis.compare import Memo
from ..analysis.evaluate import piece_counts
from ..analysis.health import HealthReport, scan
from ..analysis.scaffold import ScaffoldReport, scaffold
from ..bpe.config import make_config
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..formats.pretrained import PRETRAINED
from . import catalog, data, links, projector, render, server, state
from . import variants_charts as charts
from . import variants_model as model
from .variants_model import DEFAULT_HEALTH, DEFAULT_SCAFFOLD, DEFAULT_TAU, Keys, Lab, Request, Session, Variant

__all__ = [
    "settings_form",
    "current_request",
    "train",
    "transition_slider",
    "tau_slider",
    "superwords_panel",
    "timeline_panel",
    "scaffold_panel",
    "health_panel",
    "headline_view",
    "link_params",
    "apply_link",
]


# ---- the settings --------------------------------------------------------------------------
def settings_form() -> None:
    """The corpus, held-out text and budget (in the sidebar); a change trains anew."""
    names = data.sample_names()
    req = current_request()
    state.widget_default(Keys.CORPUS, req.corpus)
    state.widget_default(Keys.HELD_OUT, req.held_out)
    state.widget_default(Keys.MERGES, req.merges)
    st.selectbox(
        "Corpus",
        [model.SESSION, *names],
        format_func=model.corpus_label,
        key=Keys.CORPUS,
        on_change=_update,
        help=f"Both tokenizers train on it (its first {model.MAX_CORPUS_CHARS:,} characters, cut at a line end).",
    )
    st.selectbox(
        "Held-out text",
        names,
        key=Keys.HELD_OUT,
        on_change=_update,
        help=f"What the headline measures: text neither tokenizer trained on (its first "
        f"{model.MAX_HELD_OUT_CHARS:,} characters).",
    )
    st.number_input(
        "Merges (the budget)",
        model.MIN_MERGES,
        model.MAX_MERGES,
        step=500,
        key=Keys.MERGES,
        on_change=_update,
        help="Both tokenizers make this many merges (GPT-2's pieces, byte level, each line its own text).",
    )


def _update() -> None:
    st.session_state[Session.REQUEST] = model.request_from(st.session_state.to_dict(), current_request())


def current_request() -> Request:
    return cast(Request, st.session_state.get(Session.REQUEST) or Request())


def _slider(key: str, value: object, label: str, options: Sequence, fmt: Callable[[Any], str], about: str) -> None:
    """One of the request's sliders above the headline: a move trains anew (or reads the memo)."""
    state.widget_default(key, value)
    st.select_slider(label, options, key=key, format_func=fmt, on_change=_update, help=about)


def transition_slider(request: Request) -> None:
    """SuperBPE's transition, as a share of the budget."""
    _slider(
        Keys.SHARE,
        request.share,
        "SuperBPE transition t (share of the merges learned within words)",
        model.SHARES,
        lambda p: f"{p}%",
        "After t, merges may cross spaces. t = 100% is classical BPE. The authors' best: about 80-90% of a 200k "
        "vocabulary.",
    )


def tau_slider(request: Request) -> None:
    """PickyBPE's τ (beside the transition): the tokens it removes while training."""
    _slider(
        Keys.PICKY,
        request.tau,
        "PickyBPE τ (a token goes when left alone under τ × its merge's count)",
        model.TAUS,
        model.tau_label,
        "After each merge, a token it merged is removed when its occurrences left standing alone are fewer than τ "
        "times the merge's: the paper's intersection-over-self above T = 1 / (1 + τ) (its T = 0.9 is τ ≈ 0.11). "
        "τ = 0 is classical BPE. PickyBPE trains until it has as many live tokens as classical BPE.",
    )


# ---- training ------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _memo() -> Memo:
    """Trained variants, scaffold counts and health scans, for every session of this server."""
    return Memo(max_entries=48)


def _corpus_text(request: Request) -> tuple[str, str] | None:
    """(the lab's corpus text, its name); None when the session's corpus is empty."""
    if request.corpus == model.SESSION:
        choice = state.corpus_choice()
        text = "\n".join(choice.texts())
        return (model.cut(text, model.MAX_CORPUS_CHARS), choice.label()) if text.strip() else None
    return model.cut(data.sample_text(request.corpus), model.MAX_CORPUS_CHARS), request.corpus


def _train_one(
    name: str, text: str, held_out: str, merges: int, done: Callable[[int], None], **options: object
) -> Variant:
    """One variant trained by turns on the server's heavy lane; ``done`` hears how far it got,
    in merges (PickyBPE: in live tokens gained, what its budget counts)."""
    cfg = make_config(model.PRESET, sequences="lines", **({"vocab_size": None, "num_merges": merges} | options))
    with server.HEAVY.turn():
        trainer = Trainer.from_texts(text, cfg, top_k=0, full_records=0)
    base = trainer.n_live
    while not trainer.done:
        # heavy work takes turns with other sessions' runs, a chunk at a time
        with server.HEAVY.turn():
            trainer.advance(250)
        done(trainer.n_live - base if cfg.picky is not None else len(trainer.records))
    return model.build_variant(name, trainer, held_out)


def train(request: Request) -> Lab | None:
    """The three variants of the request, trained with a progress bar (or read from the
    server's memo); None, with a message on the page, when the request cannot be trained.
    PickyBPE trains to classical BPE's vocabulary size (live tokens), so it is trained last."""
    found = _corpus_text(request)
    if found is None:
        st.warning("This session's corpus is empty: choose a sample in the sidebar, or a corpus on the Corpus page.")
        return None
    text, name = found
    held_out = model.cut(data.sample_text(request.held_out), model.MAX_HELD_OUT_CHARS)
    base = f"{model.digest(text)}:{model.digest(held_out)}:{request.merges}"
    bar = st.empty()

    def one(key: str, name: str, label: str, **options: object) -> Variant:
        def make() -> Variant:
            def show(n: int) -> None:
                bar.progress(min(1.0, n / request.merges), text=f"Training {label}… {n:,} of {request.merges:,}")

            show(0)
            return _train_one(name, text, held_out, request.merges, show, **options)

        return cast(Variant, _memo().get(f"variant:{base}:{key}", make))

    try:
        classical = one("None", "classical", "classical BPE")
        t = request.transition
        superbpe = one(str(t), "SuperBPE", f"SuperBPE (t = {t:,})", superbpe_transition=t)
        size = classical.tokenizer.vocab.n_live
        picky = one(
            f"picky:{request.tau:g}:{size}",
            "PickyBPE",
            f"PickyBPE (τ = {request.tau:g})",
            vocab_size=size,
            num_merges=None,
            picky=request.tau,
        )
    except ExplorerError as err:
        st.error(render.escape(str(err), into="markdown"))
        return None
    finally:
        bar.empty()
    return Lab(name, request.held_out, len(text), classical, superbpe, request.share, held_out, picky, request.tau)


def headline_view(lab: Lab) -> None:
    """The headline cards, then the three tokenizers' held-out measures side by side."""
    st.html(render.headline_cards(model.headlines(lab)))
    for col, measure in zip(st.columns(2, gap="medium"), charts.MEASURES):
        col.altair_chart(
            projector.altair_chart(charts.measure_chart(lab, measure)),
            width="stretch",
            height=projector.chart_height(charts.MEASURE_HEIGHT),
        )


# ---- superwords ----------------------------------------------------------------------------
def superwords_panel(lab: Lab) -> None:
    """The training curves, one held-out line both ways, and SuperBPE's superword tokens (most
    used on held-out text first)."""
    left, right = st.columns([3, 2], gap="medium")
    with left:
        st.altair_chart(
            projector.altair_chart(charts.curves_chart(lab)),
            width="stretch",
            height=projector.chart_height(charts.CURVES_HEIGHT),
        )
        both = model.both_ways(lab)
        if both:
            st.html(both)
    with right:
        sw = lab.superbpe
        if not sw.superwords:
            st.info("SuperBPE learned no superword token: with t = 100% it is classical BPE; move the transition left.")
            return
        st.html(
            render.panel(
                f"SuperBPE's superword tokens ({len(sw.superwords):,})",
                model.superword_chips(sw),
                "Tokens that span a space (· is a space), most used on the held-out text first (× its count there). "
                "Classical BPE cannot learn them: its pieces never cross a word boundary.",
            )
        )


# ---- PickyBPE's timeline -------------------------------------------------------------------
def timeline_panel(lab: Lab) -> None:
    """PickyBPE's merges and removals in the order made, a removal as a row of its own
    (filterable to removals only), from any merge on."""
    p = lab.picky
    if p is None or p.records is None:
        st.info("PickyBPE was not trained for this view.")
        return
    st.html(render.stat_strip(model.timeline_stats(p, lab.tau)))
    ss = st.session_state
    state.widget_default(Keys.TL_ONLY, False)
    state.widget_default(Keys.TL_FROM, 1)
    last = max(1, p.merges)
    if not 1 <= int(ss[Keys.TL_FROM]) <= last:  # another τ made fewer merges
        ss[Keys.TL_FROM] = model.timeline_start(int(ss[Keys.TL_FROM]), p.merges)
    a, b = st.columns([3, 2], gap="medium")
    only = a.toggle("Removals only", key=Keys.TL_ONLY)
    start = int(b.number_input("From merge", 1, last, step=100, key=Keys.TL_FROM))
    rows = model.timeline(p.merges, p.removals, removals_only=only, start=start)
    st.caption(model.timeline_caption(lab.tau))
    if not p.removals:
        st.caption(f"PickyBPE removed no token at τ = {lab.tau:g}: it is classical BPE. Move τ right.")
    if rows:
        st.html(model.timeline_rows(p, rows))
    elif only:
        st.caption(f"No removal after merge {start - 1:,}.")


# ---- scaffold tokens -----------------------------------------------------------------------
def _scaffold_choices() -> list[str]:
    """The lab's own tokenizers, the session's, then the catalog's tables (bundled, imported)."""
    return model.scaffold_choices(catalog.keys(trained=False))


def _uses(key: str, tok: Tokenizer, pieces: Callable[[], dict[str, int]]) -> ScaffoldReport:
    """Every merged token's use (τ = 0: none picked yet), counted once per tokenizer and text."""

    def make() -> ScaffoldReport:
        with st.spinner("Counting every merge the text makes (once per tokenizer and corpus)…"):
            with server.HEAVY.turn():
                return scaffold(tok, pieces(), tau=0.0)

    return cast(ScaffoldReport, _memo().get(f"scaffold:{key}", make))


def scaffold_panel(lab: Lab, request: Request) -> None:
    """A tokenizer's scaffold tokens on the lab's corpus (the session's on its own corpus),
    with a τ slider and each token's lineage sentence."""
    state.widget_default(Keys.SCAFFOLD_TOKENIZER, DEFAULT_SCAFFOLD)
    state.widget_default(Keys.TAU, DEFAULT_TAU)
    choices = _scaffold_choices()
    catalog.keep_choice(Keys.SCAFFOLD_TOKENIZER, choices, DEFAULT_SCAFFOLD)
    # looked up, not computed (see the Playground's picker)
    labels = {k: model.scaffold_label(k, catalog.label) for k in choices}
    a, b = st.columns([2, 3], gap="medium")
    key = a.selectbox("Tokenizer", choices, format_func=labels.__getitem__, key=Keys.SCAFFOLD_TOKENIZER)
    tau = b.select_slider(
        "τ: a token is scaffold when it stands alone fewer than τ × the times a later merge takes it",
        model.TAUS,
        key=Keys.TAU,
        help="PickyBPE's intersection-over-self threshold is 1 / (1 + τ); the authors' example 0.9 is τ ≈ 0.11. "
        "τ = 0: none.",
    )
    corpus, _ = _corpus_text(request) or ("", "")
    if key in model.HERE:
        variant = lab.classical if key == "classical" else lab.superbpe
        tok, text_key, texts = variant.tokenizer, model.own_scaffold_key(key, corpus, request), [corpus]
        where = "its training corpus"
    elif key == catalog.TRAINED:
        entry = catalog.get(catalog.TRAINED)
        if entry is None or not entry.tokenizer.num_merges:
            st.info("This session's tokenizer has no merges yet: step it on the Train page, then come back.")
            return
        tok, texts = entry.tokenizer, list(entry.corpus)
        text_key = f"{entry.key}:{state.corpus_choice().key()}:{hash(entry.tokenizer.pipeline)}"
        where = "its training corpus"
    else:  # a bundled or imported table: its key names its content
        table = _table(key)
        if table is None:
            return
        tok, texts = table.tokenizer, [corpus]
        text_key = f"{table.key}:{model.digest(corpus)}"
        where = f"{lab.corpus_name} (first {lab.corpus_chars:,} characters)"

    def pieces() -> dict[str, int]:
        counts: Counter[str] = Counter()
        for t in texts:
            counts.update(piece_counts(tok, t))
        return dict(counts)

    try:
        report = _uses(text_key, tok, pieces)
    except ExplorerError as err:  # a PickyBPE tokenizer (the session's): it removed its own
        st.info(render.escape(str(err), into="markdown"))
        return
    picked = model.scaffold_list(report.uses, tau)
    # beside classical BPE: the tokens PickyBPE, trained on the same corpus, removed for good
    removed = model.picky_removed(tok, lab.picky.tokenizer) if key == "classical" and lab.picky is not None else None
    both = [u.id for u in picked if removed is not None and u.id in removed]
    stats = model.scaffold_stats(
        picked, len(report.uses), tau, both=None if removed is None else len(both), picky_tau=lab.tau
    )
    st.html(render.stat_strip(stats))
    st.caption(model.scaffold_caption(where))
    if picked:
        st.html(model.scaffold_rows(tok, picked, removed))
    else:
        st.caption("No scaffold token at this τ: every merged token stands alone often enough.")
    if removed is not None and lab.picky is not None:
        st.html(model.removed_chips(tok, lab.tau, removed, set(both)))


# ---- token health --------------------------------------------------------------------------
def _health_keys() -> list[str]:
    """The catalog's tables (bundled, then the session's imports), then the session's tokenizer."""
    return [*catalog.keys(trained=False), catalog.TRAINED]


def _table(key: str) -> catalog.Entry | None:
    """A bundled or imported table of the catalog; None (said in the page) for an import let go."""
    if key in PRETRAINED:
        with st.spinner(f"Loading {key}'s table (once per server)…"):
            return catalog.get(key)
    entry = catalog.get(key)
    if entry is None:
        st.info(
            render.md_text(
                f"{catalog.label(key)} is no longer in this session: import it again on the Playground page."
            )
        )
    return entry


def _health_label(key: str) -> str:
    live = st.session_state.get("live")
    return model.health_label(key, catalog.label, live_view=None if live is None else live.view)


def _health(key: str, corpus: str) -> tuple[HealthReport, Tokenizer] | None:
    """A tokenizer's scan against the corpus (kept per tokenizer and corpus); None for the
    session's tokenizer when it has no trainer yet."""
    if key == catalog.TRAINED:
        entry = catalog.get(catalog.TRAINED)
        if entry is None:
            return None
        tok = entry.tokenizer
        memo_key = f"health:{entry.key}:{state.corpus_choice().key()}:{hash(tok.pipeline)}:{model.digest(corpus)}"
    else:
        table = _table(key)
        if table is None:
            return None
        tok = table.tokenizer
        memo_key = f"health:{table.key}:{model.digest(corpus)}"

    def make() -> HealthReport:
        with st.spinner(render.md_text(f"Scanning every token of {_health_label(key)} (once per server)…")):
            with server.HEAVY.turn():
                return scan(tok, reference=corpus)

    return cast(HealthReport, _memo().get(memo_key, make)), tok


def health_panel(lab: Lab, request: Request) -> None:
    """Each bundled tokenizer's and the session's health counts, then one tokenizer's examples."""
    corpus, _ = _corpus_text(request) or ("", "")
    reports: dict[str, HealthReport] = {}
    toks: dict[str, Tokenizer] = {}
    for key in _health_keys():
        found = _health(key, corpus)
        if found is not None:
            reports[key], toks[key] = found
    labels = {k: _health_label(k) for k in reports}
    st.html(model.health_table(reports, labels, lab.corpus_name))
    for key, r in reports.items():  # a rank table (Llama 3's) whose tokens are not all merges says so
        if r.whole_piece_only or r.never_made:
            st.caption(render.md_text(model.not_one_merge_note(labels[key], r)))
    st.caption(model.HEALTH_CAPTION)
    state.widget_default(Keys.HEALTH_TOKENIZER, DEFAULT_HEALTH)
    catalog.keep_choice(Keys.HEALTH_TOKENIZER, list(reports), DEFAULT_HEALTH)
    pick, _ = st.columns([1, 2])
    key = pick.selectbox("Examples of", list(reports), format_func=labels.__getitem__, key=Keys.HEALTH_TOKENIZER)
    if key is None or key not in reports:
        return
    report, tok = reports[key], toks[key]
    training = links.training_params()[0] if key == catalog.TRAINED else {}
    shown_key = catalog.get(catalog.TRAINED).key if key == catalog.TRAINED else key  # type: ignore[union-attr]
    for kind, title in model.HEALTH_KINDS:
        notes = report.examples.get(kind, ())  # type: ignore[call-overload]
        body = "".join(model.note_row(tok, shown_key, n, training) for n in notes) or render.caption("None.")
        st.html(render.panel(title, body))


# ---- the page's link -----------------------------------------------------------------------
def link_params() -> dict[str, str]:
    """The request, the tab open and its settings as URL params."""
    return model.link_params(st.session_state.to_dict())


def apply_link(params: dict[str, str]) -> list[str]:
    """The request and view a link names, set in the session; what it had to leave out."""
    pickers = {"var_tok": _scaffold_choices, "var_health": _health_keys}

    def restore(param: str, value: str) -> str:  # an imported tokenizer is read back from the store
        return catalog.restore_choice(value, pickers[param])

    values, problems = model.link_values(params, samples=data.sample_names(), count=links.count_or, restore=restore)
    st.session_state.update(values)
    return problems
