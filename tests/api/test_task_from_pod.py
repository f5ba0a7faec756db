"""``TaskInfo.from_pod`` reads the pod's metadata once instead of through each helper
(``job_id_of_pod``, ``task_role_of_pod``, ``pod_preemptable``, ``pod_revocable_zone``,
``task_status_of_pod``, ``pod_key``, ``scheduling_gates``): every field must be what the
helpers give, for any mix of annotations, labels, phases and marks."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.resource import Resource
from volcano_py.api.task import (
    TaskInfo,
    job_id_of_pod,
    pod_key,
    pod_preemptable,
    pod_revocable_zone,
    scheduling_gates,
    task_role_of_pod,
    task_status_of_pod,
)
from volcano_py.api.types import (
    GROUP_NAME_ANNOTATION,
    PREEMPTABLE_KEY,
    REVOCABLE_ZONE_KEY,
    TASK_SPEC_KEY,
)

_VALUES = st.sampled_from(["", "true", "false", "1", "0", "T", "bad", "*", "worker", "g1"])


def _maybe(keys: list[str]) -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(st.sampled_from(keys), _VALUES, max_size=len(keys))


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": draw(st.sampled_from(["p", "job-w-3", ""]))}
    for key, values in (
        ("namespace", ["", "ns", None]),
        ("uid", ["", "u-1", None]),
        ("deletionTimestamp", ["", "2026-01-01T00:00:00Z", None]),
        ("creationTimestamp", ["2026-01-01T00:00:00Z", None]),
    ):
        value = draw(st.sampled_from(values))
        if value is not None:
            meta[key] = value
    keys = [GROUP_NAME_ANNOTATION, TASK_SPEC_KEY, PREEMPTABLE_KEY, REVOCABLE_ZONE_KEY]
    if draw(st.booleans()):
        meta["annotations"] = draw(_maybe(keys))
    if draw(st.booleans()):
        meta["labels"] = draw(_maybe([TASK_SPEC_KEY, PREEMPTABLE_KEY]))
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["nodeName"] = draw(st.sampled_from(["", "n1"]))
    if draw(st.booleans()):
        spec["schedulingGates"] = [{"name": name} for name in draw(st.lists(_VALUES, max_size=2))]
    if draw(st.booleans()):
        spec["priority"] = draw(st.integers(-5, 5))
    pod: dict[str, Any] = {"metadata": meta, "spec": spec}
    phase = draw(st.sampled_from(["Running", "Pending", "Succeeded", "Failed", "Unknown", None]))
    if phase is not None:
        pod["status"] = {"phase": phase}
    return pod


@settings(max_examples=400, deadline=None)
@given(pods())
def test_from_pod_reads_what_the_helpers_read(pod: dict[str, Any]) -> None:
    task = TaskInfo.from_pod(pod, Resource())
    meta = pod["metadata"]
    assert task.uid == str(meta.get("uid") or pod_key(pod))
    assert task.job == job_id_of_pod(pod)
    assert task.namespace == str(meta.get("namespace") or "default")
    assert task.status is task_status_of_pod(pod)
    assert task.task_role == task_role_of_pod(pod)
    assert task.preemptable is pod_preemptable(pod)
    assert task.revocable_zone == pod_revocable_zone(pod)
    assert task.sch_gated is bool(scheduling_gates(pod))
    # The rest, as the keyword construction had them (from_pod now passes them by position).
    spec = pod["spec"]
    assert task.name == str(meta.get("name", ""))
    assert task.pod is pod
    assert task.node_name == str(spec.get("nodeName") or "")
    assert task.priority == spec.get("priority", 1)
    assert task.best_effort is True  # an empty request
    assert task.creation_timestamp == str(meta.get("creationTimestamp") or "")
    assert task.pod_annotations == (meta.get("annotations") or {})
    assert task.pod_annotations is not meta.get("annotations")
    assert task.last_transaction is None
    assert task.eviction_occurred is False
    assert task.job_allocated_hyper_node == ""
    assert (task.derived, task.bind_node_locks, task.claim_allocations) == ({}, (), {})


def test_the_fields_from_pod_passes_by_position_are_in_this_order() -> None:
    names = [f.name for f in dataclasses.fields(TaskInfo)]
    assert names[:20] == [
        "uid", "job", "name", "namespace", "pod", "resreq", "init_resreq", "status",
        "node_name", "task_role", "priority", "preemptable", "best_effort", "sch_gated",
        "revocable_zone", "creation_timestamp", "last_transaction", "eviction_occurred",
        "job_allocated_hyper_node", "pod_annotations",
    ]  # fmt: skip
    request = Resource(milli_cpu=1000.0)
    task = TaskInfo.from_pod({"metadata": {"name": "p"}, "spec": {}}, request)
    assert task.resreq is request and task.init_resreq is request and not task.best_effort
