"""The Class page: a teacher runs the lesson from the projector, students follow on their laptops
and guess the next merge.

Who is who comes from the page's address and, for the teacher, the browser, so a refresh keeps
everyone where they were::

    /Class                            start a room (from this browser's corpus and settings) or join one
    /Class?room=K7QX2M                join that room: type a name; the teacher's controls for the
                                      browser that holds the room's key (session or cookie, never
                                      the address: :mod:`explorer.ui.class_teacher`)
    /Class?room=K7QX2M&member=<id>    a student in the room (the id is the student's secret)
    /Class?room=K7QX2M&present=<tok>  the presenter view for the projector (the room's follow token)

The room itself (step, members, questions, answers) lives in the store (``explorer.serving.rooms``), so
students on other app processes, or other machines on Redis, see the same room. Each process
trains the room's merges once, in one trainer every session in the room reads
(:class:`RoomRun`); following students train nothing. A student who steps ahead gets a copy.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import functools
import html
import io
import json
import logging
import secrets
import threading
import time
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

import streamlit as st

from ..analysis.text import example_sentence
from ..bpe.budget import BudgetError
from ..bpe.trainer import Trainer
from ..errors import ExplorerError
from ..formats.corpora import decode_bytes
from ..serving.rooms import (
    MAX_NAME,
    MAX_SENTENCE,
    Member,
    NoSuchRoom,
    Question,
    Room,
    RoomError,
    Rooms,
    Wait,
    follow_token,
    leaderboard,
    merge_options,
    name_note,
    normalize_code,
    right_options,
    rooms_for,
    winners,
)
from ..serving.store import QuotaError, StoreError
from . import charts, class_teacher, data, follow, links, live_view, render, state, storage, tables, train_view
from .explain import tie_rule_sentence

__all__ = ["rooms", "room_run", "RoomRun", "class_page", "join_url", "mark_seen", "mark_teacher", "UNREACHABLE"]

_log = logging.getLogger(__name__)

_OWN = "class_own_live"  # a student's own Live while stepping ahead: (room code, Live)
_LIVE = "class_room_live"  # this session's view of the room's shared trainer: (RoomRun, Live)
_SPEED_S = 1.0  # the teacher's Play: a merge a second
_SEEN_EVERY_S = 5.0  # a member's presence is written at most this often
_RETRY_S = 2.0  # while the store cannot be used, a page asks again this often
UNREACHABLE = "The class server's store is unreachable; retrying…"


# ---- the process's rooms, and each room's one trainer ------------------------------------------
_rooms: list[Rooms] = []
_rooms_lock = threading.Lock()


def rooms() -> Rooms:
    """The rooms, kept where the app's store keeps its files (SQLite file or Redis)."""
    with _rooms_lock:
        if not _rooms:
            _rooms.append(rooms_for(storage.store()))
        return _rooms[0]


@dataclass(eq=False)
class RoomRun:
    """The trainer of one room in this process, shared by every session in the room. It only
    moves forward, under its lock, one merge past the room's step (the pair table of the next
    merge is then a record, and no session reads the trainer's live heap while another trains)."""

    trainer: Trainer | None
    error: str | None = None
    sentence: str = ""  # a sentence of the corpus: the token-count question's default
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def at(self, step: int) -> Trainer:
        """The trainer, trained at least to ``step`` + 1 (or to its end, or as far as the server's
        budget for a session lets it: ``held`` says so)."""
        trainer = self.trainer
        assert trainer is not None
        if len(trainer.records) <= step and not trainer.done and trainer.held is None:
            with self.lock:
                short = step + 1 - len(trainer.records)
                if short > 0 and not trainer.done:
                    with contextlib.suppress(BudgetError):
                        trainer.advance(short)
        return trainer


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
        return RoomRun(state._build(choice, link.preset, link.config, mode), sentence=example_sentence(choice.texts()))
    except StoreError:
        raise  # the store out of reach for a moment: not kept as the room's answer
    except ExplorerError as err:
        return RoomRun(None, str(err))


def _run_of(room: Room) -> RoomRun:
    return room_run(room.code, json.dumps(room.view, sort_keys=True))


def _room_live(run: RoomRun, room: Room) -> state.Live:
    """This session's view of the shared trainer at the room's step (its caches kept while the
    room's trainer stays the same)."""
    trainer = run.at(room.step)
    kept = st.session_state.get(_LIVE)
    if kept is None or kept[0] is not run:
        kept = (run, state.Live(trainer, f"room:{room.code}", trainer.config))
        st.session_state[_LIVE] = kept
    live = kept[1]
    live.view = min(room.step, live.trained)
    return live


# ---- addresses -----------------------------------------------------------------------------------
def _base_url() -> str:
    """The app's address for students (the join link and its QR code use it): this machine's
    network address when the browser is on localhost, or ``BPE_EXPLORER_PUBLIC_URL``."""
    return class_teacher.join_base()


def join_url(code: str) -> str:
    """The link students open to join: the Class page with the room's code."""
    return f"{_base_url()}/Class?{urlencode({'room': code})}"


@st.cache_data(show_spinner=False, max_entries=64)
def _qr_png(url: str) -> bytes:
    import segno

    buffer = io.BytesIO()
    segno.make(url, error="m").save(buffer, kind="png", scale=12, border=2)
    return buffer.getvalue()


# ---- HTML pieces (every string from a user or a corpus escaped) ---------------------------------
def _partial_bytes(token: str, style: render.TokenStyle) -> int:
    """How many of a token's bytes are only part of a character (shown in hex)."""
    return sum(len(run.split()) for run, is_text in render.token_runs(token, style) if not is_text)


def _completed(pair: tuple[str, str], style: render.TokenStyle) -> str | None:
    """The token a pair merges into, when its parts are partial bytes and merging them completes
    a character (the parts alone read as hex, the merged token as text); else None.

    >>> byte = render.TokenStyle(byte_level=True)
    >>> _completed(("à¤", "ķ"), byte), _completed(("à", "¤"), byte), _completed(("e", "r"), byte)
    ('à¤ķ', None, None)
    """
    parts = sum(_partial_bytes(t, style) for t in pair)
    merged = "".join(pair)  # a byte-level token's string is its parts' strings, one character a byte
    return merged if parts and _partial_bytes(merged, style) < parts else None


def _pair_text(pair: tuple[str, str], style: render.TokenStyle, *, into: render.Into = "text") -> str:
    """A pair as text (button labels, sentences): ``e + s``; parts that are pieces of a character
    are followed by the token they make: ``⟨e0 a4⟩ + ⟨95⟩ → क``."""
    text = " + ".join(render.token_text(t, style, into=into) for t in pair)
    merged = _completed(pair, style)
    return text if merged is None else f"{text} → {render.token_text(merged, style, into=into)}"


def _pair_html(pair: tuple[str, str], style: render.TokenStyle) -> str:
    left, right = pair
    merged = _completed(pair, style)
    made = "" if merged is None else f" → {render.chips([merged], style=style)}"
    return f"{render.chips([left], style=style)} + {render.chips([right], style=style)}{made}"


def _tie_text(question: Question, style: render.TokenStyle, rule: str, *, into: render.Into) -> str:
    """The sentence of a revealed question whose merged pair tied with other options ("" when
    none did): every one of them was right, and which rule chose the merge.

    >>> q = Question(1, "merge", 0, options=(("a", "t"), ("e", "r")), counts=(3326, 3326), answer=1)
    >>> _tie_text(q, render.PLAIN, "first-seen", into="text")
    'Tie: a + t occurs as often as e + r (3,326 times), both merge-worthy (right answers); the rule picked e + r because it occurs first in the corpus (first-seen).'
    """
    answer = _answer_of(question)
    tied = sorted(right_options(question) - {answer})
    if not tied:
        return ""
    picked = _pair_text(question.options[answer], style, into=into)
    others = " and ".join(_pair_text(question.options[i], style, into=into) for i in tied)
    verb, every = ("occurs", "both") if len(tied) == 1 else ("occur", "all")
    because = render.escape(tie_rule_sentence(rule), into=into)
    return (
        f"Tie: {others} {verb} as often as {picked} ({question.counts[answer]:,} times), {every} merge-worthy "
        f"(right answers); the rule picked {picked} because {because}."
    )


def _tally_html(question: Question, answers, style: render.TokenStyle, *, present: int, reveal: bool) -> str:
    """The answers so far as bars: per option (a next-merge question) or per guess (a count)."""
    if question.kind == "merge":
        counts = [0] * len(question.options)
        for a in answers:
            counts[a.value] += 1
        labels = [_pair_html(p, style) for p in question.options]
        right = set(right_options(question)) if reveal else set()
    else:
        guessed = sorted({a.value for a in answers})
        counts = [sum(1 for a in answers if a.value == g) for g in guessed]
        labels = [f"{g:,} tokens" for g in guessed]
        best = min((abs(g - question.answer) for g in guessed), default=None) if reveal else None
        right = {i for i, g in enumerate(guessed) if best is not None and abs(g - question.answer) == best}
    top = max(counts, default=0) or 1
    rows = "".join(
        f'<div class="cls-bar-row{" cls-right" if i in right else ""}"><div class="cls-bar-label">{label}</div>'
        f'<div class="cls-bar"><span style="width:{100 * n / top:.0f}%"></span></div><b>{n}</b></div>'
        for i, (label, n) in enumerate(zip(labels, counts))
    )
    head = f'<div class="cls-count"><b>{len(answers)}</b> answers in / <b>{present}</b> students present</div>'
    return f'<div class="cls-tally">{head}{rows or render.caption("No answer yet.")}</div>'


def _board_html(board, *, me: str | None = None, limit: int = 10) -> str:
    if not board:
        return render.caption("Nobody has joined yet.")
    rows = []
    for rank, s in enumerate(board[:limit], 1):
        mine = ' class="cls-me"' if me is not None and s.name == me else ""
        rows.append(
            f"<tr{mine}><td>{rank}</td><td>{render.user_text(s.name, into='html')}</td><td>{s.points}</td><td>{s.seconds:.1f} s</td></tr>"
        )
    return (
        '<table class="cls-board"><tr><th>#</th><th>name</th><th>points</th><th>time</th></tr>'
        + "".join(rows)
        + "</table>"
    )


_CSS = """
<style>
div.cls-code {font-size: 3.4rem; font-weight: 800; letter-spacing: .2em; line-height: 1.1; margin: 0;
              font-family: "Source Code Pro", monospace;}
.cls-tally {margin: .3rem 0 .6rem 0;}
.cls-count {font-size: 1.05rem; margin-bottom: .3rem;}
.cls-bar-row {display: grid; grid-template-columns: minmax(9rem, 16rem) 1fr 2.5rem; gap: .5rem; align-items: center;
              padding: .15rem .3rem; border-radius: .3rem;}
.cls-bar {background: #f1f5f9; height: 1.1rem; border-radius: .2rem; overflow: hidden;}
.cls-bar span {display: block; height: 100%; background: #2563eb;}
.cls-right {background: #dcfce7; outline: 2px solid #16a34a;}
.cls-right .cls-bar span {background: #16a34a;}
.cls-board {border-collapse: collapse; font-size: .95rem;}
.cls-board td, .cls-board th {padding: .1rem .6rem; text-align: left;}
.cls-me {background: #fef9c3;}
.cls-options {display: grid; gap: .3rem;}
.cls-option {padding: .25rem .5rem; border: 1px solid #e2e8f0; border-radius: .3rem;}
.cls-option.cls-right {border-color: #16a34a;}
</style>
"""


# ---- the panels, as the Train page draws them, at the room's step --------------------------------
def _trainer(live: state.Live) -> Trainer:
    """The trainer a room's view reads (a room's Live always has one)."""
    assert live.trainer is not None
    return live.trainer


def _answer_of(question: Question) -> int:
    """The right option's index, or the true count (set when the question is asked)."""
    assert question.answer is not None
    return question.answer


def _hidden_pairs() -> str:
    return render.panel(
        "Pair counts now",
        render.caption("Hidden until the reveal: which pair merges next is what the class is guessing."),
    )


def _history(live: state.Live, style: render.TokenStyle) -> str:
    """The merges made so far, newest first (never the one trained ahead of the room's step)."""
    shown = tables.recent(_trainer(live).records, live.view, window=12)
    body = tables.history_html(tables.history_rows(shown, live.view), style=style) if shown else ""
    return render.panel("Merge history", body, f"{live.view:,} merges made in this room")


def _panels(live: state.Live, *, quiz: bool, key: str) -> None:
    """The current merge, then the pair table (hidden in a quiz), history, words and charts."""
    style = train_view.token_style(live)
    train_view.current_merge(live, style)
    state.widget_default("w_top_k", 10)
    trainer = _trainer(live)
    if quiz:
        pairs = _hidden_pairs()
    else:
        table = trainer.records[live.view].top_pairs if live.view < live.trained else ()
        pairs = (
            render.panel(
                "Pair counts now",
                render.pair_rows(table[: st.session_state["w_top_k"]], style=style),
                "Green: merges next. Yellow: tied with it.",
            )
            if table
            else render.panel("Pair counts now", render.caption("Training finished: no pair is left to merge."))
        )
    words = render.panel(
        "Words, segmented",
        train_view._words(live, style),
        "The most frequent words at this step; the outlined chip is the newest token.",
    )
    records = [trainer.records[i] for i in range(live.view)]
    cols = charts.progress_columns(
        records,
        initial_tokens=trainer.initial_tokens,
        corpus_bytes=trainer.corpus_bytes,
        corpus_chars=trainer.corpus_chars,
    )
    chart = live_view.chart_data(
        cols, live.view, lengths=train_view._lengths(live, live.view), unit=trainer.config.unit
    )
    live_view.live_view([[pairs, _history(live, style)], [words]], chart, key=key)


# ---- the store out of reach: a sentence, and the page heals by itself -----------------------------
def _said(err: ExplorerError) -> str:
    """What the page says for an error: the store out of reach is always the same sentence (its
    cause goes to the server's log); a limit that frees by itself says when in the reader's time."""
    if isinstance(err, StoreError) and not isinstance(err, QuotaError):
        _log.warning("the class's store failed: %s", err)
        return UNREACHABLE
    return err.sentence(_reader_tz()) if isinstance(err, Wait) else str(err)


def _store_down(err: StoreError) -> None:
    """Draw the sentence in place of what needed the store, and a timed fragment that reruns
    the whole page as soon as the store answers again (no reload)."""
    _log.warning("the class's store failed: %s", err)
    if st.session_state.get("class_error") == UNREACHABLE:
        st.session_state.pop("class_error")  # said here instead, and not again once it answers
    st.warning(UNREACHABLE)
    # not before the next tick: a store that answers the retry's question but fails the page's
    # (a partial failure) reruns the page once a tick, not in a loop
    st.session_state["class_retry_after"] = time.monotonic() + _RETRY_S / 2
    st.fragment(_retry, run_every=_RETRY_S)()


def _retry() -> None:
    """While the store is out of reach: every tick, ask it again; once it answers, rerun the page."""
    if time.monotonic() < st.session_state.get("class_retry_after", 0.0):
        return
    try:
        rooms().revs("")
    except ExplorerError:
        return
    st.rerun()


def _survives_store(draw: Callable[..., None]) -> Callable[..., None]:
    """``draw``, whose store failures draw :func:`_store_down` instead of an exception (a
    fragment's reruns raise outside the page's own try)."""

    @functools.wraps(draw)
    def guarded(*args: object) -> None:
        try:
            draw(*args)
        except StoreError as err:
            _store_down(err)

    return guarded


# ---- start or join -------------------------------------------------------------------------------
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


def _last_step(trainer: Trainer | None) -> int | None:
    """The last step a room on this training can reach (None: not known): never more merges
    than the corpus has tokens (each merge takes at least one away), nor than its stop rule
    allows (a vocabulary size only bounds them when every merge adds a token: no id reuse).

    >>> from explorer import TrainerConfig
    >>> sized = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=10)
    >>> counted = sized.replace(vocab_size=None, num_merges=3)
    >>> [_last_step(Trainer.from_texts("low lower", c)) for c in (sized, sized.replace(reuse_ids=False), counted)]
    [8, 5, 3]
    """
    if trainer is None or trainer.config.picky is not None:  # a PickyBPE removal gives tokens back
        return None
    cfg, tokens = trainer.config, trainer.initial_tokens
    if cfg.num_merges is not None or (cfg.vocab_size is not None and not cfg.reuse_ids):
        planned = trainer.planned_merges
        return tokens if planned is None else min(planned, tokens)
    return tokens


def _lookup_refused() -> str | None:
    """The sentence when this browser or its address tried too many room codes lately."""
    refused = rooms().refused(browser=storage.owner(), address=storage.address())
    return None if refused is None else _said(refused)


def _missed() -> str | None:
    """Count a room code (or a member's or teacher's link) that matched nothing; the sentence
    when that was one too many."""
    over = rooms().miss(browser=storage.owner(), address=storage.address())
    return None if over is None else _said(over)


def _start_room() -> None:
    params, left_out = links.training_params()
    params.pop("step", None)
    live = state.live()
    if live.mode == "final" or live.oversize is not None:
        st.session_state["class_error"] = (
            "A room steps through merges one at a time: choose a corpus under the "
            "server's step-through limit, or its sample, on the Train page first."
        )
        return
    if left_out:
        st.session_state["class_error"] = f"This corpus cannot be shared with a room: {left_out}."
        return
    # the room holds the stored files its corpus names: a forget or the store's eviction cannot take them
    refs = (links.parse_corpus_ref(name) for name in params.get("corpus", "").split(","))
    holds = [ref[1] for ref in refs if ref is not None]
    try:
        room, key = rooms().create(
            params,
            step=0,
            top=_last_step(live.trainer),
            starter=storage.owner(),
            address=storage.address(),
            holds=holds,
        )
    except ExplorerError as err:
        st.session_state["class_error"] = _said(err)
        return
    class_teacher.remember(room.code, key)  # the key stays in the session and a cookie, never in the address
    st.query_params.from_dict({"room": room.code})


def _join(code: str) -> None:
    name = st.session_state.get("w_class_name", "")
    try:
        refused = _lookup_refused()
        if refused:
            st.session_state["class_error"] = refused
            return
        member = rooms().join(code, name)
        st.session_state["class_note"] = name_note(name, member.name, shown=_name_shown)  # cut, or suffixed: said once
    except NoSuchRoom as err:
        st.session_state["class_error"] = _missed() or str(err)
        return
    except ExplorerError as err:
        st.session_state["class_error"] = _said(err)
        return
    st.query_params.from_dict({"room": normalize_code(code), "member": member.id})


def _name_shown(name: str) -> str:
    """A name as a sentence of the page quotes it (plain text, escaped later): set apart when it
    may run right to left."""
    return render.user_text(name, into="text")


def _show_error() -> None:
    message = st.session_state.pop("class_error", None)
    if message:
        st.error(render.md_text(message))
    notice = st.session_state.pop("class_notice", None)
    if notice:
        st.success(render.md_text(notice))
    note = st.session_state.pop("class_note", None)
    if note:
        st.info(render.md_text(note))


def _lobby(code: str | None) -> None:
    """No room in the address (or one to join): join with a code and a name, or start a room."""
    st.title("Class")
    _show_error()
    left, right = st.columns(2, gap="large")
    with left.container(border=True):
        st.subheader("Join a room")
        if code:
            st.markdown(f"Room **{render.md_text(code)}**")
        else:
            st.text_input(
                "Room code",
                key="w_class_code",
                max_chars=12,
                placeholder="K7QX2M",
                help="The six characters on the teacher's screen.",
            )
        # no max_chars: the browser would drop a longer paste whole; the room cuts it, and says so
        st.text_input(
            "Your name",
            key="w_class_name",
            placeholder="as the class knows you",
            help=f"Up to {MAX_NAME} characters: a longer name is cut.",
        )
        target = code or normalize_code(st.session_state.get("w_class_code", ""))
        st.button("Join", key="class_join", type="primary", on_click=_join, args=(target,), disabled=not target)
    with right.container(border=True):
        st.subheader("Start a room (teacher)")
        preset, config = state.current_config()
        st.markdown(
            render.md_text(f"{state.corpus_choice().shown_label()} · {preset or 'custom settings'}")
            + " — the corpus and settings chosen on the Corpus and Train pages."
        )
        st.caption(
            "The room's page shows a code, a join link and its QR code, and opens a presenter view for the "
            "projector; students follow your steps and answer your questions on their laptops or phones."
        )
        st.button("Start a room", key="class_start", on_click=_start_room)
        class_teacher.own_room_buttons()
    class_teacher.write_cookies()


# ---- the teacher ---------------------------------------------------------------------------------
def _attempt(action: Callable[..., object], *args: object) -> None:
    """A button's action on the room; what the room refuses is said on the next run."""
    try:
        action(*args)
    except ExplorerError as err:
        st.session_state["class_error"] = _said(err)


def _set_step(code: str, key: str, step: int) -> None:
    """Move the class to ``step``, kept within what the room's training reaches (the store
    refuses any other)."""

    def move() -> None:
        target = max(0, step)
        room = rooms().get(code)
        if room is not None:
            run = _run_of(room)
            if run.trainer is not None:
                target = min(target, len(run.at(target).records))
            target = min(target, room.top)
        rooms().set_step(code, key, target)

    _attempt(move)


def _step_by(code: str, key: str, n: int) -> None:
    def step() -> None:
        room = rooms().get(code)
        if room is not None:
            st.session_state["class_playing"] = False
            _set_step(code, key, room.step + n)  # kept within the room's training

    _attempt(step)


def _on_slider(code: str, key: str) -> None:
    st.session_state["class_playing"] = False
    _set_step(code, key, int(st.session_state["w_class_step"]))


def _merge_question(room: Room, run: RoomRun) -> Question:
    """Which pair merges next, among the true next merge and the next most frequent pairs."""
    trainer = run.at(room.step)
    if room.step >= len(trainer.records):
        raise RoomError("Training has finished: no merge is left to guess.")
    record = trainer.records[room.step]
    if record.compact:
        raise RoomError("This step kept only its winning pair, not the pair table a question needs.")
    options, counts, right = merge_options(
        [(p.left, p.right, p.count) for p in record.top_pairs], seed=secrets.token_hex(8)
    )
    show = st.session_state.get("w_class_counts", "read the table") == "read the table"
    return Question(0, "merge", room.step, options=options, counts=counts, show_counts=show, answer=right)


def _count_question(room: Room, run: RoomRun) -> Question:
    """How many tokens the teacher's sentence has after the next N merges."""
    sentence = str(st.session_state.get("w_class_sentence", "")).strip()[:MAX_SENTENCE]
    n = int(st.session_state.get("w_class_ahead", 10))
    if not sentence:
        raise RoomError("Type the sentence whose tokens the class should count.")
    trainer = run.at(room.step + n - 1)
    n = min(n, len(trainer.records) - room.step)
    if n < 1:
        raise RoomError("Training has finished: no merge is left to count ahead.")
    answer = len(trainer.tokenizer(room.step + n).encode(sentence))
    return Question(0, "count", room.step, sentence=sentence, merges=n, answer=answer)


def _ask(code: str, key: str, build: Callable[[Room, RoomRun], Question]) -> None:
    def ask() -> None:
        room = rooms().get(code)
        if room is not None:
            rooms().ask(code, key, build(room, _run_of(room)))
            st.session_state["class_playing"] = False

    _attempt(ask)


def _current(room: Room) -> Question | None:
    """The room's current question (None before the first)."""
    return rooms().question(room.code, room.question) if room.question else None


def _hides_pairs(current: Question | None) -> bool:
    """A question not yet revealed hides the pair table (and what would give its answer away)."""
    return current is not None and current.state != "revealed"


def _standings(room: Room):
    questions = rooms().questions(room.code)
    answers = {q.qid: rooms().answers(room.code, q.qid) for q in questions if q.state == "revealed"}
    return leaderboard(class_teacher.hidden_names(rooms().members(room.code)), questions, answers)


def _teacher(room: Room, key: str, run: RoomRun) -> None:
    code = room.code
    class_teacher.styles()
    class_teacher.write_cookies()
    head, qr = st.columns([5, 2], vertical_alignment="top")
    with head:
        st.html(f'<div class="cls-code" aria-label="room code">{html.escape(code)}</div>')
        st.html(class_teacher.join_address_html(code))
        st.caption(render.md_text(f"Join link: {join_url(code)}"))
        warning = class_teacher.reach_warning()
        if warning:
            st.warning(warning)
        _show_error()
        row = st.container(horizontal=True, gap="small", vertical_alignment="center")
        trainer = run.at(room.step)
        at_end = (trainer.done or trainer.held is not None) and room.step >= len(trainer.records)
        if trainer.held is not None and room.step >= len(trainer.records):
            st.warning(render.md_text(trainer.held))
        row.button("Step", key="class_step", type="primary", on_click=_step_by, args=(code, key, 1), disabled=at_end)
        row.button("+10", key="class_step10", on_click=_step_by, args=(code, key, 10), disabled=at_end)
        row.button("Back", key="class_back", on_click=_step_by, args=(code, key, -1), disabled=room.step == 0)
        playing = bool(st.session_state.get("class_playing"))
        if playing:
            row.button("Pause", key="class_pause", on_click=lambda: st.session_state.update(class_playing=False))
        else:
            row.button(
                "Play", key="class_play", disabled=at_end, on_click=lambda: st.session_state.update(class_playing=True)
            )
        row.link_button(
            "Presenter view",
            class_teacher.presenter_url(code, key),
            icon=":material/open_in_new:",
            help="The room for the projector, in a window of its own: code, join address, step, tally and "
            "leaderboard, no controls, no key.",
        )
    with qr:
        state.widget_default("w_class_qr", True)
        if st.toggle("Show the join code", key="w_class_qr"):
            st.image(_qr_png(join_url(code)), width=160, caption="Scan to join")
    st.fragment(_teacher_room, run_every=_SPEED_S if st.session_state.get("class_playing") else None)(code, key, run)


@_survives_store
def _teacher_room(code: str, key: str, run: RoomRun) -> None:
    room = rooms().get(code)
    if room is not None and room.ended:
        # ended here (*End the room*) or in another window: the whole page, not this fragment, takes
        # the teacher to the lobby and says so
        st.rerun()
    if room is None:
        usual = "This room has closed (idle for hours); start a new one."
        st.error(render.md_text(rooms().gone_message(code, usual=usual)))
        return
    if st.session_state.get("class_playing"):
        trainer = run.at(room.step + 1)
        if room.step < len(trainer.records):
            room = rooms().set_step(code, key, room.step + 1)
        else:
            st.session_state["class_playing"] = False
    follow.watch(code, token=follow_token(key), what="tally", now=room.tally, key="class_watch_tally")
    trainer = run.at(room.step)
    members = rooms().members(code)
    present = rooms().present(code)
    # the status and the slider share a row: the question and its tally stay on the first screen
    left, right = st.columns([1, 1], vertical_alignment="center")
    left.markdown(f"Step **{room.step:,}** · {len(members)} joined, {present} present")
    if len(trainer.records):
        st.session_state["w_class_step"] = room.step
        right.slider(
            "Step",
            0,
            max(len(trainer.records), room.step),
            key="w_class_step",
            on_change=_on_slider,
            args=(code, key),
            label_visibility="collapsed",
            disabled=bool(st.session_state.get("class_playing")),
            help="Move the class to any step trained so far (everyone follows).",
        )
    live = _room_live(run, room)
    current = _current(room)
    quiz, board = st.columns([3, 2], gap="medium")
    with quiz:
        _teacher_question(room, key, live, current, present)
    with board:
        class_teacher.moderation(room, key, members, train_view.token_style(live))
        st.markdown("**Leaderboard**")
        st.html(_board_html(_standings(room)))
    _panels(live, quiz=_hides_pairs(current), key="class_panels_t")


def _teacher_question(room: Room, key: str, live: state.Live, current: Question | None, present: int) -> None:
    code = room.code
    style = train_view.token_style(live)
    if current is not None:
        answers = rooms().answers(code, current.qid)
        # the question, then its buttons, then the bars: Reveal stays on a 1280x720 first screen
        st.markdown(f"**Question {current.qid}:** " + _question_text(current, style))
        if current.state != "revealed":
            row = st.container(horizontal=True, gap="small")
            if current.state == "open":
                row.button(
                    "Close answers",
                    key="class_close",
                    on_click=_attempt,
                    args=(rooms().close_question, code, key, current.qid),
                )
            row.button(
                "Reveal",
                key="class_reveal",
                type="primary",
                on_click=_attempt,
                args=(rooms().reveal, code, key, current.qid),
            )
        else:
            st.html(_reveal_html(current, answers, style, rule=_trainer(live).config.tie_break))
            class_teacher.show_missed(current, answers, style)
        st.html(_tally_html(current, answers, style, present=present, reveal=current.state == "revealed"))
        if current.state != "revealed":
            return
    with st.container(border=True):
        row = st.container(horizontal=True, gap="small", vertical_alignment="center")
        row.button(
            "Ask: which pair merges next?", key="class_ask_merge", on_click=_ask, args=(code, key, _merge_question)
        )
        row.radio(
            "Counts",
            ["read the table", "intuition"],
            key="w_class_counts",
            horizontal=True,
            label_visibility="collapsed",
            help="Show the candidate pairs' counts, or let the class guess from the words alone.",
        )
        row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
        state.widget_default("w_class_sentence", _default_sentence(room, live))
        row.text_input("Sentence", key="w_class_sentence", max_chars=MAX_SENTENCE, width=320)
        state.widget_default("w_class_ahead", 10)
        row.number_input("merges ahead", 1, 1000, key="w_class_ahead", width=120)
        row.button(
            "Ask: how many tokens after them?", key="class_ask_count", on_click=_ask, args=(code, key, _count_question)
        )


def _default_sentence(room: Room, live: state.Live) -> str:
    """A real sentence of the room's corpus (the first of a fair length), cut to what a question
    takes; a corpus without one (no letters) gets a sentence of its own."""
    return _run_of(room).sentence[:MAX_SENTENCE] or "the lowest newest widest"


def _question_text(question: Question, style: render.TokenStyle) -> str:
    if question.kind == "merge":
        return f"which pair merges at step {question.step + 1:,}? " + (
            "(counts shown)" if question.show_counts else "(intuition: no counts)"
        )
    return (
        f"how many tokens will “{render.user_text(question.sentence, into='markdown')}” have after "
        f"{question.merges:,} more merge{'s' * (question.merges != 1)}?"
    )


def _reveal_html(question: Question, answers, style: render.TokenStyle, *, rule: str) -> str:
    """What the reveal says: the merged pair and how many were right (a tie with other options
    said, and the tie-break ``rule`` that chose), or the true count."""
    won = len(winners(question, answers))
    if question.kind == "merge":
        right = _pair_html(question.options[_answer_of(question)], style)
        tie = _tie_text(question, style, rule, into="html")
        tie = f"<br>{tie}" if tie else ""
        return f'<div class="cls-option cls-right">Merged: {right} · {won} of {len(answers)} right{tie}</div>'
    return f'<div class="cls-option cls-right">{question.answer:,} tokens · {won} closest of {len(answers)}</div>'


# ---- a student -----------------------------------------------------------------------------------
def _answer_count(code: str, member: str, qid: int) -> None:
    _attempt(rooms().answer, code, member, qid, int(st.session_state.get(f"w_class_guess_{qid}", 0)))


def _step_ahead(run: RoomRun, room: Room) -> None:
    trainer = copy.deepcopy(run.at(room.step))  # the student's own: stepping it trains nothing shared
    own = state.Live(trainer, f"room:{room.code}:own", trainer.config, view=min(room.step, len(trainer.records)))
    st.session_state[_OWN] = (room.code, own)


def _follow_again() -> None:
    st.session_state.pop(_OWN, None)


def _student(room: Room, member: Member, run: RoomRun) -> None:
    st.fragment(_student_room)(room.code, member, run)


@_survives_store
def _student_room(code: str, member: Member, run: RoomRun) -> None:
    room = rooms().get(code)
    if room is None:
        usual = "This room has closed (idle for hours). Ask the teacher for a new code."
        st.error(render.md_text(rooms().gone_message(code, usual=usual)))
        return
    fresh = None if room.ended else rooms().member(code, member.id)  # its name as the teacher left it
    if fresh is None:  # ended, or removed: nothing left to follow (no watch)
        _left_room(room, member.id)
        return
    member = fresh
    follow.watch(code, member=member.id, what="rev", now=room.rev, key="class_watch_rev")
    mark_seen(code, member.id)
    current = _current(room)
    if _hides_pairs(current):
        st.session_state.pop(_OWN, None)  # stepping on would show the answer: back to following
    own = st.session_state.get(_OWN)
    own_live = own[1] if own is not None and own[0] == code else None
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    if own_live is None:
        row.markdown(
            f"Room **{render.md_text(code)}** · you are **{render.user_text(member.name, into='markdown')}** · following the "
            f"teacher at step **{room.step:,}**"
        )
        row.button(
            "Step ahead on my own",
            key="class_own",
            on_click=_step_ahead,
            args=(run, room),
            disabled=_hides_pairs(current),
            help="Your own copy of the room's training to step through; not while a question is open.",
        )
    else:
        row.markdown(
            f"Room **{render.md_text(code)}** · you are **{render.user_text(member.name, into='markdown')}** · on your own at step "
            f"**{own_live.view:,}** (the teacher is at {room.step:,})"
        )
        row.button("Step", key="class_own_step", type="primary", on_click=own_live.forward, args=(1,))
        row.button("+10", key="class_own_step10", on_click=own_live.forward, args=(10,))
        row.button("Follow the teacher", key="class_follow", on_click=_follow_again)
    _show_error()
    live = own_live or _room_live(run, room)
    if current is not None:
        _student_question(room, member, current, live)
    _panels(live, quiz=_hides_pairs(current), key="class_panels_s")


def _left_room(room: Room, member_id: str | None) -> None:
    """What a student's page says once the room is over for it: ended, or removed by the teacher."""
    if room.ended:
        st.info(f"The teacher ended the room {room.code}. Thank you for taking part!")
    elif member_id and rooms().removed(room.code, member_id):
        st.warning(f"The teacher removed you from the room {room.code}.")
    else:
        st.warning("This browser is not a member of the room (yet): join it with a name.")
        _lobby(room.code)


def _student_question(room: Room, member: Member, question: Question, live: state.Live) -> None:
    style = train_view.token_style(live)
    answers = rooms().answers(room.code, question.qid)
    mine = next((a for a in answers if a.member == member.id), None)
    with st.container(border=True):
        st.markdown(f"**Question {question.qid}:** " + _question_text(question, style))
        if question.kind == "merge":
            if question.state == "open":
                row = st.container(horizontal=True, gap="small")
                for i, pair in enumerate(question.options):
                    label = _pair_text(pair, style, into="markdown")
                    if question.show_counts:
                        label += f" ({question.counts[i]:,})"
                    row.button(
                        label,
                        key=f"class_opt_{question.qid}_{i}",
                        type="primary" if mine is not None and mine.value == i else "secondary",
                        on_click=_attempt,
                        args=(rooms().answer, room.code, member.id, question.qid, i),
                    )
            else:
                st.html(
                    '<div class="cls-options">'
                    + "".join(
                        f'<div class="cls-option{" cls-right" if question.state == "revealed" and i in right_options(question) else ""}">'
                        f"{_pair_html(pair, style)}{' · your answer' if mine is not None and mine.value == i else ''}</div>"
                        for i, pair in enumerate(question.options)
                    )
                    + "</div>"
                )
        else:
            tok = live.tokenizer(question.step) if question.step <= live.trained else None
            if tok is not None:
                ids = tok.encode(question.sentence)
                st.html(
                    render.caption(f"Now, at step {question.step:,}: {len(ids)} tokens")
                    + render.chips(tok.tokens(ids), style=style)
                )
            if question.state == "open":
                row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
                state.widget_default(f"w_class_guess_{question.qid}", mine.value if mine else 0)
                row.number_input("Your guess (tokens)", 0, 1_000_000, key=f"w_class_guess_{question.qid}", width=180)
                row.button(
                    "Send my guess",
                    key=f"class_send_{question.qid}",
                    type="primary",
                    on_click=_answer_count,
                    args=(room.code, member.id, question.qid),
                )
        if question.state == "open":
            st.caption(
                "Your answer: "
                + ("none yet" if mine is None else _answer_label(question, mine.value, style))
                + " — you can change it until the teacher closes the question."
            )
        elif question.state == "closed":
            st.caption("Answers are closed: wait for the reveal.")
        else:
            won = member.id in winners(question, answers)
            right = (
                "the pair " + _pair_text(question.options[_answer_of(question)], style)
                if question.kind == "merge"
                else f"{question.answer:,} tokens"
            )
            tie = (
                _tie_text(question, style, _trainer(live).config.tie_break, into="text")
                if question.kind == "merge"
                else ""
            )
            (st.success if won else st.info)(
                render.md_text(("You got it! " if won else "Not this time. ") + f"The answer: {right}. {tie}".rstrip())
            )
            board = _standings(room)
            st.html(_board_html(board, me=member.name, limit=5))


def _answer_label(question: Question, value: int, style: render.TokenStyle) -> str:
    if question.kind == "merge":
        return _pair_text(question.options[value], style, into="markdown")
    return f"{value:,} tokens"


_seen_at: dict[tuple[str, str], float] = {}
_SEEN_KEPT = 10_000  # (room, member) pairs remembered; made-up members in requests cannot grow it past this
_KEPT_EVERY_S = 60.0  # an open teacher's page keeps its room alive with a write at most this often


def mark_teacher(code: str) -> None:
    """The teacher's page asked for its room (a poll of ``/room-rev`` with the follow token): the
    room is in use, not idle, even while nobody has joined yet (written at most once a minute)."""
    now = time.monotonic()
    if now - _seen_at.get((code, ""), -1e9) >= _KEPT_EVERY_S:
        if len(_seen_at) >= _SEEN_KEPT:
            _seen_at.clear()
        _seen_at[(code, "")] = now
        try:
            rooms().keep(code)
        except ExplorerError:
            pass


def mark_seen(code: str, member: str) -> None:
    """Write the member's presence at most every few seconds (each poll of ``/room-rev`` and
    each run asks)."""
    now = time.monotonic()
    if now - _seen_at.get((code, member), -1e9) >= _SEEN_EVERY_S:
        if len(_seen_at) >= _SEEN_KEPT:
            _seen_at.clear()  # at worst a few extra writes of presence
        _seen_at[(code, member)] = now
        try:
            rooms().seen(code, member)
        except ExplorerError:
            pass


# ---- the page ------------------------------------------------------------------------------------
def class_page() -> None:
    """The Class page for whoever the address (and, for the teacher, the browser) says this is:
    teacher, presenter, student, or neither yet."""
    st.html(_CSS)
    params = st.query_params.to_dict()
    code = normalize_code(params.get("room", ""))[:12] or None
    linked_key, member_id, present = params.get("key"), params.get("member"), params.get("present")
    try:
        if code is None:
            code = _own_room()  # the sidebar brought the teacher back to Class: back to the room
        room = rooms().get(code) if code else None
        presenting = room is not None and bool(present) and rooms().revs_for(room.code, token=present) is not None
        key = linked_key or (class_teacher.key_for(room.code) if room is not None else None)
        teacher = room is not None and not presenting and key is not None and rooms().is_teacher(room.code, key)
        if teacher and linked_key:  # an old link with the key in it: taken once, then out of the address
            assert room is not None and key is not None
            class_teacher.remember(room.code, key)
            st.query_params.from_dict({"room": room.code})
        busy = teacher or presenting
        member = rooms().member(room.code, member_id) if room is not None and member_id and not busy else None
        removed = (
            room is not None and member_id is not None and member is None and rooms().removed(room.code, member_id)
        )
        if code and not (busy or member or removed):
            # a code without its credential is where codes could be guessed: refused past the limit
            refused = _lookup_refused()
            if refused or room is None:
                st.query_params.clear()
                st.session_state["class_error"] = refused or _missed() or rooms().gone_message(code)
                _lobby(None)
                return
            if linked_key is not None or member_id or present:  # a wrong credential is a failed lookup too
                counted = st.session_state.setdefault("class_missed", set())
                if (code, linked_key, member_id, present) not in counted:
                    counted.add((code, linked_key, member_id, present))
                    _missed()
        if room is None:
            _lobby(None)
            return
        if room.ended:
            _ended(room, teacher=teacher)
            return
        if removed:
            _left_room(room, member_id)
            return
        run = _run_of(room)
        if run.error or run.trainer is None:
            st.error(render.md_text(f"The room's corpus cannot be opened: {run.error}"))
            return
        if presenting:
            assert present is not None
            class_teacher.presenter(room, run, present)
            return
        if teacher:
            assert key is not None
            _teacher(room, key, run)
            return
        if linked_key is not None:
            st.error(
                "This link's teacher key is wrong: only the teacher's own browser drives the room. "
                "Join it as a student below."
            )
        if present:
            st.error("This presenter link is not this room's: join it as a student below.")
        if member is None:
            if member_id:
                st.warning("This browser is not a member of the room (yet): join it with a name.")
            _lobby(room.code)
            return
        _student(room, member, run)
    except StoreError as err:
        _store_down(err)
    except ExplorerError as err:
        st.error(render.md_text(str(err)))


def _own_room() -> str | None:
    """The room this session teaches, when it is still there and the key still its (the address
    is set to it); None otherwise."""
    code = class_teacher.current_room()
    if code is None:
        return None
    room = rooms().get(code)
    key = class_teacher.key_for(code)
    if room is None or room.ended or not rooms().is_teacher(code, key):
        class_teacher.forget(code)
        return None
    st.query_params.from_dict({"room": code})
    return code


def _ended(room: Room, *, teacher: bool) -> None:
    """A room the teacher ended: its teacher is back in the lobby, anyone else is told."""
    if teacher:
        class_teacher.forget(room.code)
        st.query_params.clear()
        st.session_state["class_notice"] = f"Room {room.code} has ended. Start a new room below."
        _lobby(None)
        return
    st.info(f"The teacher ended the room {room.code}. Thank you for taking part!")
