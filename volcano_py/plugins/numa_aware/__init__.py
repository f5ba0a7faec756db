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
  policy and some allocatable CPU. Any other Guaranteed pod is checked only on nodes with the
  static CPU manager and a topology manager policy other than ``none``. Either way, a
  container the policy would not admit makes the node UnschedulableAndUnresolvable.
  Vectorised as one node mask per pod signature (policy and whole CPUs per container): a
  node's decision is remade only when its free CPUs changed, and nodes of one layout with the
  same free CPUs share one decision, so a gang costs a few decisions, not pods x nodes.
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
from typing import Any, Final

import numpy as np

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
from volcano_py.framework.hooks import NodeMask
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

# Per container: its name and the whole CPUs it asks (0: not pinned), all the CPU manager
# reads of it.
ContainerSignature = tuple[tuple[str, int], ...]
# The pod's topology policy ("" for none) and its containers.
TaskSignature = tuple[str, ContainerSignature]
SetsKey = tuple[tuple[str, CpuSet], ...]
# A decision on one node: the failure, or the CPUs the pod would get and the NUMA nodes they
# span.
Decision = tuple["Status | None", dict[str, CpuSet], float]

# What outlives a session (``NodeInfo.UnassignedNumaPods`` upstream): per node, the CPUs of
# the pods placed there that its Numatopology does not report pinned yet.
UnassignedPods = dict[str, dict[PodMeta, dict[str, CpuSet]]]


def task_policy(task: TaskInfo) -> str:
    """The pod's topology policy; "" for none."""
    return str(derived_fact(task, "numa_policy", _read_policy))


def _read_policy(task: TaskInfo) -> str:
    annotations = (task.pod.get("metadata") or {}).get("annotations") or {}
    policy = str(annotations.get(NUMA_POLICY_KEY, ""))
    return "" if policy == NONE else policy


def is_guaranteed(task: TaskInfo) -> bool:
    return bool(derived_fact(task, "qos_guaranteed", lambda t: qos_class(t.pod) == GUARANTEED))


def pod_meta(task: TaskInfo) -> PodMeta:
    meta = task.pod.get("metadata") or {}
    return PodMeta(str(meta.get("uid") or ""), task.name, task.namespace)


def container_signature(task: TaskInfo) -> ContainerSignature:
    """What the CPU manager sees of the pod: each container's name and whole CPUs."""
    return tuple(
        (str(c.get("name", "")), cpu_manager.guaranteed_cpus(c))
        for c in cpu_manager.container_list(task.pod)
    )


def task_signature(task: TaskInfo) -> TaskSignature:
    """What a decision depends on of the pod: its topology policy and containers."""
    found: TaskSignature = derived_fact(
        task, "numa_signature", lambda t: (task_policy(t), container_signature(t))
    )
    return found


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
class _Layout:
    """One distinct node layout of the session (policy, CPUs, reservation): many nodes built
    alike share it, and with it their CPU decisions."""

    info: NumatopoInfo
    cpus: cpu_manager.CpuLayout
    numa_nodes: list[int]


@dataclass
class _SignatureRows:
    """Per task signature (topology policy and whole CPUs per container), each node's
    decision and the node version it was made at (-1: never)."""

    checked: IntArray
    passed: BoolArray
    counts: FloatArray
    failures: dict[int, Status] = field(default_factory=dict)
    assigned: dict[int, dict[str, CpuSet]] = field(default_factory=dict)


@dataclass
class _SessionView:
    """The session's NUMA state: per node its Numatopology, free sets and version, per
    signature the decisions over the nodes, and per task what it took where."""

    node_names: list[str]
    topologies: Mapping[str, NumatopoInfo]
    node_sets: dict[str, dict[str, CpuSet]]
    # Nodes with a Numatopology, and those whose kubelet pins CPUs by a topology policy.
    has_topology: BoolArray
    managed: BoolArray
    # Bumped on a row whenever its free sets change.
    versions: IntArray
    policy_rows: dict[str, BoolArray] = field(default_factory=dict)
    signatures: dict[TaskSignature, _SignatureRows] = field(default_factory=dict)
    layouts: dict[str, _Layout] = field(default_factory=dict)
    decisions: dict[tuple[str, SetsKey, ContainerSignature], Decision] = field(default_factory=dict)
    assign_res: dict[str, dict[str, dict[str, CpuSet]]] = field(default_factory=dict)
    task_bind_node: dict[str, str] = field(default_factory=dict)
    task_pod_meta: dict[str, PodMeta] = field(default_factory=dict)

    def layout(self, info: NumatopoInfo) -> _Layout:
        key = info.layout()
        found = self.layouts.get(key)
        if found is None:
            found = self.layouts[key] = _Layout(
                info, cpu_manager.CpuLayout.of(info), info.numa_nodes()
            )
        return found


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
        names = [node.name for node in ssn.node_list]
        view = self.view = _SessionView(
            node_names=names,
            topologies=topologies,
            node_sets=node_sets,
            has_topology=np.array([name in topologies for name in names], dtype=np.bool_),
            managed=np.array(
                [name in topologies and numa_managed(topologies[name]) for name in names],
                dtype=np.bool_,
            ),
            versions=np.zeros(len(names), dtype=np.intp),
        )
        if not topologies:
            # No node has a Numatopology: Guaranteed pods without a policy go anywhere, those
            # with one nowhere (one shared mask says why).
            nowhere = NodeMask(
                np.zeros(len(names), dtype=np.bool_),
                lambda row: Status(StatusCode.ERROR, "numa info is empty", PLUGIN_NAME),
            )

            def no_topology(task: TaskInfo) -> NodeMask | None:
                return nowhere if task_policy(task) and is_guaranteed(task) else None

            ssn.add_predicate_mask_fn(self.name, no_topology)
            return

        def predicate_mask(task: TaskInfo) -> NodeMask | None:
            if not is_guaranteed(task):
                return None
            policy = task_policy(task)
            if not policy and not view.managed.any():
                return None
            signature = task_signature(task)
            rows = self._fresh_rows(signature)
            candidates = self._candidates(policy)
            # With a policy only the candidates may pass; without, only they are checked.
            passed = candidates & rows.passed if policy else ~candidates | rows.passed
            return NodeMask(passed, lambda row: self._reason(policy, rows, candidates, row))

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            if not task_policy(task) or not is_guaranteed(task):
                return np.zeros(len(rows))
            decided = view.signatures.get(task_signature(task))
            if decided is None:
                return np.zeros(len(rows))
            scores: FloatArray = normalize_reverse(decided.counts[rows]) * self.weight
            return scores

        ssn.add_event_handler(
            EventHandler(
                allocate=lambda event: self._on_allocate(ssn, event),
                deallocate=lambda event: self._on_deallocate(ssn, event),
                owner=self.name,
            )
        )
        ssn.add_predicate_mask_fn(self.name, predicate_mask)
        ssn.add_batch_node_order_fn(self.name, batch_node_order)

    # ------------------------------------------------------------------ predicate

    def _candidates(self, policy: str) -> BoolArray:
        """The nodes a pod's decision is made on: for a pod with a topology policy those
        whose static facts admit it (the rest fail by ``policy_mismatch``); for any other
        Guaranteed pod the nodes whose kubelet pins CPUs by a policy (the rest pass)."""
        view = self._session_view()
        if not policy:
            return view.managed
        found = view.policy_rows.get(policy)
        if found is None:
            found = np.array(
                [
                    name in view.topologies
                    and view.topologies[name].cpu_manager_policy == STATIC
                    and view.topologies[name].topology_manager_policy == policy
                    for name in view.node_names
                ],
                dtype=np.bool_,
            )
            view.policy_rows[policy] = found
        return found

    def _fresh_rows(self, signature: TaskSignature) -> _SignatureRows:
        """The signature's decisions, remade on the candidate nodes whose free sets changed
        since (all of them the first time)."""
        view = self._session_view()
        rows = view.signatures.get(signature)
        size = len(view.node_names)
        if rows is None:
            rows = view.signatures[signature] = _SignatureRows(
                checked=np.full(size, -1, dtype=np.intp),
                passed=np.zeros(size, dtype=np.bool_),
                counts=np.zeros(size),
            )
        stale = self._candidates(signature[0]) & (rows.checked != view.versions)
        for row in np.flatnonzero(stale).tolist():
            self._remake(rows, signature, row)
        return rows

    def _remake(self, rows: _SignatureRows, signature: TaskSignature, row: int) -> None:
        """The signature's decision on one node, at the node's current version."""
        view = self._session_view()
        failure, assigned, count = self._decide_row(signature, row)
        rows.passed[row] = failure is None
        rows.counts[row] = count
        if failure is None:
            rows.failures.pop(row, None)
            rows.assigned[row] = assigned
        else:
            rows.failures[row] = failure
            rows.assigned.pop(row, None)
        rows.checked[row] = view.versions[row]

    def _reason(self, policy: str, rows: _SignatureRows, candidates: BoolArray, row: int) -> Status:
        if not candidates[row]:
            view = self._session_view()
            name = view.node_names[row]
            reason = policy_mismatch(policy, view.topologies.get(name), view.node_sets.get(name))
            return Status(StatusCode.ERROR, reason, PLUGIN_NAME)
        return rows.failures.get(row) or Status(StatusCode.ERROR, "numa", PLUGIN_NAME)

    def _decide_row(self, signature: TaskSignature, row: int) -> Decision:
        """The decision of ``predicateFn`` on one node (``filterNodeByPolicy``, then each
        container's hints, verdict and CPUs), shared by nodes of one layout and free sets."""
        view = self._session_view()
        policy, containers = signature
        name = view.node_names[row]
        info = view.topologies[name]
        sets = view.node_sets[name]
        if policy:
            reason = policy_mismatch(policy, info, sets)
            if reason:
                return Status(StatusCode.ERROR, reason, PLUGIN_NAME), {}, 0.0
        layout = view.layout(info)
        key = (info.layout(), _sets_key(sets), containers)
        decision = view.decisions.get(key)
        if decision is None:
            decision = view.decisions[key] = decide(layout.info, layout, sets, containers)
        return decision

    def _session_view(self) -> _SessionView:
        if self.view is None:
            raise RuntimeError("numa-aware: used outside of a session")
        return self.view

    # ------------------------------------------------------------------ events

    def _on_allocate(self, ssn: Session, event: Event) -> None:
        view = self._session_view()
        task = event.task
        node = ssn.nodes.get(task.node_name)
        if node is None or task.node_name not in view.topologies or not is_guaranteed(task):
            return
        signature = task_signature(task)
        if not signature[0] and not view.managed[node.row]:
            return
        decided = self._fresh_rows(signature)
        if decided.checked[node.row] != view.versions[node.row]:
            # Placed on a node this signature is not decided on (not through the search).
            self._remake(decided, signature, node.row)
        held = decided.assigned.get(node.row)
        if held is None:
            return
        view.assign_res.setdefault(task.uid, {})[task.node_name] = held
        view.node_sets[task.node_name] = allocate(view.node_sets[task.node_name], held)
        view.versions[node.row] += 1
        view.task_bind_node[task.uid] = task.node_name
        view.task_pod_meta[task.uid] = pod_meta(task)

    def _on_deallocate(self, ssn: Session, event: Event) -> None:
        view = self._session_view()
        task = event.task
        held = view.assign_res.get(task.uid, {}).get(task.node_name)
        node = ssn.nodes.get(task.node_name)
        if held is None or node is None or task.uid not in view.task_bind_node:
            return
        view.node_sets[task.node_name] = release(view.node_sets[task.node_name], held)
        view.versions[node.row] += 1
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


def _sets_key(sets: ResNumaSets) -> SetsKey:
    return tuple(sorted(sets.items(), key=lambda item: item[0]))


def decide(
    info: NumatopoInfo,
    layout: _Layout,
    sets: ResNumaSets,
    containers: ContainerSignature,
) -> Decision:
    """Each container's hints, the node policy's verdict and the CPUs it would get, each
    container taking from what the earlier ones left; the failure, or the CPUs and the number
    of NUMA nodes they span."""
    policy = policy_for(info.topology_manager_policy, layout.numa_nodes)
    free = dict(sets)
    assigned: dict[str, CpuSet] = {}
    for name, cpus in containers:
        # What the CPU manager reads of the container: its whole CPUs (none: not pinned).
        container: dict[str, Any] = {"name": name}
        if cpus:
            container["resources"] = {"requests": {CPU: str(cpus)}}
        hints = [cpu_manager.get_topology_hints(container, info, free, layout.cpus)]
        best, admit = policy(hints)
        if not admit:
            reason = f"container {name} cannot be assigned by numa"
            return unresolvable(reason, PLUGIN_NAME), {}, 0.0
        log.debug(
            "numa-aware: container %s on layout %s: hints %s, best %s (NUMA %s)",
            name,
            info.layout(),
            hints,
            best,
            bits_of(best.affinity) if best.affinity is not None else "any",
        )
        for resource, ids in cpu_manager.allocate(container, best, info, free, layout.cpus).items():
            assigned[resource] = assigned.get(resource, frozenset()) | ids
            free[resource] = free.get(resource, frozenset()) - ids
    return None, assigned, float(numa_node_count(assigned.get(CPU, frozenset()), info))


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
