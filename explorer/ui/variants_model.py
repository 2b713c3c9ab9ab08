"""What the Variants page knows and computes, apart from drawing it: its widget and session keys,
the request it trains (:class:`Request`), one tokenizer trained to the budget (:class:`Variant`)
and the three of one request (:class:`Lab`), and the cards, rows, tables and sentences its tabs
show, derived from the engine (:mod:`explorer.ui.variants_view` draws them and trains through the
server's heavy lane; :mod:`explorer.ui.variants_charts` draws the charts). No Streamlit here:
each function takes tokenizers, reports and numbers and gives plain data or HTML, every token
and name escaped, so the page's reasoning is tested without a session.

Data shapes (N merges, t the SuperBPE transition, a whole number of merges; τ PickyBPE's)::

    Request     corpus (a sample's name, or "session": the session's corpus), held-out sample,
                N, t as a share of N in percent, and τ: what the page trains
    Variant     one tokenizer trained to N merges (PickyBPE: to classical's live vocabulary, so
                more merges): the training corpus's tokens after each merge (and the removals
                after it), what it makes of the held-out text, its superword tokens with their
                count in the held-out encoding, most used first; PickyBPE's removals and records
    Lab         the three variants of one Request
"""

from __future__ import annotations

import hashlib
import html
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import islice
from typing import NamedTuple, cast
from urllib.parse import urlencode

from ..analysis.evaluate import Evaluation, evaluate_ids
from ..analysis.health import HealthReport, TokenNote
from ..analysis.scaffold import TokenUse, describe, ios_threshold, is_scaffold
from ..analysis.text import superword_ids
from ..bpe.records import RemovalRecord, StepLog
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from . import render

__all__ = [
    "Keys",
    "Session",
    "SESSION",
    "TRAINED",
    "DEFAULT_CORPUS",
    "DEFAULT_HELD_OUT",
    "MAX_CORPUS_CHARS",
    "MAX_HELD_OUT_CHARS",
    "DEFAULT_MERGES",
    "MIN_MERGES",
    "MAX_MERGES",
    "SHARES",
    "DEFAULT_SHARE",
    "DEFAULT_TAU",
    "TAUS",
    "TABS",
    "TAB_SLUGS",
    "PRESET",
    "SCAFFOLD_ROWS",
    "SUPERWORD_CHIPS",
    "TIMELINE_ROWS",
    "HERE",
    "HEALTH_KINDS",
    "HEALTH_CAPTION",
    "DEFAULT_SCAFFOLD",
    "DEFAULT_HEALTH",
    "Variant",
    "Lab",
    "Request",
    "transition_of",
    "cut",
    "digest",
    "corpus_label",
    "request_from",
    "tau_label",
    "tokens_curve",
    "build_variant",
    "saving",
    "quoted",
    "headlines",
    "describe_request",
    "superword_chips",
    "example_line",
    "both_ways",
    "TimelineRow",
    "timeline",
    "removal_sentence",
    "timeline_rows",
    "timeline_stats",
    "timeline_caption",
    "timeline_start",
    "scaffold_list",
    "scaffold_choices",
    "scaffold_label",
    "own_scaffold_key",
    "scaffold_stats",
    "scaffold_caption",
    "scaffold_rows",
    "picky_removed",
    "removed_chips",
    "playground_link",
    "health_label",
    "not_one_merge_note",
    "health_table",
    "note_row",
    "link_params",
    "tau_or",
    "link_values",
]


class Keys:
    """The Variants page's widget keys, one place for the page and its tests. Their values are a
    contract: saved sessions and shared links restore widgets by them."""

    CORPUS = "w_var_corpus"  # the sidebar's corpus (a sample, or the session's)
    HELD_OUT = "w_var_held"
    MERGES = "w_var_merges"
    SHARE = "w_var_share"  # SuperBPE's transition, in percent of the merges
    PICKY = "w_var_picky"  # PickyBPE's τ, beside it
    TAB = "w_var_tab"
    TL_ONLY = "w_var_tl_only"  # the timeline's "Removals only"
    TL_FROM = "w_var_tl_from"  # the timeline's first merge
    SCAFFOLD_TOKENIZER = "w_var_scaffold_tok"
    TAU = "w_var_tau"  # the Scaffold tab's own τ
    HEALTH_TOKENIZER = "w_var_health_tok"


class Session:
    """What the page keeps in the session beside its widgets."""

    REQUEST = "var_request"  # the Request trained (a widget's change makes a new one)


SESSION = "session"  # the lab's corpus is the session's own (the Corpus page's choice)
TRAINED = "trained"  # the catalog's key of the session's tokenizer (``catalog.TRAINED``)
DEFAULT_CORPUS = "english_tiny_shakespeare.txt"
DEFAULT_HELD_OUT = "english_frankenstein.txt"
MAX_CORPUS_CHARS = 300_000  # about 1-2 s for SuperBPE: the corpus is cut at a line end under this
MAX_HELD_OUT_CHARS = 100_000
DEFAULT_MERGES, MIN_MERGES, MAX_MERGES = 3_000, 100, 10_000
SHARES = tuple(range(0, 101, 10))  # the transition, in percent of the budget
DEFAULT_SHARE = 80
DEFAULT_TAU = 0.1  # PickyBPE's τ when a request names none
TAUS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
TABS = ("Superwords", "PickyBPE timeline", "Scaffold tokens", "Token health")
TAB_SLUGS = {
    "Superwords": "superwords",
    "PickyBPE timeline": "picky",
    "Scaffold tokens": "scaffold",
    "Token health": "health",
}
PRESET = "gpt2"  # byte level, GPT-2's pieces: the pre-tokenizer SuperBPE's authors start from
SCAFFOLD_ROWS = 40
SUPERWORD_CHIPS = 60
TIMELINE_ROWS = 200
# the tokenizers the Scaffold tab offers first: the two trained here
HERE = ("classical", "superbpe")
DEFAULT_SCAFFOLD = HERE[0]  # the Scaffold tab opens on classical BPE (beside PickyBPE's removals)
DEFAULT_HEALTH = "o200k_base"  # the Token health tab's examples open on it


# ---- what is trained -------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    """One tokenizer trained to the budget. ``curve[k]``: the training corpus's tokens after k
    merges (and PickyBPE's removals after merge k); ``superwords``: (id, uses in the held-out
    encoding), most used first, then in the order learned; ``removals``: PickyBPE's, in the
    order made, with ``records`` (its merges) for the timeline."""

    name: str
    tokenizer: Tokenizer
    transition: int | None  # as configured (None: classical); training may end before it
    curve: tuple[int, ...]
    held_out: Evaluation
    superwords: tuple[tuple[int, int], ...]
    removals: tuple[RemovalRecord, ...] = ()
    records: StepLog | None = None  # PickyBPE only: its merges, for the timeline

    @property
    def merges(self) -> int:
        return len(self.curve) - 1


@dataclass(frozen=True)
class Lab:
    """Classical BPE, SuperBPE and PickyBPE on one corpus and vocabulary size."""

    corpus_name: str
    held_out_name: str
    corpus_chars: int
    classical: Variant
    superbpe: Variant
    share: int
    held_out_text: str = ""
    picky: Variant | None = None
    tau: float = DEFAULT_TAU

    @property
    def variants(self) -> tuple[Variant, ...]:
        return (self.classical, self.superbpe) + ((self.picky,) if self.picky is not None else ())


# ---- the request -----------------------------------------------------------------------------
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


def digest(text: str) -> str:
    """A text's short name in the server's memo keys (lone surrogates kept).

    >>> digest("abc")
    'a9993e364706816a'
    """
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def corpus_label(name: str) -> str:
    """How the sidebar shows a corpus choice.

    >>> corpus_label(SESSION), corpus_label("udhr_en.txt")
    ("this session's corpus (Corpus page)", 'udhr_en.txt')
    """
    return "this session's corpus (Corpus page)" if name == SESSION else name


def request_from(values: Mapping[str, object], old: Request) -> Request:
    """The request the widgets' ``values`` (:class:`Keys`) name, ``old``'s where one is missing.

    >>> request_from({Keys.MERGES: 500.0, Keys.PICKY: 0.5}, Request())
    Request(corpus='english_tiny_shakespeare.txt', held_out='english_frankenstein.txt', merges=500, share=80, tau=0.5)
    """
    return Request(
        str(values.get(Keys.CORPUS, old.corpus)),
        str(values.get(Keys.HELD_OUT, old.held_out)),
        int(values.get(Keys.MERGES, old.merges)),  # type: ignore[call-overload]
        int(values.get(Keys.SHARE, old.share)),  # type: ignore[call-overload]
        float(values.get(Keys.PICKY, old.tau)),  # type: ignore[arg-type]
    )


def tau_label(tau: float) -> str:
    """A τ with the paper's IoS threshold T beside it.

    >>> tau_label(0.1), tau_label(0.0)
    ('0.1 (T = 0.91)', '0 (T = 1.00)')
    """
    return f"{tau:g} (T = {ios_threshold(tau):.2f})"


# ---- a trained variant -----------------------------------------------------------------------
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


# ---- the headline ----------------------------------------------------------------------------
def saving(tokens: int, base: int) -> str:
    """A token count against the classical one, as a share.

    >>> saving(368, 400), saving(404, 400), saving(0, 0)
    ('8.0% fewer', '1.0% more', '0.0% fewer')
    """
    change = (tokens - base) / base if base else 0.0
    return f"{abs(change):.1%} {'fewer' if change <= 0 else 'more'}"


def quoted(tok: Tokenizer, token_id: int) -> str:
    """A token in quotes, as a sentence names it (plain text: spaces shown as ·)."""
    return "‘" + render.token_label(tok, token_id) + "’"


def headlines(lab: Lab) -> list[render.Headline]:
    """The answer first: what SuperBPE and PickyBPE save on held-out text against classical
    BPE, how many tokens PickyBPE removed, and how many superword tokens SuperBPE learned (bytes
    per token and Rényi efficiency of the three are the chart beside).

    >>> from explorer import make_config
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
        example = f", e.g. {quoted(lab.superbpe.tokenizer, first)}"
    cards = [
        render.Headline(
            f"SuperBPE at t = {lab.share}%",
            saving(s.tokens, c.tokens),
            f"tokens on held-out text ({lab.held_out_name}): {s.tokens:,} against classical BPE's {c.tokens:,}",
        )
    ]
    if lab.picky is not None:
        p = lab.picky
        cards.append(
            render.Headline(
                f"PickyBPE at τ = {lab.tau:g}",
                saving(p.held_out.tokens, c.tokens),
                f"tokens on held-out text: {p.held_out.tokens:,} against {c.tokens:,}, with as many live tokens "
                f"(IoS threshold T = {ios_threshold(lab.tau):.2f})",
            )
        )
        first_removal = ""
        if p.removals:
            r = p.removals[0]
            first_removal = f"; the first, {quoted(p.tokenizer, r.token_id)} after merge {r.after:,}"
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


def describe_request(lab: Lab, request: Request) -> str:
    """One line under the title (Markdown, user text escaped)."""
    return render.escape(
        f"{lab.corpus_name} (first {lab.corpus_chars:,} characters) · {request.merges:,} merges, "
        f"{lab.classical.tokenizer.vocab.n_live:,} tokens each · GPT-2's pieces, byte level · held out: "
        f"{lab.held_out_name}",
        into="markdown",
    )


# ---- superwords ------------------------------------------------------------------------------
def superword_chips(variant: Variant) -> str:
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


def both_ways(lab: Lab) -> str:
    """One held-out line encoded by each tokenizer, as chips under its name and token count
    ("" when the held-out text has no line long enough)."""
    line = example_line(lab.superbpe.tokenizer, lab.held_out_text, (i for i, _ in lab.superbpe.superwords))
    if not line:
        return ""
    rows = []
    for v in (lab.classical, lab.superbpe):
        ids = v.tokenizer.encode(line)
        rows.append(render.token_strip(v.name, f"{len(ids):,} tokens", render.encoded_chips(v.tokenizer, ids)))
    return render.panel("One held-out line, both ways", "".join(rows))


# ---- PickyBPE's timeline ---------------------------------------------------------------------
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


def removal_sentence(tok: Tokenizer, removal: RemovalRecord, merged: int) -> str:
    """A removal as one sentence (plain text): the merge it followed, what was left of the token
    standing alone, the merge's count and token (``merged``), and the parts it was split into.

    >>> from explorer import make_config, train
    >>> trainer = train("ab abc\\n" * 5, make_config("gpt2", vocab_size=None, num_merges=3, picky=1.0))
    >>> (r,) = trainer.records.all_removals()
    >>> removal_sentence(trainer.tokenizer(), r, trainer.records[r.after - 1].token_id)
    'after merge 3: ‘·ab’ removed — alone 0, inside ‘·abc’ 5 — split into ‘·’ + ‘ab’'
    """
    parts = " + ".join(quoted(tok, i) for i in removal.parts)
    return (
        f"after merge {removal.after:,}: {quoted(tok, removal.token_id)} removed — alone {removal.alone:,}, "
        f"inside {quoted(tok, merged)} {removal.inside:,} — split into {parts}"
    )


def timeline_rows(variant: Variant, rows: list[TimelineRow]) -> str:
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
                f"merge {row.after:,}: {quoted(tok, record.left_id)} + {quoted(tok, record.right_id)} → "
                f"{quoted(tok, record.token_id)} ({record.count:,} times)"
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


def timeline_stats(picky: Variant, tau: float) -> list[tuple[str, str]]:
    """The strip over PickyBPE's timeline: its merges, removals, live tokens and threshold."""
    return [
        ("merges", f"{picky.merges:,}"),
        ("removals", f"{len(picky.removals):,}"),
        ("live tokens (as classical BPE)", f"{picky.tokenizer.vocab.n_live:,}"),
        ("IoS threshold T = 1 / (1 + τ)", f"{ios_threshold(tau):.3f}"),
    ]


def timeline_caption(tau: float) -> str:
    """What the timeline shows, under its strip."""
    return (
        f"After each merge PickyBPE checks the two tokens it merged: one whose occurrences left standing alone are "
        f"fewer than τ = {tau:g} times the merge's count is removed, each occurrence split into its parts "
        "(Chizhov et al. 2024). A removal is a step of its own (✂, yellow); a removed token can come back when a "
        "later merge makes it again. Up to "
        f"{TIMELINE_ROWS} rows from the merge chosen."
    )


def timeline_start(start: int, merges: int) -> int:
    """The timeline's first merge kept among the merges made (another τ may have made fewer).

    >>> timeline_start(900, 500), timeline_start(0, 500), timeline_start(7, 500), timeline_start(3, 0)
    (500, 1, 7, 1)
    """
    return min(max(1, start), max(1, merges))


# ---- scaffold tokens -------------------------------------------------------------------------
def scaffold_list(uses: Iterable[TokenUse], tau: float) -> list[TokenUse]:
    """The scaffold tokens under τ, in ``scaffold()``'s order (highest IoS first, then most
    merges inside, then id), from uses counted once: moving τ recounts nothing.

    >>> from explorer.analysis.scaffold import Feed
    >>> uses = [TokenUse(5, 1, (Feed(7, 2, 40, 1),)), TokenUse(6, 3, (Feed(8, 3, 9, 3),)), TokenUse(9, 0, ())]
    >>> [u.id for u in scaffold_list(uses, 0.1)], [u.id for u in scaffold_list(uses, 0.5)], scaffold_list(uses, 0)
    ([5], [5, 6], [])
    """
    return sorted((u for u in uses if is_scaffold(u, tau)), key=lambda u: (-u.ios, -u.inside, u.id))


def scaffold_choices(tables: Iterable[str]) -> list[str]:
    """The Scaffold tab's tokenizers: the lab's own, the session's, then the catalog's ``tables``
    (bundled, imported).

    >>> scaffold_choices(["gpt2"])
    ['classical', 'superbpe', 'trained', 'gpt2']
    """
    return [*HERE, TRAINED, *tables]


_SCAFFOLD_LABELS = {
    "classical": "classical BPE trained here",
    "superbpe": "SuperBPE trained here",
    TRAINED: "this session's tokenizer (Train page)",
}


def scaffold_label(key: str, label: Callable[[str], str]) -> str:
    """How the Scaffold tab's picker names a tokenizer: ``label`` (the catalog's) for a table.

    >>> scaffold_label("superbpe", str.upper), scaffold_label("gpt2", str.upper)
    ('SuperBPE trained here', 'GPT2')
    """
    return _SCAFFOLD_LABELS.get(key) or label(key)


def own_scaffold_key(key: str, corpus: str, request: Request) -> str:
    """The memo key of a lab tokenizer's counts on its corpus (classical BPE does not depend on
    the transition, so moving it counts nothing again).

    >>> own_scaffold_key("classical", "abc", Request()), own_scaffold_key("superbpe", "abc", Request())
    ('classical:a9993e364706816a:3000', 'superbpe:a9993e364706816a:3000:2400')
    """
    if key == "classical":
        return f"classical:{digest(corpus)}:{request.merges}"
    return f"{key}:{digest(corpus)}:{request.merges}:{request.transition}"


def scaffold_stats(
    picked: Sequence[TokenUse], uses: int, tau: float, *, both: int | None = None, picky_tau: float = DEFAULT_TAU
) -> list[tuple[str, str]]:
    """The strip over the scaffold list: how many at this τ, of how many merged tokens used,
    the threshold, and (``both``: classical BPE beside PickyBPE) how many PickyBPE removed too."""
    stats = [
        ("scaffold tokens at this τ", f"{len(picked):,}"),
        ("merged tokens the text uses or merges", f"{uses:,}"),
        ("IoS threshold 1 / (1 + τ)", f"{ios_threshold(tau):.3f}"),
    ]
    if both is not None:
        stats.append((f"of them PickyBPE (τ = {picky_tau:g}) removed too", f"{both:,}"))
    return stats


def scaffold_caption(where: str) -> str:
    """What the scaffold list is, measured on ``where`` (Markdown, ``where`` escaped)."""
    return render.escape(
        f"Measured on {where}. A scaffold token exists on the way to longer ones: once they are made it "
        "seldom stands alone (PickyBPE, Chizhov et al. 2024; Scaffold-BPE, Lian et al. 2024). PickyBPE "
        "removes them while training: its removals are on the PickyBPE timeline tab.",
        into="markdown",
    )


def scaffold_rows(tok: Tokenizer, picked: list[TokenUse], removed: set[int] | None = None) -> str:
    """The scaffold tokens as an HTML table: token, alone, IoS, the lineage sentence, and with
    ``removed`` (ids PickyBPE removed too) a column marking them."""

    def mark(i: int) -> str:
        if removed is None:
            return ""
        return '<td class="var-both">✂ removed</td>' if i in removed else "<td></td>"

    rows = "".join(
        f'<tr data-id="{u.id}"><td><span class="bpe-chip">{render.token_label(tok, u.id, into="html")}</span></td>'
        f'<td class="num">{u.alone:,}</td><td class="num">{u.inside:,}</td><td class="num">{u.ios:.3f}</td>'
        f"{mark(u.id)}<td>{html.escape(describe(tok, u, show=partial(quoted, tok), limit=2))}</td></tr>"
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


def removed_chips(tok: Tokenizer, tau: float, removed: set[int], both: set[int]) -> str:
    """PickyBPE's removed tokens (at ``tau``) as chips, those the scaffold list calls scaffold
    too first (marked ✂)."""
    ids = sorted(removed, key=lambda i: (i not in both, i))
    chips = "".join(
        f'<span class="bpe-chip{" var-both" if i in both else ""}" title="{html.escape(render.token_title(tok, i), quote=True)}">'
        f"{'✂ ' if i in both else ''}{render.token_label(tok, i, into='html')}</span> "
        for i in ids[:SUPERWORD_CHIPS]
    )
    more = len(ids) - SUPERWORD_CHIPS
    tail = f'<div class="bpe-freq">{more:,} more not shown</div>' if more > 0 else ""
    return render.panel(
        f"Removed by PickyBPE at τ = {tau:g} ({len(removed):,} tokens classical BPE also has)",
        f'<div class="bpe-row bpe-text var-removed" style="line-height:1.9">{chips}</div>{tail}',
        f"Trained on the same corpus to the same vocabulary size; ✂: a scaffold token above too, at this τ "
        f"({len(both):,}). Move either τ to compare.",
    )


# ---- token health ----------------------------------------------------------------------------
HEALTH_KINDS = (
    ("unreachable", "Unreachable: encoding the token's own text never gives it"),
    ("partial_utf8", "Part of a UTF-8 character: its bytes are no whole character"),
    ("unused", "Never used on the corpus"),
)
HEALTH_CAPTION = (
    "Unreachable tokens waste a row of the embedding table and were never trained, or trained on little "
    "(Land & Bartolo 2024, \u201cFishing for Magikarp\u201d). Parts of a character are fine at byte level but "
    "cannot be written as text. Unused: the corpus never needs them."
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


def health_label(key: str, label: Callable[[str], str], *, live_view: int | None = None) -> str:
    """How the health table names a tokenizer: the session's at the merge it is viewed at
    (``live_view``; none without a trainer), a table by ``label`` (the catalog's).

    >>> health_label(TRAINED, str.upper, live_view=1200), health_label(TRAINED, str.upper), health_label("gpt2", str.upper)
    ("this session's (merge 1,200)", "this session's", 'GPT2')
    """
    if key != TRAINED:
        return label(key)
    return "this session's" + (f" (merge {live_view:,})" if live_view is not None else "")


def not_one_merge_note(label: str, report: HealthReport) -> str:
    """What a rank table's tokens that are not one merge of two lower-ranked tokens are.

    >>> print(not_one_merge_note("t", HealthReport(9, (7,), (), None, 0, whole_piece_only=(5, 6), never_made=(7,))))
    t: 3 tokens are not one merge of two lower-ranked tokens (a rank table need not be made by merges): 2 are given only for a piece that is the token whole, 1 never (counted as unreachable)
    """
    n = len(report.whole_piece_only) + len(report.never_made)
    return (
        f"{label}: {n:,} tokens are not one merge of two lower-ranked tokens (a rank table need not be made "
        f"by merges): {len(report.whole_piece_only):,} are given only for a piece that is the token whole, "
        f"{len(report.never_made):,} never (counted as unreachable)"
    )


def health_table(reports: Mapping[str, HealthReport], labels: Mapping[str, str], corpus_name: str) -> str:
    """Each tokenizer's health counts as an HTML table, a row per report under its label (names
    escaped); the unused share "–" without a corpus scanned."""
    head = (
        "<tr><th>tokenizer</th><th>tokens</th><th>unreachable</th><th>part of a UTF-8 character</th>"
        f'<th title="{html.escape(corpus_name, quote=True)}">unused on the corpus</th></tr>'
    )
    rows = "".join(
        f'<tr data-name="{html.escape(key, quote=True)}"><td>{html.escape(labels[key])}</td>'
        f'<td class="num">{r.tokens:,}</td><td class="num">{len(r.unreachable):,}</td>'
        f'<td class="num">{len(r.partial_utf8):,}</td>'
        f'<td class="num">{"–" if r.unused is None else f"{len(r.unused):,} ({len(r.unused) / r.tokens:.0%})"}</td></tr>'
        for key, r in reports.items()
    )
    return f'<div class="bpe-scroll"><table class="bpe-cmp var-health">{head}{rows}</table></div>'


def note_row(tok: Tokenizer, key: str, note: TokenNote, training: dict[str, str]) -> str:
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


# ---- the page's link -------------------------------------------------------------------------
# A shared link or a saved session names the page's request and view by these params: a contract
# (their names and values never change), read back by :func:`link_values`.
def link_params(values: Mapping[str, object]) -> dict[str, str]:
    """The request, the tab open and its settings as URL params, from the session's ``values``
    (:class:`Keys`, :class:`Session`).

    >>> link_params({Keys.TAB: "Scaffold tokens", Keys.TAU: 0.5})
    {'var_corpus': 'english_tiny_shakespeare.txt', 'var_held': 'english_frankenstein.txt', 'var_merges': '3000', 'var_t': '80', 'var_picky': '0.1', 'var_tab': 'scaffold', 'var_tok': 'classical', 'var_tau': '0.5'}
    """
    req = cast(Request, values.get(Session.REQUEST) or Request())
    params = {
        "var_corpus": req.corpus,
        "var_held": req.held_out,
        "var_merges": str(req.merges),
        "var_t": str(req.share),
        "var_picky": f"{req.tau:g}",
    }
    tab = values.get(Keys.TAB) or TABS[0]
    if tab != TABS[0]:
        params["var_tab"] = TAB_SLUGS.get(str(tab), "superwords")
    if tab == "PickyBPE timeline" and values.get(Keys.TL_ONLY):
        params["var_removals"] = "1"
    if tab == "Scaffold tokens":
        params["var_tok"] = str(values.get(Keys.SCAFFOLD_TOKENIZER, DEFAULT_SCAFFOLD))
        params["var_tau"] = f"{values.get(Keys.TAU, DEFAULT_TAU):g}"
    if tab == "Token health":
        params["var_health"] = str(values.get(Keys.HEALTH_TOKENIZER, DEFAULT_HEALTH))
    return params


def tau_or(params: Mapping[str, str], key: str, problems: list[str], default: float) -> float:
    """A τ the link names, one of the sliders' (``default``, and a line in ``problems``, otherwise).

    >>> problems = []
    >>> tau_or({"t": "0.5"}, "t", problems, 0.1), tau_or({"t": "x"}, "t", problems, 0.1), tau_or({}, "t", problems, 0.1)
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


def link_values(
    params: Mapping[str, str],
    *,
    samples: Sequence[str],
    count: Callable[..., int],
    restore: Callable[[str, str], str],
) -> tuple[dict[str, object], list[str]]:
    """The session values (:class:`Keys`, :class:`Session`) a link's params set, and what it had
    to leave out, one sentence each: none for a link without a ``var_`` param. ``samples``: the
    bundled samples' names; ``count``: reads a whole number from the link as
    ``links.count_or(params, key, problems, low=, high=, default=)`` does; ``restore(param,
    value)``: a tokenizer picker's value made ready (an import read back from the store), an
    :class:`ExplorerError` saying why not."""
    values: dict[str, object] = {}
    problems: list[str] = []
    if not any(k.startswith("var_") for k in params):
        return values, problems
    d = Request()
    corpus = params.get("var_corpus", d.corpus)
    if corpus != SESSION and corpus not in samples:
        problems.append(f"var_corpus={corpus[:40]!r} is not a bundled sample")
        corpus = d.corpus
    held = params.get("var_held", d.held_out)
    if held not in samples:
        problems.append(f"var_held={held[:40]!r} is not a bundled sample")
        held = d.held_out
    merges = count(params, "var_merges", problems, low=MIN_MERGES, high=MAX_MERGES, default=d.merges)
    share = count(params, "var_t", problems, low=0, high=100, default=d.share)
    if share not in SHARES:
        problems.append(f"var_t={share} is not a multiple of 10")
        share = d.share
    picky = tau_or(params, "var_picky", problems, d.tau)
    values[Session.REQUEST] = Request(corpus, held, merges, share, picky)
    values |= {Keys.CORPUS: corpus, Keys.HELD_OUT: held, Keys.MERGES: merges, Keys.SHARE: share, Keys.PICKY: picky}
    if params.get("var_removals") == "1":
        values[Keys.TL_ONLY] = True
    slug = params.get("var_tab")
    if slug is not None:
        tab = {v: k for k, v in TAB_SLUGS.items()}.get(slug)
        if tab is None:
            problems.append(f"var_tab={slug[:20]!r} is not one of {', '.join(TAB_SLUGS.values())}")
        else:
            values[Keys.TAB] = tab
    for param, widget in (("var_tok", Keys.SCAFFOLD_TOKENIZER), ("var_health", Keys.HEALTH_TOKENIZER)):
        if param in params:
            try:
                values[widget] = restore(param, params[param])
            except ExplorerError as err:
                problems.append(f"{param}: {err}")
    if "var_tau" in params:
        values[Keys.TAU] = tau_or(params, "var_tau", problems, DEFAULT_TAU)
    return values, problems
