"""``python -m bench watch_events``: the GIL time one watch event costs the live scheduler, by
kind of update (issue 14: "watch decoding and scheduling share one GIL").

Every event the I/O thread receives is decoded (``json.loads`` of its line), passed through
the informer's bookkeeping (last version by key, resourceVersion), the pod feed and applied to
the ``SchedulerCache``: CPU time the scheduling thread's session cannot have. Here that path
runs in-process, without the network, on a cache of ``--nodes`` nodes holding
``--pods-per-node`` Running pods each, with objects of the shape kwok and the API server give
them (managed fields, conditions, container statuses: about 3 KB a pod, 4 KB a node), for:

* ``pod-annotation``: a bound pod's annotation changed (``bench watch-load``'s pod stream);
* ``pod-status``: a bound pod's status changed (a condition's time);
* ``node-heartbeat``: a node's ``Ready`` heartbeat time changed (a kubelet's status update);
* ``decode-only``: ``json.loads`` of the same pod lines, the floor of any event.

CPU microseconds per event (the best of ``--repeat`` runs of ``--events`` events), with the
garbage collector running, as in the live scheduler between sessions, and without it. Compare two
trees by running it with each one's ``volcano_py``: ``--tree TAG=DIR`` (repeatable) runs it in
a subprocess per tree, with DIR first on the path.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

CREATED = "2026-01-01T00:00:00Z"
KINDS = ("pod-annotation", "pod-status", "node-heartbeat", "decode-only")
NAMESPACE = "bench"


def kwok_pod(index: int, node: str) -> dict[str, Any]:
    """A Running pod as the API server returns it once kwok started it."""
    name = f"run-{index:06d}"
    condition = {"status": "True", "lastProbeTime": None, "lastTransitionTime": CREATED}
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"00000000-0000-0000-0000-{index:012d}",
            "resourceVersion": "1",
            "generation": 1,
            "creationTimestamp": CREATED,
            "annotations": {},
            "managedFields": [
                {
                    "manager": "kwok",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": CREATED,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:status": {
                            "f:conditions": {
                                ".": {},
                                **{
                                    f'k:{{"type":"{kind}"}}': {
                                        ".": {},
                                        "f:lastProbeTime": {},
                                        "f:lastTransitionTime": {},
                                        "f:status": {},
                                        "f:type": {},
                                    }
                                    for kind in ("ContainersReady", "Initialized", "Ready")
                                },
                            },
                            "f:containerStatuses": {},
                            "f:hostIP": {},
                            "f:phase": {},
                            "f:podIP": {},
                            "f:podIPs": {".": {}, 'k:{"ip":"10.244.0.2"}': {".": {}, "f:ip": {}}},
                            "f:startTime": {},
                        }
                    },
                    "subresource": "status",
                },
                {
                    "manager": "bench",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": CREATED,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"main"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:imagePullPolicy": {},
                                    "f:name": {},
                                    "f:resources": {
                                        ".": {},
                                        "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}},
                                    },
                                    "f:terminationMessagePath": {},
                                    "f:terminationMessagePolicy": {},
                                }
                            },
                            "f:dnsPolicy": {},
                            "f:enableServiceLinks": {},
                            "f:nodeName": {},
                            "f:restartPolicy": {},
                            "f:schedulerName": {},
                            "f:securityContext": {},
                            "f:terminationGracePeriodSeconds": {},
                        }
                    },
                },
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "imagePullPolicy": "Always",
                }
            ],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 0,
            "dnsPolicy": "ClusterFirst",
            "nodeName": node,
            "securityContext": {},
            "schedulerName": "volcano",
            "tolerations": [
                {
                    "key": f"node.kubernetes.io/{taint}",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
                for taint in ("not-ready", "unreachable")
            ],
            "priority": 0,
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running",
            "conditions": [
                {"type": kind, **condition} for kind in ("Initialized", "Ready", "ContainersReady")
            ],
            "hostIP": "10.244.0.1",
            "podIP": "10.244.0.2",
            "podIPs": [{"ip": "10.244.0.2"}],
            "startTime": CREATED,
            "containerStatuses": [
                {
                    "name": "main",
                    "state": {"running": {"startedAt": CREATED}},
                    "lastState": {},
                    "ready": True,
                    "restartCount": 0,
                    "image": "busybox",
                    "imageID": "",
                }
            ],
            "qosClass": "Burstable",
        },
    }


NODE_CONDITIONS = (
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
)


def kwok_node(name: str) -> dict[str, Any]:
    resources = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "creationTimestamp": CREATED,
            "labels": {
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "type": "kwok",
            },
            "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
            "managedFields": [
                {
                    "manager": "kwok",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": CREATED,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:status": {
                            "f:conditions": {
                                f'k:{{"type":"{kind}"}}': {
                                    ".": {},
                                    "f:lastHeartbeatTime": {},
                                    "f:lastTransitionTime": {},
                                    "f:message": {},
                                    "f:reason": {},
                                    "f:status": {},
                                    "f:type": {},
                                }
                                for kind, _, _, _ in NODE_CONDITIONS
                            },
                            "f:nodeInfo": {"f:architecture": {}, "f:kubeletVersion": {}},
                        }
                    },
                    "subresource": "status",
                }
            ],
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "phase": "Running",
            "conditions": [
                {
                    "type": kind,
                    "status": status,
                    "lastHeartbeatTime": CREATED,
                    "lastTransitionTime": CREATED,
                    "reason": reason,
                    "message": message,
                }
                for kind, status, reason, message in NODE_CONDITIONS
            ],
            "addresses": [{"type": "InternalIP", "address": "10.244.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": {
                "kernelVersion": "kwok-0.7.0",
                "containerRuntimeVersion": "kwok-0.7.0",
                "kubeletVersion": "kwok-0.7.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    }


def lines(kind: str, objects: list[dict[str, Any]], count: int, first_version: int) -> list[bytes]:
    """``count`` watch lines of ``MODIFIED`` versions of ``objects``, round robin."""
    out = []
    for index in range(count):
        obj = copy.deepcopy(objects[index % len(objects)])
        obj["metadata"]["resourceVersion"] = str(first_version + index)
        stamp = f"2026-01-01T{index // 3600 % 24:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"
        if kind == "pod-annotation":
            obj["metadata"]["annotations"]["bench.volcano-py.io/tick"] = str(index)
        elif kind == "pod-status":
            obj["status"]["conditions"][1]["lastProbeTime"] = stamp
        elif kind == "node-heartbeat":
            obj["status"]["conditions"][0]["lastHeartbeatTime"] = stamp
        out.append(json.dumps({"type": "MODIFIED", "object": obj}).encode())
    return out


class LineApi:
    """``KubeApi.watch`` over lines in memory: decoded as the real one decodes them."""

    def __init__(self, data: list[bytes]) -> None:
        self.data = data

    async def watch(
        self, path: str, params: Mapping[str, str], timeout_seconds: int
    ) -> AsyncIterator[dict[str, Any]]:
        for line in self.data:
            yield json.loads(line)


def worker(args: argparse.Namespace) -> dict[str, float]:
    """This interpreter's ``volcano_py``: microseconds of CPU per event, by kind."""
    from volcano_py.cache.cache import SchedulerCache
    from volcano_py.operator.binder import PodFeed
    from volcano_py.operator.informer import NODE, POD, Informer

    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", {"metadata": {"name": "default"}, "spec": {"weight": 1}})
    nodes = [kwok_node(f"node-{i:05d}") for i in range(args.nodes)]
    pods = [
        kwok_pod(i, nodes[i % args.nodes]["metadata"]["name"])
        for i in range(args.nodes * args.pods_per_node)
    ]
    feed = PodFeed(cache.apply_event)
    informers = {
        "Pod": Informer(LineApi([]), POD, feed),  # type: ignore[arg-type]
        "Node": Informer(LineApi([]), NODE, cache.apply_event),  # type: ignore[arg-type]
    }
    for node in nodes:
        informers["Node"].objects[node["metadata"]["name"]] = node
        cache.apply_event("Node", "ADDED", node)
    for pod in pods:
        informers["Pod"].objects[f"{NAMESPACE}/{pod['metadata']['name']}"] = pod
        feed("Pod", "ADDED", pod)
    results: dict[str, float] = {}
    version = 10
    for kind in KINDS:
        for collector in ("gc", "no-gc"):
            best = float("inf")
            for _ in range(args.repeat):
                source = nodes if kind == "node-heartbeat" else pods
                data = lines(kind, source, args.events, version)
                version += args.events
                # From the same start each time; the live scheduler collects as it goes.
                gc.collect()
                if collector == "no-gc":
                    gc.disable()
                started = time.process_time()
                if kind == "decode-only":
                    for line in data:
                        json.loads(line)
                else:
                    informer = informers["Node" if kind == "node-heartbeat" else "Pod"]
                    informer.api = LineApi(data)  # type: ignore[assignment]
                    asyncio.run(informer._watch())
                best = min(best, time.process_time() - started)
                gc.enable()
            results[f"{kind} {collector}"] = best / args.events * 1e6
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench watch_events",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods-per-node", type=int, default=20)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tree", action="append", metavar="TAG=DIR", help="a source tree")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args)))
        return 0
    trees = [tree.partition("=")[::2] for tree in args.tree or []]
    if not trees:
        trees = [("this", "")]
    print(
        f"{args.nodes} nodes, {args.pods_per_node} Running pods a node; CPU us per event"
        f" (best of {args.repeat} x {args.events})"
    )
    for tag, where in trees:
        env = dict(os.environ)
        if where:
            source = Path(where).resolve()
            if not (source / "volcano_py" / "__init__.py").exists():
                parser.error(f"--tree {tag}={where}: no volcano_py package there")
            env["PYTHONPATH"] = str(source)
        # This file as a script: its own directory first on the path, then PYTHONPATH's tree.
        answer = subprocess.run(
            [sys.executable, __file__, "--worker", f"--nodes={args.nodes}",
             f"--pods-per-node={args.pods_per_node}", f"--events={args.events}",
             f"--repeat={args.repeat}"],
            env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        costs = json.loads(answer.stdout.strip().splitlines()[-1])
        print(f"  {tag:>8}: " + ", ".join(
            f"{kind} {costs[kind + ' gc']:.0f} ({costs[kind + ' no-gc']:.0f} without GC)"
            for kind in KINDS))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
