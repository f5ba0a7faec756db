"""The two procedures the job state machine drives (``job_controller_actions.go``):
``kill_pods`` (a whole job or one target) and ``sync_pods`` (create the PodGroup, then the pods
once the scheduler admitted the group, and count them into the status).

They work on a ``JobRun``: the inputs of one step and the changes and status it builds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.controllers.job_plugins import (
    JobPlugin,
    ObjectKey,
    PluginContext,
    PluginError,
    make_pod_name,
)
from volcano_py.controllers.job_podgroup import (
    build_pod_group,
    tasks_of,
    updated_pod_group,
)
from volcano_py.controllers.job_pods import build_job_pod
from volcano_py.controllers.job_state import RETAIN_SOFT, UpdateStatus
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import JobChanges
from volcano_py.controllers.job_volumes import ensure_claims
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    integer,
    is_deleting,
    items,
    labels_of,
    mapping,
    metadata,
    name,
    namespace,
    optional_int,
    pod_phase,
    spec,
    status,
    text,
)
from volcano_py.controllers.timefmt import format_go_duration, nanos_between, parse_timestamp
from volcano_py.controllers.vocabulary import (
    EVENT_WARNING,
    JOB_FORWARDING_KEY,
    OUT_OF_SYNC_KEY,
    PARTITION_ID_KEY,
    POD_PENDING,
    POD_RUNNING,
    POD_SUCCEEDED,
    JobPhase,
    PodGroupPhase,
)

_NOT_ADMITTED: Final = frozenset({"", PodGroupPhase.PENDING})


@dataclass(frozen=True, slots=True)
class Target:
    """What a targeted restart kills: a task, one pod, or one partition of a task."""

    kind: str  # "task" | "pod" | "partition"
    task_name: str
    pod_name: str = ""
    partition: str = ""


@dataclass(slots=True)
class JobRun:
    job: Raw
    pod_group: Raw | None
    # Read-only: possibly the controller cache's own dicts (``JobPods``).
    pods_by_task: Mapping[str, Mapping[str, Raw]]
    pods_by_name: dict[str, Raw]
    now: str
    status: JobStatus
    plugins: list[JobPlugin]
    queue: Raw | None = None
    priority_classes: Mapping[str, int] = field(default_factory=dict)
    plugin_objects: Mapping[ObjectKey, Raw] | None = None
    changes: JobChanges = field(default_factory=JobChanges)

    def plugin_context(self, job_status: JobStatus) -> PluginContext:
        return PluginContext(self.job, job_status, self.changes, self.plugin_objects)


# ---------------------------------------------------------------------------- kill


def _target_pods(run: JobRun, target: Target) -> dict[str, Raw] | None:
    """The pods a targeted kill deletes; None when the target does not exist (nothing to do)."""
    task_pods = run.pods_by_task.get(target.task_name, {})
    if target.kind == "task":
        return dict(task_pods)
    if target.kind == "pod":
        pod = task_pods.get(target.pod_name)
        return {target.pod_name: pod} if pod is not None else {}
    task = next((t for t in tasks_of(run.job) if t.get("name") == target.task_name), None)
    if task is None or not isinstance(task.get("partitionPolicy"), Mapping):
        return None
    in_partition = {
        pod_name: pod
        for pod_name, pod in task_pods.items()
        if labels_of(pod).get(PARTITION_ID_KEY) == target.partition
    }
    return in_partition or None


def kill_pods(
    run: JobRun,
    retain: frozenset[str],
    target: Target | None,
    update: UpdateStatus | None,
) -> None:
    """``killPods``: mark and delete the pods (all but the retained phases of a whole job, or
    the target's), recount, apply ``update``, let plugins clean up, and drop the PodGroup of a
    whole-job kill so the scheduler admits the restarted job from scratch."""
    if is_deleting(run.job):
        return
    job_spec = spec(run.job)
    terminating = 0
    to_kill: dict[str, Raw] = {}
    if target is not None:
        found = _target_pods(run, target)
        if found is None:
            return
        to_kill = found
    else:
        # Only a whole-job kill starts a new version: events of the old pods become stale.
        run.status.version += 1
        last_retry = run.status.retry_count >= integer(job_spec.get("maxRetry")) - 1
        # On the last retry, keep finished pods whatever was asked, for post-mortems.
        keep = RETAIN_SOFT if last_retry else retain
        for task_pods in run.pods_by_task.values():
            for pod_name, pod in task_pods.items():
                if is_deleting(pod):
                    terminating += 1
                    continue
                if pod_phase(pod) not in keep:
                    to_kill[pod_name] = pod

    for pod_name in sorted(to_kill):
        run.changes.annotate_pods[pod_name] = {OUT_OF_SYNC_KEY: "true"}
        if not is_deleting(to_kill[pod_name]):
            run.changes.delete_pods.append(pod_name)
        terminating += 1

    killed = run.status.clone()
    # Retained pods are not counted: only what is going away.
    killed.reset_counts()
    killed.terminating = terminating
    if update is not None and update(killed):
        killed.record_transition(run.now)
    created = text(metadata(run.job).get("creationTimestamp"))
    killed.running_duration = format_go_duration(
        nanos_between(created, killed.last_transition_time)
    )
    context = run.plugin_context(killed)
    for plugin in run.plugins:
        plugin.on_job_delete(context)
    run.status = killed
    if target is None and run.pod_group is not None:
        run.changes.delete_pod_group = True


# ---------------------------------------------------------------------------- sync


def _forwarding(run: JobRun) -> bool:
    clusters = spec(run.queue).get("extendClusters") if run.queue is not None else None
    return bool(items(clusters))


def _later(condition: Raw, than: Raw) -> bool:
    when = parse_timestamp(text(condition.get("lastTransitionTime")))
    other = parse_timestamp(text(than.get("lastTransitionTime")))
    if when is None or other is None:
        return when is not None and other is None
    return when > other


def _record_pod_group_event(run: JobRun, pod_group: Raw) -> None:
    """Warn on the job while its group's latest true condition is not ``Scheduled``."""
    latest: Raw | None = None
    for raw_condition in items(status(pod_group).get("conditions")):
        condition = mapping(raw_condition)
        if condition.get("status") != "True":
            continue
        if latest is None or _later(condition, latest):
            latest = condition
    if latest is not None and latest.get("type") != "Scheduled":
        run.changes.events.append(
            (
                EVENT_WARNING,
                "PodGroupPending",
                f"PodGroup {namespace(run.job)}:{name(run.job)} "
                f"{text(latest.get('type')).lower()}, reason: {text(latest.get('message'))}",
            )
        )


def _create_or_update_pod_group(run: JobRun) -> None:
    if run.pod_group is None:
        run.changes.pod_group = build_pod_group(run.job, run.priority_classes)
        return
    updated = updated_pod_group(run.pod_group, run.job, run.priority_classes)
    if updated is not None:
        run.changes.pod_group = updated


def _initiate(run: JobRun) -> None:
    """First sync of a job, and every sync while it is Pending: status, plugins, claims."""
    job_status = run.status
    if not job_status.phase:
        job_status.phase = JobPhase.PENDING
        job_status.min_available = integer(spec(run.job).get("minAvailable"))
        job_status.record_transition(run.now)
    context = run.plugin_context(job_status)
    for plugin in run.plugins:
        plugin.on_job_add(context)
    run.changes.extra_objects.extend(ensure_claims(run.job, job_status))


def _pod_ready(pod: Raw) -> bool:
    if pod_phase(pod) == POD_SUCCEEDED:
        return True
    if pod_phase(pod) != POD_RUNNING:
        return False
    return all(mapping(s).get("ready") is True for s in items(status(pod).get("containerStatuses")))


def _dependency_ready(run: JobRun, task_name: str) -> bool:
    """``isDependsOnPodsReady``: enough of the task's pods run ready or succeeded."""
    task = next((t for t in tasks_of(run.job) if t.get("name") == task_name), None)
    if task is None:
        return False
    ready = 0
    for index in range(integer(task.get("replicas"))):
        pod = run.pods_by_name.get(make_pod_name(name(run.job), task_name, index))
        if pod is not None and _pod_ready(pod):
            ready += 1
    needed = optional_int(task.get("minAvailable"))
    return needed is None or ready >= needed


def dependencies_met(run: JobRun, task: Raw) -> bool:
    """``waitDependsOnTaskMeetCondition``: all named tasks ready, or any one with
    ``iteration: any`` over several."""
    depends_on = task.get("dependsOn")
    if not isinstance(depends_on, Mapping):
        return True
    names = [text(n) for n in items(depends_on.get("name"))]
    if len(names) > 1 and depends_on.get("iteration") == "any":
        return any(_dependency_ready(run, n) for n in names)
    return all(_dependency_ready(run, n) for n in names)


def sync_pods(run: JobRun, update: UpdateStatus | None) -> None:
    """``syncJob``: keep the PodGroup in step with the job; once the scheduler admitted the
    group (phase beyond Pending), create the missing pods, delete out-of-sync and scaled-away
    ones, count everything into the status and apply ``update``."""
    job = run.job
    if is_deleting(job):
        return
    forwarding = _forwarding(run)
    if forwarding and annotations_of(job).get(JOB_FORWARDING_KEY) != "true":
        run.changes.job_annotations[JOB_FORWARDING_KEY] = "true"
    if run.status.phase in ("", JobPhase.PENDING):
        _initiate(run)
    else:
        context = run.plugin_context(run.status)
        for plugin in run.plugins:
            plugin.on_job_update(context)
    _create_or_update_pod_group(run)

    before = run.status.clone()
    pod_group = run.pod_group
    if pod_group is not None:
        _record_pod_group_event(run, pod_group)
    if pod_group is None or text(status(pod_group).get("phase")) in _NOT_ADMITTED:
        # Pods wait for the scheduler to admit the whole gang (enqueue), so no pod sits
        # half-placed holding resources.
        if update is not None:
            update(run.status)
        if run.status != before:
            run.status.record_transition(run.now)
        return

    counted = JobStatus(
        phase=before.phase,
        reason=before.reason,
        message=before.message,
        last_transition_time=before.last_transition_time,
        version=before.version,
        min_available=integer(spec(job).get("minAvailable")),
        controlled_resources=dict(before.controlled_resources),
        conditions=[dict(c) for c in before.conditions],
        retry_count=before.retry_count,
    )
    to_create: dict[str, list[dict[str, Any]]] = {}
    to_delete: list[str] = []
    context = run.plugin_context(before)
    for task in tasks_of(job):
        task_name = text(task.get("name"))
        left = dict(run.pods_by_task.get(task_name, {}))
        for index in range(integer(task.get("replicas"))):
            pod = left.pop(make_pod_name(name(job), task_name, index), None)
            if pod is None:
                new_pod = build_job_pod(job, task, index, before, forwarding=forwarding)
                try:
                    for plugin in run.plugins:
                        plugin.on_pod_create(new_pod, context)
                except PluginError as error:
                    # Upstream's syncJob returns the error: no pod is created in this step
                    # and the status is left as it was.
                    run.changes.events.append((EVENT_WARNING, "PluginError", str(error)))
                    return
                to_create.setdefault(task_name, []).append(new_pod)
                continue
            if is_deleting(pod):
                counted.terminating += 1
                continue
            if OUT_OF_SYNC_KEY in mapping(metadata(pod).get("annotations")):
                to_delete.append(name(pod))
            counted.count_pod(task_name, pod_phase(pod))
        # Pods past the replica count: the task was scaled down.
        to_delete.extend(sorted(left))

    for task in tasks_of(job):
        pods = to_create.get(text(task.get("name")))
        if not pods or not dependencies_met(run, task):
            continue
        for new_pod in pods:
            run.changes.create_pods.append(new_pod)
            counted.count_pod(text(task.get("name")), POD_PENDING)
    for pod_name in to_delete:
        run.changes.delete_pods.append(pod_name)
        counted.terminating += 1

    if update is not None:
        update(counted)
    if counted != before:
        counted.record_transition(run.now)
    run.status = counted
