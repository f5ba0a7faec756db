"""Session bookkeeping for inter-pod affinity: parsed terms per pod, the pods that carry
affinity per node, and the filter and score states per incoming-pod signature, all kept
current by the session's pod events.

The states are what kube-scheduler rebuilds in PreFilter / PreScore for every pod by scanning
the cluster; here a state is built once per signature and then updated by each event, which
is what its ``AddPod`` / ``RemovePod`` extensions do. The number of live states is bounded
so a session with thousands of distinct pods does not pay for updating all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, TypeVar

from volcano_py.api.pod_facts import has_pod_affinity, task_has_pod_affinity
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex
from volcano_py.plugins._kube_scheduling.pod_affinity import (
    FilterState,
    PodAffinityInfo,
    ScoreState,
    parse_pod_affinity,
)
from volcano_py.plugins._kube_scheduling.podspec import (
    Frozen,
    affinity,
    freeze,
    labels,
)
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods

if TYPE_CHECKING:
    from volcano_py.framework.session import Session

MAX_STATES: Final = 256

# One tracker per session, shared by the plugins that ask (predicates' filter states,
# nodeorder's score states), told once per pod event (False: one per plugin; the tests'
# reference). Each state is kept by the same updates either way, and each plugin asks only
# its own kind, so the bound on states evicts the same ones.
_SHARED = True
_SHARED_KEY = "kube_scheduling.affinity_tracker"
# ``_count_every_pod`` kept between changes of the states (False: asked afresh at every
# placement; the tests' reference).
_KEEP_EVERY_POD = True

K = TypeVar("K")
V = TypeVar("V")


class AffinityTracker:
    def __init__(self, pods: SessionPods, index: NodeIndex) -> None:
        self.pods = pods
        self.index = index
        self._infos: dict[str, tuple[Mapping[str, object], PodAffinityInfo]] = {}
        self._with_affinity: dict[int, dict[str, PodAffinityInfo]] | None = None
        self._filter_states: dict[Frozen, FilterState] = {}
        self._score_states: dict[Frozen, ScoreState] = {}
        # ``_count_every_pod``'s answer while the states stay the same (None: ask again).
        self._every_pod: bool | None = None
        pods.subscribe(self._changed)

    # ------------------------------------------------------------------ lookups

    def info(self, task: TaskInfo) -> PodAffinityInfo:
        cached = self._infos.get(task.key)
        if cached is not None and cached[0] is task.pod:
            return cached[1]
        if has_pod_affinity(task.pod):
            info = parse_pod_affinity(task.pod)
        else:
            # Most pods have no affinity; skip the parser for them.
            info = PodAffinityInfo(task.namespace, labels(task.pod))
        self._infos[task.key] = (task.pod, info)
        return info

    def with_affinity(self) -> dict[int, dict[str, PodAffinityInfo]]:
        """Row -> the pods with an inter-pod affinity section on it (rows without any are
        absent); built from the rows the kept per-node counts name, then kept current by
        events."""
        if self._with_affinity is None:
            rows: dict[int, dict[str, PodAffinityInfo]] = {}
            pods = self.pods
            for row in pods.rows_with_pod_affinity():
                for task in pods.pods(row):
                    if task_has_pod_affinity(task):
                        rows.setdefault(row, {})[task.key] = self.info(task)
            self._with_affinity = rows
        return self._with_affinity

    def signature(self, task: TaskInfo) -> Frozen:
        """What the affinity states depend on: namespace, labels and inter-pod affinity."""
        # A fact of the pod alone: kept with the task, so the predicates' and nodeorder's
        # trackers (and later sessions) share it.
        key: Frozen = derived_fact(task, "affinity.signature", _signature)
        return key

    # ------------------------------------------------------------------ states

    def filter_state(self, task: TaskInfo) -> FilterState:
        key = self.signature(task)
        state = self._filter_states.get(key)
        if state is None:
            state = self._build_filter_state(self.info(task))
            _bounded_put(self._filter_states, key, state)
            self._every_pod = None
        return state

    def _build_filter_state(self, incoming: PodAffinityInfo) -> FilterState:
        state = FilterState(incoming)
        all_labels = self.index.all_labels()
        for row, held in self.with_affinity().items():
            for pod in held.values():
                if pod.required_anti:
                    state.add_existing_anti(pod, all_labels[row], 1)
        if state.has_own_terms:
            for row, task in self.pods.all_pods():
                state.add_matching(task.namespace, labels(task.pod), all_labels[row], 1)
        return state

    def score_state(self, task: TaskInfo) -> ScoreState:
        key = self.signature(task)
        state = self._score_states.get(key)
        if state is None:
            state = ScoreState(self.info(task))
            all_labels = self.index.all_labels()
            if state.has_constraints:
                for row, existing in self.pods.all_pods():
                    state.add_existing(self.info(existing), all_labels[row], 1)
            else:
                for row, held in self.with_affinity().items():
                    for pod in held.values():
                        state.add_existing(pod, all_labels[row], 1)
            _bounded_put(self._score_states, key, state)
            self._every_pod = None
        return state

    # ------------------------------------------------------------------ events

    def _changed(self, task: TaskInfo, row: int, sign: int) -> None:
        # Memoised per pod: this runs at every placement.
        with_affinity = task_has_pod_affinity(task)
        if not with_affinity and not self._count_every_pod():
            # A pod without inter-pod terms only counts for states with terms of their own;
            # with none, nothing below would change (and its info need not be built).
            return
        info = self.info(task)
        if self._with_affinity is not None and with_affinity:
            if sign > 0:
                self._with_affinity.setdefault(row, {})[task.key] = info
            else:
                held = self._with_affinity.get(row)
                if held is not None:
                    held.pop(task.key, None)
        node_labels = self.index.labels(row)
        for filter_state in self._filter_states.values():
            if info.required_anti:
                filter_state.add_existing_anti(info, node_labels, sign)
            if filter_state.has_own_terms:
                filter_state.add_matching(info.namespace, info.labels, node_labels, sign)
        for score_state in self._score_states.values():
            if score_state.has_constraints or with_affinity:
                score_state.add_existing(info, node_labels, sign)

    def _count_every_pod(self) -> bool:
        """Is there a state that every pod can change, not only pods with affinity? (Asked
        at every placement; a state's answer is fixed by its pod, so it is kept until a
        state comes or goes.)"""
        if _KEEP_EVERY_POD and self._every_pod is not None:
            return self._every_pod
        every_pod = any(state.has_own_terms for state in self._filter_states.values()) or any(
            state.has_constraints for state in self._score_states.values()
        )
        self._every_pod = every_pod
        return every_pod


def affinity_tracker(ssn: Session, pods: SessionPods, index: NodeIndex) -> AffinityTracker:
    """The session's inter-pod affinity tracker over ``pods`` (made by the first plugin that
    asks: the nodes' labels are the same in every plugin's index)."""
    if _SHARED:
        shared = ssn.shared.get(_SHARED_KEY)
        if isinstance(shared, AffinityTracker) and shared.pods is pods:
            return shared
    tracker = AffinityTracker(pods, index)
    if _SHARED:
        ssn.shared[_SHARED_KEY] = tracker
    return tracker


def _bounded_put(states: dict[K, V], key: K, value: V) -> None:
    if len(states) >= MAX_STATES:
        # Drop the oldest; it is rebuilt from the session's pods if asked for again.
        del states[next(iter(states))]
    states[key] = value


def _signature(task: TaskInfo) -> Frozen:
    section = affinity(task.pod)
    return (
        task.namespace,
        freeze(labels(task.pod)),
        freeze(section.get("podAffinity")),
        freeze(section.get("podAntiAffinity")),
    )
