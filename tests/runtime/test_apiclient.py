"""The API client against a small local HTTP server: JSON requests and errors, paged lists
(with an expired continue token), watch streams with long lines; the rate limiter; the
resource label of the request counter."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from volcano_py.runtime.apiclient import (
    REST_CLIENT_REQUESTS,
    ApiError,
    ClusterAccess,
    KubeApi,
    TokenBucket,
    resource_of,
    write_count,
)


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        ("/api/v1/pods", "pods"),
        ("/api/v1/namespaces/a/pods", "pods"),
        ("/api/v1/namespaces/a/pods/b/binding", "pods/binding"),
        ("/api/v1/namespaces/a/pods/b/status?x=1", "pods/status"),
        ("/api/v1/namespaces", "namespaces"),
        ("/api/v1/namespaces/a", "namespaces"),
        ("/apis/scheduling.volcano.sh/v1beta1/queues/q/status", "queues/status"),
        ("/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", "leases"),
        ("/", ""),
    ],
)
def test_resource_label(path: str, resource: str) -> None:
    assert resource_of(path) == resource


def test_token_bucket_spends_the_burst_then_paces() -> None:
    now = [0.0]
    bucket = TokenBucket(qps=10, burst=3, clock=lambda: now[0])
    assert [bucket.delay() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.delay() == pytest.approx(0.1)
    assert bucket.delay() == pytest.approx(0.2)
    now[0] = 10.0  # refilled, but never above the burst
    assert [bucket.delay() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.delay() > 0
    assert TokenBucket(qps=0, burst=1).delay() == 0.0  # no limit


def test_transient_errors() -> None:
    assert ApiError("GET", "/", 0, "refused").transient
    assert ApiError("GET", "/", 429, "slow down").transient
    assert ApiError("GET", "/", 503, "unavailable").transient
    assert not ApiError("GET", "/", 409, "conflict").transient
    assert ApiError("GET", "/", 409, "conflict").conflict
    assert ApiError("GET", "/", 410, "gone").gone


Handler = Callable[[web.Request], Any]


async def serve(routes: dict[str, Handler]) -> tuple[web.AppRunner, str]:
    app = web.Application()
    for path, handler in routes.items():
        method, _, route = path.partition(" ")
        app.router.add_route(method, route, handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


def with_server(routes: dict[str, Handler], body: Callable[[KubeApi], Any]) -> Any:
    async def main() -> Any:
        runner, url = await serve(routes)
        try:
            access = ClusterAccess(server=url, authorization=lambda: "Bearer t0ken")
            async with KubeApi(access, qps=0, burst=0) as api:
                return await body(api)
        finally:
            await runner.cleanup()

    return asyncio.run(main())


def test_request_sends_json_and_token_and_raises_api_errors() -> None:
    seen: list[Any] = []

    async def binding(request: web.Request) -> web.Response:
        seen.append((request.headers["Authorization"], await request.json()))
        return web.json_response({"kind": "Status", "status": "Success"}, status=201)

    async def conflict(request: web.Request) -> web.Response:
        return web.json_response(
            {"kind": "Status", "reason": "Conflict", "message": "pod p is already assigned"},
            status=409,
        )

    async def body(api: KubeApi) -> None:
        before = write_count()
        assert await api.request("POST", "/api/v1/namespaces/a/pods/p/binding", {"x": 1}) == {
            "kind": "Status", "status": "Success"}  # fmt: skip
        with pytest.raises(ApiError) as error:
            await api.request("POST", "/api/v1/namespaces/a/pods/q/binding", {"x": 2})
        assert error.value.conflict and error.value.reason == "Conflict"
        assert "already assigned" in str(error.value)
        assert write_count() == before + 2

    with_server({"POST /api/v1/namespaces/a/pods/p/binding": binding,
                 "POST /api/v1/namespaces/a/pods/q/binding": conflict}, body)  # fmt: skip
    assert seen == [("Bearer t0ken", {"x": 1})]
    sample = REST_CLIENT_REQUESTS.labels("POST", "pods/binding", "409")
    assert sample._value.get() >= 1


def test_a_dead_server_is_a_transient_error() -> None:
    async def main() -> None:
        access = ClusterAccess(server="http://127.0.0.1:9")
        async with KubeApi(access) as api:
            with pytest.raises(ApiError) as error:
                await api.request("GET", "/api/v1/pods", timeout=2)
            assert error.value.status == 0 and error.value.transient

    asyncio.run(main())


def test_list_all_pages_and_restarts_on_an_expired_continue_token() -> None:
    calls: list[dict[str, str]] = []

    async def pods(request: web.Request) -> web.Response:
        query = dict(request.query)
        calls.append(query)
        token = query.get("continue")
        if token is None:
            return web.json_response(
                {
                    "metadata": {"continue": "t1", "resourceVersion": "5"},
                    "items": [{"n": 1}, {"n": 2}],
                }
            )
        if token == "t1" and len(calls) == 2:
            return web.json_response({"reason": "Expired", "message": "too old"}, status=410)
        return web.json_response({"metadata": {"resourceVersion": "9"}, "items": [{"n": 3}]})

    items, version = with_server(
        {"GET /api/v1/pods": pods}, lambda api: api.list_all("/api/v1/pods", page_size=2)
    )
    assert items == [{"n": 1}, {"n": 2}, {"n": 3}]
    assert version == "9"
    assert [c.get("continue") for c in calls] == [None, "t1", None, "t1"]
    assert all(c["limit"] == "2" for c in calls)


def test_list_all_asks_for_the_next_page_while_it_decodes_the_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The continue token is read from the head of a page and the next page asked for before
    the page's items are decoded (off the event loop): the server sees the second request
    while the first page is still being decoded."""
    events: list[str] = []

    async def pods(request: web.Request) -> web.Response:
        token = request.query.get("continue")
        events.append(f"asked {token or 'first'}")
        if token is None:
            return web.json_response({"metadata": {"continue": "t1"}, "items": [{"page": "first"}]})
        return web.json_response({"metadata": {"resourceVersion": "7"}, "items": [{"page": "t1"}]})

    decode = json.loads

    def slow_loads(raw: Any, **kwargs: Any) -> Any:
        if isinstance(raw, bytes) and b'"page": "first"' in raw:
            time.sleep(0.3)  # in the worker thread: the loop sends the next request meanwhile
            events.append("decoded first")
        return decode(raw, **kwargs)

    monkeypatch.setattr(json, "loads", slow_loads)
    items, version = with_server(
        {"GET /api/v1/pods": pods}, lambda api: api.list_all("/api/v1/pods")
    )
    assert items == [{"page": "first"}, {"page": "t1"}] and version == "7"
    assert events == ["asked first", "asked t1", "decoded first"]


@pytest.mark.parametrize(
    "first_page",
    [
        # Items before metadata: the head says nothing; the token comes from the decoded page.
        {"items": [{"n": 1}], "metadata": {"continue": "t1"}},
        # Metadata longer than the head that is read: the same.
        {"metadata": {"continue": "t1", "padding": "x" * 10_000}, "items": [{"n": 1}]},
    ],
)
def test_list_all_pages_whatever_the_layout_of_the_answer(first_page: dict[str, Any]) -> None:
    calls: list[str | None] = []

    async def pods(request: web.Request) -> web.Response:
        token = request.query.get("continue")
        calls.append(token)
        if token is None:
            return web.json_response(first_page)
        return web.json_response({"metadata": {"resourceVersion": "3"}, "items": [{"n": 2}]})

    items, version = with_server(
        {"GET /api/v1/pods": pods}, lambda api: api.list_all("/api/v1/pods")
    )
    assert items == [{"n": 1}, {"n": 2}] and version == "3"
    assert calls == [None, "t1"]


def test_watch_splits_lines_of_any_length() -> None:
    big = {"type": "ADDED", "object": {"metadata": {"name": "n"}, "data": "x" * 200_000}}

    async def watch(request: web.Request) -> web.StreamResponse:
        assert request.query["watch"] == "1" and request.query["resourceVersion"] == "7"
        response = web.StreamResponse()
        await response.prepare(request)
        payload = (
            json.dumps(big) + "\n" + json.dumps({"type": "DELETED", "object": {}}) + "\n"
        ).encode()
        for start in range(0, len(payload), 7000):  # chunks that cut lines anywhere
            await response.write(payload[start : start + 7000])
        await response.write_eof()
        return response

    async def body(api: KubeApi) -> list[dict[str, Any]]:
        events: AsyncIterator[dict[str, Any]] = api.watch(
            "/api/v1/nodes", {"resourceVersion": "7"}, 5
        )
        return [event async for event in events]

    events = with_server({"GET /api/v1/nodes": watch}, body)
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    assert events[0] == big
