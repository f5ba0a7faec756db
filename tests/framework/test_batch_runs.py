"""A run of like gang members placed with one node search kept across the run decides exactly
as placing them task by task (issue 14, "Session").

``allocate_tasks`` keeps the feasibility mask and every node's score across a run of tasks of
one job that ask alike (``same_pod_template``) when the plugins whose search and scoring hooks
it reuses say so (``batch_safe``), and refreshes only the row each placement wrote. These
properties run whole sessions with that path on and off (``task_placement._BATCH_RUNS``) and
compare every bind, pipelined task, PodGroup phase and the next start index; the cluster
generators are the incremental-placement test's and ``bench.decisions``' (affinity, host
ports, images, taints, pod-count limits, binpack, preempt and reclaim).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import decisions as bench_decisions
from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.test_incremental_placement import clusters, conf_for, run_session
from volcano_py.actions import task_placement
from volcano_py.api.task import TaskInfo, same_pod_template
from volcano_py.api.types import TASK_SPEC_KEY
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework import node_selection
from volcano_py.framework.conf import SchedulerConf, default_conf
from volcano_py.framework.session import (
    SchedulingState,
    Session,
    close_session,
    open_session,
)
from volcano_py.plugins.drf import DrfPlugin
from volcano_py.plugins.proportion import ProportionPlugin
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action


def both_ways(
    cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf, seed: int
) -> tuple[Any, Any]:
    batched = run_session(cluster, conf, incremental=True, seed=seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(task_placement, "_BATCH_RUNS", False)
        single = run_session(cluster, conf, incremental=True, seed=seed)
    return batched, single


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(1, 30), st.booleans(), st.booleans(), st.integers(0, 3))
def test_small_clusters_place_alike_batched_or_not(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, most_requested: bool, seed: int
) -> None:
    batched, single = both_ways(cluster, conf_for(binpack, most_requested), seed)
    assert batched == single


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(clusters(210, 260), st.booleans(), st.integers(0, 3))
def test_clusters_past_the_feasible_node_limit_place_alike_batched_or_not(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, seed: int
) -> None:
    """Above 200 nodes each task scores only a window from the rotating start: the run must
    move its window exactly as the per-task search does."""
    batched, single = both_ways(cluster, conf_for(binpack, False), seed)
    assert batched == single


IMAGES = ("img-a:1", "img-b:2")


@st.composite
def like_gangs(
    draw: st.DrawFn, roles: bool = False, releasing: bool = False
) -> dict[str, list[dict[str, Any]]]:
    """Gangs of like members (one image, request, selector and toleration each) over nodes
    of mixed sizes, some holding the gangs' images, some with a low pod limit, some already
    half full: the runs the batched path takes, with the scores it keeps across them."""
    nodes, pods, groups = [], [], []
    for i in range(draw(st.integers(3, 240))):
        cpu, memory = draw(st.sampled_from([("2", "4Gi"), ("4", "8Gi"), ("8", "16Gi")]))
        limit = draw(st.sampled_from(["110", "110", "2", "3"]))
        node = build_node(
            f"n{i:03d}",
            resource_list(cpu, memory, pods=limit),
            {"zone": draw(st.sampled_from(["a", "b"]))},
        )
        if draw(st.integers(0, 3)) == 0:
            held = draw(st.sampled_from([IMAGES[:1], IMAGES[1:], IMAGES]))
            node["status"]["images"] = [
                {"names": [image], "sizeBytes": draw(st.integers(30, 900)) * 1024 * 1024}
                for image in held
            ]
        nodes.append(node)
        if draw(st.booleans()):
            group = f"run-{i}"
            groups.append(build_pod_group(group, "ns", "q1", 1, phase="Running"))
            held_cpu = draw(st.sampled_from(["1", "2", "3"])) if releasing else "1"
            pod = build_pod(
                "ns",
                group,
                node["metadata"]["name"],
                "Running",
                resource_list(held_cpu, "1Gi"),
                group,
            )
            if releasing and draw(st.booleans()):
                # Terminating: its room is future idle, where a member is pipelined.
                pod["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
            pods.append(pod)
    for g in range(draw(st.integers(1, 5))):
        size = draw(st.integers(2, 30))
        group = f"gang-{g}"
        groups.append(build_pod_group(group, "ns", "q1", draw(st.integers(1, size))))
        cpu, memory = draw(st.sampled_from([("1", "1Gi"), ("500m", "2Gi"), ("2", "1Gi")]))
        selector = {"zone": "a"} if draw(st.integers(0, 3)) == 0 else None
        image = draw(st.sampled_from([None, *IMAGES]))
        # With roles (a Volcano Job's task-spec annotation), a first member of another size
        # fails nodes for the whole role (allocate's predicate error cache), and a last,
        # smaller one skips the nodes the run failed on.
        first = draw(st.sampled_from([("3", "2Gi"), ("6", "4Gi")])) if roles else None
        for t in range(size):
            want_cpu, want_memory = cpu, memory
            if first is not None and t == 0:
                want_cpu, want_memory = first
            elif first is not None and t == size - 1:
                want_cpu, want_memory = "100m", "128Mi"
            pod = build_pod(
                "ns",
                f"{group}-{t}",
                "",
                "Pending",
                resource_list(want_cpu, want_memory),
                group,
                node_selector=selector,
                annotations={TASK_SPEC_KEY: "worker"} if roles else None,
            )
            if image is not None:
                pod["spec"]["containers"][0]["image"] = image
            pods.append(pod)
    return {"nodes": nodes, "pods": pods, "groups": groups, "queues": [build_queue("q1", 1)]}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(like_gangs(), st.booleans(), st.booleans(), st.integers(0, 3))
def test_runs_of_like_members_place_alike_batched_or_not(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, most_requested: bool, seed: int
) -> None:
    batched, single = both_ways(cluster, conf_for(binpack, most_requested), seed)
    assert batched == single


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(like_gangs(roles=True), st.booleans(), st.integers(0, 3))
def test_runs_within_a_role_place_alike_batched_or_not(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, seed: int
) -> None:
    """The nodes an earlier member of the role failed on stay out of the run's search, and
    the run's own failures are remembered for the role, as the per-task search does."""
    batched, single = both_ways(cluster, conf_for(binpack, True), seed)
    assert batched == single


def cache_of(cluster: dict[str, list[dict[str, Any]]], binder: RecordingBinder) -> SchedulerCache:
    """A cache holding ``cluster`` (queues, nodes, PodGroups, then pods), binding to ``binder``."""
    cache = SchedulerCache(binder=binder)
    for kind, key in (("Queue", "queues"), ("Node", "nodes"), ("PodGroup", "groups")):
        for obj in cluster[key]:
            cache.apply_event(kind, "ADDED", obj)
    for pod in cluster["pods"]:
        cache.apply_event("Pod", "ADDED", pod)
    return cache


def run_with_books(
    cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf, seed: int
) -> dict[str, Any]:
    """One session's decisions and every book they wrote: the binds and the next start
    index; each node's matrix row (idle, used, releasing, pipelined) and its tasks; each
    job's allocated and total request and its tasks' statuses and nodes; drf's job shares
    and proportion's queue shares as the plugins hold them before close."""
    binder = RecordingBinder()
    cache = cache_of(cluster, binder)
    state = SchedulingState(seed=seed)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    for name in conf.actions:
        new_action(name).execute(ssn)
    m = ssn.matrix
    books: dict[str, Any] = {
        "nodes": {
            node.name: (
                m.idle[node.row].tolist(),
                m.used[node.row].tolist(),
                m.releasing[node.row].tolist(),
                m.pipelined[node.row].tolist(),
                sorted((key, task.status.name) for key, task in node.tasks.items()),
            )
            for node in ssn.node_list
        },
        "jobs": {
            job.uid: (
                repr(job.allocated),
                repr(job.total_request),
                sorted((t.name, t.status.name, t.node_name) for t in job.tasks.values()),
            )
            for job in ssn.jobs.values()
        },
    }
    drf = ssn.plugins.get("drf")
    if isinstance(drf, DrfPlugin):
        books["drf"] = {uid: (repr(a.allocated), a.share) for uid, a in drf.job_attrs.items()}
    proportion = ssn.plugins.get("proportion")
    if isinstance(proportion, ProportionPlugin):
        books["proportion"] = {
            name: (repr(a.allocated), a.share) for name, a in proportion.queue_attributes.items()
        }
    close_session(ssn)
    books["binds"] = dict(binder.binds)
    books["next start"] = state.next_start_index
    return books


def books_both_ways(
    cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf, seed: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    batched = run_with_books(cluster, conf, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(task_placement, "_BATCH_RUNS", False)
        single = run_with_books(cluster, conf, seed)
    return batched, single


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(like_gangs(releasing=True), st.booleans(), st.integers(0, 3))
def test_runs_onto_releasing_room_keep_every_book_alike_batched_or_not(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, seed: int
) -> None:
    """Nodes with terminating pods (room on future idle but not on idle): the run must keep
    which nodes fit on idle as the per-task search sees them, and pipeline where it does.
    The full default conf (drf, proportion) so that their books are compared too."""
    conf = default_conf(BUILTIN_ACTIONS) if not binpack else conf_for(True, False)
    batched, single = books_both_ways(cluster, conf, seed)
    assert batched == single


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(like_gangs(roles=True), st.integers(0, 3))
def test_runs_keep_every_book_alike_batched_or_not(
    cluster: dict[str, list[dict[str, Any]]], seed: int
) -> None:
    batched, single = books_both_ways(cluster, default_conf(BUILTIN_ACTIONS), seed)
    assert batched == single


@pytest.mark.parametrize("seed", range(0, 60, 3))
def test_bench_decisions_clusters_alike_batched_or_not(seed: int) -> None:
    """``bench.decisions``' clusters (inter-pod terms, host ports, images, pod limits, three
    action lists, binpack): two sessions each, every decision digested."""
    batched = bench_decisions.decisions(seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(task_placement, "_BATCH_RUNS", False)
        single = bench_decisions.decisions(seed)
    assert batched == single


def gang_cluster(nodes: int, members: int, pods: str = "110") -> dict[str, list[dict[str, Any]]]:
    """``nodes`` equal nodes (past the feasible-node limit) and one gang of like pods."""
    node_list = [
        build_node(f"n{i:03d}", resource_list("4", "8Gi", pods=pods), {"zone": "a"})
        for i in range(nodes)
    ]
    pods = [
        build_pod("ns", f"g-{t}", "", "Pending", resource_list("1", "1Gi"), "g")
        for t in range(members)
    ]
    return {
        "nodes": node_list,
        "pods": pods,
        "groups": [build_pod_group("g", "ns", "q1", members)],
        "queues": [build_queue("q1", 1)],
    }


def test_a_gang_of_like_pods_is_placed_as_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run path is taken (one RunSearch for the gang, every member after the first
    searched by it) and decides as the per-task path."""
    built: list[int] = []
    original = node_selection.RunSearch.__init__

    def counting(self: node_selection.RunSearch, *args: Any) -> None:
        built.append(1)
        original(self, *args)

    monkeypatch.setattr(node_selection.RunSearch, "__init__", counting)
    cluster = gang_cluster(300, 40)
    conf = default_conf(BUILTIN_ACTIONS)
    batched, single = both_ways(cluster, conf, 1)
    assert batched == single
    assert len(batched[0]) == 40
    assert len(built) == 1


@pytest.mark.parametrize("pods", ["1", "2", "3"])
@pytest.mark.parametrize("nodes", [30, 250])
def test_a_run_sees_the_pod_limit_it_fills(pods: str, nodes: int) -> None:
    """Binpack draws each member to the fullest node, so the run comes back to the nodes it
    filled: their pod-count mask must be refreshed after each placement."""
    cluster = gang_cluster(nodes, 24, pods)
    batched, single = both_ways(cluster, conf_for(True, True), 2)
    assert batched == single
    assert batched[0]


# ---------------------------------------------------------------- who may batch


def tasks_of(*pods: dict[str, Any]) -> list[TaskInfo]:
    return [TaskInfo.from_pod(pod) for pod in pods]


def test_same_pod_template_ignores_name_uid_and_status_only() -> None:
    first, second, third, fourth = tasks_of(
        build_pod("ns", "a-0", "", "Pending", resource_list("1", "1Gi"), "a"),
        build_pod("ns", "a-1", "", "Pending", resource_list("1", "1Gi"), "a"),
        build_pod("ns", "a-2", "", "Pending", resource_list("2", "1Gi"), "a"),
        build_pod("ns", "a-3", "", "Pending", resource_list("1", "1Gi"), "a", {"app": "x"}),
    )
    assert same_pod_template(first, second)
    assert not same_pod_template(first, third)
    assert not same_pod_template(first, fourth)
    second.pod_annotations["bound-device"] = "0"
    assert not same_pod_template(first, second)


def session_for(conf_text: str, pod: dict[str, Any]) -> tuple[Any, TaskInfo]:
    from volcano_py.framework.conf import parse_conf

    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1))
    cache.apply_event("Node", "ADDED", build_node("n0", resource_list("4", "8Gi", pods="110")))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("g", "ns", "q1", 1))
    cache.apply_event("Pod", "ADDED", pod)
    ssn = open_session(
        cache.snapshot(),
        parse_conf(conf_text, BUILTIN_ACTIONS),
        PluginRegistry(),
        cache,
        SchedulingState(),
    )
    task = next(t for job in ssn.jobs.values() for t in job.tasks.values())
    return ssn, task


DEFAULT = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder{extra}
"""


def plain_pod(**kwargs: Any) -> dict[str, Any]:
    return build_pod("ns", "g-0", "", "Pending", resource_list("1", "1Gi"), "g", **kwargs)


def test_the_default_plugins_batch_a_plain_pod() -> None:
    ssn, task = session_for(DEFAULT.format(extra=""), plain_pod())
    assert ssn.batch_safe(task)


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(plain_pod(ports=[{"containerPort": 80, "hostPort": 8080}]), id="host port"),
        pytest.param(
            plain_pod(
                affinity={
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": {"app": "x"}},
                                "topologyKey": "zone",
                            }
                        ]
                    }
                }
            ),
            id="inter-pod terms",
        ),
        pytest.param(
            plain_pod(
                affinity={
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 5,
                                "preference": {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "In", "values": ["a"]}
                                    ]
                                },
                            }
                        ]
                    }
                }
            ),
            id="preferred node affinity (normalised over the candidates)",
        ),
    ],
)
def test_a_pod_whose_checks_or_scores_are_not_row_local_is_placed_task_by_task(
    pod: dict[str, Any],
) -> None:
    ssn, task = session_for(DEFAULT.format(extra=""), pod)
    assert not ssn.batch_safe(task)


def test_a_plugin_that_does_not_say_it_is_batch_safe_keeps_the_per_task_path() -> None:
    """A scoring plugin without ``batch_safe`` (here one registered by hand, as a plugin
    outside the built-ins would) turns the run path off."""
    ssn, task = session_for(DEFAULT.format(extra=""), plain_pod())
    ssn.add_batch_node_order_fn("my-scorer", lambda task, rows: rows * 0.0)
    assert not ssn.batch_safe(task)


def test_binpack_is_batch_safe() -> None:
    ssn, task = session_for(DEFAULT.format(extra="\n  - name: binpack"), plain_pod())
    assert ssn.batch_safe(task)


def test_a_run_rescoring_the_row_it_placed_on_keeps_image_locality(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the first pass the run rescores mostly the one row it placed on, in plain floats
    (``Session.run_row_score``): that score must keep every part of the vector one (here the
    image locality that draws the members to the nodes holding their image)."""
    rescored: list[int] = []
    original = Session.run_row_score

    def counting(ssn: Any, task: TaskInfo, skip: Any = ()) -> Any:
        score = original(ssn, task, skip)
        if score is None:
            return None

        def counted(row: int) -> float:
            rescored.append(row)
            return float(score(row))

        return counted

    monkeypatch.setattr(Session, "run_row_score", counting)
    # 100 members over 40 nodes of 4 cpus: the later members choose between nodes placed on
    # before, where the image still makes the difference.
    cluster = gang_cluster(40, 100)
    for node in cluster["nodes"][::4]:
        node["status"]["images"] = [{"names": [IMAGES[0]], "sizeBytes": 800 * 1024 * 1024}]
    for pod in cluster["pods"]:
        pod["spec"]["containers"][0]["image"] = IMAGES[0]
    batched, single = books_both_ways(cluster, default_conf(BUILTIN_ACTIONS), 3)
    assert batched == single
    assert rescored


NODEORDER_WEIGHTS = """\
actions: "allocate"
tiers:
- plugins:
  - name: predicates
  - name: nodeorder
    arguments:
      leastrequested.weight: {least}
      mostrequested.weight: {most}
      balancedresource.weight: {balanced}
"""


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(["0", "100m", "1", "3"]),
    st.sampled_from(["0", "512Mi", "3Gi"]),
    st.sampled_from([None, "1", "2"]),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 3),
)
def test_nodeorders_bound_row_score_is_the_per_call_and_the_vector_score_bit_for_bit(
    cpu: str, memory: str, gpu: str | None, least: int, most: int, balanced: int
) -> None:
    """A run rescores the row it placed on with nodeorder's row score bound to the run's pod
    (``nodeorder._BOUND_ROW_SCORE``): on nodes full, empty, over-committed and with or
    without GPUs, best-effort and GPU pods, every weight mix, it equals the per-call row
    score and the vector score on every row, bit for bit."""
    from volcano_py.framework.conf import parse_conf
    from volcano_py.plugins import nodeorder

    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1))
    shapes = [("4", "8Gi", None), ("8", "16Gi", "4"), ("3", "4Gi", "1"), ("16", "64Gi", None)]
    for i, (node_cpu, node_memory, node_gpu) in enumerate(shapes):
        allocatable = resource_list(node_cpu, node_memory, pods="110")
        if node_gpu is not None:
            allocatable["nvidia.com/gpu"] = node_gpu
        cache.apply_event("Node", "ADDED", build_node(f"n{i}", allocatable))
        held = resource_list("3", "5Gi") if i % 2 else {}
        cache.apply_event(
            "Pod", "ADDED", build_pod("ns", f"held-{i}", f"n{i}", "Running", held, "run")
        )
    cache.apply_event("PodGroup", "ADDED", build_pod_group("run", "ns", "q1", 1, phase="Running"))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("g", "ns", "q1", 1))
    request = resource_list(cpu, memory) if cpu != "0" or memory != "0" else {}
    if gpu is not None:
        request["nvidia.com/gpu"] = gpu
    cache.apply_event("Pod", "ADDED", build_pod("ns", "g-0", "", "Pending", request, "g"))
    conf = parse_conf(
        NODEORDER_WEIGHTS.format(least=least, most=most, balanced=balanced), BUILTIN_ACTIONS
    )
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())
    task = next(iter(ssn.jobs["ns/g"].tasks.values()))
    plugin = ssn.plugins["nodeorder"]
    rows = list(range(len(ssn.node_list)))
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(nodeorder, "_SCALAR_ROWS", 0)  # numpy even for a few rows
        vector = plugin.batch_scores(task)(np.array(rows)).tolist()
    bound = plugin.batch_row_score(task)
    assert bound is not None
    bound_scores = [bound(row) for row in rows]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(nodeorder, "_BOUND_ROW_SCORE", False)
        per_call = plugin.batch_row_score(task)
        assert per_call is not None
        per_call_scores = [per_call(row) for row in rows]
    assert bound_scores == per_call_scores == vector
