"""The Variants page: classical BPE against SuperBPE on one corpus and merge budget, the scaffold
tokens of a tokenizer (PickyBPE's intermediate tokens), and the health of each tokenizer's
vocabulary.

Data shapes (N merges, t the SuperBPE transition, a whole number of merges)::

    Request     corpus (a sample's name, or "session": the session's corpus), held-out sample,
                N and t as a share of N in percent: what the page trains
    Variant     one tokenizer trained to N (t=None: classical): the training corpus's tokens
                after each merge, what it makes of the held-out text, its superword tokens
                with their count in the held-out encoding, most used first
    Lab         both variants of one Request

Training is kept for the whole server (``compare.Memo``), so the next visitor, a refresh or
moving the slider back does not train again; the scaffold counts and health scans likewise.
"""

from __future__ import annotations

import hashlib
import html
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice
from typing import cast
from urllib.parse import urlencode

import streamlit as st

from ..analysis.compare import Memo
from ..analysis.evaluate import Evaluation, evaluate_ids, piece_counts
from ..analysis.health import HealthReport, TokenNote, scan
from ..analysis.scaffold import ScaffoldReport, TokenUse, describe, ios_threshold, is_scaffold, scaffold
from ..analysis.text import superword_ids
from ..bpe.config import make_config
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..formats.pretrained import PRETRAINED
from . import catalog, data, links, render, server, state
from . import variants_charts as charts

__all__ = [
    "TABS",
    "TAUS",
    "SESSION",
    "Request",
    "Variant",
    "Lab",
    "cut",
    "transition_of",
    "headlines",
    "scaffold_list",
    "playground_link",
    "settings_form",
    "current_request",
    "train",
    "transition_slider",
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
DEFAULT_TAU = 0.1
TABS = ("Superwords", "Scaffold tokens", "Token health")
PRESET = "gpt2"  # byte level, GPT-2's pieces: the pre-tokenizer SuperBPE's authors start from
SCAFFOLD_ROWS = 40
SUPERWORD_CHIPS = 60
_TAB_SLUGS = {"Superwords": "superwords", "Scaffold tokens": "scaffold", "Token health": "health"}
# the tokenizers the Scaffold tab offers: the two trained here, the session's, the bundled tables
_HERE = ("classical", "superbpe")


# ---- the request ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Request:
    """What the page trains: corpus, held-out text, merge budget and the transition's share."""

    corpus: str = DEFAULT_CORPUS
    held_out: str = DEFAULT_HELD_OUT
    merges: int = DEFAULT_MERGES
    share: int = DEFAULT_SHARE

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
@dataclass(frozen=True)
class Variant:
    """One tokenizer trained to the budget. ``curve[k]``: the training corpus's tokens after k
    merges; ``superwords``: (id, uses in the held-out encoding), most used first, then in the
    order learned."""

    name: str
    tokenizer: Tokenizer
    transition: int | None  # as configured (None: classical); training may end before it
    curve: tuple[int, ...]
    held_out: Evaluation
    superwords: tuple[tuple[int, int], ...]

    @property
    def merges(self) -> int:
        return len(self.curve) - 1


def build_variant(name: str, trainer: Trainer, held_out: str) -> Variant:
    """A trained trainer as a Variant, measured on the held-out text.

    >>> from explorer import make_config, train
    >>> cfg = make_config("gpt2", vocab_size=None, num_merges=4, superbpe_transition=2, sequences="lines")
    >>> v = build_variant("SuperBPE", train("of the cat\\n" * 5, cfg), "of the cat of the cat")
    >>> v.curve, v.held_out.tokens, [(v.tokenizer.decode([i]), n) for i, n in v.superwords]
    ((55, 50, 45, 40, 35), 13, [('of th', 2), ('of t', 0)])
    """
    tok = trainer.tokenizer()
    ids = tok.encode(held_out)
    used = Counter(ids)
    curve = (trainer.initial_tokens, *trainer.records.column("tokens_after"))
    order = superword_ids(tok)
    ranked = sorted(order, key=lambda i: -used[i])  # stable: learned order among equals
    return Variant(
        name,
        tok,
        trainer.config.superbpe_transition,
        curve,
        evaluate_ids(tok, held_out, ids),
        tuple((i, used[i]) for i in ranked),
    )


@dataclass(frozen=True)
class Lab:
    """Classical BPE and SuperBPE on one corpus and budget."""

    corpus_name: str
    held_out_name: str
    corpus_chars: int
    classical: Variant
    superbpe: Variant
    share: int
    held_out_text: str = ""


def headlines(lab: Lab) -> list[render.Headline]:
    """The answer first: what SuperBPE saves on held-out text, then bytes per token, Rényi
    efficiency and how many superword tokens it learned.

    >>> from explorer.analysis.evaluate import Evaluation
    >>> e = lambda n, r: Evaluation(bytes=1000, chars=1000, words=200, tokens=n, unk=0, renyi_efficiency=r)
    >>> tok = Tokenizer(config=make_config("gpt2"), alphabet=["a"], merges=[])
    >>> c = Variant("classical", tok, None, (9, 8), e(400, 0.6), ())
    >>> s = Variant("SuperBPE", tok, 2400, (9, 7), e(368, 0.7), ((0, 5),))
    >>> [(h.panel, h.number) for h in headlines(Lab("a.txt", "b.txt", 9, c, s, 80))]
    [('SuperBPE at t = 80%', '8.0% fewer'), ('Bytes per token', '2.50 → 2.72'), ('Rényi efficiency (α = 2.5)', '0.600 → 0.700'), ('Superword tokens', '1')]
    """
    c, s = lab.classical.held_out, lab.superbpe.held_out
    change = (s.tokens - c.tokens) / c.tokens if c.tokens else 0.0
    number = f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}"
    t = lab.superbpe.transition
    after = max(0, lab.superbpe.merges - (lab.superbpe.merges if t is None else t))
    example = ""
    if lab.superbpe.superwords:
        first = lab.superbpe.superwords[0][0]
        example = f", e.g. ‘{render.token_label(lab.superbpe.tokenizer, first)}’"

    def num(x: float | None, digits: int) -> str:
        return "–" if x is None else f"{x:.{digits}f}"

    return [
        render.Headline(
            f"SuperBPE at t = {lab.share}%",
            number,
            f"tokens on held-out text ({lab.held_out_name}): {s.tokens:,} against classical BPE's {c.tokens:,}",
        ),
        render.Headline(
            "Bytes per token",
            f"{num(c.bytes_per_token, 2)} → {num(s.bytes_per_token, 2)}",
            "held-out text, classical → SuperBPE",
        ),
        render.Headline(
            "Rényi efficiency (α = 2.5)",
            f"{num(c.renyi_efficiency, 3)} → {num(s.renyi_efficiency, 3)}",
            "how evenly the text uses its tokens (1 = all alike), classical → SuperBPE",
        ),
        render.Headline(
            "Superword tokens",
            f"{len(lab.superbpe.superwords):,}",
            f"of the {after:,} merges after the transition span a space{example}",
        ),
    ]


# ---- the settings --------------------------------------------------------------------------
_REQUEST = "var_request"
_SHARE = "w_var_share"


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
    )


def current_request() -> Request:
    return cast(Request, st.session_state.get(_REQUEST) or Request())


def transition_slider(request: Request) -> None:
    """SuperBPE's transition, as a share of the budget (the page's one big control)."""
    state.widget_default(_SHARE, request.share)
    st.select_slider(
        "SuperBPE transition t (share of the merges learned within words; after it, merges may cross spaces)",
        SHARES,
        key=_SHARE,
        format_func=lambda p: f"{p}%",
        on_change=_update,
        help="t = 100% is classical BPE. The authors' best: about 80-90% of a 200k vocabulary.",
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


def _train_one(text: str, held_out: str, merges: int, transition: int | None, done: Callable[[int], None]) -> Variant:
    cfg = make_config(PRESET, vocab_size=None, num_merges=merges, sequences="lines", superbpe_transition=transition)
    with server.HEAVY.turn():
        trainer = Trainer.from_texts(text, cfg, top_k=0, full_records=0)
    while not trainer.done:
        # heavy work takes turns with other sessions' runs, a chunk at a time
        with server.HEAVY.turn():
            trainer.advance(250)
        done(len(trainer.records))
    name = "classical" if transition is None else "SuperBPE"
    return build_variant(name, trainer, held_out)


def train(request: Request) -> Lab | None:
    """Both variants of the request, trained with a progress bar (or read from the server's
    memo); None, with a message on the page, when the request cannot be trained."""
    found = _corpus_text(request)
    if found is None:
        st.warning("This session's corpus is empty: choose a sample in the sidebar, or a corpus on the Corpus page.")
        return None
    text, name = found
    held_out = cut(data.sample_text(request.held_out), MAX_HELD_OUT_CHARS)
    base = f"{_digest(text)}:{_digest(held_out)}:{request.merges}"
    bar = st.empty()

    def one(transition: int | None, label: str) -> Variant:
        def make() -> Variant:
            def show(n: int) -> None:
                bar.progress(min(1.0, n / request.merges), text=f"Training {label}… {n:,} of {request.merges:,} merges")

            show(0)
            return _train_one(text, held_out, request.merges, transition, show)

        return cast(Variant, _memo().get(f"variant:{base}:{transition}", make))

    try:
        classical = one(None, "classical BPE")
        superbpe = one(request.transition, f"SuperBPE (t = {request.transition:,})")
    except ExplorerError as err:
        st.error(render.escape(str(err), into="markdown"))
        return None
    finally:
        bar.empty()
    return Lab(name, request.held_out, len(text), classical, superbpe, request.share, held_out)


def headline_view(lab: Lab) -> None:
    """The headline cards."""
    st.html(render.headline_cards(headlines(lab)))


def describe_request(lab: Lab, request: Request) -> str:
    """One line under the title (Markdown, user text escaped)."""
    return render.escape(
        f"{lab.corpus_name} (first {lab.corpus_chars:,} characters) · {request.merges:,} merges · GPT-2's pieces, "
        f"byte level · held out: {lab.held_out_name}",
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
    """The held-out measures of both tokenizers, the training curves, and SuperBPE's superword
    tokens (most used on held-out text first)."""
    left, right = st.columns([3, 2], gap="medium")
    with left:
        for col, measure in zip(st.columns(2, gap="small"), charts.MEASURES):
            col.altair_chart(charts.measure_chart(lab, measure), width="stretch", height=charts.MEASURE_HEIGHT)
        st.altair_chart(charts.curves_chart(lab), width="stretch", height=charts.CURVES_HEIGHT)
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
    return [*_HERE, catalog.TRAINED, *PRETRAINED]


def _scaffold_label(key: str) -> str:
    return {
        "classical": "classical BPE trained here",
        "superbpe": "SuperBPE trained here",
        catalog.TRAINED: "this session's tokenizer (Train page)",
    }.get(key, key)


def _uses(key: str, tok: Tokenizer, pieces: Callable[[], dict[str, int]]) -> ScaffoldReport:
    """Every merged token's use (τ = 0: none picked yet), counted once per tokenizer and text."""

    def make() -> ScaffoldReport:
        with st.spinner("Counting every merge the text makes (once per tokenizer and corpus)…"):
            with server.HEAVY.turn():
                return scaffold(tok, pieces(), tau=0.0)

    return cast(ScaffoldReport, _memo().get(f"scaffold:{key}", make))


def _scaffold_rows(tok: Tokenizer, picked: list[TokenUse]) -> str:
    """The scaffold tokens as an HTML table: token, alone, IoS, the lineage sentence."""

    def show(i: int) -> str:
        return "‘" + render.token_label(tok, i) + "’"

    rows = "".join(
        f'<tr data-id="{u.id}"><td><span class="bpe-chip">{render.token_label(tok, u.id, into="html")}</span></td>'
        f'<td class="num">{u.alone:,}</td><td class="num">{u.inside:,}</td><td class="num">{u.ios:.3f}</td>'
        f"<td>{html.escape(describe(tok, u, show=show, limit=2))}</td></tr>"
        for u in picked[:SCAFFOLD_ROWS]
    )
    head = "<tr><th>token</th><th>alone</th><th>inside</th><th>IoS</th><th>lineage</th></tr>"
    more = len(picked) - SCAFFOLD_ROWS
    tail = f'<p class="bpe-cap">{more:,} more not shown (the highest IoS first).</p>' if more > 0 else ""
    return f'<div class="bpe-scroll"><table class="bpe-cmp var-scaffold">{head}{rows}</table></div>{tail}'


def scaffold_panel(lab: Lab, request: Request) -> None:
    """A tokenizer's scaffold tokens on the lab's corpus (the session's on its own corpus),
    with a τ slider and each token's lineage sentence."""
    state.widget_default("w_var_scaffold_tok", "classical")
    state.widget_default("w_var_tau", DEFAULT_TAU)
    a, b = st.columns([2, 3], gap="medium")
    key = a.selectbox("Tokenizer", _scaffold_choices(), format_func=_scaffold_label, key="w_var_scaffold_tok")
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
        if entry is None or not entry.tokenizer.merges:
            st.info("This session's tokenizer has no merges yet: step it on the Train page, then come back.")
            return
        tok, texts = entry.tokenizer, list(entry.corpus)
        text_key = f"{entry.key}:{state.corpus_choice().key()}:{hash(entry.tokenizer.pipeline)}"
        where = "its training corpus"
    else:
        tok, texts = data.pretrained(key), [corpus]
        text_key = f"{key}:{_digest(corpus)}"
        where = f"{lab.corpus_name} (first {lab.corpus_chars:,} characters)"

    def pieces() -> dict[str, int]:
        counts: Counter[str] = Counter()
        for t in texts:
            counts.update(piece_counts(tok, t))
        return dict(counts)

    report = _uses(text_key, tok, pieces)
    picked = scaffold_list(report.uses, tau)
    st.html(
        render.stat_strip(
            [
                ("scaffold tokens at this τ", f"{len(picked):,}"),
                ("merged tokens the text uses or merges", f"{len(report.uses):,}"),
                ("IoS threshold 1 / (1 + τ)", f"{ios_threshold(tau):.3f}"),
            ]
        )
    )
    st.caption(
        render.escape(
            f"Measured on {where}. A scaffold token exists on the way to longer ones: once they are made it "
            "seldom stands alone (PickyBPE, Chizhov et al. 2024; Scaffold-BPE, Lian et al. 2024). PickyBPE "
            "training, which removes them while training, is coming.",
            into="markdown",
        )
    )
    if picked:
        st.html(_scaffold_rows(tok, picked))
    else:
        st.caption("No scaffold token at this τ: every merged token stands alone often enough.")


# ---- token health --------------------------------------------------------------------------
_HEALTH_KINDS = (
    ("unreachable", "Unreachable: encoding the token's own text never gives it"),
    ("partial_utf8", "Part of a UTF-8 character: its bytes are no whole character"),
    ("unused", "Never used on the corpus"),
)


def playground_link(key: str, note: TokenNote, training: dict[str, str]) -> str | None:
    """A link that opens the Playground's *Why this split* on a token's own text under the
    tokenizer ``key``, its lineage shown; None when its bytes are no whole text.

    >>> playground_link("gpt2", TokenNote(40, "I", "49"), {})
    'Playground?text=I&tokenizers=gpt2&view=why&why_tokenizer=0&piece=0&token=40'
    >>> playground_link("gpt2", TokenNote(94, "\u00bf", "bf"), {}) is None
    True
    """
    try:
        text = bytes.fromhex(note.hex).decode("utf-8")
    except ValueError:
        return None
    params = {**training, "text": text, "tokenizers": key, "view": "why", "why_tokenizer": "0", "piece": "0"}
    params["token"] = str(note.id)
    return "Playground?" + urlencode(params)


def _health_keys() -> list[str]:
    return [*PRETRAINED, catalog.TRAINED]


def _health_label(key: str) -> str:
    if key != catalog.TRAINED:
        return key
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
        tok = data.pretrained(key)
        memo_key = f"health:{key}:{_digest(corpus)}"

    def make() -> HealthReport:
        with st.spinner(f"Scanning every token of {_health_label(key)} (once per server)…"):
            with server.HEAVY.turn():
                return scan(tok, reference=corpus)

    return cast(HealthReport, _memo().get(memo_key, make)), tok


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
    parts = [chip, f'<span class="bpe-freq">id {note.id:,} · bytes {html.escape(note.hex)}</span>']
    if note.encodes_as is not None and note.encodes_as != (note.id,):
        parts.append(
            f'<span class="bpe-freq">its own text encodes as</span>{render.encoded_chips(tok, note.encodes_as)}'
        )
    link = playground_link(key, note, training)
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
    st.caption(
        "Unreachable tokens waste a row of the embedding table and were never trained, or trained on little "
        "(Land & Bartolo 2024, \u201cFishing for Magikarp\u201d). Parts of a character are fine at byte level but "
        "cannot be written as text. Unused: the corpus never needs them."
    )
    state.widget_default("w_var_health_tok", "o200k_base")
    pick, _ = st.columns([1, 2])
    key = pick.selectbox("Examples of", list(reports), format_func=_health_label, key="w_var_health_tok")
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
    }
    tab = ss.get(_TAB) or TABS[0]
    if tab != TABS[0]:
        params["var_tab"] = _TAB_SLUGS.get(tab, "superwords")
    if tab == "Scaffold tokens":
        params["var_tok"] = str(ss.get("w_var_scaffold_tok", "classical"))
        params["var_tau"] = f"{ss.get('w_var_tau', DEFAULT_TAU):g}"
    if tab == "Token health":
        params["var_health"] = str(ss.get("w_var_health_tok", "o200k_base"))
    return params


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
    request = Request(corpus, held, merges, share)
    ss[_REQUEST] = request
    ss["w_var_corpus"], ss["w_var_held"], ss["w_var_merges"], ss[_SHARE] = corpus, held, merges, share
    slug = params.get("var_tab")
    if slug is not None:
        tab = {v: k for k, v in _TAB_SLUGS.items()}.get(slug)
        if tab is None:
            problems.append(f"var_tab={slug[:20]!r} is not one of {', '.join(_TAB_SLUGS.values())}")
        else:
            ss[_TAB] = tab
    if "var_tok" in params:
        if params["var_tok"] in _scaffold_choices():
            ss["w_var_scaffold_tok"] = params["var_tok"]
        else:
            problems.append(f"var_tok={params['var_tok'][:30]!r} is not one of {', '.join(_scaffold_choices())}")
    if "var_tau" in params:
        try:
            tau = float(params["var_tau"])
        except ValueError:
            tau = -1.0
        if tau in TAUS:
            ss["w_var_tau"] = tau
        else:
            problems.append(f"var_tau={params['var_tau'][:20]!r} is not one of {', '.join(f'{t:g}' for t in TAUS)}")
    if "var_health" in params:
        if params["var_health"] in _health_keys():
            ss["w_var_health_tok"] = params["var_health"]
        else:
            problems.append(f"var_health={params['var_health'][:30]!r} is not one of {', '.join(_health_keys())}")
    return problems
