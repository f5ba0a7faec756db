"""``python -m bench controller-rate``: how fast the live job controller creates a big job's
pods against the local API server (issue "Scale": a 10k-pod job's pods at >= 500 pods/s).

One kube-apiserver + etcd (no kwok nodes are needed: nothing is scheduled), our CRDs, and
``volcano-py controllers`` as a subprocess with the given client QPS/burst. One Volcano Job of
``--replicas`` pods (one task, gang of all) is created; the controllers make its PodGroup;
the bench then moves the PodGroup to Inqueue as the scheduler's enqueue action would (the job
controller makes pods only for an admitted group, as upstream's), and times, by a watch on the
namespace's pods, from that moment to the last pod created. Repeats ``--runs`` times with a
fresh namespace; prints pods/s per run and the controllers' CPU seconds.

Each run first measures the API server's create ceiling in its own namespace: the bench's
client creates as many bare pods (no controller or scheduler looks at them) with 64 creates in
flight, the job controller's own limit, then deletes them. The controllers' rate is reported
against it too: on a shared 2-core machine the API server and etcd set the pace, not the
controllers (whose CPU time per pod is printed).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.churn import job_manifest
from bench.e2e import PG_PATH, bounded, create, pod, wait_for
from bench.local_plane import bins_missing, local_plane
from bench.procstat import cpu_seconds
from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ControlPlane
from volcano_py.runtime.apiclient import ApiError, ClusterAccess, KubeApi

JOB_PATH = "/apis/batch.volcano.sh/v1alpha1"
SCHEDULER = "volcano"


async def pod_group_of(api: KubeApi, namespace: str) -> dict[str, Any] | None:
    items, _ = await api.list_all(f"{PG_PATH}/namespaces/{namespace}/podgroups")
    return items[0] if items else None


async def count_created(
    api: KubeApi, namespace: str, expected: int, seen: list[float], stop: asyncio.Event
) -> None:
    """Append the monotonic time of each pod's first ADDED event until ``expected`` pods."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    names: set[str] = set()
    _, version = await api.list_all(path)
    while not stop.is_set() and len(names) < expected:
        try:
            async for event in api.watch(path, {"resourceVersion": version}, 300):
                obj = event.get("object") or {}
                version = obj.get("metadata", {}).get("resourceVersion", version)
                name = obj.get("metadata", {}).get("name")
                if event.get("type") == "ADDED" and name not in names:
                    names.add(name)
                    seen.append(time.monotonic())
                if stop.is_set() or len(names) >= expected:
                    return
        except ApiError:
            await asyncio.sleep(0.1)


CEILING_IN_FLIGHT = 64  # the job controller's POD_CREATES_IN_FLIGHT


async def create_ceiling(api: KubeApi, index: int, pods: int) -> float:
    """Pods/s this API server takes from one client creating ``pods`` bare pods, 64 at once."""
    namespace = f"ceiling-{index}"
    await create(api, "/api/v1/namespaces", {"metadata": {"name": namespace}})
    path = f"/api/v1/namespaces/{namespace}/pods"
    started = time.monotonic()
    await bounded(CEILING_IN_FLIGHT, (
        create(api, path, pod(f"p-{i}", namespace, None, "nobody")) for i in range(pods)
    ))  # fmt: skip
    elapsed = time.monotonic() - started
    await api.request("DELETE", path, params={"gracePeriodSeconds": "0"}, timeout=300)
    await api.request("DELETE", f"/api/v1/namespaces/{namespace}")
    return pods / elapsed


async def one_run(api: KubeApi, index: int, args: argparse.Namespace, pid: int) -> dict[str, float]:
    ceiling = await create_ceiling(api, index, args.replicas)
    namespace = f"rate-{index}"
    await create(api, "/api/v1/namespaces", {"metadata": {"name": namespace}})
    await create(api, f"{JOB_PATH}/namespaces/{namespace}/jobs", job_manifest("big", args.replicas))
    group: dict[str, Any] = {}

    async def group_made() -> bool:
        found = await pod_group_of(api, namespace)
        if found:
            group.update(found)
        return bool(found)

    await wait_for("the job's PodGroup", group_made, 120)
    seen: list[float] = []
    stop = asyncio.Event()
    watcher = asyncio.create_task(count_created(api, namespace, args.replicas, seen, stop))
    await asyncio.sleep(0.5)
    cpu_before = cpu_seconds(pid)
    name = group["metadata"]["name"]
    admitted = time.monotonic()
    await api.request(
        "PATCH",
        f"{PG_PATH}/namespaces/{namespace}/podgroups/{name}",  # no status subresource
        {"status": {"phase": "Inqueue"}},
        content_type="application/merge-patch+json",
    )

    async def all_created() -> bool:
        return len(seen) >= int(args.replicas)

    try:
        await wait_for(f"{args.replicas} pods created", all_created, args.timeout)
    finally:
        stop.set()
        watcher.cancel()
    elapsed = seen[-1] - admitted
    result = {
        "pods": float(len(seen)),
        "seconds": elapsed,
        "pods_per_s": len(seen) / elapsed,
        "first_pod_s": seen[0] - admitted,
        "controllers_cpu_s": cpu_seconds(pid) - cpu_before,
        "ceiling_pods_per_s": ceiling,
        "of_ceiling": len(seen) / elapsed / ceiling,
    }
    # Out of the way for the next run: the job (its pods go with it) and the namespace.
    await api.request("DELETE", f"/api/v1/namespaces/{namespace}")
    return result


async def run(
    args: argparse.Namespace, plane: ControlPlane, workdir: Path
) -> list[dict[str, float]]:
    api = KubeApi(ClusterAccess.load(str(plane.kubeconfig)), qps=0, burst=0, max_connections=64)
    controllers = ControllersProcess(plane.kubeconfig, workdir, [
        f"--scheduler-name={SCHEDULER}", f"--kube-api-qps={args.qps}",
        f"--kube-api-burst={args.burst}",
    ])  # fmt: skip
    results = []
    await api.open()
    try:
        controllers.start()
        await wait_for("controllers ready", controllers.ready, 300)
        assert controllers.process is not None
        for index in range(args.runs):
            result = await one_run(api, index, args, controllers.process.pid)
            results.append(result)
            print(f"run {index}: " + ", ".join(f"{k} {v:.2f}" for k, v in result.items()),
                  flush=True)  # fmt: skip
    finally:
        controllers.stop()
        await api.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench controller-rate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--replicas", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--qps", type=int, default=0, help="controllers' --kube-api-qps (0: none)")
    parser.add_argument("--burst", type=int, default=0, help="controllers' --kube-api-burst")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args(argv)
    if bins_missing("bench-controller-rate"):
        return 2
    with local_plane("vk8s-rate-", args.keep) as (plane, workdir):
        results = asyncio.run(run(args, plane, workdir))
    rates = [r["pods_per_s"] for r in results]
    ceilings = [r["ceiling_pods_per_s"] for r in results]
    print(
        f"{args.replicas} pods per job: {', '.join(f'{r:.0f}' for r in rates)} pods/s"
        f" (median {statistics.median(rates):.0f}; target 500); create ceiling"
        f" {', '.join(f'{c:.0f}' for c in ceilings)} pods/s; controllers at"
        f" {', '.join(f'{r / c:.0%}' for r, c in zip(rates, ceilings, strict=True))} of it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
