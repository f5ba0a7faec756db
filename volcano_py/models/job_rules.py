"""The rules Volcano's job admission (webhook and admission policies) holds a Job to, beyond
what each field checks on its own. Each function raises the first SpecError it finds, with a
path relative to the object it was given.

The rules read the Job models through the read-only views below, which the pydantic models in
:mod:`volcano_py.models.job` satisfy; the models call the rules from their validators, so the
rules must not import the models back.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.models.base import SpecError
from volcano_py.models.fieldtypes import DNS_SUBDOMAIN_PATTERN
from volcano_py.models.lifecycle import check_policies
from volcano_py.models.pod_template import containers, resource_lists

if TYPE_CHECKING:
    from volcano_py.models.lifecycle import LifecyclePolicy

# The job plugins Volcano's controller can build (pkg/controllers/job/plugins/factory.go).
KNOWN_JOB_PLUGINS: Final = ("env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow")
DEFAULT_MPI_MASTER: Final = "master"

# IsQualifiedName without a prefix: what Kubernetes accepts as a label value-like name.
_QUALIFIED_NAME: Final = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_QUALIFIED_NAME_MAX: Final = 63
_DNS_SUBDOMAIN: Final = re.compile(DNS_SUBDOMAIN_PATTERN)


# ---------------------------------------------------------------------------- views


class PartitionView(Protocol):
    @property
    def total_partitions(self) -> int: ...

    @property
    def partition_size(self) -> int: ...

    @property
    def min_partitions(self) -> int: ...


class DependsOnView(Protocol):
    @property
    def name(self) -> Sequence[str]: ...


class TaskView(Protocol):
    """What the rules read of a ``TaskSpec``."""

    @property
    def replicas(self) -> int: ...

    @property
    def min_available(self) -> int | None: ...

    @property
    def template(self) -> Mapping[str, Any]: ...

    @property
    def policies(self) -> Sequence[LifecyclePolicy]: ...

    @property
    def topology_policy(self) -> str | None: ...

    @property
    def depends_on(self) -> DependsOnView | None: ...

    @property
    def partition_policy(self) -> PartitionView | None: ...

    def effective_name(self, index: int) -> str: ...


class VolumeView(Protocol):
    @property
    def mount_path(self) -> str: ...

    @property
    def volume_claim_name(self) -> str | None: ...

    @property
    def volume_claim(self) -> Mapping[str, Any] | None: ...


class JobSpecView(Protocol):
    """What the rules read of a ``JobSpec``."""

    @property
    def tasks(self) -> Sequence[TaskView]: ...

    @property
    def min_available(self) -> int: ...

    @property
    def policies(self) -> Sequence[LifecyclePolicy]: ...

    @property
    def plugins(self) -> Mapping[str, Sequence[str]]: ...

    @property
    def volumes(self) -> Sequence[VolumeView]: ...


# ---------------------------------------------------------------------------- rules


def _policies(policies: Sequence[LifecyclePolicy], prefix: tuple[str | int, ...]) -> None:
    try:
        check_policies(policies)
    except SpecError as error:
        raise SpecError((*prefix, *error.path), error.message) from None


def check_task(task: TaskView) -> None:
    """Rules of one task: minAvailable within replicas, its policies, its partitions, and whole
    CPUs when a NUMA topology policy asks for exclusive cores."""
    if task.min_available is not None and task.min_available > task.replicas:
        raise SpecError(
            ("minAvailable",),
            f"minAvailable ({task.min_available}) is greater than replicas ({task.replicas})",
        )
    _policies(task.policies, ("policies",))
    partition = task.partition_policy
    if partition is not None:
        planned = partition.total_partitions * partition.partition_size
        if task.replicas != planned:
            raise SpecError(
                ("replicas",),
                f"replicas ({task.replicas}) must equal partitionPolicy totalPartitions * "
                f"partitionSize ({partition.total_partitions} * {partition.partition_size} "
                f"= {planned})",
            )
        # Only an explicit minPartitions ties minAvailable to it; the default 0 leaves the
        # task's minAvailable to fall back to replicas.
        needed = partition.min_partitions * partition.partition_size
        explicit_gang = task.min_available is not None and partition.min_partitions > 0
        if explicit_gang and task.min_available != needed:
            raise SpecError(
                ("minAvailable",),
                f"minAvailable ({task.min_available}) must equal partitionPolicy "
                f"minPartitions * partitionSize ({partition.min_partitions} * "
                f"{partition.partition_size} = {needed})",
            )
    if task.topology_policy not in (None, "none"):
        _check_whole_cpus(task)


def _check_whole_cpus(task: TaskView) -> None:
    # A NUMA policy pins exclusive cores, which needs a whole number of CPUs per container
    # (requests, or limits when requests are absent).
    for path, container in containers(task.template):
        (requests_path, requests), (limits_path, limits) = resource_lists(container, path)
        where, amounts = (requests_path, requests) if requests else (limits_path, limits)
        cpu = amounts.get("cpu")
        whole = False
        if cpu is not None and not isinstance(cpu, bool):
            try:
                value = parse_quantity(cpu)
            except QuantityError:
                value = None
            whole = value is not None and value > 0 and value == value.to_integral_value()
        if not whole:
            raise SpecError(
                ("template", *where, "cpu"),
                f"topologyPolicy {task.topology_policy} needs a whole number of CPUs in every "
                f"container (got {cpu!r})",
            )


def check_job_spec(spec: JobSpecView) -> None:
    """Rules across the tasks of a job and the rest of its spec."""
    names = [task.effective_name(index) for index, task in enumerate(spec.tasks)]
    _check_mpi_master(spec, names)
    seen: set[str] = set()
    for index, name in enumerate(names):
        if name in seen:
            raise SpecError(("tasks", index, "name"), f"duplicated task name {name!r}")
        seen.add(name)
    total_replicas = sum(task.replicas for task in spec.tasks)
    if spec.min_available > total_replicas:
        raise SpecError(
            ("minAvailable",),
            f"minAvailable ({spec.min_available}) is greater than the total replicas of the "
            f"tasks ({total_replicas})",
        )
    _policies(spec.policies, ("policies",))
    for plugin in spec.plugins:
        if plugin not in KNOWN_JOB_PLUGINS:
            raise SpecError(
                ("plugins", plugin),
                f"unknown job plugin {plugin!r}; known plugins are {', '.join(KNOWN_JOB_PLUGINS)}",
            )
    _check_volumes(spec)
    _check_dependencies(spec, names)


def _mpi_master(arguments: Sequence[str]) -> str:
    # The mpi plugin reads Go flags: --master=x, -master=x, or --master x.
    master = DEFAULT_MPI_MASTER
    for index, argument in enumerate(arguments):
        flag, _, value = argument.lstrip("-").partition("=")
        if flag != "master" or not argument.startswith("-"):
            continue
        if value:
            master = value
        elif index + 1 < len(arguments):
            master = arguments[index + 1]
    return master


def _check_mpi_master(spec: JobSpecView, names: list[str]) -> None:
    if "mpi" not in spec.plugins:
        return
    master = _mpi_master(spec.plugins["mpi"])
    if master not in names:
        raise SpecError(
            ("plugins", "mpi"),
            f"the mpi master task {master!r} is not among the tasks ({', '.join(names)}); "
            "name it with --master=<task>",
        )


def _check_volumes(spec: JobSpecView) -> None:
    mount_paths: set[str] = set()
    for index, volume in enumerate(spec.volumes):
        if volume.mount_path in mount_paths:
            raise SpecError(
                ("volumes", index, "mountPath"), f"duplicated mountPath {volume.mount_path!r}"
            )
        mount_paths.add(volume.mount_path)
        if volume.volume_claim is None and not volume.volume_claim_name:
            raise SpecError(
                ("volumes", index), "needs volumeClaimName (an existing PVC) or volumeClaim"
            )
        if volume.volume_claim_name:
            if volume.volume_claim is not None:
                raise SpecError(
                    ("volumes", index, "volumeClaim"),
                    "must not be set together with volumeClaimName: name an existing PVC or "
                    "describe a new one, not both",
                )
            if not _DNS_SUBDOMAIN.match(volume.volume_claim_name):
                raise SpecError(
                    ("volumes", index, "volumeClaimName"),
                    f"{volume.volume_claim_name!r} is not a valid PVC name (lower-case "
                    "letters, digits, '-' and '.')",
                )


def _check_dependencies(spec: JobSpecView, names: list[str]) -> None:
    known = set(names)
    edges: dict[str, list[str]] = {}
    for index, task in enumerate(spec.tasks):
        if task.depends_on is None:
            continue
        for dependency in task.depends_on.name:
            if dependency not in known:
                raise SpecError(
                    ("tasks", index, "dependsOn", "name"),
                    f"depends on {dependency!r}, which is not a task of this job",
                )
        edges[names[index]] = list(task.depends_on.name)
    cycle = find_cycle(edges)
    if cycle:
        index = names.index(cycle[0])
        raise SpecError(
            ("tasks", index, "dependsOn", "name"),
            f"task dependencies form a cycle ({' -> '.join([*cycle, cycle[0]])}); they must "
            "form a directed acyclic graph",
        )


def find_cycle(edges: dict[str, list[str]]) -> list[str]:
    """A cycle of the dependency graph as a list of task names, or [] when there is none."""
    visiting: list[str] = []
    done: set[str] = set()

    def visit(node: str) -> list[str]:
        if node in done:
            return []
        if node in visiting:
            return visiting[visiting.index(node) :]
        visiting.append(node)
        for target in edges.get(node, ()):
            found = visit(target)
            if found:
                return found
        visiting.pop()
        done.add(node)
        return []

    for start in edges:
        found = visit(start)
        if found:
            return found
    return []


def _qualified_name_problem(name: str) -> str | None:
    if len(name) > _QUALIFIED_NAME_MAX:
        return f"must be no more than {_QUALIFIED_NAME_MAX} characters (has {len(name)})"
    if not _QUALIFIED_NAME.match(name):
        return "must consist of alphanumerics, '-', '_' or '.', and start and end with one"
    return None


def check_job_names(name: str | None, tasks: Sequence[TaskView]) -> None:
    """The job's name, and the pod names the controller derives from it, must be valid names:
    Volcano refuses a job whose pods could not be created."""
    if not name:
        return  # generateName: the server picks the name
    problem = _qualified_name_problem(name)
    if problem:
        raise SpecError(("metadata", "name"), f"job name {name!r} {problem}")
    for index, task in enumerate(tasks):
        # Upstream checks "<job>-<task>-<index of the task>", not every replica's pod name.
        pod_name = f"{name}-{task.effective_name(index)}-{index}"
        problem = _qualified_name_problem(pod_name)
        if problem:
            raise SpecError(
                ("spec", "tasks", index, "name"),
                f"pod name {pod_name!r} built from the job and task names {problem}",
            )
