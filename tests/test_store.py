"""The store (explorer.store): files kept by content hash across sessions, processes and
restarts, bounded in size, per owner, and recreated when its file is damaged or deleted."""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import sqlite3
import threading
import traceback
from pathlib import Path

import pytest

from explorer import store as store_module
from explorer.errors import ExplorerError
from explorer.store import (
    DEFAULT_SESSION_MIB,
    DEFAULT_STORE_MIB,
    RECREATED_NOTICE,
    Blob,
    QuotaError,
    SqliteStore,
    Store,
    StoreError,
    data_dir,
    default_store,
)

KIB = 1024


@pytest.fixture
def store(tmp_path):
    opened = SqliteStore(tmp_path / "data", cap_bytes=10 * KIB, session_quota=4 * KIB)
    yield opened
    opened.close()


def blob_of(n: int, size: int = KIB) -> bytes:
    """``size`` bytes, different for each ``n``."""
    return (f"{n:08d}".encode() * (size // 8 + 1))[:size]


# -- put and get --------------------------------------------------------------------------------


def test_put_then_get_gives_back_the_bytes_under_their_sha256(store):
    data = "low lower newest widest\n".encode()
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


def test_a_second_store_on_the_same_folder_sees_the_blobs(store, tmp_path):
    digest = store.put(b"shared", kind="text", name="t")
    other = SqliteStore(tmp_path / "data", cap_bytes=10 * KIB, session_quota=4 * KIB)
    try:
        assert other.get(digest).data == b"shared"
    finally:
        other.close()
    store.close()  # closed, then used again: it opens the file again
    assert store.get(digest).name == "t"


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
    assert str(caught.value).startswith("Keeping this file (0.0 MiB) would bring your files on the server to 0.0 MiB")
    assert isinstance(caught.value, StoreError) and isinstance(caught.value, ExplorerError)
    assert not store.has(hashlib.sha256(blob_of(4)).hexdigest())  # nothing kept
    assert store.put(blob_of(4), kind="corpus", owner="b:bob")  # another owner has room
    assert store.put(blob_of(5), kind="corpus")  # so has nobody in particular (the CLI)


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


def test_threads_sharing_one_store_object(tmp_path):
    """Streamlit runs each session in its own thread, all on the process's one store."""
    store = SqliteStore(tmp_path, cap_bytes=2**30, session_quota=2**30)
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


def _hammer(folder: str, worker: int, rounds: int, start, results) -> None:
    """One process's share of the concurrent test: put and read the same blobs as the others."""
    try:
        store = SqliteStore(folder, cap_bytes=2**30, session_quota=2**30)
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


def test_two_processes_writing_and_reading_the_same_blobs_at_once(tmp_path):
    context = multiprocessing.get_context("spawn")
    start, results = context.Barrier(2), context.Queue()
    workers = [context.Process(target=_hammer, args=(str(tmp_path), w, 300, start, results)) for w in range(2)]
    for process in workers:
        process.start()
    reports = dict(results.get(timeout=240) for _ in workers)
    for process in workers:
        process.join(timeout=60)
    assert reports == {0: None, 1: None}
    store = SqliteStore(tmp_path, cap_bytes=2**30, session_quota=2**30)
    try:
        for n in range(25):
            blob = store.get(hashlib.sha256(blob_of(n, 3000 + n)).hexdigest())
            assert blob is not None and blob.data == blob_of(n, 3000 + n)
        assert store.total_bytes() == sum(3000 + n for n in range(25))
        assert store.take_notice() is None
    finally:
        store.close()


# -- a damaged or deleted file ------------------------------------------------------------------------


def assert_recreated_and_working(store: SqliteStore, lost: str) -> None:
    """The store says once that it was recreated, has lost ``lost``, and works again."""
    assert store.get(lost) is None
    assert store.take_notice() == RECREATED_NOTICE
    assert store.take_notice() is None
    digest = store.put(b"again", kind="corpus", owner="b:alice")
    assert store.get(digest).data == b"again" and store.total_bytes() == 5
    assert store.path.read_bytes()[:16] == b"SQLite format 3\x00"


def test_a_file_overwritten_with_junk_while_open_is_recreated_with_a_notice(store):
    lost = store.put(b"kept before", kind="corpus")
    store.path.write_bytes(b"junk " * 2000)
    assert_recreated_and_working(store, lost)
    assert (store.folder / "store.sqlite3.corrupt-1").read_bytes() == b"junk " * 2000


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


def test_a_file_deleted_while_open_is_recreated_with_a_notice(store):
    lost = store.put(b"kept before", kind="corpus")
    os.remove(store.path)
    assert_recreated_and_working(store, lost)


def test_take_notice_notices_a_deleted_file_by_itself(store):
    store.put(b"kept before", kind="corpus")
    assert store.take_notice() is None
    os.remove(store.path)
    assert store.take_notice() == RECREATED_NOTICE
    assert store.total_bytes() == 0


def test_a_file_replaced_by_another_database_is_noticed(store):
    lost = store.put(b"kept before", kind="corpus")
    replacement = store.folder / "other.sqlite3"
    sqlite3.connect(replacement).close()
    os.replace(replacement, store.path)
    assert_recreated_and_working(store, lost)


def test_sqlite_errors_reach_callers_as_one_sentence_store_errors(store, monkeypatch):
    store.put(b"x", kind="text")

    def busy(conn, digest):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store_module, "_touch", busy)
    with pytest.raises(StoreError, match=r"^The app's store (is busy|failed)"):
        store.touch("0" * 64)


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
    yield
    if store_module._default is not None:
        store_module._default.close()


def test_default_store_is_one_per_process_sized_by_the_environment(fresh_default, monkeypatch, tmp_path):
    monkeypatch.setenv("BPE_EXPLORER_STORE_MIB", "2.5")
    monkeypatch.setenv("BPE_EXPLORER_SESSION_MIB", "1")
    made = default_store()
    assert made is default_store()
    assert (made.folder, made.cap_bytes, made.session_quota) == (tmp_path, int(2.5 * 2**20), 2**20)
    digest = made.put(b"text", kind="text")
    assert (tmp_path / "store.sqlite3").exists() and default_store().has(digest)


@pytest.mark.parametrize("bad", ["lots", "-1", "0", "nan", "inf", "1e-9"])
def test_default_store_falls_back_on_bad_sizes_with_a_warning(fresh_default, monkeypatch, caplog, bad):
    monkeypatch.setenv("BPE_EXPLORER_STORE_MIB", bad)
    monkeypatch.setenv("BPE_EXPLORER_SESSION_MIB", bad)
    with caplog.at_level(logging.WARNING, logger="explorer.store"):
        made = default_store()
    assert (made.cap_bytes, made.session_quota) == (DEFAULT_STORE_MIB * 2**20, DEFAULT_SESSION_MIB * 2**20)
    assert "BPE_EXPLORER_STORE_MIB" in caplog.text and "BPE_EXPLORER_SESSION_MIB" in caplog.text


def test_the_engine_module_imports_no_ui_library():
    source = Path(store_module.__file__).read_text(encoding="utf-8")
    for library in ("streamlit", "pandas", "altair"):
        assert f"import {library}" not in source and f"from {library}" not in source
