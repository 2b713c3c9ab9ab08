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
3. The Compare page's default press, as a class meets it: udhr_en, udhr_hi and udhr_ko, the gpt2
   preset sized for each corpus (``corpus_config("gpt2", merges=1000)``), in a fresh process each
   time (empty ``Memo``, empty piece caches, nothing counted yet), from the press until every panel
   is computed: ``compare_corpora`` as ``compare_view.run`` calls it, then the languages panel's
   rows (``compare_view._language_rows``): the tokenizer trained on udhr_en and the three bundled
   tables over the eight UDHR translations. The tables are loaded before the clock starts (the
   server loads them at start; their load times are printed apart). Measured twice: with the
   tables' language counts made inside the press, and with them made ahead by ``warm_languages``
   (what a server that warms them at start gives). Best and median of PRESS_REPS processes each;
   target <= 1.5 s for the press. After timing, the rows are checked against ``language_rows``
   over the four tokenizers.
4. The process's peak RSS at the end.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
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
PRESS_CORPORA = ("udhr_en.txt", "udhr_hi.txt", "udhr_ko.txt")
PRESS_REFERENCE = "udhr_en.txt"
PRESS_REPS = 5
PRESS_TARGET_S = 1.5


def nbytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def train_tokenizer(out: Printer):
    from explorer import PRESETS, Trainer, corpus_config
    from explorer.stages.pipeline import count_words

    text = read_corpus(TRAIN_CORPUS)
    cfg = corpus_config("gpt2", merges=MERGES)
    seconds, trainer = timed(lambda: Trainer(count_words((text,), cfg), cfg, encoding=PRESETS["gpt2"].encoding).run())
    tok = trainer.tokenizer()
    out(
        f"compare train   gpt2 preset, {MERGES:,} merges on {TRAIN_CORPUS} ({nbytes(text):,} bytes): "
        f"{tok.num_merges:,} merges, vocab {len(tok.vocab):,}, stop: {trainer.stop_reason}; trained in {fmt_s(seconds)} "
        f"(not part of the measurement)"
    )
    return tok


def timed_replay(tok, text: str) -> tuple[float, list[int]]:
    from explorer.analysis.evaluate import piece_counts, replay

    gc.collect()
    return timed(lambda: replay(tok, piece_counts(tok, text)))


def bench_replay(out: Printer, tok) -> None:
    from explorer.analysis.evaluate import curve_points

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
    out(
        f"compare replay  {tok.num_merges:,} merges on {HELDOUT_CORPUS} ({nbytes(text):,} bytes): "
        f"replay {fmt_s(best)}  vs {len(points)} truncated encodes {fmt_s(encodes)}  ratio {ratio:.1f}  "
        f"counts identical at {len(points)} points: {yes_no(same)}  "
        f"(target >= {TARGET_RATIO:g}: {'met' if ratio >= TARGET_RATIO else 'NOT met'})"
    )
    out(
        f"    replay: piece_counts + replay, {len(counts):,} counts (k = 0..{tok.num_merges:,}), best of {REPLAY_REPS} "
        f"(1 before the encodes, {REPLAY_REPS - 1} after); encodes: len(tok.truncate(k).encode(text)) once each at "
        f"k = {points[0]}, {points[1]}, ..., {points[-1]}, a fresh tokenizer each (empty piece cache), "
        f"truncate {fmt_s(truncating)} of it; tokens {counts[0]:,} at k=0 -> {counts[-1]:,} at k={tok.num_merges:,}"
    )
    if not same:
        if len(counts) != tok.num_merges + 1:
            out(f"    replay gave {len(counts):,} counts, expected {tok.num_merges + 1:,}")
        bad = [
            (k, counts[k] if k < len(counts) else None, n)
            for k, n in encoded.items()
            if k >= len(counts) or counts[k] != n
        ]
        out(
            f"    differ at {len(bad)} points, first: "
            + ", ".join(f"k={k} replay {r} encode {n}" for k, r, n in bad[:5])
        )


def bench_compare_page(out: Printer) -> None:
    from explorer import PRESETS, corpus_config, load_pretrained
    from explorer.analysis.compare import Memo, compare_corpora

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
    out(
        f"compare page    gpt2 preset {COMPARE_MERGES:,} merges, {label}: cold {fmt_s(cold)} (fresh Memo, "
        f"{len(memo)} entries after)  warm {fmt_s(warm)} (same Memo)  {no_ref}"
    )
    out(
        f"    each corpus trained whole and on its first 90% (merges made: {merges}), held-out replay, encode, "
        f"{len(result.cross)} cross-evaluations"
    )

    load_s, pre = timed(load_pretrained, PRETRAINED_NAME)
    memo = Memo()

    def pretrained():
        return compare_corpora(texts, pretrained=(PRETRAINED_NAME, pre), memo=memo)

    gc.collect()
    cold, result = timed(pretrained)
    gc.collect()
    warm, _ = timed(pretrained)
    out(
        f"compare page    pretrained {PRETRAINED_NAME} ({pre.num_merges:,} merges), {label}: cold {fmt_s(cold)} "
        f"(fresh Memo and piece cache)  warm {fmt_s(warm)} (same Memo)  {no_ref}; load {fmt_s(load_s)} "
        f"(once per process, not included)"
    )


def press(warmed: bool) -> dict[str, object]:
    """One press of Compare in this (fresh) process: the tables loaded first, then the clock."""
    from explorer import PRESETS, corpus_config, load_pretrained
    from explorer.analysis.compare import (
        Memo,
        compare_corpora,
        language_rows,
        parallel_samples,
        table_language_rows,
        warm_languages,
    )
    from explorer.formats.pretrained import PRETRAINED

    loads = {}
    for name in PRETRAINED:
        loads[name], _ = timed(load_pretrained, name)
    if warmed:
        warm_languages()
    gc.collect()
    t0 = time.perf_counter()
    corpora = {name: read_corpus(name) for name in PRESS_CORPORA}
    config = corpus_config("gpt2", merges=COMPARE_MERGES)
    result = compare_corpora(corpora, config=config, encoding=PRESETS["gpt2"].encoding, memo=Memo(max_entries=256))
    t1 = time.perf_counter()
    # the languages panel: the tokenizer trained on the reference corpus, then the bundled tables
    texts = {name: read_corpus(name) for name in parallel_samples()}
    trained = result.runs[PRESS_REFERENCE].tokenizer
    rows = language_rows({"trained here": trained}, texts, reference=PRESS_REFERENCE)
    t2 = time.perf_counter()
    rows += table_language_rows(texts, reference=PRESS_REFERENCE)
    t3 = time.perf_counter()
    every = {"trained here": trained, **{name: load_pretrained(name) for name in PRETRAINED}}
    return {
        "press": t3 - t0,
        "compare": t1 - t0,
        "trained_rows": t2 - t1,
        "table_rows": t3 - t2,
        "loads": loads,
        "rows": len(rows),
        "texts": len(texts),
        "same": rows == language_rows(every, texts, reference=PRESS_REFERENCE),
        "merges": [run.tokenizer.num_merges for run in result.runs.values()],
        "bytes": sum(nbytes(t) for t in corpora.values()),
    }


def fresh_presses(warmed: bool) -> list[dict[str, object]]:
    args = [sys.executable, __file__, "--press", "warmed" if warmed else "cold"]
    return [
        json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout) for _ in range(PRESS_REPS)
    ]


def bench_press(out: Printer) -> None:
    load_before = os.getloadavg()[0]  # other work on the machine shows in every time below
    cold = fresh_presses(warmed=False)
    warmed = fresh_presses(warmed=True)
    load_after = os.getloadavg()[0]
    first = cold[0]
    best = min(r["press"] for r in cold)
    label = f"{', '.join(n.removesuffix('.txt') for n in PRESS_CORPORA)} ({first['bytes']:,} bytes)"

    def spread(runs: list[dict[str, object]], key: str) -> str:
        values = [r[key] for r in runs]
        return f"{fmt_s(min(values))} (median {fmt_s(statistics.median(values))})"

    out(
        f"compare press   default Compare, {label}, gpt2 preset sized for each corpus ({COMPARE_MERGES:,} merges), "
        f"a fresh process each: press -> every panel computed {spread(cold, 'press')}, best (median) of {PRESS_REPS}  "
        f"(target <= {PRESS_TARGET_S:g} s: {'met' if best <= PRESS_TARGET_S else 'MISSED'})"
    )
    out(
        f"    of it: compare_corpora {spread(cold, 'compare')}; languages panel, {first['texts']} UDHR texts: "
        f"trained here {spread(cold, 'trained_rows')}, the 3 bundled tables {spread(cold, 'table_rows')}; merges made "
        f"{', '.join(f'{m:,}' for m in first['merges'])}; {first['rows']} rows, identical to language_rows over the 4 "
        f"tokenizers: {yes_no(all(r['same'] for r in cold + warmed))}"
    )
    out(
        f"    tables' language counts warmed at start (warm_languages): press {spread(warmed, 'press')}, "
        f"the tables' rows {spread(warmed, 'table_rows')}"
    )
    loads = ", ".join(f"{name} {fmt_s(min(r['loads'][name] for r in cold))}" for name in first["loads"])
    out(
        f"    tables loaded before the clock starts (not included; best of {PRESS_REPS}): {loads}; the machine's "
        f"1-minute load average {load_before:.1f} before these runs, {load_after:.1f} after ({os.cpu_count()} CPUs)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    ap.add_argument("--press", choices=["cold", "warmed"], help=argparse.SUPPRESS)  # one press, in a fresh process
    args = ap.parse_args()
    if args.press:
        print(json.dumps(press(warmed=args.press == "warmed")))
        return

    assert all((SAMPLES / n).exists() for n in (TRAIN_CORPUS, HELDOUT_CORPUS, *COMPARE_CORPORA))
    out = Printer()
    t0 = time.perf_counter()
    tok = train_tokenizer(out)
    bench_replay(out, tok)
    bench_compare_page(out)
    bench_press(out)
    out(
        f"compare peak RSS {peak_rss_mb():.0f} MB (whole process, end of run); total run {fmt_s(time.perf_counter() - t0)}"
    )
    if args.write:
        write_section("compare", "Compare (bench/compare.py)", out.lines)


if __name__ == "__main__":
    main()
