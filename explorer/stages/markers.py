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

Each is one entry of ``MARKER_REGISTRY``: ``apply`` (a word's symbols -> with the marker),
``strip`` (the decoder: joined tokens -> words) and its HF ``tokenizer.json`` form.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from .registry import HfParts, Registry

__all__ = [
    "MARKERS",
    "MARKER_REGISTRY",
    "EOW",
    "G_SUFFIX",
    "SP_PREFIX",
    "Marker",
    "NoMarker",
    "SymbolAfter",
    "GluedAfter",
    "SymbolBefore",
    "apply_marker",
    "strip_markers",
]

EOW = "</w>"
G_SUFFIX = "Ġ"
SP_PREFIX = "▁"


class Marker(ABC):
    """What a registry entry does: ``apply`` writes the marker into a word's base symbols,
    ``strip`` turns the concatenated tokens of a char-level encoding back into words (its
    decoder), ``to_hf`` gives its share of an HF ``tokenizer.json`` (None: HF cannot write it)."""

    __slots__ = ()
    description: str

    @abstractmethod
    def apply(self, symbols: list[str]) -> list[str]: ...

    @abstractmethod
    def strip(self, text: str) -> str: ...

    def to_hf(self) -> HfParts | None:
        return None


@dataclass(frozen=True, slots=True)
class NoMarker(Marker):
    """A word is just its characters (HF: the Fuse decoder joins the tokens as they are)."""

    description: str

    def apply(self, symbols: list[str]) -> list[str]:
        return symbols

    def strip(self, text: str) -> str:
        return text

    def to_hf(self) -> HfParts:
        return HfParts(decoder={"type": "Fuse"})


@dataclass(frozen=True, slots=True)
class SymbolAfter(Marker):
    """``symbol`` after every word, as a symbol of its own.

    >>> m = SymbolAfter("", EOW)
    >>> m.apply(list("low")), m.strip("low</w>est</w>")
    (['l', 'o', 'w', '</w>'], 'low est')
    """

    description: str
    symbol: str

    def apply(self, symbols: list[str]) -> list[str]:
        return [*symbols, self.symbol] if symbols else symbols

    def strip(self, text: str) -> str:
        return text.replace(self.symbol, " ").rstrip(" ")


@dataclass(frozen=True, slots=True)
class GluedAfter(SymbolAfter):
    """``symbol`` glued to every word's last character, stripped as ``SymbolAfter`` (HF: the BPE
    model's ``end_of_word_suffix``, and the BPEDecoder).

    >>> GluedAfter("", EOW).apply(list("low"))
    ['l', 'o', 'w</w>']
    """

    def apply(self, symbols: list[str]) -> list[str]:
        return [*symbols[:-1], symbols[-1] + self.symbol] if symbols else symbols

    def to_hf(self) -> HfParts:
        return HfParts(decoder={"type": "BPEDecoder", "suffix": self.symbol}, end_of_word_suffix=self.symbol)


@dataclass(frozen=True, slots=True)
class SymbolBefore(Marker):
    """``symbol`` before every word, as a character (HF: Metaspace, as pre-tokenizer and decoder,
    which also turns every space inside a piece into the symbol).

    >>> m = SymbolBefore("", SP_PREFIX)
    >>> m.apply(list("low")), m.strip("▁low▁est")
    (['▁', 'l', 'o', 'w'], 'low est')
    """

    description: str
    symbol: str

    def apply(self, symbols: list[str]) -> list[str]:
        return [self.symbol, *symbols] if symbols else symbols

    def strip(self, text: str) -> str:
        return text.replace(self.symbol, " ").lstrip(" ")

    def to_hf(self) -> HfParts:
        metaspace = {"type": "Metaspace", "replacement": self.symbol, "prepend_scheme": "always", "split": False}
        return HfParts(pre_tokenizers=(metaspace,), decoder=dict(metaspace))  # the decoder takes the same options


MARKER_REGISTRY: Registry[Marker] = Registry(
    "marker",
    {
        "none": NoMarker("no marker: a word is just its characters"),
        "eow": SymbolAfter("'</w>' as a symbol of its own after every word (Sennrich et al. 2016)", EOW),
        "eow-glued": GluedAfter(
            "'</w>' glued to each word's last character (subword-nmt 0.2, HF end_of_word_suffix)", EOW
        ),
        "g-suffix": SymbolAfter("'Ġ' appended to every word as a character (seed 004)", G_SUFFIX),
        "sp-prefix": SymbolBefore("'▁' put before every word as a character (SentencePiece style)", SP_PREFIX),
    },
)
MARKERS: dict[str, str] = MARKER_REGISTRY.descriptions  # name -> what it does, live
_MARKER = MARKER_REGISTRY.stage


def apply_marker(symbols: list[str], marker: str) -> list[str]:
    """Write the word-boundary marker into a word's base symbols.

    >>> apply_marker(list("low"), "eow"), apply_marker(list("low"), "eow-glued")
    (['l', 'o', 'w', '</w>'], ['l', 'o', 'w</w>'])
    >>> apply_marker(list("low"), "g-suffix"), apply_marker(list("low"), "sp-prefix")
    (['l', 'o', 'w', 'Ġ'], ['▁', 'l', 'o', 'w'])
    """
    return _MARKER(marker).apply(symbols)


def strip_markers(text: str, marker: str) -> str:
    """Turn the concatenated tokens of a char-level encoding back into words.

    >>> strip_markers("low</w>est</w>", "eow"), strip_markers("▁low▁est", "sp-prefix")
    ('low est', 'low est')
    """
    return _MARKER(marker).strip(text)
