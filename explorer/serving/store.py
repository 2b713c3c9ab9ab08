"""The store: files the app keeps on disk so that links can name them, and the only module that
writes to disk.

A link holds a page's whole view, except what does not fit in an address: an uploaded corpus, a
pasted text, a long Playground text, an imported tokenizer's files. Those are kept here, once
each, by the SHA-256 of their bytes (``upload:<hash>`` in a link), so that a refresh, another
session, another app process on the machine or a restarted server finds them again.

The embedded backend is one SQLite file, ``store.sqlite3`` in the data folder (:func:`data_dir`),
in WAL mode with a busy timeout, so any number of app processes on one machine read and write it
at once. Three tables::

    blobs   digest TEXT PRIMARY KEY    sha256 hex of data
            kind TEXT                  "corpus", "pasted", "text", "tokenizer", ...
            name TEXT                  display name (a file name), "" if none
            meta TEXT                  a small JSON object (a decoding, a pre-tokenizer, ...)
            size INTEGER               len(data)
            last_used INTEGER          nanoseconds, strictly increasing over the file's writes
            data BLOB
    claims  owner TEXT, digest TEXT    who put what (a browser, its address, a room); PRIMARY KEY (owner, digest)
    holds   holder TEXT PRIMARY KEY    an owner whose claims hold their files until a deadline (a room)
            until REAL                 seconds since the epoch
    meta    key TEXT, value TEXT       the store's :class:`Generation`: "generation" (a random
                                       stamp), "created" (seconds since the epoch), "replaced"
                                       ("1" when it replaced a damaged or deleted file)

The store is bounded: at most ``cap_bytes`` in all, the least recently used blobs going first,
and at most ``session_quota`` bytes claimed by one owner. *Forget my uploads* drops an owner's
claims and deletes what nobody else claims.

Who may keep how much, and what eviction spares (the design against a lesson's files vanishing):

- **Quotas count per browser and per network address.** A put names its browser (``owner``,
  ``session_quota`` bytes) and, when known, the client's address (``address``, an owner named
  ``a:...``, ``address_quota`` bytes): a fresh cookie starts a new browser quota but not a new
  address quota, so one machine cannot push everyone else's files out by changing cookies. An
  address's claim only counts: it keeps no file from *Forget my uploads*.
- **Holds.** A holder (a room: ``room:CODE``) claims the files it uses with :meth:`hold` until a
  deadline that its activity moves on (the room's expiry). Eviction drops unheld files first, least
  recently used first, and held ones only when nothing else is left to drop (the cap is never
  exceeded). A forgotten file that a holder still claims stays for it; when the holder is
  released (:meth:`release`, the room purged) or its deadline passes (swept on the next write),
  its files go unless a browser still claims them.

A damaged or deleted database file is recreated
empty (a damaged one is kept aside as ``store.sqlite3.corrupt-<n>``), and :meth:`take_notice`
then says so once, for the page to show. Each creation gets a new :class:`Generation` (a stamp
and a time, kept in the store): a session that remembers the stamp it first saw knows, in any
process, that the store it was using is gone (:func:`recreated_notice`). Callers only ever see
:class:`StoreError` (and its :class:`QuotaError`), never an sqlite3 or redis error; its sentence
names neither the data folder nor the Redis server's place (those go to the log).

The Redis backend (:class:`RedisStore`) keeps the same store on a Redis server, for a class
served from several machines; its keys, under a prefix (``bpe-explorer:``)::

    blob:<digest>     hash: kind, name, meta, size, data
    lru               sorted set: digest -> stamp (from the counter ``stamp``, strictly increasing)
    stamp             counter (INCR)
    total             the bytes of all blobs
    owner:<owner>     set: the digests an owner claims
    claims:<digest>   set: the owners claiming a digest (so that eviction drops their claims)
    holders           sorted set: holder -> deadline (seconds since the epoch)
    generation        hash: stamp, created, replaced (written when missing: a new server, or
                      one that lost its data, which a process that saw the old stamp marks replaced)

Every change touching several keys is one Lua script, so processes on any number of machines
putting, evicting and forgetting at once keep the total exact. :func:`default_store` picks the
backend from ``BPE_EXPLORER_STORE``: SQLite by default, Redis for a ``redis://`` URL.

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
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable
from urllib.parse import unquote, urlsplit

from .. import settings
from ..errors import ExplorerError
from ..formats.corpora import mib

if TYPE_CHECKING:  # redis is imported only when a Redis store is made
    import redis

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
    "DEFAULT_ADDRESS_MIB",
    "FILE_NAME",
    "RECREATED_NOTICE",
    "Blob",
    "Entry",
    "Generation",
    "Store",
    "SqliteStore",
    "RedisStore",
    "StoreError",
    "QuotaError",
    "data_dir",
    "default_store",
    "recreated_notice",
    "recreated_since",
    "write_transaction",
    "extend_hold",
    "release_hold",
]

_log = logging.getLogger(__name__)

# the defaults of BPE_EXPLORER_STORE_MIB (the whole store), _SESSION_MIB (what one owner, a
# browser, may keep) and _ADDRESS_MIB (what the browsers of one network address may keep)
DEFAULT_STORE_MIB = int(settings.default_number("BPE_EXPLORER_STORE_MIB"))
DEFAULT_SESSION_MIB = int(settings.default_number("BPE_EXPLORER_SESSION_MIB"))
DEFAULT_ADDRESS_MIB = int(settings.default_number("BPE_EXPLORER_ADDRESS_MIB"))
ADDRESS_OWNER = "a:"  # owners named so only count toward a quota: they keep no file from a forget
FILE_NAME = "store.sqlite3"
APP_FOLDER = settings.APP_FOLDER
RECREATED_NOTICE = (
    "The app's store was damaged (or removed) and has been recreated empty: uploads and imported "
    "files kept in it are gone; upload them again."
)

_SCHEMA_VERSION = 2  # 2: holds, and the meta table of the store's generation
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
CREATE TABLE IF NOT EXISTS holds (
    holder TEXT PRIMARY KEY,
    until REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS holds_until ON holds (until);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"""
# A stamp later than every other in the file, even another process's written in the same ns.
_NEXT_STAMP = "MAX(?, COALESCE((SELECT MAX(last_used) FROM blobs), 0) + 1)"
_BUSY_TIMEOUT_S = 30.0
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


def _too_large(size: int, cap_bytes: int) -> QuotaError:
    """The error for a file larger than the whole store (every backend says it alike)."""
    return QuotaError(f"This file is {mib(size)}, more than the {mib(cap_bytes)} the app's store can hold.")


def _over_quota(size: int, claimed: int, session_quota: int, *, address: bool = False) -> QuotaError:
    """The error for a file that would bring what its owner claims (``claimed`` bytes so far)
    over ``session_quota``; ``address``: the owner is the client's network address."""
    if address:
        return QuotaError(
            f"Keeping this file ({mib(size)}) would bring the files uploaded from your network address to "
            f"{mib(claimed + size)}, over the {mib(session_quota)} each address may keep; forget some uploads first."
        )
    return QuotaError(
        f"Keeping this file ({mib(size)}) would bring your files on the server to {mib(claimed + size)}, "
        f"over the {mib(session_quota)} each user may keep; forget some uploads first."
    )


class Blob(NamedTuple):
    """A stored file."""

    digest: str  # sha256 hex of data
    kind: str  # "corpus", "pasted", "text", "tokenizer", ... (free)
    name: str  # display name (a file name), "" if none
    meta: dict  # small JSON-able dict, e.g. {"decoding": "latin-1"}
    data: bytes
    size: int


class Generation(NamedTuple):
    """One life of a store, from its creation on: a new one begins when a damaged or deleted
    file is recreated empty, or when a Redis server that lost its data is used again."""

    stamp: str  # random: another stamp, another store (what sessions remember)
    created: float  # when it began, seconds since the epoch
    replaced: bool  # it replaced a store that was lost (not the first start of a new one)


def recreated_since(generation: Generation, *, seconds: float, now: float | None = None) -> bool:
    """Whether ``generation`` replaced a lost store less than ``seconds`` ago.

    >>> lost = Generation("ab12", created=1000.0, replaced=True)
    >>> recreated_since(lost, seconds=60, now=1030.0), recreated_since(lost, seconds=60, now=1090.0)
    (True, False)
    >>> recreated_since(lost._replace(replaced=False), seconds=60, now=1030.0)
    False
    """
    now = time.time() if now is None else now
    return generation.replaced and now - generation.created < seconds


def recreated_notice(generation: Generation) -> str:
    """What a session that was using the store before ``generation`` began is told (the time
    as the server's clock has it).

    >>> recreated_notice(Generation("ab12", time.mktime((2030, 5, 6, 14, 5, 0, 0, 0, -1)), True))[:72]
    "The app's store was found damaged, removed or emptied and started again,"
    """
    at = time.strftime("%H:%M", time.localtime(generation.created))
    return (
        f"The app's store was found damaged, removed or emptied and started again, empty, at {at} (server "
        "time): uploads, imported files and class rooms kept in it are gone; upload them again or start "
        "a new room."
    )


class Entry(NamedTuple):
    """A stored file without its bytes (what :meth:`Store.owned` lists)."""

    digest: str
    kind: str
    name: str
    meta: dict
    size: int


@runtime_checkable
class Store(Protocol):
    """What the app asks of a store, whatever keeps it (:class:`SqliteStore`, :class:`RedisStore`)."""

    def put(
        self,
        data: bytes,
        *,
        kind: str,
        name: str = "",
        meta: dict | None = None,
        owner: str | None = None,
        address: str | None = None,
    ) -> str: ...
    def get(self, digest: str) -> Blob | None: ...
    def has(self, digest: str) -> bool: ...
    def touch(self, digest: str) -> bool: ...
    def evict(self, *, to_bytes: int | None = None) -> int: ...
    def forget(self, owner: str) -> int: ...
    def owned(self, owner: str) -> list[Entry]: ...
    def hold(self, holder: str, digests: list[str], *, until: float) -> int: ...
    def release(self, holder: str) -> int: ...
    def holders(self, owner: str) -> dict[str, list[str]]: ...
    def total_bytes(self) -> int: ...
    def take_notice(self) -> str | None: ...
    def generation(self) -> Generation: ...
    def close(self) -> None: ...


class SqliteStore:
    """The store in one SQLite file, ``folder/store.sqlite3``, shared by every process that
    opens the same folder. Thread-safe: one connection per object, behind a lock. Nothing is
    opened or created before the first call that needs it; after :meth:`close` the next call
    opens the file again.

    Only SQLite's own connections ever open the database file and its ``-wal`` and ``-shm``
    (each call stats the file; its header is read through SQLite when the stat changed): a
    descriptor of our own, once closed, would drop the process's locks, and another process
    closing the database would then delete the WAL this process still writes to."""

    def __init__(
        self,
        folder: str | Path,
        *,
        cap_bytes: int,
        session_quota: int,
        address_quota: int | None = None,
        clock: Callable[[], float] = time.time,
    ):
        if not cap_bytes > 0 or not session_quota > 0 or not (address_quota is None or address_quota > 0):
            raise ValueError("cap_bytes, session_quota and address_quota must be positive")
        self.folder = Path(folder)
        self.path = self.folder / FILE_NAME
        self.cap_bytes = int(cap_bytes)
        self.session_quota = int(session_quota)
        self.address_quota = _address_quota(session_quota, address_quota)
        self.clock = clock  # seconds since the epoch: the holders' deadlines
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the file opened
        self._seen: tuple[int, int, int, int] | None = None  # its (dev, inode, size, mtime) at the last check
        self._pid = os.getpid()
        self._abandoned: list[sqlite3.Connection] = []  # inherited over a fork: never touched
        self._notice: str | None = None
        self._generation: Generation | None = None  # the open file's

    def __repr__(self) -> str:
        return f"SqliteStore({str(self.folder)!r}, cap_bytes={self.cap_bytes}, session_quota={self.session_quota})"

    # -- the interface -------------------------------------------------------------------------

    def put(
        self,
        data: bytes,
        *,
        kind: str,
        name: str = "",
        meta: dict | None = None,
        owner: str | None = None,
        address: str | None = None,
    ) -> str:
        """Keep ``data``; its SHA-256 hex. The same bytes again store nothing new: the blob takes
        the latest kind, name and meta, becomes the most recently used, and ``owner`` claims it
        (and ``address``, an ``a:...`` owner that only counts). Then least recently used blobs
        (never this one, held ones last) go until the total fits ``cap_bytes``.

        Raises QuotaError when the blob alone is larger than ``cap_bytes``, or when it would bring
        what ``owner`` claims over ``session_quota`` or what ``address`` claims over ``address_quota``.
        """
        data, size, digest, meta_json = _prepared(data, meta, self.cap_bytes)
        address = _address_owner(address)

        def op(conn: sqlite3.Connection) -> str:
            with write_transaction(conn):
                if owner is not None:
                    self._check_quota(conn, owner, digest, size)
                if address is not None:
                    self._check_quota(conn, address, digest, size, quota=self.address_quota)
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
                for claimant in (owner, address):
                    if claimant is not None:
                        conn.execute("INSERT OR IGNORE INTO claims (owner, digest) VALUES (?, ?)", (claimant, digest))
                _sweep(conn, self.clock())
                _evict(conn, self.cap_bytes, self.clock(), keep=digest)
            return digest

        return self._run(op)

    def get(self, digest: str) -> Blob | None:
        """The blob stored under ``digest``, now the most recently used; None when it was never
        stored, has been evicted or forgotten, or ``digest`` is no SHA-256 hex."""
        if not _is_digest(digest):
            return None

        def op(conn: sqlite3.Connection) -> Blob | None:
            row = conn.execute("SELECT kind, name, meta, data, size FROM blobs WHERE digest = ?", (digest,)).fetchone()
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
        return self._run(
            lambda conn: conn.execute("SELECT 1 FROM blobs WHERE digest = ?", (digest,)).fetchone() is not None
        )

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
            with write_transaction(conn):
                _sweep(conn, self.clock())
                return _evict(conn, limit, self.clock())

        return self._run(op)

    def forget(self, owner: str) -> int:
        """Drop everything ``owner`` claims: blobs that no other owner claims are deleted, the
        others stay for them (an address's claim keeps nothing; a holder's does). The number of
        blobs deleted."""

        def op(conn: sqlite3.Connection) -> int:
            with write_transaction(conn):
                _sweep(conn, self.clock())
                return _forget(conn, owner)

        return self._run(op)

    def hold(self, holder: str, digests: list[str], *, until: float) -> int:
        """``holder`` (a room) claims the stored blobs among ``digests`` and holds them until
        ``until`` (seconds since the epoch; a later call moves it): eviction spares them while
        anything else can go, and a forget leaves them. The number of blobs held."""
        wanted = sorted({d for d in digests if _is_digest(d)})

        def op(conn: sqlite3.Connection) -> int:
            with write_transaction(conn):
                _sweep(conn, self.clock())
                held = 0
                for digest in wanted:
                    if _touch(conn, digest):
                        conn.execute("INSERT OR IGNORE INTO claims (owner, digest) VALUES (?, ?)", (holder, digest))
                        held += 1
                extend_hold(conn, holder, until, create=True)
                return held

        return self._run(op)

    def release(self, holder: str) -> int:
        """End ``holder``'s hold: its claims go, with the blobs nobody else keeps; how many blobs."""

        def op(conn: sqlite3.Connection) -> int:
            with write_transaction(conn):
                return release_hold(conn, holder)

        return self._run(op)

    def holders(self, owner: str) -> dict[str, list[str]]:
        """The live holders (deadline not passed) of each blob ``owner`` claims, for the blobs
        that have one: what a forget by ``owner`` would leave in place for them."""

        def op(conn: sqlite3.Connection) -> dict[str, list[str]]:
            rows = conn.execute(
                "SELECT c.digest, h.holder FROM claims c JOIN claims o ON o.digest = c.digest "
                "JOIN holds h ON h.holder = o.owner WHERE c.owner = ? AND h.until >= ? ORDER BY c.digest, h.holder",
                (owner, self.clock()),
            ).fetchall()
            found: dict[str, list[str]] = {}
            for digest, holder in rows:
                found.setdefault(digest, []).append(holder)
            return found

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

    def generation(self) -> Generation:
        """The store's current :class:`Generation` (a file found deleted or damaged on the way
        is recreated first, and so begins a new one)."""

        def op(conn: sqlite3.Connection) -> Generation:
            assert self._generation is not None  # read whenever the file is opened
            return self._generation

        return self._run(op)

    def close(self) -> None:
        """Close the connection (the next call opens the file again)."""
        with self._lock:
            conn, self._conn, self._identity, self._seen = self._conn, None, None, None
            if conn is not None and self._pid == os.getpid():
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    # -- quota ---------------------------------------------------------------------------------

    def _check_quota(
        self, conn: sqlite3.Connection, owner: str, digest: str, size: int, *, quota: int | None = None
    ) -> None:
        """Raise QuotaError if ``owner`` claiming ``digest`` (``size`` bytes) goes over its quota
        (``quota``, by default ``session_quota``)."""
        if conn.execute("SELECT 1 FROM claims WHERE owner = ? AND digest = ?", (owner, digest)).fetchone():
            return
        (claimed,) = conn.execute(
            "SELECT COALESCE(SUM(b.size), 0) FROM claims c JOIN blobs b ON b.digest = c.digest WHERE c.owner = ?",
            (owner,),
        ).fetchone()
        limit = self.session_quota if quota is None else quota
        if claimed + size > limit:
            raise _over_quota(size, claimed, limit, address=quota is not None)

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
                _log.warning("store %s: %s", self.path, err)
                raise _failure(err) from err
            except OSError as err:
                # the folder's path goes to the log, not to the page
                _log.warning("store %s: %s", self.path, err)
                raise StoreError(
                    f"The app's store cannot be used in its data folder ({err.strerror or type(err).__name__})."
                ) from err

    def _connection(self) -> sqlite3.Connection:
        """The open connection, (re)opening the file if needed: first use, after a fork, or
        when the file was deleted, replaced or overwritten since it was opened."""
        if self._pid != os.getpid():  # a forked child must not use its parent's connection
            if self._conn is not None:
                self._abandoned.append(self._conn)
            self._conn, self._identity, self._pid = None, None, os.getpid()
        if self._conn is None:
            self._open_first()
        else:
            # A stat opens no descriptor: the file's inode says "deleted or replaced", its size
            # and time say "written since": only then is its header read (through SQLite).
            now = _file_state(self.path)
            if now is None or now[:2] != self._identity:
                _log.warning("store %s was removed or replaced; recreating it", self.path)
                self._recreate()
            elif now != self._seen:
                if not _header_ok(self.path, size=now[2], allow_empty=False):
                    _log.warning("store %s was overwritten; recreating it", self.path)
                    self._recreate()
                else:
                    self._seen = now
        assert self._conn is not None
        return self._conn

    def _open_first(self) -> None:
        """Open (or create) the file; a damaged one is moved aside first."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with _folder_lock(self.folder):
            found, lost = _file_state(self.path), False
            if found is None:
                lost = _remove_side_files(self.path)  # the WAL of a database someone deleted
            elif not _header_ok(self.path, size=found[2], allow_empty=True):
                _log.warning("store %s is not an SQLite database; moving it aside", self.path)
                _move_aside(self.path)
                lost = True
            if lost:
                self._notice = RECREATED_NOTICE
            self._open(replacing=lost)

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
            self._open(replacing=True)

    def _open(self, *, replacing: bool = False) -> None:
        """Connect to the file (creating it), set WAL mode, the busy timeout and the tables, and
        read its generation (a new file gets one; ``replacing``: it takes a lost one's place)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        self._conn, self._identity = conn, _identity(self.path)
        self._seen = None
        conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(f"PRAGMA journal_size_limit = {64 * 2**20}")
        with write_transaction(conn):
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            if version < _SCHEMA_VERSION:
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    conn.execute(statement)
                # a file made before the meta table began unknown when: from now, and no loss
                replaced = "1" if replacing and version == 0 else "0"
                conn.executemany(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)",
                    [("generation", os.urandom(8).hex()), ("created", repr(time.time())), ("replaced", replaced)],
                )
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        self._generation = Generation(meta["generation"], float(meta["created"]), meta["replaced"] == "1")
        self._seen = _file_state(self.path)
        self._identity = None if self._seen is None else self._seen[:2]


# -- SQL helpers (the first three also for the rooms' own transactions: explorer.serving.rooms) ----


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[None]:
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
    return (
        conn.execute(f"UPDATE blobs SET last_used = {_NEXT_STAMP} WHERE digest = ?", (time.time_ns(), digest)).rowcount
        > 0
    )


def _total(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT COALESCE(SUM(size), 0) FROM blobs").fetchone()[0]


def _evict(conn: sqlite3.Connection, limit: int, now: float, keep: str | None = None) -> int:
    """Delete least recently used blobs (never ``keep``), and their claims, until the total is
    at most ``limit``: unheld blobs first, held ones (a live holder claims them) only when no
    unheld one is left (``now``: seconds since the epoch, for the holders' deadlines); the number
    deleted. Call inside a write transaction."""
    total = _total(conn)
    doomed: list[str] = []
    if total > limit:
        rows = conn.execute(
            "SELECT b.digest, b.size, EXISTS (SELECT 1 FROM claims c JOIN holds h ON h.holder = c.owner "
            "WHERE c.digest = b.digest AND h.until >= ?) FROM blobs b ORDER BY b.last_used, b.digest",
            (now,),
        ).fetchall()
        for digest, size, _held in sorted(rows, key=lambda row: row[2]):  # a stable sort: unheld first, in LRU order
            if total <= limit:
                break
            if digest != keep:
                doomed.append(digest)
                total -= size
    for digest in doomed:
        conn.execute("DELETE FROM blobs WHERE digest = ?", (digest,))
        conn.execute("DELETE FROM claims WHERE digest = ?", (digest,))
    return len(doomed)


def _forget(conn: sqlite3.Connection, owner: str) -> int:
    """Drop ``owner``'s claims and delete the blobs no other owner keeps (an address's claim
    keeps nothing), with every claim on them; the number deleted. Call inside a write transaction."""
    doomed = [
        digest
        for (digest,) in conn.execute(
            "SELECT c.digest FROM claims c WHERE c.owner = ? AND NOT EXISTS (SELECT 1 FROM claims o "
            "WHERE o.digest = c.digest AND o.owner != ? AND substr(o.owner, 1, 2) != ?)",
            (owner, owner, ADDRESS_OWNER),
        ).fetchall()
    ]
    deleted = 0
    for digest in doomed:
        deleted += conn.execute("DELETE FROM blobs WHERE digest = ?", (digest,)).rowcount
        conn.execute("DELETE FROM claims WHERE digest = ?", (digest,))
    conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))
    return deleted


def extend_hold(conn: sqlite3.Connection, holder: str, until: float, *, create: bool = False) -> None:
    """Move ``holder``'s deadline to ``until`` (``create``: start holding if it was not). A
    room's activity calls this in its own write transaction (``explorer.serving.rooms``)."""
    if create:
        conn.execute(
            "INSERT INTO holds (holder, until) VALUES (?, ?) ON CONFLICT (holder) DO UPDATE SET until = excluded.until",
            (holder, until),
        )
    else:
        conn.execute("UPDATE holds SET until = ? WHERE holder = ?", (until, holder))


def release_hold(conn: sqlite3.Connection, holder: str) -> int:
    """End ``holder``'s hold (its claims, then the blobs nobody else keeps); how many blobs went.
    Call inside a write transaction (a room's purge does, in its own)."""
    conn.execute("DELETE FROM holds WHERE holder = ?", (holder,))
    return _forget(conn, holder)


def _sweep(conn: sqlite3.Connection, now: float) -> int:
    """Release the holders whose deadline has passed (a room that expired without a purge); the
    number of blobs that went with them. Call inside a write transaction."""
    lapsed = [h for (h,) in conn.execute("SELECT holder FROM holds WHERE until < ?", (now,)).fetchall()]
    return sum(release_hold(conn, holder) for holder in lapsed)


def _address_owner(address: str | None) -> str | None:
    """The owner that counts a network address's files: ``a:`` and a hash (no address is kept).

    >>> _address_owner("203.0.113.7")[:2], len(_address_owner("203.0.113.7")), _address_owner(None)
    ('a:', 34, None)
    """
    if not address:
        return None
    return (
        ADDRESS_OWNER + hashlib.sha256(b"bpe-explorer address\0" + address.encode("utf-8", "replace")).hexdigest()[:32]
    )


def _address_quota(session_quota: int, address_quota: int | None) -> int:
    """The bytes one address may keep: as given, else three browsers' worth.

    >>> _address_quota(100, None), _address_quota(100, 50)
    (300, 50)
    """
    return int(address_quota) if address_quota is not None else 3 * int(session_quota)


def _prepared(data: bytes, meta: dict | None, cap_bytes: int) -> tuple[bytes, int, str, str]:
    """What a put keeps: (the bytes, their size, their SHA-256 hex, the meta as JSON); QuotaError
    when the bytes alone are more than the whole store holds."""
    data = bytes(data)
    if len(data) > cap_bytes:
        raise _too_large(len(data), cap_bytes)
    return (
        data,
        len(data),
        hashlib.sha256(data).hexdigest(),
        json.dumps(dict(meta or {}), sort_keys=True, ensure_ascii=False),
    )


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


def _file_state(path: Path) -> tuple[int, int, int, int] | None:
    """``path``'s (device, inode, size, modification time in ns), or None if no file is there.
    A stat: no descriptor of the file is opened."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _header_ok(path: Path, *, size: int, allow_empty: bool) -> bool:
    """Whether the file at ``path`` (``size`` bytes) starts as an SQLite database does (an empty
    file is a new database when ``allow_empty``).

    Read through SQLite, never with open(): on POSIX, closing any descriptor of a file drops
    every lock the process holds on it, and SQLite would no longer know that this process uses
    the database (another process closing it would then checkpoint and delete the live WAL).
    SQLite's own connections share their locks within a process and keep a closed descriptor
    until those locks go. ``immutable=1`` reads the file itself, not its WAL, taking no lock;
    only "not a database" counts as damage (a page count ahead of the file's size is what a
    reader sees in the middle of another process's checkpoint)."""
    if size == 0:
        return allow_empty
    try:
        probe = sqlite3.connect(f"{path.absolute().as_uri()}?immutable=1", uri=True)
    except sqlite3.Error:
        return True  # gone between the stat and now: the next call's stat says so
    try:
        probe.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as err:
        return _code(err) != _NOTADB and "not a database" not in str(err).lower()
    finally:
        probe.close()
    return True


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


# -- Redis ---------------------------------------------------------------------------------------

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")  # what redis-py's URLs start with
_REDIS_URL_FORMS = "redis://host:port/db, rediss://host:port/db or unix:///path/to/redis.sock"
_REDIS_CONNECT_TIMEOUT_S = 5.0
# A put carries up to a corpus's 20 MiB and may evict many blobs in the same script.
_REDIS_TIMEOUT_S = 30.0
_REDIS_RETRIES = 2  # a dropped connection (a restarted server) is retried, a dead one soon reported
_DETAIL_CHARS = 200
_SCRIPT_PLACE = re.compile(r"\s*script: [0-9a-f]{40}, on @user_script:\d+\.?$")  # where in our Lua

# The code every script starts with. ARGV[1] is the prefix, and the keys are built here from it
# rather than passed as KEYS, since eviction reaches blobs no caller named: the store wants one
# Redis server (any number of clients), not a Redis Cluster.
_LUA_COMMON = """
local prefix = ARGV[1]
local lru, stamps, total, holders = prefix .. 'lru', prefix .. 'stamp', prefix .. 'total', prefix .. 'holders'
local function blob_key(digest) return prefix .. 'blob:' .. digest end
local function claims_key(digest) return prefix .. 'claims:' .. digest end
local function owner_key(owner) return prefix .. 'owner:' .. owner end
local function size_of(digest) return tonumber(redis.call('HGET', blob_key(digest), 'size')) or 0 end
local function stamp(digest) redis.call('ZADD', lru, redis.call('INCR', stamps), digest) end

-- remove a blob: its hash, its place in the LRU order, its bytes from the total, every claim on it
local function drop(digest)
  local size = size_of(digest)
  for _, owner in ipairs(redis.call('SMEMBERS', claims_key(digest))) do
    redis.call('SREM', owner_key(owner), digest)
  end
  redis.call('DEL', blob_key(digest), claims_key(digest))
  redis.call('ZREM', lru, digest)
  redis.call('DECRBY', total, size)
end

-- whether a holder whose deadline is not past (now: seconds since the epoch) claims the blob
local function held(digest, now)
  for _, owner in ipairs(redis.call('SMEMBERS', claims_key(digest))) do
    local deadline = redis.call('ZSCORE', holders, owner)
    if deadline and tonumber(deadline) >= now then return true end
  end
  return false
end

-- drop least recently used blobs, never keep, until the total is at most limit: unheld ones
-- first, held ones only when no unheld one is left; how many
local function evict(limit, keep, now)
  local dropped = 0
  for pass = 1, 2 do
    local skipped = 0  -- blobs passed over keep their place at the start of the LRU order
    while (tonumber(redis.call('GET', total)) or 0) > limit do
      local victim = redis.call('ZRANGE', lru, skipped, skipped)[1]
      if victim == nil then break end
      if victim == keep or (pass == 1 and held(victim, now)) then
        skipped = skipped + 1
      else
        drop(victim)
        dropped = dropped + 1
      end
    end
  end
  return dropped
end

-- drop an owner's claims, and the blobs no other owner keeps (an address's claim, 'a:...',
-- keeps nothing); how many blobs went
local function forget(owner)
  local dropped = 0
  for _, digest in ipairs(redis.call('SMEMBERS', owner_key(owner))) do
    redis.call('SREM', claims_key(digest), owner)
    local kept = false
    for _, other in ipairs(redis.call('SMEMBERS', claims_key(digest))) do
      if string.sub(other, 1, 2) ~= 'a:' then kept = true break end
    end
    if not kept and redis.call('EXISTS', blob_key(digest)) == 1 then
      drop(digest)
      dropped = dropped + 1
    end
  end
  redis.call('DEL', owner_key(owner))
  return dropped
end

-- end a hold: the holder's deadline and claims, then the blobs nobody else keeps
local function release(holder)
  redis.call('ZREM', holders, holder)
  return forget(holder)
end

-- release the holders whose deadline has passed (a room that expired on its own)
local function sweep(now)
  local dropped = 0
  for _, holder in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', '(' .. now)) do
    dropped = dropped + release(holder)
  end
  return dropped
end
"""

# The scripts' own parts; ARGV after the prefix as each comment says.
_LUA_SCRIPTS = {
    # digest, kind, name, meta, size, data, owner, "1" if an owner claims it, cap, quota, address
    # owner ("" if none), its quota, now
    # -> {1, evicted} or {0, bytes claimed, 1 (the owner) or 2 (the address)} when over a quota
    # (nothing written)
    "put": """
local digest, size, owner, claiming = ARGV[2], tonumber(ARGV[6]), ARGV[8], ARGV[9] == '1'
local address, now = ARGV[12], tonumber(ARGV[14])
local function over(who, quota)
  if redis.call('SISMEMBER', owner_key(who), digest) == 1 then return false end
  local claimed = 0
  for _, other in ipairs(redis.call('SMEMBERS', owner_key(who))) do
    claimed = claimed + size_of(other)
  end
  if claimed + size > quota then return claimed end
  return false
end
if claiming then
  local claimed = over(owner, tonumber(ARGV[11]))
  if claimed then return {0, claimed, 1} end
end
if address ~= '' then
  local claimed = over(address, tonumber(ARGV[13]))
  if claimed then return {0, claimed, 2} end
end
local key = blob_key(digest)
if redis.call('EXISTS', key) == 1 then
  redis.call('HSET', key, 'kind', ARGV[3], 'name', ARGV[4], 'meta', ARGV[5])
else
  redis.call('HSET', key, 'kind', ARGV[3], 'name', ARGV[4], 'meta', ARGV[5], 'size', ARGV[6], 'data', ARGV[7])
  redis.call('INCRBY', total, size)
end
stamp(digest)
for _, who in ipairs({claiming and owner or '', address}) do
  if who ~= '' then
    redis.call('SADD', owner_key(who), digest)
    redis.call('SADD', claims_key(digest), who)
  end
end
sweep(now)
return {1, evict(tonumber(ARGV[10]), digest, now)}
""",
    # digest -> {kind, name, meta, size, data}, now the most recently used, or nil
    "get": """
local fields = redis.call('HMGET', blob_key(ARGV[2]), 'kind', 'name', 'meta', 'size', 'data')
if not fields[1] then return false end
stamp(ARGV[2])
return fields
""",
    # digest -> 1 when stamped as the most recently used, 0 when not stored
    "touch": """
if redis.call('EXISTS', blob_key(ARGV[2])) == 0 then return 0 end
stamp(ARGV[2])
return 1
""",
    # limit, now -> how many blobs were dropped
    "evict": """
sweep(tonumber(ARGV[3]))
return evict(tonumber(ARGV[2]), '', tonumber(ARGV[3]))
""",
    # owner, now -> how many blobs were dropped (those nobody else keeps)
    "forget": """
sweep(tonumber(ARGV[3]))
return forget(ARGV[2])
""",
    # holder, deadline, now, digests... -> how many blobs it holds (the stored ones, now the most
    # recently used)
    "hold": """
local holder = ARGV[2]
sweep(tonumber(ARGV[4]))
local count = 0
for i = 5, #ARGV do
  local digest = ARGV[i]
  if redis.call('EXISTS', blob_key(digest)) == 1 then
    redis.call('SADD', owner_key(holder), digest)
    redis.call('SADD', claims_key(digest), holder)
    stamp(digest)
    count = count + 1
  end
end
redis.call('ZADD', holders, ARGV[3], holder)
return count
""",
    # holder -> how many blobs went with its hold
    "release": """
return release(ARGV[2])
""",
    # owner, now -> {digest, holder, ...}: the live holders of what the owner claims
    "holders": """
local found = {}
for _, digest in ipairs(redis.call('SMEMBERS', owner_key(ARGV[2]))) do
  for _, other in ipairs(redis.call('SMEMBERS', claims_key(digest))) do
    local deadline = redis.call('ZSCORE', holders, other)
    if deadline and tonumber(deadline) >= tonumber(ARGV[3]) then
      found[#found + 1] = digest
      found[#found + 1] = other
    end
  end
end
return found
""",
    # stamp, created, replaced -> {stamp, created, replaced}: the generation, written first if missing
    "generation": """
local key = prefix .. 'generation'
if redis.call('EXISTS', key) == 0 then
  redis.call('HSET', key, 'stamp', ARGV[2], 'created', ARGV[3], 'replaced', ARGV[4])
end
return redis.call('HMGET', key, 'stamp', 'created', 'replaced')
""",
    # owner -> {{digest, kind, name, meta, size, stamp}, ...} in no order (one consistent read)
    "owned": """
local entries = {}
for _, digest in ipairs(redis.call('SMEMBERS', owner_key(ARGV[2]))) do
  local fields = redis.call('HMGET', blob_key(digest), 'kind', 'name', 'meta', 'size')
  if fields[1] then
    local used = redis.call('ZSCORE', lru, digest) or '0'
    entries[#entries + 1] = {digest, fields[1], fields[2], fields[3], fields[4], used}
  end
end
return entries
""",
}


class RedisStore:
    """The store on a Redis server, shared by every app process, on any machine, that names the
    same server, database and ``prefix``. Thread-safe (redis-py's client keeps a pool of
    connections). Nothing connects before the first call; after a fork, or after :meth:`close`,
    the next call makes a new client.

    The server should keep its data (``appendonly yes`` or snapshots) and must not evict keys by
    itself (``maxmemory-policy noeviction``, the default): the store does its own eviction, and
    keys dropped behind its back would leave its totals wrong.
    """

    def __init__(
        self,
        url: str,
        *,
        cap_bytes: int,
        session_quota: int,
        address_quota: int | None = None,
        prefix: str = "bpe-explorer:",
        clock: Callable[[], float] = time.time,
    ):
        if not cap_bytes > 0 or not session_quota > 0 or not (address_quota is None or address_quota > 0):
            raise ValueError("cap_bytes, session_quota and address_quota must be positive")
        self.where, self._secrets = _redis_place(url)
        self._redis = _import_redis()
        self.url = url  # with its password, if any: the log names ``where`` instead
        self.prefix = prefix
        self.cap_bytes = int(cap_bytes)
        self.session_quota = int(session_quota)
        self.address_quota = _address_quota(session_quota, address_quota)
        self.clock = clock  # seconds since the epoch: the holders' deadlines
        self._lock = threading.Lock()  # guards making the client; the client itself is thread-safe
        self._client: redis.Redis | None = None
        self._text_client: redis.Redis | None = None
        self._scripts: dict[str, Any] = {}
        self._pid = os.getpid()
        self._stamp_seen = ""  # the generation last read: one written after it replaced a lost store

    def __repr__(self) -> str:
        return (
            f"RedisStore(<Redis at {self.where}>, prefix={self.prefix!r}, cap_bytes={self.cap_bytes}, "
            f"session_quota={self.session_quota})"
        )

    # -- the interface -------------------------------------------------------------------------

    def put(
        self,
        data: bytes,
        *,
        kind: str,
        name: str = "",
        meta: dict | None = None,
        owner: str | None = None,
        address: str | None = None,
    ) -> str:
        """As :meth:`SqliteStore.put`: keep ``data`` (once), claimed by ``owner`` (and counted for
        ``address``), evicting the least recently used other blobs (held ones last) down to
        ``cap_bytes``; its SHA-256 hex. QuotaError when it is larger than the store or would bring
        ``owner`` over ``session_quota`` or ``address`` over ``address_quota``."""
        data, size, digest, meta_json = _prepared(data, meta, self.cap_bytes)
        kept, claimed, *which = self._script(
            "put",
            digest,
            kind,
            name,
            meta_json,
            size,
            data,
            owner or "",
            "0" if owner is None else "1",
            self.cap_bytes,
            self.session_quota,
            _address_owner(address) or "",
            self.address_quota,
            repr(self.clock()),
        )
        if not kept:
            if which == [2]:
                raise _over_quota(size, int(claimed), self.address_quota, address=True)
            raise _over_quota(size, int(claimed), self.session_quota)
        return digest

    def get(self, digest: str) -> Blob | None:
        """The blob stored under ``digest``, now the most recently used; None when it is not
        stored or ``digest`` is no SHA-256 hex."""
        if not _is_digest(digest):
            return None
        fields = self._script("get", digest)
        if fields is None:
            return None
        kind, name, meta, size, data = fields
        return Blob(digest, _text(kind), _text(name), _load_meta(_text(meta)), bytes(data), int(size))

    def has(self, digest: str) -> bool:
        """Whether ``digest`` is stored (reads no data, touches nothing)."""
        if not _is_digest(digest):
            return False
        return self._call(lambda client, _: client.exists(f"{self.prefix}blob:{digest}") == 1)

    def touch(self, digest: str) -> bool:
        """Make ``digest`` the most recently used; False when it is not stored."""
        if not _is_digest(digest):
            return False
        return self._script("touch", digest) == 1

    def evict(self, *, to_bytes: int | None = None) -> int:
        """Remove least recently used blobs until the total is at most ``to_bytes`` (default:
        ``cap_bytes``); the number removed."""
        limit = self.cap_bytes if to_bytes is None else max(0, int(to_bytes))
        return int(self._script("evict", limit, repr(self.clock())))

    def forget(self, owner: str) -> int:
        """Drop everything ``owner`` claims, deleting the blobs no other owner keeps (an
        address's claim keeps nothing; a holder's does); how many were deleted."""
        return int(self._script("forget", owner, repr(self.clock())))

    def hold(self, holder: str, digests: list[str], *, until: float) -> int:
        """As :meth:`SqliteStore.hold`: ``holder`` holds the stored blobs among ``digests`` until
        ``until``; how many it holds."""
        wanted = sorted({d for d in digests if _is_digest(d)})
        return int(self._script("hold", holder, repr(float(until)), repr(self.clock()), *wanted))

    def release(self, holder: str) -> int:
        """End ``holder``'s hold; how many blobs went with it (those nobody else keeps)."""
        return int(self._script("release", holder))

    def holders(self, owner: str) -> dict[str, list[str]]:
        """The live holders of each blob ``owner`` claims (for the blobs that have one)."""
        flat = self._script("holders", owner, repr(self.clock()))
        found: dict[str, list[str]] = {}
        for digest, holder in zip(flat[::2], flat[1::2]):
            found.setdefault(_text(digest), []).append(_text(holder))
        return {digest: sorted(held) for digest, held in sorted(found.items())}

    @property
    def holders_key(self) -> str:
        """The sorted set of holders' deadlines (a room's scripts move its own deadline)."""
        return f"{self.prefix}holders"

    def owned(self, owner: str) -> list[Entry]:
        """What ``owner`` claims, most recently used first."""
        rows = self._script("owned", owner)
        # Stamps are integers below 2**53, so their float form orders them exactly.
        rows.sort(key=lambda row: (-float(row[5]), row[0]))
        return [
            Entry(_text(digest), _text(kind), _text(name), _load_meta(_text(meta)), int(size))
            for digest, kind, name, meta, size, _ in rows
        ]

    def total_bytes(self) -> int:
        """The bytes of all stored blobs."""
        return int(self._call(lambda client, _: client.get(f"{self.prefix}total")) or 0)

    def take_notice(self) -> str | None:
        """Always None: a Redis server has no file to find damaged (a link to a blob it lost
        says the file is gone, as for an evicted one; sessions learn of a server that lost its
        data from :meth:`generation`)."""
        return None

    def generation(self) -> Generation:
        """The store's current :class:`Generation`, written when the server has none: a new
        server, or one that lost its data (replaced, when this object had read another stamp:
        it reads one with its first command)."""
        return self._call(self._generation)

    def _generation(self, client: redis.Redis, scripts: dict[str, Any]) -> Generation:
        fresh = os.urandom(8).hex(), repr(time.time()), "1" if self._stamp_seen else "0"
        raw = scripts["generation"](keys=[], args=[self.prefix, *fresh], client=client)
        stamp, created, replaced = (_text(v) for v in raw)
        self._stamp_seen = stamp
        return Generation(stamp, float(created), replaced == "1")

    def close(self) -> None:
        """Close the client's connections (the next call makes a new client)."""
        with self._lock:
            clients = (self._client, self._text_client)
            self._client, self._text_client, self._scripts = None, None, {}
            for client in clients:
                if client is not None and self._pid == os.getpid():
                    with contextlib.suppress(self._redis.RedisError, OSError):
                        client.close()

    # -- the client ----------------------------------------------------------------------------

    def _connection(self, *, text: bool = False) -> tuple[redis.Redis, dict[str, Any]]:
        """The client and the store's scripts, made on first use, after :meth:`close` and in a
        forked child (which must not share its parent's sockets). ``text``: a second client
        whose replies are str, for the rooms kept beside the files (``explorer.serving.rooms``)."""
        with self._lock:
            if self._pid != os.getpid():
                self._client, self._text_client, self._scripts, self._pid = None, None, {}, os.getpid()
            if self._client is None:
                self._client = self._new_client()
                self._scripts = {
                    name: self._client.register_script(_LUA_COMMON + body) for name, body in _LUA_SCRIPTS.items()
                }
            if text:
                if self._text_client is None:
                    self._text_client = self._new_client(decode_responses=True)
                return self._text_client, self._scripts
            return self._client, self._scripts

    def _new_client(self, *, decode_responses: bool = False) -> redis.Redis:
        """A client for the URL (connecting later, on its first command); options given in the
        URL's query (``?socket_timeout=...``) win over the defaults here."""
        retry = self._redis.retry.Retry(
            self._redis.backoff.ExponentialWithJitterBackoff(base=0.05, cap=0.5), _REDIS_RETRIES
        )
        try:
            return self._redis.Redis.from_url(
                self.url,
                socket_connect_timeout=_REDIS_CONNECT_TIMEOUT_S,
                socket_timeout=_REDIS_TIMEOUT_S,
                retry=retry,
                decode_responses=decode_responses,
            )
        except ValueError as err:
            raise StoreError(
                f"The Redis URL of the app's store is malformed ({_scrub(str(err), self._secrets)})."
            ) from err

    def _call(self, op: Callable[[redis.Redis, dict[str, Any]], T], *, text: bool = False) -> T:
        """``op`` on the client (``text``: the one replying in str) and the store's scripts; any
        redis error leaves as a StoreError."""
        client, scripts = self._connection(text=text)
        try:
            if not self._stamp_seen:  # so that a server found empty later is known to have lost its data
                with contextlib.suppress(self._redis.RedisError):  # the command's own error says what failed
                    self._generation(self._connection()[0], scripts)
            return op(client, scripts)
        except self._redis.RedisError as err:
            # where the server is and what it said go to the log; the page gets a sentence without them
            _log.warning("store (Redis at %s): %s", self.where, _redis_detail(err, self._secrets))
            raise _redis_failure(err, self._redis.exceptions, where=self.where, secrets=self._secrets) from err

    def _script(self, name: str, *args: object) -> Any:
        """Run the Lua script ``name`` (one atomic step on the server) with ``args`` after the
        prefix; redis-py sends its SHA and the script itself only when the server lacks it."""
        return self._call(lambda client, scripts: scripts[name](keys=[], args=[self.prefix, *args], client=client))


def _import_redis() -> Any:
    """The redis library, imported only when a Redis store is made (the engine runs without it)."""
    try:
        import redis
        import redis.backoff
        import redis.retry
    except ImportError as err:
        raise StoreError("The Redis store needs the redis library (pip install -r requirements.txt).") from err
    return redis


def _redis_place(url: str) -> tuple[str, tuple[str, ...]]:
    """Where a Redis URL points, fit for the server's log (``host:port`` or a socket's path,
    never a password), and the secrets it holds (to keep out of messages and the log).

    >>> _redis_place("redis://app:s%40fe@cache.example:6380/2?password=other")
    ('cache.example:6380', ('s@fe', 's%40fe', 'other'))
    >>> _redis_place("unix:///run/redis/redis.sock")
    ('/run/redis/redis.sock', ())
    """
    if not url.startswith(_REDIS_SCHEMES):
        raise StoreError(f"The app's store was given a URL that is not a Redis one; use {_REDIS_URL_FORMS}.")
    parts = urlsplit(url)
    raw = parts.password or ""
    found = [unquote(raw), raw] if raw else []
    found += [value for key, value in _query_pairs(parts.query) if key == "password" and value]
    secrets = tuple(dict.fromkeys(found))
    if parts.scheme == "unix":
        return unquote(parts.path) or "(no socket path)", secrets
    try:
        port = parts.port or 6379
    except ValueError as err:
        raise StoreError(f"The Redis URL of the app's store has a bad port ({_scrub(str(err), secrets)}).") from err
    return f"{parts.hostname or 'localhost'}:{port}", secrets


def _query_pairs(query: str) -> list[tuple[str, str]]:
    """A URL query's ``key=value`` pairs, values unquoted as redis-py reads them."""
    pairs = []
    for item in query.split("&"):
        key, _, value = item.partition("=")
        pairs.append((unquote(key), unquote(value.replace("+", " "))))
    return pairs


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every secret (a password) replaced by ``***``.

    >>> _scrub("AUTH app pa%24%24 (pa$$) refused", ("pa$$", "pa%24%24"))
    'AUTH app *** (***) refused'
    """
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def _text(raw: bytes | str) -> str:
    """A field as text (redis-py gives bytes; a stored name is UTF-8)."""
    return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw


def _redis_detail(err: Exception, secrets: tuple[str, ...]) -> str:
    """A redis error's text on one line, without its secrets (passwords), our scripts' SHAs and
    a final period, cut at ``_DETAIL_CHARS`` characters."""
    detail = _SCRIPT_PLACE.sub("", _scrub(" ".join(str(err).split()) or type(err).__name__, secrets))
    if len(detail) > _DETAIL_CHARS:
        detail = detail[: _DETAIL_CHARS - 1] + "…"
    return detail.rstrip(".")


def _place_parts(where: str) -> tuple[str, ...]:
    """What of ``where`` (``host:port`` or a socket's path) a message must not show.

    >>> _place_parts("cache.example:6380")
    ('cache.example:6380', 'cache.example', ':6380')
    >>> _place_parts("/run/redis/redis.sock")
    ('/run/redis/redis.sock',)
    """
    host, colon, port = where.rpartition(":")
    return (where, host, colon + port) if colon and host and port.isdigit() else (where,)


def _redis_failure(err: Exception, exceptions: Any, *, where: str, secrets: tuple[str, ...]) -> StoreError:
    """The StoreError, one sentence fit for a page, for a redis error: no password in it, nor
    where the server is (its host, port or socket path go to the server's log instead)."""
    detail = _redis_detail(err, secrets + _place_parts(where))
    store = "The app's store (its Redis server)"
    if isinstance(err, exceptions.AuthenticationError):
        return StoreError(f"{store} refused the app's user or password ({detail}); check BPE_EXPLORER_STORE.")
    if isinstance(err, (exceptions.ConnectionError, exceptions.TimeoutError)):
        return StoreError(f"{store} cannot be reached; try again in a moment.")
    if isinstance(err, exceptions.ReadOnlyError) or "READONLY" in detail:
        return StoreError(f"{store} cannot be written (the server is a read-only replica).")
    if isinstance(err, exceptions.OutOfMemoryError) or "OOM command not allowed" in detail:
        return StoreError(f"{store} is out of memory; nothing more can be kept until space is freed.")
    return StoreError(f"{store} failed ({detail}); try again.")


# -- the process's store -------------------------------------------------------------------------


def data_dir() -> Path:
    """The app's data folder: ``BPE_EXPLORER_DATA`` if set, else the user's data directory
    (``$XDG_DATA_HOME/bpe-explorer`` or ``~/.local/share/bpe-explorer`` on Linux,
    ``~/Library/Application Support/bpe-explorer`` on macOS, ``%LOCALAPPDATA%\\bpe-explorer`` on
    Windows).
    """
    chosen = settings.text("BPE_EXPLORER_DATA") or settings.default_place("BPE_EXPLORER_DATA")
    assert chosen is not None  # the data folder's default is the user's data directory
    return Path(chosen).expanduser()


_STORE_CHOICES = (
    "BPE_EXPLORER_STORE must be unset, empty or 'sqlite' (the SQLite store in the data folder), "
    f"or a Redis server's URL: {_REDIS_URL_FORMS}."
)

_default: Store | None = None
_default_lock = threading.Lock()


def default_store() -> Store:
    """The process's store, made on first use, holding at most ``BPE_EXPLORER_STORE_MIB`` MiB
    (default 1024), ``BPE_EXPLORER_SESSION_MIB`` MiB per owner (default 100) and
    ``BPE_EXPLORER_ADDRESS_MIB`` MiB per network address (default 300).

    ``BPE_EXPLORER_STORE`` picks where: unset, empty or ``sqlite``, the SQLite file in
    :func:`data_dir` (shared by every process on the machine with the same data folder); a
    ``redis://``, ``rediss://`` or ``unix://`` URL, that Redis server (shared by every machine
    naming it). Any other value is a StoreError saying what is accepted."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = _store_from_environment()
    return _default


def _store_from_environment() -> Store:
    """A new store as the environment asks (see :func:`default_store`)."""
    cap_bytes, session_quota, address_quota = (
        settings.size_bytes(f"BPE_EXPLORER_{what}_MIB") for what in ("STORE", "SESSION", "ADDRESS")
    )
    choice = settings.text("BPE_EXPLORER_STORE") or ""
    if choice.lower() in ("", "sqlite"):
        return SqliteStore(data_dir(), cap_bytes=cap_bytes, session_quota=session_quota, address_quota=address_quota)
    if choice.startswith(_REDIS_SCHEMES):
        return RedisStore(choice, cap_bytes=cap_bytes, session_quota=session_quota, address_quota=address_quota)
    raise StoreError(_STORE_CHOICES)
