"""``python -m explorer serve --servers 2``: two app servers behind haproxy. It prints where
students join (the ``--public-url`` given); the proxy answers;
two clients get different servers and each keeps its own for its page, its websocket and its
uploads (haproxy's cookie); Step and an upload work through it; SIGTERM leaves no server and no
haproxy running. Without haproxy the command exits 2 with one line. The protocol client is
bench/load.py's (bench/loadgen/client.py)."""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request

import psutil
import pytest
from appserver import _free_port, wait_idle
from conftest import ROOT

from explorer.errors import ExplorerError
from explorer.serving.rooms import Limits
from explorer.serving.serve import COOKIE, SERVED_BY, find_haproxy

sys.path.insert(0, str(ROOT / "bench"))
from loadgen.client import Session  # noqa: E402  (bench/load.py's: a protocol session, as a browser's frontend speaks it)
from loadgen.specs import Spec  # noqa: E402


def _haproxy() -> str | None:
    try:
        return find_haproxy()
    except ExplorerError:
        return None


if _haproxy() is None and os.environ.get("CI"):
    raise RuntimeError("CI must install Debian's haproxy for the launcher's tests (see .ci/run)")
needs_haproxy = pytest.mark.skipif(_haproxy() is None, reason="haproxy is not installed (apt-get install haproxy)")


PUBLIC = "https://bpe.school.example"  # a join address given on the command line (never contacted)


class Launched:
    """The launcher, its URL (from the line it prints) and its children (servers and haproxy)."""

    def __init__(self, log) -> None:
        self.log = log
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "explorer", "serve", "--servers", "2", "--port", str(self.port)]
            + ["--public-url", PUBLIC + "/"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            self.line = self.proc.stdout.readline().rstrip("\n") if sel.select(90) else ""
            self.students = self.proc.stdout.readline().rstrip("\n") if sel.select(10) else ""
        self.url = f"http://127.0.0.1:{self.port}"
        self.children = psutil.Process(self.proc.pid).children(recursive=True)

    def stop(self) -> tuple[int, list[str]]:
        """SIGTERM to the launcher; its exit status and the children still running after it
        exited (then killed: never left behind by a failed test)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            status = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait(timeout=10)
        left = [c for c in self.children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        for child in left:
            child.kill()
        return status, [c.name() for c in left]


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    with open(tmp_path_factory.mktemp("serve") / "serve.log", "w+") as log:
        app = Launched(log)
        try:
            yield app
        finally:
            app.stop()


def get(url: str, cookie: str | None = None) -> tuple[bytes, str | None, str | None]:
    """(body, the proxy's cookie set by the answer, the server that answered)."""
    request = urllib.request.Request(url, headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as r:
        body = r.read()
        set_cookie = [c for c in r.headers.get_all("Set-Cookie") or [] if c.startswith(f"{COOKIE}=")]
        return body, set_cookie[0].split(";")[0].split("=", 1)[1] if set_cookie else None, r.headers.get(SERVED_BY)


@needs_haproxy
@pytest.mark.slow
def test_the_proxy_answers_health_and_names_the_server_in_a_cookie(launched):
    assert (
        launched.line
        == f"BPE Explorer: {launched.url} (2 app servers behind haproxy, sticky sessions; Ctrl-C stops it)"
    )
    # the second line: where students join, the --public-url given (its trailing slash dropped)
    assert launched.students == f"Students join at {PUBLIC}/Class", launched.students
    assert sorted(c.name() for c in launched.children).count("haproxy") == 1 and len(launched.children) == 3
    body, cookie, served = get(f"{launched.url}/_stcore/health")
    assert body == b"ok"
    assert cookie in ("app1", "app2") and served == cookie


@needs_haproxy
@pytest.mark.slow
def test_two_sessions_get_different_servers_and_each_keeps_its_own(launched):
    errors: list[str] = []
    sessions = [
        Session(Spec(i, ("udhr_en.txt",), preset, 50), launched.url, errors, sticky=True)
        for i, preset in enumerate(("gpt2", "bytes"))
    ]

    async def scenario() -> None:
        try:
            for s in sessions:  # one after the other: the proxy gives them servers in turn
                await s.open(60)  # the page over HTTP (its cookie), then the websocket carrying it
            for s in sessions:
                for _ in range(2):
                    await s.step("test")
        finally:
            await asyncio.gather(*(s.close() for s in sessions))

    asyncio.run(scenario())
    assert not errors, errors  # among them: a websocket answered by another server than the page's
    assert [s.status.step for s in sessions] == [2, 2]
    assert {s.server for s in sessions} == {"app1", "app2"}
    for s in sessions:  # every later request carrying the cookie reaches the same server
        for _ in range(4):
            _, cookie, served = get(f"{launched.url}/_stcore/health", s.server)
            assert (cookie, served) == (None, s.server)


@needs_haproxy
@pytest.mark.slow
@pytest.mark.browser
def test_browsers_step_and_upload_through_the_proxy_each_on_its_own_server(launched, new_page):
    with new_page(isolated=True) as train, new_page(isolated=True) as corpus:  # a cookie each
        _step_and_upload(launched.url, train, corpus)


def _step_and_upload(url: str, train, corpus) -> None:
    """Two pages in browser contexts of their own (no cookies shared): Step twice on one,
    upload a file on the other."""
    answers = {id(page): [] for page in (train, corpus)}
    for page in (train, corpus):  # each collects its script errors in page.errors (tests/appserver.py)
        page.on(
            "response",
            lambda r, page=page: (
                r.url.startswith(url) and answers[id(page)].append((r.url, r.status, r.headers.get(SERVED_BY.lower())))
            ),
        )  # not blob: URLs, made in the page

    train.goto(f"{url}/Train")
    wait_idle(train, timeout=90)
    step = train.get_by_role("button", name="Step", exact=True)
    step.click()
    train.get_by_text(re.compile(r"^Step 1 of")).wait_for(timeout=30_000)
    step.click()
    train.get_by_text(re.compile(r"^Step 2 of")).wait_for(timeout=30_000)

    corpus.goto(f"{url}/Corpus")
    wait_idle(corpus, timeout=90)
    corpus.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        files=[{"name": "proxied.txt", "mimeType": "text/plain", "buffer": b"low lower newest widest\n"}]
    )
    wait_idle(corpus)
    corpus.get_by_text(re.compile(r"^proxied\.txt · 24 bytes · UTF-8")).wait_for(timeout=30_000)

    servers = []
    for page in (train, corpus):
        assert not page.errors, page.errors
        cookie = next((c["value"] for c in page.context.cookies() if c["name"] == COOKIE), None)
        assert cookie is not None, f"no {COOKIE} cookie in the browser"
        served = {s for _, _, s in answers[id(page)]}
        assert served == {cookie}, [a for a in answers[id(page)] if a[2] != cookie]  # every answer from its server
        servers.append(cookie)
    assert sorted(servers) == ["app1", "app2"]
    uploads = [(status, s) for where, status, s in answers[id(corpus)] if "/_stcore/upload_file/" in where]
    assert uploads and all(status < 300 for status, _ in uploads), uploads


def room_rev(url: str, code: str, *, source: str, forwarded: str | None = None) -> int:
    """The status of GET /room-rev for ``code`` (no credential) sent from the loopback address
    ``source``, with a forged ``X-Forwarded-For`` if given."""
    parts = urllib.parse.urlparse(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30, source_address=(source, 0))
    try:
        conn.request("GET", f"/room-rev?code={code}", headers={"X-Forwarded-For": forwarded} if forwarded else {})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@needs_haproxy
@pytest.mark.slow
def test_the_servers_count_each_clients_own_address_and_no_forged_one(launched):
    """Through the proxy, failed room lookups count against the address the proxy saw (each
    loopback address 127.0.0.x is another client): shared by both servers, refused past the
    limit for that address alone, and a forged X-Forwarded-For changes nothing."""
    limit = Limits().address_misses
    # the machine itself (127.0.0.1, never counted) claiming another address: the claim is dropped
    mine = [room_rev(launched.url, "ZZZZZZ", source="127.0.0.1", forwarded="203.0.113.5") for _ in range(limit + 1)]
    assert mine == [404] * (limit + 1), mine
    statuses = [
        room_rev(launched.url, f"ZZZZ{n % 10}{n // 10}", source="127.0.0.7", forwarded=f"198.51.100.{n % 200}")
        for n in range(limit + 1)
    ]
    assert statuses == [404] * limit + [429], statuses  # the servers answer in turn: their counts are one
    assert room_rev(launched.url, "ZZZZZZ", source="127.0.0.7", forwarded="203.0.113.5") == 429
    assert room_rev(launched.url, "ZZZZZZ", source="127.0.0.8") == 404  # another client is not refused


@needs_haproxy
@pytest.mark.slow
def test_sigterm_stops_haproxy_and_every_server(launched):
    assert len(launched.children) == 3 and all(c.is_running() for c in launched.children)
    assert launched.stop() == (0, [])  # the launcher stopped them all before it exited
    launched.log.seek(0)
    assert "Traceback" not in launched.log.read()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{launched.url}/_stcore/health", timeout=5)


def _serve_without_haproxy(*extra: str) -> subprocess.CompletedProcess:
    """The launcher where no haproxy can be found: PATH without it, and not its usual sbin folders."""
    code = (
        "import sys; import explorer.serving.serve as s; s._SBIN = (); from explorer.cli import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, "serve", "--servers", "2", "--port", str(_free_port()), *extra],
        cwd=ROOT,
        env={**os.environ, "PATH": os.path.dirname(sys.executable)},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_serve_without_haproxy_exits_2_with_one_line():
    done = _serve_without_haproxy()
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "python -m explorer: error: haproxy is not installed (Debian: apt-get install haproxy)\n"
    done = _serve_without_haproxy("--haproxy", "haproxy")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--haproxy haproxy: no such program" in done.stderr, done.stderr


def test_app_on_a_port_in_use_or_out_of_range_exits_2_with_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for bad, message in ((str(port), "in use"), ("70000", "--port must be between 1 and 65535")):
            proc = subprocess.run(
                [sys.executable, "-m", "explorer", "app", "--port", bad],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert message in proc.stderr and "Traceback" not in proc.stderr
