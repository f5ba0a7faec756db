"""The ``ray`` job plugin (``plugins/distributed-framework/ray``): a Ray cluster from a head
task and a worker task.

The head task's head container runs ``ray start --head`` with the GCS, dashboard and client
server ports (``--port`` 6379, ``--dashboardPort`` 8265, ``--clientPort`` 10001) opened as
``gcs``, ``dashboard`` and ``client-server``; the worker task's worker container runs
``ray start --address=<head>:<port>``. The containers are picked by name (``--headContainer``,
``--workerContainer``). A Service ``<job>-head-svc`` exposes the three ports of the head pod.
A job without the head task creates no pod: upstream fails the pod creation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from volcano_py.api.types import JOB_NAME_KEY, JOB_NAMESPACE_KEY, TASK_SPEC_KEY
from volcano_py.controllers.job_plugins.base import (
    PluginContext,
    PluginError,
    containers_of,
    domain_name,
    find_task,
    open_port,
    parse_plugin_flags,
    task_key,
)
from volcano_py.controllers.raw import name, namespace, text

GCS_PORT_NAME: Final = "gcs"
DASHBOARD_PORT_NAME: Final = "dashboard"
CLIENT_PORT_NAME: Final = "client-server"


def head_service_name(job_name: str) -> str:
    return f"{job_name}-head-svc"


class RayPlugin:
    name = "ray"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, self.argument_error = parse_plugin_flags(
            self.name,
            arguments,
            {
                "head": "head",
                "headContainer": "head",
                "worker": "worker",
                "workerContainer": "worker",
                "port": 6379,
                "dashboardPort": 8265,
                "clientPort": 10001,
            },
        )
        self.head = str(values["head"])
        self.head_container = str(values["headContainer"])
        self.worker = str(values["worker"])
        self.worker_container = str(values["workerContainer"])
        self.port = int(values["port"])
        self.dashboard_port = int(values["dashboardPort"])
        self.client_port = int(values["clientPort"])

    def head_command(self) -> list[str]:
        return [
            "sh",
            "-c",
            f"ray start --head --block --dashboard-host=0.0.0.0 --port={self.port}"
            f" --dashboard-port={self.dashboard_port}"
            f" --ray-client-server-port={self.client_port}",
        ]

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        job = context.job
        head_task = find_task(job, self.head)
        if head_task is None:
            raise PluginError(f"job {name(job)} doesn't have head task {self.head}")
        task = task_key(pod)
        for container in containers_of(pod, "containers"):
            container_name = text(container.get("name"))
            if task == self.head and container_name == self.head_container:
                open_port(container, GCS_PORT_NAME, self.port)
                open_port(container, DASHBOARD_PORT_NAME, self.dashboard_port)
                open_port(container, CLIENT_PORT_NAME, self.client_port)
                container["command"] = self.head_command()
            if task == self.worker and container_name == self.worker_container:
                head = f"{domain_name(job, head_task, 0)}:{self.port}"
                container["command"] = ["sh", "-c", f"ray start --block --address={head}"]

    def _service(self, context: PluginContext) -> dict[str, Any]:
        job = context.job
        ports = [
            (GCS_PORT_NAME, self.port),
            (DASHBOARD_PORT_NAME, self.dashboard_port),
            (CLIENT_PORT_NAME, self.client_port),
        ]
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": context.metadata(head_service_name(name(job))),
            "spec": {
                "selector": {
                    JOB_NAME_KEY: name(job),
                    JOB_NAMESPACE_KEY: namespace(job),
                    TASK_SPEC_KEY: self.head,
                },
                "ports": [
                    {"name": port_name, "port": port, "targetPort": port_name, "protocol": "TCP"}
                    for port_name, port in ports
                ],
            },
        }

    def on_job_add(self, context: PluginContext) -> None:
        if context.recorded(self.name):
            return
        context.create_if_missing(self._service(context))
        context.record(self.name)

    def on_job_update(self, context: PluginContext) -> None:
        return

    def on_job_delete(self, context: PluginContext) -> None:
        if not context.recorded(self.name):
            return
        context.delete("Service", head_service_name(name(context.job)))
        context.forget(self.name)
