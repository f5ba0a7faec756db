"""pdb: PodDisruptionBudgets limit which pods preemption, reclaim and shuffle may evict
(``pkg/scheduler/plugins/pdb/pdb.go``).

Registers one filter as PreemptableFn, ReclaimableFn (both Permit) and VictimTasksFn. For a
candidate list it walks the candidates in order, spending one disruption of every budget that
selects the pod (same namespace, non-empty selector, pod not already listed in
``status.disruptedPods``); a candidate that drives any budget below zero is dropped. The
budgets are spent per call: each call starts again from ``status.disruptionsAllowed``.

A pod without labels is never a victim. No budget can select such a pod, and upstream means
to skip the check for it, but its early ``continue`` also skips adding it to the victims; with
the pdb plugin enabled, label-less pods are therefore protected from preemption, reclaim and
shuffle. Kept as upstream behaves (clusters running Volcano rely on what it does, not on what
its comment says).

Budgets are read from ``ssn.pod_disruption_budgets`` (raw ``policy/v1`` objects). A budget
whose selector Kubernetes would reject (unknown operator, ``In`` without values, ...) selects
nothing and is logged once per session, as upstream skips it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api.hypernode import LabelRequirement, LabelSelector
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "pdb"

_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


@dataclass(frozen=True, slots=True)
class Budget:
    """The parts of one PodDisruptionBudget the filter reads."""

    namespace: str
    name: str
    # None: the budget selects no pod (nil, empty or invalid selector).
    selector: LabelSelector | None
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        return (
            self.selector is not None
            and namespace == self.namespace
            and self.selector.matches(labels)
        )


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def parse_selector(raw: object) -> tuple[LabelSelector | None, str | None]:
    """(selector, why it selects nothing) from a ``metav1.LabelSelector`` dict.

    Mirrors ``LabelSelectorAsSelector`` plus the budget rule: a missing selector selects
    nothing, an empty one would select everything and is treated as selecting nothing, an
    invalid one is an error (the budget is skipped)."""
    if raw is None:
        return None, None
    if not isinstance(raw, Mapping):
        return None, f"spec.selector: expected a mapping, got {type(raw).__name__}"
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in match_labels.items()
    ):
        return None, "spec.selector.matchLabels: expected a mapping of strings"
    requirements: list[LabelRequirement] = []
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        return None, "spec.selector.matchExpressions: expected a list"
    for index, entry in enumerate(expressions):
        where = f"spec.selector.matchExpressions[{index}]"
        body = _mapping(entry)
        key, operator = body.get("key"), body.get("operator")
        values = body.get("values") or []
        if not isinstance(key, str) or not key:
            return None, f"{where}.key: a non-empty string is required"
        if operator not in _OPERATORS:
            return None, f"{where}.operator: {operator!r} is not a valid selector operator"
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return None, f"{where}.values: a list of strings is required"
        if operator in ("In", "NotIn") and not values:
            return None, f"{where}.values: must be non-empty for operator {operator}"
        if operator in ("Exists", "DoesNotExist") and values:
            return None, f"{where}.values: must be empty for operator {operator}"
        requirements.append(LabelRequirement(key, str(operator), frozenset(values)))
    selector = LabelSelector(
        match_labels=tuple(sorted(match_labels.items())),
        match_expressions=tuple(requirements),
    )
    if selector.is_empty:
        return None, None
    return selector, None


def parse_budget(raw: Mapping[str, Any]) -> Budget:
    meta, spec, status = (_mapping(raw.get(key)) for key in ("metadata", "spec", "status"))
    namespace = str(meta.get("namespace") or "default")
    name = str(meta.get("name") or "")
    selector, problem = parse_selector(spec.get("selector"))
    if problem is not None:
        log.error(
            "pdb: PodDisruptionBudget %s/%s: %s; it protects no pod", namespace, name, problem
        )
    allowed = status.get("disruptionsAllowed")
    if not isinstance(allowed, int) or isinstance(allowed, bool):
        allowed = 0
    disrupted = _mapping(status.get("disruptedPods"))
    return Budget(namespace, name, selector, allowed, frozenset(str(pod) for pod in disrupted))


def filter_victims(budgets: Sequence[Budget], tasks: Sequence[TaskInfo]) -> list[TaskInfo]:
    """The tasks that can be evicted, in order, without breaking any budget."""
    allowed = [budget.disruptions_allowed for budget in budgets]
    victims: list[TaskInfo] = []
    for task in tasks:
        labels = _mapping(_mapping(task.pod.get("metadata")).get("labels"))
        if not labels:
            continue
        violated = False
        for index, budget in enumerate(budgets):
            if not budget.selects(task.namespace, labels):
                continue
            # Already being disrupted under this budget: the API server has counted it.
            if task.name in budget.disrupted_pods:
                continue
            allowed[index] -= 1
            if allowed[index] < 0:
                violated = True
        if violated:
            log.debug("pdb: %s would break a disruption budget; not a victim", task.key)
        else:
            victims.append(task)
    return victims


class PdbPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.budgets: list[Budget] = []

    def on_session_open(self, ssn: Session) -> None:
        self.budgets = [parse_budget(raw) for raw in ssn.pod_disruption_budgets]

        def victims(tasks: list[TaskInfo]) -> list[TaskInfo]:
            return filter_victims(self.budgets, tasks)

        def evictable(_actor: TaskInfo, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
            return filter_victims(self.budgets, candidates), Vote.PERMIT

        ssn.add_victim_tasks_fn(self.name, victims)
        ssn.add_reclaimable_fn(self.name, evictable)
        ssn.add_preemptable_fn(self.name, evictable)

    def on_session_close(self, ssn: Session) -> None:
        self.budgets = []


# The arguments this plugin reads (upstream pdb.go reads no argument).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> PdbPlugin:
    return PdbPlugin(arguments)
