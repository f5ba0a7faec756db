"""NodeInfo accounting (seed 000 "Node 资源状态模型", spec §2.3, upstream ``node_info.go``).

Identities checked throughout: Idle + Used = Allocatable, Releasing <= Used,
FutureIdle = Idle + Releasing - Pipelined.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node import NodeFitError, NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import NodePhase, TaskStatus

S = TaskStatus
G = 1_000_000_000  # "1G" in bytes


def make_pod(
    name: str,
    namespace: str = "c1",
    *,
    node: str = "",
    phase: str = "Running",
    cpu: str | None = None,
    memory: str | None = None,
    scalars: dict[str, str] | None = None,
) -> dict[str, Any]:
    requests: dict[str, str] = dict(scalars or {})
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"{namespace}-{name}"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "resources": {"requests": requests}}],
        },
        "status": {"phase": phase},
    }


def make_task(
    name: str,
    cpu: str = "0",
    memory: str = "0",
    *,
    status: TaskStatus = S.RUNNING,
    node: str = "",
    namespace: str = "c1",
    scalars: dict[str, str] | None = None,
) -> TaskInfo:
    task = TaskInfo.from_pod(
        make_pod(name, namespace, node=node, cpu=cpu, memory=memory, scalars=scalars)
    )
    task.status = status
    return task


def make_node(
    name: str,
    cpu: str,
    memory: str,
    pods: str | None = "110",
    *,
    scalars: dict[str, str] | None = None,
    capacity: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, **(scalars or {})}
    if pods is not None:
        allocatable["pods"] = pods
    status: dict[str, Any] = {"allocatable": allocatable}
    if capacity is not None:
        status["capacity"] = capacity
    return {
        "metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {}},
        "status": status,
    }


def new_node_info(node: dict[str, Any] | None, name: str = "n1") -> NodeInfo:
    """``NewNodeInfo(node)``: a row in a fresh matrix, then the node object if there is one."""
    matrix = NodeMatrix()
    info = NodeInfo(name, matrix, matrix.add_row())
    if node is not None:
        info.set_node(node)
    return info


def res(cpu: float, memory: float = 0.0, **scalars: float) -> Resource:
    return Resource(milli_cpu=cpu, memory=memory, scalar_resources=dict(scalars))


def same(left: Resource, right: Resource) -> bool:
    return left.equal(right, DimensionDefault.ZERO)


def assert_identities(node: NodeInfo) -> None:
    m, row = node.matrix, node.row
    assert (m.idle[row] + m.used[row] == m.allocatable[row]).all()
    assert (m.releasing[row] <= m.used[row] + 1e-9).all()
    future = node.future_idle()
    expected = node.idle.clone().add(node.releasing).sub_without_assert(node.pipelined)
    assert same(future, expected)


# ---------------------------------------------------------------- seed 000: AddTask/RemoveTask


NODE_CPU, NODE_MEM = 4000.0, 8 * G


@pytest.mark.parametrize(
    ("status", "idle", "used", "releasing", "pipelined"),
    [
        # Running/Binding (and every other status placed on a node): Idle -= req, Used += req.
        (S.RUNNING, -1, 1, 0, 0),
        (S.BINDING, -1, 1, 0, 0),
        (S.BOUND, -1, 1, 0, 0),
        (S.ALLOCATED, -1, 1, 0, 0),
        # Releasing: also Releasing += req.
        (S.RELEASING, -1, 1, 1, 0),
        # Pipelined: only Pipelined += req (it does not take Idle).
        (S.PIPELINED, 0, 0, 0, 1),
    ],
)
def test_add_then_remove_task_by_status(
    status: TaskStatus, idle: int, used: int, releasing: int, pipelined: int
):
    node = new_node_info(make_node("n1", "4", "8G"))
    task = make_task("t1", "1500m", "2G", status=status)
    request = res(1500, 2 * G, pods=1)

    node.add_task(task)

    def scaled(sign: int) -> Resource:
        return request.clone().multi(float(sign))

    allocatable = res(NODE_CPU, NODE_MEM, pods=110)
    assert same(node.idle, allocatable.clone().add(scaled(idle)))
    assert same(node.used, scaled(used))
    assert same(node.releasing, scaled(releasing))
    assert same(node.pipelined, scaled(pipelined))
    assert_identities(node)
    assert node.pod_count() == 1

    node.remove_task(task)
    assert same(node.idle, allocatable)
    for empty in (node.used, node.releasing, node.pipelined):
        assert same(empty, res(0, 0, pods=0))
    assert node.pod_count() == 0


def test_seed_000_future_idle_worked_example():
    """Idle 100m, Releasing 500m, Pipelined 300m -> FutureIdle = 100 + 500 - 300 = 300m."""
    node = new_node_info(make_node("n1", "1000m", "1G"))
    node.add_task(make_task("running", "400m", status=S.RUNNING))
    node.add_task(make_task("victim", "500m", status=S.RELEASING))
    node.add_task(make_task("waiting", "300m", status=S.PIPELINED))

    assert node.idle.milli_cpu == pytest.approx(100)
    assert node.used.milli_cpu == pytest.approx(900)
    assert node.releasing.milli_cpu == pytest.approx(500)
    assert node.pipelined.milli_cpu == pytest.approx(300)
    assert node.future_idle().milli_cpu == pytest.approx(300)
    assert node.matrix.future_idle()[node.row][0] == pytest.approx(300)
    assert_identities(node)


def test_idle_may_go_negative_for_non_binding_tasks():
    """``allocateIdleResource`` subtracts even when idle is short (logged, never refused)."""
    node = new_node_info(make_node("n1", "1", "1G"))
    node.add_task(make_task("big", "3", "1G", status=S.RUNNING))
    assert node.idle.milli_cpu == pytest.approx(-2000)
    assert_identities(node)


def test_binding_is_refused_when_idle_is_short():
    node = new_node_info(make_node("n1", "2", "4G"))
    node.add_task(make_task("running", "1500m", "1G"))
    before = (node.idle, node.used, node.releasing, node.pipelined)
    task = make_task("binding", "1", "1G", status=S.BINDING)

    with pytest.raises(NodeFitError, match=r"node n1 resources \['cpu'\] are not enough"):
        node.add_task(task)

    assert all(
        same(a, b)
        for a, b in zip(before, (node.idle, node.used, node.releasing, node.pipelined), strict=True)
    )
    assert task.key not in node.tasks
    assert task.node_name == ""


def test_binding_fits_exactly_and_within_tolerance():
    node = new_node_info(make_node("n1", "2", "4G"))
    node.add_task(make_task("running", "1", "2G"))
    node.add_task(make_task("exact", "1", "2G", status=S.BINDING))
    assert node.idle.milli_cpu == pytest.approx(0)
    # LessEqual tolerates 0.1 (a tenth of a millicore) over.
    node2 = new_node_info(make_node("n2", "1", "4G"))
    node2.matrix.idle[node2.row][0] = 999.95
    node2.add_task(make_task("close", "1", "1G", status=S.BINDING))


def test_task_already_on_another_node_is_refused():
    node = new_node_info(make_node("n1", "4", "8G"))
    task = make_task("t1", "1", "1G", node="n2")
    with pytest.raises(NodeFitError, match="already on different node <n2>"):
        node.add_task(task)
    assert node.pod_count() == 0
    assert same(node.used, Resource())


def test_task_already_on_this_node_is_refused():
    node = new_node_info(make_node("n1", "4", "8G"))
    node.add_task(make_task("t1", "1", "1G"))
    with pytest.raises(NodeFitError, match="already on node <n1>"):
        node.add_task(make_task("t1", "1", "1G"))
    assert node.used.milli_cpu == pytest.approx(1000)


def test_add_task_sets_the_node_name():
    node = new_node_info(make_node("n1", "4", "8G"))
    task = make_task("t1", "1", "1G")
    node.add_task(task)
    assert task.node_name == "n1"
    assert node.tasks[task.key].node_name == "n1"


def test_node_keeps_its_own_copy_of_the_task():
    node = new_node_info(make_node("n1", "4", "8G"))
    task = make_task("t1", "1", "1G", status=S.RUNNING)
    node.add_task(task)
    held = node.tasks[task.key]
    assert held is not task

    task.status = S.RELEASING  # the job side moves on; the node must not
    assert held.status is S.RUNNING
    assert same(node.releasing, Resource())

    # Removal undoes what was charged for the held copy (Running), not the caller's status.
    node.remove_task(task)
    assert same(node.idle, res(4000, 8 * G, pods=110))
    assert same(node.releasing, Resource())
    assert_identities(node)


def test_update_task_to_releasing_is_an_eviction():
    node = new_node_info(make_node("n1", "4", "8G"))
    task = make_task("t1", "1", "1G", status=S.RUNNING)
    node.add_task(task)
    idle_before = node.idle
    task.status = S.RELEASING
    node.update_task(task)
    assert same(node.idle, idle_before)
    assert node.used.milli_cpu == pytest.approx(1000)
    assert node.releasing.milli_cpu == pytest.approx(1000)
    assert node.future_idle().milli_cpu == pytest.approx(4000)
    assert node.tasks[task.key].status is S.RELEASING
    assert_identities(node)

    # Discarding the eviction (Releasing -> Running) restores the accounting.
    task.status = S.RUNNING
    node.update_task(task)
    assert same(node.releasing, Resource())
    assert node.idle.milli_cpu == pytest.approx(3000)


def test_update_task_pipelined_to_allocated():
    node = new_node_info(make_node("n1", "4", "8G"))
    task = make_task("t1", "1", "1G", status=S.PIPELINED)
    node.add_task(task)
    assert node.idle.milli_cpu == pytest.approx(4000)
    task.status = S.ALLOCATED
    node.update_task(task)
    assert node.idle.milli_cpu == pytest.approx(3000)
    assert same(node.pipelined, Resource())


def test_refused_update_leaves_the_node_as_it_was():
    """A re-add that is refused (a Binding task that no longer fits, e.g. after an in-place
    resize) must not drop the task from the node's books."""
    node = new_node_info(make_node("n1", "2", "4G"))
    node.add_task(make_task("other", "1", "1G"))
    node.add_task(make_task("t1", "500m", "1G", status=S.ALLOCATED))
    idle_before = node.idle
    resized = make_task("t1", "1500m", "1G", status=S.BINDING)
    with pytest.raises(NodeFitError):
        node.update_task(resized)
    assert "c1/t1" in node.tasks
    assert node.tasks["c1/t1"].status is S.ALLOCATED
    assert same(node.idle, idle_before)
    assert_identities(node)


def test_removing_an_unknown_task_is_a_logged_no_op(caplog: pytest.LogCaptureFixture):
    node = new_node_info(make_node("n1", "4", "8G"))
    with caplog.at_level(logging.WARNING):
        node.remove_task(make_task("ghost", "1", "1G"))
    assert "failed to find task <c1/ghost> on host <n1>" in caplog.text
    assert same(node.idle, res(4000, 8 * G, pods=110))


# ---------------------------------------------------------------- tasks before their node


def test_tasks_added_before_the_node_are_charged_when_it_arrives():
    node = new_node_info(None)
    assert not node.ready
    assert node.phase is NodePhase.NOT_READY
    assert node.phase_reason == "UnInitialized"

    node.add_task(make_task("run", "1", "1G", status=S.RUNNING))
    node.add_task(make_task("rel", "500m", "1G", status=S.RELEASING))
    node.add_task(make_task("pipe", "250m", "1G", status=S.PIPELINED))
    # No node object yet: nothing is charged.
    for empty in (node.idle, node.used, node.releasing, node.pipelined):
        assert same(empty, Resource())

    node.set_node(make_node("n1", "4", "8G"))
    assert node.ready
    assert node.phase_reason == ""
    assert node.idle.milli_cpu == pytest.approx(2500)
    assert node.used.milli_cpu == pytest.approx(1500)
    assert node.releasing.milli_cpu == pytest.approx(500)
    assert node.pipelined.milli_cpu == pytest.approx(250)
    assert node.future_idle().milli_cpu == pytest.approx(2750)
    assert_identities(node)


def test_remove_before_the_node_arrives_charges_nothing():
    node = new_node_info(None)
    task = make_task("run", "1", "1G")
    node.add_task(task)
    node.remove_task(task)
    node.set_node(make_node("n1", "4", "8G"))
    assert same(node.idle, res(4000, 8 * G, pods=110))


# ---------------------------------------------------------------- upstream node_info_test.go


def test_upstream_add_pod_two_running_non_owner_pods():
    """TestNodeInfo_AddPod, "add 2 running non-owner pod"."""
    node = new_node_info(make_node("n1", "8000m", "10G", "20"))
    for pod in (
        make_pod("p1", "c1", node="n1", cpu="1000m", memory="1G"),
        make_pod("p2", "c1", node="n1", cpu="2000m", memory="2G"),
    ):
        node.add_task(TaskInfo.from_pod(pod))

    assert node.name == "n1"
    assert node.ready
    assert same(node.idle, res(5000, 5 * G + 2 * G, pods=18))
    assert same(node.used, res(3000, 3 * G, pods=2))
    assert same(node.releasing, Resource())
    assert same(node.pipelined, Resource())
    assert same(node.allocatable, res(8000, 10 * G, pods=20))
    assert same(node.capacity, res(8000, 10 * G, pods=20))
    assert node.allocatable.max_task_num == 20
    assert set(node.tasks) == {"c1/p1", "c1/p2"}


def test_upstream_add_pod_unknown_pod_memory_over_idle():
    """TestNodeInfo_AddPod, "add 1 unknown pod and pod memory req > idle": accepted, idle
    memory goes negative."""
    node = new_node_info(make_node("n2", "2000m", "1G", "20"), name="n2")
    task = TaskInfo.from_pod(
        make_pod("p1", "c2", node="n2", phase="Unknown", cpu="1000m", memory="2G")
    )
    assert task.status is S.UNKNOWN
    node.add_task(task)

    assert same(node.idle, res(1000, -1 * G, pods=19))
    assert same(node.used, res(1000, 2 * G, pods=1))
    assert same(node.allocatable, res(2000, 1 * G, pods=20))
    assert set(node.tasks) == {"c2/p1"}


def test_upstream_remove_pod():
    """TestNodeInfo_RemovePod, "add 3 running non-owner pod, remove 1 running non-owner pod"."""
    node = new_node_info(make_node("n1", "8000m", "10G", "10"))
    pods = [make_pod(f"p{i}", "c1", node="n1", cpu=f"{i}000m", memory=f"{i}G") for i in (1, 2, 3)]
    for pod in pods:
        node.add_task(TaskInfo.from_pod(pod))
    node.remove_task(TaskInfo.from_pod(pods[1]))

    assert same(node.idle, res(4000, 6 * G, pods=8))
    assert same(node.used, res(4000, 4 * G, pods=2))
    assert same(node.allocatable, res(8000, 10 * G, pods=10))
    assert set(node.tasks) == {"c1/p1", "c1/p3"}


def test_upstream_set_node_out_of_sync_then_recovered():
    """TestNodeInfo_SetNode, "add 3 running non-owner pod": the node shrinks under its pods
    (a device plugin went down) so idle goes negative, then recovers."""
    original = make_node("n1", "10", "10G", "15")
    shrunk = make_node("n1", "8", "8G", "10")
    node = new_node_info(original)
    for i, size in enumerate((1, 2, 6), start=1):
        node.add_task(
            TaskInfo.from_pod(make_pod(f"p{i}", "c1", node="n1", cpu=str(size), memory=f"{size}G"))
        )

    node.set_node(shrunk)
    assert node.node is shrunk
    assert node.ready
    assert same(node.idle, res(-1000, -1 * G, pods=7))
    assert same(node.used, res(9000, 9 * G, pods=3))
    assert same(node.allocatable, res(8000, 8 * G, pods=10))
    assert same(node.capacity, res(8000, 8 * G, pods=10))
    assert len(node.tasks) == 3

    node.set_node(original)
    assert same(node.idle, res(1000, 1 * G, pods=12))
    assert same(node.used, res(9000, 9 * G, pods=3))
    assert same(node.allocatable, res(10000, 10 * G, pods=15))
    assert_identities(node)


# ---------------------------------------------------------------- node object details


def test_capacity_comes_from_status_capacity():
    node = new_node_info(make_node("n1", "3", "6G", capacity={"cpu": "4", "memory": "8G"}))
    assert node.allocatable.milli_cpu == pytest.approx(3000)
    assert node.capacity.milli_cpu == pytest.approx(4000)
    assert node.capacity.memory == pytest.approx(8 * G)


def test_oversubscription_annotations_add_to_allocatable_and_capacity():
    node = new_node_info(
        make_node(
            "n1",
            "4",
            "8G",
            annotations={
                "volcano.sh/oversubscription-cpu": "2000",  # millicores
                "volcano.sh/oversubscription-memory": str(2 * G),  # bytes
            },
        )
    )
    assert node.allocatable.milli_cpu == pytest.approx(6000)
    assert node.allocatable.memory == pytest.approx(10 * G)
    assert node.capacity.milli_cpu == pytest.approx(6000)
    assert node.idle.milli_cpu == pytest.approx(6000)


def test_unparseable_oversubscription_counts_zero():
    node = new_node_info(
        make_node("n1", "4", "8G", annotations={"volcano.sh/oversubscription-cpu": "lots"})
    )
    assert node.allocatable.milli_cpu == pytest.approx(4000)


@pytest.mark.parametrize(
    ("labels", "annotations", "oversubscription", "evicting"),
    [
        ({}, {}, False, False),
        ({"volcano.sh/oversubscription": "true"}, {}, True, False),
        ({"volcano.sh/oversubscription": "bogus"}, {}, False, False),
        ({}, {"volcano.sh/offline-job-evicting": "true"}, False, True),
        ({}, {"volcano.sh/offline-job-evicting": "0"}, False, False),
    ],
)
def test_oversubscription_flags(
    labels: dict[str, str], annotations: dict[str, str], oversubscription: bool, evicting: bool
):
    node = new_node_info(make_node("n1", "4", "8G", labels=labels, annotations=annotations))
    assert node.oversubscription_node is oversubscription
    assert node.offline_job_evicting is evicting


def test_revocable_zone_label():
    node = new_node_info(make_node("n1", "4", "8G", labels={"volcano.sh/revocable-zone": "rz1"}))
    assert node.revocable_zone == "rz1"
    assert new_node_info(make_node("n2", "4", "8G")).revocable_zone == ""


def test_declared_scalars_show_at_zero_and_new_scalars_grow_the_matrix():
    node = new_node_info(make_node("n1", "4", "8G", scalars={"nvidia.com/gpu": "2"}))
    assert node.idle.scalar_resources["nvidia.com/gpu"] == pytest.approx(2000)
    node.add_task(make_task("g", "1", "1G", scalars={"nvidia.com/gpu": "2"}))
    assert node.idle.scalar_resources["nvidia.com/gpu"] == pytest.approx(0)
    assert "nvidia.com/gpu" in node.idle.scalar_resources  # declared, so shown at zero

    width = node.matrix.allocatable.shape[1]
    node.add_task(make_task("npu", "1", "1G", scalars={"huawei.com/npu": "1"}))
    assert node.matrix.allocatable.shape[1] == width + 1
    assert node.idle.scalar_resources["huawei.com/npu"] == pytest.approx(-1000)
    assert_identities(node)


def test_clone_into_another_matrix_is_independent():
    node = new_node_info(make_node("n1", "4", "8G"))
    node.add_task(make_task("t1", "1", "1G"))
    session_matrix = node.matrix.take([node.row])
    copy = node.clone_into(session_matrix, 0)
    assert same(copy.idle, node.idle)
    copy.add_task(make_task("t2", "1", "1G"))
    assert copy.idle.milli_cpu == pytest.approx(2000)
    assert node.idle.milli_cpu == pytest.approx(3000)
    assert set(node.tasks) == {"c1/t1"}
    assert set(copy.tasks) == {"c1/t1", "c1/t2"}


# ---------------------------------------------------------------- identities under any sequence


STATUSES_ON_NODES = [S.RUNNING, S.BOUND, S.ALLOCATED, S.BINDING, S.RELEASING, S.PIPELINED]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(STATUSES_ON_NODES),
            st.integers(min_value=0, max_value=3000),
            st.integers(min_value=0, max_value=4),
            st.booleans(),
        ),
        max_size=12,
    ),
    st.booleans(),
)
def test_identities_hold_after_any_adds_and_removes(
    operations: list[tuple[TaskStatus, int, int, bool]], node_first: bool
):
    node = new_node_info(make_node("n1", "4", "8G") if node_first else None)
    added: list[TaskInfo] = []
    for i, (status, milli, gigabytes, remove_one) in enumerate(operations):
        task = make_task(f"t{i}", f"{milli}m", f"{gigabytes}G", status=status)
        try:
            node.add_task(task)
            added.append(task)
        except NodeFitError:
            assert status is S.BINDING
        if remove_one and added:
            node.remove_task(added.pop(0))
    if not node_first:
        node.set_node(make_node("n1", "4", "8G"))
    assert_identities(node)

    held = list(node.tasks.values())
    expected_used = sum(t.resreq.milli_cpu for t in held if t.status is not S.PIPELINED)
    expected_releasing = sum(t.resreq.milli_cpu for t in held if t.status is S.RELEASING)
    expected_pipelined = sum(t.resreq.milli_cpu for t in held if t.status is S.PIPELINED)
    assert node.used.milli_cpu == pytest.approx(expected_used)
    assert node.releasing.milli_cpu == pytest.approx(expected_releasing)
    assert node.pipelined.milli_cpu == pytest.approx(expected_pipelined)
    assert node.idle.milli_cpu == pytest.approx(4000 - expected_used)
