"""The store's contract: every operation of the store (:class:`explorer.serving.store.Store`) and
of its rooms (:class:`explorer.serving.rooms.Rooms`) behaves alike on both backends, a real
SQLite file and a real redis-server, and no teacher-only operation of a room yields to a forged
key.

Each table below is what its protocol promises, one line an operation: a new operation needs
one line here (a test holds each table and its protocol together). Every line runs on both
backends (``backend``: SQLite in the test's own folder, Redis on this module's server under a
prefix of the test's own)."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from redisserver import redis_server, require_redis

from explorer.serving.rooms import (
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
    holder,
    merge_options,
)
from explorer.serving.store import Generation, QuotaError, RedisStore, SqliteStore, Store

KIB = 1024
LIMITS = Limits(rooms=3, members=4, idle_hours=2, empty_minutes=10, starts=5, address_starts=8, misses=2)


class Clock:
    """A clock the test moves by hand: every change to a room moves its activity to now, so a
    write that should not have happened shows in the room's ``active``."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


class Backend(NamedTuple):
    name: str  # "sqlite" or "redis"
    where: str  # the SQLite folder, or the Redis URL
    prefix: str  # the Redis keys' prefix ("" on SQLite)

    def store(self, clock: Clock) -> Store:
        if self.name == "sqlite":
            return SqliteStore(
                self.where, cap_bytes=10 * KIB, session_quota=4 * KIB, address_quota=6 * KIB, clock=clock
            )
        return RedisStore(
            self.where,
            cap_bytes=10 * KIB,
            session_quota=4 * KIB,
            address_quota=6 * KIB,
            prefix=self.prefix,
            clock=clock,
        )

    def rooms(self, clock: Clock) -> Rooms:
        """Rooms kept beside a store of the backend, on the same clock."""
        store = self.store(clock)
        kind = SqliteRooms if self.name == "sqlite" else RedisRooms
        return kind(store, limits=LIMITS, clock=clock)


@pytest.fixture(scope="module")
def redis_url():
    with redis_server(require_redis()) as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def backend(request, tmp_path) -> Backend:
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "data"), "")
    return Backend("redis", request.getfixturevalue("redis_url"), f"c{uuid.uuid4().hex[:8]}:")


@pytest.fixture
def clock() -> Clock:
    return Clock()


def merge_question(step: int = 2) -> Question:
    options, counts, right = merge_options([("e", "s", 9), ("s", "t", 8), ("l", "o", 7)], seed=f"contract:{step}")
    return Question(0, "merge", step, options=options, counts=counts, answer=right)


def data(n: int, fill: bytes = b"x") -> bytes:
    """``n`` KiB of bytes, different for each ``fill``."""
    return fill * (n * KIB)


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


# -- the store -------------------------------------------------------------------------------------


def check_put(store: Store, clock: Clock) -> None:
    first = store.put(b"low lower", kind="pasted", name="a.txt", meta={"decoding": "utf-8"}, owner="s:1")
    again = store.put(b"low lower", kind="corpus", name="b.txt", owner="s:2")
    assert first == again == digest(b"low lower")
    assert store.get(first)[1:5] == ("corpus", "b.txt", {}, b"low lower")  # the latest kind, name, meta
    with pytest.raises(QuotaError, match="each user may keep"):
        store.put(data(5), kind="corpus", owner="s:1")  # over the owner's 4 KiB
    with pytest.raises(QuotaError, match="more than the .* store can hold"):
        store.put(data(11), kind="corpus")  # more than the whole store
    full = store.put(data(4, b"q"), kind="corpus", owner="s:5")  # the whole quota
    assert store.put(data(4, b"q"), kind="corpus", owner="s:5") == full  # its own file again costs nothing
    store.forget("s:5")
    store.put(data(3, b"a"), kind="corpus", owner="s:3", address="203.0.113.7")
    with pytest.raises(QuotaError, match="network address"):  # a fresh cookie, the same address: 6 KiB
        store.put(data(4, b"b"), kind="corpus", owner="s:4", address="203.0.113.7")
    assert store.total_bytes() == 9 + 3 * KIB


def check_get(store: Store, clock: Clock) -> None:
    kept = store.put(b"newest", kind="text", meta={"k": 1})
    assert store.get(kept) == (kept, "text", "", {"k": 1}, b"newest", 6)
    assert store.get(digest(b"never")) is None and store.get("../etc") is None


def check_has(store: Store, clock: Clock) -> None:
    kept = store.put(b"widest", kind="text")
    assert store.has(kept) and not store.has(digest(b"never")) and not store.has("nope")


def check_touch(store: Store, clock: Clock) -> None:
    old, new = store.put(data(4, b"o"), kind="t"), store.put(data(4, b"n"), kind="t")
    assert store.touch(old) and not store.touch(digest(b"never"))
    store.put(data(4, b"z"), kind="t")  # over the 10 KiB: the least recently used goes
    assert store.has(old) and not store.has(new)


def check_evict(store: Store, clock: Clock) -> None:
    a, b, c = (store.put(data(3, f), kind="t") for f in (b"a", b"b", b"c"))
    store.hold("room:HELD", [a], until=clock() + 60)
    store.touch(b)
    store.touch(c)  # a, held, is now the least recently used
    assert store.evict(to_bytes=4 * KIB) == 2  # unheld first: b, then c, and the held a stays
    assert [store.has(d) for d in (a, b, c)] == [True, False, False]
    assert store.evict(to_bytes=0) == 1 and store.total_bytes() == 0  # then held ones too
    assert store.evict() == 0


def check_forget(store: Store, clock: Clock) -> None:
    mine = store.put(b"mine", kind="t", owner="s:1", address="198.51.100.1")
    shared = store.put(b"shared", kind="t", owner="s:1")
    store.put(b"shared", kind="t", owner="s:2")
    held = store.put(b"held", kind="t", owner="s:1")
    store.hold("room:HELD", [held], until=clock() + 60)
    assert store.forget("s:1") == 1  # an address's claim keeps nothing; another owner's and a hold do
    assert [store.has(d) for d in (mine, shared, held)] == [False, True, True]
    assert store.owned("s:1") == [] and store.forget("s:nobody") == 0


def check_owned(store: Store, clock: Clock) -> None:
    first = store.put(b"first", kind="corpus", name="one.txt", owner="s:1")
    second = store.put(b"second", kind="text", owner="s:1")
    store.put(b"other", kind="text", owner="s:2")
    assert [(e.digest, e.kind, e.name, e.size) for e in store.owned("s:1")] == [
        (second, "text", "", 6),
        (first, "corpus", "one.txt", 5),
    ]  # most recently used first
    store.touch(first)
    assert [e.digest for e in store.owned("s:1")] == [first, second]


def check_hold(store: Store, clock: Clock) -> None:
    kept = store.put(b"lesson", kind="corpus", owner="s:1")
    assert store.hold("room:A", [kept, digest(b"never"), "junk"], until=clock() + 60) == 1
    assert store.holders("s:1") == {kept: ["room:A"]}
    clock.now += 61  # the deadline passes: the next write lets the hold go
    store.forget("s:1")
    assert not store.has(kept) and store.holders("s:1") == {}


def check_release(store: Store, clock: Clock) -> None:
    held, kept = store.put(b"held", kind="t"), store.put(b"kept", kind="t", owner="s:1")
    store.hold("room:A", [held, kept], until=clock() + 60)
    assert store.release("room:A") == 1  # the file only the room kept goes; the browser's stays
    assert not store.has(held) and store.has(kept) and store.holders("s:1") == {}


def check_holders(store: Store, clock: Clock) -> None:
    kept = store.put(b"lesson", kind="t", owner="s:1")
    store.hold("room:B", [kept], until=clock() + 60)
    store.hold("room:A", [kept], until=clock() + 60)
    store.hold("room:OLD", [kept], until=clock() - 1)
    assert store.holders("s:1") == {kept: ["room:A", "room:B"]} and store.holders("s:2") == {}


def check_total_bytes(store: Store, clock: Clock) -> None:
    assert store.total_bytes() == 0
    store.put(data(2), kind="t")
    store.put(data(2), kind="t")
    store.put(b"abc", kind="t")
    assert store.total_bytes() == 2 * KIB + 3


def check_take_notice(store: Store, clock: Clock) -> None:
    store.put(b"x", kind="t")
    assert store.take_notice() is None  # nothing was damaged


def check_generation(store: Store, clock: Clock) -> None:
    first = store.generation()
    assert isinstance(first, Generation) and first.stamp and not first.replaced
    assert store.generation() == first


def check_close(store: Store, clock: Clock) -> None:
    kept = store.put(b"kept", kind="t")
    store.close()
    assert store.get(kept).data == b"kept"  # the next call opens the store again


STORE_OPERATIONS: dict[str, Callable[[Store, Clock], None]] = {
    "put": check_put,
    "get": check_get,
    "has": check_has,
    "touch": check_touch,
    "evict": check_evict,
    "forget": check_forget,
    "owned": check_owned,
    "hold": check_hold,
    "release": check_release,
    "holders": check_holders,
    "total_bytes": check_total_bytes,
    "take_notice": check_take_notice,
    "generation": check_generation,
    "close": check_close,
}


@pytest.mark.parametrize("operation", STORE_OPERATIONS)
def test_each_store_operation_keeps_its_contract_on_both_backends(backend, clock, operation):
    store = backend.store(clock)
    try:
        STORE_OPERATIONS[operation](store, clock)
    finally:
        store.close()


# -- the rooms ------------------------------------------------------------------------------------


class Lesson(NamedTuple):
    """A room with two students, one question asked and answered by Ana: what each check starts from."""

    rooms: Rooms
    clock: Clock
    code: str
    key: str
    ana: str  # member ids
    bo: str
    qid: int
    file: str  # a file the room holds (put by the teacher's browser, ``s:teacher``)


def lesson(rooms: Rooms, clock: Clock) -> Lesson:
    file = rooms.store.put(b"low lower newest", kind="corpus", owner="s:teacher")  # type: ignore[attr-defined]
    room, key = rooms.create({"corpus": "toy.txt"}, step=2, top=50, starter="b:teacher", holds=[file])
    ana, bo = rooms.join(room.code, "Ana"), rooms.join(room.code, "Bo")
    asked = rooms.ask(room.code, key, merge_question())
    rooms.answer(room.code, ana.id, asked.qid, asked.answer)
    return Lesson(rooms, clock, room.code, key, ana.id, bo.id, asked.qid, file)


def check_create(le: Lesson) -> None:
    rooms, clock = le.rooms, le.clock
    room, key = rooms.create({"preset": "gpt2"}, step=1, top=9, starter="b:1", address="198.51.100.2")
    assert (room.view, room.step, room.top, room.rev, room.tally, room.question) == (
        {"preset": "gpt2"},
        1,
        9,
        1,
        0,
        None,
    )
    assert rooms.is_teacher(room.code, key) and room.code != le.code
    with pytest.raises(RoomError, match="from 0 to 9"):
        rooms.create({}, step=10, top=9)
    rooms.create({})
    with pytest.raises(RoomFull, match="3 open rooms"):  # the server's limit, saying when a place frees
        rooms.create({})
    clock.now += LIMITS.empty_seconds + 1  # the rooms nobody joined close first; the lesson's stays
    for _ in range(2):
        rooms.create({}, starter="b:busy")
    assert rooms.get(le.code) is not None


def check_get(le: Lesson) -> None:
    room = le.rooms.get(le.code.lower())
    assert (room.code, room.view, room.step, room.question, room.locked, room.ended) == (
        le.code,
        {"corpus": "toy.txt"},
        2,
        le.qid,
        False,
        False,
    )
    assert le.rooms.get("ZZZZZZ") is None
    le.clock.now += LIMITS.idle_seconds + 1
    assert le.rooms.get(le.code) is None  # idle past its lifetime


def check_revs(le: Lesson) -> None:
    rev, tally, step = le.rooms.revs(le.code)
    le.rooms.answer(le.code, le.bo, le.qid, 0)
    assert le.rooms.revs(le.code) == (rev, tally + 1, step)  # an answer moves the tally alone
    le.rooms.set_step(le.code, le.key, 4)
    assert le.rooms.revs(le.code) == (rev, tally + 1, 4)  # a step moves the step alone: no page reruns
    le.rooms.lock(le.code, le.key)
    assert le.rooms.revs(le.code) == (rev + 1, tally + 2, 4)  # what students redraw moves rev
    assert le.rooms.revs("ZZZZZZ") is None


def check_revs_for(le: Lesson) -> None:
    revs = le.rooms.revs(le.code)
    assert le.rooms.revs_for(le.code, member=le.ana) == revs == le.rooms.revs_for(le.code, token=follow_token(le.key))
    for wrong in ({"member": "forged"}, {"token": follow_token(le.key + "x")}, {"token": le.key}, {}):
        assert le.rooms.revs_for(le.code, **wrong) is None
    assert le.rooms.revs_for("ZZZZZZ", member=le.ana) is None


def check_refused(le: Lesson) -> None:
    assert le.rooms.refused(browser="b:1", address="198.51.100.3") is None
    le.rooms.miss(browser="b:1")
    le.rooms.miss(browser="b:1")
    assert isinstance(le.rooms.refused(browser="b:1"), Wait)
    assert le.rooms.refused(browser="b:2", address="198.51.100.3") is None


def check_miss(le: Lesson) -> None:
    assert le.rooms.miss(browser="b:1") is None and le.rooms.miss(browser="b:1") is None
    refusal = le.rooms.miss(browser="b:1")
    assert isinstance(refusal, Wait) and refusal.frees_at == le.clock() + 60
    le.clock.now += 61
    assert le.rooms.miss(browser="b:1") is None


def check_starter(le: Lesson) -> None:
    assert le.rooms.starter(le.code) == "b:teacher" and le.rooms.starter("ZZZZZZ") is None


def check_is_teacher(le: Lesson) -> None:
    assert le.rooms.is_teacher(le.code, le.key) and le.rooms.is_teacher(le.code.lower(), le.key)
    for forged in forged_keys(le):
        assert not le.rooms.is_teacher(le.code, forged)


def check_set_step(le: Lesson) -> None:
    assert le.rooms.set_step(le.code, le.key, 50).step == 50
    for bad in (-1, 51, True, 2.0):
        with pytest.raises(RoomError, match="from 0 to 50"):
            le.rooms.set_step(le.code, le.key, bad)  # type: ignore[arg-type]


def check_join(le: Lesson) -> None:
    cy = le.rooms.join(le.code, " \u202eana ")
    assert cy.name == "ana 2"  # bidi controls dropped; a taken name (folded) gets a suffix
    le.rooms.join(le.code, "Dee")
    with pytest.raises(RoomFull, match="4 members"):
        le.rooms.join(le.code, "Eve")
    with pytest.raises(RoomError, match="Type a name"):
        le.rooms.join(le.code, "\u200b ")
    with pytest.raises(NoSuchRoom):
        le.rooms.join("ZZZZZZ", "Eve")


def check_member(le: Lesson) -> None:
    assert le.rooms.member(le.code, le.ana)[:2] == (le.ana, "Ana")
    assert le.rooms.member(le.code, "forged") is None and le.rooms.member("ZZZZZZ", le.ana) is None


def check_members(le: Lesson) -> None:
    assert [(m.name, m.hidden) for m in le.rooms.members(le.code)] == [("Ana", False), ("Bo", False)]
    with pytest.raises(NoSuchRoom):
        le.rooms.members("ZZZZZZ")


def check_seen(le: Lesson) -> None:
    le.clock.now += 60
    assert le.rooms.present(le.code) == 0
    le.rooms.seen(le.code, le.ana)
    le.rooms.seen(le.code, "forged")
    assert le.rooms.present(le.code) == 1


def check_keep(le: Lesson) -> None:
    le.clock.now += LIMITS.idle_seconds - 1
    assert le.rooms.keep(le.code)
    le.clock.now += LIMITS.idle_seconds - 1
    assert le.rooms.get(le.code) is not None and not le.rooms.keep("ZZZZZZ")


def check_present(le: Lesson) -> None:
    assert le.rooms.present(le.code) == 2  # both joined just now
    le.clock.now += 21
    assert le.rooms.present(le.code) == 0


def check_ask(le: Lesson) -> None:
    asked = le.rooms.ask(le.code, le.key, merge_question())
    assert (asked.qid, asked.state, asked.opened) == (le.qid + 1, "open", le.clock())
    assert le.rooms.question(le.code, le.qid).state == "closed"  # the one left open closes unrevealed
    assert le.rooms.get(le.code).question == asked.qid
    with pytest.raises(RoomError, match="from 1 to 8 options"):
        le.rooms.ask(le.code, le.key, Question(0, "merge", 2))


def check_answer(le: Lesson) -> None:
    le.clock.now += 2.5
    le.rooms.answer(le.code, le.bo, le.qid, 1)
    le.rooms.answer(le.code, le.bo, le.qid, 2)  # changeable while open: one answer a member
    assert [(a.member, a.value, a.at) for a in le.rooms.answers(le.code, le.qid) if a.member == le.bo] == [
        (le.bo, 2, 2.5)
    ]
    with pytest.raises(RoomError, match="not one of the question's options"):
        le.rooms.answer(le.code, le.bo, le.qid, 3)
    with pytest.raises(RoomError, match="not a member"):
        le.rooms.answer(le.code, "forged", le.qid, 0)
    le.rooms.close_question(le.code, le.key, le.qid)
    with pytest.raises(RoomError, match="closed"):
        le.rooms.answer(le.code, le.bo, le.qid, 0)


def check_close_question(le: Lesson) -> None:
    closed = le.rooms.close_question(le.code, le.key, le.qid)
    assert closed.state == "closed" and le.rooms.question(le.code, le.qid) == closed
    with pytest.raises(RoomError, match="never asked"):
        le.rooms.close_question(le.code, le.key, le.qid + 1)


def check_reveal(le: Lesson) -> None:
    room = le.rooms.reveal(le.code, le.key, le.qid)
    assert room.step == 3 and le.rooms.question(le.code, le.qid).state == "revealed"  # on past the merge
    with pytest.raises(RoomError, match="never asked"):
        le.rooms.reveal(le.code, le.key, 9)


def check_question(le: Lesson) -> None:
    assert le.rooms.question(le.code, le.qid).options == merge_question().options
    assert le.rooms.question(le.code, 9) is None


def check_questions(le: Lesson) -> None:
    le.rooms.ask(le.code, le.key, merge_question(3))
    assert [(q.qid, q.state, q.step) for q in le.rooms.questions(le.code)] == [(1, "closed", 2), (2, "open", 3)]


def check_answers(le: Lesson) -> None:
    right = le.rooms.question(le.code, le.qid).answer
    assert [(a.member, a.value) for a in le.rooms.answers(le.code, le.qid)] == [(le.ana, right)]
    assert le.rooms.answers(le.code, 9) == []


def check_lock(le: Lesson) -> None:
    assert le.rooms.lock(le.code, le.key).locked
    with pytest.raises(RoomLocked):
        le.rooms.join(le.code, "Cy")
    assert not le.rooms.lock(le.code, le.key, False).locked
    le.rooms.join(le.code, "Cy")


def check_end(le: Lesson) -> None:
    le.rooms.end(le.code, le.key)
    assert le.rooms.get(le.code).ended and le.rooms.store.holders("s:teacher") == {}  # type: ignore[attr-defined]
    assert not le.rooms.is_teacher(le.code, le.key)  # its key changes nothing any more
    with pytest.raises(RoomEnded):
        le.rooms.answer(le.code, le.ana, le.qid, 0)
    with pytest.raises(RoomEnded):
        le.rooms.set_step(le.code, le.key, 3)
    le.clock.now += ENDED_KEEP_S + 1
    assert le.rooms.get(le.code) is None


def check_remove(le: Lesson) -> None:
    le.rooms.remove(le.code, le.key, le.ana)
    assert [m.name for m in le.rooms.members(le.code)] == ["Bo"] and le.rooms.answers(le.code, le.qid) == []
    assert le.rooms.join(le.code, "Ana").name == "Ana"  # its name is free again
    with pytest.raises(RoomError, match="not in this room"):
        le.rooms.remove(le.code, le.key, le.ana)


def check_rename(le: Lesson) -> None:
    assert le.rooms.rename(le.code, le.key, le.ana, "Bo").name == "Bo 2"
    assert le.rooms.rename(le.code, le.key, le.ana, "Ana").name == "Ana"  # its own old name is free
    assert le.rooms.join(le.code, "Bo 2").name == "Bo 2"


def check_hide(le: Lesson) -> None:
    assert le.rooms.hide(le.code, le.key, le.ana).hidden and le.rooms.member(le.code, le.ana).hidden
    assert not le.rooms.hide(le.code, le.key, le.ana, False).hidden
    assert HIDDEN_NAME not in [m.name for m in le.rooms.members(le.code)]


def check_removed(le: Lesson) -> None:
    assert not le.rooms.removed(le.code, le.ana)
    le.rooms.remove(le.code, le.key, le.ana)
    assert le.rooms.removed(le.code, le.ana) and not le.rooms.removed(le.code, le.bo)


def check_purge(le: Lesson) -> None:
    empty, _ = le.rooms.create({})
    le.clock.now += LIMITS.empty_seconds + 1
    assert le.rooms.purge() == 1 and le.rooms.get(empty.code) is None and le.rooms.get(le.code) is not None
    le.clock.now += LIMITS.idle_seconds
    assert le.rooms.purge() == 1 and le.rooms.store.holders("s:teacher") == {}  # type: ignore[attr-defined]


def check_gone_message(le: Lesson) -> None:
    assert "check the code" in le.rooms.gone_message("zz zzzz") and "'ZZZZZZ'" in le.rooms.gone_message("zzzzzz")
    assert le.rooms.gone_message("ZZZZZZ", usual="Gone.") == "Gone."


def check_close(le: Lesson) -> None:
    le.rooms.close()
    assert le.rooms.get(le.code).code == le.code  # the next call opens the store again


ROOM_OPERATIONS: dict[str, Callable[[Lesson], None]] = {
    "create": check_create,
    "get": check_get,
    "revs": check_revs,
    "revs_for": check_revs_for,
    "refused": check_refused,
    "miss": check_miss,
    "starter": check_starter,
    "is_teacher": check_is_teacher,
    "set_step": check_set_step,
    "join": check_join,
    "member": check_member,
    "members": check_members,
    "seen": check_seen,
    "keep": check_keep,
    "present": check_present,
    "ask": check_ask,
    "answer": check_answer,
    "close_question": check_close_question,
    "reveal": check_reveal,
    "question": check_question,
    "questions": check_questions,
    "answers": check_answers,
    "lock": check_lock,
    "end": check_end,
    "remove": check_remove,
    "rename": check_rename,
    "hide": check_hide,
    "removed": check_removed,
    "purge": check_purge,
    "gone_message": check_gone_message,
    "close": check_close,
}


@pytest.mark.parametrize("operation", ROOM_OPERATIONS)
def test_each_room_operation_keeps_its_contract_on_both_backends(backend, clock, operation):
    rooms = backend.rooms(clock)
    try:
        ROOM_OPERATIONS[operation](lesson(rooms, clock))
    finally:
        rooms.close()


def test_a_room_outlives_its_server_process_on_both_backends(backend, clock):
    """What one process (a server restarted mid-class) left, another finds and goes on with."""
    first = backend.rooms(clock)
    le = lesson(first, clock)
    first.close()
    again = backend.rooms(clock)
    try:
        assert again.reveal(le.code, le.key, le.qid).step == 3
        assert [m.name for m in again.members(le.code)] == ["Ana", "Bo"] and len(again.answers(le.code, le.qid)) == 1
        assert again.store.holders("s:teacher") == {le.file: [holder(le.code)]}  # type: ignore[attr-defined]
    finally:
        again.close()


def test_a_room_kept_in_redis_before_the_rules_moved_out_of_lua_goes_on(redis_url, clock):
    """What the former Lua scripts left in Redis (cjson's members and answers, a room from before
    the count of members) is read and changed as the rules' own."""
    import redis

    backend = Backend("redis", redis_url, f"c{uuid.uuid4().hex[:8]}:")
    room, now, key = f"{backend.prefix}room:K7QX2M", clock(), "teacher-key-of-the-old-room"
    question = merge_question()
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.hset(
        room,
        mapping={
            "key_hash": hashlib.sha256(key.encode()).hexdigest(),
            **{"view": '{"corpus": "toy.txt"}', "step": "2", "rev": "4", "tally": "6", "question": "1"},
            **{"created": repr(now), "active": repr(now), "qids": "1", "top": "50", "starter": "b:t", "locked": "1"},
        },
    )  # no "members" field: a room from before the count
    client.hset(
        f"{room}:members",
        mapping={"m1": '{"joined":1800000000,"name":"Ana"}', "m2": '{"hidden":true,"joined":1800000000,"name":"Bo"}'},
    )
    client.hset(f"{room}:names", mapping={"ana": "m1", "bo": "m2"})
    client.hset(f"{room}:questions", "1", dataclasses.replace(question, qid=1, opened=now).to_json())
    client.hset(f"{room}:answers:1", "m1", '{"at":0.5,"value":1}')
    client.zadd(f"{backend.prefix}rooms", {"K7QX2M": now})
    client.close()
    rooms = backend.rooms(clock)
    try:
        got = rooms.get("k7qx2m")
        assert (got.step, got.rev, got.tally, got.question, got.locked, got.top) == (2, 4, 6, 1, True, 50)
        assert [(m.id, m.name, m.hidden) for m in rooms.members(got.code)] == [("m1", "Ana", False), ("m2", "Bo", True)]
        assert [(a.member, a.value, a.at) for a in rooms.answers(got.code, 1)] == [("m1", 1, 0.5)]
        with pytest.raises(NotTeacher):
            rooms.lock(got.code, key + "x", False)
        rooms.lock(got.code, key, False)
        assert rooms.join(got.code, "ana").name == "ana 2" and rooms.rename(got.code, key, "m2", "Cy").name == "Cy"
        rooms.answer(got.code, "m2", 1, 0)
        assert rooms.ask(got.code, key, merge_question()).qid == 2 and rooms.question(got.code, 1).state == "closed"
        rooms.remove(got.code, key, "m1")
        assert [a.member for a in rooms.answers(got.code, 1)] == ["m2"] and rooms.removed(got.code, "m1")
        assert [m.name for m in rooms.members(got.code)] == ["Cy", "ana 2"] and rooms.join(
            got.code, "Ana"
        ).name == "Ana"
    finally:
        rooms.close()


# -- the teacher's key ------------------------------------------------------------------------------


def forged_keys(le: Lesson) -> tuple[str | None, ...]:
    """Keys that are not the room's: none, empty, one character off, longer, shorter, another
    case, padded, the follow token, the hash the room keeps."""
    key = le.key
    other = key[:-1] + ("x" if key[-1] != "x" else "y")
    return (
        None,
        "",
        other,
        key + "x",
        key[:-1],
        key.swapcase(),
        f" {key} ",
        follow_token(key),
        hashlib.sha256(key.encode()).hexdigest(),
    )


class TeacherOp(NamedTuple):
    """A teacher-only operation: ``call(lesson, key)`` changes the room for the right key;
    ``prepare(lesson)``, when set, first puts the room where the call has something to change."""

    method: str  # the Rooms method it calls
    call: Callable[[Lesson, Any], object]
    prepare: Callable[[Lesson], object] | None = None


TEACHER_OPERATIONS: dict[str, TeacherOp] = {
    "set_step": TeacherOp("set_step", lambda le, k: le.rooms.set_step(le.code, k, 7)),
    "ask": TeacherOp("ask", lambda le, k: le.rooms.ask(le.code, k, merge_question())),
    "close_question": TeacherOp("close_question", lambda le, k: le.rooms.close_question(le.code, k, le.qid)),
    "reveal": TeacherOp("reveal", lambda le, k: le.rooms.reveal(le.code, k, le.qid)),
    "reveal a closed question": TeacherOp(
        "reveal",
        lambda le, k: le.rooms.reveal(le.code, k, le.qid),
        lambda le: le.rooms.close_question(le.code, le.key, le.qid),
    ),
    "lock": TeacherOp("lock", lambda le, k: le.rooms.lock(le.code, k)),
    "unlock": TeacherOp(
        "lock", lambda le, k: le.rooms.lock(le.code, k, False), lambda le: le.rooms.lock(le.code, le.key)
    ),
    "end": TeacherOp("end", lambda le, k: le.rooms.end(le.code, k)),
    "remove": TeacherOp("remove", lambda le, k: le.rooms.remove(le.code, k, le.ana)),
    "rename": TeacherOp("rename", lambda le, k: le.rooms.rename(le.code, k, le.ana, "Eve")),
    "hide": TeacherOp("hide", lambda le, k: le.rooms.hide(le.code, k, le.ana)),
    "show": TeacherOp(
        "hide",
        lambda le, k: le.rooms.hide(le.code, k, le.ana, False),
        lambda le: le.rooms.hide(le.code, le.key, le.ana),
    ),
}


def state(le: Lesson) -> tuple:
    """Everything a teacher's call could change, read back from the store."""
    rooms = le.rooms
    return (
        rooms.get(le.code),
        rooms.revs(le.code),
        rooms.members(le.code),
        [(q, rooms.answers(le.code, q.qid)) for q in rooms.questions(le.code)],
        rooms.removed(le.code, le.ana),
        rooms.is_teacher(le.code, le.key),
        rooms.store.holders("s:teacher"),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("operation", TEACHER_OPERATIONS)
def test_a_forged_teacher_key_is_refused_and_changes_nothing_on_both_backends(backend, clock, operation):
    rooms = backend.rooms(clock)
    try:
        le = lesson(rooms, clock)
        _, elsewhere = rooms.create({})  # another room's own key opens nothing here
        op = TEACHER_OPERATIONS[operation]
        if op.prepare is not None:
            op.prepare(le)
        before = state(le)
        for forged in (*forged_keys(le), elsewhere):
            clock.now += 1  # a write that slipped through would move the room's activity
            with pytest.raises(NotTeacher, match="Only the teacher's link"):
                op.call(le, forged)
            assert state(le) == before, forged
        op.call(le, le.key)  # the room's own key does change it: the refusals above were the key's
        assert state(le) != before
    finally:
        rooms.close()


def test_the_tables_name_every_operation_of_the_store_and_the_rooms_and_every_teachers_one():
    def methods(protocol: type) -> set[str]:
        return {name for name, _ in inspect.getmembers(protocol, inspect.isfunction) if not name.startswith("_")}

    assert set(STORE_OPERATIONS) == methods(Store)
    assert set(ROOM_OPERATIONS) == methods(Rooms)
    # a teacher's operation is one that takes the key; is_teacher only asks (checked above)
    keyed = {name for name in methods(Rooms) if "key" in inspect.signature(getattr(Rooms, name)).parameters}
    assert {op.method for op in TEACHER_OPERATIONS.values()} == keyed - {"is_teacher"}
