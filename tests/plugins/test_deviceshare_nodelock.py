"""deviceshare.NodeLockEnable: the lock rule (``nodelock_test.go`` TestLockNode, 2 cases), the
session's lock per node (``gpushare``/``vgpu``/``hami`` ``Allocate``), and whole runs through
``simulate`` (the lock on the Node, a second pod held back until it expires, its pending reason
naming the lock). The live binder's side (the lock written on the Node before the Binding) is in
tests/operator/test_binder.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.plugins.deviceshare_helpers import example_with, limits_pod, simulate, write_input
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_lock import (
    LOCK_EXPIRY_SECONDS,
    lock_expiry,
    lock_holding,
    lock_refusal,
    lock_value,
    parse_lock_time,
)
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import FitError, FitErrors, TaskStatus, unschedulable
from volcano_py.plugins.deviceshare.nodelock import GPUSHARE_LOCK, VGPU_LOCK, NodeLocks, Refusal

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("name", "offset", "refusal"),
    [
        ("lock node success", -20 * 60, None),
        ("lock node failed", 20 * 60, "node test-node has been locked within 5 minutes"),
    ],
)
def test_lock_node(name: str, offset: float, refusal: str | None) -> None:
    """TestLockNode (nodelock_test.go): a lock 20 minutes old is taken over; one stamped 20
    minutes ahead is held."""
    annotations = {"test-node-lock": lock_value(NOW + offset)}
    assert lock_refusal("test-node", annotations, "test-node-lock", NOW) == refusal


def test_lock_edges() -> None:
    assert lock_refusal("n", {}, "gpu", NOW) is None
    held = {"gpu": lock_value(NOW - LOCK_EXPIRY_SECONDS)}
    assert lock_refusal("n", held, "gpu", NOW) is not None  # exactly five minutes: held
    assert lock_refusal("n", held, "gpu", NOW + 1) is None
    refusal = lock_refusal("n", {"gpu": "yesterday"}, "gpu", NOW)
    assert refusal is not None and "RFC3339" in refusal
    assert parse_lock_time("2026-01-01T00:00:00.5+01:00") == parse_lock_time(
        "2025-12-31T23:00:00.5Z"
    )
    assert lock_expiry({"hamivgpu": lock_value(NOW), "other": "x"}) == NOW + LOCK_EXPIRY_SECONDS


def test_lock_holding_names_the_annotation_and_its_times() -> None:
    held = {"gpu": "2027-01-15T07:58:00Z"}
    assert lock_holding("n", held, "gpu") == (
        "lock annotation 'gpu' on node n taken at 2027-01-15T07:58:00Z,"
        " held until 2027-01-15T08:03:00Z"
    )
    assert lock_holding("n", {"gpu": "yesterday"}, "gpu") == (
        "lock annotation 'gpu' on node n is 'yesterday', not an RFC 3339 time:"
        " it holds until it is removed"
    )


def _node(annotations: dict[str, str] | None = None) -> NodeInfo:
    raw = {"metadata": {"name": "node-a", "annotations": annotations or {}}}
    return NodeInfo(name="node-a", matrix=NodeMatrix(), row=0, node=raw)


def _task(name: str) -> TaskInfo:
    pod = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"containers": []},
        "status": {"phase": "Pending"},
    }
    task = TaskInfo.from_pod(pod)
    task.node_name = "node-a"
    return task


def test_one_lock_per_node_per_session_and_undone_with_the_allocation() -> None:
    node = _node()
    locks = NodeLocks({}, NOW)
    first, second = _task("a"), _task("b")
    assert locks.take(first, node, GPUSHARE_LOCK) is None
    assert first.bind_node_locks == (GPUSHARE_LOCK,)
    assert locks.take(second, node, GPUSHARE_LOCK) == Refusal(
        "node node-a has been locked within 5 minutes",
        "lock annotation 'gpu' on node node-a taken in this scheduling cycle for pod default/a",
    )
    assert locks.take(second, node, VGPU_LOCK) is None  # another device's lock
    locks.release(first)
    assert first.bind_node_locks == ()
    assert locks.take(second, node, GPUSHARE_LOCK) is None


def test_a_committed_lock_holds_until_the_node_shows_it() -> None:
    """Between the bind and the Node update that carries the lock, the next session still
    honours it; a newer Node object is the truth from then on."""
    node = _node()
    taken: dict[Any, Any] = {}
    locks = NodeLocks(taken, NOW)
    task = _task("a")
    assert locks.take(task, node, GPUSHARE_LOCK) is None
    task.status = TaskStatus.BINDING
    locks.close({"node-a": node})
    later = NodeLocks(taken, NOW + 10)
    assert later.take(_task("b"), node, GPUSHARE_LOCK) == Refusal(
        "node node-a has been locked within 5 minutes",
        f"lock annotation 'gpu' on node node-a taken at {lock_value(NOW)}, held until"
        f" {lock_value(NOW + LOCK_EXPIRY_SECONDS)} for pod default/a",
    )
    released = _node()  # the device plugin removed it: a new Node object without it
    assert NodeLocks(taken, NOW + 20).take(_task("b"), released, GPUSHARE_LOCK) is None


def test_the_node_annotation_is_honoured() -> None:
    node = _node({GPUSHARE_LOCK: lock_value(NOW - 60)})
    refusal = NodeLocks({}, NOW).take(_task("a"), node, GPUSHARE_LOCK)
    assert refusal is not None
    assert refusal.holding == lock_holding("node-a", {"gpu": lock_value(NOW - 60)}, "gpu")
    assert NodeLocks({}, NOW + 300).take(_task("a"), node, GPUSHARE_LOCK) is None


def _job(*tasks: TaskInfo) -> JobInfo:
    job = JobInfo(uid="default/job", name="job", namespace="default")
    for task in tasks:
        task.job = job.uid
        task.node_name = ""
        job.add_task(task)
    return job


def test_a_task_left_pending_by_a_lock_gets_it_as_its_fit_error() -> None:
    """Volcano only logs the refused allocation; the pending reason names the lock. Recorded
    at close: a task placed after all, or one with no refusal, gets nothing."""
    node = _node({GPUSHARE_LOCK: lock_value(NOW - 60)})
    pending, placed, other = _task("a"), _task("b"), _task("c")
    job = _job(pending, placed, other)
    locks = NodeLocks({}, NOW)
    for task in (pending, placed):
        refusal = locks.take(task, node, GPUSHARE_LOCK)
        assert refusal is not None
        error = f"node node-a locked for lockname gpushare {refusal.reason}"
        locks.refuse(task, node, error, refusal)
    assert not job.nodes_fit_errors  # nothing during the session: the role cache is untouched
    job.update_task_status(placed, TaskStatus.ALLOCATED)
    locks.record_fit_errors({job.uid: job})
    assert set(job.nodes_fit_errors) == {pending.uid}
    reason, message, _ = job.task_scheduling_reason(pending.uid)
    assert reason == "Unschedulable"
    assert message == (
        "node node-a locked for lockname gpushare node node-a has been locked within 5 minutes"
        f" (lock annotation 'gpu' on node node-a taken at {lock_value(NOW - 60)}, held until"
        f" {lock_value(NOW + 240)})"
    )


def test_a_lock_refusal_joins_the_fit_errors_of_a_later_attempt() -> None:
    node = _node({GPUSHARE_LOCK: lock_value(NOW - 60)})
    task = _task("a")
    job = _job(task)
    locks = NodeLocks({}, NOW)
    refusal = locks.take(task, node, GPUSHARE_LOCK)
    assert refusal is not None
    locks.refuse(task, node, "locked", refusal)
    errors = FitErrors()
    errors.set_node_error("node-b", FitError("node-b", [unschedulable("Insufficient cpu")]))
    job.nodes_fit_errors[task.uid] = errors
    locks.record_fit_errors({job.uid: job})
    assert job.nodes_fit_errors[task.uid].message() == (
        f"0/2 nodes are available: 1 Insufficient cpu, 1 locked ({refusal.holding})."
    )


# ---- simulate

CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
    arguments: {arguments}
"""


def _input(tmp_path: Path, arguments: dict[str, Any], limits: dict[str, str]) -> Path:
    resources = {
        "cpu": "32",
        "memory": "64Gi",
        "pods": "110",
        "volcano.sh/gpu-memory": "16000",
        "volcano.sh/gpu-number": "2",
    }
    documents: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": CONF.format(arguments=json.dumps(arguments))},
        },
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "node-a"},
            "status": {"capacity": resources, "allocatable": resources},
        },
    ]
    documents.extend(limits_pod(name, limits) for name in ("one", "two"))
    return write_input(tmp_path, documents)


SHARE = {"deviceshare.GPUSharingEnable": True, "deviceshare.NodeLockEnable": True}
MEMORY = {"volcano.sh/gpu-memory": "1000"}


def test_simulate_serialises_binds_per_node_until_the_lock_expires(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _input(tmp_path, SHARE, MEMORY)
    early = simulate(capsys, path, "--cycles", "3")
    assert list(early["binds"]) == ["default/one"]
    listing = simulate(capsys, path, "--cycles", "3", "--format", "yaml")
    node = next(item for item in listing["items"] if item["kind"] == "Node")
    assert node["metadata"]["annotations"] == {"gpu": "2026-01-01T00:00:01Z"}
    # No device plugin removes it: the second pod binds once it is older than five minutes.
    report = simulate(capsys, path)
    assert sorted(report["binds"]) == ["default/one", "default/two"]
    first = int(report["pods"]["default/one"]["annotations"]["volcano.sh/predicate-time"])
    second = int(report["pods"]["default/two"]["annotations"]["volcano.sh/predicate-time"])
    assert second - first > LOCK_EXPIRY_SECONDS * 1e9


@pytest.mark.parametrize(
    ("cycles", "holding"),
    [
        # Both pods in one session: the first took the lock in it.
        ("1", "lock annotation 'gpu' on node node-a taken in this scheduling cycle for pod"
         " default/one"),
        # Later: the Node carries the lock the first bind wrote.
        ("3", "lock annotation 'gpu' on node node-a taken at 2026-01-01T00:00:01Z, held until"
         " 2026-01-01T00:05:01Z"),
    ],
)  # fmt: skip
def test_simulate_the_pending_reason_names_the_lock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cycles: str, holding: str
) -> None:
    """The pod held back gets Volcano's allocation error (which Volcano only logs) and the
    lock that holds as its reason, in ``unschedulable`` and on its PodScheduled condition."""
    path = _input(tmp_path, SHARE, MEMORY)
    expected = (
        "node node-a locked for lockname gpushare node node-a has been locked within 5 minutes"
        f" ({holding})"
    )
    report = simulate(capsys, path, "--cycles", cycles)
    assert expected in report["unschedulable"].values()
    listing = simulate(capsys, path, "--cycles", cycles, "--format", "yaml")
    pod = next(i for i in listing["items"] if i["metadata"]["name"] == "two")
    assert pod["status"]["conditions"] == [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": expected}
    ]


@pytest.mark.parametrize(
    ("arguments", "limits"),
    [
        # Without the switch both bind at once.
        ({"deviceshare.GPUSharingEnable": True}, MEMORY),
        # Upstream locks only for a pod sharing a card by memory, not for whole cards.
        (
            {"deviceshare.GPUNumberEnable": True, "deviceshare.NodeLockEnable": True},
            {"volcano.sh/gpu-number": "1"},
        ),
    ],
)
def test_no_lock_taken(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    arguments: dict[str, Any],
    limits: dict[str, str],
) -> None:
    report = simulate(capsys, _input(tmp_path, arguments, limits), "--cycles", "2")
    assert sorted(report["binds"]) == ["default/one", "default/two"]


def test_simulate_vgpu_binds_take_the_hamivgpu_lock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """vGPU ``Allocate`` locks the node (after the fit): at most one new vGPU pod per node
    until the lock expires, and the Node carries ``hamivgpu``."""
    documents = example_with("vgpu.yaml", {"deviceshare.NodeLockEnable": True})
    infer = next(d for d in documents if d["metadata"]["name"] == "infer")
    for index in range(2):
        extra = json.loads(json.dumps(infer))
        extra["metadata"]["name"] = f"infer-{index}"
        documents.append(extra)
    path = write_input(tmp_path, documents)
    listing = simulate(capsys, path, "--cycles", "3", "--format", "yaml")
    nodes = {
        item["metadata"]["name"]: item["metadata"].get("annotations", {})
        for item in listing["items"]
        if item["kind"] == "Node"
    }
    bound = [
        item["spec"]["nodeName"]
        for item in listing["items"]
        if item["kind"] == "Pod"
        and item["metadata"]["name"] != "running"
        and item["spec"].get("nodeName")
    ]
    assert sorted(bound) == ["gpu-1", "gpu-2"]
    assert all(VGPU_LOCK in nodes[name] for name in bound)
    # The third one waits for a lock, and says so.
    reasons = simulate(capsys, path, "--cycles", "3")["unschedulable"].values()
    assert any(
        "hamivgpu lockname node gpu-" in reason
        and "has been locked within 5 minutes (lock annotation 'hamivgpu' on node gpu-" in reason
        for reason in reasons
    ), reasons
