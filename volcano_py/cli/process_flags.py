"""Flags the long-running processes share (`volcano-py scheduler`, `controllers`, `webhooks`):
cluster access, Lease leader election, endpoints and logging, with Go's spellings
(``--leader-elect=true``, ``-v=3``, durations like ``15s``; see ``goflags``) as Volcano's
components take them, and the flags accepted for compatibility only: each says in --help why it
changes nothing here, and the process logs that once when it is given."""

from __future__ import annotations

import argparse
import logging
import ssl
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from volcano_py.models.duration import DurationError, parse_duration

if TYPE_CHECKING:
    from volcano_py.runtime.apiclient import ClusterAccess
    from volcano_py.runtime.leaderelection import LeaseConfig
    from volcano_py.runtime.logsetup import LogTargets

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
        "--master",
        default="",
        metavar="URL",
        help="the API server's address, overriding the kubeconfig's server",
    )
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
    election.add_argument(
        "--lock-object-namespace",
        default="",
        metavar="NS",
        help="deprecated spelling of --leader-elect-resource-namespace (wins when set)",
    )
    compat_flag(
        election,
        "--leader-elect-resource-lock",
        "the lock is always a coordination.k8s.io Lease (Volcano ignores the value too)",
        metavar="KIND",
    )
    return election


def add_serving(
    parser: argparse.ArgumentParser, metrics: str, healthz: str, switches: bool = True
) -> argparse._ArgumentGroup:
    """The endpoints; with ``switches``, Volcano's ``--enable-metrics``/``--enable-healthz``
    (off by default, as upstream) decide whether each address is served at all."""
    serving = parser.add_argument_group("endpoints and logging")
    if switches:
        bool_flag(serving, "--enable-metrics", False, "serve /metrics on --listen-address")
        bool_flag(
            serving, "--enable-healthz", False, "serve /healthz and /readyz on --healthz-address"
        )
    serving.add_argument(
        "--listen-address",
        default=metrics,
        metavar="HOST:PORT",
        help=f"/metrics (default {metrics or 'empty'}; empty: off)",
    )
    serving.add_argument(
        "--healthz-address",
        default=healthz,
        metavar="HOST:PORT",
        help=f"/healthz and /readyz (default {healthz or 'empty'}; empty: off)",
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
    return serving


def served_addresses(args: argparse.Namespace, metrics: bool) -> tuple[str, str]:
    """(metrics address, health address), each empty when its switch is off. ``metrics``
    says whether /metrics is wanted on --listen-address (--enable-metrics, or the
    scheduler's --enable-pprof, which shares that server as upstream)."""
    return (
        args.listen_address if metrics else "",
        args.healthz_address if args.enable_healthz else "",
    )


def cluster_access(args: argparse.Namespace) -> ClusterAccess:
    """The credentials (``--kubeconfig`` or in-cluster), with ``--master`` overriding the
    server; with ``--master`` and no credentials found, the bare address as client-go's
    ``BuildConfigFromFlags``. Raises ValueError with the reason."""
    import dataclasses

    from volcano_py.runtime.apiclient import ClusterAccess

    try:
        access = ClusterAccess.load(args.kubeconfig)
    except Exception as error:  # kubeconfig problems come in many exception types
        if not args.master or args.kubeconfig:
            raise ValueError(f"cannot load cluster credentials: {error}") from None
        return ClusterAccess(server=args.master.rstrip("/"))
    if args.master:
        access = dataclasses.replace(access, server=args.master.rstrip("/"))
    return access


def lease_and_addresses(args: argparse.Namespace) -> LeaseConfig:
    """Check the endpoint addresses and build the Lease settings (validated when leader
    election is on); ValueError names the bad flag. ``--lock-object-namespace`` overrides
    the Lease's namespace, as Volcano's."""
    from volcano_py.runtime.health import parse_address
    from volcano_py.runtime.leaderelection import LeaseConfig

    for address in (args.listen_address, args.healthz_address):
        if address:
            parse_address(address)
    lease = LeaseConfig(
        namespace=args.lock_object_namespace or args.leader_elect_resource_namespace,
        name=args.leader_elect_resource_name,
        lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
    )
    if args.leader_elect:
        lease.validate()
    return lease


# ---------------------------------------------------------------------- compatibility only


class _CompatAction(argparse.Action):
    """Stores the value and notes (flag, why) in ``namespace.compat_given`` for the log."""

    def __init__(self, *args: Any, why: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.why = why

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, self.const if values is None else values)
        given = list(getattr(namespace, "compat_given", None) or [])
        given.append((self.option_strings[-1], self.why))
        namespace.compat_given = given


def compat_flag(
    group: argparse._ActionsContainer,
    name: str,
    why: str,
    kind: Callable[[str], Any] | None = str,
    metavar: str = "VALUE",
) -> None:
    """A flag of the upstream binary that has no effect here; ``kind`` None makes it a Go
    boolean (``--x``, ``--x=false``)."""
    group.set_defaults(compat_given=[])
    if kind is None:
        group.add_argument(
            name, nargs="?", const=True, type=go_bool, action=_CompatAction, why=why,
            metavar="BOOL", help=f"no effect: {why}",
        )  # fmt: skip
    else:
        group.add_argument(
            name, type=kind, action=_CompatAction, why=why, metavar=metavar,
            help=f"no effect: {why}",
        )  # fmt: skip


def log_compat_flags(args: argparse.Namespace, process: str) -> None:
    """One line per compatibility flag given, naming it and why it changes nothing."""
    log = logging.getLogger(f"volcano_py.{process}")
    for flag, why in getattr(args, "compat_given", None) or []:
        log.warning("%s has no effect in volcano-py %s: %s", flag, process, why)
    leftovers: Sequence[str] = getattr(args, "leftovers", None) or []
    if leftovers:
        log.info("ignoring positional arguments %s (as Volcano does)", " ".join(leftovers))


def add_compatibility(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """klog's logging flags (all of them: Volcano's binaries register klog's Go flag set),
    pflag's positionals, and the help group of the flags accepted for compatibility."""
    logging_flags = parser.add_argument_group("logging (klog's flags)")
    bool_flag(logging_flags, "--logtostderr", True, "log to stderr only, not to files")
    bool_flag(logging_flags, "--alsologtostderr", False, "with --logtostderr=false: stderr as well")
    logging_flags.add_argument(
        "--log-file",
        default="",
        metavar="FILE",
        help="with --logtostderr=false: log to FILE",
    )
    logging_flags.add_argument(
        "--log-dir",
        default="",
        metavar="DIR",
        help="with --logtostderr=false and no --log-file: log to DIR/volcano-py-<process>.log"
        " (one file; klog's per-severity file names are not reproduced); under deploy/base's"
        " read-only root filesystem only /tmp (an emptyDir) is writable",
    )
    logging_flags.add_argument(
        "--stderrthreshold",
        type=klog_severity,
        default=logging.NOTSET,
        metavar="SEVERITY",
        help="INFO, WARNING, ERROR or FATAL (or 0-3): records below it stay off stderr"
        " (default INFO, as Volcano sets it)",
    )
    bool_flag(
        logging_flags,
        "--legacy-stderr-threshold-behavior",
        False,
        "apply --stderrthreshold only when also logging to files (klog's old rule)",
    )
    bool_flag(logging_flags, "--skip-headers", False, "no time, level or logger before records")
    bool_flag(logging_flags, "--skip-log-headers", False, "same as --skip-headers here")

    group = parser.add_argument_group(
        "accepted for compatibility (no effect here; each line says why)"
    )
    compat_flag(group, "--add-dir-header", "records name their logger, not a Go file", kind=None)
    compat_flag(group, "--one-output", "one log file holds every severity here", kind=None)
    compat_flag(
        group, "--log-file-max-size", "log files are not rotated here (use logrotate)",
        kind=int, metavar="MB",
    )  # fmt: skip
    compat_flag(group, "--log-backtrace-at", "Go source positions do not exist here")
    compat_flag(group, "--vmodule", "per-Go-file verbosity; use -v")
    compat_flag(
        group, "--log-flush-frequency", "records are written when logged, never buffered",
        kind=go_duration, metavar="DURATION",
    )  # fmt: skip
    parser.add_argument("leftovers", nargs="*", help=argparse.SUPPRESS)
    return group


_SEVERITIES: Final = {
    "INFO": logging.NOTSET,  # klog's INFO includes every -v level
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
}


def klog_severity(text: str) -> int:
    name = text.strip().upper()
    if name.isdigit() and int(name) < len(_SEVERITIES):
        name = list(_SEVERITIES)[int(name)]
    if name not in _SEVERITIES:
        raise argparse.ArgumentTypeError(
            f"invalid severity {text!r} (INFO, WARNING, ERROR, FATAL or 0-3)"
        )
    return _SEVERITIES[name]


def log_targets(args: argparse.Namespace, process: str) -> LogTargets:
    """klog's flags as the log pipeline's targets."""
    from volcano_py.runtime.logsetup import LogTargets

    file = args.log_file or (
        str(Path(args.log_dir) / f"volcano-py-{process}.log") if args.log_dir else ""
    )
    return LogTargets(
        to_stderr=bool(args.logtostderr),
        also_to_stderr=bool(args.alsologtostderr),
        stderr_level=args.stderrthreshold,
        legacy_threshold=bool(args.legacy_stderr_threshold_behavior),
        file=file,
        headers=not (args.skip_headers or args.skip_log_headers),
    )


def configure_logging(args: argparse.Namespace, process: str) -> None:
    """The log pipeline from -v, --log-format and klog's flags; then the compatibility
    flags given are logged. A log file that cannot be opened is a ValueError."""
    from volcano_py.runtime import logsetup

    try:
        logsetup.configure(args.verbosity, args.log_format, log_targets(args, process))
    except OSError as error:
        raise ValueError(f"--log-file/--log-dir: cannot open the log file: {error}") from None
    log_compat_flags(args, process)


def add_tls_files(group: argparse._ActionsContainer) -> None:
    """``--ca-cert-file``, ``--tls-cert-file``, ``--tls-private-key-file``: /healthz over TLS
    when all three are given (upstream's ``StartHealthz``)."""
    for name, what in (
        ("--ca-cert-file", "CA of the clients of /healthz"),
        ("--tls-cert-file", "serving certificate of /healthz"),
        ("--tls-private-key-file", "key of --tls-cert-file"),
    ):
        group.add_argument(
            name,
            default="",
            metavar="FILE",
            help=f"{what}; with all three given, /healthz is served over TLS",
        )


def health_tls(ca_file: str, cert_file: str, key_file: str) -> ssl.SSLContext | None:
    """The TLS settings of /healthz when the three files are given (else None, plain HTTP):
    TLS 1.2 or later, a client certificate checked against the CA when one is offered.
    ValueError names the files that cannot be loaded."""
    if not (ca_file and cert_file and key_file):
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.verify_mode = ssl.CERT_OPTIONAL
    try:
        context.load_cert_chain(cert_file, key_file)
        context.load_verify_locations(cafile=ca_file)
    except (OSError, ssl.SSLError) as error:
        raise ValueError(
            f"cannot load --ca-cert-file {ca_file!r}, --tls-cert-file {cert_file!r} or"
            f" --tls-private-key-file {key_file!r}: {error}"
        ) from None
    return context


def add_version(parser: argparse.ArgumentParser) -> None:
    bool_flag(parser, "--version", False, "print the version and exit")


def print_version_if_asked(args: argparse.Namespace) -> bool:
    if not args.version:
        return False
    from volcano_py import __version__

    print(f"volcano-py {__version__}")
    return True
