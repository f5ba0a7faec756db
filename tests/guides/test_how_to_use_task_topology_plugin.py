"""User guide ``how_to_use_task_topology_plugin``: ``task-topology`` (``task-topology.weight:
10``) reads the job's annotations, which the job controller copies to its PodGroup:

* ``volcano.sh/task-topology-affinity: "ps,worker;ps,evaluator"``: those tasks "should be set on
  same nodes";
* ``volcano.sh/task-topology-anti-affinity: "ps;worker,chief;chief,evaluator"``: "should be set
  on different nodes" (``ps`` alone: its pods apart from one another);
* ``volcano.sh/task-topology-task-order: "ps,worker,chief,evaluator"``: ps placed first.

The guide's example is a TFJob; here the same tasks are a Volcano Job's (the guide: "add
annotations in volcano job or tensorflow job"). Node scores, not filters: with room enough, the
placements follow the annotations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import conf_map, node, simulate, task, vcjob

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
  - name: task-topology
    arguments:
      task-topology.weight: 10
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
ANNOTATIONS = {
    "volcano.sh/task-topology-affinity": "ps,worker;ps,evaluator",
    "volcano.sh/task-topology-anti-affinity": "ps;worker,chief;chief,evaluator",
    "volcano.sh/task-topology-task-order": "ps,worker,chief,evaluator",
}


def tf_like_job(annotations: dict[str, str]) -> dict[str, Any]:
    tasks = [
        task("ps", 2, cpu="1"),
        task("worker", 2, cpu="1"),
        task("chief", 1, cpu="1"),
        task("evaluator", 1, cpu="1"),
    ]
    job = vcjob("tf", tasks, minAvailable=6)
    job["metadata"]["annotations"] = dict(annotations)
    return job


def nodes_of(binds: dict[str, str], role: str) -> list[str]:
    return [binds[key] for key in sorted(binds) if key.startswith(f"default/tf-{role}-")]


def test_tasks_follow_the_annotations(tmp_path: Path) -> None:
    objects = [
        conf_map(CONF),
        *(node(f"n{i}", cpu="16") for i in range(4)),
        tf_like_job(ANNOTATIONS),
    ]
    report, final, err = simulate(tmp_path, objects)
    assert err == ""
    binds = report["binds"]
    assert len(binds) == 6
    ps, workers = nodes_of(binds, "ps"), nodes_of(binds, "worker")
    (chief,), (evaluator,) = nodes_of(binds, "chief"), nodes_of(binds, "evaluator")
    # ps apart from each other; each worker and the evaluator with a ps.
    assert len(set(ps)) == 2
    assert set(workers) <= set(ps) and evaluator in ps
    # chief apart from the workers and the evaluator.
    assert chief not in workers and chief != evaluator
    # The job controller hands the annotations to the PodGroup, where the plugin reads them.
    (group,) = [v for (kind, _, name), v in final.items() if kind == "PodGroup"]
    assert {k: group["metadata"]["annotations"][k] for k in ANNOTATIONS} == ANNOTATIONS


def test_anti_affinity_is_a_preference_not_a_filter(tmp_path: Path) -> None:
    """One node: the whole job runs there, anti-affinity notwithstanding (as upstream, the
    plugin only scores nodes)."""
    objects = [conf_map(CONF), node("n0", cpu="16"), tf_like_job(ANNOTATIONS)]
    report, _, _ = simulate(tmp_path, objects)
    assert set(report["binds"].values()) == {"n0"} and len(report["binds"]) == 6
