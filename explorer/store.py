"""The store: files the app keeps on disk so that links can name them, and the only module that
writes to disk.

A link holds a page's whole view, except what does not fit in an address: an uploaded corpus, a
pasted text, a long Playground text, an imported tokenizer's files. Those are kept here, once
each, by the SHA-256 of their bytes (``upload:<hash>`` in a link), so that a refresh, another
session, another app process on the machine or a restarted server finds them again.

The embedded backend is one SQLite file, ``store.sqlite3`` in the data folder (:func:`data_dir`),
in WAL mode with a busy timeout, so any number of app processes on one machine read and write it
at once. Two tables::

    blobs   digest TEXT PRIMARY KEY    sha256 hex of data
            kind TEXT                  "corpus", "pasted", "text", "tokenizer", ...
            name TEXT                  display name (a file name), "" if none
            meta TEXT                  a small JSON object (a decoding, a pre-tokenizer, ...)
            size INTEGER               len(data)
            last_used INTEGER          nanoseconds, strictly increasing over the file's writes
            data BLOB
    claims  owner TEXT, digest TEXT    who put what (a browser); PRIMARY KEY (owner, digest)

The store is bounded: at most ``cap_bytes`` in all, the least recently used blobs going first,
and at most ``session_quota`` bytes claimed by one owner. *Forget my uploads* drops an owner's
claims and deletes what nobody else claims. A damaged or deleted database file is recreated
empty (a damaged one is kept aside as ``store.sqlite3.corrupt-<n>``), and :meth:`take_notice`
then says so once, for the page to show. Callers only ever see :class:`StoreError` (and its
:class:`QuotaError`), never an sqlite3 error.

A later backend (Redis, for several machines) implements the same :class:`Store` protocol.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     store = SqliteStore(folder, cap_bytes=2**20, session_quota=2**20)
...     digest = store.put(b"low lower newest widest", kind="pasted", owner="s:1")
...     blob = store.get(digest)
...     owned = [entry.size for entry in store.owned("s:1")]
...     gone = store.forget("s:1"), store.get(digest)
...     store.close()
>>> blob.kind, blob.size, blob.data, owned, gone
('pasted', 23, b'low lower newest widest', [23], (1, None))
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple, Protocol, TypeVar, runtime_checkable

from .corpora import mib
from .errors import ExplorerError

try:  # a lock on the folder while a damaged file is moved aside (POSIX; Windows below)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:
    msvcrt = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_STORE_MIB",
    "DEFAULT_SESSION_MIB",
    "FILE_NAME",
    "RECREATED_NOTICE",
    "Blob",
    "Entry",
    "Store",
    "SqliteStore",
    "StoreError",
    "QuotaError",
    "data_dir",
    "default_store",
]

_log = logging.getLogger(__name__)

DEFAULT_STORE_MIB = 1024  # BPE_EXPLORER_STORE_MIB: the whole store
DEFAULT_SESSION_MIB = 100  # BPE_EXPLORER_SESSION_MIB: what one owner (a browser) may keep
FILE_NAME = "store.sqlite3"
APP_FOLDER = "bpe-explorer"
RECREATED_NOTICE = (
    "The app's store was damaged (or removed) and has been recreated empty: uploads and imported "
    "files kept in it are gone; upload them again."
)

_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    digest TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    meta TEXT NOT NULL,
    size INTEGER NOT NULL,
    last_used INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS blobs_lru ON blobs (last_used, digest, size);
CREATE TABLE IF NOT EXISTS claims (
    owner TEXT NOT NULL,
    digest TEXT NOT NULL,
    PRIMARY KEY (owner, digest)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS claims_digest ON claims (digest);
"""
# A stamp later than every other in the file, even another process's written in the same ns.
_NEXT_STAMP = "MAX(?, COALESCE((SELECT MAX(last_used) FROM blobs), 0) + 1)"
_BUSY_TIMEOUT_S = 30.0
_HEADER = b"SQLite format 3\x00"
_DIGEST = re.compile(r"[0-9a-f]{64}")
_SIDE_FILES = ("-wal", "-shm")  # SQLite's WAL and its index, named after the database file

# SQLite's primary result codes (an error's ``sqlite_errorcode & 0xFF``)
_BUSY, _LOCKED, _READONLY, _CORRUPT, _FULL, _NOTADB = 5, 6, 8, 11, 13, 26

T = TypeVar("T")


class StoreError(ExplorerError):
    """The store cannot do what was asked (busy, read-only, disk full); the message is one
    sentence fit for a page."""


class QuotaError(StoreError):
    """A put over an owner's quota, or of a file larger than the whole store."""


class Blob(NamedTuple):
    """A stored file."""

    digest: str  # sha256 hex of data
    kind: str  # "corpus", "pasted", "text", "tokenizer", ... (free)
    name: str  # display name (a file name), "" if none
    meta: dict  # small JSON-able dict, e.g. {"decoding": "latin-1"}
    data: bytes
    size: int


class Entry(NamedTuple):
    """A stored file without its bytes (what :meth:`SqliteStore.owned` lists)."""

    digest: str
    kind: str
    name: str
    meta: dict
    size: int


@runtime_checkable
class Store(Protocol):
    """What the app asks of a store, whatever keeps it (SQLite here; Redis later)."""

    def put(self, data: bytes, *, kind: str, name: str = "", meta: dict | None = None,
            owner: str | None = None) -> str: ...
    def get(self, digest: str) -> Blob | None: ...
    def has(self, digest: str) -> bool: ...
    def touch(self, digest: str) -> bool: ...
    def evict(self, *, to_bytes: int | None = None) -> int: ...
    def forget(self, owner: str) -> int: ...
    def owned(self, owner: str) -> list[Entry]: ...
    def total_bytes(self) -> int: ...
    def take_notice(self) -> str | None: ...
    def close(self) -> None: ...


class SqliteStore:
    """The store in one SQLite file, ``folder/store.sqlite3``, shared by every process that
    opens the same folder. Thread-safe: one connection per object, behind a lock. Nothing is
    opened or created before the first call that needs it; after :meth:`close` the next call
    opens the file again."""

    def __init__(self, folder: str | Path, *, cap_bytes: int, session_quota: int):
        if not cap_bytes > 0 or not session_quota > 0:
            raise ValueError("cap_bytes and session_quota must be positive")
        self.folder = Path(folder)
        self.path = self.folder / FILE_NAME
        self.cap_bytes = int(cap_bytes)
        self.session_quota = int(session_quota)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file opened
        self._pid = os.getpid()
        self._abandoned: list[sqlite3.Connection] = []  # inherited over a fork: never touched
        self._notice: str | None = None

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.folder)!r}, cap_bytes={self.cap_bytes}, session_quota={self.session_quota})"

    # -- the interface -------------------------------------------------------------------------

    def put(self, data: bytes, *, kind: str, name: str = "", meta: dict | None = None,
            owner: str | None = None) -> str:
        """Keep ``data``; its SHA-256 hex. The same bytes again store nothing new: the blob takes
        the latest kind, name and meta, becomes the most recently used, and ``owner`` claims it.
        Then least recently used blobs (never this one) go until the total fits ``cap_bytes``.

        Raises QuotaError when the blob alone is larger than ``cap_bytes``, or when it would bring
        what ``owner`` claims over ``session_quota``.
        """
        data = bytes(data)
        size = len(data)
        if size > self.cap_bytes:
            raise QuotaError(f"This file is {mib(size)}, more than the {mib(self.cap_bytes)} the app's store can hold.")
        digest = hashlib.sha256(data).hexdigest()
        meta_json = json.dumps(dict(meta or {}), sort_keys=True, ensure_ascii=False)

        def op(conn: sqlite3.Connection) -> str:
            with _write(conn):
                if owner is not None:
                    self._check_quota(conn, owner, digest, size)
                updated = conn.execute(
                    f"UPDATE blobs SET kind = ?, name = ?, meta = ?, last_used = {_NEXT_STAMP} WHERE digest = ?",
                    (kind, name, meta_json, time.time_ns(), digest),
                ).rowcount
                if not updated:
                    conn.execute(
                        f"INSERT INTO blobs (digest, kind, name, meta, size, last_used, data) "
                        f"VALUES (?, ?, ?, ?, ?, {_NEXT_STAMP}, ?)",
                        (digest, kind, name, meta_json, size, time.time_ns(), data),
                    )
                if owner is not None:
                    conn.execute("INSERT OR IGNORE INTO claims (owner, digest) VALUES (?, ?)", (owner, digest))
                _evict(conn, self.cap_bytes, keep=digest)
            return digest

        return self._run(op)

    def get(self, digest: str) -> Blob | None:
        """The blob stored under ``digest``, now the most recently used; None when it was never
        stored, has been evicted or forgotten, or ``digest`` is no SHA-256 hex."""
        if not _is_digest(digest):
            return None

        def op(conn: sqlite3.Connection) -> Blob | None:
            row = conn.execute(
                "SELECT kind, name, meta, data, size FROM blobs WHERE digest = ?", (digest,)
            ).fetchone()
            if row is None:
                return None
            _touch(conn, digest)
            kind, name, meta, data, size = row
            return Blob(digest, kind, name, _load_meta(meta), bytes(data), size)

        return self._run(op)

    def has(self, digest: str) -> bool:
        """Whether ``digest`` is stored (reads no data, touches nothing)."""
        if not _is_digest(digest):
            return False
        return self._run(lambda conn: conn.execute("SELECT 1 FROM blobs WHERE digest = ?", (digest,)).fetchone() is not None)

    def touch(self, digest: str) -> bool:
        """Make ``digest`` the most recently used; False when it is not stored."""
        if not _is_digest(digest):
            return False
        return self._run(lambda conn: _touch(conn, digest))

    def evict(self, *, to_bytes: int | None = None) -> int:
        """Remove least recently used blobs until the total is at most ``to_bytes`` (default:
        ``cap_bytes``); the number removed."""
        limit = self.cap_bytes if to_bytes is None else max(0, int(to_bytes))

        def op(conn: sqlite3.Connection) -> int:
            with _write(conn):
                return _evict(conn, limit)

        return self._run(op)

    def forget(self, owner: str) -> int:
        """Drop everything ``owner`` claims: blobs that no other owner claims are deleted, the
        others stay for them. The number of blobs deleted."""

        def op(conn: sqlite3.Connection) -> int:
            with _write(conn):
                deleted = conn.execute(
                    "DELETE FROM blobs WHERE digest IN (SELECT digest FROM claims WHERE owner = ?) "
                    "AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.digest = blobs.digest AND c.owner != ?)",
                    (owner, owner),
                ).rowcount
                conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))
                return deleted

        return self._run(op)

    def owned(self, owner: str) -> list[Entry]:
        """What ``owner`` claims (what :meth:`forget` would drop), most recently used first."""

        def op(conn: sqlite3.Connection) -> list[Entry]:
            rows = conn.execute(
                "SELECT b.digest, b.kind, b.name, b.meta, b.size FROM claims c JOIN blobs b ON b.digest = c.digest "
                "WHERE c.owner = ? ORDER BY b.last_used DESC, b.digest",
                (owner,),
            ).fetchall()
            return [Entry(digest, kind, name, _load_meta(meta), size) for digest, kind, name, meta, size in rows]

        return self._run(op)

    def total_bytes(self) -> int:
        """The bytes of all stored blobs."""
        return self._run(_total)

    def take_notice(self) -> str | None:
        """The one-line message to show when the database had to be recreated since the last
        call (a damaged or deleted file), else None; it is said once."""
        with self._lock:
            if self._conn is not None:  # a file removed or overwritten since the last call
                with contextlib.suppress(StoreError):
                    self._run(lambda conn: None)
            notice, self._notice = self._notice, None
            return notice

    def close(self) -> None:
        """Close the connection (the next call opens the file again)."""
        with self._lock:
            conn, self._conn, self._identity = self._conn, None, None
            if conn is not None and self._pid == os.getpid():
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    # -- quota ---------------------------------------------------------------------------------

    def _check_quota(self, conn: sqlite3.Connection, owner: str, digest: str, size: int) -> None:
        """Raise QuotaError if ``owner`` claiming ``digest`` (``size`` bytes) goes over its quota."""
        if conn.execute("SELECT 1 FROM claims WHERE owner = ? AND digest = ?", (owner, digest)).fetchone():
            return
        (claimed,) = conn.execute(
            "SELECT COALESCE(SUM(b.size), 0) FROM claims c JOIN blobs b ON b.digest = c.digest WHERE c.owner = ?",
            (owner,),
        ).fetchone()
        if claimed + size > self.session_quota:
            raise QuotaError(
                f"Keeping this file ({mib(size)}) would bring your files on the server to {mib(claimed + size)}, "
                f"over the {mib(self.session_quota)} each user may keep; forget some uploads first."
            )

    # -- the file: opening, checking, recreating ----------------------------------------------

    def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """``op`` on a connection to a sound file; a damaged file found on the way is recreated
        and ``op`` runs once more. sqlite3 and OS errors leave as StoreError."""
        with self._lock:
            try:
                try:
                    return op(self._connection())
                except sqlite3.DatabaseError as err:
                    if not _is_damage(err):
                        raise
                    _log.warning("store %s is damaged (%s); recreating it", self.path, err)
                    self._recreate()
                    return op(self._connection())
            except sqlite3.Error as err:
                raise _failure(err) from err
            except OSError as err:
                raise StoreError(f"The app's store cannot be used in its data folder {self.folder} ({err.strerror or err}).") from err

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opening the file if needed: first use, after a fork, or
        when the file was deleted, replaced or overwritten since it was opened."""
        if self._pid != os.getpid():  # a forked child must not use its parent's connection
            if self._conn is not None:
                self._abandoned.append(self._conn)
            self._conn, self._identity, self._pid = None, None, os.getpid()
        if self._conn is None:
            self._open_first()
        elif _identity(self.path) != self._identity or not _header_ok(self.path, allow_empty=False):
            _log.warning("store %s was removed or overwritten; recreating it", self.path)
            self._recreate()
        assert self._conn is not None
        return self._conn

    def _open_first(self) -> None:
        """Open (or create) the file; a damaged one is moved aside first."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with _folder_lock(self.folder):
            if _identity(self.path) is None:
                if _remove_side_files(self.path):  # the WAL of a database someone deleted
                    self._notice = RECREATED_NOTICE
            elif not _header_ok(self.path, allow_empty=True):
                _log.warning("store %s is not an SQLite database; moving it aside", self.path)
                _move_aside(self.path)
                self._notice = RECREATED_NOTICE
            self._open()

    def _recreate(self) -> None:
        """Replace the opened file, found damaged, deleted or replaced, by an empty one."""
        old, self._conn = self._conn, None
        self._notice = RECREATED_NOTICE
        with _folder_lock(self.folder):
            now = _identity(self.path)
            if now is not None and now == self._identity:  # still the file we opened: damaged
                try:
                    _move_aside(self.path)  # before closing: a moved file gets no checkpoint
                finally:
                    _close_quietly(old)
                    old = None
            _close_quietly(old)
            if now is None:
                _remove_side_files(self.path)  # a deleted database's WAL must not join a new one
            self._identity = None
            self._open()

    def _open(self) -> None:
        """Connect to the file (creating it), set WAL mode, the busy timeout and the tables."""
        self.folder.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        self._conn, self._identity = conn, _identity(self.path)
        conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA journal_size_limit = {64 * 2**20}")
        with _write(conn):
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version < _SCHEMA_VERSION:
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
        self._identity = _identity(self.path)


# -- SQL helpers ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _write(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction taken at once (BEGIN IMMEDIATE: waits out other writers through the
    busy timeout, where a read that later writes could fail), rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _touch(conn: sqlite3.Connection, digest: str) -> bool:
    """Stamp ``digest`` as the most recently used (one statement, so one short write)."""
    return conn.execute(f"UPDATE blobs SET last_used = {_NEXT_STAMP} WHERE digest = ?", (time.time_ns(), digest)).rowcount > 0


def _total(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(SUM(size), 0) FROM blobs").fetchone()[0]


def _evict(conn: sqlite3.Connection, limit: int, keep: str | None = None) -> int:
    """Delete least recently used blobs (never ``keep``), and their claims, until the total is
    at most ``limit``; the number deleted. Call inside a write transaction."""
    total = _total(conn)
    doomed: list[str] = []
    if total > limit:
        for digest, size in conn.execute("SELECT digest, size FROM blobs ORDER BY last_used, digest"):
            if total <= limit:
                break
            if digest != keep:
                doomed.append(digest)
                total -= size
    for digest in doomed:
        conn.execute("DELETE FROM blobs WHERE digest = ?", (digest,))
        conn.execute("DELETE FROM claims WHERE digest = ?", (digest,))
    return len(doomed)


def _load_meta(text: str) -> dict:
    try:
        meta = json.loads(text)
    except ValueError:
        return {}
    return meta if isinstance(meta, dict) else {}


def _is_digest(digest: object) -> bool:
    return isinstance(digest, str) and _DIGEST.fullmatch(digest) is not None


def _code(err: sqlite3.Error) -> int | None:
    code = getattr(err, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def _is_damage(err: sqlite3.DatabaseError) -> bool:
    """Whether ``err`` says the file is damaged (not busy, not full, not read-only)."""
    code = _code(err)
    if code is not None:
        return code in (_CORRUPT, _NOTADB)
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


def _failure(err: sqlite3.Error) -> StoreError:
    """The StoreError to show for an sqlite3 error that recreating the file does not cure."""
    code = _code(err)
    if code in (_BUSY, _LOCKED):
        return StoreError("The app's store is busy (other app processes are writing to it); try again in a moment.")
    if code == _FULL:
        return StoreError("The disk holding the app's store is full; nothing more can be kept until space is freed.")
    if code == _READONLY:
        return StoreError("The app's store cannot be written (its data folder is read-only).")
    return StoreError(f"The app's store failed ({err}); try again.")


# -- files ---------------------------------------------------------------------------------------


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` names now (device, inode), or None if none."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _header_ok(path: Path, *, allow_empty: bool) -> bool:
    """Whether ``path`` starts as an SQLite database does (an empty file is a new database)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(len(_HEADER))
    except FileNotFoundError:
        return False
    return head == _HEADER or (allow_empty and head == b"")


def _move_aside(path: Path) -> Path:
    """Rename a damaged database, and its WAL files, to ``<name>.corrupt-<n>`` (the first free n)."""
    n = 1
    while any(path.with_name(f"{path.name}.corrupt-{n}{side}").exists() for side in ("", *_SIDE_FILES)):
        n += 1
    target = path.with_name(f"{path.name}.corrupt-{n}")
    for side in ("", *_SIDE_FILES):
        with contextlib.suppress(FileNotFoundError):
            os.replace(f"{path}{side}", f"{target}{side}")
    return target


def _remove_side_files(path: Path) -> bool:
    """Delete the WAL files of a database file that is gone; whether there were any."""
    found = False
    for side in _SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{path}{side}")
            found = True
    return found


def _close_quietly(conn: sqlite3.Connection | None) -> None:
    if conn is not None:
        with contextlib.suppress(sqlite3.Error):
            conn.close()


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Hold the folder's lock file while a database file is created or moved aside, so that two
    processes finding it damaged at once do not move each other's new file."""
    with open(folder / f"{FILE_NAME}.lock", "a+b") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        elif msvcrt is not None:  # pragma: no cover - Windows
            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
            elif msvcrt is not None:  # pragma: no cover - Windows
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)


# -- the process's store -------------------------------------------------------------------------


def data_dir() -> Path:
    """The app's data folder: ``BPE_EXPLORER_DATA`` if set, else the user's data directory
    (``$XDG_DATA_HOME/bpe-explorer`` or ``~/.local/share/bpe-explorer`` on Linux,
    ``~/Library/Application Support/bpe-explorer`` on macOS, ``%LOCALAPPDATA%\\bpe-explorer`` on
    Windows).
    """
    chosen = os.environ.get("BPE_EXPLORER_DATA", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        return (Path(local) if local else Path.home() / "AppData" / "Local") / APP_FOLDER
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_FOLDER
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return base / APP_FOLDER


def _env_mib(name: str, default: float) -> int:
    """Bytes from a positive number of MiB in the environment variable ``name``; a bad value
    is logged and ``default`` used.

    >>> os.environ["BPE_EXPLORER_DOCTEST_MIB"] = "0.5"; _env_mib("BPE_EXPLORER_DOCTEST_MIB", 1)
    524288
    >>> os.environ["BPE_EXPLORER_DOCTEST_MIB"] = "-3"; _env_mib("BPE_EXPLORER_DOCTEST_MIB", 1)
    1048576
    >>> del os.environ["BPE_EXPLORER_DOCTEST_MIB"]
    """
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return int(default * 2**20)
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)) or int(value * 2**20) < 1:
        _log.warning("%s=%r is not a positive number; using %s", name, raw, default)
        value = default
    return int(value * 2**20)


_default: SqliteStore | None = None
_default_lock = threading.Lock()


def default_store() -> SqliteStore:
    """The process's store, made on first use in :func:`data_dir`, holding at most
    ``BPE_EXPLORER_STORE_MIB`` MiB (default 1024) and ``BPE_EXPLORER_SESSION_MIB`` MiB per owner
    (default 100). Every process on the machine with the same data folder shares its file."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = SqliteStore(
                    data_dir(),
                    cap_bytes=_env_mib("BPE_EXPLORER_STORE_MIB", DEFAULT_STORE_MIB),
                    session_quota=_env_mib("BPE_EXPLORER_SESSION_MIB", DEFAULT_SESSION_MIB),
                )
    return _default
