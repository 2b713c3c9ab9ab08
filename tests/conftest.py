"""Shared fixtures: the bundled sample corpora, a data folder of the test session's own, the app
served once and Chromium started once per test process (each xdist worker), and the hypothesis
budget every property test runs under."""

from __future__ import annotations

import ast
import functools
import html
import json
import os
import re
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pytest
from appserver import SharedChromium, app_process, browser_page, require_chromium, shot_on_failure
from hypothesis import settings

# ---- hypothesis: one profile for every @given test -------------------------------------------
# A test's budget is the max_examples written at its @settings (100 where none is). Every test
# runs without a deadline (a loaded two-core CI machine is not a slow engine) and without an
# example database (CI starts fresh; a failure prints the seed and blob to replay it). Examples are
# random on each run, so that runs over time explore more than one fixed set. A test may set its
# budget and the health checks it suppresses, nothing else: tests/test_suite.py checks that.
SUITE_PROFILE = "suite"
settings.register_profile(
    SUITE_PROFILE,
    max_examples=100,
    deadline=None,
    database=None,
    derandomize=False,
    print_blob=True,
)
settings.load_profile(SUITE_PROFILE)


# ---- a hostile multilingual text, the start of the ones the real-file tests encode ---------
# numbers, whitespace runs, emoji (ZWJ, flags, skin tones), CJK, Devanagari, Arabic
HOSTILE_SCRIPTS = (
    "Price: 1234567 or 3.14159, in 2024!!  \n\n\t  tabs\t\tand   spaces   \r\n\r\n"
    "emoji 👩‍👩‍👧‍👦 🇯🇵🇫🇷 😀😀😀 ✊🏽 "
    "中文分词测试，日本語のテキスト、한국어 문장입니다. "
    "हिन्दी में एक वाक्य है। संख्या १२३४ "
    "النص العربي مع أرقام ١٢٣٤٥ والتشكيل: مُحَمَّد "
)


# ---- xdist: the files that take longest start first -----------------------------------------
# pytest-xdist's --dist loadfile hands each worker a file at a time, by default the files with the
# most tests first: the live-server and browser files (one to three tests of 20-90 s each) came
# last and ran one after another on one worker while the other sat idle (minutes of tail on two
# cores). Longest first is the classic fix (LPT scheduling). A file's length is what the last
# recorded run measured (tests/durations.json, seconds of each file's tests, written by
# `python -m pytest --record-durations`; the ratios matter, not the machine), or for a file not
# recorded yet, an estimate from its tests' markers. pytest.ini turns xdist's own reordering off.
# The files whose tests drive Chromium go first (longest first among them), then the others: a
# worker keeps its Chromium from one browser file to the next, where a file without browser tests
# between two stopped it (a restart of Playwright and Chromium costs ~2.5 s of CPU, ~10 a run when
# the two kinds were interleaved by length). The tail is made of short files either way.
DURATIONS = Path(__file__).with_name("durations.json")
_TEST_COST = {"slow": 30.0, "browser": 10.0}  # rough seconds; an unmarked test ~0.3 s


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"write each test file's seconds to {DURATIONS.name}, the order files are handed out in",
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pytest.ini): a worker per core and one more. A third of the suite's time is
    spent by tests that wait on processes of their own (app servers and Chromium starting, two
    servers and Redis healing, bench runs): with only a worker per core, the core of a waiting
    worker sat idle (on two cores, 1.85 of 2 busy on average; 613 s against 573 s with the extra
    worker). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins, as in xdist; ``-n N`` is taken as is."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1) + 1


def _file_cost(file: str, items: list[pytest.Item], recorded: dict[str, float]) -> float:
    """A file's seconds as last recorded, else the sum of its tests' estimates by their markers."""
    if file in recorded:
        return recorded[file]
    return sum(max((_TEST_COST.get(m.name, 0.3) for m in item.iter_markers()), default=0.3) for item in items)


def _uses_chromium(items: list[pytest.Item]) -> bool:
    """Whether any of a file's tests asks for the test process's Chromium (directly or through a
    fixture such as ``new_page``)."""
    return any("chromium" in getattr(item, "fixturenames", ()) for item in items)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files that use Chromium, then the others, each group in order of cost, longest first;
    tests keep their order in their file."""
    recorded = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    ordered = sorted(
        files, key=lambda file: (not _uses_chromium(files[file]), -_file_cost(file, files[file], recorded))
    )
    items[:] = [item for file in ordered for item in files[file]]


_MEASURED: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each file's seconds, setup and teardown included (in the controller: every worker's reports)."""
    file = report.nodeid.split("::", 1)[0]
    _MEASURED[file] = _MEASURED.get(file, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With --record-durations, in the controller (not in a worker): the files' seconds, merged
    into what was recorded before (a run of some files keeps the others' figures)."""
    if not session.config.getoption("record_durations") or hasattr(session.config, "workerinput"):
        return
    recorded = json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}
    recorded.update({file: round(seconds, 1) for file, seconds in _MEASURED.items()})
    DURATIONS.write_text(json.dumps(dict(sorted(recorded.items())), indent=1) + "\n")


# ---- AppTest: the installed packages scanned for Streamlit components once, not once a test --
def _scan_components_once() -> None:
    """Every ``AppTest`` scans the installed packages for Streamlit component manifests on its
    first run (reading each distribution's metadata: ~0.25 s of CPU, ~30% of a short page test,
    hundreds of times over in the suite). The packages do not change while the tests run, so the
    test process scans once and hands each AppTest a copy of that answer. The served app (a
    ``streamlit run`` subprocess) still scans at its start as it always does."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    found: list = []

    @functools.wraps(scan)
    def scan_once(*args, **kwargs):
        if not found:
            found.append(scan(*args, **kwargs))
        return list(found[0])

    manifest_scanner.scan_component_manifests = scan_once  # looked up at each call by streamlit


_scan_components_once()


def _await_runs_without_polling() -> None:
    """AppTest waits for a script run by looking at the run's whole event list every millisecond
    (a list that grows by one event per element drawn): the waiting thread took ~7% of a page
    test's CPU and claimed the GIL a thousand times a second from the script it waits for. The
    same wait here sleeps until the run's SHUTDOWN event is sent; past the timeout, Streamlit's
    own function stops the run and raises its error, as before."""
    import threading

    from streamlit.runtime.scriptrunner import ScriptRunnerEvent
    from streamlit.testing.v1 import local_script_runner

    polling = local_script_runner.require_widgets_deltas

    def wait_for_shutdown(runner, timeout: float = 3) -> None:
        done = threading.Event()

        def on_event(_sender, event, **_kwargs) -> None:
            if event == ScriptRunnerEvent.SHUTDOWN:
                done.set()

        runner.on_event.connect(on_event, weak=False)
        try:
            if runner.script_stopped() or done.wait(timeout):
                return
        finally:
            runner.on_event.disconnect(on_event)
        polling(runner, 0)  # timed out: Streamlit's stop, join and error message

    local_script_runner.require_widgets_deltas = wait_for_shutdown  # looked up at each run


_await_runs_without_polling()

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_corpora"

# Every bundled sample corpus (not the seed notebooks' own corpora under seeds/).
SAMPLE_FILES = sorted(p.name for p in SAMPLES.glob("*.txt"))


def read_sample(name: str) -> str:
    """A bundled corpus as text (``name`` relative to sample_corpora/)."""
    return (SAMPLES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="session", autouse=True)
def private_data_dir(tmp_path_factory):
    """The app's data folder (its store) for the whole session: a fresh temporary folder, set in
    the environment so that AppTest runs and app servers started as subprocesses inherit it and
    never touch the user's own data folder. A ``BPE_EXPLORER_STORE`` of the user's (their class's
    Redis server) is set aside for the session too: the store is SQLite in that folder."""
    old = os.environ.get("BPE_EXPLORER_DATA")
    old_store = os.environ.pop("BPE_EXPLORER_STORE", None)
    folder = tmp_path_factory.mktemp("bpe-explorer-data")
    os.environ["BPE_EXPLORER_DATA"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("BPE_EXPLORER_DATA", None)
    else:
        os.environ["BPE_EXPLORER_DATA"] = old
    if old_store is not None:
        os.environ["BPE_EXPLORER_STORE"] = old_store


@pytest.fixture(scope="session", autouse=True)
def _test_process_is_no_server():
    """AppTest runs the pages in the test process, which also holds what the tests load beside
    them (tiktoken's, HF's and Tekken's tables, Llama's ranks): late in a full run its resident
    memory passed the server's 1.5 GiB ceiling, and every training its pages started was stopped
    at once. That ceiling is a server's, checked on real servers (tests/test_budget_live.py); in
    this process its default is set out of the way (the variable, where set, still wins)."""
    from dataclasses import replace

    from explorer.settings import SETTINGS

    name = "BPE_EXPLORER_SERVER_MIB"
    declared = SETTINGS[name]
    SETTINGS[name] = replace(declared, default=64 * 1024.0)
    yield
    SETTINGS[name] = declared


@pytest.fixture(scope="session")
def sample():
    return read_sample


# ---- the app and Chromium, shared by the browser tests of a test process ----------------------
class Served(NamedTuple):
    """The app served for the test process: its base URL and the file its output goes to."""

    url: str
    log: Path


@pytest.fixture(scope="session")
def app_server(private_data_dir, tmp_path_factory) -> Served:
    """``streamlit run app.py`` once per test process, for every browser test that needs no server
    of its own (a fresh one, another data folder, a restart): its first run's imports and tables
    are paid once, not once a module. Its output is kept in ``log`` (a module reads from where it
    started, see :func:`log_since`)."""
    log_path = tmp_path_factory.mktemp("app-server") / "server.log"
    with open(log_path, "w") as log, app_process(log=log) as (url, _proc):
        yield Served(url, log_path)


@pytest.fixture()
def app_url(app_server) -> str:
    """The base URL of the test process's app (:func:`app_server`)."""
    return app_server.url


def log_since(served: Served, offset: int) -> str:
    """What the shared server wrote from byte ``offset`` of its log on."""
    with open(served.log, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


_CHROMIUM = SharedChromium()


@pytest.fixture
def chromium():
    """The test process's Chromium (started at the first test that asks, kept while the next test
    asks too): a test opens contexts of its own in it, so no cookie or app session is shared."""
    require_chromium()
    return _CHROMIUM.browser()


@pytest.fixture
def new_page(chromium):
    """``with new_page(width=1280, height=720) as page``: a page in the shared Chromium's profile,
    one at a time, with no cookie or app storage of a test before (its cache and compiled scripts
    kept, and the tab itself when the test before left it as it found it: cheaper page loads);
    ``isolated=True``: a context of its own instead, for pages open together that must not share
    a cookie (two people, a browser that never saw the app). See :func:`appserver.browser_page`."""

    def open_page(*, width: int = 1400, height: int = 1000, isolated: bool = False):
        where = {"browser": chromium} if isolated else {"profile": _CHROMIUM.profile()}
        return browser_page(width=width, height=height, **where)

    return open_page


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test whose ``page`` fixture is a browser tab: a failure leaves its screenshot (the
    tabs a test opens itself with ``new_page`` do so in :func:`appserver.browser_page`)."""
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if page is None or not hasattr(page, "screenshot"):
        return (yield)
    with shot_on_failure(page):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a test's own teardown: stop Playwright and Chromium unless the next test uses them (a
    live sync Playwright keeps an asyncio loop running, and ``asyncio.run`` refuses to start)."""
    result = yield
    if nextitem is None or "chromium" not in nextitem.fixturenames:
        _CHROMIUM.stop()
    return result


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


_BYTE_DECODER = None


def shown(token: str) -> str:
    """A byte-level token (GPT-2's characters, ``Ġt``) as every page writes it: the text its
    bytes spell, read by HF ``tokenizers``' ByteLevel decoder (not ours), whitespace as · ↵ →.
    Only for tokens of whole characters (a part of one is shown in hex, tested on its own)."""
    global _BYTE_DECODER
    if _BYTE_DECODER is None:
        from tokenizers import decoders

        _BYTE_DECODER = decoders.ByteLevel()
    text = _BYTE_DECODER.decode([token])
    if "\ufffd" in text:
        return _shown_slowly(token)
    return text.replace(" ", "·").replace("\n", "↵").replace("\t", "→").replace("\r", "␍")


def _shown_slowly(token: str) -> str:
    """The rule for a token holding part of a character, written from its description (the
    bytes from the engine's GPT-2 table, itself checked against HF's and tiktoken's): a byte
    that starts a whole UTF-8 character within the token is shown as that character, any other
    is written in hex; neighbouring hex bytes share one ⟨⟩."""
    from explorer.stages.units import display_to_bytes

    data = display_to_bytes(token)
    out, hexes, i = [], [], 0
    while i < len(data):
        for n in (1, 2, 3, 4):
            try:
                ch = data[i : i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            break
        else:
            hexes.append(f"{data[i]:02x}")
            i += 1
            continue
        if hexes:
            out.append("⟨" + " ".join(hexes) + "⟩")
            hexes = []
        out.append(ch.replace(" ", "·").replace("\n", "↵").replace("\t", "→").replace("\r", "␍"))
        i += len(ch.encode("utf-8"))
    if hexes:
        out.append("⟨" + " ".join(hexes) + "⟩")
    return "".join(out)


def unescaped(markdown: str) -> str:
    """Markdown with its backslash escapes undone: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", markdown)


def chart_data(at, title: str):
    """The data of the Vega-Lite chart (Altair's too) titled ``title`` on an AppTest page, as a
    DataFrame: the largest of its datasets (the others are a rule's one row)."""
    for el in at.get("vega_lite_chart") + at.get("arrow_vega_lite_chart"):
        spec = json.loads(el.proto.spec)
        titles = [spec.get("title")] + [layer.get("title") for layer in spec.get("layer", [])]
        if title in titles:
            arrows = [d.data.data for d in el.proto.datasets] + (
                [el.proto.data.data] if el.proto.HasField("data") else []
            )
            frames = [pa.ipc.open_stream(a).read_all().to_pandas() for a in arrows if a]
            return max(frames, key=len)
    raise AssertionError(f"no chart titled {title!r}")


# ---- the Playground's Encode view, read back from an AppTest page ----------------------------
class Panel(NamedTuple):
    """One tokenizer in the Encode view: its label, its row of the comparison (under the names
    the numbers had as metrics), its chips' HTML and its ids."""

    name: str  # the comparison's row and the details tab
    label: str  # the tokenizer's full label (the tab's caption)
    metrics: dict[str, str]
    chips: str
    ids: list[int]


_CMP_ROW = re.compile(r'<tr data-name="([^"]*)"[^>]*>(.*?)</tr>', re.S)
_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
_STRIP = re.compile(r'<div class="bpe-strip"><div class="bpe-strip-head"><b>(.*?)</b>.*?</div>(.*?)</div></div>', re.S)


def encode_view(at) -> list[Panel]:
    """Every tokenizer of the Encode view in page order: the comparison table's row, the chip
    strip under its name and the ids in its tab of the details."""
    bodies = [h.proto.body for h in at.get("html")]
    table = next(b for b in bodies if 'class="bpe-cmp"' in b and "<th>round trip</th>" in b)
    rows = {}
    for name, cells in _CMP_ROW.findall(table):
        tokens, _fewest, cpt, bpt, unknown, _trip = [html.unescape(c) for c in _CELL.findall(cells)][1:]
        rows[html.unescape(name)] = {
            "Tokens": tokens,
            "Characters per token": cpt,
            "Bytes per token": bpt,
            "Unknown symbols": unknown,
        }
    strips = {html.unescape(name): chips for b in bodies for name, chips in _STRIP.findall(b)}
    opened = "w_play_details" in at.session_state and at.session_state["w_play_details"]
    if not opened:
        at.session_state["w_play_details"] = True  # the ids are drawn while their expander is open
        at.run()
    tabs = {t.label: t for t in at.tabs}
    out = []
    for name, metrics in rows.items():
        tab = tabs[name]
        out.append(
            Panel(
                name, tab.caption[0].value.replace("\\", ""), metrics, strips[name], ast.literal_eval(tab.code[0].value)
            )
        )
    return out


# ---- the Train page's live area: the stepper (explorer/ui/stepper.py) and the charts ----------
def stepper_data(at) -> dict:
    """What the Train page's stepper (one component) was given last: its entries and pieces."""
    for el in at.get("bidi_component"):
        if el.proto.component_name == "bpe_explorer_stepper":
            return json.loads(el.proto.json)
    raise AssertionError("the Train page drew no stepper")


def stepper_entry(at, step: int | None = None) -> dict:
    """The stepper's entry for a step (default: the step the server shows), its rows of panels
    joined from their pieces as the browser joins them."""
    data = stepper_data(at)
    step = data["view"] if step is None else step
    (found,) = [e for e in data["entries"] if e["step"] == step]
    pieces = data["pieces"]
    return found | {"rows": [["".join(pieces[i] for i in cell) for cell in row] for row in found["rows"]]}


def step_sentence(at) -> str:
    """The sentence the stepper shows at the step shown, its lead in Markdown's bold as the page
    once wrote it in a box ("**Step 3.** ‘e’ + ‘s’ → ..."), the rest as plain text."""
    e = stepper_entry(at)
    return (f"**{e['lead']}** " if e["lead"] else "") + e["text"]


_PAIR_TR = re.compile(r"<tr[^>]*>(.*?)</tr>", re.S)
_TD = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
_CHIP = re.compile(r'<span class="bpe-chip[^"]*" style="[^"]*">(.*?)</span>', re.S)
_WORD_ROW = re.compile(
    r'<div class="bpe-row[^"]*"><span class="bpe-word">(.*?)</span>(.*?)<span class="bpe-freq">', re.S
)
_NOW_ROW = re.compile(r'<tr class="bpe-now"><td class="num">([\d,]+)</td><td>(.*?)</td><td[^>]*>(.*?)</td>', re.S)


def drawn_step(panels: list[str]) -> dict:
    """What a Train step's panels (HTML, as drawn) say: the pair table's rows (left, right,
    count), the history's highlighted row (step, left, right, new token), the words' chips."""
    html_all = " ".join(panels)
    pairs_html = next((p for p in panels if 'class="bpe-pairs"' in p), "")
    pairs = []
    for cells in _PAIR_TR.findall(pairs_html.split('class="bpe-pairs">', 1)[-1]):
        tds = _TD.findall(cells)
        if tds:
            chips = lambda cell: html.unescape(_CHIP.findall(cell)[0])  # noqa: E731
            pairs.append((chips(tds[1]), chips(tds[2]), int(tds[4].replace(",", ""))))
    now = _NOW_ROW.search(html_all)
    history = None
    if now:
        left, right = (html.unescape(c) for c in _CHIP.findall(now.group(2)))
        history = (int(now.group(1).replace(",", "")), left, right, html.unescape(_CHIP.findall(now.group(3))[0]))
    words = {
        html.unescape(w): [html.unescape(c) for c in _CHIP.findall(chips)] for w, chips in _WORD_ROW.findall(html_all)
    }
    return {"pairs": pairs, "history": history, "words": words}


def engine_step(trainer, k: int, *, byte: bool, top: int = 10, words: int = 24) -> dict:
    """What the engine's StepLog and tokenizer say step k shows, written as the pages write
    tokens (``shown`` for byte-level ones, whitespace made visible for the rest): the rows
    :func:`drawn_step` reads back."""
    from explorer.ui.render import visible

    written = shown if byte else visible
    records = trainer.records
    pairs = records[k].top_pairs[:top] if k < len(records) else trainer.peek(top)
    history = None
    if k:
        r = records[k - 1]
        history = (r.step, written(r.left), written(r.right), written(r.token))
    tok = trainer.tokenizer(k)
    top_words = sorted(range(len(trainer.words)), key=lambda i: -trainer.freqs[i])[:words]
    return {
        "pairs": [(written(p.left), written(p.right), p.count) for p in pairs],
        "history": history,
        "words": {
            visible(trainer.words[i]): [written(t) for t in tok.tokens(tok.encode_piece(trainer.words[i]))]
            for i in top_words
        },
    }


def open_advanced(at):
    """Open the Train sidebar's "Advanced settings" (its form is drawn only while it is open, as
    a click on it does in a browser) and rerun."""
    from explorer.ui.settings import ADVANCED_OPEN

    at.session_state[ADVANCED_OPEN] = True
    return at.run()


def open_importer(at):
    """Open the Playground's "Import a tokenizer" (drawn only while open, as a click on it does in
    a browser) and rerun."""
    from explorer.ui.interop_view import IMPORT_OPEN

    at.session_state[IMPORT_OPEN] = True
    return at.run()


def live_data(at) -> dict:
    """A page's live area at the step shown: rows of panel HTML (on the Train page the stepper's
    entry), and the charts (the live view's)."""
    drawn = {el.proto.component_name: el for el in at.get("bidi_component")}
    if "bpe_explorer_live_view" not in drawn:
        raise AssertionError("the page drew no live area")
    data = json.loads(drawn["bpe_explorer_live_view"].proto.json)
    if "bpe_explorer_stepper" in drawn:  # the Train page; the Class page's panels are the live view's own
        data["rows"] = stepper_entry(at)["rows"]
    return data


def train_html(at) -> list[str]:
    """The Train page's panels (legend, pair counts, history, words, look-up) as HTML."""
    return [cell for row in live_data(at)["rows"] for cell in row]


def train_text(at) -> str:
    """The panels' text as a reader sees it (tags dropped, entities undone)."""
    return html.unescape(re.sub(r"<[^>]+>", " ", " ".join(train_html(at))))


def step_chart_spec(at, title: str) -> dict:
    """The Train page's chart titled ``title``, as its component received it."""
    for chart in live_data(at)["charts"]:
        if chart["title"] == title:
            return chart
    raise AssertionError(f"no Train chart titled {title!r}")


def step_chart(at, title: str):
    """A Train chart's points as a DataFrame: ``step`` (or the bars' x) and one column a series."""
    import pandas as pd

    chart = step_chart_spec(at, title)
    x = "step" if chart["kind"] == "line" else chart["x_title"]
    return pd.DataFrame({x: chart["x"], **{s["name"]: s["values"] for s in chart["series"]}})


# ---- the Compare page's panels (one tab drawn at a time) ------------------------------------
COMPARE_TABS = {
    "Bytes per token after k merges": "Compression curves",
    "bytes per token": "Cross-evaluation",
    "tokens per word": "Cross-evaluation",
    "Token length (bytes)": "Token lengths",
    "Token length (characters)": "Token lengths",
}


def merge_everywhere(seq, left, right, new) -> tuple[tuple, int]:
    """The tests' own one-merge rule, written apart from the engine's (the slow references
    check the engine against it): every (left, right) in ``seq`` replaced by ``new``, left to
    right, none overlapping; and how many were replaced.

    >>> merge_everywhere("aaab", "a", "a", "aa")
    (('aa', 'a', 'b'), 1)
    """
    out: list = []
    made = i = 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == left and seq[i + 1] == right:
            out.append(new)
            made += 1
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return tuple(out), made


def as_drawn(at):
    """An AppTest page's widget values as the browser holds them now (a copy: later runs leave it be)."""
    return at.main.root.get_widget_states()


def counted(at, totals: dict[str, int], drawn=None) -> None:
    """Rerun as the browser does when its click counter (explorer/ui/clicks.py) reports these
    running totals, with every other widget as ``drawn`` (by default the newest page; an older
    one when the browser asks before the last run's answer has arrived). AppTest has no hand for
    a component's state: the one private call here sends it."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

    states = WidgetStates()
    states.CopyFrom(drawn or as_drawn(at))
    counter = next(c for c in at.get("bidi_component") if c.proto.component_name == "bpe_explorer_click_counter")
    value = json.dumps({"clicks": {"nonce": "one page load", **totals}})
    states.widgets.append(WidgetState(id=counter.proto.id, json_value=value))
    at._run(states)


def reported(at, step: int, *, gen: str | None = None, held=(), seq: int = 1, load: str = "one page load"):
    """Rerun as the browser does when the Train page's stepper reports the step it shows (of the
    generation the page last sent unless ``gen`` says otherwise), holding the steps ``held``
    (ranges). AppTest has no hand for a component's state: the one private call here sends it."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates

    data = stepper_data(at)
    states = WidgetStates()
    states.CopyFrom(as_drawn(at))
    component = next(c for c in at.get("bidi_component") if c.proto.component_name == "bpe_explorer_stepper")
    report = {"step": step, "seq": seq, "gen": data["gen"] if gen is None else gen, "epoch": data["epoch"]}
    value = json.dumps({"at": report | {"held": [list(r) for r in held], "load": load}})
    kept = [w for w in states.widgets if w.id != component.proto.id]
    del states.widgets[:]
    states.widgets.extend(kept)
    states.widgets.append(WidgetState(id=component.proto.id, json_value=value))
    return at._run(states)


def view_slider(at):
    """The Train page's "Step shown" slider (its key gains a generation each time a button moves
    the step: explorer.ui.clicks.moved_widget)."""
    (found,) = [s for s in at.slider if (s.key or "").startswith("view_slider_")]
    return found


def open_tab(at, label: str):
    """Open one of the Compare page's tabs (only the open one is drawn), as a click on it does."""
    at.session_state["w_cmp_tab"] = label
    return at.run()


def compare_chart(at, title: str):
    """The data of a Compare chart, its tab opened first."""
    open_tab(at, COMPARE_TABS[title])
    return chart_data(at, title)


# ---- Mistral's tekken.json, as mistral_common ships it -------------------------------------------
TEKKEN_FILE = "tekken_240911.json"  # as tekken_240718.json (same vocabulary and config) plus image settings


@functools.cache
def tekken_doc() -> dict:
    """``mistral_common``'s own ``tekken_240911.json``, parsed (read from the installed package,
    not vendored: Apache-2.0, 19 MB)."""
    import importlib.resources

    return json.loads((importlib.resources.files("mistral_common") / "data" / TEKKEN_FILE).read_bytes())


def small_tekken(*, tokens: int = 600, used: int = 550, specials: int = 30) -> bytes:
    """A tekken.json of the layout of Mistral's later files (version v13, its special tokens
    listed, ``<SPECIAL_{id}>`` fillers after them) holding the first ``tokens`` ranks of the real
    file, of which Tekken uses ``used`` (``default_vocab_size`` = ``used`` + ``specials``)."""
    doc = tekken_doc()
    listed = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[THINK]"]
    small = {
        "config": doc["config"]
        | {"num_vocab_tokens": tokens, "default_vocab_size": used + specials, "default_num_special_tokens": specials}
        | {"version": "v13"},
        "vocab": doc["vocab"][:tokens],
        "special_tokens": [{"rank": i, "token_str": t, "is_control": True} for i, t in enumerate(listed)],
    }
    return json.dumps(small).encode()


# ---- the page models' keys ---------------------------------------------------------------------
# widgets every page draws through its prologue (nav.page): the projector switch
PROLOGUE_KEYS = ("projector_",)


def widget_keys(*sessions) -> set[str]:
    """Every widget key the sessions' pages draw (AppTest sessions)."""
    found: set[str] = set()

    def walk(node) -> None:
        if getattr(node, "key", None):
            found.add(node.key)
        for child in getattr(node, "children", {}).values():
            walk(child)

    for at in sessions:
        walk(at._tree)
    return found


def constants(group: type) -> dict[str, str]:
    """A model's named keys (``Keys``, ``Session``): NAME -> key."""
    return {name: value for name, value in vars(group).items() if name.isupper()}


def assert_keys_named(
    seen: set[str], keys: type, *, foreign: tuple[str, ...] = PROLOGUE_KEYS, prefixes: tuple[str, ...] = ("_AT",)
) -> None:
    """Every key ``keys`` names is a widget drawn (a name ending in one of ``prefixes`` is the start
    of drawn keys), and every widget drawn is named, or another module's (``foreign``)."""
    starts = {v for k, v in constants(keys).items() if k.endswith(prefixes)}
    whole = set(constants(keys).values()) - starts
    assert whole <= seen, f"named but drawn by no widget: {sorted(whole - seen)}"
    assert all(any(k.startswith(p) for k in seen) for p in starts), f"prefixes no widget starts with: {starts}"
    unnamed = {k for k in seen - whole if not k.startswith((*starts, *foreign))}
    assert not unnamed, f"widgets whose key the model does not name: {sorted(unnamed)}"
