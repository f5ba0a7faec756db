"""``deviceshare.GPUExclusiveRules`` (``pkg/scheduler/plugins/deviceshare/gpuexclusive.go``):
label rules whose vGPU pods never share a card with one another.

The argument is a list of label maps. A pod matches a rule when it carries every label of it
with that value; a vGPU pod matching rules may not take a card that a pod matching one of the
same rules already holds on that node (pods matching different rules, or none, share as
usual). Only hami-core nodes are concerned (MIG instances are isolated in hardware).

Upstream keeps, per node, the cards each rule holds (rebuilt each session from the pods'
cards, their annotations and a record of its own earlier allocations, ``persistedGPUs``, for
binds whose pod update has not arrived yet). Here the session's tasks carry their bind
annotations while in flight (the cache keeps them with the Binding task), so the cards each
rule holds are always those of the pods holding cards: ``vgpu.VgpuDevices`` keeps them as one
``[N, C]`` mask per rule, updated with each placement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.task import TaskInfo

GPU_EXCLUSIVE_RULES: Final = "deviceshare.GPUExclusiveRules"

# A rule: its (label, value) pairs, sorted.
ExclusiveRule = tuple[tuple[str, str], ...]


def parse_exclusive_rules(raw: Any) -> tuple[tuple[ExclusiveRule, ...], list[str]]:
    """``parseExclusiveRules``: the rules of the argument's value, and what of it was left out
    (upstream drops it silently: a value that is not a list, a label value that is not a
    string, a rule left empty)."""
    if raw is None:
        return (), []
    if not isinstance(raw, list):
        return (), [f"{GPU_EXCLUSIVE_RULES} is not a list of label maps: {raw!r}; no rules"]
    rules: list[ExclusiveRule] = []
    problems: list[str] = []
    for index, item in enumerate(raw):
        labels: dict[str, str] = {}
        if isinstance(item, Mapping):
            for key, value in item.items():
                if isinstance(key, str) and isinstance(value, str):
                    labels[key] = value
                else:
                    problems.append(
                        f"{GPU_EXCLUSIVE_RULES}[{index}]: label {key!r}: {value!r} is not a"
                        " string; left out (quote it)"
                    )
        else:
            problems.append(f"{GPU_EXCLUSIVE_RULES}[{index}]: {item!r} is not a label map")
        if labels:
            rules.append(tuple(sorted(labels.items())))
        else:
            problems.append(f"{GPU_EXCLUSIVE_RULES}[{index}] has no labels; left out")
    return tuple(rules), problems


def pod_matches_rule(labels: Mapping[str, Any], rule: ExclusiveRule) -> bool:
    """``podMatchesRule``: every label of the rule, with its value."""
    return all(labels.get(key) == value for key, value in rule)


def matching_rules(labels: Mapping[str, Any], rules: tuple[ExclusiveRule, ...]) -> frozenset[int]:
    """``matchingRules``: the indices of the rules the labels match."""
    if not labels:
        return frozenset()
    return frozenset(i for i, rule in enumerate(rules) if pod_matches_rule(labels, rule))


def task_rules(task: TaskInfo, rules: tuple[ExclusiveRule, ...]) -> frozenset[int]:
    """The rules ``task``'s pod matches, memoised on the task (labels do not change)."""
    if not rules:
        return frozenset()
    cached: tuple[tuple[ExclusiveRule, ...], frozenset[int]] | None = task.derived.get(
        "deviceshare.exclusive"
    )
    if cached is not None and cached[0] == rules:
        return cached[1]
    labels = (task.pod.get("metadata") or {}).get("labels") or {}
    found = matching_rules(labels, rules)
    task.derived["deviceshare.exclusive"] = (rules, found)
    return found
