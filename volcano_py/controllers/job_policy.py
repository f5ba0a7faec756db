"""Choosing the action for a request: the job's lifecycle policies
(``job_controller_util.go`` ``applyPolicies``) and the bookkeeping of delayed actions
(``job_controller.go`` ``CleanPodDelayActionsIfNeed``, ``cleanupDelayActions``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api.go_duration import DurationError
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import DelayedAction, JobRequest
from volcano_py.controllers.raw import Raw, items, mapping, optional_int, spec, status, text, uid
from volcano_py.controllers.timefmt import SECOND, parse_go_duration
from volcano_py.controllers.vocabulary import INTERNAL_ACTIONS, INTERNAL_EVENTS, Action, Event


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    action: str
    delay_nanos: int = 0

    @property
    def delay_seconds(self) -> float:
        return self.delay_nanos / SECOND


def policy_events(policy: Raw) -> list[str]:
    events = [text(e) for e in items(policy.get("events"))]
    if text(policy.get("event")):
        events.append(text(policy.get("event")))
    return events


def timeout_nanos(policy: Raw) -> int | None:
    """The policy's ``timeout``; None when absent. A malformed one (admission refuses it) counts
    as no delay rather than as no timeout, so the policy still fires."""
    raw = policy.get("timeout")
    if raw is None:
        return None
    try:
        return parse_go_duration(text(raw))
    except DurationError:
        return 0


def _match(policy: Raw, request: JobRequest) -> PolicyDecision | None:
    events = policy_events(policy)
    timeout = timeout_nanos(policy)
    action = text(policy.get("action"))
    listed = bool(events) and bool(request.event)
    listed = listed and (request.event in events or Event.ANY in events)
    # A PodPending policy without a timeout would fire on every new pod: it needs one.
    if listed and (request.event != Event.POD_PENDING or timeout is not None):
        return PolicyDecision(action, timeout or 0)
    exit_code = optional_int(policy.get("exitCode"))
    # Exit code 0 is refused by admission; a request without one reads as upstream's 0.
    if exit_code is not None and exit_code == (request.exit_code or 0):
        return PolicyDecision(action, timeout or 0)
    return None


def apply_policies(job: Mapping[str, Any], request: JobRequest) -> PolicyDecision:
    """The action a request triggers; ``SyncJob`` unless a command or a policy says otherwise."""
    if request.action:
        return PolicyDecision(request.action)
    if request.event in INTERNAL_EVENTS:
        return PolicyDecision(Action.SYNC_JOB)
    # Events of a deleted-and-recreated job with the same name, or of pods a kill already
    # replaced, must not trigger the new incarnation's policies.
    if request.job_uid and uid(job) and request.job_uid != uid(job):
        return PolicyDecision(Action.SYNC_JOB)
    if (request.job_version or 0) < JobStatus.from_dict(status(job)).version:
        return PolicyDecision(Action.SYNC_JOB)
    job_spec = spec(job)
    if request.task_name:
        for raw_task in items(job_spec.get("tasks")):
            task = mapping(raw_task)
            if task.get("name") != request.task_name:
                continue
            for policy in items(task.get("policies")):
                decision = _match(mapping(policy), request)
                if decision is not None:
                    return decision
            break
    for policy in items(job_spec.get("policies")):
        decision = _match(mapping(policy), request)
        if decision is not None:
            return decision
    return PolicyDecision(Action.SYNC_JOB)


_POD_EVENTS = frozenset({Event.POD_PENDING, Event.POD_RUNNING, Event.POD_FAILED, Event.POD_EVICTED})


def delayed_action_cancelled(delayed: DelayedAction, request: JobRequest) -> bool:
    """Whether a newer pod event makes a pending delayed action of the same pod obsolete: the
    pod left Pending (same pod uid), or it runs again after failing or being evicted."""
    if request.event not in _POD_EVENTS or request.event == Event.POD_PENDING:
        return False
    if request.pod_name != delayed.request.pod_name:
        return False
    if delayed.request.event == Event.POD_PENDING:
        return request.pod_uid == delayed.request.pod_uid
    return (
        delayed.request.event in (Event.POD_FAILED, Event.POD_EVICTED)
        and request.event == Event.POD_RUNNING
    )


def _scope(action: str) -> str:
    if action == Action.RESTART_TASK:
        return "task"
    if action == Action.RESTART_POD:
        return "pod"
    if action == Action.RESTART_PARTITION:
        return "partition"
    return "job"


def delayed_action_superseded(
    delayed: DelayedAction, executed_action: str, executed: JobRequest
) -> bool:
    """After a non-internal action ran, the delayed actions of the same scope (the whole job,
    or the same task, pod or partition) are dropped so they do not run twice."""
    if executed_action in INTERNAL_ACTIONS:
        return False
    scope = _scope(executed_action)
    if _scope(delayed.action) != scope:
        return False
    if scope == "task":
        return delayed.request.task_name == executed.task_name
    if scope == "pod":
        return delayed.request.pod_name == executed.pod_name
    if scope == "partition":
        return delayed.request.partition_id == executed.partition_id
    return True
