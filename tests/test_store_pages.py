"""What the pages say when their store fails or is lost (AppTest: sessions in this process; the
live pages heal by themselves in tests/test_store_processes.py).

An outage here is a real one that root cannot walk through: the store's data folder moved away
and a file put in its place (a network mount gone, an operator's slip). Every path of the Class
page (the lobby's Start and Join, the teacher's Step, Back, slider, Ask, Close and Reveal, a
student's answer and presence) then draws one sentence, never an exception; once the folder is
back, the next run of each page shows the room as it was, and the action works.

A store lost for good (its file deleted: recreated empty) is said once to every session that
was using it, a room that was in it says when the store began again, and so does a link to an
upload that was in it."""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

import pytest
from conftest import unescaped
from streamlit.testing.v1 import AppTest
from test_class_page import APP, TIMEOUT, following_step, opened, param, student, teacher

from explorer.serving import store as store_module
from explorer.serving.rooms import Limits, SqliteRooms
from explorer.serving.store import SqliteStore, StoreError
from explorer.ui import class_room, class_view
from explorer.ui.class_view import UNREACHABLE


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """The rooms' data folder (the test's own), in place of the process's rooms."""
    where = tmp_path / "data"
    made = SqliteRooms(SqliteStore(where, cap_bytes=2**24, session_quota=2**24), limits=Limits(rooms=4, members=5))
    monkeypatch.setattr(class_room, "_rooms", [made])
    assert made.get("AAAAAA") is None  # the folder and its file made
    yield where
    made.close()


@contextlib.contextmanager
def store_gone(folder: Path):
    """The data folder moved away, a file where it was; put back after."""
    away = folder.with_name("away")
    folder.rename(away)
    folder.write_bytes(b"not a folder")
    try:
        yield
    finally:
        folder.unlink()
        away.rename(folder)


def said_unreachable(at) -> None:
    """The page says the store is unreachable, once, and shows no exception."""
    assert not at.exception, at.exception
    said = [unescaped(e.value) for e in (*at.warning, *at.error)]
    assert said.count(UNREACHABLE) == 1, said


def test_every_path_of_the_class_page_says_the_store_is_unreachable_and_works_once_it_is_back(folder):
    # the lobby: Start a room
    lobby = opened({})
    with store_gone(folder):
        lobby.button(key="class_start").click().run()
        said_unreachable(lobby)
    lobby.button(key="class_start").click().run()
    assert param(lobby, "room") and not lobby.exception

    t, code, key = teacher()
    # the lobby: Join
    joining = opened({"room": code})
    joining.text_input(key="w_class_name").input("Ana")
    with store_gone(folder):
        joining.button(key="class_join").click().run()
        said_unreachable(joining)
    joining.run().button(key="class_join").click().run()
    assert param(joining, "member") and not joining.exception
    s = student(code, "Bo")

    def teacher_step() -> int:
        return class_view.rooms().get(code).step

    # the teacher's controls: each one clicked while the store is gone, then again once it is back
    controls = [
        (lambda: t.button(key="class_step").click().run(), 1),
        (lambda: t.button(key="class_step10").click().run(), 11),
        (lambda: t.button(key="class_back").click().run(), 10),
        (lambda: t.slider(key="w_class_step").set_value(4).run(), 4),
    ]
    for act, step in controls:
        before = teacher_step()
        with store_gone(folder):
            act()
            said_unreachable(t)
            s.run()  # the student's page too (its presence is written on the way)
            said_unreachable(s)
        assert teacher_step() == before  # nothing moved meanwhile
        t.run()
        assert not t.exception and not [w for w in t.warning if UNREACHABLE in w.value]
        act()
        assert teacher_step() == step, (step, teacher_step())
        assert following_step(s.run()) == step

    # a question: asked, answered, closed and revealed, each first while the store is gone
    with store_gone(folder):
        t.button(key="class_ask_merge").click().run()
        said_unreachable(t)
    t.run().button(key="class_ask_merge").click().run()
    question = class_view.rooms().question(code, 1)
    assert question is not None and question.state == "open"
    s.run()
    with store_gone(folder):
        s.button(key=f"class_opt_1_{question.answer}").click().run()
        said_unreachable(s)
    s.run().button(key=f"class_opt_1_{question.answer}").click().run()
    assert [a.member for a in class_view.rooms().answers(code, 1)] == [param(s, "member")]
    for button, state in (("class_close", "closed"), ("class_reveal", "revealed")):
        t.run()
        with store_gone(folder):
            t.button(key=button).click().run()
            said_unreachable(t)
        t.run().button(key=button).click().run()
        assert class_view.rooms().question(code, 1).state == state
    assert "You got it!" in unescaped(s.run().success[0].value)


def test_a_store_failing_midway_through_a_room_panel_says_so_in_the_panel(folder, monkeypatch):
    """An outage that begins while a page is drawn: the page's first reads work, those of the
    room's panel (a fragment, which Streamlit reruns on its own) fail."""
    t, code, _key = teacher()
    s = student(code, "Ana")
    t.button(key="class_ask_merge").click().run()
    rooms = class_view.rooms()

    def unreachable(*_args, **_kwargs):
        raise StoreError("The app's store (its Redis server) cannot be reached; try again in a moment.")

    with monkeypatch.context() as patch:
        patch.setattr(rooms, "present", unreachable)  # the teacher's panel counts who is present
        patch.setattr(rooms, "question", unreachable)  # the student's panel reads the question
        said_unreachable(t.run())
        said_unreachable(s.run())
        assert (
            unescaped(t.caption[0].value).startswith("Join link: ") and code in t.caption[0].value
        )  # what came before the panel is still drawn
    assert not t.run().exception and "0 answers in / 1 students present" in " ".join(
        h.proto.body for h in t.get("html")
    ).replace("<b>", "").replace("</b>", "")
    assert not s.run().exception and following_step(s) == 0


LOST = re.compile(r"found damaged, removed or emptied and started again, empty, at (\d\d:\d\d) \(server time\)")


def said(at) -> str:
    return " ".join(unescaped(e.value) for e in (*at.warning, *at.error))


def test_a_lost_store_is_said_once_to_every_session_that_used_it_and_by_its_rooms_and_links(folder, monkeypatch):
    store = class_view.rooms().store  # the app's store is the rooms' store: one file for both
    monkeypatch.setattr(store_module, "_default", store)
    home, other = (AppTest.from_file(APP, default_timeout=TIMEOUT).run() for _ in range(2))
    t, code, _key = teacher()
    digest = store.put(b"low lower newest widest " * 20, kind="corpus", name="mine.txt", owner="b:ana")
    assert not any(LOST.search(said(at.run())) for at in (home, other, t))

    os.remove(folder / "store.sqlite3")  # gone for good: recreated empty at the next call
    assert LOST.search(said(home.run())), said(home)  # the session that finds it is told
    at = time.strftime("%H:%M", time.localtime(store.generation().created))
    assert LOST.search(said(home)).group(1) == at, said(home)
    # and so is every other session that used the old store (not only the first to ask, in this process)
    assert LOST.search(said(other.run())), said(other)
    t.run()  # the teacher's room is gone, and the page says why
    assert LOST.search(said(t)).group(1) == at, said(t)
    assert f"No room has the code '{code}' any more" in said(t) and "idle hours" not in said(t)
    assert not any(LOST.search(said(at.run())) for at in (home, other))  # once each
    assert not LOST.search(said(AppTest.from_file(APP, default_timeout=TIMEOUT).run()))  # it never used the old
    # a link to the upload that was in it, opened in a new session, says why it is gone
    link = AppTest.from_file(APP, default_timeout=TIMEOUT)
    link.query_params["corpus"] = f"upload:{digest}"
    link.switch_page("pages/1_Corpus.py").run()
    assert not link.exception
    assert f"({digest[:12]}…) is no longer on this server (the app's store was found damaged" in said(link)
