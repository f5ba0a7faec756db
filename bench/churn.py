"""``python -m bench churn``: memory and resources of the live processes under churn (issue 16,
item 4). Needs the local control plane's binaries (``VK8S_BIN_DIR``, as ``make bench-e2e``).

``volcano-py scheduler`` and ``volcano-py controllers`` run as processes against a real
kube-apiserver + etcd with kwok nodes. In each of ``--rounds`` rounds the bench creates its
share of ``--pods`` bare pods (``schedulerName: volcano``, in PodGroups of ``--group-size``)
and of ``--jobs`` Volcano Jobs (``--job-replicas`` pods each), waits until no pod is Pending
(bound by the scheduler, started by kwok; kwok also completes the Jobs' pods), deletes all of
it and waits until the API server holds none of it. Names are new in every round, as in a real
cluster: anything a process keeps by name and never forgets shows up as growth.

After each round, once the processes had ``--settle`` seconds to see the deletes and the
scheduler's cache is empty again (at most ``--drain-timeout`` seconds: a slow process may still
be applying the deletes), it samples each process's RSS (``VmRSS`` of ``/proc/<pid>/status``),
the number of series on its ``/metrics``, and the scheduler's cache (nodes, jobs, tasks, through
its SIGUSR1 cache dump).
The first round is the warm-up: growth is measured from its sample to the last one.

With ``--memtrace DIR`` the processes run under ``bench.memtrace`` (tracemalloc on, which
slows them and inflates their RSS: a diagnosis, not a measurement): after each sample each
writes to DIR its tracemalloc snapshot and its objects by type; the bench prints the types
that changed most, and at the end the ``python -m bench.memtrace compare`` commands that show
which allocations grew from the warm-up to the last round, by line and by traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import memtrace
from bench.e2e import GROUP_ANNOTATION, PG_PATH, bounded, create, wait_for
from bench.local_plane import bins_missing, local_plane
from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ControlPlane, node_manifest
from e2e.scheduler_process import SchedulerProcess
from volcano_py.runtime.apiclient import ApiError, ClusterAccess, KubeApi

NAMESPACE = "churn"
SCHEDULER = "volcano"
JOB_PATH = "/apis/batch.volcano.sh/v1alpha1"
POOL_LABEL = "volcano-py.io/churn"
# Few, big nodes: the pods fit, and node heartbeats stay a small part of the traffic.
NODE_CAPACITY = {"cpu": "1000", "memory": "4000Gi", "pods": "5000"}
REQUESTS = {"cpu": "10m", "memory": "16Mi"}
ZERO_GRACE = {"gracePeriodSeconds": "0"}


# ------------------------------------------------------------------------------ pure helpers


def rss_kib(status_text: str) -> int:
    """``VmRSS`` in KiB from the text of ``/proc/<pid>/status``."""
    for line in status_text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise ValueError("no VmRSS line in /proc/<pid>/status (a kernel thread or a zombie?)")


def series_by_family(samples: Iterable[tuple[str, Mapping[str, str], float]]) -> Counter[str]:
    """How many series (samples) each metric name has on a ``/metrics`` page."""
    return Counter(name for name, _labels, _value in samples)


def growth_percent(baseline: float, now: float) -> float:
    """``now`` against ``baseline``, in percent (0 for an empty baseline that stayed empty)."""
    if baseline == 0:
        return 0.0 if now == 0 else float("inf")
    return (now - baseline) / baseline * 100.0


def changed_families(before: Mapping[str, int], after: Mapping[str, int]) -> dict[str, int]:
    """Per metric name, ``after - before`` where it is not 0: which series came or went."""
    return {
        name: after.get(name, 0) - before.get(name, 0)
        for name in sorted(set(before) | set(after))
        if after.get(name, 0) != before.get(name, 0)
    }


def split(total: int, parts: int, index: int) -> int:
    """The ``index``-th of ``parts`` near-equal shares of ``total`` (they add up to it)."""
    return total // parts + (1 if index < total % parts else 0)


def cache_counts(dump_lines: list[str]) -> dict[str, int]:
    """Nodes, HyperNodes, jobs and tasks in a scheduler cache dump (runtime/cache_dump.py)."""
    nodes, hyper_nodes, jobs = (json.loads(line) for line in dump_lines[:3])
    return {
        "nodes": len(nodes),
        "hypernodes": len(hyper_nodes),
        "jobs": len(jobs),
        "tasks": sum(len(job["tasks"]) for job in jobs.values()),
    }


# ------------------------------------------------------------------------------ manifests


def pod_manifest(name: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": {GROUP_ANNOTATION: group}},
        "spec": {
            "schedulerName": SCHEDULER,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "main", "image": "busybox",
                            "resources": {"requests": REQUESTS}}],
        },
    }  # fmt: skip


def pod_group_manifest(name: str, members: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": members, "queue": "default"},
    }


def job_manifest(name: str, replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": SCHEDULER,
            "minAvailable": replicas,
            "queue": "default",
            "tasks": [{
                "name": "worker",
                "replicas": replicas,
                "template": {"spec": {
                    "terminationGracePeriodSeconds": 0,
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox",
                                    "resources": {"requests": REQUESTS}}],
                }},
            }],
        },
    }  # fmt: skip


# ------------------------------------------------------------------------------ the bench


@dataclass
class Sample:
    round: int
    seconds: float  # since the bench started
    rss_kib: dict[str, int]
    series: dict[str, Counter[str]]
    cache: dict[str, int] = field(default_factory=dict)

    def series_total(self, process: str) -> int:
        return sum(self.series[process].values())


class Churn:
    def __init__(self, args: argparse.Namespace, plane: ControlPlane, workdir: Path) -> None:
        self.args = args
        self.plane = plane
        self.workdir = workdir
        self.api = KubeApi(
            ClusterAccess.load(str(plane.kubeconfig)),
            qps=0,
            burst=0,
            max_connections=args.concurrency + 16,
        )
        self.dump_dir = workdir / "dumps"
        self.dump_dir.mkdir()
        self.processes: dict[str, SchedulerProcess] = {}
        self.samples: list[Sample] = []
        self.began = time.monotonic()
        self.round_seconds: list[float] = []
        self.traced_types: dict[str, dict[str, int]] = {}  # the last memtrace answer's

    # ---- counting objects in the API server

    async def count(self, path: str, params: Mapping[str, str] | None = None) -> int:
        """Objects of a collection: a one-item page and the server's remaining count."""
        answer = await self.api.request("GET", path, params={**(params or {}), "limit": "1"})
        items = answer.get("items") or []
        remaining = int(answer.get("metadata", {}).get("remainingItemCount") or 0)
        return len(items) + remaining

    async def any_left(self, path: str, params: Mapping[str, str]) -> bool:
        answer = await self.api.request("GET", path, params={**params, "limit": "1"})
        return bool(answer.get("items"))

    # ---- one round

    async def create_round(self, index: int) -> int:
        """This round's PodGroups, pods and Jobs; the number of pods to expect."""
        args = self.args
        pods = split(args.pods, args.rounds, index - 1)
        jobs = split(args.jobs, args.rounds, index - 1)
        groups = [
            (f"pg-{index}-{g}", split(pods, -(-pods // args.group_size), g))
            for g in range(-(-pods // args.group_size))
        ]
        ns = f"/namespaces/{NAMESPACE}"
        await bounded(args.concurrency, (
            create(self.api, f"{PG_PATH}{ns}/podgroups", pod_group_manifest(name, members))
            for name, members in groups))  # fmt: skip
        await bounded(args.concurrency, (
            create(self.api, f"{JOB_PATH}{ns}/jobs", job_manifest(f"job-{index}-{j}",
                                                                  args.job_replicas))
            for j in range(jobs)))  # fmt: skip
        await bounded(args.concurrency, (
            create(self.api, f"/api/v1{ns}/pods", pod_manifest(f"{group}-{m}", group))
            for group, members in groups for m in range(members)))  # fmt: skip
        return pods + jobs * int(args.job_replicas)

    async def wait_started(self, expected: int) -> None:
        """Every pod bound and started by kwok (its Jobs' pods, ``restartPolicy: Never``, also
        complete: kwok's stages end a Job's pods, and the Jobs complete)."""
        path = f"/api/v1/namespaces/{NAMESPACE}/pods"

        async def all_started() -> bool:
            self.check_alive()
            if await self.count(path) < expected:
                return False
            return not await self.any_left(path, {"fieldSelector": "status.phase=Pending"})

        await wait_for(f"{expected} pods started", all_started, self.args.round_timeout)

    async def delete_all(self) -> None:
        """Jobs first (their controller stops making pods), then pods and PodGroups, until the
        API server has none (a job's controller may still create a pod in between)."""
        ns = f"/namespaces/{NAMESPACE}"
        collections = (f"{JOB_PATH}{ns}/jobs", f"/api/v1{ns}/pods", f"{PG_PATH}{ns}/podgroups")

        async def deleted() -> bool:
            self.check_alive()
            for path in collections:
                try:
                    await self.api.request("DELETE", path, params=ZERO_GRACE, timeout=300)
                except ApiError as error:
                    if not error.transient:
                        raise
            counts = [await self.count(path) for path in collections]
            return not any(counts)

        await wait_for("everything deleted", deleted, self.args.round_timeout)

    # ---- sampling

    def check_alive(self) -> None:
        for label, process in self.processes.items():
            if not process.alive:
                raise RuntimeError(f"{label} exited ({process.returncode}): {process.log()}")

    def rss(self, process: SchedulerProcess) -> int:
        assert process.process is not None
        return rss_kib(Path(f"/proc/{process.process.pid}/status").read_text())

    async def scheduler_cache(self) -> dict[str, int]:
        """Through the cache dumper: SIGUSR1, then the newest snapshot file."""
        scheduler = self.processes["scheduler"]
        assert scheduler.process is not None
        for old in self.dump_dir.glob("snapshot-*.json"):
            old.unlink()
        scheduler.process.send_signal(signal.SIGUSR1)
        for _ in range(100):
            await asyncio.sleep(0.2)
            for path in self.dump_dir.glob("snapshot-*.json"):
                lines = path.read_text().splitlines()
                if len(lines) >= 3:
                    return cache_counts(lines)
        raise TimeoutError("the scheduler wrote no cache dump within 20 s")

    async def drained(self) -> dict[str, int]:
        """The scheduler's cache once it holds no job or task (or at ``--drain-timeout``)."""
        deadline = time.monotonic() + self.args.drain_timeout
        while True:
            cache = await self.scheduler_cache()
            if not (cache["jobs"] or cache["tasks"]) or time.monotonic() > deadline:
                return cache
            await asyncio.sleep(2.0)

    async def sample(self, index: int) -> Sample:
        await asyncio.sleep(self.args.settle)
        self.check_alive()
        cache = await self.drained()
        series = {
            # A generous timeout: a busy machine, or tracemalloc, can keep /metrics > 5 s.
            label: series_by_family(await asyncio.to_thread(process.metrics, 120.0))
            for label, process in self.processes.items()
        }
        taken = Sample(
            round=index,
            seconds=time.monotonic() - self.began,
            rss_kib={label: self.rss(process) for label, process in self.processes.items()},
            series=series,
            cache=cache,
        )
        self.samples.append(taken)
        if self.args.memtrace:
            await self.memtrace(index)
        return taken

    async def memtrace(self, index: int) -> None:
        """Each process's tracemalloc snapshot and object counts (after the RSS sample:
        answering runs a full collection); prints which types grew since the last round."""
        directory = Path(self.args.memtrace)
        for label, process in self.processes.items():
            assert process.process is not None
            pid = process.process.pid
            memtrace.request_path(directory, pid).write_text(str(index))
            answer = memtrace.answer_path(directory, pid, str(index))
            for _ in range(1200):
                if answer.exists():
                    break
                await asyncio.sleep(0.5)
            else:
                raise TimeoutError(f"{label}: no memtrace answer within 10 minutes")
            shown = json.loads(answer.read_text())
            grown = memtrace.types_grown(self.traced_types.get(label, {}), shown["types"])
            self.traced_types[label] = shown["types"]
            print(
                f"  memtrace {label}: traced {shown['traced_mib']} MiB,"
                f" {shown['gc_objects']} gc objects ({shown['unreachable_collected']}"
                f" unreachable collected), malloc {shown['malloc']}; changed: "
                + ", ".join(f"{name} {diff:+d}" for name, diff in grown[:8]),
                flush=True,
            )

    def memtrace_commands(self) -> list[str]:
        """How to compare each process's warm-up snapshot with its last one."""
        directory = Path(self.args.memtrace)
        last = str(self.samples[-1].round)
        return [
            f"{label}: python -m bench.memtrace compare"
            f" {memtrace.snapshot_path(directory, process.process.pid, '1')}"
            f" {memtrace.snapshot_path(directory, process.process.pid, last)}"
            for label, process in self.processes.items()
            if process.process is not None
        ]

    # ---- the run

    async def make_nodes(self) -> None:
        names = [f"churn-node-{index:03d}" for index in range(self.args.nodes)]
        await bounded(self.args.concurrency, (
            create(self.api, "/api/v1/nodes",
                   node_manifest(name, NODE_CAPACITY, labels={POOL_LABEL: "true"}))
            for name in names))  # fmt: skip

        async def all_ready() -> bool:
            items, _ = await self.api.list_all("/api/v1/nodes", {"labelSelector": POOL_LABEL})
            ready = sum(
                any(c["type"] == "Ready" and c["status"] == "True"
                    for c in item.get("status", {}).get("conditions") or [])
                for item in items
            )  # fmt: skip
            return ready == len(names)

        await wait_for("kwok nodes Ready", all_ready, 300)

    def start_processes(self) -> None:
        kubeconfig = self.plane.kubeconfig
        if self.args.memtrace:
            Path(self.args.memtrace).mkdir(parents=True, exist_ok=True)
            os.environ[memtrace.DIR_VARIABLE] = str(Path(self.args.memtrace).resolve())
        self.processes["scheduler"] = SchedulerProcess(kubeconfig, self.workdir, [
            f"--scheduler-name={SCHEDULER}", "--schedule-period=1s", "--kube-api-qps=0",
            "--cache-dumper=true", f"--cache-dump-dir={self.dump_dir}",
        ])  # fmt: skip
        self.processes["controllers"] = ControllersProcess(kubeconfig, self.workdir, [
            f"--scheduler-name={SCHEDULER}", "--kube-api-qps=0",
        ])  # fmt: skip
        for process in self.processes.values():
            if self.args.memtrace:
                # python -m volcano_py ... becomes python -m bench.memtrace volcano_py ...
                process.argv.insert(process.argv.index("volcano_py"), "bench.memtrace")
            process.start()

    async def run(self) -> list[Sample]:
        await self.api.open()
        try:
            await self.make_nodes()
            await create(self.api, "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
            self.start_processes()
            for label, process in self.processes.items():
                await wait_for(f"{label} ready", process.ready, 300)
            print(f"{self.args.nodes} kwok nodes Ready; processes ready", flush=True)
            first = await self.sample(0)
            self.print_sample(first)
            for index in range(1, self.args.rounds + 1):
                started = time.monotonic()
                expected = await self.create_round(index)
                await self.wait_started(expected)
                await self.delete_all()
                self.round_seconds.append(time.monotonic() - started)
                self.print_sample(await self.sample(index), expected)
        finally:
            for process in self.processes.values():
                process.stop()
            await self.api.close()
        return self.samples

    def print_sample(self, sample: Sample, pods: int | None = None) -> None:
        what = "before any churn" if pods is None else f"{pods} pods churned"
        took = f" in {self.round_seconds[-1]:.0f} s" if pods is not None else ""
        print(
            f"round {sample.round} ({what}{took}, t={sample.seconds:.0f} s): "
            + "; ".join(
                f"{label} RSS {sample.rss_kib[label] / 1024:.1f} MiB,"
                f" {sample.series_total(label)} series"
                for label in self.processes
            )
            + "; scheduler cache "
            + ", ".join(f"{k} {v}" for k, v in sample.cache.items()),
            flush=True,
        )


def report(samples: list[Sample], labels: Iterable[str]) -> dict[str, Any]:
    """Growth from the warm-up round (round 1) to the last, per process."""
    warm, last = samples[1], samples[-1]
    result: dict[str, Any] = {}
    for label in labels:
        result[label] = {
            "rss_mib_before_churn": samples[0].rss_kib[label] / 1024,
            "rss_mib_after_warmup": warm.rss_kib[label] / 1024,
            "rss_mib_last": last.rss_kib[label] / 1024,
            "rss_growth_after_warmup_percent": growth_percent(
                warm.rss_kib[label], last.rss_kib[label]
            ),
            "series_before_churn": samples[0].series_total(label),
            "series_after_warmup": warm.series_total(label),
            "series_last": last.series_total(label),
            "series_changed_since_start": changed_families(
                samples[0].series[label], last.series[label]
            ),
        }
    result["scheduler_cache"] = {"before": samples[0].cache, "last": last.cache}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench churn",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--pods", type=int, default=100_000, help="bare pods in all (100000)")
    parser.add_argument("--jobs", type=int, default=1000, help="Volcano Jobs in all (1000)")
    parser.add_argument("--rounds", type=int, default=10, help="at least 2: the first warms up")
    parser.add_argument("--group-size", type=int, default=10, help="pods per PodGroup (10)")
    parser.add_argument("--job-replicas", type=int, default=2, help="pods per Job (2)")
    parser.add_argument("--nodes", type=int, default=20, help="kwok nodes of 5000 pods (20)")
    parser.add_argument("--concurrency", type=int, default=32, help="creates in flight (32)")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds before a sample")
    parser.add_argument("--round-timeout", type=float, default=1800.0)
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=300.0,
        help="seconds a sample waits for the scheduler's cache to empty (300)",
    )
    parser.add_argument("--json", help="also write the samples and the report here")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    parser.add_argument(
        "--memtrace",
        metavar="DIR",
        help="run the processes under tracemalloc and write what grew each round to DIR",
    )
    args = parser.parse_args(argv)
    if args.rounds < 2:
        parser.error("--rounds must be at least 2 (the first round is the warm-up)")
    if bins_missing("bench-churn"):
        return 2
    with local_plane("vk8s-churn-", args.keep) as (plane, workdir):
        churn = Churn(args, plane, workdir)
        samples = asyncio.run(churn.run())
        result = report(samples, churn.processes)
        if args.memtrace:
            print("what grew from the warm-up to the last round:")
            print("\n".join(churn.memtrace_commands()))
    print(json.dumps(result, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "config": vars(args),
            "rounds": [{"round": s.round, "seconds": s.seconds, "rss_kib": s.rss_kib,
                        "series": {k: sum(v.values()) for k, v in s.series.items()},
                        "cache": s.cache} for s in samples],
            "report": result,
        }, indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
