"""Sequences and pre-tokenizers: text -> sequences -> pieces with offsets.

Sequences decide what a pre-tokenizer may never cross:

- ``text``: the whole text is one sequence (HF ``train_from_iterator([text])``, tiktoken);
- ``lines``: every line, with its ``\\n``, is its own sequence (HF ``train([path])``);
- ``documents``: every line without its line ending is a document (a Python list of
  sentences, as the seed notebooks hold their corpora).

A pre-tokenizer cuts a sequence into pieces; merges never cross a piece boundary. Each is one
entry of ``PRETOKENIZER_REGISTRY`` (sequence modes: ``SEQUENCE_REGISTRY``): ``apply`` (pieces
with offsets), its fast path ``piece_texts``, and its HF ``tokenizer.json``, tiktoken and minbpe
forms. A regex pre-tokenizer is one ``RegexSplit`` entry: its pattern is all it needs (the
stdlib twin that scans ASCII text is derived from it and checked).

Every built-in pattern covers the whole text; a custom pattern's gaps are kept as pieces of
their own, so no character is ever dropped silently.
"""

from __future__ import annotations

import copy
import re
import string
import time
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import ClassVar, NamedTuple

import regex

from ..errors import ConfigError
from .normalizers import PY_SPACE
from .registry import Registry

__all__ = [
    "GPT2_PATTERN",
    "CL100K_PATTERN",
    "O200K_PATTERN",
    "PATTERNS",
    "PATTERNS_COMPILED",
    "PRETOKENIZERS",
    "PRETOKENIZER_REGISTRY",
    "SEQUENCE_MODES",
    "SEQUENCE_REGISTRY",
    "TIKTOKEN_PATTERNS",
    "MINBPE_PATTERNS",
    "CustomRegex",
    "NoSplit",
    "Piece",
    "PreTokenizer",
    "RegexSplit",
    "SequenceMode",
    "SpaceSplit",
    "WhitespaceSplit",
    "ascii_twin",
    "builtin_pieces",
    "compile_pattern",
    "hf_split",
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

MAX_PATTERN_CHARS = 2_000
REGEX_TIMEOUT_S = 2.0

_WHITESPACE = re.compile(r"\S+")  # stdlib \s is exactly str.split()'s whitespace
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_SPACES = re.compile(r"[^ \r\n]+")  # subword-nmt's words: cut at spaces and line breaks only


class Piece(NamedTuple):
    """One pre-tokenized piece: its text and its [start, end) offsets in the sequence."""

    text: str
    start: int
    end: int


# ---- sequences ------------------------------------------------------------------------------
# HF: encoding cuts "lines" and "documents" alike, after each newline, which stays with its line
_HF_LINES = {"type": "Split", "pattern": {"Regex": "\n"}, "behavior": "MergedWithPrevious", "invert": False}


@dataclass(frozen=True, slots=True)
class SequenceMode:
    """How a text is cut into the sequences a pre-tokenizer never crosses: ``apply`` (text ->
    sequences), what it does, and its HF pre-tokenizer step (None: the whole text is one).

    >>> SEQUENCE_REGISTRY["lines"].apply("a b\\n\\nc")
    ['a b\\n', '\\n', 'c']
    """

    description: str
    apply: Callable[[str], list[str]]
    hf: dict | None = field(default=None, compare=False)

    def to_hf(self) -> dict | None:
        """The HF pre-tokenizer step that cuts sequences apart (a copy: the caller may change it)."""
        return copy.deepcopy(self.hf)


def _whole(text: str) -> list[str]:
    return [text] if text else []


def _documents(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


SEQUENCE_REGISTRY: Registry[SequenceMode] = Registry(
    "sequence mode",
    {
        "text": SequenceMode("the whole text is one sequence", _whole),
        "lines": SequenceMode(
            "each line, with its line ending, is its own sequence (HF training from files)", _LINES.findall, _HF_LINES
        ),
        "documents": SequenceMode(
            "each line, without its line ending, is its own document (a list of sentences)", _documents, _HF_LINES
        ),
    },
)
SEQUENCE_MODES: dict[str, str] = SEQUENCE_REGISTRY.descriptions  # name -> what it does, live
_SEQUENCES = SEQUENCE_REGISTRY.stage


def split_sequences(text: str, *, mode: str = "text") -> list[str]:
    """Cut a text into the sequences that pre-tokenization never crosses.

    >>> split_sequences("a b\\n\\nc", mode="lines")
    ['a b\\n', '\\n', 'c']
    >>> split_sequences("a b\\n\\nc\\n", mode="documents")
    ['a b', 'c']
    """
    return _SEQUENCES(mode).apply(text)


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


# ---- the fast path of a regex pre-tokenizer: ASCII text in the stdlib engine --------------------
# On ASCII text each Unicode class is exactly its ASCII part (\p{L} = [A-Za-z], \p{Lu} = [A-Z],
# \p{Ll} = [a-z], \p{N} = [0-9]; Lt, Lm, Lo and M have no ASCII members; both engines' \s is
# [ \t\n\v\f\r] here), so a pattern with its classes spelled out that way cuts ASCII text into
# the same pieces in the stdlib engine, which scans about twice as fast as `regex` for these.
_ASCII_PARTS = {"L": "A-Za-z", "Lu": "A-Z", "Ll": "a-z", "N": "0-9", "Lt": "", "Lm": "", "Lo": "", "M": ""}
_NO_ASCII = r"[^\x00-\x7f]"  # a class without ASCII members, alone: matches nothing in ASCII text
# a pattern's tokens: a property class, an escape, a class's opening (with a "]" right after
# "[" or "[^", which is a member), or one character
_TOKEN = re.compile(r"\\p\{\w+\}|\\.|\[\^?\]?|.", re.S)
_QUANTIFIERS = frozenset("?*+{")
_SPECIAL = frozenset("\\.^$()[]{}|?*+")


def _ascii_classes(pattern: str) -> str | None:
    """The pattern with its ``\\p{..}`` classes spelled out as their ASCII members; None when it
    uses a class or a set syntax of `regex`'s own.

    >>> _ascii_classes(r" ?\\p{L}+|[^\\s\\p{L}\\p{N}]+|\\p{Lo}")
    ' ?[A-Za-z]+|[^\\\\sA-Za-z0-9]+|[^\\\\x00-\\\\x7f]'
    >>> _ascii_classes(r"\\p{Han}+"), _ascii_classes(r"[\\p{Lo}]")
    (None, None)
    """
    out: list[str] = []
    members: list[str] | None = None  # inside a class: what it holds so far
    opening = ""
    for tok in _TOKEN.findall(pattern):
        if tok.startswith("\\p{"):
            part = _ASCII_PARTS.get(tok[3:-1])
            if part is None:
                return None
            if members is not None:
                members.append(part)
            else:
                out.append(f"[{part}]" if part else _NO_ASCII)
        elif tok.startswith("["):
            if members is not None:
                return None  # a set inside a set (or a POSIX class): `regex`'s own syntax
            opening, members = tok, []
        elif tok == "]" and members is not None:
            if not "".join(members) and not opening.endswith("]"):
                return None  # every member was a class without ASCII ones
            out.append(opening + "".join(members) + "]")
            members = None
        elif members is not None:
            members.append(tok)
        else:
            out.append(tok)
    return None if members is not None else "".join(out)


def _branches(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern.

    >>> _branches(r"'s|(?:a|b)|[|]|\\|")
    ["'s", '(?:a|b)', '[|]', '\\\\|']
    """
    out, depth, in_class, start = [], 0, False, 0
    for m in _TOKEN.finditer(pattern):
        tok = m.group()
        if in_class:
            in_class = tok != "]"
        elif tok.startswith("["):
            in_class = True
        elif tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif tok == "|" and depth == 0:
            out.append(pattern[start : m.start()])
            start = m.end()
    return [*out, pattern[start:]]


def _factor_prefixes(pattern: str) -> str:
    """Neighbouring top-level alternatives that start with the same literal character, written
    once: the same matches (alternatives are still tried in order), and the stdlib engine tests
    the character once instead of once per alternative (GPT-2's contractions scan ~20% faster).

    >>> _factor_prefixes(r"'s|'t|'re| ?[A-Za-z]+|'d")
    "'(?:s|t|re)| ?[A-Za-z]+|'d"
    """

    def head(branch: str) -> str | None:
        # a literal first character that no quantifier follows
        if len(branch) > 1 and branch[0] not in _SPECIAL and branch[1] not in _QUANTIFIERS:
            return branch[0]
        return None

    def written(run: list[str]) -> str:
        return run[0] if len(run) == 1 else f"{run[0][0]}(?:{'|'.join(b[1:] for b in run)})"

    out: list[str] = []
    run: list[str] = []  # neighbours with the same head, not written yet
    for branch in _branches(pattern):
        first = head(branch)
        if run and first != run[0][0]:
            out.append(written(run))
            run = []
        if first is None:
            out.append(branch)
        else:
            run.append(branch)
    if run:
        out.append(written(run))
    return "|".join(out)


def ascii_twin(pattern: str) -> str | None:
    """The stdlib pattern that cuts ASCII text as ``pattern`` does in `regex` (see
    ``RegexSplit``, which checks it before use), or None when it cannot be written.

    >>> ascii_twin(GPT2_PATTERN)
    "'(?:s|t|re|ve|m|ll|d)| ?[A-Za-z]+| ?[0-9]+| ?[^\\\\sA-Za-z0-9]+|\\\\s+(?!\\\\S)|\\\\s+"
    """
    classes = _ascii_classes(pattern)
    return None if classes is None else _factor_prefixes(classes)


_ASCII_LETTERS = frozenset(string.ascii_letters)
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_NEWLINE_LETTER = re.compile(r"\n[A-Za-z]")


# A cut that every built-in pattern also makes: a lone "\n" between a non-space and an ASCII
# letter ("…word.\nNext"). No piece holds a newline followed by a letter, and a lone newline is
# the same piece whether or not the text goes on, so scanning the two sides apart changes nothing.
# (A pattern for which this fails on the probes below is not scanned in stretches: a text with a
# non-ASCII character goes to `regex` whole.)
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


def _fast_pieces(text: str, fast: re.Pattern, full: regex.Pattern) -> list[str]:
    """Stretches of ASCII lines go to the stdlib engine, the lines around each non-ASCII
    character to `regex`."""
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


# Every ASCII character, and lines of letters, digits, contractions, punctuation and spaces
# around non-ASCII ones: where a regex pre-tokenizer could drop a character, or its fast path
# (the derived twin, the cuts between the engines) could differ from `regex`.
_PROBES = (
    "".join(map(chr, range(128))),
    "Hello world, it's 2024! I'M fine; you'LL see 3.14 a/b -- x.\n\nNext line\r\n  indented\tTab  \n end  ",
    'Zoë said: "it\'s 1984".\nBye\n  \u00a0x é\nCd\u2003ee\u0301\n12\u0663 ſK\nab.\nCd\n',
)


def _fast_engine(pattern: str, full: regex.Pattern) -> tuple[re.Pattern | None, bool]:
    """The compiled ASCII twin, if there is one and it cuts the ASCII probes as ``full`` does,
    and whether the other probes are cut the same in stretches (the lines around each non-ASCII
    character to `regex`, see ``_fast_pieces``)."""
    twin = ascii_twin(pattern)
    if twin is None:
        return None, False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "possible nested set": a class the two engines read apart
            fast = re.compile(twin, re.ASCII)
    except (re.error, FutureWarning):
        return None, False
    if any(fast.findall(p) != full.findall(p) for p in _PROBES if p.isascii()):
        return None, False
    return fast, all(_fast_pieces(p, fast, full) == full.findall(p) for p in _PROBES)


def _check_split(pattern: str, full: regex.Pattern) -> None:
    """A regex pre-tokenizer's pieces are its matches, so its pattern must match every character
    and never nothing (and findall must return matches, not groups)."""
    if full.groups:
        raise ConfigError(f"a pre-tokenizer's regex takes non-capturing groups only, (?:...): {pattern!r}")
    for probe in _PROBES:
        pieces = full.findall(probe)
        if "" in pieces or "".join(pieces) != probe:
            raise ConfigError(
                f"a pre-tokenizer's regex must cut every character into non-empty pieces; {pattern!r} "
                f"does not on {probe!r}"
            )


# ---- the pre-tokenizers ---------------------------------------------------------------------
_HF_WHITESPACE = {"type": "Split", "pattern": {"Regex": PY_SPACE + "+"}, "behavior": "Removed", "invert": False}


def hf_split(pattern: str) -> dict:
    """HF's Split on a regex; it keeps the text between matches as pieces too, as our regex
    pre-tokenizer does.

    >>> hf_split(r"\\d+")
    {'type': 'Split', 'pattern': {'Regex': '\\\\d+'}, 'behavior': 'Isolated', 'invert': False}
    """
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False}


class PreTokenizer(ABC):
    """What a registry entry does: ``apply`` cuts a sequence into pieces with offsets (what the
    Corpus page shows), ``piece_texts`` gives their texts only (the fast path training and
    encoding use), and ``to_hf`` / ``to_tiktoken`` / ``to_minbpe`` give its form in those tools'
    files (None: that tool has none). ``pattern`` is the config's custom regex, which only
    ``CustomRegex`` reads."""

    __slots__ = ()
    description: str
    # whether a piece may hold spaces (HF writes the '▁' word marker with Metaspace, which turns
    # every space of a piece into '▁', so it can only follow a split that drops them)
    spaces_in_pieces: ClassVar[bool] = True

    @abstractmethod
    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]: ...

    def piece_texts(self, text: str, *, pattern: str | None = None) -> list[str]:
        return [p.text for p in self.apply(text, pattern=pattern)]

    def iter_piece_texts(self, sequences: Iterable[str], *, pattern: str | None = None) -> Iterator[list[str]]:
        for seq in sequences:
            yield self.piece_texts(seq, pattern=pattern)

    def to_hf(self, *, pattern: str | None = None) -> dict | None:
        """The HF ``tokenizer.json`` pre-tokenizer step (None: no split)."""
        return None

    def to_tiktoken(self) -> str | None:
        """tiktoken's ``pat_str`` (tiktoken encodes only the regex's matches)."""
        return None

    def to_minbpe(self) -> str | None:
        """minbpe's pattern line ("": its BasicTokenizer, no split)."""
        return None


@dataclass(frozen=True, slots=True)
class NoSplit(PreTokenizer):
    """Each sequence is one piece.

    >>> NoSplit("").apply("a b"), NoSplit("").to_tiktoken()
    ([Piece(text='a b', start=0, end=3)], '[\\\\s\\\\S]+')
    """

    description: str

    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]:
        return [Piece(text, 0, len(text))] if text else []

    def piece_texts(self, text: str, *, pattern: str | None = None) -> list[str]:
        return [text] if text else []

    def to_tiktoken(self) -> str:
        return r"[\s\S]+"  # one match over the whole text

    def to_minbpe(self) -> str:
        return ""


@dataclass(frozen=True, slots=True)
class WhitespaceSplit(PreTokenizer):
    """Runs of whitespace cut and dropped, as ``str.split()`` (HF: a Split on Python's
    whitespace, spelled out, since HF's WhitespaceSplit leaves U+001C-U+001F inside words).

    >>> WhitespaceSplit("").apply("  two  words ")
    [Piece(text='two', start=2, end=5), Piece(text='words', start=7, end=12)]
    """

    description: str
    spaces_in_pieces: ClassVar[bool] = False

    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]:
        return [Piece(m.group(), m.start(), m.end()) for m in _WHITESPACE.finditer(text)]

    def piece_texts(self, text: str, *, pattern: str | None = None) -> list[str]:
        return text.split()

    def to_hf(self, *, pattern: str | None = None) -> dict:
        return copy.deepcopy(_HF_WHITESPACE)


@dataclass(frozen=True, slots=True)
class SpaceSplit(PreTokenizer):
    """Runs of spaces (and line breaks) cut and dropped; every other character, tabs and
    no-break spaces too, stays inside its word: subword-nmt's ``line.strip('\\r\\n ').split(' ')``
    (its files are read line by line, so ``\\r`` and ``\\n`` end words too).

    >>> SpaceSplit("").apply("  a\\tb\\xa0c  d\\n")
    [Piece(text='a\\tb\\xa0c', start=2, end=7), Piece(text='d', start=9, end=10)]
    """

    description: str
    spaces_in_pieces: ClassVar[bool] = False

    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]:
        return [Piece(m.group(), m.start(), m.end()) for m in _SPACES.finditer(text)]

    def piece_texts(self, text: str, *, pattern: str | None = None) -> list[str]:
        return _SPACES.findall(text)

    def to_hf(self, *, pattern: str | None = None) -> dict:
        return {"type": "Split", "pattern": {"Regex": "[ \\r\\n]+"}, "behavior": "Removed", "invert": False}


@dataclass(frozen=True, slots=True)
class RegexSplit(PreTokenizer):
    """A pre-tokenizer that is one regex: each match is a piece, and the pattern must match
    every character (checked here, on probes). Its fast path scans ASCII text with the stdlib
    twin of the pattern (``ascii_twin``) when the twin cuts the probes exactly as `regex` does,
    and the ASCII lines of other text too when the pattern always cuts after a lone newline
    before a letter (``stretches``); tests check the three built-in ones on every sample corpus
    and generated text.

    >>> digits = RegexSplit("digits one by one", r"\\p{N}|[^\\p{N}]+")
    >>> digits.piece_texts("ab 12"), digits.fast is not None, digits.stretches
    (['ab ', '1', '2'], True, False)
    >>> RegexSplit("letters only", r"\\p{L}+")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: a pre-tokenizer's regex must cut every character into non-empty pieces; ...
    """

    description: str
    pattern: str
    full: regex.Pattern = field(init=False, repr=False, compare=False)
    fast: re.Pattern | None = field(init=False, repr=False, compare=False)
    stretches: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        full = regex.compile(self.pattern)
        _check_split(self.pattern, full)
        object.__setattr__(self, "full", full)
        fast, stretches = _fast_engine(self.pattern, full)
        object.__setattr__(self, "fast", fast)
        object.__setattr__(self, "stretches", stretches)

    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]:
        return _regex_pieces(self.full, text, keep_gaps=False)

    def piece_texts(self, text: str, *, pattern: str | None = None) -> list[str]:
        fast = self.fast
        if fast is None:
            return self.full.findall(text)
        if text.isascii():
            return fast.findall(text)
        return _fast_pieces(text, fast, self.full) if self.stretches else self.full.findall(text)

    def to_hf(self, *, pattern: str | None = None) -> dict:
        return hf_split(self.pattern)

    def to_tiktoken(self) -> str:
        return self.pattern

    def to_minbpe(self) -> str:
        return self.pattern


@dataclass(frozen=True, slots=True)
class CustomRegex(PreTokenizer):
    """The config's own regex (``pattern``): each match is a piece, and the text between
    matches is kept as pieces too. tiktoken and minbpe keep only the matches, so they have no
    form of it.

    >>> [p.text for p in CustomRegex("").apply("ab, cd", pattern=r"\\w+")]
    ['ab', ', ', 'cd']
    """

    description: str

    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]:
        if pattern is None:
            raise ConfigError("the 'regex' pre-tokenizer needs a pattern")
        return _regex_pieces(compile_pattern(pattern), text, keep_gaps=True)

    def iter_piece_texts(self, sequences: Iterable[str], *, pattern: str | None = None) -> Iterator[list[str]]:
        # one time budget for all the sequences, so a pattern that backtracks on every line of
        # a long corpus fails in seconds, not hours
        compiled = compile_pattern(pattern or "")
        deadline = time.monotonic() + REGEX_TIMEOUT_S
        for seq in sequences:
            yield [p.text for p in _regex_pieces(compiled, seq, keep_gaps=True, timeout=deadline - time.monotonic())]

    def to_hf(self, *, pattern: str | None = None) -> dict:
        return hf_split(pattern or "")


PRETOKENIZER_REGISTRY: Registry[PreTokenizer] = Registry(
    "pre-tokenizer",
    {
        "none": NoSplit("no pre-tokenization: each sequence is one piece (merges may cross spaces)"),
        "whitespace": WhitespaceSplit("split on runs of whitespace and drop them (Python's str.split())"),
        "spaces": SpaceSplit(
            "split on spaces and line breaks only, as subword-nmt: tabs and no-break spaces stay in words"
        ),
        "gpt2": RegexSplit(
            "GPT-2's regex: contractions, ' ?letters', ' ?digits', ' ?punctuation', whitespace", GPT2_PATTERN
        ),
        "cl100k": RegexSplit(
            "GPT-4's cl100k_base regex: digits in groups of 1-3, case-insensitive contractions", CL100K_PATTERN
        ),
        "o200k": RegexSplit(
            "GPT-4o's o200k_base regex: splits camelCase, keeps contractions on the word", O200K_PATTERN
        ),
        "regex": CustomRegex("a custom regex: each match is a piece; text between matches is kept as pieces too"),
        # a variant may add its own (SuperBPE's superword twins, in bpe.superbpe)
    },
)
# name -> ..., each kept in step with the registry
PRETOKENIZERS: dict[str, str] = PRETOKENIZER_REGISTRY.descriptions
PATTERNS: dict[str, str] = PRETOKENIZER_REGISTRY.view(lambda s: s.pattern if isinstance(s, RegexSplit) else None)
PATTERNS_COMPILED: dict[str, regex.Pattern] = PRETOKENIZER_REGISTRY.view(
    lambda s: s.full if isinstance(s, RegexSplit) else None
)
TIKTOKEN_PATTERNS: dict[str, str] = PRETOKENIZER_REGISTRY.view(lambda s: s.to_tiktoken())
MINBPE_PATTERNS: dict[str, str] = PRETOKENIZER_REGISTRY.view(lambda s: s.to_minbpe())
_PRETOKENIZER = PRETOKENIZER_REGISTRY.stage


def builtin_pieces(text: str, name: str) -> list[str]:
    """The pieces of a regex pre-tokenizer, by its fast path.

    >>> builtin_pieces("Hi, Zoë!\\nI'm 42.\\nBye", "gpt2")
    ['Hi', ',', ' Zoë', '!', '\\n', 'I', "'m", ' 42', '.', '\\n', 'Bye']
    """
    return _PRETOKENIZER(name).piece_texts(text)


def pre_tokenize_str(text: str, *, pretokenizer: str = "gpt2", pattern: str | None = None) -> list[Piece]:
    """Cut one sequence into pieces with offsets (HF's ``pre_tokenize_str``).

    >>> [p.text for p in pre_tokenize_str("Hello world, it's 2024!")]
    ['Hello', ' world', ',', ' it', "'s", ' 2024', '!']
    >>> [p.text for p in pre_tokenize_str("Hello world, it's 2024!", pretokenizer="cl100k")]
    ['Hello', ' world', ',', ' it', "'s", ' ', '202', '4', '!']
    >>> pre_tokenize_str("  two  words ", pretokenizer="whitespace")
    [Piece(text='two', start=2, end=5), Piece(text='words', start=7, end=12)]
    """
    return _PRETOKENIZER(pretokenizer).apply(text, pattern=pattern)


def iter_piece_texts(
    sequences: Iterable[str], *, pretokenizer: str = "gpt2", pattern: str | None = None
) -> Iterator[list[str]]:
    """Pieces of each sequence. A custom regex gets one time budget for all of them, so a
    pattern that backtracks on every line of a long corpus fails in seconds, not hours.

    >>> list(iter_piece_texts(["a b", "c"], pretokenizer="whitespace"))
    [['a', 'b'], ['c']]
    """
    return _PRETOKENIZER(pretokenizer).iter_piece_texts(sequences, pattern=pattern)


def piece_texts(text: str, *, pretokenizer: str = "gpt2", pattern: str | None = None) -> list[str]:
    """The pieces' texts only: the fast path training and encoding use.

    >>> piece_texts("a  b", pretokenizer="gpt2")
    ['a', ' ', ' b']
    """
    return _PRETOKENIZER(pretokenizer).piece_texts(text, pattern=pattern)
