"""Every page that starts a worker job, with the workers' memory budget far too small for any job
(``BPE_EXPLORER_JOB_MIB``: here 16 MiB, a budget the worker runs out of as it receives its job):
each says in a sentence that the job needed more memory than a worker may use, never shows an
exception, and goes on (the Corpus page keeps the upload in its link).

AppTest sessions in this process, with the process's worker pool replaced by one under the tiny
budget. Each corpus is made unique (a marker line), so that no result cached by another test
spares the job."""

from __future__ import annotations

import base64
import uuid

import pytest
from conftest import ROOT, open_importer, read_sample, unescaped
from streamlit.testing.v1 import AppTest

from explorer.serving.store import default_store
from explorer.serving.workers import Pool
from explorer.ui import server
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
TIMEOUT = 120
OVER = "needed more memory than a worker may use on this server"


@pytest.fixture(autouse=True)
def tiny_budget(monkeypatch):
    """The process's worker pool, one worker under a 16 MiB budget (BPE_EXPLORER_JOB_MIB=16)."""
    monkeypatch.setenv("BPE_EXPLORER_JOB_MIB", "16")
    pool = Pool(1, memory_mib=16)
    monkeypatch.setattr(server, "_POOL", [pool])
    yield pool
    pool.shutdown()


def unique(text: str) -> str:
    return f"{text}\n{uuid.uuid4().hex}\n"


def big_tiktoken(ranks: int = 200_000) -> bytes:
    """A .tiktoken file of ``ranks`` ranks (~2.4 MB: read in a worker, whose reading needs far
    more than 16 MiB): every byte, then two- and three-byte tokens."""
    tokens = [bytes([b]) for b in range(256)]
    tokens += [bytes([a, b]) for a in range(256) for b in range(256)]
    tokens += [bytes([a, b, c]) for a in range(256) for b in range(256) for c in range(4)][: ranks - len(tokens)]
    return b"".join(base64.b64encode(token) + b" %d\n" % rank for rank, token in enumerate(tokens))


def said(at: AppTest) -> str:
    """Every message the page shows, as a reader sees it."""
    return " ".join(unescaped(m.value) for m in (*at.error, *at.warning, *at.info, *at.caption))


def says_over_budget(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert OVER in said(at), said(at)


def session(choice: CorpusChoice, page: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["corpus_choice"] = choice
    at.run()
    return at.switch_page(page).run()


def test_a_big_upload_over_the_budget_on_the_corpus_train_playground_and_class_pages(tiny_budget):
    text = unique(read_sample("english_tiny_shakespeare.txt"))  # 1.1 MB: counted in a worker
    digest = default_store().put(text.encode(), kind="corpus", name="big.txt")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["corpus"] = f"upload:{digest}"  # a link to the upload, opened on the Corpus page
    at.switch_page("pages/1_Corpus.py").run()
    says_over_budget(at)  # its statistics
    assert f"upload:{digest}" in at.query_params["corpus"]  # the page went on: the link names the upload
    at.switch_page("pages/2_Train.py").run()
    says_over_budget(at)  # its words are counted in a worker
    at.switch_page("pages/3_Playground.py").run()
    says_over_budget(at)
    at.radio(key="w_play_view").set_value("Char vs byte").run()
    says_over_budget(at)
    at.switch_page("pages/5_Class.py").run()
    at.button(key="class_start").click().run()
    says_over_budget(at)  # the room's trainer counts the corpus in a worker too


def test_training_without_step_records_over_the_budget_says_so_on_the_train_page(monkeypatch):
    monkeypatch.setenv("BPE_EXPLORER_STEP_MIB", "0.05")  # 200 KB is a big corpus here, counted in this process
    text = unique(read_sample("english_tiny_shakespeare.txt")[: 200 * 1024])
    at = session(CorpusChoice(samples=(), pasted=text), "pages/2_Train.py")
    assert not at.exception
    at.button(key="big_final").click().run()  # counted here (small), trained to the end in a worker
    says_over_budget(at)
    assert "Training did not finish" in said(at)


def test_a_comparison_over_the_budget_says_so_on_the_compare_page():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/4_Compare.py").run()
    at.multiselect(key="w_cmp_corpora").set_value(["udhr_en.txt", "udhr_ko.txt"])
    at.number_input(key="w_cmp_merges").set_value(100 + uuid.uuid4().int % 500)  # not memoized by another test
    at.button(key="FormSubmitter:w_cmp_form-Compare").click().run()
    says_over_budget(at)


def test_an_import_read_in_a_worker_over_the_budget_says_so_on_the_playground():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/3_Playground.py").run()
    (uploader,) = open_importer(at).file_uploader
    uploader.set_value([("big.tiktoken", big_tiktoken(), "application/octet-stream")])
    at.run()
    at.button(key="import_go").click().run()
    says_over_budget(at)
