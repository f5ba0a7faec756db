"""The words the controllers speak: bus actions and events, job phases, queue states and the
object keys that only the controllers write.

Spelled exactly as upstream (``apis/bus/v1alpha1/actions.go``, ``events.go``,
``apis/batch/v1alpha1/job.go``, ``labels.go``, ``apis/scheduling/v1beta1/labels.go``): users put
these strings in their YAML, so they are part of the compatibility contract.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Action(StrEnum):
    ABORT_JOB = "AbortJob"
    RESTART_JOB = "RestartJob"
    RESTART_TASK = "RestartTask"
    RESTART_POD = "RestartPod"
    RESTART_PARTITION = "RestartPartition"
    TERMINATE_JOB = "TerminateJob"
    COMPLETE_JOB = "CompleteJob"
    RESUME_JOB = "ResumeJob"
    # Internal: never accepted in a user's lifecycle policy.
    SYNC_JOB = "SyncJob"
    ENQUEUE_JOB = "EnqueueJob"
    SYNC_QUEUE = "SyncQueue"
    OPEN_QUEUE = "OpenQueue"
    CLOSE_QUEUE = "CloseQueue"


USER_ACTIONS: Final = frozenset(
    {
        Action.ABORT_JOB,
        Action.RESTART_JOB,
        Action.RESTART_TASK,
        Action.RESTART_POD,
        Action.RESTART_PARTITION,
        Action.TERMINATE_JOB,
        Action.COMPLETE_JOB,
        Action.RESUME_JOB,
    }
)
INTERNAL_ACTIONS: Final = frozenset(
    {Action.SYNC_JOB, Action.ENQUEUE_JOB, Action.SYNC_QUEUE, Action.OPEN_QUEUE, Action.CLOSE_QUEUE}
)


class Event(StrEnum):
    ANY = "*"
    POD_FAILED = "PodFailed"
    POD_EVICTED = "PodEvicted"
    POD_PENDING = "PodPending"
    POD_RUNNING = "PodRunning"
    JOB_UNKNOWN = "Unknown"
    TASK_COMPLETED = "TaskCompleted"
    TASK_FAILED = "TaskFailed"
    JOB_UPDATED = "JobUpdated"
    # Internal: emitted by the controller itself, refused in user policies.
    OUT_OF_SYNC = "OutOfSync"
    COMMAND_ISSUED = "CommandIssued"


USER_EVENTS: Final = frozenset(
    {
        Event.ANY,
        Event.POD_FAILED,
        Event.POD_EVICTED,
        Event.POD_PENDING,
        Event.JOB_UNKNOWN,
        Event.TASK_COMPLETED,
        Event.TASK_FAILED,
        Event.JOB_UPDATED,
    }
)
INTERNAL_EVENTS: Final = frozenset({Event.OUT_OF_SYNC, Event.COMMAND_ISSUED, Event.POD_RUNNING})


class JobPhase(StrEnum):
    PENDING = "Pending"
    ABORTING = "Aborting"
    ABORTED = "Aborted"
    RUNNING = "Running"
    RESTARTING = "Restarting"
    COMPLETING = "Completing"
    COMPLETED = "Completed"
    TERMINATING = "Terminating"
    TERMINATED = "Terminated"
    FAILED = "Failed"


# A job in one of these phases runs no more (a CronJob's history, the TTL collector).
FINISHED_JOB_PHASES: Final = frozenset({JobPhase.COMPLETED, JobPhase.FAILED, JobPhase.TERMINATED})


class QueueState(StrEnum):
    OPEN = "Open"
    CLOSED = "Closed"
    CLOSING = "Closing"
    UNKNOWN = "Unknown"


class PodGroupPhase(StrEnum):
    PENDING = "Pending"
    RUNNING = "Running"
    UNKNOWN = "Unknown"
    INQUEUE = "Inqueue"
    COMPLETED = "Completed"


POD_PENDING: Final = "Pending"
POD_RUNNING: Final = "Running"
POD_SUCCEEDED: Final = "Succeeded"
POD_FAILED: Final = "Failed"
POD_UNKNOWN: Final = "Unknown"

EVENT_NORMAL: Final = "Normal"
EVENT_WARNING: Final = "Warning"

BATCH_API_VERSION: Final = "batch.volcano.sh/v1alpha1"
SCHEDULING_API_VERSION: Final = "scheduling.volcano.sh/v1beta1"

# Keys only the controllers write (the rest live in volcano_py.api.types).
OUT_OF_SYNC_KEY: Final = "volcano.sh/controller-out-of-sync"
PARTITION_ID_KEY: Final = "volcano.sh/partition-id"
JOB_FORWARDING_KEY: Final = "volcano.sh/job-forwarding"
NUMA_POLICY_KEY: Final = "volcano.sh/numa-topology-policy"
COOLDOWN_TIME_KEY: Final = "volcano.sh/cooldown-time"
JDB_MIN_AVAILABLE_KEY: Final = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE_KEY: Final = "volcano.sh/jdb-max-unavailable"
CLOSED_BY_PARENT_KEY: Final = "volcano.sh/closed-by-parent"
VOLCANO_ANNOTATION_PREFIX: Final = "volcano.sh/"

PODGROUP_NAME_PREFIX: Final = "podgroup-"
DEFAULT_TASK_SPEC: Final = "default"
DEFAULT_MAX_RETRY: Final = 3
