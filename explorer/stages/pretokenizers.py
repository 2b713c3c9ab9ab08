"""Sequences and pre-tokenizers: text -> sequences -> pieces with offsets.

Sequences decide what a pre-tokenizer may never cross:

- ``text``: the whole text is one sequence (HF ``train_from_iterator([text])``, tiktoken);
- ``lines``: every line, with its ``\\n``, is its own sequence (HF ``train([path])``);
- ``documents``: every line without its line ending is a document (a Python list of
  sentences, as the seed notebooks hold their corpora).

A pre-tokenizer cuts a sequence into pieces; merges never cross a piece boundary.
Every built-in pattern covers the whole text; a custom pattern's gaps are kept as pieces of
their own, so no character is ever dropped silently.
"""

from __future__ import annotations

import re
import string
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

import regex

from ..errors import ConfigError

__all__ = [
    "GPT2_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "PATTERNS",
    "PATTERNS_COMPILED",
    "PRETOKENIZERS",
    "SEQUENCE_MODES",
    "Piece",
    "compile_pattern",
    "PatternShape",
    "pattern_shape",
    "piece_texts",
    "iter_piece_texts",
    "pre_tokenize_str",
    "split_sequences",
    "special_tokens_re",
]

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

PATTERNS: dict[str, str] = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}

PRETOKENIZERS: dict[str, str] = {
    "none": "no pre-tokenization: each sequence is one piece (merges may cross spaces)",
    "whitespace": "split on runs of whitespace and drop them (Python's str.split())",
    "gpt2": "GPT-2's regex: contractions, ' ?letters', ' ?digits', ' ?punctuation', whitespace",
    "cl100k": "GPT-4's cl100k_base regex: digits in groups of 1-3, case-insensitive contractions",
    "o200k": "GPT-4o's o200k_base regex: splits camelCase, keeps contractions on the word",
    "regex": "a custom regex: each match is a piece; text between matches is kept as pieces too",
}

SEQUENCE_MODES: dict[str, str] = {
    "text": "the whole text is one sequence",
    "lines": "each line, with its line ending, is its own sequence (HF training from files)",
    "documents": "each line, without its line ending, is its own document (a list of sentences)",
}

MAX_PATTERN_CHARS = 2_000
REGEX_TIMEOUT_S = 2.0

_WHITESPACE = re.compile(r"\S+")  # stdlib \s is exactly str.split()'s whitespace
_LINES = re.compile(r"[^\n]*\n|[^\n]+")


class Piece(NamedTuple):
    """One pre-tokenized piece: its text and its [start, end) offsets in the sequence."""

    text: str
    start: int
    end: int


def split_sequences(text: str, *, mode: str = "text") -> list[str]:
    """Cut a text into the sequences that pre-tokenization never crosses.

    >>> split_sequences("a b\\n\\nc", mode="lines")
    ['a b\\n', '\\n', 'c']
    >>> split_sequences("a b\\n\\nc\\n", mode="documents")
    ['a b', 'c']
    """
    if mode == "text":
        return [text] if text else []
    if mode == "lines":
        return _LINES.findall(text)
    if mode == "documents":
        return [line for line in text.split("\n") if line]
    raise ConfigError(f"unknown sequence mode {mode!r}; choose one of {', '.join(SEQUENCE_MODES)}")


@lru_cache(maxsize=64)
def special_tokens_re(tokens: tuple[str, ...]) -> re.Pattern:
    """One regex for a set of special tokens, the longest first (so "<s>" never cuts "<s>x</s>"
    short when both are special).

    >>> special_tokens_re(("<", "<s>")).findall("a<s>b<")
    ['<s>', '<']
    """
    return re.compile("|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True)))


# letters, digits, spaces, punctuation and a newline: where a pattern like \b or x* matches nothing
_EMPTY_PROBE = "Ab c1 2,3 -- x\n\t  y!"
_PROBE_TIMEOUT_S = 0.5
MAX_PATTERN_DEPTH = 32  # groups inside groups; real patterns nest a few levels
MAX_PATTERN_SIZE = 100_000  # items once counted repeats are expanded (a{1000} is 1,000)

# What to change, for each way a pattern can fail (the sentences the page and the CLI show).
_TOO_SLOW = (
    "takes too long{where}: a repeated group of alternatives that can match the same text, such as "
    "(?:a|a)*, backtracks exponentially; make the alternatives exclusive, or use a possessive "
    "quantifier (*+) or an atomic group (?>...)"
)
_TOO_BIG = (
    "needs more memory than the server allows{where}: deeply nested groups or large repeat counts "
    "such as {{1000000}} do; flatten the groups and use + or * instead of big counts"
)


class PatternShape(NamedTuple):
    """How deep a pattern's groups nest, and how many items it spells out once its counted
    repeats (``{n}``, ``{n,m}``) are expanded: what its compiled form costs, before compiling it."""

    depth: int
    size: int


_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")


def pattern_shape(pattern: str) -> PatternShape:
    """Read a pattern's nesting and expanded size without compiling it (a count like
    ``(?:a{10000}){10000}`` makes the compiler itself allocate without end).

    >>> pattern_shape(r"(a(b)c)|(d)")
    PatternShape(depth=2, size=5)
    >>> pattern_shape(r"(?:ab{3}){1000}|[(]\\(")
    PatternShape(depth=1, size=6003)
    """
    depth = deepest = 0
    sizes = [0]  # items in each open group so far (the pattern's own at the bottom)
    last = 0  # items of the atom just read, which a count after it multiplies
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 1
            sizes[-1] += 1
            last = 1
        elif ch == "[":
            i += 2 if pattern[i + 1 : i + 2] == "]" else 3 if pattern[i + 1 : i + 3] == "^]" else 1
            while i < len(pattern) and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            sizes[-1] += 1
            last = 1
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
            sizes.append(0)
            last = 0
        elif ch == ")" and depth:
            depth -= 1
            last = max(1, sizes.pop())
            sizes[-1] += last
        elif ch == "{" and last and (m := _COUNT.match(pattern, i)) and (m.group(1) or m.group(2)):
            times = max(int(m.group(1) or 0), int(m.group(2) or 0))
            sizes[-1] += last * (times - 1)
            last *= times
            i = m.end() - 1
        else:
            sizes[-1] += 1
            last = 0 if ch == "|" else 1
        i += 1
    return PatternShape(deepest, sum(sizes))


@lru_cache(maxsize=64)  # per sequence on some paths: the probe runs once per pattern
def compile_pattern(pattern: str) -> regex.Pattern:
    """Compile a user's regex, turning every failure into a ConfigError that says what to change:
    syntax, size, nesting, a pattern that matches the empty string, and one that backtracks or
    runs out of memory on a short test string (probed under a hard time limit).

    >>> compile_pattern(r"\\w+|\\s").pattern
    '\\\\w+|\\\\s'
    >>> compile_pattern("(")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: the custom regex does not compile: missing ) at position 1
    >>> compile_pattern(r"(?:[\\s\\S]|[\\s\\S]|[\\s\\S])*#|.")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: the custom regex takes too long on a test string: a repeated group of ...
    """
    if not pattern:
        raise ConfigError("the custom regex is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ConfigError(f"the custom regex is longer than {MAX_PATTERN_CHARS:,} characters")
    shape = pattern_shape(pattern)
    if shape.depth > MAX_PATTERN_DEPTH:
        raise ConfigError(
            f"the custom regex nests groups {shape.depth} deep; at most {MAX_PATTERN_DEPTH} levels are "
            "allowed: remove the groups that only wrap another group"
        )
    if shape.size > MAX_PATTERN_SIZE:
        raise ConfigError(
            f"the custom regex spells out {shape.size:,} items once its counted repeats are expanded; "
            f"at most {MAX_PATTERN_SIZE:,}: use + or * instead of large counts like {{10000}}"
        )
    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError) as err:
        raise ConfigError(f"the custom regex does not compile: {err}") from None
    except (MemoryError, RecursionError):
        raise ConfigError("the custom regex " + _TOO_BIG.format(where=" to compile")) from None
    try:
        empty = compiled.match("", timeout=_PROBE_TIMEOUT_S) is not None or any(
            m.start() == m.end() for m in compiled.finditer(_EMPTY_PROBE, timeout=_PROBE_TIMEOUT_S)
        )
    except TimeoutError:
        raise ConfigError("the custom regex " + _TOO_SLOW.format(where=" on a test string")) from None
    except (MemoryError, RecursionError):
        raise ConfigError("the custom regex " + _TOO_BIG.format(where=" on a test string")) from None
    if empty:
        # a match of nothing makes no piece: whatever the pattern skips would be lost or glued
        raise ConfigError(
            f"the custom regex can match the empty string ({pattern!r}); make every branch match "
            "at least one character (e.g. x+ instead of x*)"
        )
    return compiled


PATTERNS_COMPILED: dict[str, regex.Pattern] = {name: regex.compile(p) for name, p in PATTERNS.items()}

# The same three patterns for ASCII text, in the stdlib engine, which scans about twice as fast
# as `regex` for them. On ASCII input each class is exactly its ASCII part (\p{L} = [A-Za-z],
# \p{Lu} = [A-Z], \p{Ll} = [a-z], \p{N} = [0-9]; Lt, Lm, Lo and M have no ASCII members; both
# engines' \s is [ \t\n\v\f\r] here), so the pieces are identical (tests check it).
_ASCII_PATTERN_TEXTS = {
    "gpt2": r"""'(?:s|t|re|ve|m|ll|d)| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""",
    "cl100k": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{1,3}+| ?[^\sA-Za-z0-9]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k": "|".join(
        [
            r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[0-9]{1,3}""",
            r""" ?[^\sA-Za-z0-9]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
_ASCII_PATTERNS: dict[str, re.Pattern] = {name: re.compile(p, re.ASCII) for name, p in _ASCII_PATTERN_TEXTS.items()}
assert set(_ASCII_PATTERNS) == set(PATTERNS)

_ASCII_LETTERS = frozenset(string.ascii_letters)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_NEWLINE_LETTER = re.compile(r"\n[A-Za-z]")


# A cut that every built-in pattern also makes: a lone "\n" between a non-space and an ASCII
# letter ("…word.\nNext"). No piece holds a newline followed by a letter, and a lone newline is
# the same piece whether or not the text goes on, so scanning the two sides apart changes nothing.
def _is_cut(text: str, j: int) -> bool:
    """Whether text[j] is a newline after which every built-in pattern cuts."""
    return j > 0 and not text[j - 1].isspace() and text[j + 1 : j + 2] in _ASCII_LETTERS


def _cut_before(text: str, lo: int, hi: int) -> int:
    """The last cut in (lo, hi], or lo."""
    j = text.rfind("\n", lo, hi)
    while j > lo and not _is_cut(text, j):
        j = text.rfind("\n", lo, j)
    return j + 1 if j > lo else lo


def _cut_after(text: str, lo: int) -> int:
    """The first cut after lo, or the end of the text."""
    m = _NEWLINE_LETTER.search(text, lo)
    while m is not None and not _is_cut(text, m.start()):
        m = _NEWLINE_LETTER.search(text, m.end())
    return m.start() + 1 if m else len(text)


def builtin_pieces(text: str, name: str) -> list[str]:
    """The pieces of a built-in pattern: stretches of ASCII lines go to the stdlib engine, the
    lines around each non-ASCII character to `regex`.

    >>> builtin_pieces("Hi, Zoë!\\nI'm 42.\\nBye", "gpt2")
    ['Hi', ',', ' Zoë', '!', '\\n', 'I', "'m", ' 42', '.', '\\n', 'Bye']
    """
    fast, full = _ASCII_PATTERNS[name], PATTERNS_COMPILED[name]
    if text.isascii():
        return fast.findall(text)
    out: list[str] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _NON_ASCII.search(text, pos)
        if m is None:
            out += fast.findall(text[pos:])
            break
        cut = _cut_before(text, pos, m.start())
        if cut > pos:
            out += fast.findall(text[pos:cut])
        pos = _cut_after(text, m.start())
        out += full.findall(text[cut:pos])
    return out


def _regex_pieces(
    compiled: regex.Pattern, text: str, *, keep_gaps: bool, timeout: float = REGEX_TIMEOUT_S
) -> list[Piece]:
    pieces: list[Piece] = []
    last = 0
    try:
        if timeout <= 0:
            raise TimeoutError
        for m in compiled.finditer(text, timeout=timeout):
            start, end = m.span()
            if start == end:
                continue
            if keep_gaps and start > last:
                pieces.append(Piece(text[last:start], last, start))
            pieces.append(Piece(m.group(), start, end))
            last = end
    except TimeoutError:
        raise ConfigError(
            "the custom regex " + _TOO_SLOW.format(where=f" on this text (over {REGEX_TIMEOUT_S:g} s)")
        ) from None
    except (MemoryError, RecursionError):
        raise ConfigError("the custom regex " + _TOO_BIG.format(where=" on this text")) from None
    if keep_gaps and last < len(text):
        pieces.append(Piece(text[last:], last, len(text)))
    return pieces


def pre_tokenize_str(text: str, *, pretokenizer: str = "gpt2", pattern: str | None = None) -> list[Piece]:
    """Cut one sequence into pieces with offsets (HF's ``pre_tokenize_str``).

    >>> [p.text for p in pre_tokenize_str("Hello world, it's 2024!")]
    ['Hello', ' world', ',', ' it', "'s", ' 2024', '!']
    >>> [p.text for p in pre_tokenize_str("Hello world, it's 2024!", pretokenizer="cl100k")]
    ['Hello', ' world', ',', ' it', "'s", ' ', '202', '4', '!']
    >>> pre_tokenize_str("  two  words ", pretokenizer="whitespace")
    [Piece(text='two', start=2, end=5), Piece(text='words', start=7, end=12)]
    """
    if pretokenizer == "none":
        return [Piece(text, 0, len(text))] if text else []
    if pretokenizer == "whitespace":
        return [Piece(m.group(), m.start(), m.end()) for m in _WHITESPACE.finditer(text)]
    if pretokenizer in PATTERNS_COMPILED:
        return _regex_pieces(PATTERNS_COMPILED[pretokenizer], text, keep_gaps=False)
    if pretokenizer == "regex":
        if pattern is None:
            raise ConfigError("the 'regex' pre-tokenizer needs a pattern")
        return _regex_pieces(compile_pattern(pattern), text, keep_gaps=True)
    raise ConfigError(f"unknown pre-tokenizer {pretokenizer!r}; choose one of {', '.join(PRETOKENIZERS)}")


def iter_piece_texts(
    sequences: Iterable[str], *, pretokenizer: str = "gpt2", pattern: str | None = None
) -> Iterator[list[str]]:
    """Pieces of each sequence. A custom regex gets one time budget for all of them, so a
    pattern that backtracks on every line of a long corpus fails in seconds, not hours.

    >>> list(iter_piece_texts(["a b", "c"], pretokenizer="whitespace"))
    [['a', 'b'], ['c']]
    """
    if pretokenizer != "regex":
        for seq in sequences:
            yield piece_texts(seq, pretokenizer=pretokenizer, pattern=pattern)
        return
    compiled = compile_pattern(pattern or "")
    deadline = time.monotonic() + REGEX_TIMEOUT_S
    for seq in sequences:
        yield [p.text for p in _regex_pieces(compiled, seq, keep_gaps=True, timeout=deadline - time.monotonic())]


def piece_texts(text: str, *, pretokenizer: str = "gpt2", pattern: str | None = None) -> list[str]:
    """The pieces' texts only: the fast path training and encoding use.

    >>> piece_texts("a  b", pretokenizer="gpt2")
    ['a', ' ', ' b']
    """
    if pretokenizer == "none":
        return [text] if text else []
    if pretokenizer == "whitespace":
        return text.split()
    if pretokenizer in PATTERNS_COMPILED:
        return builtin_pieces(text, pretokenizer)
    return [p.text for p in pre_tokenize_str(text, pretokenizer=pretokenizer, pattern=pattern)]
