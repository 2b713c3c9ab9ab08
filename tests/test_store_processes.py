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

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.serving.rooms import Limits, SqliteRooms
from explorer.serving.store import FILE_NAME, SqliteStore

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
