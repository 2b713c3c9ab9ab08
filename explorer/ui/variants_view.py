"""The Variants page: classical BPE against SuperBPE and PickyBPE on one corpus and vocabulary
size, PickyBPE's merges and removals in order, the scaffold tokens of a tokenizer (PickyBPE's
intermediate tokens), and the health of each tokenizer's vocabulary.

Data shapes (N merges, t the SuperBPE transition, a whole number of merges; τ PickyBPE's)::

    Request     corpus (a sample's name, or "session": the session's corpus), held-out sample,
                N, t as a share of N in percent, and τ: what the page trains
    Variant     one tokenizer trained to N merges (PickyBPE: to classical's live vocabulary, so
                more merges): the training corpus's tokens after each merge (and the removals
                after it), what it makes of the held-out text, its superword tokens with their
                count in the held-out encoding, most used first; PickyBPE's removals and records
    Lab         the three variants of one Request

Training is kept for the whole server (``compare.Memo``), so the next visitor, a refresh or
moving the slider back does not train again; the scaffold counts and health scans likewise.
"""

from __future__ import annotations

import hashlib
import html
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import Any, NamedTuple, cast
from urllib.parse import urlencode

import streamlit as st

from ..analysis.compare import Memo
from ..analysis.evaluate import evaluate_ids, piece_counts
from ..analysis.health import HealthReport, TokenNote, scan
from ..analysis.scaffold import ScaffoldReport, TokenUse, describe, ios_threshold, is_scaffold, scaffold
from ..analysis.text import superword_ids
from ..bpe.config import make_config
from ..bpe.records import RemovalRecord
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..formats.pretrained import PRETRAINED
from . import catalog, data, links, projector, render, server, state
from . import variants_charts as charts
from .variants_model import DEFAULT_TAU, Lab, Variant

__all__ = [
    "TABS",
    "TAUS",
    "SESSION",
    "Request",
    "cut",
    "transition_of",
    "headlines",
    "scaffold_list",
    "playground_link",
    "settings_form",
    "current_request",
    "train",
    "transition_slider",
    "tau_slider",
    "tau_label",
    "tokens_curve",
    "picky_removed",
    "TimelineRow",
    "timeline",
    "removal_sentence",
    "timeline_panel",
    "example_line",
    "superwords_panel",
    "scaffold_panel",
    "health_panel",
    "headline_view",
    "describe_request",
    "link_params",
    "apply_link",
]

SESSION = "session"  # the lab's corpus is the session's own (the Corpus page's choice)
DEFAULT_CORPUS = "english_tiny_shakespeare.txt"
DEFAULT_HELD_OUT = "english_frankenstein.txt"
MAX_CORPUS_CHARS = 300_000  # about 1-2 s for SuperBPE: the corpus is cut at a line end under this
MAX_HELD_OUT_CHARS = 100_000
DEFAULT_MERGES, MIN_MERGES, MAX_MERGES = 3_000, 100, 10_000
SHARES = tuple(range(0, 101, 10))  # the transition, in percent of the budget
DEFAULT_SHARE = 80
TAUS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
TABS = ("Superwords", "PickyBPE timeline", "Scaffold tokens", "Token health")
PRESET = "gpt2"  # byte level, GPT-2's pieces: the pre-tokenizer SuperBPE's authors start from
SCAFFOLD_ROWS = 40
SUPERWORD_CHIPS = 60
TIMELINE_ROWS = 200
_TAB_SLUGS = {
    "Superwords": "superwords",
    "PickyBPE timeline": "picky",
    "Scaffold tokens": "scaffold",
    "Token health": "health",
}
# the tokenizers the Scaffold tab offers: the two trained here, the session's, the bundled tables
_HERE = ("classical", "superbpe")


# ---- the request ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """What the page trains: corpus, held-out text, merge budget, the transition's share and
    PickyBPE's τ."""

    corpus: str = DEFAULT_CORPUS
    held_out: str = DEFAULT_HELD_OUT
    merges: int = DEFAULT_MERGES
    share: int = DEFAULT_SHARE
    tau: float = DEFAULT_TAU

    @property
    def transition(self) -> int:
        return transition_of(self.merges, self.share)


def transition_of(merges: int, share: int) -> int:
    """SuperBPE's transition for a share of the budget (in percent), in merges.

    >>> transition_of(3000, 80), transition_of(3000, 0), transition_of(125, 50)
    (2400, 0, 62)
    """
    return merges * share // 100


def cut(text: str, limit: int) -> str:
    """The start of a text, at most ``limit`` characters, ending at a line end when one is there
    (so no word is cut in two).

    >>> cut("ab\\ncd\\nef", 7), cut("ab\\ncd\\nef", 100), cut("abcdef", 3)
    ('ab\\ncd\\n', 'ab\\ncd\\nef', 'abc')
    """
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit)
    return text[: end + 1] if end > 0 else text[:limit]


# ---- superwords ----------------------------------------------------------------------------
def tokens_curve(initial: int, after_merges: Iterable[int], removals: Iterable[RemovalRecord]) -> tuple[int, ...]:
    """The corpus's tokens after k merges, PickyBPE's removals after merge k counted in (each
    removal logs the count once it is made; the last one after a merge holds).

    >>> r = lambda after, n: RemovalRecord(after, 0, "", (), (), 0, 0, n, 0)
    >>> tokens_curve(10, [8, 6, 5], [r(2, 7), r(2, 8)])
    (10, 8, 8, 5)
    """
    curve = [initial, *after_merges]
    for r in removals:
        curve[r.after] = r.tokens_after
    return tuple(curve)


def build_variant(name: str, trainer: Trainer, held_out: str) -> Variant:
    """A trained trainer as a Variant, measured on the held-out text.

    >>> from explorer import make_config, train
    >>> cfg = make_config("gpt2", vocab_size=None, num_merges=4, superbpe_transition=2, sequences="lines")
    >>> v = build_variant("SuperBPE", train("of the cat\\n" * 5, cfg), "of the cat of the cat")
    >>> v.curve, v.held_out.tokens, [(v.tokenizer.decode([i]), n) for i, n in v.superwords]
    ((55, 50, 45, 40, 35), 13, [('of th', 2), ('of t', 0)])
    >>> cfg = make_config("gpt2", vocab_size=None, num_merges=3, picky=1.0, sequences="lines")
    >>> v = build_variant("PickyBPE", train("ab abc\\n" * 5, cfg), "abc")
    >>> v.curve, [(r.after, r.token, r.part_tokens) for r in v.removals], v.held_out.tokens
    ((35, 25, 20, 15), [(3, 'Ġab', ('Ġ', 'ab'))], 2)
    """
    tok = trainer.tokenizer()
    ids = tok.encode(held_out)
    used = Counter(ids)
    removals = tuple(trainer.records.all_removals())
    curve = tokens_curve(trainer.initial_tokens, trainer.records.column("tokens_after"), removals)
    order = superword_ids(tok)
    ranked = sorted(order, key=lambda i: -used[i])  # stable: learned order among equals
    return Variant(
        name,
        tok,
        trainer.config.superbpe_transition,
        curve,
        evaluate_ids(tok, held_out, ids),
        tuple((i, used[i]) for i in ranked),
        removals,
        trainer.records if trainer.config.picky is not None else None,
    )


def _saving(tokens: int, base: int) -> str:
    """A token count against the classical one, as a share.

    >>> _saving(368, 400), _saving(404, 400), _saving(0, 0)
    ('8.0% fewer', '1.0% more', '0.0% fewer')
    """
    change = (tokens - base) / base if base else 0.0
    return f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}"


def headlines(lab: Lab) -> list[render.Headline]:
    """The answer first: what SuperBPE and PickyBPE save on held-out text against classical
    BPE, how many tokens PickyBPE removed, and how many superword tokens SuperBPE learned (bytes
    per token and Rényi efficiency of the three are the chart beside).

    >>> from explorer.analysis.evaluate import Evaluation
    >>> e = lambda n, r: Evaluation(bytes=1000, chars=1000, words=200, tokens=n, unk=0, renyi_efficiency=r)
    >>> tok = Tokenizer(config=make_config("gpt2"), alphabet=["a"], merges=[])
    >>> c = Variant("classical", tok, None, (9, 8), e(400, 0.6), ())
    >>> s = Variant("SuperBPE", tok, 2400, (9, 7), e(368, 0.7), ((0, 5),))
    >>> p = Variant("PickyBPE", tok, None, (9, 8, 7), e(396, 0.62), (), (RemovalRecord(2, 0, "a", (), (), 1, 9, 7, 1),))
    >>> [(h.panel, h.number) for h in headlines(Lab("a.txt", "b.txt", 9, c, s, 80, "", p, 0.1))]
    [('SuperBPE at t = 80%', '8.0% fewer'), ('PickyBPE at τ = 0.1', '1.0% fewer'), ('Tokens PickyBPE removed', '1'), ('Superword tokens', '1')]
    """
    c, s = lab.classical.held_out, lab.superbpe.held_out
    t = lab.superbpe.transition
    after = max(0, lab.superbpe.merges - (lab.superbpe.merges if t is None else t))
    example = ""
    if lab.superbpe.superwords:
        first = lab.superbpe.superwords[0][0]
        example = f", e.g. {_quoted(lab.superbpe.tokenizer, first)}"
    cards = [
        render.Headline(
            f"SuperBPE at t = {lab.share}%",
            _saving(s.tokens, c.tokens),
            f"tokens on held-out text ({lab.held_out_name}): {s.tokens:,} against classical BPE's {c.tokens:,}",
        )
    ]
    if lab.picky is not None:
        p = lab.picky
        cards.append(
            render.Headline(
                f"PickyBPE at τ = {lab.tau:g}",
                _saving(p.held_out.tokens, c.tokens),
                f"tokens on held-out text: {p.held_out.tokens:,} against {c.tokens:,}, with as many live tokens "
                f"(IoS threshold T = {ios_threshold(lab.tau):.2f})",
            )
        )
        first_removal = ""
        if p.removals:
            r = p.removals[0]
            first_removal = f"; the first, {_quoted(p.tokenizer, r.token_id)} after merge {r.after:,}"
        cards.append(
            render.Headline(
                "Tokens PickyBPE removed",
                f"{len(p.removals):,}",
                f"it made {p.merges:,} merges to classical BPE's {lab.classical.merges:,}{first_removal}",
            )
        )
    cards.append(
        render.Headline(
            "Superword tokens",
            f"{len(lab.superbpe.superwords):,}",
            f"of the {after:,} merges after the transition span a space{example}",
        )
    )
    return cards


# ---- the settings --------------------------------------------------------------------------
_REQUEST = "var_request"
_SHARE = "w_var_share"
_PICKY = "w_var_picky"


def _corpus_label(name: str) -> str:
    return "this session's corpus (Corpus page)" if name == SESSION else name


def settings_form() -> None:
    """The corpus, held-out text and budget (in the sidebar); a change trains anew."""
    names = data.sample_names()
    req = current_request()
    state.widget_default("w_var_corpus", req.corpus)
    state.widget_default("w_var_held", req.held_out)
    state.widget_default("w_var_merges", req.merges)
    st.selectbox(
        "Corpus",
        [SESSION, *names],
        format_func=_corpus_label,
        key="w_var_corpus",
        on_change=_update,
        help=f"Both tokenizers train on it (its first {MAX_CORPUS_CHARS:,} characters, cut at a line end).",
    )
    st.selectbox(
        "Held-out text",
        names,
        key="w_var_held",
        on_change=_update,
        help=f"What the headline measures: text neither tokenizer trained on (its first {MAX_HELD_OUT_CHARS:,} "
        "characters).",
    )
    st.number_input(
        "Merges (the budget)",
        MIN_MERGES,
        MAX_MERGES,
        step=500,
        key="w_var_merges",
        on_change=_update,
        help="Both tokenizers make this many merges (GPT-2's pieces, byte level, each line its own text).",
    )


def _update() -> None:
    ss = st.session_state
    old = current_request()
    ss[_REQUEST] = Request(
        ss.get("w_var_corpus", old.corpus),
        ss.get("w_var_held", old.held_out),
        int(ss.get("w_var_merges", old.merges)),
        int(ss.get(_SHARE, old.share)),
        float(ss.get(_PICKY, old.tau)),
    )


def current_request() -> Request:
    return cast(Request, st.session_state.get(_REQUEST) or Request())


def _slider(key: str, value: object, label: str, options: Sequence, fmt: Callable[[Any], str], about: str) -> None:
    """One of the request's sliders above the headline: a move trains anew (or reads the memo)."""
    state.widget_default(key, value)
    st.select_slider(label, options, key=key, format_func=fmt, on_change=_update, help=about)


def transition_slider(request: Request) -> None:
    """SuperBPE's transition, as a share of the budget."""
    _slider(
        _SHARE,
        request.share,
        "SuperBPE transition t (share of the merges learned within words)",
        SHARES,
        lambda p: f"{p}%",
        "After t, merges may cross spaces. t = 100% is classical BPE. The authors' best: about 80-90% of a 200k "
        "vocabulary.",
    )


def tau_label(tau: float) -> str:
    """A τ with the paper's IoS threshold T beside it.

    >>> tau_label(0.1), tau_label(0.0)
    ('0.1 (T = 0.91)', '0 (T = 1.00)')
    """
    return f"{tau:g} (T = {ios_threshold(tau):.2f})"


def tau_slider(request: Request) -> None:
    """PickyBPE's τ (beside the transition): the tokens it removes while training."""
    _slider(
        _PICKY,
        request.tau,
        "PickyBPE τ (a token goes when left alone under τ × its merge's count)",
        TAUS,
        tau_label,
        "After each merge, a token it merged is removed when its occurrences left standing alone are fewer than τ "
        "times the merge's: the paper's intersection-over-self above T = 1 / (1 + τ) (its T = 0.9 is τ ≈ 0.11). "
        "τ = 0 is classical BPE. PickyBPE trains until it has as many live tokens as classical BPE.",
    )


# ---- training ------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _memo() -> Memo:
    """Trained variants, scaffold counts and health scans, for every session of this server."""
    return Memo(max_entries=48)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _corpus_text(request: Request) -> tuple[str, str] | None:
    """(the lab's corpus text, its name); None when the session's corpus is empty."""
    if request.corpus == SESSION:
        choice = state.corpus_choice()
        text = "\n".join(choice.texts())
        return (cut(text, MAX_CORPUS_CHARS), choice.label()) if text.strip() else None
    return cut(data.sample_text(request.corpus), MAX_CORPUS_CHARS), request.corpus


def _train_one(
    name: str, text: str, held_out: str, merges: int, done: Callable[[int], None], **options: object
) -> Variant:
    """One variant trained by turns on the server's heavy lane; ``done`` hears how far it got,
    in merges (PickyBPE: in live tokens gained, what its budget counts)."""
    cfg = make_config(PRESET, sequences="lines", **({"vocab_size": None, "num_merges": merges} | options))
    with server.HEAVY.turn():
        trainer = Trainer.from_texts(text, cfg, top_k=0, full_records=0)
    base = trainer.n_live
    while not trainer.done:
        # heavy work takes turns with other sessions' runs, a chunk at a time
        with server.HEAVY.turn():
            trainer.advance(250)
        done(trainer.n_live - base if cfg.picky is not None else len(trainer.records))
    return build_variant(name, trainer, held_out)


def train(request: Request) -> Lab | None:
    """The three variants of the request, trained with a progress bar (or read from the
    server's memo); None, with a message on the page, when the request cannot be trained.
    PickyBPE trains to classical BPE's vocabulary size (live tokens), so it is trained last."""
    found = _corpus_text(request)
    if found is None:
        st.warning("This session's corpus is empty: choose a sample in the sidebar, or a corpus on the Corpus page.")
        return None
    text, name = found
    held_out = cut(data.sample_text(request.held_out), MAX_HELD_OUT_CHARS)
    base = f"{_digest(text)}:{_digest(held_out)}:{request.merges}"
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
    st.html(render.headline_cards(headlines(lab)))
    for col, measure in zip(st.columns(2, gap="medium"), charts.MEASURES):
        col.altair_chart(
            projector.altair_chart(charts.measure_chart(lab, measure)),
            width="stretch",
            height=projector.chart_height(charts.MEASURE_HEIGHT),
        )


def describe_request(lab: Lab, request: Request) -> str:
    """One line under the title (Markdown, user text escaped)."""
    return render.escape(
        f"{lab.corpus_name} (first {lab.corpus_chars:,} characters) · {request.merges:,} merges, "
        f"{lab.classical.tokenizer.vocab.n_live:,} tokens each · GPT-2's pieces, byte level · held out: "
        f"{lab.held_out_name}",
        into="markdown",
    )


# ---- superwords ----------------------------------------------------------------------------
def _superword_chips(variant: Variant) -> str:
    """The superword tokens as chips with their held-out count (all text escaped)."""
    tok = variant.tokenizer
    # a chip and its count never part at a line end
    chips = "".join(
        f'<span style="white-space:nowrap;margin-right:.5rem">'
        f'<span class="bpe-chip" title="{html.escape(render.token_title(tok, i), quote=True)}">'
        f"{render.token_label(tok, i, into='html')}</span>"
        f'<span class="bpe-freq">×{n:,}</span></span> '
        for i, n in variant.superwords[:SUPERWORD_CHIPS]
    )
    more = len(variant.superwords) - SUPERWORD_CHIPS
    tail = f'<div class="bpe-freq">{more:,} more superword tokens not shown</div>' if more > 0 else ""
    return f'<div class="bpe-row bpe-text var-superwords" style="font-size:.9rem;line-height:1.9">{chips}</div>{tail}'


def example_line(tok: Tokenizer, text: str, superwords: Iterable[int], *, min_chars: int = 50, lines: int = 400) -> str:
    """A line of ``text`` that shows superwords at work: among its first ``lines`` lines of at
    least ``min_chars`` characters, the one whose encoding uses the most superword tokens (the
    first on ties); the first such line when none uses any ("" when there is none).

    >>> from explorer import make_config, train
    >>> cfg = make_config("gpt2", vocab_size=None, num_merges=8, superbpe_transition=3, sequences="lines")
    >>> tok = train("of the cat\\n" * 5, cfg).tokenizer()
    >>> example_line(tok, "a dog\\nthe cat of the cat\\n", superword_ids(tok), min_chars=5)
    'the cat of the cat'
    """
    wanted = set(superwords)
    best, most = "", -1
    for line in islice((ln.strip() for ln in text.splitlines() if len(ln.strip()) >= min_chars), lines):
        n = sum(1 for i in tok.encode(line) if i in wanted)
        if n > most:
            best, most = line, n
    return best


def _both_ways(lab: Lab) -> str:
    """One held-out line encoded by each tokenizer, as chips under its name and token count."""
    line = example_line(lab.superbpe.tokenizer, lab.held_out_text, (i for i, _ in lab.superbpe.superwords))
    if not line:
        return ""
    rows = []
    for v in (lab.classical, lab.superbpe):
        ids = v.tokenizer.encode(line)
        rows.append(render.token_strip(v.name, f"{len(ids):,} tokens", render.encoded_chips(v.tokenizer, ids)))
    return render.panel("One held-out line, both ways", "".join(rows))


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
        both = _both_ways(lab)
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
                _superword_chips(sw),
                "Tokens that span a space (· is a space), most used on the held-out text first (× its count there). "
                "Classical BPE cannot learn them: its pieces never cross a word boundary.",
            )
        )


# ---- PickyBPE's timeline -------------------------------------------------------------------
class TimelineRow(NamedTuple):
    """A row of PickyBPE's timeline: merge ``after`` itself (``removal`` None), or a token
    removed right after it."""

    after: int
    removal: RemovalRecord | None


def timeline(
    n_merges: int,
    removals: Sequence[RemovalRecord],
    *,
    removals_only: bool = False,
    start: int = 1,
    limit: int = TIMELINE_ROWS,
) -> list[TimelineRow]:
    """Merges and removals in the order made, from merge ``start`` on, at most ``limit`` rows:
    each merge, then the removals that followed it (only those with ``removals_only``).

    >>> r = lambda after, i: RemovalRecord(after, i, "", (), (), 0, 0, 0, 0)
    >>> rs = [r(2, 7), r(2, 8), r(4, 9)]
    >>> [(x.after, x.removal and x.removal.token_id) for x in timeline(4, rs, start=2, limit=4)]
    [(2, None), (2, 7), (2, 8), (3, None)]
    >>> [(x.after, x.removal and x.removal.token_id) for x in timeline(4, rs, removals_only=True, start=3)]
    [(4, 9)]
    """
    later = [r for r in removals if r.after >= start]
    if removals_only:
        return [TimelineRow(r.after, r) for r in later[:limit]]
    rows: list[TimelineRow] = []
    i = 0
    for k in range(start, n_merges + 1):
        if len(rows) >= limit:
            break
        rows.append(TimelineRow(k, None))
        while i < len(later) and later[i].after == k:
            rows.append(TimelineRow(k, later[i]))
            i += 1
    return rows[:limit]


def _quoted(tok: Tokenizer, token_id: int) -> str:
    return "‘" + render.token_label(tok, token_id) + "’"


def removal_sentence(tok: Tokenizer, removal: RemovalRecord, merged: int) -> str:
    """A removal as one sentence (plain text): the merge it followed, what was left of the token
    standing alone, the merge's count and token (``merged``), and the parts it was split into.

    >>> from explorer import make_config, train
    >>> trainer = train("ab abc\\n" * 5, make_config("gpt2", vocab_size=None, num_merges=3, picky=1.0))
    >>> (r,) = trainer.records.all_removals()
    >>> removal_sentence(trainer.tokenizer(), r, trainer.records[r.after - 1].token_id)
    'after merge 3: ‘·ab’ removed — alone 0, inside ‘·abc’ 5 — split into ‘·’ + ‘ab’'
    """
    parts = " + ".join(_quoted(tok, i) for i in removal.parts)
    return (
        f"after merge {removal.after:,}: {_quoted(tok, removal.token_id)} removed — alone {removal.alone:,}, "
        f"inside {_quoted(tok, merged)} {removal.inside:,} — split into {parts}"
    )


def _timeline_rows(variant: Variant, rows: list[TimelineRow]) -> str:
    """The timeline as an HTML table: a merge's row, a removal's row of its own (text escaped)."""
    tok, records = variant.tokenizer, variant.records
    assert records is not None

    def chip(token_id: int) -> str:
        return f'<span class="bpe-chip">{render.token_label(tok, token_id, into="html")}</span>'

    out = []
    for row in rows:
        record = records[row.after - 1]
        r = row.removal
        if r is None:
            text = (
                f"merge {row.after:,}: {_quoted(tok, record.left_id)} + {_quoted(tok, record.right_id)} → "
                f"{_quoted(tok, record.token_id)} ({record.count:,} times)"
            )
            out.append(
                f'<tr class="var-tl-merge" data-merge="{row.after}"><td class="num">{row.after:,}</td>'
                f"<td>{chip(record.token_id)}</td><td>{html.escape(text)}</td></tr>"
            )
        else:
            text = removal_sentence(tok, r, record.token_id)
            out.append(
                f'<tr class="var-tl-removal" data-after="{r.after}" data-id="{r.token_id}" '
                f'style="background:#fef3c7"><td class="num">{r.after:,}</td>'
                f"<td>✂ {chip(r.token_id)}</td><td>{html.escape(text)}</td></tr>"
            )
    head = "<tr><th>merge</th><th>token</th><th>what happened</th></tr>"
    return f'<div class="bpe-scroll"><table class="bpe-cmp var-timeline">{head}{"".join(out)}</table></div>'


_TL_ONLY, _TL_FROM = "w_var_tl_only", "w_var_tl_from"


def timeline_panel(lab: Lab) -> None:
    """PickyBPE's merges and removals in the order made, a removal as a row of its own
    (filterable to removals only), from any merge on."""
    p = lab.picky
    if p is None or p.records is None:
        st.info("PickyBPE was not trained for this view.")
        return
    st.html(
        render.stat_strip(
            [
                ("merges", f"{p.merges:,}"),
                ("removals", f"{len(p.removals):,}"),
                ("live tokens (as classical BPE)", f"{p.tokenizer.vocab.n_live:,}"),
                ("IoS threshold T = 1 / (1 + τ)", f"{ios_threshold(lab.tau):.3f}"),
            ]
        )
    )
    ss = st.session_state
    state.widget_default(_TL_ONLY, False)
    state.widget_default(_TL_FROM, 1)
    last = max(1, p.merges)
    if not 1 <= int(ss[_TL_FROM]) <= last:  # another τ made fewer merges
        ss[_TL_FROM] = min(max(1, int(ss[_TL_FROM])), last)
    a, b = st.columns([3, 2], gap="medium")
    only = a.toggle("Removals only", key=_TL_ONLY)
    start = int(b.number_input("From merge", 1, last, step=100, key=_TL_FROM))
    rows = timeline(p.merges, p.removals, removals_only=only, start=start)
    st.caption(
        f"After each merge PickyBPE checks the two tokens it merged: one whose occurrences left standing alone are "
        f"fewer than τ = {lab.tau:g} times the merge's count is removed, each occurrence split into its parts "
        "(Chizhov et al. 2024). A removal is a step of its own (✂, yellow); a removed token can come back when a "
        "later merge makes it again. Up to "
        f"{TIMELINE_ROWS} rows from the merge chosen."
    )
    if not p.removals:
        st.caption(f"PickyBPE removed no token at τ = {lab.tau:g}: it is classical BPE. Move τ right.")
    if rows:
        st.html(_timeline_rows(p, rows))
    elif only:
        st.caption(f"No removal after merge {start - 1:,}.")


# ---- scaffold tokens -----------------------------------------------------------------------
def scaffold_list(uses: Iterable[TokenUse], tau: float) -> list[TokenUse]:
    """The scaffold tokens under τ, in ``scaffold()``'s order (highest IoS first, then most
    merges inside, then id), from uses counted once: moving τ recounts nothing.

    >>> from explorer.analysis.scaffold import Feed
    >>> uses = [TokenUse(5, 1, (Feed(7, 2, 40, 1),)), TokenUse(6, 3, (Feed(8, 3, 9, 3),)), TokenUse(9, 0, ())]
    >>> [u.id for u in scaffold_list(uses, 0.1)], [u.id for u in scaffold_list(uses, 0.5)], scaffold_list(uses, 0)
    ([5], [5, 6], [])
    """
    return sorted((u for u in uses if is_scaffold(u, tau)), key=lambda u: (-u.ios, -u.inside, u.id))


def _scaffold_choices() -> list[str]:
    """The lab's own tokenizers, the session's, then the catalog's tables (bundled, imported)."""
    return [*_HERE, catalog.TRAINED, *catalog.keys(trained=False)]


def _scaffold_label(key: str) -> str:
    return {
        "classical": "classical BPE trained here",
        "superbpe": "SuperBPE trained here",
        catalog.TRAINED: "this session's tokenizer (Train page)",
    }.get(key) or catalog.label(key)


def _uses(key: str, tok: Tokenizer, pieces: Callable[[], dict[str, int]]) -> ScaffoldReport:
    """Every merged token's use (τ = 0: none picked yet), counted once per tokenizer and text."""

    def make() -> ScaffoldReport:
        with st.spinner("Counting every merge the text makes (once per tokenizer and corpus)…"):
            with server.HEAVY.turn():
                return scaffold(tok, pieces(), tau=0.0)

    return cast(ScaffoldReport, _memo().get(f"scaffold:{key}", make))


def _scaffold_rows(tok: Tokenizer, picked: list[TokenUse], removed: set[int] | None = None) -> str:
    """The scaffold tokens as an HTML table: token, alone, IoS, the lineage sentence, and with
    ``removed`` (ids PickyBPE removed too) a column marking them."""

    def mark(i: int) -> str:
        if removed is None:
            return ""
        return '<td class="var-both">✂ removed</td>' if i in removed else "<td></td>"

    rows = "".join(
        f'<tr data-id="{u.id}"><td><span class="bpe-chip">{render.token_label(tok, u.id, into="html")}</span></td>'
        f'<td class="num">{u.alone:,}</td><td class="num">{u.inside:,}</td><td class="num">{u.ios:.3f}</td>'
        f"{mark(u.id)}<td>{html.escape(describe(tok, u, show=partial(_quoted, tok), limit=2))}</td></tr>"
        for u in picked[:SCAFFOLD_ROWS]
    )
    picky_head = "" if removed is None else "<th>PickyBPE</th>"
    head = f"<tr><th>token</th><th>alone</th><th>inside</th><th>IoS</th>{picky_head}<th>lineage</th></tr>"
    more = len(picked) - SCAFFOLD_ROWS
    tail = f'<p class="bpe-cap">{more:,} more not shown (the highest IoS first).</p>' if more > 0 else ""
    return f'<div class="bpe-scroll"><table class="bpe-cmp var-scaffold">{head}{rows}</table></div>{tail}'


def picky_removed(tok: Tokenizer, picky: Tokenizer) -> set[int]:
    """The ids in ``tok`` of the tokens PickyBPE's tokenizer ``picky`` removed for good (matched
    by their text: both are trained alike on one corpus, their ids differ).

    >>> from explorer import make_config, train
    >>> classical = train("ab abc\\n" * 5, make_config("gpt2", vocab_size=None, num_merges=3)).tokenizer()
    >>> picky = train("ab abc\\n" * 5, make_config("gpt2", vocab_size=None, num_merges=3, picky=1.0)).tokenizer()
    >>> [classical.decode([i]) for i in picky_removed(classical, picky)]
    [' ab']
    """
    gone = {picky.id_to_token(i) for i in picky.vocab.removed}
    return {i for t in gone if (i := tok.token_to_id(t)) is not None}


def _removed_chips(tok: Tokenizer, lab: Lab, removed: set[int], both: set[int]) -> str:
    """PickyBPE's removed tokens as chips, those this list calls scaffold too first (marked ✂)."""
    ids = sorted(removed, key=lambda i: (i not in both, i))
    chips = "".join(
        f'<span class="bpe-chip{" var-both" if i in both else ""}" title="{html.escape(render.token_title(tok, i), quote=True)}">'
        f"{'✂ ' if i in both else ''}{render.token_label(tok, i, into='html')}</span> "
        for i in ids[:SUPERWORD_CHIPS]
    )
    more = len(ids) - SUPERWORD_CHIPS
    tail = f'<div class="bpe-freq">{more:,} more not shown</div>' if more > 0 else ""
    return render.panel(
        f"Removed by PickyBPE at τ = {lab.tau:g} ({len(removed):,} tokens classical BPE also has)",
        f'<div class="bpe-row bpe-text var-removed" style="line-height:1.9">{chips}</div>{tail}',
        f"Trained on the same corpus to the same vocabulary size; ✂: a scaffold token above too, at this τ "
        f"({len(both):,}). Move either τ to compare.",
    )


def scaffold_panel(lab: Lab, request: Request) -> None:
    """A tokenizer's scaffold tokens on the lab's corpus (the session's on its own corpus),
    with a τ slider and each token's lineage sentence."""
    state.widget_default("w_var_scaffold_tok", "classical")
    state.widget_default("w_var_tau", DEFAULT_TAU)
    choices = _scaffold_choices()
    catalog.keep_choice("w_var_scaffold_tok", choices, "classical")
    labels = {k: _scaffold_label(k) for k in choices}  # looked up, not computed (see the Playground's picker)
    a, b = st.columns([2, 3], gap="medium")
    key = a.selectbox("Tokenizer", choices, format_func=labels.__getitem__, key="w_var_scaffold_tok")
    tau = b.select_slider(
        "τ: a token is scaffold when it stands alone fewer than τ × the times a later merge takes it",
        TAUS,
        key="w_var_tau",
        help="PickyBPE's intersection-over-self threshold is 1 / (1 + τ); the authors' example 0.9 is τ ≈ 0.11. "
        "τ = 0: none.",
    )
    corpus, _ = _corpus_text(request) or ("", "")
    if key in _HERE:
        variant = lab.classical if key == "classical" else lab.superbpe
        tok, text_key, texts = (
            variant.tokenizer,
            f"{key}:{_digest(corpus)}:{request.merges}:{request.transition}",
            [corpus],
        )
        if key == "classical":
            text_key = f"classical:{_digest(corpus)}:{request.merges}"
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
        text_key = f"{table.key}:{_digest(corpus)}"
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
    picked = scaffold_list(report.uses, tau)
    # beside classical BPE: the tokens PickyBPE, trained on the same corpus, removed for good
    removed = picky_removed(tok, lab.picky.tokenizer) if key == "classical" and lab.picky is not None else None
    both = [u.id for u in picked if removed is not None and u.id in removed]
    stats = [
        ("scaffold tokens at this τ", f"{len(picked):,}"),
        ("merged tokens the text uses or merges", f"{len(report.uses):,}"),
        ("IoS threshold 1 / (1 + τ)", f"{ios_threshold(tau):.3f}"),
    ]
    if removed is not None:
        stats.append((f"of them PickyBPE (τ = {lab.tau:g}) removed too", f"{len(both):,}"))
    st.html(render.stat_strip(stats))
    st.caption(
        render.escape(
            f"Measured on {where}. A scaffold token exists on the way to longer ones: once they are made it "
            "seldom stands alone (PickyBPE, Chizhov et al. 2024; Scaffold-BPE, Lian et al. 2024). PickyBPE "
            "removes them while training: its removals are on the PickyBPE timeline tab.",
            into="markdown",
        )
    )
    if picked:
        st.html(_scaffold_rows(tok, picked, removed))
    else:
        st.caption("No scaffold token at this τ: every merged token stands alone often enough.")
    if removed is not None and lab.picky is not None:
        st.html(_removed_chips(tok, lab, removed, set(both)))


# ---- token health --------------------------------------------------------------------------
_HEALTH_KINDS = (
    ("unreachable", "Unreachable: encoding the token's own text never gives it"),
    ("partial_utf8", "Part of a UTF-8 character: its bytes are no whole character"),
    ("unused", "Never used on the corpus"),
)


def playground_link(key: str, note: TokenNote, training: dict[str, str], *, shown_id: int | None = None) -> str | None:
    """A link that opens the Playground's *Why this split* on a token's own text under the
    tokenizer ``key``, its lineage shown; None when its bytes are no whole text. ``shown_id``:
    the token's id as its tokenizer's file numbers it (``Tokenizer.shown_id``), which the link
    carries.

    >>> playground_link("gpt2", TokenNote(40, "I", "49"), {})
    'Playground?text=I&tokenizers=gpt2&view=why&why_tokenizer=0&piece=0&token=40'
    >>> playground_link("gpt2", TokenNote(94, "\u00bf", "bf"), {}) is None
    True
    >>> playground_link("imported:ab12", TokenNote(40, "I", "49"), {}, shown_id=3000).endswith("&token=3000")
    True
    """
    try:
        text = bytes.fromhex(note.hex).decode("utf-8")
    except ValueError:
        return None
    params = {**training, "text": text, "tokenizers": key, "view": "why", "why_tokenizer": "0", "piece": "0"}
    params["token"] = str(note.id if shown_id is None else shown_id)
    return "Playground?" + urlencode(params)


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
    if key != catalog.TRAINED:
        return catalog.label(key)
    live = st.session_state.get("live")
    return "this session's" + (f" (merge {live.view:,})" if live is not None else "")


def _health(key: str, corpus: str) -> tuple[HealthReport, Tokenizer] | None:
    """A tokenizer's scan against the corpus (kept per tokenizer and corpus); None for the
    session's tokenizer when it has no trainer yet."""
    if key == catalog.TRAINED:
        entry = catalog.get(catalog.TRAINED)
        if entry is None:
            return None
        tok = entry.tokenizer
        memo_key = f"health:{entry.key}:{state.corpus_choice().key()}:{hash(tok.pipeline)}:{_digest(corpus)}"
    else:
        table = _table(key)
        if table is None:
            return None
        tok = table.tokenizer
        memo_key = f"health:{table.key}:{_digest(corpus)}"

    def make() -> HealthReport:
        with st.spinner(render.md_text(f"Scanning every token of {_health_label(key)} (once per server)…")):
            with server.HEAVY.turn():
                return scan(tok, reference=corpus)

    return cast(HealthReport, _memo().get(memo_key, make)), tok


def _not_one_merge_note(label: str, report: HealthReport) -> str:
    """What a rank table's tokens that are not one merge of two lower-ranked tokens are.

    >>> print(_not_one_merge_note("t", HealthReport(9, (7,), (), None, 0, whole_piece_only=(5, 6), never_made=(7,))))
    t: 3 tokens are not one merge of two lower-ranked tokens (a rank table need not be made by merges): 2 are given only for a piece that is the token whole, 1 never (counted as unreachable)
    """
    n = len(report.whole_piece_only) + len(report.never_made)
    return (
        f"{label}: {n:,} tokens are not one merge of two lower-ranked tokens (a rank table need not be made "
        f"by merges): {len(report.whole_piece_only):,} are given only for a piece that is the token whole, "
        f"{len(report.never_made):,} never (counted as unreachable)"
    )


def _health_table(reports: dict[str, HealthReport], corpus_name: str) -> str:
    head = (
        "<tr><th>tokenizer</th><th>tokens</th><th>unreachable</th><th>part of a UTF-8 character</th>"
        f'<th title="{html.escape(corpus_name, quote=True)}">unused on the corpus</th></tr>'
    )
    rows = "".join(
        f'<tr data-name="{html.escape(key, quote=True)}"><td>{html.escape(_health_label(key))}</td>'
        f'<td class="num">{r.tokens:,}</td><td class="num">{len(r.unreachable):,}</td>'
        f'<td class="num">{len(r.partial_utf8):,}</td>'
        f'<td class="num">{"–" if r.unused is None else f"{len(r.unused):,} ({len(r.unused) / r.tokens:.0%})"}</td></tr>'
        for key, r in reports.items()
    )
    return f'<div class="bpe-scroll"><table class="bpe-cmp var-health">{head}{rows}</table></div>'


def _note_row(tok: Tokenizer, key: str, note: TokenNote, training: dict[str, str]) -> str:
    """One example: the token, its id and bytes, what its own text encodes as (unreachable),
    and a link into the Playground's *Why this split*."""
    chip = render.encoded_chips(tok, [note.id])
    shown = tok.shown_id(note.id)  # as the tokenizer's file numbers it (SentencePiece's order)
    parts = [chip, f'<span class="bpe-freq">id {shown:,} · bytes {html.escape(note.hex)}</span>']
    if note.encodes_as is not None and note.encodes_as != (note.id,):
        parts.append(
            f'<span class="bpe-freq">its own text encodes as</span>{render.encoded_chips(tok, note.encodes_as)}'
        )
    link = playground_link(key, note, training, shown_id=shown)
    if link is not None:
        parts.append(f'<a href="{html.escape(link, quote=True)}" target="_self" class="var-why">Why this split ↗</a>')
    return (
        f'<div class="var-note" style="display:flex;flex-wrap:wrap;align-items:center;gap:.5rem">{"".join(parts)}</div>'
    )


def health_panel(lab: Lab, request: Request) -> None:
    """Each bundled tokenizer's and the session's health counts, then one tokenizer's examples."""
    corpus, _ = _corpus_text(request) or ("", "")
    reports: dict[str, HealthReport] = {}
    toks: dict[str, Tokenizer] = {}
    for key in _health_keys():
        found = _health(key, corpus)
        if found is not None:
            reports[key], toks[key] = found
    st.html(_health_table(reports, lab.corpus_name))
    for key, r in reports.items():  # a rank table (Llama 3's) whose tokens are not all merges says so
        if r.whole_piece_only or r.never_made:
            st.caption(render.md_text(_not_one_merge_note(_health_label(key), r)))
    st.caption(
        "Unreachable tokens waste a row of the embedding table and were never trained, or trained on little "
        "(Land & Bartolo 2024, \u201cFishing for Magikarp\u201d). Parts of a character are fine at byte level but "
        "cannot be written as text. Unused: the corpus never needs them."
    )
    state.widget_default("w_var_health_tok", "o200k_base")
    catalog.keep_choice("w_var_health_tok", list(reports), "o200k_base")
    labels = {k: _health_label(k) for k in reports}
    pick, _ = st.columns([1, 2])
    key = pick.selectbox("Examples of", list(reports), format_func=labels.__getitem__, key="w_var_health_tok")
    if key is None or key not in reports:
        return
    report, tok = reports[key], toks[key]
    training = links.training_params()[0] if key == catalog.TRAINED else {}
    shown_key = catalog.get(catalog.TRAINED).key if key == catalog.TRAINED else key  # type: ignore[union-attr]
    for kind, title in _HEALTH_KINDS:
        notes = report.examples.get(kind, ())  # type: ignore[call-overload]
        body = "".join(_note_row(tok, shown_key, n, training) for n in notes) or render.caption("None.")
        st.html(render.panel(title, body))


# ---- the page's link -----------------------------------------------------------------------
_TAB = "w_var_tab"


def link_params() -> dict[str, str]:
    """The request, the tab open and its settings as URL params."""
    ss = st.session_state
    req = current_request()
    params = {
        "var_corpus": req.corpus,
        "var_held": req.held_out,
        "var_merges": str(req.merges),
        "var_t": str(req.share),
        "var_picky": f"{req.tau:g}",
    }
    tab = ss.get(_TAB) or TABS[0]
    if tab != TABS[0]:
        params["var_tab"] = _TAB_SLUGS.get(tab, "superwords")
    if tab == "PickyBPE timeline" and ss.get(_TL_ONLY):
        params["var_removals"] = "1"
    if tab == "Scaffold tokens":
        params["var_tok"] = str(ss.get("w_var_scaffold_tok", "classical"))
        params["var_tau"] = f"{ss.get('w_var_tau', DEFAULT_TAU):g}"
    if tab == "Token health":
        params["var_health"] = str(ss.get("w_var_health_tok", "o200k_base"))
    return params


def _tau_or(params: dict[str, str], key: str, problems: list[str], default: float) -> float:
    """A τ the link names, one of the sliders' (``default``, and a line in ``problems``, otherwise).

    >>> problems = []
    >>> _tau_or({"t": "0.5"}, "t", problems, 0.1), _tau_or({"t": "x"}, "t", problems, 0.1), _tau_or({}, "t", problems, 0.1)
    (0.5, 0.1, 0.1)
    >>> problems
    ["t='x' is not one of 0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1"]
    """
    if key not in params:
        return default
    try:
        tau = float(params[key])
    except ValueError:
        tau = -1.0
    if tau in TAUS:
        return tau
    problems.append(f"{key}={params[key][:20]!r} is not one of {', '.join(f'{t:g}' for t in TAUS)}")
    return default


def apply_link(params: dict[str, str]) -> list[str]:
    """The request and view a link names; what it had to leave out."""
    if not any(k.startswith("var_") for k in params):
        return []
    problems: list[str] = []
    ss = st.session_state
    names = data.sample_names()
    d = Request()
    corpus = params.get("var_corpus", d.corpus)
    if corpus != SESSION and corpus not in names:
        problems.append(f"var_corpus={corpus[:40]!r} is not a bundled sample")
        corpus = d.corpus
    held = params.get("var_held", d.held_out)
    if held not in names:
        problems.append(f"var_held={held[:40]!r} is not a bundled sample")
        held = d.held_out

    def number(key: str, low: int, high: int, default: int) -> int:
        return links.count_or(params, key, problems, low=low, high=high, default=default)

    merges = number("var_merges", MIN_MERGES, MAX_MERGES, d.merges)
    share = number("var_t", 0, 100, d.share)
    if share not in SHARES:
        problems.append(f"var_t={share} is not a multiple of 10")
        share = d.share
    picky = _tau_or(params, "var_picky", problems, d.tau)
    request = Request(corpus, held, merges, share, picky)
    ss[_REQUEST] = request
    ss["w_var_corpus"], ss["w_var_held"], ss["w_var_merges"], ss[_SHARE] = corpus, held, merges, share
    ss[_PICKY] = picky
    if params.get("var_removals") == "1":
        ss[_TL_ONLY] = True
    slug = params.get("var_tab")
    if slug is not None:
        tab = {v: k for k, v in _TAB_SLUGS.items()}.get(slug)
        if tab is None:
            problems.append(f"var_tab={slug[:20]!r} is not one of {', '.join(_TAB_SLUGS.values())}")
        else:
            ss[_TAB] = tab
    for param, widget, choices in (
        ("var_tok", "w_var_scaffold_tok", _scaffold_choices),
        ("var_health", "w_var_health_tok", _health_keys),
    ):
        if param in params:
            try:  # an imported tokenizer is read back from the store
                ss[widget] = catalog.restore_choice(params[param], choices)
            except ExplorerError as err:
                problems.append(f"{param}: {err}")
    if "var_tau" in params:
        ss["w_var_tau"] = _tau_or(params, "var_tau", problems, DEFAULT_TAU)
    return problems
