"""User guide ``how_to_use_capacity_plugin``: two nodes of 4 CPU/16Gi, queue1 deserving 2 CPU
and queue2 6 CPU, the guide's conf (reclaim on, capacity instead of proportion). demo-1 (8
pods of 1 CPU/4Gi in queue1) takes the whole idle cluster; then demo-2 (the same in queue2)
arrives and reclaims.

The guide says demo-2 ends with 6 running and demo-1 with 2. Volcano's scheduler reclaims
for one pod only: a Deployment's pods share one PodGroup (one per ReplicaSet) of minMember 1,
and reclaim stops serving a job once gang no longer calls it starving (running + pipelined >=
minMember). volcano-py does the same (docs/migrating-from-volcano.md, "Where Volcano's guides
and Volcano disagree"). Pods that are each their own PodGroup (bare pods here) do reach the
guide's 6 and 2."""

from __future__ import annotations

from pathlib import Path

from tests.guides.guide_sim import (
    Objects,
    bare_pod,
    conf_map,
    count,
    deployment,
    node,
    simulate,
    then,
    vqueue,
)

CONF = """\
actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: capacity
  - name: nodeorder
  - name: binpack
"""
QUEUE1 = {"scheduling.volcano.sh/queue-name": "queue1"}
QUEUE2 = {"scheduling.volcano.sh/queue-name": "queue2"}


def _demo_1_runs_everywhere(tmp_path: Path) -> Objects:
    cluster = [
        conf_map(CONF),
        node("n1", cpu="4", memory="16Gi"),
        node("n2", cpu="4", memory="16Gi"),
        vqueue("queue1", deserved={"cpu": "2", "memory": "8Gi"}),
        vqueue("queue2", deserved={"cpu": "6", "memory": "24Gi"}),
        deployment("demo-1", 8, "1", "4Gi", QUEUE1),
    ]
    report, objects, err = simulate(tmp_path, cluster)
    assert "warning" not in err
    assert count(report, "demo-1-", "Running") == 8
    return objects


def test_demo_2_reclaims_until_its_pod_group_is_satisfied(tmp_path: Path) -> None:
    before = _demo_1_runs_everywhere(tmp_path)
    report = then(tmp_path, before, [deployment("demo-2", 8, "1", "4Gi", QUEUE2)])
    assert len(report["evictions"]) == 1
    assert count(report, "demo-2-", "Running") == 1
    assert count(report, "demo-1-", "Running") == 7
    assert report["queues"]["queue1"]["allocated"]["cpu"] == "7"


def test_pods_of_their_own_reclaim_up_to_the_deserved_share(tmp_path: Path) -> None:
    before = _demo_1_runs_everywhere(tmp_path)
    demo_2 = [bare_pod(f"demo-2-{index}", "1", "4Gi", QUEUE2) for index in range(8)]
    report = then(tmp_path, before, demo_2)
    assert count(report, "demo-2-", "Running") == 6
    assert count(report, "demo-1-", "Running") == 2
    assert report["queues"]["queue2"]["allocated"]["cpu"] == "6"
    assert report["queues"]["queue1"]["allocated"]["cpu"] == "2"


def test_a_min_member_of_six_reclaims_the_deserved_share(tmp_path: Path) -> None:
    """The workaround docs/migrating-from-volcano.md gives: the Deployment's PodGroup asks for
    6 members, so demo-2 stays starving until 6 run."""
    before = _demo_1_runs_everywhere(tmp_path)
    demo_2 = deployment("demo-2", 8, "1", "4Gi", QUEUE2)
    demo_2["metadata"]["annotations"] = {"scheduling.volcano.sh/group-min-member": "6"}
    report = then(tmp_path, before, [demo_2])
    assert count(report, "demo-2-", "Running") == 6
    assert count(report, "demo-1-", "Running") == 2
