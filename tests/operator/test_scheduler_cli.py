"""`volcano-py scheduler` flags: Volcano's spellings and defaults, Go durations and booleans,
one-line errors."""

from __future__ import annotations

import pytest

from volcano_py.cli.main import main, parse_args
from volcano_py.cli.scheduler import _options


def parse(*argv: str):  # type: ignore[no-untyped-def]
    return parse_args(["scheduler", *argv])


def test_defaults_are_volcanos() -> None:
    options = _options(parse())
    assert options.schedule_period == 1.0
    assert options.scheduler_names == ("volcano",)
    assert options.default_queue == "default"
    assert not options.leader_elect
    assert (options.lease.namespace, options.lease.name) == ("volcano-system", "vc-scheduler")
    assert (options.lease.lease_duration, options.lease.renew_deadline,
            options.lease.retry_period) == (15.0, 10.0, 2.0)  # fmt: skip
    assert (options.kube_api_qps, options.kube_api_burst) == (2000.0, 2000)
    # Off unless --enable-metrics / --enable-healthz, as vc-scheduler.
    assert (options.listen_address, options.healthz_address) == ("", "")
    switched = _options(parse("--enable-metrics", "--enable-healthz=true"))
    assert (switched.listen_address, switched.healthz_address) == (":8080", ":11251")


def test_volcano_chart_arguments_are_accepted() -> None:
    args = parse(
        "--logtostderr", "--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf",
        "--enable-healthz=true", "--enable-metrics=true", "--leader-elect=false",
        "--kube-api-qps=2000", "--kube-api-burst=2000", "--schedule-period=500ms",
        "--lock-object-namespace=volcano", "--scheduler-name=volcano",
        "--scheduler-name=gpu-sched", "-v=3", "2>&1",
    )  # fmt: skip
    options = _options(args)
    assert args.verbosity == 3 and args.leftovers == ["2>&1"]
    assert options.schedule_period == 0.5
    assert options.scheduler_names == ("volcano", "gpu-sched")
    assert options.lease.namespace == "volcano"
    assert options.scheduler_conf == "/volcano.scheduler/volcano-scheduler.conf"


def test_leader_election_flags() -> None:
    options = _options(parse("--leader-elect", "--leader-elect-lease-duration=30s",
                             "--leader-elect-renew-deadline=20s",
                             "--leader-elect-retry-period=1s",
                             "--leader-elect-resource-name=mine"))  # fmt: skip
    assert options.leader_elect
    assert (options.lease.name, options.lease.lease_duration) == ("mine", 30.0)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--schedule-period=fast"], "invalid duration 'fast'"),
        (["--leader-elect=maybe"], "invalid boolean value 'maybe'"),
        (["--events=some"], "invalid choice: 'some'"),
    ],
)
def test_flag_errors_name_the_value(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scheduler", *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--leader-elect", "--leader-elect-renew-deadline=20s"], "lease-duration must be greater"),
        (["--default-queue=a/b"], "must be a cluster Queue name"),
        (["--enable-metrics", "--listen-address=8080"], "expected host:port"),
        (["--schedule-period=0s"], "must be positive"),
    ],
)
def test_option_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scheduler", *argv]) == 2
    assert message in capsys.readouterr().err


def test_unreadable_kubeconfig_is_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scheduler", "--kubeconfig=/nonexistent/kubeconfig"]) == 2
    assert "cannot load cluster credentials" in capsys.readouterr().err
