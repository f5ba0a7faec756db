"""QueueInfo.from_dict: a Queue's spec as the scheduler reads it (``queue_info.go``, spec §1.2
and §1.10: weight 1, reclaimable unless it says otherwise, under ``root``; its state as written,
none until the queue controller sets Open, and only Open counts as open, spec §4 proportion's
AllocatableFn "false if queue state != Open")."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.queue import QUEUE_CLOSED, QUEUE_OPEN, QueueInfo
from volcano_py.api.types import HIERARCHY_ANNOTATION, HIERARCHY_WEIGHTS_ANNOTATION, ROOT_QUEUE


def queue(name: str = "q1", spec: dict[str, Any] | None = None, **extra: Any) -> QueueInfo:
    obj: dict[str, Any] = {"metadata": {"name": name, **extra.pop("metadata", {})}}
    if spec is not None:
        obj["spec"] = spec
    obj.update(extra)
    return QueueInfo.from_dict(obj)


def test_defaults_of_a_bare_queue():
    info = queue("q1")
    assert (info.uid, info.name) == ("q1", "q1")
    assert info.weight == 1
    assert info.reclaimable_spec is None
    assert info.reclaimable  # unset means reclaimable
    assert info.state == ""
    assert not info.is_open  # the queue controller has not set it Open yet
    assert info.parent == ""
    assert info.parent_name == ROOT_QUEUE
    assert info.capability is None
    assert info.deserved is None
    assert info.guarantee is None
    assert info.priority == 0
    assert info.hierarchy == ""
    assert info.hierarchy_weights == ""
    assert info.allocated_status is None


@pytest.mark.parametrize(
    ("weight", "expected"), [(None, 1), (0, 1), (1, 1), (7, 7), (65535, 65535)]
)
def test_weight(weight: int | None, expected: int):
    # 0 is what an omitted (omitempty) weight reads as; the CRD default is 1.
    assert queue(spec={} if weight is None else {"weight": weight}).weight == expected


@pytest.mark.parametrize(("value", "expected"), [(True, True), (False, False), (None, True)])
def test_reclaimable(value: bool | None, expected: bool):
    spec = {} if value is None else {"reclaimable": value}
    info = queue(spec=spec)
    assert info.reclaimable is expected
    assert info.reclaimable_spec is value


def test_resources_are_read_in_volcano_units():
    info = queue(
        spec={
            "capability": {"cpu": "10", "memory": "20Gi", "nvidia.com/gpu": "4"},
            "deserved": {"cpu": "5"},
            "guarantee": {"resource": {"cpu": "2", "memory": "1Gi"}},
        }
    )
    assert info.capability is not None
    assert info.capability.milli_cpu == 10_000
    assert info.capability.memory == 20 * 1024**3
    assert info.capability.scalar_resources == {"nvidia.com/gpu": 4000}
    assert info.deserved is not None
    assert info.deserved.milli_cpu == 5000
    assert info.guarantee is not None
    assert (info.guarantee.milli_cpu, info.guarantee.memory) == (2000, 1024**3)


def test_empty_resource_lists_mean_unset():
    info = queue(spec={"capability": {}, "guarantee": {}})
    assert info.capability is None
    assert info.guarantee is None


def test_parent_state_priority_and_hierarchy():
    info = queue(
        "child",
        spec={"parent": "eng", "priority": 5},
        status={"state": QUEUE_CLOSED, "allocated": {"cpu": "1"}},
        metadata={
            "annotations": {
                HIERARCHY_ANNOTATION: "root/eng/child",
                HIERARCHY_WEIGHTS_ANNOTATION: "1/2/3",
            },
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
    )
    assert info.parent == "eng"
    assert info.parent_name == "eng"
    assert info.priority == 5
    assert info.state == QUEUE_CLOSED
    assert not info.is_open
    assert info.hierarchy == "root/eng/child"
    assert info.hierarchy_weights == "1/2/3"
    assert info.creation_timestamp == "2024-01-01T00:00:00Z"
    assert info.allocated_status == {"cpu": "1"}


@pytest.mark.parametrize(
    ("state", "is_open"),
    [(QUEUE_OPEN, True), ("Closing", False), ("Unknown", False), ("", False), (None, False)],
)
def test_only_open_is_open(state: str | None, is_open: bool):
    status = {} if state is None else {"state": state}
    assert queue(status=status).is_open is is_open


def test_root_has_no_parent():
    assert queue(ROOT_QUEUE).parent_name == ""


def test_clone_is_a_distinct_object_with_the_same_spec():
    info = queue(spec={"weight": 3, "reclaimable": False})
    copy = info.clone()
    assert copy is not info
    assert copy == info
    copy.weight = 9
    assert info.weight == 3
