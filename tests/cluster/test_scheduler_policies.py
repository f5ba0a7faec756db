"""The live scheduler's decisions on a real API server with kwok nodes: gangs bind together or
not at all, a queue's capability holds, reclaim evicts and the reclaimer binds, and a Volcano
user's Queue/PodGroup YAML works unchanged with its status readable."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator

import pytest
import yaml
from test_scheduler_process import (
    PG_PATH,
    SchedulerProcess,
    bound,
    create_gang,
    get_pod_group,
    list_pods,
    pod_manifest,
    queue_manifest,
    scheduler_name,
    scheduler_rbac,
    start_scheduler,
    wait_until,
)

from e2e.controlplane import ApiError, ControlPlane

pytestmark = pytest.mark.cluster

# Re-exported fixtures (pytest finds fixtures by the names in a test module).
__all__ = ["scheduler_name", "scheduler_rbac", "start_scheduler"]

MakeNodes = Callable[..., list[str]]
StartScheduler = Callable[..., SchedulerProcess]

RECLAIM_CONF = """\
actions: "enqueue, allocate, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


@pytest.fixture
def make_queue(control_plane: ControlPlane) -> Iterator[Callable[..., str]]:
    created: list[str] = []

    def make(name: str, **spec: object) -> str:
        control_plane.create(queue_manifest(name, **spec))
        created.append(name)
        # No queue controller runs here: Open, as it would set it.
        control_plane.open_queues(name)
        return name

    yield make
    for name in created:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"{PG_PATH}/queues/{name}")


def test_gang_binds_together_or_not_at_all(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 2)  # 2 x 32 CPU
    scheduler = start_scheduler()
    scheduler.wait_ready()
    # Gang A: minMember 3, only 2 of its pods exist yet: nothing may bind.
    gang_a = create_gang(control_plane, namespace, "gang-a", 3, scheduler_name, cpu="8", pods=2)
    # Gang B: 3 x 24 CPU can never fit beside A (64 - 24 = 40 CPU left): never partly bound.
    gang_b = create_gang(control_plane, namespace, "gang-b", 3, scheduler_name, cpu="24")
    scheduler.wait_for(
        "cycles over the incomplete gangs",
        lambda: scheduler.metric("volcano_e2e_scheduling_latency_milliseconds_count") >= 8,
    )
    pods = list_pods(control_plane, namespace)
    assert bound(pods) == []
    # The third member arrives: all of gang A binds (in one session).
    control_plane.create(
        pod_manifest("gang-a-2", scheduler_name, group="gang-a", cpu="8"), namespace
    )
    gang_a.append("gang-a-2")
    wait_until(
        "gang A bound",
        lambda: len(bound(list_pods(control_plane, namespace), gang_a)) == 3,
        diagnose=scheduler.log,
    )
    time.sleep(1.0)  # several more cycles
    assert bound(list_pods(control_plane, namespace), gang_b) == []
    # Volcano's status on both PodGroups, readable as a user reads it.
    wait_until(
        "gang A Running",
        lambda: (
            get_pod_group(control_plane, namespace, "gang-a").get("status", {}).get("phase")
            == "Running"
        ),
    )
    status_b = get_pod_group(control_plane, namespace, "gang-b").get("status", {})
    assert status_b.get("phase") in ("Pending", "Inqueue"), status_b
    conditions = {c["type"]: c for c in status_b.get("conditions", [])}
    assert conditions["Unschedulable"]["status"] == "True", status_b
    assert conditions["Unschedulable"]["lastTransitionTime"]
    # The pending pods tell why (PodScheduled=False), the bound ones got a Scheduled event.
    waiting = list_pods(control_plane, namespace)["gang-b-0"]
    scheduled = [c for c in waiting["status"].get("conditions", []) if c["type"] == "PodScheduled"]
    assert scheduled and scheduled[0]["status"] == "False", waiting["status"]
    wait_until(
        "Scheduled events",
        lambda: any(
            event["reason"] == "Scheduled" and event["involvedObject"]["name"] == "gang-a-0"
            for event in control_plane.request("GET", f"/api/v1/namespaces/{namespace}/events")[
                "items"
            ]
        ),
    )
    assert scheduler.requests("pods/binding", "POST", "201") == 3
    assert scheduler.requests("pods/binding", "POST", "409") == 0
    assert scheduler.forbidden() == []


def test_queue_capability_is_respected(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    make_queue: Callable[..., str],
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 1)
    queue = make_queue(f"capped-{namespace[-6:]}", capability={"cpu": "4", "memory": "64Gi"})
    scheduler = start_scheduler()
    scheduler.wait_ready()
    names = create_gang(
        control_plane, namespace, "capped", 6, scheduler_name, min_member=1, queue=queue, cpu="1"
    )
    wait_until(
        "4 pods bound",
        lambda: len(bound(list_pods(control_plane, namespace))) >= 4,
        diagnose=scheduler.log,
    )
    time.sleep(1.5)
    assert len(bound(list_pods(control_plane, namespace), names)) == 4
    # The queue's status says what it holds.
    wait_until(
        "queue status",
        lambda: (
            control_plane.request("GET", f"{PG_PATH}/queues/{queue}")
            .get("status", {})
            .get("allocated", {})
            .get("cpu")
            == "4"
        ),
    )


def test_reclaim_evicts_and_the_reclaimer_binds(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    make_queue: Callable[..., str],
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 1, capacity={"cpu": "4", "memory": "16Gi"})
    first = make_queue(f"q1-{namespace[-6:]}")
    second = make_queue(f"q2-{namespace[-6:]}")
    scheduler = start_scheduler(conf=RECLAIM_CONF)
    scheduler.wait_ready()
    owners = create_gang(
        control_plane, namespace, "owner", 4, scheduler_name, min_member=1, queue=first
    )
    wait_until(
        "the first queue fills the node",
        lambda: len(bound(list_pods(control_plane, namespace), owners)) == 4,
        diagnose=scheduler.log,
    )
    # The second queue's gang: proportion gives each queue half; reclaim takes it back.
    claimers = create_gang(control_plane, namespace, "claimer", 2, scheduler_name, queue=second)
    wait_until(
        "the reclaimer bound",
        lambda: len(bound(list_pods(control_plane, namespace), claimers)) == 2,
        timeout=45,
        diagnose=scheduler.log,
    )
    pods = list_pods(control_plane, namespace)
    survivors = [name for name in owners if name in pods]
    assert len(survivors) == 2, sorted(pods)
    assert scheduler.requests("pods", "DELETE", "200") == 2
    assert scheduler.metric("volcano_eviction_transactions_total", action="reclaim") >= 1

    def evict_event() -> bool:
        events = control_plane.request("GET", f"/api/v1/namespaces/{namespace}/events")
        return any(e["reason"] == "Evict" and e["type"] == "Warning" for e in events["items"])

    wait_until("a Warning Evict event (written after the binds)", evict_event, timeout=15)
    assert scheduler.forbidden() == []


# A Volcano user's objects, as their documentation and charts write them.
USER_YAML = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: {queue}
spec:
  weight: 1
  reclaimable: false
  capability:
    cpu: 2
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: test
  namespace: {namespace}
spec:
  minMember: 1
  minResources:
    cpu: "1"
    memory: "2048Mi"
  priorityClassName: high-prority
  queue: {queue}
"""


def test_volcano_user_yaml_works_unchanged(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 1)
    queue = f"user-{namespace[-6:]}"
    for document in yaml.safe_load_all(USER_YAML.format(queue=queue, namespace=namespace)):
        control_plane.create(document)
    control_plane.open_queues(queue)  # as the queue controller would (none runs here)
    try:
        scheduler = start_scheduler()
        scheduler.wait_ready()
        control_plane.create(pod_manifest("user-pod", scheduler_name, group="test"), namespace)
        wait_until(
            "the pod bound",
            lambda: bound(list_pods(control_plane, namespace)) == ["user-pod"],
            diagnose=scheduler.log,
        )
        wait_until(
            "PodGroup Running",
            lambda: (
                get_pod_group(control_plane, namespace, "test").get("status", {}).get("phase")
                == "Running"
            ),
        )
        status = get_pod_group(control_plane, namespace, "test")["status"]
        conditions = {c["type"]: c for c in status["conditions"]}
        assert conditions["Scheduled"]["status"] == "True"
        assert conditions["Scheduled"]["reason"] == "tasks in gang are ready to be scheduled"
        assert status.get("running", 0) in (0, 1)
    finally:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"{PG_PATH}/queues/{queue}")


def test_live_decisions_match_the_simulator(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    make_queue: Callable[..., str],
    scheduler_name: str,
) -> None:
    """Seed 000 (examples/three-queues.yaml) as PodGroups and pods: the offline twin and the
    live scheduler, through the same cache and cycle, give each queue the same share."""
    from volcano_py.framework.conf import default_conf
    from volcano_py.scheduler.registry import BUILTIN_ACTIONS, default_registry
    from volcano_py.sim.engine import Simulation

    nodes = make_nodes("cpu", 10, capacity={"cpu": "10", "memory": "40Gi"})
    suffix = namespace[-6:]
    queues = {
        "a": make_queue(f"a-{suffix}", weight=3, guarantee={"resource": {"cpu": "20"}},
                        capability={"cpu": "50"}),
        "b": make_queue(f"b-{suffix}", weight=2, guarantee={"resource": {"cpu": "10"}},
                        capability={"cpu": "80"}),
        "c": make_queue(f"c-{suffix}", weight=5, guarantee={"resource": {"cpu": "30"}}),
    }  # fmt: skip
    objects: list[dict[str, object]] = []
    for key, queue in queues.items():
        group = pod_group_manifest_in(f"job-{key}", queue, namespace)
        objects.append(group)
        for index in range(10):
            manifest = pod_manifest(
                f"job-{key}-{index}", scheduler_name, group=f"job-{key}", cpu="10", memory="4Gi"
            )
            manifest["metadata"]["namespace"] = namespace
            objects.append(manifest)

    # Offline: the same nodes (allocatable as kwok reports it), queues and objects.
    simulation = Simulation(
        default_conf(BUILTIN_ACTIONS),
        default_registry(),
        scheduler_names=frozenset({scheduler_name}),
    )
    sim_objects = [control_plane.request("GET", f"/api/v1/nodes/{name}") for name in nodes]
    sim_objects += [control_plane.request("GET", f"{PG_PATH}/queues/{q}") for q in queues.values()]
    sim_objects += [
        {**o, "status": {"phase": "Pending"}} if o["kind"] == "Pod" else o for o in objects
    ]
    simulation.load(sim_objects)
    simulation.run(5)
    offline = {key: sum(1 for pod in simulation.cluster.binds if f"/job-{key}-" in pod)
               for key in queues}  # fmt: skip
    assert offline == {"a": 3, "b": 2, "c": 5}

    # Live: everything exists before the scheduler starts, as in the simulation.
    for manifest in objects:
        control_plane.create(manifest, namespace)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    wait_until(
        "10 pods bound",
        lambda: len(bound(list_pods(control_plane, namespace))) == 10,
        diagnose=scheduler.log,
    )
    time.sleep(1.0)
    pods = list_pods(control_plane, namespace)
    live = {key: len([n for n in bound(pods) if n.startswith(f"job-{key}-")]) for key in queues}
    assert live == offline
    assert sorted(pods[name]["spec"]["nodeName"] for name in bound(pods)) == sorted(nodes)


def pod_group_manifest_in(name: str, queue: str, namespace: str) -> dict[str, object]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"minMember": 1, "queue": queue},
    }
