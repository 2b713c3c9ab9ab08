"""The Class page while its store cannot be used (AppTest: a teacher's and a student's sessions in
this process; the live pages heal by themselves in tests/test_store_processes.py).

The failure is a real one that root cannot walk through: the store's data folder moved away and
a file put in its place (a network mount gone, an operator's slip). Every path of the page (the
lobby's Start and Join, the teacher's Step, Back, slider, Ask, Close and Reveal, a student's
answer and presence) then draws one sentence, never an exception; once the folder is back, the
next run of each page shows the room as it was, and the action works."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from conftest import unescaped
from test_class_page import following_step, opened, param, student, teacher

from explorer.serving.rooms import Limits, SqliteRooms
from explorer.serving.store import SqliteStore, StoreError
from explorer.ui import class_view
from explorer.ui.class_view import UNREACHABLE


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    """The rooms' data folder (the test's own), in place of the process's rooms."""
    where = tmp_path / "data"
    made = SqliteRooms(SqliteStore(where, cap_bytes=2**24, session_quota=2**24), limits=Limits(rooms=4, members=5))
    monkeypatch.setattr(class_view, "_rooms", [made])
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
        assert "teacher key" in unescaped(t.caption[0].value)  # what came before the panel is still drawn
    assert not t.run().exception and "0 answers in / 1 students present" in " ".join(
        h.proto.body for h in t.get("html")
    ).replace("<b>", "").replace("</b>", "")
    assert not s.run().exception and following_step(s) == 0
