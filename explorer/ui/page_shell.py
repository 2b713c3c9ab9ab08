"""What every page's document carries before Streamlit's own script: a small script, put into
the HTML page the server sends (``index.html``, the same for every page) by
:class:`PageScriptMiddleware`, which ``app.py`` hands to ``st.App``. It runs before Streamlit's
bundle, on every page load, without an element in any page:

- **Back leaves the page.** Streamlit writes ``st.query_params`` into the address bar with
  ``history.pushState``: every Step on the Train page (its step is in the link) added a history
  entry, and Back did nothing for (steps + 1) presses. Streamlit 1.67 has no option to replace
  instead, so the script makes a push that changes only the query (the same page) replace the
  entry; a change of page (another path) still pushes, so Back goes to the page before.
- **A restart reads as one.** While the server does not answer (a restart), Streamlit shows its
  developer's message ("Is Streamlit still running? ... ``streamlit run yourscript.py``") after a
  few seconds. The script shows :data:`RESTART_MESSAGE` instead, as soon as the connection is
  lost, hides Streamlit's dialog, and takes its message away when the page is connected again
  (Streamlit reconnects by itself and redraws the page).
- **A page connects at once.** Streamlit guesses where its server is from the page's address: at
  ``/Train`` it asks ``/Train/_stcore/health`` first, is told 404, waits its retry delay (about a
  tenth of a second) and only then asks ``/_stcore/health``: every first load of a page other than
  Home paid that wait. The middleware knows which pages are the app's (the registry's paths,
  :func:`explorer.ui.nav.url_paths`), so a request for one gets :data:`CONNECT_SCRIPT` too: the
  server is at the page's address less its last segment (``window.__streamlit.BACKEND_BASE_URL``,
  which Streamlit reads for a host that embeds it).

Nothing here is needed for the app to work: a page whose document lacks the script (another
server in front that rewrites pages) behaves as Streamlit does.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Sequence
from urllib.parse import unquote

__all__ = [
    "RESTART_MESSAGE",
    "PAGE_SCRIPT",
    "CONNECT_SCRIPT",
    "PageScriptMiddleware",
    "with_page_script",
    "page_of",
    "base_path",
    "rewrite_answers",
    "Headers",
]

Headers = list[tuple[bytes, bytes]]  # an ASGI answer's headers: [(name, value), ...]

RESTART_MESSAGE = "The class server is restarting — this page reconnects by itself"

# Streamlit's own connection-error dialog is a modal whose heading says "Connection error"; the
# script marks it (data-bpe-restart) so that the style below hides it and its backdrop.
_SCRIPT = r"""
(() => {
  if (window.__bpeShell) return;
  window.__bpeShell = true;

  // ---- Back leaves the page: a new query on the same page replaces the history entry ----
  const push = History.prototype.pushState;
  History.prototype.pushState = function (state, title, url) {
    try {
      if (url !== undefined && url !== null && new URL(url, location.href).pathname === location.pathname) {
        return this.replaceState(state, title, url);
      }
    } catch (e) { /* not a URL we can read: Streamlit's own push, unchanged */ }
    return push.call(this, state, title, url);
  };

  // ---- a restart: our sentence instead of Streamlit's developer message ----
  const MESSAGE = __MESSAGE__;
  const LOST = new Set(["PINGING_SERVER", "CONNECTING"]);  // Streamlit's states while it reconnects
  let connected = false;  // once connected, a lost connection is a restart (not the page's first load)
  let box = null;
  const style = document.createElement("style");
  style.textContent =
    "#bpe-restart{position:fixed;top:0;left:0;right:0;z-index:1000001;background:#fef3c7;color:#78350f;" +
    "border-bottom:2px solid #f59e0b;font:600 1.25rem/1.4 'Source Sans Pro',sans-serif;padding:.8rem 1.2rem;" +
    "text-align:center;}" +
    "html.bpe-restarting [data-bpe-restart]{display:none!important;}";
  document.head.appendChild(style);

  function markDialogs() {
    for (const dialog of document.querySelectorAll('[role="dialog"]')) {
      if (/^\s*Connection error/.test(dialog.textContent || "")) {
        // the modal's outermost layer (its backdrop too)
        let layer = dialog;
        while (layer.parentElement && layer.parentElement !== document.body) layer = layer.parentElement;
        layer.setAttribute("data-bpe-restart", "");
      }
    }
  }
  function show(lost) {
    document.documentElement.classList.toggle("bpe-restarting", lost);
    if (lost && !box) {
      box = document.createElement("div");
      box.id = "bpe-restart";
      box.setAttribute("role", "status");
      box.setAttribute("aria-live", "polite");
      box.textContent = MESSAGE;
      document.body.appendChild(box);
    } else if (!lost && box) {
      box.remove();
      box = null;
    }
  }
  function check() {
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app ? app.getAttribute("data-test-connection-state") : null;
    if (state === "CONNECTED") connected = true;
    const lost = connected && LOST.has(state);
    if (lost) markDialogs();
    show(lost);
  }
  new MutationObserver(check).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-test-connection-state"],
  });
})();
"""

PAGE_SCRIPT = _SCRIPT.replace("__MESSAGE__", json.dumps(RESTART_MESSAGE, ensure_ascii=False))

# sent with a page of the app's (``<base>/<page>``, its path as the server saw it): the server is
# at ``<base>/``, cut from the address the browser shows (a proxy in front may add a prefix)
CONNECT_SCRIPT = r"""
(() => {
  if (window.__streamlit !== undefined) return;  // a host that embeds the app set its own
  const path = location.pathname.replace(/\/+$/, "");
  window.__streamlit = {BACKEND_BASE_URL: location.origin + path.slice(0, path.lastIndexOf("/") + 1)};
})();
"""


def page_of(path: str, *, pages: Sequence[str], base: str = "") -> str | None:
    """The app's page a request's path names (one of ``pages``, under the server's ``base`` path),
    or None (the app's root, a path of Streamlit's own, an unknown page).

    >>> page_of("/Train", pages=["Train"]), page_of("/bpe/Train/", pages=["Train"], base="/bpe/")
    ('Train', 'Train')
    >>> page_of("/", pages=["Train"]), page_of("/Nope", pages=["Train"]), page_of("/Train", pages=["Train"], base="bpe")
    (None, None, None)
    """
    prefix = "/" + base.strip("/") if base.strip("/") else ""
    if not path.startswith(prefix + "/"):
        return None
    name = unquote(path[len(prefix) + 1 :].rstrip("/"))
    return name if name in pages else None


def with_page_script(page: bytes, *, at_page: bool = False) -> bytes:
    """The HTML page with :data:`PAGE_SCRIPT` (and :data:`CONNECT_SCRIPT`, ``at_page``: sent for
    one of the app's pages) as the first thing its ``<head>`` runs (or at its start, if it has
    none), so that it runs before any script of the page.

    >>> page = with_page_script(b"<html><head><title>x</title></head></html>")
    >>> page.startswith(b"<html><head><script>"), page.index(b"</script>") < page.index(b"<title>")
    (True, True)
    >>> b"BACKEND_BASE_URL" in page, b"BACKEND_BASE_URL" in with_page_script(page, at_page=True)
    (False, True)
    """
    tag = b"<script>" + (PAGE_SCRIPT + (CONNECT_SCRIPT if at_page else "")).encode() + b"</script>"
    at = page.find(b"<head>")
    if at < 0:
        return tag + page
    at += len(b"<head>")
    return page[:at] + tag + page[at:]


class PageScriptMiddleware:
    """ASGI middleware: an HTML page the app sends (``GET``, 200, ``text/html``) gets
    :data:`PAGE_SCRIPT` (:func:`with_page_script`); every other response passes as it is. A page
    that Streamlit gzipped (its pages other than the root are, for a browser that accepts it) is
    sent uncompressed, a few KB. The page's validators (ETag, Last-Modified) are dropped: they
    describe the file on disk, and a page revalidated against them after an update of the app
    would keep an old script."""

    def __init__(self, app, *, pages: Sequence[str] | None = None) -> None:
        self.app = app
        self._pages = None if pages is None else tuple(pages)

    @property
    def pages(self) -> tuple[str, ...]:
        """The app's pages' paths: as given, else the registry's (read at the first page sent, when
        the server runs: the registry's modules cache through Streamlit's runtime)."""
        if self._pages is None:
            from .nav import url_paths

            self._pages = tuple(url_paths())
        return self._pages

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return

        def rewrite(headers: Headers, page: bytes) -> tuple[Headers, bytes]:
            if _page_encoding(headers) == b"gzip":
                page = gzip.decompress(page)
            page = with_page_script(
                page, at_page=page_of(scope["path"], pages=self.pages, base=base_path()) is not None
            )
            dropped = (b"content-length", b"content-encoding", b"etag", b"last-modified")
            kept = [(k, v) for k, v in headers if k.lower() not in dropped]
            return [*kept, (b"content-length", str(len(page)).encode())], page

        await rewrite_answers(
            self.app, scope, receive, send, takes=lambda headers: _page_encoding(headers) is not None, rewrite=rewrite
        )


async def rewrite_answers(
    app,
    scope,
    receive,
    send,
    *,
    takes: Callable[[Headers], bool],
    rewrite: Callable[[Headers, bytes], tuple[Headers, bytes]],
) -> None:
    """Run the ASGI ``app`` on a request, each whole answer (200) whose headers it ``takes``
    held until all of it is there and sent as ``rewrite(headers, body)`` gives it back (the
    headers to send, Content-Length included, and the body); every other answer passes as it is."""
    start: dict | None = None
    body: list[bytes] = []

    async def hold(message) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            if message.get("status") == 200 and takes(message.get("headers", [])):
                start = message
                return
        elif message["type"] == "http.response.body" and start is not None:
            body.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            headers, whole = rewrite(list(start.get("headers", [])), b"".join(body))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": whole, "more_body": False})
            return
        await send(message)

    await app(scope, receive, hold)


def base_path() -> str:
    """The path the server serves the app under (Streamlit's ``server.baseUrlPath``; "" at the root)."""
    from streamlit import config

    return str(config.get_option("server.baseUrlPath") or "")


def _page_encoding(headers) -> bytes | None:
    """How an HTML page is encoded (``b"identity"`` or ``b"gzip"``), by its response headers;
    None for anything else (not HTML, or compressed some other way).

    >>> _page_encoding([(b"content-type", b"text/html; charset=utf-8")]), _page_encoding([(b"Content-Type", b"text/html"), (b"content-encoding", b"gzip")])
    (b'identity', b'gzip')
    >>> _page_encoding([(b"content-type", b"application/json")]), _page_encoding([(b"content-type", b"text/html"), (b"content-encoding", b"br")])
    (None, None)
    """
    values = {k.lower(): v.lower().strip() for k, v in headers}
    if not values.get(b"content-type", b"").startswith(b"text/html"):
        return None
    encoding = values.get(b"content-encoding", b"identity") or b"identity"
    return encoding if encoding in (b"identity", b"gzip") else None
