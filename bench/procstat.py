"""What a running process uses, read from Linux's /proc: CPU seconds and resident memory.
Shared by the benches that run the live processes (side-by-side, restart, controller-rate)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (``/proc/<pid>/stat`` utime and stime)."""
    # The command name in parentheses may hold spaces: split after its closing one.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_mib(pid: int) -> dict[str, float]:
    """``rss_mib`` (VmRSS) and ``peak_rss_mib`` (VmHWM) of ``pid``."""
    names = {"VmRSS": "rss_mib", "VmHWM": "peak_rss_mib"}
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in names:
            found[names[key]] = int(value.split()[0]) / 1024
    return found


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) clock ticks of every CPU since boot, from ``/proc/stat``'s first line;
    idle and iowait count as not busy."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (guest is in user)
    return total - fields[3] - fields[4], total


@dataclass
class CpuSample:
    at: float
    busy: int
    total: int
    processes: dict[str, float]


@dataclass
class CpuSampler:
    """Samples the machine's CPU and each named process's CPU seconds every ``period`` s, so
    that a phase known only afterwards (first to last bind) can be looked up: how much of the
    machine was busy, and which process used how many cores."""

    pids: dict[str, int]
    period: float = 0.5
    samples: list[CpuSample] = field(default_factory=list)

    def sample(self) -> None:
        busy, total = machine_jiffies()
        used = {}
        for name, pid in self.pids.items():
            with contextlib.suppress(OSError):
                used[name] = cpu_seconds(pid)
        self.samples.append(CpuSample(time.monotonic(), busy, total, used))

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.sample()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.period)
        self.sample()

    def between(self, start: float, end: float) -> dict[str, float]:
        """Over the samples nearest to [start, end]: ``machine_busy`` (0..1 of every core),
        ``cores`` (the machine's count) and, for each process, the cores it used; empty when
        there are no samples to tell."""
        if not self.samples:
            return {}
        first = min(self.samples, key=lambda sample: abs(sample.at - start))
        last = min(self.samples, key=lambda sample: abs(sample.at - end))
        wall = last.at - first.at
        if wall <= 0 or last.total <= first.total:
            return {}
        result = {
            "machine_busy": (last.busy - first.busy) / (last.total - first.total),
            "cores": float(os.cpu_count() or 1),
        }
        for name in self.pids:
            if name in first.processes and name in last.processes:
                result[f"{name}_cores"] = (last.processes[name] - first.processes[name]) / wall
        return result


def describe(usage: dict[str, float]) -> str:
    """``usage`` (``CpuSampler.between``) as one line."""
    if not usage:
        return "no CPU samples"
    used = {name.removesuffix("_cores"): value for name, value in usage.items() if name != "cores"}
    busy = used.pop("machine_busy")
    # What the named processes do not account for: other work on the machine.
    used["others"] = max(0.0, busy * usage["cores"] - sum(used.values()))
    shown = ", ".join(f"{name} {value:.2f}" for name, value in used.items())
    return f"machine {busy:.0%} busy of {usage['cores']:.0f} cores; cores used: {shown}"
