"""The validating job webhook on create (``pkg/webhooks/admission/jobs/validate/``), plus
the range checks Volcano moved into its CRD schema and admission policies.

Every problem is reported, each as ``<field path>: <what is wrong>``, so a user fixes them in
one go. Upstream's pod-template validation (the whole of Kubernetes' ``ValidatePodTemplate``)
is not repeated here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.go_duration import DurationError
from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.api.types import ROOT_QUEUE
from volcano_py.controllers.goflags import parse_go_flags
from volcano_py.controllers.job_plugins import KNOWN_PLUGINS, make_pod_name
from volcano_py.controllers.job_policy import policy_events
from volcano_py.controllers.raw import (
    Raw,
    integer,
    items,
    mapping,
    name,
    optional_int,
    spec,
    status,
    text,
)
from volcano_py.controllers.timefmt import parse_go_duration
from volcano_py.controllers.vocabulary import USER_ACTIONS, USER_EVENTS, Event, QueueState

_QUALIFIED_NAME: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS_SUBDOMAIN: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_MAX_NAME: Final = 63
_TOPOLOGY_POLICIES: Final = ("", "none", "best-effort", "restricted", "single-numa-node")


def _name_problem(value: str) -> str | None:
    """``validation.IsQualifiedName`` without a prefix."""
    if not value:
        return "must not be empty"
    if len(value) > _MAX_NAME:
        return f"must be no more than {_MAX_NAME} characters"
    if not _QUALIFIED_NAME.fullmatch(value):
        return (
            "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character"
        )
    return None


def _policies(policies: object, path: str) -> list[str]:
    """``validatePolicies``: events or an exit code (not both), allowed events and actions, no
    event or exit code twice, ``*`` alone; a timeout must be a duration."""
    problems: list[str] = []
    seen_events: set[str] = set()
    seen_codes: set[int] = set()
    for index, raw in enumerate(items(policies)):
        policy = mapping(raw)
        where = f"{path}[{index}]"
        events = list(dict.fromkeys(policy_events(policy)))
        exit_code = optional_int(policy.get("exitCode"))
        action = text(policy.get("action"))
        if events and exit_code is not None:
            problems.append(f"{where}: must not specify event and exitCode simultaneously")
            continue
        if not events and exit_code is None:
            problems.append(f"{where}: either event or exitCode should be specified")
            continue
        if action not in USER_ACTIONS:
            allowed = ", ".join(sorted(USER_ACTIONS))
            problems.append(f"{where}.action: invalid policy action {action!r} (valid: {allowed})")
        for event in events:
            if event not in USER_EVENTS:
                allowed = ", ".join(sorted(USER_EVENTS))
                problems.append(f"{where}.event: invalid policy event {event!r} (valid: {allowed})")
            elif event in seen_events:
                problems.append(f"{where}.event: duplicate event {event!r} across policies")
            seen_events.add(event)
        if exit_code is not None:
            if exit_code == 0:
                problems.append(f"{where}.exitCode: 0 is not a valid error code")
            elif exit_code in seen_codes:
                problems.append(f"{where}.exitCode: duplicate exitCode {exit_code}")
            seen_codes.add(exit_code)
        timeout = policy.get("timeout")
        if timeout is not None:
            try:
                parse_go_duration(text(timeout))
            except DurationError as error:
                problems.append(f"{where}.timeout: {error}")
    if Event.ANY in seen_events and len(seen_events) > 1:
        problems.append(f"{path}: if there's * here, no other policy should be here")
    return problems


def _network_topology(topology: object, path: str) -> list[str]:
    value = mapping(topology)
    if value.get("highestTierAllowed") is not None and text(value.get("highestTierName")):
        return [
            f"{path}: must not specify 'highestTierAllowed' and 'highestTierName' simultaneously"
        ]
    return []


def _partition(task: Raw, path: str) -> list[str]:
    raw = task.get("partitionPolicy")
    if not isinstance(raw, Mapping):
        return []
    total = integer(raw.get("totalPartitions"))
    size = integer(raw.get("partitionSize"))
    min_partitions = integer(raw.get("minPartitions"))
    replicas = integer(task.get("replicas"))
    where = f"{path}.partitionPolicy"
    problems = []
    if total <= 0:
        problems.append(f"{where}.totalPartitions: must be greater than 0")
    elif size <= 0:
        problems.append(f"{where}.partitionSize: must be greater than 0")
    elif replicas != total * size:
        problems.append(
            f"{path}.replicas: {replicas} is not totalPartitions*partitionSize "
            f"({total}*{size}={total * size})"
        )
    else:
        min_available = optional_int(task.get("minAvailable"))
        # Only an explicit minPartitions ties minAvailable to it.
        explicit_gang = min_available is not None and min_partitions > 0
        if explicit_gang and min_available != min_partitions * size:
            problems.append(
                f"{path}.minAvailable: {min_available} is not minPartitions*partitionSize "
                f"({min_partitions}*{size}={min_partitions * size})"
            )
    problems += _network_topology(raw.get("networkTopology"), f"{where}.networkTopology")
    return problems


def _whole_cpus(task: Raw, path: str) -> list[str]:
    """``validateTaskTopoPolicy``: a NUMA policy pins whole cores, so every container asks for
    an integer number of CPUs (requests, or limits when it has no requests)."""
    policy = text(task.get("topologyPolicy"))
    if policy not in _TOPOLOGY_POLICIES:
        return [f"{path}.topologyPolicy: unknown policy {policy!r}"]
    if policy in ("", "none"):
        return []
    pod_spec = spec(mapping(task.get("template")))
    problems = []
    for key in ("containers", "initContainers"):
        for index, raw in enumerate(items(pod_spec.get(key))):
            resources = mapping(mapping(raw).get("resources"))
            amounts = mapping(resources.get("requests")) or mapping(resources.get("limits"))
            try:
                cpu = parse_quantity(amounts.get("cpu", 0))
            except QuantityError:
                cpu = None
            if cpu is None or cpu <= 0 or cpu != cpu.to_integral_value():
                problems.append(
                    f"{path}.template.spec.{key}[{index}].resources: topologyPolicy {policy} "
                    "needs an integer cpu request"
                )
    return problems


def _task(job: Raw, task: Raw, index: int, seen: set[str]) -> list[str]:
    path = f"spec.tasks[{index}]"
    task_name = text(task.get("name"))
    replicas = integer(task.get("replicas"))
    min_available = optional_int(task.get("minAvailable"))
    problems = []
    if replicas < 0:
        problems.append(f"{path}.replicas: must be >= 0 (got {replicas})")
    if min_available is not None and min_available < 0:
        problems.append(f"{path}.minAvailable: must be >= 0 (got {min_available})")
    elif min_available is not None and min_available > replicas:
        problems.append(f"{path}.minAvailable: {min_available} is greater than replicas {replicas}")
    if task_name in seen:
        problems.append(f"{path}.name: duplicate task name {task_name!r}")
    seen.add(task_name)
    # Upstream checks one pod name per task: the one with the task's position as index.
    pod_name = make_pod_name(name(job), task_name, index)
    problem = _name_problem(pod_name)
    if problem and name(job):
        problems.append(f"{path}.name: pod name {pod_name!r} {problem}")
    # ``validateTaskTemplate`` (Kubernetes' ValidatePodTemplate): a task without a template
    # has no containers.
    if not items(mapping(mapping(task.get("template")).get("spec")).get("containers")):
        problems.append(f"{path}.template.spec.containers: Required value")
    problems += _policies(task.get("policies"), f"{path}.policies")
    problems += _whole_cpus(task, path)
    problems += _partition(task, path)
    return problems


def _volumes(volumes: object) -> list[str]:
    problems = []
    mount_paths: set[str] = set()
    for index, raw in enumerate(items(volumes)):
        volume = mapping(raw)
        path = f"spec.volumes[{index}]"
        mount_path = text(volume.get("mountPath"))
        claim = text(volume.get("volumeClaimName"))
        if not mount_path:
            problems.append(f"{path}.mountPath: is required")
        elif mount_path in mount_paths:
            problems.append(f"{path}.mountPath: duplicated mountPath {mount_path!r}")
        mount_paths.add(mount_path)
        if volume.get("volumeClaim") is None and not claim:
            problems.append(f"{path}: either volumeClaim or volumeClaimName must be specified")
        if claim and volume.get("volumeClaim") is not None:
            problems.append(
                f"{path}: name an existing PVC with volumeClaimName or describe a new one with "
                "volumeClaim, not both"
            )
        elif claim and not _DNS_SUBDOMAIN.fullmatch(claim):
            problems.append(f"{path}.volumeClaimName: {claim!r} is not a valid PVC name")
    return problems


def _queue(job_spec: Raw, queues: Mapping[str, Mapping[str, Any]]) -> list[str]:
    queue_name = text(job_spec.get("queue"))
    queue = queues.get(queue_name)
    if queue is None:
        return [f"spec.queue: queue {queue_name!r} does not exist"]
    problems = []
    # A queue the queue controller has not synced yet has no state: it opens as Open.
    state = text(mapping(status(queue)).get("state")) or QueueState.OPEN
    if state != QueueState.OPEN:
        problems.append(
            f"spec.queue: can only submit job to queue with state `Open`, queue "
            f"`{queue_name}` status is `{state}`"
        )
    if queue_name == ROOT_QUEUE:
        problems.append("spec.queue: can not submit job to root queue")
        return problems
    children = sorted(n for n, q in queues.items() if text(spec(q).get("parent")) == queue_name)
    if children:
        problems.append(
            f"spec.queue: can only submit job to leaf queue, queue `{queue_name}` has "
            f"{len(children)} child queues ({', '.join(children)})"
        )
    return problems


def _dependencies(tasks: list[Raw]) -> list[str]:
    """``topoSort``: the tasks' ``dependsOn`` must name tasks of the job and form a DAG."""
    names = [text(t.get("name")) for t in tasks]
    known = set(names)
    problems = []
    edges: dict[str, list[str]] = {}
    for index, task in enumerate(tasks):
        depends_on = task.get("dependsOn")
        if not isinstance(depends_on, Mapping):
            continue
        targets = [text(n) for n in items(depends_on.get("name"))]
        for target in targets:
            if target not in known:
                problems.append(
                    f"spec.tasks[{index}].dependsOn.name: {target!r} is not a task of this job"
                )
        edges[names[index]] = [t for t in targets if t in known]
    if not edges:
        return problems
    # Imported here: job_rules brings the lifecycle models (pydantic), which a run of
    # jobs without dependencies, or of no jobs, never needs (volcano-py simulate's start).
    from volcano_py.models.job_rules import find_cycle

    cycle = find_cycle(edges)
    if cycle:
        index = names.index(cycle[0])
        problems.append(
            f"spec.tasks[{index}].dependsOn: job has dependencies between tasks, but doesn't "
            f"form a directed acyclic graph(DAG): {' -> '.join([*cycle, cycle[0]])}"
        )
    return problems


def _mpi_master(job_spec: Raw, task_names: list[str]) -> list[str]:
    plugins = mapping(job_spec.get("plugins"))
    if "mpi" not in plugins:
        return []
    arguments = [text(a) for a in items(plugins["mpi"])]
    values, _ = parse_go_flags(arguments, {"master": "master", "worker": "worker", "port": 22})
    master = str(values["master"])
    if master not in task_names:
        return [f"spec.plugins.mpi: the mpi master task {master!r} is not a task of this job"]
    return []


def validate_job(job: Mapping[str, Any], queues: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What Volcano refuses in a Job on create, one message per problem (empty: admitted).

    ``queues`` maps queue names to Queue objects. Validate after ``mutate_job``: defaults such
    as the queue name and the tasks' minAvailable are part of what is checked.
    """
    job_spec = spec(job)
    tasks = [mapping(t) for t in items(job_spec.get("tasks"))]
    if not tasks:
        return ["spec.tasks: no task specified in job spec"]
    problems: list[str] = []
    problems += _mpi_master(job_spec, [text(t.get("name")) for t in tasks])
    problems += _network_topology(job_spec.get("networkTopology"), "spec.networkTopology")
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        problems += _task(job, task, index, seen)
    job_problem = _name_problem(name(job))
    if job_problem and name(job):
        problems.append(f"metadata.name: job name {name(job)!r} {job_problem}")
    total = sum(integer(t.get("replicas")) for t in tasks)
    min_available = integer(job_spec.get("minAvailable"))
    if min_available < 0:
        problems.append(f"spec.minAvailable: must be >= 0 (got {min_available})")
    elif min_available > total:
        problems.append(
            f"spec.minAvailable: {min_available} should not be greater than total replicas in "
            f"tasks ({total})"
        )
    if integer(job_spec.get("maxRetry")) < 0:
        problems.append(f"spec.maxRetry: must be >= 0 (got {integer(job_spec.get('maxRetry'))})")
    problems += _policies(job_spec.get("policies"), "spec.policies")
    for plugin in sorted(mapping(job_spec.get("plugins"))):
        if plugin not in KNOWN_PLUGINS:
            problems.append(
                f"spec.plugins.{plugin}: unable to find job plugin {plugin!r} (known: "
                f"{', '.join(KNOWN_PLUGINS)})"
            )
    problems += _volumes(job_spec.get("volumes"))
    problems += _queue(job_spec, queues)
    problems += _dependencies(tasks)
    return problems
