"""`volcano-py controllers`: the live controllers (Volcano's vc-controller-manager): Jobs get
their PodGroup and pods, plain pods of ours a PodGroup, Commands are run, Queues change state.

Flags follow vc-controller-manager and `volcano-py scheduler` (Go spellings accepted:
``--leader-elect=true``, ``-v=3``, durations like ``15s``).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from volcano_py.cli.process_flags import (
    add_cluster_access,
    add_leader_election,
    add_serving,
    lease_and_addresses,
)

HELP = "run the Job, PodGroup, Queue and Command controllers against a Kubernetes cluster"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=50.0, burst=100)

    controllers = parser.add_argument_group("controllers")
    controllers.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="pods with this spec.schedulerName get a PodGroup; the first is the default"
        " scheduler of Jobs that name none (repeatable; default volcano)",
    )
    controllers.add_argument(
        "--worker-threads",
        type=int,
        default=5,
        metavar="N",
        help="jobs synced at once (default 5)",
    )
    controllers.add_argument(
        "--worker-threads-for-cronjob",
        type=int,
        default=3,
        metavar="N",
        help="CronJobs synced at once (default 3)",
    )
    controllers.add_argument(
        "--events",
        choices=("all", "warnings", "none"),
        default="all",
        help="which Kubernetes Events to write (default all)",
    )

    add_leader_election(parser, lease_name="volcano-py-controllers")
    add_serving(parser, metrics=":8081", healthz=":11252")


def run(args: argparse.Namespace) -> int:
    from volcano_py.runtime import logsetup

    logsetup.configure(args.verbosity, args.log_format)
    logging.getLogger("volcano_py.controllers").debug("arguments %s", args)
    from volcano_py.operator.controllers.process import ControllersOptions, LiveControllers
    from volcano_py.runtime.apiclient import ClusterAccess

    try:
        if args.worker_threads < 1:
            raise ValueError("--worker-threads must be at least 1")
        if args.worker_threads_for_cronjob < 1:
            raise ValueError("--worker-threads-for-cronjob must be at least 1")
        lease = lease_and_addresses(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    options = ControllersOptions(
        kubeconfig=args.kubeconfig,
        scheduler_names=tuple(args.scheduler_name or ["volcano"]),
        leader_elect=bool(args.leader_elect),
        lease=lease,
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        listen_address=args.listen_address,
        healthz_address=args.healthz_address,
        job_workers=args.worker_threads,
        cronjob_workers=args.worker_threads_for_cronjob,
        events=args.events,
    )
    try:
        access = ClusterAccess.load(options.kubeconfig)
    except Exception as error:  # kubeconfig problems come in many exception types
        print(f"error: cannot load cluster credentials: {error}", file=sys.stderr)
        return 2
    return asyncio.run(LiveControllers(options, access=access).run())
