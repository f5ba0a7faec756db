"""proportion's ``allocatable`` in plain floats (the queue open) answers what
``queue_allocatable`` answers, for allocated amounts at, under and over ``deserved``, zero and
negative requests, and scalars on either side, missing on either side, and ``pods``, which
the quota ignores (issue 14: asked for every task allocate places)."""

from __future__ import annotations

import random

import pytest

from tests.builders import build_pod
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.framework.arguments import Arguments
from volcano_py.plugins import proportion
from volcano_py.plugins.proportion import ProportionPlugin, QueueAttributes


def _amount(rng: random.Random, base: float) -> float:
    return rng.choice((0.0, -0.0, base, base + 1.0, base - 1.0, base * rng.random(), 1e-9))


def _case(rng: random.Random) -> tuple[Resource, Resource, Resource]:
    deserved = Resource(milli_cpu=_amount(rng, 4000.0), memory=_amount(rng, 2.0**33))
    allocated = Resource(milli_cpu=_amount(rng, 3000.0), memory=_amount(rng, 2.0**32))
    if rng.random() < 0.3:
        deserved.scalar_resources["nvidia.com/gpu"] = 4000.0
    if rng.random() < 0.3:
        allocated.scalar_resources["nvidia.com/gpu"] = _amount(rng, 4000.0)
    if rng.random() < 0.3:
        allocated.scalar_resources["pods"] = _amount(rng, 10.0)
    request = Resource(milli_cpu=_amount(rng, 1000.0), memory=_amount(rng, 2.0**30))
    if rng.random() < 0.4:
        request.scalar_resources["pods"] = 1.0
    if rng.random() < 0.3:
        request.scalar_resources["nvidia.com/gpu"] = _amount(rng, 1000.0)
    return deserved, allocated, request


@pytest.mark.parametrize("seed", range(8))
def test_plain_allocatable_answers_as_queue_allocatable(seed: int) -> None:
    rng = random.Random(seed)
    plugin = ProportionPlugin(Arguments())
    pod = build_pod("ns", "p", "", "Pending", {"cpu": "1", "memory": "1Gi"}, "g")
    answers = set()
    for _ in range(300):
        deserved, allocated, request = _case(rng)
        queue = QueueInfo(uid="q", name="q", state=rng.choice(("Open", "Open", "Closed")))
        plugin.queue_attributes = (
            {"q": QueueAttributes("q", 1, deserved=deserved, allocated=allocated)}
            if rng.random() < 0.9
            else {}
        )
        task = TaskInfo.from_pod(pod, request)
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setattr(proportion, "_PLAIN_ALLOCATABLE", False)
            expected = plugin.allocatable(queue, task)
        assert plugin.allocatable(queue, task) == expected
        answers.add(expected)
        assert plugin.queue_attributes.get("q") is None or (
            plugin.queue_attributes["q"].allocated == allocated
        )
    assert answers == {True, False}

