"""The shared driver of gangpreempt / gangreclaim and each action's candidate filter and
arguments (``actions/gang_eviction.py``, ``gangpreempt.py``, ``gangreclaim.py``).

(Named ``..._driver`` because ``tests/scenarios/test_gang_eviction.py`` exists and the test
directories are not packages: two modules of one basename cannot both be collected.)

Upstream cases transcribed, each test naming its own:

* ``actions/utils/util_test.go``: ``TestGetCandidateDomains_EmptyGradient_*`` (2);
* ``actions/gangpreempt/gangpreempt_test.go``: ``TestPickDomainsFromGradients_*`` (2),
  ``TestParseArguments``, ``TestParseArguments_InvalidMaxDomainsFallsBackToDefault`` (zero,
  negative), ``TestSelectDomainVictims_*`` (3);
* ``actions/gangreclaim/gangreclaim_test.go``: the same shape, plus
  ``TestSelectDomainVictims_ReclaimableCrossQueueOnly``.

Upstream's ``selectDomainBundles`` is ``GangEviction.domain_bundles``; its sessions are bare
structs with a test plugin (``test-preempt`` / ``test-reclaim``) whose UnifiedEvictableFn
permits everything and the domain ``d1`` registered by hand in ``RealNodesList``. Here the same
cluster goes through builders -> cache -> a real session, the test plugin is a fake plugin and
``d1`` is a HyperNode holding ``n1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
)
from tests.builders import resource_list as rl
from tests.framework.fake_plugins import (
    PluginSpec,
    RecordingSink,
    builders_of,
    cache_of,
    conf_of,
    open_fake_session,
    plugin,
)
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.actions.gang_eviction import (
    DEFAULT_MAX_DOMAINS,
    GangEviction,
    candidate_domains,
    pick_domains,
)
from volcano_py.actions.gangpreempt import GangPreempt
from volcano_py.actions.gangreclaim import GangReclaim
from volcano_py.actions.victim_bundles import BundleType, flatten
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import PREEMPTABLE_KEY, TaskStatus
from volcano_py.framework.hooks import EvictionContext, EvictionKind
from volcano_py.framework.session import Session, open_session
from volcano_py.framework.statement import Op
from volcano_py.framework.topology import SearchPurpose

Objects = list[tuple[str, dict[str, Any]]]
ROOT = CLUSTER_TOP_HYPER_NODE


# ---------------------------------------------------------------------------- helpers


def permit_all(
    calls: list[EvictionContext] | None = None,
) -> Any:
    """Upstream's test plugin: permits every candidate (and records the context asked)."""

    def evictable(
        context: EvictionContext, candidates: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        if calls is not None:
            calls.append(context)
        return candidates, 1

    return evictable


def open_with(
    objects: Objects,
    tiers: Sequence[Sequence[PluginSpec]] = (),
    configurations: dict[str, dict[str, Any]] | None = None,
) -> Session:
    snapshot = cache_of(objects).snapshot()
    conf = conf_of(tiers)
    conf.configurations = dict(configurations or {})
    return open_session(snapshot, conf, builders_of(tiers), RecordingSink())


def priority_classes() -> Objects:
    return [
        ("PriorityClass", build_priority_class("p100", 100)),
        ("PriorityClass", build_priority_class("p10", 10)),
    ]


def group(
    name: str,
    queue: str,
    min_member: int,
    priority_class: str = "",
    preemptable: str | None = None,
    phase: str = "Running",
) -> tuple[str, dict[str, Any]]:
    annotations = {PREEMPTABLE_KEY: preemptable} if preemptable is not None else None
    pod_group = build_pod_group(
        name,
        "ns",
        queue,
        min_member,
        None,
        phase,
        priority_class_name=priority_class,
        annotations=annotations,
    )
    return ("PodGroup", pod_group)


def pod(name: str, group_name: str, node_name: str = "", phase: str = "Pending") -> Any:
    """Upstream ``testTask``: 1 CPU, preemptable."""
    return ("Pod", build_pod("ns", name, node_name, phase, rl("1", "1Gi"), group_name))


def cluster(*objects: tuple[str, dict[str, Any]], queues: Sequence[dict[str, Any]] = ()) -> Objects:
    """Node n1 (4 CPUs) in HyperNode d1, queue q1 and ``queues``, the priority classes."""
    base: Objects = [
        ("Node", build_node("n1", rl("4", "8Gi", pods="10"))),
        ("HyperNode", build_hyper_node("d1", 1, ["n1"])),
        ("Queue", build_queue("q1")),
        *[("Queue", queue) for queue in queues],
        *priority_classes(),
    ]
    return base + list(objects)


def start(action: GangEviction, ssn: Session) -> GangEviction:
    """The per-run state ``execute`` sets up before its first job, without running it."""
    action.begin(ssn)
    return action


def victims_of(action: GangEviction, ssn: Session, preemptor: str, where: str = "d1") -> list[str]:
    """``FlattenBundles(selectDomainBundles(...))``: the victims' pod names, in order."""
    start(action, ssn)
    job = ssn.jobs[preemptor]
    need = Resource()
    for task in job.tasks_in(TaskStatus.PENDING).values():
        need.add(task.init_resreq)
    return [task.name for task in flatten(action.domain_bundles(ssn, job, need, where))]


def tiers_with(name: str, calls: list[EvictionContext] | None = None) -> list[list[PluginSpec]]:
    return [[plugin(name, unified_evictable=permit_all(calls))]]


# ---------------------------------------------------------------------------- domains


def test_pick_domains_max_domains_and_dedup_gangpreempt_upstream() -> None:
    """gangpreempt ``TestPickDomainsFromGradients_MaxDomainsAndDedup``: capped at 2."""
    gradients = [["d1", "d2"], ["d2", "d3"]]
    assert pick_domains(gradients, 2, "") == ["d1", "d2"]


def test_pick_domains_max_domains_and_dedup_gangreclaim_upstream() -> None:
    """gangreclaim ``TestPickDomainsFromGradients_MaxDomainsAndDedup``: capped at 3, d2
    once."""
    gradients = [["d1", "d2"], ["d2", "d3"]]
    assert pick_domains(gradients, 3, "") == ["d1", "d2", "d3"]


@pytest.mark.parametrize(
    "gradients",
    [
        pytest.param([], id="gangpreempt: nil gradients"),
        pytest.param([[]], id="gangreclaim: empty gradients"),
    ],
)
def test_pick_domains_fallback_upstream(gradients: list[list[str]]) -> None:
    """``TestPickDomainsFromGradients_Fallback`` (gangpreempt with nil, gangreclaim with an
    empty gradient list)."""
    assert pick_domains(gradients, 8, ROOT) == [ROOT]


def test_pick_domains_without_cap_or_fallback() -> None:
    """``maxDomains <= 0`` means no cap; no names and no fallback gives no domain."""
    assert pick_domains([["a"], ["b", "a", "c"]], 0, ROOT) == ["a", "b", "c"]
    assert pick_domains([], 8, "") == []


def empty_gradient_tiers() -> list[list[PluginSpec]]:
    """Upstream's ``test-empty-gradient`` plugin: a job gradient that names nothing."""
    return [
        [
            plugin(
                "test-empty-gradient",
                "enabledHyperNodeGradient",
                hyper_node_gradient_for_job=lambda job, hyper_node, purpose: [],
            )
        ]
    ]


def test_get_candidate_domains_empty_gradient_hard_topology_no_fallback_upstream() -> None:
    """``TestGetCandidateDomains_EmptyGradient_HardTopologyNoFallback``: a hard-topology job
    never falls back to the whole cluster."""
    ssn = open_fake_session(empty_gradient_tiers())
    job = JobInfo(uid="", network_topology={"mode": "hard", "highestTierAllowed": 1})
    assert candidate_domains(ssn, job, 8) == []


def test_get_candidate_domains_empty_gradient_non_hard_topology_fallback_to_root_upstream() -> None:
    """``TestGetCandidateDomains_EmptyGradient_NonHardTopologyFallbackToRoot``."""
    ssn = open_fake_session(empty_gradient_tiers())
    assert candidate_domains(ssn, JobInfo(uid=""), 8) == [ROOT]


def test_get_candidate_domains_asks_the_gradient_for_eviction() -> None:
    """The gradient is asked for the job, from the virtual root, with purpose Evict; its
    answer is flattened and capped."""
    asked: list[tuple[str, str, SearchPurpose]] = []

    def gradient(job: JobInfo, hyper_node: str, purpose: SearchPurpose) -> list[list[str]]:
        asked.append((job.uid, hyper_node, purpose))
        return [["leaf-0", "leaf-1"], ["spine"]]

    tiers = [[plugin("g", "enabledHyperNodeGradient", hyper_node_gradient_for_job=gradient)]]
    ssn = open_fake_session(tiers)
    assert candidate_domains(ssn, JobInfo(uid="j"), 2) == ["leaf-0", "leaf-1"]
    assert asked == [("j", ROOT, SearchPurpose.EVICT)]


# ---------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("action", "max_domains"),
    [
        pytest.param(GangPreempt, 3, id="gangpreempt"),
        pytest.param(GangReclaim, 5, id="gangreclaim"),
    ],
)
def test_parse_arguments_upstream(action: type[GangEviction], max_domains: int) -> None:
    """``TestParseArguments`` (gangpreempt: maxDomains 3, gangreclaim: 5; both
    allowWholeBundle false)."""
    ssn = open_with(
        [],
        configurations={action.name: {"maxDomains": max_domains, "allowWholeBundle": False}},
    )
    instance = action()
    instance.parse_arguments(ssn)
    assert instance.max_domains == max_domains
    assert instance.allow_whole_bundle is False


@pytest.mark.parametrize("action", [GangPreempt, GangReclaim], ids=lambda a: a.name)
@pytest.mark.parametrize("value", [pytest.param(0, id="zero"), pytest.param(-1, id="negative")])
def test_parse_arguments_invalid_max_domains_falls_back_to_default_upstream(
    action: type[GangEviction], value: int
) -> None:
    """``TestParseArguments_InvalidMaxDomainsFallsBackToDefault`` (zero, negative)."""
    ssn = open_with([], configurations={action.name: {"maxDomains": value}})
    instance = action()
    instance.parse_arguments(ssn)
    assert instance.max_domains == DEFAULT_MAX_DOMAINS == 8


@pytest.mark.parametrize("action", [GangPreempt, GangReclaim], ids=lambda a: a.name)
def test_parse_arguments_defaults_and_allocate_error_cache(action: type[GangEviction]) -> None:
    """Unset: 8 domains, whole bundles allowed, allocate's predicate error cache on; the dry
    run follows allocate's ``predicateErrorCacheEnable``."""
    instance = action()
    instance.parse_arguments(open_with([]))
    assert (instance.max_domains, instance.allow_whole_bundle, instance.error_cache) == (
        8,
        True,
        True,
    )
    ssn = open_with([], configurations={"allocate": {"predicateErrorCacheEnable": False}})
    instance.parse_arguments(ssn)
    assert instance.error_cache is False


# ---------------------------------------------------------------------------- gangpreempt


def preempt_cluster(victim_min_member: int = 1, preemptable: str | None = None) -> Objects:
    """Preemptor ``ns/preemptor`` (priority 100, pending) and victim ``ns/victim`` (priority
    10, one task running on n1), both in q1."""
    return cluster(
        group("preemptor", "q1", 1, "p100", phase="Inqueue"),
        pod("preemptor", "preemptor"),
        group("victim", "q1", victim_min_member, "p10", preemptable),
        pod("victim", "victim", "n1", "Running"),
    )


def test_gangpreempt_select_domain_victims_respect_allow_whole_bundle_upstream() -> None:
    """gangpreempt ``TestSelectDomainVictims_RespectAllowWholeBundle``: the victim job has
    minAvailable 1 and one running task, so its only bundle is whole."""
    ssn = open_with(preempt_cluster(1, "true"), tiers_with("test-preempt"))
    action = GangPreempt()
    action.allow_whole_bundle = False
    assert victims_of(action, ssn, "ns/preemptor") == []
    action.allow_whole_bundle = True
    assert victims_of(action, ssn, "ns/preemptor") == ["victim"]


def test_gangpreempt_select_domain_victims_respect_victim_job_preemptable_upstream() -> None:
    """gangpreempt ``TestSelectDomainVictims_RespectVictimJobPreemptable``: the victim's
    PodGroup says ``volcano.sh/preemptable: false``."""
    ssn = open_with(preempt_cluster(1, "false"), tiers_with("test-preempt"))
    assert ssn.jobs["ns/victim"].preemptable is False
    assert victims_of(GangPreempt(), ssn, "ns/preemptor") == []


def test_gangpreempt_select_domain_victims_allow_when_preemptable_unset_upstream() -> None:
    """gangpreempt ``TestSelectDomainVictims_AllowVictimJobWhenPreemptableUnset``: no
    ``volcano.sh/preemptable`` on the PodGroup (the job reads not preemptable, the task-level
    default) still allows it for the gang actions."""
    ssn = open_with(preempt_cluster(1), tiers_with("test-preempt"))
    assert ssn.jobs["ns/victim"].preemptable is False
    assert victims_of(GangPreempt(), ssn, "ns/preemptor") == ["victim"]


def test_gangpreempt_candidates_are_lower_priority_same_queue_other_jobs() -> None:
    """``selectDomainBundles``' filter: Bound/Running and preemptable tasks, of another job of
    the same queue with a strictly lower priority. (Victim order: ``victim`` before ``bound``,
    the job served last first: same priority, so by UID.)"""
    objects = cluster(
        group("preemptor", "q1", 1, "p100", phase="Inqueue"),
        pod("preemptor", "preemptor"),
        pod("preemptor-running", "preemptor", "n1", "Running"),
        group("equal", "q1", 1, "p100"),
        pod("equal", "equal", "n1", "Running"),
        group("elsewhere", "q2", 1, "p10"),
        pod("elsewhere", "elsewhere", "n1", "Running"),
        group("victim", "q1", 1, "p10"),
        pod("victim", "victim", "n1", "Running"),
        group("bound", "q1", 1, "p10"),
        pod("bound", "bound", "n1", "Pending"),
        queues=[build_queue("q2")],
    )
    not_preemptable = build_pod("ns", "pinned", "n1", "Running", rl("1", "1Gi"), "victim")
    not_preemptable["metadata"]["annotations"][PREEMPTABLE_KEY] = "false"
    objects.append(("Pod", not_preemptable))
    ssn = open_with(objects, tiers_with("test-preempt"))
    assert ssn.jobs["ns/bound"].tasks["ns-bound"].status is TaskStatus.BOUND
    assert victims_of(GangPreempt(), ssn, "ns/preemptor") == ["victim", "bound"]


def test_gangpreempt_domain_bundles_ask_the_plugins_with_the_domain() -> None:
    """The plugins are asked once per domain with the gangpreempt context (the preemptor job
    and the domain), and only what they allow stays: the whole bundle, all or nothing."""
    calls: list[EvictionContext] = []
    ssn = open_with(preempt_cluster(1), tiers_with("test-preempt", calls))
    assert victims_of(GangPreempt(), ssn, "ns/preemptor") == ["victim"]
    assert [(c.kind, c.job.uid, c.hyper_node) for c in calls] == [
        (EvictionKind.GANG_PREEMPT, "ns/preemptor", "d1")
    ]

    def refuse(context: EvictionContext, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        return [], 1

    ssn = open_with(preempt_cluster(1), [[plugin("no", unified_evictable=refuse)]])
    assert victims_of(GangPreempt(), ssn, "ns/preemptor") == []


def test_gangpreempt_safe_bundles_come_before_whole_ones() -> None:
    """A victim job with a surplus over its gang gives its surplus as a safe bundle, taken
    before any whole one; whole bundles then go in victim job order (the job served last,
    here ``rigid`` by UID, first) before return on investment (``elastic``'s whole bundle
    frees 1 CPU of the 2 its job loses, ``rigid``'s 1 of 1)."""
    objects = cluster(
        group("preemptor", "q1", 1, "p100", phase="Inqueue"),
        pod("preemptor", "preemptor"),
        group("elastic", "q1", 1, "p10"),
        pod("elastic-0", "elastic", "n1", "Running"),
        pod("elastic-1", "elastic", "n1", "Running"),
        group("rigid", "q1", 1, "p10"),
        pod("rigid-0", "rigid", "n1", "Running"),
    )
    ssn = open_with(objects, tiers_with("test-preempt"))
    preemptor = ssn.jobs["ns/preemptor"]
    action = start(GangPreempt(), ssn)
    bundles = action.domain_bundles(ssn, preemptor, Resource(milli_cpu=1000), "d1")
    assert [(b.type, b.job.uid) for b in bundles] == [
        (BundleType.SAFE, "ns/elastic"),
        (BundleType.WHOLE, "ns/rigid"),
        (BundleType.WHOLE, "ns/elastic"),
    ]


# ---------------------------------------------------------------------------- gangreclaim


def reclaim_queues() -> list[dict[str, Any]]:
    return [build_queue("q2", reclaimable=True), build_queue("q3", reclaimable=False)]


def reclaim_cluster(*victims: tuple[str, dict[str, Any]]) -> Objects:
    """Reclaimer ``ns/reclaimer`` (pending, q1), q2 reclaimable, q3 not, and ``victims``."""
    return cluster(
        group("reclaimer", "q1", 1, phase="Inqueue"),
        pod("reclaimer", "reclaimer"),
        *victims,
        queues=reclaim_queues(),
    )


def test_gangreclaim_select_domain_victims_reclaimable_cross_queue_only_upstream() -> None:
    """gangreclaim ``TestSelectDomainVictims_ReclaimableCrossQueueOnly``: the victim in the
    reclaimable q2 is a candidate, the one in q3 (reclaimable: false) is not."""
    ssn = open_with(
        reclaim_cluster(
            group("victim", "q2", 1, preemptable="true"),
            pod("victim", "victim", "n1", "Running"),
            group("other", "q3", 1, preemptable="true"),
            pod("other", "other", "n1", "Running"),
        ),
        tiers_with("test-reclaim"),
    )
    action = GangReclaim()
    action.allow_whole_bundle = True
    assert victims_of(action, ssn, "ns/reclaimer") == ["victim"]


def test_gangreclaim_select_domain_victims_respect_victim_job_preemptable_upstream() -> None:
    """gangreclaim ``TestSelectDomainVictims_RespectVictimJobPreemptable``."""
    ssn = open_with(
        reclaim_cluster(
            group("victim", "q2", 1, preemptable="false"),
            pod("victim", "victim", "n1", "Running"),
        ),
        tiers_with("test-reclaim"),
    )
    assert victims_of(GangReclaim(), ssn, "ns/reclaimer") == []


def test_gangreclaim_select_domain_victims_allow_when_preemptable_unset_upstream() -> None:
    """gangreclaim ``TestSelectDomainVictims_AllowVictimJobWhenPreemptableUnset``."""
    ssn = open_with(
        reclaim_cluster(
            group("victim", "q2", 1),
            pod("victim", "victim", "n1", "Running"),
        ),
        tiers_with("test-reclaim"),
    )
    assert ssn.jobs["ns/victim"].preemptable is False
    assert victims_of(GangReclaim(), ssn, "ns/reclaimer") == ["victim"]


def test_gangreclaim_candidates_are_running_tasks_of_other_queues() -> None:
    """Only Running tasks (not Bound ones, unlike gangpreempt) of jobs in another queue; the
    reclaimer's own queue is never a victim, whatever the priorities; the context says
    gangreclaim."""
    calls: list[EvictionContext] = []
    ssn = open_with(
        reclaim_cluster(
            group("same-queue", "q1", 1, "p10"),
            pod("same-queue", "same-queue", "n1", "Running"),
            group("bound", "q2", 1),
            pod("bound", "bound", "n1", "Pending"),
            group("victim", "q2", 1, "p100"),
            pod("victim", "victim", "n1", "Running"),
        ),
        tiers_with("test-reclaim", calls),
    )
    assert ssn.jobs["ns/bound"].tasks["ns-bound"].status is TaskStatus.BOUND
    assert victims_of(GangReclaim(), ssn, "ns/reclaimer") == ["victim"]
    assert [(c.kind, c.hyper_node) for c in calls] == [(EvictionKind.GANG_RECLAIM, "d1")]


def test_gangreclaim_overused_queue_does_not_act_and_preemptive_gates() -> None:
    """``Execute`` skips an overused queue; ``reclaimJobInDomains`` asks ``Preemptive`` for
    the job's pending tasks."""
    overused = {"q1"}
    tiers = [
        [
            plugin(
                "quota",
                "enabledOverused",
                "enablePreemptive",
                overused=lambda queue: queue.name in overused,
                preemptive=lambda queue, tasks: len(tasks) == 1,
            )
        ]
    ]
    ssn = open_with(reclaim_cluster(), tiers)
    action = GangReclaim()
    q1 = ssn.queues["q1"]
    pending = list(ssn.jobs["ns/reclaimer"].tasks.values())
    assert action.may_act(ssn, q1) is False
    overused.clear()
    assert action.may_act(ssn, q1) is True
    assert action.may_evict_for(ssn, q1, pending) is True
    assert action.may_evict_for(ssn, q1, pending * 2) is False


# ---------------------------------------------------------------------------- the driver


def test_evict_for_job_takes_bundles_until_the_domain_has_room() -> None:
    """``preemptJobInDomains``: bundles are added until idle + releasing + victims cover the
    job's need, then the dry run decides; its plan lands in the job's statement."""
    objects: Objects = [
        ("Node", build_node("n1", rl("2", "8Gi", pods="10"))),
        ("HyperNode", build_hyper_node("d1", 1, ["n1"])),
        ("Queue", build_queue("q1")),
        *priority_classes(),
        group("preemptor", "q1", 2, "p100", phase="Inqueue"),
        pod("preemptor-0", "preemptor"),
        pod("preemptor-1", "preemptor"),
        group("a", "q1", 1, "p10"),
        pod("a", "a", "n1", "Running"),
        group("b", "q1", 1, "p10"),
        pod("b", "b", "n1", "Running"),
    ]
    ssn = open_with(objects, tiers_with("test-preempt"))
    statement = ssn.statement()
    job = ssn.jobs["ns/preemptor"]
    action = start(GangPreempt(), ssn)
    assert action.evict_for_job(ssn, statement, ssn.queues["q1"], job) is True
    evicted = sorted(op.task.name for op in statement.operations if op.op is Op.EVICT)
    pipelined = sorted(op.task.name for op in statement.operations if op.op is Op.PIPELINE)
    assert evicted == ["a", "b"]
    assert pipelined == ["preemptor-0", "preemptor-1"]
    assert len(job.tasks_in(TaskStatus.PIPELINED)) == 2
    statement.discard()
    assert len(job.tasks_in(TaskStatus.PENDING)) == 2


def test_evict_for_job_leaves_nothing_when_no_domain_works() -> None:
    """The domain cannot hold the job even with every victim gone: nothing is applied."""
    objects = cluster(
        group("preemptor", "q1", 5, "p100", phase="Inqueue"),
        *[pod(f"preemptor-{i}", "preemptor") for i in range(5)],
        group("victim", "q1", 1, "p10"),
        pod("victim", "victim", "n1", "Running"),
    )
    ssn = open_with(objects, tiers_with("test-preempt"))
    statement = ssn.statement()
    job = ssn.jobs["ns/preemptor"]
    action = start(GangPreempt(), ssn)
    assert action.evict_for_job(ssn, statement, ssn.queues["q1"], job) is False
    assert statement.operations == []
    assert ssn.jobs["ns/victim"].tasks["ns-victim"].status is TaskStatus.RUNNING
