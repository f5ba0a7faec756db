"""The Queue controller: queue states Open / Closing / Closed / Unknown, the ``root`` parent
default, and closing or reopening children with their parent (``pkg/controllers/queue/``).

``next_queue_state`` is the state table; ``sync_queue`` is one request of the controller,
returning the writes it asks for and the follow-up requests it queues.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from volcano_py.api.types import ROOT_QUEUE
from volcano_py.controllers.raw import annotations_of, mapping, name, spec, status, text
from volcano_py.controllers.vocabulary import (
    CLOSED_BY_PARENT_KEY,
    EVENT_NORMAL,
    EVENT_WARNING,
    SCHEDULING_API_VERSION,
    Action,
    Event,
    PodGroupPhase,
    QueueState,
)

_CLOSED_OR_CLOSING: Final = frozenset({QueueState.CLOSED, QueueState.CLOSING})


@dataclass(slots=True)
class QueueRequest:
    queue_name: str
    action: str = Action.SYNC_QUEUE
    event: str = ""

    def __post_init__(self) -> None:
        self.action = str(self.action)
        self.event = str(self.event)


@dataclass(slots=True)
class QueueChanges:
    """The writes of one request. ``parent``: patch ``spec.parent`` (to ``root``);
    ``state``: the new ``status.state``; ``annotations``: queue name -> annotations to merge
    (``closed-by-parent`` on this queue or its children); ``requests``: follow-up requests to
    queue; ``pod_group_counts``: the queue's PodGroups by phase (exported as metrics)."""

    parent: str | None = None
    state: str | None = None
    annotations: dict[str, dict[str, str]] = field(default_factory=dict)
    requests: list[QueueRequest] = field(default_factory=list)
    events: list[tuple[str, str, str]] = field(default_factory=list)
    pod_group_counts: dict[str, int] = field(default_factory=dict)


class QueueProcedure(StrEnum):
    SYNC = "SyncQueue"
    OPEN = "OpenQueue"
    CLOSE = "CloseQueue"


def _closed_unless_busy(pod_groups: int) -> str:
    return QueueState.CLOSED if pod_groups == 0 else QueueState.CLOSING


def state_node(state: str) -> QueueState | None:
    """``NewState``: which state object handles a queue (empty is Open; None: not a state)."""
    if state in ("", QueueState.OPEN):
        return QueueState.OPEN
    if state in (QueueState.CLOSED, QueueState.CLOSING, QueueState.UNKNOWN):
        return QueueState(state)
    return None


def state_transition(node: QueueState, action: str, current: str, pod_groups: int) -> str:
    """What the status function of state object ``node`` sets for ``action`` on a queue whose
    ``status.state`` is ``current`` (they differ only when a test builds the object by hand).
    A queue closes only once its last PodGroup is gone: until then it is Closing."""
    if action == Action.OPEN_QUEUE:
        return QueueState.OPEN
    if action == Action.CLOSE_QUEUE:
        if node == QueueState.CLOSED:
            return QueueState.CLOSED
        return _closed_unless_busy(pod_groups)
    if current == QueueState.OPEN or (node == QueueState.OPEN and not current):
        return QueueState.OPEN
    if node == QueueState.CLOSED and current == QueueState.CLOSED:
        return QueueState.CLOSED
    if node == QueueState.CLOSING and current == QueueState.CLOSING:
        return _closed_unless_busy(pod_groups)
    if node in (QueueState.OPEN, QueueState.UNKNOWN) and current == QueueState.CLOSED:
        return _closed_unless_busy(pod_groups)
    return QueueState.UNKNOWN


def next_queue_state(state: str, action: str, pod_groups: int) -> str:
    """The state after ``action`` (OpenQueue, CloseQueue, anything else syncs) on a queue in
    ``state`` holding ``pod_groups`` PodGroups (``queue/state/*.go``; empty is Open). An
    unrecognised state stays as it is (upstream refuses the request)."""
    node = state_node(state)
    if node is None:
        return state
    return str(state_transition(node, action, state, pod_groups))


def queue_procedure(state: str, action: str) -> QueueProcedure:
    """Which controller routine carries the transition: opening a closed queue checks its
    parent and reopens children, closing an open one closes its children first."""
    current = state or QueueState.OPEN
    if action == Action.OPEN_QUEUE and current != QueueState.OPEN:
        return QueueProcedure.OPEN
    if action == Action.CLOSE_QUEUE and current in (QueueState.OPEN, QueueState.UNKNOWN):
        return QueueProcedure.CLOSE
    return QueueProcedure.SYNC


def queue_request_for_command(command: Mapping[str, Any]) -> QueueRequest | None:
    """A bus Command targeting a Queue: its action (OpenQueue / CloseQueue) on that queue."""
    target = mapping(command.get("target"))
    if target.get("apiVersion") != SCHEDULING_API_VERSION or target.get("kind") != "Queue":
        return None
    return QueueRequest(
        queue_name=text(target.get("name")),
        action=text(command.get("action")),
        event=Event.COMMAND_ISSUED,
    )


def queue_request_for_queue_change(
    old: Mapping[str, Any] | None, new: Mapping[str, Any]
) -> QueueRequest | None:
    """A queue added, or its parent changed: sync it."""
    if old is not None and text(spec(old).get("parent")) == text(spec(new).get("parent")):
        return None
    return QueueRequest(queue_name=name(new), event=Event.OUT_OF_SYNC)


def queue_request_for_pod_group(pod_group: Mapping[str, Any]) -> QueueRequest:
    """A PodGroup added, updated or deleted: sync its queue."""
    return QueueRequest(queue_name=text(spec(pod_group).get("queue")))


def _state(queue: Mapping[str, Any]) -> str:
    return text(status(queue).get("state"))


def _children(name_of_parent: str, queues: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return sorted(n for n, q in queues.items() if text(spec(q).get("parent")) == name_of_parent)


def _annotate(changes: QueueChanges, queue_name: str, queue: Mapping[str, Any], value: str) -> None:
    if annotations_of(queue).get(CLOSED_BY_PARENT_KEY) != value:
        changes.annotations.setdefault(queue_name, {})[CLOSED_BY_PARENT_KEY] = value


def _count(pod_group_phases: Sequence[str] | Mapping[str, int]) -> dict[str, int]:
    counts = {phase.value: 0 for phase in PodGroupPhase}
    if isinstance(pod_group_phases, Mapping):
        for phase, count in pod_group_phases.items():
            if phase in counts:
                counts[phase] += count
        return counts
    for phase in pod_group_phases:
        if phase in counts:
            counts[phase] += 1
    return counts


def _total(pod_group_phases: Sequence[str] | Mapping[str, int]) -> int:
    if isinstance(pod_group_phases, Mapping):
        return sum(pod_group_phases.values())
    return len(pod_group_phases)


def sync_queue(
    queue: Mapping[str, Any],
    request: QueueRequest,
    *,
    queues: Mapping[str, Mapping[str, Any]],
    pod_group_phases: Sequence[str] | Mapping[str, int],
) -> QueueChanges:
    """One request of the queue controller for ``queue``. ``queues`` are all queues by name
    (for the parent and children); ``pod_group_phases`` the phases of the queue's PodGroups,
    one per group or already counted (phase -> number of groups, every phase included)."""
    changes = QueueChanges(pod_group_counts=_count(pod_group_phases))
    state = _state(queue)
    if state_node(state) is None:
        changes.events.append(
            (EVENT_WARNING, request.action, f"queue {name(queue)} state {state} is invalid")
        )
        return changes
    procedure = queue_procedure(state, request.action)
    new_state = next_queue_state(state, request.action, _total(pod_group_phases))
    if procedure is QueueProcedure.OPEN:
        _open(queue, new_state, queues, changes)
    elif procedure is QueueProcedure.CLOSE:
        _close(queue, new_state, queues, changes)
    else:
        _sync(queue, new_state, queues, changes)
    return changes


def _sync(
    queue: Mapping[str, Any],
    new_state: str,
    queues: Mapping[str, Mapping[str, Any]],
    changes: QueueChanges,
) -> None:
    queue_name = name(queue)
    parent_name = text(spec(queue).get("parent"))
    if queue_name != ROOT_QUEUE and not parent_name:
        # Every queue but root hangs under a parent; hierarchy-unaware queues under root.
        changes.parent = parent_name = ROOT_QUEUE
    if new_state != _state(queue):
        changes.state = new_state
    if queue_name == ROOT_QUEUE:
        return
    parent = queues.get(parent_name)
    if parent is None:
        changes.events.append(
            (
                EVENT_WARNING,
                Action.SYNC_QUEUE.value,
                f"parent queue {parent_name} of {queue_name} does not exist",
            )
        )
        return
    parent_state = _state(parent)
    if parent_state in _CLOSED_OR_CLOSING and new_state not in _CLOSED_OR_CLOSING:
        _annotate(changes, queue_name, queue, "true")
        changes.requests.append(QueueRequest(queue_name, Action.CLOSE_QUEUE))
    elif (
        parent_state == QueueState.OPEN
        and new_state in _CLOSED_OR_CLOSING
        and annotations_of(queue).get(CLOSED_BY_PARENT_KEY) == "true"
    ):
        # Closed only because the parent was: reopen with it.
        changes.requests.append(QueueRequest(queue_name, Action.OPEN_QUEUE))


def _open(
    queue: Mapping[str, Any],
    new_state: str,
    queues: Mapping[str, Mapping[str, Any]],
    changes: QueueChanges,
) -> None:
    queue_name = name(queue)
    parent_name = text(spec(queue).get("parent"))
    if parent_name and parent_name != ROOT_QUEUE:
        parent = queues.get(parent_name)
        if parent is None or _state(parent) in _CLOSED_OR_CLOSING:
            # The parent may be opening right now: upstream retries; a driver may too.
            changes.events.append(
                (
                    EVENT_WARNING,
                    Action.OPEN_QUEUE.value,
                    f"Failed to open queue {queue_name} because its parent queue "
                    f"{parent_name} is closing or closed. Open the parent queue first.",
                )
            )
            return
    for child in _children(queue_name, queues):
        if annotations_of(queues[child]).get(CLOSED_BY_PARENT_KEY) == "true":
            changes.requests.append(QueueRequest(child, Action.OPEN_QUEUE))
    if new_state != _state(queue):
        changes.state = new_state
    _annotate(changes, queue_name, queue, "false")


def _close(
    queue: Mapping[str, Any],
    new_state: str,
    queues: Mapping[str, Mapping[str, Any]],
    changes: QueueChanges,
) -> None:
    queue_name = name(queue)
    if queue_name == ROOT_QUEUE:
        changes.events.append(
            (EVENT_WARNING, Action.CLOSE_QUEUE.value, "Root queue cannot be closed")
        )
        return
    for child in _children(queue_name, queues):
        if _state(queues[child]) not in _CLOSED_OR_CLOSING:
            _annotate(changes, child, queues[child], "true")
            changes.requests.append(QueueRequest(child, Action.CLOSE_QUEUE))
    if new_state != _state(queue):
        changes.state = new_state
        changes.events.append((EVENT_NORMAL, Action.CLOSE_QUEUE.value, "Close queue succeed"))
