"""Normalizers: the first pipeline stage, text -> text.

Each is one entry of ``NORMALIZER_REGISTRY``: what it does to a text and its HF
``tokenizer.json`` form. ``collapse-whitespace`` is seed 004's ``re.sub(r"\\s+", " ", line).strip()``.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from .registry import Registry

__all__ = ["NORMALIZERS", "NORMALIZER_REGISTRY", "Normalizer", "PY_SPACE", "normalize_str"]

# Our whitespace is Python's (``str.split``, ``re``'s ``\s``, ``str.isspace``): Unicode White_Space
# plus U+001C-U+001F, which HF's WhitespaceSplit, Strip and Oniguruma's \s leave alone; so the
# HF forms spell the class out. Written here rather than derived at import time (a scan of every
# code point, ~60 ms on each start); a test derives it from str.isspace and compares.
PY_SPACE = "[\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028-\u2029\u202f\u205f\u3000]"


@dataclass(frozen=True, slots=True)
class Normalizer:
    """One normalizer: ``apply`` (text -> text), what it does, and its HF normalizer object
    (None: HF's ``"normalizer": null``, no normalizer).

    >>> NORMALIZER_REGISTRY["nfkc"].apply("ﬁ①"), NORMALIZER_REGISTRY["nfkc"].to_hf()
    ('fi1', {'type': 'NFKC'})
    """

    description: str
    apply: Callable[[str], str]
    hf: dict | None = field(default=None, compare=False)

    def to_hf(self) -> dict | None:
        """The HF ``tokenizer.json`` "normalizer" value (a copy: the caller may change it)."""
        return copy.deepcopy(self.hf)


def _unchanged(text: str) -> str:
    return text


def _lowercase(text: str) -> str:
    """Character by character, as HF's Lowercase: str.lower() alone writes a word-final capital
    sigma as "ς" (Unicode's Final_Sigma context), HF always as "σ".

    >>> _lowercase("ΟΔΟΣ")
    'οδοσ'
    """
    return text.replace("Σ", "σ").lower()


_WS = re.compile(r"\s+")


def _collapse_whitespace(text: str) -> str:
    return _WS.sub(" ", text).strip()


NORMALIZER_REGISTRY: Registry[Normalizer] = Registry(
    "normalizer",
    {
        "none": Normalizer("leave the text as it is", _unchanged),
        "nfc": Normalizer(
            "Unicode NFC: compose characters (e + combining acute -> é)",
            partial(unicodedata.normalize, "NFC"),
            {"type": "NFC"},
        ),
        "nfkc": Normalizer(
            "Unicode NFKC: compose and fold compatibility forms (ﬁ -> fi, ① -> 1)",
            partial(unicodedata.normalize, "NFKC"),
            {"type": "NFKC"},
        ),
        "lowercase": Normalizer(
            "lower-case everything, one character at a time (HF's Lowercase: 'Σ' is always 'σ')",
            _lowercase,
            {"type": "Lowercase"},
        ),
        # HF: runs of whitespace to one space, then both ends stripped (after the Replace only
        # spaces can be left at the ends for Strip)
        "collapse-whitespace": Normalizer(
            "every run of whitespace becomes one space; strip both ends",
            _collapse_whitespace,
            {
                "type": "Sequence",
                "normalizers": [
                    {"type": "Replace", "pattern": {"Regex": PY_SPACE + "+"}, "content": " "},
                    {"type": "Strip", "strip_left": True, "strip_right": True},
                ],
            },
        ),
    },
)
NORMALIZERS: dict[str, str] = NORMALIZER_REGISTRY.descriptions  # name -> what it does, live
_STAGE = NORMALIZER_REGISTRY.stage


def normalize_str(text: str, *, normalizer: str = "none") -> str:
    """Apply one normalizer.

    >>> normalize_str("  Hello\\n\\t World ", normalizer="collapse-whitespace")
    'Hello World'
    >>> normalize_str("cafe\\u0301", normalizer="nfc") == "caf\\u00e9"
    True
    >>> normalize_str("ΟΔΟΣ", normalizer="lowercase")
    'οδοσ'
    """
    return _STAGE(normalizer).apply(text)
