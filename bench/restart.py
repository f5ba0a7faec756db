"""``python -m bench restart``: the live scheduler started on a big, busy cluster (issue "Scale":
the first session within 60 s of a restart at 5k nodes / 150k pods, and RSS within 4 GB).

One kube-apiserver + etcd + kwok with ``--nodes`` kwok nodes (32 CPU, 128Gi, 110 pods),
``--running`` pods already bound to them (``spec.nodeName`` set at creation, spread evenly, each
100m CPU / 128Mi) and ``--pending`` pods in PodGroups of ``--gang-size`` waiting for the
scheduler. ``--statuses kwok`` (the default) lets kwok start the bound pods; at 150k pods that
took 41 minutes on this 2-core machine. ``--statuses bench`` stops kwok once every pod is
created and writes each bound pod a kubelet's Running status itself (phase, conditions, pod
and host IPs, a running container): the same objects, in a few minutes, and an API server that
no kwok keeps busy, as a steady cluster's kubelets would not. Once every bound pod is Running,
``volcano-py scheduler`` is started
``--starts`` times (each a restart on the same state: it is stopped once its first session has
ended). For each start: seconds to ready (every kind listed), to the end of the first session,
that session's length, the RSS after it and the peak, and the CPU seconds used.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from bench.e2e import (
    PG_PATH,
    Bench,
    bounded,
    create,
    logged_cycles,
    pod,
    send,
    wait_bound_running,
    wait_for,
)
from bench.local_plane import bins_missing, local_plane
from bench.procstat import cpu_seconds, memory_mib
from e2e.scheduler_process import SchedulerProcess
from volcano_py.runtime.apiclient import KubeApi

MERGE_PATCH = "application/merge-patch+json"
STARTED_AT = "2026-01-01T00:00:00Z"

NAMESPACE = "restart"
SCHEDULER = "volcano"


def running_status(index: int, node_index: int) -> dict[str, Any]:
    """What a kubelet reports for a started pod (kwok's fields, so the objects are as big)."""
    pod_ip = f"10.{244 + index // 65536 % 8}.{index // 256 % 256}.{index % 256}"
    host_ip = f"10.{node_index // 65536 % 256}.{node_index // 256 % 256}.{node_index % 256}"
    return {
        "phase": "Running",
        "conditions": [
            {"type": kind, "status": "True", "lastTransitionTime": STARTED_AT}
            for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": STARTED_AT,
        "qosClass": "Burstable",
        "containerStatuses": [{
            "name": "main", "image": "busybox", "imageID": "", "ready": True, "started": True,
            "restartCount": 0, "containerID": f"kwok://{index:012d}",
            "state": {"running": {"startedAt": STARTED_AT}},
        }],
    }  # fmt: skip


async def write_status(api: KubeApi, name: str, status: dict[str, Any]) -> None:
    path = f"/api/v1/namespaces/{NAMESPACE}/pods/{name}/status"
    await send(api, "PATCH", path, {"status": status}, content_type=MERGE_PATCH)


def running_pod(name: str, node: str) -> dict[str, Any]:
    manifest = pod(name, NAMESPACE, None, SCHEDULER)
    manifest["spec"]["nodeName"] = node
    manifest["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "100m", "memory": "128Mi"}
    return manifest


class Restart(Bench):
    async def fill(self) -> None:
        started = time.monotonic()
        await self.namespace(NAMESPACE)
        nodes = self.nodes
        await bounded(self.args.concurrency, (
            create(self.api, f"/api/v1/namespaces/{NAMESPACE}/pods",
                   running_pod(f"run-{i:06d}", nodes[i % len(nodes)]))
            for i in range(self.args.running)))  # fmt: skip
        groups = self.args.pending // self.args.gang_size
        await bounded(self.args.concurrency, (
            create(self.api, f"{PG_PATH}/namespaces/{NAMESPACE}/podgroups", {
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": f"gang-{g:05d}"},
                "spec": {"minMember": self.args.gang_size, "queue": "default"}})
            for g in range(groups)))  # fmt: skip
        await bounded(self.args.concurrency, (
            create(self.api, f"/api/v1/namespaces/{NAMESPACE}/pods",
                   pod(f"gang-{g:05d}-{i:03d}", NAMESPACE, f"gang-{g:05d}", SCHEDULER))
            for g in range(groups) for i in range(self.args.gang_size)))  # fmt: skip
        print(f"created {self.args.running} running and {groups * self.args.gang_size} pending"
              f" pods in {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip

        if self.args.statuses == "bench":
            self.plane.processes["kwok"].stop()
            marked = time.monotonic()
            await bounded(self.args.concurrency, (
                write_status(self.api, f"run-{i:06d}", running_status(i, i % len(nodes)))
                for i in range(self.args.running)))  # fmt: skip
            print(f"kwok stopped; wrote {self.args.running} Running statuses in"
                  f" {time.monotonic() - marked:.0f} s", flush=True)  # fmt: skip
        await wait_bound_running(self.api, NAMESPACE)
        self.report["filled_s"] = time.monotonic() - started
        print(f"every bound pod Running after {self.report['filled_s']:.0f} s", flush=True)

    async def one_start(self, index: int) -> dict[str, float]:
        scheduler = SchedulerProcess(self.plane.kubeconfig, self.workdir, [
            f"--scheduler-name={SCHEDULER}", "--schedule-period=1s", "--kube-api-qps=0",
            "-v=4",
        ], label=f"scheduler-{index}")  # fmt: skip
        scheduler.start()
        try:
            await wait_for("scheduler ready", scheduler.ready, 900)
            ready = time.monotonic() - scheduler.started

            def first_cycle() -> dict[str, Any] | None:
                return next(iter(logged_cycles(scheduler.log_path)), None)

            async def cycled() -> bool:
                if not scheduler.alive:
                    raise RuntimeError(f"the scheduler exited; see {scheduler.log_path}")
                return first_cycle() is not None

            await wait_for("the first session", cycled, 900)
            cycle = first_cycle()
            assert cycle is not None and scheduler.process is not None
            result = {
                "ready_s": ready,
                "first_session_end_s": cycle["ended_monotonic"] - scheduler.started,
                "first_session_s": cycle["total_ms"] / 1000,
                **memory_mib(scheduler.process.pid),
                "cpu_s": cpu_seconds(scheduler.process.pid),
            }
        finally:
            scheduler.stop()
        return result

    async def measure(self) -> list[dict[str, float]]:
        await self.api.open()
        try:
            print(f"creating {self.args.nodes} kwok nodes ...", flush=True)
            await self.make_nodes()
            await self.open_default_queue()
            await self.fill()
            results = []
            for index in range(self.args.starts):
                result = await self.one_start(index)
                results.append(result)
                print(f"start {index}: " + ", ".join(f"{k} {v:.2f}" for k, v in result.items()),
                      flush=True)  # fmt: skip
        finally:
            await self.api.close()
        return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench restart",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--running", type=int, default=150_000)
    parser.add_argument("--pending", type=int, default=10_000)
    parser.add_argument("--gang-size", type=int, default=10)
    parser.add_argument("--starts", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=64, help="creates in flight (64)")
    parser.add_argument(
        "--statuses",
        choices=("kwok", "bench"),
        default="kwok",
        help="who starts the bound pods: kwok (default), or this bench with kwok stopped",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args(argv)
    # Bench's fields that this bench does not use, set for its constructor's report.
    args.gangs = 0
    if bins_missing("bench-restart"):
        return 2
    with local_plane("vk8s-restart-", args.keep) as (plane, workdir):
        results = asyncio.run(Restart(args, plane, workdir).measure())
    for index, result in enumerate(results):
        print(
            f"start {index}: first session ended {result['first_session_end_s']:.1f} s after"
            f" the start (target 60 s); RSS {result['rss_mib']:.0f} MiB, peak"
            f" {result['peak_rss_mib']:.0f} MiB (target 4096)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
