"""proportion's queue share and drf's job share are computed when next read after a placement
or an eviction moved them, not at every event (issue 14, "Session": a gang of 100 moved each
100 times for the few reads of the queue and job orders). Every read must see what computing
at every event gives (``proportion._LAZY_SHARE`` / ``drf._LAZY_SHARE`` False, the reference):
random event and read sequences compare the values read, bit for bit; whole sessions with
drf's hierarchy on (whose tree reads the leaves' shares) compare every output."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import outputs
from volcano_py.api.resource import Resource
from volcano_py.plugins import drf, proportion
from volcano_py.plugins.drf import DrfAttr, DrfPlugin
from volcano_py.plugins.proportion import QueueAttributes

requests = st.tuples(
    st.sampled_from([0.0, 100.0, 333.0, 1000.0, 0.5]),
    st.sampled_from([0.0, 2.0**20, 2.0**30, 3.5]),
)
events = st.lists(
    st.tuples(st.sampled_from(["add", "sub", "read", "read"]), requests, st.integers(0, 2)),
    max_size=40,
)


def _resource(cpu: float, memory: float) -> Resource:
    return Resource(milli_cpu=cpu, memory=memory)


def _proportion_reads(plan: list[tuple[str, tuple[float, float], int]], lazy: bool) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(proportion, "_LAZY_SHARE", lazy)
        attrs = [QueueAttributes(f"q{i}", 1) for i in range(3)]
        for i, attr in enumerate(attrs):
            attr.deserved = _resource(4000.0 * (i + 1), 2.0**33)
            attr.update_share()
        reads = []
        for what, (cpu, memory), pick in plan:
            attr = attrs[pick]
            if what == "add":
                attr.allocated.add(_resource(cpu, memory))
                attr.share_outdated()
            elif what == "sub":
                attr.allocated.sub_without_assert(_resource(cpu, memory))
                attr.share_outdated()
            else:
                reads.append((pick, attr.share.hex(), attr.clone().share.hex()))
        reads.append([attr.share.hex() for attr in attrs])
    return reads


def _drf_reads(plan: list[tuple[str, tuple[float, float], int]], lazy: bool) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(drf, "_LAZY_SHARE", lazy)
        plugin = DrfPlugin.__new__(DrfPlugin)
        plugin.total_resource = _resource(16000.0, 2.0**35)
        attrs = [DrfAttr() for _ in range(3)]
        reads = []
        for what, (cpu, memory), pick in plan:
            attr = attrs[pick]
            if what == "add":
                attr.allocated.add(_resource(cpu, memory))
                plugin.share_outdated(attr)
            elif what == "sub":
                attr.allocated.sub_without_assert(_resource(cpu, memory))
                plugin.share_outdated(attr)
            elif pick == 2:
                # The cluster total is replaced (session close): an outdated share is still
                # the one against the total of its events.
                plugin.total_resource = Resource()
            else:
                reads.append((pick, attr.share.hex(), attr.dominant_resource, str(attr)))
        reads.append([(attr.share.hex(), attr.dominant_resource) for attr in attrs])
    return reads


@settings(max_examples=300, deadline=None)
@given(events)
def test_proportion_reads_the_share_of_every_event(
    plan: list[tuple[str, tuple[float, float], int]],
) -> None:
    assert _proportion_reads(plan, lazy=True) == _proportion_reads(plan, lazy=False)


@settings(max_examples=300, deadline=None)
@given(events)
def test_drf_reads_the_share_of_every_event(
    plan: list[tuple[str, tuple[float, float], int]],
) -> None:
    assert _drf_reads(plan, lazy=True) == _drf_reads(plan, lazy=False)


@pytest.mark.parametrize("seed", range(2, 60, 6))
def test_sessions_with_drf_hierarchy_hand_out_the_same(seed: int) -> None:
    lazy = outputs.outputs(seed, drf_hierarchy=True)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(proportion, "_LAZY_SHARE", False)
        monkeypatch.setattr(drf, "_LAZY_SHARE", False)
        assert outputs.outputs(seed, drf_hierarchy=True) == lazy
