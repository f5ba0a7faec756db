"""Two short paths of a committed bind keep the books of the general ones, bit for bit
(issue 14, "Session": committing 10k binds was about 12% of allocate):

* ``SchedulerCache._bind_pending``: the bind of a task on no node yet, of a job that stays
  known, onto a known node with room, done as the remove-then-add it stands for without the
  general path's checks (reference: ``cache._BIND_PENDING_IN_PLACE = False``);
* ``NodeInfo._charge`` in plain Python floats column by column (reference: numpy row
  arithmetic, ``node._PLAIN_FLOAT_CHARGES = False``);
* ``JobInfo.refile_task``, the job's side of a bind in one call (reference: ``delete_task``
  then ``add_task``, ``job._ONE_CALL_MOVES = False``, switched with the reference above).

Random event sequences (pods on known, unknown and placeholder nodes, jobs with and without
PodGroups, scalar resources first seen late, Releasing pods, node updates) interleaved with
binds (to nodes with and without room, unknown nodes, pods gone) run under each combination
of the two switches; the matrix bytes, the column order, every task, job and node (dict orders,
status indexes, sums and counters), the binder's order and every refusal must match.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from volcano_py.api import job as job_module
from volcano_py.api import node as node_module
from volcano_py.api.node_matrix import FIELDS
from volcano_py.api.task import TaskInfo
from volcano_py.cache import cache as cache_module
from volcano_py.cache.cache import CacheBindError, SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.testing.objects import build_node, build_pod, build_pod_group, resource_list

NS = "test"
CPUS = ("100m", "333m", "1", "1.5", "2500m", "0.7", "7")
MEMORIES = ("1Gi", "1.5Gi", "100M", "333Mi", "0.3Gi")
Step = tuple[str, Any]


def _pod(rng: random.Random, index: int, node: str) -> dict[str, Any]:
    requests = resource_list(rng.choice(CPUS), rng.choice(MEMORIES))
    if rng.random() < 0.2:
        requests["nvidia.com/gpu"] = rng.choice(("1", "2"))
    if rng.random() < 0.05:
        requests[f"example.com/dev-{index % 3}"] = "1"  # a column added late
    phase = "Pending" if not node else rng.choice(("Running", "Running", "Pending", "Succeeded"))
    group = rng.choice(("g0", "g1", "g2", "solo", ""))
    if group == "solo":
        group = f"solo-{index}"  # a job without PodGroup: forgotten with its last task
    pod = build_pod(NS, f"p-{index}", node, phase, requests, group)
    if node and phase == "Running" and rng.random() < 0.1:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # Releasing
    return pod


def _node(name: str, rng: random.Random) -> dict[str, Any]:
    allocatable = resource_list(rng.choice(("4", "16", "75.5")), "16Gi", pods="110")
    if rng.random() < 0.5:
        allocatable["nvidia.com/gpu"] = "4"
    return build_node(name, allocatable)


def _steps(seed: int) -> list[Step]:
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(6)]
    steps: list[Step] = [
        ("event", ("PodGroup", "ADDED", build_pod_group(g, NS, "q", 2))) for g in ("g0", "g1")
    ]
    steps += [("event", ("Node", "ADDED", _node(name, rng))) for name in nodes[:4]]
    pods: list[dict[str, Any]] = []
    for index in range(250):
        roll = rng.random()
        if roll < 0.45 or not pods:
            # n4 and n5 are named before they exist (placeholders).
            node = rng.choice(["", "", "", *nodes])
            pods.append(_pod(rng, index, node))
            steps.append(("event", ("Pod", "ADDED", pods[-1])))
        elif roll < 0.85:
            # Bind the n-th pending pod to a node: known (with or without room), a
            # placeholder, or unknown.
            steps.append(("bind", (rng.randrange(1000), rng.choice([*nodes, "n9"]))))
        elif roll < 0.9:
            steps.append(("event", ("Pod", "DELETED", rng.choice(pods))))
        elif roll < 0.93:
            steps.append(("event", ("Node", "ADDED", _node(rng.choice(nodes), rng))))
        elif roll < 0.95:
            steps.append(("bind-gone", rng.randrange(1000)))
        else:
            group = rng.choice(("g0", "g1", "g2"))
            steps.append(("event", ("PodGroup", "ADDED", build_pod_group(group, NS, "q", 2))))
    return steps


def bind_copy(pending: list[TaskInfo], kind: str, what: Any) -> TaskInfo:
    """The session's copy of one of the ``pending`` tasks that a "bind" step (``what``: the
    task's index and the node) or a "bind-gone" step (``what``: the index; the pod was
    replaced since, so the cache refuses the bind) hands to the cache."""
    index = what if kind == "bind-gone" else what[0]
    task = pending[index % len(pending)].clone()
    if kind == "bind-gone":
        task.uid = "another-uid"  # the pod was replaced: the bind is refused
        task.node_name = "n0"
    else:
        task.node_name = what[1]
    task.pod_annotations["volcano.sh/bound-by"] = "test"
    return task


def _run(steps: list[Step]) -> tuple[SchedulerCache, list[str]]:
    cache = SchedulerCache(binder=RecordingBinder())
    outcomes: list[str] = []
    for kind, what in steps:
        if kind == "event":
            cache.apply_event(*what)
            continue
        pending = [t for t in cache.tasks.values() if t.status.name == "PENDING"]
        if not pending:
            continue
        task = bind_copy(pending, kind, what)
        try:
            cache.add_bind_task(task)
        except CacheBindError as error:
            outcomes.append(f"refused: {error}")
        else:
            outcomes.append(f"bound {task.key}")
    return cache, outcomes


def _books(cache: SchedulerCache, outcomes: list[str]) -> Any:
    matrix = cache.matrix
    rows = sorted(node.row for node in cache.nodes.values())
    arrays = [getattr(matrix, name)[rows].tobytes() for name in FIELDS]

    def facts(task: Any) -> Any:
        return (
            task.key,
            task.uid,
            task.status,
            task.node_name,
            task.resreq.to_list(),
            sorted(task.pod_annotations.items()),
        )

    def sums(resource: Any) -> Any:
        return (resource.milli_cpu, resource.memory, sorted(resource.scalar_resources.items()))

    binder = cache.binder
    assert isinstance(binder, RecordingBinder)
    return (
        outcomes,
        binder.order,
        list(matrix.index.names),
        matrix.allocatable.shape,
        arrays,
        [facts(task) for task in cache.tasks.values()],
        {
            uid: (
                [facts(t) for t in job.tasks.values()],
                [(status, list(tasks)) for status, tasks in job.task_status_index.items()],
                sums(job.allocated),
                sums(job.total_request),
                sorted(job.role_counts.items()),
                sorted(job.best_effort_pending.items()),
            )
            for uid, job in cache.jobs.items()
        },
        {
            name: (node.row, node.phase, [facts(t) for t in node.tasks.values()])
            for name, node in cache.nodes.items()
        },
        list(cache.node_list),
    )


def _books_with(
    steps: list[Step], in_place: bool, plain_floats: bool, shared: bool = True
) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(cache_module, "_BIND_PENDING_IN_PLACE", in_place)
        monkeypatch.setattr(cache_module, "_BOUND_TASK_SHARED", shared)
        monkeypatch.setattr(node_module, "_PLAIN_FLOAT_CHARGES", plain_floats)
        # The job's refiling in one call goes with the short path (off in the reference).
        monkeypatch.setattr(job_module, "_ONE_CALL_MOVES", in_place or plain_floats)
        return _books(*_run(steps))


@pytest.mark.parametrize("seed", range(16))
def test_short_bind_and_plain_float_charges_keep_the_reference_books(seed: int) -> None:
    steps = _steps(seed)
    reference = _books_with(steps, in_place=False, plain_floats=False)
    outcomes = reference[0]
    # The sequences do exercise binds, refusals for room and refusals for gone pods.
    assert any(o.startswith("bound") for o in outcomes)
    assert any(o.startswith("refused") for o in outcomes)
    for in_place, plain_floats in ((True, True), (True, False), (False, True)):
        assert _books_with(steps, in_place, plain_floats) == reference, (in_place, plain_floats)
    # The node keeping the bound task itself rather than a copy (``_BOUND_TASK_SHARED``).
    assert _books_with(steps, True, True, shared=False) == reference


def test_a_bound_task_is_one_object_in_the_cache_its_job_and_its_node() -> None:
    """``_BOUND_TASK_SHARED``: the short path hands the node the bound task itself."""
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Node", "ADDED", build_node("n1", resource_list("4", "8Gi", pods="110")))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("g", NS, "default", 1))
    cache.apply_event(
        "Pod", "ADDED", build_pod(NS, "p", "", "Pending", resource_list("1", "1Gi"), "g")
    )
    task = next(iter(cache.tasks.values())).clone()
    task.node_name = "n1"
    cache.add_bind_task(task)
    bound = cache.tasks[task.key]
    assert bound.status.name == "BINDING"
    assert cache.nodes["n1"].tasks[task.key] is bound
    assert cache.jobs[task.job].tasks[task.uid] is bound
