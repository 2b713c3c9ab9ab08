"""Training benchmark: our trainer vs HF tokenizers' BpeTrainer, and vs the seeds' loops.

    python bench/train.py            # vocab 1,000 / 5,000 / 20,000 + the seed loops (~30 s)
    python bench/train.py --quick    # vocab 1,000 only, no seed loops (smoke test)
    python bench/train.py --write    # also store the printed lines in bench/RESULTS.md

Each of our training runs happens in a fresh process (forked from a small forkserver), which
reports its wall time and its peak RSS (``ru_maxrss``), plus the RSS after importing the engine
and reading the text (the baseline), so training's own share is visible.
HF's BpeTrainer runs in this process on the same text, in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from _common import CORPUS_NAME, ROOT, Printer, best_of, fmt_s, peak_rss_mb, read_corpus, timed, write_section, yes_no

sys.path.insert(0, str(ROOT / "tests"))  # for seed_loops: the seed notebooks' loops, re-typed

VOCABS = (1_000, 5_000, 20_000)
TARGET_RATIO = 2.0  # at vocab 5,000 (aim: 1.0)
TARGET_RSS_MB = 300  # at vocab 20,000
SEED002_MERGES = 3
OURS_BYTES_MERGES = 300
SEED000_MERGES = 5


def gpt2_config(vocab_size: int, tie_break: str = "hf"):
    from explorer import make_config

    return make_config("gpt2", alphabet="full-bytes", tie_break=tie_break, vocab_size=vocab_size, special_tokens=())


# ---- our training, in a child process ---------------------------------------------------------
# Linux carries a process's peak RSS over fork and exec (the child of a big parent starts with
# the parent's RSS as its "peak"), so the children are forked from a forkserver started before
# this process reads or trains anything, and each child measures only itself.
_FORKSERVER = None


def start_forkserver():
    global _FORKSERVER
    import multiprocessing

    _FORKSERVER = multiprocessing.get_context("forkserver")
    _FORKSERVER.set_forkserver_preload([])
    with _FORKSERVER.Pool(1) as pool:  # start the server now, while this process is small
        pool.apply(int)


def child(vocab_size: int) -> dict:
    """Runs in a fresh process: train once, report time, baseline and peak RSS, the merges."""
    from explorer import Trainer

    text = read_corpus()
    cfg = gpt2_config(vocab_size)
    baseline = peak_rss_mb()
    t0 = time.perf_counter()
    trainer = Trainer.from_texts(text, cfg).run()
    seconds = time.perf_counter() - t0
    peak = peak_rss_mb()
    return {
        "seconds": seconds,
        "baseline_mb": baseline,
        "peak_mb": peak,
        "records": len(trainer.records),
        "stop_reason": trainer.stop_reason,
        "vocab": len(trainer.vocab),
        "merges": [(r.left, r.right) for r in trainer.records],
    }


def run_child(vocab_size: int) -> dict:
    with _FORKSERVER.Pool(1, maxtasksperchild=1) as pool:
        return pool.apply(child, (vocab_size,))


# ---- HF ---------------------------------------------------------------------------------------------
def hf_train(text: str, vocab_size: int):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator([text], trainer=trainer)
    return tok


def hf_merges(tok) -> list[tuple[str, str]]:
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in merges]


def bench_vs_hf(out: Printer, text: str, vocabs) -> dict[int, tuple[float, float]]:
    results = {}
    for n in vocabs:
        reps = 5 if n <= 5_000 else 1
        runs = [run_child(n) for _ in range(reps)]
        ours = min(r["seconds"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        baseline = max(r["baseline_mb"] for r in runs)
        hf_s, hf_tok = best_of(reps, hf_train, text, n)
        same = runs[0]["merges"] == hf_merges(hf_tok)
        ratio = ours / hf_s
        out(
            f"train vocab={n:<6}  ours {ours:.2f} s  hf {hf_s:.2f} s  ratio {ratio:.2f}  "
            f"merges identical: {yes_no(same)}  peak RSS {peak:.0f} MB (baseline {baseline:.0f} MB, "
            f"training +{peak - baseline:.0f} MB)  [best of {reps}]"
        )
        if not same or runs[0]["vocab"] != hf_tok.get_vocab_size():
            out(
                f"    ours: {runs[0]['records']} merges, vocab {runs[0]['vocab']}, stop {runs[0]['stop_reason']}; "
                f"hf: {len(hf_merges(hf_tok))} merges, vocab {hf_tok.get_vocab_size()}"
            )
        results[n] = (ratio, peak)
    return results


# ---- seed 002: recount the whole byte sequence per merge (the notebook's loop, tests/seed_loops.py)
def bench_seed002(out: Printer, text: str) -> None:
    from seed_loops import seed002_loop

    from explorer import Trainer, make_config

    tokens = list(text.encode("utf-8"))
    seed_s, ref = timed(seed002_loop, tokens, 256 + SEED002_MERGES)
    mapping = ref["mapping"]
    seed_per = seed_s / SEED002_MERGES
    out(
        f"seed002 loop (get_pair_counts + merge_pair over all {len(tokens):,} bytes): "
        f"{fmt_s(seed_per)}/merge  [{SEED002_MERGES} merges]"
    )

    cfg = make_config("bytes", vocab_size=256 + OURS_BYTES_MERGES)
    setup_s, trainer = timed(Trainer.from_texts, text, cfg)
    first_s, _ = timed(trainer.advance, SEED002_MERGES)
    rest_s, _ = timed(trainer.run)
    n = len(trainer.merges)
    same = [(r.left_id, r.right_id) for r in trainer.records[:SEED002_MERGES]] == list(mapping)
    first_per, avg_per = first_s / SEED002_MERGES, (first_s + rest_s) / n
    out(
        f"ours 'bytes' preset, same sequence: {fmt_s(first_per)}/merge first {SEED002_MERGES} "
        f"(same merges as seed: {yes_no(same)}), {fmt_s(avg_per)}/merge over {n} merges (+{fmt_s(setup_s)} setup)  "
        f"speed-up {seed_per / first_per:.1f}x (first {SEED002_MERGES}), {seed_per / avg_per:.1f}x (average)"
    )


# ---- seed 000: recount every word split per merge (the HF course's loop, tests/seed_loops.py) -----
def bench_seed000(out: Printer, text: str) -> None:
    from seed_loops import hf_course_train

    from explorer import Trainer
    from explorer.stages.pipeline import count_words, word_symbols

    # the seed's tie-break (first pair seen wins) so the merges can be compared
    cfg = gpt2_config(1_000, tie_break="first-seen")
    word_freqs = count_words(text, cfg)
    splits = {w: word_symbols(w, cfg) for w in word_freqs}
    # the loop appends to the vocab list until it holds vocab_size entries: from an empty list,
    # vocab_size is the number of merges
    seed_s, ref = timed(hf_course_train, word_freqs, splits, [], SEED000_MERGES)
    seed_merges = [pair for pair, _ in ref["order"]]
    seed_per = seed_s / SEED000_MERGES
    out(
        f"seed000 loop (compute_pair_freqs + merge_pair over {len(word_freqs):,} distinct GPT-2 pieces): "
        f"{fmt_s(seed_per)}/merge  [{SEED000_MERGES} merges]"
    )

    setup_s, trainer = timed(Trainer.from_texts, text, cfg)
    first_s, _ = timed(trainer.advance, SEED000_MERGES)
    rest_s, _ = timed(trainer.run)
    n = len(trainer.merges)
    same = [r.pair for r in trainer.records[:SEED000_MERGES]] == seed_merges
    first_per, avg_per = first_s / SEED000_MERGES, (first_s + rest_s) / n
    out(
        f"ours gpt2 preset (first-seen ties), same pieces: {fmt_s(first_per)}/merge first {SEED000_MERGES} "
        f"(same merges as seed: {yes_no(same)}), {fmt_s(avg_per)}/merge over {n} merges (+{fmt_s(setup_s)} setup)  "
        f"speed-up {seed_per / first_per:.0f}x (first {SEED000_MERGES}), {seed_per / avg_per:.0f}x (average)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only vocab 1,000, no seed loops (smoke test)")
    ap.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    args = ap.parse_args()

    start_forkserver()
    out = Printer()
    text = read_corpus()
    vocabs = VOCABS[:1] if args.quick else VOCABS
    out(
        f"corpus {CORPUS_NAME}: {len(text.encode('utf-8')):,} bytes; gpt2 preset, full byte alphabet, "
        f"hf ties, no special tokens; ours with step records (top_k=20){'; --quick' if args.quick else ''}"
    )
    results = bench_vs_hf(out, text, vocabs)
    if not args.quick:
        bench_seed002(out, text)
        bench_seed000(out, text)
    if 5_000 in results:
        ratio = results[5_000][0]
        out(
            f"target ratio <= {TARGET_RATIO} at vocab 5000 (aim <= 1.0): {ratio:.2f} -> "
            f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}{', aim met' if ratio <= 1.0 else ''}"
        )
    if 20_000 in results:
        peak = results[20_000][1]
        out(
            f"target peak RSS <= {TARGET_RSS_MB} MB at vocab 20000: {peak:.0f} MB -> "
            f"{'met' if peak <= TARGET_RSS_MB else 'NOT met'}"
        )
    if args.write:
        write_section("train", "bench/train.py" + (" --quick" if args.quick else ""), out.lines)


if __name__ == "__main__":
    main()
