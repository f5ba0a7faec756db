"""Go's flag syntax as vc-scheduler's pflag (plus Go's ``flag``) accepts it."""

from __future__ import annotations

import logging

import pytest

from volcano_py.cli.main import main, parse_args


def test_go_spellings() -> None:
    args = parse_args([
        "scheduler", "-logtostderr", "-v", "4", "-schedule-period=2s", "--default-queue", "q",
        "-kube-api-qps", "5", "--log_dir=/x", "--leader-elect", "--priority-class=F",
    ])  # fmt: skip
    assert args.verbosity == 4 and args.schedule_period == 2.0
    assert args.default_queue == "q" and args.kube_api_qps == 5.0
    assert args.leader_elect is True and args.priority_class is False
    assert args.leftovers == []


@pytest.mark.parametrize("spelling", ["-v=3", "-v3", "-v 3", "--v=3", "--v 3", "-v=03"])
def test_verbosity_shorthand(spelling: str) -> None:
    assert parse_args(["controllers", *spelling.split()]).verbosity == 3


def test_a_bool_takes_a_value_only_after_equals() -> None:
    # As Go: "--cache-dumper false" is --cache-dumper=true and a positional "false".
    args = parse_args(["scheduler", "--cache-dumper", "false"])
    assert args.cache_dumper is True and args.leftovers == ["false"]


def test_a_value_may_start_with_a_dash() -> None:
    assert (
        parse_args(["scheduler", "--percentage-nodes-to-find", "-5"]).percentage_nodes_to_find == -5
    )


def test_positionals_may_sit_among_the_flags() -> None:
    args = parse_args(["scheduler", "--cache-dumper", "false", "--leader-elect", "2>&1"])
    assert args.leftovers == ["false", "2>&1"] and args.leader_elect is True


def test_double_dash_ends_flags() -> None:
    assert parse_args(["scheduler", "--", "--leader-elect"]).leftovers == ["--leader-elect"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--no-such-flag=1"], "unrecognized arguments: --no-such-flag=1"),
        (["--leader"], "unrecognized arguments: --leader"),  # no prefix matching in Go
        (["--minimum-feasible-nodes=ten"], "--minimum-feasible-nodes: invalid int value"),
        (["--schedule-period"], "--schedule-period: expected one argument"),
        (["---leader-elect"], "unrecognized arguments: ---leader-elect"),
    ],
)
def test_errors_name_the_flag_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scheduler", *argv])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_compatibility_flags_are_logged_with_the_reason(caplog: pytest.LogCaptureFixture) -> None:
    from volcano_py.cli.process_flags import log_compat_flags

    args = parse_args(["scheduler", "--node-worker-threads=3", "--vmodule=x=2", "2>&1"])
    assert args.node_worker_threads == 3
    with caplog.at_level(logging.INFO):
        log_compat_flags(args, "scheduler")
    text = caplog.text
    assert "--node-worker-threads has no effect in volcano-py scheduler" in text
    assert "--vmodule has no effect" in text and "ignoring positional arguments 2>&1" in text
