"""A Volcano Job's ``.status`` as the controller works on it, and back to JSON.

``to_dict`` drops zero values the way the Go struct's ``omitempty`` tags do, so two statuses
compare equal exactly when the API server would store the same object (``state`` is a struct
and is always present, as encoding/json never omits a struct).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from volcano_py.controllers.raw import Raw, integer, items, mapping, text
from volcano_py.controllers.vocabulary import (
    FINISHED_JOB_PHASES,
    POD_FAILED,
    POD_PENDING,
    POD_RUNNING,
    POD_SUCCEEDED,
    POD_UNKNOWN,
)

_COUNTED_PHASES = (POD_PENDING, POD_RUNNING, POD_SUCCEEDED, POD_FAILED)


def state_phase(obj: Raw) -> str:
    """``status.state.phase`` of a Volcano Job (or JobFlow): '' when it has none yet."""
    return text(mapping(mapping(obj.get("status")).get("state")).get("phase"))


def is_job_finished(job: Raw) -> bool:
    """Completed, Failed or Terminated."""
    return state_phase(job) in FINISHED_JOB_PHASES


@dataclass(slots=True)
class JobStatus:
    phase: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""
    min_available: int = 0
    # task name -> pod phase -> count
    task_status_count: dict[str, dict[str, int]] = field(default_factory=dict)
    pending: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    terminating: int = 0
    unknown: int = 0
    version: int = 0
    retry_count: int = 0
    running_duration: str | None = None
    controlled_resources: dict[str, str] = field(default_factory=dict)
    conditions: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, raw: Raw) -> JobStatus:
        state = mapping(raw.get("state"))
        counts: dict[str, dict[str, int]] = {}
        for task, task_state in mapping(raw.get("taskStatusCount")).items():
            phases = mapping(mapping(task_state).get("phase"))
            counts[str(task)] = {str(p): integer(n) for p, n in phases.items()}
        conditions = []
        for raw_condition in items(raw.get("conditions")):
            condition = mapping(raw_condition)
            entry = {"status": text(condition.get("status"))}
            if condition.get("lastTransitionTime"):
                entry["lastTransitionTime"] = text(condition.get("lastTransitionTime"))
            conditions.append(entry)
        duration = raw.get("runningDuration")
        return cls(
            phase=text(state.get("phase")),
            reason=text(state.get("reason")),
            message=text(state.get("message")),
            last_transition_time=text(state.get("lastTransitionTime")),
            min_available=integer(raw.get("minAvailable")),
            task_status_count=counts,
            pending=integer(raw.get("pending")),
            running=integer(raw.get("running")),
            succeeded=integer(raw.get("succeeded")),
            failed=integer(raw.get("failed")),
            terminating=integer(raw.get("terminating")),
            unknown=integer(raw.get("unknown")),
            version=integer(raw.get("version")),
            retry_count=integer(raw.get("retryCount")),
            running_duration=duration if isinstance(duration, str) else None,
            controlled_resources={
                str(k): str(v) for k, v in mapping(raw.get("controlledResources")).items()
            },
            conditions=conditions,
        )

    def to_dict(self) -> dict[str, Any]:
        state = {
            key: value
            for key, value in (
                ("phase", str(self.phase)),
                ("reason", self.reason),
                ("message", self.message),
                ("lastTransitionTime", self.last_transition_time),
            )
            if value
        }
        result: dict[str, Any] = {"state": state}
        scalars = (
            ("minAvailable", self.min_available),
            ("pending", self.pending),
            ("running", self.running),
            ("succeeded", self.succeeded),
            ("failed", self.failed),
            ("terminating", self.terminating),
            ("unknown", self.unknown),
            ("version", self.version),
            ("retryCount", self.retry_count),
        )
        result.update({key: value for key, value in scalars if value})
        if self.task_status_count:
            result["taskStatusCount"] = {
                task: ({"phase": dict(phases)} if phases else {})
                for task, phases in sorted(self.task_status_count.items())
            }
        if self.running_duration is not None:
            result["runningDuration"] = self.running_duration
        if self.controlled_resources:
            result["controlledResources"] = dict(sorted(self.controlled_resources.items()))
        if self.conditions:
            result["conditions"] = [dict(c) for c in self.conditions]
        return result

    def clone(self) -> JobStatus:
        return copy.deepcopy(self)

    def reset_counts(self) -> None:
        self.pending = self.running = self.succeeded = 0
        self.failed = self.terminating = self.unknown = 0
        self.task_status_count = {}

    def count_pod(self, task: str | None, phase: str) -> None:
        """``classifyAndAddUpPodBaseOnPhase`` and ``calcPodStatus`` for one pod: the job-wide
        count and, when the pod names its task, the task's count."""
        if phase == POD_PENDING:
            self.pending += 1
        elif phase == POD_RUNNING:
            self.running += 1
        elif phase == POD_SUCCEEDED:
            self.succeeded += 1
        elif phase == POD_FAILED:
            self.failed += 1
        else:
            self.unknown += 1
        if task is None:
            return
        key = phase if phase in _COUNTED_PHASES else POD_UNKNOWN
        phases = self.task_status_count.setdefault(task, {})
        phases[key] = phases.get(key, 0) + 1

    def record_transition(self, now: str) -> None:
        """A status function reported a change: stamp it and move the phase's condition to the
        end of the list (``appendJobCondition``)."""
        self.last_transition_time = now
        # Plain strings: the status goes to JSON and YAML writers that know no enums.
        self.phase = str(self.phase)
        kept = [c for c in self.conditions if c.get("status") != self.phase]
        kept.append({"status": self.phase, "lastTransitionTime": now})
        self.conditions = kept
