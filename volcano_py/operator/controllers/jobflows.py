"""The live JobFlow and JobTemplate controllers (upstream ``pkg/controllers/jobflow`` and
``pkg/controllers/jobtemplate``, their handlers and workers): events queue keys as upstream's
handlers do; one ``sync_jobflow`` / ``job_template_status`` per round, against the store;
the jobs go to the API server (POST, DELETE with a uid precondition), the status with a PUT;
a failed round (a missing JobTemplate, a refused job) is retried after a back-off."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from volcano_py.controllers.job_status import state_phase
from volcano_py.controllers.jobflow import (
    JOBFLOW_KIND,
    JOBTEMPLATE_KIND,
    SUCCEED,
    JobFlowChanges,
    is_controlled_by_a_jobflow,
    job_template_status,
    jobflow_of_job,
    sync_jobflow,
    template_of_job,
)
from volcano_py.controllers.raw import mapping, metadata, name, spec, text
from volcano_py.metrics import controllers as controller_metrics
from volcano_py.operator.controllers.kinds import JOB, JOBFLOW, JOBTEMPLATE, namespaced_path
from volcano_py.operator.controllers.objects import split_key, wall_clock, write_status
from volcano_py.operator.controllers.ports import ApiRequests, EventRecorder
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.operator.informer import object_key
from volcano_py.runtime.apiclient import ApiError

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]
SYNC = "sync"


def _same_version(old: Obj | None, new: Obj) -> bool:
    return old is not None and text(metadata(old).get("resourceVersion")) == text(
        metadata(new).get("resourceVersion")
    )


class JobFlowController:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        recorder: EventRecorder,
        *,
        workers: int = 1,
        may_work: Callable[[], bool] = lambda: True,
        clock: Callable[[], datetime] = wall_clock,
    ) -> None:
        self.api = api
        self.store = store
        self.recorder = recorder
        self.clock = clock
        self.queue: KeyedWorkQueue[str] = KeyedWorkQueue(
            "jobflow", self._handle, workers=workers, max_delay=300.0, may_work=may_work
        )
        self.syncs = 0

    # ------------------------------------------------------------------ events -> keys

    def on_jobflow(self, event_type: str, old: Obj | None, new: Obj) -> None:
        """``addJobFlow`` / ``updateJobFlow``: every new JobFlow; of the updates only those
        that leave it Succeed with jobRetainPolicy delete (its jobs are then deleted)."""
        if event_type == "DELETED":
            return
        if old is None or event_type == "ADDED":
            self.queue.add(object_key(new), SYNC)
            return
        if _same_version(old, new):
            return
        phase = state_phase(new)
        if phase == SUCCEED and spec(new).get("jobRetainPolicy") == "delete":
            self.queue.add(object_key(new), SYNC)

    def on_job(self, event_type: str, old: Obj | None, new: Obj) -> None:
        """``updateJob``: a job controlled by a JobFlow changed; its JobFlow is synced."""
        if event_type != "MODIFIED" or _same_version(old, new):
            return
        if not is_controlled_by_a_jobflow(new):
            return
        flow = jobflow_of_job(new)
        if flow:
            self.queue.add(f"{text(metadata(new).get('namespace')) or 'default'}/{flow}", SYNC)

    # ------------------------------------------------------------------ one round of a key

    async def _handle(self, key: str, requests: list[str]) -> None:
        jobflow = self.store.get(JOBFLOW_KIND, key)
        if jobflow is None:
            return  # deleted; its jobs go with it (owner references)
        namespace, _name = split_key(key)
        templates = {
            name(template): template
            for _key, template in self.store.in_namespace(JOBTEMPLATE_KIND, namespace)
        }
        jobs = [job for _key, job in self.store.in_namespace(JOB.kind, namespace)]
        changes = sync_jobflow(jobflow, templates, jobs, self.clock())
        self.syncs += 1
        log.debug("JobFlow %s -> %s", key, changes)
        await self.apply(key, jobflow, changes)

    async def apply(self, key: str, jobflow: Obj, changes: JobFlowChanges) -> None:
        namespace, flow_name = split_key(key)
        for deletion in changes.delete_jobs:
            await self._delete_job(deletion.namespace or namespace, deletion.name, deletion.uid)
        for job in changes.create_jobs:
            await self._create_job(key, job, namespace)
        for event_type, reason, message in changes.events:
            self.recorder.record(JOBFLOW_KIND, namespace, flow_name, event_type, reason, message)
        if changes.error is not None:
            log.info("JobFlow %s: %s", key, changes.error)
            raise RetryLater(changes.error)
        if changes.status is not None and changes.status != jobflow.get("status"):
            await write_status(self.api, self.store, JOBFLOW, key, jobflow, changes.status)
            phase = text(mapping(changes.status.get("state")).get("phase"))
            if phase != state_phase(jobflow):
                # ``UpdateJobFlowSucceed``/``Failed``: counted on reaching the phase.
                controller_metrics.jobflow_finished(namespace, phase)
            # Upstream's updateJobFlow hears this write and syncs again to delete the jobs;
            # the store already holds our write, so its watch event is not news here.
            if phase == SUCCEED and spec(jobflow).get("jobRetainPolicy") == "delete":
                self.queue.add(key, SYNC)

    async def _delete_job(self, namespace: str, job_name: str, job_uid: str) -> None:
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if job_uid:
            options["preconditions"] = {"uid": job_uid}  # never a job re-created since
        try:
            await self.api.request("DELETE", namespaced_path(JOB, namespace, job_name), options)
        except ApiError as error:
            if error.not_found or error.conflict:
                return
            raise RetryLater(str(error)) from None

    async def _create_job(self, key: str, job: Obj, namespace: str) -> None:
        # The created job is not put into the store here: the watch delivers it, and only
        # then does the Job controller hear of it (an object already held at the same
        # resourceVersion is no news to it). A sync before that POSTs again and gets 409.
        try:
            await self.api.request(
                "POST", namespaced_path(JOB, namespace), copy.deepcopy(dict(job))
            )
        except ApiError as error:
            if error.conflict:
                return  # AlreadyExists: upstream carries on; the watch delivers it
            _, flow_name = split_key(key)
            self.recorder.record(
                JOBFLOW_KIND, namespace, flow_name, "Warning", "FailedCreate",
                f"Failed to create job {text(metadata(job).get('name'))}: {error.message}",
            )  # fmt: skip
            raise RetryLater(str(error)) from None


class JobTemplateController:
    """``jobtemplatecontroller``: a template's status lists the jobs made from it."""

    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        *,
        workers: int = 1,
        may_work: Callable[[], bool] = lambda: True,
    ) -> None:
        self.api = api
        self.store = store
        self.queue: KeyedWorkQueue[str] = KeyedWorkQueue(
            "jobtemplate", self._handle, workers=workers, max_delay=300.0, may_work=may_work
        )

    def on_jobtemplate(self, event_type: str, old: Obj | None, new: Obj) -> None:
        """``addJobTemplate``: only a new template is synced."""
        if event_type == "ADDED" or (old is None and event_type != "DELETED"):
            self.queue.add(object_key(new), SYNC)

    def on_job(self, event_type: str, old: Obj | None, new: Obj) -> None:
        """``addJob``: a new job labelled as made from a template syncs that template."""
        if event_type != "ADDED" and not (old is None and event_type != "DELETED"):
            return
        key = template_of_job(new)
        if key is not None:
            self.queue.add(key, SYNC)

    async def _handle(self, key: str, requests: list[str]) -> None:
        template = self.store.get(JOBTEMPLATE_KIND, key)
        if template is None:
            return
        namespace, _name = split_key(key)
        jobs = [job for _key, job in self.store.in_namespace(JOB.kind, namespace)]
        new_status = job_template_status(template, jobs)
        if new_status is not None and new_status != template.get("status"):
            await write_status(self.api, self.store, JOBTEMPLATE, key, template, new_status)
