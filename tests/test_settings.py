"""Every BPE_EXPLORER_* setting is declared once (explorer/settings.py) and read through it: one
parser, one behaviour on a bad number (a warning naming the variable, the value and the default
used), the values in force printed by ``python -m explorer settings``, and README's table in step
with the declarations."""

from __future__ import annotations

import ast
import io
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from explorer import cli, settings
from explorer.serving.rooms import Limits
from explorer.serving.store import DEFAULT_STORE_MIB, data_dir
from explorer.settings import SETTINGS
from explorer.ui import server

NUMBERS = [s.name for s in SETTINGS.values() if s.kind != "place"]
# where the project's code lives: the engine and its pages, the app's entry, the benchmarks
CODE = [ROOT / "explorer", ROOT / "bench", ROOT / "pages", ROOT / "app.py"]


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def read(name: str, raw: str) -> float:
    """``name``'s value when the environment holds ``raw``, by the reader of its kind."""
    reader = settings.count if SETTINGS[name].kind == "count" else settings.number
    return reader(name, env={name: raw})


# -- one parser, one behaviour on a bad value ------------------------------------------------------


@pytest.mark.parametrize("name", NUMBERS)
@pytest.mark.parametrize("raw", ["0", "-3", "nan", "inf", "four", "1,000", "1e999"])
def test_a_bad_number_is_logged_by_name_with_its_value_and_the_default_used(name, raw, caplog):
    default = SETTINGS[name].default_value()
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert read(name, raw) == default
    (record,) = caplog.records
    wanted = {"count": "a whole number above 0", "number": "a number above 0"}[SETTINGS[name].kind]
    if SETTINGS[name].unit == "MiB":
        wanted = "a number of MiB above 0, a byte at least"
    assert record.getMessage() == f"{name}={raw!r} is not {wanted}; using the default, {default}"


def test_a_count_must_be_whole_and_a_number_may_be_a_fraction(caplog):
    assert settings.count("BPE_EXPLORER_WORKERS", env={"BPE_EXPLORER_WORKERS": "3"}) == 3
    assert settings.count("BPE_EXPLORER_STEP_WORK", env={"BPE_EXPLORER_STEP_WORK": "2e5"}) == 200_000
    assert settings.count("BPE_EXPLORER_STEP_WORK", env={"BPE_EXPLORER_STEP_WORK": "1_000"}) == 1000
    assert settings.number("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "0.25"}) == 0.25
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.count("BPE_EXPLORER_ROOM_SIZE", env={"BPE_EXPLORER_ROOM_SIZE": "2.5"}) == 100
    assert "BPE_EXPLORER_ROOM_SIZE='2.5' is not a whole number above 0; using the default, 100" in caplog.text


def test_a_size_is_at_least_a_byte_and_a_time_may_be_a_moment(caplog):
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.number("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "1e-7"}) == 4.0
    assert "BPE_EXPLORER_STEP_MIB='1e-7' is not a number of MiB above 0, a byte at least" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.number("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "1e-6"}) == 1e-6
        assert settings.number("BPE_EXPLORER_IDLE_MINUTES", env={"BPE_EXPLORER_IDLE_MINUTES": "1e-7"}) == 1e-7
    assert not caplog.records


def test_a_bad_value_is_repeated_shortened_on_one_line(caplog):
    pasted = "12\n# a pasted file\n" + "x" * 500
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.count("BPE_EXPLORER_MAX_ROOMS", env={"BPE_EXPLORER_MAX_ROOMS": pasted}) == 200
    (record,) = caplog.records
    message = record.getMessage()
    assert "\n" not in message and len(message) < 160, message
    assert (
        message.startswith("BPE_EXPLORER_MAX_ROOMS='12\\n# a pasted file\\nxxx") and "using the default, 200" in message
    )


def test_an_unset_or_blank_setting_is_its_default_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.number("BPE_EXPLORER_JOB_MIB", env={}) == 2048
        assert settings.number("BPE_EXPLORER_JOB_MIB", env={"BPE_EXPLORER_JOB_MIB": "  "}) == 2048
        assert settings.text("BPE_EXPLORER_STORE", env={"BPE_EXPLORER_STORE": " "}) is None
    assert not caplog.records


def test_a_setting_is_read_only_as_the_kind_it_is_declared():
    with pytest.raises(TypeError, match="BPE_EXPLORER_STEP_WORK is a count, not a number"):
        settings.number("BPE_EXPLORER_STEP_WORK")
    with pytest.raises(TypeError, match="BPE_EXPLORER_STORE_MIB is a number, not a place"):
        settings.text("BPE_EXPLORER_STORE_MIB")


# -- every reader goes through the settings --------------------------------------------------------


def test_the_servers_the_stores_and_the_rooms_read_the_environment_through_the_settings(monkeypatch, caplog, tmp_path):
    values = {
        "BPE_EXPLORER_STEP_MIB": "0.5",
        "BPE_EXPLORER_IDLE_MINUTES": "2",
        "BPE_EXPLORER_SESSION_TRAIN_MIB": "64",
        "BPE_EXPLORER_STEP_WORK": "1000",
        "BPE_EXPLORER_MAX_ROOMS": "7",
        "BPE_EXPLORER_ROOM_HOURS": "0.5",
        "BPE_EXPLORER_ADDRESS_ROOM_MISSES": "nope",  # the rooms' old reader ignored a bad value silently
        "BPE_EXPLORER_DATA": str(tmp_path / "class"),
    }
    for name, raw in values.items():
        monkeypatch.setenv(name, raw)
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        limits = Limits.from_env()
    assert (server.step_limit(), server.idle_seconds()) == (2**19, 120)
    budget = server.session_budget()
    assert (budget.memory_bytes, budget.step_work) == (64 * 2**20, 1000)
    assert (limits.rooms, limits.idle_hours, limits.address_misses) == (7, 0.5, Limits().address_misses)
    assert "BPE_EXPLORER_ADDRESS_ROOM_MISSES='nope' is not a whole number above 0; using the default, 60" in caplog.text
    assert Limits() == Limits(200, 100, 4.0, 30.0, 6, 30, 20, 60)  # the declared defaults, as README gives them
    assert DEFAULT_STORE_MIB == 1024
    assert data_dir() == tmp_path / "class"


# Where a module may read the environment: os.environ[...], os.environ.get/pop/setdefault(...),
# os.getenv(...), from-imported environ/getenv, and a name bound to os.environ (env = os.environ).
_READS = ("get", "pop", "setdefault", "__getitem__")


def _constants(paths: list[Path]) -> dict[str, str]:
    """The module-level names bound to a BPE_EXPLORER_ string anywhere in the code
    (``PUBLIC_URL_ENV = "BPE_EXPLORER_PUBLIC_URL"``), by name."""
    found = {}
    for path in paths:
        source = path.read_text(encoding="utf-8")
        if "BPE_EXPLORER_" not in source:  # no such constant here: spare the parse
            continue
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str) and node.value.value.startswith("BPE_EXPLORER_"):
                    found |= {t.id: node.value.value for t in node.targets if isinstance(t, ast.Name)}
    return found


def _names_ours(node: ast.expr | None, constants: dict[str, str]) -> bool:
    """Whether an expression naming a variable names one of ours: a literal, an f-string or a
    sum beginning ``BPE_EXPLORER_``, or a constant (module.CONSTANT too) bound to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.startswith("BPE_EXPLORER_")
    if isinstance(node, ast.JoinedStr):
        return bool(node.values) and _names_ours(node.values[0], constants)
    if isinstance(node, ast.BinOp):
        return _names_ours(node.left, constants)
    if isinstance(node, ast.Name | ast.Attribute):
        return (node.id if isinstance(node, ast.Name) else node.attr) in constants
    return False


def env_reads(source: str, constants: dict[str, str]) -> list[int]:
    """The lines where ``source`` reads one of our variables from the environment."""
    tree = ast.parse(source)
    environ = {"environ"}  # names the environment goes by in this module
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute | ast.Name):
            if ast.unparse(node.value) in ("os.environ", "environ"):
                environ |= {t.id for t in node.targets if isinstance(t, ast.Name)}

    def is_environ(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id in environ
        )

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environ(node.value):
            named = node.slice
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            getenv = (isinstance(func, ast.Attribute) and func.attr == "getenv") or (
                isinstance(func, ast.Name) and func.id == "getenv"
            )
            method = isinstance(func, ast.Attribute) and func.attr in _READS and is_environ(func.value)
            if not (getenv or method):
                continue
            named = node.args[0]
        else:
            continue
        if _names_ours(named, constants):
            lines.append(node.lineno)
    return lines


def _code_files() -> list[Path]:
    return sorted(p for place in CODE for p in ([place] if place.is_file() else place.rglob("*.py")))


def test_the_environment_read_finder_sees_every_way_of_reading_a_variable():
    constants = {"PUBLIC_URL_ENV": "BPE_EXPLORER_PUBLIC_URL"}
    reads = """
import os
from os import environ, getenv
a = os.environ["BPE_EXPLORER_STEP_MIB"]
b = os.environ.get(
    "BPE_EXPLORER_STEP_MIB", "")
c = os.getenv("BPE_EXPLORER_WORKERS")
d = environ.get(PUBLIC_URL_ENV)
e = getenv(addresses.PUBLIC_URL_ENV)
env = os.environ
f = env.get(f"BPE_EXPLORER_{what}_MIB")
g = os.environ.pop("BPE_EXPLORER_" + what)
"""
    assert env_reads(reads, constants) == [4, 5, 7, 8, 9, 11, 12]
    others = """
import os
os.environ["BPE_EXPLORER_DATA"] = folder  # set for a child process: no read
child = {k: v for k, v in os.environ.items() if not k.startswith("BPE_EXPLORER_")}
home = os.environ.get("HOME"); token = os.getenv("HF_TOKEN")
"""
    assert env_reads(others, constants) == []


def test_no_module_but_the_settings_reads_a_bpe_explorer_variable_from_the_environment():
    files = _code_files()
    constants = _constants(files)
    sources = {path: path.read_text(encoding="utf-8") for path in files if path != ROOT / "explorer" / "settings.py"}
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path, source in sources.items()
        if "environ" in source or "getenv" in source  # a read names one of them (the rest: no parse)
        for line in env_reads(source, constants)
    ]
    assert not offenders, offenders
    # the settings module itself does read them: the finder would see a read there
    assert env_reads("import os\nos.environ.get(name)", {"name": "BPE_EXPLORER_DATA"})
    assert (ROOT / "bench").is_dir() and len(files) > 100


def test_every_variable_the_code_tests_and_readme_name_is_declared():
    places = [*_code_files(), *sorted((ROOT / "tests").rglob("*.py")), ROOT / "README.md"]
    named = set()
    for path in places:
        named |= set(re.findall(r"BPE_EXPLORER_[A-Z_]*[A-Z]", path.read_text(encoding="utf-8")))
    assert sorted(named - set(SETTINGS)) == []


# -- README and the command line -------------------------------------------------------------------


def test_readme_lists_exactly_the_declared_settings_as_the_module_tables_them():
    # the declarations from a process of their own (this one's server ceiling is lifted: conftest)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BPE_EXPLORER_")}
    table = subprocess.run(
        [sys.executable, "-c", "from explorer.settings import table; print(table(), end='')"],
        cwd=ROOT, capture_output=True, text=True, check=True, env=clean,
    ).stdout  # fmt: skip
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("<!-- settings:begin -->\n")[1].split("<!-- settings:end -->")[0]
    assert re.findall(r"^\| `(BPE_EXPLORER_[A-Z_]+)` \|", shown, re.M) == list(SETTINGS)
    assert "| `BPE_EXPLORER_STEP_MIB` | 4 MiB | a number of MiB above 0, a byte at least |" in shown
    assert "| `BPE_EXPLORER_ROOM_HOURS` | 4 hours | a number above 0 |" in shown
    assert "| `BPE_EXPLORER_SERVER_MIB` | 1,536 MiB |" in shown
    # README's table is the module's, row for row (regenerate it with settings.table())
    assert shown == table


def test_the_cli_prints_each_setting_in_force_and_where_it_came_from(monkeypatch, tmp_path):
    monkeypatch.setenv("BPE_EXPLORER_STEP_MIB", "2")
    monkeypatch.setenv("BPE_EXPLORER_ROOM_SIZE", "lots")
    monkeypatch.setenv("BPE_EXPLORER_PUBLIC_URL", "http://10.0.0.5:8501")
    monkeypatch.delenv("BPE_EXPLORER_MAX_ROOMS", raising=False)
    monkeypatch.delenv("BPE_EXPLORER_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # the user's data directory, on Linux
    code, out, err = run_cli("settings")
    assert code == 0 and not err
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert list(lines) == list(SETTINGS)
    assert re.match(r"BPE_EXPLORER_STEP_MIB +2 MiB  \[environment\]  corpus size", lines["BPE_EXPLORER_STEP_MIB"])
    assert "100 students  [default (bad value)]" in lines["BPE_EXPLORER_ROOM_SIZE"]
    assert "200 rooms  [default]" in lines["BPE_EXPLORER_MAX_ROOMS"]
    assert "http://10.0.0.5:8501  [environment]" in lines["BPE_EXPLORER_PUBLIC_URL"]
    # the computed default in force, as the store finds it
    assert f"  {tmp_path / 'bpe-explorer'}  [default]" in lines["BPE_EXPLORER_DATA"]
    assert data_dir() == tmp_path / "bpe-explorer"

    code, out, err = run_cli("settings", "--json")
    shown = json.loads(out)
    assert code == 0 and list(shown) == list(SETTINGS)
    assert shown["BPE_EXPLORER_STEP_MIB"] == {"value": 2.0, "source": "environment", "unit": "MiB"}
    assert shown["BPE_EXPLORER_ROOM_SIZE"] == {"value": 100, "source": "default (bad value)", "unit": "students"}
    assert shown["BPE_EXPLORER_WORKERS"] == {"value": max(1, (os.cpu_count() or 2) - 1), "source": "default",
                                             "unit": "processes"}  # fmt: skip
    assert shown["BPE_EXPLORER_DATA"] == {"value": str(data_dir()), "source": "default", "unit": "folder"}


def test_the_cli_refuses_a_bad_flag_in_one_line():
    code, out, err = run_cli("settings", "--verbose")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "unrecognized arguments: --verbose" in err


def test_the_cli_shows_the_redis_store_without_its_passwords(monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_STORE", "redis://app:s%40fe-one@127.0.0.1:6390/2?password=s3cond&db=2")
    for argv in (["settings"], ["settings", "--json"]):
        code, out, err = run_cli(*argv)
        assert code == 0 and "127.0.0.1:6390" in out
        assert "fe-one" not in out and "s3cond" not in out, out
    assert json.loads(out)["BPE_EXPLORER_STORE"]["value"] == "redis://app:***@127.0.0.1:6390/2?password=***&db=2"
