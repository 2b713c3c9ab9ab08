"""The tie rule of Stanford CS336's BPE assignment (``tie_break="bytes"``): among pairs of equal
count, the greatest ``(left bytes, right bytes)`` wins. Checked against the assignment's own
worked example (its handout, section 2.4) and against a training loop written from the
assignment's text, on sample corpora in three scripts."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import regex
from conftest import read_sample

from explorer import Trainer, make_config
from explorer.stages.units import display_to_bytes

# the pre-tokenizer the assignment gives (GPT-2's), written out here rather than taken from the engine
CS336_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def cs336_merges(text: str, n: int, specials: tuple[str, ...] = ("<|endoftext|>",)) -> list[tuple[bytes, bytes]]:
    """The assignment's training loop, as its text describes it: cut the text at special tokens,
    pre-tokenize each part, count the pre-tokens as tuples of single bytes; then ``n`` times:
    count the adjacent pairs (weighted by the pre-token's count), take ``max`` over
    ``(count, pair)`` and merge every occurrence, left to right."""
    parts = re.split("|".join(map(re.escape, specials)), text) if specials else [text]
    words: Counter[tuple[bytes, ...]] = Counter()
    for part in parts:
        for m in regex.finditer(CS336_PAT, part):
            words[tuple(bytes([b]) for b in m.group().encode("utf-8"))] += 1
    merges = []
    for _ in range(n):
        pairs: Counter[tuple[bytes, bytes]] = Counter()
        for word, c in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += c
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        merged: Counter[tuple[bytes, ...]] = Counter()
        for word, c in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] += c
        words = merged
    return merges


def ours(text: str, n: int, **options) -> list[tuple[bytes, bytes]]:
    config = make_config("gpt2", vocab_size=None, num_merges=n).replace(
        tie_break="bytes", specials_in_text="split", **options
    )
    trainer = Trainer.from_texts(text, config)
    trainer.run()
    return [(display_to_bytes(r.left), display_to_bytes(r.right)) for r in trainer.records]


def test_the_handouts_example_gives_its_twelve_merges():
    text = "low low low low low lower lower widest widest widest newest newest newest newest newest newest"
    config = make_config("gpt2", vocab_size=None, num_merges=12).replace(
        tie_break="bytes", pretokenizer="whitespace", special_tokens=()
    )
    trainer = Trainer.from_texts(text, config)
    trainer.run()
    assert [f"{r.left} {r.right}" for r in trainer.records] == [
        "s t", "e st", "o w", "l ow", "w est", "n e", "ne west", "w i", "wi d", "wid est", "low e", "lowe r",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("sample", "chars", "merges"),
    [("english_tiny_shakespeare.txt", 40_000, 250), ("udhr_hi.txt", 20_000, 150), ("udhr_zh_hans.txt", 8_000, 150)],
)
def test_merges_equal_the_assignments_loop_on_a_sample_corpus(sample, chars, merges):
    text = read_sample(sample)[:chars]
    assert ours(text, merges) == cs336_merges(text, merges)


def test_documents_cut_at_the_special_token_are_never_merged_across_it():
    docs = ["the cat sat on the mat", "then the hat", "that cat", "thin mat on a thin hat"] * 5
    text = "<|endoftext|>".join(docs)
    assert ours(text, 40) == cs336_merges(text, 40)


def test_bytes_decide_where_subword_nmts_characters_do_not():
    # GPT-2's characters put a space (Ġ, U+0120) above every letter; its byte (0x20) is below them
    text = read_sample("english_tiny_shakespeare.txt")[:40_000]
    by_bytes = ours(text, 250)
    config = make_config("gpt2", vocab_size=None, num_merges=250).replace(tie_break="subword-nmt")
    trainer = Trainer.from_texts(text, config)
    trainer.run()
    by_chars = [(display_to_bytes(r.left), display_to_bytes(r.right)) for r in trainer.records]
    first = next(i for i, (a, b) in enumerate(zip(by_bytes, by_chars)) if a != b)
    assert first > 0 and by_bytes[:first] == cs336_merges(text, first)
    # where they part, one rule took a pair with a token that starts with a space
    assert any(t.startswith(b" ") for t in by_bytes[first] + by_chars[first]), (by_bytes[first], by_chars[first])


def test_the_cli_trains_with_the_rule_and_its_trace_keeps_it(tmp_path):
    import json

    from test_cli import run

    corpus = tmp_path / "udhr_hi_part.txt"
    corpus.write_text(read_sample("udhr_hi.txt")[:20_000], encoding="utf-8")
    out = tmp_path / "trained"
    code, _, err = run(
        "train", str(corpus), "--preset", "gpt2", "--merges", "150", "--tie-break", "bytes", "--out", str(out)
    )
    assert code == 0, err
    trace = json.loads((out / "trace.json").read_text(encoding="utf-8"))
    assert trace["config"]["tie_break"] == "bytes"
    merges = [(display_to_bytes(m["left"]), display_to_bytes(m["right"])) for m in trace["merges"]]
    assert merges == cs336_merges(corpus.read_text(encoding="utf-8"), 150)


def test_a_link_with_the_rule_trains_by_it_on_the_train_page():
    from test_links import TRAIN, open_link, url

    at = open_link(TRAIN, {"corpus": "udhr_en.txt", "preset": "gpt2", "tie": "bytes", "merges": "60", "step": "60"})
    assert not at.exception and at.session_state["config"].tie_break == "bytes" and url(at)["tie"] == "bytes"
    records = at.session_state["live"].trainer.records
    assert [(display_to_bytes(r.left), display_to_bytes(r.right)) for r in records] == cs336_merges(
        read_sample("udhr_en.txt"), 60
    )
