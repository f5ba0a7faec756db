"""The predicates plugin's part in topology-aware preemption's dry run (the SimulateAddTask,
SimulateRemoveTask and SimulatePredicate functions of ``predicates.go``).

Upstream keeps InterPodAffinity's PreFilter state in the task's cycle state; on a copy of a
candidate node the dry run takes victims out of it and puts them back (the filter's
``RemovePod`` / ``AddPod``) and asks only that filter whether the task fits. Everything else
the dry run checks itself: resources, the pod count among them (every pod asks ``pods: 1``).
Upstream's device checks have no counterpart: volcano-py models no devices.
"""

from __future__ import annotations

from volcano_py.api.node import NodeInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.hooks import SimulateTaskChangeFn, SimulationState
from volcano_py.framework.session import Session
from volcano_py.plugins._kube_scheduling.affinity_tracker import AffinityTracker
from volcano_py.plugins._kube_scheduling.pod_affinity import PLUGIN as INTER_POD_AFFINITY
from volcano_py.plugins._kube_scheduling.pod_affinity import FilterState


class AffinitySimulation:
    """One task's inter-pod affinity filter state as a dry run changes it.

    The session's state for the task is copied on first use, not when PrePredicate seeds
    this: seeding runs for every task allocate places, a dry run only for preemptors. Nothing
    is placed between the seed and the dry run, so the copy is the same either way.
    """

    __slots__ = ("_state", "_task", "_tracker")

    def __init__(
        self, tracker: AffinityTracker, task: TaskInfo, state: FilterState | None = None
    ) -> None:
        self._tracker = tracker
        self._task = task
        self._state = state

    def filter_state(self) -> FilterState:
        if self._state is None:
            self._state = self._tracker.filter_state(self._task).copy()
        return self._state

    def clone(self) -> AffinitySimulation:
        state = None if self._state is None else self._state.copy()
        return AffinitySimulation(self._tracker, self._task, state)


class PredicatesSimulation:
    """Seeds the dry-run state and answers the Simulate* hooks for inter-pod affinity."""

    def __init__(self, plugin: str, tracker: AffinityTracker) -> None:
        self.plugin = plugin
        self.tracker = tracker

    def register(self, ssn: Session) -> None:
        ssn.add_simulate_add_task_fn(self.plugin, self._change(+1))
        ssn.add_simulate_remove_task_fn(self.plugin, self._change(-1))
        ssn.add_simulate_predicate_fn(self.plugin, self.predicate)

    def seed(self, ssn: Session, task: TaskInfo) -> None:
        ssn.simulation_state(task)[self.plugin] = AffinitySimulation(self.tracker, task)

    def _simulation(self, state: SimulationState) -> AffinitySimulation | None:
        simulation = state.get(self.plugin)
        return simulation if isinstance(simulation, AffinitySimulation) else None

    def _missing(self) -> Status:
        # Upstream's filter fails the same way when PreFilter never wrote its state.
        return Status(StatusCode.ERROR, "no dry-run state: PrePredicate did not run", self.plugin)

    def _change(self, sign: int) -> SimulateTaskChangeFn:
        def change(
            state: SimulationState, _to_schedule: TaskInfo, task: TaskInfo, node: NodeInfo
        ) -> Status | None:
            simulation = self._simulation(state)
            if simulation is None:
                return self._missing()
            simulation.filter_state().add_existing(self.tracker.info(task), node.labels, sign)
            return None

        return change

    def predicate(self, state: SimulationState, task: TaskInfo, node: NodeInfo) -> Status | None:
        """InterPodAffinity's filter on ``node`` with the dry run's pods."""
        simulation = self._simulation(state)
        if simulation is None:
            return self._missing()
        filter_state = simulation.filter_state()
        if filter_state.incoming.error:
            return Status(StatusCode.ERROR, filter_state.incoming.error, INTER_POD_AFFINITY)
        if filter_state.skip:
            return None
        return filter_state.check(node.labels)
