"""The dry run of gangpreempt / gangreclaim (``actions/nomination_plan.py``).

Upstream ``pkg/scheduler/actions/utils/simulate_test.go`` transcribed case by case. Upstream
builds bare ``framework.Session`` structs with no plugins; here a real session is opened over
the same cluster (builders -> cache -> snapshot) with no plugin either, so JobReady and
JobPipelined answer yes, Allocatable lets everything through and only room decides. Upstream
registers the domain by hand in ``RealNodesList``; here it is a HyperNode object (or the
virtual root, ``<cluster-top-hypernode>``, which holds every node).

The two worksheet cases with several sub-jobs of one job build them from a ``subGroupPolicy``
whose label values give upstream's ``MatchIndex`` (1 and 2); no plugin orders sub-jobs, so the
fallback order (match index, then UID) decides, as upstream's bare session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_queue,
    build_sub_group_policy,
)
from tests.builders import resource_list as rl
from tests.framework.fake_plugins import PluginSpec, cache_of, open_fake_session
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.actions.nomination_plan import (
    build_nomination_plan,
    pending_tasks_for_gang_eviction,
)
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.types import TaskStatus
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.node_selection import prioritize_nodes
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Op

# ---------------------------------------------------------------------------- helpers

Objects = list[tuple[str, dict[str, Any]]]


def node(name: str, cores: str) -> tuple[str, dict[str, Any]]:
    return ("Node", build_node(name, rl(cores, "8Gi", pods="10")))


def job(name: str, *pods: dict[str, Any], phase: str = "Inqueue") -> Objects:
    """PodGroup ``ns/<name>`` (queue q1, minMember 1) and its pods."""
    return [("PodGroup", build_pod_group(name, "ns", "q1", 1, None, phase))] + [
        ("Pod", pod) for pod in pods
    ]


def pending(name: str, group: str, nominated: str = "") -> dict[str, Any]:
    """A pending 1-CPU pod (upstream ``makeTask``), with a NominatedNodeName if given."""
    pod = build_pod("ns", name, "", "Pending", rl("1", "1Gi"), group)
    if nominated:
        pod["status"]["nominatedNodeName"] = nominated
    return pod


def running(name: str, group: str, node_name: str, cores: str = "1") -> dict[str, Any]:
    return build_pod("ns", name, node_name, "Running", rl(cores, "1Gi"), group)


def releasing(name: str, node_name: str, cores: str) -> dict[str, Any]:
    pod = build_pod("ns", name, node_name, "Running", rl(cores, "1Gi"), "")
    pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return pod


def domain(name: str, nodes: Sequence[str]) -> tuple[str, dict[str, Any]]:
    return ("HyperNode", build_hyper_node(name, 1, nodes))


def open_plain_session(objects: Objects, tiers: Sequence[Sequence[PluginSpec]] = ()) -> Session:
    """A session over ``objects`` plus queue q1, with only the given (fake) plugins."""
    cache = cache_of([("Queue", build_queue("q1")), *objects])
    return open_fake_session(tiers, cache.snapshot())


def plan_for(ssn: Session, job_id: str, where: str, victims: Sequence[str] = ()) -> Any:
    target = ssn.jobs[job_id]
    chosen = [
        task for job in ssn.jobs.values() for task in job.tasks.values() if task.uid in victims
    ]
    return build_nomination_plan(ssn, ssn.queues["q1"], target, where, chosen, "test", True)


def replayed_on(ssn: Session, plan: Any, task_uid: str) -> str:
    """Replay ``plan`` (upstream ``stmt.RecoverOperations(plan)``) and say which node now holds
    ``task_uid``."""
    statement = ssn.statement()
    statement.recover_operations(plan.operations)
    holders = [name for name, info in ssn.nodes.items() if f"ns/{task_uid}" in info.tasks]
    assert len(holders) == 1, holders
    return holders[0]


# ---------------------------------------------------------------------------- guards


def test_build_nomination_plan_guards_upstream() -> None:
    """``TestBuildNominationPlanInDomain_Guards``: no domain (here: a HyperNode the session
    does not know, so no nodes) gives no plan, and the session is untouched."""
    ssn = open_plain_session([node("n1", "2"), *job("guard-job", pending("t1", "guard-job"))])
    assert plan_for(ssn, "ns/guard-job", "no-such-hyper-node") is None
    assert plan_for(ssn, "ns/guard-job", "") is None
    assert len(ssn.jobs["ns/guard-job"].tasks_in(TaskStatus.PENDING)) == 1


def test_collect_pending_tasks_empty_worksheet_returns_nil_upstream() -> None:
    """``TestCollectPendingTasksForJobStartup_EmptyWorksheetReturnsNil``: a job with no tasks
    has nothing pending, and no plan."""
    ssn = open_plain_session([node("n1", "2"), *job("empty-ws")])
    target = ssn.jobs["ns/empty-ws"]
    assert pending_tasks_for_gang_eviction(ssn, target) == []
    assert plan_for(ssn, "ns/empty-ws", CLUSTER_TOP_HYPER_NODE) is None


def sub_grouped_job(name: str, phase: str = "Inqueue") -> Objects:
    """Two sub-jobs of one policy: t1 (label idx=1, match index 1) and t2 (idx=2)."""
    group = build_pod_group(
        name,
        "ns",
        "q1",
        1,
        None,
        phase,
        sub_group_policy=[build_sub_group_policy("g1", ["idx"])],
    )
    late = build_pod("ns", "t2", "", "Pending", rl("1", "1Gi"), name, {"idx": "2"})
    early = build_pod("ns", "t1", "", "Pending", rl("1", "1Gi"), name, {"idx": "1"})
    return [("PodGroup", group), ("Pod", late), ("Pod", early)]


def test_collect_pending_tasks_for_job_startup_worksheet_order_upstream() -> None:
    """``TestCollectPendingTasksForJobStartup_WorksheetOrder``: a job not yet ready gets every
    sub-job's pending tasks, the sub-jobs in worksheet order (match index 1 before 2)."""
    # minMember 2 with one pod placed nowhere: the job is not ready.
    objects = sub_grouped_job("startup-pending")
    objects[0][1]["spec"]["minMember"] = 2
    ssn = open_plain_session(
        [node("n1", "2"), *objects],
        [[PluginSpec("gang-like", ("enableJobReady",), {"job_ready": lambda job: job.is_ready()})]],
    )
    target = ssn.jobs["ns/startup-pending"]
    assert [task.name for task in pending_tasks_for_gang_eviction(ssn, target)] == ["t1", "t2"]


def test_collect_pending_tasks_for_running_job_first_worksheet_sub_job_only_upstream() -> None:
    """``TestCollectPendingTasksForRunningJob_FirstWorksheetSubJobOnly``: a ready job (no
    plugin says otherwise) grows by its first sub-job only."""
    ssn = open_plain_session([node("n1", "2"), *sub_grouped_job("running-subjob")])
    target = ssn.jobs["ns/running-subjob"]
    assert [task.name for task in pending_tasks_for_gang_eviction(ssn, target)] == ["t1"]


def test_collect_pending_tasks_skips_gated_and_best_effort() -> None:
    """``organizeEvictionWorksheet``: scheduling-gated and best-effort pending tasks are not
    placed by the dry run (a best-effort task needs no room)."""
    gated = pending("gated", "mixed")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    best_effort = build_pod("ns", "be", "", "Pending", {}, "mixed")
    ssn = open_plain_session(
        [node("n1", "2"), *job("mixed", pending("t1", "mixed"), gated, best_effort)]
    )
    names = [task.name for task in pending_tasks_for_gang_eviction(ssn, ssn.jobs["ns/mixed"])]
    assert names == ["t1"]


# ---------------------------------------------------------------------------- plans


def test_build_nomination_plan_success_upstream() -> None:
    """``TestBuildNominationPlanInDomain_Success``: room on n1, no victims: one pipeline."""
    ssn = open_plain_session([node("n1", "2"), *job("job2", pending("t1", "job2"))])
    plan = plan_for(ssn, "ns/job2", CLUSTER_TOP_HYPER_NODE)
    assert plan is not None
    assert [op.op for op in plan.operations] == [Op.PIPELINE]
    assert plan.hyper_nodes == {"ns/job2": CLUSTER_TOP_HYPER_NODE}
    # The dry run left the session as it found it.
    assert len(ssn.jobs["ns/job2"].tasks_in(TaskStatus.PENDING)) == 1
    assert ssn.nodes["n1"].tasks == {}


def test_build_nomination_plan_with_victim_includes_evict_and_pipeline_upstream() -> None:
    """``TestBuildNominationPlanInDomain_WithVictimIncludesEvictAndPipeline``: a victim on n1
    (3 CPUs, 1 used): the plan evicts it, then pipelines t1."""
    ssn = open_plain_session(
        [
            node("n1", "3"),
            *job("job4", pending("t1", "job4")),
            *job("victim-job", running("v1", "victim-job", "n1"), phase="Running"),
        ]
    )
    plan = plan_for(ssn, "ns/job4", CLUSTER_TOP_HYPER_NODE, ["ns-v1"])
    assert plan is not None
    assert [op.op for op in plan.operations] == [Op.EVICT, Op.PIPELINE]
    assert plan.operations[0].reason == "test"
    # ... and the eviction was undone.
    assert ssn.jobs["ns/victim-job"].tasks["ns-v1"].status is TaskStatus.RUNNING
    assert ssn.nodes["n1"].tasks["ns/v1"].status is TaskStatus.RUNNING


def test_build_nomination_plan_no_feasible_node_upstream() -> None:
    """``TestBuildNominationPlanInDomain_NoFeasibleNode``: n1 has no idle room: no plan."""
    ssn = open_plain_session(
        [
            node("n1", "1"),
            *job("job3", pending("t1", "job3")),
            *job("busy", running("b1", "busy", "n1"), phase="Running"),
        ]
    )
    assert plan_for(ssn, "ns/job3", CLUSTER_TOP_HYPER_NODE) is None
    assert len(ssn.jobs["ns/job3"].tasks_in(TaskStatus.PENDING)) == 1


def test_build_nomination_plan_pipeline_failure_rolls_back_eviction_upstream() -> None:
    """``TestBuildNominationPlanInDomain_PipelineFailureRollsBackEviction``: the pipeline of
    t1 fails after the victim was evicted; the dry run undoes the eviction. Upstream makes
    ``Statement.Pipeline`` fail with a domain node missing from the session, which a HyperNode
    here cannot have; a plugin vetoing t1's placement (an allocate event error) makes the same
    ``Pipeline`` call fail."""

    def veto(event: Event) -> None:
        if event.task.uid == "ns-t1":
            event.error = "vetoed by test"

    spec = PluginSpec("veto", handlers=[EventHandler(allocate=veto)])
    ssn = open_plain_session(
        [
            node("n1", "2"),
            *job("job-pipeline-fail", pending("t1", "job-pipeline-fail")),
            *job("victim-job-fail", running("v1", "victim-job-fail", "n1"), phase="Running"),
            domain("sim-domain", ["n1"]),
        ],
        [[spec]],
    )
    assert plan_for(ssn, "ns/job-pipeline-fail", "sim-domain", ["ns-v1"]) is None
    n1 = ssn.nodes["n1"]
    assert list(n1.tasks) == ["ns/v1"]
    assert n1.tasks["ns/v1"].status is TaskStatus.RUNNING
    assert ssn.jobs["ns/victim-job-fail"].tasks["ns-v1"].status is TaskStatus.RUNNING
    target = ssn.jobs["ns/job-pipeline-fail"]
    assert target.tasks["ns-t1"].node_name == ""
    assert len(target.tasks_in(TaskStatus.PENDING)) == 1
    assert len(target.tasks_in(TaskStatus.PIPELINED)) == 0
    assert np.array_equal(
        ssn.matrix.idle[n1.row], ssn.matrix.allocatable[n1.row] - ssn.matrix.used[n1.row]
    )


def test_build_nomination_plan_prefers_idle_node_over_future_idle_upstream() -> None:
    """``TestBuildNominationPlanInDomain_PrefersIdleNodeOverFutureIdle``: n-future frees 2
    CPUs once a releasing pod leaves, n-idle has them now: the plan uses n-idle."""
    ssn = open_plain_session(
        [
            node("n-future", "2"),
            node("n-idle", "2"),
            ("Pod", releasing("leaving", "n-future", "2")),
            *job("job5", pending("t1", "job5")),
            domain("sim-domain", ["n-future", "n-idle"]),
        ]
    )
    plan = plan_for(ssn, "ns/job5", "sim-domain")
    assert plan is not None
    assert replayed_on(ssn, plan, "t1") == "n-idle"


# ---------------------------------------------------------------------------- nominated hints


def test_build_nomination_plan_nominated_hint_does_not_short_circuit_predicate_upstream() -> None:
    """``TestBuildNominationPlanInDomain_NominatedHintDoesNotShortCircuitPredicate``: the
    pod's NominatedNodeName is no fast path; the task lands on exactly one of the domain's
    nodes, whichever the predicates and scores pick."""
    ssn = open_plain_session(
        [
            node("n-nominated", "2"),
            node("n-other", "3"),
            *job("job-nominated", pending("t1", "job-nominated", nominated="n-nominated")),
            domain("sim-domain", ["n-other", "n-nominated"]),
        ]
    )
    plan = plan_for(ssn, "ns/job-nominated", "sim-domain")
    assert plan is not None
    assert replayed_on(ssn, plan, "t1") in ("n-nominated", "n-other")


def test_build_nomination_plan_ignores_nominated_node_outside_domain_upstream() -> None:
    """``TestBuildNominationPlanInDomain_IgnoresNominatedNodeOutsideDomain``."""
    ssn = open_plain_session(
        [
            node("n-nominated", "2"),
            node("n-domain", "2"),
            *job(
                "job-nominated-outside-domain",
                pending("t1", "job-nominated-outside-domain", nominated="n-nominated"),
            ),
            domain("sim-domain", ["n-domain"]),
        ]
    )
    plan = plan_for(ssn, "ns/job-nominated-outside-domain", "sim-domain")
    assert plan is not None
    assert replayed_on(ssn, plan, "t1") == "n-domain"


def test_build_nomination_plan_fallback_when_nominated_missing_upstream() -> None:
    """``TestBuildNominationPlanInDomain_FallbackWhenNominatedMissing``: the nominated node
    does not exist."""
    ssn = open_plain_session(
        [
            node("n1", "2"),
            *job("job-nominated-fallback", pending("t1", "job-nominated-fallback", "n-missing")),
        ]
    )
    plan = plan_for(ssn, "ns/job-nominated-fallback", CLUSTER_TOP_HYPER_NODE)
    assert plan is not None
    assert replayed_on(ssn, plan, "t1") == "n1"


def test_build_nomination_plan_fallback_when_nominated_infeasible_upstream() -> None:
    """``TestBuildNominationPlanInDomain_FallbackWhenNominatedInfeasible``: the nominated node
    has no room (neither idle nor releasing)."""
    ssn = open_plain_session(
        [
            node("n-nominated", "1"),
            node("n-other", "2"),
            *job("busy", running("b1", "busy", "n-nominated"), phase="Running"),
            *job(
                "job-nominated-infeasible",
                pending("t1", "job-nominated-infeasible", nominated="n-nominated"),
            ),
            domain("sim-domain", ["n-nominated", "n-other"]),
        ]
    )
    plan = plan_for(ssn, "ns/job-nominated-infeasible", "sim-domain")
    assert plan is not None
    assert replayed_on(ssn, plan, "t1") == "n-other"


# ---------------------------------------------------------------------------- best node


def rows_of(ssn: Session, *names: str) -> Any:
    return np.array([ssn.nodes[name].row for name in names], dtype=np.intp)


def test_pick_best_node_for_task_prefers_idle_group_upstream() -> None:
    """``TestPickBestNodeForTask_PrefersIdleGroup`` (``prioritizeNodesForSimulate``): a node
    where the task fits now beats one where it fits once releasing pods leave."""
    ssn = open_plain_session(
        [
            node("n-idle", "2"),
            node("n-future", "3"),
            ("Pod", releasing("leaving", "n-future", "3")),
            *job("job6", pending("t1", "job6")),
        ]
    )
    task = ssn.jobs["ns/job6"].tasks["ns-t1"]
    best = prioritize_nodes(ssn, task, rows_of(ssn, "n-future", "n-idle"))
    assert best is not None and best.name == "n-idle"


def test_pick_best_node_for_task_falls_back_future_idle_group_upstream() -> None:
    """``TestPickBestNodeForTask_FallsBackFutureIdleGroup``."""
    ssn = open_plain_session(
        [
            node("n-future", "2"),
            ("Pod", releasing("leaving", "n-future", "2")),
            *job("job7", pending("t1", "job7")),
        ]
    )
    task = ssn.jobs["ns/job7"].tasks["ns-t1"]
    best = prioritize_nodes(ssn, task, rows_of(ssn, "n-future"))
    assert best is not None and best.name == "n-future"
