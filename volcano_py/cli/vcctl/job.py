"""``vcctl job run|list|view|suspend|resume|delete`` and the job parts of vsub, vjobs, vcancel,
vsuspend and vresume (upstream's pkg/cli/job, vsub, vjobs, vcancel, vsuspend, vresume).

The printers take raw API objects and return text, so the tables are tested without a server.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import yaml

from volcano_py.cli.vcctl.client import Client, CommandError
from volcano_py.cli.vcctl.formatting import (
    canonical_quantity,
    go_date,
    go_json,
    go_list,
    go_time,
    resource_list,
    since,
)

BATCH: Final = "/apis/batch.volcano.sh/v1alpha1"
BUS: Final = "/apis/bus.volcano.sh/v1alpha1"
JOB_TYPE_KEY: Final = "volcano.sh/job-type"
# The label upstream's run puts on the pod template (``jobName`` in pkg/cli/job/run.go).
RUN_TEMPLATE_LABEL: Final = "job.volcano.sh"
ABORT_JOB: Final = "AbortJob"
RESUME_JOB: Final = "ResumeJob"
NO_RESOURCES: Final = "No resources found\n"


def jobs_path(namespace: str) -> str:
    return f"{BATCH}/namespaces/{namespace}/jobs" if namespace else f"{BATCH}/jobs"


def job_path(namespace: str, name: str) -> str:
    return f"{jobs_path(namespace)}/{name}"


# ------------------------------------------------------------------------------------- run


def read_job_file(filename: str) -> dict[str, Any] | None:
    """Upstream's ``readFile``: only a name containing .yaml or .yml; its one Job."""
    if filename == "":
        return None
    if ".yaml" not in filename and ".yml" not in filename:
        raise CommandError("only support yaml file")
    try:
        text = Path(filename).read_text()
    except OSError as error:
        raise CommandError(f"failed to read file, err: {_os_error(filename, error)}") from None
    try:
        job = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise CommandError(f"failed to unmarshal file, err:  {error}") from None
    if job is None:
        job = {}
    if not isinstance(job, dict):
        raise CommandError(
            "failed to unmarshal file, err:  the file holds a "
            f"{type(job).__name__}, not a Job object"
        )
    job.setdefault("apiVersion", "batch.volcano.sh/v1alpha1")
    job.setdefault("kind", "Job")
    return job


def _os_error(path: str, error: OSError) -> str:
    reason = (error.strerror or str(error)).lower()
    return f"open {path}: {reason}"


def job_from_flags(
    name: str,
    namespace: str,
    image: str,
    min_available: int,
    replicas: int,
    requests: Mapping[str, str],
    limits: Mapping[str, str],
    scheduler: str,
    command: Sequence[str] = (),
) -> dict[str, Any]:
    """Upstream's ``constructLaunchJobFlagsJob``, as the Go client would send it (zero values
    and empty lists left out)."""
    resources: dict[str, Any] = {}
    if limits:
        resources["limits"] = dict(limits)
    if requests:
        resources["requests"] = dict(requests)
    container: dict[str, Any] = {"name": name, "image": image}
    if command:
        container["command"] = list(command)
    container["resources"] = resources
    container["imagePullPolicy"] = "IfNotPresent"
    spec: dict[str, Any] = {"schedulerName": scheduler}
    if min_available:
        spec["minAvailable"] = min_available
    task: dict[str, Any] = {}
    if replicas:
        task["replicas"] = replicas
    task["template"] = {
        "metadata": {"name": name, "labels": {RUN_TEMPLATE_LABEL: name}},
        "spec": {"containers": [container], "restartPolicy": "Never"},
    }
    spec["tasks"] = [task]
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def parse_resources(requests: str, limits: str) -> tuple[dict[str, str], dict[str, str]]:
    try:
        return resource_list(requests), resource_list(limits)
    except ValueError as error:
        raise CommandError(str(error)) from None


async def run_job(client: Client, opts: Mapping[str, Any], *, from_file: bool) -> str:
    """``vcctl job run`` (``from_file``) and ``vsub`` (``--command``, no file)."""
    filename = str(opts.get("filename", "")) if from_file else ""
    if opts["name"] == "" and filename == "":
        raise CommandError("job name cannot be left blank")
    requests, limits = parse_resources(str(opts["requests"]), str(opts["limits"]))
    job = read_job_file(filename)
    if job is None:
        command: list[str] = []
        if opts.get("command"):
            try:
                command = shlex.split(str(opts["command"]))
            except ValueError as error:
                raise CommandError(str(error)) from None
        job = job_from_flags(
            str(opts["name"]),
            str(opts["namespace"]),
            str(opts["image"]),
            int(opts["min"]),
            int(opts["replicas"]),
            requests,
            limits,
            str(opts["scheduler"]),
            command,
        )
    created = await client.create(jobs_path(str(opts["namespace"])), job)
    return f"run job {(created.get('metadata') or {}).get('name', '')} successfully\n"


def vsub_defaults(opts: dict[str, Any], environ: Mapping[str, str] = os.environ) -> None:
    """vsub's ``setDefaultArgs``: an empty --scheduler, --image or --namespace takes
    VOLCANO_SCHEDULER_NAME, VOLCANO_DEFAULT_IMAGE, VOLCANO_DEFAULT_JOB_NAMESPACE, else
    volcano, busybox, default."""
    for key, variable, fallback in (
        ("scheduler", "VOLCANO_SCHEDULER_NAME", "volcano"),
        ("image", "VOLCANO_DEFAULT_IMAGE", "busybox"),
        ("namespace", "VOLCANO_DEFAULT_JOB_NAMESPACE", "default"),
    ):
        if not opts.get(key):
            opts[key] = environ.get(variable) or fallback


# ------------------------------------------------------------------------------------ list

_TITLE: Final = (
    "Name",
    "Creation",
    "Phase",
    "JobType",
    "Replicas",
    "Min",
    "Pending",
    "Running",
    "Succeeded",
    "Failed",
    "Unknown",
    "RetryCount",
)
# Widths after the Name column: %-15s%-12s%-12s%-12d%-6d%-10d%-10d%-12d%-10d%-12d%-10d.
_WIDTHS: Final = (15, 12, 12, 12, 6, 10, 10, 12, 10, 12, 10)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def column_widths(jobs: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """Upstream's ``getMaxLen``: the widest name and namespace (at least their titles), + 3."""
    name_width, namespace_width = len("Name"), len("Namespace")
    for job in jobs:
        name_width = max(name_width, len(str(_meta(job).get("name", ""))))
        namespace_width = max(namespace_width, len(str(_meta(job).get("namespace", ""))))
    return name_width + 3, namespace_width + 3


def _row(cells: Sequence[object], widths: Sequence[int]) -> str:
    return "".join(str(cell).ljust(width) for cell, width in zip(cells, widths, strict=True))


def print_jobs(
    jobs: Sequence[Mapping[str, Any]],
    all_namespaces: bool,
    shown: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """Upstream's ``PrintJobs``: widths from ``jobs``, rows for ``shown`` (default all)."""
    name_width, namespace_width = column_widths(jobs)
    widths = [name_width, *_WIDTHS]
    titles: list[object] = list(_TITLE)
    if all_namespaces:
        widths.insert(0, namespace_width)
        titles.insert(0, "Namespace")
    lines = [_row(titles, widths)]
    for job in jobs if shown is None else shown:
        meta, status, spec = _meta(job), _status(job), job.get("spec") or {}
        replicas = sum(_int(task.get("replicas")) for task in spec.get("tasks") or [])
        job_type = (meta.get("labels") or {}).get(JOB_TYPE_KEY) or "Batch"
        cells: list[object] = [
            meta.get("name", ""),
            go_date(meta.get("creationTimestamp")),
            (status.get("state") or {}).get("phase", ""),
            job_type,
            replicas,
            _int(status.get("minAvailable")),
            _int(status.get("pending")),
            _int(status.get("running")),
            _int(status.get("succeeded")),
            _int(status.get("failed")),
            _int(status.get("unknown")),
            _int(status.get("retryCount")),
        ]
        if all_namespaces:
            cells.insert(0, meta.get("namespace", ""))
        lines.append(_row(cells, widths))
    return "".join(line + "\n" for line in lines)


def job_filter(queue: str, scheduler: str, selector: str) -> Any:
    def keep(job: Mapping[str, Any]) -> bool:
        spec = job.get("spec") or {}
        if queue and queue != spec.get("queue", ""):
            return False
        if scheduler and scheduler != spec.get("schedulerName", ""):
            return False
        return not (selector and selector not in str(_meta(job).get("name", "")))

    return keep


async def list_jobs(client: Client, opts: Mapping[str, Any]) -> str:
    """``vcctl job list``: filtered by --queue, --scheduler and --selector, then printed."""
    all_namespaces = bool(opts["all_namespaces"])
    jobs = await client.list(jobs_path("" if all_namespaces else str(opts["namespace"])))
    keep = job_filter(str(opts["queue"]), str(opts["scheduler"]), str(opts["selector"]))
    kept = [job for job in jobs if keep(job)]
    if not kept:
        return NO_RESOURCES
    return print_jobs(kept, all_namespaces)


async def vjobs_list(client: Client, opts: Mapping[str, Any]) -> str:
    """``vjobs`` without --name: upstream filters while printing (widths from every job)."""
    all_namespaces = bool(opts["all_namespaces"])
    jobs = await client.list(jobs_path("" if all_namespaces else str(opts["namespace"])))
    if not jobs:
        return NO_RESOURCES
    keep = job_filter("", str(opts["scheduler"]), str(opts["selector"]))
    return print_jobs(jobs, all_namespaces, [job for job in jobs if keep(job)])


# ------------------------------------------------------------------------------------ view


class _Lines:
    """Upstream's ``WriteLine``: two spaces of indent per level."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def __call__(self, level: int, text: str) -> None:
        self.parts.append("  " * level + text)

    def text(self) -> str:
        return "".join(self.parts)


def print_job_info(job: Mapping[str, Any], *, conditions: bool = True) -> str:
    """Upstream's ``PrintJobInfo`` (``vjobs`` leaves out the conditions)."""
    out = _Lines()
    meta, spec, status = _meta(job), job.get("spec") or {}, _status(job)
    out(0, f"Name:       \t{meta.get('name', '')}\n")
    out(0, f"Namespace:  \t{meta.get('namespace', '')}\n")
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    out(0, f"Labels:     \t{go_json(labels) if labels else '<none>'}\n")
    out(0, f"Annotations:\t{go_json(annotations) if annotations else '<none>'}\n")
    out(0, f"API Version:\t{job.get('apiVersion', '')}\n")
    out(0, f"Kind:       \t{job.get('kind', '')}\n")
    out(0, "Metadata:\n")
    out(1, f"Creation Timestamp:\t{go_time(meta.get('creationTimestamp'))}\n")
    out(1, f"Generate Name:     \t{meta.get('generateName', '')}\n")
    out(1, f"Generation:        \t{_int(meta.get('generation'))}\n")
    out(1, f"Resource Version:  \t{meta.get('resourceVersion', '')}\n")
    out(1, f"UID:               \t{meta.get('uid', '')}\n")
    out(0, "Spec:\n")
    out(1, f"Min Available:     \t{_int(spec.get('minAvailable'))}\n")
    out(1, "Plugins:\n")
    plugins = spec.get("plugins") or {}
    out(2, f"Env:\t{go_list(plugins.get('env'))}\n")
    out(2, f"Ssh:\t{go_list(plugins.get('ssh'))}\n")
    out(1, f"Scheduler Name:    \t{spec.get('schedulerName', '')}\n")
    out(1, "Tasks:\n")
    for task in spec.get("tasks") or []:
        _print_task(out, task)
    out(0, "Status:\n")
    for key, title in (
        ("succeeded", "Succeeded:    "),
        ("pending", "Pending:      "),
        ("running", "Running:      "),
        ("failed", "Failed:       "),
        ("terminating", "Terminating:  "),
        ("unknown", "Unknown:      "),
        ("retryCount", "RetryCount:   "),
        ("minAvailable", "Min Available:"),
        ("version", "Version:      "),
    ):
        if _int(status.get(key)) > 0:
            out(1, f"{title}\t{_int(status.get(key))}\n")
    out(1, "State:\n")
    out(2, f"Phase:\t{(status.get('state') or {}).get('phase', '')}\n")
    controlled = status.get("controlledResources") or {}
    if controlled:
        out(1, "Controlled Resources:\n")
        for key in sorted(controlled):  # Go ranges over the map in random order
            out(2, f"{key}: \t{controlled[key]}\n")
    if conditions and status.get("conditions"):
        out(1, "Conditions:\n    Status\tTransitionTime\n")
        for condition in status["conditions"]:
            stamp = condition.get("lastTransitionTime")
            out(2, f"{condition.get('status', '')} \t{go_time(stamp) if stamp else '<nil>'} \n")
    return out.text()


def _print_task(out: _Lines, task: Mapping[str, Any]) -> None:
    template = task.get("template") or {}
    template_meta, pod = template.get("metadata") or {}, template.get("spec") or {}
    annotations = template_meta.get("annotations") or {}
    out(2, f"Name:\t{task.get('name', '')}\n")
    out(2, f"Replicas:\t{_int(task.get('replicas'))}\n")
    out(2, "Template:\n")
    out(3, "Metadata:\n")
    out(4, "Annotations:\n")
    out(
        5,
        "Cri . Cci . Io / Container - Type:          \t"
        f"{annotations.get('cri.cci.io/container-type', '')}\n",
    )
    out(
        5,
        "Kubernetes . Io / Availablezone:            \t"
        f"{annotations.get('kubernetes.io/availablezone', '')}\n",
    )
    out(
        5,
        "Network . Alpha . Kubernetes . Io / Network:\t"
        f"{annotations.get('network.alpha.kubernetes.io/network', '')}\n",
    )
    out(4, f"Creation Timestamp:\t{go_time(template_meta.get('creationTimestamp'))}\n")
    out(3, "Spec:\n")
    out(4, "Containers:\n")
    for container in pod.get("containers") or []:
        out(5, "Command:\n")
        for word in container.get("command") or []:
            out(6, f"{word}\n")
        out(5, f"Image:\t{container.get('image', '')}\n")
        out(5, f"Name: \t{container.get('name', '')}\n")
        out(5, "Ports:\n")
        for port in container.get("ports") or []:
            out(6, f"Container Port:\t{_int(port.get('containerPort'))}\n")
            out(6, f"Name:          \t{port.get('name', '')}\n")
        resources = container.get("resources") or {}
        limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
        out(5, "Resources:\n")
        out(6, "Limits:\n")
        out(7, f"Cpu:   \t{_quantity(limits.get('cpu'))}\n")
        out(7, f"Memory:\t{_quantity(limits.get('memory'))}\n")
        out(6, "Requests:\n")
        out(7, f"Cpu:   \t{_quantity(requests.get('cpu'))}\n")
        out(7, f"Memory:\t{_quantity(requests.get('memory'))}\n")
        out(6, f"Working Dir:\t{container.get('workingDir', '')}\n")
    out(4, "Image Pull Secrets:\n")
    for secret in pod.get("imagePullSecrets") or []:
        out(5, f"Name:     \t{secret.get('name', '')}\n")
    out(4, f"Restart Policy:   \t{pod.get('restartPolicy', '')}\n")


def _quantity(value: Any) -> str:
    try:
        return canonical_quantity(value)
    except ValueError:
        return str(value)  # the API server validated it; show it as stored rather than fail


def print_events(events: Sequence[Mapping[str, Any]], now: datetime | None = None) -> str:
    """Upstream's ``PrintEvents`` (its ``Form`` column title included)."""
    if not events:
        return "Events: \t<none>\n"
    lines = [
        "Events:\n" + _event_row("Type", "Reason", "Age", "Form", "Message"),
        _event_row("-------", "-------", "-------", "-------", "-------"),
    ]
    for event in events:
        count = _int(event.get("count"))
        first = since(event.get("firstTimestamp"), now)
        interval = (
            f"{since(event.get('lastTimestamp'), now)} (x{count} over {first})"
            if count > 1
            else first
        )
        source = event.get("source") or {}
        origin = [str(source.get("component", ""))]
        if source.get("host"):
            origin.append(str(source["host"]))
        lines.append(
            _event_row(
                str(event.get("type", "")),
                str(event.get("reason", "")),
                interval,
                ", ".join(origin),
                str(event.get("message", "")).strip(),
            )
        )
    return "".join(lines)


def _event_row(kind: str, reason: str, age: str, origin: str, message: str) -> str:
    return f"{kind:<15}\t{reason:<40}\t{age:<30}\t{origin:<40}\t{message}\n"


async def job_events(client: Client, namespace: str, job_name: str) -> tuple[list[Any], str]:
    """The namespace's events whose name starts with ``<job>.``; a failure to list them is
    reported on stderr and leaves the view without events, as upstream."""
    try:
        events = await client.list(f"/api/v1/namespaces/{namespace}/events")
    except CommandError as error:
        return [], f"Failed to list events: {error}\n"
    prefix = job_name + "."
    return [e for e in events if str(_meta(e).get("name", "")).startswith(prefix)], ""


async def view_job(client: Client, opts: Mapping[str, Any], *, vjobs: bool = False) -> str:
    name, namespace = str(opts["name"]), str(opts["namespace"])
    if name == "":
        if vjobs:
            return await vjobs_list(client, opts)
        raise CommandError(
            "job name (specified by --name or -N) is mandatory to view a particular job"
        )
    job = await client.get(job_path(namespace, name))
    events, warning = await job_events(client, namespace, str(_meta(job).get("name", name)))
    if warning:
        sys.stderr.write(warning)
    return print_job_info(job, conditions=not vjobs) + print_events(events)


# ------------------------------------------------------------------- suspend, resume, delete


def controller_ref(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``metav1.NewControllerRef``."""
    meta = _meta(obj)
    return {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def command_for(target: Mapping[str, Any], action: str, namespace: str) -> dict[str, Any]:
    """The bus.volcano.sh Command upstream's ``CreateJobCommand`` and ``createQueueCommand``
    make: ``<name>-<action>-`` generated name, owned by and targeting the object."""
    ref = controller_ref(target)
    metadata: dict[str, Any] = {"generateName": f"{ref['name']}-{action.lower()}-"}
    if namespace:
        metadata["namespace"] = namespace
    metadata["ownerReferences"] = [ref]
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": metadata,
        "action": action,
        "target": ref,
    }


async def job_command(client: Client, opts: Mapping[str, Any], action: str, verb: str) -> str:
    """``suspend`` (AbortJob) or ``resume`` (ResumeJob): a Command for the job controller.
    Upstream prints nothing on success."""
    name, namespace = str(opts["name"]), str(opts["namespace"])
    if name == "":
        raise CommandError(f"job name is mandatory to {verb} a particular job")
    job = await client.get(job_path(namespace, name))
    job.setdefault("apiVersion", "batch.volcano.sh/v1alpha1")
    job.setdefault("kind", "Job")
    job_namespace = str(_meta(job).get("namespace", ""))
    await client.create(
        f"{BUS}/namespaces/{namespace}/commands", command_for(job, action, job_namespace)
    )
    return ""


async def delete_job(client: Client, opts: Mapping[str, Any], *, verb: str = "delete") -> str:
    """``vcctl job delete`` (``delete job X successfully``) and ``vcancel`` (``cancel ...``)."""
    name = str(opts["name"])
    if name == "":
        raise CommandError(f"job name is mandatory to {verb} a particular job")
    await client.delete(job_path(str(opts["namespace"]), name))
    return f"{verb} job {name} successfully\n"
