"""`volcano-py scheduler`: the live scheduler, taking every flag of Volcano's vc-scheduler in
Go's syntax (``--leader-elect=true``, ``-v=3``, ``--logtostderr``, durations like ``1s`` or
``500ms``; see ``goflags``), so an existing Deployment's arguments keep working. Volcano's chart
also passes a literal ``2>&1``, which is ignored as Volcano ignores it.

Flags with a behaviour act as upstream's; those that change nothing here are listed in --help
under "accepted for compatibility", each with the reason, and logged once when given.
docs/configuration.md describes every flag.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import time
from types import FrameType
from typing import TYPE_CHECKING

from volcano_py.cli.feature_gates import FeatureGates, add_feature_gates
from volcano_py.cli.process_flags import (
    add_cluster_access,
    add_compatibility,
    add_leader_election,
    add_serving,
    add_tls_files,
    add_version,
    bool_flag,
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
    from volcano_py.operator.scheduler import SchedulerOptions

HELP = "run the scheduler against a Kubernetes cluster (Volcano's vc-scheduler)"

# The gates this process acts on (the rest are logged as having no effect when given).
GATES_ACTED_ON = (
    "PriorityClass",
    "PodDisruptionBudgetsSupport",
    "ResourceTopology",
    "DynamicResourceAllocation",
    "DRAConsumableCapacity",
    "DRADeviceTaints",
    "DRASchedulerFilterTimeout",
    "DRAAdminAccess",
    "DRAPrioritizedList",
)
# Volcano's sharding modes; only "none" exists here.
SHARDING_MODES = ("none", "hard", "soft")


def _comma_list(text: str) -> list[str]:
    """pflag's StringSlice: comma-separated, repeatable (the repeats add up)."""
    return [item for item in text.split(",") if item]


class _ExtendList(argparse.Action):
    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        assert isinstance(values, list)
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), *values])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=2000.0, burst=2000)
    add_version(parser)

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
    bool_flag(
        scheduling,
        "--disable-default-scheduler-config",
        False,
        "refuse to start on Volcano's built-in configuration: --scheduler-conf must be given"
        " and load (a later bad edit still keeps the last good one)",
    )
    scheduling.add_argument(
        "--node-selector",
        type=_comma_list,
        action=_ExtendList,
        default=[],
        metavar="KEY:VALUE",
        help="schedule only onto nodes with one of these labels (comma-separated,"
        " repeatable; default every node)",
    )
    scheduling.add_argument(
        "--minimum-feasible-nodes",
        type=int,
        default=100,
        metavar="N",
        help="stop a task's node search at no fewer than N feasible nodes (default 100)",
    )
    scheduling.add_argument(
        "--minimum-percentage-nodes-to-find",
        type=int,
        default=5,
        metavar="PERCENT",
        help="floor of the adaptive percentage of nodes searched (default 5)",
    )
    scheduling.add_argument(
        "--percentage-nodes-to-find",
        type=int,
        default=0,
        metavar="PERCENT",
        help="percentage of nodes searched per task; <=0: adaptive, 50%% minus 1%% per 125"
        " nodes (default 0)",
    )
    scheduling.add_argument(
        "--scheduler-sharding-mode",
        default="none",
        metavar="MODE",
        help="node sharding between schedulers: only none is supported here (hard and soft"
        " are refused)",
    )
    scheduling.add_argument(
        "--scheduler-sharding-name",
        default="volcano",
        metavar="NAME",
        help="this scheduler's NodeShard; used by sharding only, so without effect here",
    )
    add_feature_gates(
        scheduling,
        "Acted on here: PriorityClass=false stops watching PriorityClasses,"
        " PodDisruptionBudgetsSupport=false stops watching PodDisruptionBudgets,"
        " ResourceTopology=false stops watching Numatopologies.",
    )
    scheduling.add_argument(
        "--plugins-dir",
        metavar="DIR",
        help="load the Python plugins in DIR at start (*.py modules and packages, each with"
        " PLUGIN_NAME and new(); see docs/plugins.md)",
    )
    scheduling.add_argument(
        "--bind-concurrency",
        type=int,
        default=256,
        metavar="N",
        help="binds in flight at once (default 256; volcano-py's own)",
    )
    scheduling.add_argument(
        "--events",
        choices=("all", "warnings", "none"),
        default="all",
        help="which Kubernetes Events to write, aggregated and flushed"
        " once a second (default all, as Volcano; volcano-py's own)",
    )

    debugging = parser.add_argument_group("debugging")
    bool_flag(
        debugging,
        "--cache-dumper",
        True,
        "on SIGUSR1 write the cache as JSON to --cache-dump-dir, on SIGUSR2 log it",
    )
    debugging.add_argument(
        "--cache-dump-dir",
        default="/tmp",
        metavar="DIR",
        help="where SIGUSR1 writes snapshot-<unix time>.json (default /tmp, deploy/base's"
        " emptyDir: the root filesystem is read-only there)",
    )
    bool_flag(
        debugging,
        "--enable-pprof",
        False,
        "serve /debug/pprof/ on --listen-address: thread stacks and a sampling profile"
        " in folded-stack text (Go's pprof formats do not exist in Python)",
    )

    add_leader_election(parser, lease_name="vc-scheduler")
    add_tls_files(add_serving(parser, metrics=":8080", healthz=":11251"))

    compat = add_compatibility(parser)
    compat_flag(
        compat, "--resync-period", "watches never resync; every change arrives as an event",
        kind=go_duration, metavar="DURATION",
    )  # fmt: skip
    compat_flag(
        compat, "--node-worker-threads", "node events are applied as they arrive", kind=int,
        metavar="N",
    )  # fmt: skip
    compat_flag(
        compat, "--csi-storage", "CSIDriver/CSIStorageCapacity are not watched here", kind=None
    )
    compat_flag(
        compat, "--gate-removal-worker-num",
        "SchedulingGatesQueueAdmission is not implemented here", kind=int, metavar="N",
    )  # fmt: skip
    compat_flag(
        compat, "--ignored-provisioners",
        "PVC requests are not counted as node resources here, so none is to be ignored",
        metavar="NAMES",
    )  # fmt: skip
    compat_flag(
        compat, "--resource-sync-timeout",
        "scheduling starts once every watch has listed, applied as it is received",
        kind=go_duration, metavar="DURATION",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    if print_version_if_asked(args):
        return 0
    try:
        configure_logging(args, "scheduler")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from volcano_py.scheduler.plugins_dir import PluginsDirError, plugins_with_dir

    try:
        # A broken plugin stops the start before anything connects, as upstream's loader.
        plugins = plugins_with_dir(args.plugins_dir)
    except PluginsDirError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        options = _options(args)
        access = cluster_access(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    gates = FeatureGates(args.feature_gates)
    gates.warn_without_effect(GATES_ACTED_ON, "scheduler")
    if args.scheduler_sharding_name != "volcano":
        logging.getLogger("volcano_py.scheduler").warning(
            "--scheduler-sharding-name has no effect without sharding (mode none)"
        )

    from volcano_py.framework.conf import UnknownNameError
    from volcano_py.operator.scheduler import LiveScheduler

    try:
        scheduler = LiveScheduler(options, plugins=plugins, access=access)
    except UnknownNameError as error:  # a conf naming an action or plugin that does not exist
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.disable_default_scheduler_config and scheduler.conf.reloads == 0:
        print(
            "error: --disable-default-scheduler-config: "
            + (
                f"--scheduler-conf {args.scheduler_conf} did not load (see the log above)"
                if args.scheduler_conf
                else "no --scheduler-conf given"
            ),
            file=sys.stderr,
        )
        return 2

    def on_signal(signum: int, frame: FrameType | None) -> None:
        scheduler.request_stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.cache_dumper:
        from volcano_py.runtime.cache_dump import listen_for_signals

        listen_for_signals(scheduler.cache, args.cache_dump_dir, time.time)
    return scheduler.run()


def _options(args: argparse.Namespace) -> SchedulerOptions:
    """The scheduler's options from its flags; ValueError names the bad flag."""
    from volcano_py.cache.node_selector import parse_node_selector
    from volcano_py.framework.feasibility import FeasibilityOptions
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
    for flag in ("minimum_feasible_nodes", "minimum_percentage_nodes_to_find"):
        if getattr(args, flag) < 0:
            raise ValueError(f"--{flag.replace('_', '-')} must not be negative")
    if args.scheduler_sharding_mode not in SHARDING_MODES:
        raise ValueError(
            f"--scheduler-sharding-mode {args.scheduler_sharding_mode!r}: expected one of"
            f" {', '.join(SHARDING_MODES)}"
        )
    if args.scheduler_sharding_mode != "none":
        raise ValueError(
            f"--scheduler-sharding-mode={args.scheduler_sharding_mode}: node sharding"
            " (NodeShards shared between schedulers) is not implemented in volcano-py; use none"
        )
    assert args.events in EVENT_MODES
    gates = FeatureGates(args.feature_gates)
    lease = lease_and_addresses(args)
    metrics_address, healthz_address = served_addresses(
        args, metrics=args.enable_metrics or args.enable_pprof
    )
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
        listen_address=metrics_address,
        healthz_address=healthz_address,
        bind_concurrency=args.bind_concurrency,
        events=args.events,
        priority_class=bool(args.priority_class) and gates.enabled("PriorityClass"),
        node_selector=parse_node_selector(args.node_selector),
        feasibility=FeasibilityOptions(
            minimum_feasible_nodes=args.minimum_feasible_nodes,
            minimum_percentage=args.minimum_percentage_nodes_to_find,
            percentage=args.percentage_nodes_to_find,
        ),
        metrics=bool(args.enable_metrics),
        pprof=bool(args.enable_pprof),
        pod_disruption_budgets=gates.enabled("PodDisruptionBudgetsSupport"),
        resource_topology=gates.enabled("ResourceTopology"),
        kube_feature_gates=gates.kube_gates(),
        health_ssl=health_tls(args.ca_cert_file, args.tls_cert_file, args.tls_private_key_file),
    )
