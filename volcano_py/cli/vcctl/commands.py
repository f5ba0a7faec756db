"""Every vcctl command: its place in the tree, upstream's short help and flags, and what it runs.

The flags are upstream's, name for name (long, shorthand, default, help): note that the same
letter means different things in different commands, as upstream (``-n`` is the namespace for
``job``, ``jobflow``, ``jobtemplate`` and ``pod``, but the queue's name for ``queue``, and the
job's name for vsub, vjobs, vcancel, vsuspend and vresume, where ``-N`` is the namespace).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.cli.vcctl import flow, job, pod, queue
from volcano_py.cli.vcctl.client import Client
from volcano_py.cli.vcctl.flags import Flag, master_and_kubeconfig

Run = Callable[[Client, Mapping[str, Any]], Awaitable[str]]


@dataclass(frozen=True)
class Command:
    """A runnable command: ``vcctl <group> <verb>`` or a standalone tool (``vsub``)."""

    path: tuple[str, ...]
    short: str
    flags: list[Flag]
    run: Run
    long: str = ""
    prepare: Callable[[dict[str, Any]], None] | None = field(default=None)

    @property
    def failure_prefix(self) -> str:
        """Upstream's ``CheckError``: ``Failed to`` and the command's names from the leaf up,
        the root left out (``Failed to run job``; a standalone tool is its own root)."""
        names = list(reversed(self.path[1:]))
        return "Failed to" + "".join(f" {name}" for name in names)


def _common(*flags: Flag) -> list[Flag]:
    return [*master_and_kubeconfig(), *flags]


def _ns(noun: str, short: str = "n") -> Flag:
    return Flag("namespace", short, "string", "default", f"the namespace of {noun}")


def _name(noun: str, short: str = "N", default: str = "") -> Flag:
    return Flag("name", short, "string", default, f"the name of {noun}")


def _job_commands() -> list[Command]:
    return [
        Command(
            ("vcctl", "job", "run"),
            "run job by parameters from the command line",
            _common(
                Flag("image", "i", "string", "busybox", "the container image of job"),
                _ns("job"),
                _name("job"),
                Flag("min", "m", "int", 1, "the minimal available tasks of job"),
                Flag("replicas", "r", "int", 1, "the total tasks of job"),
                Flag(
                    "requests",
                    "R",
                    "string",
                    "cpu=1000m,memory=100Mi",
                    "the resource request of the task",
                ),
                Flag(
                    "limits",
                    "L",
                    "string",
                    "cpu=1000m,memory=100Mi",
                    "the resource limit of the task",
                ),
                Flag("scheduler", "S", "string", "volcano", "the scheduler for this job"),
                Flag("filename", "f", "string", "", "the yaml file of job"),
            ),
            lambda c, o: job.run_job(c, o, from_file=True),
        ),
        Command(
            ("vcctl", "job", "list"),
            "list job information",
            _common(
                Flag("queue", "q", "string", "", "list job with specified queue name"),
                _ns("job"),
                Flag("scheduler", "S", "string", "", "list job with specified scheduler name"),
                Flag("all-namespaces", "", "bool", False, "list jobs in all namespaces"),
                Flag("selector", "", "string", "", "fuzzy matching jobName"),
            ),
            job.list_jobs,
        ),
        Command(
            ("vcctl", "job", "view"),
            "show job information",
            _common(_ns("job"), _name("job")),
            job.view_job,
        ),
        Command(
            ("vcctl", "job", "suspend"),
            "abort a job",
            _common(_ns("job"), _name("job")),
            lambda c, o: job.job_command(c, o, job.ABORT_JOB, "suspend"),
        ),
        Command(
            ("vcctl", "job", "resume"),
            "resume a job",
            _common(_ns("job"), _name("job")),
            lambda c, o: job.job_command(c, o, job.RESUME_JOB, "resume"),
        ),
        Command(
            ("vcctl", "job", "delete"),
            "delete a job",
            _common(_ns("job"), _name("job")),
            job.delete_job,
        ),
    ]


def _queue_commands() -> list[Command]:
    return [
        Command(
            ("vcctl", "queue", "create"),
            "creates queue",
            _common(
                _name("queue", "n", "test"),
                Flag("weight", "w", "int32", 1, "the weight of the queue"),
                Flag("state", "S", "string", "Open", "the state of queue"),
            ),
            queue.create_queue,
        ),
        Command(
            ("vcctl", "queue", "delete"),
            "delete queue",
            _common(_name("queue", "n")),
            queue.delete_queue,
        ),
        Command(
            ("vcctl", "queue", "operate"),
            "operate queue",
            _common(
                _name("queue", "n"),
                Flag("weight", "w", "int32", 0, "the weight of the queue"),
                Flag(
                    "action",
                    "a",
                    "string",
                    "",
                    "operate action to queue, valid actions are open, close, update",
                ),
            ),
            queue.operate_queue,
        ),
        Command(("vcctl", "queue", "list"), "lists all the queue", _common(), queue.list_queues),
        Command(
            ("vcctl", "queue", "get"),
            "get a queue",
            _common(_name("queue", "n")),
            queue.get_queue,
        ),
    ]


def _flow_commands(kind: flow.FlowKind, group: str) -> list[Command]:
    noun = kind.noun
    file_flag = Flag("file", "f", "string", "", f"the path to the YAML file containing the {noun}")
    list_flags = [_ns(noun)]
    if kind.has_phase:  # upstream's jobtemplate list has no --all-namespaces
        list_flags.append(
            Flag("all-namespaces", "", "bool", False, f"list {group}s in all namespaces")
        )
    return [
        Command(
            ("vcctl", group, "create"),
            f"create a {group}",
            _common(file_flag),
            lambda c, o: flow.create_flows(c, kind, o),
        ),
        Command(
            ("vcctl", group, "list"),
            f"list {group}s",
            _common(*list_flags),
            lambda c, o: flow.list_flows(c, kind, o),
        ),
        Command(
            ("vcctl", group, "get"),
            f"get a {group}",
            _common(_name(noun), _ns(noun)),
            lambda c, o: flow.get_flow(c, kind, o),
        ),
        Command(
            ("vcctl", group, "delete"),
            f"delete a {group}",
            _common(_name(noun), _ns(noun), file_flag),
            lambda c, o: flow.delete_flows(c, kind, o),
        ),
        Command(
            ("vcctl", group, "describe"),
            f"describe a {group}",
            _common(
                _name(noun),
                _ns(noun),
                Flag("format", "o", "string", "yaml", "the format of output"),
            ),
            lambda c, o: flow.describe_flows(c, kind, o),
        ),
    ]


def _pod_commands() -> list[Command]:
    return [
        Command(
            ("vcctl", "pod", "list"),
            "list pod information created by vcjob",
            _common(
                Flag("queue", "q", "string", "", "list pod with specified queue name"),
                Flag("job", "j", "string", "", "list pod with specified job name"),
                _ns("pod"),
                Flag("all-namespaces", "", "bool", False, "list pods in all namespaces"),
            ),
            pod.list_pods,
        )
    ]


GROUPS: dict[str, str] = {
    "job": "vcctl command line operation job",
    "queue": "Queue Operations",
    "jobtemplate": "vcctl command line operation jobtemplate",
    "jobflow": "vcctl command line operation jobflow",
    "pod": "vcctl command line operation pod",
}


def vcctl_commands() -> dict[tuple[str, str], Command]:
    commands = [
        *_job_commands(),
        *_queue_commands(),
        *_flow_commands(flow.JOBTEMPLATE, "jobtemplate"),
        *_flow_commands(flow.JOBFLOW, "jobflow"),
        *_pod_commands(),
    ]
    return {(c.path[1], c.path[2]): c for c in commands}


def _job_by_name(short_ns: str = "N", short_name: str = "n") -> list[Flag]:
    return _common(_ns("job", short_ns), _name("job", short_name))


def standalone_commands() -> dict[str, Command]:
    """vsub, vjobs, vqueues, vcancel, vsuspend, vresume: upstream's cmd/cli/v*."""
    vsub_flags = _common(
        Flag(
            "image",
            "i",
            "string",
            "",
            "the container image of job, overwrite the value of 'VOLCANO_DEFAULT_IMAGE' "
            '(default "busybox")',
        ),
        Flag(
            "namespace",
            "N",
            "string",
            "",
            "the namespace of job, overwrite the value of 'VOLCANO_DEFAULT_JOB_NAMESPACE' "
            '(default "default")',
        ),
        _name("job", "n"),
        Flag("min", "m", "int", 1, "the minimal available tasks of job"),
        Flag("replicas", "r", "int", 1, "the total tasks of job"),
        Flag(
            "requests", "R", "string", "cpu=1000m,memory=100Mi", "the resource request of the task"
        ),
        Flag("limits", "L", "string", "cpu=1000m,memory=100Mi", "the resource limit of the task"),
        Flag(
            "scheduler",
            "S",
            "string",
            "",
            "the scheduler for this job, overwrite the value of 'VOLCANO_SCHEDULER_NAME' "
            '(default "volcano")',
        ),
        Flag("command", "c", "string", "", "the command of job"),
    )
    vjobs_flags = [
        *_job_by_name(),
        Flag("scheduler", "S", "string", "", "list job with specified scheduler name"),
        Flag("all-namespaces", "", "bool", False, "list jobs in all namespaces"),
        Flag("selector", "", "string", "", "fuzzy matching jobName"),
    ]
    return {
        "vsub": Command(
            ("vsub",),
            "submit a job",
            vsub_flags,
            lambda c, o: job.run_job(c, o, from_file=False),
            long="submit a job with specified name and arguments. yaml/json file is not "
            "accepted, you may refer to kubectl.",
            prepare=job.vsub_defaults,
        ),
        "vjobs": Command(
            ("vjobs",),
            "view job information",
            vjobs_flags,
            lambda c, o: job.view_job(c, o, vjobs=True),
            long="view information of a job with specified name or jobs from the same namespace",
        ),
        "vqueues": Command(
            ("vqueues",),
            "view queue information",
            _common(_name("queue", "n")),
            queue.vqueues,
            long="view information of a queue with specified name or queues from the same "
            "namespace",
        ),
        "vcancel": Command(
            ("vcancel",),
            "cancel a job",
            _job_by_name(),
            lambda c, o: job.delete_job(c, o, verb="cancel"),
            long="cancel a running, pending, or aborted job with specified name in default or "
            "specified namespace",
        ),
        "vsuspend": Command(
            ("vsuspend",),
            "suspend a job",
            _job_by_name(),
            lambda c, o: job.job_command(c, o, job.ABORT_JOB, "suspend"),
            long="suspend a running or pending job with specified name in default or "
            "specified namespace",
        ),
        "vresume": Command(
            ("vresume",),
            "resume a job",
            _job_by_name(),
            lambda c, o: job.job_command(c, o, job.RESUME_JOB, "resume"),
            long="resume an aborted job with specified name in default or specified namespace",
        ),
    }
