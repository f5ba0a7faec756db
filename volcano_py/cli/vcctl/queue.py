"""``vcctl queue create|delete|operate|list|get`` and ``vqueues`` (upstream's pkg/cli/queue,
pkg/cli/podgroup and pkg/cli/vqueues)."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.cli.vcctl.client import Client, CommandError
from volcano_py.cli.vcctl.job import NO_RESOURCES, command_for

SCHEDULING: Final = "/apis/scheduling.volcano.sh/v1beta1"
QUEUES: Final = f"{SCHEDULING}/queues"
ACTIONS: Final = {"open": "OpenQueue", "close": "CloseQueue"}
# Upstream's ``createQueueCommand`` puts a queue's Command in this namespace.
QUEUE_COMMAND_NAMESPACE: Final = "default"


@dataclass
class PodGroupStatistics:
    """Upstream's ``podgroup.PodGroupStatistics``: a queue's PodGroups by phase."""

    inqueue: int = 0
    pending: int = 0
    running: int = 0
    unknown: int = 0
    completed: int = 0

    def count(self, pod_group: Mapping[str, Any]) -> None:
        phase = (pod_group.get("status") or {}).get("phase", "")
        field = {
            "Inqueue": "inqueue",
            "Pending": "pending",
            "Running": "running",
            "Unknown": "unknown",
            "Completed": "completed",
        }.get(phase)
        if field is not None:
            setattr(self, field, getattr(self, field) + 1)


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


_TITLE_FORMAT: Final = "{:<25}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}\n"


def _queue_row(queue: Mapping[str, Any], stats: PodGroupStatistics) -> str:
    spec, status = queue.get("spec") or {}, queue.get("status") or {}
    return _TITLE_FORMAT.format(
        (queue.get("metadata") or {}).get("name", ""),
        _int(spec.get("weight")),
        status.get("state", ""),
        spec.get("parent", ""),
        stats.inqueue,
        stats.pending,
        stats.running,
        stats.unknown,
        stats.completed,
    )


def _title() -> str:
    return _TITLE_FORMAT.format(
        "Name",
        "Weight",
        "State",
        "Parent",
        "Inqueue",
        "Pending",
        "Running",
        "Unknown",
        "Completed",
    )


def print_queues(
    queues: Sequence[Mapping[str, Any]], stats: Mapping[str, PodGroupStatistics]
) -> str:
    """Upstream's ``PrintQueues`` (vcctl queue list)."""
    rows = [_queue_row(q, stats.get(_name(q)) or PodGroupStatistics()) for q in queues]
    return _title() + "".join(rows)


def print_queue(queue: Mapping[str, Any], stats: PodGroupStatistics) -> str:
    """Upstream's ``PrintQueue`` (vcctl queue get)."""
    return _title() + _queue_row(queue, stats)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


_VQUEUES_FORMAT: Final = "{:<25}{:<8}{:<8}{:<8}{:<8}{:<8}{:<8}\n"


def print_vqueues(queues: Sequence[Mapping[str, Any]]) -> str:
    """vqueues' table: the counts of the queue's own status (no Parent, no Completed)."""
    lines = [
        _VQUEUES_FORMAT.format(
            "Name", "Weight", "State", "Inqueue", "Pending", "Running", "Unknown"
        )
    ]
    for queue in queues:
        spec, status = queue.get("spec") or {}, queue.get("status") or {}
        lines.append(
            _VQUEUES_FORMAT.format(
                _name(queue),
                _int(spec.get("weight")),
                status.get("state", ""),
                _int(status.get("inqueue")),
                _int(status.get("pending")),
                _int(status.get("running")),
                _int(status.get("unknown")),
            )
        )
    return "".join(lines)


async def create_queue(client: Client, opts: Mapping[str, Any]) -> str:
    """``vcctl queue create``: prints nothing on success, as upstream."""
    state = str(opts["state"])
    queue = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": opts["name"]},
        "spec": {"weight": int(opts["weight"])},
        "status": {"state": state},
    }
    await client.create(QUEUES, queue)
    if state != "Open":
        # Upstream sends the state in the status, which the API server drops on create (the
        # Queue's status is a subresource): say so rather than pretend it took effect.
        sys.stderr.write(
            f"warning: --state {state} was not applied: the API server ignores a new queue's "
            f"status (upstream vcctl alike); close it with "
            f"'vcctl queue operate -n {opts['name']} -a close'\n"
        )
    return ""


async def delete_queue(client: Client, opts: Mapping[str, Any]) -> str:
    if not opts["name"]:
        raise CommandError("queue name must be specified")
    await client.delete(f"{QUEUES}/{opts['name']}")
    return ""


async def operate_queue(client: Client, opts: Mapping[str, Any]) -> str:
    """``open``/``close``: a Command in namespace default; ``update``: a merge patch of the
    weight. Prints nothing on success, as upstream."""
    name, action, weight = str(opts["name"]), str(opts["action"]), int(opts["weight"])
    if not name:
        raise CommandError("queue name must be specified")
    if action == "update":
        if weight == 0:
            raise CommandError(
                f"when update queue {name}, weight must be specified, "
                "the value must be greater than 0"
            )
        await client.merge_patch(f"{QUEUES}/{name}", {"spec": {"weight": weight}})
        return ""
    if action == "":
        raise CommandError("action can not be null")
    if action not in ACTIONS:
        raise CommandError(f"action {action} invalid, valid actions are open, close and update")
    queue = await client.get(f"{QUEUES}/{name}")
    queue.setdefault("apiVersion", "scheduling.volcano.sh/v1beta1")
    queue.setdefault("kind", "Queue")
    command = command_for(queue, ACTIONS[action], "")
    await client.create(
        f"/apis/bus.volcano.sh/v1alpha1/namespaces/{QUEUE_COMMAND_NAMESPACE}/commands", command
    )
    return ""


async def _pod_groups(client: Client, what: str) -> list[dict[str, Any]]:
    try:
        return await client.list(f"{SCHEDULING}/podgroups")
    except CommandError as error:
        raise CommandError(f"failed to list {what} with err: {error}") from None


async def list_queues(client: Client, opts: Mapping[str, Any]) -> str:
    queues = await client.list(QUEUES)
    if not queues:
        return NO_RESOURCES
    stats = {_name(q): PodGroupStatistics() for q in queues}
    for pod_group in await _pod_groups(client, "podgroups"):
        counts = stats.get(str((pod_group.get("spec") or {}).get("queue", "")))
        if counts is not None:
            counts.count(pod_group)
    return print_queues(queues, stats)


async def get_queue(client: Client, opts: Mapping[str, Any]) -> str:
    name = str(opts["name"])
    if not name:
        raise CommandError("name is mandatory to get the particular queue details")
    queue = await client.get(f"{QUEUES}/{name}")
    stats = PodGroupStatistics()
    for pod_group in await _pod_groups(client, f"podgroup for queue {name}"):
        if (pod_group.get("spec") or {}).get("queue") == name:
            stats.count(pod_group)
    return print_queue(queue, stats)


async def vqueues(client: Client, opts: Mapping[str, Any]) -> str:
    name = str(opts["name"])
    if not name:
        queues = await client.list(QUEUES)
        return print_vqueues(queues) if queues else NO_RESOURCES
    return print_vqueues([await client.get(f"{QUEUES}/{name}")])
