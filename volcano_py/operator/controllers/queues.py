"""The live Queue controller: ``sync_queue`` per request (states Open / Closing / Closed from
Commands and spec, ``root`` as default parent, children closed and reopened with their
parent), its ``QueueChanges`` written to the API server."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from volcano_py.controllers.queue import (
    QueueRequest,
    queue_request_for_pod_group,
    queue_request_for_queue_change,
    sync_queue,
)
from volcano_py.metrics import controllers as controller_metrics
from volcano_py.operator.controllers.kinds import QUEUE
from volcano_py.operator.controllers.ports import ApiRequests, EventRecorder
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.runtime.apiclient import MERGE_PATCH, ApiError

log = logging.getLogger(__name__)


class QueueController:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        recorder: EventRecorder,
        *,
        workers: int = 2,
        may_work: Callable[[], bool] = lambda: True,
    ) -> None:
        self.api = api
        self.store = store
        self.recorder = recorder
        self.queue: KeyedWorkQueue[QueueRequest] = KeyedWorkQueue(
            "queue", self._handle, workers=workers, may_work=may_work
        )

    def request(self, request: QueueRequest) -> None:
        if request.queue_name:
            self.queue.add(request.queue_name, request)

    def on_queue(
        self, event_type: str, old: Mapping[str, Any] | None, new: Mapping[str, Any]
    ) -> None:
        if event_type == "DELETED":
            # ``deleteQueue``: the queue's PodGroup counts go with it.
            name = str((new.get("metadata") or {}).get("name"))
            controller_metrics.forget_queue(name)
            return
        request = queue_request_for_queue_change(old, new)
        if request is None and not (new.get("status") or {}).get("state"):
            # A queue nobody has given a state yet (created by the scheduler or kubectl).
            request = QueueRequest(queue_name=str((new.get("metadata") or {}).get("name")))
        if request is not None:
            self.request(request)

    def on_pod_group(self, pod_group: Mapping[str, Any]) -> None:
        request = queue_request_for_pod_group(pod_group)
        if not request.queue_name:
            request.queue_name = "default"
        self.request(request)

    async def _handle(self, name: str, requests: list[QueueRequest]) -> None:
        for index, request in enumerate(requests):
            try:
                await self._sync(name, request)
            except ApiError as error:
                if error.conflict or error.transient:
                    raise RetryLater(str(error), list(requests[index:])) from None
                if not error.not_found:
                    raise

    async def _sync(self, name: str, request: QueueRequest) -> None:
        queue = self.store.get("Queue", name)
        if queue is None:
            return
        queues = {queue_name: q for queue_name, q in self.store.items("Queue")}
        changes = sync_queue(
            queue,
            request,
            queues=queues,
            pod_group_phases=self.store.pod_group_phases_of_queue(name),
        )
        controller_metrics.queue_pod_groups_counted(name, changes.pod_group_counts)
        path = f"{QUEUE.collection_path}/{name}"
        patch: dict[str, Any] = {}
        if changes.parent is not None:
            patch["spec"] = {"parent": changes.parent}
        if name in changes.annotations:
            patch["metadata"] = {"annotations": changes.annotations[name]}
        if patch:
            written = await self.api.request("PATCH", path, patch, content_type=MERGE_PATCH)
            self.store.apply("Queue", "MODIFIED", written, namespaced=False)
        for other, marks in changes.annotations.items():
            if other != name:
                await self.api.request(
                    "PATCH",
                    f"{QUEUE.collection_path}/{other}",
                    {"metadata": {"annotations": marks}},
                    content_type=MERGE_PATCH,
                )
        if changes.state is not None:
            written = await self.api.request(
                "PATCH",
                path + "/status",
                {"status": {"state": changes.state}},
                content_type=MERGE_PATCH,
            )
            self.store.apply("Queue", "MODIFIED", written, namespaced=False)
            log.info("queue %s: %s", name, changes.state)
        for event_type, reason, message in changes.events:
            self.recorder.record("Queue", "", name, event_type, reason, message)
        for follow_up in changes.requests:
            self.request(follow_up)
