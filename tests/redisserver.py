"""Debian's ``redis-server`` on a free loopback port, for the tests that run the store on Redis.

Each test module that needs it gets its own server (no disk: ``--save ""``, no append-only file),
stopped after by its pid. Without ``redis-server`` the tests that need it are skipped, except in
CI, where that is an error (.ci/run installs it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

__all__ = ["redis_server", "require_redis"]


def _program() -> str | None:
    return shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if os.path.exists(p)), None
    )


def require_redis() -> str:
    """The redis-server program; skips the test without it, except in CI."""
    import pytest

    program = _program()
    if program is None:
        if os.environ.get("CI"):
            raise RuntimeError("CI must install Debian's redis-server for the store tests (see .ci/run)")
        pytest.skip("Debian's redis-server is not installed (apt-get install redis-server)")
    return program


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def redis_server(
    program: str, *, timeout: float = 20.0, port: int | None = None, folder: str | None = None
) -> Iterator[str]:
    """Start redis-server on 127.0.0.1 and yield its URL (``redis://127.0.0.1:PORT/0``).
    ``port``: that one (a server started again where its clients look) instead of a free one;
    ``folder``: keep the data there (an append-only file, as a class's server should), so that a
    server started again on the same folder has it back."""
    port = port or _free_port()
    keep = ["--appendonly", "yes", "--appendfsync", "always", "--dir", folder] if folder else ["--appendonly", "no"]
    proc = subprocess.Popen(
        [
            program,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            *keep,
            "--protected-mode",
            "yes",
            "--loglevel",
            "warning",
            "--daemonize",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                if conn.recv(16).startswith(b"+PONG"):
                    break
            if proc.poll() is not None:
                raise RuntimeError(f"redis-server exited: {proc.stderr.read().decode(errors='replace')[-500:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not answer on port {port} within {timeout:g} s")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
