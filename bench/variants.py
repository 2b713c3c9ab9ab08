"""Training variants benchmark: SuperBPE and PickyBPE against classical BPE on the same corpus and budget.

Classical BPE (gpt2 preset) and SuperBPE with the transition at 50% / 80% / 90% of the merges,
each trained on the corpus (wall time, ratio against classical); then what each tokenizer
makes of held-out text (Frankenstein): tokens, bytes per token, and how many of its tokens
are superwords (span a space inside). Then PickyBPE at τ = 0.11 (the paper's IoS threshold
T = 0.9) and τ = 0.5 (T = 0.67) against classical BPE at the same vocabulary size (live tokens):
training time (ratio), the tokens it removed and the merges it made, the held-out tokens and
bytes per token, and encoding the held-out text cold (its encoder replays merges and removals
in the order learned; ratio against classical's).
"""

from __future__ import annotations

from _common import Printer, bench_main, best_cold, best_of, fmt_s, read_corpus

from explorer import make_config, train
from explorer.analysis.text import superword_ids
from explorer.bpe.picky import ios_threshold

MERGES = 5_000
SHARES = (0.5, 0.8, 0.9)
REPS = 3
HELD_OUT = "english_frankenstein.txt"
PICKY_VOCAB = 5_000  # live tokens: PickyBPE's removals make room for more merges
TAUS = (0.11, 0.5)


def _trained(text: str, held_out: str, cfg, *, encode_reps: int = 1):
    """(training seconds, trainer, its ids of the held-out text, cold encode seconds): one
    variant trained (best of REPS) and its encode of held-out text timed (best of encode_reps)."""
    dt, trainer = best_of(REPS, train, text, cfg)
    enc, ids = best_cold(trainer.tokenizer(), lambda tok: tok.encode(held_out), encode_reps)
    return dt, trainer, ids, enc


def _held_out(n: int, held_bytes: int, classical: int | None = None) -> str:
    """held-out 118,694 tokens (-8.2%), 3.55 bytes/token (the change against classical's count)."""
    change = "" if classical is None else f" ({(n - classical) / classical:+.1%})"
    return f"held-out {n:,} tokens{change}, {held_bytes / n:.2f} bytes/token"


def bench_superbpe(out: Printer, text: str, held_out: str) -> None:
    cfg = make_config("gpt2", vocab_size=None, num_merges=MERGES, sequences="lines")
    held_bytes = len(held_out.encode("utf-8"))
    base, _, ids, _ = _trained(text, held_out, cfg)
    tokens = len(ids)
    out(f"classical           {fmt_s(base):>9}  {_held_out(tokens, held_bytes)}  [{MERGES:,} merges, best of {REPS}]")
    for share in SHARES:
        transition = int(MERGES * share)
        dt, ours, ids, _ = _trained(text, held_out, cfg.replace(superbpe_transition=transition))
        out(
            f"SuperBPE t={transition:<6,} {fmt_s(dt):>9}  ratio {dt / base:.2f}  {_held_out(len(ids), held_bytes, tokens)}, "
            f"superword tokens {len(superword_ids(ours.tokenizer())):,}"
        )


def bench_picky(out: Printer, text: str, held_out: str) -> None:
    cfg = make_config("gpt2", vocab_size=PICKY_VOCAB, sequences="lines")
    held_bytes = len(held_out.encode("utf-8"))
    out(f"PickyBPE against classical BPE at the same vocabulary, {PICKY_VOCAB:,} live tokens")
    base, classical, ids, enc_base = _trained(text, held_out, cfg, encode_reps=REPS)
    tokens = len(ids)
    out(
        f"classical           {fmt_s(base):>9}  {_held_out(tokens, held_bytes)}, encode {fmt_s(enc_base)}  "
        f"[vocab {PICKY_VOCAB:,}: {len(classical.merges):,} merges, best of {REPS}]"
    )
    for tau in TAUS:
        dt, ours, ids, enc = _trained(text, held_out, cfg.replace(picky=tau), encode_reps=REPS)
        removed = len(ours.vocab) - ours.n_live  # removed and not made again
        out(
            f"PickyBPE τ={tau:<4g} T={ios_threshold(tau):.2f} {fmt_s(dt):>9}  ratio {dt / base:.2f}  removed "
            f"{removed:,} tokens ({len(ours.removals):,} removals, {len(ours.merges):,} merges)  "
            f"{_held_out(len(ids), held_bytes, tokens)}, encode {fmt_s(enc)} (ratio {enc / enc_base:.2f})"
        )


def _run(out: Printer) -> None:
    text = read_corpus()
    out(f"corpus {len(text.encode('utf-8')):,} bytes (one sequence per line), gpt2 preset; held out: {HELD_OUT}")
    held_out = read_corpus(HELD_OUT)
    bench_superbpe(out, text, held_out)
    bench_picky(out, text, held_out)


def main() -> None:
    bench_main("variants", __doc__, _run)


if __name__ == "__main__":
    main()
