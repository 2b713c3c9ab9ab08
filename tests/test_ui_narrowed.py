"""Values the pages narrow before passing them on: a link's ``big`` mode, and the compare page's
headlines over rows and cells whose numbers may be missing (None) or zero."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from explorer.ui.compare_view import headlines
from explorer.ui.links import parse_link


@pytest.mark.parametrize("mode", ["sample", "final"])
def test_a_links_big_mode_is_kept_when_it_is_one_of_the_two(mode):
    link, problems = parse_link({"corpus": "a.txt", "big": mode}, samples=["a.txt"])
    assert link is not None and (link.big, problems) == (mode, [])


@pytest.mark.parametrize("mode", ["step", "everything"])
def test_any_other_big_mode_is_dropped_and_said(mode):
    link, problems = parse_link({"corpus": "a.txt", "big": mode}, samples=["a.txt"])
    assert link is not None and link.big is None
    assert problems == [f"big={mode!r} in the link is neither 'sample' nor 'final'"]


def _run(corpus_bytes: int, tokens: int) -> SimpleNamespace:
    return SimpleNamespace(corpus_bytes=corpus_bytes, train_curve=[(0, 999), (10, tokens)])


def _cell(bytes_per_token: float | None) -> SimpleNamespace:
    return SimpleNamespace(bytes_per_token=bytes_per_token)


def _row(tokenizer: str, language: str, parity: float | None, tokens: int) -> SimpleNamespace:
    return SimpleNamespace(
        tokenizer=tokenizer, language=language, parity=parity, evaluation=SimpleNamespace(tokens=tokens)
    )


def test_headlines_skip_missing_numbers_and_pick_the_extremes():
    result = SimpleNamespace(
        runs={"A": _run(100, 40), "B": _run(90, 20), "C": _run(10, 10)},  # 2.5, 4.5, 1.0 bytes per token
        cross={
            ("A", "A"): _cell(2.5),
            ("B", "B"): _cell(None),  # no own number: B is never a denominator
            ("C", "C"): _cell(0.0),  # nor is a zero
            ("B", "A"): _cell(2.0),  # 80% of A's own
            ("C", "A"): _cell(1.0),  # 40%: the worst traveller
            ("A", "B"): _cell(0.1),
            ("A", "C"): _cell(0.1),
        },
        overlaps=[],
    )
    rows = [
        _row("gpt2", "de", 1.5, 150),
        _row("gpt2", "fr", 1.8, 180),
        _row("gpt2", "en", None, 100),
        _row("cl100k_base", "fr", 1.2, 120),
        _row("o200k_base", "fr", 1.4, 140),
        _row("cl100k_base", "de", 1.1, 110),
    ]
    got = {h.panel: (h.number, h.sentence) for h in headlines(result, rows)}
    # Gini of gpt2's 150, 180, 100 tokens: (2 x (30 + 50 + 80)) / (2 x 3² x 143.3) = 0.124; cl100k_base's 120, 110: 0.022
    assert got["Parity"] == (
        "1.8×",
        "fr costs gpt2 1.8× the tokens of the same English text; cl100k_base 1.2×. Gini across languages: 0.12 vs 0.02",
    )
    assert got["Compression"][0] == "4.50"
    assert got["Cross-evaluation"] == ("40%", "A encoded with C's tokenizer keeps 40% of the compression A's own gives")
