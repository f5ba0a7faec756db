"""The webhook server: aiohttp over TLS, one POST route per webhook, ``/healthz`` and
``/readyz`` on the same port (the API server reaches it only over HTTPS), ``/metrics`` and the
probes also on ``--listen-address`` / ``--healthz-address`` if set.

A handler's bug is a refusal naming the object and the error (logged with its traceback),
never a 500 the API server would turn into an opaque failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl
from dataclasses import dataclass, field

from aiohttp import web

from volcano_py.metrics import WEBHOOKS_REGISTRY
from volcano_py.operator.webhooks.cabundle import inject_ca_bundle
from volcano_py.operator.webhooks.lookups import ClusterReadError, ClusterView, LiveClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import (
    BadReview,
    Verdict,
    deny,
    parse_review,
    response,
)
from volcano_py.operator.webhooks.routes import ROUTES, Route
from volcano_py.runtime.apiclient import ApiError, ClusterAccess, KubeApi
from volcano_py.runtime.health import Handler, HttpEndpoints, Probes

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024 * 1024  # the API server sends at most a few MB per object


async def review(
    route: Route, body: bytes, view: ClusterView, options: WebhookOptions
) -> web.Response:
    """The answer to one POST on ``route``: 400 for a body that is no AdmissionReview, else
    an AdmissionReview whose response allows, refuses (with why) or patches."""
    try:
        request = parse_review(body)
    except BadReview as error:
        return web.json_response({"message": f"{route.path}: {error}"}, status=400)
    verdict: Verdict
    if request.kind and request.kind != route.kind:
        verdict = deny(
            f"{request.label}: {route.path} admits {route.kind} objects, not {request.kind}"
        )
    else:
        try:
            verdict = await route.handler(request, view, options)
        except ClusterReadError as error:
            verdict = deny(f"{request.label}: {error}")
        except Exception as error:  # a bug must still answer, and name what it refused
            log.exception("%s: %s %s failed", route.path, request.operation, request.label)
            verdict = deny(f"{request.label}: internal error in {route.path}: {error!r}")
    if not verdict.allowed:
        log.info(
            "%s: refused %s %s: %s", route.path, request.operation, request.label, verdict.message
        )
    return web.json_response(response(request, verdict))


def _post(route: Route, view: ClusterView, options: WebhookOptions) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        return await review(route, await request.read(), view, options)

    return handler


async def _ok(request: web.Request) -> web.StreamResponse:
    return web.Response(text="ok\n")


def served_routes(options: WebhookOptions) -> list[Route]:
    """The routes ``--enabled-admission`` lets through (all without it)."""
    enabled = options.enabled_paths
    return [route for route in ROUTES if enabled is None or route.path in enabled]


def build_app(view: ClusterView, options: WebhookOptions) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY)
    for route in served_routes(options):
        app.router.add_post(route.path, _post(route, view, options))
    app.router.add_get("/healthz", _ok)
    app.router.add_get("/readyz", _ok)
    return app


def server_ssl_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """TLS 1.2+ with the serving certificate; an unreadable pair raises ValueError naming the
    flags' files."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as error:
        raise ValueError(
            f"cannot load --tls-cert-file {cert_file!r} / --tls-private-key-file"
            f" {key_file!r}: {error}"
        ) from None
    return context


@dataclass
class WebhooksOptions:
    kubeconfig: str | None = None
    address: str = "0.0.0.0"
    port: int = 8443
    tls_cert_file: str = ""
    tls_private_key_file: str = ""
    kube_api_qps: float = 50.0
    kube_api_burst: int = 100
    listen_address: str = ""
    healthz_address: str = ""
    # --graceful-shutdown-time: how long in-flight reviews may take to finish on SIGTERM.
    shutdown_grace: float = 30.0
    # --ca-cert-file's PEM: put into the webhook configurations before serving (if given).
    ca_bundle: bytes = b""
    # With --ca-cert-file, --tls-cert-file and --tls-private-key-file: /healthz over TLS.
    health_ssl: ssl.SSLContext | None = None
    handlers: WebhookOptions = field(default_factory=WebhookOptions)


class WebhookServer:
    def __init__(
        self, options: WebhooksOptions, access: ClusterAccess, context: ssl.SSLContext | None
    ) -> None:
        self.options = options
        self.access = access
        self.context = context
        self.port = options.port

    async def run(self) -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signum, stop.set)
        options = self.options
        async with KubeApi(
            self.access,
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent="volcano-py-webhooks",
        ) as api:
            if options.ca_bundle:
                paths = [route.path for route in served_routes(options.handlers)]
                try:
                    await inject_ca_bundle(api, paths, options.ca_bundle)
                except ApiError as error:
                    log.error("cannot set the CA of the webhook configurations: %s", error)
                    return 1
            app = build_app(LiveClusterView(api), options.handlers)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=options.shutdown_grace)
            await runner.setup()
            site = web.TCPSite(runner, options.address, options.port, ssl_context=self.context)
            await site.start()
            sockets = getattr(site._server, "sockets", None) or []
            if sockets:
                self.port = sockets[0].getsockname()[1]
            endpoints = HttpEndpoints(
                options.listen_address,
                options.healthz_address,
                Probes(alive=lambda: "", ready=lambda: ""),
                health_ssl=options.health_ssl,
                registry=WEBHOOKS_REGISTRY,
            )
            await endpoints.start()
            scheme = "https" if self.context else "http"
            log.info(
                "serving %s on %s://%s:%d",
                ", ".join(route.path for route in served_routes(options.handlers)),
                scheme,
                options.address,
                self.port,
            )
            try:
                await stop.wait()
            finally:
                log.info("stopping")
                await endpoints.stop()
                await runner.cleanup()
        return 0
