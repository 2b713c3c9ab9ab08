"""Shared fixtures: the bundled sample corpora."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_corpora"

# Every bundled sample corpus (not the seed notebooks' own corpora under seeds/).
SAMPLE_FILES = sorted(p.name for p in SAMPLES.glob("*.txt"))


def read_sample(name: str) -> str:
    """A bundled corpus as text (``name`` relative to sample_corpora/)."""
    return (SAMPLES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def sample():
    return read_sample


def unescaped(markdown: str) -> str:
    """Markdown with its backslash escapes undone: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", markdown)
