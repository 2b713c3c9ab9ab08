"""What the sessions of one server share: its limits (read from the environment, so a teacher
can set them without editing code) and the lane that heavy training takes turns in.

    BPE_EXPLORER_STEP_MIB       corpus size up to which a session steps through with full
                                records (default 4; larger corpora get an offer: a sample, or
                                training to the end without step records)
    BPE_EXPLORER_IDLE_MINUTES   a session untouched this long lets its trainer go; it is
                                rebuilt, at the same step, when the session comes back (default 30)
    BPE_EXPLORER_WORKERS        worker processes for heavy jobs (default: one per core beyond the
                                first, at least one)
    BPE_EXPLORER_JOB_MIB        the memory one worker may use; a job over it is stopped with a
                                message (default 2048)
    BPE_EXPLORER_SESSION_TRAIN_MIB      the memory one session's trainer may take in the server
                                (its footprint, ``explorer.bpe.budget``; default 256): a corpus
                                over it is offered a sample, a training stops at the merge that
                                would pass it, with a sentence
    BPE_EXPLORER_SESSION_TRAIN_SECONDS  the server's CPU time one session's trainer may take
                                (default 300); the rest trains in a worker, without step records
    BPE_EXPLORER_STEP_WORK      the most positions one merge of a session's trainer may visit
                                (default 200,000: about 0.25 s of the server's time); a corpus
                                over it is offered a sample small enough
    BPE_EXPLORER_SERVER_MIB     the server process's memory ceiling (default 1536): no training
                                goes on past it

Nothing here imports streamlit: the state module wires it to sessions.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

from .. import settings
from ..bpe.budget import Budget, Ceiling
from ..serving.workers import Job, Pool

__all__ = [
    "DEFAULT_STEP_MIB",
    "DEFAULT_IDLE_MINUTES",
    "step_limit",
    "idle_seconds",
    "session_budget",
    "worker_budget",
    "Lane",
    "HEAVY",
    "pool",
    "WORKER_MIN_BYTES",
    "wait_for",
]

# A Step's script hands the GIL over at every message it sends (a socket write); with a heavy
# thread running, each hand-back waits out the switch interval (5 ms by default): a Step beside a
# "Run to end" took ~40 such waits (bench/load.py, "beside the runs"). 1 ms keeps that short.
SWITCH_INTERVAL_S = 0.001
sys.setswitchinterval(SWITCH_INTERVAL_S)

# the defaults, as ``explorer.settings`` declares them (where each variable is read)
DEFAULT_STEP_MIB = settings.default_number("BPE_EXPLORER_STEP_MIB")
DEFAULT_IDLE_MINUTES = settings.default_number("BPE_EXPLORER_IDLE_MINUTES")
# inputs above this go to a worker process (pre-tokenizing, splitting or reading them holds the
# interpreter ~1 s a MiB, which every other session's Step needs); below it, a job's round trip
# costs more than it saves
WORKER_MIN_BYTES = 256 * 1024
_log = logging.getLogger(__name__)


def step_limit() -> int:
    """Bytes of corpus a session may step through with full records (``BPE_EXPLORER_STEP_MIB``:
    ``explorer.settings`` reads it and says what a bad value gives)."""
    return settings.size_bytes("BPE_EXPLORER_STEP_MIB")


def idle_seconds() -> float:
    """How long a session may leave its trainer untouched before it is let go."""
    return settings.number("BPE_EXPLORER_IDLE_MINUTES") * 60


def session_budget() -> Budget:
    """What one session's trainer may take of the server: memory, CPU time, the work of one
    step, all of it under the server's ceiling (``BPE_EXPLORER_SERVER_MIB``, by default
    1,536 MiB).

    >>> b = session_budget(); b.memory_bytes // 2**20, b.step_work
    (256, 200000)
    """
    return Budget(
        memory_bytes=settings.size_bytes("BPE_EXPLORER_SESSION_TRAIN_MIB"),
        seconds=settings.number("BPE_EXPLORER_SESSION_TRAIN_SECONDS"),
        step_work=settings.count("BPE_EXPLORER_STEP_WORK"),
        ceiling=Ceiling(settings.size_bytes("BPE_EXPLORER_SERVER_MIB")),
        whose="each session",
    )


def worker_budget() -> Budget:
    """A session's training in a worker process: what it keeps (its tokens and records, which come
    back to the server) stays within the session's memory; the worker's own limit guards the rest."""
    return Budget(memory_bytes=session_budget().memory_bytes, whose="each session")


class Lane:
    """Heavy work takes turns here, first come first served, ``width`` at a time: thirty students
    pressing "Run to end" together train one after another, chunk by chunk, while every Step
    (light work, which never enters the lane) competes with one heavy job at most.

    >>> lane = Lane()
    >>> with lane.turn():
    ...     lane.busy, lane.waiting
    (1, 0)
    """

    def __init__(self, width: int = 1):
        self.width = width
        self.busy = 0
        self._queue: deque[object] = deque()
        self._cond = threading.Condition()

    @property
    def waiting(self) -> int:
        """Jobs queued for a turn (not counting those running)."""
        return len(self._queue)

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        ticket = object()
        with self._cond:
            self._queue.append(ticket)
            # FIFO: a job that just finished a chunk queues behind those already waiting
            self._cond.wait_for(lambda: self._queue[0] is ticket and self.busy < self.width)
            self._queue.popleft()
            self.busy += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self.busy -= 1
                self._cond.notify_all()


HEAVY = Lane()


_POOL: list[Pool] = []
_POOL_LOCK = threading.Lock()


def pool() -> Pool:
    """The server's worker processes for heavy jobs (counting a big corpus, the Compare page's
    trainings and evaluations), started with the first job; sized by the environment."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(
                Pool(settings.count("BPE_EXPLORER_WORKERS"), memory_mib=settings.number("BPE_EXPLORER_JOB_MIB"))
            )
        return _POOL[0]


def wait_for(job: Job, show, *, what: str = "") -> Any:
    """The job's value, showing its progress meanwhile (``show(fraction, text)``, a progress bar's
    ``progress``). Whatever ends the wait — the value, an error, or a rerun that interrupts the
    page (Stop) — the job is ended too, so no worker goes on computing for nobody."""
    try:
        while not job.wait(0.1):
            fraction, text = job.progress
            queued = pool().waiting
            show(
                min(1.0, fraction),
                f"{what}{text or 'waiting for a worker'}"
                + (f" ({queued} other job{'s' * (queued != 1)} waiting)" if queued else ""),
            )
        return job.result()
    finally:
        job.cancel()
