"""Corpora: the bundled samples, and turning a user's bytes into text safely.

Nothing here guesses silently: undecodable bytes raise a CorpusError that says where, and the
caller chooses how to decode (strict UTF-8, UTF-8 with replacement characters, Latin-1, ...).
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from ..errors import CorpusError
from ..paths import app_root

__all__ = [
    "DECODINGS",
    "MAX_CORPUS_BYTES",
    "SAMPLE_DIR",
    "DecodedText",
    "SampleCorpus",
    "decode_bytes",
    "list_samples",
    "read_sample",
    "read_text_file",
    "require_text",
    "leading_sample",
    "utf8_size",
    "mib",
    "too_big",
    "CorpusStats",
    "corpus_stats",
]

SAMPLE_DIR = app_root() / "sample_corpora"
MAX_CORPUS_BYTES = 20 * 1024 * 1024  # the same in the app (uploads, pasted text) and the CLI


def mib(n: int) -> str:
    """A size in MiB, the one unit every size message uses (Streamlit's upload limit is in MiB).

    >>> mib(MAX_CORPUS_BYTES), mib(22_960_000)
    ('20.0 MiB', '21.9 MiB')
    """
    return f"{n / 2**20:.1f} MiB"


def too_big(what: str, size: int, limit: int = MAX_CORPUS_BYTES) -> CorpusError:
    return CorpusError(f"{what} is {mib(size)}; the limit is {mib(limit)}")


def require_text(texts) -> None:
    """Refuse a corpus with nothing to train on: no text, or only whitespace."""
    if not any(t.strip() for t in texts):
        raise CorpusError("the corpus is empty (or only whitespace): there is nothing to train on")


def utf8_size(texts) -> int:
    """UTF-8 bytes in all texts (what every size limit counts).

    >>> utf8_size(["héllo", "ok"])
    8
    """
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)


def leading_sample(texts, limit: int) -> tuple[str, ...]:
    r"""The corpus cut to at most ``limit`` UTF-8 bytes: whole texts in order, the last one kept
    up to its last line break within the limit (or cut at a character when its first line is
    longer), so a sample is a real stretch of the corpus, never half a line when a line fits.

    >>> leading_sample(["one\ntwo\n", "three\nfour\n"], 14)
    ('one\ntwo\n', 'three\n')
    >>> leading_sample(["abcdefgh"], 3)
    ('abc',)
    >>> leading_sample(["é" * 4], 5)
    ('éé',)
    """
    out: list[str] = []
    room = limit
    for text in texts:
        size = len(text.encode("utf-8", "surrogatepass"))
        if size <= room:
            out.append(text)
            room -= size
            continue
        head = text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")  # never half a character
        cut = head.rfind("\n")
        head = head[: cut + 1] if cut >= 0 else head
        if head:
            out.append(head)
        break
    return tuple(out)


DECODINGS: dict[str, str] = {
    "utf-8": "UTF-8, refuse undecodable bytes",
    "utf-8-replace": "UTF-8, undecodable bytes become U+FFFD (�)",
    "latin-1": "Latin-1: every byte is one character (never fails)",
    "cp1252": "Windows-1252 (Western European)",
    "utf-16": "UTF-16 with a byte-order mark",
}


class DecodedText(NamedTuple):
    text: str
    encoding: str
    replaced: int  # how many U+FFFD replacement characters decoding introduced


class SampleCorpus(NamedTuple):
    name: str  # path relative to sample_corpora/, e.g. "udhr_en.txt" or "seeds/seed001_ex_corpus.txt"
    description: str
    size: int


def decode_bytes(data: bytes, *, encoding: str = "utf-8", limit: int = MAX_CORPUS_BYTES) -> DecodedText:
    """Bytes -> text, or a CorpusError that says what went wrong and where.

    >>> decode_bytes("héllo".encode()).text
    'héllo'
    >>> decode_bytes(b"caf\\xe9 ok")
    Traceback (most recent call last):
    ...
    explorer.errors.CorpusError: the file is not valid UTF-8: byte 0xe9 at offset 3 cannot be decoded (choose another decoding, e.g. UTF-8 with replacement or Latin-1)
    >>> decode_bytes(b"caf\\xe9 ok", encoding="utf-8-replace")
    DecodedText(text='caf� ok', encoding='utf-8-replace', replaced=1)
    """
    if len(data) > limit:
        raise too_big("the text", len(data), limit)
    if encoding not in DECODINGS:
        raise CorpusError(f"unknown decoding {encoding!r}; choose one of {', '.join(DECODINGS)}")
    if data.startswith(codecs.BOM_UTF8) and encoding.startswith("utf-8"):
        data = data[len(codecs.BOM_UTF8) :]
    replaced = 0
    if encoding == "utf-8-replace":
        before = data.count("\ufffd".encode())
        text = data.decode("utf-8", errors="replace")
        replaced = text.count("\ufffd") - before
    else:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as err:
            name = "UTF-8" if encoding == "utf-8" else encoding
            raise CorpusError(
                f"the file is not valid {name}: byte 0x{data[err.start]:02x} at offset {err.start} cannot be decoded "
                "(choose another decoding, e.g. UTF-8 with replacement or Latin-1)"
            ) from None
    if "\x00" in text and encoding != "utf-16":
        # every decoding, replacement included: a binary file decodes "fine" with enough U+FFFD
        raise CorpusError("the file contains NUL bytes: it looks binary (or UTF-16 without a byte-order mark)")
    return DecodedText(text, encoding, replaced)


def read_text_file(path: str | Path, *, encoding: str = "utf-8") -> str:
    """A file's text for the CLI: CorpusError (never a traceback) for missing, huge or binary files."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_CORPUS_BYTES:
            raise too_big(p.name, size)
        data = p.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise CorpusError(f"{path} is a folder, not a text file") from None
    except OSError as err:
        raise CorpusError(f"cannot read {path}: {err.strerror or err}") from None
    try:
        return decode_bytes(data, encoding=encoding).text
    except CorpusError as err:
        raise CorpusError(f"{p.name}: {err}") from None


_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|")


def _descriptions() -> dict[str, str]:
    """File -> 'what it is', from the table in sample_corpora/SOURCES.md."""
    out: dict[str, str] = {}
    for src in (SAMPLE_DIR / "SOURCES.md", SAMPLE_DIR / "seeds" / "SOURCES.md"):
        if src.exists():
            prefix = "seeds/" if src.parent.name == "seeds" else ""
            for line in src.read_text(encoding="utf-8").splitlines():
                m = _ROW.match(line)
                if m:
                    out[prefix + m.group(1)] = m.group(2)
    return out


def list_samples() -> list[SampleCorpus]:
    """The bundled corpora: the samples first, then the seed notebooks' own corpora."""
    desc = _descriptions()
    files = sorted(SAMPLE_DIR.glob("*.txt")) + sorted((SAMPLE_DIR / "seeds").glob("*.txt"))
    return [
        SampleCorpus(str(p.relative_to(SAMPLE_DIR)), desc.get(str(p.relative_to(SAMPLE_DIR)), ""), p.stat().st_size)
        for p in files
    ]


def read_sample(name: str) -> str:
    """A bundled corpus's text by its name relative to sample_corpora/."""
    known = {s.name for s in list_samples()}
    if name not in known:
        raise CorpusError(f"no bundled corpus named {name!r}")
    return (SAMPLE_DIR / name).read_text(encoding="utf-8")


class CorpusStats(NamedTuple):
    bytes: int
    chars: int
    lines: int
    words: int
    distinct_words: int
    alphabet_chars: int
    alphabet_bytes: int
    top_words: list[tuple[str, int]]


def corpus_stats(texts: tuple[str, ...], top: int = 30) -> CorpusStats:
    """Sizes and the most frequent whitespace-separated words of a corpus (a worker process's job
    for a big one: splitting 20 MiB holds the interpreter for seconds).

    >>> s = corpus_stats(("low low", "lower\\n"))
    >>> s.bytes, s.lines, s.words, s.distinct_words, s.top_words[0]
    (13, 2, 3, 2, ('low', 2))
    """
    words: Counter[str] = Counter()
    chars: set[str] = set()
    data_bytes: set[int] = set()
    n_bytes = n_chars = n_lines = 0
    for text in texts:
        encoded = text.encode("utf-8")
        n_bytes += len(encoded)
        n_chars += len(text)
        n_lines += text.count("\n") + (1 if text and not text.endswith("\n") else 0)
        words.update(text.split())
        chars.update(text)
        data_bytes.update(encoded)
    return CorpusStats(
        n_bytes, n_chars, n_lines, sum(words.values()), len(words), len(chars), len(data_bytes), words.most_common(top)
    )
