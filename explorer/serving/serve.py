"""``python -m explorer serve --servers N``: the app for a class, on several processes.

One Streamlit process runs its sessions' scripts on about one core (Python's GIL). With
``--servers N`` (N > 1) this starts N ``streamlit run app.py`` processes on free loopback ports
and Debian's ``haproxy`` in front of them on ``--address:--port``:

- a new browser is given the next server in turn (round robin) and a cookie naming it
  (``explorer_server``, inserted by haproxy: ``insert indirect nocache``); every later request
  carrying the cookie goes to the same server: the page, its websocket on ``/_stcore/stream``
  and its uploads to ``/_stcore/upload_file`` (a Streamlit session lives in one process); each
  response names its server in an ``X-Explorer-Server`` header;
- a websocket may stay quiet for an hour (``timeout tunnel``; Streamlit pings every 30 s);
- haproxy checks each server's ``/_stcore/health`` every 2 s and sends no new browser to one
  that fails; a browser whose server is down is given another one (a fresh session);
- each request carries the client's address in ``X-Forwarded-For`` (set by haproxy, any value
  the client sent dropped), which the servers take from their loopback peer: rate limits and
  quotas count per client address, not per proxy.

It prints a line with the URL to open on this machine, then one with the address students join
at (this machine's network address, or ``--public-url``: :mod:`explorer.serving.addresses`), or why
they cannot (listening on 127.0.0.1, the default, is this machine alone: ``--class`` listens on
every interface), runs until interrupted (Ctrl-C, SIGTERM) and then stops haproxy and every
server. ``--public-url`` reaches the app servers as ``BPE_EXPLORER_PUBLIC_URL`` (the join links
then name it), and behind haproxy they are told the address it listens on
(``BPE_EXPLORER_LISTEN_ADDRESS``: they themselves listen on 127.0.0.1). Start-up problems (haproxy not installed, a server that exits or does
not answer, a port in use) stop whatever was started and exit with status 2 and one line; a
server or haproxy that exits while serving stops the rest, with status 1. The children get
SIGTERM also if this process is killed outright (Linux). ``--servers 1`` runs one server on
``--address:--port`` with no proxy.

This module only starts processes: it imports neither Streamlit nor pandas nor Altair.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TextIO

from ..errors import ExplorerError
from ..paths import app_root
from .addresses import LISTEN_ENV, PUBLIC_URL_ENV, check_public_url, lan_addresses, students_line

__all__ = ["COOKIE", "SERVED_BY", "haproxy_config", "find_haproxy", "serve"]

ROOT = app_root()  # app.py and .streamlit/config.toml: the checkout, or the installed copy
COOKIE = "explorer_server"
SERVED_BY = "X-Explorer-Server"  # response header: the server that answered (the cookie's value)
HEALTH = "/_stcore/health"
START_TIMEOUT = 120.0  # seconds for every server to answer its health check
PROXY_TIMEOUT = 20.0  # seconds for haproxy to answer through its port
STOP_TIMEOUT = 10.0  # seconds a process gets after SIGTERM before SIGKILL
NOT_INSTALLED = "haproxy is not installed (Debian: apt-get install haproxy)"
_SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")  # Debian's haproxy lives in /usr/sbin, not on a user's PATH


def find_haproxy(program: str | None = None) -> str:
    """The haproxy executable: ``program`` if given (a path, or a name looked up on PATH), else
    ``haproxy`` on PATH or in the sbin folders."""
    if program is not None:
        found = shutil.which(program)
        if found is None:
            raise ExplorerError(f"--haproxy {program}: no such program; {NOT_INSTALLED}")
        return found
    search = os.pathsep.join([os.environ.get("PATH", os.defpath), *_SBIN])
    found = shutil.which("haproxy", path=search)
    if found is None:
        raise ExplorerError(NOT_INSTALLED)
    return found


def haproxy_config(address: str, port: int, backends: list[int]) -> str:
    """haproxy's configuration: ``address:port`` in front of the servers on these loopback
    ports, new browsers in turn, each then kept on its server by a cookie."""
    servers = "\n".join(
        f"    server app{i} 127.0.0.1:{p} cookie app{i} check inter 2s fall 2 rise 2" for i, p in enumerate(backends, 1)
    )
    return f"""\
# written by python -m explorer serve
global
    # a second launcher on the same port fails instead of sharing it
    noreuseport

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 30s
    timeout http-keep-alive 60s
    # the websocket of an idle tab (Streamlit pings every 30 s)
    timeout tunnel 1h
    timeout client-fin 10s
    option redispatch
    retries 2

frontend explorer
    bind {address}:{port}
    # the client's address reaches the app servers (rate limits count per address; they take
    # X-Forwarded-For only from a loopback peer, this proxy): whatever a client sent in that
    # header is dropped first, so the only one left is the address haproxy saw
    http-request del-header X-Forwarded-For
    option forwardfor
    default_backend streamlit

backend streamlit
    balance roundrobin
    # one browser, one server: its page, websocket and uploads
    cookie {COOKIE} insert indirect nocache httponly
    # which server answered, for a look in the browser's developer tools (and the tests)
    http-response set-header {SERVED_BY} %s
    option httpchk GET {HEALTH}
    http-check expect status 200
{servers}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _require_free(address: str, port: int) -> None:
    """The launcher's own address and port can be listened on (before anything starts: a
    health check there could otherwise be answered by whatever already listens)."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(
            address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (socket.gaierror, UnicodeError) as e:
        raise ExplorerError(f"--address {address}: not an address of this machine ({e})") from None
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: a recent close is no conflict
        try:
            s.bind(where)
        except OSError as e:
            raise ExplorerError(
                f"cannot listen on {address}:{port}: {e.strerror or e} (give another --port or --address)"
            ) from None


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no HTTP proxy from the environment


def _healthy(url: str) -> bool:
    try:
        with _DIRECT.open(url + HEALTH, timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


def _url(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}"


def _local_url(address: str, port: int) -> str:
    """Where this machine reaches a listener on ``address`` (a wildcard: loopback)."""
    if address == "0.0.0.0":
        address = "127.0.0.1"
    elif address == "::":
        address = "::1"
    return _url(address, port)


# ---- the children ------------------------------------------------------------------------------
_LIBC = None


def _die_with_parent(parent: int) -> None:
    """Run in the child before it starts (Linux): SIGTERM when this launcher dies, even by
    SIGKILL; no orphan servers."""
    if _LIBC is not None:
        _LIBC.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the launcher died before that took effect
        os._exit(1)


def _load_libc() -> None:
    global _LIBC
    if _LIBC is None and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            _LIBC = ctypes.CDLL(None, use_errno=True)


class _Children:
    """The processes started; stopping ends the proxy first (no request then reaches a stopping
    server), then the servers together."""

    def __init__(self) -> None:
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.proxy: subprocess.Popen | None = None

    def start(self, name: str, argv: list[str], *, proxy: bool = False, **kwargs) -> subprocess.Popen:
        _load_libc()
        # a session of their own: Ctrl-C in the terminal reaches the launcher, which stops them in order
        proc = subprocess.Popen(
            argv, start_new_session=True, preexec_fn=functools.partial(_die_with_parent, os.getpid()), **kwargs
        )
        self.procs.append((name, proc))
        if proxy:
            self.proxy = proc
        return proc

    def exited(self) -> tuple[str, int] | None:
        for name, proc in self.procs:
            if proc.poll() is not None:
                return name, proc.returncode
        return None

    def stop(self) -> None:
        if self.proxy is not None:
            _terminate(self.proxy)
            _wait(self.proxy)
        for _, proc in self.procs:
            _terminate(proc)
        for _, proc in self.procs:
            _wait(proc)


def _terminate(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.terminate()


def _wait(proc: subprocess.Popen) -> None:
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
    """SIGINT (also when a parent shell started this with it ignored), SIGTERM and SIGHUP end the
    launcher with a KeyboardInterrupt."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _signals_ignored() -> Iterator[None]:
    """While the children are being stopped, a second Ctrl-C does not cut that short."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


def _streamlit(address: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(ROOT / "app.py"),
        "--server.headless",
        "true",
        "--server.address",
        address,
        "--server.port",
        str(port),
        # this launcher prints the addresses itself; Streamlit's banner (unread: its output is
        # discarded) would ask a web service for the machine's public address on a wildcard
        "--logger.hideWelcomeMessage",
        "true",
    ]


def _wait_healthy(servers: list[tuple[str, str, subprocess.Popen]]) -> None:
    """Until every server answers its health check; a server that exits or stays silent is an error."""
    waiting = list(servers)
    deadline = time.monotonic() + START_TIMEOUT
    while waiting:
        for entry in list(waiting):
            name, url, proc = entry
            if _healthy(url):
                waiting.remove(entry)
            elif proc.poll() is not None:
                raise ExplorerError(
                    f"{name} exited with status {proc.returncode} while starting (its messages are above)"
                )
        if waiting and time.monotonic() > deadline:
            raise ExplorerError(f"{waiting[0][0]} did not answer {HEALTH} within {START_TIMEOUT:.0f} s")
        if waiting:
            time.sleep(0.2)


def _first_alert(log: IO[bytes]) -> str:
    """haproxy's first alert (else its first message), without the "[ALERT]    (pid) : " prefix."""
    log.seek(0)
    lines = [ln.strip() for ln in log.read().decode("utf-8", "replace").splitlines() if ln.strip()]
    alerts = [ln for ln in lines if ln.startswith("[ALERT]")] or lines
    return re.sub(r"^\[\w+\]\s*\(\d+\)\s*:\s*", "", alerts[0]) if alerts else "no message"


def _copy_new(log: IO[bytes], err: TextIO, position: int) -> int:
    """haproxy's messages since ``position`` (server up/down, alerts) on our stderr."""
    log.seek(position)
    data = log.read()
    if data:
        err.write(data.decode("utf-8", "replace"))
        err.flush()
    return position + len(data)


def serve(
    servers: int,
    *,
    port: int = 8501,
    address: str = "127.0.0.1",
    haproxy: str | None = None,
    public_url: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Serve the app until interrupted; 0 after an interrupt, 1 when a child exited while
    serving. ``public_url``: the address students join at, when a proxy or a domain of yours
    stands in front. Raises :class:`ExplorerError` for what stops it from starting (all stopped
    by then)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if servers < 1:
        raise ExplorerError("--servers must be at least 1")
    if not 1 <= port <= 65535:
        raise ExplorerError("--port must be between 1 and 65535")
    public = check_public_url(public_url, source="--public-url") if public_url else None
    program = find_haproxy(haproxy) if servers > 1 else None
    _require_free(address, port)
    env = dict(os.environ)
    if public:
        env[PUBLIC_URL_ENV] = public
    if program is not None:
        env[LISTEN_ENV] = address

    children = _Children()
    with (
        _stop_on_signals(),
        tempfile.TemporaryDirectory(prefix="explorer-serve-") as tmp,
        open(Path(tmp) / "haproxy.log", "ab") as written,
        open(Path(tmp) / "haproxy.log", "rb") as log,
    ):
        try:
            if program is None:
                proc = children.start(
                    "the app server", _streamlit(address, port), cwd=ROOT, stdout=subprocess.DEVNULL, env=env
                )
                _wait_healthy([("the app server", _local_url(address, port), proc)])
                where = "one app server"
            else:
                ports = [_free_port() for _ in range(servers)]
                started = [
                    (
                        f"app server {i}",
                        f"http://127.0.0.1:{p}",
                        children.start(
                            f"app server {i}", _streamlit("127.0.0.1", p), cwd=ROOT, stdout=subprocess.DEVNULL, env=env
                        ),
                    )
                    for i, p in enumerate(ports, 1)
                ]
                _wait_healthy(started)
                config = Path(tmp) / "haproxy.cfg"
                config.write_text(haproxy_config(address, port, ports), encoding="utf-8")
                proxy = children.start(
                    "haproxy",
                    [program, "-db", "-f", str(config)],
                    proxy=True,
                    cwd=tmp,
                    stdin=subprocess.DEVNULL,
                    stdout=written,
                    stderr=written,
                )
                deadline = time.monotonic() + PROXY_TIMEOUT
                while not _healthy(_local_url(address, port)):
                    if proxy.poll() is not None:
                        raise ExplorerError(f"haproxy could not start on {address}:{port}: {_first_alert(log)}")
                    if time.monotonic() > deadline:
                        raise ExplorerError(f"haproxy did not answer on {address}:{port} within {PROXY_TIMEOUT:.0f} s")
                    time.sleep(0.1)
                where = f"{servers} app servers behind haproxy, sticky sessions"
            # the teacher's own address first (never 0.0.0.0: no browser opens that), then the students'
            out.write(f"BPE Explorer: {_local_url(address, port)} ({where}; Ctrl-C stops it)\n")
            out.write(students_line(address, port, public=public, addresses=lan_addresses()) + "\n")
            out.flush()
            position = 0
            while True:
                position = _copy_new(log, err, position)
                gone = children.exited()
                if gone is not None:
                    _copy_new(log, err, position)
                    err.write(f"python -m explorer serve: {gone[0]} exited with status {gone[1]}; stopped the rest\n")
                    return 1
                time.sleep(0.5)
        except KeyboardInterrupt:
            return 0
        finally:
            with _signals_ignored():
                children.stop()
