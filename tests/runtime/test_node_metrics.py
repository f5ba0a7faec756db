"""Node usage from Prometheus into the cache (``cache.GetMetricsData``,
``metrics/source/metrics_client_prometheus.go``), against a real HTTP server on 127.0.0.1 that
answers Prometheus' instant-query API the way Prometheus does."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest

from tests.builders import build_node, resource_list
from volcano_py.api.node_usage import NODE_METRICS_PERIOD
from volcano_py.cache.cache import SchedulerCache
from volcano_py.runtime.node_metrics import (
    MetricsSourceError,
    NodeMetricsCollector,
    cpu_query,
    memory_query,
    metrics_interval,
    new_metrics_client,
)

INSTANCE = re.compile(r'instance="([^"]+)"')


class FakePrometheus(BaseHTTPRequestHandler):
    """``/api/v1/query``: CPU or memory percentage of the node named by ``instance``."""

    # node -> (cpu %, memory %); a node missing answers an empty vector; "broken" a 500.
    usage: ClassVar[dict[str, tuple[float, float]]] = {}
    queries: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        url = urlparse(self.path)
        if url.path != "/api/v1/query":
            self.send_error(404)
            return
        query = parse_qs(url.query)["query"][0]
        type(self).queries.append(query)
        node = INSTANCE.search(query)
        name = node.group(1) if node else ""
        if name == "broken":
            self._answer(500, {"status": "error", "errorType": "internal", "error": "boom"})
            return
        result: list[dict[str, Any]] = []
        if name in self.usage:
            cpu, memory = self.usage[name]
            value = cpu if "node_cpu_seconds_total" in query else memory
            result = [{"metric": {"instance": name}, "value": [1_800_000_000, str(value)]}]
        self._answer(200, {"status": "success", "data": {"resultType": "vector", "result": result}})

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def prometheus() -> Iterator[str]:
    FakePrometheus.usage = {"n1": (42.5, 61.0), "n2": (90.0, 10.0)}
    FakePrometheus.queries = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakePrometheus)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def cache_with(*names: str) -> SchedulerCache:
    cache = SchedulerCache()
    for name in names:
        cache.apply_event("Node", "ADDED", build_node(name, resource_list("4", "8Gi")))
    return cache


def collect(cache: SchedulerCache, conf: dict[str, str], now: float = 1000.0) -> int:
    collector = NodeMetricsCollector(cache, lambda: conf, clock=lambda: now)

    async def once() -> int:
        async with aiohttp.ClientSession() as session:
            return await collector.collect_once(session)

    return asyncio.run(once())


def test_collects_cpu_and_memory_of_every_node_into_the_cache(prometheus: str) -> None:
    cache = cache_with("n1", "n2", "quiet")
    updated = collect(cache, {"type": "prometheus", "address": prometheus + "/"}, now=1234.0)
    assert updated == 3
    n1 = cache.node_usage["n1"]
    assert n1.metrics_time == 1234.0
    assert n1.cpu_usage_avg == {NODE_METRICS_PERIOD: 42.5}
    assert n1.mem_usage_avg == {NODE_METRICS_PERIOD: 61.0}
    assert cache.node_usage["n2"].cpu(NODE_METRICS_PERIOD) == 90.0
    # No data for a node: 0%, freshly measured (upstream's reading of an empty vector).
    assert cache.node_usage["quiet"].cpu(NODE_METRICS_PERIOD) == 0.0
    assert cache.node_usage["quiet"].metrics_time == 1234.0
    # Upstream's PromQL, verbatim, two per node.
    assert sorted(FakePrometheus.queries) == sorted(
        [cpu_query(n) for n in ("n1", "n2", "quiet")]
        + [memory_query(n) for n in ("n1", "n2", "quiet")]
    )
    assert cpu_query("n1") == (
        'avg_over_time(clamp_min(100 - (avg by (instance) (rate(node_cpu_seconds_total{mode="idle",'
        'instance="n1"}[5m])) * 100), 0)[10m:30s])'
    )
    assert memory_query("n1") == (
        '100*avg_over_time(((1-node_memory_MemAvailable_bytes{instance="n1"}/'
        'node_memory_MemTotal_bytes{instance="n1"}))[10m:30s])'
    )


def test_a_failing_node_keeps_its_last_usage(prometheus: str) -> None:
    cache = cache_with("n1", "broken")
    conf = {"type": "prometheus", "address": prometheus}
    collect(cache, conf, now=10.0)
    assert "broken" not in cache.node_usage
    assert cache.node_usage["n1"].metrics_time == 10.0


def test_snapshot_carries_usage_of_ready_nodes(prometheus: str) -> None:
    cache = cache_with("n1")
    collect(cache, {"type": "prometheus", "address": prometheus})
    assert cache.snapshot().node_usage["n1"].memory(NODE_METRICS_PERIOD) == 61.0
    cache.apply_event("Node", "DELETED", build_node("n1", resource_list("4", "8Gi")))
    assert cache.node_usage == {}


def test_no_type_collects_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    cache = cache_with("n1")
    assert collect(cache, {}) == 0
    assert "metrics type is not set" in caplog.text


@pytest.mark.parametrize("source", ["elasticsearch", "prometheus_adaptor", "graphite"])
def test_other_sources_are_refused_naming_the_type(
    source: str, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(MetricsSourceError, match=source):
        new_metrics_client({"type": source, "address": "http://x"})
    assert collect(cache_with("n1"), {"type": source, "address": "http://x"}) == 0
    assert source in caplog.text


def test_prometheus_needs_an_address() -> None:
    with pytest.raises(MetricsSourceError, match=r"metrics\.address"):
        new_metrics_client({"type": "prometheus"})


@pytest.mark.parametrize(
    ("conf", "seconds"),
    [
        ({}, 30.0),
        ({"interval": "10s"}, 10.0),
        ({"interval": "bad"}, 30.0),
        ({"interval": "0s"}, 30.0),
    ],
)
def test_interval(conf: dict[str, str], seconds: float) -> None:
    assert metrics_interval(conf) == seconds


def test_run_collects_immediately_then_every_interval(prometheus: str) -> None:
    cache = cache_with("n1")
    conf = {"type": "prometheus", "address": prometheus, "interval": "50ms"}
    collector = NodeMetricsCollector(cache, lambda: conf)

    async def run_a_while() -> None:
        task = asyncio.create_task(collector.run())
        for _ in range(200):
            await asyncio.sleep(0.02)
            if collector.rounds >= 2:
                break
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run_a_while())
    assert collector.rounds >= 2
    assert cache.node_usage["n1"].cpu(NODE_METRICS_PERIOD) == 42.5
