"""The ``mpi`` job plugin (``plugins/distributed-framework/mpi``): ``MPI_HOST`` on the
master (the worker task's ``hostname.subdomain`` list, comma-joined, as ``mpirun --host``
takes it) and the ssh port (``--port``, 22) opened as ``mpijob-port`` in every container."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from volcano_py.controllers.job_plugins.base import (
    DEFAULT_MASTER,
    DEFAULT_WORKER,
    PluginContext,
    RecordingPlugin,
    append_entries,
    containers_of,
    find_task,
    open_port,
    parse_plugin_flags,
    task_hosts,
    task_key,
)

DEFAULT_PORT: Final = 22
PORT_NAME: Final = "mpijob-port"


class MpiPlugin(RecordingPlugin):
    name = "mpi"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, self.argument_error = parse_plugin_flags(
            self.name,
            arguments,
            {"master": DEFAULT_MASTER, "worker": DEFAULT_WORKER, "port": DEFAULT_PORT},
        )
        self.master = str(values["master"])
        self.worker = str(values["worker"])
        self.port = int(values["port"])

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        env: list[dict[str, Any]] = []
        if task_key(pod) == self.master:
            worker_task = find_task(context.job, self.worker)
            if worker_task is None:
                # Upstream returns before opening any port: a master without workers is left
                # as written.
                return
            env = [{"name": "MPI_HOST", "value": ",".join(task_hosts(context.job, worker_task))}]
        # Init containers first, then containers, as upstream walks them.
        for container in containers_of(pod, "initContainers", "containers"):
            open_port(container, PORT_NAME, self.port)
            if env:
                append_entries(container, "env", env)
