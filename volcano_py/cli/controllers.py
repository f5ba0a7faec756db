"""`volcano-py controllers`: the live controllers (Volcano's vc-controller-manager): Jobs get
their PodGroup and pods, plain pods of ours a PodGroup, Commands are run, Queues change state.

Every flag of vc-controller-manager is accepted in Go's syntax (``--leader-elect=true``,
``-v=3``, durations like ``15s``; see ``goflags``); those without effect here are listed in
--help under "accepted for compatibility" with the reason. docs/configuration.md has them all.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import TYPE_CHECKING

from volcano_py.cli.feature_gates import FeatureGates, add_feature_gates
from volcano_py.cli.process_flags import (
    add_cluster_access,
    add_compatibility,
    add_leader_election,
    add_serving,
    add_tls_files,
    add_version,
    cluster_access,
    compat_flag,
    configure_logging,
    go_duration,
    health_tls,
    lease_and_addresses,
    print_version_if_asked,
    served_addresses,
)

if TYPE_CHECKING:
    from volcano_py.operator.controllers.process import ControllersOptions

HELP = "run the Job, PodGroup, Queue and Command controllers against a Kubernetes cluster"

# Gate -> the kind not watched when it is off (upstream's controllers skip the informer).
GATED_KINDS = {
    "VolcanoJobSupport": "Job",
    "QueueCommandSync": "Command",
    "PriorityClass": "PriorityClass",
}

# vc-controller-manager's controllers; volcano-py runs these (Commands are served by the job
# and queue controllers there, by one consumer here), always together.
IMPLEMENTED_CONTROLLERS = (
    "job-controller",
    "pg-controller",
    "queue-controller",
    "gc-controller",
    "cronjob-controller",
    "jobflow-controller",
    "jobtemplate-controller",
)
# Run unless --controllers turns them off.
OPTIONAL_CONTROLLERS = ("hyperNode-controller",)
UPSTREAM_CONTROLLERS = (
    *IMPLEMENTED_CONTROLLERS,
    *OPTIONAL_CONTROLLERS,
    "sharding-controller",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=50.0, burst=100)
    add_version(parser)

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
    for flag, what, default in (
        ("--worker-threads-for-podgroup", "PodGroups of plain pods", 5),
        ("--worker-threads-for-queue", "Queues", 5),
        ("--worker-threads-for-gc", "finished jobs checked for ttlSecondsAfterFinished", 1),
    ):
        controllers.add_argument(
            flag,
            type=int,
            default=default,
            metavar="N",
            help=f"{what} at once (default {default})",
        )
    controllers.add_argument(
        "--controllers",
        default="*,-sharding-controller",
        metavar="LIST",
        help="Volcano's controller switches ('*', 'name', '+name', '-name', comma-separated)."
        " job-, pg-, queue-, gc-, cronjob-, jobflow- and jobtemplate-controller always run"
        " here and may not be turned off; hyperNode-controller runs unless turned off;"
        " sharding-controller is not implemented here (naming it is logged)",
    )
    add_feature_gates(
        controllers,
        "Acted on here: VolcanoJobSupport=false stops watching Jobs, QueueCommandSync=false"
        " stops watching Commands, PriorityClass=false stops watching PriorityClasses.",
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
        help="which Kubernetes Events to write (default all; volcano-py's own)",
    )

    add_leader_election(parser, lease_name="volcano-py-controllers")
    add_tls_files(add_serving(parser, metrics=":8081", healthz=":11252"))

    compat = add_compatibility(parser)
    for name, why in (
        ("--max-requeue-num", "a failed sync is retried with backoff (up to 30 s) until it"
         " succeeds or the object changes"),
    ):  # fmt: skip
        compat_flag(compat, name, why, kind=int, metavar="N")
    compat_flag(
        compat, "--inherit-owner-annotations",
        "PodGroups of plain pods are built from the pod alone here (the owner is not read)",
        kind=None,
    )  # fmt: skip
    no_sharding = "there is no sharding-controller here"
    compat_flag(compat, "--scheduler-configs", no_sharding, metavar="LIST")
    compat_flag(compat, "--shard-sync-period", no_sharding, kind=go_duration, metavar="DURATION")
    compat_flag(compat, "--enable-node-event-trigger", no_sharding, kind=None)
    compat_flag(compat, "--sharding-configmap", no_sharding, metavar="NAME")
    compat_flag(compat, "--sharding-configmap-namespace", no_sharding, metavar="NS")


def enabled_controllers(switches: str) -> dict[str, bool]:
    """Which of vc-controller-manager's controllers ``--controllers`` turns on
    (``checkControllers`` then ``IsControllerEnabled``); ValueError on a name given with both
    prefixes."""
    entries = [entry.strip() for entry in switches.split(",") if entry.strip()]
    seen: set[str] = set()
    for entry in entries:
        if entry == "*":
            continue
        name = entry[1:] if entry[0] in "+-" else entry
        if name in seen:
            raise ValueError(f"controllers option {entry} cannot have both '-' and '+' prefixes")
        seen.add(name)
    enabled: dict[str, bool] = {}
    for name in {*UPSTREAM_CONTROLLERS, *seen}:
        if f"-{name}" in entries:
            enabled[name] = False
        else:
            enabled[name] = name in entries or f"+{name}" in entries or "*" in entries
    return enabled


def _check_controllers(switches: str) -> list[str]:
    """The named controllers that are on but not implemented here (to log); ValueError when
    one of ours is off."""
    enabled = enabled_controllers(switches)
    off = [name for name in IMPLEMENTED_CONTROLLERS if not enabled[name]]
    if off:
        raise ValueError(
            f"--controllers={switches} turns off {', '.join(off)}: volcano-py runs"
            f" {', '.join(IMPLEMENTED_CONTROLLERS)} together and cannot leave one out"
        )
    named = {entry.strip().lstrip("+") for entry in switches.split(",")}
    ours = {*IMPLEMENTED_CONTROLLERS, *OPTIONAL_CONTROLLERS}
    return sorted(name for name, on in enabled.items()
                  if on and name not in ours and name in named)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if print_version_if_asked(args):
        return 0
    try:
        configure_logging(args, "controllers")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    log = logging.getLogger("volcano_py.controllers")
    log.debug("arguments %s", args)
    from volcano_py.operator.controllers.process import LiveControllers

    try:
        missing = _check_controllers(args.controllers)
        options = _options(args)
        access = cluster_access(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for name in missing:
        log.warning("--controllers: %s is not implemented in volcano-py; not run", name)
    FeatureGates(args.feature_gates).warn_without_effect(GATED_KINDS, "controllers")
    return asyncio.run(LiveControllers(options, access=access).run())


def _options(args: argparse.Namespace) -> ControllersOptions:
    """The controllers' options from their flags; ValueError names the bad flag."""
    from volcano_py.operator.controllers.process import ControllersOptions

    for flag in (
        "worker_threads",
        "worker_threads_for_podgroup",
        "worker_threads_for_queue",
        "worker_threads_for_gc",
        "worker_threads_for_cronjob",
    ):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be at least 1")
    lease = lease_and_addresses(args)
    metrics_address, healthz_address = served_addresses(args, metrics=args.enable_metrics)
    gates = FeatureGates(args.feature_gates)
    return ControllersOptions(
        kubeconfig=args.kubeconfig,
        scheduler_names=tuple(args.scheduler_name or ["volcano"]),
        leader_elect=bool(args.leader_elect),
        lease=lease,
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        listen_address=metrics_address,
        healthz_address=healthz_address,
        job_workers=args.worker_threads,
        pod_group_workers=args.worker_threads_for_podgroup,
        queue_workers=args.worker_threads_for_queue,
        cronjob_workers=args.worker_threads_for_cronjob,
        gc_workers=args.worker_threads_for_gc,
        events=args.events,
        health_ssl=health_tls(args.ca_cert_file, args.tls_cert_file, args.tls_private_key_file),
        skipped_kinds=frozenset(
            kind for gate, kind in GATED_KINDS.items() if not gates.enabled(gate)
        ),
        hyper_node_controller=enabled_controllers(args.controllers)["hyperNode-controller"],
    )
