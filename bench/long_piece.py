"""Encoding one long piece: 1,000,000 characters that pre-tokenization leaves whole, against tiktoken.

    python bench/long_piece.py            # about half a minute
    python bench/long_piece.py --write    # also store the printed lines in bench/RESULTS.md

The texts are "x" x 10^6 and 10^6 random lowercase letters (seeded), each one piece under
o200k_base's and cl100k_base's regexes. Ours: ``Tokenizer.encode`` of the bundled table (a fresh
copy each time, so no piece cache helps), whose long piece goes to ``merging.rank_sweeps``;
beside it, the heap over a linked list that long pieces took before (``merging.chain_merges``,
the same ids). tiktoken: ``encode_ordinary`` of its own ``Encoding`` of the same table. Best of
REPS, interleaved; the ids are compared.
"""

from __future__ import annotations

import base64
import gzip
import random
from collections import deque

from _common import Printer, bench_main, fmt_s, timed, yes_no

REPS = 3
SIZE = 1_000_000
TARGET_RATIO = 3.0  # ours / tiktoken


def _tiktoken(name: str):
    import tiktoken

    from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR
    from explorer.stages.pretokenizers import PATTERNS

    spec = PRETRAINED[name]
    (rel,) = spec.files
    data = gzip.decompress((PRETRAINED_DIR / rel).read_bytes())
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding(name, pat_str=PATTERNS[spec.pretokenizer], mergeable_ranks=ranks, special_tokens={})


def _heap(tok, text: str) -> list[int]:
    """The long-piece path of before: every pair in one heap over a linked list."""
    from explorer.bpe.merging import Chain, chain_merges

    chain = Chain(tok.initial_ids(text))
    deque(chain_merges(chain, tok._pair), maxlen=0)
    return chain.walk()


def body(out: Printer) -> None:
    from explorer import load_pretrained

    rng = random.Random(0)
    texts = {
        "x" * SIZE: f'"x" x {SIZE:,}',
        "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=SIZE)): f"{SIZE:,} random letters",
    }
    out(f"one piece of {SIZE:,} characters, best of {REPS}, interleaved; ours on a fresh copy of the table each time")
    for name in ("o200k_base", "cl100k_base"):
        tok, enc = load_pretrained(name), _tiktoken(name)
        for text, label in texts.items():
            assert len(list(tok.piece_texts(text))) == 1, "the text must be one piece"
            ours = theirs = heap = float("inf")
            ids = ref = old = None
            for _ in range(REPS):
                fresh = tok.truncate(tok.num_merges)
                dt, ids = timed(fresh.encode, text)
                ours = min(ours, dt)
                dt, ref = timed(enc.encode_ordinary, text)
                theirs = min(theirs, dt)
            heap, old = timed(_heap, tok, text)
            ratio = ours / theirs
            met = "met" if ratio <= TARGET_RATIO else "NOT met"
            out(
                f"{name:<12} {label:<22} ours {fmt_s(ours):>9}  tiktoken {fmt_s(theirs):>9}  ratio {ratio:5.2f} "
                f"(target <= {TARGET_RATIO}: {met}); the heap of before {fmt_s(heap)} (ratio {heap / theirs:.1f}); "
                f"{len(ref or ()):,} tokens, ids identical: {yes_no(ids == ref == old)}"
            )


if __name__ == "__main__":
    bench_main("long_piece", __doc__, body)
