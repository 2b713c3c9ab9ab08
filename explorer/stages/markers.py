"""Word markers: how a word's boundary is written into its base symbols.

=============  ==========================  ==================================================
marker         "low" becomes               convention
=============  ==========================  ==================================================
none           l o w                       minbpe, GPT-2 (the space lives in the next piece)
eow            l o w </w>                  Sennrich et al. 2016 (seed 001): a symbol of its own
eow-glued      l o w</w>                   subword-nmt 0.2, HF ``end_of_word_suffix``
g-suffix       l o w Ġ                     seed 004: a suffix character
sp-prefix      ▁ l o w                     SentencePiece: a prefix character
=============  ==========================  ==================================================
"""

from __future__ import annotations

from ..errors import ConfigError

__all__ = ["MARKERS", "EOW", "G_SUFFIX", "SP_PREFIX", "apply_marker", "strip_markers"]

EOW = "</w>"
G_SUFFIX = "Ġ"
SP_PREFIX = "▁"

MARKERS: dict[str, str] = {
    "none": "no marker: a word is just its characters",
    "eow": "'</w>' as a symbol of its own after every word (Sennrich et al. 2016)",
    "eow-glued": "'</w>' glued to each word's last character (subword-nmt 0.2, HF end_of_word_suffix)",
    "g-suffix": "'Ġ' appended to every word as a character (seed 004)",
    "sp-prefix": "'▁' put before every word as a character (SentencePiece style)",
}


def apply_marker(symbols: list[str], marker: str) -> list[str]:
    """Write the word-boundary marker into a word's base symbols.

    >>> apply_marker(list("low"), "eow"), apply_marker(list("low"), "eow-glued")
    (['l', 'o', 'w', '</w>'], ['l', 'o', 'w</w>'])
    >>> apply_marker(list("low"), "g-suffix"), apply_marker(list("low"), "sp-prefix")
    (['l', 'o', 'w', 'Ġ'], ['▁', 'l', 'o', 'w'])
    """
    if marker == "none" or not symbols:
        return symbols
    if marker == "eow":
        return [*symbols, EOW]
    if marker == "eow-glued":
        return [*symbols[:-1], symbols[-1] + EOW]
    if marker == "g-suffix":
        return [*symbols, G_SUFFIX]
    if marker == "sp-prefix":
        return [SP_PREFIX, *symbols]
    raise ConfigError(f"unknown marker {marker!r}; choose one of {', '.join(MARKERS)}")


def strip_markers(text: str, marker: str) -> str:
    """Turn the concatenated tokens of a char-level encoding back into words.

    >>> strip_markers("low</w>est</w>", "eow"), strip_markers("▁low▁est", "sp-prefix")
    ('low est', 'low est')
    """
    if marker in ("eow", "eow-glued"):
        return text.replace(EOW, " ").rstrip(" ")
    if marker == "g-suffix":
        return text.replace(G_SUFFIX, " ").rstrip(" ")
    if marker == "sp-prefix":
        return text.replace(SP_PREFIX, " ").lstrip(" ")
    return text
