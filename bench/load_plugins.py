"""The plugins that look outside the cluster objects: ``usage`` (real node load) and
``extender`` (an HTTP service).

* usage: one allocate session placing 1k one-CPU pods on N nodes that all have fresh metrics
  and 10 running pods each, with and without the usage plugin (predicate + score); reports the
  session time and the extra per task.
* extender: the predicate verb, one keep-alive POST per (task, node), against a Python
  ``http.server`` extender on 127.0.0.1 answering "fits"; reports the time per node.

    python -m bench load_plugins [--nodes N] [--extender-nodes M]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench import objects
from volcano_py.api.node_usage import NodeUsage
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier, parse_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.plugins import extender
from volcano_py.plugins.extender.client import close_clients
from volcano_py.scheduler.registry import PluginRegistry, new_action

NOW = 1_800_000_000.0
TASKS = 1000

CONF = """\
actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
{usage}
"""


def _cluster(nodes: int) -> SchedulerCache:
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", objects.queue("default"))
    usage = {}
    for i in range(nodes):
        name = f"n{i}"
        cache.apply_event("Node", "ADDED", objects.node(name, "64", "256Gi"))
        usage[name] = NodeUsage.measured(NOW, (i * 37) % 90, (i * 53) % 90)
    cache.apply_event("PodGroup", "ADDED", objects.pod_group("running", 1, "Running"))
    for i in range(nodes * 10):
        pod = objects.pod(f"r{i}", "running", node=f"n{i % nodes}")
        pod["status"]["startTime"] = "2020-01-01T00:00:00Z"
        cache.apply_event("Pod", "ADDED", pod)
    cache.apply_event("PodGroup", "ADDED", objects.pod_group("pending", 1, "Inqueue"))
    for i in range(TASKS):
        cache.apply_event("Pod", "ADDED", objects.pod(f"p{i}", "pending"))
    cache.set_node_usage(usage)
    return cache


def _allocate(nodes: int, with_usage: bool) -> float:
    cache = _cluster(nodes)
    conf = parse_conf(CONF.format(usage="  - name: usage" if with_usage else ""))
    started = time.perf_counter()
    ssn = open_session(
        cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState(clock=lambda: NOW)
    )
    new_action("allocate").execute(ssn)
    close_session(ssn)
    return time.perf_counter() - started


class _Fits(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        payload = json.dumps({"status": "", "code": 0}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        return None


def _extender_predicate(nodes: int) -> float:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Fits)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        cache = SchedulerCache()
        cache.apply_event("Queue", "ADDED", objects.queue("default"))
        for i in range(nodes):
            cache.apply_event("Node", "ADDED", objects.node(f"n{i}", "64", "256Gi"))
        cache.apply_event("PodGroup", "ADDED", objects.pod_group("pending", 1, "Inqueue"))
        cache.apply_event("Pod", "ADDED", objects.pod("p0", "pending"))
        option = PluginOption.with_flags(
            "extender",
            "enablePredicate",
            arguments={
                "extender.urlPrefix": f"http://127.0.0.1:{server.server_address[1]}",
                "extender.predicateVerb": "predicate",
            },
        )
        conf = SchedulerConf(actions=[], tiers=[Tier([option])])
        ssn = open_session(cache.snapshot(), conf, {"extender": extender.new}, cache)
        task = next(iter(ssn.jobs["bench/pending"].tasks.values()))
        started = time.perf_counter()
        for node in ssn.node_list:
            ssn.predicate_fn(task, node)
        return time.perf_counter() - started
    finally:
        close_clients()
        server.shutdown()
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench load_plugins")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--extender-nodes", type=int, default=500)
    args = parser.parse_args(argv)
    without = _allocate(args.nodes, with_usage=False)
    with_usage = _allocate(args.nodes, with_usage=True)
    extra = (with_usage - without) / TASKS * 1000
    print(f"usage, {args.nodes} nodes, {TASKS} pending pods, allocate session:")
    print(f"  without usage {without * 1000:8.0f} ms")
    print(f"  with usage    {with_usage * 1000:8.0f} ms   ({extra:+.3f} ms per task)")
    seconds = _extender_predicate(args.extender_nodes)
    print(f"extender predicate, {args.extender_nodes} nodes, one task:")
    print(
        f"  {seconds * 1000:8.0f} ms   ({seconds / args.extender_nodes * 1e6:.0f} us per node,"
        " Python http.server extender on 127.0.0.1)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
