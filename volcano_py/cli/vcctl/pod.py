"""``vcctl pod list``: the pods of Volcano jobs (upstream's pkg/cli/pod), with kubectl's
Ready/Status/Restarts logic (``printPod``, from kubernetes' printers)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from volcano_py.api.types import JOB_NAME_KEY, QUEUE_NAME_ANNOTATION, QUEUE_NAME_KEY
from volcano_py.cli.vcctl.client import Client, CommandError
from volcano_py.cli.vcctl.formatting import parse_time, since
from volcano_py.cli.vcctl.job import NO_RESOURCES

COLUMN_SPACING: Final = 8
HEADER_SPACING: Final = 2
NODE_UNREACHABLE_REASON: Final = "NodeLost"


@dataclass(frozen=True)
class PodInfo:
    namespace: str
    name: str
    ready: str
    status: str
    restarts: str
    age: str


def _restartable(container: Mapping[str, Any] | None) -> bool:
    return container is not None and container.get("restartPolicy") == "Always"


def _condition_true(status: Mapping[str, Any], kind: str) -> bool:
    for condition in status.get("conditions") or []:
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


def _later(current: datetime | None, stamp: Any) -> datetime | None:
    when = parse_time(stamp)
    if when is None:
        return current
    return when if current is None or current < when else current


def pod_info(pod: Mapping[str, Any], now: datetime | None = None) -> PodInfo:
    """kubectl's ``printPod`` as upstream's vcctl transcribes it."""
    meta, spec, status = pod.get("metadata") or {}, pod.get("spec") or {}, pod.get("status") or {}
    restarts = restartable_restarts = ready = 0
    total = len(spec.get("containers") or [])
    last_restart: datetime | None = None
    last_restartable_restart: datetime | None = None
    phase = str(status.get("phase", ""))
    reason = str(status.get("reason") or phase)
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_containers = {c.get("name"): c for c in spec.get("initContainers") or []}
    total += sum(1 for c in init_containers.values() if _restartable(c))
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for index, container in enumerate(init_statuses):
        restarts += int(container.get("restartCount") or 0)
        last_state = (container.get("lastState") or {}).get("terminated")
        if last_state:
            last_restart = _later(last_restart, last_state.get("finishedAt"))
        declared = init_containers.get(container.get("name"))
        if _restartable(declared):
            restartable_restarts += int(container.get("restartCount") or 0)
            if last_state:
                last_restartable_restart = _later(
                    last_restartable_restart, last_state.get("finishedAt")
                )
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated and int(terminated.get("exitCode") or 0) == 0:
            continue
        if _restartable(declared) and container.get("started"):
            if container.get("ready"):
                ready += 1
            continue
        if terminated:
            if not terminated.get("reason"):
                signal = int(terminated.get("signal") or 0)
                reason = (
                    f"Init:Signal:{signal}"
                    if signal
                    else f"Init:ExitCode:{int(terminated.get('exitCode') or 0)}"
                )
            else:
                reason = "Init:" + str(terminated["reason"])
        elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{index}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    if not initializing or _condition_true(status, "Initialized"):
        restarts, last_restart = restartable_restarts, last_restartable_restart
        has_running = False
        for container in reversed(status.get("containerStatuses") or []):
            restarts += int(container.get("restartCount") or 0)
            last_state = (container.get("lastState") or {}).get("terminated")
            if last_state:
                last_restart = _later(last_restart, last_state.get("finishedAt"))
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated and terminated.get("reason"):
                reason = str(terminated["reason"])
            elif terminated:
                signal = int(terminated.get("signal") or 0)
                reason = (
                    f"Signal:{signal}"
                    if signal
                    else f"ExitCode:{int(terminated.get('exitCode') or 0)}"
                )
            elif container.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _condition_true(status, "Ready") else "NotReady"
    if meta.get("deletionTimestamp") and status.get("reason") == NODE_UNREACHABLE_REASON:
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Failed", "Succeeded"):
        reason = "Terminating"
    restarts_text = str(restarts)
    if restarts != 0 and last_restart is not None:
        restarts_text = f"{restarts} ({since(last_restart.isoformat(), now)} ago)"
    return PodInfo(
        namespace=str(meta.get("namespace", "")),
        name=str(meta.get("name", "")),
        ready=f"{ready}/{total}",
        status=reason,
        restarts=restarts_text,
        age=since(meta.get("creationTimestamp"), now),
    )


def print_pods(
    pods: Sequence[Mapping[str, Any]], show_namespace: bool, now: datetime | None = None
) -> str:
    """Upstream's ``PrintPods``: each column as wide as its widest value + 8, or its title + 2."""
    infos = [pod_info(pod, now) for pod in pods]
    columns = ["Name", "Ready", "Status", "Restart", "Age"]
    rows = [[i.name, i.ready, i.status, i.restarts, i.age] for i in infos]
    if show_namespace:
        columns.insert(0, "Namespace")
        for row, info in zip(rows, infos, strict=True):
            row.insert(0, info.namespace)
    widths = [
        max([len(title) + HEADER_SPACING, *(len(row[i]) + COLUMN_SPACING for row in rows)])
        for i, title in enumerate(columns)
    ]
    return "".join(
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + "\n"
        for row in [columns, *rows]
    )


def _key(pod: Mapping[str, Any]) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _pods_path(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"


async def list_pods(client: Client, opts: Mapping[str, Any]) -> str:
    """By --job (label ``volcano.sh/job-name``), else by --queue (the job label
    ``volcano.sh/queue-name`` or the PodGroup annotation), else every Volcano job's pod."""
    namespace = "" if opts["all_namespaces"] else str(opts["namespace"])
    job, queue = str(opts["job"]), str(opts["queue"])
    path = _pods_path(namespace)
    if job:
        pods = await client.list(path, f"{JOB_NAME_KEY} in ({job})")
        if queue and any(
            ((p.get("metadata") or {}).get("labels") or {}).get(QUEUE_NAME_KEY, queue) != queue
            for p in pods
        ):
            raise CommandError(f"the input vcjob {job} does not match the queue {queue}")
    elif queue:
        every = await client.list(path)
        pods = [p for p in every if _labels(p).get(QUEUE_NAME_KEY) == queue]
        seen = {_key(p) for p in pods}
        for pod in every:
            annotations = (pod.get("metadata") or {}).get("annotations") or {}
            if annotations.get(QUEUE_NAME_ANNOTATION) == queue and _key(pod) not in seen:
                pods.append(pod)
                seen.add(_key(pod))
    else:
        pods = await client.list(path, JOB_NAME_KEY)
    if not pods:
        return NO_RESOURCES
    pods.sort(key=_key)
    return print_pods(pods, bool(opts["all_namespaces"]))


def _labels(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return (pod.get("metadata") or {}).get("labels") or {}
