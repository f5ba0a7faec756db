"""`volcano-py gen-admission-secret`: makes the admission webhooks' serving certificate and
gives its CA to the API server, as the Job of upstream chart's admission-init does with its
gen-admission-secret.sh (same ``--service``, ``--namespace`` and ``--secret`` flags).

deploy/base runs it as the Job volcano-py-webhooks-certgen, the Helm chart as a pre-install
and pre-upgrade hook. It writes the Secret (kubernetes.io/tls with ``ca.crt``; kept while still
good, so re-runs change nothing) and the caBundle of each ``--mutating-webhook-configuration``
and ``--validating-webhook-configuration`` (waited for up to ``--wait``), then exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from volcano_py.cli.process_flags import add_cluster_access, cluster_access, go_duration

HELP = "make the webhooks' serving certificate Secret and set its CA in the webhook configurations"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_access(parser, qps=5.0, burst=10)
    parser.add_argument("--service", required=True, help="the webhooks' Service name")
    parser.add_argument(
        "--namespace", required=True, help="namespace of the Service and the Secret"
    )
    parser.add_argument(
        "--secret", required=True, help="the Secret to write (tls.crt, tls.key, ca.crt)"
    )
    parser.add_argument(
        "--mutating-webhook-configuration",
        action="append",
        default=[],
        metavar="NAME",
        help="a MutatingWebhookConfiguration to get the CA (repeatable)",
    )
    parser.add_argument(
        "--validating-webhook-configuration",
        action="append",
        default=[],
        metavar="NAME",
        help="a ValidatingWebhookConfiguration to get the CA (repeatable)",
    )
    parser.add_argument(
        "--validity-days",
        type=int,
        default=3650,
        metavar="N",
        help="validity of a new CA and certificate (default 3650)",
    )
    parser.add_argument(
        "--renew-days",
        type=int,
        default=30,
        metavar="N",
        help="replace a kept certificate with fewer days left than this (default 30)",
    )
    parser.add_argument(
        "--wait",
        type=go_duration,
        default=300.0,
        metavar="DURATION",
        help="how long to wait for each webhook configuration to exist (default 5m)",
    )


async def _run(args: argparse.Namespace) -> int:
    from volcano_py.operator.webhooks.admission_secret import (
        SecretRequest,
        ensure_secret,
        inject_ca,
    )
    from volcano_py.runtime.apiclient import ApiError, KubeApi

    request = SecretRequest(
        service=args.service,
        namespace=args.namespace,
        secret=args.secret,
        days=args.validity_days,
        min_days_left=args.renew_days,
    )
    configurations = [
        *(("mutating", name) for name in args.mutating_webhook_configuration),
        *(("validating", name) for name in args.validating_webhook_configuration),
    ]
    api = KubeApi(
        cluster_access(args),
        qps=args.kube_api_qps,
        burst=args.kube_api_burst,
        user_agent="volcano-py-gen-admission-secret",
    )
    try:
        async with api:
            ca_pem = await ensure_secret(api, request)
            await inject_ca(api, configurations, ca_pem, timeout=args.wait)
    except ApiError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    if args.validity_days <= args.renew_days:
        print(
            f"error: --validity-days {args.validity_days} must exceed --renew-days"
            f" {args.renew_days} (else every run would replace the certificate)",
            file=sys.stderr,
        )
        return 2
    try:
        cluster_access(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return asyncio.run(_run(args))
