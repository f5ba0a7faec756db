"""The simulation loop: between scheduling cycles the simulated cluster moves on (bound pods
start, evicted pods go, pods with a run time finish), the controllers react (a Volcano Job
gets its PodGroup and pods, a bare pod its PodGroup), then one real scheduling cycle runs."""

from __future__ import annotations

import copy
import datetime as dt
import heapq
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.node_lock import lock_expiry
from volcano_py.api.types import DEFAULT_SCHEDULER_NAME, GROUP_NAME_ANNOTATION
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
from volcano_py.controllers.job_status import is_job_finished
from volcano_py.controllers.ownership import job_of_owner, job_of_pod
from volcano_py.controllers.podgroup import pod_group_for_pod
from volcano_py.controllers.timefmt import parse_timestamp
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.scheduler.cycle import gc_paused
from volcano_py.scheduler.device_resources import snapshot_for
from volcano_py.scheduler.registry import new_action
from volcano_py.sim import batch_cronjobs, cronjobs, job_ttl, jobflows, node_usage
from volcano_py.sim.clock import SimClock, seconds_since_epoch
from volcano_py.sim.cluster import (
    BATCH_CRONJOB,
    EPOCH,
    InMemoryCluster,
    object_key,
    revised,
    timestamp,
)
from volcano_py.sim.collector import CycleCollector
from volcano_py.sim.forecast import Forecast
from volcano_py.sim.kubelet import SimKubelet
from volcano_py.sim.quota import QuotaStatusController
from volcano_py.sim.resource_claims import ResourceClaimController
from volcano_py.sim.runtimes import (
    DEADLINE_MESSAGE,
    DEADLINE_REASON,
    Ending,
    RunPlan,
    first_end,
    may_end,
    plan_run,
)
from volcano_py.sim.workloads import WorkloadControllers, controlling_owner

# Without --cycles or --until the run ends when nothing is left to happen; a cluster that never
# settles (a Deployment whose pods finish and are made again) is stopped after this many
# cycles run, with a warning.
DEFAULT_MAX_RUN_CYCLES: Final = 1000
# Plugins that read the clock inside a session (deadlines, windows, cool-downs, metrics ages):
# with one of them in the conf a cycle can change something at any time, so the clock never
# jumps (each cycle runs).
CLOCK_READING_PLUGINS: Final = frozenset({"sla", "tdm", "cdp", "rescheduling", "usage"})
# Controller passes per cycle: each pass handles what the previous one triggered.
CONTROLLER_PASSES: Final = 5
# The kubelet stand-in does not visit again, next cycle, a pod whose only change since was
# its own status write (False: it does, as every changed pod: the tests' reference).
_SKIP_OWN_WRITES = True
# The kubelet stand-in writes a status as a status write (``InMemoryCluster.update_status``):
# the watchers reread nothing of the metadata and spec (False: as any update, the tests'
# reference).
_STATUS_WRITES = True
# A pod event's job is the one the store's index filed the pod under (it files before it
# announces), not read off the pod a second time (False: read again, the tests' reference).
_JOB_FROM_STORE = True
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
    clock: SimClock = field(default_factory=SimClock)
    # --assume-runtime: how long a running pod without a run-time annotation runs (seconds).
    assume_runtime: float | None = None
    # Seconds since EPOCH (the simulator's time scale): the current cycle's time.
    time: float = field(default=0.0, init=False)
    # The current cycle's number (cycles jumped over count), and how many actually ran.
    cycles: int = field(default=0, init=False)
    cycles_run: int = field(default=0, init=False)
    # Set when a run without --cycles or --until was cut short (the warning to print).
    stopped_early: str | None = field(default=None, init=False)
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
    forecast: Forecast = field(default_factory=Forecast, init=False)
    # Pods changed since the kubelet stand-in last looked (it looks at nothing else, but at
    # the pods whose run ends now).
    _pods_changed: set[str] = field(default_factory=set, init=False)
    # When running pods end: (time, order, key); ``_pod_plans`` holds each pod's current one
    # (an entry that is not is stale and skipped).
    _pod_timers: list[tuple[float, int, str]] = field(default_factory=list, init=False)
    _pod_plans: dict[str, tuple[float, int, str, RunPlan]] = field(default_factory=dict, init=False)
    _timer_order: itertools.count[int] = field(default_factory=itertools.count, init=False)
    # CronJob key -> when it next wants a sync (its next schedule time).
    cron_due: dict[str, float] = field(default_factory=dict, init=False)
    claims: ResourceClaimController = field(init=False)
    # How the cyclic collector runs between cycles (None: as usual, catching up after each).
    collector: CycleCollector | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.time = self.clock.offset
        self.cluster = InMemoryCluster(watch=self._watch, clock=lambda: self.time)
        self.cluster.status_watch = self._watch_status
        self.cluster.identities.seed = self.seed
        self.forecast.now = self.forecast.previous = self.time
        self.kubelet = SimKubelet(seed=self.seed)
        self.workloads = WorkloadControllers(self.cluster, self.seed, lambda: self.time)
        self.claims = ResourceClaimController(self.cluster, self.seed)
        self.cache = SchedulerCache(
            scheduler_names=self.scheduler_names,
            binder=self.cluster,
            evictor=self.cluster,
            status_updater=self.cluster,
            recorder=self.cluster,
            clock=lambda: EPOCH.timestamp() + self.time,
        )
        # The session reads Unix time, as live: the same instants the simulated cluster stamps
        # on its objects (creation times, conditions), so sla deadlines and cdp cooldowns
        # compare like with like.
        self.state = SchedulingState(seed=self.seed, clock=lambda: EPOCH.timestamp() + self.time)

    # ------------------------------------------------------------------ loading

    def load(self, objects: list[dict[str, Any]], *, owned: bool = False) -> None:
        """Create the objects in the simulated cluster. ``owned``: the caller hands them
        over (no copy; the command line's freshly read dump is tens of thousands of pods)."""
        # Each node's pods charged on it at once (the same sums, see charges_batched).
        with self.cache.charges_batched():
            for obj in objects:
                obj = obj if owned else copy.deepcopy(obj)
                if obj.get("kind") == "Queue":
                    _synced_queue(obj)
                self.cluster.create(obj)
        self.cluster.ensure_default_queues()
        # Session uids from the seed and the loaded store's revision: a reloaded output (whose
        # revision is past every version it holds) never reuses the first run's.
        self.state.uid_salt = f"{self.seed}/{self.cluster.identities.revision}"
        self._sync_quotas()
        for key, job in self.cluster.items("Job"):
            if self._settled(key, job):
                self.job_requests.pop(key, None)  # its pods' arrival asks for nothing either
            else:
                self._request(key, JobRequest(event="OutOfSync"))
        # What runs from here on was not running at the start (the forecast's question).
        self.forecast.loading = False

    def _settled(self, key: str, job: Mapping[str, Any]) -> bool:
        """A finished job with nothing left to kill (every pod finished, its PodGroup gone):
        the controller's first sync would only bump its ``status.version`` (upstream's
        ``killJob`` of a finished job), which the watch of a running controller never asks
        for. Left alone, so simulating a ``--format yaml`` output again keeps it as it was."""
        if not is_job_finished(job) or self._pod_group_of_job(job) is not None:
            return False
        pods = self._pods_of_job(key).by_key.values()
        return all(
            (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") for pod in pods
        )

    # ------------------------------------------------------------------ watch side effects

    def _watch(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        self.cache.apply_event(kind, event_type, obj)
        if kind == "Pod":
            key = object_key(obj)
            old = self._pods_seen.get(key)
            new = None if event_type == "DELETED" else dict(obj)
            if new is None:
                self._pods_seen.pop(key, None)
                self._pods_changed.discard(key)
                self.started_cycle.pop(key, None)
                self._pod_plans.pop(key, None)
            else:
                self._pods_seen[key] = new
                self._pods_changed.add(key)
            self.forecast.on_pod(key, old, new)
            self.claims.on_pod(key, new)
            self._file_grouping(key, obj if new is not None else None)
            # The store filed the pod it announces under its job (not a deleted one).
            job_key = (
                self.cluster.pod_index.job_of(key)
                if _JOB_FROM_STORE and new is not None
                else job_of_pod(obj)
            )
            self._tell_job_of_pod_change(job_key, old, new)
        elif kind == "PodGroup":
            key = object_key(obj)
            self.forecast.on_pod_group(key, None if event_type == "DELETED" else obj)
            phase = (
                "" if event_type == "DELETED" else str((obj.get("status") or {}).get("phase", ""))
            )
            if self._pod_group_phases.get(key) != phase:
                self._pod_group_phases[key] = phase
                job_key = job_of_owner(obj)
                if job_key is not None:
                    event = "Unknown" if phase == "Unknown" else "OutOfSync"
                    self._request(job_key, JobRequest(event=event))

    def _watch_status(
        self, kind: str, key: str, old: Mapping[str, Any], obj: Mapping[str, Any]
    ) -> None:
        """``_watch(kind, "MODIFIED", obj)`` for a status write (``update_status``): ``obj``
        is ``old``, the version stored before, with another status, so the cache takes it as
        such (``apply_pod_status``) and the pod's job is the one the store filed it under."""
        if kind != "Pod":
            self._watch(kind, "MODIFIED", obj)
            return
        self.cache.apply_pod_status(old, obj)
        seen = self._pods_seen.get(key)
        new = self._pods_seen[key] = dict(obj)
        self._pods_changed.add(key)
        self.forecast.on_pod(key, seen, new)
        self.claims.on_pod(key, new)
        self._file_grouping(key, obj)
        self._tell_job_of_pod_change(self.cluster.pod_index.job_of(key), seen, new)

    def _file_grouping(self, key: str, pod: Mapping[str, Any] | None) -> None:
        """Keep ``_ungrouped_pods``: the pods (present, ``pod`` not None) without a group-name
        annotation."""
        if pod is not None and GROUP_NAME_ANNOTATION not in (
            (pod.get("metadata") or {}).get("annotations") or {}
        ):
            self._ungrouped_pods.add(key)
        else:
            self._ungrouped_pods.discard(key)

    def _tell_job_of_pod_change(
        self,
        job_key: str | None,
        old: Mapping[str, Any] | None,
        new: Mapping[str, Any] | None,
    ) -> None:
        """The job controller's request for a change of one of ``job_key``'s pods, if any."""
        if job_key is None:
            return
        job = self.cluster.get("Job", job_key)
        if job is None:
            return
        request = job_request_for_pod_change(job, old, new, pods=self._pods_of_job(job_key))
        if request is not None:
            self._request(job_key, request)

    def _sync_quotas(self) -> None:
        """Kubernetes' quota controller: ResourceQuota status follows the pods."""
        if not self.cluster.of_kind("ResourceQuota"):
            return  # nothing to write: spares a pass over every pod each cycle
        for quota in self.quota_status.sync(
            self.cluster.items("ResourceQuota"), self.cluster.items("Pod")
        ):
            self.cluster.update(quota)

    def _request(self, job_key: str, request: JobRequest) -> None:
        self.job_requests.setdefault(job_key, []).append(request)

    # ------------------------------------------------------------------ between cycles

    def _advance_pods(self) -> None:
        """What kubelets would do since the last cycle: start bound pods, remove terminated
        ones, end the runs that are due. Only changed pods and pods whose run ends now are
        looked at, in key order (the order of the watch events the controllers then see)."""
        due: dict[str, tuple[float, int, str, RunPlan]] = {}
        timers = self._pod_timers
        while timers and SimClock.is_due(timers[0][0], self.time):
            _when, order, key = heapq.heappop(timers)
            plan = self._pod_plans.get(key)
            if plan is not None and plan[1] == order:
                due[key] = plan
        visit = sorted(self._pods_changed.union(due))
        self._pods_changed.clear()
        for key in visit:
            pod = self.cluster.get("Pod", key)
            if pod is None:
                continue
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
                # A pod that starts now ends at the next cycle at the earliest.
                self._plan_run(key, earliest_cycle=self.cycles + 1)
            elif phase == "Running":
                if key not in self.started_cycle:
                    if not status.get("containerStatuses"):
                        self._set_phase(pod, "Running")  # given Running: its kubelet reports it
                    self.started_cycle[key] = self.cycles
                    plan = self._plan_run(key, earliest_cycle=self.cycles)
                    if plan is not None and SimClock.is_due(plan[0], self.time):
                        due[key] = plan
                ending = due.get(key)
                if ending is not None and self._pod_plans.get(key) is ending:
                    self._end_run(key, ending[3])

    def _plan_run(self, key: str, earliest_cycle: int) -> tuple[float, int, str, RunPlan] | None:
        """Schedule the end of a pod that started running: the earliest of its ends (a
        finish winning a tie), not before ``earliest_cycle``."""
        pod = self.cluster.get("Pod", key)
        if pod is None or not may_end(pod, self.assume_runtime):
            return None
        started_at = parse_timestamp(str((pod.get("status") or {}).get("startTime") or ""))
        started = seconds_since_epoch(started_at) if started_at is not None else self.time
        plans = plan_run(pod, self.started_cycle[key], started, self.assume_runtime)
        ending = first_end(plans, self.clock, earliest_cycle)
        if ending is None:
            return None
        when, chosen = ending
        entry = (when, next(self._timer_order), key, chosen)
        self._pod_plans[key] = entry
        heapq.heappush(self._pod_timers, (entry[0], entry[1], key))
        return entry

    def _end_run(self, key: str, plan: RunPlan) -> None:
        self._pod_plans.pop(key, None)
        pod = self.cluster.get("Pod", key)
        if pod is None:
            return
        if plan.ending is Ending.EVICT:
            self.cluster.evict_through_api(key)
        elif plan.ending is Ending.DEADLINE:
            self._set_phase(
                pod, "Failed", plan.exit_code, reason=DEADLINE_REASON, message=DEADLINE_MESSAGE
            )
        else:
            self._set_phase(pod, "Succeeded" if plan.exit_code == 0 else "Failed", plan.exit_code)

    def _set_phase(
        self,
        pod: dict[str, Any],
        phase: str,
        exit_code: int = 0,
        reason: str = "",
        message: str = "",
    ) -> None:
        pod = dict(pod)  # a new version; its status is made new below, the rest is shared
        cluster = self.cluster
        network = self.kubelet.network
        if not network.primed:
            network.prime(cluster.of_kind("Node").values(), cluster.of_kind("Pod").values())
        pod["status"] = self.kubelet.status(
            pod, phase, timestamp(self.time), exit_code, reason, message
        )
        cluster.changes += 1
        key = object_key(pod)
        changed = self._pods_changed
        marked = key in changed
        if _STATUS_WRITES:
            cluster.update_status(key, pod)
        else:
            cluster.update(pod)
        if _SKIP_OWN_WRITES and not marked and cluster.get("Pod", key) is pod:
            # The stand-in's own write leaves nothing for its next look (a pod it started
            # has its start cycle and its end timer, a finished one nothing to do): not a
            # change to visit again (60k pods the next cycle otherwise, at 5k nodes).
            changed.discard(key)

    def next_event(self, *, with_cron: bool) -> float | None:
        """When the next timed event is due (seconds since EPOCH): a pod's run ending, a
        finished job's TTL, a delayed job action and, ``with_cron``, a CronJob schedule."""
        timers = self._pod_timers
        while timers:
            _when, order, key = timers[0]
            plan = self._pod_plans.get(key)
            if plan is not None and plan[1] == order:
                break
            heapq.heappop(timers)  # stale: the pod ended otherwise or is gone
        candidates = [timers[0][0]] if timers else []
        expiry = job_ttl.next_expiry(self.cluster)
        if expiry is not None:
            candidates.append(seconds_since_epoch(expiry))
        candidates.extend(entry[0] for entry in self.delayed)
        unlock = self._next_node_unlock()
        if unlock is not None:
            candidates.append(unlock)
        if with_cron:
            candidates.extend(self.cron_due.values())
        return min(candidates, default=None)

    def _next_node_unlock(self) -> float | None:
        """When the next device node lock (deviceshare.NodeLockEnable) expires: a pod the
        lock held back may bind then. No device plugin runs here to remove it sooner."""
        found = []
        for node in self.cluster.of_kind("Node").values():
            annotations = (node.get("metadata") or {}).get("annotations")
            if not annotations:
                continue
            expiry = lock_expiry(annotations)
            if expiry is not None:
                # Free once strictly older than the expiry: the first cycle after it.
                at = expiry - EPOCH.timestamp() + 1e-3
                if at > self.time:
                    found.append(at)
        return min(found, default=None)

    # ------------------------------------------------------------------ controllers

    def _run_controllers(self) -> None:
        self._handle_commands()
        due = [entry for entry in self.delayed if entry[0] <= self.time]
        self.delayed = [entry for entry in self.delayed if entry[0] > self.time]
        for _when, job_key, request in due:
            self._request(job_key, request)
        self.workloads.sync()  # Deployment -> ReplicaSet -> pods in one go
        self.claims.sync()
        self._run_cronjobs()
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

    def _run_cronjobs(self) -> None:
        """Volcano's and Kubernetes' CronJob controllers; when each CronJob is next due."""
        due: dict[str, float] = {}
        if self.cluster.of_kind("CronJob"):
            created, due = cronjobs.run_cronjobs(self.cluster, self.now(), DEFAULT_SCHEDULER_NAME)
            for job_key in created:
                self._request(job_key, JobRequest(event="OutOfSync"))
        if self.cluster.of_kind(BATCH_CRONJOB):
            # The jobs made are the workload controllers' to expand, in the next round.
            batch_due = batch_cronjobs.run_batch_cronjobs(self.cluster, self.now())
            due.update({f"{BATCH_CRONJOB}:{key}": when for key, when in batch_due.items()})
        self.cron_due = due

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
        # object of the cluster); the collector catches up between cycles, or, with a
        # ``collector`` (the command line's), what the cycle left is frozen.
        with gc_paused():
            changed = self._run_cycle()
            if self.collector is not None:
                self.collector.after_cycle()
            return changed

    def _run_cycle(self) -> bool:
        self.forecast.previous = self.time
        self.cycles += 1
        self.cycles_run += 1
        self.time = self.clock.time_of_cycle(self.cycles)
        self.forecast.now = self.time
        self._collect_node_usage()
        before = self.cluster.changes
        self._advance_pods()
        self._run_controllers()
        self._sync_quotas()
        snapshot = snapshot_for(self.cache, self.conf)
        ssn = open_session(snapshot, self.conf, self.plugins, self.cache, self.state)
        for name in self.conf.actions:
            new_action(name).execute(ssn)
        close_session(ssn)
        if self.last_session is not None:
            self.last_session.release()  # the report reads only the last one
        self.last_session = ssn
        self._run_controllers()
        self.forecast.check(self.cluster.of_kind("PodGroup"), self.cluster.of_kind("Pod"))
        return self.cluster.changes != before

    def _collect_node_usage(self) -> None:
        """What a metrics collection would put in the cache: the annotated node load."""
        # Stamped on the session clock (Unix seconds), which the usage plugin compares with.
        usage = node_usage.nodes_usage(self.cluster.items("Node"), self.state.clock())
        if usage:
            self.cache.set_node_usage(usage)

    @property
    def may_jump(self) -> bool:
        """Whether the clock may jump over quiet cycles: not when a plugin reads the clock."""
        return not CLOCK_READING_PLUGINS.intersection(self.conf.plugin_names())

    def run(self, cycles: int | None = None, until: float | None = None) -> None:
        """``cycles``: exactly that many cycles. ``until`` (seconds after the start): every
        cycle up to start + until, inclusive, jumping over the quiet ones. Neither: until a
        cycle changes nothing and no timed event but a CronJob schedule is left."""
        if cycles is not None:
            for _ in range(cycles):
                self.run_cycle()
            return
        last = self.clock.last_cycle_within(until) if until is not None else None
        while last is None or self.cycles < last:
            if last is None and self.cycles_run >= DEFAULT_MAX_RUN_CYCLES:
                self.stopped_early = (
                    f"stopped after {self.cycles_run} cycles with the cluster still changing;"
                    " give --cycles or --until to run longer"
                )
                return
            changed = self.run_cycle()
            if changed or self.job_requests:
                continue
            upcoming = self.next_event(with_cron=last is not None)
            if upcoming is None:
                break
            target = max(self.clock.first_cycle_at_or_after(upcoming), self.cycles + 1)
            if last is not None and target > last:
                break
            if self.may_jump:
                # The cycles in between would change nothing: the next one run is the
                # event's (they still count).
                self.cycles = target - 1
        if last is not None and self.cycles < last:
            # The quiet cycles up to --until are stood for, not run.
            self.cycles = last
            self.time = self.clock.time_of_cycle(last)


def _synced_queue(queue: dict[str, Any]) -> None:
    """The queue controller's first sync, which comes before the scheduler's first session:
    a Queue without a state is Open (the scheduler takes one without a state as not Open)."""
    status = queue.get("status")
    if not isinstance(status, dict):
        status = queue["status"] = {}
    if not status.get("state"):
        status["state"] = "Open"
