"""Flags the long-running processes share (`volcano-py scheduler`, `volcano-py controllers`):
cluster access, Lease leader election, endpoints and logging, with Go's spellings
(``--leader-elect=true``, ``-v=3``, durations like ``15s``) as Volcano's components take them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from volcano_py.models.duration import DurationError, parse_duration

if TYPE_CHECKING:
    from volcano_py.runtime.leaderelection import LeaseConfig

_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})


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


def bool_flag(
    parser: argparse._ActionsContainer, name: str, default: bool | None, help_text: str
) -> None:
    """A Go-style boolean flag: ``--x``, ``--x=true`` and ``--x false`` all work."""
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


def add_cluster_access(parser: argparse.ArgumentParser, qps: float, burst: int) -> None:
    client = parser.add_argument_group("cluster access")
    client.add_argument(
        "--kubeconfig",
        help="kubeconfig file (default: in-cluster service"
        " account, else $KUBECONFIG or ~/.kube/config)",
    )
    client.add_argument(
        "--kube-api-qps",
        type=float,
        default=qps,
        metavar="QPS",
        help=f"requests per second to the API server (default {qps:g})",
    )
    client.add_argument(
        "--kube-api-burst",
        type=int,
        default=burst,
        metavar="N",
        help=f"burst of requests to the API server (default {burst})",
    )


def add_leader_election(
    parser: argparse.ArgumentParser, lease_name: str
) -> argparse._ArgumentGroup:
    """The Lease flags; the group is returned for a process's own extra ones."""
    election = parser.add_argument_group("leader election (a coordination.k8s.io/v1 Lease)")
    bool_flag(election, "--leader-elect", False, "run only while holding the Lease")
    for flag, default in (
        ("--leader-elect-lease-duration", "15s"),
        ("--leader-elect-renew-deadline", "10s"),
        ("--leader-elect-retry-period", "2s"),
    ):
        election.add_argument(
            flag,
            type=go_duration,
            default=go_duration(default),
            metavar="DURATION",
            help=f"default {default}",
        )
    election.add_argument(
        "--leader-elect-resource-namespace",
        default="volcano-system",
        metavar="NS",
        help="namespace of the Lease (default volcano-system)",
    )
    election.add_argument(
        "--leader-elect-resource-name",
        default=lease_name,
        metavar="NAME",
        help=f"name of the Lease (default {lease_name})",
    )
    return election


def add_serving(parser: argparse.ArgumentParser, metrics: str, healthz: str) -> None:
    serving = parser.add_argument_group("endpoints and logging")
    serving.add_argument(
        "--listen-address",
        default=metrics,
        metavar="HOST:PORT",
        help=f"/metrics (default {metrics}; empty: off)",
    )
    serving.add_argument(
        "--healthz-address",
        default=healthz,
        metavar="HOST:PORT",
        help=f"/healthz and /readyz (default {healthz}; empty: off)",
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


def lease_and_addresses(args: argparse.Namespace, namespace: str = "") -> LeaseConfig:
    """Check the endpoint addresses and build the Lease settings (validated when leader
    election is on); ValueError names the bad flag. ``namespace`` overrides the Lease's."""
    from volcano_py.runtime.health import parse_address
    from volcano_py.runtime.leaderelection import LeaseConfig

    for address in (args.listen_address, args.healthz_address):
        if address:
            parse_address(address)
    lease = LeaseConfig(
        namespace=namespace or args.leader_elect_resource_namespace,
        name=args.leader_elect_resource_name,
        lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
    )
    if args.leader_elect:
        lease.validate()
    return lease
