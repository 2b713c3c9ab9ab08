"""What one browser session keeps in ``st.session_state``: its corpus choice, its live trainer,
the step it is looking at. Nothing here is shared between sessions.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field

import streamlit as st

from ..config import PRESETS, SEED_REPLAYS, EncodeOptions, TrainerConfig, corpus_config
from ..corpora import require_text
from ..errors import ExplorerError
from ..trainer import Trainer
from . import data

__all__ = [
    "DEFAULT_SAMPLE",
    "DEFAULT_PRESET",
    "CorpusChoice",
    "Live",
    "corpus_choice",
    "set_corpus_choice",
    "current_config",
    "set_config",
    "live",
    "keep_widget_state",
    "widget_default",
    "forget_widgets",
    "replay_seed",
    "replayed_seed",
]

DEFAULT_SAMPLE = "english_frankenstein.txt"
DEFAULT_PRESET = "gpt2"

_CORPUS = "corpus_choice"
_CONFIG = "config"
_PRESET = "preset_name"
_LIVE = "live"
_REPLAY = "replayed_seed"
# Rows of the pair table each step keeps: the most the view's "pairs shown" can ask for, so
# changing that view setting never restarts training.
RECORDED_PAIRS = 50
# Steps that keep that table and their examples (~1 KB a step); later steps of a long run are
# logged in ~50 bytes (a class steps through the first hundreds, then runs to the end).
FULL_RECORDS = 2_000


@dataclass(frozen=True)
class CorpusChoice:
    """Bundled samples, uploaded files (name, text) and pasted text; each text is its own sequence."""

    samples: tuple[str, ...] = (DEFAULT_SAMPLE,)
    uploads: tuple[tuple[str, str], ...] = ()
    pasted: str = ""

    def parts(self) -> tuple[tuple[str, str], ...]:
        """(label, text) of each text: sample and file names, and "pasted text"."""
        out = [(name, data.sample_text(name)) for name in self.samples]
        out += list(self.uploads)
        if self.pasted.strip():
            out.append(("pasted text", self.pasted))
        return tuple(out)

    def texts(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.parts())

    def label(self) -> str:
        parts = list(self.samples) + [name for name, _ in self.uploads] + (["pasted text"] if self.pasted.strip() else [])
        return ", ".join(parts) if parts else "nothing"

    def key(self) -> str:
        h = hashlib.sha1()
        for name in self.samples:
            h.update(b"S" + name.encode())
        for name, text in self.uploads:
            h.update(b"U" + name.encode() + b"\0" + text.encode("utf-8", "surrogatepass"))
        h.update(b"P" + self.pasted.encode("utf-8", "surrogatepass"))
        return h.hexdigest()


@dataclass
class Live:
    """The session's trainer and where the class is looking: step ``view`` of ``len(records)``."""

    trainer: Trainer | None
    corpus_key: str
    config: TrainerConfig
    view: int = 0
    playing: bool = False
    running: bool = False
    error: str | None = None
    last_tick: float = 0.0
    _tokenizers: dict = field(default_factory=dict, repr=False)
    _top_words: dict = field(default_factory=dict, repr=False)
    # what the panels derive from this trainer and keep for the next step (token lengths, say)
    memo: dict = field(default_factory=dict, repr=False)
    # With fast reruns, a click's callback can start while the previous run is still inside
    # "Run to end"; every change to the trainer or the view happens under this lock.
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @property
    def trained(self) -> int:
        return len(self.trainer.records) if self.trainer else 0

    def top_words(self, n: int) -> list[int]:
        """Indices of the n most frequent words (computed once per trainer)."""
        cache = self._top_words
        if n not in cache:
            freqs = self.trainer.freqs
            cache[n] = sorted(range(len(freqs)), key=lambda i: -freqs[i])[:n]
        return cache[n]

    def tokenizer(self, k: int):
        """The tokenizer as of step k, cached (a few steps around the view are asked for)."""
        cache = self._tokenizers
        tok = cache.get(k)
        if tok is None:
            if len(cache) >= 8:
                cache.pop(next(iter(cache)))
            tok = cache[k] = self.trainer.tokenizer(k)
        return tok

    def forward(self, n: int) -> int:
        """Move the view n steps ahead, training new merges as needed; returns steps moved."""
        if self.trainer is None:
            return 0
        with self.lock:
            short = self.view + n - self.trained
            if short > 0:
                self.trainer.advance(short)
            moved = min(self.view + n, self.trained) - self.view
            self.view += moved
            return moved


def keep_widget_state() -> None:
    """Streamlit forgets a widget's value when its page is not shown; re-storing every widget
    key (ours start with ``w_``) at the top of each page keeps settings across page switches."""
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith("w_"):
            st.session_state[key] = st.session_state[key]


def forget_widgets(*prefixes: str) -> None:
    """Drop the stored values of the widgets whose keys start with these prefixes, so that they
    are drawn afresh from the session's settings."""
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefixes)]:
        del st.session_state[key]


def widget_default(key: str, value) -> None:
    """A widget's initial value, set in session state before the widget is drawn (passing
    ``value=`` as well as keeping the key alive would make Streamlit warn)."""
    st.session_state.setdefault(key, value)


def corpus_choice() -> CorpusChoice:
    if _CORPUS not in st.session_state:
        st.session_state[_CORPUS] = CorpusChoice()
    return st.session_state[_CORPUS]


def set_corpus_choice(choice: CorpusChoice) -> None:
    st.session_state[_CORPUS] = choice
    seed = replayed_seed()
    if seed is not None and choice != CorpusChoice(samples=(SEED_REPLAYS[seed].corpus,)):
        # the notebook's toy sizes do not suit another corpus: back to the preset sized for it
        preset = SEED_REPLAYS[seed].preset
        set_config(preset, corpus_config(preset))
        forget_widgets("w_cfg_")  # the settings widgets reload from the new config


def current_config() -> tuple[str | None, TrainerConfig]:
    """(preset name or None when customised, config) for this session. A preset is sized for
    the corpus (``corpus_config``) unless a seed notebook is being replayed."""
    if _CONFIG not in st.session_state:
        st.session_state[_PRESET] = DEFAULT_PRESET
        st.session_state[_CONFIG] = corpus_config(DEFAULT_PRESET)
    return st.session_state[_PRESET], st.session_state[_CONFIG]


def set_config(preset: str | None, config: TrainerConfig, *, seed: str | None = None) -> None:
    """The session's config; ``seed`` names the notebook whose settings it replays, if any."""
    st.session_state[_PRESET] = preset
    st.session_state[_CONFIG] = config.validate()
    st.session_state[_REPLAY] = seed


def replayed_seed() -> str | None:
    """The seed notebook whose corpus and settings the session replays (None: a preset sized for
    the corpus, or custom settings)."""
    return st.session_state.get(_REPLAY)


def preset_config(preset: str) -> TrainerConfig:
    """What choosing a preset gives: sized for the corpus, or the notebook's own settings while
    its seed is replayed."""
    seed = replayed_seed()
    if seed is not None and SEED_REPLAYS[seed].preset == preset:
        return SEED_REPLAYS[seed].config()
    return corpus_config(preset)


def replay_seed(seed: str) -> None:
    """Load a seed notebook's corpus and settings (its preset with its own overrides)."""
    replay = SEED_REPLAYS[seed]
    set_corpus_choice(CorpusChoice(samples=(replay.corpus,)))
    set_config(replay.preset, replay.config(), seed=seed)
    st.session_state.pop(_LIVE, None)


def live(*, reset: bool = False) -> Live:
    """The session's live trainer for its current corpus and config, rebuilt when either
    changed (or on reset). Errors (empty corpus, a regex that times out) are kept as a message."""
    choice = corpus_choice()
    preset, config = current_config()
    current: Live | None = st.session_state.get(_LIVE)
    if current is not None and not reset and current.corpus_key == choice.key() and current.config == config:
        return current
    try:
        try:
            require_text(choice.texts())
        except ExplorerError as err:
            raise ExplorerError(f"{err}; choose a sample, upload a file or paste some text on the Corpus page") from None
        words = data.word_counts(choice.texts(), config)
        encoding = PRESETS[preset].encoding if preset in PRESETS else EncodeOptions()
        fresh = Live(Trainer(words, config, top_k=RECORDED_PAIRS, full_records=FULL_RECORDS, encoding=encoding).require_room(), choice.key(), config)
    except ExplorerError as err:
        fresh = Live(None, choice.key(), config, error=str(err))
    st.session_state[_LIVE] = fresh
    return fresh

