"""Quota arithmetic, Go durations and a whole job lifecycle driven step by step the way the
simulated cluster drives the controller."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from controller_fixtures import LATER, NOW, job, task

from volcano_py.api.go_duration import DurationError
from volcano_py.api.quantity import QuantityError
from volcano_py.controllers.admission import mutate_job
from volcano_py.controllers.job import JobChanges, JobRequest, job_request_for_pod_change, sync_job
from volcano_py.controllers.quota import (
    Quantity,
    format_quantity,
    lists_equal,
    parse_list,
    pod_quota_usage,
)
from volcano_py.controllers.timefmt import format_go_duration, parse_go_duration


@pytest.mark.parametrize(
    ("value", "binary", "text"),
    [
        ("0.15", False, "150m"),
        ("2", False, "2"),
        ("1000", False, "1k"),
        ("1500", False, "1500"),
        ("0.000000001", False, "1n"),
        (str(3 * 2**30), True, "3Gi"),
        ("1536", True, "1536"),
        ("100", True, "100"),
        ("0.5", True, "500m"),
        ("0", False, "0"),
    ],
)
def test_canonical_quantity(value: str, binary: bool, text: str) -> None:
    assert format_quantity(Decimal(value), binary) == text


def test_quantity_keeps_format_through_arithmetic() -> None:
    assert str(Quantity.parse("1Gi").plus(Quantity.parse("1024Mi"))) == "2Gi"
    assert str(Quantity.parse("500m").times(3)) == "1500m"


def test_lists_equal_is_semantic() -> None:
    assert lists_equal({"cpu": "1000m"}, {"cpu": "1"})
    assert not lists_equal({"cpu": "1"}, {"cpu": "1", "memory": "0"})
    assert not lists_equal(None, {})
    assert lists_equal(None, None)


def test_bad_quantity_is_named() -> None:
    with pytest.raises(QuantityError, match="lots"):
        parse_list({"cpu": "lots"})


def test_pod_usage_init_containers_sidecars_and_overhead() -> None:
    pod = {
        "spec": {
            "containers": [{"resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}],
            "initContainers": [
                {"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
                {"resources": {"requests": {"cpu": "3"}}},
            ],
            "overhead": {"cpu": "100m"},
        }
    }
    usage = {k: str(v) for k, v in pod_quota_usage(pod).items()}
    # max(1 + 0.5 sidecar, 3 + 0.5) + 0.1 overhead; the limit gets the overhead too.
    assert usage["cpu"] == "3600m"
    assert usage["limits.cpu"] == "2100m"
    assert usage["pods"] == "1"


@pytest.mark.parametrize(
    ("text", "nanos", "back"),
    [
        ("90s", 90 * 10**9, "1m30s"),
        ("1h", 3600 * 10**9, "1h0m0s"),
        ("1.5s", 1_500_000_000, "1.5s"),
        ("250ms", 250_000_000, "250ms"),
        ("0", 0, "0s"),
        ("2h45m", (2 * 3600 + 45 * 60) * 10**9, "2h45m0s"),
    ],
)
def test_go_durations(text: str, nanos: int, back: str) -> None:
    assert parse_go_duration(text) == nanos
    assert format_go_duration(nanos) == back


@pytest.mark.parametrize("text", ["", "10", "5x", "m"])
def test_bad_go_durations(text: str) -> None:
    with pytest.raises(DurationError):
        parse_go_duration(text)


# ------------------------------------------------------------------ a whole lifecycle


class Cluster:
    """Just enough of a cluster to apply JobChanges."""

    def __init__(self, the_job: dict[str, Any]) -> None:
        self.job = the_job
        self.pod_group: dict[str, Any] | None = None
        self.pods: dict[str, dict[str, Any]] = {}

    def step(self, request: JobRequest, now: str = NOW) -> JobChanges:
        changes = sync_job(self.job, self.pod_group, list(self.pods.values()), request, now=now)
        if changes.pod_group is not None:
            self.pod_group = changes.pod_group
        for pod_name, extra in changes.annotate_pods.items():
            self.pods[pod_name]["metadata"]["annotations"].update(extra)
        for pod_name in changes.delete_pods:
            self.pods.pop(pod_name)
        for pod in changes.create_pods:
            self.pods[pod["metadata"]["name"]] = pod
        if changes.delete_pod_group:
            self.pod_group = None
        if changes.status is not None:
            self.job["status"] = changes.status
        return changes

    def phase(self) -> str:
        return str(self.job["status"]["state"]["phase"])

    def set_pod_phase(self, pod_name: str, phase: str) -> JobRequest | None:
        old = self.pods[pod_name]
        new = {**old, "status": {"phase": phase}}
        self.pods[pod_name] = new
        return job_request_for_pod_change(self.job, old, new, pods=list(self.pods.values()))


def test_job_lifecycle_run_restart_complete() -> None:
    the_job = mutate_job(
        job("train", task("worker", 2), policies=[{"event": "PodEvicted", "action": "RestartJob"}])
    )
    cluster = Cluster(the_job)
    cluster.step(JobRequest(event="OutOfSync"))
    assert cluster.phase() == "Pending"
    assert cluster.pod_group is not None and not cluster.pods

    cluster.pod_group["status"] = {"phase": "Inqueue"}  # the scheduler's enqueue
    cluster.step(JobRequest(event=""))
    assert sorted(cluster.pods) == ["train-worker-0", "train-worker-1"]

    for pod_name in list(cluster.pods):
        request = cluster.set_pod_phase(pod_name, "Running")
        assert request is not None and request.event == "PodRunning"
        cluster.step(request)
    assert cluster.phase() == "Running"

    # One pod is evicted: the whole job restarts, the group is dropped.
    evicted = cluster.pods.pop("train-worker-0")
    request = job_request_for_pod_change(cluster.job, evicted, None)
    assert request is not None
    cluster.step(request, now=LATER)
    assert cluster.phase() == "Restarting"
    assert cluster.pod_group is None and not cluster.pods
    assert cluster.job["status"]["retryCount"] == 1

    # The deletions come back as events of stale pods; a sync re-creates the group but the
    # job stays Restarting until the scheduler admits it and the pods are counted again.
    cluster.step(JobRequest(event="OutOfSync"))
    assert cluster.phase() == "Restarting"
    assert cluster.pod_group is not None
    cluster.pod_group["status"] = {"phase": "Inqueue"}
    cluster.step(JobRequest(event=""))
    assert cluster.phase() == "Pending"
    assert all(
        p["metadata"]["annotations"]["volcano.sh/job-version"] == "1" for p in cluster.pods.values()
    )
    for pod_name in sorted(cluster.pods):
        cluster.set_pod_phase(pod_name, "Running")
    cluster.step(JobRequest(event="OutOfSync"))
    assert cluster.phase() == "Running"
    requests = [cluster.set_pod_phase(p, "Succeeded") for p in sorted(cluster.pods)]
    assert requests[-1] is not None and requests[-1].event == "TaskCompleted"
    cluster.step(requests[-1])
    assert cluster.phase() == "Completed"
    assert [c["status"] for c in cluster.job["status"]["conditions"]] == [
        "Restarting",
        "Pending",
        "Running",
        "Completed",
    ]
