"""Lifecycle policies: what a Job's controller does when an event happens or a container exits
with a given code, and the rules Volcano's job webhook holds a list of them to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from volcano_py.models.base import SpecError, VolcanoModel
from volcano_py.models.command import ANY_EVENT, USER_ACTIONS, USER_EVENTS
from volcano_py.models.fieldtypes import GoDuration, Int32

# Every event the bus knows; the CRD lists them all, the webhook lets users name USER_EVENTS.
BusEvent = Literal[
    "*",
    "PodPending",
    "PodRunning",
    "PodFailed",
    "PodEvicted",
    "Unknown",
    "TaskCompleted",
    "OutOfSync",
    "CommandIssued",
    "JobUpdated",
    "TaskFailed",
]


class LifecyclePolicy(VolcanoModel):
    """Takes an action when one of the events happens or a container exits with the exit code;
    the timeout delays the action."""

    action: str | None = None
    """AbortJob, RestartJob, RestartTask, RestartPod, RestartPartition, TerminateJob,
    CompleteJob or ResumeJob."""
    event: BusEvent | None = None
    """The event that triggers the action."""
    events: list[BusEvent] = Field(default_factory=list)
    """Events that trigger the action."""
    exit_code: Int32 | None = None
    """A container exit code that triggers the action; not 0."""
    timeout: GoDuration | None = None
    """How long to wait before taking the action, e.g. 10m."""

    @property
    def all_events(self) -> list[str]:
        """``event`` and ``events`` together, each once, in order."""
        merged = [self.event, *self.events] if self.event else list(self.events)
        return list(dict.fromkeys(merged))


def check_policies(policies: Sequence[LifecyclePolicy]) -> None:
    """Raise SpecError (path relative to the list) at the first policy Volcano would refuse:
    exactly one of event(s) and exitCode, known events and actions, no event or exit code
    claimed twice, ``*`` alone, exit code not 0."""
    seen_events: set[str] = set()
    seen_codes: set[int] = set()
    for index, policy in enumerate(policies):
        has_event = bool(policy.event or policy.events)
        if has_event and policy.exit_code is not None:
            raise SpecError((index, "exitCode"), "must not be set together with event/events")
        if not has_event and policy.exit_code is None:
            raise SpecError((index,), "needs either event/events or exitCode")
        if has_event:
            event_field = "events" if policy.events else "event"
            for event in policy.all_events:
                if event not in USER_EVENTS:
                    raise SpecError(
                        (index, event_field),
                        f"event {event!r} is raised by the controller itself and cannot be "
                        f"used in a policy; valid events are {', '.join(USER_EVENTS)}",
                    )
                if policy.action not in USER_ACTIONS:
                    raise SpecError(
                        (index, "action"),
                        f"invalid policy action {policy.action!r}; "
                        f"valid actions are {', '.join(USER_ACTIONS)}",
                    )
                if event in seen_events:
                    raise SpecError(
                        (index, event_field), f"event {event!r} appears in more than one policy"
                    )
                seen_events.add(event)
        else:
            code = policy.exit_code
            assert code is not None  # has_event is False, so the first check guarantees it
            if code == 0:
                raise SpecError((index, "exitCode"), "0 is not a valid exit code for a policy")
            if code in seen_codes:
                raise SpecError((index, "exitCode"), f"exit code {code} appears more than once")
            seen_codes.add(code)
    if ANY_EVENT in seen_events and len(seen_events) > 1:
        raise SpecError((), "a policy on event '*' must be the only event policy in the list")
