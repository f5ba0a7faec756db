"""The three processes take every flag of Volcano's binaries, in Go's syntax.

Transcribed: ``cmd/scheduler/app/options/options_test.go`` ``TestAddFlags``,
``cmd/controller-manager/app/options/options_test.go`` ``TestAddFlags`` and
``TestCheckControllers`` (7 cases), ``cmd/webhook-manager/app/options/options_test.go``
``TestAddFlags``. Deliberate differences: leader election is off by default here (upstream's
``LeaderElectionDefault`` turns it on; our manifests pass ``--leader-elect=true``), our
controllers' health port is :11252 and Lease name volcano-py-controllers.
"""

from __future__ import annotations

import argparse

import pytest

from tests.cli.chart_args import CONTROLLERS, SCHEDULER, WEBHOOKS
from volcano_py.cli import controllers as controllers_cli
from volcano_py.cli import scheduler as scheduler_cli
from volcano_py.cli.feature_gates import FeatureGates, parse_feature_gates
from volcano_py.cli.main import main, parse_args
from volcano_py.framework.feasibility import FeasibilityOptions


def parse(process: str, *argv: str) -> argparse.Namespace:
    return parse_args([process, *argv])


# Every flag each upstream binary registers (its options.go, the leader election flags of
# component-base, --feature-gates, klog's flags and --log-flush-frequency), with a value.
KLOG = [
    "--logtostderr", "--alsologtostderr=false", "--log-dir=/var/log", "--log-file=/tmp/x.log",
    "--log-file-max-size=1800", "--log-backtrace-at=main.go:1", "--vmodule=cache=4",
    "--skip-headers", "--skip-log-headers", "--stderrthreshold=INFO", "--add-dir-header",
    "--one-output", "--legacy-stderr-threshold-behavior=false", "-v=3",
    "--log-flush-frequency=5s",
]  # fmt: skip
LEADER = [
    "--leader-elect=false", "--leader-elect-lease-duration=15s",
    "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s",
    "--leader-elect-resource-lock=leases", "--leader-elect-resource-name=x",
    "--leader-elect-resource-namespace=volcano-system", "--lock-object-namespace=volcano-system",
]  # fmt: skip
SCHEDULER_ALL = [
    "--master=https://127.0.0.1:6443", "--kubeconfig=/k", "--ca-cert-file=/ca",
    "--tls-cert-file=/c", "--tls-private-key-file=/k", "--scheduler-name=volcano",
    "--scheduler-conf=/c", "--schedule-period=1s", "--resync-period=0", "--default-queue=default",
    "--version=false", "--listen-address=:8080", "--healthz-address=:11251",
    "--priority-class=true", "--kube-api-qps=2000", "--kube-api-burst=2000",
    "--minimum-feasible-nodes=100", "--minimum-percentage-nodes-to-find=5",
    "--percentage-nodes-to-find=0", "--csi-storage=true", "--enable-healthz=true",
    "--enable-metrics=true", "--enable-pprof=false", "--node-selector=a:b",
    "--cache-dumper=true", "--cache-dump-dir=/tmp", "--node-worker-threads=20",
    "--gate-removal-worker-num=5", "--ignored-provisioners=p", "--resource-sync-timeout=60s",
    "--disable-default-scheduler-config=false", "--scheduler-sharding-mode=none",
    "--scheduler-sharding-name=volcano", "--feature-gates=CSIStorage=false",
    *LEADER, *KLOG,
]  # fmt: skip
CONTROLLERS_ALL = [
    "--master=https://127.0.0.1:6443", "--kubeconfig=/k", "--ca-cert-file=/ca",
    "--tls-cert-file=/c", "--tls-private-key-file=/k", "--kube-api-qps=50",
    "--kube-api-burst=100", "--version=false", "--worker-threads=3",
    "--worker-threads-for-cronjob=3", "--scheduler-name=volcano", "--max-requeue-num=15",
    "--healthz-address=:11251", "--enable-healthz", "--enable-metrics",
    "--listen-address=:8081", "--inherit-owner-annotations=true",
    "--worker-threads-for-podgroup=5", "--worker-threads-for-gc=1",
    "--worker-threads-for-queue=5", "--controllers=*,-sharding-controller",
    "--scheduler-configs=volcano:volcano:0.0:0.6:false:2:100", "--shard-sync-period=60s",
    "--enable-node-event-trigger=true", "--sharding-configmap=c",
    "--sharding-configmap-namespace=volcano-system", "--feature-gates=QueueCommandSync=true",
    *LEADER, *KLOG,
]  # fmt: skip
WEBHOOKS_ALL = [
    "--master=https://127.0.0.1:6443", "--kubeconfig=/k", "--tls-cert-file=/c",
    "--tls-private-key-file=/k", "--listen-address=0.0.0.0", "--port=8443", "--version=false",
    "--kube-api-qps=50", "--kube-api-burst=100", "--ca-cert-file=/ca",
    "--webhook-namespace=volcano-system", "--webhook-service-name=s", "--webhook-url=https://x",
    "--enabled-admission=/jobs/mutate", "--scheduler-name=volcano", "--admission-conf=/c",
    "--enable-healthz=true", "--healthz-address=:11251", "--graceful-shutdown-time=30s",
    "--enable-queue-allocated-pods-check=false", "--max-queue-depth=5",
    "--enable-root-queue-protection=true", "--feature-gates=SchedulingGatesQueueAdmission=false",
    *KLOG,
]  # fmt: skip


@pytest.mark.parametrize(
    ("process", "argv"),
    [("scheduler", SCHEDULER_ALL), ("controllers", CONTROLLERS_ALL), ("webhooks", WEBHOOKS_ALL)],
)
def test_every_upstream_flag_parses(process: str, argv: list[str]) -> None:
    args = parse(process, *argv)
    assert args.leftovers == []
    assert args.verbosity == 3


@pytest.mark.parametrize(
    ("process", "argv"),
    [("scheduler", SCHEDULER), ("controllers", CONTROLLERS), ("webhooks", WEBHOOKS)],
)
def test_the_charts_arguments_parse(process: str, argv: list[str]) -> None:
    args = parse(process, *argv)
    assert args.leftovers == ["2>&1"]


def test_the_charts_scheduler_arguments_act() -> None:
    options = scheduler_cli._options(parse("scheduler", *SCHEDULER))
    assert (options.listen_address, options.healthz_address) == (":8080", ":11251")
    assert options.metrics and options.pprof and options.leader_elect
    assert options.feasibility == FeasibilityOptions(100, 5, 30)
    assert not options.pod_disruption_budgets


# ---- cmd/scheduler/app/options/options_test.go TestAddFlags


def test_scheduler_add_flags_upstream() -> None:
    args = parse(
        "scheduler", "--schedule-period=5m", "--resync-period=0", "--priority-class=false",
        "--cache-dumper=false", "--leader-elect-lease-duration=60s",
        "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=10s",
        "--feature-gates=PodDisruptionBudgetsSupport=false,VolcanoJobSupport=true",
    )  # fmt: skip
    options = scheduler_cli._options(args)
    assert options.scheduler_names == ("volcano",)
    assert options.schedule_period == 300.0
    assert args.resync_period == 0.0
    assert not options.priority_class and not args.cache_dumper
    assert (options.lease.lease_duration, options.lease.renew_deadline,
            options.lease.retry_period) == (60.0, 20.0, 10.0)  # fmt: skip
    assert options.lease.namespace == "volcano-system"
    assert options.default_queue == "default"
    assert (args.listen_address, args.healthz_address) == (":8080", ":11251")
    assert (options.kube_api_qps, options.kube_api_burst) == (2000.0, 2000)
    assert options.feasibility == FeasibilityOptions(100, 5, 0)
    assert args.cache_dump_dir == "/tmp"
    assert (args.scheduler_sharding_mode, args.scheduler_sharding_name) == ("none", "volcano")
    gates = FeatureGates(args.feature_gates)
    assert not gates.enabled("PodDisruptionBudgetsSupport")
    assert gates.enabled("VolcanoJobSupport")


# ---- cmd/controller-manager/app/options/options_test.go


def test_controllers_add_flags_upstream() -> None:
    args = parse(
        "controllers", "--master=127.0.0.1", "--kube-api-burst=200", "--scheduler-name=volcano",
        "--scheduler-name=volcano2", "--leader-elect-lease-duration=60s",
        "--leader-elect-renew-deadline=20s", "--leader-elect-retry-period=10s",
        "--feature-gates=ResourceTopology=false",
    )  # fmt: skip
    assert args.master == "127.0.0.1"
    assert (args.kube_api_qps, args.kube_api_burst) == (50.0, 200)
    assert args.scheduler_name == ["volcano", "volcano2"]
    assert args.listen_address == ":8081"
    assert args.controllers == "*,-sharding-controller"
    assert not FeatureGates(args.feature_gates).enabled("ResourceTopology")


@pytest.mark.parametrize(
    ("switches", "error"),
    [
        ("*", ""),  # normal case: use *
        ("+gc-controller,+jobtemplate-controller,+jobflow-controller", ""),
        ("-sharding-controller,*", ""),  # * at the last place
        ("*,-job-controller", ""),  # * at the first place
        ("-sharding-controller,*,-job-controller", ""),  # * in the middle
        (
            "+gc-controller,+job-controller,-job-controller",
            "controllers option -job-controller cannot have both '-' and '+' prefixes",
        ),
        (
            "+job-controller,job-controller",
            "controllers option job-controller cannot have both '-' and '+' prefixes",
        ),
    ],
)
def test_check_controllers_upstream(switches: str, error: str) -> None:
    if error:
        with pytest.raises(ValueError, match=error.replace("+", r"\+")):
            controllers_cli.enabled_controllers(switches)
    else:
        controllers_cli.enabled_controllers(switches)


def test_controllers_switches_act() -> None:
    enabled = controllers_cli.enabled_controllers("*,-sharding-controller")
    assert enabled["job-controller"] and not enabled["sharding-controller"]
    assert not controllers_cli.enabled_controllers("+gc-controller")["job-controller"]
    with pytest.raises(ValueError, match="turns off job-controller"):
        controllers_cli._check_controllers("*,-job-controller")
    # jobflow-, jobtemplate- and hyperNode-controller run here now; sharding does not.
    assert controllers_cli._check_controllers("*,+jobflow-controller") == []
    assert controllers_cli._check_controllers("*,+hyperNode-controller") == []
    assert controllers_cli._check_controllers("*,+sharding-controller") == ["sharding-controller"]
    # hyperNode-controller may be turned off (upstream's chart does in its standalone mode).
    assert controllers_cli._check_controllers("*,-hyperNode-controller") == []
    switches = controllers_cli.enabled_controllers("*,-hyperNode-controller")
    assert not switches["hyperNode-controller"]
    with pytest.raises(ValueError, match="turns off jobflow-controller"):
        controllers_cli._check_controllers("*,-jobflow-controller")


# ---- cmd/webhook-manager/app/options/options_test.go TestAddFlags


def test_webhooks_add_flags_upstream() -> None:
    args = parse("webhooks", "--master=127.0.0.1", "--kube-api-burst=200")
    assert args.master == "127.0.0.1"
    assert (args.kube_api_qps, args.kube_api_burst) == (50.0, 200)
    assert args.port == 8443 and args.healthz_address == ":11251"
    assert args.max_queue_depth == 5 and not args.enable_queue_allocated_pods_check


def test_webhooks_listen_address_is_the_webhooks_address() -> None:
    assert parse("webhooks", "--listen-address=127.0.0.1").webhook_address == "127.0.0.1"
    assert parse("webhooks", "--webhook-address=10.0.0.1").webhook_address == "10.0.0.1"


# ---- feature gates


def test_feature_gates_parse_as_component_base() -> None:
    assert parse_feature_gates("A" * 0) == {}
    assert parse_feature_gates(" PriorityClass=false , CSIStorage=T") == {
        "PriorityClass": False,
        "CSIStorage": True,
    }
    gates = FeatureGates(parse_feature_gates("AllAlpha=true,CSIStorage=false"))
    assert gates.enabled("SchedulingGatesQueueAdmission") and not gates.enabled("CSIStorage")
    assert FeatureGates({}).enabled("ResourceTopology")
    assert not FeatureGates({}).enabled("SchedulingGatesQueueAdmission")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
        ("PriorityClass", "missing bool value for PriorityClass"),
        ("PriorityClass=yes", "invalid value of PriorityClass=yes"),
    ],
)
def test_bad_feature_gates_exit_2_naming_them(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scheduler", f"--feature-gates={value}"])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_gates_acted_on_by_the_scheduler() -> None:
    options = scheduler_cli._options(parse("scheduler", "--feature-gates=PriorityClass=false"))
    assert not options.priority_class and options.pod_disruption_budgets
    gates = FeatureGates({"ResourceTopology": True, "CSIStorage": True, "PriorityClass": True})
    idle = gates.warn_without_effect(scheduler_cli.GATES_ACTED_ON, "scheduler")
    assert idle == ["CSIStorage"]
    options = scheduler_cli._options(parse("scheduler", "--feature-gates=ResourceTopology=false"))
    assert not options.resource_topology


# ---- scheduler flags with a behaviour


def test_feasible_node_flags() -> None:
    options = scheduler_cli._options(
        parse("scheduler", "--minimum-feasible-nodes", "10",
              "-minimum-percentage-nodes-to-find=20", "--percentage-nodes-to-find=-1")
    )  # fmt: skip
    assert options.feasibility == FeasibilityOptions(10, 20, -1)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--minimum-feasible-nodes=-1"], "--minimum-feasible-nodes must not be negative"),
        (["--scheduler-sharding-mode=hard"], "node sharding (NodeShards"),
        (["--scheduler-sharding-mode=bogus"], "expected one of none, hard, soft"),
        (["--node-selector=novalue"], "--node-selector 'novalue': expected key:value"),
    ],
)
def test_scheduler_option_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scheduler", *argv]) == 2
    assert message in capsys.readouterr().err


def test_node_selector_flags_add_up() -> None:
    options = scheduler_cli._options(
        parse("scheduler", "--node-selector=volcano.sh/role:train,zone: a ",
              "--node-selector", "volcano.sh/role:serving")
    )  # fmt: skip
    assert options.node_selector == {
        ("volcano.sh/role", "train"), ("zone", "a"), ("volcano.sh/role", "serving"),
    }  # fmt: skip


def test_metrics_and_pprof_share_the_listen_address() -> None:
    options = scheduler_cli._options(parse("scheduler", "--enable-pprof"))
    assert options.listen_address == ":8080" and options.pprof and not options.metrics


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    for process in ("scheduler", "controllers", "webhooks"):
        assert main([process, "--version"]) == 0
        assert capsys.readouterr().out.startswith("volcano-py ")


def test_gates_acted_on_by_the_controllers() -> None:
    options = controllers_cli._options(
        parse("controllers", "--feature-gates=VolcanoJobSupport=false,QueueCommandSync=false")
    )
    assert options.skipped_kinds == {"Job", "Command"}
    assert controllers_cli._options(parse("controllers")).skipped_kinds == frozenset()
    options = controllers_cli._options(parse("controllers", "--enable-metrics"))
    assert (options.listen_address, options.healthz_address) == (":8081", "")
    assert (options.pod_group_workers, options.queue_workers) == (5, 5)
    options = controllers_cli._options(
        parse("controllers", "--worker-threads-for-podgroup=2", "--worker-threads-for-queue=3")
    )
    assert (options.pod_group_workers, options.queue_workers) == (2, 3)
    with pytest.raises(ValueError, match="--worker-threads-for-queue must be at least 1"):
        controllers_cli._options(parse("controllers", "--worker-threads-for-queue=0"))


def test_enabled_admission_filters_the_served_paths() -> None:
    from volcano_py.cli.webhooks import _enabled_paths
    from volcano_py.operator.webhooks.options import WebhookOptions
    from volcano_py.operator.webhooks.server import served_routes

    paths = _enabled_paths("/jobs/mutate,/jobs/validate,/nodes/mutate")
    served = served_routes(WebhookOptions(enabled_paths=paths))
    assert [route.path for route in served] == ["/jobs/mutate", "/jobs/validate"]
    assert len(served_routes(WebhookOptions())) > 2


def test_master_overrides_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    from volcano_py.cli.process_flags import cluster_access

    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    monkeypatch.setenv("HOME", "/nonexistent")
    access = cluster_access(parse("scheduler", "--master=http://127.0.0.1:8080/"))
    assert access.server == "http://127.0.0.1:8080"
    with pytest.raises(ValueError, match="cannot load cluster credentials"):
        cluster_access(parse("scheduler", "--kubeconfig=/nonexistent/k", "--master=http://x"))
