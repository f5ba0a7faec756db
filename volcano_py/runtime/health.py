"""The HTTP endpoints: ``/metrics`` on ``--listen-address`` (Volcano's ``:8080``), ``/healthz``
and ``/readyz`` on ``--healthz-address`` (Volcano's ``:11251``); both sets on one server when
the two addresses are equal. Served by aiohttp on the I/O event loop, so they answer while a
scheduling cycle runs in its own thread.

* ``/healthz``: 200 while the scheduling loop ticks (a standby waiting for the Lease ticks too).
* ``/readyz``: 200 once every watch has listed once and, with leader election, this replica
  leads; otherwise 503 and the reason. (A Deployment with a standby replica should not gate
  rollouts on it: a standby is never ready.)
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry

from volcano_py.metrics import REGISTRY, render

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def parse_address(address: str) -> tuple[str, int]:
    """Go's ``host:port`` (``:8080`` = every interface). Raises ValueError with the value."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"invalid address {address!r}: expected host:port, e.g. :8080")
    host = host.strip("[]")
    return host or "0.0.0.0", int(port)


@dataclass
class Probes:
    """``alive()`` -> problem or ''; ``ready()`` -> problem or ''."""

    alive: Callable[[], str]
    ready: Callable[[], str]


def _metrics(registry: CollectorRegistry) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.Response(body=render(registry))
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response

    return handler


def _probe(check: Callable[[], str]) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        problem = check()
        if problem:
            return web.Response(status=503, text=f"{problem}\n")
        return web.Response(text="ok\n")

    return handler


class HttpEndpoints:
    """Starts the servers on the running loop; ``ports`` are the bound ports by address."""

    def __init__(
        self,
        listen_address: str,
        healthz_address: str,
        probes: Probes,
        *,
        metrics: bool = True,
        extra_routes: Mapping[str, Handler] | None = None,
        health_ssl: ssl.SSLContext | None = None,
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        self.listen_address = listen_address
        self.healthz_address = healthz_address
        self.probes = probes
        # On --listen-address: /metrics unless ``metrics`` is off, plus ``extra_routes``
        # (the scheduler's /debug/pprof/ with --enable-pprof, as upstream's shared server).
        self.metrics = metrics
        # The process's own families (the scheduler's by default).
        self.registry = registry
        self.extra_routes = dict(extra_routes or {})
        # /healthz over TLS (upstream's StartHealthz with the CA, cert and key given).
        self.health_ssl = health_ssl
        self.ports: dict[str, int] = {}
        self._runners: list[web.AppRunner] = []

    def _routes(self) -> dict[str, dict[str, Handler]]:
        health: dict[str, Handler] = {
            "/healthz": _probe(self.probes.alive),
            "/readyz": _probe(self.probes.ready),
        }
        metrics: dict[str, Handler] = {"/metrics": _metrics(self.registry)} if self.metrics else {}
        metrics.update(self.extra_routes)
        if self.listen_address == self.healthz_address:
            # Both switched off (upstream's defaults: --enable-metrics and --enable-healthz
            # false) is an empty address on each side: no server at all.
            return {self.listen_address: {**metrics, **health}} if self.listen_address else {}
        routes: dict[str, dict[str, Handler]] = {}
        if self.listen_address:
            routes[self.listen_address] = metrics
        if self.healthz_address:
            routes[self.healthz_address] = health
        return routes

    async def start(self) -> None:
        for address, handlers in self._routes().items():
            host, port = parse_address(address)
            app = web.Application()
            for path, handler in handlers.items():
                app.router.add_get(path, handler)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            tls = self.health_ssl if "/healthz" in handlers else None
            site = web.TCPSite(runner, host, port, ssl_context=tls)
            await site.start()
            self._runners.append(runner)
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            self.ports[address] = sockets[0].getsockname()[1] if sockets else port

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()
