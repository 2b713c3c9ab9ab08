"""Streamlit's own code goes out gzipped to a browser that takes it (``explorer/ui/assets.py``):
the same bytes once decompressed, a weak ETag that still answers 304, and nothing else touched
(other paths, fonts, ranges, browsers that do not take gzip)."""

from __future__ import annotations

import gzip
import json
import time
import urllib.request
from typing import NamedTuple

import pytest
from appserver import app_process
from asgicall import call
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from explorer.ui import assets
from explorer.ui.assets import CompressedAssetsMiddleware

SCRIPT = b"export function merge(pair, word) { return word.replace(pair, pair.join('')); }\n" * 200


class Served(NamedTuple):
    app: CompressedAssetsMiddleware  # over static files
    script: bytes  # ``/static/js/merge.js``: each test's own (compressed bytes are kept process-wide, by content)


@pytest.fixture
def served(tmp_path) -> Served:
    script = SCRIPT + f"// {tmp_path.name}\n".encode()
    (tmp_path / "js").mkdir()
    (tmp_path / "js" / "merge.js").write_bytes(script)
    (tmp_path / "js" / "tiny.js").write_bytes(b"export default 1;\n")
    (tmp_path / "font.woff2").write_bytes(bytes(range(256)) * 20)
    app = Starlette(
        routes=[
            Route("/page", lambda request: PlainTextResponse("merge " * 500)),
            Mount("/static", app=StaticFiles(directory=tmp_path)),
        ]
    )
    return Served(CompressedAssetsMiddleware(app), script)


GZIP = {"Accept-Encoding": "gzip, deflate, br, zstd"}  # what Chromium asks with


def test_a_script_goes_out_as_it_is_then_once_compressed_gzipped_with_its_length_a_weak_etag_and_vary(served):
    status, headers, body = call(served.app, "/static/js/merge.js", headers=GZIP)
    assert (status, body, "content-encoding" in headers) == (200, served.script, False)  # no answer waits for gzip
    assert assets.wait_compressed(30)
    status, headers, body = call(served.app, "/static/js/merge.js", headers=GZIP)
    assert status == 200 and headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
    assert (
        gzip.decompress(body) == served.script and int(headers["content-length"]) == len(body) < len(served.script) / 10
    )
    assert headers["etag"].startswith('W/"')
    # the weak ETag still revalidates: the browser's copy is current
    status, _, body = call(served.app, "/static/js/merge.js", headers={**GZIP, "If-None-Match": headers["etag"]})
    assert status == 304 and body == b""


def test_the_widgets_code_a_page_asked_for_is_compressed_together_a_moment_later():
    files = [SCRIPT + f"// widget {i}\n".encode() for i in range(30)]
    assert [assets.compressed(data) for data in files] == [None] * 30  # sent as they are
    # one wait for the page that asked (_LATER_S: 1 s), then all of them: not a second each
    assert assets.wait_compressed(15)
    assert all(gzip.decompress(assets.compressed(data) or b"") == data for data in files)


def test_what_a_browser_that_takes_no_gzip_or_asks_a_range_gets_is_as_it_was(served):
    for asked in ({}, {"Accept-Encoding": "br"}, {"Accept-Encoding": "gzip;q=0, br"}):
        status, headers, body = call(served.app, "/static/js/merge.js", headers=asked)
        assert (status, body, "content-encoding" in headers) == (200, served.script, False), asked
    status, headers, body = call(served.app, "/static/js/merge.js", headers={**GZIP, "Range": "bytes=0-9"})
    assert (status, body, "content-encoding" in headers) == (206, served.script[:10], False)


def test_fonts_tiny_files_other_paths_and_head_pass_as_they_were(served):
    _, headers, body = call(served.app, "/static/font.woff2", headers=GZIP)
    assert "content-encoding" not in headers and body == bytes(range(256)) * 20
    _, headers, body = call(served.app, "/static/js/tiny.js", headers=GZIP)
    assert "content-encoding" not in headers and body == b"export default 1;\n"
    _, headers, body = call(served.app, "/page", headers=GZIP)
    assert "content-encoding" not in headers and body == b"merge " * 500
    status, headers, _ = call(served.app, "/static/js/merge.js", headers=GZIP, method="HEAD")
    assert status == 200 and "content-encoding" not in headers


def test_the_served_app_sends_every_file_a_page_names_as_the_same_bytes_in_a_third_of_the_size():
    with app_process() as (url, _proc):
        warm: dict = {}
        deadline = time.monotonic() + 120
        while not warm.get("ready") and time.monotonic() < deadline:
            with urllib.request.urlopen(f"{url}/warm", timeout=30) as answer:
                warm = json.loads(answer.read())
            time.sleep(0.2)
        assert "assets" in warm["done"], warm  # the files every page names, compressed at start-up
        with urllib.request.urlopen(f"{url}/Train", timeout=30) as answer:
            document = answer.read().decode()
        names = assets.named_files(document)
        plain_total = sent_total = 0
        for name in names:
            with urllib.request.urlopen(f"{url}/{name}", timeout=30) as answer:
                plain = answer.read()
            request = urllib.request.Request(f"{url}/{name}", headers=GZIP)
            with urllib.request.urlopen(request, timeout=30) as answer:
                sent, encoding = answer.read(), answer.headers.get("Content-Encoding")
            assert (gzip.decompress(sent) if encoding == "gzip" else sent) == plain, name
            plain_total, sent_total = plain_total + len(plain), sent_total + len(sent)
    assert len(names) > 20 and sent_total < plain_total * 0.4, (len(names), sent_total, plain_total)
