"""What a tokenizer does to one text: counts, the round trip, symbols it cannot represent,
BPE-dropout samples, and the character-level / byte-level twins of a configuration.

Data shapes::

    TextStats(tokens=9, chars=44, bytes=46, unknown=0)
    RoundTrip(exact=True, decoded="...", unknown=Counter({"한": 3}))
    sample_segmentations(...) -> [((12, 7, 99), 61), ((12, 7, 40, 3), 23), ...]   # (ids, times drawn)
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

import regex

from ..bpe.config import TrainerConfig
from ..bpe.tokenizer import Tokenizer
from ..stages.pipeline import word_symbols

__all__ = [
    "is_superword",
    "superword_ids",
    "TextStats",
    "RoundTrip",
    "text_stats",
    "round_trip",
    "unknown_symbols",
    "sample_segmentations",
    "utf8_runs",
    "example_sentence",
    "twin_configs",
]


class TextStats(NamedTuple):
    tokens: int
    chars: int
    bytes: int
    unknown: int  # how many ids are the unk id

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0


def text_stats(tok: Tokenizer, text: str, ids: list[int]) -> TextStats:
    """Sizes of a text and of its encoding ``ids``.

    >>> from explorer import make_config, train
    >>> tok = train("ab ab", make_config("sennrich", num_merges=1)).tokenizer()
    >>> s = text_stats(tok, "ab c", tok.encode("ab c")); s, s.chars_per_token
    (TextStats(tokens=4, chars=4, bytes=4, unknown=1), 1.0)
    """
    return TextStats(len(ids), len(text), len(text.encode("utf-8", "surrogatepass")), ids.count(tok.unk_id))


def unknown_symbols(tok: Tokenizer, text: str) -> Counter[str]:
    """Base symbols of a text that the tokenizer's alphabet lacks (each becomes the unk token),
    with how often they occur. Byte-level symbols are GPT-2 display characters.

    >>> from explorer import make_config, train
    >>> tok = train("ab ab", make_config("sennrich", num_merges=1)).tokenizer()
    >>> unknown_symbols(tok, "abc cd")
    Counter({'c': 2, 'd': 1})
    """
    out: Counter[str] = Counter()
    for piece in tok.encode_pieces(text):
        if tok.unk_id in piece.ids:
            out.update(s for s in word_symbols(piece.text, tok.pipeline) if tok.token_to_id(s) is None)
    return out


class RoundTrip(NamedTuple):
    exact: bool  # decode(encode(text)) == text
    decoded: str
    unknown: Counter[str]  # symbols that became the unk token


def round_trip(tok: Tokenizer, text: str, ids: list[int]) -> RoundTrip:
    """Whether decoding ``ids`` (the text's encoding) gives the text back, and if not, which
    symbols were lost to the unk token.

    >>> from explorer import make_config, train
    >>> tok = train("ab ab", make_config("sennrich", num_merges=1)).tokenizer()
    >>> round_trip(tok, "ab", tok.encode("ab")).exact, round_trip(tok, "abc", tok.encode("abc")).unknown
    (True, Counter({'c': 1}))
    """
    decoded = tok.decode(ids)
    unknown = unknown_symbols(tok, text) if tok.unk_id in ids else Counter()
    return RoundTrip(decoded == text, decoded, unknown)


def sample_segmentations(
    tok: Tokenizer, text: str, *, dropout: float, samples: int, seed: int = 0
) -> list[tuple[tuple[int, ...], int]]:
    """Encode a text ``samples`` times with BPE-dropout (seeds ``seed``, ``seed + 1``, ...) and
    count the distinct segmentations, most frequent first (ties in the order first drawn).

    >>> from explorer import make_config, train
    >>> tok = train("low " * 5, make_config("sennrich", num_merges=3)).tokenizer()
    >>> sample_segmentations(tok, "low", dropout=0.0, samples=5)
    [((6,), 5)]
    >>> len(sample_segmentations(tok, "low", dropout=0.5, samples=50, seed=1)) > 1
    True
    """
    counts: Counter[tuple[int, ...]] = Counter(
        tuple(tok.encode(text, dropout=dropout, seed=seed + i)) for i in range(samples)
    )
    return counts.most_common()


def utf8_runs(data: bytes) -> list[tuple[str | bytes, bool]]:
    """Cut bytes into runs of valid UTF-8 text and runs of bytes that are not (a part of a
    multi-byte character, say), so a display can show the latter as hex.

    >>> utf8_runs("a你".encode()[:3]), utf8_runs(b"\\xe4\\xbd\\xa0!")
    ([('a', True), (b'\\xe4\\xbd', False)], [('你!', True)])
    """
    out: list[tuple[str | bytes, bool]] = []
    while data:
        try:
            out.append((data.decode("utf-8"), True))
            break
        except UnicodeDecodeError as err:
            if err.start:
                out.append((data[: err.start].decode("utf-8"), True))
            end = err.end if err.reason != "unexpected end of data" else len(data)
            out.append((data[err.start : end], False))
            data = data[end:]
    return out


# Where a sentence ends: . ! ? … before a space or the end of a line (so 3.5 and e.g. stay whole),
# and the full stops of scripts that need no space after them: CJK 。！？, Devanagari's danda । ॥,
# Arabic's ؟, Urdu's ۔, Armenian's ։, Ethiopic's ።, Myanmar's ။ (a closing quote or bracket goes along)
_SENTENCE_END = regex.compile(r"(?:[.!?…]+|[。！？।॥؟۔։።။]+)[\"'”’»」』)\]]*(?=\s|$)|[。！？।॥؟۔։።။]+[”’」』)]*")
_SCANNED = 200_000  # characters of a corpus searched for a sentence (it is usually in the first lines)
_WRAPPED = 50  # a paragraph whose lines (but its last) are all this long is prose wrapped by hand


def _units(text: str) -> list[str]:
    """A text's paragraphs (at blank lines) as lines of running text: a paragraph wrapped by hand
    (long lines) is one unit, joined with spaces; else each line is one (a title, a list, verse)."""
    units: list[str] = []
    for paragraph in regex.split(r"\n[ \t]*\n", text):
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        if len(lines) > 1 and all(len(line) >= _WRAPPED for line in lines[:-1]):
            units.append(" ".join(lines))
        else:
            units.extend(lines)
    return units


def _wordy(sentence: str) -> bool:
    """Mostly letters (and the marks that write vowels in Indic scripts), not a row of figures."""
    shown = [c for c in sentence if not c.isspace()]
    letters = sum(1 for c in shown if unicodedata.category(c)[0] in "LM")
    return letters * 2 >= len(shown)


def example_sentence(texts: Sequence[str], *, shortest: int = 30, longest: int = 120) -> str:
    """A real sentence of the corpus to count tokens in: the first one, in the order of
    ``texts``, that ends with a full stop (of any script), runs from ``shortest`` to ``longest``
    characters and is mostly letters; else the first line of letters of that length (or its
    start, cut at a space), else the first line of letters; "" for texts without letters.
    Deterministic.

    >>> example_sentence(["Title\\nA line that ends with a comma, and goes on,\\nIt was a dark and stormy night. Then?"])
    'It was a dark and stormy night.'
    >>> example_sentence(["नमस्ते दुनिया। यह एक छोटा सा वाक्य है जो हिंदी में लिखा है। और"])
    'यह एक छोटा सा वाक्य है जो हिंदी में लिखा है।'
    >>> example_sentence(["def f(x):\\n    return x + 1  # add one to the number given"])
    'return x + 1  # add one to the number given'
    >>> example_sentence(["aaabdaaabac"]), example_sentence(["1 2 3", "  "])
    ('aaabdaaabac', '')
    """
    line, short = "", ""
    for text in texts:
        for unit in _units(text[:_SCANNED]):
            start = 0
            for end in _SENTENCE_END.finditer(unit):
                sentence = unit[start : end.end()].strip()
                start = end.end()
                if shortest <= len(sentence) <= longest and _wordy(sentence):
                    return sentence
            if _wordy(unit):
                cut = unit if len(unit) <= longest else unit[:longest].rsplit(" ", 1)[0]
                if len(unit) >= shortest:
                    line = line or cut
                short = short or cut
    return line or short


def twin_configs(config: TrainerConfig, *, merges: int) -> tuple[TrainerConfig, TrainerConfig]:
    """A character-level and a byte-level configuration that share a configuration's
    normalizer, sequences, pre-tokenizer and special tokens, and make the same number of
    merges: the only difference is the unit (char, present alphabet vs byte, all 256 bytes).
    Word markers are left out of both, since byte level has none.

    >>> char, byte = twin_configs(TrainerConfig(pretokenizer="cl100k"), merges=100)
    >>> (char.unit, char.alphabet, char.num_merges), (byte.unit, byte.alphabet, byte.pretokenizer)
    (('char', 'present', 100), ('byte', 'full-bytes', 'cl100k'))
    """
    shared: dict[str, Any] = dict(
        vocab_size=None, num_merges=merges, marker="none", alphabet_order="sorted", min_frequency=0
    )
    char = config.replace(unit="char", alphabet="present", **shared)
    byte = config.replace(unit="byte", alphabet="full-bytes", **shared)
    return char, byte


def is_superword(text: str) -> bool:
    """Whether a token's text crosses a word boundary, as a superword does: a space after its
    first character, leading and trailing spaces aside (``" the"`` is one word, ``" of the"`` two).

    >>> [is_superword(t) for t in (" of the", " the", "  ", "the ", ", and")]
    [True, False, False, False, True]
    """
    return " " in text[1:].rstrip(" ") and bool(text.strip())


def superword_ids(tokenizer: Tokenizer) -> list[int]:
    """The merged tokens that are superwords (``is_superword``), in the order they were learned.

    >>> from explorer import make_config, train
    >>> cfg = make_config("gpt2", vocab_size=None, num_merges=6, superbpe_transition=3, sequences="lines")
    >>> tok = train("of the cat\\n" * 5, cfg).tokenizer()
    >>> [tok.decode([i]) for i in superword_ids(tok)]  # three merges in words, then across spaces
    ['of th', 'of the', 'of the ']
    """
    return [
        i
        for i in tokenizer.merged_ids
        if is_superword(tokenizer.token_bytes(i).decode("utf-8", "replace")) and not tokenizer.is_special(i)
    ]
