"""``python -m bench.e2e`` (``make bench-e2e``): the live scheduler end to end on a real
kube-apiserver + etcd with kwok nodes (performance-anchors §3, goal G2).

Default workload: 1000 kwok nodes (32 CPU, 128 GiB), 10,000 pods in 20 gangs of 500
(PodGroup ``minMember: 500``, each pod 1 CPU / 1 GiB). Three measurements, in this order:

1. ``ceiling``: the raw bind ceiling of this API server. 10,000 pods no scheduler looks at are
   bound by a binder with no scheduling logic (round robin over the nodes) through the same
   client and the same concurrency as the scheduler's binder. Then they are deleted.
2. ``backlog``: all 10,000 pods exist before the scheduler starts; time from the process start,
   from its readiness (every kind listed) and from its first bind to its last bind.
3. ``streaming``: the scheduler runs while the 10,000 pods (and their PodGroups) are created
   as fast as this client can; time from the first create to the last bind.

Binds are timed by a watch on the pods (the moment ``spec.nodeName`` is first seen); the
ceiling's binds by their responses. The scheduler's own numbers come from its ``/metrics``
(API requests by verb and resource, hence API writes per pod) and its log (per-cycle timings).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.local_plane import bins_missing, local_plane
from bench.procstat import CpuSampler, describe
from e2e.controlplane import ControlPlane, node_manifest
from e2e.scheduler_process import SchedulerProcess
from volcano_py.runtime.apiclient import ApiError, ClusterAccess, KubeApi

POOL_LABEL = "volcano-py.io/bench"
NODE_CAPACITY = {"cpu": "32", "memory": "128Gi", "pods": "110"}
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
PG_PATH = "/apis/scheduling.volcano.sh/v1beta1"
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")
CYCLE_LINE = re.compile(
    r"^(\S+ \S+) [IDT] \S+: cycle (\d+): ([\d.]+) ms \(([^)]*)\); (\d+) binds queued"
)


def pod(name: str, namespace: str, group: str | None, scheduler: str) -> dict[str, Any]:
    annotations = {GROUP_ANNOTATION: group} if group else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }  # fmt: skip


async def bounded(concurrency: int, jobs: Iterable[Any]) -> None:
    """Await coroutines with at most ``concurrency`` in flight."""
    semaphore = asyncio.Semaphore(concurrency)

    async def run(job: Any) -> None:
        async with semaphore:
            await job

    await asyncio.gather(*(run(job) for job in jobs))


async def send(
    api: KubeApi,
    method: str,
    path: str,
    body: dict[str, Any],
    *,
    content_type: str = "application/json",
    conflict_ok: bool = False,
) -> None:
    """One write, tried again (up to 8 times) while the API server answers with a transient
    error; a conflict is done when ``conflict_ok`` (the object exists already)."""
    for attempt in range(8):
        try:
            await api.request(method, path, body, content_type=content_type)
            return
        except ApiError as error:
            if conflict_ok and error.conflict:
                return
            if not error.transient or attempt == 7:
                raise
            await asyncio.sleep(error.retry_after or 0.2 * (attempt + 1))


async def create(api: KubeApi, path: str, body: dict[str, Any]) -> None:
    await send(api, "POST", path, body, conflict_ok=True)


@dataclass
class BindTimes:
    """When each pod of a namespace was first seen bound, by a watch."""

    times: dict[str, float] = field(default_factory=dict)

    def summary(self, start: float) -> dict[str, float]:
        ordered = sorted(self.times.values())
        if not ordered:
            return {"bound": 0}
        gaps = [b - a for a, b in itertools.pairwise(ordered)]
        return {
            "bound": len(ordered),
            "first_bind_s": ordered[0] - start,
            "last_bind_s": ordered[-1] - start,
            "bind_phase_s": ordered[-1] - ordered[0],
            "longest_gap_s": max(gaps, default=0.0),
        }


async def watch_binds(api: KubeApi, namespace: str, sink: BindTimes, stop: asyncio.Event) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    listed, version = await api.list_all(path)
    now = time.monotonic()
    for item in listed:
        if item["spec"].get("nodeName"):
            sink.times.setdefault(item["metadata"]["name"], now)
    while not stop.is_set():
        try:
            async for event in api.watch(
                path, {"resourceVersion": version, "allowWatchBookmarks": "true"}, 300
            ):
                obj = event.get("object") or {}
                version = obj.get("metadata", {}).get("resourceVersion", version)
                if event.get("type") in ("ADDED", "MODIFIED") and obj["spec"].get("nodeName"):
                    sink.times.setdefault(obj["metadata"]["name"], time.monotonic())
                if stop.is_set():
                    return
        except ApiError as error:
            if error.gone:
                listed, version = await api.list_all(path)
            await asyncio.sleep(0.1)


async def wait_for(what: str, check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


async def wait_bound_running(api: KubeApi, namespace: str, timeout: float = 3600) -> None:
    """Until kwok has started every bound pod of ``namespace``."""

    async def all_running() -> bool:
        # One page of pods kwok has not started yet: none left means all are Running.
        page = await api.request(
            "GET",
            f"/api/v1/namespaces/{namespace}/pods",
            params={"fieldSelector": "spec.nodeName!=,status.phase!=Running", "limit": "1"},
            timeout=120,
        )
        return not page.get("items")

    await wait_for("kwok running every bound pod", all_running, timeout)


def logged_cycles(log_path: Path) -> list[dict[str, Any]]:
    """The scheduler's per-cycle timings, from its log: at ``-v=3`` the cycles that bound pods
    or ran long (INFO), from ``-v=4`` every cycle (DEBUG)."""
    found = []
    for line in log_path.read_text(errors="replace").splitlines():
        match = CYCLE_LINE.search(line)
        if match:
            logged = datetime.strptime(match[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            found.append(
                {
                    "cycle": int(match[2]),
                    "total_ms": float(match[3]),
                    "parts": match[4],
                    "binds": int(match[5]),
                    "ended_monotonic": logged - (time.time() - time.monotonic()),
                }
            )
    return found


def writes(
    before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]
) -> dict[str, float]:
    result: dict[str, float] = {}
    for (verb, resource), value in after.items():
        if verb in WRITE_VERBS:
            delta = value - before.get((verb, resource), 0.0)
            if delta:
                result[f"{verb} {resource}"] = delta
    return result


class Bench:
    def __init__(self, args: argparse.Namespace, plane: ControlPlane, workdir: Path) -> None:
        self.args = args
        self.plane = plane
        self.workdir = workdir
        self.api = KubeApi(
            ClusterAccess.load(str(plane.kubeconfig)),
            qps=0,
            burst=0,
            max_connections=args.concurrency + 32,
        )
        self.nodes: list[str] = []
        self.report: dict[str, Any] = {"config": {k: v for k, v in vars(args).items()}}
        # Who uses the two cores while binds go out: the ceiling's bare client leaves the API
        # server, etcd and kwok more of them than a scheduler does.
        pids = {name: process.pid for name, process in plane.processes.items() if process.pid}
        self.cpu = CpuSampler({**pids, "bench client": os.getpid()})

    def cpu_usage(self, label: str, start: float, end: float) -> dict[str, float]:
        usage = self.cpu.between(start, end)
        print(f"{label} CPU: {describe(usage)}", flush=True)
        return usage

    @property
    def pods_total(self) -> int:
        return int(self.args.gangs * self.args.gang_size)

    async def open_default_queue(self) -> None:
        """The default queue, Open, as a queue controller leaves it (none runs here): the
        proportion plugin (vc-scheduler's and volcano-py's alike) allocates nothing in a queue
        whose state is not Open, and a queue the scheduler creates itself has no state."""
        path = "/apis/scheduling.volcano.sh/v1beta1/queues"
        queue = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": "default"},
            "spec": {"weight": 1, "reclaimable": True},
        }
        await create(self.api, path, queue)
        await self.api.request(
            "PATCH",
            f"{path}/default/status",
            {"status": {"state": "Open"}},
            content_type="application/merge-patch+json",
        )

    async def make_nodes(self) -> None:
        started = time.monotonic()
        self.nodes = [f"bench-node-{index:04d}" for index in range(self.args.nodes)]
        await bounded(self.args.concurrency, (
            create(self.api, "/api/v1/nodes", node_manifest(
                name, NODE_CAPACITY, labels={POOL_LABEL: "true"}))
            for name in self.nodes))  # fmt: skip

        async def all_ready() -> bool:
            items, _ = await self.api.list_all("/api/v1/nodes", {"labelSelector": POOL_LABEL})
            ready = sum(
                any(
                    c["type"] == "Ready" and c["status"] == "True"
                    for c in item.get("status", {}).get("conditions") or []
                )
                for item in items
            )
            return ready == len(self.nodes)

        await wait_for("kwok nodes Ready", all_ready, 300)
        self.report["nodes_ready_s"] = time.monotonic() - started

    async def namespace(self, name: str) -> None:
        await create(self.api, "/api/v1/namespaces", {"metadata": {"name": name}})

    async def create_workload(self, namespace: str, scheduler: str, gangs: bool) -> float:
        """PodGroups, then pods gang by gang; returns the seconds it took."""
        started = time.monotonic()
        if gangs:
            await bounded(self.args.concurrency, (
                create(self.api, f"{PG_PATH}/namespaces/{namespace}/podgroups", {
                    "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                    "metadata": {"name": f"gang-{g:02d}"},
                    "spec": {"minMember": self.args.gang_size, "queue": "default"}})
                for g in range(self.args.gangs)))  # fmt: skip
        path = f"/api/v1/namespaces/{namespace}/pods"
        await bounded(self.args.concurrency, (
            create(self.api, path, pod(f"gang-{g:02d}-{i:04d}", namespace,
                                       f"gang-{g:02d}" if gangs else None, scheduler))
            for g in range(self.args.gangs) for i in range(self.args.gang_size)))  # fmt: skip
        return time.monotonic() - started

    async def ceiling(self, label: str = "ceiling") -> None:
        namespace = f"bench-{label.replace('_', '-')}"
        await self.namespace(namespace)
        await self.create_workload(namespace, "nobody", gangs=False)
        items, _ = await self.api.list_all(f"/api/v1/namespaces/{namespace}/pods")
        names = [item["metadata"]["name"] for item in items]
        times: list[float] = []

        async def bind(index: int, name: str) -> None:
            node = self.nodes[index % len(self.nodes)]
            body = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": namespace},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            }
            path = f"/api/v1/namespaces/{namespace}/pods/{name}/binding"
            for attempt in range(8):
                try:
                    await self.api.request("POST", path, body)
                    break
                except ApiError as error:
                    if not error.transient or attempt == 7:
                        raise
                    await asyncio.sleep(error.retry_after or 0.1)
            times.append(time.monotonic())

        started = time.monotonic()
        await bounded(self.args.concurrency, (bind(i, n) for i, n in enumerate(names)))
        elapsed = max(times) - started
        print(
            f"{label}: {len(names)} binds in {elapsed:.2f} s = "
            f"{len(names) / elapsed:.0f} binds/s (concurrency {self.args.concurrency})",
            flush=True,
        )
        self.report[label] = {
            "pods": len(names),
            "seconds": elapsed,
            "pods_per_s": len(names) / elapsed,
            "concurrency": self.args.concurrency,
            "cpu": self.cpu_usage(label, started, max(times)),
        }
        # Out of the way: no capacity held, no pods in the scheduler's cache. A collection
        # delete of 10k pods can outlast the API server's request timeout: repeat it.
        path = f"/api/v1/namespaces/{namespace}/pods"
        for _attempt in range(20):
            try:
                await self.api.request(
                    "DELETE", path, params={"gracePeriodSeconds": "0"}, timeout=300
                )
            except ApiError as error:
                if not error.transient:
                    raise
            left, _ = await self.api.list_all(path)
            if not left:
                break
            await asyncio.sleep(1)
        else:
            raise RuntimeError("the ceiling's pods could not be deleted")

    async def timed_run(
        self, namespace: str, scheduler: SchedulerProcess, start: float, stop_after: float = 600
    ) -> BindTimes:
        times = BindTimes()
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch_binds(self.api, namespace, times, stop))

        async def all_bound() -> bool:
            return len(times.times) >= self.pods_total

        try:
            await wait_for(f"{self.pods_total} pods bound in {namespace}", all_bound, stop_after)
        finally:
            stop.set()
            watcher.cancel()
        return times

    async def backlog(self, scheduler: SchedulerProcess) -> None:
        namespace = "bench-backlog"
        await self.namespace(namespace)
        created = await self.create_workload(namespace, "volcano", gangs=True)
        before: dict[tuple[str, str], float] = {}
        scheduler.start()
        assert scheduler.process is not None
        self.cpu.pids["scheduler"] = scheduler.process.pid
        started = scheduler.started
        times = BindTimes()
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch_binds(self.api, namespace, times, stop))
        await wait_for("scheduler ready", scheduler.ready, 300)
        ready = time.monotonic()

        async def all_bound() -> bool:
            return len(times.times) >= self.pods_total

        await wait_for("every pod bound", all_bound, 900)
        stop.set()
        watcher.cancel()
        await asyncio.sleep(2.5)  # status and event writes after the binds
        summary = times.summary(started)
        result: dict[str, Any] = {
            "created_in_s": created,
            "ready_after_s": ready - started,
            **summary,
            "pods_per_s_from_start": self.pods_total / summary["last_bind_s"],
            "pods_per_s_from_ready": self.pods_total / (summary["last_bind_s"] - (ready - started)),
            "pods_per_s_bind_phase": self.pods_total / summary["bind_phase_s"],
        }
        result["writes"] = writes(before, scheduler.request_counts())
        result["writes_per_pod"] = sum(result["writes"].values()) / self.pods_total
        bound = sorted(times.times.values())
        result["cpu"] = self.cpu_usage("backlog bind phase", bound[0], bound[-1])
        # The binder alone: binds after the one big session ended (no session CPU beside it).
        first = next((c for c in logged_cycles(scheduler.log_path) if c["binds"]), None)
        if first is not None:
            after = sorted(t for t in times.times.values() if t > first["ended_monotonic"])
            result["session_s"] = first["total_ms"] / 1000
            result["binds_after_session"] = len(after)
            if len(after) > 1:
                result["pods_per_s_after_session"] = len(after) / (
                    after[-1] - first["ended_monotonic"]
                )
        self.report["backlog"] = result

    async def streaming(self, scheduler: SchedulerProcess) -> None:
        namespace = "bench-streaming"
        await self.namespace(namespace)
        before = scheduler.request_counts()
        times = BindTimes()
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch_binds(self.api, namespace, times, stop))
        await asyncio.sleep(0.5)
        started = time.monotonic()
        created = await self.create_workload(namespace, "volcano", gangs=True)

        async def all_bound() -> bool:
            return len(times.times) >= self.pods_total

        await wait_for("every pod bound", all_bound, 900)
        stop.set()
        watcher.cancel()
        await asyncio.sleep(2.5)
        summary = times.summary(started)
        usage = self.cpu_usage("streaming", started, max(times.times.values()))
        result: dict[str, Any] = {
            "cpu": usage,
            "created_in_s": created,
            **summary,
            "pods_per_s": self.pods_total / summary["last_bind_s"],
            "last_bind_after_last_create_s": summary["last_bind_s"] - created,
        }
        result["writes"] = writes(before, scheduler.request_counts())
        result["writes_per_pod"] = sum(result["writes"].values()) / self.pods_total
        self.report["streaming"] = result

    @contextlib.asynccontextmanager
    async def sampling_cpu(self) -> AsyncIterator[None]:
        """``self.cpu`` sampling while the body runs (the phases' CPU lines read it)."""
        stop = asyncio.Event()
        sampler = asyncio.create_task(self.cpu.run(stop))
        try:
            yield
        finally:
            stop.set()
            await sampler

    async def run(self) -> dict[str, Any]:
        async with self.sampling_cpu():
            return await self._run()

    async def _run(self) -> dict[str, Any]:
        await self.api.open()
        try:
            print(f"creating {self.args.nodes} kwok nodes ...", flush=True)
            await self.make_nodes()
            print(f"nodes Ready in {self.report['nodes_ready_s']:.1f} s", flush=True)
            await self.open_default_queue()
            modes = self.args.modes.split(",")
            if "ceiling" in modes:
                await self.ceiling()
            scheduler = SchedulerProcess(self.plane.kubeconfig, self.workdir, [
                f"--schedule-period={self.args.schedule_period}",
                f"--bind-concurrency={self.args.concurrency}",
                f"--events={self.args.events}",
                "--kube-api-qps=0", "-v=3"])  # fmt: skip
            try:
                if "backlog" in modes:
                    print("backlog: creating the pods, then starting the scheduler ...", flush=True)
                    await self.backlog(scheduler)
                    self.print_run("backlog")
                if "ceiling" in modes:
                    # Again, now: the machine's load drifts (a shared 2-core box).
                    scheduler.stop()
                    await self.ceiling("ceiling_after")
                if "streaming" in modes:
                    if not scheduler.alive:
                        scheduler.start()
                        assert scheduler.process is not None
                        self.cpu.pids["scheduler"] = scheduler.process.pid
                        await wait_for("scheduler ready", scheduler.ready, 300)
                    print("streaming: creating the pods while the scheduler runs ...", flush=True)
                    await self.streaming(scheduler)
                    self.print_run("streaming")
                self.print_ratios()
            finally:
                scheduler.stop()
            self.report["cycles_with_binds"] = [
                c for c in logged_cycles(scheduler.log_path) if c["binds"] or c["total_ms"] > 1000
            ]
            self.report["scheduler_log"] = str(scheduler.log_path)
        finally:
            await self.api.close()
        return self.report

    def ceilings(self) -> list[float]:
        return [
            self.report[label]["pods_per_s"]
            for label in ("ceiling", "ceiling_after")
            if label in self.report
        ]

    def print_run(self, mode: str) -> None:
        result = self.report[mode]
        print(f"{mode}: " + ", ".join(
            f"{key} {value:.2f}" if isinstance(value, float) else f"{key} {value}"
            for key, value in result.items() if key != "writes"))  # fmt: skip
        print(f"{mode}: scheduler API writes: " + ", ".join(
            f"{key} {value:.0f}" for key, value in sorted(result["writes"].items())))  # fmt: skip

    def print_ratios(self) -> None:
        ceilings = self.ceilings()
        if not ceilings:
            return
        mean = sum(ceilings) / len(ceilings)
        shown = " and ".join(f"{c:.0f}" for c in ceilings)
        for mode, key in (("backlog", "pods_per_s_bind_phase"),
                          ("backlog", "pods_per_s_after_session"),
                          ("streaming", "pods_per_s")):  # fmt: skip
            rate = self.report.get(mode, {}).get(key)
            if rate:
                print(
                    f"{mode} {key}: {rate:.0f} pods/s = {rate / mean:.0%} of the bind ceiling"
                    f" (measured {shown} binds/s, mean {mean:.0f})",
                    flush=True,
                )
        self.report["ceiling_mean"] = mean


def _run(args: argparse.Namespace, plane: ControlPlane, workdir: Path) -> dict[str, Any]:
    print(
        f"control plane up in {plane.startup_seconds['total']:.1f} s; work dir {workdir}",
        flush=True,
    )
    return asyncio.run(Bench(args, plane, workdir).run())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.e2e",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gangs", type=int, default=20)
    parser.add_argument("--gang-size", type=int, default=500)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=256,
        help="binds in flight: the scheduler's --bind-concurrency and the"
        " ceiling binder's (default 256, the scheduler's)",
    )
    parser.add_argument("--schedule-period", default="1s")
    parser.add_argument("--events", default="all", choices=("all", "warnings", "none"))
    parser.add_argument("--modes", default="ceiling,backlog,streaming")
    parser.add_argument("--json", help="also write the report here")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args(argv)
    if bins_missing("bench-e2e"):
        return 2
    with local_plane("vk8s-bench-", args.keep) as (plane, workdir):
        report = _run(args, plane, workdir)
    summary = {k: v for k, v in report.items() if k != "cycles_with_binds"}
    print(json.dumps(summary, indent=1, default=str))
    cycles = report["cycles_with_binds"]
    print(f"cycles that bound pods or took > 1 s ({len(cycles)}):")
    for cycle in cycles[:40]:
        print(
            f"  cycle {cycle['cycle']}: {cycle['total_ms']:.0f} ms, {cycle['binds']} binds"
            f" ({cycle['parts']})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
