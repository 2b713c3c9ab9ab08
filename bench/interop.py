"""Import/export benchmark: reading and writing the files other tools use, against those tools.

    python bench/interop.py            # ~1 minute
    python bench/interop.py --write    # also store the printed lines in bench/RESULTS.md

- GPT-2 (50,000 merges) as an HF ``tokenizer.json``: our ``import_files`` against
  ``tokenizers.Tokenizer.from_str`` on the same bytes, and our export against HF's ``to_str``;
- cl100k_base (100,000 ranks) as ``.tiktoken`` + JSON: our import (which also recovers the
  merges from the ranks) against ``tiktoken.load.load_tiktoken_bpe`` + ``tiktoken.Encoding``.
Each imported tokenizer encodes the corpus and the ids are compared with the other tool's.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

from _common import Printer, best_of, fmt_s, read_corpus, timed, write_section, yes_no

REPS = 3


def bench_hf(out: Printer, text: str) -> None:
    from tokenizers import Tokenizer as HF

    from explorer import export_files, import_files, load_pretrained

    gpt2 = load_pretrained("gpt2")
    ours_export, files = best_of(REPS, export_files, gpt2, "hf")
    raw = files["tokenizer.json"]
    ours_import, tok = best_of(REPS, import_files, files)
    theirs_import, hf = best_of(REPS, HF.from_str, raw.decode("utf-8"))
    theirs_export, _ = best_of(REPS, hf.to_str)
    same = tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    out(
        f"hf tokenizer.json  gpt2 50,000 merges ({len(raw):,} bytes): import ours {fmt_s(ours_import)}  "
        f"HF from_str {fmt_s(theirs_import)}  ratio {ours_import / theirs_import:.1f}; export ours {fmt_s(ours_export)}  "
        f"HF to_str {fmt_s(theirs_export)}  ratio {ours_export / theirs_export:.1f}; ids identical on the corpus: {yes_no(same)}"
    )


def bench_tiktoken(out: Printer, text: str) -> None:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from explorer import export_files, import_files, load_pretrained

    cl = load_pretrained("cl100k_base")
    files = export_files(cl, "tiktoken")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tokenizer.tiktoken")
        with open(path, "wb") as f:
            f.write(files["tokenizer.tiktoken"])
        meta = json.loads(files["tokenizer.json"])

        def theirs():
            return tiktoken.Encoding(
                "bench",
                pat_str=meta["pat_str"],
                mergeable_ranks=load_tiktoken_bpe(path),
                special_tokens=meta["special_tokens"],
            )

        theirs_s, enc = best_of(REPS, theirs)
    ours_s, tok = timed(import_files, files)
    same = tok.encode(text, allow_special=True) == enc.encode(text, allowed_special="all")
    out(
        f"tiktoken           cl100k_base 100,000 ranks ({len(files['tokenizer.tiktoken']):,} bytes): import ours "
        f"{fmt_s(ours_s)} (merges recovered)  tiktoken load+Encoding {fmt_s(theirs_s)}  ratio {ours_s / theirs_s:.1f}; "
        f"ids identical on the corpus: {yes_no(same)}"
    )
    # a bare cl100k_base.tiktoken as tiktoken caches it: recognised by its SHA-256 as the bundled
    # table (already loaded above, as a server has it after its first Playground visit)
    import gzip

    from explorer.formats.pretrained import PRETRAINED_DIR

    raw = gzip.decompress((PRETRAINED_DIR / "tiktoken" / "cl100k_base.tiktoken.gz").read_bytes())
    bare_s, bare = best_of(REPS, import_files, {"cl100k_base.tiktoken": raw})
    same = bare.encode(text, allow_special=True) == enc.encode(text, allowed_special="all")
    out(
        f"tiktoken           bare cl100k_base.tiktoken ({len(raw):,} bytes, no JSON): import ours {fmt_s(bare_s)} "
        f"(recognised as the bundled table by its SHA-256)  tiktoken load+Encoding {fmt_s(theirs_s)}  ratio "
        f"{bare_s / theirs_s:.3f}; ids identical on the corpus: {yes_no(same)}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the lines in bench/RESULTS.md")
    args = ap.parse_args()
    text = read_corpus()
    out = Printer()
    bench_hf(out, text)
    bench_tiktoken(out, text)
    if args.write:
        write_section("interop", "Import and export (bench/interop.py)", out.lines)


if __name__ == "__main__":
    main()
