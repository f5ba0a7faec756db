"""The scheduling loop over an offline cache: one session per period only while allowed,
Volcano's latency metrics per cycle, a failing cycle logged and survived."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from volcano_py import metrics
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.runtime.conffile import ConfFile
from volcano_py.runtime.loop import SchedulerLoop, TimedPlugin
from volcano_py.scheduler.registry import PluginRegistry, default_registry


def node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}  # fmt: skip


def pod(name: str, group: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                     "annotations": {"scheduling.k8s.io/group-name": group}},
        "spec": {"schedulerName": "volcano",
                 "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Pending"},
    }  # fmt: skip


def cache_with_gang(binder: RecordingBinder) -> SchedulerCache:
    cache = SchedulerCache(binder=binder)
    cache.apply_event("Node", "ADDED", node("n1"))
    for queue in ("root", "default"):
        # Open, as the queue controller leaves it (proportion allocates in Open queues only).
        cache.apply_event(
            "Queue",
            "ADDED",
            {"metadata": {"name": queue}, "spec": {"weight": 1}, "status": {"state": "Open"}},
        )
    cache.apply_event(
        "PodGroup",
        "ADDED",
        {
            "metadata": {"name": "g", "namespace": "ns"},
            "spec": {"minMember": 2, "queue": "default"},
        },
    )
    for name in ("p0", "p1"):
        cache.apply_event("Pod", "ADDED", pod(name, "g"))
    return cache


def count(histogram: Any, **labels: str) -> float:
    target = histogram.labels(**labels) if labels else histogram
    return float(sum(s.value for s in target.collect()[0].samples if s.name.endswith("_count")))


def test_a_cycle_binds_and_records_volcano_metrics() -> None:
    binder = RecordingBinder()
    loop = SchedulerLoop(
        cache_with_gang(binder), ConfFile(None, PluginRegistry()), default_registry(), 1.0
    )
    before = (
        count(metrics.E2E_SCHEDULING_LATENCY),
        count(metrics.ACTION_SCHEDULING_LATENCY, action="allocate"),
        count(metrics.PLUGIN_SCHEDULING_LATENCY, plugin="gang", OnSession="OnSessionOpen"),
    )
    timings = loop.run_once()
    assert timings is not None and set(timings.actions) == {"enqueue", "allocate", "backfill"}
    assert sorted(binder.binds) == ["ns/p0", "ns/p1"]
    after = (
        count(metrics.E2E_SCHEDULING_LATENCY),
        count(metrics.ACTION_SCHEDULING_LATENCY, action="allocate"),
        count(metrics.PLUGIN_SCHEDULING_LATENCY, plugin="gang", OnSession="OnSessionOpen"),
    )
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 1, 1]
    assert loop.cycles == 1 and loop.healthy()


def test_runs_only_while_allowed_and_stops() -> None:
    allowed = threading.Event()
    loop = SchedulerLoop(
        cache_with_gang(RecordingBinder()),
        ConfFile(None, PluginRegistry()),
        default_registry(),
        0.01,
        may_schedule=allowed.is_set,
    )
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,))
    thread.start()
    time.sleep(0.1)
    assert loop.cycles == 0
    allowed.set()
    deadline = time.monotonic() + 5
    while loop.cycles < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    thread.join(5)
    assert not thread.is_alive() and loop.cycles >= 3


def test_the_first_session_starts_soon_after_it_may_not_a_period_later() -> None:
    """Upstream runs its first session right after the cache syncs; a loop with a long period
    that was waiting for the sync (or the lease) must not sleep a whole period first."""
    allowed = threading.Event()
    loop = SchedulerLoop(
        cache_with_gang(RecordingBinder()),
        ConfFile(None, PluginRegistry()),
        default_registry(),
        60.0,
        may_schedule=allowed.is_set,
    )
    stop = threading.Event()
    thread = threading.Thread(target=loop.run, args=(stop,))
    thread.start()
    try:
        time.sleep(0.1)
        assert loop.cycles == 0
        allowed.set()
        deadline = time.monotonic() + 10
        while loop.cycles < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert loop.cycles == 1
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()


def test_a_failing_cycle_is_logged_and_survived(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        name = "broken"

        def on_session_open(self, ssn: Any) -> None:
            raise RuntimeError("boom")

        def on_session_close(self, ssn: Any) -> None:
            return None

    conf_path = tmp_path / "c.conf"
    conf_path.write_text('actions: "allocate"\ntiers:\n- plugins:\n  - name: broken\n')
    registry = PluginRegistry({"broken": lambda arguments: Broken()})
    loop = SchedulerLoop(SchedulerCache(), ConfFile(str(conf_path), registry), registry, 1.0)
    assert loop.run_once() is None
    assert loop.failures == 1 and "scheduling cycle 1 failed" in caplog.text


def test_timed_plugin_delegates_attributes() -> None:
    class Inner:
        name = "drf"
        queue_attributes: ClassVar[dict[str, int]] = {"q": 1}

        def on_session_open(self, ssn: Any) -> None:
            return None

        def on_session_close(self, ssn: Any) -> None:
            return None

    timed = TimedPlugin(Inner())
    assert timed.name == "drf" and timed.queue_attributes == {"q": 1}


def test_health_goes_stale_without_ticks() -> None:
    loop = SchedulerLoop(SchedulerCache(), ConfFile(None, PluginRegistry()), {}, 1.0)
    assert loop.healthy()
    assert not loop.healthy(now=loop.last_tick + 61)
    loop.cycle_started = loop.last_tick + 60  # a long cycle in progress is not a stall
    assert loop.healthy(now=loop.last_tick + 70)
