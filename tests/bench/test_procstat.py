"""The CPU sampler the live benches use to say who used the machine in a phase."""

from __future__ import annotations

import asyncio
import os
import time

from bench.procstat import CpuSample, CpuSampler, describe, machine_jiffies


def test_machine_jiffies_counts_busy_within_total() -> None:
    busy, total = machine_jiffies()
    assert 0 <= busy <= total


def test_between_reads_the_samples_nearest_the_phase() -> None:
    sampler = CpuSampler({"server": 1, "client": 2})
    sampler.samples = [
        CpuSample(10.0, 100, 1000, {"server": 1.0, "client": 0.5}),
        CpuSample(11.0, 250, 1200, {"server": 2.5, "client": 0.7}),
        CpuSample(12.0, 400, 1400, {"server": 4.0, "client": 0.9}),
    ]
    usage = sampler.between(10.1, 11.9)  # nearest: the first and the last sample
    assert usage["machine_busy"] == 300 / 400
    assert usage["server_cores"] == 1.5
    assert abs(usage["client_cores"] - 0.2) < 1e-9
    assert "server 1.50, client 0.20, others" in describe(usage)
    assert sampler.between(10.0, 10.2) == {}  # one sample: no phase to speak of


def test_run_samples_this_process_until_stopped() -> None:
    sampler = CpuSampler({"me": os.getpid()}, period=0.01)

    async def spin() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(sampler.run(stop))
        deadline = time.monotonic() + 0.1
        while time.monotonic() < deadline:
            await asyncio.sleep(0)
        stop.set()
        await task

    asyncio.run(spin())
    assert len(sampler.samples) >= 3
    assert sampler.between(sampler.samples[0].at, sampler.samples[-1].at)["me_cores"] > 0


def test_between_without_samples_tells_nothing() -> None:
    assert CpuSampler({"me": os.getpid()}).between(0.0, 1.0) == {}
    assert describe({}) == "no CPU samples"
