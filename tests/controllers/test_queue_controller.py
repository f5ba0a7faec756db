"""The queue controller (spec §5.3; upstream ``pkg/controllers/queue/state/*_test.go`` and
``queue_controller_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from controller_fixtures import queue

from volcano_py.controllers.queue import (
    QueueProcedure,
    QueueRequest,
    next_queue_state,
    queue_procedure,
    queue_request_for_command,
    queue_request_for_pod_group,
    queue_request_for_queue_change,
    state_node,
    state_transition,
    sync_queue,
)
from volcano_py.controllers.vocabulary import QueueState

OPEN, CLOSED, CLOSING, UNKNOWN = "Open", "Closed", "Closing", "Unknown"


# ------------------------------------------------------------------ the state table, row by row


@pytest.mark.parametrize(
    ("state", "action", "pod_groups", "expected"),
    [
        # Row Open
        (OPEN, "OpenQueue", 0, OPEN),
        (OPEN, "CloseQueue", 0, CLOSED),
        (OPEN, "CloseQueue", 2, CLOSING),
        (OPEN, "SyncQueue", 3, OPEN),
        ("", "SyncQueue", 0, OPEN),  # empty state behaves as Open
        # Row Closed
        (CLOSED, "OpenQueue", 1, OPEN),
        (CLOSED, "CloseQueue", 1, CLOSED),
        (CLOSED, "SyncQueue", 1, CLOSED),
        # Row Closing
        (CLOSING, "OpenQueue", 1, OPEN),
        (CLOSING, "CloseQueue", 0, CLOSED),
        (CLOSING, "CloseQueue", 1, CLOSING),
        (CLOSING, "SyncQueue", 0, CLOSED),
        (CLOSING, "SyncQueue", 1, CLOSING),
        # Row Unknown
        (UNKNOWN, "OpenQueue", 0, OPEN),
        (UNKNOWN, "CloseQueue", 0, CLOSED),
        (UNKNOWN, "CloseQueue", 1, CLOSING),
        (UNKNOWN, "SyncQueue", 0, UNKNOWN),
        # Not a state: untouched
        ("Bogus", "OpenQueue", 0, "Bogus"),
    ],
)
def test_state_table(state: str, action: str, pod_groups: int, expected: str) -> None:
    """Spec §5.3 state table."""
    assert next_queue_state(state, action, pod_groups) == expected


# ------------------------------------------------------------------ queue/state/*_test.go


@pytest.mark.parametrize(
    ("test", "node", "action", "current", "pod_groups", "expected"),
    [
        ("TestOpenState_OpenQueueAction: Open queue", OPEN, "OpenQueue", OPEN, 0, OPEN),
        ("TestOpenState_CloseQueueAction: Open queue with no PodGroups",
         OPEN, "CloseQueue", OPEN, 0, CLOSED),
        ("TestOpenState_CloseQueueAction: Open queue with running PodGroups",
         OPEN, "CloseQueue", OPEN, 3, CLOSING),
        ("TestOpenState_SyncQueueAction: Open queue with empty spec state",
         OPEN, "SyncQueue", "", 0, OPEN),
        ("TestOpenState_SyncQueueAction: Open queue with spec state open",
         OPEN, "SyncQueue", OPEN, 0, OPEN),
        ("TestOpenState_SyncQueueAction: Open queue with spec state Closed and no PodGroups",
         OPEN, "SyncQueue", CLOSED, 0, CLOSED),
        ("TestOpenState_SyncQueueAction: Open queue with spec state Closed and PodGroups",
         OPEN, "SyncQueue", CLOSED, 1, CLOSING),
        ("TestClosedState_OpenQueueAction: Closed queue", CLOSED, "OpenQueue", CLOSED, 0, OPEN),
        ("TestClosedState_CloseQueueAction: Closed queue",
         CLOSED, "CloseQueue", CLOSED, 0, CLOSED),
        ("TestClosedState_SyncQueueAction: Spec state open", CLOSED, "SyncQueue", OPEN, 0, OPEN),
        ("TestClosedState_SyncQueueAction: Spec state closed",
         CLOSED, "SyncQueue", CLOSED, 0, CLOSED),
        ("TestClosedState_SyncQueueAction: Spec state unknown/garbage",
         CLOSED, "SyncQueue", "unexpected-state", 0, UNKNOWN),
        ("TestClosingState_OpenQueueAction: Closing queue",
         CLOSING, "OpenQueue", CLOSING, 0, OPEN),
        ("TestClosingState_CloseQueueAction: Closing queue with no podgroup",
         CLOSING, "CloseQueue", CLOSING, 0, CLOSED),
        ("TestClosingState_CloseQueueAction: Closing queue with running podgroup",
         CLOSING, "CloseQueue", CLOSING, 1, CLOSING),
        ("TestClosingState_SyncQueueAction: Spec state open", CLOSING, "SyncQueue", OPEN, 0, OPEN),
        ("TestClosingState_SyncQueueAction: Spec state closing with no podgroups",
         CLOSING, "SyncQueue", CLOSING, 0, CLOSED),
        ("TestClosingState_SyncQueueAction: Spec state closing with podgroups",
         CLOSING, "SyncQueue", CLOSING, 1, CLOSING),
        ("TestClosingState_SyncQueueAction: Spec state unknown/garbage",
         CLOSING, "SyncQueue", "unexpected-state", 0, UNKNOWN),
        ("TestUnknownState_OpenQueueAction: Unknown state",
         UNKNOWN, "OpenQueue", UNKNOWN, 0, OPEN),
        ("TestUnknownState_CloseQueueAction: Unknown state queue with no podgroups",
         UNKNOWN, "CloseQueue", UNKNOWN, 0, CLOSED),
        ("TestUnknownState_CloseQueueAction: Unknown state queue with running podgroups",
         UNKNOWN, "CloseQueue", UNKNOWN, 1, CLOSING),
        ("TestUnknownState_SyncQueueAction: Spec state open", UNKNOWN, "SyncQueue", OPEN, 0, OPEN),
        ("TestUnknownState_SyncQueueAction: Spec state closed with no podgroups",
         UNKNOWN, "SyncQueue", CLOSED, 0, CLOSED),
        ("TestUnknownState_SyncQueueAction: Spec state closed with running podgroups",
         UNKNOWN, "SyncQueue", CLOSED, 1, CLOSING),
        ("TestUnknownState_SyncQueueAction: Spec state unknown/garbage",
         UNKNOWN, "SyncQueue", "unexpected-state", 0, UNKNOWN),
    ],
)  # fmt: skip
def test_upstream_state_objects(
    test: str, node: str, action: str, current: str, pod_groups: int, expected: str
) -> None:
    """The state objects' status functions, built by hand as upstream's tests do (so the
    object's state and the queue's recorded state may differ)."""
    assert state_transition(QueueState(node), action, current, pod_groups) == expected, test


@pytest.mark.parametrize(
    ("name", "state", "expected"),
    [
        ("Empty state returns openState", "", QueueState.OPEN),
        ("Open state returns openState", OPEN, QueueState.OPEN),
        ("Closed state returns closedState", CLOSED, QueueState.CLOSED),
        ("Closing state returns closingState", CLOSING, QueueState.CLOSING),
        ("Unknown state returns unknownState", UNKNOWN, QueueState.UNKNOWN),
        ("Unrecognised state returns nil", "UnseenState", None),
    ],
)
def test_upstream_new_state(name: str, state: str, expected: QueueState | None) -> None:
    """TestNewState."""
    assert state_node(state) == expected, name


# ------------------------------------------------------------------ sync_queue


def _sync(
    target: dict[str, Any], action: str, queues: list[dict[str, Any]], pod_groups: list[str]
) -> Any:
    by_name = {q["metadata"]["name"]: q for q in queues}
    return sync_queue(
        target,
        QueueRequest(target["metadata"]["name"], action),
        queues=by_name,
        pod_group_phases=pod_groups,
    )


ROOT = queue("root")


@pytest.mark.parametrize(
    ("name", "state", "action", "expected"),
    [("From empty state to open", "", "SyncQueue", OPEN),
     ("From open to close", OPEN, "CloseQueue", CLOSED)],
)  # fmt: skip
def test_upstream_sync_queue(name: str, state: str, action: str, expected: str) -> None:
    """TestSyncQueue (on a leaf queue; upstream's uses root, which this port refuses to
    close)."""
    target = queue("q1", state, parent="root")
    changes = _sync(target, action, [ROOT, target], [])
    assert changes.state == expected, name


def test_sync_patches_missing_parent_to_root() -> None:
    target = queue("q1")
    changes = _sync(target, "SyncQueue", [ROOT, target], ["Running", "Pending", "Running"])
    assert changes.parent == "root"
    assert changes.state is None
    assert changes.pod_group_counts == {
        "Pending": 1,
        "Running": 2,
        "Unknown": 0,
        "Inqueue": 0,
        "Completed": 0,
    }


def test_root_gets_no_parent() -> None:
    assert _sync(ROOT, "SyncQueue", [ROOT], []).parent is None


def test_closing_queue_closes_when_its_last_pod_group_goes() -> None:
    target = queue("q1", CLOSING, parent="root")
    assert _sync(target, "SyncQueue", [ROOT, target], ["Running"]).state is None
    assert _sync(target, "SyncQueue", [ROOT, target], []).state == CLOSED


def test_close_closes_children_first() -> None:
    parent = queue("p", OPEN, parent="root")
    open_child = queue("c1", OPEN, parent="p")
    closed_child = queue("c2", CLOSED, parent="p")
    changes = _sync(parent, "CloseQueue", [ROOT, parent, open_child, closed_child], ["Running"])
    assert changes.state == CLOSING
    assert changes.annotations == {"c1": {"volcano.sh/closed-by-parent": "true"}}
    assert changes.requests == [QueueRequest("c1", "CloseQueue")]
    assert ("Normal", "CloseQueue", "Close queue succeed") in changes.events


def test_root_cannot_be_closed() -> None:
    changes = _sync(ROOT, "CloseQueue", [ROOT], [])
    assert changes.state is None
    assert changes.events == [("Warning", "CloseQueue", "Root queue cannot be closed")]


def test_sync_under_a_closed_parent_closes_the_child() -> None:
    parent = queue("p", CLOSED, parent="root")
    child = queue("c", OPEN, parent="p")
    changes = _sync(child, "SyncQueue", [ROOT, parent, child], [])
    assert changes.annotations == {"c": {"volcano.sh/closed-by-parent": "true"}}
    assert changes.requests == [QueueRequest("c", "CloseQueue")]


def test_sync_under_a_reopened_parent_reopens_a_child_it_closed() -> None:
    parent = queue("p", OPEN, parent="root")
    child = queue("c", CLOSED, parent="p", annotations={"volcano.sh/closed-by-parent": "true"})
    assert _sync(child, "SyncQueue", [ROOT, parent, child], []).requests == [
        QueueRequest("c", "OpenQueue")
    ]
    closed_by_user = queue("d", CLOSED, parent="p")
    assert _sync(closed_by_user, "SyncQueue", [ROOT, parent, closed_by_user], []).requests == []


def test_open_reopens_children_closed_by_it_and_clears_its_mark() -> None:
    parent = queue("p", CLOSED, parent="root", annotations={"volcano.sh/closed-by-parent": "true"})
    child = queue("c", CLOSED, parent="p", annotations={"volcano.sh/closed-by-parent": "true"})
    changes = _sync(parent, "OpenQueue", [ROOT, parent, child], [])
    assert changes.state == OPEN
    assert changes.requests == [QueueRequest("c", "OpenQueue")]
    assert changes.annotations == {"p": {"volcano.sh/closed-by-parent": "false"}}


def test_open_refused_while_the_parent_is_closed() -> None:
    parent = queue("p", CLOSED, parent="root")
    child = queue("c", CLOSED, parent="p")
    changes = _sync(child, "OpenQueue", [ROOT, parent, child], [])
    assert changes.state is None
    assert changes.events[0][0] == "Warning"
    assert "Open the parent queue first" in changes.events[0][2]


def test_procedures() -> None:
    assert queue_procedure(OPEN, "OpenQueue") is QueueProcedure.SYNC
    assert queue_procedure(CLOSED, "OpenQueue") is QueueProcedure.OPEN
    assert queue_procedure(OPEN, "CloseQueue") is QueueProcedure.CLOSE
    assert queue_procedure(CLOSING, "CloseQueue") is QueueProcedure.SYNC


def test_invalid_state_is_reported() -> None:
    target = queue("q", "Weird", parent="root")
    changes = _sync(target, "SyncQueue", [ROOT, target], [])
    assert changes.state is None
    assert changes.events[0][0] == "Warning"


# ------------------------------------------------------------------ requests


def test_queue_request_for_command() -> None:
    command: dict[str, Any] = {
        "action": "CloseQueue",
        "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "q1"},
    }
    assert queue_request_for_command(command) == QueueRequest("q1", "CloseQueue", "CommandIssued")
    command["target"]["kind"] = "Job"
    assert queue_request_for_command(command) is None


def test_upstream_add_queue_and_parent_change() -> None:
    """TestAddQueue: an added queue is synced; an update only when its parent changed."""
    q1 = queue("q1", parent="root")
    assert queue_request_for_queue_change(None, q1) == QueueRequest("q1", "SyncQueue", "OutOfSync")
    assert queue_request_for_queue_change(q1, queue("q1", CLOSED, parent="root")) is None
    assert queue_request_for_queue_change(q1, queue("q1", parent="p")) is not None


def test_upstream_add_pod_group() -> None:
    """TestAddPodGroup / TestUpdatePodGroup / TestDeletePodGroup: the group's queue syncs."""
    pg = {"metadata": {"name": "pg1"}, "spec": {"queue": "q1"}}
    assert queue_request_for_pod_group(pg) == QueueRequest("q1")
