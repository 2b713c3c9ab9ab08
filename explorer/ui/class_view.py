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

import copy
import functools
import html
import logging
import secrets
import time
from collections.abc import Callable

import streamlit as st

from ..errors import ExplorerError
from ..serving.rooms import (
    MAX_NAME,
    MAX_SENTENCE,
    Member,
    NoSuchRoom,
    Question,
    Room,
    follow_token,
    name_note,
    normalize_code,
    winners,
)
from ..serving.store import StoreError
from . import class_model as model
from . import class_steps, class_teacher, follow, links, render, state, stepper, storage, train_view
from .class_model import UNREACHABLE, Keys, RoomRun, Session
from .class_room import (
    attempt,
    current_question,
    panels,
    qr_png,
    room_live,
    room_run,
    rooms,
    run_of,
    said,
    standings,
    store_down,
    trainer_of,
)
from .class_teacher import join_url

__all__ = [
    "Keys",
    "Session",
    "rooms",
    "room_run",
    "RoomRun",
    "class_page",
    "join_url",
    "mark_seen",
    "mark_teacher",
    "UNREACHABLE",
]

_log = logging.getLogger(__name__)

_SPEED_S = 1.0  # the teacher's Play: a merge a second
_SEEN_EVERY_S = 5.0  # a member's presence is written at most this often


# ---- the process's rooms, and each room's one trainer ------------------------------------------


# ---- addresses -----------------------------------------------------------------------------------
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


# ---- the store out of reach: a sentence, and the page heals by itself -----------------------------


def _survives_store(draw: Callable[..., None]) -> Callable[..., None]:
    """``draw``, whose store failures draw :func:`store_down` instead of an exception (a
    fragment's reruns raise outside the page's own try)."""

    @functools.wraps(draw)
    def guarded(*args: object) -> None:
        try:
            draw(*args)
        except StoreError as err:
            store_down(err)

    return guarded


# ---- start or join -------------------------------------------------------------------------------


def _lookup_refused() -> str | None:
    """The sentence when this browser or its address tried too many room codes lately."""
    refused = rooms().refused(browser=storage.owner(), address=storage.address())
    return None if refused is None else said(refused)


def _missed() -> str | None:
    """Count a room code (or a member's or teacher's link) that matched nothing; the sentence
    when that was one too many."""
    over = rooms().miss(browser=storage.owner(), address=storage.address())
    return None if over is None else said(over)


def _start_room() -> None:
    params, left_out = links.training_params()
    params.pop("step", None)
    live = state.live()
    refused = model.start_refusal(stepping=live.mode != "final" and live.oversize is None, left_out=left_out)
    if refused:
        st.session_state[Session.ERROR] = refused
        return
    # the room holds the stored files its corpus names: a forget or the store's eviction cannot take them
    refs = (links.parse_corpus_ref(name) for name in params.get("corpus", "").split(","))
    holds = [ref[1] for ref in refs if ref is not None]
    try:
        room, key = rooms().create(
            params,
            step=0,
            top=model.last_step(live.trainer),
            starter=storage.owner(),
            address=storage.address(),
            holds=holds,
        )
    except ExplorerError as err:
        st.session_state[Session.ERROR] = said(err)
        return
    class_teacher.remember(room.code, key)  # the key stays in the session and a cookie, never in the address
    st.query_params.from_dict({"room": room.code})


def _join(code: str) -> None:
    name = st.session_state.get(Keys.NAME, "")
    try:
        refused = _lookup_refused()
        if refused:
            st.session_state[Session.ERROR] = refused
            return
        member = rooms().join(code, name)
        st.session_state[Session.NOTE] = name_note(name, member.name, shown=_name_shown)  # cut, or suffixed: said once
    except NoSuchRoom as err:
        st.session_state[Session.ERROR] = _missed() or str(err)
        return
    except ExplorerError as err:
        st.session_state[Session.ERROR] = said(err)
        return
    st.query_params.from_dict({"room": normalize_code(code), "member": member.id})


def _name_shown(name: str) -> str:
    """A name as a sentence of the page quotes it (plain text, escaped later): set apart when it
    may run right to left."""
    return render.user_text(name, into="text")


def _show_error() -> None:
    message = st.session_state.pop(Session.ERROR, None)
    if message:
        st.error(render.md_text(message))
    notice = st.session_state.pop(Session.NOTICE, None)
    if notice:
        st.success(render.md_text(notice))
    note = st.session_state.pop(Session.NOTE, None)
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
                key=Keys.CODE,
                max_chars=12,
                placeholder="K7QX2M",
                help="The six characters on the teacher's screen.",
            )
        # no max_chars: the browser would drop a longer paste whole; the room cuts it, and says so
        st.text_input(
            "Your name",
            key=Keys.NAME,
            placeholder="as the class knows you",
            help=f"Up to {MAX_NAME} characters: a longer name is cut.",
        )
        target = code or normalize_code(st.session_state.get(Keys.CODE, ""))
        st.button("Join", key=Keys.JOIN, type="primary", on_click=_join, args=(target,), disabled=not target)
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
        st.button("Start a room", key=Keys.START, on_click=_start_room)
        class_teacher.own_room_buttons()
    class_teacher.write_cookies()


# ---- the teacher ---------------------------------------------------------------------------------


def _set_step(code: str, key: str, step: int) -> None:
    """Move the class to ``step``, kept within what the room's training reaches (the store
    refuses any other)."""

    def move() -> None:
        target = max(0, step)
        room = rooms().get(code)
        if room is not None:
            run = run_of(room)
            trained = len(run.at(target).records) if run.trainer is not None else None
            target = model.step_target(target, trained=trained, top=room.top)
        rooms().set_step(code, key, target)

    attempt(move)


def _step_by(code: str, key: str, n: int) -> None:
    def step() -> None:
        room = rooms().get(code)
        if room is not None:
            st.session_state[Session.PLAYING] = False
            _set_step(code, key, room.step + n)  # kept within the room's training

    attempt(step)


def _on_slider(code: str, key: str) -> None:
    st.session_state[Session.PLAYING] = False
    _set_step(code, key, int(st.session_state[Keys.SLIDER]))


def _merge_question(room: Room, run: RoomRun) -> Question:
    """Which pair merges next, among the true next merge and the next most frequent pairs."""
    show = st.session_state.get(Keys.COUNTS, "read the table") == "read the table"
    return model.merge_question(run.at(room.step), room.step, show_counts=show, seed=secrets.token_hex(8))


def _count_question(room: Room, run: RoomRun) -> Question:
    """How many tokens the teacher's sentence has after the next N merges."""
    sentence = str(st.session_state.get(Keys.SENTENCE, ""))
    return model.count_question(run, room.step, sentence, int(st.session_state.get(Keys.AHEAD, 10)))


def _ask(code: str, key: str, build: Callable[[Room, RoomRun], Question]) -> None:
    def ask() -> None:
        room = rooms().get(code)
        if room is not None:
            rooms().ask(code, key, build(room, run_of(room)))
            st.session_state[Session.PLAYING] = False

    attempt(ask)


def _script_controls(row, room: Room, key: str, *, at_end: bool) -> None:
    """The page's own Step / +10 / Back / Play, where the stepper's script does not run (AppTest):
    in a browser the stepper has them."""
    code = room.code
    row.button("Step", key=Keys.STEP, type="primary", on_click=_step_by, args=(code, key, 1), disabled=at_end)
    row.button("+10", key=Keys.STEP10, on_click=_step_by, args=(code, key, 10), disabled=at_end)
    row.button("Back", key=Keys.BACK, on_click=_step_by, args=(code, key, -1), disabled=room.step == 0)
    if st.session_state.get(Session.PLAYING):
        row.button("Pause", key=Keys.PAUSE, on_click=lambda: st.session_state.update({Session.PLAYING: False}))
    else:
        row.button(
            "Play",
            key=Keys.PLAY,
            disabled=at_end,
            on_click=lambda: st.session_state.update({Session.PLAYING: True}),
        )


def _on_teacher_report(code: str) -> None:
    """The teacher's stepper showed another step (its report arrives before the fragment
    reruns): the class moves there, by the same rules as the buttons (kept within the room's
    training, and only with this browser's key)."""
    report = stepper.report_of(Keys.STEPPER_TEACHER)
    window = st.session_state.get(Session.WINDOW_TEACHER)
    if report is None or window is None or report.gen != window.gen:
        return  # a report from before the server moved the step itself
    st.session_state[Session.PLAYING] = False
    _set_step(code, class_teacher.key_for(code) or "", report.step)


def _teacher_steps(room: Room, run: RoomRun, live: state.Live, *, quiz: bool) -> None:
    """The teacher's stepper: the room's steps around its step, drawn in the browser."""
    if stepper.report_of(Keys.STEPPER_TEACHER) is not None:
        # a browser that steps by itself: the room's steps ahead are trained before it asks
        run.at(room.step + stepper.AHEAD)
    class_steps.draw(
        live,
        key=Keys.STEPPER_TEACHER,
        window_key=Session.WINDOW_TEACHER,
        how=class_steps.look(live, quiz=quiz),
        view=live.view,
        run=run,
        on_report=functools.partial(_on_teacher_report, room.code),
    )


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
        at_end = model.at_end(trainer, room.step)
        if trainer.held is not None and room.step >= len(trainer.records):
            st.warning(render.md_text(trainer.held))
        if not stepper.browser():
            _script_controls(row, room, key, at_end=at_end)
        row.link_button(
            "Presenter view",
            class_teacher.presenter_url(code, key),
            icon=":material/open_in_new:",
            help="The room for the projector, in a window of its own: code, join address, step, tally and "
            "leaderboard, no controls, no key.",
        )
    with qr:
        state.widget_default(Keys.QR, True)
        if st.toggle("Show the join code", key=Keys.QR):
            st.image(qr_png(join_url(code)), width=160, caption="Scan to join")
    st.fragment(_teacher_room, run_every=_SPEED_S if st.session_state.get(Session.PLAYING) else None)(code, key, run)


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
    if st.session_state.get(Session.PLAYING):
        trainer = run.at(room.step + 1)
        if room.step < len(trainer.records):
            room = rooms().set_step(code, key, room.step + 1)
        else:
            st.session_state[Session.PLAYING] = False
    follow.watch(code, token=follow_token(key), what="tally", now=room.tally, key=Keys.WATCH_TALLY)
    trainer = run.at(room.step)
    members = rooms().members(code)
    present = rooms().present(code)
    # the status and the slider share a row: the question and its tally stay on the first screen
    left, right = st.columns([1, 1], vertical_alignment="center")
    left.markdown(model.room_status(room.step, len(members), present))
    if stepper.browser():
        _show_error()  # what the room refused a report of the stepper's (it reruns this fragment alone)
    if len(trainer.records) and not stepper.browser():  # in a browser: the stepper's slider
        st.session_state[Keys.SLIDER] = room.step
        right.slider(
            "Step",
            0,
            max(len(trainer.records), room.step),
            key=Keys.SLIDER,
            on_change=_on_slider,
            args=(code, key),
            label_visibility="collapsed",
            disabled=bool(st.session_state.get(Session.PLAYING)),
            help="Move the class to any step trained so far (everyone follows).",
        )
    live = room_live(run, room)
    current = current_question(room)
    quiz, board = st.columns([3, 2], gap="medium")
    with quiz:
        _teacher_question(room, key, live, current, present)
    with board:
        class_teacher.moderation(room, key, members, train_view.token_style(live))
        st.markdown("**Leaderboard**")
        st.html(model.board_html(standings(room)))
    hidden = model.hides_pairs(current)
    panels(live, quiz=hidden, key=Keys.PANELS_TEACHER, steps=lambda: _teacher_steps(room, run, live, quiz=hidden))


def _teacher_question(room: Room, key: str, live: state.Live, current: Question | None, present: int) -> None:
    code = room.code
    style = train_view.token_style(live)
    if current is not None:
        answers = rooms().answers(code, current.qid)
        # the question, then its buttons, then the bars: Reveal stays on a 1280x720 first screen
        st.markdown(f"**Question {current.qid}:** " + model.question_text(current))
        if current.state != "revealed":
            row = st.container(horizontal=True, gap="small")
            if current.state == "open":
                row.button(
                    "Close answers",
                    key=Keys.CLOSE,
                    on_click=attempt,
                    args=(rooms().close_question, code, key, current.qid),
                )
            row.button(
                "Reveal",
                key=Keys.REVEAL,
                type="primary",
                on_click=attempt,
                args=(rooms().reveal, code, key, current.qid),
            )
        else:
            st.html(model.reveal_html(current, answers, style, rule=trainer_of(live).config.tie_break))
            class_teacher.show_missed(current, answers, style)
        st.html(model.tally_html(current, answers, style, present=present, reveal=current.state == "revealed"))
        if current.state != "revealed":
            return
    with st.container(border=True):
        row = st.container(horizontal=True, gap="small", vertical_alignment="center")
        row.button("Ask: which pair merges next?", key=Keys.ASK_MERGE, on_click=_ask, args=(code, key, _merge_question))
        row.radio(
            "Counts",
            ["read the table", "intuition"],
            key=Keys.COUNTS,
            horizontal=True,
            label_visibility="collapsed",
            help="Show the candidate pairs' counts, or let the class guess from the words alone.",
        )
        row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
        state.widget_default(Keys.SENTENCE, _default_sentence(room))
        row.text_input("Sentence", key=Keys.SENTENCE, max_chars=MAX_SENTENCE, width=320)
        state.widget_default(Keys.AHEAD, 10)
        row.number_input("merges ahead", 1, 1000, key=Keys.AHEAD, width=120)
        row.button(
            "Ask: how many tokens after them?", key=Keys.ASK_COUNT, on_click=_ask, args=(code, key, _count_question)
        )


def _default_sentence(room: Room) -> str:
    """A real sentence of the room's corpus (the first of a fair length), or one of its own."""
    return model.default_sentence(run_of(room).sentence)


# ---- a student -----------------------------------------------------------------------------------
def _answer_count(code: str, member: str, qid: int) -> None:
    attempt(rooms().answer, code, member, qid, int(st.session_state.get(Keys.guess(qid), 0)))


def _step_ahead(run: RoomRun, room: Room) -> None:
    trainer = copy.deepcopy(run.at(room.step))  # the student's own: stepping it trains nothing shared
    own = state.Live(trainer, f"room:{room.code}:own", trainer.config, view=min(room.step, len(trainer.records)))
    st.session_state[Session.OWN_LIVE] = (room.code, own)


def _follow_again() -> None:
    st.session_state.pop(Session.OWN_LIVE, None)


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
    # a question, a name, the end: the fragment reruns; the step: the stepper moves by itself
    follow.watch(code, member=member.id, what="rev", now=room.rev, key=Keys.WATCH_REV)
    mark_seen(code, member.id)
    current = current_question(room)
    if model.hides_pairs(current):
        st.session_state.pop(Session.OWN_LIVE, None)  # stepping on would show the answer: back to following
    own = st.session_state.get(Session.OWN_LIVE)
    own_live = own[1] if own is not None and own[0] == code else None
    row = st.container(horizontal=True, gap="small", vertical_alignment="center")
    script = not stepper.browser()  # in a browser, the stepper says the status and steps
    if own_live is None:
        if script:
            row.markdown(model.student_status(code, member, room.step))
        row.button(
            "Step ahead on my own",
            key=Keys.OWN,
            on_click=_step_ahead,
            args=(run, room),
            disabled=model.hides_pairs(current),
            help="Your own copy of the room's training to step through; not while a question is open.",
        )
    else:
        if script:
            row.markdown(model.student_status(code, member, room.step, own=own_live.view))
            row.button("Step", key=Keys.OWN_STEP, type="primary", on_click=own_live.forward, args=(1,))
            row.button("+10", key=Keys.OWN_STEP10, on_click=own_live.forward, args=(10,))
        row.button("Follow the teacher", key=Keys.FOLLOW, on_click=_follow_again)
    _show_error()
    live = own_live or room_live(run, room)
    if current is not None:
        _student_question(room, member, current, live)
    quiz = model.hides_pairs(current)
    panels(
        live,
        quiz=quiz,
        key=Keys.PANELS_STUDENT,
        steps=lambda: _student_steps(room, member, run, live, own=own_live is not None, quiz=quiz),
    )


def _student_steps(room: Room, member: Member, run: RoomRun, live: state.Live, *, own: bool, quiz: bool) -> None:
    """A student's stepper: following the teacher (no controls; it polls the room's step and
    moves to it in the browser), or stepping its own copy (the controls; the room's step said)."""
    code = room.code
    head = [
        ("Room ", False),
        (code, True),
        (" · you are ", False),
        (render.user_text(member.name, into="text"), True),
        (" · ", False),
    ]
    how = class_steps.look(live, quiz=quiz)
    url = class_steps.follow_url(code, member.id)
    if not own:
        if stepper.report_of(Keys.STEPPER_STUDENT) is not None:
            # a browser following by itself: the room's steps ahead are trained (once a process,
            # the room's trainer is shared) before the teacher gets there
            run.at(room.step + stepper.AHEAD)
        class_steps.draw(
            live,
            key=Keys.STEPPER_STUDENT,
            window_key=Session.WINDOW_STUDENT,
            how=how,
            view=live.view,
            run=run,
            on_report=_window_asked,
            controls=False,
            status=[*head, ("following the teacher at step ", False), ("{step}", True)],
            follow_room=stepper.Follow(url, room.step),
        )
        return
    if stepper.report_of(Keys.STEPPER_OWN) is not None:
        _own_ahead(live)
    class_steps.draw(
        live,
        key=Keys.STEPPER_OWN,
        window_key=Session.WINDOW_OWN,
        how=how,
        view=live.view,
        run=None,
        on_report=functools.partial(_on_own_report, code),
        status=[*head, ("on your own at step ", False), ("{step}", True), (" (the teacher is at ", False)]
        + [("{room}", False), (")", False)],
        follow_room=stepper.Follow(url, room.step, move=False),
    )


def _window_asked() -> None:
    """A following student's stepper reported: it lacks steps around the room's; the fragment's
    run sends them (nothing to change before it)."""


def _own_ahead(live: state.Live) -> None:
    """Train a student's own copy the steps its stepper may reach next, before it asks."""
    live.train_past_view(stepper.AHEAD)


def _on_own_report(code: str) -> None:
    """A student stepping on its own moved: its copy's view follows (training up to it)."""
    report = stepper.report_of(Keys.STEPPER_OWN)
    window = st.session_state.get(Session.WINDOW_OWN)
    own = st.session_state.get(Session.OWN_LIVE)
    if report is None or window is None or own is None or own[0] != code or report.gen != window.gen:
        return
    live: state.Live = own[1]
    with live.lock:
        if report.step > live.recorded:
            live.forward(min(report.step, live.recorded + stepper.AHEAD) - live.view)
        else:
            live.reach(report.step)


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
        st.markdown(f"**Question {question.qid}:** " + model.question_text(question))
        if question.kind == "merge":
            if question.state == "open":
                row = st.container(horizontal=True, gap="small")
                for i, pair in enumerate(question.options):
                    label = model.pair_text(pair, style, into="markdown")
                    if question.show_counts:
                        label += f" ({question.counts[i]:,})"
                    row.button(
                        label,
                        key=Keys.option(question.qid, i),
                        type="primary" if mine is not None and mine.value == i else "secondary",
                        on_click=attempt,
                        args=(rooms().answer, room.code, member.id, question.qid, i),
                    )
            else:
                st.html(model.options_html(question, mine, style))
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
                state.widget_default(Keys.guess(question.qid), mine.value if mine else 0)
                row.number_input("Your guess (tokens)", 0, 1_000_000, key=Keys.guess(question.qid), width=180)
                row.button(
                    "Send my guess",
                    key=Keys.send(question.qid),
                    type="primary",
                    on_click=_answer_count,
                    args=(room.code, member.id, question.qid),
                )
        waiting = model.answer_caption(question, mine, style)
        if waiting is not None:
            st.caption(waiting)
        else:
            won = member.id in winners(question, answers)
            rule = trainer_of(live).config.tie_break
            (st.success if won else st.info)(
                render.md_text(model.result_sentence(question, won=won, style=style, rule=rule))
            )
            board = standings(room)
            st.html(model.board_html(board, me=member.name, limit=5))


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
                st.session_state[Session.ERROR] = refused or _missed() or rooms().gone_message(code)
                _lobby(None)
                return
            if linked_key is not None or member_id or present:  # a wrong credential is a failed lookup too
                counted = st.session_state.setdefault(Session.MISSED, set())
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
        run = run_of(room)
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
        store_down(err)
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
        st.session_state[Session.NOTICE] = f"Room {room.code} has ended. Start a new room below."
        _lobby(None)
        return
    st.info(f"The teacher ended the room {room.code}. Thank you for taking part!")
