"""The predicates plugin (``pkg/scheduler/plugins/predicates/predicates.go``).

Registers, in Volcano's filter order:

* a PrePredicateFn: the pre-filters that can reject a pod outright (node-name affinity terms
  that conflict, inter-pod affinity terms that do not parse);
* three PredicateMaskFns: the node-static filters (NodeUnschedulable, NodeAffinity with
  ``nodeSelector``, TaintToleration) per pod signature, the pod-count check, and
  PodTopologySpread's hard constraints (both recomputed, vectorised, after each placement);
* a TaskPredicateFn giving, only to the tasks that need one, the per-node check of what
  depends on the pods placed so far: NodePorts, then InterPodAffinity (including existing
  pods' anti-affinity);
* an EventHandler that keeps the session's view of each node's pods current;
* DRA (kube-scheduler's dynamicresources, ``dra``): its PreFilter in the PrePredicateFn, its
  Filter as a PredicateMaskFn, Reserve/Unreserve at the allocate events; on with the
  DynamicResourceAllocation feature gate, ``dynamicresources.filterTimeoutSeconds`` bounding
  the device search per node;
* for topology-aware preemption's dry run (``simulation``): the PrePredicateFn also seeds the
  task's simulation state, and SimulateAddTaskFn / SimulateRemoveTaskFn / SimulatePredicateFn
  move victims in and out of the InterPodAffinity state and filter with it.

There is no CPU/memory fit here: the actions check requests against idle resources.

``predicate.CacheEnable`` (upstream's equivalence cache of the stable filters, keyed by node and
the pod's ``volcano.sh/template-uid``) is read and changes nothing observable: the static masks
are always cached per pod signature, which is what that cache approximates. Upstream words a
cache hit's failure "plugin equivalence cache predicates failed"; here the real reasons stay.

Not ported, and each said once in the log when the configuration names it (``UNPORTED``): the
volume filters (NodeVolumeLimits, VolumeZone, VolumeBinding and its ``volumebinding.*``
arguments: no volumes are modelled).

Retired (``RETIRED_ARGUMENTS``, see framework.conf_check): arguments Volcano's predicates plugin
reads no more though its guides still set them, inert here as there: the GPU switches Volcano
v1.8 moved to the ``deviceshare`` plugin, ``predicate.DynamicResourceAllocationEnable`` (DRA
follows the ``DynamicResourceAllocation`` feature gate since v1.13), and the proportional
policy (``predicate.ProportionalEnable``, ``predicate.resources*``) Volcano v1.13 moved to
``resource-strategy-fit``'s ``proportional.*`` arguments (docs/migrating-from-volcano.md lists
each).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from volcano_py.api.dra import DEFAULT_FILTER_TIMEOUT as DEFAULT_DRA_FILTER_TIMEOUT
from volcano_py.api.node import NodeInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf_check import RetiredArgument
from volcano_py.framework.session import Session
from volcano_py.plugins._kube_scheduling.affinity_tracker import affinity_tracker
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex
from volcano_py.plugins._kube_scheduling.pod_affinity import PLUGIN as INTER_POD_AFFINITY
from volcano_py.plugins._kube_scheduling.podspec import affinity, init_containers
from volcano_py.plugins._kube_scheduling.selectors import name_conflict
from volcano_py.plugins._kube_scheduling.session_pods import session_pods
from volcano_py.plugins._kube_scheduling.topology_spread import PLUGIN as POD_TOPOLOGY_SPREAD
from volcano_py.plugins._kube_scheduling.topology_spread import TopologySpread
from volcano_py.plugins.predicates.dra import DynamicResources
from volcano_py.plugins.predicates.masks import PodCountMask, StaticFilters, StaticMasks
from volcano_py.plugins.predicates.ports import PortTracker
from volcano_py.plugins.predicates.simulation import PredicatesSimulation

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "predicates"

NODE_AFFINITY_ENABLE: Final = "predicate.NodeAffinityEnable"
NODE_PORTS_ENABLE: Final = "predicate.NodePortsEnable"
TAINT_TOLERATION_ENABLE: Final = "predicate.TaintTolerationEnable"
POD_AFFINITY_ENABLE: Final = "predicate.PodAffinityEnable"
NODE_VOLUME_LIMITS_ENABLE: Final = "predicate.NodeVolumeLimitsEnable"
VOLUME_ZONE_ENABLE: Final = "predicate.VolumeZoneEnable"
POD_TOPOLOGY_SPREAD_ENABLE: Final = "predicate.PodTopologySpreadEnable"
VOLUME_BINDING_ENABLE: Final = "predicate.VolumeBindingEnable"
DRA_ENABLE: Final = "predicate.DynamicResourceAllocationEnable"
CACHE_ENABLE: Final = "predicate.CacheEnable"
GPU_SHARING_ENABLE: Final = "predicate.GPUSharingEnable"
GPU_NUMBER_ENABLE: Final = "predicate.GPUNumberEnable"
VOLUME_BINDING_TIMEOUT: Final = "volumebinding.bindTimeoutSeconds"
VOLUME_BINDING_WEIGHT: Final = "volumebinding.weight"
VOLUME_BINDING_SHAPE: Final = "volumebinding.shape"
DRA_FILTER_TIMEOUT: Final = "dynamicresources.filterTimeoutSeconds"
PROPORTIONAL_ENABLE: Final = "predicate.ProportionalEnable"
PROPORTIONAL_RESOURCES: Final = "predicate.resources"
PROPORTIONAL_PREFIX: Final = PROPORTIONAL_RESOURCES + "."

_NO_VOLUMES: Final = "volumes are not modelled by volcano-py, so this filter does not exist here"
# Arguments upstream reads (or once read) for what volcano-py does not model: each is named in
# a warning, once per process, when a configuration sets it, and then has no effect.
UNPORTED: Final[Mapping[str, str]] = {
    NODE_VOLUME_LIMITS_ENABLE: _NO_VOLUMES,
    VOLUME_ZONE_ENABLE: _NO_VOLUMES,
    VOLUME_BINDING_ENABLE: _NO_VOLUMES,
    VOLUME_BINDING_TIMEOUT: _NO_VOLUMES,
    VOLUME_BINDING_WEIGHT: _NO_VOLUMES,
    VOLUME_BINDING_SHAPE: _NO_VOLUMES,
}
_warned: set[str] = set()


def warn_once(key: str, message: str, *args: object) -> bool:
    """Log ``message`` the first time ``key`` comes up in this process (the plugin is built
    anew every session, so "once" cannot be per instance)."""
    if key in _warned:
        return False
    _warned.add(key)
    log.warning(message, *args)
    return True


def warn_unported(arguments: Mapping[str, object]) -> None:
    for key, why in UNPORTED.items():
        if key in arguments:
            warn_once(key, "predicates: argument %s has no effect: %s", key, why)


_GPU_SHARE_MOVED: Final = "Volcano v1.8 moved GPU sharing to the deviceshare plugin"
_PROPORTIONAL_MOVED: Final = (
    "Volcano v1.13 moved the proportional policy to the resource-strategy-fit plugin"
)
_PROPORTIONAL_NOW: Final = (
    "proportional.enable, proportional.resources and proportional.resourceProportion on the"
    " resource-strategy-fit plugin"
)
# Read by Volcano's predicates plugin no more (its guides still set them): inert, as there.
RETIRED_ARGUMENTS: Final[Mapping[str, RetiredArgument]] = {
    GPU_SHARING_ENABLE: RetiredArgument(
        _GPU_SHARE_MOVED,
        "deviceshare.GPUSharingEnable on the deviceshare plugin",
        ("deviceshare", "deviceshare.GPUSharingEnable"),
        ("volcano.sh/gpu-memory",),
    ),
    GPU_NUMBER_ENABLE: RetiredArgument(
        _GPU_SHARE_MOVED,
        "deviceshare.GPUNumberEnable on the deviceshare plugin",
        ("deviceshare", "deviceshare.GPUNumberEnable"),
        ("volcano.sh/gpu-number",),
    ),
    DRA_ENABLE: RetiredArgument(
        "since v1.13 Volcano follows kube-scheduler's DynamicResourceAllocation feature gate",
        "the scheduler's --feature-gates DynamicResourceAllocation",
    ),
    PROPORTIONAL_ENABLE: RetiredArgument(_PROPORTIONAL_MOVED, _PROPORTIONAL_NOW),
    PROPORTIONAL_RESOURCES: RetiredArgument(_PROPORTIONAL_MOVED, _PROPORTIONAL_NOW),
    PROPORTIONAL_PREFIX + "*": RetiredArgument(_PROPORTIONAL_MOVED, _PROPORTIONAL_NOW),
}


# kube-scheduler's SidecarContainers feature gate (on by default since 1.29): with it on,
# pods with restartable init containers are scheduled like any other.
SIDECAR_CONTAINERS_ENABLED: Final = True

# hooks.PredicateFn says ``Status | None``; the session also takes a tuple (every failing
# status of the plugin, as upstream's FitError lists them).
NodePredicate: TypeAlias = Callable[[TaskInfo, NodeInfo], tuple[Status, ...] | None]
PrePredicate: TypeAlias = Callable[[TaskInfo], Status | None]

ERR_NODE_AFFINITY_CONFLICT: Final = (
    "plugin NodeAffinity pre-predicates failed pod affinity terms conflict"
)
ERR_SIDECARS: Final = (
    "pod has a restartable init container and the SidecarContainers feature is disabled"
)


@dataclass(frozen=True, slots=True)
class PredicateFlags:
    node_affinity: bool = True
    node_ports: bool = True
    taint_toleration: bool = True
    pod_affinity: bool = True
    node_volume_limits: bool = True
    volume_zone: bool = True
    pod_topology_spread: bool = True
    volume_binding: bool = True
    # Follows the DynamicResourceAllocation feature gate, as upstream; the retired
    # predicate.DynamicResourceAllocationEnable is not read.
    dynamic_resource_allocation: bool = True
    cache: bool = False

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> PredicateFlags:
        return cls(
            node_affinity=arguments.get_bool(NODE_AFFINITY_ENABLE, True),
            node_ports=arguments.get_bool(NODE_PORTS_ENABLE, True),
            taint_toleration=arguments.get_bool(TAINT_TOLERATION_ENABLE, True),
            pod_affinity=arguments.get_bool(POD_AFFINITY_ENABLE, True),
            node_volume_limits=arguments.get_bool(NODE_VOLUME_LIMITS_ENABLE, True),
            volume_zone=arguments.get_bool(VOLUME_ZONE_ENABLE, True),
            pod_topology_spread=arguments.get_bool(POD_TOPOLOGY_SPREAD_ENABLE, True),
            volume_binding=arguments.get_bool(VOLUME_BINDING_ENABLE, True),
            cache=arguments.get_bool(CACHE_ENABLE, False),
        )


class PredicatesPlugin:
    name = PLUGIN_NAME
    # A run's masks and pre-predicates read the pod template and the nodes, nothing of the
    # task's job: a run may go on into the next job's like tasks (``Session.runs_across_jobs``).
    batch_ignores_job = True

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.flags = PredicateFlags.from_arguments(arguments)
        self._batch_safe: Callable[[TaskInfo], bool] | None = None
        self._batch_pre_predicate: Callable[[TaskInfo], PrePredicate | None] | None = None
        warn_unported(arguments)

    def on_session_open(self, ssn: Session) -> None:
        flags = self.flags
        index = NodeIndex(ssn.node_list)
        pods = session_pods(ssn, self.name)
        static = StaticMasks(index, StaticFilters(flags.node_affinity, flags.taint_toleration))
        pod_count = PodCountMask(pods, ssn.matrix)
        ports = PortTracker(pods) if flags.node_ports else None
        pod_affinity = affinity_tracker(ssn, pods, index) if flags.pod_affinity else None
        spread = TopologySpread(pods, index) if flags.pod_topology_spread else None
        simulation = (
            PredicatesSimulation(self.name, pod_affinity) if pod_affinity is not None else None
        )
        dynamic_resources = self._dynamic_resources(ssn)

        def pre_predicate(task: TaskInfo) -> Status | None:
            status = pre_checks(task)
            if status is None and simulation is not None:
                simulation.seed(ssn, task)
            return status

        def pre_checks(task: TaskInfo) -> Status | None:
            """PrePredicate's checks (the pod's own facts: its node affinity, inter-pod terms
            and spread constraints, its claims), without seeding the dry-run state."""
            if not SIDECAR_CONTAINERS_ENABLED and any(
                c.get("restartPolicy") == "Always" for c in init_containers(task.pod)
            ):
                return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_SIDECARS, self.name)
            if flags.node_affinity and name_conflict(affinity(task.pod).get("nodeAffinity")):
                return Status(
                    StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NODE_AFFINITY_CONFLICT, self.name
                )
            if pod_affinity is not None:
                error = pod_affinity.info(task).error
                if error:
                    return Status(
                        StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        f"plugin {INTER_POD_AFFINITY} pre-predicates failed parsing pod: {error}",
                        self.name,
                    )
            if spread is not None:
                error = spread.pre_filter_error(task)
                if error:
                    return Status(
                        StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE,
                        f"plugin {POD_TOPOLOGY_SPREAD} pre-predicates failed get constraints from"
                        f" pod: obtaining pod's hard topology spread constraints: {error}",
                        self.name,
                    )
            if dynamic_resources is not None:
                return dynamic_resources.pre_predicate(task)
            return None

        def batch_pre_predicate(task: TaskInfo) -> PrePredicate | None:
            """``pre_predicate`` bound to a run of tasks like ``task`` (``batch_safe``: no
            claims): the checks read only the pod template, so a member passes when ``task``
            does and only its dry-run state is seeded. None (the plain function for each
            member) when ``task`` fails them."""
            if dynamic_resources is not None or pre_checks(task) is not None:
                return None

            def member(task: TaskInfo) -> Status | None:
                if simulation is not None:
                    simulation.seed(ssn, task)
                return None

            return member

        def dynamic_predicate(task: TaskInfo, node: NodeInfo) -> tuple[Status, ...] | None:
            # Statuses accumulate, as upstream's Predicate does (NodePorts, then
            # InterPodAffinity, each failing at most once).
            statuses: list[Status] = []
            if ports is not None:
                status = ports.check(task, node.row)
                if status is not None:
                    statuses.append(status)
            if pod_affinity is not None:
                state = pod_affinity.filter_state(task)
                if state.incoming.error:
                    error = Status(StatusCode.ERROR, state.incoming.error, INTER_POD_AFFINITY)
                    statuses.append(error)
                elif not state.skip:
                    status = state.check(index.labels(node.row))
                    if status is not None:
                        statuses.append(status)
            return tuple(statuses) if statuses else None

        def task_predicate(task: TaskInfo) -> NodePredicate | None:
            """The per-node check ``task`` needs, or None: a pod without host ports, with no
            inter-pod terms of its own and refused by no existing pod is decided by the
            masks alone (PreFilter ``Skip`` for both plugins)."""
            if ports is not None and ports.wanted(task):
                return dynamic_predicate
            if pod_affinity is not None:
                state = pod_affinity.filter_state(task)
                if state.incoming.error or not state.skip:
                    return dynamic_predicate
            return None

        def batch_safe(task: TaskInfo) -> bool:
            """Every check of ``task`` is a mask that a like task's placement changes only on
            its own row: the static mask follows the pod template, the pod count the placed
            node. Not with a per-node check (host ports, inter-pod terms or a refusing pod:
            a like pod placed cannot add a refusal without terms of its own), a hard spread
            constraint (its mask counts whole domains) or DRA (claims are shared)."""
            if dynamic_resources is not None or task_predicate(task) is not None:
                return False
            return spread is None or spread.mask(task) is None

        self._batch_safe = batch_safe
        self._batch_pre_predicate = batch_pre_predicate
        ssn.add_pre_predicate_fn(self.name, pre_predicate)
        ssn.add_predicate_mask_fn(self.name, static.mask)
        ssn.add_predicate_mask_fn(self.name, pod_count.mask)
        if spread is not None:
            ssn.add_predicate_mask_fn(self.name, spread.mask)
        ssn.add_task_predicate_fn(self.name, task_predicate)
        if dynamic_resources is not None:
            dynamic_resources.register(ssn)
        if simulation is not None:
            # With inter-pod affinity off upstream's Simulate* functions all pass.
            simulation.register(ssn)

    def batch_safe(self, task: TaskInfo) -> bool:
        """May allocate keep this plugin's masks across a run of tasks like ``task``
        (``Session.batch_safe``)? Only in a session this plugin opened."""
        return self._batch_safe(task) if self._batch_safe is not None else False

    def batch_pre_predicate(self, task: TaskInfo) -> PrePredicate | None:
        """``pre_predicate`` bound to a run of tasks like ``task`` (``Session.run_pre_predicate``);
        None: the plain function for each member."""
        bound = self._batch_pre_predicate
        return bound(task) if bound is not None else None

    def _dynamic_resources(self, ssn: Session) -> DynamicResources | None:
        """kube-scheduler's dynamicresources plugin, on with the DynamicResourceAllocation
        gate (``predicate.DynamicResourceAllocationEnable`` is no longer read), for a cluster
        that has DRA objects at all."""
        gates = ssn.state.kube_feature_gates
        if ssn.dra is None or not gates.get("DynamicResourceAllocation", True):
            return None
        timeout = DEFAULT_DRA_FILTER_TIMEOUT
        seconds = self.arguments.get_int(DRA_FILTER_TIMEOUT, -1)
        if seconds >= 0:
            timeout = float(seconds)
        if not gates.get("DRASchedulerFilterTimeout", True):
            timeout = 0.0
        return DynamicResources(ssn, self.name, timeout, gates)

    def on_session_close(self, ssn: Session) -> None:
        return None


# The arguments this plugin acts on (upstream predicates.go).
ARGUMENTS: Final[frozenset[str]] = frozenset(
    {
        NODE_AFFINITY_ENABLE,
        NODE_PORTS_ENABLE,
        TAINT_TOLERATION_ENABLE,
        POD_AFFINITY_ENABLE,
        POD_TOPOLOGY_SPREAD_ENABLE,
        CACHE_ENABLE,
        DRA_FILTER_TIMEOUT,
    }
)
# Read by Volcano for what volcano-py does not model: the conf checks name each as having no
# effect, and the plugin says why once.
UNSUPPORTED_ARGUMENTS: Final[frozenset[str]] = frozenset(UNPORTED)


def new(arguments: Arguments) -> PredicatesPlugin:
    return PredicatesPlugin(arguments)
