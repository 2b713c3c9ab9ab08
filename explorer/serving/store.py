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

The rules (the quotas, eviction, a forget, holds and their deadlines) are written once, in
Python (:class:`_StoreRules`), over each backend's storage primitives: an SQLite write
transaction, a Redis WATCH/MULTI transaction (written only if nothing it read changed meanwhile,
else run again), so processes on any number of machines putting, evicting and forgetting at once
keep the total exact. :func:`default_store` picks the
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


# -- the rules, written once ---------------------------------------------------------------------
# What the store keeps and drops (the quotas, the least recently used going first, held files
# last, an address's claim keeping nothing, a hold lapsing at its deadline) is written here once,
# over a transaction of storage primitives (:class:`_BlobTx`) that each backend gives: SQLite's
# write transaction, Redis's WATCH/MULTI.


class _BlobTx(Protocol):
    """The storage primitives of the store, holding no rule: reads that see the transaction's own
    writes, and writes that take effect together or not at all."""

    def exists(self, digest: str) -> bool: ...
    def size(self, digest: str) -> int: ...  # 0 when not stored
    def total(self) -> int: ...
    def claimed(self, owner: str) -> list[str]: ...  # the digests ``owner`` claims
    def claimants(self, digest: str) -> set[str]: ...
    def deadlines(self) -> dict[str, float]: ...  # holder -> until
    def lru(self) -> list[str]: ...  # every stored digest, least recently used first
    def entries(self, owner: str) -> list[tuple[Entry, float]]: ...  # what it claims, each with its last use
    def put_blob(self, digest: str, *, kind: str, name: str, meta: str, data: bytes, new: bool) -> None: ...
    def stamp(self, digest: str) -> None: ...  # now the most recently used
    def claim(self, owner: str, digest: str) -> None: ...
    def drop_blob(self, digest: str) -> None: ...  # with every claim on it
    def drop_claims(self, owner: str) -> None: ...
    def set_hold(self, holder: str, until: float) -> None: ...
    def drop_hold(self, holder: str) -> None: ...


def _check_quota(tx: _BlobTx, owner: str, digest: str, size: int, quota: int, *, address: bool = False) -> None:
    """Raise QuotaError if ``owner`` claiming ``digest`` (``size`` bytes) goes over ``quota``
    (``address``: the owner counts a network address)."""
    claimed = tx.claimed(owner)
    if digest in claimed:
        return
    kept = sum(tx.size(other) for other in claimed)
    if kept + size > quota:
        raise _over_quota(size, kept, quota, address=address)


def _forget_in(tx: _BlobTx, owner: str) -> int:
    """Drop ``owner``'s claims and the blobs no other owner keeps (an address's claim keeps
    nothing), with every claim on them; how many blobs went."""
    dropped = 0
    for digest in tx.claimed(owner):
        others = tx.claimants(digest) - {owner}
        if not any(not other.startswith(ADDRESS_OWNER) for other in others) and tx.exists(digest):
            tx.drop_blob(digest)
            dropped += 1
    tx.drop_claims(owner)
    return dropped


def _release_in(tx: _BlobTx, holder: str) -> int:
    """End ``holder``'s hold: its deadline and claims, then the blobs nobody else keeps; how many blobs went."""
    tx.drop_hold(holder)
    return _forget_in(tx, holder)


def _sweep_in(tx: _BlobTx, now: float) -> int:
    """Release the holders whose deadline has passed (a room that expired without a purge); the
    number of blobs that went with them."""
    return sum(_release_in(tx, holder) for holder, until in sorted(tx.deadlines().items()) if until < now)


def _evict_in(tx: _BlobTx, limit: int, now: float, keep: str | None = None) -> int:
    """Drop least recently used blobs (never ``keep``) until the total is at most ``limit``:
    unheld ones first, held ones (a holder whose deadline is not past claims them) only when no
    unheld one is left; how many went."""
    total = tx.total()
    if total <= limit:
        return 0
    live = {holder for holder, until in tx.deadlines().items() if until >= now}
    dropped, spared = 0, list[str]()
    for held_pass in (False, True):
        for digest in spared if held_pass else tx.lru():
            if total <= limit:
                return dropped
            if digest == keep:
                continue
            if not held_pass and tx.claimants(digest) & live:
                spared.append(digest)  # held: only when nothing else is left
                continue
            total -= tx.size(digest)
            tx.drop_blob(digest)
            dropped += 1
    return dropped


class _StoreRules:
    """The store's operations that decide (a put's quotas and eviction, a forget, a hold), each
    one transaction of the backend's (:meth:`_transact`)."""

    cap_bytes: int
    session_quota: int
    address_quota: int
    clock: Callable[[], float]

    def _transact(self, op: Callable[[_BlobTx], T]) -> T:
        raise NotImplementedError

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
        counted = _address_owner(address)

        def op(tx: _BlobTx) -> str:
            if owner is not None:
                _check_quota(tx, owner, digest, size, self.session_quota)
            if counted is not None:
                _check_quota(tx, counted, digest, size, self.address_quota, address=True)
            tx.put_blob(digest, kind=kind, name=name, meta=meta_json, data=data, new=not tx.exists(digest))
            tx.stamp(digest)
            for claimant in (owner, counted):
                if claimant is not None:
                    tx.claim(claimant, digest)
            now = self.clock()
            _sweep_in(tx, now)
            _evict_in(tx, self.cap_bytes, now, keep=digest)
            return digest

        return self._transact(op)

    def evict(self, *, to_bytes: int | None = None) -> int:
        """Remove least recently used blobs (held ones last) until the total is at most
        ``to_bytes`` (default: ``cap_bytes``); the number removed."""
        limit = self.cap_bytes if to_bytes is None else max(0, int(to_bytes))

        def op(tx: _BlobTx) -> int:
            now = self.clock()
            _sweep_in(tx, now)
            return _evict_in(tx, limit, now)

        return self._transact(op)

    def forget(self, owner: str) -> int:
        """Drop everything ``owner`` claims: blobs that no other owner claims are deleted, the
        others stay for them (an address's claim keeps nothing; a holder's does). The number of
        blobs deleted."""

        def op(tx: _BlobTx) -> int:
            _sweep_in(tx, self.clock())
            return _forget_in(tx, owner)

        return self._transact(op)

    def hold(self, holder: str, digests: list[str], *, until: float) -> int:
        """``holder`` (a room) claims the stored blobs among ``digests`` and holds them until
        ``until`` (seconds since the epoch; a later call moves it): eviction spares them while
        anything else can go, and a forget leaves them. The number of blobs held."""
        wanted = sorted({d for d in digests if _is_digest(d)})

        def op(tx: _BlobTx) -> int:
            _sweep_in(tx, self.clock())
            held = 0
            for digest in wanted:
                if tx.exists(digest):
                    tx.stamp(digest)
                    tx.claim(holder, digest)
                    held += 1
            tx.set_hold(holder, float(until))
            return held

        return self._transact(op)

    def release(self, holder: str) -> int:
        """End ``holder``'s hold: its claims go, with the blobs nobody else keeps; how many blobs."""
        return self._transact(lambda tx: _release_in(tx, holder))

    def holders(self, owner: str) -> dict[str, list[str]]:
        """The live holders (deadline not passed) of each blob ``owner`` claims, for the blobs
        that have one: what a forget by ``owner`` would leave in place for them."""

        def op(tx: _BlobTx) -> dict[str, list[str]]:
            now = self.clock()
            live = {holder for holder, until in tx.deadlines().items() if until >= now}
            found = {digest: sorted(tx.claimants(digest) & live) for digest in sorted(tx.claimed(owner))}
            return {digest: held for digest, held in found.items() if held}

        return self._transact(op)

    def owned(self, owner: str) -> list[Entry]:
        """What ``owner`` claims (what :meth:`forget` would drop), most recently used first."""
        rows = self._transact(lambda tx: tx.entries(owner))
        return [entry for entry, _ in sorted(rows, key=lambda row: (-row[1], row[0].digest))]


class SqliteStore(_StoreRules):
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

    def _transact(self, op: Callable[[_BlobTx], T]) -> T:
        """``op`` on the file in one write transaction (BEGIN IMMEDIATE: writers queue)."""

        def run(conn: sqlite3.Connection) -> T:
            with write_transaction(conn):
                return op(_SqliteBlobTx(conn))

        return self._run(run)

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


# -- SQL helpers (write_transaction, extend_hold, release_hold also for the rooms' own transactions) --


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


class _SqliteBlobTx:
    """The store's primitives on a connection, inside the caller's write transaction: each
    write happens at once (later reads see it), the commit makes them all visible together."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn

    def exists(self, digest: str) -> bool:
        return self.conn.execute("SELECT 1 FROM blobs WHERE digest = ?", (digest,)).fetchone() is not None

    def size(self, digest: str) -> int:
        row = self.conn.execute("SELECT size FROM blobs WHERE digest = ?", (digest,)).fetchone()
        return 0 if row is None else row[0]

    def total(self) -> int:
        return _total(self.conn)

    def claimed(self, owner: str) -> list[str]:
        return [d for (d,) in self.conn.execute("SELECT digest FROM claims WHERE owner = ? ORDER BY digest", (owner,))]

    def claimants(self, digest: str) -> set[str]:
        return {o for (o,) in self.conn.execute("SELECT owner FROM claims WHERE digest = ?", (digest,))}

    def deadlines(self) -> dict[str, float]:
        return dict(self.conn.execute("SELECT holder, until FROM holds").fetchall())

    def lru(self) -> list[str]:
        return [d for (d,) in self.conn.execute("SELECT digest FROM blobs ORDER BY last_used, digest")]

    def entries(self, owner: str) -> list[tuple[Entry, float]]:
        rows = self.conn.execute(
            "SELECT b.digest, b.kind, b.name, b.meta, b.size, b.last_used FROM claims c "
            "JOIN blobs b ON b.digest = c.digest WHERE c.owner = ?",
            (owner,),
        ).fetchall()
        return [(Entry(d, kind, name, _load_meta(meta), size), used) for d, kind, name, meta, size, used in rows]

    def put_blob(self, digest: str, *, kind: str, name: str, meta: str, data: bytes, new: bool) -> None:
        if new:
            self.conn.execute(
                f"INSERT INTO blobs (digest, kind, name, meta, size, last_used, data) VALUES (?, ?, ?, ?, ?, {_NEXT_STAMP}, ?)",
                (digest, kind, name, meta, len(data), time.time_ns(), data),
            )
        else:
            self.conn.execute(
                "UPDATE blobs SET kind = ?, name = ?, meta = ? WHERE digest = ?", (kind, name, meta, digest)
            )

    def stamp(self, digest: str) -> None:
        _touch(self.conn, digest)

    def claim(self, owner: str, digest: str) -> None:
        self.conn.execute("INSERT OR IGNORE INTO claims (owner, digest) VALUES (?, ?)", (owner, digest))

    def drop_blob(self, digest: str) -> None:
        self.conn.execute("DELETE FROM blobs WHERE digest = ?", (digest,))
        self.conn.execute("DELETE FROM claims WHERE digest = ?", (digest,))

    def drop_claims(self, owner: str) -> None:
        self.conn.execute("DELETE FROM claims WHERE owner = ?", (owner,))

    def set_hold(self, holder: str, until: float) -> None:
        extend_hold(self.conn, holder, until, create=True)

    def drop_hold(self, holder: str) -> None:
        self.conn.execute("DELETE FROM holds WHERE holder = ?", (holder,))


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
    """End ``holder``'s hold (:func:`_release_in`) inside the caller's write transaction (a
    room's end and purge do, in their own); how many blobs went."""
    return _release_in(_SqliteBlobTx(conn), holder)


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
_REDIS_TX_TRIES = 200  # a transaction whose reads keep changing under it gives up after so many
_REDIS_RETRIES = 2  # a dropped connection (a restarted server) is retried, a dead one soon reported
_DETAIL_CHARS = 200
_SCRIPT_PLACE = re.compile(r"\s*script: [0-9a-f]{40}, on @user_script:\d+\.?$")  # where in our Lua
# which command of a transaction failed, and its arguments (a blob's bytes among them): the log
# and the page get the server's own error
_PIPELINE_PLACE = re.compile(r"^Command # \d+ \(.*?\) of pipeline caused error: ", re.DOTALL)

# The code every script starts with. ARGV[1] is the prefix. The scripts hold no rule (what is
# kept, what goes and who may put how much are decided in Python, :class:`_StoreRules`): each is
# one read, or one read with its stamp, done at once on the server.
_LUA_COMMON = """
local prefix = ARGV[1]
local lru, stamps = prefix .. 'lru', prefix .. 'stamp'
local function blob_key(digest) return prefix .. 'blob:' .. digest end
local function owner_key(owner) return prefix .. 'owner:' .. owner end
local function stamp(digest) redis.call('ZADD', lru, redis.call('INCR', stamps), digest) end
"""

_LUA_SCRIPTS = {
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


class _RedisBlobTx:
    """The store's primitives on a Redis client, in one WATCH/MULTI transaction: every read first
    watches what it reads and sees the transaction's own writes; the writes are queued and sent
    together (MULTI/EXEC), which Redis refuses when anything watched changed in the meantime."""

    def __init__(self, store: RedisStore, client: Any, scripts: dict[str, Any]):
        self.client, self.scripts, self.prefix = client, scripts, store.prefix
        self.watch_error = store._redis.exceptions.WatchError
        self.pipe = client.pipeline()
        self.watched: set[str] = set()
        self.queued: list[tuple[Any, ...]] = []
        self._delta = 0  # bytes added to the total by the queued writes
        self._gone: set[str] = set()  # blobs dropped
        self._new: dict[str, int] = {}  # blobs made: their sizes
        self._sizes: dict[str, int] = {}
        self._added: dict[str, set[str]] = {}  # owner -> the digests it claims now
        self._cleared: set[str] = set()  # owners whose former claims were dropped
        self._deadlines: dict[str, float | None] = {}  # holder -> its new deadline (None: released)
        self._stamped: list[str] = []  # made the most recently used, in this order

    def _read(self, key: str) -> Any:
        """The pipeline, reading ``key`` at once, having watched it."""
        if key not in self.watched:
            self.pipe.watch(key)
            self.watched.add(key)
        return self.pipe

    def _queue(self, *command: Any) -> None:
        self.queued.append(command)

    def commit(self) -> bool:
        """Send the queued writes in one MULTI/EXEC; False when a watched key had changed (nothing written)."""
        try:
            if not self.queued:
                return True
            self.pipe.multi()
            for command in self.queued:
                self.pipe.execute_command(*command)
            self.pipe.execute()
            return True
        except self.watch_error:
            return False
        finally:
            self.pipe.reset()

    # -- reads --
    def exists(self, digest: str) -> bool:
        if digest in self._gone:
            return False
        if digest in self._new:
            return True
        key = f"{self.prefix}blob:{digest}"
        return self._read(key).exists(key) == 1

    def size(self, digest: str) -> int:
        if digest in self._gone:
            return 0
        if digest in self._new:
            return self._new[digest]
        if digest not in self._sizes:
            key = f"{self.prefix}blob:{digest}"
            self._sizes[digest] = int(self._read(key).hget(key, "size") or 0)
        return self._sizes[digest]

    def total(self) -> int:
        key = f"{self.prefix}total"
        return int(self._read(key).get(key) or 0) + self._delta

    def claimed(self, owner: str) -> list[str]:
        found = set()
        if owner not in self._cleared:
            key = f"{self.prefix}owner:{owner}"
            found = {_text(d) for d in self._read(key).smembers(key)}
        return sorted((found | self._added.get(owner, set())) - self._gone)

    def claimants(self, digest: str) -> set[str]:
        if digest in self._gone:
            return set()
        key = f"{self.prefix}claims:{digest}"
        found = {_text(o) for o in self._read(key).smembers(key)} - self._cleared
        return found | {owner for owner, digests in self._added.items() if digest in digests}

    def deadlines(self) -> dict[str, float]:
        key = f"{self.prefix}holders"
        found = {_text(h): float(until) for h, until in self._read(key).zrange(key, 0, -1, withscores=True)}
        for holder, until in self._deadlines.items():
            if until is None:
                found.pop(holder, None)
            else:
                found[holder] = until
        return found

    def lru(self) -> list[str]:
        # not watched: a blob read meanwhile moves in the order, which changes no total (a blob
        # dropped, or added, by another process is: its key, or the total, is watched)
        order = [_text(d) for d in self.client.zrange(f"{self.prefix}lru", 0, -1)]
        moved = set(self._stamped)
        return [d for d in order if d not in moved and d not in self._gone] + [
            d for d in self._stamped if d not in self._gone
        ]

    def entries(self, owner: str) -> list[tuple[Entry, float]]:
        rows = self.scripts["owned"](keys=[], args=[self.prefix, owner], client=self.client)
        # stamps are integers below 2**53, so their float form orders them exactly
        return [
            (Entry(_text(digest), _text(kind), _text(name), _load_meta(_text(meta)), int(size)), float(used))
            for digest, kind, name, meta, size, used in rows
        ]

    # -- writes --
    def put_blob(self, digest: str, *, kind: str, name: str, meta: str, data: bytes, new: bool) -> None:
        key = f"{self.prefix}blob:{digest}"
        if new:
            self._queue("HSET", key, "kind", kind, "name", name, "meta", meta, "size", len(data), "data", data)
            self._queue("INCRBY", f"{self.prefix}total", len(data))
            self._new[digest], self._delta = len(data), self._delta + len(data)
        else:
            self._queue("HSET", key, "kind", kind, "name", name, "meta", meta)

    def stamp(self, digest: str) -> None:
        # a stamp later than every one given so far (INCR is atomic on its own)
        self._queue("ZADD", f"{self.prefix}lru", int(self.client.incr(f"{self.prefix}stamp")), digest)
        self._stamped = [d for d in self._stamped if d != digest] + [digest]

    def claim(self, owner: str, digest: str) -> None:
        self._queue("SADD", f"{self.prefix}owner:{owner}", digest)
        self._queue("SADD", f"{self.prefix}claims:{digest}", owner)
        self._added.setdefault(owner, set()).add(digest)

    def drop_blob(self, digest: str) -> None:
        size = self.size(digest)
        for owner in self.claimants(digest):
            self._queue("SREM", f"{self.prefix}owner:{owner}", digest)
        self._queue("DEL", f"{self.prefix}blob:{digest}", f"{self.prefix}claims:{digest}")
        self._queue("ZREM", f"{self.prefix}lru", digest)
        self._queue("DECRBY", f"{self.prefix}total", size)
        self._gone.add(digest)
        self._delta -= size

    def drop_claims(self, owner: str) -> None:
        for digest in self.claimed(owner):
            self._queue("SREM", f"{self.prefix}claims:{digest}", owner)
        self._queue("DEL", f"{self.prefix}owner:{owner}")
        self._cleared.add(owner)
        self._added[owner] = set()

    def set_hold(self, holder: str, until: float) -> None:
        self._queue("ZADD", f"{self.prefix}holders", repr(float(until)), holder)
        self._deadlines[holder] = float(until)

    def drop_hold(self, holder: str) -> None:
        self._queue("ZREM", f"{self.prefix}holders", holder)
        self._deadlines[holder] = None


class RedisStore(_StoreRules):
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

    def _transact(self, op: Callable[[_BlobTx], T]) -> T:
        """``op`` in one WATCH/MULTI transaction, run again while another client changes what it
        read before its writes go (a bounded number of times)."""

        def run(client: redis.Redis, scripts: dict[str, Any]) -> T:
            for _ in range(_REDIS_TX_TRIES):
                tx = _RedisBlobTx(self, client, scripts)
                try:
                    result = op(tx)
                except BaseException:
                    tx.pipe.reset()
                    raise
                if tx.commit():
                    return result
            raise StoreError("The app's store is busy (other app processes are writing to it); try again in a moment.")

        return self._call(run)

    @property
    def holders_key(self) -> str:
        """The sorted set of holders' deadlines (a room's scripts move its own deadline)."""
        return f"{self.prefix}holders"

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
    detail = _SCRIPT_PLACE.sub(
        "", _scrub(" ".join(_PIPELINE_PLACE.sub("", str(err)).split()) or type(err).__name__, secrets)
    )
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
