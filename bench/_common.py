"""Shared helpers for the benchmark scripts: repo paths, the corpus, timing, peak RSS and
writing a script's section of bench/RESULTS.md.

Everything is located relative to this file, so the scripts run from any directory.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CORPUS_NAME = "english_tiny_shakespeare.txt"
SAMPLES = ROOT / "sample_corpora"
RESULTS = BENCH_DIR / "RESULTS.md"

HEADER = """\
# Benchmarks

Numbers measured by the scripts in `bench/`, on `sample_corpora/english_tiny_shakespeare.txt`
(1.1 MB). Absolute times and memory depend on the machine; the ratios against the reference
implementations (HF `tokenizers`, `tiktoken`) measured in the same run are what to compare.

- `bench/train.py`: training with the GPT-2 preset (full byte alphabet, HF tie-break, no special
  tokens) at vocab 1,000 / 5,000 / 20,000 against HF `BpeTrainer` (wall time, ratio, whether the
  merge lists are identical, peak RSS of each of our runs in a fresh process); and the seed
  notebooks' recount-everything loops (seed 002 over the whole byte sequence, seed 000 over
  pre-tokenized words) per merge against ours.
- `bench/ui_latency.py`: the app in headless Chromium at 1280x720, each figure beside a reference
  measured in the same run (a one-button Streamlit app's first page load and click latency):
  the first visit of each page after a server start, Step (click to status, p95 against the
  one-button click), the step slider at 1,000 merges, a link to step 500 in a new session, Pause
  while playing, a cold Compare of three UDHR texts, and bench/tables.py's lines.
- `bench/tables.py`: loading the bundled GPT-2, cl100k_base and o200k_base tables in a fresh
  process against tiktoken building an `Encoding` from the same files (ratio, ids identical).
- `bench/encode.py`: encoding the same text with a 5,000-token tokenizer trained on it (GPT-2
  and cl100k patterns) against `tiktoken`'s `encode_ordinary` with the same ranks, cold (fresh
  tokenizer, empty piece cache) and warm (second call), checking the ids are identical; then
  the bundled GPT-2, cl100k_base and o200k_base tables against tiktoken's own `Encoding` of the
  same files, on this corpus and on the UDHR translations plus the mixed emoji/multilingual
  sample (non-Latin text).
- `bench/compare.py`: the held-out compression curve of a 5,000-merge tokenizer (trained on
  Frankenstein) replayed on this corpus in one pass, against encoding it at 50 truncation
  points, checking the counts agree; and the Compare page's full comparison of 4 corpora, cold
  and warm, trained and with cl100k_base.
- `bench/load.py`: a classroom on one server: 30 sessions driven at the protocol level
  (Streamlit's own websocket messages), each with its own ~1 MB corpus (this one plus another
  sample) and preset, stepping once a second for 60 s, then 3 bursts where all 30 press Step
  within the same few milliseconds, then 27 running to 2,000 merges while 3 keep stepping;
  3 headless Chromium contexts step alongside. Step latency (p50/p95/max, steady, burst and
  beside the runs), errors, the server's peak RSS, and every session's merge history against
  the engine alone (no cross-session leakage). `--proxy --servers 2`: the same through
  `python -m explorer serve` (two app processes behind haproxy); the section below is that run.
- `bench/interop.py`: GPT-2 as an HF `tokenizer.json` imported by us and by `tokenizers`
  (`from_str`), and exported by each; cl100k_base as `.tiktoken` + JSON imported by us (merges
  recovered from the ranks) and by `tiktoken` (`load_tiktoken_bpe` + `Encoding`); ids compared
  on the corpus.
- `bench/parity.py`: parity-aware training (explorer.bpe.parity) of the 8 UDHR translations (split
  by article) and of three large samples as three "languages", with each balance (classical,
  parity, parity-window, parity-hybrid), against classical training of the same texts joined
  (ratio; classical checked to make the same merges), and against a recount-everything loop
  written from the paper's description (per merge, checking the first merges agree).
- `bench/variants.py`: SuperBPE (transition at 50% / 80% / 90% of 5,000 merges) against classical
  BPE on the same corpus (training time ratio), and the tokens each makes of held-out text
  (Frankenstein), with the number of superword tokens; then PickyBPE (τ = 0.11, the paper's
  T = 0.9, and τ = 0.5) against classical BPE at the same vocabulary of 5,000 live tokens
  (training time ratio, tokens removed, merges made, held-out tokens and bytes per token, and the
  held-out text's cold encode against classical's).
- `bench/scaffold.py`: the scaffold-token analysis (explorer.analysis.scaffold: every merge the
  encoding makes counted, one pass over the distinct pieces) of this corpus under GPT-2, cl100k_base
  and o200k_base, against our own cold encode of it (ratio; token counts checked to agree).
- `bench/health.py`: the token health scan (explorer.analysis.health) of every token of GPT-2,
  cl100k_base and o200k_base, against tiktoken re-encoding every token of its own Encoding of the
  same files (`_encode_bytes` of each token's bytes; ratio; the unreachable ids checked to agree).
- `bench/shortest.py`: the shortest segmentation (explorer.analysis.shortest: each piece in the
  fewest tokens of the vocabulary) of this corpus under GPT-2, cl100k_base, o200k_base and a
  2,000-merge character-level tokenizer trained on it, against our own cold encode of it (ratio),
  with BPE's tokens, the fewest, the gap and the pieces that differ.
- `bench/budget.py`: what a session's budget does to the probes that used to take the server: the
  server's CPU time of the first steps through a 19 MiB upload of one character, on the sample
  cut to the step work, against the 4 MiB sample of before; and byte-level BPE "until no pair is
  left" (min count 0) on this corpus and the Python sample: where the budget stops it, and the
  memory the same training takes without one.
- `bench/links.py`: opening a link at step 500 / 2,000 on this corpus (gpt2 preset): the first
  session trains, each later one copies the trainer shared by every session asking for the same
  training, against HF `BpeTrainer` making the same merges; and the store keeping an upload of 1
  and 20 MiB and reading it back, against a plain file write and read.

Run from the repository root:

```
python bench/train.py --write     # --quick: vocab 1,000 only, for a smoke test
python bench/encode.py --write
python bench/ui_latency.py --write   # needs Debian's chromium; ~5 minutes
python bench/tables.py --write
python bench/compare.py --write
python bench/load.py --proxy --servers 2 --write   # needs chromium and haproxy; ~3 minutes
python bench/interop.py --write
python bench/links.py --write
python bench/parity.py --write
python bench/variants.py --write
python bench/scaffold.py --write
python bench/health.py --write
python bench/shortest.py --write
python bench/budget.py --write
```

`--write` replaces that script's section below with the lines it printed.
"""


def read_corpus(name: str = CORPUS_NAME) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def peak_rss_mb() -> float:
    """This process's peak resident set size so far, in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KB, macOS bytes
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def timed(fn, *args, **kwargs):
    """(seconds, result) of one call."""
    t0 = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - t0, result


def best_of(n: int, fn, *args, **kwargs):
    """(min seconds, last result) over n calls."""
    best, result = float("inf"), None
    for _ in range(n):
        dt, result = timed(fn, *args, **kwargs)
        best = min(best, dt)
    return best, result


def best_cold(tok, run, reps: int):
    """(min seconds, last result) over ``reps`` calls of ``run(fresh)``, each ``fresh`` a copy of
    the tokenizer with its caches empty, built outside the timing."""
    best, result = float("inf"), None
    for _ in range(reps):
        fresh = tok.truncate(tok.num_merges)
        dt, result = timed(run, fresh)
        best = min(best, dt)
    return best, result


def yes_no(flag: bool) -> str:
    return "yes" if flag else "NO"


def fmt_s(seconds: float) -> str:
    """Seconds with about three significant digits."""
    if seconds >= 10:
        return f"{seconds:.1f} s"
    if seconds >= 0.1:
        return f"{seconds:.2f} s"
    if seconds >= 0.001:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


class Printer:
    """Prints lines and keeps them, so --write can store exactly what was printed."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)


def environment() -> str:
    return (
        f"{datetime.date.today().isoformat()}, Python {platform.python_version()}, "
        f"{platform.machine() or 'unknown machine'}, {os.cpu_count()} CPUs"
    )


def bench_main(section: str, doc: str, body: Callable[[Printer], None]) -> None:
    """A bench script's ``main``: ``body`` prints its lines; ``--write`` stores them as the
    script's section of RESULTS.md."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    args = ap.parse_args()
    out = Printer()
    body(out)
    if args.write:
        write_section(section, f"bench/{section}.py", out.lines)


def write_section(name: str, title: str, lines: list[str], path: Path = RESULTS) -> None:
    """Replace (or append) the section between ``<!-- name:begin -->`` and ``<!-- name:end -->``."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    body = "\n".join([begin, f"## {title}", "", f"Measured {environment()}.", "", "```", *lines, "```", end])
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: body, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"wrote the {name} section of {path.name}")
