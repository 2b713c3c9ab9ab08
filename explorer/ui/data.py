"""Cached values: computed once per input and shared by every session (``st.cache_data``)."""

from __future__ import annotations

import streamlit as st

from ..analysis.text import twin_configs
from ..bpe.config import TrainerConfig
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..formats.corpora import CorpusStats, list_samples, read_sample
from ..formats.corpora import corpus_stats as engine_corpus_stats
from ..formats.pretrained import load_pretrained
from ..stages.pipeline import count_words
from . import server

__all__ = [
    "CorpusStats",
    "corpus_stats",
    "sample_names",
    "sample_text",
    "word_counts",
    "sample_descriptions",
    "pretrained",
    "twins",
]


@st.cache_data(show_spinner=False)
def sample_names() -> list[str]:
    return [s.name for s in list_samples()]


@st.cache_data(show_spinner=False)
def sample_descriptions() -> dict[str, str]:
    return {
        s.name: f"{s.description} ({s.size:,} bytes)" if s.description else f"{s.size:,} bytes" for s in list_samples()
    }


@st.cache_data(show_spinner=False, max_entries=64)
def sample_text(name: str) -> str:
    return read_sample(name)


@st.cache_data(show_spinner=False, max_entries=32)
def corpus_stats(texts: tuple[str, ...], top: int = 30) -> CorpusStats:
    """Sizes and the most frequent words of a corpus (``explorer.formats.corpora.corpus_stats``), in a
    worker process for a big one."""
    if sum(map(len, texts)) > server.WORKER_MIN_BYTES:
        return server.pool().run(engine_corpus_stats, texts, top)
    return engine_corpus_stats(texts, top)


@st.cache_data(show_spinner=False, max_entries=64)
def _text_word_counts(text: str, config: TrainerConfig) -> dict[str, int]:
    if len(text) > server.WORKER_MIN_BYTES:
        return server.pool().run(count_words, (text,), config)
    return count_words((text,), config)


def word_counts(texts: tuple[str, ...], config: TrainerConfig) -> dict[str, int]:
    """The trainer's input for a corpus and config (pre-tokenizing 1 MB takes a while). Each
    text is its own sequence, so each is counted once per config and shared by every session
    whose corpus contains it (a class on one sample with an upload each counts the sample once);
    merged in text order, first appearances stay in corpus order."""
    if len(texts) == 1:
        return _text_word_counts(texts[0], config)
    out: dict[str, int] = {}
    for text in texts:
        for word, n in _text_word_counts(text, config).items():
            out[word] = out.get(word, 0) + n
    return out


@st.cache_resource(show_spinner="Loading the tokenizer's table (once per server)…")
def pretrained(name: str) -> Tokenizer:
    """A bundled tokenizer, shared read-only by every session."""
    return load_pretrained(name)


@st.cache_resource(show_spinner=False, max_entries=8)
def twins(corpus_key: str, _texts: tuple[str, ...], config: TrainerConfig, merges: int) -> tuple[Trainer, Trainer]:
    """A character-level and a byte-level trainer on one corpus, trained to the end with the
    same pre-tokenizer, normalizer and number of merges; shared read-only by every session
    (``corpus_key`` identifies the texts, which are not hashed)."""
    char, byte = twin_configs(config, merges=merges)
    return Trainer(word_counts(_texts, char), char).run(), Trainer(word_counts(_texts, byte), byte).run()
