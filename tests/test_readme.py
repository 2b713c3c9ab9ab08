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
