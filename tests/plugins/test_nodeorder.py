"""nodeorder plugin (``pkg/scheduler/plugins/nodeorder``).

Transcribed from upstream ``nodeorder_test.go``: the ``TestNodeOrderPlugin`` cases run
allocate with gang and nodeorder and check where the pod binds; ``TestInitPlugin`` as which
scorers the weights turn on. Then kube-scheduler's worked examples for each scorer
(``least_allocated_test.go``, ``most_allocated_test.go``, ``balanced_allocation_test.go``
cases "nothing scheduled, resources requested, differently sized nodes"), normalisation, the
per-session bookkeeping, and Hypothesis properties that each vectorised scorer equals its
per-node reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.pod_facts import DEFAULT_MEMORY_REQUEST, non_zero_request
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import nodeorder
from volcano_py.plugins._kube_scheduling.affinity_tracker import AffinityTracker
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex, preferred_scores
from volcano_py.plugins._kube_scheduling.selectors import preferred_node_terms, preferred_score
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods
from volcano_py.plugins._kube_scheduling.taints import (
    Toleration,
    intolerable_prefer_no_schedule,
    prefer_no_schedule_tolerations,
)
from volcano_py.plugins._kube_scheduling.topology_spread import (
    NodeView,
    TopologySpread,
    score_reference,
)
from volcano_py.plugins.nodeorder import (
    StaticScores,
    Weights,
    balanced_allocation,
    balanced_allocation_reference,
    default_normalize,
    least_allocated,
    least_allocated_reference,
    min_max_normalize,
    most_allocated,
    most_allocated_reference,
    pod_affinity_scores,
)

HOSTNAME = "kubernetes.io/hostname"
ALL_ZERO = {
    "leastrequested.weight": 0,
    "mostrequested.weight": 0,
    "balancedresource.weight": 0,
    "nodeaffinity.weight": 0,
    "podaffinity.weight": 0,
    "tainttoleration.weight": 0,
    "imagelocality.weight": 0,
    "podtopologyspread.weight": 0,
}


def only(**weights: int) -> dict[str, int]:
    """Upstream's test arguments: every weight given, the unnamed ones 0."""
    arguments = dict(ALL_ZERO)
    arguments.update({f"{name}.weight": value for name, value in weights.items()})
    return arguments


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]], arguments: Mapping[str, Any]
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("nodeorder", "enableNodeOrder", arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"nodeorder": nodeorder.new}, cache)


def task_of(ssn: Session, name: str) -> TaskInfo:
    return next(t for job in ssn.jobs.values() for t in job.tasks.values() if t.name == name)


def scores(ssn: Session, name: str) -> dict[str, float]:
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    values = ssn.node_scores(task_of(ssn, name), rows)
    return {node.name: float(v) for node, v in zip(ssn.node_list, values, strict=True)}


def base() -> list[tuple[str, dict[str, Any]]]:
    return [("Queue", build_queue("c1")), ("PodGroup", build_pod_group("pg1", "c1", "c1", 0))]


# ------------------------------------------------------------------- upstream: TestNodeOrderPlugin


def _pod(
    name: str, node: str = "", requests: Mapping[str, str] | None = None, **kwargs: Any
) -> dict[str, Any]:
    phase = "Running" if node else "Pending"
    return build_pod(
        "c1",
        name,
        node,
        phase,
        resource_list("1", "1G") if requests is None else requests,
        "pg1",
        **kwargs,
    )


def _node(
    name: str, cpu: str, memory: str, labels: Mapping[str, str] | None = None, **kwargs: Any
) -> dict[str, Any]:
    return build_node(name, resource_list(cpu, memory, pods="10"), labels, **kwargs)


def _spread_pod(name: str, *constraints: dict[str, Any]) -> dict[str, Any]:
    """``util.BuildPodWithTopologySpreadConstraints``: a pending ``app=foo`` pod."""
    raw = _pod(name, labels={"app": "foo"})
    raw["spec"]["topologySpreadConstraints"] = list(constraints)
    return raw


UPSTREAM_CASES = [
    pytest.param(
        "leastAllocated strategy",
        [_node("n1", "2", "4Gi"), _node("n2", "4", "8Gi")],
        [_pod("p1")],
        only(leastrequested=1),
        {"c1/p1": "n2"},
        id="leastAllocated strategy",
    ),
    pytest.param(
        "mostAllocated strategy",
        [_node("n1", "2", "4Gi"), _node("n2", "4", "8Gi")],
        [_pod("p1")],
        only(mostrequested=1),
        {"c1/p1": "n1"},
        id="mostAllocated strategy",
    ),
    pytest.param(
        "balanced allocation prefers balanced node",
        [_node("n1", "2", "2Gi"), _node("n2", "4", "2Gi")],
        [_pod("p1", requests=resource_list("1", "1Gi"))],
        only(balancedresource=10),
        {"c1/p1": "n1"},
        id="balanced allocation prefers balanced node",
    ),
    pytest.param(
        "node affinity prefers labeled node",
        [_node("n1", "2", "4Gi", {"zone": "zone1"}), _node("n2", "2", "4Gi", {"zone": "zone2"})],
        [
            _pod(
                "p1",
                affinity={
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 100,
                                "preference": {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "In", "values": ["zone1"]}
                                    ]
                                },
                            }
                        ]
                    }
                },
            )
        ],
        only(nodeaffinity=10),
        {"c1/p1": "n1"},
        id="node affinity prefers labeled node",
    ),
    pytest.param(
        "taint toleration prefers non-tainted node",
        [
            _node("n1", "2", "4Gi"),
            _node(
                "n2",
                "2",
                "4Gi",
                taints=[{"key": "key1", "value": "value1", "effect": "PreferNoSchedule"}],
            ),
        ],
        [_pod("p1")],
        only(tainttoleration=10),
        {"c1/p1": "n1"},
        id="taint toleration prefers non-tainted node",
    ),
    pytest.param(
        "inter-pod affinity prefers node with matching pod",
        [
            _node("n1", "2", "4Gi", {HOSTNAME: "n1"}),
            _node("n2", "2", "4Gi", {HOSTNAME: "n2"}),
            _node("n3", "2", "4Gi", {HOSTNAME: "n3"}),
        ],
        [
            _pod("p1", "n1", labels={"service": "s1"}),
            _pod("p-noise", "n3", labels={"service": "s2"}),
            _pod(
                "p2",
                affinity={
                    "podAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 100,
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"service": "s1"}},
                                    "topologyKey": HOSTNAME,
                                },
                            }
                        ]
                    }
                },
            ),
        ],
        only(podaffinity=10),
        {"c1/p2": "n1"},
        id="inter-pod affinity prefers node with matching pod",
    ),
    pytest.param(
        "pod topology spread prefers node to reduce skew",
        [
            _node("n1", "4", "4Gi", {"zone": "zone1"}),
            _node("n2", "4", "4Gi", {"zone": "zone2"}),
            _node("n3", "4", "4Gi", {"zone": "zone3"}),
        ],
        [
            _pod("p1", "n1", labels={"app": "foo"}),
            _pod("p2", "n1", labels={"app": "foo"}),
            _pod("p3", "n2", labels={"app": "foo"}),
            _spread_pod(
                "p4",
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "labelSelector": {"matchLabels": {"app": "foo"}},
                },
            ),
        ],
        only(podtopologyspread=10),
        # n3 (zone3) is empty, n2 (zone2) has 1 pod and n1 (zone1) has 2: spread is better on n3.
        {"c1/p4": "n3"},
        id="pod topology spread prefers node to reduce skew",
    ),
]


@pytest.mark.parametrize(("name", "nodes", "pods", "arguments", "binds"), UPSTREAM_CASES)
def test_node_order_plugin_upstream(
    name: str,
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    arguments: dict[str, int],
    binds: dict[str, str],
) -> None:
    """``TestNodeOrderPlugin``: allocate with gang (job ready) and nodeorder; the pod goes to
    the node the scorer prefers."""
    case = Case(
        name=name,
        plugins={"gang": ["enableJobReady"], "nodeorder": ["enableNodeOrder"]},
        nodes=nodes,
        pods=pods,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 0)],
        queues=[build_queue("c1")],
        arguments={"nodeorder": arguments},
        expect_bind_map=binds,
        expect_binds_num=1,
    )
    for seed in range(5):  # ties are broken at random: the winner must not depend on it
        case.seed = seed
        check(case, run_case(case, ["allocate"]))


def test_init_plugin_upstream() -> None:
    """``TestInitPlugin``: default weights enable least-requested, balanced, node affinity,
    pod affinity, taint toleration (and pod topology spread, image locality); all zero
    enables none."""
    defaults = Weights.from_arguments(Arguments())
    assert defaults == Weights(1, 0, 1, 2, 2, 3, 1, 2)
    ssn = make_session([*base(), ("Node", _node("n1", "2", "4Gi")), ("Pod", _pod("p1"))], ALL_ZERO)
    assert scores(ssn, "p1") == {"n1": 0.0}


def test_weights_read_from_arguments() -> None:
    weights = Weights.from_arguments(
        Arguments(
            {"mostrequested.weight": 4, "leastrequested.weight": 0, "nodeaffinity.weight": "x"}
        )
    )
    assert (weights.most_requested, weights.least_requested, weights.node_affinity) == (4, 0, 2)


# -------------------------------------------------------------- worked arithmetic (kube-scheduler)


def test_least_allocated_worked_example() -> None:
    """cpu (4000-3000)*100/4000 = 25, memory (10000-5000)*100/10000 = 50 -> 37; on the 6000m
    node 50 and 50 -> 50."""
    requested = np.array([[3000.0, 5000.0], [3000.0, 5000.0]])
    allocatable = np.array([[4000.0, 10000.0], [6000.0, 10000.0]])
    assert list(least_allocated(requested, allocatable)) == [37, 50]
    assert least_allocated_reference([3000, 5000], [4000, 10000]) == 37


def test_most_allocated_worked_example() -> None:
    requested = np.array([[3000.0, 5000.0], [3000.0, 5000.0]])
    allocatable = np.array([[4000.0, 10000.0], [6000.0, 10000.0]])
    assert list(most_allocated(requested, allocatable)) == [62, 50]
    # Requests above capacity (non-zero defaults can do that) count as full.
    assert most_allocated_reference([5000, 5000], [4000, 10000]) == 75


def test_balanced_allocation_worked_example() -> None:
    """Fractions 0.75 and 0.5: std 0.125 -> 87; 0.5 and 0.5 -> 100; three resources use the
    population standard deviation."""
    requested = np.array([[3000.0, 5000.0, 0.0], [3000.0, 5000.0, 0.0], [1.0, 2.0, 3.0]])
    allocatable = np.array([[4000.0, 10000.0, 0.0], [6000.0, 10000.0, 0.0], [4.0, 4.0, 4.0]])
    assert list(balanced_allocation(requested, allocatable)) == [87, 100, 79]
    # 0.25, 0.5, 0.75: mean 0.5, std sqrt(0.125/3) = 0.2041 -> 79.
    assert balanced_allocation_reference([1, 2, 3], [4, 4, 4]) == 79


def test_least_allocated_counts_only_resources_the_node_has() -> None:
    assert least_allocated_reference([500, 100], [0, 1000]) == 90


def test_non_zero_defaults() -> None:
    pod = build_pod("ns", "p", "", "Pending", {}, "")
    assert non_zero_request(pod, 0, 0) == (100, DEFAULT_MEMORY_REQUEST)
    only_cpu = build_pod("ns", "p", "", "Pending", {"cpu": "250m"}, "")
    assert non_zero_request(only_cpu, 250, 0) == (250, DEFAULT_MEMORY_REQUEST)
    limits = build_pod("ns", "p", "", "Pending", {}, "")
    limits["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    assert non_zero_request(limits, 2000, 2**30) == (2000, 2**30)
    two = build_pod("ns", "p", "", "Pending", {"cpu": "1"}, "")
    two["spec"]["containers"].append({"name": "side", "resources": {"requests": {"memory": "1Gi"}}})
    two["spec"]["initContainers"] = [
        {"name": "init", "resources": {"requests": {"cpu": "3", "memory": "10Mi"}}}
    ]
    # containers: cpu 1000 + 100, memory 200Mi + 1Gi; init: cpu 3000, memory 10Mi.
    assert non_zero_request(two, 0, 0) == (3000, DEFAULT_MEMORY_REQUEST + 2**30)


def test_least_requested_uses_non_zero_requests_in_session() -> None:
    """A best-effort pod on an empty 1-cpu/2000Mi node: cpu 900/1000 -> 90, memory 90 -> 90.
    A best-effort pod already there counts 100m/200Mi too: 80."""
    node = build_node("n1", {"cpu": "1", "memory": "2000Mi", "pods": "10"})
    objects = [*base(), ("Node", node), ("Pod", _pod("p", requests={}))]
    assert scores(make_session(objects, only(leastrequested=1)), "p") == {"n1": 90.0}
    objects.append(("Pod", _pod("held", "n1", requests={})))
    assert scores(make_session(objects, only(leastrequested=1)), "p") == {"n1": 80.0}


def test_requested_follows_session_events() -> None:
    objects = [
        *base(),
        ("Node", _node("n1", "4", "4Gi")),
        ("Pod", _pod("a", requests=resource_list("2", "2Gi"))),
        ("Pod", _pod("b", requests=resource_list("1", "1Gi"))),
        ("Pod", _pod("old", "n1", requests=resource_list("1", "1Gi"))),
    ]
    ssn = make_session(objects, only(leastrequested=1))
    # (4-1-1)/4 -> 50 per resource.
    assert scores(ssn, "b") == {"n1": 50.0}
    statement = ssn.statement()
    statement.allocate(task_of(ssn, "a"), ssn.nodes["n1"])
    assert scores(ssn, "b") == {"n1": 0.0}
    evicting = ssn.statement()
    evicting.evict(task_of(ssn, "old"), "test")  # leaves kube-scheduler's node view at once
    assert scores(ssn, "b") == {"n1": 25.0}
    evicting.discard()
    statement.discard()
    assert scores(ssn, "b") == {"n1": 50.0}


def test_balanced_skips_best_effort_and_counts_gpu_when_asked() -> None:
    gpu_node = build_node("n1", resource_list("4", "4Gi", pods="10", **{"nvidia.com/gpu": "4"}))
    objects = [
        *base(),
        ("Node", gpu_node),
        ("Pod", _pod("none", requests={})),
        ("Pod", _pod("cpu", requests=resource_list("2", "2Gi"))),
        ("Pod", _pod("gpu", requests=resource_list("2", "2Gi", **{"nvidia.com/gpu": "1"}))),
    ]
    ssn = make_session(objects, only(balancedresource=1))
    assert scores(ssn, "none") == {"n1": 0.0}
    assert scores(ssn, "cpu") == {"n1": 100.0}
    # 0.5, 0.5, 0.25: mean 5/12, std 0.1179 -> 88.
    assert scores(ssn, "gpu") == {"n1": 88.0}


def test_node_affinity_preferred_normalised() -> None:
    """Weights 2 (zone=a) and 5 (gpu exists): raw 7, 2, 0 -> 100, 28, 0 (times the weight)."""
    preferred = [
        {
            "weight": 2,
            "preference": {
                "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]
            },
        },
        {"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
        {"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}},
    ]
    objects = [
        *base(),
        ("Node", _node("n1", "2", "2Gi", {"zone": "a", "gpu": "x"})),
        ("Node", _node("n2", "2", "2Gi", {"zone": "a"})),
        ("Node", _node("n3", "2", "2Gi", {"zone": "b"})),
        (
            "Pod",
            _pod(
                "p",
                affinity={
                    "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
                },
            ),
        ),
        ("Pod", _pod("plain")),
    ]
    ssn = make_session(objects, only(nodeaffinity=2))
    assert scores(ssn, "p") == {"n1": 200.0, "n2": 56.0, "n3": 0.0}
    assert scores(ssn, "plain") == {"n1": 0.0, "n2": 0.0, "n3": 0.0}


def test_taint_toleration_normalised_reversed() -> None:
    """Intolerable PreferNoSchedule taints 0, 1, 2 -> 100, 50, 0; a tolerated one and other
    effects do not count."""
    prefer = [
        {"key": "a", "value": "1", "effect": "PreferNoSchedule"},
        {"key": "b", "value": "2", "effect": "PreferNoSchedule"},
    ]
    objects = [
        *base(),
        (
            "Node",
            _node("n1", "2", "2Gi", taints=[{"key": "c", "value": "3", "effect": "NoSchedule"}]),
        ),
        ("Node", _node("n2", "2", "2Gi", taints=prefer[:1])),
        ("Node", _node("n3", "2", "2Gi", taints=prefer)),
        ("Pod", _pod("p")),
        (
            "Pod",
            _pod(
                "tolerant",
                tolerations=[{"key": "b", "operator": "Exists", "effect": "PreferNoSchedule"}],
            ),
        ),
        ("Pod", _pod("all", tolerations=[{"operator": "Exists"}])),
    ]
    ssn = make_session(objects, only(tainttoleration=1))
    assert scores(ssn, "p") == {"n1": 100.0, "n2": 50.0, "n3": 0.0}
    assert scores(ssn, "tolerant") == {"n1": 100.0, "n2": 0.0, "n3": 0.0}
    assert scores(ssn, "all") == {"n1": 100.0, "n2": 100.0, "n3": 100.0}


def test_inter_pod_affinity_preferred_min_max() -> None:
    """Affinity 10 to app=db by zone, anti-affinity 4 to app=web by host; an existing pod's
    preferred anti-affinity (weight 3, by zone) against us counts too.
    Raw: a1 = 10 - 4 = 6, a2 = 10, b1 = -3, nozone 0 -> min-max over [-3, 10]."""
    section = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "db"}},
                        "topologyKey": "zone",
                    },
                }
            ]
        },
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 4,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": HOSTNAME,
                    },
                }
            ]
        },
    }
    hater = {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 3,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"role": "me"}},
                        "topologyKey": "zone",
                    },
                }
            ]
        }
    }
    objects = [
        *base(),
        ("Node", _node("a1", "8", "8Gi", {HOSTNAME: "a1", "zone": "a"})),
        ("Node", _node("a2", "8", "8Gi", {HOSTNAME: "a2", "zone": "a"})),
        ("Node", _node("b1", "8", "8Gi", {HOSTNAME: "b1", "zone": "b"})),
        ("Node", _node("nozone", "8", "8Gi", {HOSTNAME: "nozone"})),
        ("Pod", _pod("db", "a2", labels={"app": "db"})),
        ("Pod", _pod("web", "a1", labels={"app": "web"})),
        ("Pod", _pod("hater", "b1", labels={"app": "x"}, affinity=hater)),
        ("Pod", _pod("me", labels={"role": "me"}, affinity=section)),
    ]
    ssn = make_session(objects, only(podaffinity=1))
    # (6+3)/13*100 = 69.2, 100, 0, 3/13*100 = 23.07
    assert scores(ssn, "me") == {"a1": 69.0, "a2": 100.0, "b1": 0.0, "nozone": 23.0}


def test_default_normalize() -> None:
    assert list(default_normalize(np.array([7.0, 2.0, 0.0]), reverse=False)) == [100, 28, 0]
    assert list(default_normalize(np.array([0.0, 1.0, 2.0]), reverse=True)) == [100, 50, 0]
    assert list(default_normalize(np.array([0.0, 0.0]), reverse=True)) == [100, 100]
    assert list(default_normalize(np.array([0.0, 0.0]), reverse=False)) == [0, 0]
    assert list(min_max_normalize(np.array([-3.0, 6.0, 10.0]))) == [0, 69, 100]
    assert list(min_max_normalize(np.array([5.0, 5.0]))) == [0, 0]


# ------------------------------------------------------------------------- vectorised == reference

AMOUNTS = st.sampled_from([0.0, 1.0, 100.0, 250.0, 1000.0, 3000.0, 4000.0, 6000.0, 2.0**31])


@st.composite
def resource_rows(draw: st.DrawFn) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rows = draw(st.integers(1, 8))
    columns = draw(st.integers(1, 3))
    requested = np.array([[draw(AMOUNTS) for _ in range(columns)] for _ in range(rows)])
    allocatable = np.array([[draw(AMOUNTS) for _ in range(columns)] for _ in range(rows)])
    return requested, allocatable


@settings(max_examples=300, deadline=None)
@given(resource_rows())
def test_resource_scorers_equal_references(
    case: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]],
) -> None:
    requested, allocatable = case
    least, most, balanced = (
        least_allocated(requested, allocatable),
        most_allocated(requested, allocatable),
        balanced_allocation(requested, allocatable),
    )
    for row in range(len(requested)):
        want, have = list(requested[row]), list(allocatable[row])
        assert least[row] == least_allocated_reference(want, have)
        assert most[row] == most_allocated_reference(want, have)
        assert balanced[row] == balanced_allocation_reference(want, have)


def _default_normalize_reference(scores: list[int], reverse: bool) -> list[int]:
    """``DefaultNormalizeScore`` with Go's integer arithmetic."""
    highest = max([0, *scores])
    if highest == 0:
        return [100 if reverse else s for s in scores]
    return [(100 - 100 * s // highest) if reverse else 100 * s // highest for s in scores]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 500), min_size=1, max_size=8), st.booleans())
def test_default_normalize_equals_reference(raw: list[int], reverse: bool) -> None:
    vectorised = default_normalize(np.array(raw, dtype=float), reverse)
    assert [int(v) for v in vectorised] == _default_normalize_reference(raw, reverse)


LABELS = st.dictionaries(
    st.sampled_from(["zone", "gpu", "gen"]), st.sampled_from(["a", "b", "1", "7"]), max_size=3
)
PREFERENCES = st.lists(
    st.fixed_dictionaries(
        {
            "weight": st.integers(0, 5),
            "preference": st.fixed_dictionaries(
                {
                    "matchExpressions": st.lists(
                        st.fixed_dictionaries(
                            {
                                "key": st.sampled_from(["zone", "gpu", "gen"]),
                                "operator": st.sampled_from(
                                    ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
                                ),
                                "values": st.lists(
                                    st.sampled_from(["a", "b", "1", "7"]), min_size=1, max_size=2
                                ),
                            }
                        ),
                        max_size=2,
                    )
                }
            ),
        }
    ),
    max_size=3,
)


def _index(
    labels: list[dict[str, str]], taints: list[list[dict[str, str]]] | None = None
) -> NodeIndex:
    matrix = NodeMatrix()
    infos = []
    for i, node_labels in enumerate(labels):
        raw = build_node(f"n{i}", {"cpu": "1"}, node_labels, taints=(taints[i] if taints else None))
        infos.append(NodeInfo(name=f"n{i}", matrix=matrix, row=matrix.add_row(), node=raw))
    return NodeIndex(infos)


@settings(max_examples=200, deadline=None)
@given(st.lists(LABELS, min_size=1, max_size=6), PREFERENCES)
def test_preferred_node_affinity_equals_reference(
    labels: list[dict[str, str]], preferred: list[dict[str, Any]]
) -> None:
    terms, _ = preferred_node_terms({"preferredDuringSchedulingIgnoredDuringExecution": preferred})
    index = _index(labels)
    vectorised = preferred_scores(terms, index)
    for row in range(index.size):
        assert vectorised[row] == preferred_score(terms, index.labels(row), index.name(row))


POD_LABELS = st.dictionaries(
    st.sampled_from(["app", "tier"]), st.sampled_from(["db", "web"]), max_size=2
)
WEIGHTED_TERMS = st.lists(
    st.builds(
        lambda weight, labels, key: {
            "weight": weight,
            "podAffinityTerm": {"labelSelector": {"matchLabels": labels}, "topologyKey": key},
        },
        st.integers(1, 10),
        POD_LABELS,
        st.sampled_from([HOSTNAME, "zone"]),
    ),
    max_size=2,
)
SECTIONS = st.one_of(
    st.none(),
    st.builds(
        lambda near, far: {
            "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": near},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": far},
        },
        WEIGHTED_TERMS,
        WEIGHTED_TERMS,
    ),
)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_pod_affinity_scores_equal_reference(data: st.DataObject) -> None:
    names = ["a1", "a2", "b1", "none"]
    zones = {"a1": "a", "a2": "a", "b1": "b"}
    objects: list[tuple[str, Mapping[str, Any]]] = [*base()]
    for name in names:
        labels = {HOSTNAME: name, **({"zone": zones[name]} if name in zones else {})}
        objects.append(("Node", _node(name, "8", "8Gi", labels)))
    for i in range(data.draw(st.integers(0, 5))):
        where = data.draw(st.sampled_from(names))
        objects.append(
            (
                "Pod",
                _pod(f"old{i}", where, labels=data.draw(POD_LABELS), affinity=data.draw(SECTIONS)),
            )
        )
    objects.append(("Pod", _pod("me", labels=data.draw(POD_LABELS), affinity=data.draw(SECTIONS))))
    ssn = make_session(objects, ALL_ZERO)
    pods = SessionPods(ssn)
    index = NodeIndex(ssn.node_list)
    state = AffinityTracker(pods, index).score_state(task_of(ssn, "me"))
    rows = np.arange(index.size, dtype=np.intp)
    vectorised = pod_affinity_scores(state, index, rows)
    for row in range(index.size):
        assert vectorised[row] == state.score(index.labels(row))


TAINT_POOL = (
    {"key": "a", "value": "1", "effect": "PreferNoSchedule"},
    {"key": "b", "value": "", "effect": "PreferNoSchedule"},
    {"key": "a", "value": "1", "effect": "NoSchedule"},
)
TOLERATION_POOL = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["", "a", "b"]),
            "operator": st.sampled_from(["", "Equal", "Exists"]),
            "value": st.sampled_from(["", "1"]),
            "effect": st.sampled_from(["", "PreferNoSchedule", "NoSchedule"]),
        }
    ),
    max_size=2,
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(TAINT_POOL), max_size=3), min_size=1, max_size=6),
    TOLERATION_POOL,
)
def test_taint_counts_equal_reference(
    taints: list[list[dict[str, str]]], tolerations: list[dict[str, str]]
) -> None:
    """Per-group counting (vectorised) equals counting node by node."""
    index = _index([{} for _ in taints], taints)
    pod = build_pod("ns", "p", "", "Pending", {}, "", tolerations=tolerations or None)
    task = TaskInfo.from_pod(pod)
    counts = StaticScores(index).intolerable_taints(task)
    narrowed = prefer_no_schedule_tolerations([Toleration.of(t) for t in tolerations])
    for row in range(index.size):
        assert counts[row] == intolerable_prefer_no_schedule(index.taints(row), narrowed)


def test_pod_topology_spread_worked_example() -> None:
    """The upstream case's arithmetic: 3 zones -> weight ln(5) = 1.609; matches 2, 1, 0 ->
    raw round(3.22) = 3, round(1.61) = 2, 0 -> 100 * (3 + 0 - s) / 3 = 0, 33, 100. A node
    without the zone label is ignored (0)."""
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "foo"}},
    }
    objects = [
        *base(),
        ("Node", _node("n1", "4", "4Gi", {"zone": "zone1"})),
        ("Node", _node("n2", "4", "4Gi", {"zone": "zone2"})),
        ("Node", _node("n3", "4", "4Gi", {"zone": "zone3"})),
        ("Node", _node("n4", "4", "4Gi")),
        ("Pod", _pod("p1", "n1", labels={"app": "foo"})),
        ("Pod", _pod("p2", "n1", labels={"app": "foo"})),
        ("Pod", _pod("p3", "n2", labels={"app": "foo"})),
        ("Pod", _spread_pod("p4", constraint)),
        ("Pod", _pod("plain")),
    ]
    ssn = make_session(objects, only(podtopologyspread=1))
    assert scores(ssn, "p4") == {"n1": 0.0, "n2": 33.0, "n3": 100.0, "n4": 0.0}
    assert scores(ssn, "plain") == {"n1": 0.0, "n2": 0.0, "n3": 0.0, "n4": 0.0}


SOFT_CONSTRAINT = st.fixed_dictionaries(
    {
        "maxSkew": st.integers(1, 3),
        "topologyKey": st.sampled_from(["zone", HOSTNAME]),
        "whenUnsatisfiable": st.just("ScheduleAnyway"),
        "labelSelector": st.sampled_from([{"matchLabels": {"app": "db"}}, {}]),
    },
    optional={
        "nodeAffinityPolicy": st.sampled_from(["Honor", "Ignore"]),
        "nodeTaintsPolicy": st.sampled_from(["Honor", "Ignore"]),
    },
)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_pod_topology_spread_scores_equal_reference(data: st.DataObject) -> None:
    names = [f"n{i}" for i in range(data.draw(st.integers(1, 5)))]
    objects: list[tuple[str, Mapping[str, Any]]] = [*base()]
    for name in names:
        node_labels = {HOSTNAME: name}
        if data.draw(st.booleans()):
            node_labels["zone"] = data.draw(st.sampled_from(["a", "b", "c"]))
        taints = (
            [{"key": "k", "value": "v", "effect": "NoSchedule"}]
            if data.draw(st.booleans())
            else None
        )
        objects.append(("Node", _node(name, "8", "8Gi", node_labels, taints=taints)))
    for i in range(data.draw(st.integers(0, 6))):
        where = data.draw(st.sampled_from(names))
        objects.append(("Pod", _pod(f"old{i}", where, labels=data.draw(POD_LABELS))))
    me = _pod("me", labels=data.draw(POD_LABELS))
    me["spec"]["topologySpreadConstraints"] = data.draw(
        st.lists(SOFT_CONSTRAINT, min_size=1, max_size=2)
    )
    if data.draw(st.booleans()):
        me["spec"]["nodeSelector"] = {"zone": "a"}
    objects.append(("Pod", me))
    ssn = make_session(objects, ALL_ZERO)
    index = NodeIndex(ssn.node_list)
    spread = TopologySpread(SessionPods(ssn), index)
    candidates = sorted(data.draw(st.sets(st.integers(0, len(names) - 1), min_size=1)))
    rows = np.array(candidates, dtype=np.intp)
    task = task_of(ssn, "me")
    views = [
        NodeView(
            n.name,
            n.labels,
            index.taints(n.row),
            tuple((t.namespace, t.pod) for t in n.tasks.values()),
        )
        for n in ssn.node_list
    ]
    expected = score_reference(task.pod, task.namespace, views, candidates)
    actual = spread.scores(task, rows)
    assert expected is not None and actual is not None
    assert [int(v) for v in actual] == expected
