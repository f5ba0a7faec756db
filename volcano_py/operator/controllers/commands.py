"""Commands (``bus.volcano.sh/v1alpha1``): each is deleted, then its action is handed to the
job or queue controller, so it runs at most once (as upstream: delete first, then act; a
Command another replica already deleted is not run again)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from volcano_py.controllers.job import job_request_for_command
from volcano_py.controllers.queue import queue_request_for_command
from volcano_py.operator.controllers.jobs import JobController
from volcano_py.operator.controllers.kinds import COMMAND, object_path
from volcano_py.operator.controllers.ports import ApiRequests
from volcano_py.operator.controllers.queues import QueueController
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.runtime.apiclient import ApiError

log = logging.getLogger(__name__)


class CommandConsumer:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        jobs: JobController,
        queues: QueueController,
        *,
        may_work: Callable[[], bool] = lambda: True,
    ) -> None:
        self.api = api
        self.store = store
        self.jobs = jobs
        self.queues = queues
        self.queue: KeyedWorkQueue[None] = KeyedWorkQueue(
            "command", self._handle, workers=1, may_work=may_work
        )
        self.consumed = 0

    def on_command(self, event_type: str, key: str) -> None:
        if event_type != "DELETED":
            self.queue.add(key, None)

    async def _handle(self, key: str, _requests: list[None]) -> None:
        command = self.store.get("Command", key)
        if command is None:
            return
        try:
            await self.api.request("DELETE", object_path(COMMAND, command))
        except ApiError as error:
            if error.not_found:
                return  # consumed already
            if error.transient:
                raise RetryLater(str(error)) from None
            raise
        self.consumed += 1
        namespace = key.partition("/")[0]
        target = command.get("target") or {}
        job_request = job_request_for_command(command)
        if job_request is not None:
            log.info(
                "command %s: %s on Job %s/%s",
                key,
                job_request.action,
                namespace,
                target.get("name"),
            )
            self.jobs.request(f"{namespace}/{target.get('name')}", job_request)
            return
        queue_request = queue_request_for_command(command)
        if queue_request is not None:
            log.info(
                "command %s: %s on Queue %s", key, queue_request.action, queue_request.queue_name
            )
            self.queues.request(queue_request)
            return
        log.warning(
            "command %s: target %s %s is neither a Volcano Job nor a Queue; dropped",
            key,
            target.get("kind"),
            target.get("name"),
        )
