"""`volcano-py webhooks`: Volcano's admission webhooks (vc-webhook-manager) over HTTPS: Jobs,
Queues, PodGroups, HyperNodes and Pods are defaulted and checked when they are applied, so a bad
object is refused with a message naming the field instead of being stored.

Every flag of vc-webhook-manager is accepted in Go's syntax (see ``goflags``): ``--listen-address``
and ``--port`` are where the webhooks listen, as upstream (``--webhook-address`` is this
project's older spelling of ``--listen-address``); ``/metrics`` is served on
``--metrics-address`` (volcano-py's own). Flags without effect here are listed in --help under
"accepted for compatibility" with the reason; docs/configuration.md has them all.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from volcano_py.cli.feature_gates import FeatureGates, add_feature_gates
from volcano_py.cli.process_flags import (
    add_cluster_access,
    add_compatibility,
    add_version,
    bool_flag,
    cluster_access,
    compat_flag,
    configure_logging,
    go_duration,
    health_tls,
    print_version_if_asked,
)

HELP = "serve Volcano's admission webhooks (mutate and validate Jobs, Queues, PodGroups, Pods)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=50.0, burst=100)
    add_version(parser)

    serving = parser.add_argument_group("webhook server")
    serving.add_argument(
        "--tls-cert-file",
        default="",
        metavar="FILE",
        help="x509 serving certificate (with its CA chain) for HTTPS (required)",
    )
    serving.add_argument(
        "--tls-private-key-file",
        default="",
        metavar="FILE",
        help="private key of --tls-cert-file (required)",
    )
    serving.add_argument(
        "--listen-address",
        "--webhook-address",
        dest="webhook_address",
        default="",
        metavar="HOST",
        help="address the webhooks listen on (default empty: every interface)",
    )
    serving.add_argument(
        "--port", type=int, default=8443, help="HTTPS port of the webhooks (default 8443)"
    )
    serving.add_argument(
        "--ca-cert-file",
        default="",
        metavar="FILE",
        help="CA of the serving certificate: written into the caBundle of the webhook"
        " configurations volcano-admission-service-<path> (waiting up to 5 min for each)"
        " before serving; with --enable-healthz, /healthz is then served over TLS",
    )
    serving.add_argument(
        "--graceful-shutdown-time",
        type=go_duration,
        default=30.0,
        metavar="DURATION",
        help="on SIGTERM, how long in-flight reviews may take to finish (default 30s)",
    )
    serving.add_argument(
        "--enabled-admission",
        default="",
        metavar="PATHS",
        help="comma-separated webhook paths to serve, e.g. /jobs/mutate,/jobs/validate"
        " (default: every path volcano-py has; paths it lacks are logged)",
    )

    admission = parser.add_argument_group("admission")
    admission.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="the scheduler a Job naming none gets: the first given (default volcano);"
        " /pods/validate checks the pods of every one given",
    )
    admission.add_argument(
        "--admission-conf",
        default="",
        metavar="FILE",
        help="resourceGroups for /pods/mutate (upstream's volcano-admission.conf), re-read"
        " when it changes (default empty: pods are not mutated)",
    )
    bool_flag(
        admission,
        "--enable-queue-allocated-pods-check",
        False,
        "refuse deleting a queue that has allocated pods",
    )
    admission.add_argument(
        "--max-queue-depth",
        type=int,
        default=5,
        metavar="N",
        help="deepest level of a hierarchical queue below root (default 5)",
    )
    bool_flag(
        admission,
        "--enable-root-queue-protection",
        True,
        "refuse changing the root queue's capability, deserved or guarantee",
    )
    add_feature_gates(admission, "None is acted on here.")

    endpoints = parser.add_argument_group("endpoints and logging")
    bool_flag(endpoints, "--enable-healthz", False, "serve /healthz on --healthz-address")
    endpoints.add_argument(
        "--healthz-address",
        default=":11251",
        metavar="HOST:PORT",
        help="/healthz and /readyz with --enable-healthz (default :11251)",
    )
    endpoints.add_argument(
        "--metrics-address",
        default="",
        metavar="HOST:PORT",
        help="/metrics (volcano-py's own; default empty: off)",
    )
    endpoints.add_argument(
        "-v", "--v", type=int, default=2, dest="verbosity", metavar="N",
        help="log verbosity: <=3 info, 4 debug, >=5 trace (default 2)",
    )  # fmt: skip
    endpoints.add_argument("--log-format", choices=("plain", "json"), default="plain")

    compat = add_compatibility(parser)
    by_name = (
        "the webhook configurations are found by name (volcano-admission-service-<path>),"
        " as upstream's caBundle update does; namespace, service and URL are not used"
    )
    compat_flag(compat, "--webhook-namespace", by_name, metavar="NS")
    compat_flag(compat, "--webhook-service-name", by_name, metavar="NAME")
    compat_flag(compat, "--webhook-url", by_name, metavar="URL")


def _read_ca(path: str) -> bytes:
    if not path:
        return b""
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise ValueError(f"cannot read --ca-cert-file {path!r}: {error.strerror}") from None


def _enabled_paths(text: str) -> frozenset[str] | None:
    from volcano_py.operator.webhooks.routes import ROUTES

    if not text:
        return None
    paths = frozenset(path.strip() for path in text.split(",") if path.strip())
    missing = sorted(paths - {route.path for route in ROUTES})
    if missing:
        logging.getLogger("volcano_py.webhooks").warning(
            "--enabled-admission: %s not implemented in volcano-py; not served",
            ", ".join(missing),
        )
    return paths


def run(args: argparse.Namespace) -> int:
    if print_version_if_asked(args):
        return 0
    try:
        configure_logging(args, "webhooks")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from volcano_py.operator.webhooks.admission_conf import AdmissionConfFile
    from volcano_py.operator.webhooks.options import WebhookOptions
    from volcano_py.operator.webhooks.server import (
        WebhookServer,
        WebhooksOptions,
        server_ssl_context,
    )
    from volcano_py.runtime.health import parse_address

    logging.getLogger("volcano_py.webhooks").debug("arguments %s", args)
    try:
        if not args.tls_cert_file or not args.tls_private_key_file:
            raise ValueError(
                "--tls-cert-file and --tls-private-key-file are required: the API server"
                " calls admission webhooks over HTTPS only"
            )
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port {args.port} is not a port (0-65535)")
        if args.max_queue_depth < 1:
            raise ValueError("--max-queue-depth must be at least 1")
        healthz_address = args.healthz_address if args.enable_healthz else ""
        for address in (args.metrics_address, healthz_address):
            if address:
                parse_address(address)
        context = server_ssl_context(args.tls_cert_file, args.tls_private_key_file)
        ca_bundle = _read_ca(args.ca_cert_file)
        health_ssl = health_tls(args.ca_cert_file, args.tls_cert_file, args.tls_private_key_file)
        access = cluster_access(args)
        admission_conf = AdmissionConfFile(args.admission_conf) if args.admission_conf else None
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    FeatureGates(args.feature_gates).warn_without_effect((), "webhooks")
    options = WebhooksOptions(
        kubeconfig=args.kubeconfig,
        address=args.webhook_address or "0.0.0.0",
        port=args.port,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        listen_address=args.metrics_address,
        healthz_address=healthz_address,
        shutdown_grace=args.graceful_shutdown_time,
        ca_bundle=ca_bundle,
        health_ssl=health_ssl,
        handlers=WebhookOptions(
            scheduler_name=(args.scheduler_name or ["volcano"])[0],
            queue_allocated_pods_check=bool(args.enable_queue_allocated_pods_check),
            max_queue_depth=args.max_queue_depth,
            root_queue_protection=bool(args.enable_root_queue_protection),
            enabled_paths=_enabled_paths(args.enabled_admission),
            scheduler_names=tuple(args.scheduler_name or ["volcano"]),
            admission_conf=admission_conf,
        ),
    )
    return asyncio.run(WebhookServer(options, access, context).run())
