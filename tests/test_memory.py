"""Memory per session, measured in a fresh process (peak RSS), so one student's big corpus
cannot take the server's memory.

Not a ``load`` test: a process's high-water mark (VmHWM) and tracemalloc's count are its own,
whatever else runs beside it, so these run with the rest of the suite."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT

# Train a few merges on MIB MiB of text without pre-tokenization (the bytes preset: one
# position per byte, the trainer's worst case) and report its memory high-water mark.
_PROBE = """
import json, re, sys
sys.path.insert(0, {root!r})

def high_water_mb():
    # VmHWM starts afresh with this program; ru_maxrss would carry the forking parent's peak
    with open("/proc/self/status") as f:
        return int(re.search(r"VmHWM:\\s+(\\d+) kB", f.read()).group(1)) / 1024

from explorer import Trainer, corpus_config
from explorer.stages.pipeline import count_words
size = {mib} * 2**20
text = (open({corpus!r}, encoding="utf-8").read() * 40)[:size]
base = high_water_mb()
config = corpus_config("bytes")
trainer = Trainer(count_words((text,), config), config, top_k=50)
trainer.advance(5)
peak = high_water_mb()
print(json.dumps({{"merges": len(trainer.records), "training_mb": peak - base, "peak_mb": peak}}))
"""


def _training_mb(mib: int) -> dict:
    code = _PROBE.format(root=str(ROOT), mib=mib, corpus=str(ROOT / "sample_corpora" / "english_tiny_shakespeare.txt"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_a_20_mib_corpus_without_pre_tokenization_trains_in_under_600_mb():
    # the whole process, interpreter and text included. As lists of int objects the trainer
    # took ~150 bytes a position (20 MiB: over 3 GB); with flat arrays for the positions and for
    # each pair's positions (sorted as they arrive) it takes ~22
    result = _training_mb(20)
    assert result["merges"] == 5
    assert result["peak_mb"] < 600, result


def test_a_finished_trainer_lets_its_position_index_go():
    import gc
    import tracemalloc

    from conftest import read_sample

    from explorer import Trainer, corpus_config
    from explorer.stages.pipeline import count_words

    config = corpus_config("bytes").replace(num_merges=20, vocab_size=None)
    words = count_words((read_sample("udhr_ru.txt"),), config)
    gc.collect()
    tracemalloc.start()
    try:
        trainer = Trainer(words, config, top_k=50)
        trainer.advance(20)
        training = tracemalloc.get_traced_memory()[0]
        assert trainer.step() is None and trainer.stop_reason == "num_merges"
        gc.collect()
        finished = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # one position a byte: 22 KB of text held ~0.5 MB of index; the merges and the log are tiny
    assert finished < training / 10
    assert len(trainer.merges) == 20 and trainer.tokenizer().encode("the") and trainer.peek() == ()
