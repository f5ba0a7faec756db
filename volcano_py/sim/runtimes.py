"""How long a simulated pod runs and how it ends, from its annotations (docs/simulate.md,
"Between cycles"), ``--assume-runtime`` and its ``activeDeadlineSeconds``.

* ``volcano-py.sim/run-cycles: "K"``: it finishes K cycles after it started running;
* ``volcano-py.sim/run-seconds: "S"``: it finishes S simulated seconds after its
  ``status.startTime``;
* neither: ``--assume-runtime`` after its ``status.startTime``, else it runs forever;
* ``volcano-py.sim/exit-code: "N"``: how its containers end (0 Succeeded, else Failed);
* ``volcano-py.sim/evict-after-cycles: "K"``: K cycles after it started it is evicted through
  the API (deleted before it finished);
* ``spec.activeDeadlineSeconds``: the kubelet fails it (reason ``DeadlineExceeded``) that long
  after its ``status.startTime``.

Whichever comes first ends the pod; a finish at the same moment as the deadline or an
eviction wins (the pod had done its work). The values are checked when the input is read
(``run_time_problem``): a negative or non-integer value stops the run naming the annotation.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api.types import SIM_RUN_CYCLES_ANNOTATION
from volcano_py.sim.clock import SimClock

RUN_CYCLES: Final = SIM_RUN_CYCLES_ANNOTATION
RUN_SECONDS: Final = "volcano-py.sim/run-seconds"
EXIT_CODE: Final = "volcano-py.sim/exit-code"
EVICT_AFTER_CYCLES: Final = "volcano-py.sim/evict-after-cycles"
# Counts of cycles or seconds: non-negative integers.
_COUNTS: Final = (RUN_CYCLES, RUN_SECONDS, EVICT_AFTER_CYCLES)
# What the kubelet reports of a pod past its activeDeadlineSeconds (pkg/kubelet/active_deadline.go).
DEADLINE_REASON: Final = "DeadlineExceeded"
DEADLINE_MESSAGE: Final = "Pod was active on the node longer than the specified deadline"
# Its containers are killed: SIGKILL after the grace period, as a runtime reports it.
DEADLINE_EXIT_CODE: Final = 137


class Ending(enum.Enum):
    FINISH = "finish"  # its containers exit (exit code)
    DEADLINE = "deadline"  # activeDeadlineSeconds
    EVICT = "evict"  # an API eviction


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    found = (obj.get("metadata") or {}).get("annotations") or {}
    return found if type(found) is dict or isinstance(found, Mapping) else {}


def run_time_problem(
    annotations: Mapping[str, Any], pod_spec: Mapping[str, Any] | None = None
) -> tuple[str, str] | None:
    """(field, problem) for the first run-time annotation (or ``activeDeadlineSeconds``)
    that is not what it must be; None when all are fine."""
    for name in (*_COUNTS, EXIT_CODE):
        if name not in annotations:
            continue
        value = annotations[name]
        number = _integer(value)
        field = f"metadata.annotations.{name}"
        if number is None:
            return field, f"expected an integer, got {value!r}"
        if name == EXIT_CODE and not 0 <= number <= 255:
            return field, f"expected an exit code 0-255, got {value!r}"
        if name != EXIT_CODE and number < 0:
            what = "seconds" if name == RUN_SECONDS else "cycles"
            return (
                field,
                f"a run time cannot be negative: expected a number of {what} >= 0, got {value!r}",
            )
    if pod_spec is not None and "activeDeadlineSeconds" in pod_spec:
        deadline = pod_spec["activeDeadlineSeconds"]
        if not isinstance(deadline, int) or isinstance(deadline, bool) or deadline < 1:
            # The API server's validation: a positive integer.
            return "spec.activeDeadlineSeconds", f"must be a positive integer, got {deadline!r}"
    return None


def _integer(value: object) -> int | None:
    text = str(value).strip()
    if not text or not (text.isdecimal() or (text[0] in "+-" and text[1:].isdecimal())):
        return None
    return int(text)


@dataclass(frozen=True, slots=True)
class RunPlan:
    """When a pod that started running at ``started_cycle`` (``started_at`` on the clock's
    scale) ends, and how."""

    due_cycle: int | None  # an end counted in cycles
    due_time: float | None  # an end counted in seconds
    ending: Ending
    exit_code: int


def may_end(pod: Mapping[str, Any], assume_runtime: float | None) -> bool:
    """Whether ``plan_run`` can give the pod any end (else it runs for ever): cheap, so that
    the start time is read only for a pod that needs it (50k running pods in a large dump)."""
    if assume_runtime is not None or "activeDeadlineSeconds" in (pod.get("spec") or {}):
        return True
    annotations = _annotations(pod)
    return any(name in annotations for name in (RUN_CYCLES, RUN_SECONDS, EVICT_AFTER_CYCLES))


def plan_run(
    pod: Mapping[str, Any],
    started_cycle: int,
    started_at: float,
    assume_runtime: float | None,
) -> list[RunPlan]:
    """The ends the pod's annotations, ``--assume-runtime`` and ``activeDeadlineSeconds``
    give it, finishes first (the caller takes the earliest; a finish wins a tie)."""
    annotations = _annotations(pod)
    exit_code = _integer(annotations.get(EXIT_CODE, 0)) or 0
    plans: list[RunPlan] = []
    run_cycles = _integer(annotations.get(RUN_CYCLES, ""))
    run_seconds = _integer(annotations.get(RUN_SECONDS, ""))
    if run_cycles is not None:
        plans.append(RunPlan(started_cycle + run_cycles, None, Ending.FINISH, exit_code))
    if run_seconds is not None:
        plans.append(RunPlan(None, started_at + run_seconds, Ending.FINISH, exit_code))
    if run_cycles is None and run_seconds is None and assume_runtime is not None:
        plans.append(RunPlan(None, started_at + assume_runtime, Ending.FINISH, exit_code))
    deadline = (pod.get("spec") or {}).get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline > 0:
        plans.append(RunPlan(None, started_at + deadline, Ending.DEADLINE, DEADLINE_EXIT_CODE))
    evict_after = _integer(annotations.get(EVICT_AFTER_CYCLES, ""))
    if evict_after is not None:
        plans.append(RunPlan(started_cycle + evict_after, None, Ending.EVICT, 0))
    return plans


_RANK: Final = {Ending.FINISH: 0, Ending.DEADLINE: 1, Ending.EVICT: 2}


def first_end(
    plans: list[RunPlan], clock: SimClock, earliest_cycle: int
) -> tuple[float, RunPlan] | None:
    """The end that comes first (a finish winning a tie), on the clock's scale, and not
    before ``earliest_cycle``'s time; None when the pod runs for ever."""
    if not plans:
        return None
    floor = clock.time_of_cycle(earliest_cycle)

    def when(plan: RunPlan) -> float:
        if plan.due_cycle is not None:
            return max(clock.time_of_cycle(plan.due_cycle), floor)
        return max(plan.due_time if plan.due_time is not None else floor, floor)

    chosen = min(plans, key=lambda plan: (when(plan), _RANK[plan.ending]))
    return when(chosen), chosen
