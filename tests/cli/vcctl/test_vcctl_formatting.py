"""vcctl's Go-compatible formatting and pflag-compatible parsing.

Transcribed: pkg/cli/util/util_test.go ``TestJobUtil`` (14 cases of HumanDuration).
"""

from __future__ import annotations

import pytest

from volcano_py.cli.vcctl.commands import standalone_commands, vcctl_commands
from volcano_py.cli.vcctl.flags import UsageError, build_parser, parse
from volcano_py.cli.vcctl.formatting import (
    QUANTITY_SYNTAX_ERROR,
    canonical_quantity,
    go_json,
    go_list,
    human_duration,
    resource_list,
)

MINUTE, HOUR, DAY = 60, 3600, 86400


# pkg/cli/util/util_test.go TestJobUtil: (case name, duration in seconds, expected)
@pytest.mark.parametrize(
    ("case", "seconds", "expected"),
    [
        ("InvalidTime", -MINUTE, "<invalid>"),
        ("SmallInvalieTime", -0.001, "0s"),
        ("NormalSeconds", 62, "62s"),
        ("NormalMinutes", 180, "3m"),
        ("NormalMinutesWithSecond", 190, "3m10s"),
        ("BiggerMinutesWithoutSecond", 121 * MINUTE + 56, "121m"),
        ("NormalHours", 5 * HOUR + 9, "5h"),
        ("NormalHoursWithMinute", 5 * HOUR + 7 * MINUTE + 9, "5h7m"),
        ("BiggerHoursWithoutMinute", 12 * HOUR + 7 * MINUTE + 9, "12h"),
        ("NormalDays", 5 * DAY + 7 * MINUTE + 9, "5d"),
        ("NormalDaysWithHours", 5 * DAY + 9 * HOUR, "5d9h"),
        ("BiggerDayWithoutHours", 531 * DAY + 7 * MINUTE + 9, "531d"),
        ("NormalYears", (365 * 5 + 89) * DAY + 7 * MINUTE + 9, "5y89d"),
        ("BiggerYears", (365 * 12 + 15) * DAY + 7 * MINUTE + 9, "12y"),
    ],
)
def test_job_util_human_duration(case: str, seconds: float, expected: str) -> None:
    assert human_duration(seconds) == expected, case


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1000m", "1"),
        ("100Mi", "100Mi"),
        ("1.5Gi", "1536Mi"),
        ("1500m", "1500m"),
        ("1000", "1k"),
        ("1e3", "1e3"),
        ("512", "512"),
        ("0.5Ki", "512"),
        (None, "0"),
    ],
)
def test_quantities_print_in_go_canonical_spelling(text: str | None, canonical: str) -> None:
    assert canonical_quantity(text) == canonical


def test_resource_list_is_populate_resource_list_v1() -> None:
    assert resource_list("cpu=1000m,memory=100Mi") == {"cpu": "1", "memory": "100Mi"}
    assert resource_list("") == {}
    with pytest.raises(ValueError, match="invalid argument syntax cpu, expected"):
        resource_list("cpu")
    with pytest.raises(ValueError) as error:
        resource_list("cpu=lots")
    assert str(error.value) == QUANTITY_SYNTAX_ERROR


def test_go_json_and_list() -> None:
    assert go_json({"b": "<x>", "a": "1"}) == '{"a":"1","b":"\\u003cx\\u003e"}'
    assert go_list(None) == "[]"
    assert go_list(["a", "b"]) == "[a b]"


def _parse(argv: list[str]) -> dict[str, object]:
    command = vcctl_commands()[("job", "list")]
    return parse(build_parser("vcctl job list", "", command.flags), command.flags, argv)


@pytest.mark.parametrize(
    ("argv", "key", "value"),
    [
        (["-n", "ns"], "namespace", "ns"),
        (["-n=ns"], "namespace", "ns"),
        (["-nns"], "namespace", "ns"),
        (["--namespace", "ns"], "namespace", "ns"),
        (["--namespace=ns"], "namespace", "ns"),
        (["--all-namespaces"], "all_namespaces", True),
        (["--all-namespaces=false"], "all_namespaces", False),
        ([], "namespace", "default"),
        ([], "all_namespaces", False),
    ],
)
def test_pflag_syntax(argv: list[str], key: str, value: object) -> None:
    assert _parse(argv)[key] == value


def test_a_boolean_never_takes_the_next_argument() -> None:
    with pytest.raises(UsageError, match="unexpected argument 'x'"):
        _parse(["--all-namespaces", "x"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--all"], "unknown flag: --all"),  # no prefix matching, as pflag
        (["--bogus=1"], "unknown flag: --bogus"),
        (["myjob"], "unexpected argument 'myjob'"),
    ],
)
def test_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        _parse(argv)


def test_integers_as_go_parses_them() -> None:
    command = vcctl_commands()[("queue", "create")]
    parser = build_parser("vcctl queue create", "", command.flags)
    assert parse(parser, command.flags, ["-w", "0x10"])["weight"] == 16
    with pytest.raises(UsageError, match="invalid syntax"):
        parse(parser, command.flags, ["-w", "heavy"])
    with pytest.raises(UsageError, match="out of range"):
        parse(parser, command.flags, ["-w", str(2**31)])


def _flags(names: tuple[str, ...]) -> dict[str, tuple[str, object]]:
    if len(names) == 1:
        command = standalone_commands()[names[0]]
    else:
        command = vcctl_commands()[(names[0], names[1])]
    return {f.long: (f.short, f.default) for f in command.flags}


# Upstream's flag definitions (Init*Flags in pkg/cli/**): name -> (shorthand, default).
# The TestInit*Flags tests of job, jobflow, jobtemplate check their presence; this table
# also pins shorthands and defaults.
COMMON = {"master": ("s", ""), "kubeconfig": ("k", "")}
UPSTREAM_FLAGS: dict[tuple[str, ...], dict[str, tuple[str, object]]] = {
    ("job", "run"): {
        **COMMON,
        "image": ("i", "busybox"),
        "namespace": ("n", "default"),
        "name": ("N", ""),
        "min": ("m", 1),
        "replicas": ("r", 1),
        "requests": ("R", "cpu=1000m,memory=100Mi"),
        "limits": ("L", "cpu=1000m,memory=100Mi"),
        "scheduler": ("S", "volcano"),
        "filename": ("f", ""),
    },
    ("job", "list"): {
        **COMMON,
        "queue": ("q", ""),
        "namespace": ("n", "default"),
        "scheduler": ("S", ""),
        "all-namespaces": ("", False),
        "selector": ("", ""),
    },
    ("job", "view"): {**COMMON, "namespace": ("n", "default"), "name": ("N", "")},
    ("job", "suspend"): {**COMMON, "namespace": ("n", "default"), "name": ("N", "")},
    ("job", "resume"): {**COMMON, "namespace": ("n", "default"), "name": ("N", "")},
    ("job", "delete"): {**COMMON, "namespace": ("n", "default"), "name": ("N", "")},
    ("queue", "create"): {
        **COMMON,
        "name": ("n", "test"),
        "weight": ("w", 1),
        "state": ("S", "Open"),
    },
    ("queue", "delete"): {**COMMON, "name": ("n", "")},
    ("queue", "operate"): {**COMMON, "name": ("n", ""), "weight": ("w", 0), "action": ("a", "")},
    ("queue", "list"): {**COMMON},
    ("queue", "get"): {**COMMON, "name": ("n", "")},
    ("jobflow", "create"): {**COMMON, "file": ("f", "")},
    ("jobflow", "list"): {**COMMON, "namespace": ("n", "default"), "all-namespaces": ("", False)},
    ("jobflow", "get"): {**COMMON, "name": ("N", ""), "namespace": ("n", "default")},
    ("jobflow", "delete"): {
        **COMMON,
        "name": ("N", ""),
        "namespace": ("n", "default"),
        "file": ("f", ""),
    },
    ("jobflow", "describe"): {
        **COMMON,
        "name": ("N", ""),
        "namespace": ("n", "default"),
        "format": ("o", "yaml"),
    },
    ("jobtemplate", "create"): {**COMMON, "file": ("f", "")},
    ("jobtemplate", "list"): {**COMMON, "namespace": ("n", "default")},
    ("jobtemplate", "get"): {**COMMON, "name": ("N", ""), "namespace": ("n", "default")},
    ("jobtemplate", "delete"): {
        **COMMON,
        "name": ("N", ""),
        "namespace": ("n", "default"),
        "file": ("f", ""),
    },
    ("jobtemplate", "describe"): {
        **COMMON,
        "name": ("N", ""),
        "namespace": ("n", "default"),
        "format": ("o", "yaml"),
    },
    ("pod", "list"): {
        **COMMON,
        "queue": ("q", ""),
        "job": ("j", ""),
        "namespace": ("n", "default"),
        "all-namespaces": ("", False),
    },
    ("vsub",): {
        **COMMON,
        "image": ("i", ""),
        "namespace": ("N", ""),
        "name": ("n", ""),
        "min": ("m", 1),
        "replicas": ("r", 1),
        "requests": ("R", "cpu=1000m,memory=100Mi"),
        "limits": ("L", "cpu=1000m,memory=100Mi"),
        "scheduler": ("S", ""),
        "command": ("c", ""),
    },
    ("vjobs",): {
        **COMMON,
        "namespace": ("N", "default"),
        "name": ("n", ""),
        "scheduler": ("S", ""),
        "all-namespaces": ("", False),
        "selector": ("", ""),
    },
    ("vqueues",): {**COMMON, "name": ("n", "")},
    ("vcancel",): {**COMMON, "namespace": ("N", "default"), "name": ("n", "")},
    ("vsuspend",): {**COMMON, "namespace": ("N", "default"), "name": ("n", "")},
    ("vresume",): {**COMMON, "namespace": ("N", "default"), "name": ("n", "")},
}


@pytest.mark.parametrize("names", sorted(UPSTREAM_FLAGS), ids=" ".join)
def test_flags_are_upstreams(names: tuple[str, ...]) -> None:
    assert _flags(names) == UPSTREAM_FLAGS[names]


def test_every_upstream_command_is_here() -> None:
    names = set(vcctl_commands()) | {(name,) for name in standalone_commands()}
    assert names == set(UPSTREAM_FLAGS)
