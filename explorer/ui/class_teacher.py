"""The teacher's side of the Class page, apart from what a projector shows: where the room's key
is kept, the join address, the presenter view and the moderation of a room.

**The key stays off every screen.** A room's teacher key (192 bits) never sits in an address
bar: the teacher's page is ``/Class?room=CODE`` like a student's lobby, and the key lives in the
session (``class_teacher_keys``) and in a cookie of the teacher's browser named for the room
(``bpe_teacher_CODE``; path ``/``, the websocket's request carries it; SameSite=Strict; it lasts
the room's idle lifetime). So F5 keeps the teacher (the cookie), leaving Class by the sidebar and
coming back returns to the room (the session), and an old link with ``key=`` in it is taken
once and the key moved out of the address. The cookie is written by a small component in the
teacher's page (``st.context.cookies`` reads it on the next connection).

**A presenter view for the projector**: ``/Class?room=CODE&present=TOKEN``, opened from the
teacher's page in a second window: the code, the join address and its QR code, the step, the
question with its tally, the leaderboard and the panels, no control. ``TOKEN`` is the room's
follow token (:func:`explorer.serving.rooms.follow_token`): it lets the page follow the room and
cannot change it; the key cannot be found from it.

**The join address** (:mod:`explorer.serving.addresses`): built from this machine's network
address when the teacher's browser is on ``localhost``, or from ``BPE_EXPLORER_PUBLIC_URL``;
the page says when students' devices cannot reach the server (it listens on 127.0.0.1 only).

**Moderation**: remove a student (its answers leave the tally and the leaderboard, its page says
so), rename it or hide its name, lock joining, end the room, download every answer as CSV, and
after each reveal the wrong answer most chosen.
"""

from __future__ import annotations

import functools
import html
import logging
import time
from urllib.parse import urlencode, urlsplit

import streamlit as st

from .. import settings
from ..errors import ExplorerError
from ..serving import addresses
from ..serving.room_results import results_csv
from ..serving.rooms import Member, Question, Room, normalize_code
from ..serving.store import StoreError
from . import class_model as model
from . import class_room, follow, projector, render, train_view
from .class_model import COOKIE_PREFIX, Keys, RoomRun, Session, cookie_name, hidden_names

__all__ = [
    "COOKIE_PREFIX",
    "cookie_name",
    "remember",
    "forget",
    "key_for",
    "current_room",
    "own_rooms",
    "write_cookies",
    "join_base",
    "join_address_html",
    "reach_warning",
    "presenter_url",
    "presenter",
    "moderation",
    "show_missed",
    "hidden_names",
    "own_room_buttons",
    "styles",
]

_log = logging.getLogger(__name__)

_KEYS = Session.TEACHER_KEYS  # session: {room code: teacher key}
_CURRENT = Session.TEACHER_ROOM  # session: the room this session teaches (the sidebar brings it back)
_GONE = Session.TEACHER_GONE  # session: room codes whose cookie is to be deleted
_CHOSEN = Session.CHOSEN  # session: the student the moderation tools act on (a member id)
_ADDRESSES_S = 30.0  # this machine's addresses are read again at most this often


# ---- the key: the session, and a cookie named for the room ---------------------------------------
def _cookies() -> dict[str, str]:
    try:
        return dict(st.context.cookies)
    except Exception:  # noqa: BLE001 - no request context (AppTest)
        return {}


def remember(code: str, key: str) -> None:
    """This session teaches the room ``code`` with ``key`` (its cookie is written on the next run)."""
    st.session_state.setdefault(_KEYS, {})[code] = key
    st.session_state[_CURRENT] = code
    st.session_state.get(_GONE, set()).discard(code)


def forget(code: str) -> None:
    """The room is no longer this browser's to teach (ended, or gone): its key and cookie go."""
    st.session_state.get(_KEYS, {}).pop(code, None)
    if st.session_state.get(_CURRENT) == code:
        st.session_state.pop(_CURRENT, None)
    st.session_state.setdefault(_GONE, set()).add(code)


def key_for(code: str) -> str | None:
    """The key this browser holds for the room: the session's, else its cookie's (after F5)."""
    if code in st.session_state.get(_GONE, set()):
        return None
    return st.session_state.get(_KEYS, {}).get(code) or _cookies().get(cookie_name(code)) or None


def current_room() -> str | None:
    """The room this session teaches (None: none)."""
    return st.session_state.get(_CURRENT)


def own_rooms() -> list[str]:
    """The rooms whose key this session or browser keeps (its session, its cookies), to be
    checked against the store."""
    gone = st.session_state.get(_GONE, set())
    found = {name.removeprefix(COOKIE_PREFIX) for name in _cookies() if name.startswith(COOKIE_PREFIX)}
    found |= set(st.session_state.get(_KEYS, {}))
    return sorted(code for code in found if code and normalize_code(code) == code and code not in gone)


_COOKIE_JS = r"""
export default function (component) {
  const { data } = component;
  const secure = location.protocol === "https:" ? "; Secure" : "";
  for (const c of data.cookies || []) {
    document.cookie = `${c.name}=${encodeURIComponent(c.value)}; Path=/; Max-Age=${c.max_age}; SameSite=Strict${secure}`;
  }
}
"""

_cookie_writer = st.components.v2.component("bpe_explorer_teacher_cookie", js=_COOKIE_JS)


def write_cookies() -> None:
    """Write this session's rooms' keys into the browser's cookies (and delete the cookies of
    rooms it no longer teaches). Drawn in every teacher's and lobby run: a rerun that comes
    before the browser drew the last one loses nothing."""
    lifetime = int(class_room.rooms().limits.idle_seconds)
    cookies = model.cookies(st.session_state.get(_KEYS, {}), st.session_state.get(_GONE, set()), lifetime=lifetime)
    if cookies:
        _cookie_writer(key=Keys.COOKIE, data={"cookies": cookies}, height=0)


# ---- where students join -------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _addresses_at(_tick: int) -> tuple[str, ...]:
    return tuple(addresses.lan_addresses())


def _lan() -> tuple[str, ...]:
    """This machine's network addresses, best first (read again every ``_ADDRESSES_S``)."""
    return _addresses_at(int(time.monotonic() // _ADDRESSES_S))


def _public() -> tuple[str | None, str | None]:
    """(``BPE_EXPLORER_PUBLIC_URL``, or None; the sentence when it is not an address)."""
    try:
        return addresses.public_url(), None
    except ExplorerError as err:
        return None, str(err)


def _browser_url() -> str:
    try:
        return st.context.url or ""
    except Exception:  # noqa: BLE001 - no request context (AppTest)
        return ""


def join_base() -> str:
    """The address students' join links start with (:func:`explorer.serving.addresses.join_base`)."""
    public, _ = _public()
    return addresses.join_base(_browser_url() or "http://localhost:8501", public=public, addresses=_lan())


def join_url(code: str) -> str:
    """The link students open to join (and its QR code shows): the Class page with the room's
    code, at :func:`join_base`."""
    return f"{join_base()}/Class?{urlencode({'room': code})}"


def _listening() -> str:
    """The address this server listens on (behind ``serve``'s haproxy: the proxy's)."""
    front = settings.text(addresses.LISTEN_ENV)
    if front is not None:
        return front
    try:
        return str(st.get_option("server.address") or "")
    except Exception:  # noqa: BLE001 - an option Streamlit does not know
        return ""


def reach_warning() -> str | None:
    """Why students' devices may not open the join link, as Markdown (None: nothing known
    against it)."""
    public, bad = _public()
    if bad:
        return render.md_text(bad)
    if public:
        return None
    listening = _listening()
    if addresses.listens_locally(listening):
        return (
            f"This server listens on {listening} only, this machine alone: students' devices cannot open the "
            "join link. For a class, start it with `python -m explorer app --class` (or `serve --class`)."
        )
    host = urlsplit(join_base()).hostname or ""
    if addresses.is_local_host(host):
        return (
            "This machine has no network address that students' devices could use: connect it to the class's "
            "network (or set BPE_EXPLORER_PUBLIC_URL)."
        )
    return None


def join_address_html(code: str) -> str:
    """The join address large (what students type: host, port and /Class), then the code."""
    base = join_base()
    shown = base.split("://", 1)[-1] + "/Class"
    return (
        f'<div class="cls-join"><span class="cls-join-label">Join at</span> '
        f'<span class="cls-join-address">{html.escape(shown)}</span></div>'
        f'<div class="cls-join-code">code <b>{html.escape(code)}</b></div>'
    )


_CSS = """
<style>
.cls-join {font-size: 2rem; font-weight: 700; line-height: 1.2; margin: .2rem 0 0 0; overflow-wrap: anywhere;}
.cls-join-label {font-size: 1.1rem; font-weight: 500; color: #475569;}
.cls-join-address {font-family: "Source Code Pro", monospace;}
.cls-join-code {font-size: 1.1rem; color: #475569;}
.cls-missed {margin: .2rem 0 .4rem 0; padding: .25rem .5rem; border-left: 4px solid #dc2626; background: #fef2f2;}
.cls-present div.cls-code {font-size: 5rem;}
.cls-present .cls-join {font-size: 2.6rem;}
</style>
"""


def styles() -> None:
    """The teacher's and the presenter's own styles (once per run)."""
    st.html(_CSS)


# ---- the presenter view --------------------------------------------------------------------------
def presenter_url(code: str, key: str) -> str:
    """The presenter view's address on the teacher's own machine (the follow token, never the key;
    the projector mode when the teacher's page is in it: the view is for the projector)."""
    return model.presenter_address(_browser_url(), code, key, projector.link_params())


def presenter(room: Room, run: RoomRun, token: str) -> None:
    """The projector's view of the room: the room as it is, followed live, without controls."""
    styles()
    st.fragment(_presenter_room)(room.code, run, token)


def _presenter_room(code: str, run: RoomRun, token: str) -> None:
    try:
        _presenter_body(code, run, token)
    except StoreError as err:
        class_room.store_down(err)


def _presenter_body(code: str, run: RoomRun, token: str) -> None:
    rooms = class_room.rooms()
    room = rooms.get(code)
    if room is None or room.ended:
        st.info("The teacher ended the room." if room is not None else "This room has closed.")
        return
    # students redraw on "rev" (questions, names, the end) and move to the "step" in the browser,
    # the teacher's tally on "tally": the projector redraws on all three
    follow.watch(code, token=token, what="rev", now=room.rev, key=Keys.PRESENT_REV)
    follow.watch(code, token=token, what="step", now=room.step, key=Keys.PRESENT_STEP)
    follow.watch(code, token=token, what="tally", now=room.tally, key=Keys.PRESENT_TALLY)
    st.html('<div class="cls-present"></div>')
    head, qr = st.columns([5, 2], vertical_alignment="top")
    with head:
        st.html(f'<div class="cls-code" aria-label="room code">{html.escape(code)}</div>')
        st.html(join_address_html(code))
    with qr:
        if room.locked:
            st.markdown("**Joining is closed.**")
        else:
            st.image(class_room.qr_png(join_url(code)), width=220, caption="Scan to join")
    members = rooms.members(code)
    present = rooms.present(code)
    st.markdown(model.room_status(room.step, len(members), present))
    live = class_room.room_live(run, room)
    style = train_view.token_style(live)
    current = class_room.current_question(room)
    quiz, board = st.columns([3, 2], gap="medium")
    with quiz:
        if current is not None:
            answers = rooms.answers(code, current.qid)
            st.markdown(f"**Question {current.qid}:** " + model.question_text(current))
            if current.state == "revealed":
                rule = class_room.trainer_of(live).config.tie_break
                st.html(model.reveal_html(current, answers, style, rule=rule))
                show_missed(current, answers, style)
            elif current.state == "closed":
                st.caption("Answers are closed.")
            st.html(model.tally_html(current, answers, style, present=present, reveal=current.state == "revealed"))
    with board:
        st.markdown("**Leaderboard**")
        st.html(model.board_html(class_room.standings(room)))
    class_room.panels(live, quiz=model.hides_pairs(current), key=Keys.PANELS_PRESENTER)


# ---- after a reveal: the wrong answer most chosen ------------------------------------------------
def show_missed(question: Question, answers, style: render.TokenStyle) -> None:
    """Draw :func:`missed_html` when somebody was wrong (``st.html`` refuses an empty body)."""
    line = model.missed_html(question, answers, style)
    if line:
        st.html(line)


# ---- moderation ------------------------------------------------------------------------------------
def _choose(offered: tuple[str, ...]) -> None:
    # ``offered``: the member ids of the box as last drawn. A rerun that left the browser before
    # hiding or renaming the chosen student redrew its label carries the old label, which no
    # longer names an option: Streamlit hands it over as that raw string, and taking it would
    # move the tools to the first student
    value = st.session_state.get(Keys.MOD_MEMBER)
    if value in offered:
        st.session_state[_CHOSEN] = value


def _rename(code: str, key: str) -> None:
    member_id = st.session_state.get(_CHOSEN)
    name = str(st.session_state.get(Keys.MOD_NAME, ""))
    if member_id:
        class_room.attempt(class_room.rooms().rename, code, key, member_id, name)
        st.session_state[Keys.MOD_NAME] = ""


def _hide(code: str, key: str, hidden: bool) -> None:
    member_id = st.session_state.get(_CHOSEN)
    if member_id:
        class_room.attempt(class_room.rooms().hide, code, key, member_id, hidden)


def _remove(code: str, key: str) -> None:
    member_id = st.session_state.get(_CHOSEN)
    if member_id:
        class_room.attempt(class_room.rooms().remove, code, key, member_id)
        st.session_state.pop(_CHOSEN, None)


def _lock(code: str, key: str) -> None:
    class_room.attempt(class_room.rooms().lock, code, key, bool(st.session_state.get(Keys.LOCK)))


def _end(code: str, key: str) -> None:
    def end() -> None:
        class_room.rooms().end(code, key)
        forget(code)
        st.session_state[Session.NOTICE] = f"Room {code} has ended: its students' pages say so. Start a new room below."
        st.session_state.pop(Keys.END_SURE, None)
        st.query_params.clear()

    class_room.attempt(end)


def _csv(room: Room, style: render.TokenStyle) -> str:
    rooms = class_room.rooms()
    questions = rooms.questions(room.code)
    answers = {q.qid: rooms.answers(room.code, q.qid) for q in questions}
    return results_csv(
        rooms.members(room.code), questions, answers, token=lambda t: render.token_text(t, style, into="text")
    )


def moderation(room: Room, key: str, members: list[Member], style: render.TokenStyle) -> None:
    """The teacher's tools for the room: a student to rename, hide or remove; joining locked or
    open; the results as CSV; ending the room."""
    code = room.code
    with st.expander("Manage the room: students, joining, results", expanded=False):
        by_id = {m.id: m for m in members}
        if members:
            # the choice is kept apart from the widget: Streamlit keeps a selectbox's value as its
            # shown label, and renaming or hiding the chosen student changes that label
            if st.session_state.get(_CHOSEN) not in by_id:
                st.session_state[_CHOSEN] = members[0].id
            st.session_state[Keys.MOD_MEMBER] = st.session_state[_CHOSEN]
            st.selectbox(
                "Student",
                list(by_id),
                key=Keys.MOD_MEMBER,
                format_func=model.member_label(by_id),
                on_change=_choose,
                args=(tuple(by_id),),
            )
            chosen = by_id[st.session_state[_CHOSEN]]
            row = st.container(horizontal=True, gap="small", vertical_alignment="bottom")
            row.text_input("New name", key=Keys.MOD_NAME, max_chars=48, width=200)
            row.button("Rename", key=Keys.MOD_RENAME, on_click=_rename, args=(code, key))
            row = st.container(horizontal=True, gap="small")
            if chosen.hidden:
                row.button("Show the name", key=Keys.MOD_SHOW, on_click=_hide, args=(code, key, False))
            else:
                row.button("Hide the name", key=Keys.MOD_HIDE, on_click=_hide, args=(code, key, True))
            row.button("Remove from the room", key=Keys.MOD_REMOVE, on_click=_remove, args=(code, key))
        else:
            st.caption("Nobody has joined yet.")
        st.session_state[Keys.LOCK] = room.locked
        st.toggle(
            "Lock joining",
            key=Keys.LOCK,
            on_change=_lock,
            args=(code, key),
            help="New students are refused with a sentence; those in the room stay.",
        )
        st.download_button(
            "Download the results (CSV)",
            data=_csv(room, style),
            file_name=f"room-{code}-results.csv",
            mime="text/csv",
            key=Keys.CSV,
            on_click="ignore",
            help="Every question, its options and right answer, each student's answer, time and whether it was right.",
        )
        row = st.container(horizontal=True, gap="small", vertical_alignment="center")
        row.button(
            "To the lobby",
            key=Keys.TO_LOBBY,
            on_click=_to_lobby,
            help="Start or join another room; this one goes on, and the lobby has a button back to it.",
        )
        row.checkbox("Yes, end it for everyone", key=Keys.END_SURE)
        row.button(
            "End the room",
            key=Keys.END,
            on_click=_end,
            args=(code, key),
            disabled=not st.session_state.get(Keys.END_SURE),
        )


def _to_lobby() -> None:
    """Leave the room's page for the lobby: the room goes on, its key stays (session and cookie)."""
    st.session_state.pop(_CURRENT, None)
    st.query_params.clear()


def own_room_buttons() -> None:
    """In the lobby: the rooms this browser teaches (their cookies), each a button back to it."""
    rooms = class_room.rooms()
    mine = []
    for code in own_rooms():
        key = key_for(code)
        try:
            room = rooms.get(code)
            if room is not None and not room.ended and rooms.is_teacher(code, key):
                mine.append(code)
        except ExplorerError:
            continue
    if not mine:
        return
    st.caption("Rooms you teach on this browser:")
    row = st.container(horizontal=True, gap="small")
    for code in mine:
        row.button(f"Back to room {code}", key=Keys.back_to(code), on_click=_back_to, args=(code,))


def _back_to(code: str) -> None:
    key = key_for(code)
    if key:
        remember(code, key)
        st.query_params.from_dict({"room": code})
