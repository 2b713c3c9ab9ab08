"""Training variants benchmark: SuperBPE against classical BPE on the same corpus and budget.

Classical BPE (gpt2 preset) and SuperBPE with the transition at 50% / 80% / 90% of the merges,
each trained on the corpus (wall time, ratio against classical); then what each tokenizer
makes of held-out text (Frankenstein): tokens, bytes per token, and how many of its tokens
are superwords (span a space inside).
"""

from __future__ import annotations

from _common import Printer, bench_main, best_of, fmt_s, read_corpus

from explorer import make_config, train
from explorer.analysis.text import superword_ids

MERGES = 5_000
SHARES = (0.5, 0.8, 0.9)
REPS = 3
HELD_OUT = "english_frankenstein.txt"


def bench_superbpe(out: Printer, text: str, held_out: str) -> None:
    cfg = make_config("gpt2", vocab_size=None, num_merges=MERGES, sequences="lines")
    held_bytes = len(held_out.encode("utf-8"))
    base, classical = best_of(REPS, train, text, cfg)
    tokens = len(classical.tokenizer().encode(held_out))
    out(
        f"classical           {fmt_s(base):>9}  held-out {tokens:,} tokens, {held_bytes / tokens:.2f} bytes/token  "
        f"[{MERGES:,} merges, best of {REPS}]"
    )
    for share in SHARES:
        transition = int(MERGES * share)
        dt, ours = best_of(REPS, train, text, cfg.replace(superbpe_transition=transition))
        tok = ours.tokenizer()
        n = len(tok.encode(held_out))
        out(
            f"SuperBPE t={transition:<6,} {fmt_s(dt):>9}  ratio {dt / base:.2f}  held-out {n:,} tokens "
            f"({(n - tokens) / tokens:+.1%}), {held_bytes / n:.2f} bytes/token, superword tokens {len(superword_ids(tok)):,}"
        )


def _run(out: Printer) -> None:
    text = read_corpus()
    out(f"corpus {len(text.encode('utf-8')):,} bytes (one sequence per line), gpt2 preset; held out: {HELD_OUT}")
    bench_superbpe(out, text, read_corpus(HELD_OUT))


def main() -> None:
    bench_main("variants", __doc__, _run)


if __name__ == "__main__":
    main()
