"""The servers under test: ``python -m explorer serve`` started on a free loopback port (the
launcher: K app servers behind haproxy), and their memory and CPU sampled from outside (psutil)."""

from __future__ import annotations

import contextlib
import re
import selectors
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

import psutil
from _common import ROOT, Printer, fmt_s
from appserver import _free_port

from .report import mb

__all__ = ["CpuSpan", "ServerMonitor", "client_cpu", "cpu_span", "launcher", "proc_cpu", "serve_proxy"]


# ---- the server's memory and CPU ---------------------------------------------------------------
class ServerMonitor:
    """Samples the servers' RSS (with any children, all servers and the proxy added up) every
    0.2 s in a thread; CPU on request."""

    def __init__(self, pids: list[int], proxy_pids: list[int] | None = None) -> None:
        self.procs = [psutil.Process(pid) for pid in pids]
        self.proxies = [psutil.Process(pid) for pid in proxy_pids or []]
        self.baseline = self.rss()
        self.peak = self.baseline
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()

    def tree(self, procs: list[psutil.Process] | None = None) -> list[psutil.Process]:
        """``procs`` (by default every server and proxy) and all their children."""
        out = []
        for proc in self.procs + self.proxies if procs is None else procs:
            try:
                out += [proc, *proc.children(recursive=True)]
            except psutil.Error:
                out.append(proc)
        return out

    def rss(self) -> int:
        """The resident memory of every process of the tree, added up, now."""
        total = 0
        for p in self.tree():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, self.rss())

    def cpu(self) -> tuple[float, float, float, float]:
        """(monotonic time, CPU seconds of the server trees and the proxy, CPU seconds of the
        servers' main threads: their event loops, which do the websocket I/O; script runs happen
        in threads that come and go; CPU seconds of the proxy alone)."""
        total, main, proxy = proc_cpu(self.tree()), 0.0, proc_cpu(self.tree(self.proxies))
        for proc in self.procs:
            try:
                main += sum(t.user_time + t.system_time for t in proc.threads() if t.id == proc.pid)
            except psutil.Error:
                pass
        return time.monotonic(), total, main, proxy

    def stop(self) -> None:
        """End the sampling thread."""
        self._stop.set()
        self._thread.join(timeout=2)


@dataclass
class CpuSpan:
    """Server and client CPU seconds over one phase."""

    wall: float
    server: float  # the servers and the proxy
    server_main: float  # the servers' event-loop threads
    client: float
    proxy: float = 0.0  # the proxy alone

    def cores(self, seconds: float) -> float:
        """``seconds`` of CPU over the phase, as cores busy on average."""
        return seconds / self.wall if self.wall > 0 else 0.0


def cpu_span(before, after, client_before: float, client_after: float) -> CpuSpan:
    """The span between two ``ServerMonitor.cpu`` readings and two ``client_cpu`` ones."""
    (t0, c0, m0, p0), (t1, c1, m1, p1) = before, after
    return CpuSpan(t1 - t0, c1 - c0, m1 - m0, client_after - client_before, p1 - p0)


def client_cpu() -> float:
    """This process's CPU seconds (the load generator's own)."""
    t = psutil.Process().cpu_times()
    return t.user + t.system


def proc_cpu(procs: list[psutil.Process]) -> float:
    """User and system CPU seconds of these processes added up (one that is gone counts 0)."""
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


@contextlib.contextmanager
def launcher(servers: int, log, errors: list[str], timeout: float = 180.0, env: dict[str, str] | None = None):
    """``python -m explorer serve --servers K`` on a free loopback port: yields the proxy's URL
    and the launcher's children (the servers and haproxy); after, SIGTERM to the launcher, and
    any child still running then is an error. ``env``: the launcher's environment (the servers
    inherit it), this process's by default."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "serve", "--servers", str(servers), "--port", str(port)],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
    )
    children: list[psutil.Process] = []
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            line = proc.stdout.readline() if sel.select(timeout) else ""
        m = re.search(r"http://\S+", line)
        if m is None:
            raise RuntimeError(
                f"python -m explorer serve printed no URL within {timeout:.0f} s "
                f"(exit status {proc.poll()}; its stderr is in the server log)"
            )
        children = psutil.Process(proc.pid).children(recursive=True)
        yield m.group(0), children
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            errors.append("python -m explorer serve did not stop within 60 s of SIGTERM")
            proc.kill()
            proc.wait(timeout=10)
        left = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        if left:
            errors.append(f"after the launcher stopped, still running: {', '.join(c.name() for c in left)}")
            for c in left:
                with contextlib.suppress(psutil.Error):
                    c.kill()


def serve_proxy(
    stack: contextlib.ExitStack, servers: int, log, errors: list[str], out: Printer, env: dict[str, str] | None = None
) -> tuple[str, ServerMonitor]:
    """The launcher with ``servers`` servers, entered on ``stack``; its URL and a monitor of the
    servers and haproxy (their baseline printed)."""
    t0 = time.monotonic()
    url, children = stack.enter_context(launcher(servers, log, errors, env=env))
    proxies = [c.pid for c in children if c.name() == "haproxy"]
    monitor = ServerMonitor([c.pid for c in children if c.pid not in proxies], proxies)
    out(
        f"server: {len(children) - len(proxies)} server(s) and {len(proxies)} haproxy up in "
        f"{fmt_s(time.monotonic() - t0)}; RSS baseline {mb(monitor.baseline)} (all added up)"
    )
    return url, monitor
