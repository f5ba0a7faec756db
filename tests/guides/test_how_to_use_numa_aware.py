"""User guide ``how_to_use_numa_aware``: the practice. node-1 has 12 allocatable CPUs on each of
its two NUMA nodes, node-2 20; both kubelets run the static CPU manager with the best-effort
topology policy, as each node's Numatopology (the resource exporter's) says. A Volcano Job task
of 16 CPUs with ``topologyPolicy: best-effort`` goes to node-2, "because it can allocate the cpu
request of the pod on a single NUMA node and the node-1 needs to do this on two NUMA nodes".

Also: the task's policy reaches its pod as ``volcano.sh/numa-topology-policy`` (the annotation
the guide's TFJob sets by hand, here on pods as the TF operator would create them); with
``single-numa-node`` everywhere, node-1 is no candidate at all, and a pod no NUMA node can hold
waits, saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.device_objects import numatopology
from tests.guides.guide_sim import (
    bare_pod,
    conf_map,
    node,
    pending_reason,
    pod,
    simulate,
    task,
    vcjob,
)

CONF = """\
actions: "enqueue, allocate, backfill"
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
  - name: binpack
  - name: numa-aware
    arguments:
      weight: 10
"""
POLICY = "volcano.sh/numa-topology-policy"


def cluster(policy: str) -> list[dict[str, Any]]:
    return [
        conf_map(CONF),
        node("node-1", cpu="24", memory="64Gi"),
        node("node-2", cpu="40", memory="64Gi"),
        numatopology("node-1", 12, policy),
        numatopology("node-2", 20, policy),
    ]


def guide_job(policy: str, cpu: str = "16") -> dict[str, Any]:
    """The guide's job: limits only, so a Guaranteed pod with whole CPUs."""
    test = {**task("test", 1, cpu=None), "topologyPolicy": policy}
    test["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"cpu": cpu, "memory": "100Mi"}
    }
    test["template"]["spec"]["restartPolicy"] = "OnFailure"
    return vcjob("vj-test", [test], minAvailable=1)


def tf_pod(name: str, policy: str) -> dict[str, Any]:
    """A pod as the TF operator makes it from the guide's TFJob (15 CPUs, Guaranteed)."""
    found = bare_pod(name, "15", "2Gi", annotations={POLICY: policy})
    found["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "15", "memory": "2Gi"}
    return found


def test_the_job_goes_where_one_numa_node_holds_it(tmp_path: Path) -> None:
    report, final, err = simulate(tmp_path, [*cluster("best-effort"), guide_job("best-effort")])
    assert err == ""
    assert report["binds"] == {"default/vj-test-test-0": "node-2"}
    annotations = pod(final, "vj-test-test-0")["metadata"]["annotations"]
    assert annotations[POLICY] == "best-effort"


def test_tfjob_pods_with_the_annotation(tmp_path: Path) -> None:
    objects = [*cluster("best-effort"), tf_pod("tfjob-test-ps-0", "best-effort")]
    report, _, _ = simulate(tmp_path, objects)
    assert report["binds"] == {"default/tfjob-test-ps-0": "node-2"}


def test_single_numa_node_keeps_node_1_out(tmp_path: Path) -> None:
    """16 CPUs: only node-2 has a NUMA node that holds them; 24 fit none, and the pod waits."""
    report, _, _ = simulate(tmp_path, [*cluster("single-numa-node"), guide_job("single-numa-node")])
    assert report["binds"] == {"default/vj-test-test-0": "node-2"}
    too_big = guide_job("single-numa-node", cpu="24")
    report, final, _ = simulate(tmp_path, [*cluster("single-numa-node"), too_big])
    assert report["binds"] == {}
    assert "cannot be assigned by numa" in pending_reason(final, "vj-test-test-0")
