"""The PodGroup controller: a PodGroup for every pod of ours that has none (plain pods and
workloads), then the group annotation on the pod (as ``Simulation._pod_group_controller``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping
from typing import Any

from volcano_py.api.types import GROUP_NAME_ANNOTATION
from volcano_py.controllers.podgroup import pod_group_for_pod
from volcano_py.operator.controllers.kinds import POD, POD_GROUP, namespaced_path
from volcano_py.operator.controllers.ports import ApiRequests
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import KeyedWorkQueue, RetryLater
from volcano_py.runtime.apiclient import MERGE_PATCH, ApiError

log = logging.getLogger(__name__)


class PodGroupController:
    def __init__(
        self,
        api: ApiRequests,
        store: ObjectStore,
        scheduler_names: Collection[str],
        *,
        workers: int = 2,
        may_work: Callable[[], bool] = lambda: True,
    ) -> None:
        self.api = api
        self.store = store
        self.scheduler_names = frozenset(scheduler_names)
        self.queue: KeyedWorkQueue[None] = KeyedWorkQueue(
            "podgroup", self._handle, workers=workers, may_work=may_work
        )
        self.created = 0

    def on_pod(self, event_type: str, pod: Mapping[str, Any]) -> None:
        if event_type == "DELETED":
            return
        annotations = (pod.get("metadata") or {}).get("annotations") or {}
        if GROUP_NAME_ANNOTATION in annotations:
            return
        scheduler = (pod.get("spec") or {}).get("schedulerName")
        if scheduler not in self.scheduler_names:
            return
        meta = pod.get("metadata") or {}
        self.queue.add(f"{meta.get('namespace') or 'default'}/{meta.get('name')}", None)

    async def _handle(self, key: str, _requests: list[None]) -> None:
        pod = self.store.get("Pod", key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        # The owner's group-min-member annotation is not read: owners are not watched, so
        # a workload's pods each get a group of one (Volcano reads ReplicaSets and friends).
        try:
            result = pod_group_for_pod(pod, None, self.scheduler_names)
        except (ValueError, KeyError, TypeError) as error:
            log.error("Pod %s: cannot build its PodGroup (%s); skipped", key, error)
            return
        if result is None:
            return
        pod_group, patch = result
        namespace, _, name = key.partition("/")
        try:
            if self.store.get("PodGroup", f"{namespace}/{pod_group['metadata']['name']}") is None:
                try:
                    await self.api.request("POST", namespaced_path(POD_GROUP, namespace), pod_group)
                    self.created += 1
                except ApiError as error:
                    if not error.conflict:
                        raise
            await self.api.request(
                "PATCH",
                namespaced_path(POD, namespace, name),
                {"metadata": {"annotations": patch}},
                content_type=MERGE_PATCH,
            )
        except ApiError as error:
            if error.not_found:
                return
            if error.transient or error.conflict:
                raise RetryLater(str(error)) from None
            log.error("Pod %s: cannot give it a PodGroup: %s", key, error)
