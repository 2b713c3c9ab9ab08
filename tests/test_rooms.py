"""Rooms (explorer.serving.rooms) on both backends: SQLite (the store's file, shared by the processes of
one machine) and Redis (Debian's redis-server on a loopback port). Every test runs on both."""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import threading
import time
import uuid

import pytest
import redis
from redisserver import redis_server, require_redis

from explorer.serving.room_results import HEADER, most_missed, results_csv
from explorer.serving.rooms import (
    CODE_LENGTH,
    ENDED_KEEP_S,
    HIDDEN_NAME,
    Limits,
    NoSuchRoom,
    NotTeacher,
    Question,
    RedisRooms,
    RoomEnded,
    RoomError,
    RoomFull,
    RoomLocked,
    Rooms,
    SqliteRooms,
    Wait,
    follow_token,
    leaderboard,
    merge_options,
    name_note,
    public_name,
    winners,
)
from explorer.serving.store import RedisStore, SqliteStore, StoreError

HOSTILE = "<img src=x onerror=alert(1)> **bold** $x$"


class Clock:
    """A clock the test moves by hand (room expiry without waiting hours)."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def redis_url():
    with redis_server(require_redis()) as url:
        yield url


def make_rooms(backend: str, where: str, *, limits: Limits, clock=None, prefix: str = "") -> Rooms:
    """Rooms on ``backend``: ``where`` is the SQLite folder or the Redis URL (the store's clock
    is the rooms' clock too: a room's hold on its files follows the same time)."""
    extra = {} if clock is None else {"clock": clock}
    if backend == "sqlite":
        return SqliteRooms(SqliteStore(where, cap_bytes=2**20, session_quota=2**20, **extra), limits=limits, **extra)
    return RedisRooms(
        RedisStore(where, cap_bytes=2**20, session_quota=2**20, prefix=prefix, **extra), limits=limits, **extra
    )


@pytest.fixture(params=["sqlite", "redis"])
def backend(request, tmp_path):
    """(backend name, where it keeps rooms, a key prefix of the test's own)."""
    if request.param == "sqlite":
        return "sqlite", str(tmp_path / "data"), ""
    return "redis", request.getfixturevalue("redis_url"), f"t{uuid.uuid4().hex[:8]}:"


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def rooms(backend, clock):
    name, where, prefix = backend
    made = make_rooms(name, where, limits=Limits(rooms=3, members=5, idle_hours=2), clock=clock, prefix=prefix)
    yield made
    made.close()


def merge_question(step: int = 0) -> Question:
    options, counts, right = merge_options(
        [("e", "s", 9), ("s", "t", 8), ("l", "o", 7), ("w", "e", 5)], seed=f"test:{step}"
    )
    return Question(0, "merge", step, options=options, counts=counts, answer=right)


# -- rooms and members ----------------------------------------------------------------------------


def test_a_room_keeps_its_view_and_step_and_only_the_teacher_key_moves_it(rooms):
    room, key = rooms.create({"corpus": "toy.txt", "preset": "gpt2"}, step=2)
    assert len(room.code) == CODE_LENGTH and len(key) >= 32  # 192 random bits, url-safe
    assert rooms.get(room.code.lower()).view == {"corpus": "toy.txt", "preset": "gpt2"}
    assert rooms.is_teacher(room.code, key) and not rooms.is_teacher(
        room.code, key[:-1] + ("x" if key[-1] != "x" else "y")
    )
    assert not rooms.is_teacher(room.code, None) and not rooms.is_teacher(room.code, "")
    for forged in (None, "", key.upper(), key + "x"):
        with pytest.raises(NotTeacher):
            rooms.set_step(room.code, forged, 5)
        with pytest.raises(NotTeacher):
            rooms.ask(room.code, forged, merge_question())
    assert rooms.get(room.code).step == 2
    before = rooms.revs(room.code)
    moved = rooms.set_step(room.code, key, 5)
    # the step is watched on its own: a step reruns no student's page (rev stays)
    assert moved.step == 5 and rooms.revs(room.code) == before._replace(step=5)


def test_a_wrong_code_says_no_such_room_and_nothing_else(rooms):
    room, _ = rooms.create({"corpus": "toy.txt"})
    wrong = "ABCDEF" if room.code != "ABCDEF" else "ABCDEG"
    assert rooms.get(wrong) is None and rooms.revs(wrong) is None and not rooms.is_teacher(wrong, "x")
    with pytest.raises(NoSuchRoom, match="No room has the code 'ABCDE"):
        rooms.join(wrong, "Ana")
    assert rooms.gone_message(wrong).endswith("(rooms close after a few idle hours).")
    with pytest.raises(NoSuchRoom):
        rooms.members(wrong)


def test_a_room_lost_with_its_store_says_when_the_store_began_again(backend, rooms):
    name, where, _prefix = backend
    room, key = rooms.create({"corpus": "toy.txt"})  # the only call before the loss
    if name == "sqlite":
        os.remove(os.path.join(where, "store.sqlite3"))  # the file deleted (or found damaged)
    else:
        redis.Redis.from_url(where).flushdb()  # the server restarted without its data
    with pytest.raises(NoSuchRoom) as caught:
        rooms.join(room.code, "Ana")
    at = time.strftime("%H:%M", time.localtime(rooms.store.generation().created))
    assert str(caught.value) == (
        f"No room has the code {room.code!r} any more: the class server's store was found damaged, removed or "
        f"emptied and started again, empty, at {at} (server time), and every room in it is gone; the teacher "
        "can start a new room."
    )
    assert rooms.gone_message(room.code) == str(caught.value) and rooms.get(room.code) is None
    with pytest.raises(NoSuchRoom, match="started again, empty"):
        rooms.set_step(room.code, key, 1)


def test_names_are_kept_as_typed_and_a_taken_name_gets_a_suffix(rooms, clock):
    room, _ = rooms.create({})
    hostile = rooms.join(room.code, HOSTILE)
    assert hostile.name == HOSTILE  # markup kept as typed: pages show names as text
    assert rooms.join(room.code, "x" * 100).name == "x" * 48  # cut to the length limit

    def join(name: str) -> str:
        clock.now += 1
        return rooms.join(room.code, name).name

    names = [join(n) for n in ("Ana", "ana", " ANA\t")]
    assert names == ["Ana", "ana 2", "ANA 3"]
    with pytest.raises(RoomError, match="Type a name"):
        rooms.join(room.code, " \u200b\n")
    assert [m.name for m in rooms.members(room.code)] == [hostile.name, "x" * 48, *names]
    assert rooms.member(room.code, hostile.id).name == hostile.name
    assert rooms.member(room.code, "not-a-member") is None


FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # man, woman, girl joined by ZWJ: one family glyph
FRANCE = "\U0001f1eb\U0001f1f7"  # two regional indicators: one flag
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"  # a flag spelled in tags
ALIREZA = "\u0639\u0644\u06cc\u200c\u0631\u0636\u0627"  # Persian "Ali-reza": ZWNJ keeps the two parts unjoined


def test_names_keep_joined_emoji_flags_and_persian_zwnj_and_lose_bidi_controls_and_invisible_characters(rooms, clock):
    room, _ = rooms.create({})

    def joined(typed: str) -> str:
        clock.now += 1  # members are listed in the order they joined
        return rooms.join(room.code, typed).name

    assert joined(f"{FAMILY} {FRANCE}") == f"{FAMILY} {FRANCE}"
    assert joined(f" {ALIREZA}\u200c ") == ALIREZA  # inside the name kept, at its edge dropped
    # a right-to-left override would show "anA" and reorder the leaderboard's row; zero-width and
    # filler characters would make names that look empty or look like another
    assert joined("\u202eBo\u202c\u200f\u2066\u2069") == "Bo"
    assert joined(f"\u200bCy\u2060\u3164{SCOTLAND}") == f"Cy{SCOTLAND}"
    with pytest.raises(RoomError, match="Type a name"):
        rooms.join(room.code, "\u3164\u200d \u2800\u202e")
    assert [m.name for m in rooms.members(room.code)] == [f"{FAMILY} {FRANCE}", ALIREZA, "Bo", f"Cy{SCOTLAND}"]


def test_a_name_that_looks_like_one_in_the_room_is_suffixed_and_the_student_told(rooms):
    room, _ = rooms.create({})
    assert rooms.join(room.code, "Ana").name == "Ana"
    cyrillic = "\u0410na"  # a Cyrillic capital A: the same letters on a projector
    twin = rooms.join(room.code, cyrillic)
    assert twin.name == f"{cyrillic} 2"
    assert name_note(cyrillic, twin.name) == (
        f"The name “{cyrillic}” is already in this room, or one that looks the same: you are “{cyrillic} 2”."
    )
    assert rooms.join(room.code, "A\u200dna").name == "A\u200dna 3"  # an invisible joiner changes nothing seen
    assert rooms.join(room.code, "\u0391\u039d\u0391 2").name == "\u0391\u039d\u0391 2 2"  # Greek capitals
    assert rooms.join(room.code, "Ann").name == "Ann"  # a name that differs in sight stays as typed
    assert name_note("Ann", "Ann") == ""


def test_a_long_name_is_cut_between_words_and_graphemes_with_a_note(rooms):
    room, _ = rooms.create({})
    pasted = "Maria José da Silva Santos Oliveira Pereira Costa Rodrigues Sá"  # the field used to refuse it whole
    kept = rooms.join(room.code, pasted).name
    assert kept == "Maria José da Silva Santos Oliveira Pereira"  # the words that fit in 48 characters
    assert name_note(pasted, kept) == "Your name is cut short: a name has at most 48 characters."
    assert rooms.join(room.code, "W" * 60).name == "W" * 48  # one word: cut inside it
    # at the limit, a family emoji is left out whole, not cut into a man and a woman
    assert rooms.join(room.code, "x" * 45 + FAMILY).name == "x" * 45


def test_the_room_and_member_limits_are_said_in_a_sentence(rooms):
    made = [rooms.create({}) for _ in range(3)]
    with pytest.raises(RoomFull, match="3 open rooms, its limit"):
        rooms.create({})
    code = made[0][0].code
    for n in range(5):
        rooms.join(code, f"student {n}")
    with pytest.raises(RoomFull, match="5 members, its limit"):
        rooms.join(code, "one too many")


def test_an_idle_room_expires_and_frees_its_place(rooms, clock):
    room, key = rooms.create({})
    member = rooms.join(room.code, "Ana")
    for _ in range(2):
        rooms.create({})
    clock.now += 1.5 * 3600
    rooms.set_step(room.code, key, 1)  # activity keeps a room alive
    clock.now += 1.5 * 3600  # the two others are now idle for 3 h, past the 2 h limit
    assert rooms.get(room.code) is not None
    rooms.create({})  # their places are free again
    clock.now += 2.5 * 3600
    assert rooms.get(room.code) is None and rooms.member(room.code, member.id) is None
    with pytest.raises(NoSuchRoom):
        rooms.join(room.code, "Bo")
    with pytest.raises(NoSuchRoom):
        rooms.set_step(room.code, key, 2)
    assert rooms.purge() >= 1


def test_presence_counts_the_members_seen_lately(rooms, clock):
    room, _ = rooms.create({})
    a, b = rooms.join(room.code, "Ana"), rooms.join(room.code, "Bo")
    assert rooms.present(room.code) == 2
    clock.now += 60
    rooms.seen(room.code, a.id)
    assert rooms.present(room.code) == 1
    rooms.seen(room.code, b.id)
    assert rooms.present(room.code) == 2


# -- nothing exhausted, nothing probed ------------------------------------------------------------------


def test_room_starts_are_limited_per_browser_and_per_address_saying_when_a_slot_frees(backend, clock):
    name, where, prefix = backend
    limits = Limits(rooms=50, starts=2, address_starts=3)
    rooms = make_rooms(name, where, limits=limits, clock=clock, prefix=prefix)
    other = make_rooms(name, where, limits=limits, clock=clock, prefix=prefix)  # another app process
    try:
        first = clock.now
        rooms.create({}, starter="b:ana", address="203.0.113.7")
        clock.now += 600
        other.create({}, starter="b:ana", address="203.0.113.7")  # the counts are the store's, shared
        for made in (rooms, other):
            with pytest.raises(Wait) as caught:
                made.create({}, starter="b:ana", address="203.0.113.7")
            assert caught.value.frees_at == first + 3600  # the first start leaves the hour's window
            assert str(caught.value).startswith(
                "This browser has started 2 rooms in the last hour, its limit (BPE_EXPLORER_ROOM_STARTS): "
                "the next one frees at "
            ) and str(caught.value).endswith(", in 50 minutes.")
        rooms.create({}, starter="b:fresh-cookie", address="203.0.113.7")  # a new cookie: the address's third
        with pytest.raises(Wait, match=r"^Your network address has started 3 rooms in the last hour, its limit"):
            rooms.create({}, starter="b:another-cookie", address="203.0.113.7")
        rooms.create({}, starter="b:elsewhere", address="198.51.100.2")  # another address starts its own
        clock.now = first + 3600 + 1
        rooms.create({}, starter="b:ana", address="203.0.113.7")  # an hour on: a slot is free again
    finally:
        other.close(), rooms.close()


def test_a_room_nobody_joined_closes_after_its_shorter_idle_time_and_the_full_message_says_when(backend, clock):
    name, where, prefix = backend
    rooms = make_rooms(name, where, limits=Limits(rooms=2, idle_hours=4, empty_minutes=30), clock=clock, prefix=prefix)
    try:
        lonely, _ = rooms.create({})
        clock.now += 60
        busy, _ = rooms.create({})
        member = rooms.join(busy.code, "Ana")
        with pytest.raises(Wait) as caught:
            rooms.create({})
        assert caught.value.frees_at == lonely.active + 30 * 60  # the empty room goes first
        assert "2 open rooms, its limit" in str(caught.value) and ", in 29 minutes." in str(caught.value)
        clock.now = lonely.active + 30 * 60 + 1
        assert rooms.get(lonely.code) is None and rooms.revs(lonely.code) is None
        assert rooms.get(busy.code) is not None and rooms.member(busy.code, member.id) is not None
        rooms.create({})  # the empty room's place is free
        with pytest.raises(Wait) as caught:
            rooms.create({})
        assert caught.value.frees_at == min(clock.now + 30 * 60, busy.active + 4 * 3600)
    finally:
        rooms.close()


def test_an_open_teacher_page_keeps_a_room_nobody_joined_yet(backend, clock):
    name, where, prefix = backend
    rooms = make_rooms(name, where, limits=Limits(empty_minutes=30), clock=clock, prefix=prefix)
    try:
        room, _ = rooms.create({})
        revs = rooms.revs(room.code)
        clock.now += 20 * 60
        assert rooms.keep(room.code)  # the teacher's page asked: the room is in use
        clock.now += 20 * 60  # 40 minutes after it started, 20 after the page last asked
        assert rooms.get(room.code) is not None and rooms.revs(room.code) == revs  # nothing to redraw
        clock.now += 11 * 60
        assert rooms.get(room.code) is None and not rooms.keep(room.code)  # the page closed: gone
    finally:
        rooms.close()


def test_following_a_room_needs_a_member_or_the_teachers_token_and_a_wrong_one_is_no_room(rooms):
    room, key = rooms.create({})
    other, other_key = rooms.create({})
    ana = rooms.join(room.code, "Ana")
    missing = next(c for c in ("ABCDEF", "ABCDEG", "ABCDEH") if c not in (room.code, other.code))
    assert rooms.revs_for(room.code, member=ana.id) == rooms.revs(room.code)
    assert rooms.revs_for(room.code, token=follow_token(key)) == rooms.revs(room.code)
    probes = [
        (room.code, {"member": "not-a-member"}),
        (room.code, {"member": ""}),
        (room.code, {}),
        (room.code, {"token": follow_token(other_key)}),  # another room's teacher
        (room.code, {"token": key}),  # the key itself is not the token
        (other.code, {"member": ana.id}),  # a member of another room
        (missing, {"member": ana.id}),
        (missing, {"token": follow_token(key)}),
    ]
    assert [rooms.revs_for(code, **credential) for code, credential in probes] == [None] * len(probes)


def test_failed_lookups_past_the_limit_are_refused_per_browser_and_per_address(backend, clock):
    name, where, prefix = backend
    limits = Limits(misses=3, address_misses=5)
    rooms = make_rooms(name, where, limits=limits, clock=clock, prefix=prefix)
    try:
        first = clock.now
        for _ in range(3):
            assert rooms.refused(browser="b:guesser", address="203.0.113.7") is None
            assert rooms.miss(browser="b:guesser", address="203.0.113.7") is None
            clock.now += 1
        refused = rooms.refused(browser="b:guesser", address="203.0.113.7")
        assert refused is not None and refused.frees_at == first + 60
        assert str(refused).startswith("Too many room codes that match no room were tried from this browser")
        assert str(refused).endswith(", in 57 seconds.") and " try again at " in str(refused)
        assert rooms.miss(browser="b:guesser", address="203.0.113.7") is not None  # not counted past the limit
        for _ in range(2):  # fresh cookies on the same address: its own limit of 5
            assert rooms.miss(browser=f"b:{clock.now}", address="203.0.113.7") is None
        assert rooms.refused(browser="b:new-cookie", address="203.0.113.7") is not None
        assert rooms.refused(browser="b:new-cookie", address="198.51.100.2") is None
        assert rooms.refused() is None and rooms.miss() is None  # nobody known: nothing counted
        clock.now = first + 61
        assert rooms.refused(browser="b:guesser", address="203.0.113.7") is None  # a minute on
    finally:
        rooms.close()


def test_the_limits_come_from_the_environment_and_a_bad_value_keeps_the_default(monkeypatch):
    for name, value in {
        "BPE_EXPLORER_EMPTY_ROOM_MINUTES": "12.5",
        "BPE_EXPLORER_ROOM_STARTS": "3",
        "BPE_EXPLORER_ADDRESS_ROOM_STARTS": "9",
        "BPE_EXPLORER_ROOM_MISSES": "lots",
        "BPE_EXPLORER_ADDRESS_ROOM_MISSES": "-4",
    }.items():
        monkeypatch.setenv(name, value)
    limits = Limits.from_env()
    assert (limits.empty_minutes, limits.starts, limits.address_starts) == (12.5, 3, 9)
    assert (limits.misses, limits.address_misses) == (Limits.misses, Limits.address_misses)
    assert limits.empty_seconds == 750 and Limits(idle_hours=0.1, empty_minutes=30).empty_seconds == 360


def test_a_step_outside_the_rooms_training_is_refused(rooms):
    room, key = rooms.create({}, step=0, top=10)
    assert rooms.get(room.code).top == 10
    for bad in (-5, 11, 10**9):
        with pytest.raises(RoomError, match=r"outside this room's training: its steps go from 0 to 10\."):
            rooms.set_step(room.code, key, bad)
    assert rooms.set_step(room.code, key, 10).step == 10
    rooms.set_step(room.code, key, 8)
    asked = rooms.ask(room.code, key, Question(0, "count", 8, sentence="the lowest", merges=5, answer=3))
    assert rooms.reveal(room.code, key, asked.qid).step == 10  # a reveal stops at the last step too
    with pytest.raises(RoomError, match="from 0 to 3"):
        rooms.create({}, step=4, top=3)


def test_a_room_holds_the_files_it_names_until_it_ends(backend, clock):
    name, where, prefix = backend
    rooms = make_rooms(name, where, limits=Limits(idle_hours=1), clock=clock, prefix=prefix)
    store = rooms.store
    try:
        corpus = store.put(b"low lower newest widest", kind="corpus", name="lesson.txt", owner="b:teacher")
        room, key = rooms.create({"corpus": f"upload:{corpus}"}, starter="b:teacher", holds=[corpus])
        assert rooms.starter(room.code) == "b:teacher"
        rooms.join(room.code, "Ana")
        assert store.holders("b:teacher") == {corpus: [f"room:{room.code}"]}
        assert store.forget("b:teacher") == 0 and store.has(corpus)  # the teacher's forget: it stays
        for _ in range(3):  # the lesson goes on for hours: each step moves the hold on
            clock.now += 50 * 60
            rooms.set_step(room.code, key, rooms.get(room.code).step + 1)
            store.put(b"a write sweeps lapsed holds", kind="pasted")
            assert store.has(corpus)
        clock.now += 61 * 60  # idle past the room's hour
        assert rooms.purge() == 1
        assert not store.has(corpus) and store.holders("b:teacher") == {}
    finally:
        rooms.close()


# -- questions and answers ------------------------------------------------------------------------


def test_one_answer_per_member_changeable_until_closed_then_revealed_and_scored(rooms, clock):
    room, key = rooms.create({}, step=4)
    ana, bo, cy = (rooms.join(room.code, n) for n in ("Ana", "Bo", "Cy"))
    asked = rooms.ask(room.code, key, merge_question(4))
    right = asked.answer
    wrong = (right + 1) % len(asked.options)
    assert asked.qid == 1 and asked.state == "open" and rooms.get(room.code).question == 1
    clock.now += 2
    rooms.answer(room.code, ana.id, 1, wrong)
    clock.now += 1
    rooms.answer(room.code, bo.id, 1, right)
    clock.now += 2
    rooms.answer(room.code, ana.id, 1, right)  # Ana changes her answer: still one answer
    rooms.answer(room.code, cy.id, 1, wrong)
    assert sorted((a.member, a.value, a.at) for a in rooms.answers(room.code, 1)) == sorted(
        [(ana.id, right, 5.0), (bo.id, right, 3.0), (cy.id, wrong, 5.0)]
    )
    with pytest.raises(RoomError, match="not one of the question's options"):
        rooms.answer(room.code, cy.id, 1, len(asked.options))
    with pytest.raises(RoomError, match="not a member"):
        rooms.answer(room.code, "stranger", 1, right)
    rooms.close_question(room.code, key, 1)
    with pytest.raises(RoomError, match="closed"):
        rooms.answer(room.code, cy.id, 1, right)
    assert rooms.get(room.code).step == 4
    revealed = rooms.reveal(room.code, key, 1)
    assert revealed.step == 5 and rooms.question(room.code, 1).state == "revealed"
    board = leaderboard(rooms.members(room.code), rooms.questions(room.code), {1: rooms.answers(room.code, 1)})
    assert [(s.name, s.points, s.seconds) for s in board] == [("Bo", 1, 3.0), ("Ana", 1, 5.0), ("Cy", 0, 0.0)]
    assert rooms.reveal(room.code, key, 1).step == 5  # revealing twice does not step twice


def test_a_count_question_reveals_after_its_merges_and_the_closest_wins(rooms):
    room, key = rooms.create({}, step=10)
    ana, bo = rooms.join(room.code, "Ana"), rooms.join(room.code, "Bo")
    asked = rooms.ask(room.code, key, Question(0, "count", 10, sentence="the lowest", merges=5, answer=7))
    rooms.answer(room.code, ana.id, asked.qid, 9)
    rooms.answer(room.code, bo.id, asked.qid, 6)
    with pytest.raises(RoomError, match="whole number"):
        rooms.answer(room.code, bo.id, asked.qid, -1)
    assert rooms.reveal(room.code, key, asked.qid).step == 15
    board = leaderboard(
        rooms.members(room.code), rooms.questions(room.code), {asked.qid: rooms.answers(room.code, asked.qid)}
    )
    assert [(s.name, s.points) for s in board] == [("Bo", 1), ("Ana", 0)]


def test_an_option_that_ties_with_the_merged_pair_is_right_too(rooms):
    room, key = rooms.create({}, step=7)
    ana, bo, cy = (rooms.join(room.code, n) for n in ("Ana", "Bo", "Cy"))
    # "e r" merges (the tie-break rule chose it), "a t" occurs as often: both are merge-worthy
    options, counts, right = merge_options(
        [("e", "r", 3326), ("a", "t", 3326), ("o", "n", 3100), ("i", "n", 2900)], seed="tie"
    )
    asked = rooms.ask(room.code, key, Question(0, "merge", 7, options=options, counts=counts, answer=right))
    tied, lower = options.index(("a", "t")), options.index(("o", "n"))
    rooms.answer(room.code, ana.id, asked.qid, right)
    rooms.answer(room.code, bo.id, asked.qid, tied)
    rooms.answer(room.code, cy.id, asked.qid, lower)
    rooms.reveal(room.code, key, asked.qid)
    revealed, answers = rooms.question(room.code, asked.qid), rooms.answers(room.code, asked.qid)
    assert winners(revealed, answers) == {ana.id, bo.id}
    board = leaderboard(rooms.members(room.code), rooms.questions(room.code), {asked.qid: answers})
    assert [(s.name, s.points) for s in board] == [("Ana", 1), ("Bo", 1), ("Cy", 0)]
    # a question stored without its counts (a record of an older store) reads, with one right option
    stored = json.loads(revealed.to_json())
    del stored["counts"]
    bare = Question.from_json(json.dumps(stored))
    assert bare.counts == () and winners(bare, answers) == {ana.id}


def test_a_new_question_closes_the_one_left_open_and_answers_go_to_the_current_one(rooms):
    room, key = rooms.create({})
    ana = rooms.join(room.code, "Ana")
    first = rooms.ask(room.code, key, merge_question())
    second = rooms.ask(room.code, key, merge_question())
    assert (first.qid, second.qid) == (1, 2) and rooms.question(room.code, 1).state == "closed"
    with pytest.raises(RoomError, match="closed"):
        rooms.answer(room.code, ana.id, 1, 0)
    rooms.answer(room.code, ana.id, 2, 0)
    assert [a.member for a in rooms.answers(room.code, 2)] == [ana.id] and rooms.answers(room.code, 1) == []


def test_a_bad_question_is_refused(rooms):
    room, key = rooms.create({})
    with pytest.raises(RoomError, match="1 to 8 options"):
        rooms.ask(room.code, key, Question(0, "merge", 0, options=(), answer=0))
    with pytest.raises(RoomError, match="sentence"):
        rooms.ask(room.code, key, Question(0, "count", 0, sentence=" ", answer=3))


def test_the_tally_rev_moves_with_answers_and_the_view_rev_does_not(rooms):
    room, key = rooms.create({})
    ana = rooms.join(room.code, "Ana")
    rooms.ask(room.code, key, merge_question())
    rev, tally, step = rooms.revs(room.code)
    rooms.answer(room.code, ana.id, 1, 0)
    assert rooms.revs(room.code) == (rev, tally + 1, step)  # students need not redraw for an answer


# -- concurrency ----------------------------------------------------------------------------------


def _answer_many(backend: str, where: str, prefix: str, code: str, members: list[str], go, rounds: int) -> None:
    rooms = make_rooms(backend, where, limits=Limits(), prefix=prefix)
    go.wait(30)
    for r in range(rounds):
        for member in members:
            rooms.answer(code, member, 1, (r + len(member)) % 4)
    rooms.close()


def test_answers_from_two_processes_at_once_are_counted_once_each(backend):
    name, where, prefix = backend
    rooms = make_rooms(name, where, limits=Limits(), prefix=prefix)
    room, key = rooms.create({})
    members = [rooms.join(room.code, f"student {n}").id for n in range(30)]
    rooms.ask(room.code, key, merge_question())
    ctx = multiprocessing.get_context("spawn")
    go = ctx.Event()
    rounds = 5
    procs = [
        ctx.Process(target=_answer_many, args=(name, where, prefix, room.code, half, go, rounds))
        for half in (members[::2], members[1::2])
    ]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    answers = rooms.answers(room.code, 1)
    assert sorted(a.member for a in answers) == sorted(members)  # 30 answers: none lost, none twice
    assert {a.member: a.value for a in answers} == {m: (rounds - 1 + len(m)) % 4 for m in members}
    rooms.close()


def _commands(url: str) -> dict[str, int]:
    """How many times the server has run each command (all its clients, and the commands inside
    scripts: the compare-and-set reads with HGET, never HGETALL)."""
    client = redis.Redis.from_url(url)
    try:
        return {name.removeprefix("cmdstat_"): stat["calls"] for name, stat in client.info("commandstats").items()}
    finally:
        client.close()


def test_an_answer_right_after_its_members_poll_makes_one_round_trip_and_stays_checked(redis_url):
    # two servers on one Redis: ``near`` polls and answers, as a student's server does; ``far``
    # is the teacher's server, whose changes ``near`` has not read
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    near, far = (make_rooms("redis", redis_url, limits=Limits(), prefix=prefix) for _ in range(2))
    room, key = far.create({})
    member = far.join(room.code, "Ada").id
    far.ask(room.code, key, merge_question())
    near.answer(room.code, member, 1, 0)
    assert near.revs_for(room.code, member=member) is not None
    before = _commands(redis_url)
    near.answer(room.code, member, 1, 1)
    after = _commands(redis_url)
    ran = {name: after.get(name, 0) - before.get(name, 0) for name in ("hgetall", "evalsha")}
    assert ran == {"hgetall": 0, "evalsha": 1}, ran  # the compare-and-set alone: the room not read again
    assert [a.value for a in far.answers(room.code, 1)] == [1]

    # what ``near`` read a moment ago has changed on ``far``: the check catches it, either way
    far.close_question(room.code, key, 1)
    with pytest.raises(RoomError, match="closed"):
        near.answer(room.code, member, 1, 2)
    assert [a.value for a in far.answers(room.code, 1)] == [1]
    with pytest.raises(RoomError):
        near.answer(room.code, member, 2, 0)  # not asked yet: refused, and what it read kept
    far.ask(room.code, key, merge_question(1))
    near.answer(room.code, member, 2, 3)  # refused on the kept replies, then taken on fresh ones
    assert [a.value for a in far.answers(room.code, 2)] == [3]
    far.remove(room.code, key, member)
    with pytest.raises(RoomError, match="not a member"):
        near.answer(room.code, member, 2, 1)
    near.close()
    far.close()


def test_a_room_kept_alive_on_another_server_is_not_taken_for_idle_on_a_reply_read_before(redis_url):
    # ``near`` read the room at noon; ``far`` (the teacher's server) kept it alive at one; at
    # past two ``near``'s reply says idle for two hours, which only a fresh read can deny
    prefix, limits = f"t{uuid.uuid4().hex[:8]}:", Limits(idle_hours=2)
    near_clock, far_clock = Clock(), Clock()
    near = make_rooms("redis", redis_url, limits=limits, clock=near_clock, prefix=prefix)
    far = make_rooms("redis", redis_url, limits=limits, clock=far_clock, prefix=prefix)
    room, _ = far.create({})
    member = far.join(room.code, "Ada").id
    assert near.revs_for(room.code, member=member) is not None
    far_clock.now += 3600
    assert far.keep(room.code)
    near_clock.now += 2 * 3600 + 60
    assert near.keep(room.code)
    near.close()
    far.close()


def test_thirty_students_joining_at_once_fill_the_room_exactly_and_each_keeps_a_name_of_its_own(backend):
    # six clients of their own (connections, as six app processes have), five joins each, all
    # typing the same name: each join reads the count and the names, then writes; two joins that
    # read the same state must not both go in (the room would take more than it holds, or two
    # members would share a name)
    name, where, prefix = backend
    limits = Limits(members=20)
    rooms = make_rooms(name, where, limits=limits, prefix=prefix)
    room, _ = rooms.create({})
    clients = [make_rooms(name, where, limits=limits, prefix=prefix) for _ in range(6)]
    go = threading.Barrier(len(clients))
    outcomes: list[str] = []

    def join_five(client: Rooms) -> None:
        go.wait(30)
        for _ in range(5):
            try:
                outcomes.append(client.join(room.code, "Ana").name)
            except RoomFull:
                outcomes.append("")

    threads = [threading.Thread(target=join_five, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for client in clients:
        client.close()
    kept = [m.name for m in rooms.members(room.code)]
    assert len(outcomes) == 30 and outcomes.count("") == 10  # twenty in, ten told the room is full
    assert sorted(kept) == sorted(n for n in outcomes if n) and len(kept) == 20
    assert len({n.casefold() for n in kept}) == 20, kept  # "Ana", "Ana 2", ...: no two alike
    rooms.close()


def test_an_unreachable_redis_gives_a_sentence_without_its_place_or_password():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nobody listens once the socket is closed
    store = RedisStore(f"redis://127.0.0.1:{port}/0?password=s3cret-pw", cap_bytes=2**20, session_quota=2**20)
    rooms = RedisRooms(store, limits=Limits())
    with pytest.raises(StoreError) as caught:
        rooms.get("ABCDEF")
    for hidden in ("127.0.0.1", str(port), "s3cret-pw"):  # where the server is goes to the log only
        assert hidden not in str(caught.value), str(caught.value)
    rooms.close()


# -- moderation: the teacher's alone ----------------------------------------------------------------


def test_a_removed_student_leaves_the_tally_and_the_leaderboard_and_its_page_is_told(rooms, clock):
    room, key = rooms.create({})
    ana, bo, cy = (rooms.join(room.code, n) for n in ("Ana", "Bo", "Cy"))
    asked = rooms.ask(room.code, key, merge_question())
    for member in (ana, bo, cy):
        clock.now += 1
        rooms.answer(room.code, member.id, asked.qid, asked.answer)
    rev, tally, step = rooms.revs(room.code)
    rooms.remove(room.code, key, bo.id)
    assert rooms.revs(room.code) == (rev + 1, tally + 1, step)  # the students' pages and the tally redraw
    assert [a.member for a in rooms.answers(room.code, asked.qid)] == [ana.id, cy.id]
    assert [m.name for m in rooms.members(room.code)] == ["Ana", "Cy"]
    assert rooms.member(room.code, bo.id) is None and rooms.removed(room.code, bo.id)
    assert not rooms.removed(room.code, ana.id) and not rooms.removed(room.code, "never-joined")
    assert rooms.revs_for(room.code, member=bo.id) is None  # its page stops following
    with pytest.raises(RoomError, match="not a member"):
        rooms.answer(room.code, bo.id, asked.qid, asked.answer)
    rooms.reveal(room.code, key, asked.qid)
    board = leaderboard(
        rooms.members(room.code), rooms.questions(room.code), {asked.qid: rooms.answers(room.code, asked.qid)}
    )
    assert [(s.name, s.points) for s in board] == [("Ana", 1), ("Cy", 1)]
    with pytest.raises(RoomError, match="not in this room"):
        rooms.remove(room.code, key, bo.id)  # removed once
    assert rooms.join(room.code, "bo").name == "bo"  # the name is free again


def test_a_renamed_or_hidden_name_is_kept_unique_and_shown_as_the_teacher_set_it(rooms):
    room, key = rooms.create({})
    rude, ana = rooms.join(room.code, "rude word"), rooms.join(room.code, "Ana")
    rev, _, _ = rooms.revs(room.code)
    assert rooms.rename(room.code, key, rude.id, " Star\n").name == "Star"
    assert rooms.revs(room.code)[0] == rev + 1  # the students' leaderboards redraw
    assert rooms.rename(room.code, key, rude.id, "ANA").name == "ANA 2"  # taken (case folded): a suffix
    assert rooms.rename(room.code, key, ana.id, "ana").name == "ana"  # its own name in another case
    assert rooms.rename(room.code, key, rude.id, HOSTILE).name == HOSTILE  # kept as typed: pages show text
    with pytest.raises(RoomError, match="Type a name"):
        rooms.rename(room.code, key, rude.id, " \u200b ")
    assert rooms.join(room.code, "rude word").name == "rude word"  # the old name is free
    assert rooms.join(room.code, "Ana").name == "Ana 2"  # the kept one is not
    hidden = rooms.hide(room.code, key, ana.id)
    assert hidden.hidden and rooms.member(room.code, ana.id).hidden
    shown = {m.id: public_name(m) for m in rooms.members(room.code)}
    assert (shown[rude.id], shown[ana.id]) == (HOSTILE, HIDDEN_NAME)
    assert not rooms.hide(room.code, key, ana.id, hidden=False).hidden
    with pytest.raises(RoomError, match="not in this room"):
        rooms.rename(room.code, key, "never-joined", "Eve")


def test_a_locked_room_refuses_new_members_with_a_sentence_and_keeps_its_own(rooms):
    room, key = rooms.create({})
    ana = rooms.join(room.code, "Ana")
    assert rooms.lock(room.code, key).locked and rooms.get(room.code).locked
    with pytest.raises(RoomLocked, match="locked this room: nobody new can join"):
        rooms.join(room.code, "Bo")
    asked = rooms.ask(room.code, key, merge_question())
    rooms.answer(room.code, ana.id, asked.qid, 0)  # who is in stays in
    assert not rooms.lock(room.code, key, locked=False).locked
    assert rooms.join(room.code, "Bo").name == "Bo"


def test_an_ended_room_tells_its_pages_refuses_every_change_and_frees_its_place(backend, clock):
    name, where, prefix = backend
    rooms = make_rooms(name, where, limits=Limits(rooms=2), clock=clock, prefix=prefix)
    store = rooms.store
    try:
        corpus = store.put(b"low lower newest widest", kind="corpus", name="lesson.txt", owner="b:teacher")
        room, key = rooms.create({"corpus": f"upload:{corpus}"}, starter="b:teacher", holds=[corpus])
        rooms.create({})
        ana = rooms.join(room.code, "Ana")
        asked = rooms.ask(room.code, key, merge_question())
        rev, _, _ = rooms.revs(room.code)
        with pytest.raises(RoomFull):
            rooms.create({})
        rooms.end(room.code, key)
        ended = rooms.get(room.code)
        assert ended.ended and ended.rev == rev + 1  # every page in the room is told
        assert rooms.revs_for(room.code, member=ana.id) == (ended.rev, ended.tally, ended.step)
        assert store.holders("b:teacher") == {} and store.forget("b:teacher") == 1  # its files let go
        refusals = [
            lambda: rooms.join(room.code, "Bo"),
            lambda: rooms.answer(room.code, ana.id, asked.qid, 0),
            lambda: rooms.set_step(room.code, key, 1),
            lambda: rooms.ask(room.code, key, merge_question()),
            lambda: rooms.reveal(room.code, key, asked.qid),
            lambda: rooms.lock(room.code, key),
            lambda: rooms.remove(room.code, key, ana.id),
            lambda: rooms.rename(room.code, key, ana.id, "Eve"),
            lambda: rooms.end(room.code, key),
        ]
        for refused in refusals:
            with pytest.raises(RoomEnded, match="The teacher ended this room"):
                refused()
        assert not rooms.keep(room.code)
        rooms.create({})  # an ended room counts no more against the server's limit
        clock.now += ENDED_KEEP_S + 1
        assert rooms.get(room.code) is None and rooms.revs_for(room.code, member=ana.id) is None
    finally:
        rooms.close()


def test_the_csv_export_holds_every_question_its_options_each_answer_its_time_and_verdict(rooms, clock):
    import csv
    import io

    room, key = rooms.create({}, step=4)

    def join(name: str):
        clock.now += 1  # the export lists members in the order they joined
        return rooms.join(room.code, name)

    ana, formula, bo = (join(n) for n in ("Ana", "=HYPERLINK(1)", "Bo"))
    merge = rooms.ask(room.code, key, merge_question(4))
    right, wrong = merge.answer, (merge.answer + 1) % len(merge.options)
    clock.now += 2.5
    rooms.answer(room.code, ana.id, merge.qid, right)
    clock.now += 1
    rooms.answer(room.code, formula.id, merge.qid, wrong)
    rooms.reveal(room.code, key, merge.qid)
    count = rooms.ask(room.code, key, Question(0, "count", 5, sentence="the lowest", merges=3, answer=7))
    clock.now += 4
    rooms.answer(room.code, bo.id, count.qid, 9)
    questions = rooms.questions(room.code)
    answers = {q.qid: rooms.answers(room.code, q.qid) for q in questions}
    rows = list(csv.reader(io.StringIO(results_csv(rooms.members(room.code), questions, answers, token=str.upper))))
    assert rows[0] == list(HEADER)
    pair = " + ".join
    options = " | ".join(f"{pair(p).upper()} ({c})" for p, c in zip(merge.options, merge.counts))
    asked = "which pair merges at step 5?"
    assert rows[1:4] == [
        [
            "1",
            "merge",
            "4",
            asked,
            options,
            pair(merge.options[right]).upper(),
            "Ana",
            pair(merge.options[right]).upper(),
            "2.5",
            "yes",
        ],
        [
            "1",
            "merge",
            "4",
            asked,
            options,
            pair(merge.options[right]).upper(),
            "'=HYPERLINK(1)",
            pair(merge.options[wrong]).upper(),
            "3.5",
            "no",
        ],
        ["1", "merge", "4", asked, options, pair(merge.options[right]).upper(), "Bo", "", "", ""],
    ]
    counted = "how many tokens will “the lowest” have after 3 more merges?"
    assert rows[4:] == [  # not revealed yet: nobody is marked right or wrong
        ["2", "count", "5", counted, "", "7", "Ana", "", "", ""],
        ["2", "count", "5", counted, "", "7", "'=HYPERLINK(1)", "", "", ""],
        ["2", "count", "5", counted, "", "7", "Bo", "9", "4.0", ""],
    ]
    missed = most_missed(rooms.question(room.code, merge.qid), answers[merge.qid])
    assert missed == (wrong, 1, 1, 2)
    assert most_missed(rooms.question(room.code, count.qid), answers[count.qid]) is None  # not revealed
