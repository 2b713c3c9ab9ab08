"""What one browser session keeps in ``st.session_state``: its corpus choice, its live trainer,
the step it is looking at. Nothing here is shared between sessions.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import streamlit as st

from ..bpe.budget import BudgetError, fitting_sample, require_start
from ..bpe.config import PRESETS, SEED_REPLAYS, EncodeOptions, TrainerConfig, corpus_config
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..formats.corpora import leading_sample, mib, require_text, utf8_size
from . import data, render, server, stepper

__all__ = [
    "TRAINED_AHEAD",
    "HISTORY_AHEAD",
    "DEFAULT_SAMPLE",
    "DEFAULT_PRESET",
    "CorpusChoice",
    "Live",
    "build_trainer",
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
    "choose_big_mode",
    "release_idle",
    "live_sessions",
    "big_corpus_note",
    "open_at_step",
    "pending_step",
    "big_mode",
    "GPT2_CHARS",
    "TOP_K",
    "TOP_K_DEFAULT",
    "warm_default",
    "default_live",
    "encoding_of",
    "final_words",
]

DEFAULT_SAMPLE = "english_frankenstein.txt"
DEFAULT_PRESET = "gpt2"

_CORPUS = "corpus_choice"
_CONFIG = "config"
_PRESET = "preset_name"
_LIVE = "live"
_REPLAY = "replayed_seed"
GPT2_CHARS = "w_gpt2_chars"  # a view setting: byte-level tokens as GPT-2's characters (``Ġt``)
TOP_K, TOP_K_DEFAULT = "w_top_k", 10  # a view setting: the pair table's rows (the sidebar's "Pairs shown")
_BIG = "big_corpus_mode"  # corpus key -> how a corpus over the step-through limit is trained
_PENDING = "pending_step"  # the step a link asks for, trained when the session's trainer is next built
# Rows of the pair table each step keeps: the most the view's "pairs shown" can ask for, so
# changing that view setting never restarts training.
RECORDED_PAIRS = 50
# Steps that keep that table and their examples (~1 KB a step); later steps of a long run are
# logged in ~50 bytes (a class steps through the first hundreds, then runs to the end).
FULL_RECORDS = 2_000
# Building a trainer on more text than this takes a turn in the server's heavy lane.
_LIGHT_BYTES = 256 * 1024
# A trainer this big keeps two derived tokenizers, not eight (see Live.tokenizer).
_BIG_TRAINER = 32 * 2**20

Mode = Literal["step", "sample", "final"]  # step through it all / a leading sample / to the end, compact records


@dataclass(frozen=True)
class CorpusChoice:
    """Bundled samples, uploaded files (name, text) and pasted text; each text is its own sequence."""

    samples: tuple[str, ...] = (DEFAULT_SAMPLE,)
    uploads: tuple[tuple[str, str], ...] = ()
    pasted: str = ""
    # how a link names each upload ("upload:<sha256>[:decoding]"), in the order of ``uploads``;
    # not part of what the corpus is
    upload_refs: tuple[str, ...] = field(default=(), compare=False)

    def parts(self) -> tuple[tuple[str, str], ...]:
        """(label, text) of each text: sample and file names, and "pasted text"."""
        out = [(name, data.sample_text(name)) for name in self.samples]
        out += list(self.uploads)
        if self.pasted.strip():
            out.append(("pasted text", self.pasted))
        return tuple(out)

    def texts(self) -> tuple[str, ...]:
        return tuple(text for _, text in self.parts())

    def label(self, *, shown: Callable[[str], str] = str) -> str:
        """The corpus named in a few words: its samples' and files' names (each written by
        ``shown``: a page sets a right-to-left file name apart from its sentence), "pasted text".

        >>> CorpusChoice(samples=("a.txt",), uploads=(("b.txt", "x"),), pasted="y").label(shown=str.upper)
        'A.TXT, B.TXT, pasted text'
        """
        parts = [shown(name) for name in (*self.samples, *(name for name, _ in self.uploads))]
        parts += ["pasted text"] if self.pasted.strip() else []
        return ", ".join(parts) if parts else "nothing"

    def shown_label(self) -> str:
        """:meth:`label` as the pages write it in a sentence (plain text, escaped later): a file
        name that may run right to left set apart."""
        return self.label(shown=lambda name: render.isolate(name, into="text"))

    def size(self) -> int:
        """UTF-8 bytes of all texts (computed once: every rerun asks)."""
        if "_size" not in self.__dict__:
            object.__setattr__(self, "_size", utf8_size(self.texts()))
        return self.__dict__["_size"]

    def key(self) -> str:
        """A digest of what the texts are (computed once: every rerun asks, and hashing 20 MB
        took ~30 ms)."""
        if "_key" not in self.__dict__:
            object.__setattr__(self, "_key", self._digest())
        return self.__dict__["_key"]

    def _digest(self) -> str:
        h = hashlib.sha1()
        for name in self.samples:
            h.update(b"S" + name.encode())
        for name, text in self.uploads:
            h.update(b"U" + name.encode() + b"\0" + text.encode("utf-8", "surrogatepass"))
        h.update(b"P" + self.pasted.encode("utf-8", "surrogatepass"))
        return h.hexdigest()


@dataclass(eq=False)
class Live:
    """The session's trainer and where the class is looking: step ``view`` of ``len(records)``.

    ``oversize``: the corpus's size when it is over the step-through limit and the user has not
    chosen yet what to do (no trainer then). ``released_at``: the steps trained when an idle
    session let its trainer go (it is rebuilt to that step on return)."""

    trainer: Trainer | None
    corpus_key: str
    config: TrainerConfig
    view: int = 0
    playing: bool = False
    running: bool = False
    error: str | None = None
    last_tick: float = 0.0
    mode: Mode = "step"
    oversize: int | None = None
    released_at: int | None = None
    notice: str | None = None  # said once on the page (the trainer was rebuilt after idling)
    # why training stopped short of what was asked: the server's budget for a session (a sentence
    # the page keeps showing until training moves on); for an oversize corpus, why it cannot be
    # stepped through whole
    held: str | None = None
    last_used: float = field(default_factory=time.monotonic)
    # the steps the session has reached when its trainer holds more, trained ahead for a stepper
    # that steps in the browser (``train_ahead``); None: every step trained was reached
    reached: int | None = None
    _tokenizers: dict = field(default_factory=dict, repr=False)
    _top_words: dict = field(default_factory=dict, repr=False)
    # what the panels derive from this trainer and keep for the next step (token lengths, say)
    memo: dict = field(default_factory=dict, repr=False)
    # With fast reruns, a click's callback can start while the previous run is still inside
    # "Run to end"; every change to the trainer or the view happens under this lock.
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    @property
    def trained(self) -> int:
        """The steps trained as far as the session is concerned: those it reached (its
        trainer may hold a few more, trained ahead for the stepper, see :attr:`recorded`)."""
        if self.trainer is None:
            return self.released_at or 0
        done = len(self.trainer.records)
        return done if self.reached is None else min(done, self.reached)

    @property
    def reached_end(self) -> bool:
        """Training stopped and the session reached the last step its trainer holds (none trained
        ahead is left to step to)."""
        return self.trainer is not None and self.trainer.done and self.trained >= self.recorded

    @property
    def recorded(self) -> int:
        """The steps the trainer holds, those trained ahead included."""
        return 0 if self.trainer is None else len(self.trainer.records)

    def reach(self, step: int) -> None:
        """Show step ``step`` of those the trainer holds (trained ahead or not): it counts as reached."""
        with self.lock:
            self.view = max(0, min(step, self.recorded))
            if self.reached is not None:
                self.reached = max(self.reached, self.view)

    def release(self) -> bool:
        """Let the trainer go (an idle session), keeping the step count and the view; False
        when the session is busy with it right now."""
        # a run without step records keeps little once finished (its index is let go), and is
        # trained in a worker: not let go, so never rebuilt in the server
        if self.trainer is None or self.running or self.mode == "final" or not self.lock.acquire(blocking=False):
            return False
        try:
            self.released_at = self.trained  # the steps reached: those trained ahead are trained again when asked for
            self.playing = False
            self.set_trainer(None)
            return True
        finally:
            self.lock.release()

    def set_trainer(self, trainer: Trainer | None) -> None:
        """Put another trainer in place (or none), forgetting what was derived from the last one."""
        self.trainer = trainer
        self.reached = None
        self._tokenizers.clear()
        self._top_words.clear()
        self.memo.clear()

    def top_words(self, n: int) -> list[int]:
        """Indices of the n most frequent words (computed once per trainer)."""
        cache = self._top_words
        if n not in cache:
            assert self.trainer is not None  # asked for only by panels drawn once there is a trainer
            freqs = self.trainer.freqs
            cache[n] = sorted(range(len(freqs)), key=lambda i: -freqs[i])[:n]
        return cache[n]

    @property
    def big(self) -> bool:
        """Whether the trainer is big enough that each tokenizer derived from it (a copy of its
        vocabulary's text) weighs on the server: few are kept, and fewer steps are rendered ahead."""
        return self.trainer is not None and self.trainer.footprint >= _BIG_TRAINER

    def tokenizer(self, k: int):
        """The tokenizer as of step k, cached (a few steps around the view are asked for; two
        when the trainer is big: each tokenizer holds its own copy of the vocabulary's text)."""
        cache = self._tokenizers
        tok = cache.get(k)
        if tok is None:
            assert self.trainer is not None  # asked for only by panels drawn once there is a trainer
            kept = 2 if self.big else 8
            while len(cache) >= kept:
                cache.pop(next(iter(cache)))
            tok = cache[k] = self.trainer.tokenizer(k)
        return tok

    def forward(self, n: int) -> int:
        """Move the view n steps ahead, training new merges as needed; returns steps moved. A
        training the session's budget stops short moves as far as it got and says why (``held``)."""
        if self.trainer is None:
            return 0
        with self.lock:
            short = self.view + n - self.recorded
            if short > 0:
                self.train(short)
            moved = min(self.view + n, self.recorded) - self.view
            self.reach(self.view + moved)
            return moved

    def train(self, n: int) -> bool:
        """Train up to n more merges within the session's budget; False (and ``held`` says why)
        when the budget stopped it first. Training (Run to end) reaches every step trained ahead."""
        with self.lock:
            self.reached = None
            return self._advance(n)

    def train_past_view(self, n: int) -> None:
        """Train (without reaching them) the merges up to ``n`` past the view, unless training
        ended or is held: a stepper's browser may step there next without asking."""
        trainer = self.trainer
        if trainer is not None and not trainer.done and not self.held:
            short = self.view + n - self.recorded
            if short > 0:
                self.train_ahead(short)

    def train_ahead(self, n: int) -> bool:
        """Train up to n merges past those reached without reaching them (``train`` reaches them)."""
        with self.lock:
            if self.reached is None:
                self.reached = self.recorded
            return self._advance(n)

    def _advance(self, n: int) -> bool:
        assert self.trainer is not None
        with self.lock:
            try:
                self.trainer.advance(n)
            except BudgetError as err:
                self.held = str(err)
                return False
            self.held = None
            return True


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
    if choice != st.session_state.get(_CORPUS):
        st.session_state.pop(_PENDING, None)  # a link's step was for the corpus it named
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
    if config != st.session_state.get(_CONFIG):
        st.session_state.pop(_PENDING, None)  # a link's step was for the settings it named
    if seed is not None and seed != st.session_state.get(_REPLAY):
        # seed 003 prints GPT-2's characters: its replay shows tokens so, to be read beside it
        st.session_state[GPT2_CHARS] = SEED_REPLAYS[seed].preset == "gpt2"
    st.session_state[_PRESET] = preset
    st.session_state[_CONFIG] = config
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


def choose_big_mode(mode: Mode) -> None:
    """What to do with the current corpus when it is over the step-through limit."""
    st.session_state.setdefault(_BIG, {})[corpus_choice().key()] = mode
    st.session_state.pop(_LIVE, None)


def big_mode() -> Mode | None:
    """What the user chose for the current corpus when it is over the step-through limit."""
    return st.session_state.get(_BIG, {}).get(corpus_choice().key())


def open_at_step(step: int) -> None:
    """A link asks for this step: the session's trainer is built (when a page needs it) already
    trained this far, from a trainer shared with every session that asked for the same one."""
    st.session_state.pop(_LIVE, None)
    st.session_state[_PENDING] = step


def pending_step() -> int | None:
    """The step a link asked for while the trainer is not built yet (the link keeps naming it)."""
    return st.session_state.get(_PENDING)


# Every session's Live, weakly: a session that ended (Streamlit drops its state a while after
# the tab closed) leaves this set by itself, trainer and all.
_SESSIONS: weakref.WeakSet[Live] = weakref.WeakSet()
_JANITOR: list[threading.Thread] = []
_JANITOR_LOCK = threading.Lock()


def live_sessions() -> list[Live]:
    """The Live of every session still around (for the idle janitor and for measuring)."""
    return list(_SESSIONS)


def release_idle(*, now: float | None = None) -> int:
    """Let go of the trainers of sessions idle longer than the server's idle limit; returns how
    many were released."""
    now = time.monotonic() if now is None else now
    limit = server.idle_seconds()
    return sum(1 for lv in live_sessions() if now - lv.last_used > limit and lv.release())


def _janitor() -> None:
    while True:
        time.sleep(min(60.0, server.idle_seconds() / 4))
        release_idle()


def _start_janitor() -> None:
    with _JANITOR_LOCK:
        if not _JANITOR:
            thread = threading.Thread(target=_janitor, name="bpe-explorer-idle-janitor", daemon=True)
            thread.start()
            _JANITOR.append(thread)


def encoding_of(preset: str | None) -> EncodeOptions:
    """How a preset's tokenizers encode (custom settings: the default)."""
    return PRESETS[preset].encoding if preset in PRESETS else EncodeOptions()


def build_trainer(choice: CorpusChoice, preset: str | None, config: TrainerConfig, mode: Mode) -> Trainer:
    """The session's trainer for a corpus and config, under the session's budget (a corpus too
    heavy to step through is refused from its word counts, before it is built: BudgetError; a
    sample is cut small enough); counting a big corpus takes a turn in the heavy lane."""
    budget = server.session_budget()
    with server.HEAVY.turn() if choice.size() > _LIGHT_BYTES else contextlib.nullcontext():
        if mode == "sample":
            words = _fitting_sample(choice.texts(), config)
        else:
            words = data.word_counts(choice.texts(), config)
            require_start(words, config, budget, what="This corpus, under these settings,")
        # "final": no pair tables, no examples, ~50 bytes a step
        top_k, full = (0, 0) if mode == "final" else (RECORDED_PAIRS, FULL_RECORDS)
        trainer = Trainer(words, config, top_k=top_k, full_records=full, encoding=encoding_of(preset)).require_room()
        trainer.budget = budget
        return trainer


WARMED_RUN_LIMIT = 5_000  # the most merges of the default run the warm-up trains to its end
HISTORY_AHEAD = 2  # trained steps past the one shown that the Train page's history shows (greyed)
# a stepping session's trainer holds this many merges past the step shown, trained before its
# stepper asks: the window the stepper is sent ahead, and the history's greyed rows
TRAINED_AHEAD = stepper.AHEAD + HISTORY_AHEAD


def _fitting_sample(texts: tuple[str, ...], config: TrainerConfig) -> dict[str, int]:
    """The word counts of the longest leading sample of ``texts`` (up to the step-through limit)
    whose trainer fits the session's budget (counted once per text, shared by every session)."""
    words = fitting_sample(
        config,
        server.session_budget(),
        limit_bytes=server.step_limit(),
        words_of=lambda size: data.word_counts(tuple(leading_sample(texts, size)), config),
    )
    return dict(words)


@st.cache_resource(show_spinner=False, max_entries=8)
def _trained_to(
    corpus_key: str,
    preset: str | None,
    config: TrainerConfig,
    mode: Mode,
    steps: int,
    _choice: CorpusChoice,
    kept: tuple[int, int],
) -> Trainer:
    """A trainer trained ``steps`` merges, shared read-only by every session that opens a link to
    the same corpus, settings and step (``corpus_key`` names the texts): thirty students opening
    the teacher's link train once, and each takes a copy (~10x cheaper than training 1,000 merges).
    ``kept``: the pair rows and full records its steps keep (part of what is shared)."""
    trainer = build_trainer(_choice, preset, config, mode)
    with server.HEAVY.turn() if steps > 1000 else contextlib.nullcontext():
        with contextlib.suppress(BudgetError):  # a link asking for more than the budget: ``held`` says so
            trainer.advance(steps)
    return trainer


def _shared(choice: CorpusChoice, preset: str | None, config: TrainerConfig, mode: Mode, steps: int) -> Trainer:
    """The trainer at that step shared by every session (read-only: sessions take copies)."""
    return _trained_to(choice.key(), preset, config, mode, max(0, steps), choice, (RECORDED_PAIRS, FULL_RECORDS))


# the trainers the warm-up built with TRAINED_AHEAD merges past step 0: (corpus key, preset, config)
_WARMED_AHEAD: set[tuple[str, str | None, TrainerConfig]] = set()
# the runs the warm-up trained to their end: (the steps asked for, the steps held). A link to a
# step of one (a teacher's "step 120" of the default corpus) copies that trainer, trained past the
# step (the merges past it count as trained ahead, not reached), instead of training one to it
_WARMED_RUN: dict[tuple[str, str | None, TrainerConfig], tuple[int, int]] = {}


def _build_at(choice: CorpusChoice, preset: str | None, config: TrainerConfig, mode: Mode, steps: int) -> Trainer:
    # a copy of the shared trainer at that step, step 0 included: building Frankenstein's takes
    # ~0.13 s, copying it ~0.02 s (and the server builds the default one when it starts). The
    # default one holds the TRAINED_AHEAD merges past step 0 too, trained at start-up: the
    # stepper's first report asks for them, and each first visit trained them again (~0.09 s of
    # the server's). A link to a step of a run the warm-up trained to its end copies that run
    # (~0.01 s, against ~0.25 s to train Frankenstein's first 500 merges again). Any other trainer
    # is built at its step alone: its first screen does not wait for merges the person has not
    # asked for (the report trains them)
    key = (choice.key(), preset, config)
    asked, held = _WARMED_RUN.get(key, (0, 0))
    if steps == 0 and mode == "step" and key in _WARMED_AHEAD:
        steps += TRAINED_AHEAD
    elif mode == "step" and 0 < steps <= held:
        steps = asked
    return copy.deepcopy(_shared(choice, preset, config, mode, steps))


def warm_default() -> None:
    """Build the trainers of the default corpus and preset that sessions start from (for the
    server's start-up warm-up; every session then takes a copy): a first visit's, with the merges
    its stepper asks for first trained, and the run trained to its end, for links to its steps."""
    choice, config = CorpusChoice(), corpus_config(DEFAULT_PRESET)
    key = (choice.key(), DEFAULT_PRESET, config)
    first = _shared(choice, DEFAULT_PRESET, config, "step", TRAINED_AHEAD)
    _WARMED_AHEAD.add(key)
    planned = first.planned_merges
    if planned is not None and planned <= WARMED_RUN_LIMIT:
        run = _shared(choice, DEFAULT_PRESET, config, "step", planned)
        _WARMED_RUN[key] = (planned, len(run.records))  # fewer held when training ran out of pairs


def default_live() -> Live:
    """What a first visit of the default corpus and preset starts from, once warmed up: its own
    copy of the shared trainer (the warm-up renders the steps such a visit asks for first)."""
    choice, config = CorpusChoice(), corpus_config(DEFAULT_PRESET)
    return Live(_build_at(choice, DEFAULT_PRESET, config, "step", 0), choice.key(), config, reached=0)


def _rebuild(current: Live, choice: CorpusChoice, preset: str | None) -> None:
    """Bring back a released trainer at the step it had reached (training is deterministic, so
    the merges are the same ones)."""
    steps = current.released_at or 0
    trainer = build_trainer(choice, preset, current.config, current.mode)
    with server.HEAVY.turn() if steps > 1000 else contextlib.nullcontext():
        with contextlib.suppress(BudgetError):  # the budget was lowered since: ``held`` says so
            trainer.advance(steps)
    current.trainer, current.released_at, current.held = trainer, None, trainer.held
    current.view = min(current.view, current.trained)
    minutes = server.idle_seconds() / 60
    current.notice = (
        f"This session was idle for over {minutes:g} minutes, so its trainer was let go to free the "
        f"server's memory; it has been rebuilt at step {steps:,} with the same merges."
    )


def live(*, reset: bool = False) -> Live:
    """The session's live trainer for its current corpus and config, rebuilt when either
    changed (or on reset, or after an idle release). Errors (empty corpus, a regex that times
    out) are kept as a message; a corpus over the step-through limit waits for the user's choice."""
    _start_janitor()
    choice = corpus_choice()
    preset, config = current_config()
    current: Live | None = st.session_state.get(_LIVE)
    if current is not None and not reset and current.corpus_key == choice.key() and current.config == config:
        with current.lock:
            current.last_used = time.monotonic()
            if current.released_at is not None:
                try:
                    _rebuild(current, choice, preset)
                except ExplorerError as err:
                    current.error = str(err)
                    current.released_at = None
        return current
    size, limit = choice.size(), server.step_limit()
    # what the user chose for a corpus over the size limit, or too heavy to step through whole
    mode: Mode = st.session_state.get(_BIG, {}).get(choice.key(), "step")
    try:
        try:
            require_text(choice.texts())
        except ExplorerError as err:
            raise ExplorerError(
                f"{err}; choose a sample, upload a file or paste some text on the Corpus page"
            ) from None
        if mode == "step" and size > limit:
            fresh = Live(None, choice.key(), config, oversize=size)
        elif mode == "final":
            # nothing to step through: built and trained to the end in a worker process at once
            # (the server never holds its position index), see train_view.run_to_end
            fresh = Live(None, choice.key(), config, mode=mode, running=True)
        else:
            steps = st.session_state.pop(_PENDING, None) or 0
            trainer = _build_at(choice, preset, config, mode, steps)
            # the merges past ``steps`` are trained ahead, not reached (see Live.train_ahead)
            fresh = Live(trainer, choice.key(), config, mode=mode, held=trainer.held, reached=steps)
            fresh.view = fresh.trained
    except BudgetError as err:
        # too heavy to step through whole: the same offer as a corpus over the size limit
        fresh = Live(None, choice.key(), config, oversize=size, held=str(err))
    except ExplorerError as err:
        fresh = Live(None, choice.key(), config, error=str(err))
    st.session_state[_LIVE] = fresh
    _SESSIONS.add(fresh)
    return fresh


def big_corpus_note(live: Live) -> str | None:
    """What the page says about a corpus over the step-through limit, once a choice is made."""
    if live.mode == "sample" and live.trainer is not None:
        return (
            f"Stepping through the first {mib(live.trainer.corpus_bytes)} of this {mib(corpus_choice().size())} "
            f"corpus (what a session may step through on this server)."
        )
    if live.mode == "final":
        return (
            f"Trained on the whole {mib(corpus_choice().size())} corpus without step records: each step keeps "
            f"only its winning pair, no pair table and no example words."
        )
    return None


def final_words(live: Live) -> tuple[dict[str, int], TrainerConfig, EncodeOptions]:
    """What a run without step records trains on in its worker: the session corpus's word counts
    (counted in a worker too when big), the config and the preset's encoding."""
    preset, _ = current_config()
    return data.word_counts(corpus_choice().texts(), live.config), live.config, encoding_of(preset)
