"""User guide ``how_to_use_extender``: the guide's conf (every verb named, ``httpTimeout:
100ms``, ``ignorable: true``) against a real HTTP extender on 127.0.0.1 started by the test:
its predicate and prioritize answers steer the placement; the verbs it does not serve, or an
extender that is down, are ignored as ``extender.ignorable: true`` asks."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from volcano_py.plugins.extender.client import close_clients
from volcano_py.testing import Cluster

CONF = """\
actions: "reclaim, allocate, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: extender
    arguments:
      extender.urlPrefix: {url}
      extender.httpTimeout: 100ms
      extender.onSessionOpenVerb: onSessionOpen
      extender.onSessionCloseVerb: onSessionClose
      extender.predicateVerb: predicate
      extender.prioritizeVerb: prioritize
      extender.preemptableVerb: preemptable
      extender.reclaimableVerb: reclaimable
      extender.queueOverusedVerb: queueOverused
      extender.jobEnqueueableVerb: jobEnqueueable
      extender.ignorable: true
"""


class Extender(BaseHTTPRequestHandler):
    """Refuses node ``n1``, scores ``n3`` above ``n2``; any other verb is a 404."""

    protocol_version = "HTTP/1.1"
    verbs: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        verb = self.path.rsplit("/", 1)[-1]
        type(self).verbs.append(verb)
        status, answer = 404, {}
        if verb == "predicate":
            refused = body["node"]["Name"] == "n1"
            status, answer = 200, {"status": "reserved", "code": 2} if refused else {}
        elif verb == "prioritize":
            status, answer = 200, {"nodeScore": {"n2": 10, "n3": 90}}
        payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def extender_url() -> Iterator[str]:
    Extender.verbs = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Extender)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        close_clients()
        httpd.shutdown()
        httpd.server_close()


def _cluster() -> Cluster:
    return Cluster().node("n1").node("n2").node("n3").queue("default").job("job-1")


def test_the_extender_chooses_the_node(extender_url: str) -> None:
    _cluster().run(conf=CONF.format(url=extender_url)).expect_binds({"default/job-1-0": "n3"})
    assert {"onSessionOpen", "predicate", "prioritize", "onSessionClose"} <= set(Extender.verbs)


def test_an_extender_that_is_down_is_ignored() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    try:
        outcome = _cluster().run(conf=CONF.format(url=f"http://127.0.0.1:{port}"))
    finally:
        close_clients()
    outcome.expect_bind_count(1)
