"""The live hyperNode-controller: the ConfigMap starts the sources, the label source follows
node labels, the ufm source polls a real HTTP server on loopback with the Secret's basic auth,
and every HyperNode's ``status.nodeCount`` is kept."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from operator_fakes import FakeApi

from volcano_py.operator.controllers.hypernodes import HyperNodeController
from volcano_py.operator.controllers.store import ObjectStore

HYPER_NODES = "/apis/topology.volcano.sh/v1alpha1/hypernodes"
CONFIG_MAP_KEY = "volcano-system/volcano-controller-configmap"
SECRET_PATH = "/api/v1/namespaces/volcano-system/secrets/ufm-credentials"


def _config_map(conf: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
        "data": {"volcano-controller.conf": conf},
    }


LABEL_CONF = """
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        a2:
          - nodeLabel: volcano.sh/tor
          - nodeLabel: kubernetes.io/hostname
"""


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels, "resourceVersion": "1"}}


def _echo(body: Any) -> Any:
    return {**body, "metadata": {**body["metadata"], "resourceVersion": "9"}}


class Harness:
    def __init__(self) -> None:
        self.api = FakeApi()
        self.store = ObjectStore()
        counter = iter(range(1000))
        self.controller = HyperNodeController(
            self.api, self.store, environ={}, name_suffix=lambda: f"{next(counter):05d}"
        )

    def event(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        _applied, old = self.store.apply(kind, event_type, obj, kind == "ConfigMap")
        if kind == "ConfigMap":
            self.controller.on_config_map()
        elif kind == "Node":
            self.controller.on_node(event_type, old, obj)
        else:
            self.controller.on_hyper_node(event_type, obj)

    async def settle(self, seconds: float = 0.1, until_posts: int = 0) -> None:
        """Run the queue ``seconds``, or (with ``until_posts``) until that many POSTs were
        made, within 10 s."""
        tasks = self.controller.queue.start()
        await asyncio.sleep(seconds)
        for _ in range(100):
            if len([c for c in self.api.calls if c[0] == "POST"]) >= until_posts:
                break
            await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()

    def writes(self) -> list[tuple[str, str]]:
        return [(method, path) for method, path, _ in self.api.calls if method != "GET"]


def test_the_label_source_creates_updates_and_deletes_hyper_nodes() -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.api.answer("POST", HYPER_NODES, _echo)
        h.event("ConfigMap", "ADDED", _config_map(LABEL_CONF))
        for name, tor in (("n0", "t0"), ("n1", "t0"), ("n2", "t1")):
            h.store.apply("Node", "ADDED", _node(name, **{"volcano.sh/tor": tor}), False)
        h.controller.start()
        await h.settle()
        created = [body for method, _, body in h.api.calls if method == "POST"]
        assert sorted(hn["metadata"]["labels"]["volcano.sh/tor"] for hn in created) == ["t0", "t1"]
        t1 = next(hn for hn in created if hn["metadata"]["labels"]["volcano.sh/tor"] == "t1")
        # n2 moves to t0: t0 gains it (updated), t1 is empty and deleted.
        h.api.calls.clear()
        for path in (
            f"{HYPER_NODES}/hypernode-a2-tier1-00000",
            f"{HYPER_NODES}/{t1['metadata']['name']}",
        ):
            h.api.answer("PUT", path, _echo)
            h.api.answer("DELETE", path, {})
        h.event("Node", "MODIFIED", _node("n2", **{"volcano.sh/tor": "t0"}))
        # A change to labels the configuration does not read is no reason to rediscover.
        h.event("Node", "MODIFIED", _node("n1", **{"volcano.sh/tor": "t0", "other": "x"}))
        await h.settle()
        return h

    h = asyncio.run(scenario())
    methods = sorted(method for method, _ in h.writes())
    assert methods == ["DELETE", "PUT"], h.writes()
    put = next(body for method, _, body in h.api.calls if method == "PUT")
    assert [m["selector"]["exactMatch"]["name"] for m in put["spec"]["members"]] == [
        "n0",
        "n1",
        "n2",
    ]


def test_node_count_is_written_when_it_differs() -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.api.answer("PUT", f"{HYPER_NODES}/hn/status", _echo)
        for name in ("n0", "n1"):
            h.event("Node", "ADDED", _node(name))
        member = {"type": "Node", "selector": {"regexMatch": {"pattern": "^n"}}}
        hn = {"metadata": {"name": "hn", "resourceVersion": "1"},
              "spec": {"tier": 1, "members": [member]}}  # fmt: skip
        h.event("HyperNode", "ADDED", hn)
        await h.settle()
        h.event(
            "HyperNode",
            "MODIFIED",
            {**hn, "status": {"nodeCount": 2}, "metadata": {"name": "hn", "resourceVersion": "2"}},
        )
        await h.settle()
        return h

    h = asyncio.run(scenario())
    puts = [body for method, _, body in h.api.calls if method == "PUT"]
    assert [body["status"]["nodeCount"] for body in puts] == [2]


def test_an_unreadable_configuration_is_retried_and_unknown_sources_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.controller.queue.base_delay = 0.01
        h.event(
            "ConfigMap",
            "ADDED",
            _config_map("networkTopologyDiscovery: [{source: roce, enabled: true}]"),
        )
        h.event("ConfigMap", "MODIFIED", _config_map("invalid yaml: :"))
        await h.settle()
        return h

    with caplog.at_level(logging.INFO):
        h = asyncio.run(scenario())
    assert h.controller.queue.failures.get("config", 0) >= 1
    assert "failed to parse config" in caplog.text


def test_roce_is_reported_unsupported(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        h = Harness()
        h.event(
            "ConfigMap",
            "ADDED",
            _config_map("networkTopologyDiscovery: [{source: roce, enabled: true}]"),
        )
        await h.settle()

    with caplog.at_level(logging.ERROR):
        asyncio.run(scenario())
    assert "unsupported discoverer type: roce" in caplog.text


# ---- ufm over HTTP


@pytest.fixture
def ufm_server() -> Iterator[tuple[str, list[str]]]:
    ports = [
        {"system_name": f"node{n}", "peer_node_name": f"leaf{n // 2}",
         "description": "Computer IB Port"}
        for n in range(4)
    ]  # fmt: skip
    seen_auth: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen_auth.append(self.headers.get("Authorization", ""))
            if self.path != "/ufmRest/resources/ports":
                self.send_response(404)
                self.end_headers()
                return
            body = json.dumps(ports).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen_auth
    server.shutdown()
    server.server_close()


def _ufm_conf(endpoint: str) -> str:
    return f"""
networkTopologyDiscovery:
  - source: ufm
    enabled: true
    interval: 1h
    credentials:
      secretRef: {{name: ufm-credentials, namespace: volcano-system}}
    config: {{endpoint: "{endpoint}"}}
"""


def _secret(**data: str) -> dict[str, Any]:
    return {"data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def test_the_ufm_source_polls_with_basic_auth_and_writes_its_hyper_nodes(
    ufm_server: tuple[str, list[str]],
) -> None:
    endpoint, seen_auth = ufm_server

    async def scenario() -> Harness:
        h = Harness()
        h.api.answer("GET", SECRET_PATH, _secret(username="user", password="pass"))
        h.api.answer("POST", HYPER_NODES, _echo)
        h.event("ConfigMap", "ADDED", _config_map(_ufm_conf(endpoint)))
        await h.settle(until_posts=3)
        h.controller.stop()
        return h

    h = asyncio.run(scenario())
    created = [body["metadata"]["name"] for method, _, body in h.api.calls if method == "POST"]
    assert sorted(created) == ["leaf-hn-0", "leaf-hn-1", "spine-hn"]
    assert seen_auth == ["Basic " + base64.b64encode(b"user:pass").decode()]


def test_the_ufm_source_without_a_password_does_not_start(
    ufm_server: tuple[str, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    """ufm_test.go TestUFMDiscoverer "MissingPassword" (and "MissingEndpoint")."""
    endpoint, seen_auth = ufm_server

    async def scenario() -> Harness:
        h = Harness()
        h.api.answer("GET", SECRET_PATH, _secret(username="user"))
        h.event("ConfigMap", "ADDED", _config_map(_ufm_conf(endpoint)))
        await h.settle(0.2)
        return h

    with caplog.at_level(logging.INFO):
        h = asyncio.run(scenario())
    assert "password not found in Secret volcano-system/ufm-credentials" in caplog.text
    assert seen_auth == [] and h.controller.pollers == {}
