"""Budget benchmark: what the server's budget for a session does to the probes that used to take it.

1. A 19 MiB upload of one character, stepped through as a sample: the server's CPU time (the
   training thread's) of each of the first steps on the sample the app now cuts to fit the step
   work (explorer.bpe.budget.fitting_sample), against the same steps on the 4 MiB leading sample it
   stepped through before, in the same run; ratio.
2. Byte-level BPE without pre-tokenization "until no pair is left", pairs met once merged too, on
   Tiny Shakespeare and the Python sample (the link that took 5 GiB): merges made before the
   session's budget stopped it, the trainer's footprint, the process's resident memory it added,
   the time to the refusal; then the same training without a budget for as many merges again,
   stopped by the bench, and the memory that took.
"""

from __future__ import annotations

import gc
import time

from _common import Printer, bench_main, read_corpus

from explorer import Trainer, corpus_config
from explorer.bpe.budget import BudgetError, fitting_sample, rss_bytes
from explorer.formats.corpora import leading_sample
from explorer.stages.pipeline import count_words
from explorer.ui import server

MIB = 2**20
STEPS = 5


def step_times(words, config) -> list[float]:
    """The CPU seconds (this thread's) of each of the first ``STEPS`` merges."""
    trainer = Trainer(words, config, top_k=50, full_records=2000)
    out = []
    for _ in range(STEPS):
        t0 = time.thread_time()
        trainer.advance(1)
        out.append(time.thread_time() - t0)
    return out


def one_character(out: Printer) -> None:
    config = corpus_config("gpt2")
    text = "a" * (19 * MIB)
    budget = server.session_budget()
    fitted = fitting_sample(
        config,
        budget,
        limit_bytes=server.step_limit(),
        words_of=lambda size: count_words(tuple(leading_sample([text], size)), config),
    )
    before = count_words(tuple(leading_sample([text], server.step_limit())), config)
    ours, old = step_times(fitted, config), step_times(before, config)
    size = sum(len(w) for w in fitted)
    out(
        f"19 MiB of 'a', gpt2 preset: sample {size:,} characters (step work at most {budget.step_work:,}); before: 4 MiB"
    )
    for i, (a, b) in enumerate(zip(ours, old), 1):
        out(f"  step {i}: {a:.3f} s CPU  before {b:.3f} s  ratio {a / b:.2f}")
    out(f"  slowest step {max(ours):.3f} s CPU  before {max(old):.3f} s  ratio {max(ours) / max(old):.2f}")


def probe(out: Printer) -> None:
    config = corpus_config("bytes").replace(num_merges=200_000, vocab_size=None, min_frequency=0)
    texts = (read_corpus(), read_corpus("python_stdlib_sample.txt"))
    words = count_words(texts, config)
    budget = server.session_budget()
    gc.collect()
    start = rss_bytes() or 0
    t0 = time.perf_counter()
    held = Trainer(words, config, top_k=50, full_records=2000)
    held.budget = budget
    try:
        held.advance(200_000)
    except BudgetError:
        pass
    seconds = time.perf_counter() - t0
    made = len(held.records)
    grown = (rss_bytes() or 0) - start
    out(
        f"bytes, until no pair is left, min count 0, TS + Python sample: stopped after {made:,} merges in "
        f"{seconds:.1f} s, footprint {held.footprint / MIB:,.0f} MiB (budget {budget.memory_bytes // MIB:,}), "
        f"resident +{grown / MIB:,.0f} MiB"
    )
    del held
    gc.collect()
    start = rss_bytes() or 0
    free = Trainer(words, config, top_k=50, full_records=2000)
    t0 = time.perf_counter()
    free.advance(made * 7 // 5)
    out(
        f"  without a budget, {made * 7 // 5:,} merges (40% more): resident +{((rss_bytes() or 0) - start) / MIB:,.0f} MiB "
        f"in {time.perf_counter() - t0:.1f} s, longest token {max(map(len, free.vocab)):,} characters"
    )


def _run(out: Printer) -> None:
    one_character(out)
    probe(out)


def main() -> None:
    bench_main("budget", __doc__, _run)


if __name__ == "__main__":
    main()
