"""The ``hcclrank`` job plugin (``plugins/distributed-framework/hcclrank``): the
``hccl/rankIndex`` annotation Ascend's HCCL collective library reads for the pod's rank.

An annotation the pod already has is kept. Otherwise the rank is a container's ``RANK`` env
var when one is set (by the template, or by the pytorch plugin, which runs first here), else
the pod's task index for the master task and the master's replicas plus the task index for
the worker task; pods of other tasks get none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from volcano_py.controllers.job_plugins.base import (
    DEFAULT_MASTER,
    DEFAULT_WORKER,
    PluginContext,
    PluginError,
    containers_of,
    parse_plugin_flags,
    task_index_of_pod,
    task_key,
    task_replicas,
)
from volcano_py.controllers.raw import mapping, name, text

RANK_ANNOTATION: Final = "hccl/rankIndex"


def env_value(pod: dict[str, Any], variable: str) -> str:
    """The first value of ``variable`` in the pod's containers ('' when none sets it)."""
    for container in containers_of(pod, "containers"):
        for entry in container.get("env") or []:
            if mapping(entry).get("name") == variable:
                return text(mapping(entry).get("value"))
    return ""


class HcclRankPlugin:
    name = "hcclrank"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, self.argument_error = parse_plugin_flags(
            self.name, arguments, {"master": DEFAULT_MASTER, "worker": DEFAULT_WORKER}
        )
        self.master = str(values["master"])
        self.worker = str(values["worker"])

    def rank(self, pod: dict[str, Any], context: PluginContext) -> str | None:
        from_env = env_value(pod, "RANK")
        if from_env:
            return from_env
        task = task_key(pod)
        if task not in (self.master, self.worker):
            return None
        index = task_index_of_pod(pod)
        if index is None:
            raise PluginError(
                f"hcclrank: pod {name(pod)} has no numeric volcano.sh/task-index label"
            )
        if task == self.master:
            return str(index)
        return str(task_replicas(context.job, self.master) + index)

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        metadata: dict[str, Any] = pod.setdefault("metadata", {})
        annotations: dict[str, str] = metadata.get("annotations") or {}
        if annotations.get(RANK_ANNOTATION):
            return
        rank = self.rank(pod, context)
        if rank is not None:
            metadata["annotations"] = {**annotations, RANK_ANNOTATION: rank}

    # Upstream's hcclrank keeps no record in controlledResources.
    def on_job_add(self, context: PluginContext) -> None:
        return

    def on_job_update(self, context: PluginContext) -> None:
        return

    def on_job_delete(self, context: PluginContext) -> None:
        return
