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

from volcano_py.cli.process_flags import (
    add_cluster_access,
    add_leader_election,
    add_serving,
    bool_flag,
    go_duration,
    lease_and_addresses,
)

if TYPE_CHECKING:
    from volcano_py.operator.scheduler import SchedulerOptions

HELP = "run the scheduler against a Kubernetes cluster (Volcano's vc-scheduler)"

_IGNORED = (
    "enable_metrics",
    "enable_healthz",
    "logtostderr",
    "resync_period",
    "node_worker_threads",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=2000.0, burst=2000)

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
    bool_flag(scheduling, "--priority-class", True, "watch PriorityClasses")
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

    election = add_leader_election(parser, lease_name="vc-scheduler")
    election.add_argument(
        "--lock-object-namespace", default="", metavar="NS", help=argparse.SUPPRESS
    )
    election.add_argument(
        "--leader-elect-resource-lock",
        default="leases",
        choices=("leases",),
        help=argparse.SUPPRESS,
    )

    add_serving(parser, metrics=":8080", healthz=":11251")

    ignored = parser.add_argument_group("accepted for compatibility, no effect")
    bool_flag(ignored, "--enable-metrics", None, "metrics are always served")
    bool_flag(ignored, "--enable-healthz", None, "health checks are always served")
    bool_flag(ignored, "--logtostderr", None, "logs always go to stderr")
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
    from volcano_py.framework.conf import UnknownNameError

    try:
        scheduler = LiveScheduler(options, access=access)
    except UnknownNameError as error:  # a conf naming an action or plugin that does not exist
        print(f"error: {error}", file=sys.stderr)
        return 2

    def on_signal(signum: int, frame: FrameType | None) -> None:
        scheduler.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return scheduler.run()


def _options(args: argparse.Namespace) -> SchedulerOptions:
    from volcano_py.operator.scheduler import SchedulerOptions
    from volcano_py.operator.writers import EVENT_MODES

    if args.schedule_period <= 0:
        raise ValueError("--schedule-period must be positive")
    if args.bind_concurrency < 1:
        raise ValueError("--bind-concurrency must be at least 1")
    if "/" in args.default_queue:
        raise ValueError(
            f"--default-queue must be a cluster Queue name, got {args.default_queue!r}"
        )
    assert args.events in EVENT_MODES
    lease = lease_and_addresses(args, namespace=args.lock_object_namespace)
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
