"""``bus.volcano.sh/v1alpha1`` Command: a one-shot request (abort, resume, open a queue...)
addressed to a Job or a Queue, and the bus vocabulary of actions and events."""

from __future__ import annotations

from typing import Final

from volcano_py.models.meta import OwnerReference
from volcano_py.models.resource import CrdInfo, CustomResource

# Actions a user may name in a lifecycle policy or a Command to a Job.
USER_ACTIONS: Final = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)
# Actions only the controllers issue to themselves (and OpenQueue/CloseQueue Commands to Queues).
INTERNAL_ACTIONS: Final = ("SyncJob", "EnqueueJob", "SyncQueue", "OpenQueue", "CloseQueue")

# Events a lifecycle policy may react to; "*" means any of them and must stand alone.
ANY_EVENT: Final = "*"
USER_EVENTS: Final = (
    ANY_EVENT,
    "PodFailed",
    "PodEvicted",
    "PodPending",
    "Unknown",
    "TaskCompleted",
    "TaskFailed",
    "JobUpdated",
)
# Events the controllers raise for themselves; a policy naming one is refused.
INTERNAL_EVENTS: Final = ("OutOfSync", "CommandIssued", "PodRunning")


class Command(CustomResource):
    """A command to a Job or Queue; the controller that owns the target deletes it, then acts."""

    CRD = CrdInfo(
        group="bus.volcano.sh",
        version="v1alpha1",
        kind="Command",
        plural="commands",
        singular="command",
        scope="Namespaced",
    )

    action: str | None = None
    """Action to take on the target object."""
    target: OwnerReference | None = None
    """The object the command is addressed to."""
    reason: str | None = None
    """One-word CamelCase reason for this command."""
    message: str | None = None
    """Human-readable details of this command."""
