"""TaskInfo: statuses and transitions (seed 001 §9), and what a task reads from its pod
(``pkg/scheduler/api/job_info.go`` ``NewTaskInfo``, ``helpers.go`` ``getTaskStatus``,
``pod_info.go``)."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import pytest

from volcano_py.api.task import (
    TaskInfo,
    compare_tasks,
    job_id_of_pod,
    parse_go_bool,
    pod_index,
    pod_index_of_name,
    task_status_of_pod,
)
from volcano_py.api.types import (
    ALLOCATED_STATUSES,
    COMPLETED_STATUSES,
    GROUP_NAME_ANNOTATION,
    LEGAL_TRANSITIONS,
    PREEMPTABLE_KEY,
    PREEMPTABLE_STATUSES,
    QUEUE_ALLOCATION_GATE,
    REVOCABLE_ZONE_KEY,
    SCHEDULED_STATUSES,
    TASK_PRIORITY_ANNOTATION,
    TASK_SPEC_KEY,
    VOLCANO_GROUP_NAME_ANNOTATION,
    TaskStatus,
    TransactionContext,
    is_legal_transition,
)

S = TaskStatus


def make_pod(
    name: str = "p1",
    namespace: str = "ns1",
    *,
    uid: str | None = None,
    phase: str | None = "Pending",
    node: str = "",
    requests: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    priority: int | None = None,
    deleting: bool = False,
    gates: list[str] | None = None,
    created: str = "",
    extra_spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid or name}
    if annotations is not None:
        metadata["annotations"] = annotations
    if labels is not None:
        metadata["labels"] = labels
    if deleting:
        metadata["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if created:
        metadata["creationTimestamp"] = created
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": dict(requests or {})}}]
    }
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    if gates is not None:
        spec["schedulingGates"] = [{"name": gate} for gate in gates]
    spec.update(extra_spec or {})
    pod: dict[str, Any] = {"metadata": metadata, "spec": spec}
    if phase is not None:
        pod["status"] = {"phase": phase}
    return pod


def task_of(**kwargs: Any) -> TaskInfo:
    return TaskInfo.from_pod(make_pod(**kwargs))


# ---------------------------------------------------------------- statuses


def test_ten_statuses_are_upstream_bit_flags_with_upstream_names():
    expected = [
        "Pending",
        "Allocated",
        "Pipelined",
        "Binding",
        "Bound",
        "Running",
        "Releasing",
        "Succeeded",
        "Failed",
        "Unknown",
    ]
    assert [str(status) for status in TaskStatus] == expected
    assert [int(status) for status in TaskStatus] == [1 << bit for bit in range(10)]
    assert f"{S.BOUND}" == "Bound"


def test_status_groups_match_helpers_go():
    assert frozenset({S.BOUND, S.BINDING, S.RUNNING, S.ALLOCATED}) == ALLOCATED_STATUSES
    assert frozenset({S.RUNNING, S.BOUND, S.FAILED, S.SUCCEEDED}) == SCHEDULED_STATUSES
    assert frozenset({S.FAILED, S.SUCCEEDED}) == COMPLETED_STATUSES
    assert frozenset({S.BOUND, S.RUNNING}) == PREEMPTABLE_STATUSES


# Seed 001 §9.2, edge by edge.
SEED_001_TRANSITIONS = {
    (S.PENDING, S.ALLOCATED),  # the allocate action chose a node
    (S.PENDING, S.PIPELINED),  # waiting for resources being released
    (S.ALLOCATED, S.BINDING),  # bind request sent
    (S.ALLOCATED, S.PENDING),  # allocation discarded
    (S.PIPELINED, S.ALLOCATED),  # resources released
    (S.PIPELINED, S.PENDING),  # pipeline discarded
    (S.BINDING, S.BOUND),  # bind succeeded
    (S.BINDING, S.PENDING),  # bind failed
    (S.BOUND, S.RUNNING),  # pod started
    (S.BOUND, S.RELEASING),  # pod evicted
    (S.RUNNING, S.SUCCEEDED),
    (S.RUNNING, S.FAILED),
    (S.RUNNING, S.RELEASING),  # preempted or reclaimed
    (S.RELEASING, S.PENDING),  # released, may be rescheduled
}
# Not drawn in the seed but made by the session: Statement.Discard of an eviction puts the
# victim back to Running (upstream ``statement.go`` ``unevict``).
SESSION_ONLY_TRANSITIONS = {(S.RELEASING, S.RUNNING)}


def test_legal_transitions_table_covers_every_status():
    assert set(LEGAL_TRANSITIONS) == set(TaskStatus)


@pytest.mark.parametrize(("old", "new"), sorted(SEED_001_TRANSITIONS))
def test_seed_001_transition_is_legal(old: TaskStatus, new: TaskStatus):
    assert is_legal_transition(old, new)


@pytest.mark.parametrize(("old", "new"), sorted(SESSION_ONLY_TRANSITIONS))
def test_discarding_an_eviction_is_legal(old: TaskStatus, new: TaskStatus):
    assert is_legal_transition(old, new)


def test_every_other_transition_is_illegal():
    allowed = SEED_001_TRANSITIONS | SESSION_ONLY_TRANSITIONS
    for old, new in itertools.product(TaskStatus, repeat=2):
        assert is_legal_transition(old, new) == ((old, new) in allowed), (old, new)


@pytest.mark.parametrize("terminal", [S.SUCCEEDED, S.FAILED, S.UNKNOWN])
def test_terminal_statuses_have_no_successor(terminal: TaskStatus):
    assert not LEGAL_TRANSITIONS[terminal]
    assert not any(is_legal_transition(terminal, new) for new in TaskStatus)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (S.PENDING, S.RUNNING),
        (S.PENDING, S.BOUND),
        (S.PENDING, S.BINDING),
        (S.ALLOCATED, S.RUNNING),
        (S.PIPELINED, S.BINDING),
        (S.RELEASING, S.ALLOCATED),
        (S.RUNNING, S.PENDING),
        (S.PENDING, S.PENDING),
    ],
)
def test_shortcuts_are_illegal(old: TaskStatus, new: TaskStatus):
    assert not is_legal_transition(old, new)


# ---------------------------------------------------------------- status of a pod (getTaskStatus)


@pytest.mark.parametrize(
    ("phase", "deleting", "node", "expected"),
    [
        ("Running", False, "n1", S.RUNNING),
        ("Running", True, "n1", S.RELEASING),
        ("Pending", True, "", S.RELEASING),
        ("Pending", True, "n1", S.RELEASING),
        ("Pending", False, "", S.PENDING),
        ("Pending", False, "n1", S.BOUND),
        ("Succeeded", False, "n1", S.SUCCEEDED),
        ("Succeeded", True, "n1", S.SUCCEEDED),
        ("Failed", False, "n1", S.FAILED),
        ("Failed", True, "", S.FAILED),
        ("Unknown", False, "n1", S.UNKNOWN),
        ("", False, "", S.UNKNOWN),
        ("Evicted", False, "n1", S.UNKNOWN),
        (None, False, "", S.UNKNOWN),
    ],
)
def test_status_from_phase_deletion_and_node(
    phase: str | None, deleting: bool, node: str, expected: TaskStatus
):
    pod = make_pod(phase=phase, deleting=deleting, node=node)
    assert task_status_of_pod(pod) is expected
    task = TaskInfo.from_pod(pod)
    assert task.status is expected
    assert task.node_name == node


# ---------------------------------------------------------------- identity fields


def test_identity_fields_come_from_the_pod():
    pod = make_pod(
        "worker-0",
        "team-a",
        uid="uid-7",
        node="n3",
        created="2024-05-01T10:00:00Z",
        annotations={GROUP_NAME_ANNOTATION: "pg-1"},
    )
    task = TaskInfo.from_pod(pod)
    assert (task.uid, task.name, task.namespace) == ("uid-7", "worker-0", "team-a")
    assert task.key == "team-a/worker-0"
    assert task.job == "team-a/pg-1"
    assert task.node_name == "n3"
    assert task.creation_timestamp == "2024-05-01T10:00:00Z"
    assert task.pod is pod


def test_uid_falls_back_to_the_pod_key():
    pod = make_pod("p9", "ns2")
    del pod["metadata"]["uid"]
    assert TaskInfo.from_pod(pod).uid == "ns2/p9"


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({GROUP_NAME_ANNOTATION: "pg1"}, "ns1/pg1"),
        ({GROUP_NAME_ANNOTATION: ""}, ""),
        ({}, ""),
        # Only the Kubernetes key maps a pod to a job; Volcano's own key does not.
        ({VOLCANO_GROUP_NAME_ANNOTATION: "pg1"}, ""),
    ],
)
def test_job_id_from_the_group_name_annotation(annotations: dict[str, str], expected: str):
    pod = make_pod(annotations=annotations)
    assert job_id_of_pod(pod) == expected
    assert TaskInfo.from_pod(pod).job == expected


def test_job_id_without_annotations_at_all():
    assert job_id_of_pod(make_pod()) == ""


# ---------------------------------------------------------------- priority


def test_priority_defaults_to_one():
    assert task_of().priority == 1


@pytest.mark.parametrize("value", [0, 100, -5, 2_000_000_000])
def test_priority_from_spec(value: int):
    assert task_of(priority=value).priority == value


@pytest.mark.parametrize(
    ("annotation", "spec_priority", "expected"),
    [
        ("5", None, 5),
        ("5", 100, 5),  # the annotation overrides spec.priority
        ("-3", 100, -3),
        ("+4", None, 4),  # strconv.ParseInt accepts a sign
        ("0", 7, 0),
        ("2147483647", None, 2147483647),
        ("-2147483648", None, -2147483648),
        # strconv.ParseInt(v, 10, 32) refuses these, so spec.priority (or 1) stays.
        ("abc", 100, 100),
        ("", None, 1),
        ("1.5", None, 1),
        ("2147483648", 9, 9),  # out of int32 range
        ("-2147483649", None, 1),
        (" 7", None, 1),
        ("1_000", None, 1),
        ("0x10", None, 1),
    ],
)
def test_task_priority_annotation_override(
    annotation: str, spec_priority: int | None, expected: int
):
    task = task_of(annotations={TASK_PRIORITY_ANNOTATION: annotation}, priority=spec_priority)
    assert task.priority == expected


# ---------------------------------------------------------------- preemptable / revocable zone


@pytest.mark.parametrize(
    ("annotations", "labels", "expected"),
    [
        (None, None, True),  # default: a task can be preempted
        ({PREEMPTABLE_KEY: "false"}, None, False),
        ({PREEMPTABLE_KEY: "true"}, None, True),
        (None, {PREEMPTABLE_KEY: "false"}, False),
        (None, {PREEMPTABLE_KEY: "true"}, True),
        # The annotation is read first and wins over the label.
        ({PREEMPTABLE_KEY: "true"}, {PREEMPTABLE_KEY: "false"}, True),
        ({PREEMPTABLE_KEY: "false"}, {PREEMPTABLE_KEY: "true"}, False),
        # An unparseable value means false, even when the label says true.
        ({PREEMPTABLE_KEY: "yes"}, {PREEMPTABLE_KEY: "true"}, False),
        (None, {PREEMPTABLE_KEY: "maybe"}, False),
        # strconv.ParseBool spellings.
        ({PREEMPTABLE_KEY: "1"}, None, True),
        ({PREEMPTABLE_KEY: "T"}, None, True),
        ({PREEMPTABLE_KEY: "TRUE"}, None, True),
        ({PREEMPTABLE_KEY: "0"}, None, False),
        ({PREEMPTABLE_KEY: "F"}, None, False),
        ({PREEMPTABLE_KEY: "False"}, None, False),
        ({"other": "x"}, {"other": "y"}, True),
    ],
)
def test_preemptable_rules(
    annotations: dict[str, str] | None, labels: dict[str, str] | None, expected: bool
):
    assert task_of(annotations=annotations, labels=labels).preemptable is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", True),
        ("t", True),
        ("True", True),
        ("0", False),
        ("f", False),
        ("FALSE", False),
        ("yes", None),
        ("tRUE", None),
        ("", None),
    ],
)
def test_parse_go_bool(text: str, expected: bool | None):
    assert parse_go_bool(text) is expected


@pytest.mark.parametrize(
    ("annotations", "labels", "expected"),
    [
        ({REVOCABLE_ZONE_KEY: "*"}, None, "*"),
        ({REVOCABLE_ZONE_KEY: "zone-a"}, None, ""),  # only "*" is honoured
        ({REVOCABLE_ZONE_KEY: "zone-a", PREEMPTABLE_KEY: "true"}, None, ""),
        ({PREEMPTABLE_KEY: "true"}, None, "*"),  # a preemptable pod may use revocable nodes
        ({PREEMPTABLE_KEY: "false"}, None, ""),
        (None, {PREEMPTABLE_KEY: "true"}, ""),  # labels are not read for the zone
        (None, None, ""),
    ],
)
def test_revocable_zone_rules(
    annotations: dict[str, str] | None, labels: dict[str, str] | None, expected: str
):
    assert task_of(annotations=annotations, labels=labels).revocable_zone == expected


# ---------------------------------------------------------------- role


@pytest.mark.parametrize(
    ("annotations", "labels", "expected"),
    [
        ({TASK_SPEC_KEY: "ps"}, {TASK_SPEC_KEY: "worker"}, "ps"),
        (None, {TASK_SPEC_KEY: "worker"}, "worker"),
        ({TASK_SPEC_KEY: ""}, {TASK_SPEC_KEY: "worker"}, "worker"),
        ({"x": "y"}, None, ""),
        (None, None, ""),
    ],
)
def test_task_role(
    annotations: dict[str, str] | None, labels: dict[str, str] | None, expected: str
):
    assert task_of(annotations=annotations, labels=labels).task_role == expected


# ---------------------------------------------------------------- requests, best effort, gates


def test_best_effort_when_nothing_but_the_pod_slot_is_requested():
    task = task_of()
    assert task.best_effort
    assert task.resreq.scalar_resources == {"pods": 1.0}  # pods is ignored by is_empty


def test_not_best_effort_with_a_request():
    task = task_of(requests={"cpu": "100m"})
    assert not task.best_effort
    assert task.resreq.milli_cpu == 100
    assert task.init_resreq.milli_cpu == 100


@pytest.mark.parametrize("requests", [{"memory": "1Mi"}, {"nvidia.com/gpu": "1"}])
def test_any_dimension_makes_a_task_not_best_effort(requests: dict[str, str]):
    assert not task_of(requests=requests).best_effort


@pytest.mark.parametrize(
    ("gates", "gated", "only_volcano"),
    [
        (None, False, False),
        ([], False, False),
        (["example.com/wait"], True, False),
        ([QUEUE_ALLOCATION_GATE], True, True),
        ([QUEUE_ALLOCATION_GATE, "example.com/wait"], True, False),
    ],
)
def test_scheduling_gates(gates: list[str] | None, gated: bool, only_volcano: bool):
    task = task_of(gates=gates)
    assert task.sch_gated is gated
    assert task.only_volcano_gated is only_volcano


def test_preemption_policy_and_nominated_node():
    pod = make_pod(extra_spec={"preemptionPolicy": "Never"})
    pod["status"]["nominatedNodeName"] = "n7"
    task = TaskInfo.from_pod(pod)
    assert task.preemption_policy_never
    assert task.nominated_node_name == "n7"
    plain = task_of()
    assert not plain.preemption_policy_never
    assert plain.nominated_node_name == ""


# ---------------------------------------------------------------- clone and transactions


def test_clone_is_independent():
    original = task_of(node="", requests={"cpu": "1"}, annotations={"keep": "original"})
    copy = original.clone()
    assert copy is not original
    assert copy.pod is original.pod  # the pod dict is shared, never mutated
    assert (copy.uid, copy.job, copy.status, copy.resreq.milli_cpu) == (
        original.uid,
        original.job,
        original.status,
        original.resreq.milli_cpu,
    )
    copy.status = S.ALLOCATED
    copy.node_name = "n1"
    copy.priority = 99
    assert original.status is S.PENDING
    assert original.node_name == ""
    assert original.priority == 1


def test_clone_pod_annotations_are_independent():
    """Upstream TestTaskInfoPodAnnotationsAreCloned: the annotations a session adds for the
    Binding belong to that copy only, and never reach the pod dict."""
    pod = make_pod(annotations={"keep": "original"})
    task = TaskInfo.from_pod(pod)
    task.pod_annotations.update({"keep": "task", "new": "value"})
    assert pod["metadata"]["annotations"] == {"keep": "original"}

    cloned = task.clone()
    cloned.pod_annotations["keep"] = "clone"
    del cloned.pod_annotations["new"]

    assert task.pod_annotations == {"keep": "task", "new": "value"}
    assert cloned.pod_annotations == {"keep": "clone"}


def test_clone_last_transaction_is_independent():
    task = task_of(node="n1")
    task.status = S.ALLOCATED
    task.remember_transaction()
    cloned = task.clone()
    assert cloned.last_transaction == task.last_transaction
    assert cloned.last_transaction is not None
    cloned.last_transaction.node_name = "n2"
    assert task.last_transaction is not None
    assert task.last_transaction.node_name == "n1"


def test_remember_transaction_snapshots_placement():
    task = task_of()
    task.status = S.PIPELINED
    task.node_name = "n4"
    task.eviction_occurred = True
    task.remember_transaction()
    task.status = S.PENDING
    task.node_name = ""
    assert task.last_transaction == TransactionContext(
        node_name="n4", eviction_occurred=True, status=S.PIPELINED
    )
    assert task.transaction_context().status is S.PENDING


# ---------------------------------------------------------------- ordering (CompareTask)


@pytest.mark.parametrize(
    ("name", "index"),
    [
        ("job-worker-3", 3),
        ("job-worker-10", 10),
        ("a-b-c-0", 0),
        ("worker-3", None),
        ("job-worker-x", None),
        ("plain", None),
    ],
)
def test_pod_index_of_name(name: str, index: int | None):
    assert pod_index_of_name(name) == index


def test_pod_index_is_kept_by_the_task_and_its_clones_not_by_name():
    """Churn (bench churn): a memo keyed by pod name kept every deleted pod's name."""
    task = task_of(name="job-worker-7")
    assert pod_index(task) == 7
    assert pod_index(task.clone()) == 7
    assert task.derived == {"pod_index": 7}  # the clone shares the original's memo
    assert not hasattr(pod_index_of_name, "cache_info")


def ordered(tasks: list[TaskInfo]) -> list[str]:
    return [t.name for t in sorted(tasks, key=functools.cmp_to_key(compare_tasks))]


def test_compare_tasks_by_numeric_pod_index():
    tasks = [task_of(name=f"job-worker-{i}", uid=f"u{i}") for i in (10, 2, 1)]
    assert ordered(tasks) == ["job-worker-1", "job-worker-2", "job-worker-10"]


def test_compare_tasks_index_beats_creation_time():
    late_first = task_of(name="job-w-0", created="2024-01-02T00:00:00Z")
    early_second = task_of(name="job-w-1", created="2024-01-01T00:00:00Z")
    assert compare_tasks(late_first, early_second) < 0


def test_compare_tasks_falls_back_to_creation_time_then_uid():
    older = task_of(name="web-a", uid="z", created="2024-01-01T00:00:00Z")
    newer = task_of(name="web-b", uid="a", created="2024-01-02T00:00:00Z")
    assert ordered([newer, older]) == ["web-a", "web-b"]
    # Same index: creation time decides.
    same_index_old = task_of(name="j-a-1", uid="z", created="2024-01-01T00:00:00Z")
    same_index_new = task_of(name="j-b-1", uid="a", created="2024-01-03T00:00:00Z")
    assert compare_tasks(same_index_old, same_index_new) < 0
    # Same creation time: UID decides.
    left = task_of(name="x", uid="uid-a", created="2024-01-01T00:00:00Z")
    right = task_of(name="y", uid="uid-b", created="2024-01-01T00:00:00Z")
    assert compare_tasks(left, right) < 0
    assert compare_tasks(right, left) > 0
    assert compare_tasks(left, left) == 0
