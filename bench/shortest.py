"""Fewest-tokens benchmark: explorer.analysis.shortest against our BPE encode of the corpus.

The shortest segmentation of the corpus (each piece cut into the fewest tokens of the
vocabulary, a shortest path over its bytes or characters) under GPT-2, cl100k_base, o200k_base
and a character-level tokenizer trained on the corpus (Sennrich preset, 2,000 merges), against
our own encode of the same text, each cold (a fresh tokenizer, its piece cache empty) and best
of a few runs, with the ratio; then BPE's tokens, the fewest, the gap and the pieces that
differ, the shortest split checked to decode as BPE's.
"""

from __future__ import annotations

from _common import Printer, bench_main, best_cold, fmt_s, read_corpus, yes_no

from explorer import Tokenizer, load_pretrained, make_config, train
from explorer.analysis.shortest import optimality_gap, shortest_segmentation

TABLES = ("gpt2", "cl100k_base", "o200k_base")
TRAINED_MERGES = 2_000
REPS = 3


def bench_tokenizer(out: Printer, name: str, tok: Tokenizer, text: str) -> None:
    encode_s, ids = best_cold(tok, lambda t: t.encode(text), REPS)
    short_s, fewest = best_cold(tok, lambda t: shortest_segmentation(t, text), REPS)
    gap = optimality_gap(tok, text)
    out(
        f"{name:<16} shortest {fmt_s(short_s):>9}  encode {fmt_s(encode_s):>9}  ratio {short_s / encode_s:.2f}  "
        f"tokens {len(ids):,} -> fewest {len(fewest):,}, gap {gap.gap:,} ({gap.share or 0:.2%}) in "
        f"{gap.pieces_differing:,} of {gap.pieces:,} pieces; counts agree "
        f"{yes_no(gap.tokens == len(ids) and gap.shortest_tokens == len(fewest))}, "
        f"decodes as BPE's {yes_no(tok.decode(fewest) == tok.decode(ids))}"
    )


def _run(out: Printer) -> None:
    text = read_corpus()
    out(f"corpus {len(text.encode('utf-8')):,} bytes; best of {REPS}, each with a fresh tokenizer (cold)")
    for name in TABLES:
        bench_tokenizer(out, name, load_pretrained(name), text)
    trained = train(text, make_config("sennrich", num_merges=TRAINED_MERGES)).tokenizer()
    bench_tokenizer(out, f"sennrich {TRAINED_MERGES:,}", trained, text)


def main() -> None:
    bench_main("shortest", __doc__, _run)


if __name__ == "__main__":
    main()
