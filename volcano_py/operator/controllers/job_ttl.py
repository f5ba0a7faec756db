"""The live garbage collector of finished Volcano Jobs (``pkg/controllers/garbagecollector``):
a job with ``ttlSecondsAfterFinished`` is deleted that long after it finished.

Every Job event re-arms the job's timer from the job as it is now; when the timer fires the
job is checked again against the store (it may have been updated or deleted meanwhile) and
deleted with foreground propagation, preconditioned on its uid, as upstream does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from volcano_py.controllers.job_ttl import expired, ttl_expiry
from volcano_py.operator.controllers.kinds import JOB, object_path
from volcano_py.operator.controllers.objects import wall_clock
from volcano_py.operator.controllers.ports import ApiRequests
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.runtime.apiclient import ApiError

log = logging.getLogger(__name__)


class JobTtlCollector:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        *,
        workers: int = 1,
        may_work: Callable[[], bool] = lambda: True,
        clock: Callable[[], datetime] = wall_clock,
    ) -> None:
        self.api = api
        self.store = store
        self.clock = clock
        self.queue: KeyedWorkQueue[None] = KeyedWorkQueue(
            "job-ttl", self._handle, workers=workers, may_work=may_work
        )
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.deleted = 0

    def on_job(self, event_type: str, key: str, job: Mapping[str, Any]) -> None:
        timer = self.timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        if event_type == "DELETED":
            return
        expiry = ttl_expiry(job)
        if expiry is None:
            return
        delay = max(0.0, (expiry - self.clock()).total_seconds())
        self.timers[key] = self.queue.add_after(delay, key, None)

    async def _handle(self, key: str, _requests: list[None]) -> None:
        self.timers.pop(key, None)
        job = self.store.get("Job", key)
        if job is None or not expired(job, self.clock()):
            return  # gone, or updated since: its last event armed a new timer if one is due
        uid = str((job.get("metadata") or {}).get("uid") or "")
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": "Foreground",
        }
        if uid:
            body["preconditions"] = {"uid": uid}
        try:
            await self.api.request("DELETE", object_path(JOB, job), body)
        except ApiError as error:
            if error.not_found or error.conflict:
                return  # deleted already, or a new job of the same name (uid precondition)
            if error.transient:
                raise RetryLater(str(error)) from None
            raise
        self.deleted += 1
        log.info("Job %s: deleted, its ttlSecondsAfterFinished has passed", key)
