"""The live job controller: watch events -> ``JobRequest``s (as ``Simulation._watch``), one
``sync_job`` per request, ``JobChanges`` -> API writes (as ``Simulation._apply_job_changes``).

Writes are idempotent: a pod or object that already exists counts as created, one already gone
as deleted. A write that loses a race (409 on the Job status or the PodGroup), meets a
transient API error or is forbidden (403) ends the round; the requests left are run again after
a back-off, against the store as the watches have refreshed it by then.

A deleted Job's pods and PodGroup are left to the garbage collector (their owner references),
as upstream does; only the pod creates of its last sync not yet sent are dropped.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.controllers import raw
from volcano_py.controllers.admission import mutate_job, validate_job
from volcano_py.controllers.job import (
    DelayedAction,
    JobChanges,
    JobRequest,
    apply_policies,
    delayed_action_cancelled,
    delayed_action_superseded,
    job_request_for_job_change,
    job_request_for_pod_change,
    job_request_for_pod_group_change,
    only_events,
    sync_depends_only_on_state,
    sync_job,
)
from volcano_py.controllers.ownership import job_of_owner, job_of_pod
from volcano_py.controllers.vocabulary import Event, JobPhase
from volcano_py.metrics import controllers as controller_metrics
from volcano_py.metrics import epoch_seconds
from volcano_py.operator.controllers.kinds import (
    JOB,
    PLUGIN_KINDS,
    POD,
    POD_GROUP,
    WRITABLE_KINDS,
    namespaced_path,
    object_path,
)
from volcano_py.operator.controllers.objects import split_key
from volcano_py.operator.controllers.ports import ApiRequests, EventRecorder
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.operator.writers import rfc3339
from volcano_py.runtime.apiclient import MERGE_PATCH, ApiError

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]


@dataclass
class _Pending:
    action: DelayedAction
    timer: asyncio.TimerHandle


def _cancelled_by(request: JobRequest, action: DelayedAction) -> bool:
    return delayed_action_cancelled(action, request)


def _queue_of(job: Obj) -> str:
    return str((job.get("spec") or {}).get("queue") or "")


def _phase_of(job: Obj) -> str:
    return str(((job.get("status") or {}).get("state") or {}).get("phase") or "")


# Pod creations of one sync in flight at once (the client's QPS limit paces them further).
POD_CREATES_IN_FLIGHT: Final = 64


def _retry_worthy(error: ApiError) -> bool:
    """Upstream requeues every failed sync. Here a conflict, a transient failure and a 403 are
    retried with back-off: an API server that has just restarted answers 403 until its RBAC
    caches are loaded, and a ResourceQuota's 403 lifts when pods go. Other refusals (an
    invalid pod template) are the user's to fix and are reported, not retried."""
    return error.conflict or error.transient or error.status == 403


class JobController:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        recorder: EventRecorder,
        *,
        scheduler_name: str = "volcano",
        workers: int = 4,
        may_work: Callable[[], bool] = lambda: True,
        clock: Callable[[], str] = rfc3339,
        on_status_written: Callable[[Obj | None, Obj], None] = lambda old, new: None,
    ) -> None:
        self.api = api
        self.store = store
        self.recorder = recorder
        self.scheduler_name = scheduler_name
        self.clock = clock
        # Told of every status this controller writes and applies to the store itself: the
        # watch event of that version is then no news to the store, so whoever else follows
        # Jobs (CronJob, JobFlow, TTL) hears of it here or never.
        self.on_status_written = on_status_written
        self.queue: KeyedWorkQueue[JobRequest] = KeyedWorkQueue(
            "job", self._handle, workers=workers, may_work=may_work
        )
        self.delayed: dict[str, list[_Pending]] = {}
        # Job key -> the resourceVersion last validated (problems are reported once).
        self.refused: dict[str, str] = {}
        self.syncs = 0

    # ------------------------------------------------------------------ events -> requests

    def request(self, job_key: str, request: JobRequest) -> None:
        self.queue.add(job_key, request)

    def on_job(self, event_type: str, old: Obj | None, new: Obj) -> None:
        key = f"{(new.get('metadata') or {}).get('namespace') or 'default'}/"
        key += str((new.get("metadata") or {}).get("name"))
        if event_type == "DELETED":
            # Its pods and PodGroup carry owner references: the garbage collector removes them
            # (upstream's deleteJob does no more); creates still waiting are not sent.
            for pending in self.delayed.pop(key, []):
                pending.timer.cancel()
            self.refused.pop(key, None)
            namespace, job_name = split_key(key)
            controller_metrics.forget_job(namespace, job_name, _queue_of(new))
            return
        request = job_request_for_job_change(old, new)
        if request is not None:
            self.request(key, request)

    def on_pod(self, event_type: str, old: Obj | None, new: Obj) -> None:
        job_key = job_of_pod(new)
        if job_key is None:
            return
        job = self.store.get("Job", job_key)
        if job is None:
            return
        current = None if event_type == "DELETED" else new
        request = job_request_for_pod_change(
            job, old, current, pods=self.store.pods_of_job(job_key)
        )
        if request is not None:
            self.request(job_key, request)

    def on_pod_group(self, event_type: str, old: Obj | None, new: Obj) -> None:
        job_key = job_of_owner(new)
        if job_key is None or self.store.get("Job", job_key) is None:
            return
        if event_type == "DELETED":
            # Recreated on the next sync, as the simulator does.
            self.request(job_key, JobRequest(event=Event.OUT_OF_SYNC))
            return
        request = job_request_for_pod_group_change(old, new)
        if request is not None:
            self.request(job_key, request)

    # ------------------------------------------------------------------ one round of a key

    async def _handle(self, job_key: str, requests: list[JobRequest]) -> None:
        # Events of the last sync that wrote nothing, while the next ones may reuse it.
        quiet: list[tuple[str, str, str]] | None = None
        for index, request in enumerate(requests):
            job = self.store.get("Job", job_key)
            if job is None:
                return
            self._cancel_delayed(job_key, functools.partial(_cancelled_by, request))
            try:
                quiet = await self._sync(job_key, job, request, quiet)
            except RetryLater as retry:
                raise RetryLater(str(retry), list(requests[index:])) from None
            except ApiError as error:
                if _retry_worthy(error):
                    raise RetryLater(str(error), list(requests[index:])) from None
                raise

    def _cancel_delayed(self, job_key: str, drop: Callable[[DelayedAction], bool]) -> None:
        """Cancel the job's delayed actions ``drop`` picks (their timers stop); keep the rest."""
        kept: list[_Pending] = []
        for pending in self.delayed.get(job_key, []):
            if drop(pending.action):
                pending.timer.cancel()
            else:
                kept.append(pending)
        if kept:
            self.delayed[job_key] = kept
        else:
            self.delayed.pop(job_key, None)

    def _admitted(self, job_key: str, job: Obj) -> dict[str, Any] | None:
        """The Job with the admission webhook's defaults, or None when Volcano's admission
        would have refused it (checked until the job first has a phase, as admission checks
        on create; reported once per version, then skipped)."""
        mutated = mutate_job(job, self.scheduler_name)
        if ((job.get("status") or {}).get("state") or {}).get("phase"):
            return mutated
        queues = {name: queue for name, queue in self.store.items("Queue")}
        # The queue is the scheduler's business once the job runs; a missing or closed queue
        # is reported but does not stop the controller (no webhook refused the job).
        problems = validate_job(mutated, queues)
        queue_problems = [p for p in problems if p.startswith("spec.queue")]
        problems = [p for p in problems if not p.startswith("spec.queue")]
        version = str((job.get("metadata") or {}).get("resourceVersion", ""))
        if not problems:
            if queue_problems and self.refused.get(job_key) != version:
                log.warning("Job %s: %s", job_key, "; ".join(queue_problems))
            # Remembered either way: the same version is reported once.
            self.refused[job_key] = version
            return mutated
        if self.refused.get(job_key) != version:
            self.refused[job_key] = version
            message = "; ".join(problems)
            log.error("Job %s refused: %s", job_key, message)
            namespace, name = split_key(job_key)
            self.recorder.record("Job", namespace, name, "Warning", "InvalidJob", message)
        return None

    async def _sync(
        self,
        job_key: str,
        job: Obj,
        request: JobRequest,
        quiet: list[tuple[str, str, str]] | None = None,
    ) -> list[tuple[str, str, str]] | None:
        """Run one request; the events of the sync when it wrote nothing and read only the
        objects, else None. With ``quiet`` (such a sync just ran and nothing was written
        since, as nothing awaited) a request that reads only the objects would ask for the
        same nothing: its events are recorded again without a sync, so thousands of pod
        events of one job cost one sync (each reads every pod of the job)."""
        mutated = self._admitted(job_key, job)
        if mutated is None:
            return None
        namespace, _name = split_key(job_key)
        state_only = sync_depends_only_on_state(mutated, request)
        if state_only and quiet is not None:
            for event_type, reason, message in quiet:
                self.recorder.record("Job", namespace, _name, event_type, reason, message)
            action = str(apply_policies(mutated, request).action)
            self._cancel_delayed(
                job_key, lambda delayed: delayed_action_superseded(delayed, action, request)
            )
            return quiet
        queue_name = str((mutated.get("spec") or {}).get("queue") or "default")
        plugin_objects = {
            (resource.kind, str((obj.get("metadata") or {}).get("name"))): obj
            for resource in PLUGIN_KINDS
            for _key, obj in self.store.in_namespace(resource.kind, namespace)
        }
        decision = apply_policies(mutated, request)
        try:
            changes = sync_job(
                mutated,
                self.store.pod_group_of_job(job),
                self.store.pods_of_job(job_key),
                request,
                now=self.clock(),
                queue=self.store.get("Queue", queue_name),
                priority_classes={
                    name: int(pc.get("value") or 0)
                    for name, pc in self.store.items("PriorityClass")
                },
                plugin_objects=plugin_objects,
            )
        except (ValueError, KeyError, TypeError) as error:
            # A field the state machine cannot read (a bad quantity, say): named, then skipped.
            log.error("Job %s: cannot sync (%s: %s); skipped", job_key, type(error).__name__, error)
            self.recorder.record(
                "Job", namespace, _name, "Warning", "SyncFailed", f"cannot sync: {error}"
            )
            return None
        self.syncs += 1
        log.debug("Job %s: %s -> %s", job_key, request, changes)
        await self.apply(job_key, job, changes)
        if changes.delayed_action is not None:
            self._schedule(job_key, changes.delayed_action)
        else:
            action = str(decision.action)
            self._cancel_delayed(
                job_key, lambda delayed: delayed_action_superseded(delayed, action, request)
            )
        return list(changes.events) if state_only and only_events(changes) else None

    def _schedule(self, job_key: str, delayed: DelayedAction) -> None:
        loop = asyncio.get_running_loop()

        def fire() -> None:
            # Its own timer has run: cancelling it again is harmless.
            self._cancel_delayed(job_key, lambda action: action is delayed)
            self.request(job_key, delayed.request)

        timer = loop.call_later(delayed.delay_seconds, fire)
        self.delayed.setdefault(job_key, []).append(_Pending(delayed, timer))

    # ------------------------------------------------------------------ JobChanges -> API

    async def apply(self, job_key: str, job: Obj, changes: JobChanges) -> None:
        """In ``JobChanges``' order: PodGroup, plugin objects, marks, deletions, pods,
        object deletions, PodGroup deletion, job annotations, status; then Events."""
        namespace, name = split_key(job_key)
        if changes.pod_group is not None:
            await self._put_pod_group(changes.pod_group)
        for obj in changes.extra_objects:
            await self._create_or_replace(obj, namespace)
        for pod_name, marks in changes.annotate_pods.items():
            await self._ignore_missing(
                "PATCH",
                namespaced_path(POD, namespace, pod_name),
                {"metadata": {"annotations": marks}},
            )
        for pod_name in changes.delete_pods:
            await self._ignore_missing("DELETE", namespaced_path(POD, namespace, pod_name))
        await self._create_pods(job_key, changes.create_pods, namespace)
        for kind, object_name in changes.delete_objects:
            resource = WRITABLE_KINDS.get(kind)
            if resource is not None:
                await self._ignore_missing(
                    "DELETE", namespaced_path(resource, namespace, object_name)
                )
        if changes.delete_pod_group:
            existing = self.store.pod_group_of_job(job)
            if existing is not None:
                await self._ignore_missing("DELETE", object_path(POD_GROUP, existing))
        if changes.job_annotations:
            await self._ignore_missing(
                "PATCH",
                namespaced_path(JOB, namespace, name),
                {"metadata": {"annotations": changes.job_annotations}},
            )
        if changes.status is not None and job.get("status") != changes.status:
            await self._write_status(job_key, job, changes.status)
        for event_type, reason, message in changes.events:
            self.recorder.record("Job", namespace, name, event_type, reason, message)

    async def _ignore_missing(self, method: str, path: str, body: Any = None) -> Any:
        try:
            kwargs: dict[str, Any] = {"content_type": MERGE_PATCH} if method == "PATCH" else {}
            return await self.api.request(method, path, body, **kwargs)
        except ApiError as error:
            if error.not_found:
                return None
            raise

    async def _create_pods(self, job_key: str, templates: Sequence[Obj], namespace: str) -> None:
        """All of them at once, as upstream's syncJob creates a job's pods in parallel: one by
        one, a 500-pod job took minutes on a busy API server. The client's QPS limit still
        paces the requests. The first error (after every create has finished) is raised, so
        the sync is retried and creates what is still missing."""
        if not templates:
            return
        limit = asyncio.Semaphore(POD_CREATES_IN_FLIGHT)

        async def create(template: Obj) -> None:
            async with limit:
                await self._create_pod(job_key, template, namespace)

        results = await asyncio.gather(*(create(t) for t in templates), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _create_pod(self, job_key: str, template: Obj, namespace: str) -> None:
        pod = copy.deepcopy(dict(template))
        pod.pop("status", None)
        pod_name = str((pod.get("metadata") or {}).get("name"))
        if self.store.get("Pod", f"{namespace}/{pod_name}") is not None:
            return
        if not self._job_still_there(job_key, pod):
            # Deleted while its pods were being created: upstream's in-flight creates go on
            # and the garbage collector removes them; the ones not yet sent are not sent.
            return
        try:
            created = await self.api.request("POST", namespaced_path(POD, namespace), pod)
        except ApiError as error:
            if error.conflict:  # AlreadyExists: our watch has not seen it yet
                return
            forbidden = error.status == 403
            if _retry_worthy(error) and not forbidden:
                raise
            # Refused: reported; a 403 (a quota, RBAC not loaded yet) is retried as well.
            log.error("Job %s: cannot create pod %s: %s", job_key, pod_name, error)
            _, name = split_key(job_key)
            self.recorder.record(
                "Job", namespace, name, "Warning", "FailedCreatePodSandBox", error.message
            )
            if forbidden:
                raise
            return
        self._observe_pod_creation(job_key, created)

    def _job_still_there(self, job_key: str, pod: Obj) -> bool:
        """The Job the pod is made for is still in the store (the same one: its UID is the
        pod's controller reference, so a Job deleted and made again under the same name does
        not get the old one's pods)."""
        job = self.store.get("Job", job_key)
        if job is None:
            return False
        owner = raw.controller_of(pod)
        return owner is None or owner.get("uid") == raw.uid(job)

    def _observe_pod_creation(self, job_key: str, pod: Obj | None) -> None:
        """``ObserveJobToPodCreationLatency``: from the job's creation to the pod's."""
        job = self.store.get("Job", job_key)
        if job is None or not isinstance(pod, Mapping):
            return
        job_created = epoch_seconds(str((job.get("metadata") or {}).get("creationTimestamp", "")))
        pod_created = epoch_seconds(str((pod.get("metadata") or {}).get("creationTimestamp", "")))
        if job_created is not None and pod_created is not None:
            controller_metrics.JOB_TO_POD_CREATION_LATENCY.observe(
                (pod_created - job_created) * 1000.0
            )

    async def _put_pod_group(self, wanted: Mapping[str, Any]) -> None:
        pod_group = copy.deepcopy(dict(wanted))
        meta = pod_group.setdefault("metadata", {})
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name')}"
        existing = self.store.get("PodGroup", key)
        if existing is None:
            pod_group.setdefault("status", {}).setdefault("phase", "Pending")
            try:
                created = await self.api.request(
                    "POST", namespaced_path(POD_GROUP, str(meta.get("namespace"))), pod_group
                )
                self.store.apply("PodGroup", "ADDED", created)
                return
            except ApiError as error:
                if not error.conflict:
                    raise
            existing = await self.api.request("GET", object_path(POD_GROUP, pod_group))
            if existing is None or existing.get("spec") == pod_group.get("spec"):
                return
        # Replace the spec; status is the scheduler's (PodGroups have no status subresource).
        pod_group["status"] = copy.deepcopy(existing.get("status") or {})
        for field in ("uid", "creationTimestamp", "resourceVersion"):
            value = (existing.get("metadata") or {}).get(field)
            if value is not None:
                meta[field] = value
        replaced = await self.api.request("PUT", object_path(POD_GROUP, pod_group), pod_group)
        self.store.apply("PodGroup", "MODIFIED", replaced)

    async def _create_or_replace(self, obj: Mapping[str, Any], namespace: str) -> None:
        body = copy.deepcopy(dict(obj))
        meta = body.setdefault("metadata", {})
        meta.setdefault("namespace", namespace)
        resource = WRITABLE_KINDS.get(str(body.get("kind")))
        if resource is None:
            log.error(
                "cannot write a %s (%s): not a kind the controllers write",
                body.get("kind"),
                meta.get("name"),
            )
            return
        try:
            await self.api.request("POST", namespaced_path(resource, str(meta["namespace"])), body)
            return
        except ApiError as error:
            if not error.conflict:
                raise
        current = await self.api.request("GET", object_path(resource, body))
        meta["resourceVersion"] = (current.get("metadata") or {}).get("resourceVersion")
        await self.api.request("PUT", object_path(resource, body), body)

    async def _write_status(self, job_key: str, job: Obj, new_status: Mapping[str, Any]) -> None:
        updated = copy.deepcopy(dict(job))
        updated["status"] = copy.deepcopy(dict(new_status))
        path = namespaced_path(JOB, *split_key(job_key)) + "/status"
        try:
            written = await self.api.request("PUT", path, updated)
        except ApiError as error:
            if error.not_found:
                return
            raise
        # Our own write, applied now: the next request of this job sees it even before the
        # watch delivers it. What the watch would have queued (a phase change) is queued here.
        applied, old = self.store.apply("Job", "MODIFIED", written)
        if not applied:
            return
        phase = _phase_of(written)
        if phase != _phase_of(job) and phase in (JobPhase.COMPLETED, JobPhase.FAILED):
            # ``UpdateJobCompleted``/``UpdateJobFailed``: once per reaching the phase.
            namespace, name = split_key(job_key)
            controller_metrics.job_finished(namespace, name, _queue_of(job), phase)
        self.on_status_written(old, written)
        follow_up = job_request_for_job_change(old, written)
        if follow_up is not None:
            self.request(job_key, follow_up)
