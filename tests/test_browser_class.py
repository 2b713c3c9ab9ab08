"""The Class page, live (headless Chromium, one browser, four contexts at 1280x720): a teacher
starts a room; its page names the join link by this machine's network address (never loopback:
read from the page, and the QR code's image decoded, zxing-cpp) and keeps the teacher key off
the address bar (a cookie named for the room keeps it: a reload keeps the teacher); one student
joins by typing its code in the lobby, two open the join link's path (on loopback: no test sends
a packet elsewhere; one of them named ``<img src=x onerror=alert(1)> **bold** $x$``); the teacher
opens the presenter view in a second window of its browser; the students follow three of the
teacher's steps; a next-merge question is asked, all three answer, one changes its answer, the
teacher's tally counts each once, the reveal marks the right option, tells each student whether
it won, names the wrong answer most chosen, and the leaderboard gives the winners their point in
the order they answered. A student cannot drive the room: its page has no teacher controls, and
a forged teacher link (a wrong key) shows a message and leaves the room's step alone. The key is
in no student's page (HTML and address), nor in the presenter's, nor in the teacher's address or
text. Then the teacher moderates: renames the hostile name, hides another, removes a student
(its answer leaves the tally, its page says so), locks joining (the removed student's new try is
refused with a sentence), downloads the results as CSV (checked row by row), and ends the room
(every page says so).

The steppers: the teacher steps with its stepper (clicks and keys) and a student's page draws the
room's step (the engine's pair table, history and words) from the window its stepper holds,
without a run of the page.

No dialog opens and no script error is raised on any page; the server logs no traceback; an
idle student's page keeps at most one request to /room-rev waiting per counter it watches. A prober of /room-rev (plain
HTTP from its own loopback address) learns nothing: a missing room and a wrong member answer
alike, and a guessing loop is refused (429) past its address's limit. Screenshots of what the
projector and a laptop show (viewport, not full page) land in test-artifacts/:
class-teacher-1280x720.png, class-student-1280x720.png, class-teacher-1920x1080.png (after the
reveal), class-teacher-question-1280x720.png (the tally while the question is open),
class-presenter-1280x720.png and class-presenter-1920x1080.png (the projector's view after the
reveal) and class-teacher-manage-1280x720.png (the teacher's moderation tools open).

Waits: every check of what another browser did (a student following the teacher, the teacher's
tally) retries for ``FOLLOW_S`` seconds; the pages aim at well under a second, but a test does
not race a clock on a loaded machine."""

from __future__ import annotations

import csv
import http.client
import io
import ipaddress
import json
import re
import secrets
import time
import urllib.request
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import pytest
from appserver import ARTIFACTS, follow_runs, look_until, require_chromium, wait_idle
from conftest import drawn_step, engine_step, log_since, read_sample

from explorer import Trainer, corpus_config
from explorer.serving.addresses import lan_addresses
from explorer.serving.rooms import HIDDEN_NAME, Limits, SqliteRooms, follow_token
from explorer.serving.store import SqliteStore
from explorer.stages.pipeline import count_words

pytestmark = [pytest.mark.browser, pytest.mark.slow]

require_chromium()

from playwright.sync_api import expect  # noqa: E402  (after the skip)

PROJECTOR = {"width": 1280, "height": 720}
WIDE = {"width": 1920, "height": 1080}
FOLLOW_S = 10.0  # seconds: what another browser did must show by then (the aim is well under 1 s)
FIRST_S = 90.0  # seconds: the first run of a room trains its first merges (a cold, busy machine)
HOSTILE = "<img src=x onerror=alert(1)> **bold** $x$"
BY_CODE, OTHER = "Ada Lovelace", "Cyd"  # the student who types the code; the other one by link
COUNT = re.compile(r"\(([\d,]+)\)\s*$")  # an option's count, "(1,234)", at the end of its label


@pytest.fixture(scope="module")
def server(app_server):
    """The test process's app (tests/conftest.py: its start and stop are paid once, not again
    here) and where its log stood when this module began, to look for tracebacks from there on.
    The room is a new one (a fresh random code) in the session's store."""
    return app_server, app_server.log.stat().st_size


class Browser:
    """One Chromium (the test process's, tests/conftest.py), a context (its own cookies and
    session) per person, every page watched for dialogs (dismissed and recorded) and script
    errors."""

    def __init__(self, chromium, url: str) -> None:
        self.url = url
        self.browser = chromium
        self.contexts: list = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []

    def page(self, who: str, context=None):
        if context is None:
            context = self.browser.new_context(viewport=dict(PROJECTOR))
            self.contexts.append(context)
        page = context.new_page()
        page.who = who
        page.on("dialog", lambda d: (self.dialogs.append(f"{who}: {d.type}: {d.message}"), d.dismiss()))
        page.on("pageerror", lambda e: self.errors.append(f"{who}: {e}"))
        follow_runs(page)
        page.follow_requests = set()  # the page's requests to /room-rev still waiting for an answer
        page.follow_urls = []  # every request to /room-rev the page made, in order
        page.on("request", lambda r: "/room-rev" in r.url and page.follow_urls.append(r.url))
        page.follow_statuses = []  # the status of each answer from /room-rev
        page.on("response", lambda r: "/room-rev" in r.url and page.follow_statuses.append(r.status))
        page.on("request", lambda r: "/room-rev" in r.url and page.follow_requests.add(r))
        page.on("requestfinished", lambda r: page.follow_requests.discard(r))
        page.on("requestfailed", lambda r: page.follow_requests.discard(r))
        return page

    def close(self) -> None:
        for context in self.contexts:
            context.close()


def idle(page, *, timeout: float = FOLLOW_S, **kw) -> None:
    """Wait until the page's app is idle, the page in front first: the presenter's window and the
    forged link share a context (a window) with the teacher and a student, and the tab behind
    gets its animation frames throttled, which every click and idle check of Playwright waits
    for (a click took 2 s there, 0.1 s in front)."""
    page.bring_to_front()
    wait_idle(page, timeout=timeout, **kw)


def visible(page, what, *, timeout: float = FOLLOW_S):
    """Wait (retrying) until ``what`` (a text, a regex or a locator) is drawn; return it."""
    loc = page.get_by_text(what) if isinstance(what, (str, re.Pattern)) else what
    loc = loc.filter(visible=True).first
    look_until(page, loc, "visible", timeout)
    return loc


def following(step: int) -> re.Pattern:
    return re.compile(rf"following the teacher at step {step:,}(?!\d)")


def click(page, locator, *, until, gone=None, timeout: float = FOLLOW_S, settle: float = 5.0) -> None:
    """Click once the app is idle (a click during a rerun can be lost), then wait for its effect
    (``settle=0``: a click the browser handles alone, an expander or a list opened)."""
    idle(page, settle=0)
    locator.click()
    idle(page, timeout=timeout, until=until, gone=gone, settle=settle)


def join_by_code(page, url: str, code: str, name: str) -> None:
    page.goto(f"{url}/Class")
    visible(page, page.get_by_role("button", name="Start a room"), timeout=FIRST_S)
    idle(page, timeout=FIRST_S, settle=0)
    box = page.get_by_role("textbox", name="Room code")
    box.fill(code.lower()[:3] + " " + code.lower()[3:])  # as a student may type it: lower case, a space
    box.press("Enter")  # a text input commits on Enter (or blur): the Join button waits for the code
    join = page.get_by_role("button", name="Join", exact=True)
    expect(join).to_be_enabled(timeout=FOLLOW_S * 1000)
    _name_and_join(page, name)


def join_by_link(page, url: str, code: str, name: str, path: str | None = None) -> None:
    """Open the join link (``path``: its path and query, opened on the test's loopback server)."""
    page.goto(f"{url}{path or f'/Class?room={code}'}")
    visible(page, page.get_by_text(f"Room {code}", exact=True), timeout=FIRST_S)
    idle(page, timeout=FIRST_S, settle=0)
    assert page.get_by_role("textbox", name="Room code").count() == 0  # the link names the room
    _name_and_join(page, name)


def _name_and_join(page, name: str) -> None:
    box = page.get_by_role("textbox", name="Your name")
    box.fill(name)
    box.press("Enter")
    idle(page)
    click(page, page.get_by_role("button", name="Join", exact=True), until=following(0), timeout=FIRST_S)
    assert re.search(r"[?&]member=[^&]+", page.url), page.url


def header(page) -> str:
    """A student's first line: "Room CODE · you are NAME · following the teacher at step K"."""
    return visible(page, page.get_by_text(re.compile(r"^Room \w+ · you are "))).inner_text()


def options(page, qid: int) -> list:
    return [
        page.locator(f".st-key-class_opt_{qid}_{i} button")
        for i in range(page.locator(f'[class*="st-key-class_opt_{qid}_"] button').count())
    ]


def option_label(text: str) -> str:
    """A button's label without its count: the pair as the "Your answer" line writes it."""
    return COUNT.sub("", text).strip()


def answer(page, qid: int, i: int) -> str:
    """Click option ``i``; wait until the page says it is the student's answer; return its pair."""
    button = options(page, qid)[i]
    pair = option_label(button.inner_text())
    click(page, button, until=page.get_by_text(re.compile("^Your answer: " + re.escape(pair) + " — ")))
    expect(button).to_have_attribute("data-testid", re.compile("primary"), timeout=FOLLOW_S * 1000)
    return pair


def board_rows(page) -> list[tuple[str, int, float]]:
    """The leaderboard as (name, points, seconds), in its order; its ranks checked to be 1, 2, ..."""
    table = visible(page, page.locator(".cls-board"))
    rows = []
    for i, tr in enumerate(table.locator("tr").all()[1:], 1):
        rank, name, points, seconds = tr.locator("td").all_inner_texts()
        assert int(rank) == i, (rank, i)
        rows.append((name, int(points), float(seconds.removesuffix(" s"))))
    return rows


def expected_standings(last_picks: list[tuple[str, int]], right: int, joined: list[str]) -> list[tuple[str, int]]:
    """(name, points) in the leaderboard's order for one revealed next-merge question:
    ``last_picks`` is each student's final option, in the order those final picks were made (the
    time of the last change is the time that counts); a point to whoever picked ``right``; winners
    first, faster first; then the others, who all have 0 points and 0 s, by name (case folded)."""
    won = [name for name, pick in last_picks if pick == right]
    lost = sorted((name for name in joined if name not in won), key=str.casefold)
    return [(name, 1) for name in won] + [(name, 0) for name in lost]


def check_board(rows: list[tuple[str, int, float]], expected: list[tuple[str, int]]) -> list[str]:
    """What is wrong with a leaderboard's rows against the expected (name, points), in order."""
    found = []
    if [(n, p) for n, p, _s in rows] != expected:
        found.append(f"leaderboard {rows} != expected {expected}")
    winners = [s for _n, p, s in rows if p > 0]
    if winners != sorted(winners):
        found.append(f"winners not ordered by time: {rows}")
    if any(s != 0 for _n, p, s in rows if p == 0):
        found.append(f"a student without points has a time: {rows}")
    return found


def board_settled(page, expected: list[tuple[str, int]], *, timeout: float = FOLLOW_S) -> None:
    """Wait until ``page``'s leaderboard reads ``expected`` (a rerun redraws the page's elements one
    after another: the board may still be the last rerun's when the text above it is new)."""
    deadline = time.monotonic() + timeout
    while wrong := check_board(board_rows(page), expected):
        assert time.monotonic() < deadline, (page.who, wrong)
        page.wait_for_timeout(100)


def teacher_key(page, code: str) -> str:
    """The room's teacher key, as the teacher's browser keeps it: the cookie named for the room."""
    (value,) = [c["value"] for c in page.context.cookies() if c["name"] == f"bpe_teacher_{code}"]
    return value


def decoded_qr(page) -> str:
    """The URL the page's QR code image holds: the image fetched from the app (loopback) and
    decoded by zxing-cpp (another library than the one that drew it)."""
    import zxingcpp
    from PIL import Image

    src = page.locator('[data-testid="stImage"] img').first.get_attribute("src")
    data = page.request.get(urljoin(page.url, src)).body()
    found = zxingcpp.read_barcodes(Image.open(io.BytesIO(data)))
    assert len(found) == 1, f"{len(found)} codes read from the QR image"
    return found[0].text


def key_absent(page, key: str) -> None:
    """The key is nowhere in the page's HTML nor its address."""
    assert key not in page.url, (page.who, page.url)
    assert key not in page.content(), page.who


def room_counters(url: str, code: str, key: str) -> dict[str, int]:
    """The room's counters as the server keeps them (rev: a question, a reveal...; tally; step),
    read as the teacher's page does (with the follow token of its key)."""
    with urllib.request.urlopen(f"{url}/room-rev?code={code}&follow={follow_token(key)}", timeout=10) as r:
        return json.loads(r.read())


def test_a_class_follows_the_teacher_answers_and_sees_the_winners(server, chromium):
    url = server[0].url
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    b = Browser(chromium, url)
    try:
        code_px = _lesson(b, url)
    finally:
        b.close()
    assert not b.dialogs, f"dialogs opened: {b.dialogs}"
    assert not b.errors, f"script errors: {b.errors}"
    log = log_since(*server)
    assert "Traceback" not in log and "Uncaught app exception" not in log, log[-3000:]
    # The room code is read from the back of the room: big type. (Drawn as a <p> inside
    # st.markdown, the page's own ".cls-code {font-size: ...}" lost to the Markdown container's
    # more specific "p {font-size: inherit}" and the code came out at body size, 16 px.) Checked
    # last, so that the rest of the lesson is checked whatever this says.
    assert code_px >= 40, f"the room code on the projector is {code_px:g} px high (3.4rem = 54 px intended)"


def _lesson(b: Browser, url: str) -> float:
    """The lesson; returns the room code's font size on the teacher's page (px)."""
    # ---- the teacher starts a room ---------------------------------------------------------
    teacher = b.page("teacher")
    teacher.goto(f"{url}/Class")
    start = visible(teacher, teacher.get_by_role("button", name="Start a room"), timeout=FIRST_S)
    click(teacher, start, until=teacher.locator(".cls-code"), timeout=FIRST_S)
    code = teacher.locator(".cls-code").inner_text().strip()
    assert re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", code), code
    # the key is off the address bar: the browser keeps it in a cookie named for the room
    assert parse_qs(urlparse(teacher.url).query) == {"room": [code]}, teacher.url
    key = teacher_key(teacher, code)
    assert len(key) >= 32
    # the join link and its QR code name this machine's network address (the page is on loopback)
    link = visible(teacher, teacher.get_by_text(re.compile(r"^Join link: "))).inner_text().removeprefix("Join link: ")
    visible(teacher, teacher.locator('[data-testid="stImage"] img'))
    visible(teacher, teacher.get_by_text("Scan to join", exact=True))
    assert decoded_qr(teacher) == link
    joined = urlparse(link)
    assert joined.path == "/Class" and parse_qs(joined.query) == {"room": [code]}, link
    assert joined.port == urlparse(url).port, link
    network = lan_addresses()
    if network:
        assert joined.hostname in network and not ipaddress.ip_address(joined.hostname).is_loopback, (link, network)
        big = teacher.locator(".cls-join-address").inner_text()
        assert big == f"{joined.netloc}/Class", big  # the join address, large
    else:  # a machine on no network: the page says students cannot be given an address
        visible(teacher, teacher.get_by_text(re.compile("no network address")))
    # this server listens on loopback alone (the tests' rule): the page says phones cannot reach it
    visible(teacher, teacher.get_by_text(re.compile(r"listens on 127\.0\.0\.1 only")))
    visible(teacher, teacher.get_by_text(re.compile(r"^Step 0 · 0 joined, 0 present$")), timeout=FIRST_S)
    for name in ("Step", "+10", "Back", "Play", "Ask: which pair merges next?", "Ask: how many tokens after them?"):
        expect(teacher.get_by_role("button", name=name, exact=True)).to_have_count(1)

    # ---- three students join: one types the code in the lobby, two open the join link --------
    ada, hostile, cyd = b.page("by code"), b.page("hostile name"), b.page("by link")
    join_by_code(ada, url, code, BY_CODE)
    assert parse_qs(urlparse(ada.url).query)["room"] == [code], ada.url
    path = f"{joined.path}?{joined.query}"  # the shown link, opened on loopback
    join_by_link(hostile, url, code, HOSTILE, path)
    join_by_link(cyd, url, code, OTHER, path)
    students = [ada, hostile, cyd]
    names = {ada: BY_CODE, hostile: HOSTILE, cyd: OTHER}
    for page in students:
        assert f"you are {names[page]} · following the teacher at step 0" in header(page), header(page)
    visible(teacher, teacher.get_by_text(re.compile(r"^Step 0 · 3 joined, 3 present$")))
    # the teacher's leaderboard lists everyone (a join reruns the teacher's room panel; the
    # status line above it is drawn first in the same rerun, so the board is waited for itself)
    expect(teacher.locator(".cls-board tr")).to_have_count(1 + len(names), timeout=FOLLOW_S * 1000)
    assert sorted(n for n, _p, _s in board_rows(teacher)) == sorted(names.values())

    # ---- the projector: the presenter view in a second window of the teacher's browser ---------
    href = teacher.get_by_role("link", name=re.compile("Presenter view")).get_attribute("href")
    presenter = b.page("presenter", context=teacher.context)
    presenter.goto(urljoin(url + "/", href))
    visible(presenter, presenter.locator(".cls-code"), timeout=FIRST_S)
    assert presenter.locator(".cls-code").inner_text().strip() == code
    visible(presenter, presenter.get_by_text(re.compile(r"^Step 0 · 3 joined")))
    if network:
        assert presenter.locator(".cls-join-address").inner_text() == f"{joined.netloc}/Class"
    assert decoded_qr(presenter) == link
    idle(presenter, settle=0)
    for name in ("Step", "+10", "Back", "Play", "Reveal", "Ask: which pair merges next?", "End the room"):
        assert presenter.get_by_role("button", name=name, exact=True).count() == 0, name

    # ---- the students follow three steps ----------------------------------------------------
    step = teacher.get_by_role("button", name="Step", exact=True)
    for k in (1, 2, 3):
        click(teacher, step, until=teacher.get_by_text(re.compile(rf"^Step {k} · 3 joined")))
        for page in (*students, presenter):
            visible(page, page.get_by_text(following(k) if page is not presenter else re.compile(rf"^Step {k} · ")))
    for page in students:  # a student's page has no teacher controls
        for name in ("Step", "+10", "Back", "Play", "Reveal", "Close answers", "Ask: which pair merges next?"):
            assert page.get_by_role("button", name=name, exact=True).count() == 0, (page.who, name)

    # ---- a next-merge question, counts shown ("read the table") ------------------------------
    expect(teacher.get_by_role("radiogroup").get_by_text("read the table")).to_be_visible()
    ask = teacher.get_by_role("button", name="Ask: which pair merges next?")
    click(teacher, ask, until=teacher.get_by_text(re.compile(r"^0 answers in / 3 students present$")))
    qid = 1
    visible(teacher, teacher.get_by_text(re.compile(rf"^Question {qid}: which pair merges at step 4\?")))
    for page in students:
        visible(page, page.get_by_text(re.compile(rf"^Question {qid}: which pair merges at step 4\? \(counts shown\)")))
        visible(page, page.locator(f".st-key-class_opt_{qid}_0 button"))
        visible(page, page.get_by_text(re.compile(r"^Your answer: none yet")))
    labels = [o.inner_text() for o in options(cyd, qid)]
    assert len(labels) >= 3, labels
    for page in (ada, hostile):
        assert [o.inner_text() for o in options(page, qid)] == labels  # every student sees the same options
    counts = [int(COUNT.search(t).group(1).replace(",", "")) for t in labels]
    best = max(counts)
    assert counts.count(best) == 1, f"two options share the top count, so the right one is not known: {labels}"
    right = counts.index(best)  # the pair merged next is the most frequent one
    wrong = [i for i in range(len(labels)) if i != right]

    # Cyd answers right first; Ada and the hostile name pick wrong ones; the hostile name then
    # changes its answer to the right one: two winners, Cyd (faster) first, then the hostile name.
    answer(cyd, qid, right)
    answer(ada, qid, wrong[0])
    answer(hostile, qid, wrong[1])
    visible(teacher, teacher.get_by_text(re.compile(r"^3 answers in / 3 students present$")))
    answer(hostile, qid, right)  # a change: still one answer from this student
    last_picks = [(OTHER, right), (BY_CODE, wrong[0]), (HOSTILE, right)]  # in the order of the last picks
    bars = teacher.locator(".cls-bar-row")
    expect(bars).to_have_count(len(labels))
    for i, n in {right: 2, wrong[0]: 1, wrong[1]: 0}.items():  # the change moved the answer: counted once
        expect(bars.nth(i).locator("b")).to_have_text(str(n), timeout=FOLLOW_S * 1000)
    visible(teacher, teacher.get_by_text(re.compile(r"^3 answers in / 3 students present$")))
    assert teacher.locator(".cls-bar-row.cls-right").count() == 0  # nothing marked before the reveal
    idle(teacher, settle=0)
    teacher.screenshot(path=str(ARTIFACTS / "class-teacher-question-1280x720.png"))

    # ---- the reveal ---------------------------------------------------------------------------
    click(
        teacher,
        teacher.get_by_role("button", name="Reveal", exact=True),
        until=teacher.locator(".cls-bar-row.cls-right"),
    )
    marked = [i for i in range(bars.count()) if "cls-right" in (bars.nth(i).get_attribute("class") or "")]
    assert marked == [right], f"the teacher's tally marks {marked}, the most frequent pair is {right}"
    visible(teacher, teacher.get_by_text(re.compile(r"Merged: .* · 2 of 3 right")))
    # the wrong answer most chosen: one each (Ada's, and the hostile name's before its change, which
    # no longer counts), so the first of them in option order, Ada's
    missed = visible(teacher, teacher.locator(".cls-missed")).inner_text()
    assert missed.startswith("Most missed: ") and "chosen by 1 of the 1 wrong answer (3 in all)" in missed, missed
    assert option_label(labels[wrong[0]]).replace(" ", "") in missed.replace(" ", ""), (missed, labels[wrong[0]])
    visible(presenter, presenter.locator(".cls-missed"))
    visible(presenter, presenter.get_by_text(re.compile(r"Merged: .* · 2 of 3 right")))
    # the reveal makes the merge the class guessed: the room moves on to step 4, students with it
    visible(teacher, teacher.get_by_text(re.compile(r"^Step 4 · 3 joined, 3 present$")))
    won = {page for page in students if dict(last_picks)[names[page]] == right}
    assert 1 <= len(won) <= 2
    for page in students:
        visible(page, page.get_by_text(following(4)))
        visible(page, page.get_by_text("You got it!" if page in won else "Not this time."))
        expect(page.get_by_text("Not this time." if page in won else "You got it!")).to_have_count(0)
        shown = page.locator(".cls-options .cls-option")
        expect(shown).to_have_count(len(labels))
        right_shown = [i for i in range(shown.count()) if "cls-right" in (shown.nth(i).get_attribute("class") or "")]
        assert right_shown == [right], (page.who, right_shown, right)
        assert "your answer" in shown.nth(dict(last_picks)[names[page]]).inner_text()
        assert page.locator(".cls-board tr.cls-me td", has_text=names[page]).count() == 1  # one's own row marked

    expected = expected_standings(last_picks, right, list(names.values()))
    for page in (teacher, *students):
        board_settled(page, expected)

    # the hostile name is text everywhere: exact in the leaderboards and the header, no image,
    # bold or math drawn from it
    assert teacher.locator(".cls-board td").filter(has_text=HOSTILE).inner_text() == HOSTILE
    assert hostile.locator(".cls-board td").filter(has_text=HOSTILE).inner_text() == HOSTILE
    assert f"you are {HOSTILE} · following" in header(hostile)
    for page in (teacher, *students):
        assert page.locator('img[src="x"], .katex, strong:text-is("bold")').count() == 0, page.who

    # ---- a student cannot drive the room -----------------------------------------------------
    counters = room_counters(url, code, key)
    forged_key = secrets.token_hex(16)  # 32 characters, as long as a real key, but not this room's
    assert forged_key != key
    forged = b.page("forged link", context=cyd.context)
    forged.goto(f"{url}/Class?room={code}&key={forged_key}")
    visible(forged, forged.get_by_text(re.compile("This link's teacher key is wrong")), timeout=FIRST_S)
    idle(forged, settle=0)
    for name in ("Step", "+10", "Back", "Play", "Reveal", "Close answers", "Ask: which pair merges next?"):
        assert forged.get_by_role("button", name=name, exact=True).count() == 0, name
    assert forged.locator(".cls-code").count() == 0
    forged.close()
    assert room_counters(url, code, key) == counters  # nothing moved the room
    teacher.reload()  # F5: the cookie keeps the teacher; the step as the room keeps it
    visible(teacher, teacher.get_by_text(re.compile(r"^Step 4 · 3 joined, 3 present$")), timeout=FIRST_S)
    idle(teacher, settle=0)
    assert parse_qs(urlparse(teacher.url).query) == {"room": [code]}, teacher.url
    # the key is in no student's page nor the presenter's, nor in the teacher's address or text
    for page in (*students, presenter):
        key_absent(page, key)
    assert key not in teacher.url and key not in teacher.locator("body").inner_text()
    for page in students:
        visible(page, page.get_by_text(following(4)))

    # an idle page in a room keeps one request to /room-rev waiting per counter it watches (not one
    # more per step): rev (its page's watch) and the step (its stepper's poll)
    for page in students:
        watched = [parse_qs(urlparse(r.url).query).get("what", [""])[0] for r in page.follow_requests]
        assert len(watched) == len(set(watched)) and set(watched) <= {"rev", "step"}, (page.who, watched)
    # every page in the room follows with what lets it (a member's id, the teacher's token): no 404
    for page in (teacher, *students):
        assert page.follow_statuses and set(page.follow_statuses) == {200}, (page.who, page.follow_statuses)

    # ---- what the projector and a laptop show (viewport shots: what the screen shows) -----------
    for page in (teacher, *students):
        assert page.locator('[data-testid="stException"]').count() == 0, page.who
    teacher.screenshot(path=str(ARTIFACTS / "class-teacher-1280x720.png"))
    hostile.screenshot(path=str(ARTIFACTS / "class-student-1280x720.png"))
    presenter.screenshot(path=str(ARTIFACTS / "class-presenter-1280x720.png"))
    code_px = float(teacher.locator(".cls-code").evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    for page in (teacher, presenter):
        page.set_viewport_size(dict(WIDE))
    idle(teacher, settle=0)
    teacher.wait_for_timeout(300)  # the columns and the slider take the new width
    teacher.screenshot(path=str(ARTIFACTS / "class-teacher-1920x1080.png"))
    presenter.screenshot(path=str(ARTIFACTS / "class-presenter-1920x1080.png"))
    for page in (teacher, presenter):
        page.set_viewport_size(dict(PROJECTOR))

    # a hidden tab asks without being held (browsers keep six connections per server: background
    # tabs must leave them to the visible one); it still follows, and is held again once shown
    quiet = students[0]
    set_visibility(quiet, "hidden")
    since = len(quiet.follow_urls)
    click(
        teacher,
        teacher.get_by_role("button", name="Step", exact=True),
        until=teacher.get_by_text(re.compile(r"^Step 5 ·")),
    )
    visible(quiet, quiet.get_by_text(following(5)))
    asked_hidden = quiet.follow_urls[since:]
    assert asked_hidden and not any("seen=" in u for u in asked_hidden), asked_hidden
    shown_at = len(quiet.follow_urls)
    set_visibility(quiet, "visible")
    deadline = time.monotonic() + FOLLOW_S
    while not any("seen=" in u for u in quiet.follow_urls[shown_at:]) and time.monotonic() < deadline:
        quiet.wait_for_timeout(100)
    assert any("seen=" in u for u in quiet.follow_urls[shown_at:]), quiet.follow_urls[shown_at:]

    _moderate(b, url, teacher, presenter, code, students, names, path, (labels, right, wrong))
    return code_px


def _moderate(b: Browser, url: str, teacher, presenter, code: str, students, names, path: str, question) -> None:
    """The teacher's moderation, each change seen on the pages it concerns."""
    ada, hostile, cyd = students
    labels, right, wrong = question
    manage = teacher.get_by_text("Manage the room: students, joining, results")
    click(teacher, manage, until=teacher.get_by_role("button", name="Rename"), settle=0)  # the expander opens
    teacher.get_by_role("button", name="Remove from the room").scroll_into_view_if_needed()
    teacher.wait_for_timeout(300)  # the expander's opening animation ends
    teacher.screenshot(path=str(ARTIFACTS / "class-teacher-manage-1280x720.png"))

    def choose(name: str) -> None:
        box = teacher.get_by_role("combobox", name="Student")
        click(teacher, box, until=teacher.get_by_role("option").first, settle=0)  # the list opens
        option = teacher.get_by_role("option", name=name, exact=True)
        click(teacher, option, until=box)
        # the choice's own rerun, not a follow rerun of the room's panel that began meanwhile: the
        # box shows the name (a click on the tools before that rerun ends can be lost)
        expect(box).to_have_value(re.compile("^" + re.escape(name)), timeout=FOLLOW_S * 1000)
        idle(teacher, settle=0)

    # rename the hostile name: every leaderboard and its own header follow
    choose(HOSTILE)
    box = teacher.get_by_role("textbox", name="New name")
    box.fill("Star")
    box.press("Enter")
    idle(teacher)
    click(
        teacher,
        teacher.get_by_role("button", name="Rename", exact=True),
        until=teacher.locator(".cls-board td", has_text="Star"),
    )
    for page in (hostile, presenter):
        expect(page.locator(".cls-board td", has_text="Star")).to_have_count(1, timeout=FOLLOW_S * 1000)
        expect(page.locator(".cls-board td", has_text=HOSTILE)).to_have_count(0, timeout=FOLLOW_S * 1000)
    visible(hostile, hostile.get_by_text(re.compile(r"you are Star · following")))

    # hide Cyd's name on the projected leaderboard
    choose(OTHER)
    click(
        teacher,
        teacher.get_by_role("button", name="Hide the name"),
        until=teacher.get_by_role("button", name="Show the name"),
    )
    for page in (presenter, cyd, teacher):
        expect(page.locator(".cls-board td", has_text=HIDDEN_NAME)).to_have_count(1, timeout=FOLLOW_S * 1000)
        expect(page.locator(".cls-board td", has_text=OTHER)).to_have_count(0, timeout=FOLLOW_S * 1000)

    # remove Ada (answered wrong): her answer leaves the tally, her page says so
    bars = teacher.locator(".cls-bar-row")
    expect(bars.nth(wrong[0]).locator("b")).to_have_text("1")
    choose(BY_CODE)
    click(
        teacher,
        teacher.get_by_role("button", name="Remove from the room"),
        until=teacher.get_by_text(re.compile(r"· 2 joined, ")),
    )
    expect(bars.nth(wrong[0]).locator("b")).to_have_text("0", timeout=FOLLOW_S * 1000)
    visible(teacher, teacher.get_by_text(re.compile(r"Merged: .* · 2 of 2 right")))
    visible(ada, ada.get_by_text(f"The teacher removed you from the room {code}."))
    for page in (teacher, presenter, hostile):
        expect(page.locator(".cls-board td", has_text=BY_CODE)).to_have_count(0, timeout=FOLLOW_S * 1000)

    # lock joining: Ada's new try through the join link is refused with a sentence
    click(
        teacher,
        teacher.get_by_text("Lock joining"),
        until=teacher.get_by_role("switch", name="Lock joining", checked=True),
    )
    visible(presenter, presenter.get_by_text("Joining is closed."))
    ada.goto(f"{url}{path}")
    visible(ada, ada.get_by_text(f"Room {code}", exact=True), timeout=FIRST_S)
    idle(ada, timeout=FIRST_S, settle=0)
    box = ada.get_by_role("textbox", name="Your name")
    box.fill("Ada again")
    box.press("Enter")
    idle(ada)
    click(
        ada,
        ada.get_by_role("button", name="Join", exact=True),
        until=ada.get_by_text(re.compile("locked this room: nobody new can join")),
    )
    assert "member=" not in ada.url

    # the results as CSV: the question, its options and right answer, each student's answer, time, verdict
    with teacher.expect_download(timeout=FOLLOW_S * 1000) as caught:
        teacher.get_by_role("button", name="Download the results (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(caught.value.path().read_text(encoding="utf-8"))))
    assert [r["student"] for r in rows] == ["Star", OTHER], rows  # Ada's answer left with her
    pairs = [option_label(t) for t in labels]
    for r in rows:
        assert (r["question"], r["kind"], r["step"]) == ("1", "merge", "3"), r
        assert r["right answer"].replace(" ", "") == pairs[right].replace(" ", ""), (r, pairs)
        assert r["answer"].replace(" ", "") == pairs[right].replace(" ", "") and r["right"] == "yes", r
        assert float(r["seconds"]) > 0
        assert [o.rsplit(" (", 1)[0].replace(" ", "") for o in r["options"].split(" | ")] == [
            p.replace(" ", "") for p in pairs
        ]
    assert float(rows[0]["seconds"]) > float(rows[1]["seconds"])  # the hostile name changed its answer last

    # end the room: every page says so, the teacher is back in the lobby
    click(
        teacher,
        teacher.get_by_text("Yes, end it for everyone"),
        until=teacher.get_by_role("button", name="End the room", disabled=False),
    )
    click(
        teacher,
        teacher.get_by_role("button", name="End the room"),
        until=teacher.get_by_text(re.compile(rf"^Room {code} has ended")),
    )
    for page in (hostile, cyd):
        visible(page, page.get_by_text(f"The teacher ended the room {code}. Thank you for taking part!"))
    visible(presenter, presenter.get_by_text("The teacher ended the room."))
    # its cookie deleted (by the cookie component's script, after the run that said so)
    teacher.wait_for_function(
        "name => !document.cookie.split('; ').some((c) => c.startsWith(name + '='))",
        arg=f"bpe_teacher_{code}",
        timeout=FOLLOW_S * 1000,
    )
    assert f"bpe_teacher_{code}" not in {c["name"] for c in teacher.context.cookies()}


def probe(url: str, query: dict[str, str], *, source: str) -> tuple[int, dict[str, str], bytes]:
    """GET /room-rev from the loopback address ``source`` (127.0.0.x: the server sees another
    client address for each x, and no request leaves the machine); (status, headers but the
    date, body)."""
    parts = urlparse(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", "/room-rev?" + urlencode(query))
        response = conn.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders() if k.lower() != "date"}
        return response.status, headers, response.read()
    finally:
        conn.close()


def test_room_rev_tells_a_prober_nothing_and_refuses_a_guesser(server, private_data_dir):
    """A code-guessing loop against /room-rev: a missing room, a wrong member, a missing
    credential and another room's teacher token get one same answer (status, body, headers), so
    no code is confirmed; past the address's limit of those a minute the answer is 429, while the
    room's own members and teacher, even from that address, still follow."""
    url = server[0].url
    rooms = SqliteRooms(SqliteStore(private_data_dir, cap_bytes=2**24, session_quota=2**24), limits=Limits())
    room, key = rooms.create({"corpus": "udhr_en.txt"})
    _, other_key = rooms.create({"corpus": "udhr_en.txt"})
    ana = rooms.join(room.code, "Ana")
    room = rooms.get(room.code)
    source = "127.0.0.9"
    status, _, body = probe(url, {"code": room.code, "member": ana.id}, source=source)
    assert status == 200 and set(json.loads(body)) == {"rev", "tally", "step"}
    assert probe(url, {"code": room.code, "follow": follow_token(key)}, source=source)[0] == 200
    # the teacher's page asking keeps the room in use (not idle), moving on nothing students redraw
    assert rooms.get(room.code).active > room.active and rooms.revs(room.code) == (room.rev, 1, room.step)
    missing = next(c for c in ("ZZZZZ2", "ZZZZZ3") if c != room.code)
    probes = [
        {"code": missing, "member": ana.id},
        {"code": room.code, "member": "x" * 22},
        {"code": room.code},
        {"code": room.code, "follow": follow_token(other_key)},
        {"code": room.code, "follow": key},
        {"code": room.code, "member": ana.id[:-1]},
    ]
    answers = [probe(url, query, source=source) for query in probes]
    assert answers[0][0] == 404 and all(a == answers[0] for a in answers), answers
    limit, sent = Limits().address_misses, len(probes)
    found = None
    for _ in range(limit):  # a guessing loop, bounded: random codes until refused
        guess = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
        status, headers, body = probe(url, {"code": guess, "member": ana.id}, source=source)
        sent += 1
        if status == 429:
            found = sent
            break
        assert (status, headers, body) == answers[0]
    assert found == limit + 1, f"refused after {found} misses, the limit is {limit} a minute"
    assert int(headers["retry-after"]) <= 60 and b"try again" in body
    assert probe(url, {"code": room.code, "member": "x" * 22}, source=source)[0] == 429  # a real code: refused too
    assert probe(url, {"code": room.code, "member": ana.id}, source=source)[0] == 200  # the room's own follow on
    assert probe(url, {"code": room.code, "follow": follow_token(key)}, source=source)[0] == 200
    assert probe(url, {"code": missing}, source="127.0.0.10")[0] == 404  # another address is not refused
    rooms.close()


def set_visibility(page, state: str) -> None:
    """Make the page's document report ``state`` ("hidden" or "visible"), as a tab in the background does."""
    page.evaluate(
        """(state) => {
            Object.defineProperty(document, "visibilityState", {configurable: true, get: () => state});
            document.dispatchEvent(new Event("visibilitychange"));
        }""",
        state,
    )


# ---- the steppers: the teacher steps in the browser, a student's page follows without a rerun -----
_STEPPER = "() => { const r = document.querySelector('.sp-root'); return r ? {...r.dataset} : null; }"
_PANELS = "() => [...document.querySelectorAll('.sp-panels .lv-cell')].map((c) => c.innerHTML)"


def stepper_drawn(page, step: int, *, holding: int = 0) -> None:
    """Wait (bounded) until the page's stepper has drawn ``step`` from a step it holds, and holds
    every step from 0 to ``holding``."""
    page.wait_for_function(
        f"""() => {{
            const d = ({_STEPPER})();
            return !!d && d.drawn === '{step}' && JSON.parse(d.held || '[]').some(([a, b]) => a <= 0 && b >= {holding});
        }}""",
        timeout=FOLLOW_S * 1000,
    )


def test_a_student_follows_the_teachers_stepper_without_a_rerun(server, new_page, private_data_dir):
    """The teacher steps with its stepper (clicks, keys): the room's step moves by its reports; a
    student's page draws the room's step from the window its stepper holds (the engine's pair
    table, history and words at that step) and the student's page does not rerun for it (no run
    begins: the server announces every run, a fragment's too, over the page's websocket)."""
    url = server[0].url
    view = {"corpus": "udhr_en.txt", "preset": "gpt2"}
    rooms = SqliteRooms(SqliteStore(private_data_dir, cap_bytes=2**24, session_quota=2**24), limits=Limits())
    room, key = rooms.create(view)
    ana = rooms.join(room.code, "Ana")
    config = corpus_config("gpt2")
    ref = Trainer(count_words((read_sample("udhr_en.txt"),), config), config)
    ref.advance(20)
    with new_page(width=1280, height=720, isolated=True) as teacher, new_page(isolated=True) as student:
        teacher.goto(f"{url}/Class?room={room.code}&key={key}")  # the key is taken once, then kept off the address
        stepper_drawn(teacher, 0, holding=20)
        student.goto(f"{url}/Class?room={room.code}&member={ana.id}")
        stepper_drawn(student, 0, holding=20)  # the steps around the room's, sent ahead
        visible(student, following(0))
        wait_idle(student, settle=0)
        runs = student.app_runs.started
        bar = teacher.locator(".sp-root")
        step = bar.get_by_role("button", name="Step", exact=True)
        for _ in range(3):  # none waits for the server (the page around may still be moving: the QR code)
            step.click()
        step.focus()
        for key_name in ("Shift+ArrowRight", "ArrowRight", "ArrowLeft"):  # +10, +1, -1
            teacher.keyboard.press(key_name)
        stepper_drawn(teacher, 13)
        stepper_drawn(student, 13)  # the room's step, polled by the student's stepper
        visible(student, following(13))
        assert drawn_step(student.evaluate(_PANELS)) == engine_step(ref, 13, byte=True)
        assert student.locator(".sp-sentence").inner_text().startswith("Step 13.")
        assert rooms.get(room.code).step == 13  # the store holds it: F5 and the other pages see it
        assert student.app_runs.started == runs, "the student's page reran to follow a step"
        assert not student.errors and not teacher.errors, (student.errors, teacher.errors)
    rooms.close()
