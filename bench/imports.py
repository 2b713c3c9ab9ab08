"""Loading imported tokenizer files: our import against the reference library loading the same file.

    python bench/imports.py            # about a minute
    python bench/imports.py --write    # also store the printed lines in bench/RESULTS.md

"Loading" is file bytes to a tokenizer ready to encode. Ours: ``import_files`` on the files'
bytes, as the Playground and the CLI import them (the format sniffed, the file parsed and
checked, merges recovered from ranks). The reference: what a user of that library does with
the same file, best of REPS each, the two interleaved so that a busy spell hits both:

- Llama 3 and Llama 4 ``tokenizer.model`` (tiktoken ranks, as Meta's ``llama-models`` package
  ships them), with a JSON of their pattern and special tokens beside them; Whisper's
  ``multilingual.tiktoken`` (vendored with the tests); cl100k_base and o200k_base ``.tiktoken``
  with their JSON (so that they are read as any rank file, not recognised as the bundled tables):
  against ``tiktoken.load.load_tiktoken_bpe`` + ``tiktoken.Encoding``;
- GPT-2 and cl100k_base exported by us as HF ``tokenizer.json``: against
  ``tokenizers.Tokenizer.from_str`` on the same bytes;
- GPT-2's ``encoder.json`` + ``vocab.bpe`` as vocab.json + merges.txt: against HF ``tokenizers``'
  ``BPE.from_file`` with its byte-level pre-tokenizer and decoder.

Each pair's ids are compared on a hostile multilingual text (numbers, whitespace runs, emoji).
"""

from __future__ import annotations

import gzip
import importlib.resources
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from _common import ROOT, Printer, bench_main, fmt_s, read_corpus, timed, yes_no

REPS = 3
TARGET_RATIO = 2.0  # ours / the reference library, each file
HOSTILE = (
    "Price: 1234567 or 3.14159, in 2024!!  \n\n\t  tabs\t\tand   spaces   \r\n\r\n"
    "emoji 👩‍👩‍👧‍👦 🇯🇵🇫🇷 😀😀😀 ✊🏽 中文分词测试，日本語のテキスト、한국어 문장입니다. "
    "हिन्दी में एक वाक्य है। النص العربي مع أرقام ١٢٣٤٥ việc hợp nhiều nghiệp; gelecektedir, ektedir "
    "I'm  'll  DON'T\u00a0nbsp " + "x" * 300 + " " * 50 + "end\n"
)


class Case(NamedTuple):
    label: str
    files: dict[str, bytes]  # what our import reads
    reference: str  # what the reference side is called in the line
    load_ref: Callable[[], Callable[[str], list[int]]]  # loads the file, returns its encode


def _text() -> str:
    return HOSTILE + read_corpus("udhr_hi.txt")[:3000] + read_corpus()[:20000]


def _tiktoken_case(label: str, path: Path, pat_str: str, specials: dict[str, int], name: str) -> Case:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    def load() -> Callable[[str], list[int]]:
        ranks = load_tiktoken_bpe(str(path))
        return tiktoken.Encoding(label, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials).encode_ordinary

    meta = json.dumps({"pat_str": pat_str, "special_tokens": specials}).encode()
    return Case(label, {name: path.read_bytes(), "tokenizer.json": meta}, "tiktoken load+Encoding", load)


def _hf_json_case(label: str, path: Path) -> Case:
    from tokenizers import Tokenizer as HF

    def load() -> Callable[[str], list[int]]:
        hf = HF.from_str(path.read_text(encoding="utf-8"))
        return lambda text: hf.encode(text, add_special_tokens=False).ids

    return Case(label, {"tokenizer.json": path.read_bytes()}, "HF Tokenizer.from_str", load)


def _hf_files_case(label: str, vocab: Path, merges: Path) -> Case:
    from tokenizers import Tokenizer as HF
    from tokenizers import decoders, models, pre_tokenizers

    def load() -> Callable[[str], list[int]]:
        hf = HF(models.BPE.from_file(str(vocab), str(merges)))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.decoder = decoders.ByteLevel()
        return lambda text: hf.encode(text, add_special_tokens=False).ids

    files = {"vocab.json": vocab.read_bytes(), "merges.txt": merges.read_bytes()}
    return Case(label, files, "HF BPE.from_file", load)


def cases(folder: Path) -> list[Case]:
    """Every file measured; files we write (exports, decompressed tables) go to ``folder``."""
    from llama_models.llama3.tokenizer import Tokenizer as Llama3
    from llama_models.llama4.tokenizer import Tokenizer as Llama4
    from tiktoken_ext.openai_public import r50k_pat_str

    from explorer import export_files, load_pretrained
    from explorer.formats.pretrained import PRETRAINED, PRETRAINED_DIR
    from explorer.stages.pretokenizers import PATTERNS

    out: list[Case] = []
    llama = importlib.resources.files("llama_models")
    for label, maker in (("llama3 tokenizer.model", Llama3), ("llama4 tokenizer.model", Llama4)):
        path = Path(str(llama / label[:6] / "tokenizer.model"))
        out.append(
            _tiktoken_case(
                label, path, maker.get_instance().model._pat_str, maker.get_instance().special_tokens, "tokenizer.model"
            )
        )
    whisper = folder / "multilingual.tiktoken"
    whisper.write_bytes(
        gzip.decompress((ROOT / "tests" / "data" / "whisper" / "multilingual.tiktoken.gz").read_bytes())
    )
    specials = {"<|endoftext|>": 50257, "<|startoftranscript|>": 50258}
    out.append(
        _tiktoken_case("whisper multilingual.tiktoken", whisper, r50k_pat_str, specials, "multilingual.tiktoken")
    )
    for name in ("cl100k_base", "o200k_base"):
        spec = PRETRAINED[name]
        (rel,) = spec.files
        path = folder / f"{name}.tiktoken"
        path.write_bytes(gzip.decompress((PRETRAINED_DIR / rel).read_bytes()))
        out.append(
            _tiktoken_case(f"{name}.tiktoken + JSON", path, PATTERNS[spec.pretokenizer], spec.special_ids, path.name)
        )
    for name in ("gpt2", "cl100k_base"):
        path = folder / f"{name}.tokenizer.json"
        path.write_bytes(export_files(load_pretrained(name), "hf")["tokenizer.json"])
        out.append(_hf_json_case(f"{name} tokenizer.json (our export)", path))
    gpt2 = PRETRAINED_DIR / "gpt2"
    out.append(_hf_files_case("gpt2 vocab.json + merges.txt", gpt2 / "encoder.json", gpt2 / "vocab.bpe"))
    return out


def measure(case: Case, text: str) -> str:
    """One line: our load and the reference's (best of REPS, interleaved), the ratio, ids equal."""
    from explorer import import_files

    ours, theirs = float("inf"), float("inf")
    tok = encode = None
    for _ in range(REPS):
        dt, tok = timed(import_files, case.files)
        ours = min(ours, dt)
        dt, encode = timed(case.load_ref)
        theirs = min(theirs, dt)
    assert tok is not None and encode is not None
    same = tok.encode(text) == encode(text)
    ratio = ours / theirs
    size = sum(map(len, case.files.values()))
    met = "met" if ratio <= TARGET_RATIO else "NOT met"
    return (
        f"{case.label:<36} ({size:>9,} bytes) ours {fmt_s(ours):>9}  {case.reference} {fmt_s(theirs):>9}  "
        f"ratio {ratio:5.2f} (target <= {TARGET_RATIO}: {met}); ids identical: {yes_no(same)}"
    )


def body(out: Printer) -> None:
    text = _text()
    out(f"file bytes to a tokenizer ready to encode, best of {REPS} each, interleaved; ids on {len(text):,} characters")
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", "")
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(Path(tmp)):
            out(measure(case, text))


if __name__ == "__main__":
    bench_main("imports", __doc__, body)
