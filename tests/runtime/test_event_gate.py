"""The event gate: watch events applied at once between sessions, queued in order while one
runs, and applied by the I/O loop once it ended."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tests.runtime.test_loop import cache_with_gang
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.runtime.conffile import ConfFile
from volcano_py.runtime.event_gate import EventGate
from volcano_py.runtime.loop import SchedulerLoop
from volcano_py.scheduler.registry import PluginRegistry, default_registry

Applied = list[tuple[str, str, str]]


def recorder(applied: Applied, tag: str = "") -> Any:
    def sink(kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        applied.append((tag + kind, event_type, obj["metadata"]["name"]))

    return sink


def obj(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}}


@pytest.fixture
def io_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A real event loop on its own thread, as the scheduler's I/O thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def settle(loop: asyncio.AbstractEventLoop, gate: EventGate) -> None:
    """Wait until the I/O loop has drained the gate."""
    for _ in range(200):
        if not gate.queued:
            break
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0.01), loop).result(5)
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result(5)


def test_between_sessions_an_event_is_applied_at_once() -> None:
    applied: Applied = []
    gate = EventGate()
    gate.wrap(recorder(applied))("Pod", "ADDED", obj("a"))
    assert applied == [("Pod", "ADDED", "a")]
    assert gate.deferred == 0


def test_while_a_session_runs_events_wait_and_are_applied_in_order_after_it(
    io_loop: asyncio.AbstractEventLoop,
) -> None:
    applied: Applied = []
    gate = EventGate()
    gate.loop = io_loop
    pods, nodes = gate.wrap(recorder(applied)), gate.wrap(recorder(applied, "n:"))
    assert gate.hold() == 0
    pods("Pod", "ADDED", obj("a"))
    nodes("Node", "MODIFIED", obj("n1"))
    pods("Pod", "DELETED", obj("a"))
    assert applied == []
    assert gate.queued == 3
    gate.release()
    settle(io_loop, gate)
    assert applied == [("Pod", "ADDED", "a"), ("n:Node", "MODIFIED", "n1"), ("Pod", "DELETED", "a")]
    assert gate.deferred == 3


def test_an_event_behind_a_queue_being_drained_waits_its_turn() -> None:
    """No loop runs here: the queue stays after release(), so a new event goes behind it."""
    applied: Applied = []
    gate = EventGate()
    sink = gate.wrap(recorder(applied))
    gate.hold()
    sink("Pod", "ADDED", obj("a"))
    gate.release()
    sink("Pod", "ADDED", obj("b"))
    assert applied == []
    # The next session applies the leftovers first, in order, before its snapshot.
    assert gate.hold() == 2
    assert applied == [("Pod", "ADDED", "a"), ("Pod", "ADDED", "b")]


def test_a_session_past_the_limit_has_the_backlog_applied_meanwhile(
    io_loop: asyncio.AbstractEventLoop,
) -> None:
    applied: Applied = []
    gate = EventGate(limit=10)
    gate.loop = io_loop
    sink = gate.wrap(recorder(applied))
    gate.hold()
    for index in range(11):
        sink("Pod", "MODIFIED", obj(f"p{index}"))
    asyncio.run_coroutine_threadsafe(asyncio.sleep(0.05), io_loop).result(5)
    # Drained down to half the limit while still held, oldest first.
    assert gate.overflowed == 1
    assert gate.queued <= 5
    assert [name for _, _, name in applied] == [f"p{i}" for i in range(len(applied))]
    gate.release()
    settle(io_loop, gate)
    assert len(applied) == 11


def test_an_event_the_cache_refuses_is_logged_and_the_rest_applied(
    caplog: pytest.LogCaptureFixture,
) -> None:
    applied: Applied = []

    def refusing(kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        raise ValueError("bad object")

    gate = EventGate()
    gate.hold()
    gate.submit(refusing, "Pod", "ADDED", obj("bad"))
    gate.submit(recorder(applied), "Pod", "ADDED", obj("good"))
    gate.release()
    with caplog.at_level(logging.ERROR):
        assert gate.hold() == 2
    assert applied == [("Pod", "ADDED", "good")]
    assert "Pod ADDED /bad: not applied to the cache" in caplog.text


def test_the_loop_holds_the_gate_for_the_session_only() -> None:
    """Events that come while the session runs (here: from the binder, on the scheduling
    thread) wait; the session itself saw everything submitted before it."""
    applied: Applied = []
    gate = EventGate()
    sink = gate.wrap(recorder(applied))

    class BindAndWatch(RecordingBinder):
        def bind(self, task: Any, node_name: str) -> None:
            super().bind(task, node_name)
            assert gate.holding
            sink("Pod", "MODIFIED", obj(task.name))

    binder = BindAndWatch()
    cache = cache_with_gang(binder)
    gate.hold()
    sink("Node", "MODIFIED", obj("n0"))
    gate.release()  # no I/O loop: left queued for the next session to apply first
    loop = SchedulerLoop(
        cache, ConfFile(None, PluginRegistry()), default_registry(), 1.0, gate=gate
    )
    assert loop.run_once() is not None
    assert sorted(binder.binds) == ["ns/p0", "ns/p1"]
    assert not gate.holding
    assert applied == [("Node", "MODIFIED", "n0")]
    assert gate.queued == 2
