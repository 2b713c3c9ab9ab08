"""Tokenizers opened by their Hugging Face Hub id (``explorer.formats.hub``), in the CLI's
``--tokenizer`` and on the Playground, against a Hub on loopback (``tests/hubserver.py``) that
serves real files in the Hub's layout: Whisper's ``multilingual.tiktoken`` (vendored under
tests/data/whisper), a tokenizer.json our exporter wrote, and a tekken.json of Mistral's ranks
(``conftest.small_tekken``) beside a tokenizer.json, as Mistral's repositories hold them. No request leaves 127.0.0.1:
``HF_ENDPOINT`` names the local server, and huggingface_hub's own endpoint (read at its import,
used for its agent registry) is pointed there too."""

from __future__ import annotations

import gzip
import io
import json
import os
import socket
import subprocess
import sys

import pytest
import tiktoken
from conftest import ROOT, encode_view, open_importer, read_sample, small_tekken, unescaped
from hubserver import FakeHub, Repo
from streamlit.testing.v1 import AppTest
from tiktoken.load import load_tiktoken_bpe
from tokenizers import Tokenizer as HFTokenizer

from explorer import make_config, train
from explorer.cli import main
from explorer.errors import FormatError, HubError
from explorer.formats.exporters import export_files
from explorer.formats.hub import fetch_files, open_hub
from explorer.formats.importers import import_files
from explorer.ui.state import CorpusChoice

APP = str(ROOT / "app.py")
PLAYGROUND = "pages/3_Playground.py"
R50K_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""  # tiktoken's r50k_base
HOSTILE = (
    "Price: 1234567 or 3.14159, in 2024!!  \n\n\t  tabs\t\tand   spaces   \r\n"
    "emoji 👩‍👩‍👧‍👦 🇯🇵 ✊🏽 中文分词，日本語、한국어. हिन्दी १२३४ العربي ١٢٣٤٥ مُحَمَّد việc gelecektedir"
)
TOKEN = "hf_test_token_for_the_gated_fixture"


def small_json() -> bytes:
    """A tokenizer.json as our exporter writes it (120 merges of the gpt4 preset on the UDHR)."""
    tok = train(read_sample("udhr_en.txt")[:20_000], make_config("gpt4", num_merges=120)).tokenizer()
    data = export_files(tok, "hf")["tokenizer.json"]
    return data.encode() if isinstance(data, str) else data


def wordpiece_json() -> bytes:
    from tokenizers import models

    return HFTokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]")).to_str().encode()


@pytest.fixture(scope="module")
def hub():
    whisper = gzip.decompress((ROOT / "tests" / "data" / "whisper" / "multilingual.tiktoken.gz").read_bytes())
    small = small_json()
    server = FakeHub(
        {
            "openai/whisper-tiny": Repo({"multilingual.tiktoken": whisper, "README.md": b"# whisper\n"}),
            "explorer-tests/small": Repo({"tokenizer.json": small, "config.json": b"{}", "merges.txt": b""}),
            "meta-llama/gated": Repo({"tokenizer.json": small}, token=TOKEN),
            "mistralai/tekken": Repo({"tekken.json": small_tekken(), "tokenizer.json": small, "params.json": b"{}"}),
            "mistralai/weights-only": Repo({"params.json": b"{}", "config.json": b"{}"}),
            "google-bert/wordpiece": Repo({"tokenizer.json": wordpiece_json()}),
        }
    )
    yield server
    server.close()


@pytest.fixture
def hub_env(hub, tmp_path, monkeypatch) -> FakeHub:
    """The local Hub, an empty Hub cache of this test's own, no token, online."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    # huggingface_hub read HF_ENDPOINT at its import (in this process, perhaps before this test):
    # its constants as that import would have made them, so that its own requests (its agent
    # registry) go to the local Hub too; and no token stored in the user's home is sent
    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "AGENT_HARNESSES_PATH", str(tmp_path / "hf-home" / "agents.json"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf-home" / "token"))
    real = socket.getaddrinfo

    def loopback_only(host, *args, **kwargs):  # a request meant for anywhere else fails loudly
        assert host in ("127.0.0.1", "localhost", "::1"), f"a request to {host!r} left loopback"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)
    return hub


def closed_port() -> str:
    """An endpoint on loopback that nothing listens on (the port was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    return main(list(args), out=out, err=err), out.getvalue(), err.getvalue()


# ---- the CLI -------------------------------------------------------------------------------------
def test_encode_by_hub_id_gives_tiktokens_ids_on_whispers_own_rank_file(hub_env, tmp_path):
    code, out, err = cli("encode", "--tokenizer", "openai/whisper-tiny", "--pretokenizer", "gpt2", "--text", HOSTILE)
    assert (code, err) == (0, "")
    table = tmp_path / "multilingual.tiktoken"
    table.write_bytes(hub_env.repos["openai/whisper-tiny"].files["multilingual.tiktoken"])
    ref = tiktoken.Encoding(
        "whisper", pat_str=R50K_PAT, mergeable_ranks=load_tiktoken_bpe(str(table)), special_tokens={}
    )
    assert json.loads(out)["ids"] == ref.encode_ordinary(HOSTILE)
    assert hub_env.fetched("multilingual.tiktoken") >= 1


def test_a_mistral_repository_opens_by_its_tekken_json_with_tekkenizers_ids(hub_env, tmp_path):
    """tekken.json is chosen over the tokenizer.json beside it, and read as Tekkenizer reads it."""
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    report = open_hub("mistralai/tekken")
    assert report.format == "tekken"
    assert report.notes[0].startswith("read tekken.json of mistralai/tekken from the Hub, commit ")
    path = tmp_path / "tekken.json"
    path.write_bytes(hub_env.repos["mistralai/tekken"].files["tekken.json"])
    assert report.tokenizer.encode(HOSTILE) == Tekkenizer.from_file(path).encode(HOSTILE, bos=False, eos=False)
    got = [path for method, path in hub_env.requests if method == "GET" and "/mistralai/tekken/" in path]
    assert got and all(path.endswith("/tekken.json") for path in got)  # the tokenizer.json beside it not fetched


def test_the_cli_reads_HF_ENDPOINT_and_HF_HUB_CACHE_from_its_environment_and_gives_hfs_ids(hub, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE"))}
    env.update(HF_ENDPOINT=hub.url, HF_HUB_CACHE=str(tmp_path / "cache"), HF_HOME=str(tmp_path / "home"))
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "encode", "--tokenizer", "explorer-tests/small", "--text", HOSTILE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (run.returncode, run.stderr) == (0, "")
    ref = HFTokenizer.from_str(hub.repos["explorer-tests/small"].files["tokenizer.json"].decode())
    assert json.loads(run.stdout)["ids"] == ref.encode(HOSTILE).ids
    snapshot = (
        tmp_path / "cache" / "models--explorer-tests--small" / "snapshots" / hub.repos["explorer-tests/small"].commit
    )
    assert [p.name for p in snapshot.iterdir()] == ["tokenizer.json"]  # the chosen file alone, in the Hub's cache


def expected_failure(case: str, hub: FakeHub) -> str:
    if case == "missing":
        return "no repository nobody/missing on the Hub at HF_ENDPOINT (if it is private, set HF_TOKEN to a token that can read it)"
    if case == "gated":
        return (
            "meta-llama/gated is a gated repository (HF_TOKEN is not set): accept its conditions on its Hub page, "
            "then set HF_TOKEN to an access token of that account"
        )
    if case == "no tokenizer file":
        return (
            "mistralai/weights-only holds no tokenizer file read here: looked for tekken.json, tokenizer.json, "
            "vocab.json + merges.txt, a .tiktoken file or tokenizer.model"
        )
    if case == "revision":
        return "explorer-tests/small has no revision 'v9' on the Hub at HF_ENDPOINT"
    with pytest.raises(FormatError) as refused:
        import_files({"tokenizer.json": hub.repos["google-bert/wordpiece"].files["tokenizer.json"]})
    return str(refused.value)


FAILURES = {
    "missing": ["nobody/missing"],
    "gated": ["meta-llama/gated"],
    "no tokenizer file": ["mistralai/weights-only"],
    "revision": ["explorer-tests/small", "--revision", "v9"],
    "refused by the importer": ["google-bert/wordpiece"],
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_each_failure_is_one_line_on_stderr_and_exit_2(hub_env, case):
    code, out, err = cli("encode", "--tokenizer", *FAILURES[case], "--text", "x")
    assert (code, out) == (2, "")
    assert err == f"python -m explorer: error: {expected_failure(case, hub_env)}\n"
    assert (
        hub_env.url.removeprefix("http://") not in err and "127.0.0.1" not in err
    )  # a mirror's host and port are the operator's


def test_an_unreachable_hub_is_one_line_and_a_cached_repository_still_opens(hub_env, monkeypatch):
    first = open_hub("explorer-tests/small")
    assert first.notes[0].startswith("read tokenizer.json of explorer-tests/small from the Hub, commit ")
    asked = len(hub_env.requests)
    down = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", down)
    again = open_hub("explorer-tests/small")  # from the Hub's cache on disk
    assert again.tokenizer.merges == first.tokenizer.merges
    assert again.notes[0].startswith("read tokenizer.json of explorer-tests/small from the local cache, commit ")
    assert again.notes[0].endswith(", as the Hub at HF_ENDPOINT cannot be reached (ConnectError)")
    code, out, err = cli("scan", "--tokenizer", "openai/whisper-tiny", "--pretokenizer", "gpt2")  # never fetched
    assert (code, out) == (2, "")
    assert err.startswith("python -m explorer: error: openai/whisper-tiny cannot be fetched: the Hub at HF_ENDPOINT ")
    assert err.endswith("and no tokenizer file of it is in the local cache (open it once while online)\n")
    assert err.count("\n") == 1
    monkeypatch.setenv("HF_ENDPOINT", hub_env.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # offline mode: the cache alone, not one request
    assert open_hub("explorer-tests/small").notes[0].endswith(", as offline mode is on (HF_HUB_OFFLINE)")
    assert len(hub_env.requests) == asked


def test_a_gated_repository_opens_with_HF_TOKEN_and_says_when_the_token_has_no_access(hub_env, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_another_accounts_token")
    code, _out, err = cli("encode", "--tokenizer", "meta-llama/gated", "--text", "x")
    assert code == 2 and "(HF_TOKEN is set but its account has no access)" in err
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    code, out, err = cli("encode", "--tokenizer", "meta-llama/gated", "--text", HOSTILE)
    ref = HFTokenizer.from_str(hub_env.repos["meta-llama/gated"].files["tokenizer.json"].decode())
    assert (code, err, json.loads(out)["ids"]) == (0, "", ref.encode(HOSTILE).ids)


def test_files_over_the_limit_are_refused_before_they_are_fetched(hub_env):
    data = hub_env.repos["explorer-tests/small"].files["tokenizer.json"]
    before = hub_env.fetched("tokenizer.json")
    with pytest.raises(HubError) as refused:
        fetch_files("explorer-tests/small", max_bytes=len(data) - 1)
    assert str(refused.value) == (
        f"explorer-tests/small's tokenizer files (tokenizer.json) hold {len(data):,} bytes; "
        f"the limit here is {len(data) - 1:,}"
    )
    assert hub_env.fetched("tokenizer.json") == before  # nothing downloaded
    assert fetch_files("explorer-tests/small", max_bytes=len(data)).files == {"tokenizer.json": data}


def test_the_hub_options_are_refused_without_a_hub_id():
    code, out, err = cli("encode", "--tokenizer", "gpt2", "--revision", "main", "--text", "x")
    assert (code, out) == (2, "")
    assert (
        err
        == "python -m explorer: error: --revision is used only with a Hugging Face Hub repository id as --tokenizer\n"
    )


# ---- the Playground --------------------------------------------------------------------------------
def open_on_playground(at: AppTest, repo_id: str, *, revision: str = "") -> AppTest:
    open_importer(at)
    at.text_input(key="w_hub_id").input(repo_id)
    at.text_input(key="w_hub_rev").input(revision)
    at.button(key="hub_go").click().run()
    assert not at.exception, at.exception
    return at


def test_the_playground_opens_a_hub_id_shows_its_tokens_and_says_why_another_does_not_open(hub_env, monkeypatch):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["corpus_choice"] = CorpusChoice(samples=("udhr_en.txt",))
    at.run()
    at.switch_page(PLAYGROUND).run()
    at.text_area(key="w_play_text").input(HOSTILE).run()
    open_on_playground(at, "explorer-tests/small")
    (ok,) = at.success
    assert unescaped(ok.value).startswith("Imported 'explorer-tests/small': format Hugging Face tokenizer.json")
    assert "Read tokenizer.json of explorer-tests/small from the Hub, commit " in unescaped(ok.value)
    ref = HFTokenizer.from_str(hub_env.repos["explorer-tests/small"].files["tokenizer.json"].decode())
    (panel,) = [p for p in encode_view(at) if p.name == "imported: explorer-tests/small (hf)"]
    assert panel.ids == ref.encode(HOSTILE).ids
    assert panel.chips.count('class="bpe-chip') >= len(panel.ids) > 0  # its tokens drawn
    # a revision is user text: shown as typed, never as Markdown
    open_on_playground(at, "explorer-tests/small", revision="**v9**")
    (error,) = at.error
    assert unescaped(error.value) == "explorer-tests/small has no revision '**v9**' on the Hub at HF_ENDPOINT"
    assert "\\*\\*v9\\*\\*" in error.value  # escaped: no bold
    open_on_playground(at, "nobody/missing")
    assert [unescaped(e.value) for e in at.error] == [expected_failure("missing", hub_env)]
    monkeypatch.setenv("HF_ENDPOINT", closed_port())
    open_on_playground(at, "meta-llama/gated")
    (error,) = at.error
    assert unescaped(error.value).startswith("meta-llama/gated cannot be fetched: the Hub at HF_ENDPOINT cannot be")
