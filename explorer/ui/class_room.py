"""What both halves of the Class page (the students' and lobby's in :mod:`explorer.ui.class_view`,
the teacher's in :mod:`explorer.ui.class_teacher`) draw and act with: the process's rooms, each
room's one trainer and this session's view of it, the Train page's panels at the room's step, the
join link's QR code, and what the page says when the store is out of reach or refuses an action.
Both import this module; it imports neither.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import logging
import threading
import time
import zoneinfo
from collections.abc import Callable

import streamlit as st

from ..analysis.text import example_sentence
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..formats.corpora import decode_bytes
from ..serving.rooms import Question, Room, Rooms, leaderboard, rooms_for
from ..serving.store import QuotaError, StoreError
from . import charts, data, links, live_view, render, state, stepper, storage, train_view
from . import class_model as model
from .class_model import UNREACHABLE, RoomRun, Session

__all__ = [
    "rooms",
    "room_run",
    "run_of",
    "room_live",
    "qr_png",
    "trainer_of",
    "panels",
    "said",
    "store_down",
    "attempt",
    "current_question",
    "standings",
]

_log = logging.getLogger(__name__)

_RETRY_S = 2.0  # while the store cannot be used, a page asks again this often
_rooms: list[Rooms] = []
_rooms_lock = threading.Lock()


def rooms() -> Rooms:
    """The rooms, kept where the app's store keeps its files (SQLite file or Redis)."""
    with _rooms_lock:
        if not _rooms:
            _rooms.append(rooms_for(storage.store()))
        return _rooms[0]


def _room_corpus(names: tuple[str, ...], problems: list[str]) -> state.CorpusChoice:
    """The corpus a room's view names: bundled samples, and files read back from the store
    (decoded as the link says; the reading session's own uploads are left alone)."""
    samples, restored, pasted = links.stored_parts(names, problems, again="ask the teacher to start the room again")
    uploads, refs = [], []
    for blob, decoding in restored:
        try:
            text = decode_bytes(blob.data, encoding=decoding or "utf-8").text
        except ExplorerError as err:
            problems.append(str(err))
            continue
        uploads.append((blob.name or "upload.txt", text))
        refs.append(links.corpus_ref("upload", blob.digest, decoding))
    return state.CorpusChoice(tuple(samples), tuple(uploads), pasted, tuple(refs))


@st.cache_resource(show_spinner=False, max_entries=16)
def room_run(code: str, view_json: str) -> RoomRun:
    """The room's trainer in this process (built once; every session in the room reads it)."""
    view = json.loads(view_json)
    link, problems = links.parse_link(view, samples=data.sample_names())
    if link is None:
        return RoomRun(None, "the room names no corpus")
    try:
        choice = _room_corpus(link.corpus, problems)
        if problems:
            return RoomRun(None, "; ".join(problems))
        mode: state.Mode = "sample" if link.big == "sample" else "step"
        return RoomRun(
            state.build_trainer(choice, link.preset, link.config, mode), sentence=example_sentence(choice.texts())
        )
    except StoreError:
        raise  # the store out of reach for a moment: not kept as the room's answer
    except ExplorerError as err:
        return RoomRun(None, str(err))


def run_of(room: Room) -> RoomRun:
    return room_run(room.code, json.dumps(room.view, sort_keys=True))


def room_live(run: RoomRun, room: Room) -> state.Live:
    """This session's view of the shared trainer at the room's step (its caches kept while the
    room's trainer stays the same)."""
    trainer = run.at(room.step)
    kept = st.session_state.get(Session.ROOM_LIVE)
    if kept is None or kept[0] is not run:
        kept = (run, state.Live(trainer, f"room:{room.code}", trainer.config))
        st.session_state[Session.ROOM_LIVE] = kept
    live = kept[1]
    live.view = min(room.step, live.trained)
    return live


@st.cache_data(show_spinner=False, max_entries=64)
def qr_png(url: str) -> bytes:
    import segno

    buffer = io.BytesIO()
    segno.make(url, error="m").save(buffer, kind="png", scale=12, border=2)
    return buffer.getvalue()


def trainer_of(live: state.Live) -> Trainer:
    """The trainer a room's view reads (a room's Live always has one)."""
    assert live.trainer is not None
    return live.trainer


def panels(live: state.Live, *, quiz: bool, key: str, steps: Callable[[], None] | None = None) -> None:
    """The current merge, then the pair table (hidden in a quiz), history, words and charts;
    with ``steps`` (which draws a stepper: ``explorer.ui.class_steps``) the stepper draws the
    merge and the panels, and only the charts are drawn here (and the current merge, where no
    component's script runs: AppTest)."""
    style = train_view.token_style(live)
    if steps is None or not stepper.browser():
        train_view.current_merge(live, style)
    trainer = trainer_of(live)
    records = [trainer.records[i] for i in range(live.view)]
    cols = charts.progress_columns(
        records,
        initial_tokens=trainer.initial_tokens,
        corpus_bytes=trainer.corpus_bytes,
        corpus_chars=trainer.corpus_chars,
    )
    chart = live_view.chart_data(
        cols, live.view, lengths=train_view.token_lengths(live, live.view), unit=trainer.config.unit
    )
    if steps is not None:
        steps()
        live_view.live_view([], chart, key=key)
        return
    state.widget_default(state.TOP_K, state.TOP_K_DEFAULT)
    # the pair table's rows: the Train page's setting ("w_top_k"), which the Class page reads
    pairs = model.pairs_panel(trainer, live.view, quiz=quiz, top=st.session_state[state.TOP_K], style=style)
    words = render.panel(
        "Words, segmented",
        train_view.words_rows(live, style),
        "The most frequent words at this step; the outlined chip is the newest token.",
    )
    history = model.history_panel(trainer, live.view, style)
    live_view.live_view([[pairs, history], [words]], chart, key=key)


def _reader_tz() -> datetime.tzinfo | None:
    """The browser's time zone (None: unknown, the server's own is used)."""
    try:
        name = st.context.timezone
    except Exception:  # noqa: BLE001 - no request context (AppTest)
        name = None
    if isinstance(name, str) and name:
        with contextlib.suppress(zoneinfo.ZoneInfoNotFoundError, ValueError):
            return zoneinfo.ZoneInfo(name)
    return None


def said(err: ExplorerError) -> str:
    """What the page says for an error (:func:`class_model.said`, in the reader's time zone);
    the store's failure goes to the server's log."""
    if isinstance(err, StoreError) and not isinstance(err, QuotaError):
        _log.warning("the class's store failed: %s", err)
    return model.said(err, _reader_tz())


def store_down(err: StoreError) -> None:
    """Draw the sentence in place of what needed the store, and a timed fragment that reruns
    the whole page as soon as the store answers again (no reload)."""
    _log.warning("the class's store failed: %s", err)
    if st.session_state.get(Session.ERROR) == UNREACHABLE:
        st.session_state.pop(Session.ERROR)  # said here instead, and not again once it answers
    st.warning(UNREACHABLE)
    # not before the next tick: a store that answers the retry's question but fails the page's
    # (a partial failure) reruns the page once a tick, not in a loop
    st.session_state[Session.RETRY_AFTER] = time.monotonic() + _RETRY_S / 2
    st.fragment(_retry, run_every=_RETRY_S)()


def _retry() -> None:
    """While the store is out of reach: every tick, ask it again; once it answers, rerun the page."""
    if time.monotonic() < st.session_state.get(Session.RETRY_AFTER, 0.0):
        return
    try:
        rooms().revs("")
    except ExplorerError:
        return
    st.rerun()


def attempt(action: Callable[..., object], *args: object) -> None:
    """A button's action on the room; what the room refuses is said on the next run."""
    try:
        action(*args)
    except ExplorerError as err:
        st.session_state[Session.ERROR] = said(err)


def current_question(room: Room) -> Question | None:
    """The room's current question (None before the first)."""
    return rooms().question(room.code, room.question) if room.question else None


def standings(room: Room):
    questions = rooms().questions(room.code)
    answers = {q.qid: rooms().answers(room.code, q.qid) for q in questions if q.state == "revealed"}
    return leaderboard(model.hidden_names(rooms().members(room.code)), questions, answers)
