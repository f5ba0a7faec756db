"""numa-aware's policies, CPU manager and NUMA info (``plugins/numaaware/policy``,
``provider/cpumanager``, ``api/numa_info.go``, ``api/node_info.go``).

Transcribed from upstream:

* ``policy_none_test.go`` ``Test_none_predicate`` (1 case), ``policy_best_effort_test.go``
  ``Test_best_effort_predicate`` (6), ``policy_restricted_test.go`` ``Test_restricted_predicate``
  (6), ``policy_single_numa_node_test.go`` ``Test_single_numa_node_predicate`` (5): the best hint
  of each policy on a 2-NUMA-node machine. A hint is (NUMA nodes, preferred); None is any.
* ``cpu_mng_test.go`` ``Test_GetTopologyHints`` (6) and ``Test_Allocate`` (5) on a 2-socket,
  2-NUMA-node, 8-CPU machine.
* ``numa_info_test.go`` ``TestCheckNumaPodAssigned`` (5) and ``node_info_test.go``
  ``TestRefreshNumaSchedulerInfoByCrd_*`` (3; the nil-info case has no counterpart: a node
  without a Numatopology simply has no entry). Upstream's DeepCopy and PodMeta JSON tests have
  none either: NumatopoInfo is immutable here and PodMeta is a hashable dataclass.
"""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.numa import (
    CpuInfo,
    NumatopoInfo,
    NumatopologySpecError,
    PodMeta,
    format_cpu_set,
    parse_cpu_set,
    parse_numatopology,
)
from volcano_py.plugins.numa_aware import cpu_manager, scheduler_sets
from volcano_py.plugins.numa_aware.policy import (
    BEST_EFFORT,
    NONE,
    RESTRICTED,
    SINGLE_NUMA_NODE,
    TopologyHint,
    mask_of,
    policy_for,
)

Hint = tuple[list[int] | None, bool]


def hint(spec: Hint) -> TopologyHint:
    bits, preferred = spec
    return TopologyHint(None if bits is None else mask_of(bits), preferred)


def providers(specs: list[dict[str, list[Hint]]]) -> list[dict[str, list[TopologyHint]]]:
    return [{name: [hint(h) for h in hints] for name, hints in p.items()} for p in specs]


# (case, providers' hints, expected best hint)
BEST_EFFORT_CASES: list[tuple[str, list[dict[str, list[Hint]]], Hint]] = [
    (
        "test-1",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], False], [[0], True]]}],
        ([0], True),
    ),
    (
        "test-2",
        [{"cpu": [[[0, 1], False], [[1], True]]}, {"gpu": [[[0, 1], False], [[1], True]]}],
        ([1], True),
    ),
    (
        "test-3",
        [
            {"cpu": [[[0, 1], False], [[0], True], [[1], True]]},
            {"gpu": [[[0, 1], False], [[0], True], [[1], True]]},
        ],
        ([0], True),
    ),
    (
        "test-4",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], False], [[1], True]]}],
        ([0], False),
    ),
    ("test-5", [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], True]]}], ([0], True)),
    ("test-6", [{"cpu": [[[0, 1], True]]}, {"gpu": [[[0, 1], True]]}], ([0, 1], True)),
]
RESTRICTED_CASES: list[tuple[str, list[dict[str, list[Hint]]], Hint]] = [
    (
        "test-1",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], False], [[0], True]]}],
        ([0], True),
    ),
    (
        "test-2",
        [{"cpu": [[[0, 1], False], [[1], True]]}, {"gpu": [[[0, 1], False], [[1], True]]}],
        ([1], True),
    ),
    (
        "test-3",
        [
            {"cpu": [[[0, 1], False], [[0], True], [[1], True]]},
            {"gpu": [[[0, 1], False], [[0], True], [[1], True]]},
        ],
        ([0], True),
    ),
    (
        "test-4",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], False], [[1], True]]}],
        ([0], False),
    ),
    ("test-5", [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], True]]}], ([0], True)),
    ("test-6", [{"cpu": [[[0, 1], True]]}, {"gpu": [[[0, 1], True]]}], ([0, 1], True)),
]
SINGLE_NUMA_NODE_CASES: list[tuple[str, list[dict[str, list[Hint]]], Hint]] = [
    (
        "test-1",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], False], [[0], True]]}],
        ([0], True),
    ),
    (
        "test-2",
        [{"cpu": [[[0, 1], False], [[1], True]]}, {"gpu": [[[0, 1], False], [[1], True]]}],
        ([1], True),
    ),
    (
        "test-3",
        [
            {"cpu": [[[0, 1], False], [[0], True], [[1], True]]},
            {"gpu": [[[0, 1], False], [[0], True], [[1], True]]},
        ],
        ([0], True),
    ),
    (
        "test-4",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], False], [[1], True]]}],
        ([0, 1], False),
    ),
    (
        "test-5",
        [{"cpu": [[[0, 1], False], [[0], True]]}, {"gpu": [[[0, 1], True]]}],
        ([0, 1], False),
    ),
]


def test_none_predicate_upstream() -> None:
    """Test_none_predicate test-1: no hint at all, always admitted."""
    best, admit = policy_for(NONE, [0, 1])([])
    assert best == TopologyHint(None, False)
    assert admit


@pytest.mark.parametrize(
    ("case", "hints", "expected"), BEST_EFFORT_CASES, ids=[c[0] for c in BEST_EFFORT_CASES]
)
def test_best_effort_predicate_upstream(case: str, hints: Any, expected: Hint) -> None:
    best, admit = policy_for(BEST_EFFORT, [0, 1])(providers(hints))
    assert best == hint(expected)
    assert admit  # best-effort admits every pod


@pytest.mark.parametrize(
    ("case", "hints", "expected"), RESTRICTED_CASES, ids=[c[0] for c in RESTRICTED_CASES]
)
def test_restricted_predicate_upstream(case: str, hints: Any, expected: Hint) -> None:
    best, admit = policy_for(RESTRICTED, [0, 1])(providers(hints))
    assert best == hint(expected)
    assert admit == expected[1]


@pytest.mark.parametrize(
    ("case", "hints", "expected"),
    SINGLE_NUMA_NODE_CASES,
    ids=[c[0] for c in SINGLE_NUMA_NODE_CASES],
)
def test_single_numa_node_predicate_upstream(case: str, hints: Any, expected: Hint) -> None:
    best, admit = policy_for(SINGLE_NUMA_NODE, [0, 1])(providers(hints))
    assert best == hint(expected)
    assert admit == expected[1]


def test_provider_without_preference_and_without_placement() -> None:
    """filterProvidersHints: a resource mapped to None is any-NUMA preferred; an empty list
    is any-NUMA not preferred (restricted then refuses)."""
    best, admit = policy_for(RESTRICTED, [0, 1])([{"cpu": None}])
    assert (best, admit) == (TopologyHint(mask_of([0, 1]), True), True)
    best, admit = policy_for(RESTRICTED, [0, 1])([{"cpu": []}])
    assert (best, admit) == (TopologyHint(mask_of([0, 1]), False), False)


def test_unknown_policy_behaves_as_none() -> None:
    assert policy_for("bogus", [0, 1])([{"cpu": []}])[1]


# ---------------------------------------------------------------------- cpu_mng_test.go

# 2 sockets, one NUMA node each, 2 cores of 2 threads per socket.
NUMA_INFO = NumatopoInfo(
    name="n1",
    cpu_detail={
        0: CpuInfo(0, 0, 0),
        1: CpuInfo(0, 0, 0),
        2: CpuInfo(0, 0, 1),
        3: CpuInfo(0, 0, 1),
        4: CpuInfo(1, 1, 2),
        5: CpuInfo(1, 1, 2),
        6: CpuInfo(1, 1, 3),
        7: CpuInfo(1, 1, 3),
    },
)


def container(cpu: int | str) -> dict[str, Any]:
    return {"name": "c", "resources": {"requests": {"cpu": cpu}}}


@pytest.mark.parametrize(
    ("case", "cpus", "available", "expected"),
    [
        ("test-1", 4, range(8), [([0], True), ([1], True), ([0, 1], False)]),
        ("test-2", 4, range(1, 8), [([1], True), ([0, 1], False)]),
        ("test-3", 5, range(8), [([0, 1], True)]),
        ("test-4", 8, range(8), [([0, 1], True)]),
        ("test-5", 9, range(8), []),
        ("test-6", 4, [2, 3, 4, 5], [([0, 1], False)]),
    ],
)
def test_get_topology_hints_upstream(
    case: str, cpus: int, available: Any, expected: list[Hint]
) -> None:
    hints = cpu_manager.get_topology_hints(
        container(cpus), NUMA_INFO, {"cpu": frozenset(available)}
    )
    assert hints["cpu"] == [hint(h) for h in expected]


@pytest.mark.parametrize(
    ("case", "cpus", "available", "best", "expected"),
    [
        ("test-1", 4, range(8), ([0], True), {0, 1, 2, 3}),
        ("test-2", 4, range(1, 8), ([1], True), {4, 5, 6, 7}),
        ("test-3", 5, range(8), ([0, 1], True), {0, 1, 2, 3, 4}),
        ("test-4", 5, range(1, 8), ([0, 1], True), {1, 4, 5, 6, 7}),
        ("test-5", 8, range(1, 8), ([0, 1], True), set()),
    ],
)
def test_allocate_upstream(
    case: str, cpus: int, available: Any, best: Hint, expected: set[int]
) -> None:
    assigned = cpu_manager.allocate(
        container(cpus), hint(best), NUMA_INFO, {"cpu": frozenset(available)}
    )
    assert assigned["cpu"] == expected


def test_fractional_or_missing_cpu_request_has_no_hints() -> None:
    """Only whole CPUs are pinned (guaranteedCPUs); no request at all: no preference."""
    assert (
        cpu_manager.get_topology_hints(container("1500m"), NUMA_INFO, {"cpu": frozenset(range(8))})
        == {}
    )
    assert (
        cpu_manager.get_topology_hints({"name": "c"}, NUMA_INFO, {"cpu": frozenset(range(8))}) == {}
    )
    # The request defaults to the limit, as the API server defaults it.
    limited = {"name": "c", "resources": {"limits": {"cpu": "2"}}}
    assert cpu_manager.guaranteed_cpus(limited) == 2


def test_reserved_cpus_are_never_hinted_nor_allocated() -> None:
    """resReserved.cpu (rounded up) is taken by topology first, as the kubelet reserves it."""
    info = NumatopoInfo(name="n1", cpu_detail=NUMA_INFO.cpu_detail, reserved_cpus=2)
    hints = cpu_manager.get_topology_hints(container(4), info, {"cpu": frozenset(range(8))})
    # CPUs 0 and 1 (a whole core of socket 0) are reserved: NUMA node 0 has only 2 left.
    assert hints["cpu"] == [hint(([1], True)), hint(([0, 1], False))]
    assigned = cpu_manager.allocate(
        container(2), hint(([0], True)), info, {"cpu": frozenset(range(8))}
    )
    assert assigned["cpu"] == {2, 3}


# ---------------------------------------------------------------------- numa_info_test.go


def alloc_info(*pods: PodMeta) -> NumatopoInfo:
    return NumatopoInfo(
        name="n1", allocatable={"cpu": frozenset({0, 1, 2, 3})}, pod_allocations=pods
    )


UID_POD = PodMeta("uid-1", "p1", "ns1")
NAME_POD = PodMeta("uid-2", "p2", "ns2")


@pytest.mark.parametrize(
    ("case", "info", "pod", "expected"),
    [
        ("match by UID", alloc_info(UID_POD, NAME_POD), PodMeta("uid-1", "other", "other"), True),
        (
            "match by namespace+name only",
            alloc_info(UID_POD, NAME_POD),
            PodMeta("uid-unknown", "p2", "ns2"),
            True,
        ),
        ("no match at all", alloc_info(UID_POD, NAME_POD), PodMeta("uid-x", "p3", "ns3"), False),
        (
            "namespace+name partial mismatch",
            alloc_info(UID_POD, NAME_POD),
            PodMeta("uid-x", "p2", "ns3"),
            False,
        ),
        ("empty PodAllocations lookup", alloc_info(), PodMeta("uid-1", "p1", "ns1"), False),
    ],
)
def test_check_numa_pod_assigned_upstream(
    case: str, info: NumatopoInfo, pod: PodMeta, expected: bool
) -> None:
    assert info.pod_assigned(pod) is expected


def test_refresh_all_assigned_clears_unassigned_upstream() -> None:
    """TestRefreshNumaSchedulerInfoByCrd_AllAssignedClearsUnassigned."""
    pod = PodMeta("uid-1", "p1", "ns1")
    unassigned = {pod: {"cpu": frozenset({0, 1})}}
    sets = scheduler_sets(alloc_info(pod), unassigned)
    assert unassigned == {}
    assert sets["cpu"] == {0, 1, 2, 3}


def test_refresh_unassigned_pod_pre_occupies_resources_upstream() -> None:
    """TestRefreshNumaSchedulerInfoByCrd_UnassignedPodPreOccupiesResources."""
    pending = PodMeta("uid-2", "p2", "ns1")
    unassigned = {pending: {"cpu": frozenset({0, 1})}}
    sets = scheduler_sets(alloc_info(PodMeta("uid-1", "p1", "ns1")), unassigned)
    assert pending in unassigned
    assert sets["cpu"] == {2, 3}


def test_refresh_mixed_assigned_and_unassigned_upstream() -> None:
    """TestRefreshNumaSchedulerInfoByCrd_MixedAssignedAndUnassigned: while any pod is not
    reported yet, every pre-occupation stays."""
    assigned = PodMeta("uid-1", "p1", "ns1")
    pending = PodMeta("uid-2", "p2", "ns1")
    unassigned = {assigned: {"cpu": frozenset({3})}, pending: {"cpu": frozenset({0, 1})}}
    sets = scheduler_sets(alloc_info(assigned), unassigned)
    assert set(unassigned) == {assigned, pending}
    assert sets["cpu"] == {2}


# ---------------------------------------------------------------------- parsing


def test_cpu_set_lists_round_trip() -> None:
    assert parse_cpu_set("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert parse_cpu_set("") == frozenset()
    assert format_cpu_set({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11"
    for bad in ("a", "3-1", "1-", "1,,2"):
        with pytest.raises(ValueError):
            parse_cpu_set(bad)


def numatopology(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nodeinfo.volcano.sh/v1alpha1",
        "kind": "Numatopology",
        "metadata": {"name": "n1"},
        "spec": spec,
    }


def test_parse_numatopology() -> None:
    info = parse_numatopology(
        numatopology(
            policies={"CPUManagerPolicy": "static", "TopologyManagerPolicy": "best-effort"},
            resReserved={"cpu": "1500m", "memory": "1Gi"},
            numares={"cpu": {"allocatable": "0-3", "capacity": 4}},
            cpuDetail={"0": {"numa": 0, "socket": 0, "core": 0}, "3": {"numa": 1, "socket": 1}},
            podAllocations=[{"uid": "u1", "name": "p1", "namespace": "ns"}],
        )
    )
    assert info.cpu_manager_policy == "static"
    assert info.topology_manager_policy == "best-effort"
    assert info.allocatable == {"cpu": {0, 1, 2, 3}}
    assert info.capacity == {"cpu": 4}
    assert info.cpu_detail == {0: CpuInfo(0, 0, 0), 3: CpuInfo(1, 1, 0)}
    assert info.reserved_cpus == 2
    assert info.numa_nodes() == [0, 1]
    assert info.pod_allocations == (PodMeta("u1", "p1", "ns"),)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"numares": {"cpu": {"allocatable": "0-x"}}},
            r"Numatopology n1: spec.numares\[cpu\].allocatable",
        ),
        ({"cpuDetail": {"zero": {"numa": 0}}}, r"spec.cpuDetail\[zero\]: the key must be a CPU id"),
        ({"cpuDetail": {"0": {"numa": -1}}}, r"spec.cpuDetail\[0\].numa: expected a non-negative"),
        ({"resReserved": {"cpu": "lots"}}, r"spec.resReserved.cpu: invalid quantity"),
    ],
)
def test_parse_numatopology_names_the_bad_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(NumatopologySpecError, match=message):
        parse_numatopology(numatopology(**spec))
