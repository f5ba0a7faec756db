"""The cache dumper (``--cache-dumper``, ``--cache-dump-dir``; Volcano's
``pkg/scheduler/cache/dumper.go``): on SIGUSR1 the scheduler writes its cache as JSON to
``<dir>/snapshot-<unix seconds>.json``; on SIGUSR2 it logs every node and job.

As upstream, the file is a stream of JSON documents, one per line: the nodes (by name), the
HyperNodes (by name, as stored), then the jobs (by uid). Each is a summary of our own model
(resources as Volcano prints them, tasks with status and node), not Volcano's Go structs.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache

log = logging.getLogger(__name__)


def _task(task: TaskInfo) -> dict[str, Any]:
    return {
        "uid": task.uid,
        "namespace": task.namespace,
        "name": task.name,
        "status": task.status.name,
        "node": task.node_name,
        "role": task.task_role,
        "priority": task.priority,
        "resreq": str(task.resreq),
    }


def _node(node: NodeInfo) -> dict[str, Any]:
    return {
        "name": node.name,
        "phase": node.phase.name,
        "reason": node.phase_reason,
        "labels": dict(node.labels),
        "allocatable": str(node.allocatable),
        "idle": str(node.idle),
        "used": str(node.used),
        "releasing": str(node.releasing),
        "pipelined": str(node.pipelined),
        "tasks": sorted(node.tasks),
    }


def _job(job: JobInfo) -> dict[str, Any]:
    return {
        "uid": job.uid,
        "namespace": job.namespace,
        "name": job.name,
        "queue": job.queue,
        "priority": job.priority,
        "minAvailable": job.min_available,
        "podGroupPhase": job.pod_group.phase if job.pod_group is not None else "",
        "allocated": str(job.allocated),
        "tasks": [_task(task) for task in job.tasks.values()],
    }


def cache_documents(cache: SchedulerCache) -> list[dict[str, Any]]:
    """Nodes, HyperNodes, jobs: read under the cache lock, so consistent with each other."""
    with cache.lock:
        return [
            {name: _node(cache.nodes[name]) for name in cache.node_list},
            {name: dict(spec) for name, spec in cache.hyper_nodes.items()},
            {uid: _job(job) for uid, job in cache.jobs.items()},
        ]


def dump_to_json_file(cache: SchedulerCache, directory: str, now: float) -> Path | None:
    """Write the dump; the path, or None (logged) when the file cannot be written."""
    path = Path(directory) / f"snapshot-{int(now)}.json"
    try:
        documents = cache_documents(cache)
        log.info("dumping the scheduler cache to %s", path)
        with open(path, "w", encoding="utf-8") as file:
            for document in documents:
                file.write(json.dumps(document, default=str))
                file.write("\n")
    except OSError as error:
        log.error("cannot dump the scheduler cache to %s: %s", path, error)
        return None
    log.info("dumped the scheduler cache to %s", path)
    return path


def dump_to_log(cache: SchedulerCache) -> None:
    with cache.lock:
        log.info("dump of the nodes in the scheduler cache")
        for name in cache.node_list:
            log.info("%s", cache.nodes[name])
        log.info("dump of the jobs in the scheduler cache")
        for job in cache.jobs.values():
            log.info("%s", job)
        log.info("dump of the HyperNodes in the scheduler cache: %s", sorted(cache.hyper_nodes))


def listen_for_signals(cache: SchedulerCache, directory: str, clock: Callable[[], float]) -> None:
    """SIGUSR1: JSON file; SIGUSR2: log (main thread only, as ``signal.signal`` requires)."""
    if not os.path.isdir(directory):
        log.warning("--cache-dump-dir %s is not a directory: dumps will fail", directory)

    def to_file(signum: int, frame: FrameType | None) -> None:
        dump_to_json_file(cache, directory, clock())

    def to_log(signum: int, frame: FrameType | None) -> None:
        dump_to_log(cache)

    signal.signal(signal.SIGUSR1, to_file)
    signal.signal(signal.SIGUSR2, to_log)
