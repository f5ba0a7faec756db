"""The Volcano Job controller as a pure function: one request in, the writes it asks for out
(``pkg/controllers/job/``).

``sync_job`` is ``processNextReq``: choose the action (``job_policy.apply_policies``), then run
the state machine (``job_state.plan``) with the procedures of ``job_actions``. The caller
(``operator/controllers`` live, the simulated cluster offline) feeds it the requests that
``job_request_for_*`` derive from watch events and applies the ``JobChanges``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.types import JOB_NAME_KEY, JOB_VERSION_KEY, TASK_SPEC_KEY
from volcano_py.controllers.job_actions import JobRun, Target, kill_pods, sync_pods
from volcano_py.controllers.job_plugins import ObjectKey, build_plugins
from volcano_py.controllers.job_pod_index import JobPodIndex, JobPods
from volcano_py.controllers.job_policy import (
    PolicyDecision,
    apply_policies,
    delayed_action_cancelled,
    delayed_action_superseded,
)
from volcano_py.controllers.job_request import (
    job_request_for_command,
    job_request_for_job_change,
    job_request_for_pod_change,
    job_request_for_pod_group_change,
)
from volcano_py.controllers.job_state import Procedure, plan
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import DelayedAction, JobChanges, JobRequest
from volcano_py.controllers.raw import Raw, annotations_of, name, namespace, status
from volcano_py.controllers.timefmt import format_go_duration
from volcano_py.controllers.vocabulary import (
    EVENT_NORMAL,
    EVENT_WARNING,
    Action,
    Event,
)

__all__ = [
    "DelayedAction",
    "JobChanges",
    "JobPodIndex",
    "JobPods",
    "JobRequest",
    "apply_policies",
    "delayed_action_cancelled",
    "delayed_action_superseded",
    "job_request_for_command",
    "job_request_for_job_change",
    "job_request_for_pod_change",
    "job_request_for_pod_group_change",
    "only_events",
    "sync_depends_only_on_state",
    "sync_job",
]


def _pods_by_task(job: Raw, pods: Sequence[Raw] | JobPods) -> Mapping[str, Mapping[str, Raw]]:
    """The job's pods as the controller cache files them: by task, then by name. Pods of
    another job, or without the task/version annotations, are not the job's. A ``JobPods``
    from the index is filed already."""
    if isinstance(pods, JobPods):
        if pods.job_name == name(job):
            return pods.versioned_by_task()
        pods = pods.pods()
    grouped: dict[str, dict[str, Raw]] = {}
    for pod in pods:
        pod_annotations = annotations_of(pod)
        if pod_annotations.get(JOB_NAME_KEY) != name(job):
            continue
        if namespace(pod) and namespace(job) and namespace(pod) != namespace(job):
            continue
        task = pod_annotations.get(TASK_SPEC_KEY)
        if task is None or JOB_VERSION_KEY not in pod_annotations:
            continue
        grouped.setdefault(task, {})[name(pod)] = pod
    return grouped


def _target(action: str, request: JobRequest) -> Target | None:
    if action == Action.RESTART_TASK:
        return Target("task", request.task_name)
    if action == Action.RESTART_POD:
        return Target("pod", request.task_name, request.pod_name)
    if action == Action.RESTART_PARTITION:
        return Target("partition", request.task_name, request.pod_name, request.partition_id)
    return None


def _announce(changes: JobChanges, request: JobRequest, decision: PolicyDecision) -> None:
    if request.event == Event.COMMAND_ISSUED and request.action:
        changes.events.append(
            (
                EVENT_NORMAL,
                "CommandIssued",
                f"Start to execute command {request.action}, and clean it up to make sure "
                "executed not more than once.",
            )
        )
    if decision.action != Action.SYNC_JOB and not decision.delay_nanos:
        changes.events.append(
            (EVENT_NORMAL, "ExecuteAction", f"Start to execute action {decision.action} ")
        )


def sync_depends_only_on_state(job: Mapping[str, Any], request: JobRequest) -> bool:
    """True when ``sync_job`` for this request reads nothing of the request: the policies
    map it to a plain ``SyncJob`` now (no delay, no command to announce, no target). Two such
    requests in a row against the same objects ask for the same writes, so a driver whose
    first sync wrote nothing (``only_events``) may skip the second and repeat its events:
    hundreds of pod events of one job then cost one sync, not one sync each (a sync reads
    every pod of the job, so one per event was quadratic in the replicas)."""
    if request.event == Event.COMMAND_ISSUED:
        return False
    decision = apply_policies(job, request)
    return decision.action == Action.SYNC_JOB and not decision.delay_nanos


def only_events(changes: JobChanges) -> bool:
    """The step asked for no write at all (events aside)."""
    return (
        changes.pod_group is None
        and not changes.delete_pod_group
        and not changes.create_pods
        and not changes.delete_pods
        and changes.status is None
        and not changes.extra_objects
        and not changes.annotate_pods
        and not changes.delete_objects
        and not changes.job_annotations
        and changes.delayed_action is None
    )


def sync_job(
    job: Mapping[str, Any],
    pod_group: Mapping[str, Any] | None,
    pods: Sequence[Mapping[str, Any]] | JobPods,
    request: JobRequest,
    *,
    now: str,
    queue: Mapping[str, Any] | None = None,
    priority_classes: Mapping[str, int] | None = None,
    plugin_objects: Mapping[ObjectKey, Mapping[str, Any]] | None = None,
) -> JobChanges:
    """One step of the job controller for one request.

    ``pod_group`` is the job's PodGroup (``<job>-<uid>``, or the legacy ``<job>``) or None;
    ``pods`` the pods the controller knows (others are ignored), or the job's ``JobPods``
    from a ``JobPodIndex`` (no scan); ``now`` an RFC 3339 time
    stamped on transitions. Optional: ``queue`` (the job's Queue: ``extendClusters`` marks the
    job forwarded), ``priority_classes`` (name -> value, orders tasks for ``minResources``),
    ``plugin_objects`` ((kind, name) -> object of the plugin objects that exist, so unchanged
    ones are not re-emitted).
    """
    changes = JobChanges()
    decision = apply_policies(job, request)
    _announce(changes, request, decision)
    if decision.delay_nanos:
        changes.events.append(
            (
                EVENT_NORMAL,
                "ExecuteAction",
                f"Execute action {decision.action} after "
                f"{format_go_duration(decision.delay_nanos)}",
            )
        )
        delayed = JobRequest(
            event=request.event,
            action=decision.action,
            task_name=request.task_name,
            pod_name=request.pod_name,
            exit_code=request.exit_code,
            job_version=request.job_version,
            job_uid=request.job_uid,
            pod_uid=request.pod_uid,
            partition_id=request.partition_id,
        )
        changes.delayed_action = DelayedAction(
            str(decision.action), decision.delay_seconds, delayed
        )
        return changes

    plugins, unknown = build_plugins(job)
    if unknown:
        # Upstream fails the whole step (and retries) when a plugin is missing.
        changes.events.append(
            (EVENT_WARNING, "PluginError", f"failed to get plugin {', '.join(unknown)}")
        )
        return changes

    original = JobStatus.from_dict(status(job))
    if not original.phase:
        # A bad plugin argument is only logged upstream; the job's first sync also says so
        # on the job, once, where its owner looks.
        for plugin in plugins:
            if plugin.argument_error:
                changes.events.append((EVENT_WARNING, "PluginError", plugin.argument_error))
    pods_by_task = _pods_by_task(job, pods)
    run = JobRun(
        job=job,
        pod_group=pod_group,
        pods_by_task=pods_by_task,
        pods_by_name={n: p for task in pods_by_task.values() for n, p in task.items()},
        now=now,
        status=original.clone(),
        plugins=plugins,
        queue=queue,
        priority_classes=dict(priority_classes or {}),
        plugin_objects=plugin_objects,
        changes=changes,
    )
    step = plan(job, original.phase, decision.action)
    if step.procedure is Procedure.SYNC:
        sync_pods(run, step.update)
    elif step.procedure is Procedure.KILL_TARGET:
        target = _target(decision.action, request)
        if target is not None:
            kill_pods(run, step.retain, target, step.update)
    else:
        kill_pods(run, step.retain, None, step.update)

    new_status = run.status.to_dict()
    if new_status != original.to_dict():
        changes.status = new_status
    return changes
