"""Scaffold-token analysis benchmark: explorer.analysis.scaffold against a plain encode of the corpus.

The scaffold analysis of the corpus under each bundled table (GPT-2, cl100k_base, o200k_base:
every merge the encoding makes counted, one pass over the distinct pieces) against our own
cold encode of the same text (a fresh tokenizer, its piece cache empty), best of a few runs,
with the ratio; the token counts are checked to agree, and the scaffold tokens at the default
τ are counted, with the first few.
"""

from __future__ import annotations

from _common import Printer, bench_main, best_cold, best_of, fmt_s, read_corpus, yes_no

from explorer import load_pretrained
from explorer.analysis.scaffold import DEFAULT_TAU, scaffold

TABLES = ("gpt2", "cl100k_base", "o200k_base")
REPS = 3
SHOWN = 5


def bench_table(out: Printer, name: str, text: str) -> None:
    tok = load_pretrained(name)
    encode_s, ids = best_cold(tok, lambda t: t.encode(text), REPS)
    dt, report = best_of(REPS, scaffold, tok, text)
    first = ", ".join(repr(tok.decode([u.id])) for u in report.scaffold[:SHOWN])
    out(
        f"{name:<11} scaffold {fmt_s(dt):>9}  encode {fmt_s(encode_s):>9}  ratio {dt / encode_s:.2f}  "
        f"tokens agree {yes_no(report.tokens == len(ids))}  merged tokens seen {len(report.uses):,}, "
        f"scaffold at tau={DEFAULT_TAU} {len(report.scaffold):,}: {first}"
    )


def _run(out: Printer) -> None:
    text = read_corpus()
    out(f"corpus {len(text.encode('utf-8')):,} bytes; best of {REPS} (encode: {REPS} fresh tokenizers, cold)")
    for name in TABLES:
        bench_table(out, name, text)


def main() -> None:
    bench_main("scaffold", __doc__, _run)


if __name__ == "__main__":
    main()
