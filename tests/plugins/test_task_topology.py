"""task-topology plugin (``pkg/scheduler/plugins/task-topology``).

Transcribed from upstream ``topology_test.go``: the seven cases of
``Test_readTopologyFromPgAnnotations`` (annotations to affinity groups, and the errors for a
task the job lacks or names twice). Upstream has no test of the buckets, the orders or the
score; those are tested here through whole sessions: the user guide's ps/worker job (affinity
brings workers to their ps, anti-affinity spreads the ps), bucket order, task order, the
score formula with its resource cut, and an invalid annotation leaving the job untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.harness import Case, run_case
from volcano_py.api.job import JobInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import open_session
from volcano_py.plugins import task_topology
from volcano_py.plugins.task_topology import (
    AFFINITY_ANNOTATION,
    ANTI_AFFINITY_ANNOTATION,
    TASK_ORDER_ANNOTATION,
    TaskTopology,
    TopologyAnnotationError,
    read_topology,
)

TASK_SPEC = "volcano.sh/task-spec"


def pod(
    name: str, role: str, cpu: str = "1", node: str = "", group: str = "job1"
) -> dict[str, Any]:
    return build_pod(
        "default",
        name,
        node,
        "Running" if node else "Pending",
        {"cpu": cpu, "memory": "1Gi"},
        group,
        annotations={TASK_SPEC: role},
    )


def job_with(roles: dict[str, str], annotations: dict[str, str] | None) -> JobInfo:
    cache = SchedulerCache()
    for name, role in roles.items():
        cache.apply_event("Pod", "ADDED", pod(name, role))
    cache.apply_event(
        "PodGroup",
        "ADDED",
        build_pod_group("job1", "default", "default", 1, annotations=annotations),
    )
    return cache.jobs["default/job1"]


SIX = {
    "job1-ps-0": "ps",
    "job1-ps-1": "ps",
    "job1-worker-0": "worker",
    "job1-worker-1": "worker",
    "job1-chief-0": "chief",
    "job1-evaluator-0": "evaluator",
}
FOUR = {k: v for k, v in SIX.items() if v in ("ps", "worker")}
DASHED = {
    "job1-ps-some-0": "ps-some",
    "job1-ps-some-1": "ps-some",
    "job1-worker-another-some-0": "worker-another-some",
    "job1-worker-another-some-1": "worker-another-some",
    "job1-chief-kk-0": "chief-kk",
    "job1-evaluator-tt-0": "evaluator-tt",
}


def annotations(affinity: str, anti: str, order: str) -> dict[str, str]:
    return {
        AFFINITY_ANNOTATION: affinity,
        ANTI_AFFINITY_ANNOTATION: anti,
        TASK_ORDER_ANNOTATION: order,
    }


@pytest.mark.parametrize(
    ("description", "roles", "given", "expected", "error"),
    [
        (
            "correct annotation",
            SIX,
            annotations("ps,worker;ps,chief", "ps;worker,chief", "ps,worker,chief,evaluator"),
            TaskTopology(
                [["ps", "worker"], ["ps", "chief"]],
                [["ps"], ["worker", "chief"]],
                ["ps", "worker", "chief", "evaluator"],
            ),
            None,
        ),
        (
            "correct annotation with tasks whose names contain `-`",
            DASHED,
            annotations(
                "ps-some,worker-another-some;ps-some,chief-kk",
                "ps-some;worker-another-some,chief-kk",
                "ps-some,worker-another-some,chief-kk,evaluator-tt",
            ),
            TaskTopology(
                [["ps-some", "worker-another-some"], ["ps-some", "chief-kk"]],
                [["ps-some"], ["worker-another-some", "chief-kk"]],
                ["ps-some", "worker-another-some", "chief-kk", "evaluator-tt"],
            ),
            None,
        ),
        ("nil annotation", {}, None, None, None),
        (
            "invalid annotation",
            SIX,
            annotations(
                "$%GF$^trtqwrg^",
                "ps;worker,chief;#@FGEW^vfa897bgs;;",
                "ps,worker,chief,evaluator,,,",
            ),
            None,
            "task $%GF$^trtqwrg^ do not exist in job <default/job1>",
        ),
        (
            "invalid task name",
            FOUR,
            annotations("ps,worker", "ps", "ps,worker,chief"),
            None,
            "task chief do not exist in job <default/job1>",
        ),
        (
            "duplicate task name",
            FOUR,
            annotations("ps,worker", "ps,ps", "ps,worker"),
            None,
            "task ps is duplicate in job <default/job1>",
        ),
        (
            "redundant punctuations",
            SIX,
            annotations(
                "ps,worker;ps,,chief,;", "ps;worker,chief;;;", "ps,worker,chief,evaluator,,,"
            ),
            TaskTopology(
                [["ps", "worker"], ["ps", "", "chief", ""], [""]],
                [["ps"], ["worker", "chief"], [""], [""], [""]],
                ["ps", "worker", "chief", "evaluator", "", "", ""],
            ),
            None,
        ),
    ],
)
def test_read_topology_from_pg_annotations_upstream(
    description: str,
    roles: dict[str, str],
    given: dict[str, str] | None,
    expected: TaskTopology | None,
    error: str | None,
) -> None:
    job = job_with(roles, given)
    if error is not None:
        with pytest.raises(TopologyAnnotationError) as raised:
            read_topology(job)
        assert str(raised.value) == error
        return
    assert read_topology(job) == expected


# ---------------------------------------------------------------------- whole sessions


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return build_node(name, {"cpu": cpu, "memory": "16Gi", "pods": "110"})


def topology_case(
    name: str,
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    group_annotations: dict[str, str],
    **kw: Any,
) -> Case:
    return Case(
        name=name,
        plugins={
            "gang": ("enableJobReady", "enableJobPipelined"),
            "task-topology": ("enableTaskOrder", "enableNodeOrder"),
        },
        nodes=nodes,
        pods=pods,
        pod_groups=[
            build_pod_group("job1", "default", "q1", len(pods), annotations=group_annotations)
        ],
        queues=[build_queue("q1")],
        arguments={"task-topology": kw.pop("arguments", {"task-topology.weight": 10})},
        **kw,
    )


def test_affinity_puts_each_worker_with_a_ps_and_anti_affinity_spreads_the_ps() -> None:
    """The user guide's example, on two nodes each holding one ps and one worker: the ps
    repel each other, each worker is drawn to a ps, so each node gets one of each."""
    pods = [pod("job1-ps-0", "ps"), pod("job1-ps-1", "ps")]
    pods += [pod("job1-worker-0", "worker"), pod("job1-worker-1", "worker")]
    case = topology_case(
        "ps/worker",
        pods,
        [node("n1", "2"), node("n2", "2")],
        {AFFINITY_ANNOTATION: "ps,worker", ANTI_AFFINITY_ANNOTATION: "ps"},
    )
    outcome = run_case(case, ["allocate"])
    binds = outcome.binds
    assert len(binds) == 4
    assert binds["default/job1-ps-0"] != binds["default/job1-ps-1"]
    by_node: dict[str, list[str]] = {}
    for key, node_name in binds.items():
        by_node.setdefault(node_name, []).append(key.split("-")[1])
    assert sorted(sorted(roles) for roles in by_node.values()) == [
        ["ps", "worker"],
        ["ps", "worker"],
    ]


def test_affinity_draws_workers_to_the_node_of_their_ps() -> None:
    """Plenty of room everywhere, the ps already runs on n2: the workers follow it."""
    pods = [
        pod("job1-ps-0", "ps", node="n2"),
        pod("job1-worker-0", "worker"),
        pod("job1-worker-1", "worker"),
    ]
    case = topology_case(
        "together",
        pods,
        [node(f"n{i}", "8") for i in range(4)],
        {AFFINITY_ANNOTATION: "ps,worker"},
    )
    binds = run_case(case, ["allocate"]).binds
    assert binds == {"default/job1-worker-0": "n2", "default/job1-worker-1": "n2"}


def managers_of(objects: list[tuple[str, dict[str, Any]]]) -> dict[str, task_topology.JobManager]:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    return task_topology.build_managers(cache.jobs.values())


def test_buckets_and_task_order() -> None:
    """ps repels ps; worker is drawn to ps: two buckets, each a ps and (by least request) a
    worker. Pods in a bucket come before pods outside one; bigger buckets first."""
    group = build_pod_group(
        "job1",
        "default",
        "q1",
        1,
        annotations={
            AFFINITY_ANNOTATION: "ps,worker",
            ANTI_AFFINITY_ANNOTATION: "ps",
            TASK_ORDER_ANNOTATION: "ps,worker",
        },
    )
    pods = [
        pod("job1-ps-0", "ps"),
        pod("job1-ps-1", "ps"),
        pod("job1-worker-0", "worker"),
        pod("job1-worker-1", "worker"),
        pod("job1-worker-2", "worker"),
        pod("job1-chief-0", "chief"),
    ]
    managers = managers_of([*(("Pod", p) for p in pods), ("PodGroup", group)])
    manager = managers["default/job1"]
    buckets = [sorted(t.name for t in bucket.tasks.values()) for bucket in manager.buckets]
    assert buckets == [
        ["job1-ps-0", "job1-worker-0", "job1-worker-2"],
        ["job1-ps-1", "job1-worker-1"],
    ]
    assert manager.bucket_max_size == 3
    plugin = task_topology.TaskTopologyPlugin(task_topology.Arguments({}))
    plugin.managers = managers
    tasks = {t.name: t for bucket in manager.buckets for t in bucket.tasks.values()}
    cache = SchedulerCache()
    for p in pods:
        cache.apply_event("Pod", "ADDED", p)
    chief = next(t for t in cache.tasks.values() if t.name == "job1-chief-0")
    # In a bucket before outside one.
    assert plugin.task_order(tasks["job1-worker-1"], chief) == -1
    # The bigger bucket first.
    assert plugin.task_order(tasks["job1-ps-1"], tasks["job1-worker-0"]) == 1
    # Within a bucket, the task order: ps before worker.
    assert plugin.task_order(tasks["job1-ps-0"], tasks["job1-worker-0"]) == -1
    assert plugin.task_order(tasks["job1-worker-0"], tasks["job1-worker-2"]) == 0


def test_placed_pods_seed_their_node_bucket() -> None:
    group = build_pod_group(
        "job1", "default", "q1", 1, annotations={AFFINITY_ANNOTATION: "ps,worker"}
    )
    pods = [pod("job1-ps-0", "ps", node="n1"), pod("job1-worker-0", "worker")]
    manager = managers_of([*(("Pod", p) for p in pods), ("PodGroup", group)])["default/job1"]
    (bucket,) = manager.buckets
    assert bucket.nodes == {"n1": 1} and bucket.bound_tasks == 1
    assert [t.name for t in bucket.tasks.values()] == ["job1-worker-0"]


def test_node_score() -> None:
    """Bucket of ps-0 (on n1) and two pending workers of 2 CPUs: on n1 (4 CPUs idle) the bucket
    fits: 1 bound + 2 pending = 3; on n2 (2 CPUs) one worker must be left out: 0 + 2 - 1 = 1;
    n3 (1 CPU) cannot hold the pod: 0. Times weight 10, times 100 / largest bucket (3)."""
    group = build_pod_group(
        "job1", "default", "q1", 1, annotations={AFFINITY_ANNOTATION: "ps,worker"}
    )
    pods = [
        pod("job1-ps-0", "ps", cpu="0", node="n1"),
        pod("job1-worker-0", "worker", cpu="2"),
        pod("job1-worker-1", "worker", cpu="2"),
    ]
    cache = SchedulerCache()
    for n in (node("n1", "4"), node("n2", "2"), node("n3", "1")):
        cache.apply_event("Node", "ADDED", n)
    for p in pods:
        cache.apply_event("Pod", "ADDED", p)
    cache.apply_event("PodGroup", "ADDED", group)
    cache.apply_event("Queue", "ADDED", build_queue("q1"))
    option = PluginOption.with_flags(
        "task-topology", "enableNodeOrder", arguments={"task-topology.weight": 10}
    )
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    ssn = open_session(cache.snapshot(), conf, {"task-topology": task_topology.new}, cache)
    worker = next(t for t in ssn.jobs["default/job1"].tasks.values() if t.name == "job1-worker-0")
    rows = np.array([n.row for n in ssn.node_list])
    scores = ssn.node_scores(worker, rows).tolist()
    assert scores == pytest.approx([3 * 10 * 100 / 3, 1 * 10 * 100 / 3, 0.0])


def test_an_invalid_annotation_leaves_the_job_alone(caplog: pytest.LogCaptureFixture) -> None:
    group = build_pod_group(
        "job1", "default", "q1", 1, annotations={AFFINITY_ANNOTATION: "ps,nobody"}
    )
    managers = managers_of([("Pod", pod("job1-ps-0", "ps")), ("PodGroup", group)])
    assert managers == {}
    assert "task nobody do not exist in job <default/job1>" in caplog.text


def test_task_order_alone_builds_no_bucket() -> None:
    """As upstream: only tasks with affinity or anti-affinity go into buckets."""
    group = build_pod_group("job1", "default", "q1", 1, annotations={TASK_ORDER_ANNOTATION: "ps"})
    manager = managers_of([("Pod", pod("job1-ps-0", "ps")), ("PodGroup", group)])["default/job1"]
    assert manager.buckets == []


# ---------------------------------------------------------------------- vectorised = reference


@settings(max_examples=60, deadline=None)
@given(
    node_cpus=st.lists(st.integers(0, 8), min_size=1, max_size=5),
    pods=st.lists(
        st.tuples(
            st.sampled_from(["ps", "worker", "chief"]), st.integers(0, 4), st.integers(-1, 4)
        ),
        min_size=1,
        max_size=8,
    ),
    anti=st.sampled_from(["ps", "ps;worker,chief", "worker"]),
)
def test_batch_node_order_matches_the_reference(
    node_cpus: list[int], pods: list[tuple[str, int, int]], anti: str
) -> None:
    cache = SchedulerCache()
    for index, cpu in enumerate(node_cpus):
        cache.apply_event("Node", "ADDED", node(f"n{index}", str(cpu)))
    for index, (role, cpu, on_node) in enumerate(pods):
        placed = f"n{on_node}" if 0 <= on_node < len(node_cpus) else ""
        cache.apply_event("Pod", "ADDED", pod(f"job1-{role}-{index}", role, str(cpu), placed))
    annotations = {AFFINITY_ANNOTATION: "ps,worker", ANTI_AFFINITY_ANNOTATION: anti}
    cache.apply_event(
        "PodGroup", "ADDED", build_pod_group("job1", "default", "q1", 1, annotations=annotations)
    )
    cache.apply_event("Queue", "ADDED", build_queue("q1"))
    option = PluginOption.with_flags(
        "task-topology", "enableNodeOrder", arguments={"task-topology.weight": 3}
    )
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    ssn = open_session(cache.snapshot(), conf, {"task-topology": task_topology.new}, cache)
    plugin = ssn.plugins["task-topology"]
    assert isinstance(plugin, task_topology.TaskTopologyPlugin)
    manager = plugin.managers.get("default/job1")
    rows = np.array([n.row for n in ssn.node_list])
    for task in ssn.jobs["default/job1"].tasks.values():
        if task.node_name:
            continue
        scores = plugin.batch_node_order(ssn, task, rows).tolist()
        expected = []
        for n in ssn.node_list:
            most = n.idle.clone().add(n.releasing)
            score = (
                task_topology.bucket_score_reference(manager, task, n.name, most) * 3
                if manager is not None
                else 0
            )
            if manager is not None and manager.bucket_max_size:
                score = score * 100 / manager.bucket_max_size
            expected.append(float(score))
        assert scores == pytest.approx(expected)
