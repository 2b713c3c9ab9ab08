"""Token health benchmark: the scan of every token of a bundled table against tiktoken
re-encoding every token of the same table.

    python bench/health.py            # gpt2, cl100k_base, o200k_base (~30 s)
    python bench/health.py --write    # also store the printed lines in bench/RESULTS.md

Ours: ``explorer.analysis.health.scan`` of the loaded table (the load is not timed), which takes
each token's bytes, decodes them and encodes its own text (UTF-8 through the pre-tokenizer,
parts of a character by tiktoken's ``_encode_bytes`` rule) and compares. tiktoken: its own
Encoding of the same files (bench/encode.py's ``tiktoken_encoding``), for every id that is not
special, ``_encode_bytes(decode_single_token_bytes(id)) == [id]``: the same re-encoding, in Rust.
Best of REPS, interleaved; the unreachable ids are checked to be the same.
"""

from __future__ import annotations

import gc
import tempfile
from pathlib import Path

from _common import Printer, bench_main, timed
from encode import tiktoken_encoding

REPS = 5


def tiktoken_scan(enc) -> list[int]:
    """The ids that tiktoken does not give back when encoding their bytes."""
    special = set(enc._special_tokens.values())
    out = []
    for i in range(enc.n_vocab):
        if i in special:
            continue
        try:
            data = enc.decode_single_token_bytes(i)
        except KeyError:  # a gap before the special tokens (cl100k_base)
            continue
        if enc._encode_bytes(data) != [i]:
            out.append(i)
    return out


def bench_table(out: Printer, name: str, folder: Path) -> float:
    """One table's line; returns the ratio (ours over tiktoken)."""
    from explorer import load_pretrained
    from explorer.analysis.health import scan

    tok = load_pretrained(name)
    enc = tiktoken_encoding(name, folder)
    ours = theirs = float("inf")
    report = unreachable = None
    for _ in range(REPS):
        gc.collect()
        dt, report = timed(scan, tok)
        ours = min(ours, dt)
        gc.collect()
        dt, unreachable = timed(tiktoken_scan, enc)
        theirs = min(theirs, dt)
    assert report is not None and unreachable is not None
    same = list(report.unreachable) == unreachable
    out(
        f"scan {name:<11} {report.tokens:>7,} tokens: ours {ours:.2f} s, tiktoken {theirs:.2f} s, "
        f"ratio {ours / theirs:.2f}; unreachable {len(report.unreachable)}, "
        f"partial UTF-8 {len(report.partial_utf8):,}; same unreachable ids: {'yes' if same else 'NO'}"
    )
    return ours / theirs


def _run(out: Printer) -> None:
    out(f"best of {REPS}, interleaved; the table loaded once, before timing")
    with tempfile.TemporaryDirectory() as folder:
        for name in ("gpt2", "cl100k_base", "o200k_base"):
            bench_table(out, name, Path(folder))


def main() -> None:
    bench_main("health", __doc__, _run)


if __name__ == "__main__":
    main()
