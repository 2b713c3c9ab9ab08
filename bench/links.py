"""Links and the store: what opening a shared link costs, and keeping files by hash.

    python bench/links.py            # ~1 minute
    python bench/links.py --write    # also store the printed lines in bench/RESULTS.md

- Opening a Train/Playground link at step N (gpt2 preset sized for the corpus, the app's own
  record settings): the first session trains to step N; every later session that asks for the
  same corpus, settings and step copies the trainer the first one left in the shared cache. The
  reference: HF ``BpeTrainer`` training the same number of merges on the same text.
- The store (SQLite, WAL) keeping an upload and reading it back, against writing and reading
  the same bytes as a plain file (``os.fsync``-free, as the store's WAL mode with
  ``synchronous=NORMAL`` would be).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import os
import tempfile

from _common import Printer, best_of, fmt_s, read_corpus, write_section

REPS = 3


def bench_open(out: Printer, text: str, steps: int) -> None:
    from tokenizers import Tokenizer as HF
    from tokenizers import models, pre_tokenizers, trainers

    from explorer import corpus_config
    from explorer.bpe.trainer import Trainer
    from explorer.stages.pipeline import count_words
    from explorer.ui.state import FULL_RECORDS, RECORDED_PAIRS

    config = corpus_config("gpt2")  # the app's default budget of 1,000 merges is only a stop rule here
    config = config.replace(num_merges=steps * 2)

    def first():
        trainer = Trainer(count_words((text,), config), config, top_k=RECORDED_PAIRS, full_records=FULL_RECORDS)
        trainer.advance(steps)
        return trainer

    first_s, shared = best_of(REPS, first)
    next_s, mine = best_of(REPS, copy.deepcopy, shared)
    mine.advance(1)  # the copy is the session's own: stepping it leaves the shared one as it was
    assert len(shared.records) == steps and len(mine.records) == steps + 1

    def hf():
        tok = HF(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = trainers.BpeTrainer(
            vocab_size=256 + steps, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
        )
        tok.train_from_iterator([text], trainer)
        return tok

    hf_s, _ = best_of(REPS, hf)
    out(
        f"open a link at step {steps:,} ({len(text.encode()):,} bytes, gpt2 preset): first session trains {fmt_s(first_s)}; "
        f"each next session copies the shared trainer {fmt_s(next_s)} (ratio {next_s / first_s:.2f}); "
        f"HF BpeTrainer, the same merges {fmt_s(hf_s)} (ours first/HF {first_s / hf_s:.1f}, next/HF {next_s / hf_s:.2f})"
    )


def bench_store(out: Printer, data: bytes) -> None:
    from explorer.serving.store import SqliteStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(os.path.join(tmp, "store"), cap_bytes=1 << 30, session_quota=1 << 30)
        n = [0]
        last = [""]

        def put_get():
            n[0] += 1
            blob = data + n[0].to_bytes(4, "big")  # new content each time: a real insert
            last[0] = store.put(blob, kind="corpus", name="upload.txt", owner="bench")
            return store.get(last[0]).data == blob

        ours_s, ok = best_of(REPS, put_get)

        def plain():
            n[0] += 1
            blob = data + n[0].to_bytes(4, "big")
            path = os.path.join(tmp, hashlib.sha256(blob).hexdigest())
            with open(path, "wb") as f:
                f.write(blob)
            with open(path, "rb") as f:
                return f.read() == blob

        file_s, _ = best_of(REPS, plain)
        hit_s, hit = best_of(REPS, store.get, last[0])
        ok = ok and hit is not None and len(hit.data) == len(data) + 4
        store.close()
    out(
        f"store {len(data):,} bytes: put + get ours {fmt_s(ours_s)}  a plain file write + read {fmt_s(file_s)}  "
        f"ratio {ours_s / file_s:.1f}; get alone {fmt_s(hit_s)}; read back equal: {'yes' if ok else 'NO'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="store the printed lines in bench/RESULTS.md")
    args = parser.parse_args()
    out = Printer()
    text = read_corpus()
    for steps in (500, 2_000):
        bench_open(out, text, steps)
    for size in (1 << 20, 20 << 20):
        bench_store(out, (text.encode() * (size // len(text.encode()) + 1))[:size])
    if args.write:
        write_section("links", "Links and the store (bench/links.py)", out.lines)


if __name__ == "__main__":
    main()
