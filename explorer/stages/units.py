"""Units: how a pre-tokenized piece becomes the base symbols BPE starts from.

Two units exist. ``char`` splits a piece into Unicode code points. ``byte`` splits its UTF-8
encoding into bytes and shows each byte through GPT-2's byte-to-unicode table, so that every
byte-level token has a printable display string (space -> ``Ġ``, newline -> ``Ċ``), exactly the
strings HF ``tokenizers`` writes into ``tokenizer.json``.

A token's identity is its display string: concatenating the display strings of two tokens gives
the display string of their merge, for both units.

Each unit is one entry of ``UNIT_REGISTRY``: ``apply`` (piece -> base symbols), ``decode`` (the
tokens' display strings, joined -> text) and its HF ``tokenizer.json`` form.
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter

from .pretokenizers import GPT2_PATTERN, hf_split
from .registry import HfParts, Registry

__all__ = [
    "BYTE_TO_UNICODE",
    "UNICODE_TO_BYTE",
    "UNITS",
    "UNIT_REGISTRY",
    "ByteUnit",
    "CharUnit",
    "HF_BYTE_LEVEL_REGEX",
    "Unit",
    "base_symbols",
    "byte_alphabet",
    "display_to_bytes",
    "bytes_to_display",
    "bytes_to_displays",
]


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's table: printable Latin-1 bytes map to themselves, the other 68 to chr(256 + n).

    >>> t = _bytes_to_unicode()
    >>> t[ord(" ")], t[ord("\\n")], t[ord("a")], t[0]
    ('Ġ', 'Ċ', 'a', 'Ā')
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


BYTE_TO_UNICODE: dict[int, str] = _bytes_to_unicode()
UNICODE_TO_BYTE: dict[str, int] = {c: b for b, c in BYTE_TO_UNICODE.items()}
# the display char of each byte, by byte: a charmap codec's decoding table (as the stdlib's
# single-byte codecs decode), each byte looked up in C, 20 times faster than decode + translate
_DISPLAY_TABLE = "".join(BYTE_TO_UNICODE[b] for b in range(256))


def bytes_to_display(data: bytes) -> str:
    """Bytes -> GPT-2 display string.

    >>> bytes_to_display(" hé\\n".encode())
    'ĠhÃ©Ċ'
    """
    return codecs.charmap_decode(data, "strict", _DISPLAY_TABLE)[0]


def bytes_to_displays(items: Iterable[bytes]) -> list[str]:
    """``bytes_to_display`` of each, the decoder mapped in C (a rank table's 200,000 tokens).

    >>> bytes_to_displays([b" ", b"", b"hi\\n"])
    ['Ġ', '', 'hiĊ']
    """
    decoded = map(codecs.charmap_decode, items, repeat("strict"), repeat(_DISPLAY_TABLE))
    return list(map(itemgetter(0), decoded))


def display_to_bytes(display: str) -> bytes:
    """GPT-2 display string -> bytes; raises KeyError on a char outside the table.

    >>> display_to_bytes("ĠhÃ©Ċ").decode()
    ' hé\\n'
    """
    return bytes(UNICODE_TO_BYTE[c] for c in display)


def byte_alphabet() -> list[str]:
    """All 256 byte display chars, in byte order (byte 0 first).

    >>> a = byte_alphabet(); len(a), a[32], a[97]
    (256, 'Ġ', 'a')
    """
    return [BYTE_TO_UNICODE[b] for b in range(256)]


class Unit(ABC):
    """What a registry entry does: ``apply`` turns a piece into the base symbols BPE starts from,
    ``decode`` turns the joined display strings of tokens back into text, ``to_hf`` gives the
    unit's share of an HF ``tokenizer.json``."""

    __slots__ = ()
    description: str

    @abstractmethod
    def apply(self, piece: str) -> list[str]: ...

    @abstractmethod
    def decode(self, tokens: str) -> str: ...

    @abstractmethod
    def to_hf(self, split: dict | None) -> HfParts:
        """The pre-tokenizer steps of this unit around ``split`` (the pre-tokenizer's step), and
        its decoder (None: the word marker's)."""


@dataclass(frozen=True, slots=True)
class CharUnit(Unit):
    """Unicode code points.

    >>> CharUnit("").apply("hé"), CharUnit("").to_hf({"type": "Split"})
    (['h', 'é'], HfParts(pre_tokenizers=({'type': 'Split'},), decoder=None, end_of_word_suffix=None))
    """

    description: str

    def apply(self, piece: str) -> list[str]:
        return list(piece)

    def decode(self, tokens: str) -> str:
        return tokens

    def to_hf(self, split: dict | None) -> HfParts:
        return HfParts(() if split is None else (split,))


# HF's ByteLevel pre-tokenizer with use_regex=true splits with GPT-2's regex first, so one such
# step stands for a Split on this pattern followed by ByteLevel with use_regex=false
HF_BYTE_LEVEL_REGEX = GPT2_PATTERN
_HF_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
_HF_BYTE_LEVEL_DECODER = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}


@dataclass(frozen=True, slots=True)
class ByteUnit(Unit):
    """UTF-8 bytes, each shown through GPT-2's table (HF: ByteLevel).

    >>> ByteUnit("").apply(" hé"), ByteUnit("").decode("ĠhÃ©")
    (['Ġ', 'h', 'Ã', '©'], ' hé')
    >>> [s["use_regex"] for s in ByteUnit("").to_hf(hf_split(GPT2_PATTERN)).pre_tokenizers]
    [True]
    """

    description: str

    def apply(self, piece: str) -> list[str]:
        # lone surrogates (not valid in UTF-8) pass through as their 3 bytes instead of raising
        return list(bytes_to_display(piece.encode("utf-8", "surrogatepass")))

    def decode(self, tokens: str) -> str:
        return display_to_bytes(tokens).decode("utf-8", errors="replace")

    def to_hf(self, split: dict | None) -> HfParts:
        if split == hf_split(HF_BYTE_LEVEL_REGEX):
            steps: tuple[dict, ...] = ({**_HF_BYTE_LEVEL, "use_regex": True},)
        else:
            steps = (*(() if split is None else (split,)), dict(_HF_BYTE_LEVEL))
        return HfParts(steps, dict(_HF_BYTE_LEVEL_DECODER))


UNIT_REGISTRY: Registry[Unit] = Registry(
    "unit",
    {"char": CharUnit("Unicode characters"), "byte": ByteUnit("UTF-8 bytes (byte-level BPE, as GPT-2)")},
)
UNITS: dict[str, str] = UNIT_REGISTRY.descriptions  # name -> what it is, live
_UNIT = UNIT_REGISTRY.stage


def base_symbols(piece: str, unit: str) -> list[str]:
    """A piece's base symbols as display strings.

    >>> base_symbols("hé", "char")
    ['h', 'é']
    >>> base_symbols(" hé", "byte")
    ['Ġ', 'h', 'Ã', '©']
    """
    return _UNIT(unit).apply(piece)
