"""The built-in patterns' fast path (ASCII lines in the stdlib engine, the rest in `regex`)
cuts every text exactly as the pinned patterns do in `regex` alone; the stdlib twins are derived
from the patterns, and each built-in pattern gets one."""

from __future__ import annotations

import itertools
import sys

import pytest
import regex
from conftest import SAMPLE_FILES, read_sample
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.stages.pretokenizers import PATTERNS, PATTERNS_COMPILED, PRETOKENIZER_REGISTRY, builtin_pieces

# characters on which the patterns' alternatives disagree: whitespace in and out of \s,
# apostrophes and contraction letters in both cases, digits, punctuation, the "/" o200k keeps
# after punctuation, and non-ASCII letters, marks and spaces
TRICKY = " \n\r\t\x0b\x0c\x1c'sStTlLdDmMvVrReExyAZ09./,-!é\u0301—\u2003\x85ſK"


def reference(text: str, name: str) -> list[str]:
    return PATTERNS_COMPILED[name].findall(text)


@pytest.mark.parametrize("name", list(PATTERNS))
def test_every_built_in_pattern_has_its_fast_path_on_every_text(name):
    # without it every check below would compare `regex` with itself
    stage = PRETOKENIZER_REGISTRY[name]
    assert stage.fast is not None and stage.stretches


@pytest.mark.parametrize("name", list(PATTERNS))
@pytest.mark.parametrize("sample", SAMPLE_FILES)
def test_every_sample_corpus_is_cut_as_by_the_pinned_pattern(sample, name):
    text = read_sample(sample)
    assert builtin_pieces(text, name) == reference(text, name)


@pytest.mark.parametrize("name", list(PATTERNS))
def test_every_short_string_of_tricky_characters_is_cut_as_by_the_pinned_pattern(name):
    # all strings of up to 3 characters, each between two ASCII lines so that both engines and
    # the cuts between them take part
    for k in range(1, 4):
        for chars in itertools.product(TRICKY, repeat=k):
            s = "".join(chars)
            for text in (s, f"ab.\n{s}\nCd", f"{s}\nx"):
                assert builtin_pieces(text, name) == reference(text, name), repr(text)


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(st.sampled_from(TRICKY) | st.characters(codec="utf-8"), max_size=300),
    name=st.sampled_from(list(PATTERNS)),
)
def test_generated_text_is_cut_as_by_the_pinned_pattern(text, name):
    assert builtin_pieces(text, name) == reference(text, name)


def test_what_regex_calls_whitespace_python_calls_whitespace_too():
    # the cut rule asks str.isspace() whether the character before a newline is a space; it is
    # safe because every character the patterns' \s matches is a space to Python too
    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    assert all(c.isspace() for c in regex.findall(r"\s", every))
