"""The ``pytorch`` job plugin (``plugins/distributed-framework/pytorch``): what
``torch.distributed``'s env:// rendezvous reads.

Every container of the master and worker pods gets ``MASTER_ADDR`` (the master's first pod,
``hostname.subdomain``), ``MASTER_PORT``, ``WORLD_SIZE`` (master plus worker replicas) and
``RANK`` (0 for the master, index + 1 for a worker), and the port opened as
``pytorchjob-port``. With ``--wait-master-enabled`` a worker waits in an init container until
the master's port answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from volcano_py.controllers.job_plugins.base import (
    DEFAULT_MASTER,
    DEFAULT_WORKER,
    PluginContext,
    PluginError,
    RecordingPlugin,
    append_entries,
    containers_of,
    domain_name,
    find_task,
    go_atoi,
    open_port,
    parse_plugin_flags,
    pod_index_from_name,
    pod_spec_of,
    task_key,
    task_replicas,
)
from volcano_py.controllers.raw import mapping, name

DEFAULT_PORT: Final = 23456
DEFAULT_WAIT_TIMEOUT: Final = 300
DEFAULT_WAIT_IMAGE: Final = "busybox:1.36.1"
PORT_NAME: Final = "pytorchjob-port"
WAIT_CONTAINER: Final = "wait-for-master"


def wait_for_master_script(master_address: str, port: int, timeout: int) -> str:
    """The shell loop the wait-for-master init container runs: ``nc -z``, or bash's
    ``/dev/tcp`` where the image has no nc, every 2 s until ``timeout`` seconds."""
    return "\n".join(
        [
            f'echo "Waiting for master node {master_address}:{port} to be ready..."',
            f"TIMEOUT={timeout}",
            "ELAPSED=0",
            f"until {{ nc -z {master_address} {port} || echo > /dev/tcp/{master_address}/{port};"
            " } 2>/dev/null; do",
            "  if [ $ELAPSED -ge $TIMEOUT ]; then",
            '    echo "Timeout waiting for master after ${TIMEOUT} seconds"',
            "    exit 1",
            "  fi",
            '  echo "Master not ready yet, retrying in 2 seconds... (elapsed: ${ELAPSED}s)"',
            "  sleep 2",
            "  ELAPSED=$((ELAPSED + 2))",
            "done",
            'echo "Master node is ready!"',
        ]
    )


class PytorchPlugin(RecordingPlugin):
    name = "pytorch"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, self.argument_error = parse_plugin_flags(
            self.name,
            arguments,
            {
                "master": DEFAULT_MASTER,
                "worker": DEFAULT_WORKER,
                "port": DEFAULT_PORT,
                "wait-master-enabled": False,
                "wait-master-timeout": DEFAULT_WAIT_TIMEOUT,
                "wait-master-image": DEFAULT_WAIT_IMAGE,
            },
        )
        self.master = str(values["master"])
        self.worker = str(values["worker"])
        self.port = int(values["port"])
        self.wait_master = bool(values["wait-master-enabled"])
        self.wait_timeout = int(values["wait-master-timeout"])
        self.wait_image = str(values["wait-master-image"])

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        job = context.job
        master_task = find_task(job, self.master)
        if master_task is None:
            # Upstream logs and leaves the pod alone: a job without a master gets nothing.
            return
        task = task_key(pod)
        master_address = domain_name(job, master_task, 0)
        rank = 0
        if task == self.worker:
            index = go_atoi(pod_index_from_name(name(pod)))
            if index is None:
                raise PluginError(f"pytorch: pod {name(pod)} has no numeric task index")
            rank = index + 1
            if self.wait_master:
                self._add_wait_for_master(pod, master_address)
        world_size = task_replicas(job, self.master) + task_replicas(job, self.worker)
        env: list[dict[str, Any]] = [
            {"name": "MASTER_ADDR", "value": master_address},
            {"name": "MASTER_PORT", "value": str(self.port)},
            {"name": "WORLD_SIZE", "value": str(world_size)},
        ]
        if task in (self.master, self.worker):
            env.append({"name": "RANK", "value": str(rank)})
        for container in containers_of(pod, "containers"):
            open_port(container, PORT_NAME, self.port)
            append_entries(container, "env", env)

    def _add_wait_for_master(self, pod: dict[str, Any], master_address: str) -> None:
        pod_spec = pod_spec_of(pod)
        init_containers = pod_spec.get("initContainers") or []
        if any(mapping(c).get("name") == WAIT_CONTAINER for c in init_containers):
            return
        script = wait_for_master_script(master_address, self.port, self.wait_timeout)
        pod_spec["initContainers"] = [
            *init_containers,
            {"name": WAIT_CONTAINER, "image": self.wait_image, "command": ["sh", "-c", script]},
        ]
