"""Checking and defaulting the simulator's input the way the API server, Volcano's admission
webhooks and its controllers would, before anything runs: bad input stops here with a message
naming the file, the document, the object and the field, and nothing is half-applied."""

from __future__ import annotations

import copy
import functools
import logging
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeGuard

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.api.resource import Resource
from volcano_py.api.types import (
    DEFAULT_QUEUE,
    DEFAULT_SCHEDULER_NAME,
    KUBE_DEFAULT_SCHEDULER_NAME,
    ROOT_QUEUE,
)
from volcano_py.controllers.admission import (
    mutate_job,
    mutate_pod_group,
    mutate_queue,
    validate_job,
)
from volcano_py.models.object_meta_rules import metadata_problems
from volcano_py.models.registry import model_for
from volcano_py.models.strict_fields import (
    core_problems,
    core_type_of,
    custom_problems,
    strict_message,
)
from volcano_py.sim.batch_cronjobs import check_batch_cronjob
from volcano_py.sim.loader import Document, SimInputError
from volcano_py.sim.node_usage import usage_problem
from volcano_py.sim.runtimes import run_time_problem
from volcano_py.sim.tree_copy import tree_copy
from volcano_py.sim.workloads import check_workload, is_workload

log = logging.getLogger(__name__)

VOLCANO_KINDS: Final = {
    "Queue": "scheduling.volcano.sh/v1beta1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "Job": "batch.volcano.sh/v1alpha1",
    "CronJob": "batch.volcano.sh/v1alpha1",
    "JobFlow": "flow.volcano.sh/v1alpha1",
    "JobTemplate": "flow.volcano.sh/v1alpha1",
    "Command": "bus.volcano.sh/v1alpha1",
    "HyperNode": "topology.volcano.sh/v1alpha1",
    "Numatopology": "nodeinfo.volcano.sh/v1alpha1",
}
CORE_KINDS: Final = {
    "Node": "v1",
    "Pod": "v1",
    "Namespace": "v1",
    "ConfigMap": "v1",
    # What the job plugins make (and a cluster dump holds); stored, and handed to the job
    # controller as the objects it made, so it does not make them again.
    "Secret": "v1",
    "Service": "v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "ResourceQuota": "v1",
    # DRA: the devices a driver publishes, their classes, and the claims pods make on them.
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
}
DRA_KINDS: Final = frozenset(
    {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"}
)
CONF_KEY: Final = "volcano-scheduler.conf"
# Kubernetes is supported up to 150,000 pods in a cluster ("Considerations for large
# clusters", kubernetes.io/docs/setup/best-practices/cluster-large/). Neither the API server
# nor Volcano's webhook enforces it (replicas is only an int32), but a job past it describes
# no cluster that runs, and simulating it takes minutes (about 1.6 ms a replica): refused.
MAX_PODS_OF_A_JOB: Final = 150_000


@dataclass
class SimInput:
    objects: list[dict[str, Any]] = field(default_factory=list)
    conf_text: str | None = None
    conf_source: str = ""
    warnings: list[str] = field(default_factory=list)


def _check_quantities(document: Document, values: Any, path: str) -> None:
    if values is None:
        return
    if not isinstance(values, Mapping):
        raise document.error(path, f"expected a map of resource quantities, got {values!r}")
    for name, value in values.items():
        try:
            if type(value) is str:
                _check_quantity_text(str(name), value)
            else:
                _check_quantity(str(name), value)
        except QuantityError as error:
            raise document.error(f"{path}.{name}", str(error)) from None


def _check_quantity(name: str, value: Any) -> None:
    parse_quantity(value)
    # What the scheduler will count it in (milli-units for cpu) must fit in an int64.
    Resource.from_list({name: value})


# A dump spells its quantities a handful of ways: each (resource, spelling) is checked once
# (a refused one raises again on each call: lru_cache keeps only answers).
_check_quantity_text = functools.lru_cache(maxsize=4096)(_check_quantity)


def _check_pod_spec(document: Document, spec: Any, path: str) -> None:
    if not isinstance(spec, Mapping):
        raise document.error(path, "expected an object")
    for group in ("initContainers", "containers"):
        containers = spec.get(group) or []
        if not isinstance(containers, list):
            raise document.error(f"{path}.{group}", "expected a list")
        for index, container in enumerate(containers):
            if not isinstance(container, Mapping):
                raise document.error(f"{path}.{group}[{index}]", "expected a container object")
            resources = container.get("resources") or {}
            for part in ("requests", "limits"):
                _check_quantities(
                    document, resources.get(part), f"{path}.{group}[{index}].resources.{part}"
                )
    _check_quantities(document, spec.get("overhead"), f"{path}.overhead")


def _default_pod(document: Document) -> dict[str, Any]:
    # Defaulted in place, not copied: the document is ours and a dump holds tens of
    # thousands of pods (each copied object costs time and memory once more).
    pod = document.obj
    spec = pod.setdefault("spec", {})
    _check_pod_spec(document, spec, "spec")
    if not spec.get("containers"):
        raise document.error("spec.containers", "a pod needs at least one container")
    # The API server's default: the pod is kube-scheduler's, not ours, unless it says so.
    spec.setdefault("schedulerName", KUBE_DEFAULT_SCHEDULER_NAME)
    status = pod.setdefault("status", {})
    if not status.get("phase"):
        status["phase"] = "Running" if spec.get("nodeName") else "Pending"
    return pod


def _default_node(document: Document) -> dict[str, Any]:
    node = document.obj  # in place, as pods
    problem = usage_problem(node)
    if problem is not None:
        raise document.error(*problem)
    status = node.setdefault("status", {})
    _check_quantities(document, status.get("allocatable"), "status.allocatable")
    _check_quantities(document, status.get("capacity"), "status.capacity")
    if not status.get("allocatable") and not status.get("capacity"):
        raise document.error(
            "status.allocatable", "a node needs allocatable (or capacity) resources"
        )
    status.setdefault("allocatable", dict(status.get("capacity") or {}))
    status.setdefault("capacity", dict(status["allocatable"]))
    _check_images(document, status.get("images"))
    return node


def _check_images(document: Document, images: Any) -> None:
    """``status.images`` (read by nodeorder's ImageLocality): names and sizes."""
    if images is None:
        return
    if not isinstance(images, list):
        raise document.error("status.images", "expected a list")
    for index, image in enumerate(images):
        where = f"status.images[{index}]"
        if not isinstance(image, Mapping):
            raise document.error(where, "expected an object with names and sizeBytes")
        names = image.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise document.error(f"{where}.names", "expected a list of image names")
        size = image.get("sizeBytes", 0)
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise document.error(f"{where}.sizeBytes", f"expected a size in bytes, got {size!r}")


def _check_resource_quota(document: Document) -> dict[str, Any]:
    """What the API server checks of a ResourceQuota: quantities in spec.hard (and in a
    status given with it)."""
    obj = copy.deepcopy(document.obj)
    spec = obj.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise document.error("spec", "expected an object")
    _check_quantities(document, spec.get("hard"), "spec.hard")
    status = obj.get("status") or {}
    if not isinstance(status, Mapping):
        raise document.error("status", "expected an object")
    _check_quantities(document, status.get("hard"), "status.hard")
    _check_quantities(document, status.get("used"), "status.used")
    return obj


def _check_strict_fields(document: Document, api_version: str) -> None:
    """The API server's strict field validation (kubectl's default): an unknown field, or one
    of the wrong type, refuses the object before anything else looks at it; then its checks of
    every object's metadata (name, namespace, labels, annotations)."""
    kind = document.kind
    model = model_for(api_version, kind) if kind in VOLCANO_KINDS else None
    if model is not None:
        problems = custom_problems(document.obj, model)
    else:
        core_type = core_type_of(api_version or CORE_KINDS.get(kind, ""), kind)
        if core_type is None:
            return  # a kind simulate does not read (warned as such) or a wrong apiVersion
        problems = core_problems(document.obj, core_type)
    if problems:
        raise document.error("", strict_message(problems))
    meta_problems = metadata_problems(document.obj)
    if meta_problems:
        raise document.error("", meta_problems[0])


def _check_dra(document: Document, obj: Mapping[str, Any]) -> None:
    """What the API server checks of a DRA object beyond its fields: every CEL selector
    compiles, every request names a device class (or alternatives that do)."""
    from volcano_py.api.dra_cel import selector_problem

    spec = obj.get("spec") or {}
    prefix = "spec."
    if document.kind == "ResourceClaimTemplate":
        spec, prefix = (spec.get("spec") or {}), "spec.spec."

    def check_selectors(selectors: Any, where: str) -> None:
        for index, selector in enumerate(selectors or []):
            expression = ((selector or {}).get("cel") or {}).get("expression")
            if not isinstance(expression, str) or not expression:
                raise document.error(f"{where}[{index}].cel.expression", "Required value")
            problem = selector_problem(expression)
            if problem is not None:
                raise document.error(f"{where}[{index}].cel.expression", problem)

    if document.kind == "DeviceClass":
        check_selectors(spec.get("selectors"), "spec.selectors")
        return
    if document.kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return
    for index, request in enumerate((spec.get("devices") or {}).get("requests") or []):
        where = f"{prefix}devices.requests[{index}]"
        request = request or {}
        alternatives = request.get("firstAvailable")
        exactly = request.get("exactly")
        if bool(alternatives) == bool(exactly):
            raise document.error(where, "exactly one of `exactly` or `firstAvailable` is required")
        options = (
            [(f"{where}.exactly", exactly)]
            if exactly
            else [
                (f"{where}.firstAvailable[{i}]", a or {}) for i, a in enumerate(alternatives or [])
            ]
        )
        for at, option in options:
            if not option.get("deviceClassName"):
                raise document.error(f"{at}.deviceClassName", "Required value")
            mode = option.get("allocationMode") or "ExactCount"
            if mode not in ("ExactCount", "All"):
                raise document.error(
                    f"{at}.allocationMode",
                    f'Unsupported value: "{mode}": supported values: "All", "ExactCount"',
                )
            check_selectors(option.get("selectors"), f"{at}.selectors")


def _warn(result: SimInput, message: str) -> None:
    result.warnings.append(message)
    print(f"warning: {message}", file=sys.stderr)


def _check_flow_templates(
    jobflows: Sequence[tuple[Document, dict[str, Any]]], objects: Sequence[Mapping[str, Any]]
) -> None:
    """Every flow names a JobTemplate of the input: live, a missing one may be created later
    (the controller retries); here nothing comes later, so the flow would stall for ever."""
    templates = {
        (str(obj["metadata"].get("namespace") or "default"), str(obj["metadata"].get("name")))
        for obj in objects
        if obj.get("kind") == "JobTemplate"
    }
    for document, jobflow in jobflows:
        namespace = str(jobflow["metadata"].get("namespace") or "default")
        for index, flow in enumerate((jobflow.get("spec") or {}).get("flows") or []):
            if (namespace, str(flow.get("name"))) not in templates:
                raise document.error(
                    f"spec.flows[{index}].name",
                    f"no JobTemplate {namespace}/{flow.get('name')} in the input, so its job"
                    " could never be created",
                )


def _ignored_fields(document: Document) -> list[str]:
    """A JobFlow's probes and patches, which Volcano accepts and never reads."""
    if document.kind != "JobFlow":
        return []
    from volcano_py.models.jobflow import JobFlow, ignored_fields

    return ignored_fields(JobFlow.model_validate(document.obj))


def _validate_volcano(document: Document, scheduler_name: str) -> dict[str, Any]:
    from volcano_py.models.validation import ModelError, parse_object

    try:
        parse_object(document.obj)
    except ModelError as error:
        raise SimInputError(f"{document.where}: {error}") from None
    obj: dict[str, Any] = tree_copy(document.obj)
    # What Volcano's mutating admission webhooks would have filled in.
    if obj["kind"] == "Queue":
        obj = mutate_queue(obj)
        # And its queue controller, before the scheduler's first session: a Queue without a
        # state is set Open (the scheduler takes one without a state as not Open).
        status = obj.get("status")
        if not isinstance(status, dict):
            status = obj["status"] = {}
        if not status.get("state"):
            status["state"] = "Open"
    elif obj["kind"] == "Job":
        _check_job(document, obj)
        obj = mutate_job(obj, scheduler_name)
    elif obj["kind"] == "PodGroup":
        obj = mutate_pod_group(obj, None)
    return obj


def _check_job(document: Document, job: Mapping[str, Any]) -> None:
    spec = job.get("spec") or {}
    tasks = spec.get("tasks") or []
    if not tasks:
        raise document.error("spec.tasks", "a Volcano Job needs at least one task")
    _check_job_size(document, tasks)
    for index, task in enumerate(tasks):
        template = (task or {}).get("template") or {}
        _check_pod_spec(document, template.get("spec") or {}, f"spec.tasks[{index}].template.spec")


def _check_workload_size(document: Document) -> None:
    """A Deployment, ReplicaSet or StatefulSet of more replicas (a batch/v1 Job running more
    pods at once) than a cluster holds: refused as a Volcano Job of that size is."""
    workload_spec = document.obj.get("spec")
    field_name = "parallelism" if document.kind == "Job" else "replicas"
    count = workload_spec.get(field_name) if isinstance(workload_spec, Mapping) else None
    if isinstance(count, int) and not isinstance(count, bool) and count > MAX_PODS_OF_A_JOB:
        raise document.error(
            f"spec.{field_name}",
            f"{count} pods, more than {MAX_PODS_OF_A_JOB}, the most pods Kubernetes supports in"
            " one cluster (kubernetes.io/docs/setup/best-practices/cluster-large); simulate"
            " refuses larger workloads",
        )


def _check_job_size(document: Document, tasks: Sequence[Any]) -> None:
    total = 0
    for index, task in enumerate(tasks):
        replicas = (task or {}).get("replicas") if isinstance(task, Mapping) else None
        if isinstance(replicas, int) and not isinstance(replicas, bool):
            total += replicas
        if total > MAX_PODS_OF_A_JOB:
            raise document.error(
                f"spec.tasks[{index}].replicas",
                f"{total} pods in one job (this task and those before it), more than"
                f" {MAX_PODS_OF_A_JOB}, the most pods Kubernetes supports in one cluster"
                " (kubernetes.io/docs/setup/best-practices/cluster-large);"
                " simulate refuses larger jobs",
            )


def _default_cronjob(document: Document, cronjob: dict[str, Any]) -> None:
    """The CRD's defaults the API server fills in (history limits, concurrency policy), then
    what the job webhook would refuse in every job the template makes."""
    from volcano_py.controllers.cronjob_validation import template_problems

    cron_spec = cronjob.setdefault("spec", {})
    cron_spec.setdefault("concurrencyPolicy", "Allow")
    cron_spec.setdefault("suspend", False)
    cron_spec.setdefault("successfulJobsHistoryLimit", 3)
    cron_spec.setdefault("failedJobsHistoryLimit", 1)
    problems = template_problems(cronjob, DEFAULT_SCHEDULER_NAME)
    if problems:
        raise SimInputError(f"{document.where}: {document.label}: {problems[0]}")


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    # ``type(...) is dict`` first: JSON objects are dicts, and the ABC check is slow.
    return type(value) is dict or isinstance(value, Mapping)


def _pod_templates(obj: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(path, pod template or pod) of every pod an object is or makes, for the run-time
    annotations (which sit on a pod or on the template its pods are made from)."""
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return [("", obj)]
    if kind == "Job" and isinstance(spec, Mapping) and "tasks" in spec:
        return [
            (f"spec.tasks[{index}].template.", (task or {}).get("template") or {})
            for index, task in enumerate(spec.get("tasks") or [])
            if isinstance(task, Mapping)
        ]
    if kind == "CronJob" and isinstance(spec, Mapping):
        job_spec = (spec.get("jobTemplate") or {}).get("spec") or {}
        if isinstance(job_spec.get("template"), Mapping):  # batch/v1: one pod template
            return [("spec.jobTemplate.spec.template.", job_spec["template"])]
        return [
            (f"spec.jobTemplate.spec.tasks[{index}].template.", (task or {}).get("template") or {})
            for index, task in enumerate(job_spec.get("tasks") or [])
            if isinstance(task, Mapping)
        ]
    if _is_mapping(spec) and _is_mapping(spec.get("template")):
        return [("spec.template.", spec["template"])]
    return []


def _check_run_times(document: Document, obj: Mapping[str, Any]) -> None:
    """The ``volcano-py.sim/`` run-time annotations and ``activeDeadlineSeconds``: integers,
    never negative (docs/simulate.md, "Between cycles")."""
    for prefix, template in _pod_templates(obj):
        if not _is_mapping(template):
            continue
        annotations = (template.get("metadata") or {}).get("annotations") or {}
        pod_spec = template.get("spec") or {}
        problem = run_time_problem(
            annotations if _is_mapping(annotations) else {},
            pod_spec if _is_mapping(pod_spec) else None,
        )
        if problem is not None:
            raise document.error(prefix + problem[0], problem[1])


def _check_queue_tree(queues: Sequence[tuple[Document, dict[str, Any]]]) -> None:
    """What the queue webhook checks against the other queues: the parent exists, a child
    asks no more than its parent, the children's guarantees fit in the parent's."""
    from volcano_py.models.queue_hierarchy import validate_queue_hierarchy

    tree = {str(obj["metadata"]["name"]): obj for _document, obj in queues}
    if "root" not in tree:
        tree["root"] = {"metadata": {"name": "root"}, "spec": {"weight": 1}}
    for document, obj in queues:
        # Proportion-style queues (weight + guarantee, as seed 000 writes them) need no
        # `deserved`; Volcano's newest webhook asks for one, earlier releases did not.
        problems = validate_queue_hierarchy(obj, tree, require_deserved_for_guarantee=False)
        if problems:
            raise SimInputError(f"{document.where}: {problems[0]}")


def _check_jobs_admitted(
    jobs: Sequence[tuple[Document, dict[str, Any]]],
    pod_groups: Sequence[tuple[Document, dict[str, Any]]],
    queues: Sequence[tuple[Document, dict[str, Any]]],
) -> None:
    """The job webhook's validation on create (``validate_job``, as the live webhook runs it),
    against the queues of the input and the two the scheduler makes when they are missing: a
    job in a queue that does not exist or is not Open, a task without containers, duplicate
    task names, an unknown job plugin ... is refused as the cluster would refuse it; likewise
    a new PodGroup in a queue that is not Open."""
    by_name: dict[str, Mapping[str, Any]] = {
        str(obj["metadata"]["name"]): obj for _document, obj in queues
    }
    for name in (ROOT_QUEUE, DEFAULT_QUEUE):
        by_name.setdefault(name, {"metadata": {"name": name}, "status": {"state": "Open"}})
    for document, group in pod_groups:
        # The podgroup webhook: its queue must be Open. (One that does not exist is taken: the
        # group stays unplaced and says so, SIMULATION.md "Admission and bad input".)
        queue_name = str((group.get("spec") or {}).get("queue") or DEFAULT_QUEUE)
        queue = by_name.get(queue_name)
        state = str(((queue or {}).get("status") or {}).get("state") or "Open")
        if queue is not None and not group.get("status") and state != "Open":
            raise document.error(
                "spec.queue",
                "admission webhook denied the request: can only submit PodGroup to queue with"
                f" state `Open`, queue `{queue_name}` status is `{state}`",
            )
    for document, job in jobs:
        if job.get("status"):
            continue  # a dump's job: admitted when it was created (the queue may close later)
        problems = validate_job(job, by_name)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise document.error("", f"admission webhook denied the request: {problems[0]}{more}")


def read_inputs(
    documents: Sequence[Document], scheduler_names: Sequence[str] = (DEFAULT_SCHEDULER_NAME,)
) -> SimInput:
    """Validate and default every document; unknown kinds are reported and skipped. Pods and
    nodes are defaulted in place: the returned objects are the documents' own.
    ``scheduler_names``: the scheduler's (``--scheduler-name``); the first is the one Volcano's
    job webhook writes into a job without ``schedulerName``."""
    result = SimInput()
    queues: list[tuple[Document, dict[str, Any]]] = []
    jobs: list[tuple[Document, dict[str, Any]]] = []
    pod_groups: list[tuple[Document, dict[str, Any]]] = []
    jobflows: list[tuple[Document, dict[str, Any]]] = []
    for document in documents:
        kind = document.kind
        api_version = str(document.obj.get("apiVersion", ""))
        _check_strict_fields(document, api_version)
        if (api_version, kind) == ("batch/v1", "CronJob"):  # not Volcano's either
            obj, notes = check_batch_cronjob(
                document, lambda job: check_workload(job, _check_pod_spec)
            )
            for note in notes:
                _warn(result, note)
        elif is_workload(api_version, kind):  # before VOLCANO_KINDS: batch/v1 Job is not Volcano's
            _check_workload_size(document)
            obj, notes = check_workload(document, _check_pod_spec)
            for note in notes:
                result.warnings.append(note)
                print(f"warning: {note}", file=sys.stderr)
        elif kind in VOLCANO_KINDS:
            obj = _validate_volcano(document, scheduler_names[0])
            for problem in _ignored_fields(document):
                _warn(result, f"{document.where}: {document.label}: {problem}")
            if kind == "CronJob":
                _default_cronjob(document, obj)
            if kind == "JobFlow":
                jobflows.append((document, obj))
            if kind == "Queue":
                queues.append((document, obj))
            if kind == "Job":
                jobs.append((document, obj))
            if kind == "PodGroup":
                pod_groups.append((document, obj))
        elif kind in CORE_KINDS:
            expected = CORE_KINDS[kind]
            if (
                api_version
                and api_version != expected
                and not (kind == "PodDisruptionBudget" and api_version == "policy/v1beta1")
            ):
                raise document.error("apiVersion", f"expected {expected}, got {api_version!r}")
            if kind == "Pod":
                obj = _default_pod(document)
            elif kind == "Node":
                obj = _default_node(document)
            elif kind == "ResourceQuota":
                obj = _check_resource_quota(document)
            elif kind in DRA_KINDS:
                obj = copy.deepcopy(document.obj)
                _check_dra(document, obj)
            elif kind == "PriorityClass":
                obj = copy.deepcopy(document.obj)
                if not isinstance(obj.get("value"), int) or isinstance(obj.get("value"), bool):
                    raise document.error("value", "a PriorityClass needs an integer value")
            else:
                obj = copy.deepcopy(document.obj)
            if kind == "ConfigMap":
                data = obj.get("data") or {}
                if isinstance(data, Mapping) and CONF_KEY in data:
                    result.conf_text = str(data[CONF_KEY])
                    result.conf_source = f"{document.where}: {document.label}: data.{CONF_KEY}"
        else:
            message = (
                f"{document.where}: {document.label}: kind {api_version} {kind} is not"
                " simulated; ignored"
            )
            result.warnings.append(message)
            print(f"warning: {message}", file=sys.stderr)
            continue
        _check_run_times(document, obj)
        result.objects.append(obj)
    _check_queue_tree(queues)
    _check_jobs_admitted(jobs, pod_groups, queues)
    _check_flow_templates(jobflows, result.objects)
    return result
