"""``python -m bench watch-load`` (``make bench-watch-load``): how much a busy watch stream slows
the live scheduler's sessions (issue 14: "watch decoding and scheduling share one GIL").

One kube-apiserver + etcd + kwok with ``--nodes`` kwok nodes (32 CPU, 128Gi, 110 pods),
``--running`` pods bound to them (100m / 128Mi each, spread evenly; kwok runs them) and
``--pending`` pods in PodGroups of ``--gang-size`` that fit on no node (``--pending-cpu`` CPUs
each, more than a node has): the backlog stays, so every session snapshots the whole cluster
and tries every gang again. Then ``volcano-py scheduler`` (``--schedule-period=1s``, ``-v=4``:
every session is logged) runs through alternating phases of ``--window`` seconds each, after
``--settle`` seconds of warm-up:

* ``quiet``: nobody writes to the API server;
* ``pods``: this client merge-patches an annotation of the bound pods, round robin, at
  ``--rate`` writes a second: a stream of pod ``MODIFIED`` events the scheduler must decode
  and apply (each changes a field the scheduler keeps: the annotations);
* ``nodes``: the same rate of node status heartbeats (``conditions[Ready].lastHeartbeatTime``,
  a strategic merge patch of ``nodes/status``, what a kubelet sends);
* ``secrets``: the same rate of annotation patches of Secrets, a kind the scheduler does not
  watch: the control. It loads the API server, etcd and this client as much as ``pods`` does,
  so the difference between ``secrets`` and ``pods`` is the scheduler's own share.

Per phase: the sessions that started and ended in the window (count, median, mean, p90, max,
and the mean of each part: snapshot, open, each action, close), from the scheduler's log; the
CPU share of the scheduler, the API server and kwok (``/proc``); the write rate reached.

``--scheduler-source [TAG=]DIR`` (repeatable) runs the scheduler of another source tree, an
export of another commit, on the same cluster, the trees in turn each round: before and after
a change, under the same load.

``--py-spy DIR`` also records the scheduler with ``py-spy record --threads --idle`` during
each phase (raw collapsed stacks in DIR) and prints, per thread, where its samples went:
that says whether a slower session waits for the cache lock or for the GIL, and what the I/O
thread was doing meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.e2e import (
    PG_PATH,
    Bench,
    bounded,
    create,
    logged_cycles,
    pod,
    wait_bound_running,
    wait_for,
)
from bench.local_plane import bins_missing, local_plane
from bench.procstat import cpu_seconds
from e2e.controlplane import REPO_ROOT, ControlPlane
from e2e.scheduler_process import SchedulerProcess
from volcano_py.runtime.apiclient import MERGE_PATCH, STRATEGIC_MERGE_PATCH, ApiError

NAMESPACE = "watch-load"
SCHEDULER = "volcano"
TICK = "bench.volcano-py.io/tick"
STREAMS = ("pods", "nodes", "secrets")
# A Secret about as big as a kwok-run pod, so the control stream costs the API server alike.
SECRET_PAYLOAD = "x" * 2400


def running_pod(name: str, node: str) -> dict[str, Any]:
    manifest = pod(name, NAMESPACE, None, SCHEDULER)
    manifest["spec"]["nodeName"] = node
    manifest["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "100m", "memory": "128Mi"}
    return manifest


def pending_pod(name: str, group: str, cpu: str) -> dict[str, Any]:
    manifest = pod(name, NAMESPACE, group, SCHEDULER)
    manifest["spec"]["containers"][0]["resources"]["requests"] = {"cpu": cpu, "memory": "1Gi"}
    return manifest


def thread_ids(pid: int, py_spy: str | None) -> dict[str, int]:
    """The scheduler's threads by name (``volcano-scheduler``, ``volcano-io``), from
    ``py-spy dump``; empty without py-spy."""
    if py_spy is None:
        return {}
    dump = subprocess.run(
        [py_spy, "dump", "--pid", str(pid), "--nonblocking"],
        capture_output=True, text=True, timeout=60, check=False,
    ).stdout  # fmt: skip
    return {
        name: int(tid)
        for tid, name in re.findall(r'^Thread (\d+) \([^)]*\): "([^"]+)"', dump, re.M)
    }


def thread_cpu_seconds(pid: int, tid: int) -> float:
    """User + system CPU seconds of one thread (``/proc/<pid>/task/<tid>/stat``)."""
    fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parts_of(text: str) -> dict[str, float]:
    """``"snapshot 12.0, open 3.1, allocate 40.2"`` -> ``{"snapshot": 12.0, ...}``."""
    parts = {}
    for item in text.split(", "):
        name, _, value = item.rpartition(" ")
        if name:
            parts[name] = float(value)
    return parts


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class Pacer:
    """Writes at ``rate`` a second (at most ``in_flight`` outstanding) until stopped."""

    def __init__(self, rate: float, in_flight: int) -> None:
        self.rate = rate
        self.in_flight = in_flight
        self.sent = 0
        self.failed = 0

    async def run(self, write: Callable[[int], Awaitable[None]], stop: asyncio.Event) -> None:
        semaphore = asyncio.Semaphore(self.in_flight)
        pending: set[asyncio.Task[None]] = set()
        started = time.monotonic()

        async def one(index: int) -> None:
            try:
                await write(index)
                self.sent += 1
            except ApiError:
                self.failed += 1
            finally:
                semaphore.release()

        index = 0
        while not stop.is_set():
            delay = started + index / self.rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            await semaphore.acquire()
            task = asyncio.create_task(one(index))
            pending.add(task)
            task.add_done_callback(pending.discard)
            index += 1
        await asyncio.gather(*pending, return_exceptions=True)


class WatchLoad(Bench):
    def __init__(self, args: argparse.Namespace, plane: ControlPlane, workdir: Path) -> None:
        super().__init__(args, plane, workdir)
        self.running: list[str] = []
        self.secrets: list[str] = []

    async def fill(self) -> None:
        started = time.monotonic()
        await self.namespace(NAMESPACE)
        nodes = self.nodes
        self.running = [f"run-{i:06d}" for i in range(self.args.running)]
        await bounded(self.args.concurrency, (
            create(self.api, f"/api/v1/namespaces/{NAMESPACE}/pods",
                   running_pod(name, nodes[i % len(nodes)]))
            for i, name in enumerate(self.running)))  # fmt: skip
        groups = self.args.pending // self.args.gang_size
        await bounded(self.args.concurrency, (
            create(self.api, f"{PG_PATH}/namespaces/{NAMESPACE}/podgroups", {
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                "metadata": {"name": f"gang-{g:05d}"},
                "spec": {"minMember": self.args.gang_size, "queue": "default"}})
            for g in range(groups)))  # fmt: skip
        await bounded(self.args.concurrency, (
            create(self.api, f"/api/v1/namespaces/{NAMESPACE}/pods",
                   pending_pod(f"gang-{g:05d}-{i:03d}", f"gang-{g:05d}", self.args.pending_cpu))
            for g in range(groups) for i in range(self.args.gang_size)))  # fmt: skip
        if "secrets" in self.args.streams:
            self.secrets = [f"load-{i:05d}" for i in range(self.args.secrets)]
            await bounded(self.args.concurrency, (
                create(self.api, f"/api/v1/namespaces/{NAMESPACE}/secrets", {
                    "apiVersion": "v1", "kind": "Secret", "metadata": {"name": name},
                    "stringData": {"payload": SECRET_PAYLOAD}})
                for name in self.secrets))  # fmt: skip
        print(f"created {len(self.running)} bound and {groups * self.args.gang_size} pending"
              f" pods in {time.monotonic() - started:.0f} s", flush=True)  # fmt: skip

        await wait_bound_running(self.api, NAMESPACE)
        print(f"every bound pod Running after {time.monotonic() - started:.0f} s", flush=True)

    # ---- the write streams

    def writer(self, stream: str) -> Callable[[int], Awaitable[None]]:
        if stream == "pods":

            async def patch_pod(index: int) -> None:
                name = self.running[index % len(self.running)]
                await self.api.request(
                    "PATCH",
                    f"/api/v1/namespaces/{NAMESPACE}/pods/{name}",
                    {"metadata": {"annotations": {TICK: str(index)}}},
                    content_type=MERGE_PATCH,
                )

            return patch_pod
        if stream == "nodes":

            async def heartbeat(index: int) -> None:
                name = self.nodes[index % len(self.nodes)]
                now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                await self.api.request(
                    "PATCH",
                    f"/api/v1/nodes/{name}/status",
                    {"status": {"conditions": [{"type": "Ready", "lastHeartbeatTime": now}]}},
                    content_type=STRATEGIC_MERGE_PATCH,
                )

            return heartbeat
        if stream == "secrets":

            async def patch_secret(index: int) -> None:
                name = self.secrets[index % len(self.secrets)]
                await self.api.request(
                    "PATCH",
                    f"/api/v1/namespaces/{NAMESPACE}/secrets/{name}",
                    {"metadata": {"annotations": {TICK: str(index)}}},
                    content_type=MERGE_PATCH,
                )

            return patch_secret
        raise ValueError(f"unknown stream {stream!r}; known: {', '.join(STREAMS)}")

    # ---- one phase

    def pids(self, scheduler: SchedulerProcess) -> dict[str, int]:
        assert scheduler.process is not None
        found = {"scheduler": scheduler.process.pid}
        for name in ("kube-apiserver", "kwok", "etcd"):
            process = self.plane.processes.get(name)
            if process is not None and process.pid is not None:
                found[name] = process.pid
        return found

    async def phase(self, scheduler: SchedulerProcess, name: str, label: str) -> dict[str, Any]:
        stop = asyncio.Event()
        pacer = Pacer(self.args.rate, self.args.in_flight)
        streaming = None
        if name != "quiet":
            streaming = asyncio.create_task(pacer.run(self.writer(name), stop))
        await asyncio.sleep(self.args.settle)
        pids = self.pids(scheduler)
        cpu_before = {key: cpu_seconds(pid) for key, pid in pids.items()}
        threads = thread_ids(pids["scheduler"], self.args.py_spy_bin)
        thread_before = {
            name: thread_cpu_seconds(pids["scheduler"], tid) for name, tid in threads.items()
        }
        sent_before = pacer.sent
        spy = None
        if self.args.py_spy:
            spy = subprocess.Popen(
                [self.args.py_spy_bin, "record", "--pid", str(pids["scheduler"]),
                 "--duration", str(int(self.args.window)), "--rate", "100", "--threads",
                 "--idle", "--format", "raw", "--nonblocking",
                 "--output", str(Path(self.args.py_spy) / f"{label}.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        started = time.monotonic()
        await asyncio.sleep(self.args.window)
        ended = time.monotonic()
        cpu = {key: cpu_seconds(pid) - cpu_before[key] for key, pid in pids.items()}
        thread_cpu = {
            name: thread_cpu_seconds(pids["scheduler"], tid) - thread_before[name]
            for name, tid in threads.items()
        }
        sent = pacer.sent - sent_before
        stop.set()
        if streaming is not None:
            await streaming
        if spy is not None:
            await asyncio.to_thread(spy.wait, 60)
        cycles = [
            cycle
            for cycle in logged_cycles(scheduler.log_path)
            if cycle["ended_monotonic"] - cycle["total_ms"] / 1000 >= started
            and cycle["ended_monotonic"] <= ended
        ]
        totals = [cycle["total_ms"] for cycle in cycles]
        parts: dict[str, list[float]] = collections.defaultdict(list)
        for cycle in cycles:
            for part, value in parts_of(cycle["parts"]).items():
                parts[part].append(value)
        wall = ended - started
        result: dict[str, Any] = {
            "phase": label,
            "sessions": len(cycles),
            "median_ms": statistics.median(totals) if totals else 0.0,
            "mean_ms": statistics.fmean(totals) if totals else 0.0,
            "p90_ms": percentile(totals, 0.9) if totals else 0.0,
            "max_ms": max(totals, default=0.0),
            "parts_ms": {part: statistics.fmean(values) for part, values in parts.items()},
            "cpu_share": {key: seconds / wall for key, seconds in cpu.items()},
            # The scheduling thread's CPU per session (what the session itself computed, the
            # machine's load aside) and the I/O thread's share of a core (what it took from
            # the GIL: on an idle machine, time the sessions could not have).
            "session_cpu_ms": (
                thread_cpu["volcano-scheduler"] * 1000 / len(cycles)
                if cycles and "volcano-scheduler" in thread_cpu
                else 0.0
            ),
            "io_cpu_share": thread_cpu.get("volcano-io", 0.0) / wall,
            "writes_per_s": sent / wall,
            "write_errors": pacer.failed,
        }
        return result

    async def run_scheduler(self, source: Path, tag: str, round_index: int) -> list[dict[str, Any]]:
        """One scheduler (from ``source``) through a quiet phase and each stream's."""
        scheduler = SchedulerProcess(self.plane.kubeconfig, self.workdir, [
            f"--scheduler-name={SCHEDULER}", "--schedule-period=1s", "--kube-api-qps=0",
            "-v=4",
        ], label=f"scheduler-{tag}-{round_index}", source=source)  # fmt: skip
        scheduler.start()
        results = []
        try:
            await wait_for("scheduler ready", scheduler.ready, 900)

            async def cycled() -> bool:
                if not scheduler.alive:
                    raise RuntimeError(f"the scheduler exited; see {scheduler.log_path}")
                return len(logged_cycles(scheduler.log_path)) >= 3

            # The first sessions write the backlog's conditions and statuses, and their watch
            # events come back: the first phase starts once the scheduler wrote nothing but
            # Events for 5 s (a quiet phase measured during that catch-up ran its sessions
            # slower).
            await wait_for("three sessions", cycled, 900)
            await wait_for("the scheduler's own writes to end", self.writes_settled(scheduler), 600)
            for name in ("quiet", *self.args.streams):
                label = f"{tag}:{name}-{round_index}"
                result = await self.phase(scheduler, name, label.replace(":", "_"))
                result["phase"] = label
                results.append(result)
                print_phase(result)
        finally:
            scheduler.stop()
        return results

    def writes_settled(self, scheduler: SchedulerProcess) -> Callable[[], Awaitable[bool]]:
        seen: list[float] = []

        async def settled() -> bool:
            counts = await asyncio.to_thread(scheduler.request_counts)
            # Events are recorded again every session (upstream does too): not counted.
            total = sum(
                value
                for (verb, resource), value in counts.items()
                if verb in ("POST", "PUT", "PATCH") and resource != "events"
            )
            seen.append(total)
            # Polled every 0.2 s: unchanged over the last 5 s.
            return len(seen) > 25 and seen[-26] == total

        return settled

    async def measure(self) -> list[dict[str, Any]]:
        await self.api.open()
        try:
            print(f"creating {self.args.nodes} kwok nodes ...", flush=True)
            await self.make_nodes()
            await self.fill()
            results = []
            # Round by round, each tree in turn: the machine's load drifts (2 shared cores).
            for round_index in range(self.args.rounds):
                for tag, source in self.args.sources:
                    results += await self.run_scheduler(source, tag, round_index)
        finally:
            await self.api.close()
        return results


def print_phase(result: dict[str, Any]) -> None:
    parts = ", ".join(f"{part} {value:.0f}" for part, value in result["parts_ms"].items())
    cpu = ", ".join(f"{key} {share:.0%}" for key, share in result["cpu_share"].items())
    print(
        f"{result['phase']:>10}: {result['sessions']} sessions, median {result['median_ms']:.0f}"
        f" ms, mean {result['mean_ms']:.0f}, p90 {result['p90_ms']:.0f}, max"
        f" {result['max_ms']:.0f} ({parts}); session thread CPU {result['session_cpu_ms']:.0f} ms"
        f" a session, I/O thread {result['io_cpu_share']:.0%}; writes"
        f" {result['writes_per_s']:.0f}/s; CPU {cpu}",
        flush=True,
    )


def summarize(results: list[dict[str, Any]]) -> None:
    """Per tree and stream, the median over rounds of the phases' mean session, and the
    slowdown against that tree's quiet phases."""
    by_phase: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for result in results:
        by_phase[result["phase"].rsplit("-", 1)[0]].append(result)
    print("\nper tree and stream (median over rounds of the phase's mean session):")
    for phase, found in by_phase.items():
        tag = phase.split(":", 1)[0]
        quiet = statistics.median(r["mean_ms"] for r in by_phase[f"{tag}:quiet"])
        mean = statistics.median(r["mean_ms"] for r in found)
        median = statistics.median(r["median_ms"] for r in found)
        cpu = statistics.median(r["cpu_share"]["scheduler"] for r in found)
        session_cpu = statistics.median(r["session_cpu_ms"] for r in found)
        io = statistics.median(r["io_cpu_share"] for r in found)
        print(
            f"  {phase:>16}: mean session {mean:.0f} ms ({mean / quiet - 1:+.0%} vs quiet),"
            f" median {median:.0f} ms; session thread CPU {session_cpu:.0f} ms a session,"
            f" I/O thread {io:.0%}, scheduler process {cpu:.0%}"
        )


# ---- py-spy's raw stacks, summarised per thread


def spy_summary(path: Path, top: int = 8) -> str:
    """Per thread: samples, the share idle, and the leaf functions that took most samples
    (idle ones marked): where a thread was when it was not running Python."""
    threads: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        thread = next((f for f in frames if f.startswith("thread ")), "thread ?")
        python = [f for f in frames if not f.startswith(("thread ", "process "))]
        leaf = python[-1] if python else "?"
        # The caller names what the leaf was for (acquire() in snapshot vs in apply_event).
        caller = python[-2] if len(python) > 1 else ""
        threads[thread][f"{leaf} <- {caller}"] += int(count)
    lines = []
    for thread, counter in sorted(threads.items(), key=lambda item: -sum(item[1].values())):
        total = sum(counter.values())
        lines.append(f"  {thread}: {total} samples")
        for where, samples in counter.most_common(top):
            lines.append(f"    {samples / total:6.1%}  {where}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench watch-load",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--running", type=int, default=10_000)
    parser.add_argument("--pending", type=int, default=2_000)
    parser.add_argument("--gang-size", type=int, default=10)
    parser.add_argument("--pending-cpu", default="33", help="CPUs each pending pod asks (33)")
    parser.add_argument("--rate", type=float, default=500.0, help="writes a second (500)")
    parser.add_argument("--in-flight", type=int, default=64, help="writes outstanding (64)")
    parser.add_argument(
        "--streams", default="pods,secrets", help=f"busy phases, of {','.join(STREAMS)}"
    )
    parser.add_argument("--secrets", type=int, default=1000, help="Secrets patched (1000)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured a phase")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds before measuring")
    parser.add_argument("--concurrency", type=int, default=64, help="creates in flight (64)")
    parser.add_argument("--py-spy", metavar="DIR", help="record the scheduler into DIR")
    parser.add_argument(
        "--scheduler-source",
        metavar="[TAG=]DIR",
        action="append",
        help="run the scheduler from this source tree (default: this one), e.g. an export"
        " (`git archive main | tar -x -C DIR`); repeat it to compare trees on one cluster,"
        " in turn each round",
    )
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs)")
    args = parser.parse_args(argv)
    args.streams = [s for s in args.streams.split(",") if s]
    unknown = [s for s in args.streams if s not in STREAMS]
    if unknown:
        parser.error(f"--streams: unknown {', '.join(unknown)}; known: {', '.join(STREAMS)}")
    args.gangs = 0  # Bench's field, unused here
    args.sources = []
    for given in args.scheduler_source or [f"this={REPO_ROOT}"]:
        tag, _, where = given.rpartition("=")
        source = Path(where).resolve()
        if not (source / "volcano_py" / "__init__.py").exists():
            parser.error(f"--scheduler-source {given}: no volcano_py package in {source}")
        args.sources.append((tag or source.name, source))
    # py-spy names the scheduler's threads (their CPU is reported) and, with --py-spy,
    # records them.
    found = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    args.py_spy_bin = found if Path(found).exists() else None
    if args.py_spy:
        if args.py_spy_bin is None:
            parser.error("--py-spy: py-spy not found (pip install py-spy)")
        Path(args.py_spy).mkdir(parents=True, exist_ok=True)
    if bins_missing("bench-watch-load"):
        return 2
    with local_plane("vk8s-watch-load-", args.keep) as (plane, workdir):
        results = asyncio.run(WatchLoad(args, plane, workdir).measure())
    summarize(results)
    if args.py_spy:
        for result in results:
            path = Path(args.py_spy) / f"{result['phase'].replace(':', '_')}.txt"
            if path.exists():
                print(f"\npy-spy, {result['phase']} ({path}):\n{spy_summary(path)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
