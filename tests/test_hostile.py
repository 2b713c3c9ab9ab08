"""Hostile input against a live server: each input surface of the running app is driven in
headless Chromium with a corpus of bad inputs, and for each input the page must show a message
(the text named beside it), with no exception element and no dialog; after each surface the
server's log holds no ``Traceback`` and the session still steps.

A failure names the surface and the input ("regex: 90 nested groups"), so the guard that let it
through is found at once.
"""

from __future__ import annotations

import json
import re
import urllib.request
import zipfile
from io import BytesIO

import pytest
from appserver import require_chromium, wait_idle
from conftest import log_since
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

require_chromium()

STEP_STATUS = re.compile(r"^Step (\d[\d,]*) of")


@pytest.fixture(scope="module")
def server(app_server):
    """The test process's app (tests/conftest.py), and where its log stood when this module began:
    what the inputs here make the server write is read from there on."""
    return app_server, app_server.log.stat().st_size


@pytest.fixture()
def page(server, new_page):
    with new_page(width=1280, height=720) as page:
        page.app_url = server[0].url
        yield page


def open_page(page, path: str, ready) -> None:
    page.goto(page.app_url + path)
    wait_idle(page, timeout=90, settle=0, until=ready)


def problems(page, surface: str, name: str) -> list[str]:
    """What went wrong on the page after one input: an exception element, a dialog, a script error."""
    found = []
    if page.locator('[data-testid="stException"]').count():
        found.append(
            f"{surface}: {name}: an exception element: {page.locator('[data-testid=stException]').first.inner_text()[:300]}"
        )
    if page.locator('[role="dialog"]:visible').count():
        found.append(f"{surface}: {name}: a dialog")
    if page.errors:
        found.append(f"{surface}: {name}: page errors {page.errors}")
        page.errors.clear()
    return found


def expect_message(page, surface: str, name: str, message: str, *, timeout: float = 60) -> list[str]:
    """Wait for ``message`` (a regex) in an alert (or a caption), then collect what else went wrong."""
    alert = page.locator('[data-testid="stAlert"], [data-testid="stCaptionContainer"]', has_text=re.compile(message))
    try:
        wait_idle(page, timeout=timeout, settle=0, until=alert)
    except Exception:  # noqa: BLE001 - reported with the surface and input below
        shown = [a[:200] for a in page.locator('[data-testid="stAlert"]').all_inner_texts()]
        return [f"{surface}: {name}: no message matching {message!r} (alerts: {shown})"] + problems(page, surface, name)
    return problems(page, surface, name)


def jobs(page) -> dict:
    """The server's worker pool, as its /jobs route reports it."""
    with urllib.request.urlopen(page.app_url + "/jobs", timeout=10) as r:
        return json.loads(r.read())


def server_log_clean(server) -> list[str]:
    text = log_since(*server)
    return [
        f"server log: {line}" for line in text.splitlines() if "Traceback" in line or "Uncaught app exception" in line
    ]


def still_steps(page) -> list[str]:
    """The session's Train page answers a Step with the next step."""
    page.locator('[data-testid="stSidebarNav"] a', has_text="Train").click()
    status = page.get_by_text(STEP_STATUS)
    wait_idle(page, timeout=90, until=status)
    before = int(STEP_STATUS.match(status.inner_text()).group(1).replace(",", ""))
    page.get_by_role("button", name="Step", exact=True).click()
    try:
        # the stepper draws the step in the browser: no rerun to wait for
        wait_idle(page, timeout=60, settle=0, until=page.get_by_text(re.compile(rf"^Step {before + 1:,} of")))
    except Exception:  # noqa: BLE001
        return [f"after the inputs the session did not step from {before}"]
    return []


# ---- custom regexes (Train page, Advanced settings) ----------------------------------------

REGEXES = {
    "the exponential alternatives": (r"(?:[\s\S]|[\s\S]|[\s\S])*#|.", "takes too long on a test string"),
    "90 nested groups": ("(" * 90 + "a" + ")" * 90 + "|.", "nests groups 90 deep"),
    "a count of two billion": ("a{2000000000}|.", "spells out 2,000,000,002 items"),
    "nested counts": ("(?:a{10000}){10000}|.", "spells out"),
    "invalid": ("(?<", "does not compile"),
    "empty-matching": (r"\b", "can match the empty string"),
    "2,001 characters": ("a" * 2001, "longer than 2,000 characters"),
    "a missing backreference": (r"(a)\2|.", "does not compile"),
    "fuzzy matching that backtracks": (r"(?:(?:\w|\w){e<=3})*#|.", "takes too long|does not compile"),
}


def test_hostile_custom_regexes_each_get_a_message(page, server):
    open_page(page, "/Train", page.get_by_text(STEP_STATUS))
    page.get_by_text("Advanced settings").click()
    box = page.get_by_role("combobox", name="Pre-tokenizer", exact=True)
    wait_idle(page, until=box)  # its form is drawn by the rerun that opening it starts
    box.scroll_into_view_if_needed()
    choice = page.get_by_role("option", name="regex", exact=True)
    for _ in range(3):  # the list closes when the sidebar scrolls under it: open it again
        box.click()
        try:
            choice.wait_for(timeout=3000)
            break
        except Exception:  # noqa: BLE001
            continue
    choice.click()
    field = page.locator(".st-key-w_cfg_pattern input")
    # the settings are a form: the choice reruns nothing (waiting for a rerun cost 5 s), the box is there
    wait_idle(page, settle=0, until=field)
    failures = []
    for name, (pattern, message) in REGEXES.items():
        field.fill(pattern)
        expect(field).to_have_value(pattern)
        page.get_by_role("button", name="Apply and restart training").click()
        failures += expect_message(page, "regex", name, message)
    failures += server_log_clean(server) + still_steps(page)
    assert not failures, "\n".join(failures)


# ---- uploads (Corpus page) ------------------------------------------------------------------


def _zip() -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("a.txt", "hello")
    return out.getvalue()


UPLOADS = {
    "an empty file": ("empty.txt", b"", "empty"),
    "binary bytes": ("image.txt", bytes(range(256)) * 8, "NUL bytes|not valid UTF-8"),
    "NUL bytes in text": ("nul.txt", b"hello\x00world", "NUL bytes"),
    "a zip": ("archive.txt", _zip(), "NUL bytes|not valid UTF-8"),
    "HTML in the name": ("<img src=x onerror=alert(1)>.txt", b"\xff\xfe", "not valid UTF-8"),
    "Markdown and LaTeX in the name": ("**$x^2$** [a](javascript:x).txt", b"\xe9t\xe9", "not valid UTF-8"),
    "an RTL override in the name": ("evil\u202etxt.exe", b"\xff", "not valid UTF-8"),
    "a path in the name": ("../../etc/passwd", b"\xff", "not valid UTF-8"),
}


def test_hostile_uploads_each_get_a_message_and_names_show_as_text(page, server):
    failures = []
    # one session, as a student trying file after file: each file removed before the next, so
    # that the message waited for is the new file's (a page load each cost ~2 s of the browser's CPU)
    open_page(page, "/Corpus", page.locator('[data-testid="stFileUploader"]'))
    remove = page.get_by_role("button", name="Remove", exact=True)
    for name, (filename, data, message) in UPLOADS.items():
        page.locator('[data-testid="stFileUploader"] input[type=file]').first.set_input_files(
            files=[{"name": filename, "mimeType": "text/plain", "buffer": data}]
        )
        failures += expect_message(page, "upload", name, message)
        if (
            page.locator("img[src=x]").count()
            or page.locator('a[href^="javascript"]').count()
            or page.locator(".katex").count()
        ):
            failures.append(f"upload: {name}: the file name was drawn as markup")
        if remove.count():  # an empty file is refused before it is listed
            remove.first.click()
            wait_idle(page, timeout=60, gone=remove)
    failures += server_log_clean(server) + still_steps(page)
    assert not failures, "\n".join(failures)


def test_utf16_with_a_byte_order_mark_is_read_as_text(page, server):
    open_page(page, "/Corpus", page.locator('[data-testid="stFileUploader"]'))
    page.locator('[data-testid="stFileUploader"] input[type=file]').set_input_files(
        files=[{"name": "utf16.txt", "mimeType": "text/plain", "buffer": "Grüße, 世界".encode("utf-16")}]
    )
    failures = expect_message(page, "upload", "UTF-16 with a BOM", r"not valid UTF-8|UTF-16")
    failures += server_log_clean(server)
    assert not failures, "\n".join(failures)


# ---- links ----------------------------------------------------------------------------------

LINKS = {
    "a negative step": ("/Train?step=-5", "step"),
    "a huge step": ("/Train?step=" + "9" * 40, "step"),
    "a step that is not a number": ("/Train?step=abc", "step"),
    "a repeated step": ("/Train?step=3&step=-4", "step"),
    "an unknown preset": ("/Train?preset=%3Cscript%3E", "preset"),
    "markup in a tokenizer name": ("/Playground?tokenizers=**%24x%24**%3Cb%3E", "is no tokenizer this app knows"),
    "an unknown stored text": ("/Playground?text_id=" + "0" * 64, "the text"),
    "an unknown view and ids": ("/Playground?view=%00&errors=" + "x" * 500, "view="),
    "Compare with a path for a corpus": ("/Compare?compare=..%2F..%2Fetc%2Fpasswd,nope", "neither bundled nor"),
    "Compare with a huge merge count": (
        "/Compare?compare=udhr_en.txt,udhr_hi.txt&compare_merges=" + "9" * 30,
        "compare_merges",
    ),
}


def test_hostile_links_each_open_a_page_with_a_message(page, server):
    failures = []
    for name, (path, message) in LINKS.items():
        page.goto(page.app_url + path)
        failures += expect_message(page, "link", name, message, timeout=90)
    failures += server_log_clean(server) + still_steps(page)
    assert not failures, "\n".join(failures)


# ---- Playground: text, decode ids, tokenizer imports ----------------------------------------

IDS = {
    "a huge id": ("99999999999999999999999", "is not a token id"),
    "a negative id": ("-1", "is not a token id"),
    "not a number": ("fifteen, 11", "is not a whole number"),
    "a million ids": (", ".join(["1"] * 1_000_000), "of 1,000,000 tokens are listed"),  # a caption, not an alert
}

IMPORTS = {
    "truncated JSON": ("tokenizer.json", b'{"model": {"type": "BPE", "vocab": {"a": 0', "is not valid JSON"),
    "deeply nested JSON": ("tokenizer.json", b"[" * 100_000 + b"]" * 100_000, "nests its JSON too deeply"),
    "bad base64": ("bad.tiktoken", b"!!!notbase64 0\n", "bad base64"),
    "duplicate ranks": ("dup.tiktoken", b"YQ== 0\nYg== 0\n", "rank 0 is given twice"),
    "a zip of a text file": ("tokenizer.json", _zip(), "a file of no known layout"),
}


def test_hostile_playground_inputs_each_get_a_message(page, server):
    open_page(page, "/Playground", page.locator("table.bpe-cmp"))
    failures = []
    # every Unicode category at once, then text over the box's limit (the box keeps its limit)
    box = page.locator('[data-testid="stTextArea"] textarea').first
    box.fill(
        "".join(chr(c) for c in (0x0, 0x7, 0x300, 0x200D, 0x202E, 0xD7FF, 0xE000, 0xFEFF, 0xFFFD, 0x1F600, 0x10FFFF))
        + " a"
    )
    box.press("Control+Enter")
    wait_idle(page, timeout=60, settle=0, until=page.locator("table.bpe-cmp"))
    failures += problems(page, "playground text", "every category")

    page.get_by_text("Decode ids", exact=True).click()
    ids_box = page.get_by_label("Token ids")
    wait_idle(page, settle=0, until=ids_box)
    for name, (typed, message) in IDS.items():
        ids_box.fill(typed)
        ids_box.press("Control+Enter")
        failures += expect_message(page, "decode ids", name, message)

    # a new session for the imports: with a million ids in its box, each of the session's runs
    # decodes them again (12 s of the first import's three runs)
    open_page(page, "/Playground", page.locator("table.bpe-cmp"))
    page.get_by_text("Import a tokenizer").click()
    importer = page.locator('[data-testid="stExpander"]').filter(has_text="Import a tokenizer")
    wait_idle(page, settle=0, until=importer.get_by_role("button", name="Import", exact=True))
    for name, (filename, data, message) in IMPORTS.items():
        files = importer.locator('[data-testid="stFileUploader"] input[type=file]').first
        files.set_input_files(files=[{"name": filename, "mimeType": "application/octet-stream", "buffer": data}])
        # the upload's rerun names the import after the file: the Name box's placeholder changes
        wait_idle(page, timeout=60, settle=0, gone=importer.get_by_placeholder("from the file names"))
        importer.get_by_role("button", name="Import", exact=True).click()
        failures += expect_message(page, "import", name, message)
        # the file taken off the uploader, as a student would before the next: the Name box's
        # placeholder is the file names' again
        importer.locator('[data-testid="stFileChipDeleteBtn"]').first.click()
        wait_idle(page, timeout=60, until=importer.get_by_placeholder("from the file names"))
    failures += server_log_clean(server) + still_steps(page)
    assert not failures, "\n".join(failures)


# ---- a long Compare stopped ----------------------------------------------------------------


def test_stop_ends_a_comparison_in_its_worker_and_the_next_one_runs(page, server):
    # six corpora at up to 20,000 merges: several seconds of work in the worker process
    page.goto(
        page.app_url + "/Compare?compare=english_tiny_shakespeare.txt,english_frankenstein.txt,udhr_en.txt,"
        "udhr_hi.txt,udhr_ko.txt,udhr_zh_hans.txt&compare_merges=20000"
    )
    # while the comparison runs (not once the app is idle: by then it has finished)
    page.locator('[data-testid="stProgress"]', has_text="training").wait_for(timeout=90_000)
    replaced = jobs(page)["replaced"]
    page.locator(".st-key-cmp_stop button").click()  # ours; Streamlit's own "Stop" sits in the toolbar
    failures = expect_message(page, "compare", "Stop", r"^Stopped\.", timeout=10)
    if jobs(page)["replaced"] != replaced + 1:  # the worker computing it was killed, and a new one started
        failures.append(f"compare: Stop: the worker pool reports {jobs(page)}, {replaced} replaced before")
    if page.locator('[data-testid="stProgress"]').count():
        failures.append("compare: Stop: the progress bar is still drawn")
    page.goto(page.app_url + "/Compare?compare=udhr_en.txt,udhr_hi.txt&compare_merges=100")
    try:
        wait_idle(page, timeout=120, settle=0, until=page.locator(".bpe-card-panel", has_text="Parity"))
    except Exception:  # noqa: BLE001
        failures.append("compare: after Stop, a new comparison did not draw its headlines")
    failures += problems(page, "compare", "after Stop") + server_log_clean(server)
    assert not failures, "\n".join(failures)
