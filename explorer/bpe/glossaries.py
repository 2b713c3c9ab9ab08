"""subword-nmt's ``apply_bpe`` options beyond the merges: glossaries and symbols outside the
alphabet kept as themselves.

A glossary is a regex; its matches inside a word are cut out and never split, and each other
part of the word is merged as a word of its own (``isolate_glossaries``, subword-nmt's
``BPE._isolate_glossaries``). A symbol no merge knows keeps its text and gets an id past the
vocabulary (``OpenIds``): glossary words spelled out in full first, then every character, bare
or with the end-of-word marker glued, at ids computed from its code point, so that every process
gives the same character the same id and any such id decodes without a table; last, a regex
glossary's other matches, at ids computed from a hash of their text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

__all__ = ["END_OF_WORD", "OpenIds", "glossary_regex", "is_plain_word", "isolate_glossaries", "isolate_glossary"]

END_OF_WORD = "</w>"  # subword-nmt's end-of-word marker (markers eow and eow-glued)
_CODE_POINTS = 0x110000
_REGEX_CHARS = frozenset(".^$*+?{}[]\\|()")
_HASH_BYTES = 5  # 2**40 ids for a regex glossary's matches: a clash is as likely as 1 in 10**12 per pair


def isolate_glossary(word: str, glossary: str) -> list[str]:
    """A word cut around the matches of one glossary, as subword-nmt's ``isolate_glossary``
    (its quirks kept: the last part loses trailing spaces and line breaks).

    >>> isolate_glossary("1934USABUSA", "USA")
    ['1934', 'USA', 'B', 'USA']
    >>> isolate_glossary("USA", "USA"), isolate_glossary("UKR", "USA")
    (['USA'], ['UKR'])
    """
    if re.match("^" + glossary + "$", word) or not re.search(glossary, word):
        return [word]
    segments = re.split(f"({glossary})", word)
    segments, ending = segments[:-1], segments[-1]
    segments = [s for s in segments if s]  # a glossary's own groups split out as None or ""
    return [*segments, ending.strip("\r\n ")] if ending != "" else segments


def isolate_glossaries(word: str, glossaries: Sequence[str]) -> list[str]:
    """A word cut around every glossary's matches, one glossary after the other in their
    order (subword-nmt's ``BPE._isolate_glossaries``).

    >>> isolate_glossaries("x1934USAy", ["USA", "[0-9]+"])
    ['x', '1934', 'USA', 'y']
    """
    segments = [word]
    for gloss in glossaries:
        segments = [part for segment in segments for part in isolate_glossary(segment, gloss)]
    return segments


def glossary_regex(glossaries: Sequence[str]) -> re.Pattern | None:
    """What a part must match in full to be kept whole (subword-nmt's ``glossaries_regex``).

    >>> glossary_regex(["USA", "[0-9]+"]).match("1934") is not None, glossary_regex([])
    (True, None)
    """
    return re.compile("^({})$".format("|".join(glossaries))) if glossaries else None


def is_plain_word(glossary: str) -> bool:
    """Whether a glossary is a word spelled out (it matches itself and nothing else).

    >>> is_plain_word("USA"), is_plain_word("[0-9]+"), is_plain_word("a.b")
    (True, False, False)
    """
    return not _REGEX_CHARS.intersection(glossary)


class OpenIds:
    """Ids for symbols outside a vocabulary, from ``base`` on: the glossary words spelled out
    in full (each bare, then with the marker glued when the marker is glued), then each
    character at ``2 * code point`` (bare) or one more (with ``</w>`` glued), then the ``</w>``
    marker alone: computed, not recorded, so every process agrees and any of them reads back.
    Past them, any other string (a regex glossary's match) at an id hashed from its text; its
    text is recorded where it was encoded (another process cannot read that id back).

    >>> ids = OpenIds(10, ["USA"], glued=True)
    >>> ids.id_of("USA</w>"), ids.id_of("a"), ids.id_of("a</w>")
    (11, 206, 207)
    >>> [ids.text(i) for i in (11, 206, 207, ids.id_of("</w>"), ids.id_of("10001"))]
    ['USA</w>', 'a', 'a</w>', '</w>', '10001']
    """

    def __init__(self, base: int, words: Sequence[str], *, glued: bool):
        forms = [form for w in words for form in ((w, w + END_OF_WORD) if glued else (w,))]
        self.base = base
        self._words = {w: base + i for i, w in enumerate(dict.fromkeys(forms))}
        self._texts = {i: w for w, i in self._words.items()}
        self._chars = base + len(self._words)
        self.end = self._chars + 2 * _CODE_POINTS + 1  # one past the last computed id
        self._hashed: dict[int, str] = {}  # hashed id -> its string, as encoded here

    def id_of(self, symbol: str) -> int:
        """A symbol's open id: a glossary word, a character (``</w>`` glued or not), the
        marker alone, or any other string by its hash."""
        if symbol in self._words:
            return self._words[symbol]
        if symbol == END_OF_WORD:
            return self.end - 1
        glued = symbol.endswith(END_OF_WORD) and len(symbol) == len(END_OF_WORD) + 1
        if len(symbol) == 1 or glued:
            return self._chars + 2 * ord(symbol[0]) + glued
        digest = hashlib.blake2b(symbol.encode("utf-8", "surrogatepass"), digest_size=_HASH_BYTES).digest()
        token_id = self.end + int.from_bytes(digest, "big")
        self._hashed[token_id] = symbol  # one assignment: safe from several threads
        return token_id

    def text(self, token_id: int) -> str | None:
        """The symbol of an open id; None for an id outside the open range."""
        if token_id in self._texts:
            return self._texts[token_id]
        if not self._chars <= token_id < self.end:
            return self._hashed.get(token_id)
        if token_id == self.end - 1:
            return END_OF_WORD
        code, glued = divmod(token_id - self._chars, 2)
        return chr(code) + (END_OF_WORD if glued else "")
