"""Loading the bundled tables: our ``load_pretrained`` against tiktoken building an Encoding of the same files.

    python bench/tables.py            # about half a minute
    python bench/tables.py --write    # also store the printed lines in bench/RESULTS.md

For each bundled table (gpt2, cl100k_base, o200k_base), each load runs in a fresh Python process
with its imports done before the clock starts, best of RUNS:

- ours: ``load_pretrained(name)``, as a page or the CLI calls it (the files read and hash-checked,
  the tokenizer built);
- tiktoken: its own loaders on the same bundled files (``data_gym_to_mergeable_bpe_ranks`` on
  GPT-2's encoder.json + vocab.bpe, ``load_tiktoken_bpe`` on the ``.tiktoken``, decompressed to a
  temporary file before the clock starts; no cache) and ``tiktoken.Encoding`` with the table's
  pattern and special tokens.

The two alternate, ours then tiktoken's, so that a busy spell of the machine hits both. The
first process of each side also encodes a sample text (UDHR in Hindi and the 1.1 MB corpus) and
reports its ids' digest: the ids must be identical. ``table_lines()`` returns the lines, for
another script to print them too (``from tables import table_lines``, as bench/ui_latency.py can).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path

from _common import BENCH_DIR, CORPUS_NAME, ROOT, Printer, fmt_s, read_corpus, write_section, yes_no

RUNS = 3
TARGET_RATIO = 2.0  # ours / tiktoken, each table
SAMPLE = ("udhr_hi.txt", CORPUS_NAME)


def _sample_text() -> str:
    return "".join(read_corpus(name) for name in SAMPLE)


def _ids_digest(ids: list[int]) -> str:
    return hashlib.sha256(array("I", ids).tobytes()).hexdigest()


def _child(side: str, name: str, folder: str, with_ids: bool) -> dict:
    """One load in this (fresh) process; imports first, outside the timing."""
    from explorer import load_pretrained
    from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR
    from explorer.stages.pretokenizers import PATTERNS

    spec = PRETRAINED[name]
    if side == "ours":
        t0 = time.perf_counter()
        tok = load_pretrained(name)
        seconds = time.perf_counter() - t0
        encode = tok.encode
    else:
        import tiktoken
        import tiktoken.load

        t0 = time.perf_counter()
        if name == "gpt2":
            ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
                vocab_bpe_file=str(PRETRAINED_DIR / "gpt2" / "vocab.bpe"),
                encoder_json_file=str(PRETRAINED_DIR / "gpt2" / "encoder.json"),
            )
        else:
            ranks = tiktoken.load.load_tiktoken_bpe(str(Path(folder) / f"{name}.tiktoken"))
        enc = tiktoken.Encoding(
            f"bench-{name}", pat_str=PATTERNS[spec.pretokenizer], mergeable_ranks=ranks, special_tokens=spec.special_ids
        )
        seconds = time.perf_counter() - t0
        encode = enc.encode_ordinary
    out: dict = {"seconds": seconds}
    if with_ids:
        ids = encode(_sample_text())
        out |= {"tokens": len(ids), "ids": _ids_digest(ids)}
    return out


def _run(side: str, name: str, folder: str, with_ids: bool) -> dict:
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": "", "PYTHONPATH": str(ROOT)}  # "": tiktoken reads the file itself
    args = [
        sys.executable,
        str(BENCH_DIR / "tables.py"),
        "--child",
        side,
        name,
        folder,
        *(["--ids"] if with_ids else []),
    ]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{side} {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table_lines(names: list[str] | None = None, *, runs: int = RUNS) -> list[str]:
    """One line per table: our load and tiktoken's (best of ``runs`` fresh processes each), the
    ratio against TARGET_RATIO, and whether the ids are identical on the sample."""
    from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR

    sample_bytes = len(_sample_text().encode("utf-8"))
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        for name in names or list(PRETRAINED):
            if name != "gpt2":  # tiktoken reads a .tiktoken as it downloads it: decompressed
                (rel,) = PRETRAINED[name].files
                (Path(folder) / f"{name}.tiktoken").write_bytes(gzip.decompress((PRETRAINED_DIR / rel).read_bytes()))
            best = {"ours": float("inf"), "tiktoken": float("inf")}
            first: dict[str, dict] = {}
            for k in range(runs):
                for side in best:
                    got = _run(side, name, folder, with_ids=k == 0)
                    best[side] = min(best[side], got["seconds"])
                    first.setdefault(side, got)
            ratio = best["ours"] / best["tiktoken"]
            same = (first["ours"]["tokens"], first["ours"]["ids"]) == (
                first["tiktoken"]["tokens"],
                first["tiktoken"]["ids"],
            )
            met = "met" if ratio <= TARGET_RATIO else "NOT met"
            lines.append(
                f"table {name:<12} ours {fmt_s(best['ours'])}  tiktoken {fmt_s(best['tiktoken'])}  "
                f"ratio {ratio:.2f}  (target <= {TARGET_RATIO}: {met})  "
                f"ids identical on {sample_bytes:,} bytes: {yes_no(same)}"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    ap.add_argument("--runs", type=int, default=RUNS, help=f"fresh processes per side and table (default {RUNS})")
    ap.add_argument("--child", nargs=3, metavar=("SIDE", "NAME", "FOLDER"), help=argparse.SUPPRESS)
    ap.add_argument("--ids", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(*args.child, with_ids=args.ids)))
        return

    out = Printer()
    out(f"load in a fresh process (imports excluded), best of {args.runs}; ids on {' + '.join(SAMPLE)}")
    for line in table_lines(runs=args.runs):
        out(line)
    if args.write:
        write_section("tables", "bench/tables.py", out.lines)


if __name__ == "__main__":
    main()
