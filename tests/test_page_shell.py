"""Every page's document carries the app's script (explorer/ui/page_shell.py): the middleware
``app.py`` hands to ``st.App`` puts it into each HTML page a Starlette app sends, gzipped or
not, and leaves every other answer as it was. Driven here over a real Starlette app serving a
folder (as Streamlit serves its index.html); what the script does in a browser is checked in
tests/test_browser_bidi.py and tests/test_browser_restart.py."""

from __future__ import annotations

import gzip

from asgicall import call
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import FileResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from streamlit import config

from explorer.ui.nav import url_paths
from explorer.ui.page_shell import CONNECT_SCRIPT, PAGE_SCRIPT, RESTART_MESSAGE, PageScriptMiddleware

PAGE = "<!DOCTYPE html><html><head><title>page</title></head><body>" + "<p>text</p>" * 200 + "</body></html>"


def served(folder, **options) -> Starlette:
    """A Starlette app serving ``folder`` (its index.html for any other path, as Streamlit does),
    gzipping what it may, with the page script's middleware outermost, as ``st.App`` stacks a
    user's middleware (``options``: the middleware's)."""
    (folder / "index.html").write_text(PAGE)
    (folder / "data.json").write_text('{"a": "' + "x" * 2000 + '"}')

    async def index(_request):
        return FileResponse(folder / "index.html")

    return Starlette(
        routes=[Mount("/static", app=StaticFiles(directory=folder, html=True)), Route("/{path:path}", index)],
        middleware=[Middleware(PageScriptMiddleware, **options), Middleware(GZipMiddleware, minimum_size=100)],
    )


def get(app, path: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    """One request through the ASGI app: its status, headers and (decompressed if gzipped) body."""
    status, head, body = call(app, path, method=method, headers=headers)
    if head.get("content-encoding") == "gzip":
        body = gzip.decompress(body)
    return status, head, body


def test_every_html_page_carries_the_script_before_anything_else_runs_gzipped_or_not(tmp_path):
    app = served(tmp_path)
    for path, accept in (("/", "identity"), ("/static/index.html", "gzip, deflate, br")):
        status, head, body = get(app, path, headers={"accept-encoding": accept})
        page = body.decode()
        assert status == 200
        assert page.startswith("<!DOCTYPE html><html><head><script>" + PAGE_SCRIPT + "</script><title>page</title>")
        assert page.endswith("</body></html>") and page.count("<p>text</p>") == 200
        assert int(head["content-length"]) == len(body)  # the length of the page as sent
        assert "etag" not in head and "last-modified" not in head  # never revalidated against the file
        assert RESTART_MESSAGE in page and "pushState" in page


def test_other_answers_pass_as_they_were(tmp_path):
    app = served(tmp_path)
    status, head, body = get(app, "/static/data.json", headers={"accept-encoding": "gzip"})
    assert status == 200 and head["content-encoding"] == "gzip" and body.startswith(b'{"a": "xxx')
    assert b"script" not in body
    status, head, body = get(app, "/", method="HEAD")  # a HEAD: the file's own headers, no body
    assert status == 200 and body == b"" and int(head["content-length"]) == len(PAGE)
    # a revalidation (from a browser that kept the page from before): the 304 stays bodiless
    status, head, body = get(app, "/static/index.html", headers={"if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT"})
    assert status == 304 and body == b""


def test_a_page_of_the_app_names_its_servers_address_and_no_other_path_does(tmp_path, monkeypatch):
    """The app's pages (the registry's paths, by default) get the script that names the server's
    address (the page's less its last segment), so that Streamlit does not first ask the page's
    own path for its health; the root, an unknown path and a page outside the server's base path
    do not (Streamlit's own guess stays right there)."""
    assert url_paths() == ["Home", "Corpus", "Train", "Playground", "Compare", "Class", "Fairness", "Variants"]

    def connects(app, path: str) -> bool:
        status, _head, body = get(app, path, headers={"accept-encoding": "gzip"})
        page = body.decode()
        assert status == 200 and page.count(PAGE_SCRIPT) == 1
        return CONNECT_SCRIPT in page

    app = served(tmp_path)  # the registry's pages
    assert all(connects(app, f"/{name}") for name in url_paths())
    assert connects(app, "/Train/") and connects(app, "/Play%67round")
    assert not connects(app, "/") and not connects(app, "/Nope") and not connects(app, "/Train/more")
    monkeypatch.setattr(config, "get_option", lambda name: "bpe" if name == "server.baseUrlPath" else None)
    app = served(tmp_path, pages=["Train"])
    assert connects(app, "/bpe/Train") and not connects(app, "/Train") and not connects(app, "/bpe/")
