"""Posting one verb to the extender (``extenderPlugin.send``).

A session calls the extender synchronously from its hooks, up to once per task and node for
``predicateVerb``, so the connection is kept alive across calls and sessions (one per
extender address and timeout, guarded by a lock) rather than opened per request. Bodies are
JSON; an answer other than 200, or larger than 10 MiB, is an error.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any, Final
from urllib.parse import urlsplit

# Upstream reads at most this much of an answer (``maxBodySize``).
MAX_BODY_SIZE: Final = 10 << 20


class ExtenderError(RuntimeError):
    """The extender could not be reached, refused, or answered something unreadable."""


class ExtenderClient:
    def __init__(self, url_prefix: str, timeout: float) -> None:
        self.url_prefix = url_prefix.rstrip("/")
        self.timeout = timeout
        parts = urlsplit(self.url_prefix)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ExtenderError(f"extender.urlPrefix {url_prefix!r} is not an http(s) URL")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._base_path = parts.path
        self._connection: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            factory = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._connection = factory(self._host, self._port, timeout=self.timeout)
        return self._connection

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def send(self, verb: str, body: Any, want_answer: bool = True) -> Any:
        """POST ``body`` to ``<urlPrefix>/<verb>``; the decoded answer (None when not wanted)."""
        url = f"{self.url_prefix}/{verb}"
        payload = json.dumps(body, separators=(",", ":")).encode()
        with self._lock:
            status, data = self._post(f"{self._base_path}/{verb}", payload, url, verb)
        if status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {status}")
        if not want_answer:
            return None
        try:
            return json.loads(data)
        except ValueError as error:
            raise ExtenderError(
                f"{verb}: extender at URL {url} answered invalid JSON: {error}"
            ) from error

    def _post(self, path: str, payload: bytes, url: str, verb: str) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"}
        for attempt in (1, 2):
            connection = self._connect()
            try:
                connection.request("POST", path, payload, headers)
                response = connection.getresponse()
                data = response.read(MAX_BODY_SIZE + 1)
                if len(data) > MAX_BODY_SIZE:
                    # The rest is unread: this connection cannot carry another request.
                    self._drop()
                    raise ExtenderError(f"{verb}: http: request body too large (from {url})")
                if response.will_close:
                    self._drop()
                return response.status, data
            except (http.client.HTTPException, OSError) as error:
                self._drop()
                # A kept-alive connection the server closed meanwhile: try once on a new one.
                stale = isinstance(error, (http.client.RemoteDisconnected, ConnectionResetError))
                if attempt == 1 and stale and not isinstance(error, socket.timeout):
                    continue
                raise ExtenderError(f"{verb}: extender at URL {url}: {error}") from error
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


_clients: dict[tuple[str, float], ExtenderClient] = {}
_clients_lock = threading.Lock()


def client_for(url_prefix: str, timeout: float) -> ExtenderClient:
    """The shared client of one extender (plugins are rebuilt every session)."""
    key = (url_prefix, timeout)
    with _clients_lock:
        found = _clients.get(key)
        if found is None:
            found = _clients[key] = ExtenderClient(url_prefix, timeout)
        return found


def close_clients() -> None:
    """Close every shared connection (at shutdown, or when a test's extender goes away)."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()
