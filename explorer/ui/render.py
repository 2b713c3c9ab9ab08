"""Tokens and pieces as HTML chips. Every string from a corpus or a user goes through
``html.escape`` first: a corpus may hold ``<script>`` and it must show as text."""

from __future__ import annotations

import html
import string
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ..analysis.lineage import KeywordInContext
from ..analysis.text import utf8_runs
from ..bpe.tokenizer import Tokenizer
from ..stages.units import display_to_bytes

__all__ = [
    "APP_CSS",
    "visible",
    "chips",
    "piece_preview",
    "word_row",
    "token_label",
    "token_title",
    "encoded_chips",
    "kwic_rows",
    "md_text",
    "direction",
    "isolate",
    "user_text",
    "in_reading_order",
    "pair_rows",
    "TokenStyle",
    "PLAIN",
    "token_runs",
    "token_text",
    "Into",
    "escape",
    "style_of",
    "ComparisonRow",
    "comparison_table",
    "token_strip",
    "Headline",
    "headline_cards",
    "language_grid",
    "stat_strip",
    "bar_rows",
    "choices_help",
    "lineage_tree",
    "panel",
    "caption",
]

# Colour-blind-safe pastel cycle; neighbouring chips always differ.
_PALETTE = ("#dbeafe", "#fde68a", "#d1fae5", "#fce7f3", "#e0e7ff", "#fee2e2", "#ccfbf1", "#f3e8ff")

# The app's styles, sent once per page run. A presenter's page first: less empty space above the
# title and at the sides, so each page's answer fits one 1280x720 screen with the sidebar open.
APP_CSS = """
<style>
.stMainBlockContainer{padding-top:4rem;padding-bottom:2rem;padding-left:2rem;padding-right:2rem;}
.stMainBlockContainer h1{font-size:1.7rem;padding:0 0 .15rem 0;}
.stMainBlockContainer h2{font-size:1.35rem;padding:.5rem 0 .2rem 0;}
.stMainBlockContainer h3{font-size:1.15rem;padding:.4rem 0 .15rem 0;}
.bpe-row{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:1.05rem;line-height:2.1;}
.bpe-chip{display:inline-block;padding:0 .28em;margin:0 1px;border-radius:4px;border:1px solid #94a3b8;white-space:pre;color:#0f172a;}
.bpe-new{outline:3px solid #dc2626;outline-offset:1px;}
.bpe-unk{background:#fecaca!important;border-color:#dc2626;}
.bpe-word{display:inline-block;min-width:9em;color:#334155;}
.bpe-freq{color:#64748b;font-size:.85rem;margin-left:.5em;}
.bpe-changed{background:#fef9c3;border-radius:6px;}
.bpe-hist,.bpe-pairs{border-collapse:collapse;width:100%;font-size:1rem;}
.bpe-hist th,.bpe-pairs th{text-align:left;color:#475569;font-weight:600;border-bottom:2px solid #cbd5e1;padding:3px 6px;white-space:nowrap;}
.bpe-hist td,.bpe-pairs td{border-bottom:1px solid #e2e8f0;padding:3px 6px;font-variant-numeric:tabular-nums;}
.bpe-hist td.num,.bpe-pairs td.num{text-align:right;white-space:nowrap;}
.bpe-hist tr.bpe-now td{background:#bfdbfe;font-weight:600;}
.bpe-hist tr.bpe-ahead td{color:#94a3b8;}
.bpe-pairs tr.bpe-next td{background:#bbf7d0;font-weight:600;}
.bpe-pairs tr.bpe-tied td{background:#fef08a;}
.bpe-hex{font-size:.8em;color:#7c2d12;background:#ffedd5;border-radius:3px;padding:0 .15em;}
.bpe-more{font-size:.8em;color:#64748b;}
.bpe-special{background:#1e293b!important;color:#f8fafc;border-color:#0f172a;}
.bpe-text{white-space:pre-wrap;word-break:break-all;}
.bpe-kwic{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.95rem;white-space:pre;overflow-x:auto;}
.bpe-kwic .n{display:inline-block;min-width:6em;color:#94a3b8;}
.bpe-kwic .l{display:inline-block;min-width:24em;text-align:end;color:#475569;}
.bpe-kwic mark{background:#fde68a;padding:0 .1em;}
.bpe-scroll{max-width:100%;overflow-x:auto;}
.bpe-cmp{border-collapse:collapse;font-size:1rem;margin-bottom:.4rem;}
.bpe-cmp th{text-align:left;color:#475569;font-weight:600;border-bottom:2px solid #cbd5e1;padding:2px 10px 2px 0;white-space:nowrap;}
.bpe-cmp td{border-bottom:1px solid #e2e8f0;padding:2px 10px 2px 0;font-variant-numeric:tabular-nums;}
.bpe-cmp td.num{text-align:right;}
.bpe-cmp tr.bpe-best td{font-weight:700;}
.bpe-strip{margin:.1rem 0 .5rem 0;}
.bpe-cards{display:flex;flex-wrap:wrap;gap:.6rem;margin:.2rem 0 .4rem 0;}
.bpe-card{flex:1 1 12rem;border:1px solid #cbd5e1;border-radius:8px;padding:.35rem .7rem;background:#f8fafc;}
.bpe-card-panel{color:#475569;font-size:.85rem;font-weight:600;}
.bpe-card-number{font-size:1.6rem;font-weight:700;color:#0f172a;line-height:1.2;}
.bpe-card-text{color:#334155;font-size:.85rem;line-height:1.3;}
.bpe-stats{display:flex;flex-wrap:wrap;gap:.4rem 1.6rem;margin:.2rem 0 .6rem 0;}
.bpe-stat-value{font-size:1.6rem;font-weight:600;color:#0f172a;line-height:1.2;font-variant-numeric:tabular-nums;white-space:nowrap;}
.bpe-stat-label{color:#475569;font-size:.85rem;}
.bpe-bars{border-collapse:collapse;width:100%;font-size:.9rem;}
.bpe-bars caption{caption-side:top;text-align:left;font-weight:600;padding:.2rem 0 .3rem 0;color:#0f172a;}
.bpe-bars th{text-align:left;font-weight:500;color:#475569;font-size:.8rem;padding:0 .5rem .1rem 0;}
.bpe-bars td{padding:.05rem .5rem .05rem 0;line-height:1.25;}
.bpe-bar-word{white-space:pre;max-width:16rem;overflow:hidden;text-overflow:ellipsis;}
.bpe-bar-cell{width:70%;}
.bpe-bar{display:block;height:.95rem;background:#2563eb;border-radius:2px;min-width:1px;}
.bpe-bars th:last-child{text-align:right;padding-right:0;}
.bpe-bar-count{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap;}
.bpe-lin{padding:.2rem 0 .6rem 0;}
.bpe-lin ul{display:flex;justify-content:center;margin:0;padding:14px 0 0 0;position:relative;}
.bpe-lin > ul{padding-top:0;width:max-content;min-width:100%;}
.bpe-lin li{list-style:none;text-align:center;position:relative;padding:14px 3px 0 3px;margin:0;}
.bpe-lin li::before,.bpe-lin li::after{content:"";position:absolute;top:0;right:50%;width:50%;height:14px;border-top:1px solid #94a3b8;}
.bpe-lin li::after{right:auto;left:50%;border-left:1px solid #94a3b8;}
.bpe-lin li:only-child{padding-top:0;}
.bpe-lin li:only-child::before,.bpe-lin li:only-child::after{display:none;}
.bpe-lin li:first-child::before,.bpe-lin li:last-child::after{border:0 none;}
.bpe-lin li:last-child::before{border-right:1px solid #94a3b8;}
.bpe-lin ul ul::before{content:"";position:absolute;top:0;left:50%;height:14px;border-left:1px solid #94a3b8;}
.bpe-lin .bpe-chip{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:1rem;background:#dbeafe;}
.bpe-lin .bpe-lin-base{background:#fde68a;}
.bpe-lin-meta{color:#64748b;font-size:.78rem;white-space:nowrap;}
.bpe-panel{margin:0 0 .4rem 0;}
.bpe-h{font-size:1.15rem;font-weight:600;color:#31333f;margin:.2rem 0 .35rem 0;padding:0;line-height:1.4;}
.bpe-cap{color:#64748b;font-size:.875rem;margin:.35rem 0 0 0;line-height:1.4;}
.bpe-note{color:#92400e;background:#fef3c7;border-radius:6px;padding:.3rem .6rem;margin:.4rem 0 0 0;font-size:.9rem;}
.bpe-done{color:#166534;background:#dcfce7;border-radius:6px;padding:.5rem .8rem;margin:.2rem 0;}
/* the Train page's live area (live_view) */
.lv-row{display:grid;gap:1rem;margin-bottom:.4rem;}
@media (max-width:700px){.lv-row{grid-template-columns:minmax(0,1fr)!important;}}
.lv-cell{min-width:0;}
.lc-grid-root{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:.4rem 1.2rem;}
.lc-box{position:relative;min-width:0;}
.lc-box svg{display:block;font-family:"Source Sans Pro",sans-serif;font-size:12px;}
.lc-title{font-size:14px;font-weight:600;fill:#0f172a;}
.lc-axis text{fill:#475569;font-size:12px;}
.lc-label{fill:#334155;font-size:12px;}
.lc-legend{font-size:12px;font-weight:600;}
.lc-grid{stroke:#e2e8f0;}
.lc-base{stroke:#94a3b8;}
.lc-shown{stroke:#dc2626;stroke-dasharray:4 3;stroke-width:1.5;}
.lc-hover{stroke:#475569;stroke-width:1.5;}
.lc-tip{display:none;position:absolute;top:22px;background:#0f172aee;color:#f8fafc;font-size:12px;padding:2px 6px;
        border-radius:4px;white-space:nowrap;pointer-events:none;}
/* the stepper (stepper.py): its controls, status, sentence; the panels as the live area's */
.sp-bar{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem;margin:0 0 .35rem 0;}
.sp-btn{font:inherit;font-size:1rem;line-height:1.6;padding:.25rem .75rem;border-radius:.5rem;border:1px solid #cbd5e1;
        background:#fff;color:#31333f;cursor:pointer;min-height:2.5rem;}
.sp-btn:hover:not(:disabled){border-color:#ff4b4b;color:#ff4b4b;}
.sp-btn:disabled{color:#94a3b8;cursor:not-allowed;}
.sp-primary{background:#ff4b4b;border-color:#ff4b4b;color:#fff;}
.sp-primary:hover:not(:disabled){background:#e03e3e;color:#fff;}
.sp-primary:disabled{background:#fecaca;border-color:#fecaca;color:#fff;}
.sp-speed{font:inherit;font-size:1rem;padding:.3rem .4rem;border-radius:.5rem;border:1px solid #cbd5e1;min-height:2.5rem;background:#fff;}
.sp-slider{flex:1 1 14rem;min-width:10rem;accent-color:#ff4b4b;height:2rem;}
.sp-root :focus-visible{outline:3px solid #1d4ed8;outline-offset:2px;}
.sp-status{font-size:1rem;margin:.1rem 0 .35rem 0;font-variant-numeric:tabular-nums;}
.sp-sentence{border-radius:.5rem;padding:.6rem .9rem;margin:0 0 .6rem 0;font-size:1rem;line-height:1.5;}
.sp-info{background:#e0f2fe;color:#0c4a6e;}
.sp-warning{background:#fef9c3;color:#713f12;}
/* read by a screen reader, not drawn: a stepper's sentence that the caller's panels draw (Fairness:
   both sides' sentences), a header that the table's layout says (the bar list's bar column) */
.sp-hidden,.bpe-sr{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0;}
.sp-waiting .sp-panels,.sp-waiting .sp-sentence{opacity:.45;}
.bpe-grid-title{color:#475569;font-weight:600;font-size:.9rem;margin-top:.3rem;}
.bpe-strip-head{color:#334155;font-size:.95rem;}
</style>
"""


_MD_SPECIAL = frozenset(string.punctuation)


def md_text(text: str) -> str:
    """User text (a token, a word, a file name) made safe to put inside Markdown that Streamlit
    renders (captions, info boxes): every ASCII punctuation mark is backslash-escaped, so
    ``*``, `````, ``$`` (LaTeX), ``[..](..)``, ``:emoji:`` and ``<tag>`` all show as typed.

    >>> print(md_text("**a** `b` $x$ [l](javascript:x) :red[c]"))
    \\*\\*a\\*\\* \\`b\\` \\$x\\$ \\[l\\]\\(javascript\\:x\\) \\:red\\[c\\]
    """
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in text)


def visible(text: str) -> str:
    """Make whitespace visible so a chip of spaces or a newline can be seen.

    >>> visible("a b\\n\\t")
    'a·b↵→'
    """
    return text.replace(" ", "·").replace("\n", "↵").replace("\t", "→").replace("\r", "␍")


# ---- one rule for showing a token ----------------------------------------------------------
@dataclass(frozen=True)
class TokenStyle:
    """How the page writes tokens: a viewing setting, nothing is retrained.

    ``byte_level``: the strings are byte-level tokens as a vocabulary writes them (GPT-2's
    stand-in characters, one per byte: ``Ġt`` is `` t``); they are shown as the text their bytes
    spell, and bytes that are only part of a character as hex. ``gpt2_chars``: show them as the
    vocabulary writes them instead (seed 003 prints them so). ``show_ws``: a space, newline and
    tab as · ↵ →."""

    byte_level: bool = False
    gpt2_chars: bool = False
    show_ws: bool = True


PLAIN = TokenStyle()  # text as it is (characters, pieces, char-level tokens), whitespace visible


def style_of(unit: str, *, gpt2_chars: bool = False, show_ws: bool = True) -> TokenStyle:
    """The style for a tokenizer's or trainer's unit (``config.unit``).

    >>> style_of("byte").byte_level, style_of("char").byte_level
    (True, False)
    """
    return TokenStyle(byte_level=unit == "byte", gpt2_chars=gpt2_chars, show_ws=show_ws)


def token_runs(token: str, style: TokenStyle = PLAIN) -> list[tuple[str, bool]]:
    """A token as runs of (text, True) and (hex bytes, False): the one rule every panel follows.
    A byte-level token whose bytes are whole UTF-8 characters reads as those characters, in
    any script; bytes that are only part of a character are given in hex.

    >>> byte = TokenStyle(byte_level=True)
    >>> token_runs("Ġà¤¬", byte), token_runs("à¤", byte)
    ([('·ब', True)], [('e0 a4', False)])
    >>> token_runs("à¤¦à¥ĩà¤µà¤", byte)
    [('देव', True), ('e0 a4', False)]
    >>> token_runs("Ġt", TokenStyle(byte_level=True, gpt2_chars=True)), token_runs("low</w>")
    ([('Ġt', True)], [('low</w>', True)])
    """
    data = None
    if style.byte_level and not style.gpt2_chars:
        try:
            data = display_to_bytes(token)
        except KeyError:  # not a byte-level string (a special token written outside GPT-2's table)
            pass
    if data is None:
        return [(visible(token) if style.show_ws else token, True)]
    # utf8_runs pairs text with True and bytes with False: the run's type tells which
    return [
        ((visible(run) if style.show_ws else run), True) if isinstance(run, str) else (_hex(run), False)
        for run, _ in utf8_runs(data)
    ]


# where a page puts text: st.html, Streamlit's Markdown (captions, buttons, boxes), or a widget
# that shows text as it is (a table's cell, a picker's option)
Into = Literal["html", "markdown", "text"]


def escape(text: str, *, into: Into) -> str:
    """User text (a token, a word, a name) made safe for where a page puts it: ``html.escape``
    for st.html, :func:`md_text` for Markdown, nothing for a widget that shows text as it is.

    >>> print(escape("<b>$x$</b>", into="html"), escape("<b>$x$</b>", into="markdown"), escape("<b>$x$</b>", into="text"))
    &lt;b&gt;$x$&lt;/b&gt; \\<b\\>\\$x\\$\\<\\/b\\> <b>$x$</b>
    """
    if into == "html":
        return html.escape(text)
    return md_text(text) if into == "markdown" else text


# ---- text that may run right to left ------------------------------------------------------------
# A token or a name in Arabic or Hebrew, set in an English sentence, takes the punctuation next to
# it into its own direction: "‘و’ + ‘ن’ → ‘ون’" was drawn "ون → ن + و". Each such text is set
# apart (isolated): in HTML a <bdi>, in Markdown and plain text Unicode's isolates (LRI/RLI/FSI
# ... PDI), which are characters, not markup, so escaping is unchanged and they work in a
# button's label, a table's cell and a picker's option alike. The sentence around it then reads
# in its own order (left to right), the text inside in its own.
LRI, RLI, FSI, PDI = "\u2066", "\u2067", "\u2068", "\u2069"
LRM, RLM = "\u200e", "\u200f"
Direction = Literal["ltr", "rtl"]
# bidi classes of the characters that can reorder what is around them: right-to-left letters,
# Arabic digits and the explicit controls (an embedding or isolate opened in a token would spill)
_REORDERING = frozenset({"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
_OPENERS = frozenset({"LRI", "RLI", "FSI"})


def direction(text: str) -> Direction | None:
    """The direction of a text's first strong letter (as Unicode's rule for a paragraph's, P2);
    None for a text of none (digits, punctuation, ·). Bytes written in hex (``⟨d9⟩``, the
    one token-display rule) are not text and have no direction.

    >>> direction("سلام world"), direction("·world"), direction("⟨d9⟩ש"), direction("12 ·")
    ('rtl', 'ltr', 'rtl', None)
    """
    in_hex = False
    for c in text:
        if c == "⟨" or c == "⟩":
            in_hex = c == "⟨"
            continue
        kind = "" if in_hex else unicodedata.bidirectional(c)
        if kind == "L":
            return "ltr"
        if kind in ("R", "AL"):
            return "rtl"
    return None


def _reorders(text: str) -> bool:
    return any(unicodedata.bidirectional(c) in _REORDERING for c in text)


def _balanced(text: str) -> str:
    """A text whose isolates stay inside it: a closing PDI with no opener before it is dropped
    (it would close the isolate around the text), an isolate left open is closed.

    >>> [hex(ord(c)) for c in _balanced("a\\u2069b\\u2067c")]
    ['0x61', '0x62', '0x2067', '0x63', '0x2069']
    """
    out, open_ = [], 0
    for c in text:
        kind = unicodedata.bidirectional(c)
        if kind == "PDI":
            if not open_:
                continue
            open_ -= 1
        elif kind in _OPENERS:
            open_ += 1
        out.append(c)
    return "".join(out) + PDI * open_


def _set_apart(written: str, text: str, *, into: Into) -> str:
    """``written`` (``text`` as written for ``into``) isolated when ``text`` may reorder the
    sentence around it; the isolate takes the direction of the text's first letter."""
    if not _reorders(text):
        return written
    way = direction(text)
    if into == "html":
        return f'<bdi dir="{way}">{written}</bdi>' if way else f"<bdi>{written}</bdi>"
    return {"ltr": LRI, "rtl": RLI, None: FSI}[way] + written + PDI


def isolate(text: str, *, into: Into) -> str:
    """A text that is already safe for ``into`` (escaped, or made by the app) set apart from the
    sentence around it when it may reorder it (:func:`_reorders`): Arabic and Hebrew letters,
    Arabic digits, bidi controls. Other text comes back as it is.

    >>> isolate("abc", into="text"), isolate("ون", into="text"), isolate("ون", into="html")
    ('abc', '\\u2067ون\\u2069', '<bdi dir="rtl">ون</bdi>')
    """
    return _set_apart(_balanced(text), text, into=into)


def user_text(text: str, *, into: Into) -> str:
    """Text from a user or a corpus (a word, a name, a sentence, a file's name) to set in a
    sentence of the page: escaped for ``into`` (:func:`escape`) and set apart when it may run
    right to left (:func:`isolate`).

    >>> user_text("<ون>", into="html"), user_text("*ون*", into="markdown"), user_text("Ana", into="markdown")
    ('<bdi dir="rtl">&lt;ون&gt;</bdi>', '\\u2067\\\\*ون\\\\*\\u2069', 'Ana')
    """
    text = _balanced(text)
    return _set_apart(escape(text, into=into), text, into=into)


def _ordered(parts: Sequence[tuple[str, Direction | None]], *, sep: str, into: Into, block: bool = False) -> str:
    """Pieces written for ``into`` (chips, tokens), each with its text's direction, in a row read
    as the text they stand for reads: a row with a right-to-left piece ties each piece to its
    direction with a mark on either side (to the browser a chip is one neutral object, which
    would otherwise follow its neighbours) and takes the direction of its first piece that has
    one, so an Arabic word's tokens run right to left and a Latin word inside Arabic text left
    to right. A row without such a piece is written as it is. ``block``: the caller puts the
    row's direction on its own element (an HTML row then comes back without a wrapper)."""
    if len(parts) < 2 or not any(way == "rtl" for _, way in parts):  # one piece has no order
        return sep.join(p for p, _ in parts)
    mark = {"ltr": LRM, "rtl": RLM, None: ""}
    body = sep.join(f"{mark[way]}{p}{mark[way]}" for p, way in parts)
    if into == "html":
        return body if block else f'<span class="bpe-seq" dir="{_row_direction(parts)}">{body}</span>'
    return (RLI if _row_direction(parts) == "rtl" else LRI) + body + PDI


def _row_direction(parts: Sequence[tuple[str, Direction | None]]) -> Direction:
    return next((way for _, way in parts if way), "ltr")


def in_reading_order(items: Sequence[str], *, sep: str = " | ", into: Into = "text") -> str:
    """Tokens of one text (a segmentation), each already written by :func:`token_text` or
    :func:`token_label`, joined by ``sep`` in the order a reader of that text reads them: the
    tokens of an Arabic or Hebrew word right to left, of a Latin word left to right (see
    :func:`_ordered`). For Markdown or a plain-text cell; chips do the same in HTML.

    >>> in_reading_order(["lo", "w"])
    'lo | w'
    >>> [hex(ord(c)) for c in in_reading_order(["ש", "ל"], sep="|")]
    ['0x2067', '0x200f', '0x5e9', '0x200f', '0x7c', '0x200f', '0x5dc', '0x200f', '0x2069']
    """
    return _ordered([(item, direction(item)) for item in items], sep=sep, into=into)


# Characters of a token a page shows: byte-level BPE that merges pairs met once joins tokens of
# thousands (a whole text, at the end); past this, a token is cut and says by how much.
TOKEN_SHOWN = 200


def token_text(token: str, style: TokenStyle = PLAIN, *, into: Into = "text") -> str:
    """A token as every page shows it, the one helper: the rule of :func:`token_runs` (whitespace
    visible when the view's ``style`` says so), escaped for where it goes (:func:`escape`).
    Bytes that are only part of a character are written in ⟨⟩, or in a hex box in HTML. A token
    longer than ``TOKEN_SHOWN`` characters is cut there, saying how many more it has. A token that
    may run right to left is set apart from the sentence around it (:func:`isolate`): an Arabic
    pair reads "‘و’ + ‘ن’ → ‘ون’" in a sentence, not "ون → ن + و".

    >>> token_text("à¤¦à¥ĩà¤µà¤", TokenStyle(byte_level=True)), token_text("a b"), token_text("a b", TokenStyle(show_ws=False))
    ('देव⟨e0 a4⟩', 'a·b', 'a b')
    >>> token_text("<b>", into="html"), token_text("à¤", TokenStyle(byte_level=True), into="html")
    ('&lt;b&gt;', '<span class="bpe-hex">e0 a4</span>')
    >>> print(token_text("$x$ <b>", into="markdown"))
    \\$x\\$·\\<b\\>
    >>> token_text("ab" * 400)[-20:]
    'abababab…(+600 more)'
    >>> token_text("ون"), token_text("Ġ×©", TokenStyle(byte_level=True), into="html")
    ('\\u2067ون\\u2069', '<bdi dir="rtl">·ש</bdi>')
    """
    cut = len(token) - TOKEN_SHOWN if len(token) > TOKEN_SHOWN + 20 else 0
    runs = [
        (_balanced(run) if is_text else run, is_text)
        for run, is_text in token_runs(token[:TOKEN_SHOWN] if cut else token, style)
    ]
    more = f"…(+{cut:,} more)" if cut else ""
    text = "".join(run if is_text else f"⟨{run}⟩" for run, is_text in runs)
    if into == "html":
        written = "".join(
            escape(run, into=into) if is_text else f'<span class="bpe-hex">{run}</span>' for run, is_text in runs
        ) + (f'<span class="bpe-more">{more}</span>' if more else "")
    else:
        written = escape(text + more, into=into)
    return _set_apart(written, text, into=into)


def chips(
    tokens: Sequence[str], *, style: TokenStyle = PLAIN, highlight: Iterable[int] = (), unknown: Iterable[int] = ()
) -> str:
    """Tokens of one text as coloured chips, in the order a reader of the text reads them (an
    Arabic word's right to left, see :func:`_ordered`); ``highlight`` marks positions (e.g. a
    just-merged token).

    >>> chips(["<b>", "x"], highlight=[1])
    '<span class="bpe-chip" style="background:#dbeafe">&lt;b&gt;</span><span class="bpe-chip bpe-new" style="background:#fde68a">x</span>'
    >>> chips(["Ġà¤¬"], style=TokenStyle(byte_level=True))
    '<span class="bpe-chip" style="background:#dbeafe">·ब</span>'
    """
    hi, unk = set(highlight), set(unknown)
    out = []
    for i, tok in enumerate(tokens):
        cls = "bpe-chip" + (" bpe-new" if i in hi else "") + (" bpe-unk" if i in unk else "")
        chip = f'<span class="{cls}" style="background:{_PALETTE[i % len(_PALETTE)]}">{token_text(tok, style, into="html")}</span>'
        out.append((chip, direction(token_text(tok, style))))
    return _ordered(out, sep="", into="html")


def word_row(
    word: str,
    tokens: Sequence[str],
    freq: int | None = None,
    *,
    style: TokenStyle = PLAIN,
    changed: bool = False,
    highlight: Iterable[int] = (),
    note: str = "",
) -> str:
    """One segmented word: the word, its chips, its corpus frequency when given, and a note.

    >>> row = word_row("a<b", ["a<b"], 3, note="cut")
    >>> "a&lt;b" in row and "<script" not in row and "×3" in row and ">cut<" in row
    True
    """
    cls = "bpe-row bpe-changed" if changed else "bpe-row"
    count = "" if freq is None else f'<span class="bpe-freq">×{freq:,}</span>'
    if note:
        count += f'<span class="bpe-freq">{html.escape(note)}</span>'
    return (
        f'<div class="{cls}"><span class="bpe-word">{user_text(visible(word), into="html")}</span>'
        f"{chips(tokens, style=style, highlight=highlight)}{count}</div>"
    )


def piece_preview(lines: Sequence[Sequence[str]]) -> str:
    """Lines of pre-tokenized pieces, each piece a chip, so chunk boundaries show."""
    return "".join(f'<div class="bpe-row">{chips(pieces)}</div>' for pieces in lines)


def pair_rows(pairs, *, style: TokenStyle = PLAIN) -> str:
    """The pair-count table as HTML: the winner first (green, "next"), pairs tied with it
    (yellow, "tied"), then the rest in tie-break order. A plain table rather than a data grid:
    it redraws in a few milliseconds on each step and scales with the projector mode.

    >>> from explorer import PairStat
    >>> table = pair_rows([PairStat(0, 1, "e", "s", 9), PairStat(1, 2, "s", "<b>", 9), PairStat(2, 3, "l", "o", 7)])
    >>> [table.count(c) for c in ('class="bpe-next"', 'class="bpe-tied"', "<tr>")], "s&lt;b&gt;" in table and "<b>" not in table
    ([1, 1, 2], True)
    """
    head = "<tr><th>#</th><th>left</th><th>right</th><th>merged</th><th>count</th><th>status</th></tr>"
    rows = []
    best = pairs[0].count if pairs else 0
    for i, p in enumerate(pairs):
        status = "next" if i == 0 else ("tied" if p.count == best else "")
        cls = f' class="bpe-{status}"' if status else ""
        rows.append(
            f'<tr{cls}><td class="num">{i + 1}</td><td>{chips([p.left], style=style)}</td>'
            f"<td>{chips([p.right], style=style)}</td><td>{chips([p.left + p.right], style=style)}</td>"
            f'<td class="num">{p.count:,}</td><td>{status}</td></tr>'
        )
    return f'<div class="bpe-scroll"><table class="bpe-pairs">{head}{"".join(rows)}</table></div>'


def _hex(data: bytes) -> str:
    return " ".join(f"{b:02x}" for b in data)


def _tokenizer_style(tok: Tokenizer, token_id: int, show_ws: bool) -> TokenStyle:
    # special tokens and <unk> are written as text, whatever the unit
    byte = tok.pipeline.unit == "byte" and not tok.is_special(token_id) and token_id != tok.unk_id
    return TokenStyle(byte_level=byte, show_ws=show_ws)


def token_label(tok: Tokenizer, token_id: int, *, show_ws: bool = True, into: Into = "text") -> str:
    """A token of a tokenizer by id, written by :func:`token_text` in its tokenizer's style:
    byte-level tokens as the text they stand for, bytes that are not a whole UTF-8 character as
    hex, never as U+FFFD; special tokens and the unknown token as they are written.

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> [token_label(tok, i) for i in tok.encode(" 你好")]
    ['·', '⟨e4 bd⟩', '⟨a0⟩', '⟨e5 a5⟩', '⟨bd⟩']
    """
    return token_text(tok.id_to_token(token_id), _tokenizer_style(tok, token_id, show_ws), into=into)


def token_title(tok: Tokenizer, token_id: int) -> str:
    """What hovering a chip tells: id, bytes in hex, and the token as the vocabulary file writes
    it (the one place for GPT-2's stand-in characters).

    >>> from explorer import load_pretrained
    >>> token_title(load_pretrained("gpt2"), 995)
    'id 995 · bytes 20 77 6f 72 6c 64 · in the vocabulary file: Ġworld'
    """
    shown = tok.shown_id(token_id)  # as the tokenizer's file numbers it (SentencePiece's order)
    if token_id == tok.unk_id:
        return f"unknown symbol → {tok.encoding.unk_token} (id {shown})"
    if tok.is_special(token_id):
        return f"id {shown} · special token {tok.id_to_token(token_id)}"
    return f"id {shown} · bytes {_hex(tok.token_bytes(token_id))} · in the vocabulary file: {tok.id_to_token(token_id)}"


def encoded_chips(
    tok: Tokenizer,
    ids: Sequence[int],
    *,
    show_ws: bool = True,
    limit: int | None = None,
    highlight: set[int] | frozenset[int] = frozenset(),
    reading_order: bool = True,
) -> str:
    """Token ids as coloured chips with a hover title; special tokens dark, unknown red, bytes
    that are part of a character in hex, the positions in ``highlight`` outlined. Every string
    is escaped. The ids are a text's: its chips run in the order its reader reads them (an
    Arabic text's right to left, see :func:`_ordered`); ``reading_order=False`` for ids that
    are a list, not a text (the chips then run left to right, in the list's order).

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> html_ = encoded_chips(tok, tok.encode("<b>你"), highlight={0})
    >>> "&lt;" in html_ and "<b>" not in html_ and 'class="bpe-hex"' in html_, html_.count("bpe-new")
    (True, 1)
    """
    shown = ids if limit is None else ids[:limit]
    out = []
    for i, token_id in enumerate(shown):
        cls = "bpe-chip bpe-new" if i in highlight else "bpe-chip"
        if token_id == tok.unk_id:
            cls += " bpe-unk"
        elif tok.is_special(token_id):
            cls += " bpe-special"
        body = token_label(tok, token_id, show_ws=show_ws, into="html")
        title = html.escape(token_title(tok, token_id), quote=True)
        chip = f'<span class="{cls}" title="{title}" style="background:{_PALETTE[i % len(_PALETTE)]}">{body}</span>'
        out.append((chip, direction(token_label(tok, token_id, show_ws=show_ws)) if reading_order else None))
    row = _ordered(out, sep="", into="html", block=True)
    way = f' dir="{_row_direction(out)}"' if any(d == "rtl" for _, d in out) else ""
    return f'<div class="bpe-row bpe-text"{way}>{row}</div>'


class ComparisonRow(NamedTuple):
    """One tokenizer's line in the Playground's comparison."""

    name: str
    tokens: int
    chars_per_token: float
    bytes_per_token: float
    unknown: int
    vs_fewest: float  # tokens over the fewest any tokenizer shown needs
    round_trip: str


def comparison_table(rows: Sequence[ComparisonRow]) -> str:
    """Tokenizers side by side on one text, as an HTML table whose rows name their tokenizer
    (``data-name``); the fewest tokens in bold.

    >>> t = comparison_table([ComparisonRow("<a>", 12, 4.5, 4.5, 0, 1.0, "exact"), ComparisonRow("b", 30, 1.8, 1.8, 2, 2.5, "lossy")])
    >>> "&lt;a&gt;" in t and "<a>" not in t, t.count("<tr"), "2.50×" in t, t.count("bpe-best")
    (True, 3, True, 1)
    """
    head = (
        "<tr><th>tokenizer</th><th>tokens</th><th>× fewest</th><th>chars / token</th><th>bytes / token</th>"
        "<th>unknown</th><th>round trip</th></tr>"
    )
    body = []
    for r in rows:
        best = ' class="bpe-best"' if r.vs_fewest == 1.0 else ""
        name = html.escape(r.name)
        body.append(
            f'<tr data-name="{html.escape(r.name, quote=True)}"{best}><td>{name}</td><td class="num">{r.tokens:,}</td>'
            f'<td class="num">{r.vs_fewest:.2f}×</td><td class="num">{r.chars_per_token:.2f}</td>'
            f'<td class="num">{r.bytes_per_token:.2f}</td><td class="num">{r.unknown:,}</td>'
            f"<td>{html.escape(r.round_trip)}</td></tr>"
        )
    return f'<div class="bpe-scroll"><table class="bpe-cmp">{head}{"".join(body)}</table></div>'


def token_strip(name: str, note: str, chips_html: str, *, more: int = 0) -> str:
    """A tokenizer's chips under a one-line heading (its name and a note); ``chips_html`` is
    already escaped (:func:`encoded_chips`), ``more`` tokens were left undrawn.

    >>> token_strip("<x>", "3 tokens", "<div>chips</div>", more=2)
    '<div class="bpe-strip"><div class="bpe-strip-head"><b>&lt;x&gt;</b> · 3 tokens</div><div>chips</div><div class="bpe-freq">2 more tokens not drawn</div></div>'
    """
    tail = f'<div class="bpe-freq">{more:,} more tokens not drawn</div>' if more > 0 else ""
    return (
        f'<div class="bpe-strip"><div class="bpe-strip-head"><b>{html.escape(name)}</b> · {html.escape(note)}</div>'
        f"{chips_html}{tail}</div>"
    )


class Headline(NamedTuple):
    """A panel's headline: its name, one number, and a sentence saying what the number is."""

    panel: str
    number: str
    sentence: str


def headline_cards(cards: Sequence[Headline]) -> str:
    """Headlines side by side as cards (they wrap on a narrow screen); all text escaped.

    >>> headline_cards([Headline("Parity", "4.9×", "Hindi <b> costs")])
    '<div class="bpe-cards"><div class="bpe-card"><div class="bpe-card-panel">Parity</div><div class="bpe-card-number">4.9×</div><div class="bpe-card-text">Hindi &lt;b&gt; costs</div></div></div>'
    """
    return (
        '<div class="bpe-cards">'
        + "".join(
            f'<div class="bpe-card"><div class="bpe-card-panel">{html.escape(c.panel)}</div>'
            f'<div class="bpe-card-number">{html.escape(c.number)}</div>'
            f'<div class="bpe-card-text">{html.escape(c.sentence)}</div></div>'
            for c in cards
        )
        + "</div>"
    )


def language_grid(rows: Sequence, metric: str, *, title: str) -> str:
    """One measure (``"parity"`` or ``"fertility"``) of LanguageRows as a language × tokenizer
    table, narrow enough for half a page.

    >>> from explorer.analysis.compare import LanguageRow
    >>> from explorer.analysis.evaluate import Evaluation
    >>> e = Evaluation(bytes=10, chars=10, words=2, tokens=4, unk=0)
    >>> grid = language_grid([LanguageRow("gpt2", "Hindi", e, 4.912)], "parity", title="Parity")
    >>> ">Hindi<" in grid and ">4.91<" in grid and ">gpt2<" in grid
    True
    """
    tokenizers = list(dict.fromkeys(r.tokenizer for r in rows))
    languages = list(dict.fromkeys(r.language for r in rows))
    value = {(r.language, r.tokenizer): getattr(r, metric) for r in rows}
    # "cl100k_base" -> "cl100k": five columns fit half a page at 1280x720
    head = (
        "<tr><th>language</th>"
        + "".join(f"<th>{html.escape(t.removesuffix('_base'))}</th>" for t in tokenizers)
        + "</tr>"
    )
    body = "".join(
        f"<tr><td>{html.escape(lang)}</td>"
        + "".join(
            f'<td class="num">{"—" if value.get((lang, t)) is None else format(value[lang, t], ".2f")}</td>'
            for t in tokenizers
        )
        + "</tr>"
        for lang in languages
    )
    return (
        f'<div class="bpe-grid-title">{html.escape(title)}</div>'
        f'<div class="bpe-scroll"><table class="bpe-cmp">{head}{body}</table></div>'
    )


def stat_strip(items: Sequence[tuple[str, str]]) -> str:
    """Numbers with their labels in a strip that wraps (never cut short like a metric in a
    narrow column).

    >>> stat_strip([("Bytes", "421,530"), ("<x>", "1")])
    '<div class="bpe-stats"><div class="bpe-stat"><div class="bpe-stat-value">421,530</div><div class="bpe-stat-label">Bytes</div></div><div class="bpe-stat"><div class="bpe-stat-value">1</div><div class="bpe-stat-label">&lt;x&gt;</div></div></div>'
    """
    return (
        '<div class="bpe-stats">'
        + "".join(
            f'<div class="bpe-stat"><div class="bpe-stat-value">{html.escape(value)}</div>'
            f'<div class="bpe-stat-label">{html.escape(label)}</div></div>'
            for label, value in items
        )
        + "</div>"
    )


def bar_rows(items: Sequence[tuple[str, int]], *, title: str) -> str:
    """Counted words as a bar list: a row per word (the word as text, a bar as long as its share
    of the largest count, the count), the largest first as given. Drawn by the page itself, not
    a chart library: a first visit loads no chart code for it, and each word keeps its label.

    >>> html_ = bar_rows([("the", 4), ("<b>", 1)], title="Most frequent words")
    >>> '<span class="bpe-bar" style="width:100.0%">' in html_, 'style="width:25.0%"' in html_
    (True, True)
    >>> "&lt;b&gt;" in html_ and "<b>" not in html_, ">4<" in html_
    (True, True)
    """
    top = max((n for _w, n in items), default=0) or 1
    rows = "".join(
        f'<tr><td class="bpe-bar-word">{user_text(word, into="html")}</td>'
        f'<td class="bpe-bar-cell"><span class="bpe-bar" style="width:{100 * n / top:.1f}%"></span></td>'
        f'<td class="bpe-bar-count">{n:,}</td></tr>'
        for word, n in items
    )
    return (
        f'<table class="bpe-bars"><caption>{html.escape(title)}</caption>'
        '<tr><th>word</th><th><span class="bpe-sr">share of the largest count</span></th><th>count</th></tr>'
        f"{rows}</table>"
    )


def choices_help(options: dict[str, str]) -> str:
    """A picker's help: each option with what it does, one a line (the picker itself shows the
    option's short name, which is never cut off).

    >>> choices_help({"none": "no change", "nfkc": "compatibility"})
    '**none**: no change  \\n**nfkc**: compatibility'
    """
    return "  \n".join(f"**{name}**: {md_text(what)}" for name, what in options.items())


def lineage_tree(tok: Tokenizer, tree) -> str:
    """A token's merge tree (:func:`explorer.analysis.lineage.lineage`) as nested HTML lists drawn as a
    tree: each node a chip as every panel writes the token, with its id and merge rank, its
    two parts under it. The text keeps its size however wide the tree is: a wide one scrolls
    inside its box instead of shrinking, as an SVG scaled to the page would.

    >>> from explorer import make_config, train
    >>> from explorer.analysis.lineage import lineage
    >>> tok = train("low " * 5, make_config("sennrich", num_merges=2)).tokenizer()
    >>> html_ = lineage_tree(tok, lineage(tok, tok.token_to_id("lo")))
    >>> html_.count("<li"), html_.count("bpe-lin-base"), 'data-id="4"' in html_
    (3, 2, True)
    """

    def node(n) -> str:
        base = n.rank is None
        meta = f"id {tok.shown_id(n.id):,}" + (" · base symbol" if base else f" · merge rank {n.rank:,}")
        if n.whole:  # a rank table's token its lower ranks never merge into: no parts to draw
            meta += " · not one merge of two lower-ranked tokens"
        chip = f'<span class="bpe-chip{" bpe-lin-base" if base else ""}">{token_label(tok, n.id, into="html")}</span>'
        kids = "" if base or n.whole else f"<ul>{node(n.left)}{node(n.right)}</ul>"
        return f'<li data-id="{tok.shown_id(n.id)}">{chip}<div class="bpe-lin-meta">{meta}</div>{kids}</li>'

    return f'<div class="bpe-scroll bpe-lin"><ul>{node(tree)}</ul></div>'


def caption(text: str) -> str:
    """Plain text (escaped here) as a panel's small grey line.

    >>> caption("a <b>")
    '<p class="bpe-cap">a &lt;b&gt;</p>'
    """
    return f'<p class="bpe-cap">{html.escape(text)}</p>'


def panel(title: str, body: str, caption_text: str = "", *, note: str = "") -> str:
    """A panel of the Train page as one HTML block: its heading, its body (already escaped
    HTML), a caption and a note in plain text (escaped here). One block per panel: every element
    a Step redraws costs the browser time, a heading and a caption of their own included.

    >>> panel("Pairs", "<table></table>", "a <b> caption")
    '<div class="bpe-panel"><h3 class="bpe-h">Pairs</h3><table></table><p class="bpe-cap">a &lt;b&gt; caption</p></div>'
    """
    tail = caption(caption_text) if caption_text else ""
    if note:
        tail += f'<p class="bpe-note">{html.escape(note)}</p>'
    return f'<div class="bpe-panel"><h3 class="bpe-h">{html.escape(title)}</h3>{body}{tail}</div>'


def kwic_rows(rows: Sequence[KeywordInContext]) -> str:
    """Keyword-in-context lines: left context right-aligned, the token marked, all escaped.

    >>> from explorer.analysis.lineage import KeywordInContext
    >>> kwic_rows([KeywordInContext(3, "a <i>", "low", "er")])
    '<div class="bpe-kwic"><span class="n">line 3</span><span class="l">a &lt;i&gt;</span><mark>low</mark>er</div>'
    """
    return "".join(
        f'<div class="bpe-kwic"{_kwic_direction(r)}><span class="n">line {r.line:,}</span>'
        f'<span class="l">{user_text(r.left, into="html")}</span>'
        f"<mark>{user_text(r.match, into='html')}</mark>{user_text(r.right, into='html')}</div>"
        for r in rows
    )


def _kwic_direction(row: KeywordInContext) -> str:
    """A right-to-left line reads right to left: its left context (what comes before the
    token) on the right of the token, as its reader expects."""
    return ' dir="rtl"' if direction(row.left + row.match + row.right) == "rtl" else ""
