"""``python -m bench side-by-side``: volcano-py's scheduler against Volcano's own (vc-scheduler)
on one control plane, the method of ``shared/bench/README.md`` (issue "Scale": 4x Volcano on
gangs, 90% of the bind ceiling, p99 create-to-bind within 2 s at 200 pods/s).

One kube-apiserver + etcd + kwok, 1,000 kwok nodes of 32 CPU / 128Gi / 110 pods. Each scheduler
runs alone on it, in turn, with the same scheduler conf, client QPS/burst, schedule period and
verbosity. Workloads (each pod 1 CPU / 1Gi):

* ``gangs``: 500 PodGroups of minMember 10 with their 5,000 pods;
* ``singles``: 5,000 pods, each with its own PodGroup of minMember 1 (what Volcano's podgroup
  controller would make; no controller runs here).

Modes: ``backlog`` (everything exists before the scheduler starts: throughput) and
``streaming`` (once the scheduler has bound a canary pod, the objects are created as fast as
one client can, or at ``--rate`` pods per second: latency). Figures per run: pods bound per
second (backlog: from the process start and over the bind phase; streaming: from the first
create), p50/p99 create-to-bind latency (streaming), the scheduler's CPU seconds and peak RSS,
and the control plane's raw bind ceiling measured in the same run. Runs alternate the
schedulers; the summary gives medians and, with Volcano, the ratios.

Volcano's binary is taken by path (``--volcano PATH`` or ``$VOLCANO_SCHEDULER``); without one,
volcano-py is measured alone. This repository never holds Volcano's code or a binary built from
it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.e2e import PG_PATH, Bench, BindTimes, bounded, create, pod, wait_for, watch_binds
from bench.local_plane import bins_missing, local_plane
from bench.procstat import cpu_seconds, memory_mib
from e2e.controlplane import REPO_ROOT, ControlPlane, free_port
from volcano_py.runtime.apiclient import ApiError

SCHEDULER_NAME = "volcano"
CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


@dataclass
class Contender:
    """One scheduler binary and how to start it with the shared settings."""

    name: str
    argv_prefix: list[str]

    def argv(self, kubeconfig: Path, conf: Path, args: argparse.Namespace) -> list[str]:
        return [
            *self.argv_prefix,
            f"--kubeconfig={kubeconfig}",
            f"--scheduler-conf={conf}",
            f"--schedule-period={args.schedule_period}",
            f"--kube-api-qps={args.qps}",
            f"--kube-api-burst={args.burst}",
            "--leader-elect=false",
            f"--listen-address=127.0.0.1:{free_port()}",
            f"--healthz-address=127.0.0.1:{free_port()}",
            f"-v={args.verbosity}",
        ]


@dataclass
class Running:
    """A started scheduler: its process, log and the resources it used."""

    process: subprocess.Popen[bytes]
    started: float
    log_path: Path

    def usage(self) -> dict[str, float]:
        """CPU seconds (user + system) and peak RSS, read from /proc while it still runs."""
        pid = self.process.pid
        return {"cpu_s": cpu_seconds(pid), "peak_rss_mib": memory_mib(pid)["peak_rss_mib"]}

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class Runs:
    """Every measured figure, by (mode, workload, scheduler)."""

    results: dict[tuple[str, str, str], list[dict[str, float]]] = field(default_factory=dict)
    ceilings: list[float] = field(default_factory=list)

    def add(self, mode: str, workload: str, scheduler: str, result: dict[str, float]) -> None:
        self.results.setdefault((mode, workload, scheduler), []).append(result)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


class SideBySide(Bench):
    def __init__(
        self,
        args: argparse.Namespace,
        plane: ControlPlane,
        workdir: Path,
        contenders: list[Contender],
    ) -> None:
        super().__init__(args, plane, workdir)
        self.contenders = contenders
        self.runs = Runs()
        # In a directory of its own: vc-scheduler watches the conf's directory and reloads (and
        # logs the conf) on every change there, so beside its own log it never stops.
        conf_dir = workdir / "conf"
        conf_dir.mkdir()
        self.conf_path = conf_dir / "volcano-scheduler.conf"
        self.conf_path.write_text(CONF)
        self.sequence = 0

    def start(self, contender: Contender) -> Running:
        log_path = self.workdir / f"{contender.name}-{self.sequence}.log"
        self.sequence += 1
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_PROXY": "127.0.0.1,localhost"}
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                contender.argv(self.plane.kubeconfig, self.conf_path, self.args),
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO_ROOT,
                env=env,
                start_new_session=True,
            )
        return Running(process, time.monotonic(), log_path)

    async def make_groups(self, namespace: str, workload: str) -> list[tuple[str, str]]:
        """The PodGroups of ``workload``; returns (pod name, group) in creation order."""
        size = self.args.gang_size if workload == "gangs" else 1
        groups = self.args.pods // size
        await bounded(self.args.concurrency, (
            create(self.api, f"{PG_PATH}/namespaces/{namespace}/podgroups", {
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": f"g-{g:05d}"},
                "spec": {"minMember": size, "queue": "default"}})
            for g in range(groups)))  # fmt: skip
        return [(f"g-{g:05d}-{i:03d}", f"g-{g:05d}") for g in range(groups) for i in range(size)]

    async def make_pods(
        self, namespace: str, pods: list[tuple[str, str]], created: dict[str, float]
    ) -> None:
        """Create the pods, recording when each create was answered. With ``--rate``, paced."""
        path = f"/api/v1/namespaces/{namespace}/pods"
        rate = self.args.rate
        begin = time.monotonic()

        async def one(index: int, name: str, group: str) -> None:
            if rate:
                delay = begin + index / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            sent = time.monotonic()
            await create(self.api, path, pod(name, namespace, group, SCHEDULER_NAME))
            created[name] = sent

        await bounded(self.args.concurrency, (one(i, n, g) for i, (n, g) in enumerate(pods)))

    async def clean(self, namespace: str) -> None:
        for path in (f"/api/v1/namespaces/{namespace}/pods",
                     f"{PG_PATH}/namespaces/{namespace}/podgroups"):  # fmt: skip
            for _attempt in range(30):
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

    async def canary(self, namespace: str, running: Running) -> None:
        """Wait until the scheduler binds a one-pod group, then remove it: streaming starts
        with a scheduler that has listed everything (the same test for both schedulers; Volcano
        has no readiness endpoint)."""
        pods = [("canary", "canary")]
        group = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "canary"},
            "spec": {"minMember": 1, "queue": "default"},
        }
        await create(self.api, f"{PG_PATH}/namespaces/{namespace}/podgroups", group)
        await self.make_pods(namespace, pods, {})
        path = f"/api/v1/namespaces/{namespace}/pods/canary"

        async def bound() -> bool:
            if running.process.poll() is not None:
                raise RuntimeError(f"the scheduler exited; see {running.log_path}")
            return bool((await self.api.request("GET", path))["spec"].get("nodeName"))

        await wait_for("the canary pod bound", bound, 300)
        await self.clean(namespace)

    async def measure(self, contender: Contender, mode: str, workload: str) -> dict[str, float]:
        namespace = f"sbs-{self.sequence}-{contender.name}-{mode}-{workload}"
        await self.namespace(namespace)
        times = BindTimes()
        created: dict[str, float] = {}
        stop = asyncio.Event()
        result: dict[str, float] = {}
        running: Running | None = None
        try:
            if mode == "backlog":
                pods = await self.make_groups(namespace, workload)
                await self.make_pods(namespace, pods, created)
                watcher = asyncio.create_task(watch_binds(self.api, namespace, times, stop))
                await asyncio.sleep(0.5)
                running = self.start(contender)
                begin = running.started
            else:
                running = self.start(contender)
                await self.canary(namespace, running)
                watcher = asyncio.create_task(watch_binds(self.api, namespace, times, stop))
                await asyncio.sleep(0.5)
                begin = time.monotonic()
                pods = await self.make_groups(namespace, workload)
                await self.make_pods(namespace, pods, created)
            total = len(pods)

            async def all_bound() -> bool:
                if running is not None and running.process.poll() is not None:
                    raise RuntimeError(f"{contender.name} exited; see {running.log_path}")
                return len(times.times) >= total

            await wait_for(f"{total} pods bound by {contender.name}", all_bound, 900)
            result.update(running.usage())
            stop.set()
            watcher.cancel()
            ordered = sorted(times.times.values())
            result["last_bind_s"] = ordered[-1] - begin
            result["pods_per_s"] = total / result["last_bind_s"]
            if mode == "backlog":
                result["pods_per_s_bind_phase"] = total / (ordered[-1] - ordered[0])
                result["first_bind_s"] = ordered[0] - begin
            else:
                latencies = [times.times[name] - created[name] for name in created]
                result["p50_s"] = percentile(latencies, 0.50)
                result["p99_s"] = percentile(latencies, 0.99)
                result["created_in_s"] = max(created.values()) - begin
        finally:
            stop.set()
            if running is not None:
                running.stop()
            await self.clean(namespace)
        return result

    async def measure_all(self) -> Runs:
        async with self.sampling_cpu():
            return await self._measure_all()

    async def _measure_all(self) -> Runs:
        await self.api.open()
        try:
            print(f"creating {self.args.nodes} kwok nodes ...", flush=True)
            await self.make_nodes()
            await self.open_default_queue()
            for run in range(self.args.runs):
                await self.ceiling(f"ceiling-{run}")
                self.runs.ceilings.append(self.report[f"ceiling-{run}"]["pods_per_s"])
                order = self.contenders if run % 2 == 0 else self.contenders[::-1]
                for mode in self.args.modes.split(","):
                    for workload in self.args.workloads.split(","):
                        for contender in order:
                            result = await self.measure(contender, mode, workload)
                            self.runs.add(mode, workload, contender.name, result)
                            shown = ", ".join(f"{k} {v:.2f}" for k, v in result.items())
                            print(f"run {run} {mode} {workload} {contender.name}: {shown}",
                                  flush=True)  # fmt: skip
        finally:
            await self.api.close()
        return self.runs


def summarize(runs: Runs, names: list[str]) -> dict[str, Any]:
    ceiling = statistics.mean(runs.ceilings) if runs.ceilings else float("nan")
    summary: dict[str, Any] = {"ceiling_binds_per_s": runs.ceilings, "rows": []}
    print(f"bind ceiling: {', '.join(f'{c:.0f}' for c in runs.ceilings)} (mean {ceiling:.0f})")
    keys = sorted({(mode, workload) for mode, workload, _ in runs.results})
    for mode, workload in keys:
        row: dict[str, Any] = {"mode": mode, "workload": workload}
        for name in names:
            measured = runs.results.get((mode, workload, name), [])
            if measured:
                row[name] = {
                    key: statistics.median(r[key] for r in measured) for key in measured[0]
                }
        ours = row.get("volcano-py", {})
        theirs = row.get("volcano", {})
        line = f"{mode:9} {workload:7}"
        for name in names:
            figures = row.get(name)
            if figures:
                line += f" | {name} {figures['pods_per_s']:.0f} pods/s"
                if "p99_s" in figures:
                    line += f" p50 {figures['p50_s']:.2f} s p99 {figures['p99_s']:.2f} s"
                line += f" cpu {figures['cpu_s']:.1f} s rss {figures['peak_rss_mib']:.0f} MiB"
        if ours:
            line += f" | volcano-py at {ours['pods_per_s'] / ceiling:.0%} of the ceiling"
        if ours and theirs:
            row["ratio_pods_per_s"] = ours["pods_per_s"] / theirs["pods_per_s"]
            line += f" | ratio {row['ratio_pods_per_s']:.2f}x"
        summary["rows"].append(row)
        print(line, flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench side-by-side",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--volcano",
        default=os.environ.get("VOLCANO_SCHEDULER"),
        help="path of Volcano's vc-scheduler (default $VOLCANO_SCHEDULER)",
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--gang-size", type=int, default=10)
    parser.add_argument("--modes", default="streaming,backlog")
    parser.add_argument("--workloads", default="gangs,singles")
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="streaming: create at this many pods/s (default: as fast as the client can)",
    )
    parser.add_argument("--schedule-period", default="1s")
    parser.add_argument("--qps", type=int, default=2000)
    parser.add_argument("--burst", type=int, default=2000)
    parser.add_argument("--verbosity", type=int, default=2)
    parser.add_argument(
        "--concurrency",
        type=int,
        default=64,
        help="creates and ceiling binds in flight (default 64)",
    )
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args(argv)
    # Bench's ceiling creates gangs * gang_size pods: the same count as the workloads.
    args.gangs = args.pods // args.gang_size
    if args.pods % args.gang_size:
        parser.error("--pods must be a multiple of --gang-size")
    if bins_missing("bench-side-by-side"):
        return 2
    contenders = [Contender("volcano-py", [sys.executable, "-m", "volcano_py", "scheduler"])]
    if args.volcano:
        if not os.access(args.volcano, os.X_OK):
            print(f"--volcano {args.volcano}: not an executable file", file=sys.stderr)
            return 2
        contenders.append(Contender("volcano", [args.volcano]))
    with local_plane("vk8s-sbs-", args.keep) as (plane, workdir):
        bench = SideBySide(args, plane, workdir, contenders)
        runs = asyncio.run(bench.measure_all())
    summary = summarize(runs, [c.name for c in contenders])
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
