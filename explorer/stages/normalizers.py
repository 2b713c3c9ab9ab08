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

__all__ = [
    "NORMALIZERS",
    "NORMALIZER_REGISTRY",
    "Normalizer",
    "PY_SPACE",
    "SP_SPACE",
    "normalize_str",
    "denormalize_str",
]

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
    # SentencePiece's spaces as "▁": how decoding gives the spaces back (the joined tokens ->
    # text), and HF's decoder steps that do it (None: the text decodes as it is, HF's Fuse)
    decode: Callable[[str], str] | None = field(default=None, compare=False)
    hf_decoder: tuple[dict, ...] | None = field(default=None, compare=False)
    # HF writes this one as a pre-tokenizer step (Metaspace with split false), not a normalizer
    hf_pre_tokenizer: dict | None = field(default=None, compare=False)

    def to_hf(self) -> dict | None:
        """The HF ``tokenizer.json`` "normalizer" value (a copy: the caller may change it)."""
        return copy.deepcopy(self.hf)

    def to_hf_decoder(self, *, byte_fallback: bool = False) -> dict:
        """HF's decoder for a character-level tokenizer with no word marker behind this
        normalizer: its own steps (or Fuse), HF's ByteFallback before the Fuse with byte fallback.

        >>> NORMALIZER_REGISTRY["none"].to_hf_decoder()
        {'type': 'Fuse'}
        >>> [d["type"] for d in NORMALIZER_REGISTRY["sp-prepend"].to_hf_decoder(byte_fallback=True)["decoders"]]
        ['Replace', 'ByteFallback', 'Fuse', 'Strip']
        """
        steps = [copy.deepcopy(d) for d in self.hf_decoder or ({"type": "Fuse"},)]
        if byte_fallback:
            steps.insert(steps.index({"type": "Fuse"}), {"type": "ByteFallback"})
        return steps[0] if len(steps) == 1 else {"type": "Sequence", "decoders": steps}


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


# HF's Strip strips Rust's whitespace (Unicode White_Space): Python's also holds U+001C-U+001F
_RUST_SPACE = "[\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_HF_ENDS = re.compile(f"^{_RUST_SPACE}+|{_RUST_SPACE}+\\Z")


def _strip(text: str) -> str:
    """Both ends stripped of whitespace as HF's Strip does (U+001C is no whitespace there).

    >>> _strip("\\x1c a \\u3000\\n")
    '\\x1c a'
    """
    return _HF_ENDS.sub("", text)


SP_SPACE = "▁"  # SentencePiece's space (U+2581)


def _sp_spaces(text: str) -> str:
    """Every space as "▁" (HF's Replace normalizer; Gemma's).

    >>> _sp_spaces(" a  b")
    '▁a▁▁b'
    """
    return text.replace(" ", SP_SPACE)


def _sp_prepend(text: str) -> str:
    """ "▁" before a non-empty text, then every space as "▁" (HF's Prepend and Replace; Llama 2's
    and Mistral 7B's).

    >>> _sp_prepend(" a"), _sp_prepend("")
    ('▁▁a', '')
    """
    return SP_SPACE + _sp_spaces(text) if text else text


def _metaspace(text: str) -> str:
    """Every space as "▁", then "▁" before a text that does not start with one (HF's Metaspace
    pre-tokenizer, prepend_scheme always, split false).

    >>> _metaspace(" a"), _metaspace("a b")
    ('▁a', '▁a▁b')
    """
    text = _sp_spaces(text)
    return text if not text or text.startswith(SP_SPACE) else SP_SPACE + text


def _sp_spaces_back(text: str) -> str:
    return text.replace(SP_SPACE, " ")


def _sp_prepended_back(text: str) -> str:
    """The spaces back and the prepended one removed (HF's Replace, Fuse, then Strip of one
    leading space).

    >>> _sp_prepended_back("▁▁a▁b"), _sp_prepended_back("a")
    (' a b', 'a')
    """
    text = _sp_spaces_back(text)
    return text[1:] if text.startswith(" ") else text


_SP_REPLACE = {"type": "Replace", "pattern": {"String": SP_SPACE}, "content": " "}
_STRIP_ONE = {"type": "Strip", "content": " ", "start": 1, "stop": 0}


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
        "strip": Normalizer(
            "strip whitespace at both ends (HF's Strip)",
            _strip,
            {"type": "Strip", "strip_left": True, "strip_right": True},
        ),
        "sp-prepend": Normalizer(
            "'▁' before the text, every space as '▁' (SentencePiece's dummy prefix: Llama 2, Mistral 7B)",
            _sp_prepend,
            {
                "type": "Sequence",
                "normalizers": [
                    {"type": "Prepend", "prepend": SP_SPACE},
                    {"type": "Replace", "pattern": {"String": " "}, "content": SP_SPACE},
                ],
            },
            decode=_sp_prepended_back,
            hf_decoder=(_SP_REPLACE, {"type": "Fuse"}, _STRIP_ONE),
        ),
        "sp-spaces": Normalizer(
            "every space as '▁' (SentencePiece without a dummy prefix: Gemma)",
            _sp_spaces,
            {"type": "Replace", "pattern": {"String": " "}, "content": SP_SPACE},
            decode=_sp_spaces_back,
            hf_decoder=(_SP_REPLACE, {"type": "Fuse"}),
        ),
        "metaspace": Normalizer(
            "every space as '▁', and '▁' before a text that does not start with one (HF's Metaspace)",
            _metaspace,
            decode=_sp_prepended_back,
            hf_decoder=(_SP_REPLACE, {"type": "Fuse"}, _STRIP_ONE),
            hf_pre_tokenizer={"type": "Metaspace", "replacement": SP_SPACE, "prepend_scheme": "always", "split": False},
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


def denormalize_str(text: str, *, normalizer: str = "none") -> str:
    """What decoding does for a normalizer (the spaces SentencePiece's write as "▁" back);
    most leave the text as it is.

    >>> denormalize_str("▁Hello▁world", normalizer="sp-prepend"), denormalize_str("▁a", normalizer="nfc")
    ('Hello world', '▁a')
    """
    back = _STAGE(normalizer).decode
    return text if back is None else back(text)
