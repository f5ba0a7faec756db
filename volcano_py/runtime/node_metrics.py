"""Node load from the metrics source, collected into the scheduler cache every
``metrics.interval`` (``cache.GetMetricsData`` and ``pkg/scheduler/metrics/source``).

The ``metrics:`` section of volcano-scheduler.conf names the source::

    metrics:
      type: prometheus            # the only type volcano-py collects from
      address: http://prometheus.monitoring:9090
      interval: 30s               # default 30s
      tls.insecureSkipVerify: "false"

For every node the cache knows, two instant queries go to Prometheus' HTTP API
(``/api/v1/query``), the very PromQL upstream sends: average CPU use and memory use over the
last ``NODE_METRICS_PERIOD`` (10m), in percent, ``instance`` being the node name. The answers
land in the cache (``set_node_usage``), never in a session: sessions read them from the
snapshot. Queries run concurrently (``CONCURRENT_QUERIES``), where upstream sends them one by
one.

Upstream also knows ``elasticsearch`` and ``prometheus_adaptor``; volcano-py refuses them with
an error naming the type, and leaves node usage empty (the usage plugin then passes every node
and scores 0, as upstream does with no data). A node whose queries fail keeps its last usage
(which goes stale after five minutes) rather than reading as idle, as upstream's would.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import aiohttp

from volcano_py.api.node_usage import NODE_METRICS_PERIOD, NodeUsage
from volcano_py.cache.cache import SchedulerCache
from volcano_py.models.duration import DurationError, parse_duration

log = logging.getLogger(__name__)

METRICS_TYPE_PROMETHEUS: Final = "prometheus"
METRICS_TYPE_PROMETHEUS_ADAPTOR: Final = "prometheus_adaptor"
METRICS_TYPE_ELASTICSEARCH: Final = "elasticsearch"
DEFAULT_METRICS_INTERVAL: Final = 30.0
# One collection round may take this long at most (upstream's context timeout).
COLLECTION_TIMEOUT: Final = 60.0
CONCURRENT_QUERIES: Final = 16
QUERY_PATH: Final = "/api/v1/query"


class MetricsSourceError(ValueError):
    """A ``metrics:`` section volcano-py cannot collect from; the message names the field."""


def cpu_query(node: str) -> str:
    return (
        "avg_over_time(clamp_min(100 - (avg by (instance) "
        f'(rate(node_cpu_seconds_total{{mode="idle",instance="{node}"}}[5m])) * 100), 0)'
        f"[{NODE_METRICS_PERIOD}:30s])"
    )


def memory_query(node: str) -> str:
    return (
        f'100*avg_over_time(((1-node_memory_MemAvailable_bytes{{instance="{node}"}}'
        f'/node_memory_MemTotal_bytes{{instance="{node}"}}))[{NODE_METRICS_PERIOD}:30s])'
    )


def metrics_interval(conf: Mapping[str, str]) -> float:
    """``metrics.interval`` when a positive Go duration, else 30s."""
    try:
        interval = parse_duration(conf.get("interval", ""))
    except DurationError:
        return DEFAULT_METRICS_INTERVAL
    return interval if interval > 0 else DEFAULT_METRICS_INTERVAL


def first_vector_value(body: Mapping[str, Any]) -> float | None:
    """The value of the first sample of an instant-vector answer; None for any other
    result type; 0 when the vector is empty (no data for the node), as upstream."""
    data = body.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "vector":
        return None
    result = data.get("result")
    if not isinstance(result, list) or not result:
        return 0.0
    sample = result[0].get("value") if isinstance(result[0], Mapping) else None
    if not isinstance(sample, list) or len(sample) != 2:
        return None
    try:
        return float(sample[1])
    except (TypeError, ValueError):
        return None


class PrometheusMetricsClient:
    """``PrometheusMetricsClient``: instant queries against Prometheus' HTTP API."""

    def __init__(self, conf: Mapping[str, str]) -> None:
        address = conf.get("address", "")
        if not address:
            raise MetricsSourceError("metrics.address: metrics address is empty")
        self.address = address.rstrip("/")
        # "true" as upstream compares it; "True" is how our conf reader spells a YAML true.
        self.insecure_skip_verify = conf.get("tls.insecureSkipVerify") in ("true", "True")
        if self.insecure_skip_verify:
            log.warning(
                "WARNING: TLS certificate verification is disabled which is insecure. "
                "This should not be used in production environments"
            )

    async def query(self, session: aiohttp.ClientSession, promql: str) -> float | None:
        """One instant query now; None when it failed or did not answer a vector."""
        ssl_context: ssl.SSLContext | bool = not self.insecure_skip_verify
        async with session.get(
            self.address + QUERY_PATH,
            params={"query": promql, "time": f"{time.time():.3f}"},
            ssl=ssl_context,
        ) as response:
            body = await response.json(content_type=None)
        if response.status != 200 or not isinstance(body, Mapping):
            error = body.get("error") if isinstance(body, Mapping) else body
            raise MetricsSourceError(f"Prometheus answered {response.status}: {error}")
        for warning in body.get("warnings") or []:
            log.info("Warning querying Prometheus: %s", warning)
        value = first_vector_value(body)
        if value is None:
            log.warning("Warning querying Prometheus: no vector found for %s", promql)
        return value

    async def node_metrics_avg(
        self, session: aiohttp.ClientSession, node: str, now: float
    ) -> NodeUsage | None:
        """Both averages of one node; None (and logged) if a query failed."""
        try:
            cpu = await self.query(session, cpu_query(node))
            memory = await self.query(session, memory_query(node))
        except (TimeoutError, aiohttp.ClientError, MetricsSourceError, ValueError) as error:
            log.error("Error querying Prometheus for node %s: %s", node, error)
            return None
        return NodeUsage.measured(now, cpu or 0.0, memory or 0.0)

    async def nodes_metrics_avg(
        self, session: aiohttp.ClientSession, nodes: list[str], now: float
    ) -> dict[str, NodeUsage]:
        limit = asyncio.Semaphore(CONCURRENT_QUERIES)

        async def one(node: str) -> tuple[str, NodeUsage | None]:
            async with limit:
                return node, await self.node_metrics_avg(session, node, now)

        answers = await asyncio.gather(*(one(node) for node in nodes))
        return {node: usage for node, usage in answers if usage is not None}


def new_metrics_client(conf: Mapping[str, str]) -> PrometheusMetricsClient:
    """The client for ``metrics.type`` (``NewMetricsClient``); other types are refused."""
    metrics_type = conf.get("type", "")
    if metrics_type == METRICS_TYPE_PROMETHEUS:
        return PrometheusMetricsClient(conf)
    if metrics_type in (METRICS_TYPE_ELASTICSEARCH, METRICS_TYPE_PROMETHEUS_ADAPTOR):
        raise MetricsSourceError(
            f"metrics.type: {metrics_type!r} is a Volcano metrics source volcano-py does not "
            f"support; use {METRICS_TYPE_PROMETHEUS!r}. Node usage is not collected."
        )
    raise MetricsSourceError(
        f"metrics.type: data cannot be collected from the {metrics_type!r} monitoring system; "
        f"the supported monitoring system is {METRICS_TYPE_PROMETHEUS!r}"
    )


class NodeMetricsCollector:
    """Collects every node's usage into the cache once per ``metrics.interval``, on the
    I/O thread's event loop (``go wait.Until(sc.GetMetricsData, interval)``)."""

    def __init__(
        self,
        cache: SchedulerCache,
        metrics_conf: Callable[[], Mapping[str, str]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cache = cache
        self.metrics_conf = metrics_conf
        self.clock = clock
        self.rounds = 0
        self._reported: str = ""

    def _report_once(self, message: str, level: int = logging.ERROR) -> None:
        if message != self._reported:
            self._reported = message
            log.log(level, "%s", message)

    async def collect_once(self, session: aiohttp.ClientSession) -> int:
        """One round; returns how many nodes were updated."""
        conf = self.metrics_conf()
        if not conf.get("type"):
            self._report_once(
                "The metrics type is not set in the volcano scheduler configmap file. As a "
                "result, the CPU and memory load information of the node is not collected.",
                logging.INFO,
            )
            return 0
        try:
            client = new_metrics_client(conf)
        except MetricsSourceError as error:
            self._report_once(str(error))
            return 0
        self._reported = ""
        nodes = self.cache.node_names()
        try:
            usage = await asyncio.wait_for(
                client.nodes_metrics_avg(session, nodes, self.clock()), COLLECTION_TIMEOUT
            )
        except TimeoutError:
            log.error("Error getting node metrics: no answer within %.0fs", COLLECTION_TIMEOUT)
            return 0
        self.cache.set_node_usage(usage)
        self.rounds += 1
        return len(usage)

    async def run(self) -> None:
        """Collect now, then every interval, until cancelled."""
        timeout = aiohttp.ClientTimeout(total=COLLECTION_TIMEOUT)
        async with aiohttp.ClientSession(timeout=timeout) as session:
            while True:
                try:
                    await self.collect_once(session)
                except Exception:  # one bad round must not end collection
                    log.exception("node metrics collection failed")
                await asyncio.sleep(metrics_interval(self.metrics_conf()))
