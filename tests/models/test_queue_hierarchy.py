"""Queue admission checks against the queue tree (``models.queue_hierarchy``).

Cases transcribed from upstream ``pkg/webhooks/admission/queues/validate/validate_queue_test.go``
(``TestAdmitQueues`` resource cases, ``TestAdmitHierarchicalQueues`` create/update cases,
``TestValidateQueueDepthDynamic``, ``TestValidateChildAgainstAncestorForCapability``,
``TestValidateChildrenConstraintsForCapability``). Upstream stops at the first problem; ours
lists them all, so each case checks that the problem upstream reports is among ours (and, for
accepted queues, that there is none). Deletion cases belong to the queue controller, not here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from volcano_py.models.queue_hierarchy import validate_queue_hierarchy


def make_queue(
    name: str,
    parent: str | None = None,
    *,
    capability: Mapping[str, str] | None = None,
    deserved: Mapping[str, str] | None = None,
    guarantee: Mapping[str, str] | None = None,
    weight: Any = 1,
    allocated_pods: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if weight is not None:
        spec["weight"] = weight
    if parent is not None:
        spec["parent"] = parent
    if capability:
        spec["capability"] = dict(capability)
    if deserved:
        spec["deserved"] = dict(deserved)
    if guarantee:
        spec["guarantee"] = {"resource": dict(guarantee)}
    status: dict[str, Any] = {}
    if allocated_pods is not None:
        status["allocated"] = {"pods": allocated_pods}
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
        "status": status,
    }


def cpu_mem(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def cluster(*queues: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {queue["metadata"]["name"]: queue for queue in queues}


def problems(queue: dict[str, Any], queues: Iterable[dict[str, Any]] = (), **kw: Any) -> list[str]:
    return validate_queue_hierarchy(queue, cluster(*queues), **kw)


def assert_problem(found: list[str], *fragments: str) -> None:
    assert any(all(f in line for f in fragments) for line in found), found


# ------------------------------------------------------------------ TestAdmitQueues (resources)


def test_create_queue_without_resource() -> None:
    assert problems(make_queue("default")) == []


def test_create_queue_with_deserved_resource() -> None:
    assert problems(make_queue("default", deserved=cpu_mem("1", "1Gi"))) == []


def test_create_queue_with_guarantee_but_no_deserved_should_be_rejected() -> None:
    found = problems(make_queue("default", guarantee={"cpu": "1"}))
    assert_problem(found, "Queue default", "spec.deserved.cpu", "not set", "guarantee")


def test_create_queue_with_capability_less_deserved() -> None:
    queue = make_queue("default", capability=cpu_mem("1", "1Gi"), deserved=cpu_mem("2", "1Gi"))
    found = problems(queue)
    assert found == [
        "Queue default: spec.deserved.cpu: 2 is greater than spec.capability.cpu 1;"
        " deserved must be <= capability"
    ]


def test_create_queue_with_deserved_less_guarantee() -> None:
    queue = make_queue("default", deserved=cpu_mem("2", "1Gi"), guarantee=cpu_mem("2", "3Gi"))
    found = problems(queue)
    assert found == [
        "Queue default: spec.deserved.memory: 1Gi is less than spec.guarantee.resource.memory"
        " 3Gi; deserved must be >= guarantee"
    ]


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("spec.capability.cpu", {"capability": {"cpu": "-10"}}),
        ("spec.deserved.cpu", {"deserved": {"cpu": "-5"}}),
        ("spec.guarantee.resource.cpu", {"guarantee": {"cpu": "-2"}}),
    ],
    ids=["negative capability", "negative deserved", "negative guarantee"],
)
def test_queue_with_negative_resource_should_be_rejected(field: str, kwargs: Any) -> None:
    """TestAdmitHierarchicalQueues: "Queue with negative capability/deserved/guarantee should
    be rejected"."""
    found = problems(make_queue("queue-negative", "root", **kwargs))
    assert_problem(found, "Queue queue-negative", field, "greater than or equal to 0")


def test_malformed_and_fractional_quantities() -> None:
    queue = make_queue("q", capability={"cpu": "lots", "nvidia.com/gpu": "0.5", "pods": "1.5"})
    found = problems(queue)
    assert_problem(found, "spec.capability.cpu", "'lots' is not a valid quantity")
    assert_problem(found, "spec.capability.nvidia.com/gpu", "must be an integer")
    assert_problem(found, "spec.capability.pods", "must be an integer")
    # cpu and hugepages may be fractional.
    assert problems(make_queue("q", capability={"cpu": "0.5", "hugepages-2Mi": "1.5Mi"})) == []


@pytest.mark.parametrize("weight", [0, 65536, -1, "3", 1.5])
def test_weight_out_of_range(weight: Any) -> None:
    found = problems(make_queue("q", weight=weight))
    assert_problem(found, "Queue q: spec.weight")


@pytest.mark.parametrize("weight", [1, 65535, None])
def test_weight_in_range(weight: Any) -> None:
    assert problems(make_queue("q", weight=weight)) == []


# ------------------------------------------------------------------ TestAdmitHierarchicalQueues

QUEUE_WITH_JOBS = make_queue("queue-with-jobs", "root", allocated_pods="1")
QUEUE_WITHOUT_JOBS = make_queue("queue-without-jobs", "root", allocated_pods="0")
PARENT_WITH_CHILD_WITH_JOBS = make_queue(
    "parent-queue-has-child-with-jobs", "root", allocated_pods="1"
)
CHILD_A_WITH_JOBS = make_queue(
    "child-queue-a-with-jobs", "parent-queue-has-child-with-jobs", allocated_pods="1"
)
PARENT_RESOURCE_TEST = make_queue(
    "parent-queue-resource-test",
    "root",
    capability=cpu_mem("10", "20Gi"),
    guarantee=cpu_mem("8", "16Gi"),
)
SIBLING_RESOURCE_TEST = make_queue(
    "sibling-queue-resource-test",
    "parent-queue-resource-test",
    capability=cpu_mem("3", "6Gi"),
    guarantee=cpu_mem("2", "4Gi"),
)
PARENT_TO_UPDATE = make_queue(
    "parent-queue-to-update",
    "root",
    capability=cpu_mem("20", "40Gi"),
    guarantee=cpu_mem("15", "30Gi"),
)
CHILD_QUEUE_A = make_queue(
    "child-queue-a",
    "parent-queue-to-update",
    capability=cpu_mem("12", "24Gi"),
    guarantee=cpu_mem("8", "16Gi"),
)
CHILD_QUEUE_B_FOR_UPDATE = make_queue(
    "child-queue-b-for-update",
    "parent-queue-to-update",
    capability=cpu_mem("8", "16Gi"),
    guarantee=cpu_mem("5", "10Gi"),
)
PARENT_EMPTY_PARENT = make_queue(
    "parent-queue-empty-parent", "", capability=cpu_mem("100", "100Gi")
)
CHILD_OF_EMPTY_PARENT = make_queue(
    "child-of-empty-parent", "parent-queue-empty-parent", capability=cpu_mem("50", "50Gi")
)
HIERARCHY_CLUSTER = [
    QUEUE_WITH_JOBS,
    QUEUE_WITHOUT_JOBS,
    make_queue("child-queue", "queue-with-child-queues"),
    make_queue("queue-with-child-queues", "root"),
    PARENT_WITH_CHILD_WITH_JOBS,
    CHILD_A_WITH_JOBS,
    make_queue("queue-without-child-queues", "root"),
    PARENT_RESOURCE_TEST,
    SIBLING_RESOURCE_TEST,
    make_queue("parent-queue-small-capability", "root", capability=cpu_mem("5", "10Gi")),
    make_queue(
        "child-queue-larger-capability",
        "parent-queue-small-capability",
        capability=cpu_mem("10", "20Gi"),
    ),
    PARENT_TO_UPDATE,
    CHILD_QUEUE_A,
    CHILD_QUEUE_B_FOR_UPDATE,
    PARENT_EMPTY_PARENT,
    CHILD_OF_EMPTY_PARENT,
]


def test_queue_cannot_use_itself_as_parent() -> None:
    queue = make_queue("self-referencing-queue", "self-referencing-queue")
    found = problems(queue, HIERARCHY_CLUSTER)
    assert found == ["Queue self-referencing-queue: spec.parent: a queue cannot be its own parent"]


def test_parent_queue_has_jobs() -> None:
    found = problems(make_queue("parent-queue-with-jobs", "queue-with-jobs"), HIERARCHY_CLUSTER)
    assert_problem(
        found, "Queue parent-queue-with-jobs: spec.parent", "queue-with-jobs", "1 allocated pods"
    )


def test_parent_queue_has_no_jobs() -> None:
    queue = make_queue("parent-queue-without-jobs", "queue-without-jobs")
    assert problems(queue, HIERARCHY_CLUSTER) == []


def test_parent_queue_has_child_with_jobs() -> None:
    """A parent that already has children may run pods only through them: adding a sibling is
    fine even though the parent's allocated counts its children's pods."""
    queue = make_queue("child-queue-b", "parent-queue-has-child-with-jobs")
    assert problems(queue, HIERARCHY_CLUSTER) == []


def test_child_capability_exceeds_parent_capability() -> None:
    queue = make_queue(
        "child-capability-exceeds-parent",
        "parent-queue-resource-test",
        capability=cpu_mem("20", "40Gi"),
    )
    found = problems(queue, HIERARCHY_CLUSTER)
    assert (
        "Queue child-capability-exceeds-parent: spec.capability.cpu: 20 exceeds 10, the"
        " capability of ancestor queue parent-queue-resource-test"
    ) in found
    assert_problem(found, "spec.capability.memory", "40Gi exceeds 20Gi")


def test_siblings_guarantee_sum_exceeds_parent_guarantee() -> None:
    queue = make_queue(
        "siblings-guarantee-exceeds",
        "parent-queue-resource-test",
        capability=cpu_mem("7", "14Gi"),
        deserved=cpu_mem("7", "14Gi"),
        guarantee=cpu_mem("7", "14Gi"),
    )
    found = problems(queue, HIERARCHY_CLUSTER)
    assert (
        "Queue siblings-guarantee-exceeds: spec.guarantee.resource: the sum of the sibling"
        " queues' guarantee (cpu 9, memory 18Gi) exceeds the guarantee of parent queue"
        " parent-queue-resource-test (cpu 8, memory 16Gi)"
    ) in found


def test_parent_capability_less_than_child_capability_on_update() -> None:
    updated = make_queue(
        "parent-queue-to-update",
        "root",
        capability=cpu_mem("10", "20Gi"),
        deserved=cpu_mem("10", "20Gi"),
        guarantee=cpu_mem("8", "16Gi"),
    )
    found = problems(updated, HIERARCHY_CLUSTER)
    assert (
        "Queue parent-queue-to-update: spec.capability.cpu: 10 is smaller than 12, the largest"
        " capability among its descendants"
    ) in found


def test_sum_of_childrens_guarantee_exceeds_parent_guarantee_on_update() -> None:
    updated = make_queue(
        "parent-queue-to-update",
        "root",
        capability=cpu_mem("20", "40Gi"),
        deserved=cpu_mem("20", "40Gi"),
        guarantee=cpu_mem("10", "20Gi"),
    )
    found = problems(updated, HIERARCHY_CLUSTER)
    assert found == [
        "Queue parent-queue-to-update: spec.guarantee.resource: the sum of its children's"
        " guarantee (cpu 13, memory 26Gi) exceeds the guarantee of queue parent-queue-to-update"
        " (cpu 10, memory 20Gi)"
    ]


def test_update_queue_with_empty_parent_should_validate_child_constraints() -> None:
    updated = make_queue("parent-queue-empty-parent", "", capability=cpu_mem("30", "30Gi"))
    found = problems(updated, HIERARCHY_CLUSTER)
    assert_problem(found, "spec.capability.cpu: 30 is smaller than 50")


def test_parent_must_exist_except_root() -> None:
    found = problems(make_queue("orphan", "missing"), HIERARCHY_CLUSTER)
    assert found == ["Queue orphan: spec.parent: parent queue missing not found"]
    # "root" need not exist as an object: it is the implicit top of the tree.
    assert problems(make_queue("top", "root")) == []


def test_parent_cycle_is_rejected() -> None:
    existing = [make_queue("a", "b"), make_queue("b", "c"), make_queue("c", "root")]
    found = problems(make_queue("c", "a"), existing)
    assert_problem(found, "Queue c: spec.parent", "cycle", "c -> a -> b -> c")


def test_root_skips_hierarchy_checks() -> None:
    """Upstream never validates root's place in the tree (it has none) nor its resources
    against its children."""
    children = [make_queue("big", "root", capability={"cpu": "100"})]
    assert problems(make_queue("root", None, capability={"cpu": "1"}), children) == []


# ------------------------------------------------------------------ TestValidateQueueDepthDynamic

DEPTH_CHAIN = [make_queue("q1", "root"), make_queue("q2", "q1")]


@pytest.mark.parametrize(
    ("max_depth", "rejected"),
    [(5, False), (3, False), (2, True)],
    ids=[
        "Depth 3 is allowed when maxDepth is 5",
        "Depth 3 is allowed when maxDepth is 3",
        "Depth 3 is rejected when maxDepth is 2",
    ],
)
def test_validate_queue_depth_dynamic(max_depth: int, rejected: bool) -> None:
    found = problems(make_queue("q3", "q2"), DEPTH_CHAIN, max_depth=max_depth)
    if rejected:
        assert_problem(found, "Queue q3: spec.parent", "3 levels below root", "maximum depth 2")
    else:
        assert found == []


# ---------------------------------------------------- TestValidateChildAgainstAncestorForCapability

ANCESTORS = [
    make_queue(
        "ancestor-gp",
        "root",
        capability={"cpu": "100", "memory": "100Gi", "nvidia.com/gpu": "8"},
    ),
    make_queue("ancestor-p", "ancestor-gp", capability=cpu_mem("50", "50Gi")),
    make_queue("ancestor-p-nocap", "ancestor-gp"),
]


@pytest.mark.parametrize(
    ("name", "parent", "capability", "expect"),
    [
        ("child-exceed-cpu", "ancestor-p", {"cpu": "60"}, "exceeds 50, the capability of"),
        ("child-exceed-mem", "ancestor-p", {"memory": "55Gi"}, "exceeds 50Gi"),
        ("child-exceed-gpu", "ancestor-p", {"nvidia.com/gpu": "10"}, "ancestor queue ancestor-gp"),
        (
            "child-within-limits",
            "ancestor-p",
            {"cpu": "40", "memory": "40Gi", "nvidia.com/gpu": "4"},
            None,
        ),
        ("child-no-cap", "ancestor-p", None, None),
        ("child-under-nocap", "ancestor-p-nocap", {"cpu": "200"}, "exceeds 100"),
        ("child-under-nocap-ok", "ancestor-p-nocap", {"cpu": "80"}, None),
    ],
    ids=[
        "Child CPU exceeds direct parent capability",
        "Child memory exceeds grandparent capability (skips parent with lower limit)",
        "Child GPU exceeds grandparent capability (parent has no GPU)",
        "Child within all ancestor limits",
        "Child without capability should pass",
        "Child under parent without capability - checks grandparent",
        "Child under parent without capability - within grandparent limits",
    ],
)
def test_validate_child_against_ancestor_for_capability(
    name: str, parent: str, capability: dict[str, str] | None, expect: str | None
) -> None:
    found = problems(make_queue(name, parent, capability=capability), ANCESTORS)
    if expect is None:
        assert found == []
    else:
        assert_problem(found, f"Queue {name}: spec.capability.", expect)


# ---------------------------------------------------- TestValidateChildrenConstraintsForCapability

PARENT_A = make_queue(
    "vc-parent-a",
    "root",
    capability={"cpu": "20", "memory": "20Gi", "nvidia.com/gpu": "4"},
    guarantee=cpu_mem("20", "20Gi"),
    deserved=cpu_mem("20", "20Gi"),
)
CHILD_A1 = make_queue("vc-child-a1", "vc-parent-a", capability={"memory": "15Gi"})
GRANDCHILD_A11 = make_queue("vc-grandchild-a1-1", "vc-child-a1", capability={"cpu": "25"})
CHILD_A2 = make_queue(
    "vc-child-a2",
    "vc-parent-a",
    capability={"cpu": "10", "memory": "10Gi", "nvidia.com/gpu": "3"},
)
PARENT_B = make_queue(
    "vc-parent-b",
    "root",
    capability=cpu_mem("50", "50Gi"),
    guarantee=cpu_mem("50", "50Gi"),
    deserved=cpu_mem("50", "50Gi"),
)
CHILD_B1 = make_queue("vc-child-b1", "vc-parent-b", capability={"cpu": "30"})
CHILD_B2 = make_queue("vc-child-b2", "vc-parent-b", capability={"cpu": "20"})
PARENT_C = make_queue("vc-parent-c", "root")
CHILD_C1 = make_queue("vc-child-c1", "vc-parent-c", capability={"cpu": "100"})


@pytest.mark.parametrize(
    ("parent", "tree", "expect"),
    [
        (PARENT_A, [CHILD_A1, GRANDCHILD_A11, CHILD_A2], "cpu: 20 is smaller than 25"),
        (PARENT_B, [CHILD_B1, CHILD_B2], None),
        (PARENT_C, [CHILD_C1], None),
        (PARENT_B, [], None),
        (
            PARENT_A,
            [make_queue("child-gpu-ok", "vc-parent-a", capability={"nvidia.com/gpu": "3"})],
            None,
        ),
        (
            PARENT_A,
            [make_queue("child-gpu-exceed", "vc-parent-a", capability={"nvidia.com/gpu": "5"})],
            "nvidia.com/gpu: 4 is smaller than 5",
        ),
    ],
    ids=[
        "Grandchild CPU exceeds parent capability via subtree (child has no CPU cap)",
        "All children within parent capability",
        "Parent without capability skips capability check",
        "Parent with no children",
        "Child GPU capability within parent GPU limit",
        "Child GPU capability exceeds parent GPU limit via subtree",
    ],
)
def test_validate_children_constraints_for_capability(
    parent: dict[str, Any], tree: list[dict[str, Any]], expect: str | None
) -> None:
    found = problems(parent, tree)
    if expect is None:
        assert found == []
    else:
        name = parent["metadata"]["name"]
        assert_problem(found, f"Queue {name}: spec.capability.{expect}")


# ------------------------------------------------------------------ sums and the seed's advice


def test_children_deserved_must_fit_in_parent_deserved() -> None:
    """Seed 002: in a hierarchy the children's deserved add up to at most the parent's."""
    parent = make_queue("p", "root", deserved=cpu_mem("4", "4Gi"))
    first = make_queue("c1", "p", deserved=cpu_mem("3", "1Gi"))
    found = problems(make_queue("c2", "p", deserved=cpu_mem("2", "1Gi")), [parent, first])
    assert found == [
        "Queue c2: spec.deserved: the sum of the sibling queues' deserved (cpu 5, memory 2Gi)"
        " exceeds the deserved of parent queue p (cpu 4, memory 4Gi)"
    ]
    assert problems(make_queue("c2", "p", deserved=cpu_mem("1", "3Gi")), [parent, first]) == []


def test_update_replaces_the_old_version_in_the_sums() -> None:
    parent = make_queue("p", "root", deserved={"cpu": "4"})
    old = make_queue("c", "p", deserved={"cpu": "4"})
    # Lowering c's deserved is checked against the new value, not old + new.
    assert problems(make_queue("c", "p", deserved={"cpu": "3"}), [parent, old]) == []


def test_children_of_root_are_not_summed() -> None:
    """Upstream checks sibling sums only under a real parent: root's share is the cluster."""
    existing = [make_queue("a", "root", guarantee={"cpu": "8"}, deserved={"cpu": "8"})]
    queue = make_queue("b", "root", guarantee={"cpu": "8"}, deserved={"cpu": "8"})
    assert problems(queue, existing) == []
