"""The ``tensorflow`` job plugin (``plugins/distributed-framework/tensorflow``):
``TF_CONFIG`` in every container, as ``tf.distribute`` reads it.

The cluster lists ``host:port`` of every replica of the ps, worker, chief and evaluator tasks
(task names set by ``--ps``, ``--worker``, ``--chief``, ``--evaluator``; port ``--port``,
2222); the task is the pod's own type and index. A job of one task with one replica is
stand-alone and gets none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from volcano_py.controllers.job_plugins.base import (
    PluginContext,
    PluginError,
    RecordingPlugin,
    append_entries,
    containers_of,
    domain_name,
    go_atoi,
    parse_plugin_flags,
    pod_index_from_name,
    task_key,
    tasks_of,
)
from volcano_py.controllers.raw import integer, name, text

DEFAULT_PORT: Final = 2222
# TF_CONFIG's cluster keys in the order upstream's struct marshals them.
ROLES: Final = ("ps", "worker", "chief", "evaluator")


class TensorflowPlugin(RecordingPlugin):
    name = "tensorflow"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, self.argument_error = parse_plugin_flags(
            self.name,
            arguments,
            {role: role for role in ROLES} | {"port": DEFAULT_PORT},
        )
        # role -> the task name that plays it
        self.task_of_role = {role: str(values[role]) for role in ROLES}
        self.port = int(values["port"])

    def _role_of(self, task_name: str) -> str:
        """The TF task type of a task; a task playing no role keeps its own name (upstream
        passes it through)."""
        for role in ("chief", "worker", "ps", "evaluator"):
            if self.task_of_role[role] == task_name:
                return role
        return task_name

    def tf_config(self, pod: dict[str, Any], context: PluginContext) -> str:
        index = go_atoi(pod_index_from_name(name(pod)))
        if index is None:
            raise PluginError(f"tensorflow: pod {name(pod)} has no numeric task index")
        job = context.job
        cluster: dict[str, list[str]] = {}
        for task in tasks_of(job):
            task_name = text(task.get("name"))
            hosts = [
                f"{domain_name(job, task, i)}:{self.port}"
                for i in range(integer(task.get("replicas")))
            ]
            for role in ROLES:
                # A later task of the same role replaces an earlier one, as upstream's switch.
                if self.task_of_role[role] == task_name:
                    cluster[role] = hosts
                    break
        ordered = {role: cluster[role] for role in ROLES if cluster.get(role)}
        document = {
            "cluster": ordered,
            "task": {"type": self._role_of(task_key(pod)), "index": index},
        }
        return json.dumps(document, separators=(",", ":"))

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        tasks = tasks_of(context.job)
        if len(tasks) == 1 and integer(tasks[0].get("replicas")) == 1:
            return
        value = self.tf_config(pod, context)
        for container in containers_of(pod, "containers"):
            append_entries(container, "env", [{"name": "TF_CONFIG", "value": value}])
