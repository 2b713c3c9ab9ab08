"""Normalizers: the first pipeline stage, text -> text.

``collapse-whitespace`` is seed 004's ``re.sub(r"\\s+", " ", line).strip()``.
"""

from __future__ import annotations

import re
import unicodedata

from ..errors import ConfigError

__all__ = ["NORMALIZERS", "normalize_str"]

NORMALIZERS: dict[str, str] = {
    "none": "leave the text as it is",
    "nfc": "Unicode NFC: compose characters (e + combining acute -> é)",
    "nfkc": "Unicode NFKC: compose and fold compatibility forms (ﬁ -> fi, ① -> 1)",
    "lowercase": "lower-case everything, one character at a time (HF's Lowercase: 'Σ' is always 'σ')",
    "collapse-whitespace": "every run of whitespace becomes one space; strip both ends",
}

_WS = re.compile(r"\s+")


def normalize_str(text: str, *, normalizer: str = "none") -> str:
    """Apply one normalizer.

    >>> normalize_str("  Hello\\n\\t World ", normalizer="collapse-whitespace")
    'Hello World'
    >>> normalize_str("cafe\\u0301", normalizer="nfc") == "caf\\u00e9"
    True
    >>> normalize_str("ΟΔΟΣ", normalizer="lowercase")
    'οδοσ'
    """
    if normalizer == "none":
        return text
    if normalizer == "nfc":
        return unicodedata.normalize("NFC", text)
    if normalizer == "nfkc":
        return unicodedata.normalize("NFKC", text)
    if normalizer == "lowercase":
        # character by character, as HF's Lowercase: str.lower() alone writes a word-final
        # capital sigma as "ς" (Unicode's Final_Sigma context), HF always as "σ"
        return text.replace("Σ", "σ").lower()
    if normalizer == "collapse-whitespace":
        return _WS.sub(" ", text).strip()
    raise ConfigError(f"unknown normalizer {normalizer!r}; choose one of {', '.join(NORMALIZERS)}")
