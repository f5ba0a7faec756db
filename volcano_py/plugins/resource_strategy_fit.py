"""resource-strategy-fit: per-resource MostAllocated/LeastAllocated scoring, scarce-resource
avoidance and proportional reservation (``pkg/scheduler/plugins/resource-strategy-fit``).

Arguments (all optional)::

    resourceStrategyFitWeight: 10        # negative or absent: 10; 0 turns the scoring off
    resources:                           # absent or empty: cpu and memory LeastAllocated, 1
      nvidia.com/gpu: {type: MostAllocated, weight: 2}
      example.com/*: {type: LeastAllocated, weight: 1}   # one trailing "*": a prefix
    sra:                                 # scarce-resource avoidance (sra.go)
      enable: true
      resources: nvidia.com/gpu          # comma-separated
      weight: 10
      resourceWeight: {nvidia.com/gpu: 1}
    proportional:                        # keep cpu/memory for the scarce resource (proportional.go)
      enable: true
      resources: nvidia.com/gpu
      resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}

Strategy score, per resource the task requests that has a strategy (exact name first, then
the longest matching prefix): MostAllocated ``(used + request) * w / allocatable``,
LeastAllocated ``(allocatable - used - request) * w / allocatable`` (0 when the node has none);
a node where one would overflow scores 0 altogether; the sum divided by the weights, times 100
and ``resourceStrategyFitWeight``. A pod may choose its own strategy with the annotations
``volcano.sh/resource-strategy-scoring-type`` (``MostAllocated``/``LeastAllocated``) and
``volcano.sh/resource-strategy-weight`` (JSON ``{"cpu": 2}``), replacing the configured ones.

SRA: a node lacking any resource the task requests scores 0; otherwise
``(1 - sum of weights of the sra resources the node has / their total) * 100 * sra.weight``:
tasks that do not need a scarce resource keep off the nodes that have it.

Proportional (a predicate): a task asking for none of the listed resources may not take a
node's cpu or memory below ``idle(resource) * proportion`` (memory proportion in GB, i.e.
units of 10^9 bytes per whole resource), so scarce devices keep the cpu and memory they need.

Upstream scores per node; here the same arithmetic runs over the session's NodeMatrix for all
candidate rows (``strategy_scores``, ``sra_scores``), with ``strategy_score`` and ``sra_score``
kept as the per-node references. Upstream stops the scheduler on an argument of the wrong
shape (``klog.Fatalf``); here the argument is reported and its default used.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray, NodeMatrix
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.api.types import Status, unresolvable
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import NodeMask
from volcano_py.framework.session import Session

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "resource-strategy-fit"
DEFAULT_WEIGHT: Final = 10
MAX_NODE_SCORE: Final = 100.0
MOST_ALLOCATED: Final = "MostAllocated"
LEAST_ALLOCATED: Final = "LeastAllocated"
STRATEGY_ANNOTATION: Final = "volcano.sh/resource-strategy-scoring-type"
STRATEGY_WEIGHT_ANNOTATION: Final = "volcano.sh/resource-strategy-weight"

WEIGHT_KEY: Final = "resourceStrategyFitWeight"
RESOURCES_KEY: Final = "resources"
SRA_KEY: Final = "sra"
PROPORTIONAL_KEY: Final = "proportional"

ARGUMENTS: Final[frozenset[str]] = frozenset({WEIGHT_KEY, RESOURCES_KEY, SRA_KEY, PROPORTIONAL_KEY})
_SRA_FIELDS: Final = frozenset({"enable", "resources", "weight", "resourceWeight"})
_PROPORTIONAL_FIELDS: Final = frozenset({"enable", "resources", "resourceProportion"})
_STRATEGY_FIELDS: Final = frozenset({"type", "weight"})


# ---------------------------------------------------------------------- arguments


class ArgumentError(ValueError):
    """An argument of the wrong shape; the message names it."""


def _int(value: Any, where: str) -> int:
    """mapstructure's int decoding: an integer, or a float truncated; nothing else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"{where} must be an integer, got {value!r}")
    return int(value)


def _float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ArgumentError(f"{where} must be a number, got {value!r}")
    return float(value)


def _mapping(value: Any, where: str, fields: frozenset[str] | None = None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ArgumentError(f"{where} must be a mapping, got {value!r}")
    if fields is not None:
        for unknown in sorted(set(value) - fields):
            log.warning(
                "%s: unknown field %s.%s ignored (known: %s)",
                PLUGIN_NAME,
                where,
                unknown,
                ", ".join(sorted(fields)),
            )
    return value


def _names(value: Any, where: str) -> list[str]:
    if not isinstance(value, str):
        raise ArgumentError(f"{where} must be a comma-separated string, got {value!r}")
    return [name.strip() for name in value.split(",") if name.strip()]


@dataclass(frozen=True, slots=True)
class Strategy:
    type: str
    weight: int


def valid_wildcard(pattern: str) -> bool:
    """``isValidWildcardPattern``: no "*", or exactly one at the end of a longer name."""
    if "*" not in pattern:
        return True
    return pattern != "*" and pattern.endswith("*") and pattern.count("*") == 1


def default_strategies() -> dict[str, Strategy]:
    return {"cpu": Strategy(LEAST_ALLOCATED, 1), "memory": Strategy(LEAST_ALLOCATED, 1)}


def parse_strategies(raw: Any) -> dict[str, Strategy]:
    """``resources``: name or ``prefix*`` -> strategy; weights <= 0 become 1, unknown types
    LeastAllocated, invalid wildcards are dropped (all reported)."""
    if raw is None:
        return default_strategies()
    resources = _mapping(raw, RESOURCES_KEY)
    if not resources:
        return default_strategies()
    strategies: dict[str, Strategy] = {}
    for name, spec in resources.items():
        where = f"{RESOURCES_KEY}.{name}"
        entry = _mapping(spec, where, _STRATEGY_FIELDS)
        if not valid_wildcard(str(name)):
            log.warning(
                '%s: resource pattern %r ignored: only one trailing "*" is supported '
                '(e.g. "cloudml.gpu/*"), and a lone "*" is not',
                PLUGIN_NAME,
                name,
            )
            continue
        weight = _int(entry.get("weight", 0), f"{where}.weight")
        kind = entry.get("type", "")
        if kind not in (LEAST_ALLOCATED, MOST_ALLOCATED):
            if kind:
                log.warning(
                    "%s: %s.type %r is neither %s nor %s; using %s",
                    PLUGIN_NAME,
                    where,
                    kind,
                    LEAST_ALLOCATED,
                    MOST_ALLOCATED,
                    LEAST_ALLOCATED,
                )
            kind = LEAST_ALLOCATED
        strategies[str(name)] = Strategy(str(kind), weight if weight > 0 else 1)
    return strategies


def find_strategy(name: str, strategies: Mapping[str, Strategy]) -> Strategy | None:
    """``findResourceConfigWithPrefix``: the exact entry, else the longest matching prefix."""
    exact = strategies.get(name)
    if exact is not None:
        return exact
    best: Strategy | None = None
    best_length = -1
    for pattern, strategy in strategies.items():
        if pattern.endswith("*"):
            prefix = pattern[:-1]
            if name.startswith(prefix) and len(prefix) > best_length:
                best, best_length = strategy, len(prefix)
    return best


@dataclass(frozen=True, slots=True)
class SraWeight:
    weight: int = 0
    resources: dict[str, int] = field(default_factory=dict)

    @property
    def resources_weight_sum(self) -> int:
        return sum(self.resources.values())


def parse_sra(raw: Any) -> SraWeight:
    """``sra``: off unless ``enable``; each listed resource weighs ``resourceWeight`` (1,
    negative: 1)."""
    if raw is None:
        return SraWeight()
    config = _mapping(raw, SRA_KEY, _SRA_FIELDS)
    enable = config.get("enable", False)
    if not isinstance(enable, bool):
        raise ArgumentError(f"{SRA_KEY}.enable must be true or false, got {enable!r}")
    if not enable:
        return SraWeight()
    weights = _mapping(config.get("resourceWeight") or {}, f"{SRA_KEY}.resourceWeight")
    resources: dict[str, int] = {}
    for name in _names(config.get("resources", ""), f"{SRA_KEY}.resources"):
        weight = _int(weights.get(name, 1), f"{SRA_KEY}.resourceWeight.{name}")
        resources[name] = 1 if weight < 0 else weight
    return SraWeight(_int(config.get("weight", 0), f"{SRA_KEY}.weight"), resources)


@dataclass(frozen=True, slots=True)
class Proportion:
    cpu: float
    memory: float


def parse_proportional(raw: Any) -> dict[str, Proportion] | None:
    """``proportional``: None unless ``enable``; per listed resource its cpu and memory
    proportions (``<name>.cpu``, ``<name>.memory``; 1, negative: 1)."""
    if raw is None:
        return None
    config = _mapping(raw, PROPORTIONAL_KEY, _PROPORTIONAL_FIELDS)
    enable = config.get("enable", False)
    if not isinstance(enable, bool):
        raise ArgumentError(f"{PROPORTIONAL_KEY}.enable must be true or false, got {enable!r}")
    if not enable:
        return None
    where = f"{PROPORTIONAL_KEY}.resourceProportion"
    proportions = _mapping(config.get("resourceProportion") or {}, where)
    result: dict[str, Proportion] = {}
    for name in _names(config.get("resources", ""), f"{PROPORTIONAL_KEY}.resources"):
        cpu = _float(proportions.get(f"{name}.cpu", 1.0), f"{where}.{name}.cpu")
        memory = _float(proportions.get(f"{name}.memory", 1.0), f"{where}.{name}.memory")
        result[name] = Proportion(1.0 if cpu < 0 else cpu, 1.0 if memory < 0 else memory)
    return result


@dataclass(frozen=True, slots=True)
class Config:
    weight: int = DEFAULT_WEIGHT
    strategies: dict[str, Strategy] = field(default_factory=default_strategies)
    sra: SraWeight = field(default_factory=SraWeight)
    proportional: dict[str, Proportion] | None = None

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> Config:
        """Each argument separately: one of the wrong shape is reported, its default kept."""

        def read(key: str, parse: Any, default: Any) -> Any:
            try:
                return parse(arguments.get(key))
            except ArgumentError as error:
                log.error("%s: argument %s: %s; using its default", PLUGIN_NAME, key, error)
                return default

        def weight(raw: Any) -> int:
            if raw is None:
                return DEFAULT_WEIGHT
            value = _int(raw, WEIGHT_KEY)
            return DEFAULT_WEIGHT if value < 0 else value

        return cls(
            weight=read(WEIGHT_KEY, weight, DEFAULT_WEIGHT),
            strategies=read(RESOURCES_KEY, parse_strategies, default_strategies()),
            sra=read(SRA_KEY, parse_sra, SraWeight()),
            proportional=read(PROPORTIONAL_KEY, parse_proportional, None),
        )


# ---------------------------------------------------------------------- per-pod strategy


@dataclass(frozen=True, slots=True)
class PodStrategy:
    """The pod's own strategy from its annotations; ``invalid`` makes it score 0."""

    type: str = ""
    weights: Mapping[str, int] = field(default_factory=dict)
    invalid: bool = False


def pod_strategy(annotations: Mapping[str, str]) -> PodStrategy:
    kind = annotations.get(STRATEGY_ANNOTATION, "")
    if not kind:
        return PodStrategy()
    raw = annotations.get(STRATEGY_WEIGHT_ANNOTATION, "")
    if not raw:
        log.error(
            "%s: annotation %s is present, but annotation %s is missing or empty",
            PLUGIN_NAME,
            STRATEGY_ANNOTATION,
            STRATEGY_WEIGHT_ANNOTATION,
        )
        return PodStrategy(kind, {}, invalid=True)
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in parsed.values()
        ):
            raise ValueError('expected {"<resource>": <integer weight>}')
    except ValueError as error:
        log.error("%s: annotation %s=%r: %s", PLUGIN_NAME, STRATEGY_WEIGHT_ANNOTATION, raw, error)
        return PodStrategy(kind, {}, invalid=True)
    return PodStrategy(kind, parsed)


def task_pod_strategy(task: TaskInfo) -> PodStrategy:
    strategy: PodStrategy = derived_fact(
        task, "resource-strategy-fit.pod", lambda t: pod_strategy(t.pod_annotations)
    )
    return strategy


def resource_strategies(
    request: Resource, pod: PodStrategy, strategies: Mapping[str, Strategy]
) -> list[tuple[str, Strategy]]:
    """The (resource, strategy) pairs that score ``request``, in request order."""
    chosen = []
    for name in request.resource_names():
        if pod.type:
            weight = pod.weights.get(name)
            if weight is not None:
                chosen.append((name, Strategy(pod.type, weight)))
            continue
        strategy = find_strategy(name, strategies)
        if strategy is not None:
            chosen.append((name, strategy))
    return chosen


# ---------------------------------------------------------------------- scores: references


class NotEnoughResources(ValueError):
    pass


def requested_score(
    kind: str, requested: float, used: float, capacity: float, weight: int
) -> float:
    """``mostRequestedScore`` / ``leastRequestedScore``; raises NotEnoughResources on
    overflow; a strategy type that is neither scores 0."""
    if weight == 0 or capacity == 0:
        return 0.0
    used_finally = requested + used
    if used_finally > capacity:
        raise NotEnoughResources("node resources are not enough")
    if kind == MOST_ALLOCATED:
        return used_finally * weight / capacity
    if kind == LEAST_ALLOCATED:
        return (capacity - used_finally) * weight / capacity
    return 0.0


def strategy_score(
    request: Resource,
    allocatable: Resource,
    used: Resource,
    weight: int,
    strategies: Mapping[str, Strategy],
    pod: PodStrategy = PodStrategy(),
) -> float:
    """``Score`` for one node (the readable reference)."""
    if pod.invalid:
        return 0.0
    score = 0.0
    weight_sum = 0
    for name, strategy in resource_strategies(request, pod, strategies):
        try:
            score += requested_score(
                strategy.type,
                request.get(name),
                used.get(name),
                allocatable.get(name),
                strategy.weight,
            )
        except NotEnoughResources:
            return 0.0
        weight_sum += strategy.weight
    if weight_sum > 0:
        score /= weight_sum
    return score * MAX_NODE_SCORE * weight


def sra_score(request: Resource, allocatable: Resource, sra: SraWeight) -> float:
    """``sraScore`` for one node (the readable reference)."""
    if any(allocatable.get(name) == 0 for name in request.resource_names()):
        return 0.0
    score = float(sum(w for name, w in sra.resources.items() if allocatable.get(name) > 0))
    total = sra.resources_weight_sum
    if total > 0:
        score = 1.0 - score / total
    return score * MAX_NODE_SCORE * sra.weight


def proportional_failure(
    request: Resource,
    idle: Resource,
    defined: frozenset[str],
    proportional: Mapping[str, Proportion],
) -> str | None:
    """``checkNodeResourceIsProportional`` for one node: the failing resource's reason, or
    None. ``defined`` are the scalars the node declares (upstream: keys of its Idle)."""
    if any(request.scalar_resources.get(name, 0.0) > 0 for name in proportional):
        return None
    for name, proportion in proportional.items():
        if name not in defined:
            continue
        amount = idle.get(name)
        cpu_reserved = amount * proportion.cpu
        memory_reserved = amount * proportion.memory * 1000 * 1000
        if (
            idle.milli_cpu - request.milli_cpu < cpu_reserved
            or idle.memory - request.memory < memory_reserved
        ):
            return f"proportional of resource {name} check failed"
    return None


# ---------------------------------------------------------------------- scores: vectorised


def _column(matrix: NodeMatrix, array: FloatArray, name: str, rows: IntArray) -> FloatArray:
    """``array[rows, column of name]``, zeros when no node has ``name``."""
    column = matrix.index.columns.get(name)
    if column is None or column >= array.shape[1]:
        return np.zeros(len(rows))
    values: FloatArray = array[rows, column]
    return values


def strategy_scores(
    request: Resource,
    matrix: NodeMatrix,
    rows: IntArray,
    weight: int,
    strategies: Mapping[str, Strategy],
    pod: PodStrategy = PodStrategy(),
) -> FloatArray:
    """``strategy_score`` for the nodes at ``rows``, over the matrix's allocatable and used."""
    score = np.zeros(len(rows))
    if pod.invalid:
        return score
    overflow = np.zeros(len(rows), dtype=np.bool_)
    weight_sum = 0
    for name, strategy in resource_strategies(request, pod, strategies):
        weight_sum += strategy.weight
        if strategy.weight == 0:
            continue
        capacity = _column(matrix, matrix.allocatable, name, rows)
        used_finally = request.get(name) + _column(matrix, matrix.used, name, rows)
        has = capacity != 0
        overflow |= has & (used_finally > capacity)
        safe = np.where(has, capacity, 1.0)
        if strategy.type == MOST_ALLOCATED:
            part = used_finally * strategy.weight / safe
        elif strategy.type == LEAST_ALLOCATED:
            part = (capacity - used_finally) * strategy.weight / safe
        else:
            continue
        score += np.where(has, part, 0.0)
    if weight_sum > 0:
        score /= weight_sum
    result: FloatArray = np.where(overflow, 0.0, score * MAX_NODE_SCORE * weight)
    return result


def sra_scores(request: Resource, matrix: NodeMatrix, rows: IntArray, sra: SraWeight) -> FloatArray:
    """``sra_score`` for the nodes at ``rows``."""
    lacking = np.zeros(len(rows), dtype=np.bool_)
    for name in request.resource_names():
        lacking |= _column(matrix, matrix.allocatable, name, rows) == 0
    score = np.zeros(len(rows))
    for name, resource_weight in sra.resources.items():
        score += np.where(_column(matrix, matrix.allocatable, name, rows) > 0, resource_weight, 0)
    total = sra.resources_weight_sum
    if total > 0:
        score = 1.0 - score / total
    result: FloatArray = np.where(lacking, 0.0, score * MAX_NODE_SCORE * sra.weight)
    return result


def proportional_failures(
    request: Resource,
    matrix: NodeMatrix,
    declared: Mapping[str, BoolArray],
    proportional: Mapping[str, Proportion],
) -> IntArray:
    """``proportional_failure`` for every row of ``matrix`` (``declared[name]``: the rows that
    declare ``name``), for a task asking for none of the listed resources: the position in
    ``proportional`` of the first resource a row fails, or -1 where it passes."""
    size = len(next(iter(declared.values()))) if declared else matrix.size
    cpu_left = matrix.idle[:size, 0] - request.milli_cpu
    memory_left = matrix.idle[:size, 1] - request.memory
    rows = np.arange(size, dtype=np.intp)
    failing: IntArray = np.full(size, -1, dtype=np.intp)
    for position, (name, proportion) in enumerate(proportional.items()):
        amount = _column(matrix, matrix.idle, name, rows)
        short = declared[name] & (
            (cpu_left < amount * proportion.cpu)
            | (memory_left < amount * proportion.memory * 1000 * 1000)
        )
        failing = np.where((failing < 0) & short, position, failing)
    return failing


# ---------------------------------------------------------------------- the plugin


class ResourceStrategyFitPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.config = Config.from_arguments(arguments)

    def on_session_open(self, ssn: Session) -> None:
        config = self.config
        if config.proportional is not None:
            self._register_proportional(ssn, config.proportional)
        if config.weight <= 0 and config.sra.weight <= 0:
            log.info(
                "%s: the weights of resourceStrategyFit and sra are zero, no node order", self.name
            )
            return
        if config.sra.weight > 0:
            for name in config.sra.resources:
                if name not in ssn.matrix.index.columns:
                    log.info("%s: sra resource %s is not found on any node", self.name, name)

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            total = np.zeros(len(rows))
            if config.weight > 0:
                total += strategy_scores(
                    task.resreq,
                    ssn.matrix,
                    rows,
                    config.weight,
                    config.strategies,
                    task_pod_strategy(task),
                )
            if config.sra.weight > 0:
                total += sra_scores(task.resreq, ssn.matrix, rows, config.sra)
            return total

        ssn.add_batch_node_order_fn(self.name, batch_node_order)

    def _register_proportional(self, ssn: Session, proportional: Mapping[str, Proportion]) -> None:
        # Which nodes declare each listed resource: read once per session.
        declared: dict[str, BoolArray] = {
            name: np.array([name in node.defined_scalars for node in ssn.node_list], np.bool_)
            for name in proportional
        }

        names = list(proportional)

        def predicate_mask(task: TaskInfo) -> NodeMask | None:
            request = task.resreq
            if any(request.scalar_resources.get(name, 0.0) > 0 for name in proportional):
                return None
            failing = proportional_failures(request, ssn.matrix, declared, proportional)
            passed: BoolArray = failing < 0

            def reason(row: int) -> Status:
                name = names[int(failing[row])]
                return unresolvable(f"proportional of resource {name} check failed", PLUGIN_NAME)

            return NodeMask(passed, reason)

        ssn.add_predicate_mask_fn(self.name, predicate_mask)

    def on_session_close(self, ssn: Session) -> None:
        return None


def new(arguments: Arguments) -> ResourceStrategyFitPlugin:
    return ResourceStrategyFitPlugin(arguments)
