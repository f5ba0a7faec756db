"""``--ca-cert-file``/``--tls-cert-file``/``--tls-private-key-file``: /healthz over TLS, and
the webhooks' CA written into the webhook configurations (``addCaCertForWebhook``), both
against real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import ssl
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from e2e.webhooks_process import make_serving_certificate
from volcano_py.cli.main import main, parse_args
from volcano_py.cli.process_flags import health_tls
from volcano_py.cli.scheduler import _options
from volcano_py.operator.webhooks.cabundle import configuration_url, inject_ca_bundle
from volcano_py.runtime.apiclient import ApiError, ClusterAccess, KubeApi
from volcano_py.runtime.health import HttpEndpoints, Probes

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


@needs_openssl
def test_healthz_over_tls_with_the_three_files(tmp_path: Path) -> None:
    ca, cert, key = make_serving_certificate(tmp_path)
    options = _options(parse_args([
        "scheduler", "--enable-healthz", f"--ca-cert-file={ca}", f"--tls-cert-file={cert}",
        f"--tls-private-key-file={key}", "--healthz-address=127.0.0.1:0",
    ]))  # fmt: skip
    assert options.health_ssl is not None

    async def scenario() -> str:
        endpoints = HttpEndpoints(
            "", "127.0.0.1:0", Probes(lambda: "", lambda: ""), health_ssl=options.health_ssl
        )
        await endpoints.start()
        port = endpoints.ports["127.0.0.1:0"]
        client = ssl.create_default_context(cafile=str(ca))

        def get() -> str:
            url = f"https://127.0.0.1:{port}/healthz"
            with urllib.request.urlopen(url, context=client) as response:
                return str(response.read().decode())

        try:
            return await asyncio.get_running_loop().run_in_executor(None, get)
        finally:
            await endpoints.stop()

    assert asyncio.run(scenario()) == "ok\n"


def test_healthz_stays_plain_without_all_three_files() -> None:
    assert health_tls("", "/c", "/k") is None
    assert _options(parse_args(["scheduler", "--tls-cert-file=/c"])).health_ssl is None


def test_unreadable_tls_files_are_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--ca-cert-file=/no/ca", "--tls-cert-file=/no/c", "--tls-private-key-file=/no/k"]
    assert main(["scheduler", *argv]) == 2
    assert "cannot load --ca-cert-file '/no/ca'" in capsys.readouterr().err


class FakeApiServer:
    """admissionregistration.k8s.io/v1 GET and PUT of webhook configurations; a name is
    missing for its first ``missing_gets`` GETs."""

    def __init__(self, configurations: dict[str, dict[str, Any]], missing_gets: int) -> None:
        self.configurations = configurations
        self.missing_gets = missing_gets
        self.puts: list[str] = []

    async def get(self, request: web.Request) -> web.StreamResponse:
        if self.missing_gets > 0:
            self.missing_gets -= 1
            return web.json_response({"kind": "Status", "code": 404}, status=404)
        found = self.configurations.get(request.path)
        if found is None:
            return web.json_response({"kind": "Status", "code": 404}, status=404)
        return web.json_response(found)

    async def put(self, request: web.Request) -> web.StreamResponse:
        self.configurations[request.path] = json.loads(await request.read())
        self.puts.append(request.path.rsplit("/", 1)[1])
        return web.json_response(self.configurations[request.path])


def webhook_configuration(*bundles: str | None) -> dict[str, Any]:
    webhooks = []
    for bundle in bundles:
        client: dict[str, Any] = {"service": {"name": "s", "namespace": "ns"}}
        if bundle is not None:
            client["caBundle"] = bundle
        webhooks.append({"name": "w", "clientConfig": client})
    return {"metadata": {"name": "x"}, "webhooks": webhooks}


def test_ca_bundle_is_written_into_each_configuration() -> None:
    pem = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
    bundle = base64.b64encode(pem).decode()
    server = FakeApiServer(
        {
            configuration_url("/jobs/mutate"): webhook_configuration(None, "b2xk"),
            configuration_url("/jobs/validate"): webhook_configuration(bundle),
        },
        missing_gets=2,  # created a little after the process started
    )

    async def scenario() -> list[str]:
        app = web.Application()
        app.router.add_get("/{tail:.*}", server.get)
        app.router.add_put("/{tail:.*}", server.put)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        try:
            access = ClusterAccess(server=f"http://127.0.0.1:{port}")
            async with KubeApi(access) as api:
                updated = await inject_ca_bundle(
                    api, ["/jobs/mutate", "/jobs/validate"], pem, interval=0.01
                )
                with pytest.raises(ApiError):
                    await inject_ca_bundle(api, ["/queues/mutate"], pem, timeout=0.05,
                                           interval=0.01)  # fmt: skip
                return updated
        finally:
            await runner.cleanup()

    updated = asyncio.run(scenario())
    assert updated == ["volcano-admission-service-jobs-mutate"]  # the other already had it
    mutate = server.configurations[
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/"
        "volcano-admission-service-jobs-mutate"
    ]
    assert [w["clientConfig"]["caBundle"] for w in mutate["webhooks"]] == [bundle, bundle]
    assert server.puts == ["volcano-admission-service-jobs-mutate"]
