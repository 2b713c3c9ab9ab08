"""Heavy work in worker processes: one session's big job never holds the interpreter that
every other session's Step runs in.

A ``Pool`` keeps ``workers`` processes, started from a fork server that has imported the engine
(a new worker is ready in tens of milliseconds), and runs one job at a time in each::

    pool = Pool(workers=1, memory_mib=2048)
    job = pool.submit(count_words, texts, config)       # queued, then run in a worker
    job.progress                                        # (0.4, "counting") while it runs
    job.cancel()                                        # the worker is killed and replaced
    job.result(timeout=60)                              # the value, or JobError with a sentence

A job is a module-level function (sent by name) and arguments that pickle; its value comes back
pickled, so jobs return compact results (merges, counts, curves), not whole trainers. A function
that takes a keyword-only ``progress`` gets one when submitted with ``progress=True``: it calls
``progress(fraction, text)`` and the parent keeps the latest call, sent at most every 50 ms.

Limits: each worker runs under an address-space limit (``memory_mib``), so a job that outgrows
it fails with a MemoryError, which ends that worker; a worker that dies (killed, out of memory,
a crash in a C extension) fails its job with a sentence and is replaced before the next job.
Nothing here imports streamlit.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import logging
import multiprocessing
import os
import queue
import resource
import signal
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Literal, NoReturn

from ..errors import ExplorerError
from ..settings import SETTINGS

__all__ = ["Pool", "Job", "JobError", "JobCancelled", "default_workers", "PRELOAD"]

JobState = Literal["queued", "running", "done", "failed", "cancelled"]

# what the fork server imports once, so that every worker forked from it starts warm
PRELOAD = [
    "explorer",
    "explorer.bpe.trainer",
    "explorer.analysis.compare",
    "explorer.stages.pipeline",
    "explorer.serving.workers",
]
_PROGRESS_EVERY_S = 0.05
_POLL_S = 0.05
_log = logging.getLogger(__name__)
_OVER_BUDGET = "the job needed more memory than a worker may use on this server; try a smaller corpus or fewer merges"
# a worker's exit status after it ran out of memory: the "fatal" message it tries to send first
# may itself not fit (the job's objects are still held while the MemoryError is handled)
_EXIT_OVER_BUDGET = 3


class JobError(ExplorerError):
    """A job that did not finish: its sentence says why (over its memory budget, its worker
    stopped, or the error the job itself raised)."""


class JobCancelled(JobError):
    """The job was cancelled before it finished."""


def default_workers() -> int:
    """One worker per core beyond the first (the server's own interpreter keeps one), at least
    one: 1 on a 2-core machine (``BPE_EXPLORER_WORKERS``' default).

    >>> default_workers() >= 1
    True
    """
    return int(SETTINGS["BPE_EXPLORER_WORKERS"].default_value() or 1)


class Job:
    """One submitted job: its state, latest progress, and its value or error once finished."""

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict, wants_progress: bool):
        self.fn, self.args, self.kwargs, self.wants_progress = fn, args, kwargs, wants_progress
        self.state: JobState = "queued"
        self.progress: tuple[float, str] = (0.0, "")
        self.peak_mib: float | None = None  # the worker's peak resident memory, once finished
        self._value: Any = None
        self._error: JobError | None = None
        self._cancel = threading.Event()
        self._finished = threading.Event()

    def done(self) -> bool:
        return self._finished.is_set()

    def cancel(self) -> None:
        """Stop the job: a queued one never starts, a running one's worker is killed (and
        replaced) within the pool's poll interval."""
        self._cancel.set()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the job has finished (in any state)."""
        return self._finished.wait(timeout)

    def result(self, timeout: float | None = None) -> Any:
        """The job's value; raises JobError (JobCancelled) if it did not finish, or the
        ExplorerError the job raised; TimeoutError if still running after ``timeout``."""
        if not self._finished.wait(timeout):
            raise TimeoutError("the job is still running")
        if self._error is not None:
            raise self._error
        return self._value

    def _finish(self, state: JobState, value: Any = None, error: JobError | None = None) -> None:
        self.state, self._value, self._error = state, value, error
        self._finished.set()


# ---- in the worker ---------------------------------------------------------------------------


def _worker_main(conn: Connection, memory_bytes: int | None) -> None:
    """A worker's loop: receive (module, name, args, kwargs, wants_progress), send back
    ("progress", fraction, text)* then ("done", value, peak KiB), ("error", ExplorerError), or
    ("fatal", JobError) before it ends itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    if memory_bytes:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    while True:
        try:
            module, name, args, kwargs, wants_progress = conn.recv()
        except (EOFError, OSError):
            return
        except MemoryError:  # the job's own arguments do not fit the budget
            _over_budget(conn)
        last = [0.0]

        def progress(fraction: float, text: str = "") -> None:
            now = time.monotonic()
            if now - last[0] >= _PROGRESS_EVERY_S or fraction >= 1.0:
                last[0] = now
                conn.send(("progress", float(fraction), str(text)))

        try:
            fn = getattr(importlib.import_module(module), name)
            value = fn(*args, **(dict(kwargs, progress=progress) if wants_progress else kwargs))
            conn.send(("done", value, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
        except MemoryError:  # a worker that ran out of memory may be in a bad way: a fresh one replaces it
            _over_budget(conn)
        except ExplorerError as err:
            conn.send(("error", err))
        except Exception as err:  # noqa: BLE001 - any failure of the job is its session's message
            _log.warning("job %s.%s failed:\n%s", module, name, traceback.format_exc())
            conn.send(("error", JobError(f"the job failed: {type(err).__name__}: {err}")))


def _over_budget(conn: Connection) -> NoReturn:
    """Say the job was over budget, if that still fits, and end the worker with the status that
    says so too."""
    with contextlib.suppress(BaseException):
        conn.send(("fatal", JobError(_OVER_BUDGET)))
    os._exit(_EXIT_OVER_BUDGET)


# ---- in the parent ---------------------------------------------------------------------------


class _Worker:
    """One worker process and our end of its pipe."""

    # ctx: what multiprocessing.get_context gives (its Process is typed on the concrete contexts only)
    def __init__(self, ctx: Any, memory_bytes: int | None, name: str):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, memory_bytes), name=name, daemon=True)
        self.process.start()
        child.close()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        self.process.join(5)
        with contextlib.suppress(Exception):
            self.conn.close()


def _last_word(worker: _Worker) -> JobError | None:
    """The error a worker sent before it ended (one that ran out of memory receiving its job),
    if it sent one."""
    with contextlib.suppress(Exception):
        if worker.conn.poll(1.0):
            message = worker.conn.recv()
            if message[0] == "fatal":
                return message[1]
    worker.process.join(1)
    return JobError(_OVER_BUDGET) if worker.process.exitcode == _EXIT_OVER_BUDGET else None


class Pool:
    """``workers`` worker processes taking jobs first come, first served (see the module's
    docstring). Workers start when the first job is submitted."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        memory_mib: float | None = None,
        name: str = "bpe-explorer-worker",
        start_method: str = "forkserver",
    ):
        self.workers = workers or default_workers()
        self.memory_bytes = int(memory_mib * 2**20) if memory_mib else None
        self.name = name
        self.replaced = 0  # workers started again after one was killed or died
        self._ctx = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            self._ctx.set_forkserver_preload(PRELOAD)
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False
        self._numbers = itertools.count(1)

    @property
    def waiting(self) -> int:
        """Jobs queued and not yet started."""
        return self._queue.qsize()

    def stats(self) -> dict[str, int]:
        """What the pool is doing, for a status page: ``{"workers": 1, "waiting": 0, "replaced": 0}``."""
        return {"workers": self.workers, "waiting": self.waiting, "replaced": self.replaced}

    def submit(self, fn: Callable[..., Any], /, *args: Any, progress: bool = False, **kwargs: Any) -> Job:
        """Queue ``fn(*args, **kwargs)`` (a module-level function); with ``progress=True`` the
        function also gets ``progress=``, whose latest call the job's ``progress`` shows."""
        if self._closed:
            raise JobError("the server is shutting down")
        job = Job(fn, args, kwargs, progress)
        self._start_threads()
        self._queue.put(job)
        return job

    def run(self, fn: Callable[..., Any], /, *args: Any, progress: bool = False, **kwargs: Any) -> Any:
        """Submit and wait for the value (for callers with nothing to draw meanwhile)."""
        return self.submit(fn, *args, progress=progress, **kwargs).result()

    def shutdown(self) -> None:
        """Stop taking jobs; workers end after their current job."""
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)

    def _start_threads(self) -> None:
        with self._lock:
            while len(self._threads) < self.workers:
                thread = threading.Thread(
                    target=self._slot, name=f"{self.name}-slot-{len(self._threads) + 1}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _new_worker(self) -> _Worker:
        return _Worker(self._ctx, self.memory_bytes, f"{self.name}-{next(self._numbers)}")

    def _slot(self) -> None:
        """One worker's dispatcher: hands it jobs one at a time and watches for a cancel, a
        death or the result."""
        worker: _Worker | None = None
        while True:
            job = self._queue.get()
            if job is None:
                if worker is not None:
                    worker.stop()
                return
            if job._cancel.is_set():
                job._finish("cancelled", error=JobCancelled("the job was cancelled before it started"))
                continue
            if worker is None or not worker.process.is_alive():
                if worker is not None:
                    worker.stop()
                    self.replaced += 1
                try:
                    worker = self._new_worker()
                except Exception as err:  # noqa: BLE001 - no process could start: the job says so
                    worker = None
                    job._finish("failed", error=JobError(f"no worker process could start: {err}"))
                    continue
            worker = self._run(worker, job)

    def _run(self, worker: _Worker, job: Job) -> _Worker | None:
        """Run one job in ``worker``; returns the worker if it can take another job."""
        fn = job.fn
        try:
            worker.conn.send((fn.__module__, fn.__qualname__, job.args, job.kwargs, job.wants_progress))
        except Exception as err:  # noqa: BLE001 - arguments that do not pickle, or a dead pipe
            said = _last_word(worker) if isinstance(err, OSError) else None  # a worker over budget says so first
            job._finish("failed", error=said or JobError(f"the job could not be sent to a worker: {err}"))
            return worker if worker.process.is_alive() and not isinstance(err, OSError) else self._replace(worker)
        job.state = "running"
        while True:
            if job._cancel.is_set():
                job._finish("cancelled", error=JobCancelled("the job was stopped"))
                return self._replace(worker)
            try:
                if not worker.conn.poll(_POLL_S):
                    if not worker.process.is_alive() and not worker.conn.poll(0):
                        raise EOFError
                    continue
                message = worker.conn.recv()
            except (EOFError, OSError):
                worker.process.join(1)  # the pipe closes before the exit status is known
                code = worker.process.exitcode
                how = f"was killed (signal {-code})" if code is not None and code < 0 else f"stopped (exit code {code})"
                job._finish(
                    "failed",
                    error=JobError(_OVER_BUDGET)
                    if code == _EXIT_OVER_BUDGET
                    else JobError(
                        f"the worker process running this job {how} before it finished; a new worker has taken its place, "
                        "so trying again may work"
                    ),
                )
                return self._replace(worker)
            kind = message[0]
            if kind == "progress":
                job.progress = (message[1], message[2])
            elif kind == "done":
                job.peak_mib = message[2] / 1024
                job._finish("done", value=message[1])
                return worker
            else:
                job._finish("failed", error=message[1])
                return worker if kind == "error" else self._replace(worker)

    def _replace(self, worker: _Worker) -> _Worker | None:
        """Stop a worker that cannot go on and start its successor at once (so the next job
        does not wait for it)."""
        worker.stop()
        self.replaced += 1
        if self._closed:
            return None
        try:
            return self._new_worker()
        except Exception:  # noqa: BLE001 - tried again when the next job comes
            _log.exception("could not start a replacement worker")
            return None
