"""What every job plugin shares (``pkg/controllers/job/plugins/interface``, ``job/helpers``):
the hook protocol, the context a hook reads and writes, and the helpers that name a job's
pods and hosts the way Volcano names them.

Each plugin has four hooks: ``on_pod_create`` edits a pod before it is created,
``on_job_add`` (while the job is Pending) creates the plugin's objects once and records
``plugin-<name>`` in ``status.controlledResources``, ``on_job_update`` refreshes them, and
``on_job_delete`` (a whole-job kill) removes them and forgets the record.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from volcano_py.api.types import TASK_INDEX_KEY, TASK_SPEC_KEY
from volcano_py.controllers.goflags import FlagValue, parse_go_flags
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import JobChanges
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    controller_reference,
    integer,
    items,
    labels_of,
    mapping,
    name,
    namespace,
    spec,
    text,
)
from volcano_py.controllers.vocabulary import BATCH_API_VERSION, DEFAULT_TASK_SPEC

log = logging.getLogger(__name__)

ObjectKey = tuple[str, str]  # (kind, name)


class PluginError(Exception):
    """A hook cannot do its work for this job (upstream returns an error: the controller
    creates no pod in that step and retries later)."""


def make_pod_name(job_name: str, task_name: str, index: int) -> str:
    return f"{job_name}-{task_name}-{index}"


def pod_index_from_name(pod_name: str) -> str:
    """``GetPodIndexUnderTask``: the last ``-`` piece of ``<job>-<task>-<index>``."""
    pieces = pod_name.split("-")
    return pieces[-1] if len(pieces) >= 3 else ""


def go_atoi(value: str) -> int | None:
    """``strconv.Atoi``: an optional sign and decimal digits, nothing else."""
    body = value[1:] if value[:1] in ("+", "-") else value
    if not body or not body.isascii() or not body.isdigit():
        return None
    return int(value)


def task_key(pod: Raw) -> str:
    """``GetTaskKey``: the pod's task, ``default`` when it names none."""
    return annotations_of(pod).get(TASK_SPEC_KEY) or DEFAULT_TASK_SPEC


def task_index_of_pod(pod: Raw) -> int | None:
    """``GetTaskIndexOfPod``: the ``volcano.sh/task-index`` label, None when absent or not a
    number."""
    label = labels_of(pod).get(TASK_INDEX_KEY)
    return None if label is None else go_atoi(label)


def tasks_of(job: Raw) -> list[Raw]:
    return [mapping(task) for task in items(spec(job).get("tasks"))]


def find_task(job: Raw, task_name: str) -> Raw | None:
    """``GetTaskIndexUnderJob``/``GetTaskSpec``: the first task of that name."""
    return next((task for task in tasks_of(job) if text(task.get("name")) == task_name), None)


def task_replicas(job: Raw, task_name: str) -> int:
    """``GetTaskReplicasUnderJob``: 0 for a task the job does not have."""
    task = find_task(job, task_name)
    return 0 if task is None else integer(task.get("replicas"))


def domain_name(job: Raw, task: Raw, index: int) -> str:
    """``MakeDomainName``: ``hostname.subdomain`` of one replica; the pod name and the job
    name stand in for a template without them."""
    template_spec = spec(mapping(task.get("template")))
    host = text(template_spec.get("hostname")) or make_pod_name(
        name(job), text(task.get("name")), index
    )
    subdomain = text(template_spec.get("subdomain")) or name(job)
    return f"{host}.{subdomain}"


def task_host_names(job: Raw, task: Raw) -> list[tuple[str, str]]:
    """(hostname, subdomain) of every replica; a task with a fixed hostname has one host."""
    template_spec = spec(mapping(task.get("template")))
    fixed_host = text(template_spec.get("hostname"))
    subdomain = text(template_spec.get("subdomain")) or name(job)
    if fixed_host:
        return [(fixed_host, subdomain)] if integer(task.get("replicas")) > 0 else []
    task_name = text(task.get("name"))
    return [
        (make_pod_name(name(job), task_name, index), subdomain)
        for index in range(integer(task.get("replicas")))
    ]


def task_hosts(job: Raw, task: Raw) -> list[str]:
    """``hostname.subdomain`` of every replica (one for a fixed hostname)."""
    return [f"{host}.{subdomain}" for host, subdomain in task_host_names(job, task)]


def env_key(task_name: str) -> str:
    return task_name.replace("-", "_")


def pod_spec_of(pod: dict[str, Any]) -> dict[str, Any]:
    pod_spec: dict[str, Any] = pod.setdefault("spec", {})
    return pod_spec


def containers_of(pod: dict[str, Any], *keys: str) -> list[dict[str, Any]]:
    """The pod's containers under ``keys`` (default: ``containers`` then
    ``initContainers``), each a dict a hook may edit in place."""
    pod_spec = pod_spec_of(pod)
    found: list[dict[str, Any]] = []
    for key in keys or ("containers", "initContainers"):
        found.extend(c for c in pod_spec.get(key) or [] if isinstance(c, dict))
    return found


def append_entries(container: dict[str, Any], key: str, entries: Sequence[dict[str, Any]]) -> None:
    container[key] = [*(container.get(key) or []), *entries]


def open_port(container: dict[str, Any], port_name: str, port: int) -> None:
    """Add ``port`` to the container unless some port of it already has that number
    (upstream matches on the number only, whatever the name)."""
    if any(mapping(p).get("containerPort") == port for p in container.get("ports") or []):
        return
    append_entries(container, "ports", [{"name": port_name, "containerPort": port}])


def parse_plugin_flags(
    plugin: str, arguments: Sequence[str], defaults: Mapping[str, FlagValue]
) -> tuple[dict[str, FlagValue], str]:
    """A plugin's arguments as Go's ``flag.ContinueOnError`` reads them: values up to the
    first bad argument are kept, the rest default. The error (``''`` when none) is logged, as
    upstream logs it, and returned so the controller can also report it on the job."""
    values, error = parse_go_flags(arguments, defaults)
    if error:
        log.error("plugin %s flagset parse failed, err: %s", plugin, error)
        return values, f"plugin {plugin}: {error}"
    return values, ""


@dataclass(slots=True)
class PluginContext:
    """What a hook may read and write: the job, the status being built (its
    ``controlled_resources``), the changes of this step, and the plugin objects that exist
    (``None`` when the caller does not know them: then every create-or-update is emitted)."""

    job: Raw
    status: JobStatus
    changes: JobChanges
    existing: Mapping[ObjectKey, Raw] | None = None

    def owner_reference(self) -> dict[str, Any]:
        return controller_reference(self.job, BATCH_API_VERSION, "Job")

    def exists(self, kind: str, object_name: str) -> bool:
        return self.existing is not None and (kind, object_name) in self.existing

    def create_if_missing(self, obj: dict[str, Any]) -> None:
        if not self.exists(text(obj.get("kind")), name(obj)):
            self.changes.extra_objects.append(obj)

    def create_or_update(self, obj: dict[str, Any], same: str) -> None:
        """Emit ``obj`` unless the existing object of that kind and name has equal ``same``
        content (``CreateOrUpdateConfigMap`` compares ``data``)."""
        kind, object_name = text(obj.get("kind")), name(obj)
        existing = None if self.existing is None else self.existing.get((kind, object_name))
        if existing is not None and mapping(existing).get(same) == obj.get(same):
            return
        self.changes.extra_objects.append(obj)

    def delete(self, kind: str, object_name: str) -> None:
        self.changes.delete_objects.append((kind, object_name))

    def metadata(self, object_name: str) -> dict[str, Any]:
        return {
            "name": object_name,
            "namespace": namespace(self.job),
            "ownerReferences": [self.owner_reference()],
        }

    def record(self, plugin: str) -> bool:
        """Record the plugin as set up in ``controlledResources``; False when it already
        was."""
        key = f"plugin-{plugin}"
        if self.status.controlled_resources.get(key) == plugin:
            return False
        self.status.controlled_resources[key] = plugin
        return True

    def recorded(self, plugin: str) -> bool:
        return self.status.controlled_resources.get(f"plugin-{plugin}") == plugin

    def forget(self, plugin: str) -> bool:
        """Drop the plugin's ``controlledResources`` record; False when it had none."""
        if not self.recorded(plugin):
            return False
        del self.status.controlled_resources[f"plugin-{plugin}"]
        return True


class JobPlugin(Protocol):
    name: str
    # The argument parse error ('' when none), reported once on the job.
    argument_error: str

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None: ...

    def on_job_add(self, context: PluginContext) -> None: ...

    def on_job_update(self, context: PluginContext) -> None: ...

    def on_job_delete(self, context: PluginContext) -> None: ...


class RecordingPlugin:
    """The hooks of a plugin that only edits pods: ``on_job_add`` records it in
    ``controlledResources``, ``on_job_delete`` forgets it, ``on_job_update`` does nothing
    (pytorch, tensorflow, mpi and env upstream)."""

    name: str = ""
    argument_error: str = ""

    def on_job_add(self, context: PluginContext) -> None:
        context.record(self.name)

    def on_job_update(self, context: PluginContext) -> None:
        return

    def on_job_delete(self, context: PluginContext) -> None:
        context.forget(self.name)


DEFAULT_MASTER: Final = "master"
DEFAULT_WORKER: Final = "worker"
