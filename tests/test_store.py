"""The store (explorer.serving.store): files kept by content hash across sessions, processes and
restarts, bounded in size, per owner, and recreated when its file is damaged or deleted.

The behaviour both backends share runs on each (the ``store`` and ``backend`` fixtures: SQLite in
a fresh folder, Redis on this module's redis-server, emptied before each test); what only SQLite
has (a damaged file, the data folder) runs on SQLite alone."""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import NamedTuple

import pytest
from redisserver import redis_server, require_redis

from explorer.errors import ExplorerError
from explorer.serving import store as store_module
from explorer.serving.store import (
    DEFAULT_SESSION_MIB,
    DEFAULT_STORE_MIB,
    RECREATED_NOTICE,
    Blob,
    QuotaError,
    RedisStore,
    SqliteStore,
    Store,
    StoreError,
    data_dir,
    default_store,
)

KIB = 1024
REDIS_PREFIX = "bpe-explorer-test:"


def open_store(backend: str, place: str, *, cap_bytes: int = 10 * KIB, session_quota: int = 4 * KIB, **more) -> Store:
    """A store of ``backend`` ("sqlite" or "redis") on ``place`` (a folder or a Redis URL); a
    module-level function so that spawned processes open the same store. ``more``: the
    per-address quota, the clock."""
    if backend == "sqlite":
        return SqliteStore(place, cap_bytes=cap_bytes, session_quota=session_quota, **more)
    return RedisStore(place, cap_bytes=cap_bytes, session_quota=session_quota, prefix=REDIS_PREFIX, **more)


class Backend(NamedTuple):
    """Where a test's store lives: a backend and its place (a folder, or a Redis URL)."""

    name: str
    place: str

    def open(self, *, cap_bytes: int = 10 * KIB, session_quota: int = 4 * KIB, **more) -> Store:
        return open_store(self.name, self.place, cap_bytes=cap_bytes, session_quota=session_quota, **more)


@pytest.fixture(scope="module")
def redis_url():
    """One redis-server for the whole module (skipped without Debian's redis-server, but in CI)."""
    with redis_server(require_redis()) as url:
        yield url


def flush_redis(url: str) -> None:
    """Empty the server's database, so that each test starts from an empty store."""
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


@pytest.fixture(params=["sqlite", "redis"])
def backend(request, tmp_path) -> Backend:
    """Each shared test runs once per backend, each time on an empty store."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "data"))
    url = request.getfixturevalue("redis_url")
    flush_redis(url)
    return Backend("redis", url)


@pytest.fixture
def redis_backend(redis_url) -> Backend:
    """The module's Redis server, emptied, for the tests of what only Redis has."""
    flush_redis(redis_url)
    return Backend("redis", redis_url)


@pytest.fixture
def store(backend):
    opened = backend.open()
    yield opened
    opened.close()


@pytest.fixture
def sqlite_store(tmp_path):
    opened = SqliteStore(tmp_path / "data", cap_bytes=10 * KIB, session_quota=4 * KIB)
    yield opened
    opened.close()


def blob_of(n: int, size: int = KIB) -> bytes:
    """``size`` bytes, different for each ``n``."""
    return (f"{n:08d}".encode() * (size // 8 + 1))[:size]


# -- put and get --------------------------------------------------------------------------------


def test_put_then_get_gives_back_the_bytes_under_their_sha256(store):
    data = b"low lower newest widest\n"
    digest = store.put(data, kind="pasted", name="toy.txt", meta={"decoding": "utf-8"})
    assert digest == hashlib.sha256(data).hexdigest()
    assert store.get(digest) == Blob(digest, "pasted", "toy.txt", {"decoding": "utf-8"}, data, len(data))
    assert store.has(digest) and store.total_bytes() == len(data)
    assert isinstance(store, Store)


def test_the_same_bytes_twice_are_one_blob_with_the_latest_name_and_meta(store):
    data = blob_of(1)
    first = store.put(data, kind="corpus", name="a.txt", meta={"decoding": "latin-1"})
    second = store.put(data, kind="tokenizer", name="b.json", meta={"pretokenizer": "gpt2"})
    assert first == second
    assert store.total_bytes() == len(data)
    blob = store.get(first)
    assert (blob.kind, blob.name, blob.meta) == ("tokenizer", "b.json", {"pretokenizer": "gpt2"})


def test_an_unknown_or_malformed_digest_is_none_not_an_error(store):
    store.put(b"x", kind="text")
    for digest in ("0" * 64, "../store.sqlite3", "AB" * 32, "", "' OR 1=1 --"):
        assert store.get(digest) is None
        assert not store.has(digest) and not store.touch(digest)


def test_a_second_store_on_the_same_place_sees_the_blobs(store, backend):
    digest = store.put(b"shared", kind="text", name="t")
    other = backend.open()
    try:
        assert other.get(digest).data == b"shared"
    finally:
        other.close()
    store.close()  # closed, then used again: it opens the file (connects) again
    assert store.get(digest).name == "t"


def lose_the_store(backend: Backend) -> None:
    """What loses a store's data: its file deleted (SQLite), its server emptied (Redis)."""
    if backend.name == "sqlite":
        os.remove(Path(backend.place) / "store.sqlite3")
    else:
        flush_redis(backend.place)


def test_a_store_lost_and_begun_again_has_a_new_generation_that_every_process_sees(backend):
    first, other = backend.open(), backend.open()  # two app processes on the same store
    try:
        before = first.generation()
        assert not before.replaced and abs(before.created - time.time()) < 60  # a first start loses nothing
        assert other.generation() == before
        digest = first.put(b"kept before", kind="corpus")
        lose_the_store(backend)
        after = first.generation()
        assert after.stamp != before.stamp and after.replaced and after.created >= before.created
        assert first.get(digest) is None
        assert other.generation() == after  # the other process finds the same new store
        later = backend.open()  # a process started after the loss: the same generation too
        assert later.generation() == after
        later.close()
    finally:
        first.close()
        other.close()


def test_a_junk_file_at_opening_begins_a_generation_that_replaced_a_lost_store(tmp_path):
    (tmp_path / "store.sqlite3").write_bytes(b"junk " * 300)
    store = SqliteStore(tmp_path, cap_bytes=10 * KIB, session_quota=4 * KIB)
    try:
        assert store.generation().replaced
    finally:
        store.close()


def test_a_store_file_made_before_generations_keeps_its_files_and_begins_one_without_a_loss(tmp_path):
    store = SqliteStore(tmp_path, cap_bytes=10 * KIB, session_quota=4 * KIB)
    digest = store.put(b"kept from before", kind="corpus")
    store.close()
    older = sqlite3.connect(tmp_path / "store.sqlite3")  # as an earlier version of the app left it
    older.execute("DROP TABLE meta")
    older.execute("PRAGMA user_version = 1")
    older.commit()
    older.close()
    again = SqliteStore(tmp_path, cap_bytes=10 * KIB, session_quota=4 * KIB)
    try:
        assert again.get(digest).data == b"kept from before"
        assert not again.generation().replaced and again.take_notice() is None
    finally:
        again.close()


# -- size cap and eviction ----------------------------------------------------------------------


def test_over_the_cap_the_least_recently_used_blob_goes_and_a_touched_one_stays(store):
    digests = [store.put(blob_of(n), kind="corpus") for n in range(10)]  # exactly the cap
    assert store.total_bytes() == 10 * KIB
    assert store.get(digests[0]) is not None  # the oldest, used again: now the newest
    assert store.touch(digests[1])
    newest = store.put(blob_of(10), kind="corpus")
    assert store.total_bytes() == 10 * KIB
    assert not store.has(digests[2])  # the least recently used went, and only it
    assert all(store.has(d) for d in [*digests[:2], *digests[3:], newest])


def test_the_blob_just_put_is_never_evicted_even_when_it_is_all_that_fits(store):
    old = [store.put(blob_of(n), kind="corpus") for n in range(3)]
    big = store.put(blob_of(99, 10 * KIB), kind="corpus")
    assert store.has(big) and not any(store.has(d) for d in old)
    assert store.get(big).data == blob_of(99, 10 * KIB)


def test_a_blob_larger_than_the_whole_store_is_a_quota_error(store):
    with pytest.raises(QuotaError, match=r"This file is 0\.0 MiB, more than the 0\.0 MiB the app's store can hold"):
        store.put(blob_of(1, 10 * KIB + 1), kind="corpus")
    assert store.total_bytes() == 0


def test_evict_to_a_size_removes_least_recently_used_first(store):
    digests = [store.put(blob_of(n), kind="corpus") for n in range(5)]
    store.touch(digests[0])
    assert store.evict(to_bytes=2 * KIB) == 3
    assert [store.has(d) for d in digests] == [True, False, False, False, True]
    assert store.evict() == 0


# -- owners ---------------------------------------------------------------------------------------


def test_an_owner_over_its_quota_gets_a_quota_error_saying_so(store):
    for n in range(4):
        store.put(blob_of(n), kind="corpus", owner="b:alice")
    again = store.put(blob_of(0), kind="corpus", owner="b:alice")  # already hers: costs nothing
    assert store.has(again)
    with pytest.raises(QuotaError) as caught:
        store.put(blob_of(4), kind="corpus", owner="b:alice")
    assert str(caught.value) == (
        "Keeping this file (0.0 MiB) would bring your files on the server to 0.0 MiB, "
        "over the 0.0 MiB each user may keep; forget some uploads first."
    )
    assert isinstance(caught.value, StoreError) and isinstance(caught.value, ExplorerError)
    assert not store.has(hashlib.sha256(blob_of(4)).hexdigest())  # nothing kept
    assert store.put(blob_of(4), kind="corpus", owner="b:bob")  # another owner has room
    assert store.put(blob_of(5), kind="corpus")  # so has nobody in particular (the CLI)


def test_the_quota_error_counts_what_the_owner_already_keeps(backend):
    store = backend.open(cap_bytes=8 * 2**20, session_quota=2 * 2**20)
    try:
        store.put(blob_of(1, 3 * 2**19), kind="corpus", owner="b:alice")  # 1.5 MiB of her 2
        store.put(blob_of(2, 2**19), kind="corpus", owner="b:bob")  # someone else's: not counted
        with pytest.raises(
            QuotaError,
            match=r"^Keeping this file \(1\.0 MiB\) would bring your files on the "
            r"server to 2\.5 MiB, over the 2\.0 MiB each user may keep",
        ):
            store.put(blob_of(3, 2**20), kind="corpus", owner="b:alice")
        store.put(blob_of(2, 2**19), kind="corpus", owner="b:alice")  # exactly her 2 MiB: allowed
        assert sum(entry.size for entry in store.owned("b:alice")) == 2 * 2**20
    finally:
        store.close()


def test_forget_removes_only_what_no_other_owner_claims(store):
    mine = store.put(b"mine", kind="corpus", name="mine.txt", owner="b:alice")
    shared = store.put(b"shared", kind="corpus", owner="b:alice")
    store.put(b"shared", kind="corpus", owner="b:bob")
    theirs = store.put(b"theirs", kind="corpus", owner="b:bob")
    assert [(e.digest, e.name, e.size) for e in store.owned("b:alice")] == [(shared, "", 6), (mine, "mine.txt", 4)]
    assert store.forget("b:alice") == 1
    assert not store.has(mine) and store.has(shared) and store.has(theirs)
    assert store.owned("b:alice") == []
    assert store.forget("b:bob") == 2
    assert store.total_bytes() == 0


def test_an_evicted_blob_is_no_longer_anyones(store):
    first = store.put(blob_of(0, 3 * KIB), kind="corpus", owner="b:alice")
    store.put(blob_of(1, 10 * KIB), kind="corpus")  # pushes hers out
    assert not store.has(first) and store.owned("b:alice") == []
    store.put(blob_of(2, 3 * KIB), kind="corpus", owner="b:alice")  # her quota is free again
    assert store.put(blob_of(0, 3 * KIB), kind="corpus", owner="b:bob") == first  # the same bytes, put anew
    assert [entry.digest for entry in store.owned("b:alice")] == [hashlib.sha256(blob_of(2, 3 * KIB)).hexdigest()]
    assert store.forget("b:bob") == 1 and not store.has(first)


# -- addresses and holds ----------------------------------------------------------------------------


class Clock:
    """A clock the test moves by hand (a holder's deadline passing without waiting)."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_fresh_cookie_does_not_bring_a_fresh_address_quota(backend):
    store = backend.open(session_quota=4 * KIB, address_quota=6 * KIB)
    try:
        for n in range(4):  # one browser's whole quota, from one address
            store.put(blob_of(n), kind="corpus", owner="b:first", address="203.0.113.7")
        for n in range(4, 6):  # a new cookie, the same address: two more, up to the address's 6 KiB
            store.put(blob_of(n), kind="corpus", owner="b:second", address="203.0.113.7")
        with pytest.raises(QuotaError) as caught:
            store.put(blob_of(6), kind="corpus", owner="b:third", address="203.0.113.7")
        assert str(caught.value) == (
            "Keeping this file (0.0 MiB) would bring the files uploaded from your network address to 0.0 MiB, "
            "over the 0.0 MiB each address may keep; forget some uploads first."
        )
        assert not store.has(hashlib.sha256(blob_of(6)).hexdigest())
        store.put(blob_of(6), kind="corpus", owner="b:third", address="198.51.100.2")  # another address has room
        # the address's claim only counts: forgetting the browser's uploads deletes them
        assert store.forget("b:first") == 4 and not store.has(hashlib.sha256(blob_of(0)).hexdigest())
        store.put(blob_of(7), kind="corpus", owner="b:third", address="203.0.113.7")  # the address has room again
    finally:
        store.close()


def test_eviction_drops_unheld_files_first_and_held_ones_only_when_nothing_else_is_left(backend):
    clock = Clock()
    store = backend.open(cap_bytes=4 * KIB, session_quota=4 * KIB, clock=clock)
    try:
        lesson = store.put(blob_of(0), kind="corpus", owner="b:teacher")  # the least recently used
        assert store.hold("room:K7QX2M", [lesson, "0" * 64, "junk"], until=clock.now + 3600) == 1
        others = [store.put(blob_of(n), kind="corpus", owner=f"b:{n}") for n in range(1, 4)]
        store.touch(lesson)  # not what spares it: put the others after it again
        for digest in others:
            store.touch(digest)
        newcomers = [store.put(blob_of(n), kind="corpus", owner="b:fresh") for n in range(4, 7)]
        assert store.has(lesson) and all(store.has(d) for d in newcomers)
        assert sum(store.has(d) for d in others) == 0  # three unheld files went, the held one stayed
        store.put(blob_of(9, 4 * KIB), kind="corpus")  # nothing unheld left to drop: the cap still holds
        assert not store.has(lesson) and store.total_bytes() == 4 * KIB
    finally:
        store.close()


def test_a_held_file_outlives_its_uploaders_forget_until_the_hold_is_released(backend):
    clock = Clock()
    store = backend.open(clock=clock)
    try:
        corpus = store.put(b"the lesson's corpus", kind="corpus", name="lesson.txt", owner="b:teacher")
        mine = store.put(b"not in any room", kind="corpus", owner="b:teacher")
        store.hold("room:K7QX2M", [corpus], until=clock.now + 60)
        store.hold("room:ZZZZZZ", [corpus], until=clock.now - 1)  # a room already expired: no hold
        assert store.holders("b:teacher") == {corpus: ["room:K7QX2M"]}
        assert store.forget("b:teacher") == 1 and store.has(corpus) and not store.has(mine)
        reopened = backend.open(clock=clock)  # another process, or the server restarted
        try:
            assert reopened.get(corpus).data == b"the lesson's corpus"
        finally:
            reopened.close()
        assert store.release("room:K7QX2M") == 1 and not store.has(corpus)  # nobody else keeps it
    finally:
        store.close()


def test_a_hold_whose_deadline_passed_lets_its_files_go_on_the_next_write(backend):
    clock = Clock()
    store = backend.open(clock=clock)
    try:
        corpus = store.put(b"held, then forgotten", kind="corpus", owner="b:teacher")
        kept = store.put(b"held, still claimed", kind="corpus", owner="b:other")
        store.hold("room:K7QX2M", [corpus, kept], until=clock.now + 60)
        store.forget("b:teacher")
        clock.now += 30
        store.put(b"x", kind="pasted")
        assert store.has(corpus)  # the deadline is not past yet
        clock.now += 31
        store.put(b"y", kind="pasted")  # a write sweeps the holds whose deadline passed
        assert not store.has(corpus) and store.has(kept) and store.holders("b:other") == {}
    finally:
        store.close()


def test_threads_sharing_one_store_object(backend):
    """Streamlit runs each session in its own thread, all on the process's one store."""
    store = backend.open(cap_bytes=2**30, session_quota=2**30)
    errors: list[BaseException] = []

    def session(worker: int) -> None:
        try:
            for i in range(60):
                data = blob_of(i % 12, 500 + i % 12)
                digest = store.put(data, kind="text", owner=f"s:{worker}")
                assert store.get(digest).data == data
                if i % 20 == 19:
                    store.forget(f"s:{worker}")
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=session, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    store.close()
    assert errors == []


# -- several processes ------------------------------------------------------------------------------


def _hammer(backend: str, place: str, worker: int, rounds: int, start, results) -> None:
    """One process's share of the concurrent test: put and read the same blobs as the others."""
    try:
        store = open_store(backend, place, cap_bytes=2**30, session_quota=2**30)
        start.wait(timeout=60)
        for i in range(rounds):
            n = (i * 7 + worker) % 25
            data = blob_of(n, 3000 + n)
            digest = store.put(data, kind="corpus", name=f"{worker}-{i}", owner=f"p{worker}")
            blob = store.get(digest)
            assert blob is not None and blob.data == data, (i, n)
            other = store.get(hashlib.sha256(blob_of((n + 1) % 25, 3000 + (n + 1) % 25)).hexdigest())
            assert other is None or other.data == blob_of((n + 1) % 25, 3000 + (n + 1) % 25)
        store.close()
        results.put((worker, None))
    except BaseException:  # noqa: BLE001 - reported to the parent
        results.put((worker, traceback.format_exc()))


def run_processes(target, backend: Backend, *args) -> None:
    """``target(backend, place, worker, *args, start, results)`` in two spawned processes that
    start together; fails with a worker's traceback if one failed."""
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(2), context.Queue()
    workers = [
        context.Process(target=target, args=(backend.name, backend.place, w, *args, start, results)) for w in range(2)
    ]
    for process in workers:
        process.start()
    reports = dict(results.get(timeout=240) for _ in workers)
    for process in workers:
        process.join(timeout=60)
    assert reports == {0: None, 1: None}


def test_two_processes_writing_and_reading_the_same_blobs_at_once(backend):
    run_processes(_hammer, backend, 300)
    store = backend.open(cap_bytes=2**30, session_quota=2**30)
    try:
        for n in range(25):
            blob = store.get(hashlib.sha256(blob_of(n, 3000 + n)).hexdigest())
            assert blob is not None and blob.data == blob_of(n, 3000 + n)
        assert store.total_bytes() == sum(3000 + n for n in range(25))
        assert store.take_notice() is None
    finally:
        store.close()


CROWD_CAP = 40 * KIB
CROWD_BLOBS = 60


def crowd_blob(n: int) -> bytes:
    return blob_of(n, KIB + 37 * n)


def _crowd(backend: str, place: str, worker: int, rounds: int, start, results) -> None:
    """One process putting, evicting and forgetting in a store far too small for all it puts."""
    try:
        store = open_store(backend, place, cap_bytes=CROWD_CAP, session_quota=2**30)
        start.wait(timeout=60)
        for i in range(rounds):
            store.put(crowd_blob((i * 7 + worker * 13) % CROWD_BLOBS), kind="corpus", owner=f"p{worker}")
            if i % 17 == 16:
                store.evict(to_bytes=CROWD_CAP // 2)
            if i % 41 == 40:
                store.forget(f"p{worker}")
        store.close()
        results.put((worker, None))
    except BaseException:  # noqa: BLE001 - reported to the parent
        results.put((worker, traceback.format_exc()))


def test_two_processes_evicting_at_once_keep_the_total_exact(backend):
    run_processes(_crowd, backend, 400)
    store = backend.open(cap_bytes=CROWD_CAP, session_quota=2**30)
    try:
        digests = {hashlib.sha256(crowd_blob(n)).hexdigest(): len(crowd_blob(n)) for n in range(CROWD_BLOBS)}
        kept = {digest for digest in digests if store.has(digest)}
        assert kept, "the workers left nothing: the test proves nothing"
        assert store.total_bytes() == sum(digests[d] for d in kept) <= CROWD_CAP
        for owner in ("p0", "p1"):  # no claim outlives its blob
            assert {entry.digest for entry in store.owned(owner)} <= kept
        assert store.evict(to_bytes=0) == len(kept) and store.total_bytes() == 0
    finally:
        store.close()


def _in_a_forked_child(store: Store, digest: str, results) -> None:
    try:
        results.put((store.get(digest).data, store.put(b"from the child", kind="text"), None))
    except BaseException:  # noqa: BLE001 - reported to the parent
        results.put((None, None, traceback.format_exc()))


@pytest.mark.skipif(sys.platform == "win32", reason="no fork on Windows")
def test_a_forked_child_uses_the_store_it_inherited_and_so_does_the_parent(store):
    digest = store.put(b"from the parent", kind="text")  # the parent has connected
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_in_a_forked_child, args=(store, digest, results))
    child.start()
    data, from_child, failure = results.get(timeout=60)
    child.join(timeout=60)
    assert failure is None and data == b"from the parent"
    assert store.get(from_child).data == b"from the child"
    assert store.total_bytes() == len(b"from the parent") + len(b"from the child")


# -- a damaged or deleted file ------------------------------------------------------------------------


def assert_recreated_and_working(store: SqliteStore, lost: str) -> None:
    """The store says once that it was recreated, has lost ``lost``, and works again."""
    assert store.get(lost) is None
    assert store.take_notice() == RECREATED_NOTICE
    assert store.take_notice() is None
    digest = store.put(b"again", kind="corpus", owner="b:alice")
    assert store.get(digest).data == b"again" and store.total_bytes() == 5
    # a sound database holds it (read by SQLite: a descriptor of our own would drop the store's locks)
    other = sqlite3.connect(f"{store.path.as_uri()}?mode=ro", uri=True)
    try:
        assert other.execute("SELECT digest FROM blobs").fetchall() == [(digest,)]
    finally:
        other.close()


def test_a_file_overwritten_with_junk_while_open_is_recreated_with_a_notice(sqlite_store):
    lost = sqlite_store.put(b"kept before", kind="corpus")
    sqlite_store.path.write_bytes(b"junk " * 2000)
    assert_recreated_and_working(sqlite_store, lost)
    assert (sqlite_store.folder / "store.sqlite3.corrupt-1").read_bytes() == b"junk " * 2000


def test_a_junk_file_found_at_opening_is_moved_aside_and_recreated(tmp_path):
    (tmp_path / "store.sqlite3").write_bytes(b"\x00\xff not a database" * 300)
    (tmp_path / "store.sqlite3.corrupt-1").write_bytes(b"an earlier one")
    store = SqliteStore(tmp_path, cap_bytes=10 * KIB, session_quota=4 * KIB)
    try:
        assert_recreated_and_working(store, "0" * 64)
        assert (tmp_path / "store.sqlite3.corrupt-1").read_bytes() == b"an earlier one"
        assert (tmp_path / "store.sqlite3.corrupt-2").read_bytes() == b"\x00\xff not a database" * 300
    finally:
        store.close()


def test_a_file_damaged_inside_with_a_sound_header_is_recreated_too(tmp_path):
    store = SqliteStore(tmp_path, cap_bytes=10 * KIB, session_quota=4 * KIB)
    lost = store.put(blob_of(1), kind="corpus")
    store.close()  # checkpoints the WAL into the file
    raw = bytearray((tmp_path / "store.sqlite3").read_bytes())
    raw[100:] = b"\xa5" * (len(raw) - 100)  # the header stays, every page after it is junk
    (tmp_path / "store.sqlite3").write_bytes(bytes(raw))
    try:
        assert_recreated_and_working(store, lost)
    finally:
        store.close()


def test_a_file_deleted_while_open_is_recreated_with_a_notice(sqlite_store):
    lost = sqlite_store.put(b"kept before", kind="corpus")
    os.remove(sqlite_store.path)
    assert_recreated_and_working(sqlite_store, lost)


def test_take_notice_notices_a_deleted_file_by_itself(sqlite_store):
    sqlite_store.put(b"kept before", kind="corpus")
    assert sqlite_store.take_notice() is None
    os.remove(sqlite_store.path)
    assert sqlite_store.take_notice() == RECREATED_NOTICE
    assert sqlite_store.total_bytes() == 0


def test_a_file_replaced_by_another_database_is_noticed(sqlite_store):
    lost = sqlite_store.put(b"kept before", kind="corpus")
    replacement = sqlite_store.folder / "other.sqlite3"
    sqlite3.connect(replacement).close()
    os.replace(replacement, sqlite_store.path)
    assert_recreated_and_working(sqlite_store, lost)


def test_sqlite_errors_reach_callers_as_one_sentence_store_errors(sqlite_store, monkeypatch):
    sqlite_store.put(b"x", kind="text")

    def busy(conn, digest):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store_module, "_touch", busy)
    with pytest.raises(StoreError, match=r"^The app's store (is busy|failed)"):
        sqlite_store.touch("0" * 64)


def test_a_data_folder_gone_for_a_while_is_a_sentence_without_its_path_then_works_again(tmp_path, caplog):
    """The folder moved away and a file in its place (a mount gone, an operator's mistake): each
    call is a sentence without the folder's path (that goes to the log); once the folder is back,
    the store goes on with what it kept, and nothing was recreated."""
    folder = tmp_path / "class-data"
    store = SqliteStore(folder, cap_bytes=10 * KIB, session_quota=4 * KIB)
    try:
        kept = store.put(b"kept", kind="corpus")
        folder.rename(tmp_path / "away")
        folder.write_bytes(b"not a folder")
        for call in STORE_CALLS.values():
            with caplog.at_level(logging.WARNING, logger="explorer.serving.store"):
                with pytest.raises(StoreError) as caught:
                    call(store)
            message = str(caught.value)
            assert message.startswith("The app's store cannot be used in its data folder (") and message.endswith(").")
            assert str(tmp_path) not in message and str(folder) in caplog.text
        folder.unlink()
        (tmp_path / "away").rename(folder)
        assert store.get(kept).data == b"kept" and store.take_notice() is None
    finally:
        store.close()


# -- Redis: its keys, its errors --------------------------------------------------------------------


def redis_url_with(url: str, *, credentials: str = "", port: int | None = None) -> str:
    """``url`` (``redis://127.0.0.1:PORT/0``) with ``credentials`` (``user:password``) or another port."""
    host_port, _, db = url.removeprefix("redis://").partition("/")
    host, _, old_port = host_port.partition(":")
    userinfo = f"{credentials}@" if credentials else ""
    return f"redis://{userinfo}{host}:{port or old_port}/{db}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STORE_CALLS = {
    "put": lambda store: store.put(b"x", kind="text", owner="b:alice"),
    "get": lambda store: store.get("0" * 64),
    "has": lambda store: store.has("0" * 64),
    "touch": lambda store: store.touch("0" * 64),
    "evict": lambda store: store.evict(),
    "forget": lambda store: store.forget("b:alice"),
    "owned": lambda store: store.owned("b:alice"),
    "total_bytes": lambda store: store.total_bytes(),
}


def assert_one_sentence_store_error(
    caught: pytest.ExceptionInfo, *, starts: str, hidden: tuple[str, ...] = ("127.0.0.1",)
) -> None:
    """A StoreError (not a redis exception) of one line starting ``starts``, without any of
    ``hidden`` (passwords, and where the server is: its host and port)."""
    import redis

    err = caught.value
    assert type(err) is StoreError and not isinstance(err, redis.RedisError)
    message = str(err)
    assert message.startswith(starts) and message.endswith(".") and "\n" not in message, message
    assert "script:" not in message and "Traceback" not in message
    for secret in hidden:
        assert secret not in message, message


def test_an_unreachable_redis_is_a_store_error_without_its_place_or_password(redis_url, caplog):
    port = free_port()  # nobody listens there
    store = RedisStore(
        redis_url_with(redis_url, credentials="alice:s3cret-pw", port=port), cap_bytes=10 * KIB, session_quota=4 * KIB
    )  # connects to nothing yet
    assert "s3cret" not in repr(store)
    for name, call in STORE_CALLS.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="explorer.serving.store"):
            with pytest.raises(StoreError) as caught:
                call(store)
        assert_one_sentence_store_error(
            caught,
            starts="The app's store (its Redis server) cannot be reached",
            hidden=("s3cret", "127.0.0.1", str(port)),
        )
        assert str(caught.value).endswith("; try again in a moment."), name
        # where it is, and what went wrong, are for whoever runs the server: in its log
        assert f"127.0.0.1:{port}" in caplog.text and "s3cret" not in caplog.text, caplog.text
    assert store.take_notice() is None
    store.close()


def test_a_redis_error_quoting_the_password_is_reported_without_it(redis_backend, monkeypatch, caplog):
    """Redis does not echo passwords, but a proxy or a later client version might: the store
    keeps them out of its sentences and its log whatever the error says."""
    import redis

    def failing(self, *keys):
        raise redis.exceptions.ConnectionError("could not use redis://teacher:pa%24%24word@127.0.0.1 (pa$$word)")

    monkeypatch.setattr(redis.Redis, "exists", failing)
    store = RedisStore(
        redis_url_with(redis_backend.place, credentials="teacher:pa%24%24word"), cap_bytes=KIB, session_quota=KIB
    )
    with caplog.at_level(logging.WARNING, logger="explorer.serving.store"):
        with pytest.raises(StoreError) as caught:
            store.has("0" * 64)
    assert_one_sentence_store_error(
        caught, starts="The app's store (its Redis server)", hidden=("pa$$word", "pa%24%24word", "teacher", "127.0.0.1")
    )
    assert "teacher:***@127.0.0.1" in caplog.text
    assert "pa$$word" not in caplog.text and "pa%24%24word" not in caplog.text
    store.close()


def test_a_wrong_password_is_a_store_error_without_the_password(redis_url):
    import redis

    admin = redis.Redis.from_url(redis_url)
    admin.acl_setuser("teacher", enabled=True, passwords=["+right-pw"], keys=["*"], commands=["+@all"])
    admin.close()
    store = RedisStore(redis_url_with(redis_url, credentials="teacher:wrong-pw"), cap_bytes=KIB, session_quota=KIB)
    with pytest.raises(StoreError) as caught:
        store.put(b"x", kind="text")
    assert_one_sentence_store_error(
        caught, starts="The app's store (its Redis server)", hidden=("wrong-pw", "127.0.0.1", redis_url)
    )
    assert "refused the app's user or password" in str(caught.value)
    store.close()
    allowed = RedisStore(redis_url_with(redis_url, credentials="teacher:right-pw"), cap_bytes=KIB, session_quota=KIB)
    assert allowed.get(allowed.put(b"x", kind="text")).data == b"x"
    allowed.close()


def test_an_error_reply_from_redis_is_a_store_error(redis_backend):
    import redis

    store = redis_backend.open()
    client = redis.Redis.from_url(redis_backend.place)
    client.hset(f"{REDIS_PREFIX}lru", "not", "a sorted set")  # a key of the wrong type
    client.close()
    with pytest.raises(StoreError) as caught:
        store.put(b"x", kind="text")
    assert_one_sentence_store_error(caught, starts="The app's store (its Redis server) failed (WRONGTYPE")
    store.close()


def test_redis_keys_stay_under_the_prefix_and_prefixes_do_not_meet(redis_backend):
    import redis

    store = redis_backend.open()
    digest = store.put(b"mine", kind="text", owner="b:alice")
    client = redis.Redis.from_url(redis_backend.place)
    keys = sorted(key.decode() for key in client.keys("*"))
    client.close()
    assert keys and all(key.startswith(REDIS_PREFIX) for key in keys), keys
    other = RedisStore(redis_backend.place, cap_bytes=10 * KIB, session_quota=4 * KIB, prefix="another-class:")
    try:
        assert not other.has(digest) and other.total_bytes() == 0 and other.owned("b:alice") == []
        assert other.forget("b:alice") == 0 and store.has(digest)
    finally:
        other.close()
        store.close()


@pytest.mark.parametrize("url", ["redis://127.0.0.1:port/0", "redis://127.0.0.1:99999/0"])
def test_a_malformed_redis_url_is_a_store_error(url):
    with pytest.raises(StoreError, match=r"^The Redis URL of the app's store has a bad port"):
        RedisStore(url, cap_bytes=KIB, session_quota=KIB)


def test_the_engine_imports_and_keeps_its_sqlite_store_without_redis(tmp_path):
    code = (
        "import sys; sys.modules['redis'] = None\n"  # as if redis were not installed
        "import explorer, explorer.serving.store as s\n"
        "store = s.default_store(); print(type(store).__name__, store.get(store.put(b'x', kind='t')).data)\n"
        "try:\n    s.RedisStore('redis://127.0.0.1:6379/0', cap_bytes=1, session_quota=1)\n"
        "except s.StoreError as err:\n    print(err)\n"
    )
    env = {**os.environ, "BPE_EXPLORER_DATA": str(tmp_path), "PYTHONPATH": str(Path(store_module.__file__).parents[1])}
    env.pop("BPE_EXPLORER_STORE", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "SqliteStore b'x'",
        "The Redis store needs the redis library (pip install -r requirements.txt).",
    ]


# -- where, and how big ---------------------------------------------------------------------------------


def test_data_dir_honours_bpe_explorer_data(monkeypatch, tmp_path):
    monkeypatch.setenv("BPE_EXPLORER_DATA", str(tmp_path / "class"))
    assert data_dir() == tmp_path / "class"


def test_data_dir_defaults_to_the_users_data_directory(monkeypatch, tmp_path):
    monkeypatch.delenv("BPE_EXPLORER_DATA")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "bpe-explorer"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert data_dir() == tmp_path / ".local" / "share" / "bpe-explorer"
    monkeypatch.setattr("sys.platform", "darwin")
    assert data_dir() == tmp_path / "Library" / "Application Support" / "bpe-explorer"
    monkeypatch.setattr("sys.platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert data_dir() == tmp_path / "Local" / "bpe-explorer"


def test_the_test_session_has_a_data_folder_of_its_own(private_data_dir):
    assert data_dir() == private_data_dir
    assert Path(os.environ["BPE_EXPLORER_DATA"]) == private_data_dir


@pytest.fixture
def fresh_default(monkeypatch, tmp_path):
    """default_store() made anew (and closed after), in a temporary data folder."""
    monkeypatch.setattr(store_module, "_default", None)
    monkeypatch.setenv("BPE_EXPLORER_DATA", str(tmp_path))
    monkeypatch.delenv("BPE_EXPLORER_STORE", raising=False)
    yield
    if store_module._default is not None:
        store_module._default.close()


def test_default_store_is_one_per_process_sized_by_the_environment(fresh_default, monkeypatch, tmp_path):
    monkeypatch.setenv("BPE_EXPLORER_STORE_MIB", "2.5")
    monkeypatch.setenv("BPE_EXPLORER_SESSION_MIB", "1")
    monkeypatch.setenv("BPE_EXPLORER_ADDRESS_MIB", "1.5")
    made = default_store()
    assert made is default_store()
    assert (made.folder, made.cap_bytes, made.session_quota) == (tmp_path, int(2.5 * 2**20), 2**20)
    assert made.address_quota == int(1.5 * 2**20)
    digest = made.put(b"text", kind="text")
    assert (tmp_path / "store.sqlite3").exists() and default_store().has(digest)


@pytest.mark.parametrize("bad", ["lots", "-1", "0", "nan", "inf", "1e-9"])
def test_default_store_falls_back_on_bad_sizes_with_a_warning(fresh_default, monkeypatch, caplog, bad):
    monkeypatch.setenv("BPE_EXPLORER_STORE_MIB", bad)
    monkeypatch.setenv("BPE_EXPLORER_SESSION_MIB", bad)
    with caplog.at_level(logging.WARNING, logger="explorer.serving.store"):
        made = default_store()
    assert (made.cap_bytes, made.session_quota) == (DEFAULT_STORE_MIB * 2**20, DEFAULT_SESSION_MIB * 2**20)
    assert "BPE_EXPLORER_STORE_MIB" in caplog.text and "BPE_EXPLORER_SESSION_MIB" in caplog.text


def test_the_engine_module_imports_no_ui_library():
    source = Path(store_module.__file__).read_text(encoding="utf-8")
    for library in ("streamlit", "pandas", "altair"):
        assert f"import {library}" not in source and f"from {library}" not in source


@pytest.mark.parametrize("choice", [None, "", "  ", "sqlite", "SQLite"])
def test_default_store_is_sqlite_in_the_data_folder_unless_told_otherwise(fresh_default, monkeypatch, tmp_path, choice):
    if choice is not None:
        monkeypatch.setenv("BPE_EXPLORER_STORE", choice)
    made = default_store()
    assert type(made) is SqliteStore and made.folder == tmp_path


def test_default_store_is_redis_for_a_redis_url(fresh_default, monkeypatch, redis_url):
    flush_redis(redis_url)
    monkeypatch.setenv("BPE_EXPLORER_STORE", redis_url)
    monkeypatch.setenv("BPE_EXPLORER_STORE_MIB", "2")
    made = default_store()
    assert type(made) is RedisStore and made is default_store() and isinstance(made, Store)
    assert (made.cap_bytes, made.session_quota, made.prefix) == (
        2 * 2**20,
        DEFAULT_SESSION_MIB * 2**20,
        "bpe-explorer:",
    )
    digest = made.put(b"for the class", kind="text", owner="b:alice")
    elsewhere = RedisStore(redis_url, cap_bytes=KIB, session_quota=KIB)  # another machine, the same server
    try:
        assert elsewhere.get(digest).data == b"for the class"
    finally:
        elsewhere.close()


@pytest.mark.parametrize(
    "bad",
    [
        "redis",
        "mysql://root:hunter2@127.0.0.1/store",
        "http://127.0.0.1:6379",
        "./class-data",
        "REDIS://127.0.0.1:6379/0",
    ],
)
def test_default_store_refuses_any_other_choice_saying_what_it_accepts(fresh_default, monkeypatch, bad):
    monkeypatch.setenv("BPE_EXPLORER_STORE", bad)
    with pytest.raises(StoreError) as caught:
        default_store()
    assert str(caught.value) == (
        "BPE_EXPLORER_STORE must be unset, empty or 'sqlite' (the SQLite store in the data folder), or a Redis "
        "server's URL: redis://host:port/db, rediss://host:port/db or unix:///path/to/redis.sock."
    )
    assert store_module._default is None
