"""What the webhooks read from the cluster: the queues (a job's queue must exist and be open,
a queue's place in the hierarchy) and a namespace's annotations (a PodGroup's default queue).

Read per request, as Volcano's listers would answer: admission is rare next to scheduling, and
a fresh read cannot refuse a job for a queue created a moment ago.
"""

from __future__ import annotations

from typing import Any, Protocol

from volcano_py.runtime.apiclient import ApiError, KubeApi

QUEUES_PATH = "/apis/scheduling.volcano.sh/v1beta1/queues"


class ClusterReadError(RuntimeError):
    """The cluster could not be read; the message says what and why."""


class ClusterView(Protocol):
    async def queues(self) -> dict[str, dict[str, Any]]: ...

    async def namespace_annotations(self, namespace: str) -> dict[str, str]: ...


class LiveClusterView:
    def __init__(self, api: KubeApi) -> None:
        self.api = api

    async def queues(self) -> dict[str, dict[str, Any]]:
        try:
            items, _version = await self.api.list_all(QUEUES_PATH)
        except ApiError as error:
            raise ClusterReadError(f"cannot list queues: {error}") from None
        return {str((q.get("metadata") or {}).get("name", "")): q for q in items}

    async def namespace_annotations(self, namespace: str) -> dict[str, str]:
        try:
            found = await self.api.request("GET", f"/api/v1/namespaces/{namespace}")
        except ApiError as error:
            if error.not_found:
                return {}
            raise ClusterReadError(f"cannot read namespace {namespace}: {error}") from None
        annotations = ((found or {}).get("metadata") or {}).get("annotations") or {}
        return {str(k): str(v) for k, v in annotations.items()}
