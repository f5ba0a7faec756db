"""A real HTTP server on 127.0.0.1 standing in for the API server, as upstream's vcctl tests
use ``httptest.NewServer``: each test maps (method, path) to an answer and reads back the
requests vcctl made. vcctl is pointed at it with ``-s``/``--master``; ``KUBECONFIG`` points at
a missing file so no kubeconfig of the machine is read.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from volcano_py.cli.vcctl.commands import standalone_commands
from volcano_py.cli.vcctl.main import run_command, vcctl_main

Answer = tuple[int, Any] | Callable[[dict[str, Any]], tuple[int, Any]]


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    content_type: str
    authorization: str = ""


@dataclass
class FakeApi:
    url: str = ""
    routes: dict[tuple[str, str], Answer] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)

    def on(self, method: str, path: str, body: Any, status: int = 200) -> None:
        self.routes[(method, path)] = (status, body)

    def made(self, method: str) -> list[Request]:
        return [r for r in self.requests if r.method == method]


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _answer(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            request = Request(
                self.command,
                parts.path,
                parse_qs(parts.query),
                body,
                self.headers.get("Content-Type", ""),
                self.headers.get("Authorization", ""),
            )
            api.requests.append(request)
            answer = api.routes.get((self.command, parts.path))
            if answer is None:
                status, payload = (
                    404,
                    {
                        "kind": "Status",
                        "status": "Failure",
                        "reason": "NotFound",
                        "message": f"{parts.path} not found",
                    },
                )
            elif callable(answer):
                status, payload = answer(body)
            else:
                status, payload = answer
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _answer

    return Handler


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[FakeApi]:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    fake = FakeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def vcctl(api: FakeApi) -> Callable[..., Result]:
    """``vcctl(*argv)`` against the fake API server."""

    def run(*argv: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = vcctl_main([*argv, "-s", api.url], out, err)
        return Result(code, out.getvalue(), err.getvalue())

    return run


@pytest.fixture
def tool(api: FakeApi) -> Callable[..., Result]:
    """``tool("vsub", *argv)``: a standalone command against the fake API server."""

    def run(name: str, *argv: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = run_command(standalone_commands()[name], [*argv, "-s", api.url], out, err)
        return Result(code, out.getvalue(), err.getvalue())

    return run
