"""`volcano-py webhooks`: Volcano's admission webhooks (vc-webhook-manager) over HTTPS: Jobs,
Queues, PodGroups and HyperNodes are defaulted and checked when they are applied, so a bad
object is refused with a message naming the field instead of being stored.

Flags follow vc-webhook-manager (``--tls-cert-file``, ``--tls-private-key-file``, ``--port``,
``--scheduler-name``); the webhooks listen on ``--webhook-address`` (upstream's
``--listen-address``, which here is the /metrics address as in the other processes).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from volcano_py.cli.process_flags import add_cluster_access, add_serving, bool_flag

HELP = "serve Volcano's admission webhooks (mutate and validate Jobs, Queues, PodGroups)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=50.0, burst=100)

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
        "--webhook-address",
        default="0.0.0.0",
        metavar="HOST",
        help="address the webhooks listen on (default 0.0.0.0)",
    )
    serving.add_argument(
        "--port", type=int, default=8443, help="HTTPS port of the webhooks (default 8443)"
    )

    admission = parser.add_argument_group("admission")
    admission.add_argument(
        "--scheduler-name",
        action="append",
        metavar="NAME",
        help="the scheduler a Job naming none gets: the first given (default volcano)",
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
    add_serving(parser, metrics="", healthz="")


def run(args: argparse.Namespace) -> int:
    from volcano_py.runtime import logsetup

    logsetup.configure(args.verbosity, args.log_format)
    from volcano_py.operator.webhooks.options import WebhookOptions
    from volcano_py.operator.webhooks.server import (
        WebhookServer,
        WebhooksOptions,
        server_ssl_context,
    )
    from volcano_py.runtime.apiclient import ClusterAccess
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
        for address in (args.listen_address, args.healthz_address):
            if address:
                parse_address(address)
        context = server_ssl_context(args.tls_cert_file, args.tls_private_key_file)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    options = WebhooksOptions(
        kubeconfig=args.kubeconfig,
        address=args.webhook_address,
        port=args.port,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        kube_api_qps=args.kube_api_qps,
        kube_api_burst=args.kube_api_burst,
        listen_address=args.listen_address,
        healthz_address=args.healthz_address,
        handlers=WebhookOptions(
            scheduler_name=(args.scheduler_name or ["volcano"])[0],
            queue_allocated_pods_check=bool(args.enable_queue_allocated_pods_check),
            max_queue_depth=args.max_queue_depth,
        ),
    )
    try:
        access = ClusterAccess.load(options.kubeconfig)
    except Exception as error:  # kubeconfig problems come in many exception types
        print(f"error: cannot load cluster credentials: {error}", file=sys.stderr)
        return 2
    return asyncio.run(WebhookServer(options, access, context).run())
