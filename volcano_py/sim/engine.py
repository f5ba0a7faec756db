"""The simulation loop: between scheduling cycles the simulated cluster moves on (bound pods
start, evicted pods go, pods with a run time finish), the controllers react (a Volcano Job
gets its PodGroup and pods, a bare pod its PodGroup), then one real scheduling cycle runs."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.types import (
    DEFAULT_SCHEDULER_NAME,
    GROUP_NAME_ANNOTATION,
    SIM_RUN_CYCLES_ANNOTATION,
)
from volcano_py.cache.cache import SchedulerCache
from volcano_py.controllers.job import (
    JobChanges,
    JobPods,
    JobRequest,
    job_request_for_command,
    job_request_for_pod_change,
    only_events,
    sync_depends_only_on_state,
    sync_job,
)
from volcano_py.controllers.ownership import job_of_owner, job_of_pod
from volcano_py.controllers.podgroup import pod_group_for_pod
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.scheduler.cycle import gc_paused
from volcano_py.scheduler.registry import new_action
from volcano_py.sim import job_ttl, jobflows, node_usage
from volcano_py.sim.cluster import EPOCH, InMemoryCluster, object_key, revised, timestamp
from volcano_py.sim.kubelet import SimKubelet
from volcano_py.sim.quota import QuotaStatusController
from volcano_py.sim.workloads import WorkloadControllers, controlling_owner

DEFAULT_MAX_CYCLES: Final = 20
# Controller passes per cycle: each pass handles what the previous one triggered.
CONTROLLER_PASSES: Final = 5
# Objects the job plugins (svc, ssh) own, handed back to the controller so it can tell an
# unchanged object from a new one.
_JOB_PLUGIN_KINDS: Final = ("ConfigMap", "Service", "Secret", "NetworkPolicy")


@dataclass
class Simulation:
    conf: SchedulerConf
    plugins: Mapping[str, PluginBuilder]
    scheduler_names: frozenset[str] = frozenset({DEFAULT_SCHEDULER_NAME})
    # What a job made here gets without schedulerName (the first --scheduler-name).
    job_scheduler_name: str = DEFAULT_SCHEDULER_NAME
    seed: int = 0
    time: float = 0.0
    cycles: int = 0
    cache: SchedulerCache = field(init=False)
    cluster: InMemoryCluster = field(init=False)
    kubelet: SimKubelet = field(init=False)
    workloads: WorkloadControllers = field(init=False)
    state: SchedulingState = field(init=False)
    last_session: Session | None = field(default=None, init=False)
    job_requests: dict[str, list[JobRequest]] = field(default_factory=dict, init=False)
    started_cycle: dict[str, int] = field(default_factory=dict, init=False)
    _pods_seen: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    _pod_group_phases: dict[str, str] = field(default_factory=dict, init=False)
    # Pods without a PodGroup annotation, for the PodGroup controller (which would otherwise
    # look at every pod on every pass).
    _ungrouped_pods: set[str] = field(default_factory=set, init=False)
    # Policy actions with a timeout: (when, job key, request).
    delayed: list[tuple[float, str, JobRequest]] = field(default_factory=list, init=False)
    quota_status: QuotaStatusController = field(default_factory=QuotaStatusController, init=False)

    def __post_init__(self) -> None:
        self.cluster = InMemoryCluster(watch=self._watch, clock=lambda: self.time)
        self.cluster.identities.seed = self.seed
        self.kubelet = SimKubelet(seed=self.seed)
        self.workloads = WorkloadControllers(self.cluster, self.seed, lambda: self.time)
        self.cache = SchedulerCache(
            scheduler_names=self.scheduler_names,
            binder=self.cluster,
            evictor=self.cluster,
            status_updater=self.cluster,
            recorder=self.cluster,
        )
        # The session reads Unix time, as live: the same instants the simulated cluster stamps
        # on its objects (creation times, conditions), so sla deadlines and cdp cooldowns
        # compare like with like.
        self.state = SchedulingState(seed=self.seed, clock=lambda: EPOCH.timestamp() + self.time)

    # ------------------------------------------------------------------ loading

    def load(self, objects: list[dict[str, Any]], *, owned: bool = False) -> None:
        """Create the objects in the simulated cluster. ``owned``: the caller hands them
        over (no copy; the command line's freshly read dump is tens of thousands of pods)."""
        for obj in objects:
            self.cluster.create(obj if owned else copy.deepcopy(obj))
        self.cluster.ensure_default_queues()
        # Session uids from the seed and the loaded store's revision: a reloaded output (whose
        # revision is past every version it holds) never reuses the first run's.
        self.state.uid_salt = f"{self.seed}/{self.cluster.identities.revision}"
        self._sync_quotas()
        for key, _job in self.cluster.items("Job"):
            self._request(key, JobRequest(event="OutOfSync"))

    # ------------------------------------------------------------------ watch side effects

    def _watch(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        self.cache.apply_event(kind, event_type, obj)
        if kind == "Pod":
            key = object_key(obj)
            old = self._pods_seen.get(key)
            new = None if event_type == "DELETED" else dict(obj)
            if new is None:
                self._pods_seen.pop(key, None)
            else:
                self._pods_seen[key] = new
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if new is not None and GROUP_NAME_ANNOTATION not in annotations:
                self._ungrouped_pods.add(key)
            else:
                self._ungrouped_pods.discard(key)
            job_key = job_of_pod(obj)
            if job_key is not None:
                job = self.cluster.get("Job", job_key)
                if job is not None:
                    request = job_request_for_pod_change(
                        job, old, new, pods=self._pods_of_job(job_key)
                    )
                    if request is not None:
                        self._request(job_key, request)
        elif kind == "PodGroup":
            key = object_key(obj)
            phase = (
                "" if event_type == "DELETED" else str((obj.get("status") or {}).get("phase", ""))
            )
            if self._pod_group_phases.get(key) != phase:
                self._pod_group_phases[key] = phase
                job_key = job_of_owner(obj)
                if job_key is not None:
                    event = "Unknown" if phase == "Unknown" else "OutOfSync"
                    self._request(job_key, JobRequest(event=event))

    def _sync_quotas(self) -> None:
        """Kubernetes' quota controller: ResourceQuota status follows the pods."""
        for quota in self.quota_status.sync(
            self.cluster.items("ResourceQuota"), self.cluster.items("Pod")
        ):
            self.cluster.update(quota)

    def _request(self, job_key: str, request: JobRequest) -> None:
        self.job_requests.setdefault(job_key, []).append(request)

    # ------------------------------------------------------------------ between cycles

    def _advance_pods(self) -> None:
        """What kubelets would do since the last cycle."""
        for key, pod in list(self.cluster.items("Pod")):
            meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
            status = pod.get("status") or {}
            if meta.get("deletionTimestamp"):
                self.cluster.delete("Pod", key)
                self.started_cycle.pop(key, None)
                self.cluster.changes += 1
                continue
            phase = status.get("phase")
            if phase == "Pending" and spec.get("nodeName"):
                self._set_phase(pod, "Running")
                self.started_cycle[key] = self.cycles
            elif phase == "Running":
                if key not in self.started_cycle and not status.get("containerStatuses"):
                    self._set_phase(pod, "Running")  # given Running: its kubelet reports it
                self.started_cycle.setdefault(key, self.cycles)
                run_cycles = (meta.get("annotations") or {}).get(SIM_RUN_CYCLES_ANNOTATION)
                if run_cycles is not None and self.cycles - self.started_cycle[key] >= _as_int(
                    run_cycles
                ):
                    self._set_phase(pod, "Succeeded")

    def _set_phase(self, pod: dict[str, Any], phase: str) -> None:
        pod = dict(pod)  # a new version; its status is made new below, the rest is shared
        cluster = self.cluster
        cluster_pods = cluster.of_kind("Pod").values()
        self.kubelet.network.prime(cluster.of_kind("Node").values(), cluster_pods)
        pod["status"] = self.kubelet.status(pod, phase, timestamp(self.time))
        cluster.changes += 1
        cluster.update(pod)

    def pending_timers(self) -> bool:
        """A running pod that will finish in a later cycle, or a finished job's TTL that runs
        out within a default run (the run must go on). Longer TTLs wait for a clock that can
        jump (``--until``)."""
        expiry = job_ttl.next_expiry(self.cluster)
        if expiry is not None and expiry <= EPOCH + dt.timedelta(seconds=DEFAULT_MAX_CYCLES):
            return True
        for key in self.started_cycle:
            pod = self.cluster.get("Pod", key)
            if pod is None or (pod.get("status") or {}).get("phase") != "Running":
                continue
            run_cycles = ((pod.get("metadata") or {}).get("annotations") or {}).get(
                SIM_RUN_CYCLES_ANNOTATION
            )
            if run_cycles is not None:
                return True
        return False

    # ------------------------------------------------------------------ controllers

    def _run_controllers(self) -> None:
        self._handle_commands()
        due = [entry for entry in self.delayed if entry[0] <= self.time]
        self.delayed = [entry for entry in self.delayed if entry[0] > self.time]
        for _when, job_key, request in due:
            self._request(job_key, request)
        self.workloads.sync()  # Deployment -> ReplicaSet -> pods in one go
        for _ in range(CONTROLLER_PASSES):
            self._run_jobflows()
            self._pod_group_controller()
            if not self.job_requests:
                break
            requests, self.job_requests = self.job_requests, {}
            for job_key in sorted(requests):
                self._sync_requests(job_key, requests[job_key])
        for job_key in job_ttl.expired_jobs(self.cluster, self.now()):
            job_ttl.delete_job_and_dependents(self.cluster, job_key)

    def _run_jobflows(self) -> None:
        # Jobs made from templates are defaulted as the input's jobs are (mutate_job).
        for job_key in jobflows.run_jobflows(self.cluster, self.now(), self.job_scheduler_name):
            self._request(job_key, JobRequest(event="OutOfSync"))

    def now(self) -> dt.datetime:
        """The simulated wall clock."""
        return EPOCH + dt.timedelta(seconds=self.time)

    def _sync_requests(self, job_key: str, requests: list[JobRequest]) -> None:
        """The job's requests in order. A request whose sync reads only the objects, after
        one such sync that wrote nothing, would write nothing again: its events are repeated
        instead of running it (see ``sync_depends_only_on_state``)."""
        quiet_events: list[tuple[str, str, str]] | None = None
        for request in requests:
            job = self.cluster.get("Job", job_key)
            if job is None:
                break
            state_only = sync_depends_only_on_state(job, request)
            if state_only and quiet_events is not None:
                self._record_job_events(job, quiet_events)
                continue
            changes = self._sync_job(job_key, job, request)
            quiet_events = list(changes.events) if state_only and only_events(changes) else None

    def _handle_commands(self) -> None:
        for key, command in list(self.cluster.items("Command")):
            request = job_request_for_command(command)
            target = command.get("target") or {}
            namespace = (command.get("metadata") or {}).get("namespace") or "default"
            if request is not None and target.get("kind") == "Job":
                self._request(f"{namespace}/{target.get('name')}", request)
            self.cluster.delete("Command", key)

    def _pod_group_controller(self) -> None:
        for key in sorted(self._ungrouped_pods):
            # Looked at once per version: a pod that needs no group now never will until it
            # changes (and a change puts it back in the set).
            self._ungrouped_pods.discard(key)
            pod = self.cluster.get("Pod", key)
            if pod is None:
                continue
            owner = controlling_owner(self.cluster, pod)
            result = pod_group_for_pod(pod, owner, self.scheduler_names)
            if result is None:
                continue
            pod_group, patch = result
            if self.cluster.get("PodGroup", object_key(pod_group)) is None:
                pod_group.setdefault("status", {}).setdefault("phase", "Pending")
                self.cluster.create(pod_group)
            pod = revised(pod, "metadata")
            pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), **patch}
            self.cluster.update(pod)

    def _pods_of_job(self, job_key: str) -> JobPods:
        return self.cluster.pod_index.of_job(job_key)

    def _pod_group_of_job(self, job: Mapping[str, Any]) -> dict[str, Any] | None:
        meta = job.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        for name in (f"{meta.get('name')}-{meta.get('uid')}", str(meta.get("name"))):
            found = self.cluster.get("PodGroup", f"{namespace}/{name}")
            if found is not None:
                return found
        return None

    def _sync_job(self, job_key: str, job: dict[str, Any], request: JobRequest) -> JobChanges:
        namespace = job_key.split("/", 1)[0]
        queue_name = str((job.get("spec") or {}).get("queue") or "default")
        plugin_objects = {
            (kind, str((obj.get("metadata") or {}).get("name"))): obj
            for kind in _JOB_PLUGIN_KINDS
            for obj in self.cluster.in_namespace(kind, namespace).values()
        }
        changes = sync_job(
            job,
            self._pod_group_of_job(job),
            self._pods_of_job(job_key),
            request,
            now=timestamp(self.time),
            queue=self.cluster.get("Queue", queue_name),
            priority_classes={
                name: int(pc.get("value") or 0) for name, pc in self.cluster.items("PriorityClass")
            },
            plugin_objects=plugin_objects,
        )
        self._apply_job_changes(job_key, job, changes)
        if changes.delayed_action is not None:
            delayed = changes.delayed_action
            self.delayed.append((self.time + delayed.delay_seconds, job_key, delayed.request))
        return changes

    def _apply_job_changes(self, job_key: str, job: dict[str, Any], changes: JobChanges) -> None:
        namespace = job_key.split("/", 1)[0]
        cluster = self.cluster
        if changes.delete_pod_group:
            existing = self._pod_group_of_job(job)
            if existing is not None:
                cluster.delete("PodGroup", object_key(existing))
                cluster.changes += 1
        if changes.pod_group is not None:
            pod_group = copy.deepcopy(changes.pod_group)
            existing = cluster.get("PodGroup", object_key(pod_group))
            if existing is not None:
                pod_group["status"] = existing.get("status") or {}
                pod_group["metadata"]["uid"] = existing["metadata"].get("uid")
                pod_group["metadata"]["creationTimestamp"] = existing["metadata"].get(
                    "creationTimestamp"
                )
                cluster.update(pod_group)
            else:
                pod_group.setdefault("status", {}).setdefault("phase", "Pending")
                cluster.create(pod_group)
                cluster.changes += 1
        for obj in changes.extra_objects:
            cluster.create(copy.deepcopy(obj))
        for kind, name in changes.delete_objects:
            cluster.delete(kind, f"{namespace}/{name}")
        # The controller marks pods it is about to delete, so their deletion is not taken
        # for an eviction (which could set off the job's policies again).
        for name, marks in changes.annotate_pods.items():
            marked = cluster.get("Pod", f"{namespace}/{name}")
            if marked is not None:
                marked = copy.deepcopy(marked)
                marked["metadata"].setdefault("annotations", {}).update(marks)
                cluster.update(marked)
        for template in changes.create_pods:
            # The controller built this pod for us alone: no copy.
            new_pod = template
            new_pod.setdefault("status", {}).setdefault("phase", "Pending")
            if cluster.get("Pod", object_key(new_pod)) is None:
                cluster.create(new_pod)
                cluster.changes += 1
        for name in changes.delete_pods:
            key = f"{namespace}/{name}"
            pod = cluster.get("Pod", key)
            if pod is None:
                continue
            if (pod.get("spec") or {}).get("nodeName") and (pod.get("status") or {}).get(
                "phase"
            ) not in ("Succeeded", "Failed"):
                if not pod["metadata"].get("deletionTimestamp"):
                    pod = copy.deepcopy(pod)
                    pod["metadata"]["deletionTimestamp"] = timestamp(self.time)
                    cluster.update(pod)
            else:
                cluster.delete("Pod", key)
            cluster.changes += 1
        if (changes.status is not None and job.get("status") != changes.status) or (
            changes.job_annotations
        ):
            updated = copy.deepcopy(job)
            if changes.status is not None:
                updated["status"] = copy.deepcopy(changes.status)
            updated["metadata"].setdefault("annotations", {}).update(changes.job_annotations)
            cluster.update(updated)
            cluster.changes += 1
        self._record_job_events(job, changes.events)

    def _record_job_events(
        self, job: Mapping[str, Any], events: list[tuple[str, str, str]]
    ) -> None:
        meta = job.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name"))
        for event_type, reason, message in events:
            self.cluster.record("Job", namespace, name, event_type, reason, message)

    # ------------------------------------------------------------------ the loop

    def run_cycle(self) -> bool:
        """One cycle; True if anything changed."""
        # As the live scheduler: no cyclic collection inside a cycle (it would scan every
        # object of the cluster); the collector catches up between cycles.
        with gc_paused():
            return self._run_cycle()

    def _run_cycle(self) -> bool:
        self.cycles += 1
        self.time = float(self.cycles)
        self._collect_node_usage()
        before = self.cluster.changes
        self._advance_pods()
        self._run_controllers()
        self._sync_quotas()
        ssn = open_session(self.cache.snapshot(), self.conf, self.plugins, self.cache, self.state)
        for name in self.conf.actions:
            new_action(name).execute(ssn)
        close_session(ssn)
        self.last_session = ssn
        self._run_controllers()
        return self.cluster.changes != before

    def _collect_node_usage(self) -> None:
        """What a metrics collection would put in the cache: the annotated node load."""
        # Stamped on the session clock (Unix seconds), which the usage plugin compares with.
        usage = node_usage.nodes_usage(self.cluster.items("Node"), self.state.clock())
        if usage:
            self.cache.set_node_usage(usage)

    def run(self, cycles: int | None = None) -> None:
        if cycles is not None:
            for _ in range(cycles):
                self.run_cycle()
            return
        for _ in range(DEFAULT_MAX_CYCLES):
            changed = self.run_cycle()
            if (
                not changed
                and not self.pending_timers()
                and not self.job_requests
                and not (self.delayed)
            ):
                break


def _as_int(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0
