"""A run of like tasks carried from one job's attempt into the next job's decides exactly as
ending it with each job (issue 14, the streaming single pods and simulate's bare pods).

One-pod jobs (bare pods the PodGroup controller gave a group each) ask alike but for their
group-name annotation; allocate lets the run the last one left go on into the next
(``task_placement.RunCarry``) when the plugins whose hooks a run reuses read nothing of the
task's job (``Session.runs_across_jobs``). These properties run sessions three ways: with the
carry, without it (``_RUNS_ACROSS_JOBS``), and task by task (``_BATCH_RUNS``), and compare
every bind, pipelined task, matrix row, job book, drf and proportion share and the next start
index (``test_batch_runs.run_with_books``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.test_batch_runs import cache_of, run_with_books
from tests.framework.test_incremental_placement import conf_for
from volcano_py.actions import task_placement
from volcano_py.api.task import TaskInfo, same_pod_template, same_pod_template_but_group
from volcano_py.api.types import GROUP_NAME_ANNOTATION
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework import node_selection
from volcano_py.framework.conf import SchedulerConf, default_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.plugins.nodeorder import NodeOrderPlugin
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

TEMPLATES = (
    (("1", "1Gi"), None),
    (("500m", "2Gi"), None),
    (("1", "1Gi"), {"zone": "a"}),
)


@st.composite
def one_pod_jobs(draw: st.DrawFn, releasing: bool = False) -> dict[str, list[dict[str, Any]]]:
    """Many small jobs (mostly of one pod) drawn from a few templates, in two queues, over
    nodes of mixed sizes and pod limits, some already holding pods (terminating ones with
    ``releasing``): runs of like jobs, broken by unlike ones, gangs that do not fit and are
    discarded, pipelining onto releasing room."""
    nodes, pods, groups = [], [], []
    for i in range(draw(st.integers(1, 240))):
        cpu, memory = draw(st.sampled_from([("1", "2Gi"), ("2", "4Gi"), ("4", "8Gi")]))
        limit = draw(st.sampled_from(["110", "110", "1", "2"]))
        zone = draw(st.sampled_from(["a", "b"]))
        node = build_node(f"n{i:03d}", resource_list(cpu, memory, pods=limit), {"zone": zone})
        nodes.append(node)
        if draw(st.integers(0, 2)) == 0:
            group = f"held-{i}"
            groups.append(build_pod_group(group, "ns", "q1", 1, phase="Running"))
            pod = build_pod(
                "ns", group, node["metadata"]["name"], "Running", resource_list("1", "1Gi"), group
            )
            if releasing and draw(st.booleans()):
                pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            pods.append(pod)
    for j in range(draw(st.integers(1, 60))):
        group = f"job-{j:03d}"
        size = draw(st.sampled_from([1, 1, 1, 1, 2, 3]))
        min_member = draw(st.integers(1, size))
        queue = draw(st.sampled_from(["q1", "q1", "q2"]))
        groups.append(build_pod_group(group, "ns", queue, min_member))
        (cpu, memory), selector = draw(st.sampled_from(TEMPLATES))
        priority = draw(st.sampled_from([None, None, 10]))
        for t in range(size):
            pods.append(
                build_pod(
                    "ns",
                    f"{group}-{t}",
                    "",
                    "Pending",
                    resource_list(cpu, memory),
                    group,
                    node_selector=selector,
                    priority=priority,
                )
            )
    queues = [build_queue("q1", 1), build_queue("q2", 2)]
    return {"nodes": nodes, "pods": pods, "groups": groups, "queues": queues}


def three_ways(
    cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf, seed: int
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    carried = run_with_books(cluster, conf, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(task_placement, "_RUNS_ACROSS_JOBS", False)
        per_job = run_with_books(cluster, conf, seed)
        monkeypatch.setattr(task_placement, "_BATCH_RUNS", False)
        per_task = run_with_books(cluster, conf, seed)
    return carried, per_job, per_task


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(one_pod_jobs(), st.booleans(), st.booleans(), st.integers(0, 3))
def test_one_pod_jobs_place_alike_with_the_run_carried_or_not(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, most_requested: bool, seed: int
) -> None:
    carried, per_job, per_task = three_ways(cluster, conf_for(binpack, most_requested), seed)
    assert carried == per_job == per_task


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(one_pod_jobs(releasing=True), st.integers(0, 3))
def test_one_pod_jobs_onto_releasing_room_place_alike_with_the_run_carried_or_not(
    cluster: dict[str, list[dict[str, Any]]], seed: int
) -> None:
    carried, per_job, per_task = three_ways(cluster, default_conf(BUILTIN_ACTIONS), seed)
    assert carried == per_job == per_task


def singles(jobs: int, nodes: int) -> dict[str, list[dict[str, Any]]]:
    return {
        "nodes": [
            build_node(f"n{i:03d}", resource_list("4", "8Gi", pods="110"), {"zone": "a"})
            for i in range(nodes)
        ],
        "pods": [
            build_pod("ns", f"s-{j}-0", "", "Pending", resource_list("1", "1Gi"), f"s-{j}")
            for j in range(jobs)
        ],
        "groups": [build_pod_group(f"s-{j}", "ns", "q1", 1) for j in range(jobs)],
        "queues": [build_queue("q1", 1)],
    }


def count_searches(
    monkeypatch: pytest.MonkeyPatch, cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf
) -> tuple[int, int, int]:
    """(runs made, per-task searches, binds) of one session over ``cluster``."""
    made = {"runs": 0, "searches": 0}
    run_init = node_selection.RunSearch.__init__
    search = node_selection.PredicateHelper.predicate_nodes

    def counting_init(self: Any, *args: Any, **kwargs: Any) -> None:
        made["runs"] += 1
        run_init(self, *args, **kwargs)

    def counting_search(self: Any, *args: Any, **kwargs: Any) -> Any:
        made["searches"] += 1
        return search(self, *args, **kwargs)

    monkeypatch.setattr(node_selection.RunSearch, "__init__", counting_init)
    monkeypatch.setattr(node_selection.PredicateHelper, "predicate_nodes", counting_search)
    binder = RecordingBinder()
    cache = cache_of(cluster, binder)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())
    for name in conf.actions:
        new_action(name).execute(ssn)
    close_session(ssn)
    return made["runs"], made["searches"], len(binder.binds)


def test_one_pod_jobs_in_a_row_share_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first job searches task by task, the second starts the run, the others follow it."""
    runs, searches, binds = count_searches(monkeypatch, singles(50, 30), conf_for(False, False))
    assert (runs, searches, binds) == (1, 1, 50)


def test_without_the_carry_every_one_pod_job_searches_afresh(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(task_placement, "_RUNS_ACROSS_JOBS", False)
    runs, searches, binds = count_searches(monkeypatch, singles(50, 30), conf_for(False, False))
    assert (runs, searches, binds) == (0, 50, 50)


def test_a_plugin_that_does_not_say_it_ignores_the_job_keeps_runs_within_their_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch-safe plugin that does not promise ``batch_ignores_job`` (as one outside the
    built-ins would not): nothing is carried, and one-pod jobs each search afresh."""
    monkeypatch.delattr(NodeOrderPlugin, "batch_ignores_job")
    runs, searches, binds = count_searches(monkeypatch, singles(20, 30), conf_for(False, False))
    assert (runs, searches, binds) == (0, 20, 20)


def test_the_default_plugins_let_runs_cross_jobs() -> None:
    cache = cache_of(singles(1, 1), RecordingBinder())
    for conf, expected in (
        (default_conf(BUILTIN_ACTIONS), True),
        (conf_for(True, True), True),
    ):
        ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())
        assert ssn.runs_across_jobs() is expected
        close_session(ssn)


def task(name: str, group: str, **kwargs: Any) -> TaskInfo:
    return TaskInfo.from_pod(
        build_pod("ns", name, "", "Pending", resource_list("1", "1Gi"), group, **kwargs)
    )


def test_alike_but_for_the_group_ignores_only_the_group_annotation() -> None:
    assert same_pod_template_but_group(task("a-0", "a"), task("b-0", "b"))
    assert same_pod_template_but_group(
        task("a-0", "a", annotations={"x": "1"}), task("b-0", "b", annotations={"x": "1"})
    )
    assert not same_pod_template_but_group(
        task("a-0", "a", annotations={"x": "1"}), task("b-0", "b", annotations={"x": "2"})
    )
    assert not same_pod_template_but_group(
        task("a-0", "a", labels={"app": "a"}), task("b-0", "b", labels={"app": "b"})
    )
    assert not same_pod_template_but_group(
        task("a-0", "a", node_selector={"zone": "a"}), task("b-0", "b")
    )
    assert not same_pod_template_but_group(task("a-0", "a", priority=1), task("b-0", "b"))
    left = task("a-0", "a")
    assert GROUP_NAME_ANNOTATION in left.pod_annotations


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from([None, {"x": "1"}, {"x": "2"}]),
            st.sampled_from([None, {"app": "w"}]),
            st.sampled_from(["1", "2"]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(["a", "b"]),
)
def test_a_carried_runs_bridged_template_answers_as_the_template_itself(
    drawn: list[tuple[str, dict[str, str] | None, dict[str, str] | None, str]], first: str
) -> None:
    """``RunCarry.alike`` compares the later tasks of another job with that job's first task
    found alike (``task_placement._BRIDGED_TEMPLATES``): over any sequence of tasks of a few
    jobs, some alike but for the group and some not, it answers as the full test with the
    run's template does, task after task."""
    template = task(f"{first}-t", first)
    carry = task_placement.RunCarry(across_jobs=True)
    for at, (group, pod_annotations, labels, cpu) in enumerate(drawn):
        candidate = TaskInfo.from_pod(
            build_pod(
                "ns",
                f"{group}-{at}",
                "",
                "Pending",
                resource_list(cpu, "1Gi"),
                group,
                annotations=pod_annotations,
                labels=labels,
            )
        )
        expected = (
            same_pod_template(template, candidate)
            if template.job == candidate.job
            else same_pod_template_but_group(template, candidate)
        )
        assert carry.alike(template, candidate) is expected
