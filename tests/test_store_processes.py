"""The store keeps every write while other processes open and close it.

On POSIX, closing any descriptor of a file drops every lock the process holds on it. If the
app's process ever opened the database file itself (to read its header, say), SQLite would no
longer know that the process uses the database, and the next process to open and close it (a
second app server, a restart, an operator's ``sqlite3`` shell) would checkpoint and delete the
live ``-wal`` file: the server would go on writing into a deleted file, other servers would stop
seeing its rooms, and a restart would lose them.

Here: two store objects in one process and outside processes (an operator's shell) on one
folder, then two real app servers. Every write must be found afterwards by a fresh process, and
no process may hold a deleted ``-wal``."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from appserver import app_process, follow_runs, wait_idle
from playwright.sync_api import expect
from redisserver import redis_server, require_redis

from explorer.serving.rooms import Limits, RedisRooms, SqliteRooms
from explorer.serving.store import FILE_NAME, RedisStore, SqliteStore
from explorer.ui.class_view import UNREACHABLE

MIB = 2**20


def deleted_store_files(pid: int) -> list[str]:
    """The store's files that process ``pid`` holds open although they were deleted (Linux's
    /proc shows them as ``... (deleted)``)."""
    found = []
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(fd_dir / fd)
        except OSError:  # closed meanwhile
            continue
        if FILE_NAME in target and target.endswith("(deleted)"):
            found.append(target)
    return found


def operator_shell(folder: Path, sql: str) -> str:
    """What an operator's shell does: open the store in another process, run ``sql``, close it
    (the ``sqlite3`` program if installed, else Python's sqlite3 module); its output."""
    path = folder / FILE_NAME
    if shutil.which("sqlite3"):
        command = ["sqlite3", str(path), sql]
    else:
        code = (
            "import sqlite3, sys\n"
            "conn = sqlite3.connect(sys.argv[1])\n"
            "for row in conn.execute(sys.argv[2]): print('|'.join(map(str, row)))\n"
            "conn.close()\n"
        )
        command = [sys.executable, "-c", code, str(path), sql]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def read_in_a_fresh_process(folder: Path, sql: str) -> str:
    """``sql``'s rows as another process sees the store now (as a restarted server would)."""
    code = (
        "import sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1])\n"
        "print(sorted(conn.execute(sys.argv[2]).fetchall()))\n"
        "conn.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder / FILE_NAME), sql], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_second_store_object_and_an_operators_shell_leave_the_live_wal_alone(tmp_path):
    first = SqliteStore(tmp_path, cap_bytes=MIB, session_quota=MIB)
    rooms = SqliteRooms(first, limits=Limits())
    second = SqliteStore(tmp_path, cap_bytes=MIB, session_quota=MIB)  # the same folder, the same process
    try:
        kept = [first.put(b"before the second store", kind="corpus", owner="b:ana")]
        room, key = rooms.create({"corpus": "toy.txt"})
        assert second.get(kept[0]).data == b"before the second store"  # the second opens the file
        # an operator's shell copies the WAL into the file: the file changes under both stores,
        # so both check that it still is a database before they go on
        assert operator_shell(tmp_path, "SELECT code FROM rooms; PRAGMA wal_checkpoint;").startswith(room.code)
        kept.append(first.put(b"after the checkpoint", kind="corpus", owner="b:ana"))
        kept.append(second.put(b"from the second store", kind="pasted"))
        ana = rooms.join(room.code, "Ana")
        # another process opens and closes the database while both stores have it open
        assert operator_shell(tmp_path, "SELECT COUNT(*) FROM blobs").strip() == "3"
        assert deleted_store_files(os.getpid()) == []
        kept.append(first.put(b"after the shell", kind="text"))
        rooms.set_step(room.code, key, 3)
        assert deleted_store_files(os.getpid()) == []
        # what a restarted server reads: every write of both stores
        assert read_in_a_fresh_process(tmp_path, "SELECT digest FROM blobs") == str(sorted((d,) for d in kept))
        assert read_in_a_fresh_process(tmp_path, "SELECT r.code, r.step, m.name FROM rooms r JOIN room_members m") == (
            str([(room.code, 3, ana.name)])
        )
    finally:
        second.close()
        rooms.close()


# ---- real app servers, driven in Chromium ------------------------------------------------------
FIRST_S = 90.0  # seconds: a cold server's first page (imports, the room's first merges) on a busy machine
SEE_S = 20.0  # seconds: what another page or server did must show by then


class Fleet:
    """App servers (``streamlit run app.py``) sharing one store, started together, each writing
    to its own log, stopped (SIGTERM) and started again on its port by name."""

    def __init__(self, env: dict[str, str], folder: Path) -> None:
        self.env, self.folder = env, folder
        self.running: dict[str, tuple[contextlib.AbstractContextManager, str, subprocess.Popen]] = {}
        self.ports: dict[str, int] = {}

    def start(self, *names: str) -> None:
        """Start these servers at once (each on its old port, if it had one)."""
        managers = {
            name: app_process(
                env=self.env,
                log=open(self.folder / f"{name}.log", "a"),  # noqa: SIM115 - closed with the process
                port=self.ports.get(name),
                timeout=FIRST_S,
            )
            for name in names
        }
        with ThreadPoolExecutor(len(names)) as pool:
            started = {name: pool.submit(manager.__enter__) for name, manager in managers.items()}
        failures = []
        for name, future in started.items():
            try:
                url, proc = future.result()
            except Exception as err:  # noqa: BLE001 - stop the others, then report it
                failures.append(f"{name}: {err}")
                continue
            self.running[name] = (managers[name], url, proc)
            self.ports[name] = int(url.rsplit(":", 1)[1])
        if failures:
            raise RuntimeError("; ".join(failures))

    def url(self, name: str) -> str:
        return self.running[name][1]

    def pid(self, name: str) -> int:
        return self.running[name][2].pid

    def stop(self, name: str) -> None:
        manager, _url, _proc = self.running.pop(name)
        manager.__exit__(None, None, None)

    def close(self) -> None:
        """Stop every server, all at once."""
        with ThreadPoolExecutor(max(1, len(self.running))) as pool:
            list(pool.map(self.stop, list(self.running)))

    def logs(self) -> str:
        return "".join(p.read_text(errors="replace") for p in sorted(self.folder.glob("*.log")))


@contextlib.contextmanager
def fleet(tmp_path: Path, **env: str):
    """Servers ``a`` and ``b`` on the store ``env`` names, started together."""
    servers = Fleet({**os.environ, **env}, tmp_path)
    try:
        servers.start("a", "b")
        yield servers
    finally:
        servers.close()


def see(page, what, *, timeout: float = SEE_S):
    """Wait until ``what`` (a text, a regex or a locator) is drawn, then until the app is idle."""
    loc = page.get_by_text(what) if isinstance(what, (str, re.Pattern)) else what
    wait_idle(page, timeout=timeout, settle=0, until=loc)
    return loc


def click(page, locator, *, until, timeout: float = SEE_S) -> None:
    wait_idle(page, timeout=timeout, settle=0)
    locator.click()
    wait_idle(page, timeout=timeout, until=until)


def following(step: int) -> re.Pattern:
    return re.compile(rf"following the teacher at step {step}(?!\d)")


def status(step: int, joined: int) -> re.Pattern:
    return re.compile(rf"^Step {step} · {joined} joined")


def no_exception(*pages) -> None:
    for page in pages:
        assert page.locator('[data-testid="stException"]').count() == 0, page.url
        assert not page.errors, page.errors


def restart(servers: Fleet, name: str, page) -> None:
    """SIGTERM the server, start it again on its port, and open ``page``'s address there again
    (left while the server stops: a stopping server waits for the requests it holds)."""
    address = page.url
    page.goto("about:blank")
    servers.stop(name)
    servers.start(name)
    page.goto(address)


def open_page(chromium):
    """A page in a context of its own (its own cookie: another person), its script errors kept
    in ``page.errors``; closed with ``page.context.close()``."""
    page = chromium.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    follow_runs(page)
    return page


def lesson(chromium, a: str, b: str, text: bytes) -> tuple:
    """A teacher on server ``a`` uploads ``text`` and starts a room on it; a student on server
    ``b`` joins it by its link. The two pages and the room's code."""
    teacher, student = open_page(chromium), open_page(chromium)
    teacher.goto(f"{a}/Corpus?corpus=udhr_en.txt&preset=gpt2")  # a small corpus: a quick page
    see(teacher, teacher.locator('[data-testid="stFileUploader"]'), timeout=FIRST_S)
    teacher.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        files=[{"name": "lesson.txt", "mimeType": "text/plain", "buffer": text}]
    )
    see(teacher, re.compile(r"^lesson\.txt · [\d,]+ bytes · UTF-8"), timeout=FIRST_S)
    teacher.locator('[data-testid="stSidebarNav"] a', has_text="Class").click()
    start = see(teacher, teacher.get_by_role("button", name="Start a room"), timeout=FIRST_S)
    click(teacher, start, until=teacher.locator(".cls-code"), timeout=FIRST_S)
    code = teacher.locator(".cls-code").inner_text().strip()
    see(teacher, status(0, 0), timeout=FIRST_S)
    student.goto(f"{b}/Class?room={code}")  # the other server: it reads the room and the upload
    box = see(student, student.get_by_role("textbox", name="Your name"), timeout=FIRST_S)
    box.fill("Ana")
    box.press("Enter")
    click(student, student.get_by_role("button", name="Join", exact=True), until=following(0), timeout=FIRST_S)
    see(teacher, status(0, 1))
    return teacher, student, code


def every_write_kept(rooms, code: str, text: bytes) -> None:
    """What any process finds in the store afterwards: the room at step 1, its member, the
    revealed answer and the uploaded corpus (``rooms`` is closed after)."""
    try:
        room = rooms.get(code)
        assert room is not None and room.step == 1
        assert [m.name for m in rooms.members(code)] == ["Ana"]
        assert [(a.value, q.state) for q in rooms.questions(code) for a in rooms.answers(code, q.qid)] == [
            (0, "revealed")
        ]
        assert rooms.store.get(hashlib.sha256(text).hexdigest()).data == text
    finally:
        rooms.close()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_two_sqlite_servers_an_operators_shell_and_a_restart_lose_no_room_member_answer_or_upload(tmp_path, chromium):
    data = tmp_path / "data"
    text = f"low lower newest widest {uuid.uuid4().hex}\n".encode() * 40
    with fleet(tmp_path, BPE_EXPLORER_DATA=str(data), BPE_EXPLORER_STORE="sqlite") as servers:
        teacher, student, code = lesson(chromium, servers.url("a"), servers.url("b"), text)
        try:
            # an operator looks at the rooms and copies the WAL into the file (a backup would)
            assert operator_shell(data, "SELECT code FROM rooms; PRAGMA wal_checkpoint;").startswith(code)
            ask = teacher.get_by_role("button", name="Ask: which pair merges next?")
            click(teacher, ask, until=re.compile(r"^0 answers in / 1 students present$"))
            option = see(student, student.locator(".st-key-class_opt_1_0 button"))
            click(student, option, until=re.compile(r"^Your answer: "))
            see(teacher, re.compile(r"^1 answers in / 1 students present$"))
            # the operator again: opening and closing the database while both servers use it
            assert operator_shell(data, "SELECT COUNT(*) FROM room_answers").strip() == "1"
            for name in ("a", "b"):
                assert deleted_store_files(servers.pid(name)) == [], name
            click(teacher, teacher.get_by_role("button", name="Reveal", exact=True), until=status(1, 1))
            see(student, following(1))
            restart(servers, "a", teacher)
            see(teacher, status(1, 1), timeout=FIRST_S)  # the room, its member and its step, read back
            no_exception(teacher, student)
        finally:
            teacher.context.close()
            student.context.close()
        assert "Traceback" not in servers.logs(), servers.logs()[-3000:]
    every_write_kept(SqliteRooms(SqliteStore(data, cap_bytes=MIB, session_quota=MIB), limits=Limits()), code, text)


@pytest.mark.browser
@pytest.mark.slow
def test_two_redis_servers_heal_when_redis_stops_mid_class_and_a_restart_loses_nothing(tmp_path, chromium):
    program = require_redis()
    kept = tmp_path / "redis"  # the server keeps its data (an append-only file), as a class's should
    kept.mkdir()
    redis = redis_server(program, folder=str(kept))
    url = redis.__enter__()
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    text = f"low lower newest widest {uuid.uuid4().hex}\n".encode() * 40
    try:
        with fleet(tmp_path, BPE_EXPLORER_STORE=url) as servers:
            teacher, student = None, None
            try:
                teacher, student, code = lesson(chromium, servers.url("a"), servers.url("b"), text)
                ask = teacher.get_by_role("button", name="Ask: which pair merges next?")
                click(teacher, ask, until=re.compile(r"^0 answers in / 1 students present$"))
                click(student, see(student, student.locator(".st-key-class_opt_1_0 button")), until="Your answer: ")
                see(teacher, re.compile(r"^1 answers in / 1 students present$"))
                for page in (teacher, student):
                    page.evaluate("() => { window.__sameDocument = true; }")  # gone if the page reloads

                # Redis stops mid-class: both pages say so by themselves (their polls get no answer)
                redis.__exit__(None, None, None)
                redis = None
                for page in (teacher, student):
                    see(page, UNREACHABLE)
                # while it is down the room's step cannot be read or moved: the teacher's stepper
                # (its Step, Back, slider) is not offered, the sentence says why
                expect(teacher.get_by_role("button", name="Step", exact=True)).to_have_count(0, timeout=SEE_S * 1000)
                no_exception(teacher, student)

                # Redis is back on its port, with its data: both pages heal without a reload
                redis = redis_server(program, port=port, folder=str(kept))
                redis.__enter__()
                see(teacher, re.compile(r"^1 answers in / 1 students present$"), timeout=FIRST_S)
                see(student, re.compile(r"^Your answer: "), timeout=FIRST_S)
                for page in (teacher, student):
                    wait_idle(page, settle=0, gone=page.get_by_text(UNREACHABLE))
                    assert page.evaluate("() => window.__sameDocument === true"), f"{page.url} was reloaded"
                see(teacher, status(0, 1))
                expect(teacher.get_by_role("button", name="Step", exact=True)).to_have_count(1)  # offered again
                click(teacher, teacher.get_by_role("button", name="Reveal", exact=True), until=status(1, 1))
                see(student, following(1))
                no_exception(teacher, student)

                restart(servers, "a", teacher)  # SIGTERM and start again: the room is read back
                see(teacher, status(1, 1), timeout=FIRST_S)
                no_exception(teacher)
            finally:
                for page in (teacher, student):
                    if page is not None:
                        page.context.close()
            assert "Traceback" not in servers.logs(), servers.logs()[-3000:]
        every_write_kept(RedisRooms(RedisStore(url, cap_bytes=MIB, session_quota=MIB), limits=Limits()), code, text)
    finally:
        if redis is not None:
            redis.__exit__(None, None, None)
