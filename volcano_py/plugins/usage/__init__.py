"""usage: keep pods off nodes whose real load is high, and prefer the least loaded
(``plugins/usage/usage.go``).

Real load is each node's average CPU and memory use over ``NODE_METRICS_PERIOD`` (10m), which
the scheduler cache collects from the metrics source outside the session (``metrics:`` in
volcano-scheduler.conf; see ``runtime/node_metrics.py``); ``simulate`` takes it from node
annotations. Metrics older than five minutes (or never collected) switch the plugin off for
that node: it passes the predicate and scores 0.

* Predicate: a node whose real CPU use exceeds ``thresholds.cpu`` (80), else whose memory
  use exceeds ``thresholds.mem`` (80), is UnschedulableAndUnresolvable. It depends on the node
  only, so it is one mask per session.
* Score: ``((1 - cpu) * cpu.weight + (1 - mem) * memory.weight) / (sum of weights) * 100 *
  usage.weight`` over the *composite* utilisation, which adds to the real load a *shadow*
  estimate of the pods placed on the node that the metrics cannot show yet: those allocated or
  binding in this session, and those running for less than one ``metrics.interval``
  (``estimator``: ``request_ratio`` of the request plus ``burst_ratio`` of the headroom to the
  limit, times ``risk_factor`` once the node's load reaches ``risk_threshold``; best-effort
  pods count ``be_cpu``/``be_mem``).

Arguments (upstream spelling): ``usage.weight`` (5), ``cpu.weight`` (1), ``memory.weight`` (1)
(negative: default); ``thresholds: {cpu, mem}`` (integers 0-100); ``estimator:
{request_ratio, burst_ratio, risk_threshold, risk_factor, be_cpu, be_mem}``. Values of the
wrong type or out of range keep the default, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.node_usage import NO_USAGE, NODE_METRICS_PERIOD
from volcano_py.api.quantity import QuantityError, quantity_milli_value, quantity_value
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.api.types import Status, StatusCode, TaskStatus
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import NodeMask
from volcano_py.framework.session import Session
from volcano_py.models.duration import DurationError, parse_duration
from volcano_py.plugins._plugin_helpers import warn_once
from volcano_py.plugins.usage.estimator import (
    calc_applied_risk_factor,
    calc_composite_utilization,
    calc_load_composite_percentage,
    calc_node_score,
    composite_utilization_rows,
    estimate_best_effort_resource,
    estimate_pod_resource,
    node_scores_rows,
    pod_request_limit,
)
from volcano_py.plugins.usage.shadow_cache import ShadowLoadCache

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "usage"
THRESHOLD_SECTION: Final = "thresholds"
ESTIMATOR_SECTION: Final = "estimator"
# Older metrics than this are not trusted (``MetricsActiveTime``).
METRICS_ACTIVE_SECONDS: Final = 5 * 60.0
# The monitoring delay window when ``metrics.interval`` is not set.
DEFAULT_METRICS_INTERVAL: Final = 30.0
NODE_USAGE_CPU_EXTEND: Final = "the CPU load of the node exceeds the upper limit."
NODE_USAGE_MEMORY_EXTEND: Final = "the memory load of the node exceeds the upper limit."
MEBIBYTE: Final = 1024 * 1024

ARGUMENTS: Final[frozenset[str]] = frozenset(
    {"usage.weight", "cpu.weight", "memory.weight", THRESHOLD_SECTION, ESTIMATOR_SECTION}
)
THRESHOLD_KEYS: Final = frozenset({"cpu", "mem"})
ESTIMATOR_KEYS: Final = frozenset(
    {"request_ratio", "burst_ratio", "risk_threshold", "risk_factor", "be_cpu", "be_mem"}
)


def _warn_once(message: str) -> None:
    warn_once(log, message)


@dataclass(slots=True)
class UsageConfig:
    usage_weight: int = 5
    cpu_weight: int = 1
    memory_weight: int = 1
    cpu_thresholds: float = 80.0
    mem_thresholds: float = 80.0
    # Upstream fixes the period to the one its metrics sources collect.
    period: str = NODE_METRICS_PERIOD
    request_ratio: float = 0.7
    burst_ratio: float = 0.0
    risk_threshold: float = 0.6
    risk_factor: float = 1.2
    be_cpu: float = 250.0
    be_memory: float = float(200 * MEBIBYTE)

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> UsageConfig:
        config = cls()
        config.usage_weight = _non_negative(arguments, "usage.weight", config.usage_weight)
        config.cpu_weight = _non_negative(arguments, "cpu.weight", config.cpu_weight)
        config.memory_weight = _non_negative(arguments, "memory.weight", config.memory_weight)
        thresholds = _section(arguments, THRESHOLD_SECTION, THRESHOLD_KEYS)
        if thresholds is not None:
            cpu = thresholds.get_int("cpu", int(config.cpu_thresholds))
            if 0 <= cpu <= 100:
                config.cpu_thresholds = float(cpu)
            mem = thresholds.get_int("mem", int(config.mem_thresholds))
            if 0 <= mem <= 100:
                config.mem_thresholds = float(mem)
        estimator = _section(arguments, ESTIMATOR_SECTION, ESTIMATOR_KEYS)
        if estimator is not None:
            config._read_estimator(estimator)
        return config

    def _read_estimator(self, estimator: Arguments) -> None:
        request_ratio = estimator.get_float("request_ratio", self.request_ratio)
        if 0 <= request_ratio <= 1:
            self.request_ratio = request_ratio
        burst_ratio = estimator.get_float("burst_ratio", self.burst_ratio)
        if 0 <= burst_ratio <= 1:
            self.burst_ratio = burst_ratio
        risk_threshold = estimator.get_float("risk_threshold", self.risk_threshold)
        if 0 <= risk_threshold <= 1:
            self.risk_threshold = risk_threshold
        risk_factor = estimator.get_float("risk_factor", self.risk_factor)
        if risk_factor >= 1:
            self.risk_factor = risk_factor
        self.be_cpu = parse_best_effort_cpu(estimator.get("be_cpu"), self.be_cpu)
        self.be_memory = parse_best_effort_memory(estimator.get("be_mem"), self.be_memory)


def _non_negative(arguments: Arguments, key: str, default: int) -> int:
    value = arguments.get_int(key, default)
    return default if value < 0 else value


def _section(arguments: Arguments, name: str, known: frozenset[str]) -> Arguments | None:
    """A nested argument map (``thresholds``, ``estimator``); anything else is ignored."""
    if name not in arguments:
        return None
    value = arguments[name]
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        _warn_once(f"{PLUGIN_NAME}: argument {name} must be a map, got {value!r}; ignored")
        return None
    for key in value:
        if key not in known:
            _warn_once(f"{PLUGIN_NAME}: unknown argument {name}.{key} is ignored")
    return Arguments(value, owner=f"{PLUGIN_NAME}.{name}")


def parse_best_effort_cpu(value: object, default: float) -> float:
    """``be_cpu``: an integer is milli-CPU, a string a quantity; negative or bad: default."""
    if isinstance(value, int) and not isinstance(value, bool):
        return default if value < 0 else float(value)
    if isinstance(value, str):
        try:
            milli = quantity_milli_value(value)
        except (QuantityError, ValueError):
            return default
        return default if milli < 0 else float(milli)
    return default


def parse_best_effort_memory(value: object, default: float) -> float:
    """``be_mem``: an integer is MiB, a string a quantity (bytes); negative or bad: default."""
    if isinstance(value, int) and not isinstance(value, bool):
        return default if value < 0 else float(value * MEBIBYTE)
    if isinstance(value, str):
        try:
            amount = quantity_value(value)
        except (QuantityError, ValueError):
            return default
        return default if amount < 0 else float(amount)
    return default


def metrics_interval(metrics_conf: Mapping[str, str]) -> float:
    """``metrics.interval`` of the scheduler conf, when a positive Go duration."""
    text = metrics_conf.get("interval")
    if text:
        try:
            interval = parse_duration(text)
        except DurationError:
            return DEFAULT_METRICS_INTERVAL
        if interval > 0:
            return interval
    return DEFAULT_METRICS_INTERVAL


def _start_seconds(pod: Mapping[str, Any]) -> float | None:
    started = (pod.get("status") or {}).get("startTime")
    if not isinstance(started, str) or not started:
        return None
    try:
        return datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def should_add_to_shadow_cache(task: TaskInfo, metrics_delay: float, now: float) -> bool:
    """A task on a node whose use the metrics cannot show yet: allocated, binding or bound,
    or running for less than ``metrics_delay`` seconds (or with no start time)."""
    if not task.node_name:
        return False
    if task.status in (TaskStatus.ALLOCATED, TaskStatus.BINDING, TaskStatus.BOUND):
        return True
    if task.status is TaskStatus.RUNNING:
        started = derived_fact(task, "usage.startTime", lambda t: _start_seconds(t.pod))
        return started is None or now - started < metrics_delay
    return False


class UsagePlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.config = UsageConfig.from_arguments(arguments)
        self.shadow = ShadowLoadCache()
        self.metrics_interval = DEFAULT_METRICS_INTERVAL
        self._node_names: list[str] = []
        self._capacity_cpu: FloatArray = np.zeros(0)
        self._capacity_mem: FloatArray = np.zeros(0)
        self._real_cpu: FloatArray = np.zeros(0)
        self._real_mem: FloatArray = np.zeros(0)
        self._fresh: np.ndarray[Any, np.dtype[np.bool_]] = np.zeros(0, dtype=np.bool_)
        self._scores: FloatArray = np.zeros(0)

    # ------------------------------------------------------------------ per node

    def _read_usage(self, ssn: Session) -> None:
        """Real load and freshness of every session node, as arrays over the session rows."""
        period = self.config.period
        usage = [ssn.node_usage.get(name, NO_USAGE) for name in self._node_names]
        self._real_cpu = np.fromiter((u.cpu(period) for u in usage), float, len(usage))
        self._real_mem = np.fromiter((u.memory(period) for u in usage), float, len(usage))
        taken = np.fromiter((u.metrics_time for u in usage), float, len(usage))
        self._fresh = (ssn.now - taken <= METRICS_ACTIVE_SECONDS) & bool(period)
        self._capacity_cpu = np.array(ssn.matrix.capacity[:, 0], dtype=float)
        self._capacity_mem = np.array(ssn.matrix.capacity[:, 1], dtype=float)

    def composite(self, row: int) -> tuple[float, float]:
        cpu_est, mem_est = self.shadow.get_node_est(self._node_name(row))
        cpu = calc_composite_utilization(
            float(self._real_cpu[row]), cpu_est, float(self._capacity_cpu[row])
        )
        mem = calc_composite_utilization(
            float(self._real_mem[row]), mem_est, float(self._capacity_mem[row])
        )
        return cpu, mem

    def _node_name(self, row: int) -> str:
        return self._node_names[row]

    def applied_risk_factor(self, row: int) -> float:
        config = self.config
        cpu, mem = self.composite(row)
        load = calc_load_composite_percentage(cpu, mem, config.cpu_weight, config.memory_weight)
        return calc_applied_risk_factor(load, config.risk_threshold, config.risk_factor)

    def estimate_task_resource(self, task: TaskInfo, risk: float) -> tuple[float, float]:
        config = self.config
        if task.best_effort:
            return (
                estimate_best_effort_resource(config.be_cpu, risk),
                estimate_best_effort_resource(config.be_memory, risk),
            )
        cpu_request, cpu_limit, mem_request, mem_limit = pod_request_limit(task.pod, task.resreq)
        return (
            estimate_pod_resource(
                cpu_request, cpu_limit, config.request_ratio, config.burst_ratio, risk
            ),
            estimate_pod_resource(
                mem_request, mem_limit, config.request_ratio, config.burst_ratio, risk
            ),
        )

    def _add(self, task: TaskInfo, node: NodeInfo) -> None:
        cpu, mem = self.estimate_task_resource(task, self.applied_risk_factor(node.row))
        self.shadow.add_estimate(node.name, task.uid, cpu, mem)

    # ------------------------------------------------------------------ session

    def on_session_open(self, ssn: Session) -> None:
        self._node_names = [node.name for node in ssn.node_list]
        self.shadow = ShadowLoadCache(self._node_names)
        self.metrics_interval = metrics_interval(ssn.conf.metrics)
        self._read_usage(ssn)
        self._warm_up(ssn)
        self.rescore()

        def on_allocate(event: Event) -> None:
            node = ssn.nodes.get(event.task.node_name)
            if node is not None and self._fresh[node.row]:
                self._add(event.task, node)
                self._scores[node.row] = self.node_score(node.row)

        def on_deallocate(event: Event) -> None:
            snapshot = self.shadow.get_snapshot(event.task.uid)
            if snapshot is None:
                return
            self.shadow.sub_estimate_by_snapshot(event.task.uid)
            node = ssn.nodes.get(snapshot.node_name)
            if node is not None:
                self._scores[node.row] = self.node_score(node.row)

        ssn.add_event_handler(
            EventHandler(allocate=on_allocate, deallocate=on_deallocate, owner=self.name)
        )
        mask = self._predicate_mask()
        ssn.add_predicate_mask_fn(self.name, lambda task: mask)
        ssn.add_batch_node_order_fn(self.name, self._batch_node_order)

    def _warm_up(self, ssn: Session) -> None:
        """Count the pods already on nodes that the metrics cannot see yet. Only nodes with
        fresh metrics: elsewhere the plugin passes and scores 0 whatever the shadow, so a
        cluster without metrics pays nothing here."""
        for row in np.flatnonzero(self._fresh):
            node = ssn.node_list[int(row)]
            for task in node.tasks.values():
                if should_add_to_shadow_cache(task, self.metrics_interval, ssn.now):
                    self._add(task, node)

    def _predicate_mask(self) -> NodeMask:
        """Real load only (the shadow does not count), so the same for every task."""
        config = self.config
        cpu_over = self._fresh & (self._real_cpu > config.cpu_thresholds)
        mem_over = self._fresh & ~cpu_over & (self._real_mem > config.mem_thresholds)
        passed = ~(cpu_over | mem_over)

        def reason(row: int) -> Status:
            text = NODE_USAGE_CPU_EXTEND if cpu_over[row] else NODE_USAGE_MEMORY_EXTEND
            return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, text, PLUGIN_NAME)

        return NodeMask(passed, reason)

    def rescore(self) -> None:
        """Every node's score, vectorised. A node's score changes only when the shadow on it
        does (one allocation or rollback: one row rescored), so scoring a task is a lookup."""
        config = self.config
        rows = np.arange(len(self._node_names), dtype=np.intp)
        shadow_cpu, shadow_mem = self.shadow.rows(rows)
        cpu = composite_utilization_rows(self._real_cpu, shadow_cpu, self._capacity_cpu)
        mem = composite_utilization_rows(self._real_mem, shadow_mem, self._capacity_mem)
        scores = node_scores_rows(
            cpu, mem, config.cpu_weight, config.memory_weight, config.usage_weight
        )
        self._scores = np.where(self._fresh, scores, 0.0)

    def _batch_node_order(self, task: TaskInfo, rows: IntArray) -> FloatArray:
        result: FloatArray = self._scores[rows]
        return result

    def node_score(self, row: int) -> float:
        """The scalar rule for one session row (the reference ``rescore`` follows)."""
        if not self._fresh[row]:
            return 0.0
        cpu, mem = self.composite(row)
        config = self.config
        return calc_node_score(
            cpu, mem, config.cpu_weight, config.memory_weight, config.usage_weight
        )

    def on_session_close(self, ssn: Session) -> None:
        self.shadow.reset()


def new(arguments: Arguments) -> UsagePlugin:
    return UsagePlugin(arguments)
