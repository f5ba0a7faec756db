"""A small asyncio client for the Kubernetes API: raw JSON in, raw JSON out.

The ``kubernetes`` package is used only to read credentials (kubeconfig, in-cluster service
account, exec plugins); requests go through one ``aiohttp`` session so that binds, status
writes and watches share keep-alive connections on one event loop, and no response is ever
turned into the client's model objects (their deserialisation is the known bottleneck of
Python controllers; see the performance anchors).

Every request waits on a token bucket (``--kube-api-qps``/``--kube-api-burst``, as client-go's
rate limiter) and is counted in ``rest_client_requests_total{verb,resource,code}``, which is how
the benchmark reports API writes per pod.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

import aiohttp
from prometheus_client import Counter

from volcano_py.metrics import register_everywhere

log = logging.getLogger(__name__)

JSON: Final = "application/json"
MERGE_PATCH: Final = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH: Final = "application/strategic-merge-patch+json"

# Statuses worth another try: throttled, server trouble, timeouts.
TRANSIENT_STATUSES: Final = frozenset({429, 500, 502, 503, 504})

REST_CLIENT_REQUESTS: Final = Counter(
    "rest_client_requests",
    "volcano-py: requests to the API server, by verb, resource and HTTP code",
    ["verb", "resource", "code"],
    registry=None,
)
register_everywhere(REST_CLIENT_REQUESTS)  # every process talks to the API server
WRITE_VERBS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class ApiError(Exception):
    """A non-2xx answer (``status`` > 0) or a failed connection (``status`` == 0)."""

    def __init__(
        self,
        method: str,
        path: str,
        status: int,
        message: str,
        *,
        reason: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.method = method
        self.path = path
        self.status = status
        self.reason = reason
        self.message = message
        self.retry_after = retry_after
        where = f"{method} {path}"
        super().__init__(f"{where} -> {status or 'connection error'}: {message}")

    @property
    def transient(self) -> bool:
        """Worth retrying: no answer at all, throttling, or a server-side failure."""
        return self.status == 0 or self.status in TRANSIENT_STATUSES

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def gone(self) -> bool:
        return self.status == 410


@dataclass(frozen=True)
class ClusterAccess:
    """Where the API server is and how to authenticate; ``authorization()`` is called per
    request so that rotating tokens (in-cluster, exec plugins) stay fresh."""

    server: str
    ca_file: str | None = None
    verify_ssl: bool = True
    cert_file: str | None = None
    key_file: str | None = None
    authorization: Callable[[], str | None] = lambda: None

    @classmethod
    def load(cls, kubeconfig: str | None = None) -> ClusterAccess:
        """``--kubeconfig`` if given; else in-cluster when running in a pod; else the
        ``KUBECONFIG``/``~/.kube/config`` default, as client-go's loading rules do."""
        from kubernetes import config as kube_config
        from kubernetes.client import Configuration

        configuration = Configuration()
        if kubeconfig:
            kube_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=kubeconfig, client_configuration=configuration
            )
        elif os.environ.get("KUBERNETES_SERVICE_HOST") and not os.environ.get("KUBECONFIG"):
            kube_config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )
        else:
            kube_config.load_kube_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )

        cached: list[Any] = [None, -1e9]

        def authorization() -> str | None:
            # auth_settings() runs the loader's refresh hook (rotating in-cluster and exec
            # plugin tokens), which re-reads the whole configuration: at most twice a minute.
            now = time.monotonic()
            if now - cached[1] > 30.0:
                settings = cast(Mapping[str, Mapping[str, Any]], configuration.auth_settings())
                cached[0] = next(
                    (
                        str(setting["value"])
                        for setting in settings.values()
                        if setting.get("in") == "header" and setting.get("key") == "authorization"
                    ),
                    None,
                )
                cached[1] = now
            return cast(str | None, cached[0])

        return cls(
            server=str(configuration.host).rstrip("/"),
            ca_file=configuration.ssl_ca_cert or None,
            verify_ssl=bool(configuration.verify_ssl),
            cert_file=configuration.cert_file or None,
            key_file=configuration.key_file or None,
            authorization=authorization,
        )

    def ssl_context(self) -> ssl.SSLContext | bool:
        if not self.server.startswith("https"):
            return False
        if not self.verify_ssl:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            context = ssl.create_default_context(cafile=self.ca_file)
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context


class TokenBucket:
    """client-go's token-bucket rate limiter: ``qps`` tokens a second, at most ``burst`` saved.
    ``qps`` <= 0 means no limit. Used from one event loop only (no lock)."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.qps = qps
        self.capacity = float(max(1, burst))
        self.tokens = self.capacity
        self.clock = clock
        self.stamp = clock()

    def delay(self) -> float:
        """Take a token; how long the caller must wait before using it (0 if none)."""
        if self.qps <= 0:
            return 0.0
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.qps)
        self.stamp = now
        self.tokens -= 1.0
        return 0.0 if self.tokens >= 0 else -self.tokens / self.qps

    async def acquire(self) -> None:
        wait = self.delay()
        if wait > 0:
            await asyncio.sleep(wait)


def resource_of(path: str) -> str:
    """The resource (and subresource) a REST path addresses: ``/api/v1/namespaces/a/pods/b/
    binding`` -> ``pods/binding``; a metric label without names in it."""
    parts = [part for part in path.split("?", 1)[0].split("/") if part]
    if not parts:
        return ""
    rest = parts[2:] if parts[0] == "api" else parts[3:]
    if len(rest) > 2 and rest[0] == "namespaces":
        rest = rest[2:]
    if not rest:
        return ""
    return f"{rest[0]}/{rest[2]}" if len(rest) >= 3 else rest[0]


def _message(body: bytes) -> tuple[str, str]:
    try:
        status = json.loads(body)
    except ValueError:
        return body.decode(errors="replace")[:300], ""
    if isinstance(status, dict):
        return str(status.get("message", "")), str(status.get("reason", ""))
    return str(status)[:300], ""


class KubeApi:
    """The API server over one aiohttp session. Create and use it inside one event loop."""

    def __init__(
        self,
        access: ClusterAccess,
        *,
        qps: float = 2000.0,
        burst: int = 2000,
        max_connections: int = 256,
        user_agent: str = "volcano-py-scheduler",
        request_timeout: float = 30.0,
    ) -> None:
        self.access = access
        self.limiter = TokenBucket(qps, burst)
        self.max_connections = max_connections
        self.user_agent = user_agent
        self.request_timeout = request_timeout
        self._session: aiohttp.ClientSession | None = None

    async def open(self) -> KubeApi:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self.max_connections, ssl=self.access.ssl_context()
            )
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.user_agent}
            )
        return self

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> KubeApi:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("KubeApi used before open()")
        return self._session

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": JSON}
        token = self.access.authorization()
        if token:
            headers["Authorization"] = token
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        content_type: str = JSON,
        timeout: float | None = None,
    ) -> Any:
        """One request; the parsed JSON answer. Raises ApiError (status 0: no answer)."""
        raw = await self.request_raw(
            method, path, body, params=params, content_type=content_type, timeout=timeout
        )
        return json.loads(raw) if raw else None

    async def request_raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str] | None = None,
        content_type: str = JSON,
        timeout: float | None = None,
    ) -> bytes:
        """``request``'s answer as the bytes the server sent, not yet decoded."""
        await self.limiter.acquire()
        data = None if body is None else json.dumps(body).encode()
        verb = method
        if method == "GET" and params is not None:
            verb = "WATCH" if "watch" in params else "LIST" if "limit" in params else "GET"
        resource = resource_of(path)
        try:
            async with self.session.request(
                method,
                self.access.server + path,
                params=params,
                data=data,
                headers=self._headers(content_type if data is not None else None),
                timeout=aiohttp.ClientTimeout(total=timeout or self.request_timeout),
            ) as response:
                raw = await response.read()
                REST_CLIENT_REQUESTS.labels(verb, resource, str(response.status)).inc()
                if response.status >= 300:
                    message, reason = _message(raw)
                    retry = response.headers.get("Retry-After")
                    raise ApiError(
                        method,
                        path,
                        response.status,
                        message,
                        reason=reason,
                        retry_after=float(retry) if retry and retry.isdigit() else None,
                    )
        except (aiohttp.ClientError, TimeoutError, OSError) as error:
            REST_CLIENT_REQUESTS.labels(verb, resource, "<error>").inc()
            raise ApiError(method, path, 0, f"{type(error).__name__}: {error}") from error
        return raw

    async def list_all(
        self, path: str, params: Mapping[str, str] | None = None, page_size: int = 500
    ) -> tuple[list[dict[str, Any]], str]:
        """Every object of a collection (pages of ``page_size``) and the list's
        resourceVersion. An expired continue token restarts the list from scratch.

        The next page is asked for as soon as a page's continue token is read from the head
        of its body, and the page is decoded in a worker thread meanwhile: the server
        prepares and sends one page while this process decodes the last (a restart lists
        160k pods, 320 pages), and the event loop keeps serving the other requests."""
        while True:
            items: list[dict[str, Any]] = []
            query = dict(params or {})
            query["limit"] = str(page_size)
            ahead: asyncio.Task[bytes] | None = None
            try:
                while True:
                    if ahead is None:
                        raw = await self._list_page(path, query)
                    else:
                        raw, ahead = await ahead, None
                    guessed = _continue_in_head(raw)
                    if guessed:
                        query["continue"] = guessed
                        ahead = asyncio.ensure_future(self._list_page(path, dict(query)))
                        page = await asyncio.to_thread(json.loads, raw)
                    else:
                        page = json.loads(raw)
                    items.extend(page.get("items") or [])
                    meta = page.get("metadata") or {}
                    token = meta.get("continue")
                    if ahead is not None and token != guessed:
                        # The head was read wrong: ask again with the page's own token.
                        _drop(ahead)
                        ahead = None
                    if not token:
                        return items, str(meta.get("resourceVersion", ""))
                    query["continue"] = token
            except ApiError as error:
                if not error.gone or "continue" not in query:
                    raise
                log.info("list %s: continue token expired, listing again", path)
            finally:
                if ahead is not None:
                    _drop(ahead)

    async def _list_page(self, path: str, query: Mapping[str, str]) -> bytes:
        return await self.request_raw("GET", path, params=query, timeout=120.0)

    async def watch(
        self, path: str, params: Mapping[str, str], timeout_seconds: int
    ) -> AsyncIterator[dict[str, Any]]:
        """The events of one watch request, until the server ends it. Lines are split here
        (aiohttp's readline caps a line at 64 KiB; a Node can be larger)."""
        await self.limiter.acquire()
        query = {**params, "watch": "1", "timeoutSeconds": str(timeout_seconds)}
        resource = resource_of(path)
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.request_timeout, sock_read=timeout_seconds + 30
        )
        try:
            async with self.session.get(
                self.access.server + path,
                params=query,
                headers=self._headers(None),
                timeout=timeout,
            ) as response:
                REST_CLIENT_REQUESTS.labels("WATCH", resource, str(response.status)).inc()
                if response.status >= 300:
                    message, reason = _message(await response.read())
                    raise ApiError("WATCH", path, response.status, message, reason=reason)
                buffer = b""
                async for chunk in response.content.iter_any():
                    buffer += chunk
                    if b"\n" not in chunk:
                        continue
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield json.loads(line)
                if buffer.strip():
                    yield json.loads(buffer)
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as error:
            raise ApiError("WATCH", path, 0, f"{type(error).__name__}: {error}") from error


def write_count() -> float:
    """API writes made so far by this process (POST/PUT/PATCH/DELETE, any answer)."""
    total = 0.0
    for metric in REST_CLIENT_REQUESTS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and sample.labels.get("verb") in WRITE_VERBS:
                total += sample.value
    return total


# A list's metadata comes before its items in the API server's answers (Go's field order:
# kind, apiVersion, metadata, items), within its first bytes.
_HEAD_BYTES: Final = 4096
_METADATA_KEY: Final = b'"metadata":'
_ITEMS_KEY: Final = b'"items":'
_HEAD_DECODER: Final = json.JSONDecoder()


def _continue_in_head(raw: bytes) -> str:
    """The continue token of a list answer, read from its head without decoding the items;
    empty when there is none or the head is not laid out as the API server lays it out (the
    caller then takes the token from the decoded page)."""
    head = raw[:_HEAD_BYTES]
    at = head.find(_METADATA_KEY)
    items_at = head.find(_ITEMS_KEY)
    if at < 0 or 0 <= items_at < at:
        return ""
    text = head[at + len(_METADATA_KEY) :].decode("utf-8", "replace").lstrip()
    try:
        meta, _end = _HEAD_DECODER.raw_decode(text)
    except ValueError:
        return ""
    token = meta.get("continue") if isinstance(meta, dict) else None
    return token if isinstance(token, str) else ""


def _drop(task: asyncio.Task[bytes]) -> None:
    """Cancel a page asked for ahead that is no longer wanted (its failure, if it failed
    already, is no one's to report)."""
    task.cancel()
    if task.done() and not task.cancelled():
        task.exception()
