"""README.md's snippets run as written: the Python examples as doctests, the console session
command by command with its printed output compared exactly."""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_python_examples_run_as_doctests():
    blocks = _blocks("python")
    assert blocks, "README has no python example"
    for block in blocks:
        test = doctest.DocTestParser().get_doctest(block, {}, "README", "README.md", 0)
        result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
        assert result.failed == 0


def test_readme_console_session_prints_what_it_shows(tmp_path):
    (tmp_path / "sample_corpora").symlink_to(ROOT / "sample_corpora")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    blocks = _blocks("console")
    assert blocks, "README has no console session"
    ran = 0
    for block in blocks:
        lines = block.splitlines()
        i = 0
        while i < len(lines):
            assert lines[i].startswith("$ "), lines[i]
            cmd = shlex.split(lines[i][2:])
            expected = []
            i += 1
            while i < len(lines) and not lines[i].startswith("$ "):
                expected.append(lines[i])
                i += 1
            assert cmd[:2] == ["python", "-m"]
            proc = subprocess.run(
                [sys.executable, *cmd[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
            )
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout.splitlines() == expected
            ran += 1
    assert ran >= 2


def _set_up_commands() -> list[str]:
    """The shell commands of README's "Set up" section, one per ```bash block."""
    section = README.split("\n## Set up\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def _venv_steps(command: str) -> list[list[str]]:
    """A set-up command's steps after it makes its virtual environment; each step that runs
    Python or pip must run the environment's (by its path, or after activating it).

    >>> _venv_steps("python3 -m venv .venv && .venv/bin/python -m pip install -r requirements.txt")
    [['.venv/bin/python', '-m', 'pip', 'install', '-r', 'requirements.txt']]
    >>> _venv_steps("python3 -m venv .venv && pip install -r requirements.txt")
    Traceback (most recent call last):
    ...
    ValueError: pip outside the virtual environment
    """
    first, *steps = [shlex.split(step) for step in command.split(" && ")]
    assert first == ["python3", "-m", "venv", ".venv"], first
    activated = False
    for words in steps:
        if words == [".", ".venv/bin/activate"]:
            activated = True
        elif words[0] in ("python", "python3", "pip", "pip3"):
            if not activated:
                raise ValueError(f"{words[0]} outside the virtual environment")
    return steps


def test_the_set_up_is_two_commands_each_in_a_virtual_environment_one_running_ci():
    app, tests = _set_up_commands()  # exactly two: the app on a bundled corpus, and the tests
    assert _venv_steps(app)[-1] == [".venv/bin/python", "-m", "streamlit", "run", "app.py"]
    assert ["-r", "requirements.txt"] in [words[-2:] for words in _venv_steps(app)]
    assert _venv_steps(tests)[-2:] == [[".", ".venv/bin/activate"], ["bash", ".ci/run"]]
    # .ci/run installs the test requirements and runs pytest with the environment's python
    ci = [shlex.split(line, comments=True) for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert ["python", "-m", "pip", "install", "--quiet", "-r", "requirements-dev.txt"] in ci
    assert any(words[:3] == ["python", "-m", "pytest"] for words in ci)
