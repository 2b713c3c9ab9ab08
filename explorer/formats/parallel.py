"""Parallel texts: the bundled UDHR translations cut into training, development and test parts
that hold the same articles in every language.

The Universal Declaration has a preamble and 30 articles in each translation. Parity-aware
training compares languages on a development text with the same content in each, and a fair
check of the result needs a third part that neither training nor the choice of merges saw:

    train   the preamble and the articles not below (18 of 30)
    dev     articles 4, 9, 14, 19, 24, 29      (n % 5 == 4)
    test    articles 5, 10, 15, 20, 25, 30     (n % 5 == 0)

Every fifth article rather than the last ones, so that each part samples the whole declaration.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..errors import CorpusError
from .corpora import read_sample

__all__ = ["UDHR_LANGUAGES", "ParallelSplit", "article_starts", "split_articles", "udhr_split", "udhr_sample"]

# code (as in sample_corpora/udhr_<code>.txt) -> the language's name in English
UDHR_LANGUAGES: dict[str, str] = {
    "en": "English",
    "ar": "Arabic",
    "el": "Greek",
    "hi": "Hindi",
    "ja": "Japanese",
    "ko": "Korean",
    "ru": "Russian",
    "zh_hans": "Chinese (simplified)",
}

ARTICLES = 30
# a heading is a short line after a blank one, holding the article's number in digits of any
# script (१, ３) or in Han numerals (第十条), and not a sentence (a one-line article ends in 。)
_NUMBER = re.compile(r"[\d一二三四五六七八九十]")
_MAX_HEADING = 16


class ParallelSplit(NamedTuple):
    train: str
    dev: str
    test: str


def article_starts(text: str) -> list[int]:
    """The line numbers of the article headings.

    >>> article_starts("Title\\n\\nArticle 1\\nAll are free.\\n\\nArticle 2\\nAll are equal.")
    [2, 5]
    """
    lines = text.split("\n")
    return [
        i
        for i in range(1, len(lines))
        if not lines[i - 1].strip()
        and 0 < len(line := lines[i].strip()) <= _MAX_HEADING
        and _NUMBER.search(line)
        and not line.endswith("。")
    ]


def split_articles(text: str, *, articles: int = ARTICLES) -> ParallelSplit:
    """Cut a translation into training, development and test parts by article number (see the
    module docstring); CorpusError when it has not exactly ``articles`` headings.

    >>> body = "Preamble\\n" + "".join(f"\\nArticle {n}\\nText {n}.\\n" for n in range(1, 11))
    >>> s = split_articles(body, articles=10)
    >>> s.dev, s.test
    ('Article 4\\nText 4.\\nArticle 9\\nText 9.', 'Article 5\\nText 5.\\nArticle 10\\nText 10.')
    >>> s.train.split("\\n")[:3]
    ['Preamble', 'Article 1', 'Text 1.']
    """
    starts = article_starts(text)
    if len(starts) != articles:
        raise CorpusError(f"expected {articles} article headings, found {len(starts)}")
    lines = text.split("\n")
    bounds = [*starts, len(lines)]
    parts: dict[str, list[str]] = {
        "train": [line for line in lines[: starts[0]] if line.strip()],
        "dev": [],
        "test": [],
    }
    for n, (a, b) in enumerate(zip(bounds, bounds[1:]), start=1):
        part = "dev" if n % 5 == 4 else "test" if n % 5 == 0 else "train"
        parts[part].extend(line for line in lines[a:b] if line.strip())
    return ParallelSplit(*("\n".join(parts[k]) for k in ParallelSplit._fields))


def udhr_sample(code: str) -> str:
    """The bundled file name of a UDHR translation."""
    if code not in UDHR_LANGUAGES:
        raise CorpusError(f"no bundled UDHR translation {code!r}: choose one of {', '.join(UDHR_LANGUAGES)}")
    return f"udhr_{code}.txt"


def udhr_split(code: str) -> ParallelSplit:
    """The bundled translation ``code`` (a key of UDHR_LANGUAGES) cut into its three parts."""
    return split_articles(read_sample(udhr_sample(code)))
