"""Sentences generated from step records, for the class to read aloud."""

from __future__ import annotations

from ..bpe.config import TrainerConfig
from ..bpe.trainer import StepRecord
from .render import TokenStyle, isolate, style_of, token_text, visible

__all__ = ["explain", "tie_rule_sentence", "byte_legend"]

_TIE_RULES = {
    "first-seen": "it occurs first in the corpus (first-seen)",
    "hf": "it has the smallest pair of token ids (HF)",
    "subword-nmt": "it sorts last alphabetically (subword-nmt)",
    "bytes": "its bytes sort last, left token first (CS336)",
}


def _q(s: str, style: TokenStyle) -> str:
    """A token in a sentence: quoted, as every panel shows it (whitespace as · ↵ →)."""
    return "‘" + token_text(s, style) + "’"


def tie_rule_sentence(rule: str) -> str:
    return _TIE_RULES.get(rule, rule)


def explain(r: StepRecord, *, config: TrainerConfig, style: TokenStyle | None = None) -> str:
    """One sentence on what a merge did, as plain text (escape it before Markdown). Tokens are
    written as every panel writes them (``style``; by default the one for the config's unit),
    an Arabic or Hebrew one set apart from the sentence (it reads left to right around them).

    >>> from explorer import make_config, train
    >>> t = train("low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3, make_config("sennrich", num_merges=1))
    >>> explain(t.records[0], config=t.config)
    '‘e’ + ‘s’ → ‘es’: the pair occurs 9 times (newest×6, widest×3); 9 tokens fewer. It tied with 2 other pairs at 9; chosen because it occurs first in the corpus (first-seen).'
    >>> t = train("the cat sat on the mat with the hat" * 3, make_config("bytes", vocab_size=None, num_merges=1))
    >>> explain(t.records[0], config=t.config).split(";")[0]
    '‘t’ + ‘h’ → ‘th’: the pair occurs 12 times (across the running text)'
    >>> t = train("नमस्ते दुनिया " * 3, make_config("gpt2", num_merges=5))
    >>> explain(t.records[4], config=t.config).split(":")[0]
    '‘न⟨e0 a4⟩’ + ‘⟨ae⟩’ → ‘नम’'
    >>> t = train("low " * 5 + "lower " * 2, make_config("sennrich", num_merges=2), full_records=1)
    >>> explain(t.records[1], config=t.config).split(";")[0]
    '‘lo’ + ‘w’ → ‘low’: the pair occurs 7 times (in 2 words)'
    >>> t = train("שלום " * 3, make_config("sennrich", num_merges=1))
    >>> explain(t.records[0], config=t.config).split(";")[0]
    '‘\\u2067ש\\u2069’ + ‘\\u2067ל\\u2069’ → ‘\\u2067של\\u2069’: the pair occurs 3 times (\\u2067שלום\\u2069×3)'
    """
    if config.pretokenizer == "none":
        # no pre-tokenization: each "word" is a whole sequence, too long to quote
        where = "across the running text"
    elif not r.examples:  # a compact record (a long run keeps no examples)
        where = f"in {r.words_affected:,} word{'s' if r.words_affected != 1 else ''}"
    else:
        # a word that may run right to left is set apart, as the tokens are
        where = ", ".join(f"{isolate(visible(w), into='text')}×{n:,}" for w, n in r.examples)
        more = r.words_affected - len(r.examples)
        if more > 0:
            where += f" and {more:,} more word{'s' if more > 1 else ''}"
    style = style_of(config.unit) if style is None else style
    times = "time" if r.count == 1 else "times"
    text = f"{_q(r.left, style)} + {_q(r.right, style)} → {_q(r.token, style)}: the pair occurs {r.count:,} {times} ({where}); "
    text += f"{r.replaced:,} token{'s' if r.replaced != 1 else ''} fewer."
    if r.replaced != r.count:
        text += f" Only {r.replaced:,} of the {r.count:,} could merge: the occurrences overlap (like 'aaa'), left to right wins."
    if r.reused:
        text += f" {_q(r.token, style)} already was a token, so its id {r.token_id} is reused."
    if r.n_tied:
        others = "pair" if r.n_tied == 1 else "pairs"
        text += f" It tied with {r.n_tied:,} other {others} at {r.count:,}; chosen because {tie_rule_sentence(config.tie_break)}."
    return text


def byte_legend(style: TokenStyle) -> str:
    """How byte-level tokens are written on the page, in one sentence."""
    if style.gpt2_chars:
        return (
            "Byte-level tokens are written with GPT-2's characters, as the vocabulary file has them: Ġ is a "
            "space, Ċ a newline, ĉ a tab, and other bytes that are not printable have stand-ins too."
        )
    return (
        "Byte level: each token shows the text its bytes spell (· space, ↵ newline, → tab); ⟨e0 a4⟩ are the "
        "bytes of part of a character."
    )
