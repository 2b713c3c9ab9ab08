"""The worker pool: values and errors come back, progress is seen while a job runs, and a job
that is cancelled, killed or over its memory budget gives its caller a sentence while the next
job runs in a fresh worker."""

from __future__ import annotations

import os
import time

import pytest

from explorer.errors import ConfigError
from explorer.serving.workers import JobCancelled, JobError, Pool


# ---- jobs (module-level: a worker imports them by name) ----
def add(a: int, b: int) -> int:
    return a + b


def pid() -> int:
    return os.getpid()


def counts_slowly(n: int, *, progress) -> int:
    for i in range(n):
        progress(i / n, f"{i} of {n}")
        time.sleep(0.02)
    return n


def sleeps(seconds: float) -> str:
    time.sleep(seconds)
    return "woke"


def refuses() -> None:
    raise ConfigError("the custom regex is empty")


def breaks() -> None:
    raise KeyError("boom")


def hoards(mib: int) -> int:
    block = [bytearray(2**20) for _ in range(mib)]
    return len(block)


_KEPT: list = []


def fills_memory_to_the_last_byte() -> None:
    """Takes every byte the budget allows and keeps it, so that even the worker's message that
    it ran out cannot be sent (Python needs memory to say anything)."""
    for size in (2**20, 2**12, 2**6):
        try:
            while True:
                _KEPT.append(bytearray(size))
        except MemoryError:
            pass
    raise MemoryError


@pytest.fixture
def pool():
    p = Pool(workers=1, memory_mib=400)
    yield p
    p.shutdown()


def test_a_job_returns_its_value_from_another_process(pool):
    assert pool.run(add, 2, 3) == 5
    assert pool.run(pid) != os.getpid()


def test_progress_is_seen_while_the_job_runs(pool):
    job = pool.submit(counts_slowly, 40, progress=True)
    seen = set()
    while not job.done():
        seen.add(job.progress)
        time.sleep(0.01)
    assert job.result() == 40 and job.state == "done"
    texts = {text for _, text in seen}
    assert len(texts) >= 3 and all(0.0 <= frac < 1.0 for frac, _ in seen)
    assert job.peak_mib is not None and job.peak_mib > 1


def test_the_jobs_own_error_comes_back_as_it_was_raised(pool):
    with pytest.raises(ConfigError, match="the custom regex is empty"):
        pool.run(refuses)
    with pytest.raises(JobError, match="the job failed: KeyError: 'boom'"):
        pool.run(breaks)
    assert pool.run(add, 1, 1) == 2  # the same worker goes on
    assert pool.replaced == 0


def test_a_worker_killed_mid_job_gives_a_message_and_the_next_job_runs(pool):
    worker_pid = pool.run(pid)
    job = pool.submit(sleeps, 30)
    while job.state != "running":
        time.sleep(0.01)
    os.kill(worker_pid, 9)
    with pytest.raises(JobError, match=r"was killed \(signal 9\) before it finished; a new worker has taken its place"):
        job.result(timeout=10)
    assert job.state == "failed"
    assert pool.run(add, 2, 2) == 4
    assert pool.run(pid) != worker_pid and pool.replaced == 1


def test_stop_cancels_a_running_job_within_a_second(pool):
    job = pool.submit(sleeps, 30)
    while job.state != "running":
        time.sleep(0.01)
    t0 = time.monotonic()
    job.cancel()
    with pytest.raises(JobCancelled):
        job.result(timeout=10)
    assert time.monotonic() - t0 < 1.0
    assert pool.run(add, 3, 3) == 6


def test_a_queued_job_cancelled_never_runs(pool):
    first = pool.submit(sleeps, 0.3)
    second = pool.submit(add, 1, 2)
    second.cancel()
    assert first.result(timeout=10) == "woke"
    with pytest.raises(JobCancelled, match="before it started"):
        second.result(timeout=10)


def test_a_job_over_its_memory_budget_is_stopped_with_a_message(pool):
    with pytest.raises(JobError, match="needed more memory than a worker may use"):
        pool.run(hoards, 2000)
    assert pool.run(hoards, 20) == 20  # a fresh worker, with the same budget
    assert pool.replaced == 1


def test_a_worker_out_of_memory_to_its_last_byte_is_still_said_to_be_over_budget(pool):
    with pytest.raises(JobError, match="needed more memory than a worker may use"):
        pool.run(fills_memory_to_the_last_byte)
    assert pool.run(add, 2, 3) == 5


def test_a_trainer_sent_to_a_worker_comes_back_trained_with_the_same_merges(pool):
    from conftest import read_sample

    from explorer.bpe.config import corpus_config
    from explorer.bpe.trainer import Trainer, train_to_end
    from explorer.stages.pipeline import count_words

    config = corpus_config("gpt2", merges=300)
    words = count_words((read_sample("udhr_hi.txt"),), config)
    job = pool.submit(train_to_end, Trainer(words, config, top_k=0, full_records=0), progress=True)
    trained = job.result(timeout=120)
    here = Trainer(words, config, top_k=0, full_records=0).run()
    assert [r.token for r in trained.records] == [r.token for r in here.records] and len(here.records) == 300
    assert trained.done and job.progress == (1.0, "300 of 300 merges")
    assert trained.tokenizer().encode("सभी मनुष्यों") == here.tokenizer().encode("सभी मनुष्यों")


def test_an_import_of_200000_ranks_read_in_a_worker_encodes_as_tiktoken_does(pool, tmp_path):
    import gzip

    import tiktoken
    from conftest import ROOT, read_sample
    from tiktoken.load import load_tiktoken_bpe

    from explorer.formats.importers import import_report
    from explorer.stages.pretokenizers import O200K_PATTERN

    path = ROOT / "explorer" / "data" / "pretrained" / "tiktoken" / "o200k_base.tiktoken.gz"
    # one rank fewer than the bundled table, so that it is read as a stranger's file (merges recovered)
    lines = gzip.decompress(path.read_bytes()).splitlines()[:-1]
    data = b"\n".join(lines) + b"\n"
    report = pool.run(import_report, {"mine.tiktoken": data}, pretokenizer="o200k")
    tok = report.tokenizer
    (tmp_path / "mine.tiktoken").write_bytes(data)
    ranks = load_tiktoken_bpe(str(tmp_path / "mine.tiktoken"))
    enc = tiktoken.Encoding("mine", pat_str=O200K_PATTERN, mergeable_ranks=ranks, special_tokens={})
    text = read_sample("udhr_hi.txt")[:3000] + read_sample("mixed_emoji_multilingual.txt")[:3000]
    assert tok.encode(text) == enc.encode_ordinary(text)
    assert len(tok.merge_rules()) > 100_000  # the lazy split table, built after the trip back
