"""numa-aware: place Guaranteed pods where the kubelet's topology manager will admit them
(``pkg/scheduler/plugins/numaaware``).

It applies only to nodes with a Numatopology (``nodeinfo.volcano.sh/v1alpha1``, written by the
resource exporter) whose kubelet runs the ``static`` CPU manager, and only to Guaranteed pods:
those are the pods the kubelet pins to whole CPUs. For each container it predicts the CPU
manager's NUMA hints, merges them by the node's topology manager policy (``policy``) and picks
the CPUs the kubelet would pin (``cpu_manager``).

* Predicate. A pod with a topology policy (``volcano.sh/numa-topology-policy``, which the job
  controller sets from a Volcano Job task's ``topologyPolicy``; ``none`` counts as no policy)
  only fits nodes with a Numatopology, the static CPU manager, the same topology manager
  policy and some allocatable CPU (a node mask for the static part). Any other Guaranteed pod
  is checked only on nodes with the static CPU manager and a topology manager policy other
  than ``none``. Either way, a container the policy would not admit makes the node
  UnschedulableAndUnresolvable; the CPUs it would get are remembered per (pod, node).
* Batch node order, for pods with a topology policy: fewer NUMA nodes spanned by the CPUs it
  would get scores higher, ``(1 - count / max count) * 100 * weight``.
* Allocate / deallocate events take the CPUs from (give them back to) the node's free set for
  the rest of the session.
* Session close: the pods placed in this session pre-occupy their CPUs in later sessions until
  the node's Numatopology reports every one of them pinned (the exporter lags the kubelet).

Arguments: ``weight`` (integer, default 1). Nothing is written at bind: upstream's
``volcano.sh/topology-decision`` annotation only echoes one the pod already carries.

Divergence: a pre-occupation is dropped once its pod is no longer on that node (deleted,
finished, or its bind failed); upstream drops it only when the pod is deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.api.numa import (
    CPU,
    CpuSet,
    NumatopoInfo,
    PodMeta,
    ResNumaSets,
    allocate,
    release,
)
from volcano_py.api.qos import GUARANTEED, qos_class
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.api.types import Status, StatusCode, unresolvable
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import NodeMask, PredicateFn
from volcano_py.framework.session import Session
from volcano_py.plugins.numa_aware import cpu_manager
from volcano_py.plugins.numa_aware.policy import NONE, bits_of, policy_for

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "numa-aware"
WEIGHT: Final = "weight"
NUMA_POLICY_KEY: Final = "volcano.sh/numa-topology-policy"
STATIC: Final = "static"
MAX_NODE_SCORE: Final = 100.0

ARGUMENTS: Final[frozenset[str]] = frozenset({WEIGHT})

# What outlives a session (``NodeInfo.UnassignedNumaPods`` upstream): per node, the CPUs of
# the pods placed there that its Numatopology does not report pinned yet.
UnassignedPods = dict[str, dict[PodMeta, dict[str, CpuSet]]]


def task_policy(task: TaskInfo) -> str:
    """The pod's topology policy; "" for none."""
    annotations = (task.pod.get("metadata") or {}).get("annotations") or {}
    policy = str(annotations.get(NUMA_POLICY_KEY, ""))
    return "" if policy == NONE else policy


def is_guaranteed(task: TaskInfo) -> bool:
    return bool(derived_fact(task, "qos_guaranteed", lambda t: qos_class(t.pod) == GUARANTEED))


def pod_meta(task: TaskInfo) -> PodMeta:
    meta = task.pod.get("metadata") or {}
    return PodMeta(str(meta.get("uid") or ""), task.name, task.namespace)


def numa_managed(info: NumatopoInfo) -> bool:
    """The kubelet pins CPUs by a topology policy: static CPU manager, a policy not none."""
    return info.cpu_manager_policy == STATIC and info.topology_manager_policy not in ("", NONE)


def policy_mismatch(policy: str, info: NumatopoInfo | None, sets: ResNumaSets | None) -> str:
    """Why a pod with topology ``policy`` cannot use the node (``filterNodeByPolicy``); ""
    when it can."""
    if info is None:
        return "numa info is empty"
    if info.cpu_manager_policy != STATIC:
        return "cpu manager policy isn't static"
    if policy != info.topology_manager_policy:
        return (
            f"task topology policy[{policy}] is different with node[{info.topology_manager_policy}]"
        )
    if sets is None:
        return "no topo information"
    if not sets.get(CPU):
        return "cpu allocatable map is empty"
    return ""


def scheduler_sets(
    info: NumatopoInfo, unassigned: dict[PodMeta, dict[str, CpuSet]] | None
) -> dict[str, CpuSet]:
    """The node's free sets for this session (``RefreshNumaSchedulerInfoByCrd``): the
    Numatopology's allocatable, less what pods placed earlier hold while any of them is not
    reported pinned yet. Once all are reported, the node's pre-occupations are cleared."""
    sets = dict(info.allocatable)
    if not unassigned:
        return sets
    if all(info.pod_assigned(pod) for pod in unassigned):
        unassigned.clear()
        return sets
    for held in unassigned.values():
        # Only resources the node reports (``NumatopoInfo.Allocate`` would fail on others).
        sets = allocate(sets, {name: ids for name, ids in held.items() if name in sets})
    return sets


def numa_node_count(cpus: CpuSet, info: NumatopoInfo) -> int:
    """How many NUMA nodes ``cpus`` span (``getNumaNodeCntForCPUID``)."""
    return len({info.cpu_detail[cpu].numa_node for cpu in cpus if cpu in info.cpu_detail})


def normalize_reverse(counts: FloatArray) -> FloatArray:
    """``NormalizeScore(100, reverse=true)`` in integers: the fewest NUMA nodes scores 100."""
    highest = float(counts.max()) if len(counts) else 0.0
    if highest == 0:
        return np.full(len(counts), MAX_NODE_SCORE)
    scaled: FloatArray = MAX_NODE_SCORE - np.floor(MAX_NODE_SCORE * counts / highest)
    return scaled


@dataclass
class _SessionView:
    """The session's NUMA state: per node its Numatopology and free sets, and per task the
    CPUs it would get on each node it was checked on."""

    topologies: Mapping[str, NumatopoInfo]
    node_sets: dict[str, dict[str, CpuSet]]
    numa_nodes: dict[str, list[int]]
    managed: BoolArray
    policy_rows: dict[str, BoolArray] = field(default_factory=dict)
    assign_res: dict[str, dict[str, dict[str, CpuSet]]] = field(default_factory=dict)
    task_bind_node: dict[str, str] = field(default_factory=dict)
    task_pod_meta: dict[str, PodMeta] = field(default_factory=dict)


class NumaAwarePlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.weight = arguments.get_int(WEIGHT, 1)
        self.view: _SessionView | None = None

    # ------------------------------------------------------------------ session open

    def on_session_open(self, ssn: Session) -> None:
        unassigned: UnassignedPods = ssn.state.plugin_memory.setdefault(self.name, {})
        _forget_gone_pods(ssn, unassigned)
        topologies = {name: ssn.numa_info[name] for name in ssn.numa_info if name in ssn.nodes}
        node_sets = {
            name: scheduler_sets(info, unassigned.get(name)) for name, info in topologies.items()
        }
        managed = np.array(
            [
                node.name in topologies and numa_managed(topologies[node.name])
                for node in ssn.node_list
            ],
            dtype=np.bool_,
        )
        view = self.view = _SessionView(
            topologies=topologies,
            node_sets=node_sets,
            numa_nodes={name: info.numa_nodes() for name, info in topologies.items()},
            managed=managed,
        )
        row_of = {node.name: node.row for node in ssn.node_list}

        def predicate_mask(task: TaskInfo) -> NodeMask | None:
            policy = task_policy(task)
            if not policy or not is_guaranteed(task):
                return None
            return NodeMask(
                self._policy_rows(ssn, policy), lambda row: self._mask_reason(ssn, task, row)
            )

        def task_predicate(task: TaskInfo) -> PredicateFn | None:
            if not is_guaranteed(task):
                return None
            if not task_policy(task) and not view.managed.any():
                return None
            return self._predicate

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            assigned = view.assign_res.get(task.uid)
            if assigned is None or not task_policy(task):
                return np.zeros(len(rows))
            counts = np.zeros(len(ssn.node_list))
            for node_name, sets in assigned.items():
                row = row_of.get(node_name)
                if row is not None:
                    counts[row] = numa_node_count(
                        sets.get(CPU, frozenset()), view.topologies[node_name]
                    )
            scores: FloatArray = normalize_reverse(counts[rows]) * self.weight
            return scores

        ssn.add_event_handler(
            EventHandler(
                allocate=self._on_allocate, deallocate=self._on_deallocate, owner=self.name
            )
        )
        ssn.add_predicate_mask_fn(self.name, predicate_mask)
        ssn.add_task_predicate_fn(self.name, task_predicate)
        ssn.add_batch_node_order_fn(self.name, batch_node_order)

    def _policy_rows(self, ssn: Session, policy: str) -> BoolArray:
        """The nodes whose static facts admit a pod of topology ``policy`` (the free-CPU check
        is per node, in the predicate, since allocations change it)."""
        view = self._session_view()
        found = view.policy_rows.get(policy)
        if found is None:
            found = np.array(
                [
                    node.name in view.topologies
                    and view.topologies[node.name].cpu_manager_policy == STATIC
                    and view.topologies[node.name].topology_manager_policy == policy
                    for node in ssn.node_list
                ],
                dtype=np.bool_,
            )
            view.policy_rows[policy] = found
        return found

    def _mask_reason(self, ssn: Session, task: TaskInfo, row: int) -> Status:
        view = self._session_view()
        name = ssn.node_list[row].name
        reason = policy_mismatch(
            task_policy(task), view.topologies.get(name), view.node_sets.get(name)
        )
        return Status(StatusCode.ERROR, reason, PLUGIN_NAME)

    def _session_view(self) -> _SessionView:
        if self.view is None:
            raise RuntimeError("numa-aware: used outside of a session")
        return self.view

    # ------------------------------------------------------------------ predicate

    def _predicate(self, task: TaskInfo, node: NodeInfo) -> Status | None:
        view = self._session_view()
        info = view.topologies.get(node.name)
        sets = view.node_sets.get(node.name)
        policy = task_policy(task)
        if policy:
            reason = policy_mismatch(policy, info, sets)
            if reason:
                return Status(StatusCode.ERROR, reason, PLUGIN_NAME)
        elif not view.managed[node.row]:
            return None
        assert info is not None and sets is not None
        decide = policy_for(info.topology_manager_policy, view.numa_nodes[node.name])
        free = dict(sets)
        assigned: dict[str, CpuSet] = {}
        for container in cpu_manager.container_list(task.pod):
            hints = [cpu_manager.get_topology_hints(container, info, free)]
            best, admit = decide(hints)
            if not admit:
                return unresolvable(
                    f"container {container.get('name', '')} cannot be assigned by numa",
                    PLUGIN_NAME,
                )
            log.debug(
                "numa-aware: task %s container %s on node %s: hints %s, best %s (NUMA %s)",
                task.key,
                container.get("name"),
                node.name,
                hints,
                best,
                bits_of(best.affinity) if best.affinity is not None else "any",
            )
            for name, ids in cpu_manager.allocate(container, best, info, free).items():
                assigned[name] = assigned.get(name, frozenset()) | ids
                free[name] = free.get(name, frozenset()) - ids
        view.assign_res.setdefault(task.uid, {})[node.name] = assigned
        return None

    # ------------------------------------------------------------------ events

    def _on_allocate(self, event: Event) -> None:
        view = self._session_view()
        task = event.task
        held = view.assign_res.get(task.uid, {}).get(task.node_name)
        if held is None:
            return
        sets = view.node_sets.get(task.node_name)
        if sets is not None:
            view.node_sets[task.node_name] = allocate(sets, held)
        view.task_bind_node[task.uid] = task.node_name
        view.task_pod_meta[task.uid] = pod_meta(task)

    def _on_deallocate(self, event: Event) -> None:
        view = self._session_view()
        task = event.task
        held = view.assign_res.get(task.uid, {}).get(task.node_name)
        if held is None:
            return
        sets = view.node_sets.get(task.node_name)
        if sets is not None:
            view.node_sets[task.node_name] = release(sets, held)
        view.task_bind_node.pop(task.uid, None)
        view.task_pod_meta.pop(task.uid, None)

    # ------------------------------------------------------------------ session close

    def on_session_close(self, ssn: Session) -> None:
        view = self.view
        if view is None or not view.task_bind_node:
            return
        unassigned: UnassignedPods = ssn.state.plugin_memory.setdefault(self.name, {})
        for uid, node_name in view.task_bind_node.items():
            held = view.assign_res.get(uid, {}).get(node_name)
            meta = view.task_pod_meta.get(uid)
            if held is None or meta is None:
                log.warning("numa-aware: no CPU decision for task %s on node %s", uid, node_name)
                continue
            unassigned.setdefault(node_name, {})[meta] = dict(held)


def _forget_gone_pods(ssn: Session, unassigned: UnassignedPods) -> None:
    """Drop the pre-occupations of pods no longer on their node (see the module note)."""
    for node_name, pods in list(unassigned.items()):
        node = ssn.nodes.get(node_name)
        if node is None:
            continue  # not in this session (not ready): kept until it is
        for pod in list(pods):
            task = node.tasks.get(f"{pod.namespace}/{pod.name}")
            if task is None or (
                pod.uid and str((task.pod.get("metadata") or {}).get("uid") or "") != pod.uid
            ):
                del pods[pod]
        if not pods:
            del unassigned[node_name]


def new(arguments: Arguments) -> NumaAwarePlugin:
    return NumaAwarePlugin(arguments)
