"""Tokens and pieces as HTML chips. Every string from a corpus or a user goes through
``html.escape`` first: a corpus may hold ``<script>`` and it must show as text."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence

__all__ = ["CHIP_CSS", "visible", "chips", "piece_preview", "word_row"]

# Colour-blind-safe pastel cycle; neighbouring chips always differ.
_PALETTE = ("#dbeafe", "#fde68a", "#d1fae5", "#fce7f3", "#e0e7ff", "#fee2e2", "#ccfbf1", "#f3e8ff")

CHIP_CSS = """
<style>
.bpe-row{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:1.05rem;line-height:2.1;}
.bpe-chip{display:inline-block;padding:0 .28em;margin:0 1px;border-radius:4px;border:1px solid #94a3b8;white-space:pre;color:#0f172a;}
.bpe-new{outline:3px solid #dc2626;outline-offset:1px;}
.bpe-unk{background:#fecaca!important;border-color:#dc2626;}
.bpe-word{display:inline-block;min-width:9em;color:#334155;}
.bpe-freq{color:#64748b;font-size:.85rem;margin-left:.5em;}
.bpe-changed{background:#fef9c3;border-radius:6px;}
</style>
"""


def visible(text: str) -> str:
    """Make whitespace visible so a chip of spaces or a newline can be seen.

    >>> visible("a b\\n\\t")
    'a·b↵→'
    """
    return text.replace(" ", "·").replace("\n", "↵").replace("\t", "→").replace("\r", "␍")


def chips(tokens: Sequence[str], *, highlight: Iterable[int] = (), unknown: Iterable[int] = (), show_ws: bool = True) -> str:
    """Tokens as coloured chips; ``highlight`` marks positions (e.g. a just-merged token).

    >>> chips(["<b>", "x"], highlight=[1])
    '<span class="bpe-chip" style="background:#dbeafe">&lt;b&gt;</span><span class="bpe-chip bpe-new" style="background:#fde68a">x</span>'
    """
    hi, unk = set(highlight), set(unknown)
    out = []
    for i, tok in enumerate(tokens):
        cls = "bpe-chip" + (" bpe-new" if i in hi else "") + (" bpe-unk" if i in unk else "")
        text = visible(tok) if show_ws else tok
        out.append(f'<span class="{cls}" style="background:{_PALETTE[i % len(_PALETTE)]}">{html.escape(text)}</span>')
    return "".join(out)


def word_row(word: str, tokens: Sequence[str], freq: int, *, changed: bool = False, highlight: Iterable[int] = ()) -> str:
    """One segmented word: the word, its chips, its frequency."""
    cls = "bpe-row bpe-changed" if changed else "bpe-row"
    return (
        f'<div class="{cls}"><span class="bpe-word">{html.escape(visible(word))}</span>'
        f"{chips(tokens, highlight=highlight)}<span class=\"bpe-freq\">×{freq:,}</span></div>"
    )


def piece_preview(lines: Sequence[Sequence[str]]) -> str:
    """Lines of pre-tokenized pieces, each piece a chip, so chunk boundaries show."""
    return "".join(f'<div class="bpe-row">{chips(pieces)}</div>' for pieces in lines)
