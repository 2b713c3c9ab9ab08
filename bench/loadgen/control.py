"""Bounded runs: every wait has a timeout and none goes past the run's deadline; a watchdog ends
the process well past it; the browsers' process is started and always stopped."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import sys
import threading
import time

import psutil

__all__ = ["bounded", "queue_get", "start_worker", "stop_worker", "time_left", "watchdog"]


async def queue_get(q, timeout: float):
    """The next item of a multiprocessing queue, polled so the event loop stays free (and no
    thread is left blocked in ``get`` when the run is cut short)."""
    import queue

    end = time.monotonic() + timeout
    while True:
        try:
            return q.get_nowait()
        except queue.Empty:
            if time.monotonic() > end:
                raise TimeoutError from None
            await asyncio.sleep(0.1)


def time_left(deadline: float):
    """``left(limit)``: a wait's timeout, ``limit`` at most and never past the run's deadline (1 s at least)."""

    def left(limit: float) -> float:
        return max(1.0, min(limit, deadline - time.monotonic()))

    return left


def start_worker(res, ctx, target, args: tuple, name: str):
    """The browsers' process, started (and kept in ``res`` to be stopped at the end)."""
    worker = ctx.Process(target=target, args=args, name=name, daemon=True)
    worker.start()
    res.worker = worker
    return worker


def stop_worker(worker: multiprocessing.process.BaseProcess | None, *, grace: float = 0.0) -> None:
    """Stop the browsers' process if it still runs: after ``grace`` seconds to end by itself,
    terminated, then killed."""
    if worker is None or not worker.is_alive():
        return
    if grace:
        worker.join(timeout=grace)
        if not worker.is_alive():
            return
    worker.terminate()
    worker.join(timeout=10)
    if worker.is_alive():
        worker.kill()


async def bounded(coro, deadline: float) -> None:
    """Run until done or the deadline, then close whatever is still open."""
    task = asyncio.ensure_future(coro)
    try:
        await asyncio.wait_for(asyncio.shield(task), max(1.0, deadline - time.monotonic()))
    except TimeoutError:
        task.cancel()
        raise TimeoutError from None


def watchdog(seconds: float) -> None:
    """Last resort: if the run is still going well past its deadline, end this process (and with
    it the server, whose pipe ends; the browser worker is a daemon process)."""

    def fire() -> None:
        print(f"load: still running {seconds:.0f} s after the start; giving up", file=sys.stderr, flush=True)
        for child in psutil.Process().children(recursive=True):
            try:
                child.kill()
            except psutil.Error:
                pass
        os._exit(3)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
