"""Encoding benchmark: our tokenizer vs tiktoken's encode_ordinary with the same ranks.

    python bench/encode.py            # gpt2 and cl100k patterns (~15 s)
    python bench/encode.py --write    # also store the printed lines in bench/RESULTS.md

For each pattern: train our byte-level tokenizer (full byte alphabet, 5,000 vocab, HF ties, no
special tokens) on the corpus, build a ``tiktoken.Encoding`` whose ranks are our ids, and encode
the same text with both. Ours is timed cold (a fresh tokenizer's first call, which merges every
distinct piece once and caches it; best of REPS fresh tokenizers) and warm (the second call on
the same tokenizer, all pieces cached; best of REPS). tiktoken keeps no cache: best of REPS calls,
each right after one of ours. The patterns' fast path covers ASCII lines, so two more corpora
show text that mixes engines (curly quotes and dashes) and text that stays in `regex`.

Then the bundled tables (GPT-2, cl100k_base, o200k_base) against tiktoken's own Encoding of the
same files (read by tiktoken's loaders), on the 1.1 MB corpus and on UDHR's nine translations
plus the mixed emoji/multilingual sample (mostly non-Latin text); cold is a fresh tokenizer of
the loaded table (its piece cache empty), the table's load time is printed once.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import tempfile
from pathlib import Path

from _common import (
    CORPUS_NAME,
    SAMPLES,
    Printer,
    read_corpus,
    timed,
    write_section,
    yes_no,
)

VOCAB = 5_000
REPS = 9
TARGET_RATIO = 2.5
TARGET_PRETRAINED = 3.0  # cold, worst table and corpus
PRESETS = (("gpt2", "gpt2"), ("gpt4", "cl100k"))  # (our preset, pattern name)


def bench_pattern(out: Printer, text: str, preset: str, *, corpus: str = "") -> list[float]:
    import tiktoken

    from explorer import Trainer, make_config
    from explorer.stages.pretokenizers import PATTERNS

    cfg = make_config(preset, alphabet="full-bytes", tie_break="hf", vocab_size=VOCAB, special_tokens=())
    pattern = cfg.pretokenizer
    train_s, trainer = timed(lambda: Trainer.from_texts(text, cfg).run())
    tok = trainer.tokenizer()
    enc = tiktoken.Encoding(
        "bench",
        pat_str=PATTERNS[pattern],
        mergeable_ranks={tok.token_bytes(i): i for i in range(len(tok.vocab))},
        special_tokens={},
    )

    label = f"encode {pattern:<6} {corpus}(preset {preset}, vocab {len(tok.vocab)}, trained in {train_s:.2f} s)"
    return compare(out, label, trainer.tokenizer, enc, text)


def compare(out: Printer, label: str, fresh, enc, text: str) -> list[float]:
    """Time ``fresh().encode`` cold and warm against ``enc.encode_ordinary`` on ``text``, print
    the lines, return [cold ratio, warm ratio]. ``fresh()`` gives a tokenizer with an empty
    piece cache (built outside the timing)."""
    # interleaved, so that a slow spell of the machine hits both sides alike
    cold = warm = tt = float("inf")
    ids_cold = ids_warm = ids_tt = None
    for _ in range(REPS):
        tok = fresh()
        gc.collect()
        dt, ids_cold = timed(tok.encode, text)
        cold = min(cold, dt)
        gc.collect()
        dt, ids_warm = timed(tok.encode, text)
        warm = min(warm, dt)
        gc.collect()
        dt, ids_tt = timed(enc.encode_ordinary, text)
        tt = min(tt, dt)

    same = ids_cold == ids_tt and ids_warm == ids_tt
    out(f"{label}: {len(ids_tt):,} tokens, ids identical to tiktoken: {yes_no(same)}")
    if not same:
        first = next((i for i, (a, b) in enumerate(zip(ids_cold, ids_tt)) if a != b), min(len(ids_cold), len(ids_tt)))
        out(
            f"    first difference at token {first}: ours {ids_cold[first : first + 5]} tiktoken {ids_tt[first : first + 5]}"
            f" (lengths {len(ids_cold)} / {len(ids_tt)})"
        )
    out(f"  cold  ours {cold:.3f} s  tiktoken {tt:.3f} s  ratio {cold / tt:.2f}  [best of {REPS} fresh tokenizers]")
    out(f"  warm  ours {warm:.3f} s  tiktoken {tt:.3f} s  ratio {warm / tt:.2f}  [best of {REPS}]")
    return [cold / tt, warm / tt]


def tiktoken_encoding(name: str, folder: Path):
    """tiktoken's own Encoding for a bundled table, read by tiktoken's own loaders (not from
    our tokenizer), with the pattern and special tokens tiktoken uses for it."""
    import tiktoken
    import tiktoken.load

    from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR
    from explorer.stages.pretokenizers import PATTERNS

    spec = PRETRAINED[name]
    os.environ["TIKTOKEN_CACHE_DIR"] = str(folder / "cache")  # ours, empty: no stale copy
    if name == "gpt2":
        ranks = tiktoken.load.data_gym_to_mergeable_bpe_ranks(
            vocab_bpe_file=str(PRETRAINED_DIR / "gpt2" / "vocab.bpe"),
            encoder_json_file=str(PRETRAINED_DIR / "gpt2" / "encoder.json"),
        )
    else:
        (rel,) = spec.files
        plain = folder / f"{name}.tiktoken"
        plain.write_bytes(gzip.decompress((PRETRAINED_DIR / rel).read_bytes()))
        ranks = tiktoken.load.load_tiktoken_bpe(str(plain))
    return tiktoken.Encoding(
        f"bench-{name}", pat_str=PATTERNS[spec.pretokenizer], mergeable_ranks=ranks, special_tokens=spec.special_ids
    )


def bench_pretrained(out: Printer, corpora: list[tuple[str, str]], folder: Path) -> float:
    """Each bundled table on each corpus; returns the worst cold ratio."""
    from explorer import load_pretrained
    from explorer.formats.pretrained import PRETRAINED

    worst = 0.0
    for name in PRETRAINED:
        load_s, tok = timed(load_pretrained, name)
        enc = tiktoken_encoding(name, folder)
        out(f"{name}: loaded in {load_s:.2f} s (once per process), {tok.num_merges:,} merges")
        for label, text in corpora:
            # truncate(all merges) is a new tokenizer of the same table: an empty piece cache
            cold, _ = compare(out, f"encode {name:<11} {label}", lambda: tok.truncate(tok.num_merges), enc, text)
            worst = max(worst, cold)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    args = ap.parse_args()

    out = Printer()
    text = read_corpus()
    out(
        f"corpus {CORPUS_NAME}: {len(text.encode('utf-8')):,} bytes; byte level, full byte alphabet, "
        f"vocab {VOCAB:,}, hf ties, no special tokens; tiktoken encode_ordinary with the same ranks"
    )
    worst = {}
    for preset, _ in PRESETS:
        cold, warm = bench_pattern(out, text, preset)
        worst["cold"] = max(worst.get("cold", 0.0), cold)
        worst["warm"] = max(worst.get("warm", 0.0), warm)
    for kind, ratio in worst.items():
        out(
            f"target ratio <= {TARGET_RATIO} ({kind}, worst pattern): {ratio:.2f} -> "
            f"{'met' if ratio <= TARGET_RATIO else 'NOT met'}"
        )
    # Not the target, shown for what they exercise: the pattern's fast path covers ASCII lines
    # only, so text with curly quotes and dashes mixes both engines, and UDHR's eight
    # non-Latin translations stay in `regex` entirely.
    out("other corpora, gpt2 preset, same settings:")
    for label, other in (
        ("english_frankenstein.txt (1,115 non-ASCII chars)", read_corpus("english_frankenstein.txt")),
        ("udhr_*.txt (9 languages)", "".join(read_corpus(p.name) for p in sorted(SAMPLES.glob("udhr_*.txt")))),
    ):
        bench_pattern(out, other, "gpt2", corpus=f"{label} ")
    out("bundled tables against tiktoken's Encoding of the same files (encode_ordinary):")
    non_english = "".join(
        read_corpus(n) for n in [*(p.name for p in sorted(SAMPLES.glob("udhr_*.txt"))), "mixed_emoji_multilingual.txt"]
    )
    corpora = [
        (f"{CORPUS_NAME} ({len(text.encode()):,} bytes)", text),
        (f"udhr_*.txt + mixed_emoji_multilingual.txt ({len(non_english.encode()):,} bytes)", non_english),
    ]
    with tempfile.TemporaryDirectory() as folder:
        worst_pre = bench_pretrained(out, corpora, Path(folder))
    out(
        f"target ratio <= {TARGET_PRETRAINED} (cold, worst table and corpus): {worst_pre:.2f} -> "
        f"{'met' if worst_pre <= TARGET_PRETRAINED else 'NOT met'}"
    )
    if args.write:
        write_section("encode", "bench/encode.py", out.lines)


if __name__ == "__main__":
    main()
