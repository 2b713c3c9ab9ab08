"""A Hugging Face Hub on loopback for tests: repositories of fixture files served in the Hub's
URL layout, with the headers ``huggingface_hub`` reads (its ``file_download`` and
``utils/_http.hf_raise_for_status``):

    GET  /api/models/{owner}/{name}[/revision/{rev}]   model_info: {"id", "sha", "siblings": [{"rfilename", "size"}]}
    HEAD /{owner}/{name}/resolve/{rev}/{path}          ETag, X-Repo-Commit, Content-Length
    GET  /{owner}/{name}/resolve/{rev}/{path}          the file

and the Hub's refusals: 404 ``X-Error-Code: RepoNotFound`` (RepositoryNotFoundError),
``RevisionNotFound``, ``EntryNotFound`` (with the commit), and 401 ``GatedRepo`` on a gated
repository's files unless the request carries its token (GatedRepoError). Point huggingface_hub
at it with ``HF_ENDPOINT=hub.url``. Every request is logged in ``hub.requests``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple
from urllib.parse import unquote, urlsplit


class Repo(NamedTuple):
    files: dict[str, bytes]
    token: str | None = None  # gated: its files are served only to ``Authorization: Bearer <token>``

    @property
    def commit(self) -> str:
        """A commit hash made of the files, as the Hub's is of the tree."""
        h = hashlib.sha1()
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + self.files[name])
        return h.hexdigest()


class FakeHub:
    """The server, in a daemon thread of the test process; ``close()`` stops it."""

    def __init__(self, repos: dict[str, Repo]) -> None:
        self.repos = repos
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                hub._answer(self, body=True)

            def do_HEAD(self) -> None:
                hub._answer(self, body=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="fake-hub", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fetched(self, name: str) -> int:
        """How many GETs of a file of that name the server answered."""
        return sum(1 for method, path in self.requests if method == "GET" and path.endswith("/" + name))

    # ---- answers --------------------------------------------------------------------------
    def _answer(self, req: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlsplit(req.path).path)
        self.requests.append((req.command, path))
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"]:
            self._info(req, parts[2:], body=body)
        elif len(parts) >= 5 and parts[2] == "resolve":
            self._file(req, "/".join(parts[:2]), parts[3], "/".join(parts[4:]), body=body)
        else:
            self._send(req, 404, b"", {"X-Error-Code": "RepoNotFound"}, body=body)

    def _repo(self, req, repo_id: str, rev: str, *, body: bool) -> Repo | None:
        repo = self.repos.get(repo_id)
        if repo is None:
            self._send(req, 404, b"Repository not found", {"X-Error-Code": "RepoNotFound"}, body=body)
            return None
        if rev not in ("main", repo.commit):
            self._send(req, 404, b"Revision not found", {"X-Error-Code": "RevisionNotFound"}, body=body)
            return None
        return repo

    def _info(self, req, parts: list[str], *, body: bool) -> None:
        repo_id, rev = "/".join(parts[:2]), parts[3] if parts[2:3] == ["revision"] else "main"
        repo = self._repo(req, repo_id, rev, body=body)
        if repo is None:
            return
        info = {
            "id": repo_id,
            "sha": repo.commit,
            "gated": "manual" if repo.token else False,
            "siblings": [{"rfilename": n, "size": len(d)} for n, d in sorted(repo.files.items())],
        }
        self._send(req, 200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body=body)

    def _file(self, req, repo_id: str, rev: str, name: str, *, body: bool) -> None:
        repo = self._repo(req, repo_id, rev, body=body)
        if repo is None:
            return
        if repo.token and req.headers.get("Authorization") != f"Bearer {repo.token}":
            headers = {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to this model is restricted."}
            self._send(req, 401, b"gated", headers, body=body)
            return
        data = repo.files.get(name)
        if data is None:
            headers = {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": repo.commit}
            self._send(req, 404, b"Entry not found", headers, body=body)
            return
        headers = {
            "ETag": f'"{hashlib.sha256(data).hexdigest()}"',
            "X-Repo-Commit": repo.commit,
            "Content-Type": "application/octet-stream",
        }
        self._send(req, 200, data, headers, body=body)

    @staticmethod
    def _send(req, status: int, data: bytes, headers: dict[str, str], *, body: bool) -> None:
        req.send_response(status)
        for key, value in headers.items():
            req.send_header(key, value)
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        if body:
            req.wfile.write(data)
