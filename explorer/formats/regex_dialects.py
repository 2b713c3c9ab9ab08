"""Our regexes as HF ``tokenizers``' Oniguruma reads them.

Our pre-tokenizers' patterns are written for the ``regex`` module (tiktoken's fancy-regex and
minbpe read them the same way). HF's Oniguruma, in its Ruby syntax, reads a few constructs
differently, so a tokenizer.json must carry a rewritten pattern that Oniguruma matches exactly as
``regex`` matches ours:

- ``X{1,3}+`` is possessive for ``regex`` and a repeat of a repeat, ``(?:X{1,3})+``, for
  Oniguruma (cl100k's ``\\p{N}{1,3}+``: "1234567" is one piece there, three here): written as
  the atomic group ``(?>X{1,3})``, which both engines read as the possessive repeat;
- ``^`` and ``$`` outside a class are the text's start and end (``$`` also before a final
  newline) for ``regex``, every line's for Oniguruma: written ``\\A`` and ``\\Z``;
- ``\\Z`` is the very end for ``regex``, the end or before a final newline for Oniguruma:
  written ``\\z``.

Possessive ``?+``, ``*+``, ``++``, atomic groups, lookarounds, ``(?i:...)``, ``\\p{...}`` and
``\\s`` read the same in both (checked against HF on hostile text by the tests). Inline flags
other than ``i`` (``(?s)`` is an error in Oniguruma, ``(?m)`` means dotall there) and escapes
one engine lacks are refused with a ConfigError naming them, rather than written as another
tokenizer.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

__all__ = ["oniguruma_pattern"]

# an escape: \p{..}/\P{..}/\N{..}/\x{..} whole, \x and \u with their digits, else one character
_ESCAPE = re.compile(r"\\(?:[pPNx]\{[^}]*\}|[pP][A-Za-z]|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
_COUNT = re.compile(r"\{\d*(?:,\d*)?\}")
# escapes the two engines read apart, or that one lacks: \w and \b (Oniguruma's word characters
# leave out '²', '½' and other numbers regex counts), \h (hex digit for Oniguruma), \m/\M (word
# boundaries for regex), \N{NAME} (not a newline for Oniguruma), \G, \K, \L<...>, \Q...\E
_UNSAFE_ESCAPES = frozenset("wWbBhHmMNGKLQE")
_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class that opens at ``start``.

    >>> _class_end(r"[]a\\]]b", 0), _class_end(r"[^]x]", 0)
    (6, 5)
    """
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a ']' first is a member
        i += 1
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += len(_ESCAPE.match(pattern, i).group())  # type: ignore[union-attr]
            continue
        if c == "[":
            raise ConfigError(
                f"HF's Oniguruma reads a '[' inside a character class as a nested class: escape it as '\\[' "
                f"({pattern!r})"
            )
        if c == "]":
            return i + 1
        i += 1
    raise ConfigError(f"the regex has an unclosed character class: {pattern!r}")


def _check_group(pattern: str, at: int) -> None:
    """ConfigError for a group opening Oniguruma reads apart from ``regex``: inline flags other
    than ``i``, branch reset, conditionals, fuzzy or version flags."""
    m = _FLAGS.match(pattern, at)
    if m is not None:
        flags = (m.group(1) or "") + (m.group(2) or "")
        odd = sorted(set(flags) - {"i"})
        if odd:
            raise ConfigError(
                f"HF's Oniguruma reads the inline flag{'s' * (len(odd) > 1)} {', '.join(odd)} differently "
                f"(only (?i) is written as is): {pattern!r}"
            )
        return
    if pattern.startswith(("(?|", "(?(", "(?P>", "(?&", "(?R", "(?0"), at):
        raise ConfigError(
            f"HF's Oniguruma has no {pattern[at : at + 3]!r} (branch reset, conditional or recursion): {pattern!r}"
        )


def oniguruma_pattern(pattern: str) -> str:
    """``pattern`` (``regex`` module syntax) rewritten so that HF's Oniguruma matches exactly as
    ``regex`` does; a construct with no such rewrite is a ConfigError naming it.

    >>> oniguruma_pattern(r"\\p{N}{1,3}+|[^\\s\\p{L}]++|\\s++$")
    '(?>\\\\p{N}{1,3})|[^\\\\s\\\\p{L}]++|\\\\s++\\\\Z'
    >>> oniguruma_pattern(r"(?:ab|[{]){2}+|x\\Z|^y")
    '(?>(?:ab|[{]){2})|x\\\\z|\\\\Ay'
    >>> oniguruma_pattern(r"(?s).+")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: HF's Oniguruma reads the inline flag s differently (only (?i) is written as is): '(?s).+'
    """
    out: list[str] = []  # the pieces written so far; atoms[-1] indexes the last atom's first piece
    atom_at: int | None = None
    groups: list[int] = []  # where each open group's piece is in out
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            esc = _ESCAPE.match(pattern, i).group()  # type: ignore[union-attr]
            if esc[1] in _UNSAFE_ESCAPES:
                raise ConfigError(f"HF's Oniguruma reads the escape {esc!r} differently: {pattern!r}")
            atom_at = len(out)
            out.append(r"\z" if esc == r"\Z" else esc)
            i += len(esc)
        elif c == "[":
            end = _class_end(pattern, i)
            atom_at = len(out)
            out.append(pattern[i:end])
            i = end
        elif c == "(":
            _check_group(pattern, i)
            groups.append(len(out))
            out.append("(")
            atom_at = None
            i += 1
        elif c == ")":
            atom_at = groups.pop() if groups else None
            out.append(")")
            i += 1
        elif c == "{" and (count := _COUNT.match(pattern, i)) is not None:
            end = count.end()
            if end < len(pattern) and pattern[end] == "+" and atom_at is not None:
                # possessive counted repeat: an atomic group around the greedy repeat
                out[atom_at:] = ["(?>" + "".join(out[atom_at:]) + count.group() + ")"]
                end += 1
            else:
                out.append(count.group())
            atom_at = None
            i = end
        elif c in "^$":
            atom_at = None
            out.append(r"\A" if c == "^" else r"\Z")
            i += 1
        else:
            # a quantifier (with its lazy '?' or possessive '+') ends the atom; '|' too
            atom_at = None if c in "*+?|" else len(out)
            out.append(c)
            i += 1
    return "".join(out)
