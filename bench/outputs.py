"""A digest of everything a scheduling session hands out, in order, to show that a speed-up
changed none of it (issue 14). Not a benchmark: run it from two trees and compare.

    cd /path/to/base && python -m bench.outputs 0 60 > base.txt
    cd /path/to/branch && python -m bench.outputs 0 60 > branch.txt
    diff base.txt branch.txt

``bench.decisions`` digests the decisions (which pod on which node, every task's status, the
PodGroup phases); this digests what leaves the scheduler: every bind in the order the binder
got it, every eviction, PodGroup and queue status write, pod condition and event in call order,
and, at the end, the scheduler's whole ``/metrics`` text. The clusters and configurations are
``bench.decisions``'; the session and the cache read one fixed clock, so the metrics that
count from a pod's or a job's creation are the same in every run. Per seed it prints an md5 of
the calls and their count; the last line is the md5 of the metrics text.

``--reference`` first switches every shortcut listed in ``REFERENCE_SWITCHES`` off (the
module flags each speed-up's tests use), for comparing both paths in one tree.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bench.decisions import cluster, conf_text
from volcano_py import metrics
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import parse_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

# The pods and PodGroups of ``bench.decisions`` carry no creation time; these do (below), a
# week before the clock every session reads.
CREATED = "2026-01-01T00:00:00Z"
NOW = datetime.fromisoformat("2026-01-08T00:00:00+00:00").timestamp()

# Histograms of how long our own code took (wall clock): not comparable between runs.
WALL_TIMED: tuple[str, ...] = (
    "volcano_scheduling_stage_duration_milliseconds",
    "volcano_e2e_scheduling_latency_milliseconds",
    "volcano_open_session_duration_milliseconds",
    "volcano_plugin_scheduling_latency_milliseconds",
    "volcano_action_scheduling_latency_milliseconds",
)

# (module, flag, reference value): the shortcuts ``--reference`` switches off.
REFERENCE_SWITCHES: tuple[tuple[str, str, object], ...] = (
    ("volcano_py.actions.allocate", "_SORTED_TASKS", False),
    ("volcano_py.actions.allocate", "_SORTED_JOBS", False),
    ("volcano_py.actions.allocate", "_SKIP_NOTHING_PENDING", False),
    ("volcano_py.actions.task_placement", "_RUNS_ACROSS_JOBS", False),
    ("volcano_py.actions.task_placement", "_BRIDGED_TEMPLATES", False),
    ("volcano_py.api.node", "_PLAIN_FLOAT_CHARGES", False),
    ("volcano_py.api.resource", "_BIND_KEEPS_REQUEST", False),
    ("volcano_py.cache.cache", "_BIND_PENDING_IN_PLACE", False),
    ("volcano_py.cache.cache", "_BOUND_TASK_SHARED", False),
    ("volcano_py.api.job", "_KEEP_TASK_SUMS", False),
    ("volcano_py.api.job", "_ONE_CALL_MOVES", False),
    ("volcano_py.framework.session", "_SUM_BY_JOB", False),
    ("volcano_py.framework.session", "_QUIET_CLOSE", False),
    ("volcano_py.metrics.scheduler", "_SKIP_UNCHANGED_GAUGES", False),
    ("volcano_py.metrics.scheduler", "_DIRECT_SERIES", False),
    ("volcano_py.metrics.scheduler", "_SKIP_EQUAL_SETS", False),
    ("volcano_py.plugins.overcommit", "_USED_BY_COLUMN", False),
    ("volcano_py.plugins.nodeorder", "_BOUND_ROW_SCORE", False),
    ("volcano_py.plugins.proportion", "_LAZY_SHARE", False),
    ("volcano_py.plugins.proportion", "_PLAIN_ALLOCATABLE", False),
    ("volcano_py.plugins.proportion", "_PLAIN_SCALARS", False),
    ("volcano_py.plugins.proportion", "_ADD_BY_QUEUE", False),
    ("volcano_py.plugins.drf", "_LAZY_SHARE", False),
    ("volcano_py.plugins.drf", "_KEEP_SHARES", False),
    ("volcano_py.plugins._plugin_helpers", "_SHARED_USAGE", False),
    ("volcano_py.metrics.batch", "_BATCHED", False),
    ("volcano_py.framework.statement", "_BATCH_COMMIT", False),
    ("volcano_py.framework.node_selection", "_FITS_IN_ONE_PASS", False),
    ("volcano_py.framework.node_selection", "_ROW_SCORED_STALE", 1),
    ("volcano_py.plugins._kube_scheduling.session_pods", "_SHARED", False),
    ("volcano_py.plugins._kube_scheduling.affinity_tracker", "_SHARED", False),
    ("volcano_py.plugins._kube_scheduling.affinity_tracker", "_KEEP_EVERY_POD", False),
    ("volcano_py.api.job", "_FLAT_SNAPSHOT_COPY", False),
    ("volcano_py.api.job", "_ONE_PASS_SUMS", False),
    ("volcano_py.framework.session", "_TOPOLOGY_SCAN_IN_C", False),
    ("volcano_py.framework.session", "_BLANKED_FACTS", False),
    ("volcano_py.plugins.drf", "_RECORD_MOVED_SHARES", False),
    ("volcano_py.plugins.drf", "_SKIP_HELD_SHARES", False),
    ("volcano_py.plugins.gang", "_SKIP_HELD_COUNTS", False),
    ("volcano_py.plugins._plugin_helpers", "_KEEP_USAGE", False),
    ("volcano_py.plugins.proportion", "_ONE_PASS_TOTALS", False),
    ("volcano_py.metrics.scheduler", "_FUSED_SETS", False),
    ("volcano_py.framework.session", "_FLAT_CLOSE_FACTS", False),
    ("volcano_py.plugins.drf", "_FLAT_SHARE_MEMO", False),
    ("volcano_py.plugins._plugin_helpers", "_FLAT_USAGE", False),
)


@dataclass
class CallLog:
    """Binder, evictor, status updater and event recorder in one: every call, in order."""

    calls: list[list[Any]] = field(default_factory=list)

    def bind(self, task: TaskInfo, node_name: str) -> None:
        self.calls.append(["bind", task.key, node_name, sorted(task.pod_annotations.items())])

    def evict(self, task: TaskInfo, reason: str) -> None:
        self.calls.append(["evict", task.key, reason])

    def update_pod_group_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        self.calls.append(["pod group status", namespace, name, status])

    def update_queue_status(self, name: str, allocated: Mapping[str, str]) -> None:
        self.calls.append(["queue status", name, allocated])

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        self.calls.append(["pod condition", task.key, condition, nominated_node])

    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        self.calls.append(["event", kind, namespace, name, event_type, reason, message])


def _created(obj: dict[str, Any]) -> dict[str, Any]:
    obj.setdefault("metadata", {})["creationTimestamp"] = CREATED
    return obj


def outputs(seed: int, drf_hierarchy: bool = False) -> tuple[str, int]:
    """(md5 of every call two sessions made, how many) for the cluster of ``seed``;
    ``drf_hierarchy``: with drf's ``enableHierarchy`` on (and without proportion)."""
    draw, objects = cluster(seed)
    text = conf_text(draw)
    if drf_hierarchy:
        # (Volcano refuses proportion beside drf's hierarchy.)
        text = text.replace("  - name: drf\n", "  - name: drf\n    enableHierarchy: true\n")
        text = text.replace("  - name: proportion\n", "")
    conf = parse_conf(text, BUILTIN_ACTIONS)
    log = CallLog()
    cache = SchedulerCache(
        binder=log, evictor=log, status_updater=log, recorder=log, clock=lambda: NOW
    )
    for kind, key in (
        ("Queue", "queues"),
        ("Node", "nodes"),
        ("PodGroup", "groups"),
        ("Pod", "pods"),
    ):
        for item in objects[key]:
            cache.apply_event(kind, "ADDED", _created(item) if kind != "Node" else item)
    state = SchedulingState(seed=seed, clock=lambda: NOW)
    for _ in range(2):
        ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
        for name in conf.actions:
            new_action(name).execute(ssn)
        close_session(ssn)
        cache.forget_series_of_jobs_gone_during_session()
        log.calls.append(["next start index", state.next_start_index])
    digest = hashlib.md5(json.dumps(log.calls, default=str).encode()).hexdigest()
    return digest, len(log.calls)


def deterministic_metrics(text: str) -> str:
    """The metrics text without what times our own code (``WALL_TIMED``): of those, only the
    number of observations is kept."""
    kept = []
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        timed = any(name.startswith(family) for family in WALL_TIMED)
        if not timed or name.endswith("_count"):
            kept.append(line)
    return "\n".join(kept)


def use_reference() -> None:
    for module, flag, value in REFERENCE_SWITCHES:
        setattr(importlib.import_module(module), flag, value)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--reference" in args:
        args = [arg for arg in args if arg != "--reference"]
        use_reference()
    first, last = (int(args[0]), int(args[1])) if len(args) == 2 else (0, 60)
    for seed in range(first, last):
        digest, calls = outputs(seed)
        print(seed, digest, calls, flush=True)
    text = deterministic_metrics(metrics.render(metrics.REGISTRY).decode())
    print("metrics", hashlib.md5(text.encode()).hexdigest(), len(text), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
