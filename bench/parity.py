"""Parity-aware training benchmark: each balance against classical training on the same corpora,
and against a recount-everything loop written from the paper's description.

Two sets of "languages", each with a training and a development text:
- the 8 bundled UDHR translations, split by article (``explorer.formats.parallel``);
- three large samples (Shakespeare, WikiText, Python source), the last tenth of each as its
  development text: the same code on ~1.5 MB.

For each: classical ``Trainer`` on the training texts joined (the yardstick), then
``ParityTrainer`` with each balance (wall time, ratio against the yardstick; classical checked
to make the yardstick's merges). Then the loop: at every merge it re-segments the development
texts and recounts the worst language's pairs (what the paper describes, without the
incremental bookkeeping), per merge against ours.
"""

from __future__ import annotations

from collections import Counter

from _common import Printer, bench_main, best_of, fmt_s, read_corpus, timed, yes_no

from explorer import Balance, ParityTrainer, Trainer, make_config
from explorer.formats.parallel import UDHR_LANGUAGES, udhr_split
from explorer.stages.pipeline import count_words

MERGES = 1_000
LOOP_MERGES = 8
REPS = 3
BALANCES = [
    Balance("classical"),
    Balance("parity"),
    Balance("parity-window"),
    Balance("parity-hybrid", global_merges=200),
]
BIG = ["english_tiny_shakespeare.txt", "english_wikitext2_excerpt.txt", "python_stdlib_sample.txt"]


def _udhr() -> tuple[list[str], list[str], list[str]]:
    splits = [udhr_split(code) for code in UDHR_LANGUAGES]
    return list(UDHR_LANGUAGES), [s.train for s in splits], [s.dev for s in splits]


def _big() -> tuple[list[str], list[str], list[str]]:
    trains, devs = [], []
    for name in BIG:
        lines = read_corpus(name).split("\n")
        cut = len(lines) * 9 // 10
        trains.append("\n".join(lines[:cut]))
        devs.append("\n".join(lines[cut:]))
    return BIG, trains, devs


def bench_balances(out: Printer, label: str, names, trains, devs) -> None:
    cfg = make_config("gpt2", vocab_size=None, num_merges=MERGES, tie_break="hf")
    size = sum(len(t.encode("utf-8")) for t in trains)
    dev_size = sum(len(t.encode("utf-8")) for t in devs)
    out(
        f"{label}: {len(names)} languages, training {size:,} bytes, development {dev_size:,} bytes; gpt2 preset, hf ties"
    )
    base, classical = best_of(REPS, lambda: Trainer.from_texts(trains, cfg).run())
    out(f"  classical Trainer, texts joined   {fmt_s(base):>9}  [{MERGES:,} merges, best of {REPS}]")
    for balance in BALANCES:
        dt, ours = best_of(REPS, lambda b=balance: ParityTrainer(trains, devs, cfg, balance=b, names=names).run())
        extra = (
            f"  same merges as the Trainer: {yes_no(ours.merges == classical.merges)}"
            if balance.mode == "classical"
            else ""
        )
        served = Counter(r.served for r in ours.records if r.served is not None)
        share = f"  languages served: {len(served)} of {len(names)}" if served else ""
        label_b = balance.mode + (f" ({balance.global_merges} global)" if balance.global_merges else "")
        out(f"  {label_b:<32} {fmt_s(dt):>9}  ratio {dt / base:.2f}{extra}{share}")


def _segment(word: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def recount_loop(trains, devs, cfg, merges: int) -> list[tuple[str, str]]:
    """Parity-aware BPE as the paper describes it, recounting everything at every merge: the
    development texts' lengths, then every pair of the worst language (ties: the smallest pair
    by HF's ids, as ours with ``tie_break="hf"``)."""
    probe = Trainer.from_texts(trains, cfg)  # only its alphabet and word splits: the same input
    rank = {s: i for i, s in enumerate(probe.vocab)}
    langs = [{tuple(probe_symbols(w, cfg)): f for w, f in count_words(t, cfg).items()} for t in trains]
    dev = [{tuple(probe_symbols(w, cfg)): f for w, f in count_words(d, cfg).items()} for d in devs]
    made = []
    for _ in range(merges):
        lengths = [sum(len(w) * f for w, f in d.items()) for d in dev]
        worst = max(range(len(lengths)), key=lambda i: (lengths[i], -i))
        counts: Counter = Counter()
        for w, f in langs[worst].items():
            for p in zip(w, w[1:]):
                counts[p] += f
        top = max(counts.values())
        pair = min((p for p, c in counts.items() if c == top), key=lambda p: (rank[p[0]], rank[p[1]]))
        rank.setdefault(pair[0] + pair[1], len(rank))
        made.append(pair)
        langs = [{_segment(w, pair): f for w, f in lang.items()} for lang in langs]
        dev = [{_segment(w, pair): f for w, f in d.items()} for d in dev]
    return made


def probe_symbols(word: str, cfg) -> list[str]:
    from explorer.bpe.trainer import symbol_sequences
    from explorer.stages.units import BYTE_TO_UNICODE

    seqs, _ = symbol_sequences([word], cfg)
    return [BYTE_TO_UNICODE[b] for b in seqs[0]] if cfg.unit == "byte" else seqs[0]


def bench_loop(out: Printer, names, trains, devs) -> None:
    cfg = make_config("gpt2", vocab_size=None, num_merges=MERGES, tie_break="hf")
    dt_loop, loop = timed(recount_loop, trains, devs, cfg, LOOP_MERGES)
    dt_ours, ours = best_of(
        REPS, lambda: ParityTrainer(trains, devs, cfg, balance=Balance("parity"), names=names).run()
    )
    setup, _ = best_of(REPS, lambda: ParityTrainer(trains, devs, cfg.replace(num_merges=0), names=names).run())
    same = [(r.left, r.right) for r in ours.records[:LOOP_MERGES]] == loop
    per_loop = dt_loop / LOOP_MERGES
    per_ours = (dt_ours - setup) / len(ours.records)
    out(
        f"recount loop (paper's description: re-segment every text, recount the worst language's pairs): "
        f"{fmt_s(per_loop)}/merge [{LOOP_MERGES} merges]"
    )
    out(
        f"ours parity: {fmt_s(per_ours)}/merge over {len(ours.records):,} merges (+{fmt_s(setup)} setup), "
        f"same first {LOOP_MERGES} merges as the loop: {yes_no(same)}; speed-up {per_loop / per_ours:.0f}x per merge"
    )


def _run(out: Printer) -> None:
    udhr = _udhr()
    bench_balances(out, "UDHR translations", *udhr)
    bench_loop(out, *udhr)
    big = _big()
    bench_balances(out, "large samples", *big)
    bench_loop(out, *big)


def main() -> None:
    bench_main("parity", __doc__, _run)


if __name__ == "__main__":
    main()
