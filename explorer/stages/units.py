"""Units: how a pre-tokenized piece becomes the base symbols BPE starts from.

Two units exist. ``char`` splits a piece into Unicode code points. ``byte`` splits its UTF-8
encoding into bytes and shows each byte through GPT-2's byte-to-unicode table, so that every
byte-level token has a printable display string (space -> ``Ġ``, newline -> ``Ċ``), exactly the
strings HF ``tokenizers`` writes into ``tokenizer.json``.

A token's identity is its display string: concatenating the display strings of two tokens gives
the display string of their merge, for both units.
"""

from __future__ import annotations

from ..errors import ConfigError

__all__ = [
    "BYTE_TO_UNICODE",
    "UNICODE_TO_BYTE",
    "UNITS",
    "base_symbols",
    "byte_alphabet",
    "display_to_bytes",
    "bytes_to_display",
]

UNITS = ("char", "byte")


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
# str.translate table: one latin-1 char per byte -> its GPT-2 display char.
_LATIN1_TO_DISPLAY = {b: c for b, c in BYTE_TO_UNICODE.items()}


def bytes_to_display(data: bytes) -> str:
    """Bytes -> GPT-2 display string.

    >>> bytes_to_display(" hé\\n".encode())
    'ĠhÃ©Ċ'
    """
    return data.decode("latin-1").translate(_LATIN1_TO_DISPLAY)


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


def base_symbols(piece: str, unit: str) -> list[str]:
    """A piece's base symbols as display strings.

    >>> base_symbols("hé", "char")
    ['h', 'é']
    >>> base_symbols(" hé", "byte")
    ['Ġ', 'h', 'Ã', '©']
    """
    if unit == "char":
        return list(piece)
    if unit == "byte":
        # lone surrogates (not valid in UTF-8) pass through as their 3 bytes instead of raising
        return list(bytes_to_display(piece.encode("utf-8", "surrogatepass")))
    raise ConfigError(f"unknown unit {unit!r}; choose one of {', '.join(UNITS)}")
