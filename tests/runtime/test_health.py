"""/metrics, /healthz and /readyz: on one port or two, with the probes' reasons."""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.request

import pytest

from volcano_py.runtime.health import HttpEndpoints, Probes, parse_address
from volcano_py.runtime.logsetup import TRACE, JsonFormatter, level_for_verbosity

OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def fetch(port: int, path: str) -> tuple[int, str]:
    try:
        with OPENER.open(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.parametrize(
    ("address", "parsed"),
    [(":8080", ("0.0.0.0", 8080)), ("127.0.0.1:0", ("127.0.0.1", 0)), ("[::1]:9", ("::1", 9))],
)
def test_parse_address(address: str, parsed: tuple[str, int]) -> None:
    assert parse_address(address) == parsed


def test_parse_address_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="expected host:port"):
        parse_address("8080")


def test_no_server_when_metrics_and_health_are_both_off() -> None:
    """Volcano's defaults (--enable-metrics=false, --enable-healthz=false) serve nothing; they
    once made the I/O loop fail on an empty address."""

    async def main() -> dict[str, int]:
        endpoints = HttpEndpoints("", "", Probes(alive=lambda: "", ready=lambda: ""))
        await endpoints.start()
        ports = dict(endpoints.ports)
        await endpoints.stop()
        return ports

    assert asyncio.run(main()) == {}


@pytest.mark.parametrize("same_port", [False, True])
def test_endpoints(same_port: bool) -> None:
    state = {"ready": "cache not synced: waiting for the first list of Pod"}

    async def main() -> dict[str, tuple[int, str]]:
        # Equal addresses share one server; these two differ, so two servers listen.
        health_address = "127.0.0.1:0" if same_port else "localhost:0"
        probes = Probes(alive=lambda: "", ready=lambda: state["ready"])
        endpoints = HttpEndpoints("127.0.0.1:0", health_address, probes)
        await endpoints.start()
        ports = list(endpoints.ports.values())
        metrics_port, health_port = ports[0], ports[-1]
        seen = {}
        seen["metrics"] = await asyncio.to_thread(fetch, metrics_port, "/metrics")
        seen["healthz"] = await asyncio.to_thread(fetch, health_port, "/healthz")
        seen["not ready"] = await asyncio.to_thread(fetch, health_port, "/readyz")
        state["ready"] = ""
        seen["ready"] = await asyncio.to_thread(fetch, health_port, "/readyz")
        await endpoints.stop()
        return seen

    seen = asyncio.run(main())
    assert seen["metrics"][0] == 200 and "volcano_e2e_scheduling_latency" in seen["metrics"][1]
    assert seen["healthz"] == (200, "ok\n")
    assert seen["not ready"] == (503, "cache not synced: waiting for the first list of Pod\n")
    assert seen["ready"] == (200, "ok\n")


def test_verbosity_levels_and_json_lines() -> None:
    assert [level_for_verbosity(v) for v in (0, 3, 4, 5, 9)] == [
        logging.INFO, logging.INFO, logging.DEBUG, TRACE, TRACE]  # fmt: skip
    record = logging.LogRecord("volcano_py.x", logging.WARNING, "f", 1, "bound %d", (3,), None)
    record.pod = "ns/p"
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "warning" and line["msg"] == "bound 3" and line["pod"] == "ns/p"
