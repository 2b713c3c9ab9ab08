"""bench/load.py's parts that need no server (its runs are tests/test_load.py's): the report's
summaries (their doctests), the leak check naming whose history a session's page shows, and each
scenario refusing its bad options with argparse's one line (exit status 2)."""

from __future__ import annotations

import doctest
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import load  # noqa: E402  (bench/load.py: the command)
from loadgen import classroom, report, sessions  # noqa: E402
from loadgen.client import Session  # noqa: E402
from loadgen.specs import Spec  # noqa: E402


def test_the_reports_summaries_hold_their_examples():
    result = doctest.testmod(report)
    assert result.attempted >= 4 and result.failed == 0, result


def _rows(*tokens: str) -> list[tuple]:
    """A merge history as the page's table gives it: one row per token, made of its two halves."""
    return [(i, t[:1], t[1:], t, 255 + i, 10 - i, 10 - i, 100 - 10 * i) for i, t in enumerate(tokens, 1)]


def test_a_history_that_is_another_sessions_is_named_a_leak_and_a_wrong_one_its_first_difference():
    specs = [
        Spec(0, ("udhr_en.txt",), "gpt2", 3),
        Spec(1, ("udhr_ru.txt",), "bytes", 3),
        Spec(2, ("udhr_el.txt",), "gpt4", 3),
    ]
    refs = [{"rows": _rows("ab", "abc")}, {"rows": _rows("xy", "xyz")}, {"rows": _rows("pq", "pqr")}]
    live = [Session(spec, "http://127.0.0.1:9", []) for spec in specs]  # never connected
    read = [refs[1]["rows"], refs[1]["rows"], _rows("pq", "pqs")]  # 0 shows 1's; 2 differs at row 2
    lines = sessions.leak_lines(live, read, refs, specs)
    assert lines == [
        "session 0 (udhr_en / gpt2): 2 merges, the engine alone 2; it is session 1's (udhr_ru / bytes)",
        "session 2 (udhr_el / gpt4): 2 merges, the engine alone 2; first difference at row 2: "
        f"{_rows('pq', 'pqs')[1]}, the engine's {_rows('pq', 'pqr')[1]}",
    ]
    # a history equal to the engine's, or one that could not be read (an error of its own), is no leak
    assert sessions.leak_lines(live, [refs[0]["rows"], None, refs[2]["rows"]], refs, specs) == []


@pytest.mark.parametrize(
    ("scenario", "argv", "message"),
    [
        (classroom, ["--class", "--proxy"], "--class always serves through `python -m explorer serve`"),
        (classroom, ["--class", "--students", "0"], "--students and --steps must be at least 1"),
        (sessions, ["--server-option", "runner.postScriptGC"], "--server-option takes SECTION.OPTION=VALUE"),
        (sessions, ["--proxy", "--server-option", "a.b=c"], "--server-option does not go with --proxy"),
        (sessions, ["--browsers", "0", "--corpus", "nope.txt"], "--corpus: no bundled sample 'nope.txt'"),
    ],
)
def test_each_scenario_refuses_its_bad_options_in_one_line(scenario, argv, message, capsys):
    cli = load.parser()
    args = cli.parse_args(argv)
    with pytest.raises(SystemExit) as stopped:
        scenario.check_args(args, cli.error)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
