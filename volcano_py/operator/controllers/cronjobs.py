"""The live CronJob controller (upstream ``cronjob_controller.go`` and its handlers): a
CronJob's events and those of the Jobs it controls queue its key; one ``sync_cronjob`` per
round, against the store and the wall clock; its writes go to the API server; the key comes
back at the next schedule time (``requeue_after``), or after a back-off when the sync failed.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from volcano_py.controllers.cronjob import (
    CRONJOB_KIND,
    CronJobChanges,
    cronjob_of_job,
    requeue_delay_on_update,
    sync_cronjob,
)
from volcano_py.controllers.raw import controller_of, metadata, text, uid
from volcano_py.operator.controllers.kinds import CRONJOB, JOB, namespaced_path
from volcano_py.operator.controllers.objects import split_key, wall_clock, write_status
from volcano_py.operator.controllers.ports import ApiRequests, EventRecorder
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.operator.informer import object_key
from volcano_py.runtime.apiclient import ApiError

log = logging.getLogger(__name__)

Obj = Mapping[str, Any]
SYNC = "sync"


class CronJobController:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        recorder: EventRecorder,
        *,
        workers: int = 2,
        may_work: Callable[[], bool] = lambda: True,
        clock: Callable[[], datetime] = wall_clock,
    ) -> None:
        self.api = api
        self.store = store
        self.recorder = recorder
        self.clock = clock
        # Upstream's rate limiter backs off to 1000 s; a CronJob fails the same way each
        # time (an invalid schedule), so a long ceiling spares the API server.
        self.queue: KeyedWorkQueue[str] = KeyedWorkQueue(
            "cronjob", self._handle, workers=workers, max_delay=300.0, may_work=may_work
        )
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.syncs = 0

    # ------------------------------------------------------------------ events -> keys

    def on_cronjob(self, event_type: str, old: Obj | None, new: Obj) -> None:
        key = object_key(new)
        if event_type == "DELETED":
            self._cancel_timer(key)
            return
        if old is None or event_type == "ADDED":
            self.queue.add(key, SYNC)
            return
        if text(metadata(old).get("resourceVersion")) == text(metadata(new).get("resourceVersion")):
            return
        delay = requeue_delay_on_update(old, new, self.clock())
        if delay is None:
            namespace, name = split_key(key)
            schedule = text((new.get("spec") or {}).get("schedule"))
            self.recorder.record(
                CRONJOB_KIND,
                namespace,
                name,
                "Warning",
                "UnParseableCronJobSchedule",
                f"unparseable schedule for cronjob: {schedule}",
            )
            return
        if delay.total_seconds() <= 0:
            self.queue.add(key, SYNC)
        else:
            self._requeue_after(key, delay.total_seconds())

    def on_job(self, event_type: str, old: Obj | None, new: Obj) -> None:
        """A job's add, update or delete queues the CronJob controlling it (both CronJobs
        when the controller reference changed)."""
        if (
            event_type == "MODIFIED"
            and old is not None
            and text(metadata(old).get("resourceVersion"))
            == text(metadata(new).get("resourceVersion"))
        ):
            return
        keys = {self._controlling(new)}
        if old is not None and controller_of(old) != controller_of(new):
            keys.add(self._controlling(old))
        for key in keys:
            if key is not None:
                self.queue.add(key, SYNC)

    def _controlling(self, job: Obj) -> str | None:
        key = cronjob_of_job(job)
        if key is None:
            return None
        cronjob = self.store.get(CRONJOB_KIND, key)
        owner = controller_of(job)
        if cronjob is None or owner is None or text(owner.get("uid")) != uid(cronjob):
            return None
        return key

    def _cancel_timer(self, key: str) -> None:
        timer = self.timers.pop(key, None)
        if timer is not None:
            timer.cancel()

    def _requeue_after(self, key: str, seconds: float) -> None:
        """``AddAfter``: one pending wake-up per CronJob, the latest asked for."""
        self._cancel_timer(key)
        loop = asyncio.get_running_loop()

        def wake() -> None:
            self.timers.pop(key, None)
            self.queue.add(key, SYNC)

        self.timers[key] = loop.call_later(max(seconds, 0.0), wake)

    # ------------------------------------------------------------------ one round of a key

    async def _handle(self, key: str, requests: list[str]) -> None:
        cronjob = self.store.get(CRONJOB_KIND, key)
        if cronjob is None:
            self._cancel_timer(key)
            return
        namespace, _name = split_key(key)
        jobs = [job for _key, job in self.store.in_namespace(JOB.kind, namespace)]

        def lookup(job_name: str) -> Obj | None:
            return self.store.get(JOB.kind, f"{namespace}/{job_name}")

        changes = sync_cronjob(cronjob, jobs, self.clock(), lookup)
        self.syncs += 1
        log.debug("CronJob %s -> %s", key, changes)
        await self.apply(key, cronjob, changes)

    async def apply(self, key: str, cronjob: Obj, changes: CronJobChanges) -> None:
        """Deletions, the new job, then (unless the sync failed, as upstream) the status;
        the events; the wake-up at the next schedule time, or a retry after a back-off."""
        namespace, name = split_key(key)
        for deletion in changes.delete_jobs:
            await self._delete_job(
                key, deletion.namespace or namespace, deletion.name, deletion.uid
            )
        if changes.create_job is not None:
            created = await self._create_job(key, changes.create_job, namespace)
            changes.record_created(created)
        status_changed = changes.status is not None and cronjob.get("status") != changes.status
        if changes.error is None and changes.status is not None and status_changed:
            # Applied to the store at once: the next round sees the job in status.active even
            # before the watch delivers it (no false OrphanedJob).
            await write_status(self.api, self.store, CRONJOB, key, cronjob, changes.status)
        for event_type, reason, message in changes.events:
            self.recorder.record(CRONJOB_KIND, namespace, name, event_type, reason, message)
        if changes.error is not None:
            log.info("CronJob %s: %s", key, changes.error)
            raise RetryLater(changes.error)
        if changes.requeue_after is not None:
            self._requeue_after(key, changes.requeue_after.total_seconds())

    async def _delete_job(self, key: str, namespace: str, job_name: str, job_uid: str) -> None:
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if job_uid:
            # Never a job re-created under the same name.
            options["preconditions"] = {"uid": job_uid}
        try:
            await self.api.request("DELETE", namespaced_path(JOB, namespace, job_name), options)
        except ApiError as error:
            if error.not_found or error.conflict:
                return
            _, name = split_key(key)
            self.recorder.record(
                CRONJOB_KIND,
                namespace,
                name,
                "Warning",
                "FailedDelete",
                f"Error deleting job {job_name!r}: {error.message}",
            )
            raise RetryLater(str(error)) from None

    async def _create_job(self, key: str, job: Obj, namespace: str) -> Obj:
        body = copy.deepcopy(dict(job))
        try:
            created: Obj = await self.api.request("POST", namespaced_path(JOB, namespace), body)
        except ApiError as error:
            if not error.conflict:
                # Refused (the job webhook, a terminating namespace) or unreachable: said on
                # the CronJob, retried after a back-off as upstream.
                _, name = split_key(key)
                self.recorder.record(
                    CRONJOB_KIND,
                    namespace,
                    name,
                    "Warning",
                    "FailedCreate",
                    f"Failed to create job: {error.message}",
                )
            # AlreadyExists: our watch has not delivered it yet; the next round finds it.
            raise RetryLater(str(error)) from None
        # Not put into the shared store here: the watch must deliver it as new, or the job
        # controller, which hears of jobs through the store's changes, would never sync it.
        # A round before the watch catches up meets AlreadyExists above and waits.
        return created
