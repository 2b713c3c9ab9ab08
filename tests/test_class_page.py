"""The Class page with AppTest: a teacher's session and students' sessions in one process, the
room between them in the store. What students see is checked against the engine alone."""

from __future__ import annotations

import datetime
import html
import re

import pytest
from conftest import ROOT, read_sample, reported, step_sentence, train_html, unescaped
from streamlit.testing.v1 import AppTest

from explorer import Trainer, corpus_config
from explorer.serving.rooms import Limits, SqliteRooms
from explorer.serving.store import SqliteStore
from explorer.stages.pipeline import count_words
from explorer.ui import class_room, class_view, storage
from explorer.ui.render import style_of, token_text
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
PAGE = "pages/5_Class.py"
CORPUS = "udhr_en.txt"
TIMEOUT = 60
HOSTILE = "<img src=x onerror=alert(1)> **bold** $x$"


def engine() -> Trainer:
    """The merges the room should make: the engine alone, on the teacher's corpus and preset."""
    config = corpus_config("gpt2")
    trainer = Trainer(count_words((read_sample(CORPUS),), config), config)
    trainer.advance(40)
    return trainer


def param(at: AppTest, name: str) -> str | None:
    value = at.query_params.get(name)
    return value[0] if isinstance(value, list) else value


def teacher(corpus: str | CorpusChoice = CORPUS) -> tuple[AppTest, str, str]:
    """A teacher's session that started a room on ``corpus`` (a sample's name, or a choice): it,
    the room's code and the teacher key its session keeps."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = CorpusChoice(samples=(corpus,)) if isinstance(corpus, str) else corpus
    at.run()
    code = start_room(at)
    assert param(at, "key") is None, dict(at.query_params)  # the key is kept off the address
    key = at.session_state["class_teacher_keys"][code]
    return at, code, key


def start_room(at: AppTest) -> str:
    """A session that has run (its corpus and training chosen) opens the Class page and starts a
    room there: the room's code."""
    at.switch_page(PAGE).run()
    at.button(key="class_start").click().run()
    assert not at.exception, at.exception
    code = param(at, "room")
    assert code, dict(at.query_params)
    return code


def opened(query: dict[str, str]) -> AppTest:
    """A fresh session opening the Class page at this address."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(PAGE)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def student(code: str, name: str) -> AppTest:
    at = opened({"room": code})
    at.text_input(key="w_class_name").input(name).run()
    at.button(key="class_join").click().run()
    assert not at.exception, at.exception
    assert param(at, "member"), [e.value for e in at.error]
    return at


def markdown(at: AppTest) -> str:
    return " ".join(unescaped(m.value) for m in at.markdown)


def following_step(at: AppTest) -> int:
    found = re.search(r"following the teacher at step (\d+)", markdown(at).replace("*", ""))
    assert found, markdown(at)
    return int(found.group(1))


def panels_text(at: AppTest) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", " ".join(train_html(at))))


@pytest.fixture(autouse=True)
def fresh_rooms(tmp_path, monkeypatch):
    """Rooms of the test's own (small limits), in place of the process's."""
    made = SqliteRooms(
        SqliteStore(tmp_path, cap_bytes=2**24, session_quota=2**24), limits=Limits(rooms=2, members=3, idle_hours=1)
    )
    monkeypatch.setattr(class_room, "_rooms", [made])
    yield made
    made.close()


def test_students_follow_the_teachers_steps_and_see_the_engines_merges():
    t, code, _ = teacher()
    s = student(code, "Ana")
    assert following_step(s) == 0
    t.button(key="class_step").click().run()
    t.button(key="class_step").click().run()
    t.button(key="class_step10").click().run()
    s.run()
    assert following_step(s) == 12
    record = engine().records[11]
    info = unescaped(s.info[0].value)
    assert info.startswith("**Step 12.**") and f"→ ‘{token_text(record.token, style_of('byte'))}’" in info
    # the merge history shows the room's 12 merges, and not the one trained ahead of it
    text = panels_text(s)
    assert "12 merges made in this room" in text
    t.button(key="class_back").click().run()
    assert following_step(s.run()) == 11


def test_following_students_train_nothing_and_stepping_ahead_trains_a_copy():
    t, code, _ = teacher()
    t.button(key="class_step10").click().run()
    s = student(code, "Ana")
    room = class_view.rooms().get(code)
    shared = class_view.room_run(code, __import__("json").dumps(room.view, sort_keys=True)).trainer
    trained = len(shared.records)
    assert trained == 11  # the room's step and the next merge's table: nothing more
    s.run()
    s.button(key="class_own").click().run()
    for _ in range(5):
        s.button(key="class_own_step10").click().run()
    assert "on your own at step 60" in markdown(s).replace("*", "")
    assert len(shared.records) == trained and class_view.rooms().get(code).step == 10
    s.button(key="class_follow").click().run()
    assert following_step(s) == 10


def test_a_question_hides_the_pair_table_until_the_reveal_and_scores_the_right_pair():
    t, code, key = teacher()
    t.button(key="class_step").click().run()
    ana, bo = student(code, "Ana"), student(code, HOSTILE)
    truth = engine().records[1]  # the merge the question is about: step 2
    t.run()
    t.button(key="class_ask_merge").click().run()
    assert not t.exception
    question = class_view.rooms().question(code, 1)
    assert question.options[question.answer] == truth.pair and len(question.options) == 8
    for at in (t, ana.run()):
        assert "Hidden until the reveal" in panels_text(at)
        assert "Green: merges next" not in panels_text(at)
    right, wrong = question.answer, (question.answer + 1) % 8
    ana.button(key=f"class_opt_1_{wrong}").click().run()
    ana.button(key=f"class_opt_1_{right}").click().run()  # changed: one answer still
    bo.run().button(key=f"class_opt_1_{wrong}").click().run()
    t.run()
    tally = " ".join(h.proto.body for h in t.get("html") if "cls-tally" in h.proto.body)
    assert re.sub(r"<[^>]+>", "", tally).startswith("2 answers in / 2 students present")
    t.button(key="class_close").click().run()
    for at in (t, ana.run()):  # closed is not revealed: the table stays hidden
        assert "Hidden until the reveal" in panels_text(at)
    t.button(key="class_reveal").click().run()
    assert class_view.rooms().get(code).step == 2
    ana.run(), bo.run()
    assert "You got it!" in unescaped(ana.success[0].value)
    assert "Not this time." in unescaped(bo.info[0].value)
    board = next(h.proto.body for h in ana.get("html") if "cls-board" in h.proto.body)
    names = re.findall(r"<tr[^>]*><td>\d+</td><td>(.*?)</td><td>(\d+)</td>", board)
    assert names == [("Ana", "1"), (html.escape(HOSTILE), "0")]  # the hostile name escaped, as text
    assert "Green: merges next" in panels_text(ana)


def test_a_rerun_carrying_a_students_label_from_before_a_hide_keeps_the_tools_on_that_student():
    at, code, _ = teacher()
    student(code, "Ada")
    cyd = param(student(code, "Cyd"), "member")
    at.run()
    at.selectbox(key="w_class_mod_member").set_value(cyd).run()
    at.button(key="class_mod_hide").click().run()
    assert at.selectbox(key="w_class_mod_member").value == at.session_state["class_mod_member"]
    assert [b.label for b in at.button if b.key == "class_mod_show"] == ["Show the name"]
    # a follow rerun that left the browser before the hide's answer came back sends the box's label
    # as it was drawn then ("Cyd"), which names no option now: AppTest sends a value's label, and
    # the label of a value that is no member is "(gone)"
    stale = at.selectbox(key="w_class_mod_member")
    stale.options.append("(gone)")
    stale.set_value("Cyd").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="w_class_mod_member").format_func(at.session_state["class_mod_member"]) == (
        "Cyd · hidden on the leaderboard"
    )
    assert [b.label for b in at.button if b.key == "class_mod_show"] == ["Show the name"]


def test_a_token_count_question_reveals_after_its_merges_with_the_engines_count():
    t, code, _ = teacher()
    s = student(code, "Ana")
    t.text_input(key="w_class_sentence").input("everyone has the right to life").run()
    t.number_input(key="w_class_ahead").set_value(7).run()
    t.button(key="class_ask_count").click().run()
    assert not t.exception
    truth = len(engine().tokenizer(7).encode("everyone has the right to life"))
    s.run()
    s.number_input(key="w_class_guess_1").set_value(truth + 1).run()
    s.button(key="class_send_1").click().run()
    t.run().button(key="class_reveal").click().run()
    assert class_view.rooms().get(code).step == 7
    s.run()
    assert f"The answer: {truth} tokens" in unescaped(s.success[0].value)


def test_the_teachers_stepper_moves_the_room_by_its_report_and_nothing_else_does():
    t, code, _ = teacher()
    s = student(code, "Ana")
    t.run()
    reported(t, 7, seq=1)  # the teacher's stepper showed step 7 (its browser stepped there by itself)
    assert not t.exception and class_view.rooms().get(code).step == 7
    assert step_sentence(t).startswith("**Step 7.**")  # the server's view followed: step 7's entry
    record = engine().records[6]
    s.run()
    assert following_step(s) == 7 and step_sentence(s).startswith("**Step 7.**")
    assert f"→ ‘{token_text(record.token, style_of('byte'))}’" in step_sentence(s)
    reported(s, 20, seq=1)  # a student's stepper reports too: it asks for steps, it moves nothing
    assert class_view.rooms().get(code).step == 7
    reported(t, 9, seq=2, gen="an older generation")  # from before the server moved the step itself
    assert class_view.rooms().get(code).step == 7
    keys = dict(t.session_state["class_teacher_keys"])
    for seq, forged in enumerate(({code: keys[code][:-2] + "xx"}, {}), 3):  # a forged key, then none at all
        t.session_state["class_teacher_keys"] = keys
        t.run()  # the teacher's page, its stepper drawn; then its key is not the room's when it reports
        t.session_state["class_teacher_keys"] = forged
        reported(t, 9, seq=seq)
        assert not t.exception and class_view.rooms().get(code).step == 7


def test_a_forged_teacher_link_drives_nothing():
    t, code, key = teacher()
    forged = opened({"room": code, "key": key[:-2] + ("AA" if not key.endswith("AA") else "BB")})
    assert "teacher key is wrong" in forged.error[0].value
    keys = {b.key for b in forged.button}
    assert not keys & {"class_step", "class_step10", "class_back", "class_play", "class_reveal", "class_ask_merge"}
    assert class_view.rooms().get(code).step == 0


def test_an_unknown_code_and_a_full_server_are_said_in_the_page():
    missing = opened({"room": "ZZZZZZ"})
    assert "No room has the code 'ZZZZZZ'" in unescaped(missing.error[0].value)
    teacher(), teacher()
    third = opened({})
    third.button(key="class_start").click().run()
    assert "2 open rooms, its limit" in unescaped(third.error[0].value)
    assert not third.exception


def test_a_full_room_says_so_and_an_empty_name_is_asked_for():
    _, code, _ = teacher()
    for n in range(3):
        student(code, f"student {n}")
    late = opened({"room": code})
    late.text_input(key="w_class_name").input("late").run()
    late.button(key="class_join").click().run()
    assert "3 members, its limit" in unescaped(late.error[0].value)
    blank = opened({"room": code})
    blank.button(key="class_join").click().run()
    assert "Type a name" in unescaped(blank.error[0].value)


def test_a_room_on_an_uploaded_corpus_gives_students_its_merges():
    from explorer.serving.store import default_store

    text = "low lower lowest newer newest wider widest " * 50
    digest = default_store().put(text.encode(), kind="corpus", name="mine.txt")
    at, code, _key = teacher(CorpusChoice(samples=(), uploads=(("mine.txt", text),), upload_refs=(f"upload:{digest}",)))
    assert class_view.rooms().get(code).view["corpus"] == f"upload:{digest}"
    at.button(key="class_step10").click().run()
    s = student(code, "Ana")
    config = corpus_config("gpt2")
    truth = Trainer(count_words((text,), config), config)
    truth.advance(10)
    text_shown = panels_text(s)
    newest = token_text(truth.records[9].token, style_of("byte"))
    assert following_step(s) == 10 and f"→ ‘{newest}’" in unescaped(s.info[0].value), text_shown[:300]


def test_a_question_brings_a_student_stepping_ahead_back_to_the_room():
    t, code, _ = teacher()
    s = student(code, "Ana")
    s.button(key="class_own").click().run()
    s.button(key="class_own_step10").click().run()
    assert "on your own at step 10" in markdown(s).replace("*", "")
    t.run().button(key="class_ask_merge").click().run()
    s.run()
    assert following_step(s) == 0 and s.button(key="class_own").disabled
    assert "Hidden until the reveal" in panels_text(s)


# ---- nothing exhausted, nothing lost -------------------------------------------------------------
def limited_rooms(monkeypatch, tmp_path, limits: Limits) -> SqliteRooms:
    """Rooms of the test's own with ``limits``, kept in the same store as the pages' uploads (as
    the app has them: ``rooms_for(storage.store())``)."""
    made = SqliteRooms(SqliteStore(tmp_path / "limited", cap_bytes=2**24, session_quota=2**24), limits=limits)
    monkeypatch.setattr(class_room, "_rooms", [made])
    monkeypatch.setattr(storage, "store", lambda: made.store)
    return made


def clock_at(at: float) -> str:
    """A time of day as the server says it (its own time zone: AppTest has no browser's)."""
    return datetime.datetime.fromtimestamp(at).strftime("%H:%M")


def test_one_browser_starting_room_after_room_is_stopped_with_when_a_slot_frees(monkeypatch, tmp_path):
    made = limited_rooms(monkeypatch, tmp_path, Limits(rooms=10, starts=2))
    at, code, _ = teacher()
    first = made.get(code).created
    for _ in range(2):  # back to the lobby (the same browser), and start again
        at.button(key="class_mod_lobby").click().run()
        at.button(key="class_start").click().run()
    assert not at.exception
    assert param(at, "room") is None and param(at, "key") is None  # the third start made no room
    said = unescaped(at.error[0].value)
    assert said == (
        "This browser has started 2 rooms in the last hour, its limit (BPE_EXPLORER_ROOM_STARTS): "
        f"the next one frees at {clock_at(first + 3600)}, in 60 minutes."
    )


def test_guessing_room_codes_is_refused_past_the_limit_even_for_a_code_that_exists(monkeypatch, tmp_path):
    limited_rooms(monkeypatch, tmp_path, Limits(misses=3))
    _, code, _ = teacher()
    guesser = opened({})
    for guess in ("ZZZZZ2", "ZZZZZ3", "ZZZZZ4"):
        guesser.query_params["room"] = guess
        guesser.run()
        assert f"No room has the code '{guess}'" in unescaped(guesser.error[0].value)
    guesser.query_params["room"] = code  # a room that exists: refused like the rest, its lobby not shown
    guesser.run()
    assert not guesser.exception
    said = unescaped(guesser.error[0].value)
    assert said.startswith(
        "Too many room codes that match no room were tried from this browser or its network address: try again at "
    ), said
    assert re.search(r"try again at \d\d:\d\d, in \d+ seconds\.$", said), said
    assert f"Room **{code}**" not in markdown(guesser) and param(guesser, "room") is None
    guesser.text_input(key="w_class_code").input(code).run()  # typing the code in the lobby: refused too
    guesser.text_input(key="w_class_name").input("Eve").run()
    guesser.button(key="class_join").click().run()
    assert unescaped(guesser.error[0].value).startswith("Too many room codes") and param(guesser, "member") is None
    s = student(code, "Ana")  # another browser is not refused
    assert following_step(s) == 0


def test_stepping_past_the_end_of_a_short_training_stops_at_its_last_merge(monkeypatch, tmp_path):
    made = limited_rooms(monkeypatch, tmp_path, Limits())
    text = "aaab abab"
    digest = made.store.put(text.encode(), kind="corpus", name="tiny.txt")
    at, code, _key = teacher(CorpusChoice(samples=(), uploads=(("tiny.txt", text),), upload_refs=(f"upload:{digest}",)))
    config = corpus_config("gpt2")
    truth = Trainer(count_words((text,), config), config)
    merges = len(truth.run().records)
    assert 0 < merges < 10
    at.button(key="class_step10").click().run()  # ten merges asked, fewer trained: the last one
    assert made.get(code).step == merges and not at.error and not at.exception
    assert at.button(key="class_step10").disabled  # at the end: nothing further to ask for
    assert made.get(code).top >= merges


def test_forget_my_uploads_says_which_rooms_keep_a_file_and_the_room_still_opens(monkeypatch, tmp_path):
    made = limited_rooms(monkeypatch, tmp_path, Limits())
    text = "low lower lowest newer newest wider widest " * 50
    digest = made.store.put(text.encode(), kind="corpus", name="mine.txt", owner="b:teacher")
    made.store.put(text.encode(), kind="corpus", name="mine.txt", owner="b:colleague")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["store_owner"] = "b:teacher"
    at.session_state["corpus_choice"] = CorpusChoice(
        samples=(), uploads=(("mine.txt", text),), upload_refs=(f"upload:{digest}",)
    )
    at.run()
    at.switch_page(PAGE).run()
    at.button(key="class_start").click().run()
    code = param(at, "room")
    at.switch_page("pages/1_Corpus.py").run()
    at.button(key="forget_uploads").click().run()
    assert not at.exception
    said = unescaped(at.success[0].value)
    assert said == (
        "Removed 0 files of yours from the server; links that name them no longer open them. "
        f"1 file stays while the rooms using it are open, and goes when they close: “mine.txt” (your room {code})."
    )
    colleague = AppTest.from_file(APP, default_timeout=TIMEOUT)
    colleague.session_state["store_owner"] = "b:colleague"
    colleague.run()
    colleague.switch_page("pages/1_Corpus.py").run()
    colleague.button(key="forget_uploads").click().run()
    said = unescaped(colleague.success[0].value)
    assert said.endswith("“mine.txt” (1 room someone else started).") and code not in said, said
    # a restarted server builds the room's training again from the store: the file is still there
    class_view.room_run.clear()
    s = student(code, "Ana")
    assert following_step(s) == 0 and not s.error


def test_the_join_link_names_the_public_url_and_the_sidebar_brings_the_teacher_back(monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_PUBLIC_URL", "https://bpe.school.example/")
    at, code, key = teacher()
    link = f"https://bpe.school.example/Class?room={code}"
    assert f"Join link: {link}" in [unescaped(c.value) for c in at.caption], [c.value for c in at.caption]
    assert not at.warning, [w.value for w in at.warning]  # a public address: nothing said against it
    # the teacher leaves Class by the sidebar (another page, no address of the room) and comes back
    at.switch_page("pages/2_Train.py").run()
    at.query_params.clear()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert param(at, "room") == code and param(at, "key") is None, dict(at.query_params)
    assert {"class_step", "class_ask_merge"} <= {b.key for b in at.button}
    at.button(key="class_step").click().run()
    assert class_view.rooms().get(code).step == 1
    shown = [e.value for kind in (at.markdown, at.caption, at.warning, at.info) for e in kind if e.value]
    assert not [s for s in shown if key in str(s)]  # the key is in nothing the page writes


def test_a_public_url_that_is_no_address_is_said_in_the_teachers_page(monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_PUBLIC_URL", "bpe.school.example")
    at, code, _ = teacher()
    assert any("is not an address students can open" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not at.exception
