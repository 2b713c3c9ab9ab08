"""What a server does when it starts, before any browser asks: the first visit of a class should
find the pages' code imported and the bundled tables loaded, not pay for them.

``app.py`` hands :func:`lifespan` to ``st.App``; ``streamlit run app.py`` finds that app and
runs it at server start: its listening socket is set to send each write at once
(:func:`send_at_once`), then the warm-up runs in a daemon thread, so the server answers at once;
``/warm`` reports its progress as JSON (``{"ready": false, "done": ["imports", ...]}``), for the
benchmarks and for whoever wants to know when a freshly started server is ready for a class.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import math
import os
import re
import socket
import threading
import time
from collections.abc import AsyncIterator

__all__ = ["lifespan", "send_at_once", "warm_up", "warm_state", "warm_modules", "client_address", "ROUTES"]

_log = logging.getLogger(__name__)


def warm_modules() -> list[str]:
    """The modules a first visit imports (pandas, altair and pyarrow come with them): the
    navigation, the links and every page's view, from the page registry."""
    from .nav import PAGES  # imported by the warm-up thread, not when the server loads this module

    return [f"{__package__}.{name}" for name in ("nav", "links", *(p.view for p in PAGES))]


_state: dict = {"ready": False, "started": None, "done": [], "seconds": None}
_lock = threading.Lock()
_thread: list[threading.Thread] = []


def warm_state() -> dict:
    """A copy of the warm-up's progress: ready, the steps done, seconds taken."""
    with _lock:
        return {**_state, "done": list(_state["done"])}


def _mark(step: str) -> None:
    with _lock:
        _state["done"].append(step)


def _warm() -> None:
    # each step on its own: a failure leaves that part to the first page that needs it
    from ..analysis.compare import warm_languages
    from ..formats.pretrained import warm_pretrained
    from .assets import warm_assets

    t0 = time.monotonic()
    steps = (
        ("imports", lambda: [importlib.import_module(m) for m in warm_modules()]),
        ("streamlit", _streamlit_once),
        ("default corpus", _default_corpus),
        ("tables", lambda: warm_pretrained().join()),
        ("languages", warm_languages),  # the Compare page's parity rows of the bundled tables
        ("assets", warm_assets),  # Streamlit's code that every page names, compressed
    )
    for name, step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 - warming is best effort; the page reports a real failure
            _log.warning("warm-up step %r failed; the first page that needs it will do it", name, exc_info=True)
        else:
            _mark(name)
    with _lock:
        _state["ready"] = True
        _state["seconds"] = round(time.monotonic() - t0, 3)


def _streamlit_once() -> None:
    """What Streamlit does once per process, on the first page run: paid here, not by the first
    visitor (a profile of a first visit of Train: 0.35 s of its script run's 0.7 s). The page
    icon's check imports Streamlit's emoji catalogue and compiles its pattern (~0.2 s); the
    first element sent asks whether it runs in a REPL, which walks the stack with ``inspect``,
    reading source files (~0.15 s); it is asked once and, in a server, says nothing."""
    from streamlit import delta_generator, string_util

    from .nav import PAGE_ICON

    string_util.is_emoji(PAGE_ICON)
    once = getattr(delta_generator, "_maybe_print_use_warning", None)  # Streamlit's own, private
    if once is not None:
        once()


def _default_corpus() -> None:
    """What a first visit of any page computes before it draws: the default corpus's step-0
    trainer under the default preset (its word counts with it; both shared by every session) and
    the Train stepper's first steps of it, Home's miniature and the Corpus page's sizes; and that
    run trained to its end, which a link to one of its steps copies."""
    from . import corpus_view, home_view, state, train_view

    state.warm_default()
    train_view.warm_default()
    home_view.toy()
    corpus_view.warm_default()


def warm_up() -> threading.Thread:
    """Start the warm-up (once per process) and return its thread."""
    with _lock:
        if not _thread:
            _state["started"] = time.time()
            thread = threading.Thread(target=_warm, name="bpe-explorer-warm-up", daemon=True)
            thread.start()
            _thread.append(thread)
        return _thread[0]


def send_at_once() -> int:
    """Turn Nagle's algorithm off on this process's listening TCP sockets (the connections they
    accept inherit it, on Linux as on BSD and macOS); how many there were.

    Why: Streamlit binds its server's socket itself, with protocol 0, and asyncio sets
    ``TCP_NODELAY`` only on the connections of a socket whose protocol is ``IPPROTO_TCP``. A
    response goes out as two writes, its head then its body; with Nagle's algorithm the body waits
    until the browser acknowledges the head, and a browser's system delays that acknowledgement
    (40 ms on Linux, up to 200 ms on Windows) on a connection it keeps alive: every file after a
    connection's first paid it. A page's 61 files of code took 0.42 s over the browser's six
    connections instead of 0.08 s; the messages of a page's WebSocket wait the same way.

    >>> with socket.create_server(("127.0.0.1", 0)) as listening:
    ...     send_at_once() >= 1, listening.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    (True, True)
    """
    where = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    try:
        fds = [int(name) for name in os.listdir(where)]
    except (OSError, ValueError):
        return 0  # a system that does not list a process's descriptors: its sockets stay as they are
    done = 0
    for fd in fds:
        try:
            second = os.dup(fd)  # a handle of our own on the descriptor: closed below, not the socket
        except OSError:
            continue  # closed since the listing
        try:
            sock = socket.socket(fileno=second)
        except OSError:
            os.close(second)  # not a socket
            continue
        with sock:
            try:
                if (
                    sock.family in (socket.AF_INET, socket.AF_INET6)
                    and sock.type == socket.SOCK_STREAM
                    and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
                ):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    done += 1
            except OSError:
                continue
    return done


@contextlib.asynccontextmanager
async def lifespan(_app) -> AsyncIterator[None]:
    """The app's start and stop (``st.App(..., lifespan=lifespan)``): its listening socket set to
    send at once (it is bound by now; :func:`send_at_once`), then the warm-up, in the background."""
    if send_at_once():
        _mark("sockets")
    warm_up()
    yield


async def _warm_route(_request):
    from starlette.responses import JSONResponse

    return JSONResponse(warm_state())


async def _jobs_route(_request):
    from starlette.responses import JSONResponse

    from . import server

    return JSONResponse(server.pool().stats())


_waiters: list = []


async def _unless_gone(request, waiting) -> bool:
    """Await ``waiting`` (a held request's wait) unless the client goes first (its page left or
    closed: the browser drops the connection); whether it was ``waiting`` that ended. A held
    request whose page has gone is let go at once: otherwise it holds its slot, and a stopping
    server waits for it, up to ``follow.LONG_POLL_S`` (a restart mid-class took 5 s longer)."""
    import asyncio

    async def gone() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    wait, leave = asyncio.ensure_future(waiting), asyncio.ensure_future(gone())
    try:
        await asyncio.wait({wait, leave}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (wait, leave):
            task.cancel()
        # the cancelled wait leaves the room's wait list before this returns
        await asyncio.gather(wait, leave, return_exceptions=True)
    return wait.done() and not wait.cancelled()


_LOOPBACK = ("127.0.0.1", "::1")  # the server's own machine: no address to count (as st.context.ip_address)


def client_address(request) -> str | None:
    """The client's network address as the connection says; None for the server's own machine.
    Behind ``python -m explorer serve``, haproxy forwards the client's address (X-Forwarded-For,
    which it sets itself) and the server (uvicorn) takes it only from a loopback peer: the proxy."""
    host = request.client.host if request.client else None
    return None if host in (None, *_LOOPBACK) else host


async def _room_rev_route(request):
    """A room's counters (rev, tally, step) for the pages that follow it (``explorer.ui.follow``):
    at once, or, with ``what`` and ``seen``, when the watched counter is no longer ``seen``. The request names a
    member of the room or the teacher's follow token; a missing room and a wrong credential get
    the same 404, and past the address's limit of those a minute, 429."""
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse

    from . import class_view, follow

    query = request.query_params
    code, member, token = query.get("code", "")[:16], query.get("member", "")[:64], query.get("follow", "")[:64]
    what, seen = query.get("what"), query.get("seen", "")
    address = client_address(request)

    def read() -> tuple[int, int, int] | None:
        revs = class_view.rooms().revs_for(code, member=member or None, token=token or None)
        if revs is not None and member:
            class_view.mark_seen(code, member)
        elif revs is not None:  # the teacher's page is open: the room is in use
            class_view.mark_teacher(code)
        return revs

    try:
        revs = await run_in_threadpool(read)
        if (
            revs is not None
            and what in follow.WATCHED
            and re.fullmatch(r"-?[0-9]{1,15}", seen)
            and revs[follow.WATCHED.index(what)] == int(seen)
        ):
            if not _waiters:
                _waiters.append(follow.Waiters(lambda codes: {c: class_view.rooms().revs(c) for c in codes}))
            if not await _unless_gone(request, _waiters[0].moved(code, what, int(seen))):
                return JSONResponse({"gone": "the page left"}, status_code=499)  # nobody reads it
            revs = await run_in_threadpool(read)
        over = None if revs is not None else await run_in_threadpool(lambda: class_view.rooms().miss(address=address))
    except Exception:  # noqa: BLE001 - the store unreachable: the page asks again
        return JSONResponse({"error": "the store cannot be read"}, status_code=503)
    if over is not None:
        return JSONResponse(
            {"error": "too many requests for rooms that do not answer them; try again in a minute"},
            status_code=429,
            headers={"Cache-Control": "no-store", "Retry-After": str(max(1, math.ceil(over.frees_at - over.now)))},
        )
    if revs is None:  # no such room, or not this member's or teacher's: one answer for both
        return JSONResponse({"gone": True}, status_code=404, headers={"Cache-Control": "no-store"})
    return JSONResponse(dict(zip(follow.WATCHED, revs, strict=True)), headers={"Cache-Control": "no-store"})


def _routes() -> list:
    from starlette.routing import Route

    # /jobs: the worker pool's counts (workers, jobs waiting, workers replaced after a kill or a crash)
    # /room-rev: a room's counters, long-polled by every page in the room (explorer.ui.follow)
    return [Route("/warm", _warm_route), Route("/jobs", _jobs_route), Route("/room-rev", _room_rev_route)]


ROUTES = _routes()
