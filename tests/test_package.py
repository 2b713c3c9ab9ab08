"""The project as a package: ``pip install .`` gives the ``bpe-explorer`` command, and the installed
copy finds its tables, its sample corpora and its app from any folder (no checkout beside it)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow

_LEFT_OUT = shutil.ignore_patterns(
    ".git",
    "test-artifacts",
    "__pycache__",
    ".hypothesis",
    ".pytest_cache",
    ".benchmarks",
    "build",
    "*.egg-info",
    ".venv",
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the bpe-explorer program, the environment to run it in): the project copied and installed
    with pip into a prefix of its own (dependencies are this environment's)."""
    work = tmp_path_factory.mktemp("package")
    source, prefix = work / "source", work / "prefix"
    shutil.copytree(ROOT, source, ignore=_LEFT_OUT)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--prefix",
            str(prefix),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(source)  # the installed copy must not lean on the sources
    purelib = sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})
    scripts = sysconfig.get_path("scripts", vars={"base": str(prefix), "platbase": str(prefix)})
    env = dict(os.environ, PYTHONPATH=purelib, BPE_EXPLORER_DATA=str(work / "data"))
    return str(Path(scripts) / "bpe-explorer"), env, work


def run(installed, *args: str) -> subprocess.CompletedProcess:
    program, env, work = installed
    return subprocess.run([program, *args], capture_output=True, text=True, timeout=120, cwd=work, env=env)


def test_the_installed_command_lists_presets_and_encodes_with_a_bundled_table(installed):
    assert run(installed, "--help").returncode == 0
    presets = run(installed, "presets")
    assert presets.returncode == 0 and presets.stdout.split()[0] == "hf-course" and "gpt2" in presets.stdout
    encoded = run(installed, "encode", "--tokenizer", "gpt2", "--text", "hello world")
    assert json.loads(encoded.stdout) == {"ids": [31373, 995], "tokens": ["hello", "Ġworld"]}
    where = subprocess.run(
        [sys.executable, "-c", "import explorer, explorer.paths as p; print(explorer.__file__);print(p.app_root())"],
        capture_output=True,
        text=True,
        env=installed[1],
        cwd=installed[2],
    )
    package, root = where.stdout.split()
    assert not package.startswith(str(ROOT)) and (Path(root) / "app.py").is_file()


def test_the_installed_app_serves_the_bundled_corpus(installed):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    program, env, work = installed
    proc = subprocess.Popen(
        [program, "app", "--port", str(port)],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        warm: dict = {}
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not warm.get("ready"):
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/warm", timeout=5) as answer:
                    warm = json.loads(answer.read())
            except OSError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        # the warm-up builds the default corpus's trainer (the installed sample corpora were found) and
        # does what Streamlit does once per process
        assert warm.get("ready") and {"default corpus", "streamlit", "sockets"} <= set(warm["done"]), warm
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as answer:
            assert answer.read() == b"ok"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
