"""Streamlit's own code, sent compressed.

Streamlit serves the files of its frontend (``<base>/static/...``: the 61 files a page's document
names, ~2.3 MB of JavaScript on every first visit, then each widget's code) uncompressed: it
keeps them out of its gzip middleware, since compressing every answer again costs its server's
CPU under load. Over a classroom's Wi-Fi that is ~70 MB for thirty first visits. Here each file
is compressed once and the compressed bytes are kept (by the digest of the file's bytes), about
0.3 of the size: the files every page names by the start-up warm-up, any other a moment after it
was first sent as it is. No answer waits for a compression: done while the server runs a page's
script, compressing the widgets' code on demand made a first visit ~0.2 s slower.

An answer goes out compressed only when the browser accepts gzip, the answer is a whole file
(200, no range asked) of a type that compresses (scripts, styles, JSON, SVG: not fonts or images,
which are compressed already), not encoded yet, and its compressed bytes are kept. Its ETag is
made weak (the same validator, now for the same content in another encoding) and it varies by
Accept-Encoding.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import queue
import re
import threading
import time
from pathlib import Path

from .page_shell import Headers, base_path, rewrite_answers

__all__ = [
    "CompressedAssetsMiddleware",
    "gzipped",
    "compressed",
    "wait_compressed",
    "warm_assets",
    "named_files",
    "is_asset_path",
]

_COMPRESSIBLE = ("text/", "application/javascript", "application/json", "image/svg+xml")
_SMALLEST = 512  # bytes: under this gzip's own header and trailer outweigh what it saves
_KEPT = 2048  # compressed files kept (Streamlit's whole frontend: ~330 files, ~7 MB compressed)
_LATER_S = 1.0  # a file first sent as it is is compressed this long after: not during its page's load

_cache: dict[bytes, bytes] = {}  # blake2b of a file's bytes -> those bytes gzipped
_queued: set[bytes] = set()  # digests waiting for the compressing thread
_later: queue.SimpleQueue[tuple[bytes, bytes]] = queue.SimpleQueue()
_lock = threading.Lock()
_worker: list[threading.Thread] = []
_later_done = threading.Event()  # set whenever no file waits for the background thread
_later_done.set()


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def gzipped(data: bytes) -> bytes:
    """``data`` gzipped (level 6, no timestamp: the same bytes every time), and kept: from the
    cache when compressed before.

    >>> packed = gzipped(b"merge " * 200)
    >>> gzip.decompress(packed) == b"merge " * 200, len(packed) < 100, gzipped(b"merge " * 200) is packed
    (True, True, True)
    """
    return _kept(_digest(data), data)


def _kept(key: bytes, data: bytes) -> bytes:
    """``data`` (whose digest is ``key``) gzipped, from the cache or compressed and put there."""
    with _lock:
        packed = _cache.get(key)
    if packed is None:
        packed = gzip.compress(data, compresslevel=6, mtime=0)
        with _lock:
            if len(_cache) >= _KEPT:
                _cache.pop(next(iter(_cache)))  # the oldest
            packed = _cache.setdefault(key, packed)
    return packed


def compressed(data: bytes) -> bytes | None:
    """``data``'s gzipped bytes if they are kept; else None, and ``data`` is compressed in the
    background a moment later (:data:`_LATER_S`), for the next browser that asks.

    >>> compressed(b"a page's widget code " * 100) is None
    True
    >>> wait_compressed(10) and gzip.decompress(compressed(b"a page's widget code " * 100))[:21]
    b"a page's widget code "
    """
    key = _digest(data)
    with _lock:
        packed = _cache.get(key)
        if packed is not None or key in _queued:
            return packed
        _queued.add(key)
        _later_done.clear()
        if not _worker:
            _worker.append(threading.Thread(target=_compress_later, name="bpe-explorer-assets", daemon=True))
            _worker[0].start()
    _later.put((key, data))
    return None


def wait_compressed(timeout: float) -> bool:
    """Wait until no file waits to be compressed (at most ``timeout`` seconds); whether none does."""
    return _later_done.wait(timeout)


def _compress_later() -> None:
    while True:
        batch = [_later.get()]
        time.sleep(_LATER_S)  # the page that asked is still loading: after it, what it asked for at once
        with contextlib.suppress(queue.Empty):
            while True:
                batch.append(_later.get_nowait())
        for key, data in batch:
            _kept(key, data)
            with _lock:
                _queued.discard(key)
                if not _queued:
                    _later_done.set()


def is_asset_path(path: str, *, base: str = "") -> bool:
    """Whether a request's path names a file of Streamlit's frontend (under ``<base>/static/``).

    >>> is_asset_path("/static/js/index.DormvYxC.js"), is_asset_path("/bpe/static/css/a.css", base="/bpe/")
    (True, True)
    >>> is_asset_path("/Train"), is_asset_path("/static/js/a.js", base="bpe"), is_asset_path("/app/static/x.png")
    (False, False, False)
    """
    prefix = "/" + base.strip("/") if base.strip("/") else ""
    return path.startswith(prefix + "/static/")


def _accepts_gzip(headers: Headers) -> bool:
    """Whether a request's Accept-Encoding takes gzip (not refused with ``q=0``).

    >>> _accepts_gzip([(b"accept-encoding", b"gzip, deflate, br, zstd")]), _accepts_gzip([(b"accept-encoding", b"br")])
    (True, False)
    >>> _accepts_gzip([(b"accept-encoding", b"gzip;q=0, br")]), _accepts_gzip([])
    (False, False)
    """
    for name, value in headers:
        if name.lower() == b"accept-encoding":
            for part in value.decode("latin-1").lower().split(","):
                coding, _, params = part.partition(";")
                if coding.strip() == "gzip":
                    return not re.fullmatch(r"\s*q\s*=\s*0(\.0*)?\s*", params)
    return False


def _compressible(headers: Headers) -> bool:
    """Whether an answer with these headers is worth compressing: a type that compresses, not
    encoded already.

    >>> _compressible([(b"content-type", b"text/javascript; charset=utf-8")]), _compressible([(b"content-type", b"font/woff2")])
    (True, False)
    >>> _compressible([(b"content-type", b"text/css"), (b"content-encoding", b"br")])
    False
    """
    values = {k.lower(): v.decode("latin-1").lower() for k, v in headers}
    if values.get(b"content-encoding", "identity") not in ("", "identity"):
        return False
    return values.get(b"content-type", "").startswith(_COMPRESSIBLE)


class CompressedAssetsMiddleware:
    """ASGI middleware: a file of Streamlit's frontend goes out gzipped to a browser that takes
    it (:func:`gzipped`); every other request and answer passes as it is."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "GET"
            or not is_asset_path(scope.get("path", ""), base=base_path())
            or not _accepts_gzip(scope.get("headers", []))
            or any(name.lower() == b"range" for name, _ in scope.get("headers", []))
        ):
            await self.app(scope, receive, send)
            return

        def compress(headers: Headers, data: bytes) -> tuple[Headers, bytes]:
            packed = compressed(data) if len(data) >= _SMALLEST else None
            return (headers, data) if packed is None else (_encoded_headers(headers, len(packed)), packed)

        await rewrite_answers(self.app, scope, receive, send, takes=_compressible, rewrite=compress)


def _encoded_headers(headers: Headers, length: int) -> Headers:
    """A file's answer headers for its gzipped bytes: the length, the encoding, Vary, a weak ETag.

    >>> _encoded_headers([(b"content-length", b"900"), (b"etag", b'"abc"'), (b"content-type", b"text/css")], 300)
    [(b'etag', b'W/"abc"'), (b'content-type', b'text/css'), (b'content-length', b'300'), (b'content-encoding', b'gzip'), (b'vary', b'Accept-Encoding')]
    """
    out = []
    for name, value in headers:
        low = name.lower()
        if low in (b"content-length", b"content-encoding", b"vary"):
            continue
        if low == b"etag" and not value.startswith(b"W/"):
            value = b"W/" + value
        out.append((name, value))
    return [
        *out,
        (b"content-length", str(length).encode()),
        (b"content-encoding", b"gzip"),
        (b"vary", b"Accept-Encoding"),
    ]


_NAMED = re.compile(r'(?:href|src)="(?:\./)?(static/[^"]+)"')


def named_files(document: str) -> list[str]:
    """The files of Streamlit's frontend a page's HTML names (scripts, styles, fonts), each once,
    in their order: what a browser fetches before the page can run.

    >>> named_files('<script src="./static/js/index.js"></script><link href="./static/css/a.css"><a href="/Train">')
    ['static/js/index.js', 'static/css/a.css']
    """
    return list(dict.fromkeys(_NAMED.findall(document)))


def warm_assets() -> int:
    """Compress the files every page's document names (Streamlit's ``index.html``), ahead of the
    first visit; how many. Those a page asks for later (its widgets' code) are compressed a moment
    after they were first sent (:func:`compressed`): a few KB each."""
    import streamlit

    static = Path(streamlit.__file__).parent / "static"
    done = 0
    for name in named_files((static / "index.html").read_text(encoding="utf-8")):
        path = static / name
        if path.suffix in (".js", ".css", ".json", ".svg") and path.is_file():
            data = path.read_bytes()
            if len(data) >= _SMALLEST:
                gzipped(data)
                done += 1
    return done
