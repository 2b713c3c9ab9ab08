"""Compare benchmark: the held-out replay curve against encoding at truncation points, and the
Compare page's full comparison.

    python bench/compare.py            # about a minute on 2 cores
    python bench/compare.py --write    # also store the printed lines in bench/RESULTS.md

1. A tokenizer trained with the gpt2 preset (5,000 merges, ``corpus_config("gpt2", merges=5000)``)
   on english_frankenstein.txt (training time printed on its own line, not measured against
   anything) replays english_tiny_shakespeare.txt (1.1 MB, never seen in training):
   ``replay(tok, piece_counts(tok, text))`` gives the token count after every k = 0..5,000 merges
   in one pass (5,001 counts; best of REPLAY_REPS runs, one before the encodes and the others after,
   so a slow spell of the machine does not decide it). Against it, in the same run, encoding the
   text at 50 evenly spaced truncation points (``curve_points(5000, 50)``):
   ``len(tok.truncate(k).encode(text))`` with a fresh truncated tokenizer for each k (cold: its
   piece cache is empty, which is what a user asking for that point pays; the truncate is timed
   too, and its share is printed). The ratio is encodes time / replay time (target >= 10), and
   the counts must agree at all 50 points.
2. ``compare_corpora`` as the Compare page calls it, for udhr_en, udhr_hi, udhr_ko and
   english_frankenstein: the gpt2 preset at 1,000 merges (each corpus trained whole and on its
   first 90%, held-out replay, encodes, the 4 x 4 cross-evaluation), cold (a fresh ``Memo``) and
   warm (the same ``Memo`` again); then the same corpora under the bundled cl100k_base (its load
   time printed apart, not in the comparison's time). No reference implementation exists for
   this part, so there is no ratio.
3. The process's peak RSS at the end.
"""

from __future__ import annotations

import argparse
import gc
import time

from _common import SAMPLES, Printer, fmt_s, peak_rss_mb, read_corpus, timed, write_section, yes_no

MERGES = 5_000
POINTS = 50
TRAIN_CORPUS = "english_frankenstein.txt"
HELDOUT_CORPUS = "english_tiny_shakespeare.txt"
REPLAY_REPS = 3
TARGET_RATIO = 10.0
COMPARE_CORPORA = ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt", "english_frankenstein.txt")
COMPARE_MERGES = 1_000
PRETRAINED_NAME = "cl100k_base"


def nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def train_tokenizer(out: Printer):
    from explorer import PRESETS, Trainer, corpus_config, count_words

    text = read_corpus(TRAIN_CORPUS)
    cfg = corpus_config("gpt2", merges=MERGES)
    seconds, trainer = timed(lambda: Trainer(count_words((text,), cfg), cfg, encoding=PRESETS["gpt2"].encoding).run())
    tok = trainer.tokenizer()
    out(f"compare train   gpt2 preset, {MERGES:,} merges on {TRAIN_CORPUS} ({nbytes(text):,} bytes): "
        f"{tok.num_merges:,} merges, vocab {len(tok.vocab):,}, stop: {trainer.stop_reason}; trained in {fmt_s(seconds)} "
        f"(not part of the measurement)")
    return tok


def timed_replay(tok, text: str) -> tuple[float, list[int]]:
    from explorer.evaluate import piece_counts, replay

    gc.collect()
    return timed(lambda: replay(tok, piece_counts(tok, text)))


def bench_replay(out: Printer, tok) -> None:
    from explorer.evaluate import curve_points

    text = read_corpus(HELDOUT_CORPUS)
    points = curve_points(tok.num_merges, POINTS)

    best, counts = timed_replay(tok, text)  # one replay before the encodes, the rest after

    encodes = truncating = 0.0
    encoded: dict[int, int] = {}
    for k in points:
        gc.collect()
        t0 = time.perf_counter()
        truncated = tok.truncate(k)
        t1 = time.perf_counter()
        encoded[k] = len(truncated.encode(text))
        t2 = time.perf_counter()
        truncating += t1 - t0
        encodes += t2 - t0
        del truncated

    for _ in range(REPLAY_REPS - 1):
        dt, again = timed_replay(tok, text)
        best = min(best, dt)
        if again != counts:
            out("    replay gave different counts on a repeated run")

    same = len(counts) == tok.num_merges + 1 and all(counts[k] == n for k, n in encoded.items())
    ratio = encodes / best
    out(f"compare replay  {tok.num_merges:,} merges on {HELDOUT_CORPUS} ({nbytes(text):,} bytes): "
        f"replay {fmt_s(best)}  vs {len(points)} truncated encodes {fmt_s(encodes)}  ratio {ratio:.1f}  "
        f"counts identical at {len(points)} points: {yes_no(same)}  "
        f"(target >= {TARGET_RATIO:g}: {'met' if ratio >= TARGET_RATIO else 'NOT met'})")
    out(f"    replay: piece_counts + replay, {len(counts):,} counts (k = 0..{tok.num_merges:,}), best of {REPLAY_REPS} "
        f"(1 before the encodes, {REPLAY_REPS - 1} after); encodes: len(tok.truncate(k).encode(text)) once each at "
        f"k = {points[0]}, {points[1]}, ..., {points[-1]}, a fresh tokenizer each (empty piece cache), "
        f"truncate {fmt_s(truncating)} of it; tokens {counts[0]:,} at k=0 -> {counts[-1]:,} at k={tok.num_merges:,}")
    if not same:
        if len(counts) != tok.num_merges + 1:
            out(f"    replay gave {len(counts):,} counts, expected {tok.num_merges + 1:,}")
        bad = [(k, counts[k] if k < len(counts) else None, n) for k, n in encoded.items()
               if k >= len(counts) or counts[k] != n]
        out(f"    differ at {len(bad)} points, first: " +
            ", ".join(f"k={k} replay {r} encode {n}" for k, r, n in bad[:5]))


def bench_compare_page(out: Printer) -> None:
    from explorer import PRESETS, corpus_config, load_pretrained
    from explorer.compare import Memo, compare_corpora

    texts = {name: read_corpus(name) for name in COMPARE_CORPORA}
    total = sum(nbytes(t) for t in texts.values())
    label = f"{len(texts)} corpora ({', '.join(n.removesuffix('.txt') for n in texts)}; {total:,} bytes)"
    no_ref = "(no reference implementation: no ratio)"

    cfg = corpus_config("gpt2", merges=COMPARE_MERGES)
    memo = Memo()

    def trained():
        return compare_corpora(texts, config=cfg, encoding=PRESETS["gpt2"].encoding, memo=memo)

    gc.collect()
    cold, result = timed(trained)
    gc.collect()
    warm, _ = timed(trained)
    merges = ", ".join(f"{run.tokenizer.num_merges:,}" for run in result.runs.values())
    out(f"compare page    gpt2 preset {COMPARE_MERGES:,} merges, {label}: cold {fmt_s(cold)} (fresh Memo, "
        f"{len(memo)} entries after)  warm {fmt_s(warm)} (same Memo)  {no_ref}")
    out(f"    each corpus trained whole and on its first 90% (merges made: {merges}), held-out replay, encode, "
        f"{len(result.cross)} cross-evaluations")

    load_s, pre = timed(load_pretrained, PRETRAINED_NAME)
    memo = Memo()

    def pretrained():
        return compare_corpora(texts, pretrained=(PRETRAINED_NAME, pre), memo=memo)

    gc.collect()
    cold, result = timed(pretrained)
    gc.collect()
    warm, _ = timed(pretrained)
    out(f"compare page    pretrained {PRETRAINED_NAME} ({pre.num_merges:,} merges), {label}: cold {fmt_s(cold)} "
        f"(fresh Memo and piece cache)  warm {fmt_s(warm)} (same Memo)  {no_ref}; load {fmt_s(load_s)} "
        f"(once per process, not included)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    args = ap.parse_args()

    assert all((SAMPLES / n).exists() for n in (TRAIN_CORPUS, HELDOUT_CORPUS, *COMPARE_CORPORA))
    out = Printer()
    t0 = time.perf_counter()
    tok = train_tokenizer(out)
    bench_replay(out, tok)
    bench_compare_page(out)
    out(f"compare peak RSS {peak_rss_mb():.0f} MB (whole process, end of run); total run {fmt_s(time.perf_counter() - t0)}")
    if args.write:
        write_section("compare", "Compare (bench/compare.py)", out.lines)


if __name__ == "__main__":
    main()
