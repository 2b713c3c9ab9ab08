"""One request through an ASGI app in this process, without a server: what the middleware tests
(tests/test_page_shell.py, tests/test_assets.py) send their apps."""

from __future__ import annotations

import asyncio

__all__ = ["call"]


def call(app, path: str, *, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    """The app's answer to one request: its status, headers (names in lower case) and body as
    sent (still encoded, if it was)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict] = []
    asked: list[bool] = []

    async def receive():
        if not asked:  # the request's (empty) body, then nothing until the response is done
            asked.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    head = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], head, body
