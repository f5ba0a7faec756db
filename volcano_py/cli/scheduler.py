"""`volcano-py scheduler`: the live scheduler, with Volcano's vc-scheduler flags where they
apply, so an existing Deployment's arguments keep working (Go spellings included:
``--leader-elect=true``, ``-v=3``, durations like ``1s`` or ``500ms``; Volcano's chart also
passes a literal ``2>&1``, which is ignored as Volcano ignores it).

Flags of vc-scheduler that change nothing here are accepted and ignored with a note in the log:
``--enable-metrics``/``--enable-healthz`` (both endpoints are always served; an empty address
turns one off), ``--logtostderr``, ``--resync-period``, ``--node-worker-threads``.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from types import FrameType
from typing import TYPE_CHECKING

from volcano_py.models.duration import DurationError, parse_duration

if TYPE_CHECKING:
    from volcano_py.operator.scheduler import SchedulerOptions

HELP = "run the scheduler against a Kubernetes cluster (Volcano's vc-scheduler)"

_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
_IGNORED = (
    "enable_metrics",
    "enable_healthz",
    "logtostderr",
    "resync_period",
    "node_worker_threads",
)


def go_bool(text: str) -> bool:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r} (true or false)")


def go_duration(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except DurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}: negative")
    return seconds


def _bool_flag(
    parser: argparse._ActionsContainer, name: str, default: bool | None, help_text: str
) -> None:
    shown = "" if default is None else f" (default {str(default).lower()})"
    parser.add_argument(
        name,
        nargs="?",
        const=True,
        default=default,
        type=go_bool,
        metavar="BOOL",
        help=f"{help_text}{shown}",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    client = parser.add_argument_group("cluster access")
    client.add_argument(
        "--kubeconfig",
        help="kubeconfig file (default: in-cluster service"
        " account, else $KUBECONFIG or ~/.kube/config)",
    )
    client.add_argument(
        "--kube-api-qps",
        type=float,
        default=2000.0,
        metavar="QPS",
        help="requests per second to the API server (default 2000)",
    )
    client.add_argument(
        "--kube-api-burst",
        type=int,
        default=2000,
        metavar="N",
        help="burst of requests to the API server (default 2000)",
    )

    scheduling = parser.add_argument_group("scheduling")
    scheduling.add_argument(
        "--scheduler-conf",
        metavar="FILE",
        help="volcano-scheduler.conf, re-read when it changes (default:"
        " Volcano's built-in configuration)",
    )
    scheduling.add_argument(
        "--schedule-period",
        type=go_duration,
        default=1.0,
        metavar="DURATION",
        help="pause between scheduling cycles (default 1s)",
    )
    scheduling.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="schedule pods whose spec.schedulerName is NAME (repeatable; default volcano)",
    )
    scheduling.add_argument(
        "--default-queue",
        default="default",
        metavar="QUEUE",
        help="queue of PodGroups that name none (default default)",
    )
    _bool_flag(scheduling, "--priority-class", True, "watch PriorityClasses")
    scheduling.add_argument(
        "--bind-concurrency",
        type=int,
        default=64,
        metavar="N",
        help="binds in flight at once (default 64)",
    )
    scheduling.add_argument(
        "--events",
        choices=("all", "warnings", "none"),
        default="all",
        help="which Kubernetes Events to write, aggregated and flushed"
        " once a second (default all, as Volcano)",
    )

    election = parser.add_argument_group("leader election (a coordination.k8s.io/v1 Lease)")
    _bool_flag(election, "--leader-elect", False, "run only while holding the Lease")
    election.add_argument(
        "--leader-elect-lease-duration",
        type=go_duration,
        default=15.0,
        metavar="DURATION",
        help="default 15s",
    )
    election.add_argument(
        "--leader-elect-renew-deadline",
        type=go_duration,
        default=10.0,
        metavar="DURATION",
        help="default 10s",
    )
    election.add_argument(
        "--leader-elect-retry-period",
        type=go_duration,
        default=2.0,
        metavar="DURATION",
        help="default 2s",
    )
    election.add_argument(
        "--leader-elect-resource-namespace",
        default="volcano-system",
        metavar="NS",
        help="namespace of the Lease (default volcano-system)",
    )
    election.add_argument(
        "--lock-object-namespace", default="", metavar="NS", help=argparse.SUPPRESS
    )
    election.add_argument(
        "--leader-elect-resource-name",
        default="vc-scheduler",
        metavar="NAME",
        help="name of the Lease (default vc-scheduler)",
    )
    election.add_argument(
        "--leader-elect-resource-lock",
        default="leases",
        choices=("leases",),
        help=argparse.SUPPRESS,
    )

    serving = parser.add_argument_group("endpoints and logging")
    serving.add_argument(
        "--listen-address",
        default=":8080",
        metavar="HOST:PORT",
        help="/metrics (default :8080; empty: off)",
    )
    serving.add_argument(
        "--healthz-address",
        default=":11251",
        metavar="HOST:PORT",
        help="/healthz and /readyz (default :11251; empty: off)",
    )
    serving.add_argument(
        "-v",
        "--v",
        type=int,
        default=2,
        dest="verbosity",
        metavar="N",
        help="log verbosity: <=3 info, 4 debug, >=5 trace (default 2)",
    )
    serving.add_argument("--log-format", choices=("plain", "json"), default="plain")

    ignored = parser.add_argument_group("accepted for compatibility, no effect")
    _bool_flag(ignored, "--enable-metrics", None, "metrics are always served")
    _bool_flag(ignored, "--enable-healthz", None, "health checks are always served")
    _bool_flag(ignored, "--logtostderr", None, "logs always go to stderr")
    ignored.add_argument("--resync-period", type=go_duration, help=argparse.SUPPRESS)
    ignored.add_argument("--node-worker-threads", type=int, help=argparse.SUPPRESS)
    parser.add_argument("leftovers", nargs="*", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from volcano_py.runtime import logsetup

    logsetup.configure(args.verbosity, args.log_format)
    log = logging.getLogger("volcano_py.scheduler")
    if args.leftovers:
        log.info("ignoring arguments %s", " ".join(args.leftovers))
    for name in _IGNORED:
        if getattr(args, name) is not None:
            log.info("--%s has no effect in volcano-py", name.replace("_", "-"))
    try:
        options = _options(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    from volcano_py.operator.scheduler import LiveScheduler
    from volcano_py.runtime.apiclient import ClusterAccess

    try:
        access = ClusterAccess.load(options.kubeconfig)
    except Exception as error:  # kubeconfig problems come in many exception types
        print(f"error: cannot load cluster credentials: {error}", file=sys.stderr)
        return 2
    scheduler = LiveScheduler(options, access=access)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        scheduler.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return scheduler.run()


def _options(args: argparse.Namespace) -> SchedulerOptions:
    from volcano_py.operator.scheduler import SchedulerOptions
    from volcano_py.operator.writers import EVENT_MODES
    from volcano_py.runtime.health import parse_address
    from volcano_py.runtime.leaderelection import LeaseConfig

    if args.schedule_period <= 0:
        raise ValueError("--schedule-period must be positive")
    if args.bind_concurrency < 1:
        raise ValueError("--bind-concurrency must be at least 1")
    if "/" in args.default_queue:
        raise ValueError(
            f"--default-queue must be a cluster Queue name, got {args.default_queue!r}"
        )
    for address in (args.listen_address, args.healthz_address):
        if address:
            parse_address(address)
    assert args.events in EVENT_MODES
    lease = LeaseConfig(
        namespace=args.lock_object_namespace or args.leader_elect_resource_namespace,
        name=args.leader_elect_resource_name,
        lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
    )
    if args.leader_elect:
        lease.validate()
    return SchedulerOptions(
        kubeconfig=args.kubeconfig,
        scheduler_conf=args.scheduler_conf,
        schedule_period=args.schedule_period,
        scheduler_names=tuple(args.scheduler_name or ["volcano"]),
        default_queue=args.default_queue,
        leader_elect=bool(args.leader_elect),
        lease=lease,
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        listen_address=args.listen_address,
        healthz_address=args.healthz_address,
        bind_concurrency=args.bind_concurrency,
        events=args.events,
        priority_class=bool(args.priority_class),
    )
