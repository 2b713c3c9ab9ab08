"""Every BPE_EXPLORER_* setting is declared once (explorer/settings.py) and read through it: one
parser, one behaviour on a bad number (a warning naming the variable and the default used), the
values in force printed by ``python -m explorer settings``, and README's table in step with the
declarations."""

from __future__ import annotations

import ast
import json
import logging
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from explorer import cli, settings
from explorer.serving.rooms import Limits
from explorer.serving.store import DEFAULT_STORE_MIB
from explorer.settings import SETTINGS
from explorer.ui import server

NUMBERS = [s.name for s in SETTINGS.values() if s.kind != "place"]


def run_cli(*argv: str) -> tuple[int, str, str]:
    import io

    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", NUMBERS)
@pytest.mark.parametrize("raw", ["0", "-3", "nan", "inf", "four", "1_000", "1e999"])
def test_a_bad_number_is_logged_by_name_and_its_default_used(name, raw, caplog):
    default = SETTINGS[name].default_value()
    read = settings.count if SETTINGS[name].kind == "count" else settings.number
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert read(name, env={name: raw}) == default
    (record,) = caplog.records
    assert record.getMessage().startswith(f"{name}={raw!r} is not ")
    assert record.getMessage().endswith(f"using the default, {default}")


def test_a_count_must_be_whole_and_a_number_may_be_a_fraction(caplog):
    assert settings.count("BPE_EXPLORER_WORKERS", env={"BPE_EXPLORER_WORKERS": "3"}) == 3
    assert settings.count("BPE_EXPLORER_STEP_WORK", env={"BPE_EXPLORER_STEP_WORK": "2e5"}) == 200_000
    assert settings.number("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "0.25"}) == 0.25
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.count("BPE_EXPLORER_ROOM_SIZE", env={"BPE_EXPLORER_ROOM_SIZE": "2.5"}) == 100
    assert "is not a whole number above 0" in caplog.text


def test_an_unset_or_blank_setting_is_its_default_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="explorer.settings"):
        assert settings.number("BPE_EXPLORER_JOB_MIB", env={}) == 2048
        assert settings.number("BPE_EXPLORER_JOB_MIB", env={"BPE_EXPLORER_JOB_MIB": "  "}) == 2048
        assert settings.text("BPE_EXPLORER_STORE", env={"BPE_EXPLORER_STORE": " "}) is None
    assert not caplog.records


def test_the_servers_the_stores_and_the_rooms_read_the_environment_through_the_settings(monkeypatch, caplog):
    values = {
        "BPE_EXPLORER_STEP_MIB": "0.5",
        "BPE_EXPLORER_IDLE_MINUTES": "2",
        "BPE_EXPLORER_SESSION_TRAIN_MIB": "64",
        "BPE_EXPLORER_STEP_WORK": "1000",
        "BPE_EXPLORER_MAX_ROOMS": "7",
        "BPE_EXPLORER_ROOM_HOURS": "0.5",
        "BPE_EXPLORER_ADDRESS_ROOM_MISSES": "nope",  # the old reader of rooms ignored a bad value silently
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


def _env_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """Where a module reads the environment: os.environ[...] / .get / os.getenv, with the name
    read when it is a literal or a name (a constant of the module) - (line, what)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
            found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_but_the_settings_reads_a_bpe_explorer_variable_from_the_environment():
    offenders = []
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        if path.name == "settings.py" and path.parent.name == "explorer":
            continue
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = source.splitlines()
        for line, _ in _env_reads(tree):
            text = lines[line - 1]
            # the environment read for someone else (Streamlit's own, huggingface_hub's, the PATH,
            # a child process's copy) is not a setting of ours; a BPE_EXPLORER_ name or one of
            # the modules' *_ENV constants is
            if "BPE_EXPLORER_" in text or re.search(r"\b[A-Z_]+_ENV\b", text) and "env[" not in text:
                offenders.append(f"{path.relative_to(ROOT)}:{line}: {text.strip()}")
    assert not offenders, "\n".join(offenders)


def test_every_variable_the_code_names_is_declared():
    named = set()
    for path in (ROOT / "explorer").rglob("*.py"):
        named |= set(re.findall(r"BPE_EXPLORER_[A-Z_]+[A-Z]", path.read_text(encoding="utf-8")))
    named -= {"BPE_EXPLORER_"}
    assert named <= set(SETTINGS), sorted(named - set(SETTINGS))


def test_readme_lists_exactly_the_declared_settings_with_their_defaults():
    # the declared defaults, from a process of their own (this one's server ceiling is lifted: conftest)
    declared = json.loads(
        subprocess.run(
            [sys.executable, "-c", "import json; from explorer.settings import SETTINGS as S; "
             "print(json.dumps({n: s.default for n, s in S.items() if not callable(s.default)}))"],
            cwd=ROOT, capture_output=True, text=True, check=True, env={k: v for k, v in os.environ.items()
                                                                    if not k.startswith("BPE_EXPLORER_")},
        ).stdout
    )  # fmt: skip
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- settings:begin -->")[1].split("<!-- settings:end -->")[0]
    rows = re.findall(r"^\| `(BPE_EXPLORER_[A-Z_]+)` \| ([^|]+) \|", table, re.M)
    assert [name for name, _ in rows] == list(SETTINGS)
    for name, default in rows:
        value = declared.get(name)
        if isinstance(value, int | float):
            shown = f"{value:,g}" if isinstance(value, float) else f"{value:,}"
            assert default.split()[0] == shown, (name, default, shown)


def test_the_cli_prints_each_setting_in_force_and_where_it_came_from(monkeypatch, caplog):
    monkeypatch.setenv("BPE_EXPLORER_STEP_MIB", "2")
    monkeypatch.setenv("BPE_EXPLORER_ROOM_SIZE", "lots")
    monkeypatch.setenv("BPE_EXPLORER_PUBLIC_URL", "http://10.0.0.5:8501")
    monkeypatch.delenv("BPE_EXPLORER_MAX_ROOMS", raising=False)
    code, out, err = run_cli("settings")
    assert code == 0 and not err
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert list(lines) == list(SETTINGS)
    assert re.match(r"BPE_EXPLORER_STEP_MIB +2 MiB  \[environment\]  corpus size", lines["BPE_EXPLORER_STEP_MIB"])
    assert "100 students  [default (bad value)]" in lines["BPE_EXPLORER_ROOM_SIZE"]
    assert "200 rooms  [default]" in lines["BPE_EXPLORER_MAX_ROOMS"]
    assert "http://10.0.0.5:8501  [environment]" in lines["BPE_EXPLORER_PUBLIC_URL"]

    code, out, err = run_cli("settings", "--json")
    shown = json.loads(out)
    assert code == 0 and list(shown) == list(SETTINGS)
    assert shown["BPE_EXPLORER_STEP_MIB"] == {"value": 2.0, "source": "environment", "unit": "MiB"}
    assert shown["BPE_EXPLORER_ROOM_SIZE"] == {"value": 100, "source": "default (bad value)", "unit": "students"}

    code, out, err = run_cli("settings", "--verbose")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "unrecognized arguments: --verbose" in err
