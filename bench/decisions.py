"""A digest of every scheduling decision on random clusters, to show that a speed-up changed
none (issue 14). Not a benchmark: run it from two trees and compare the output.

    cd /path/to/base && python -m bench.decisions 0 60 > base.txt
    cd /path/to/branch && python -m bench.decisions 0 60 > branch.txt
    diff base.txt branch.txt

``python -m`` puts the current directory first on the path, so each run uses its own tree's
``volcano_py``. Each seed draws a cluster: 5 to 400 nodes (zones, some tainted NoSchedule or
PreferNoSchedule, some with images, some with a low pod limit), running pods (some with
required or preferred inter-pod (anti-)affinity), and gangs in three queues (selectors,
tolerations, (anti-)affinity, host ports, images, priorities, a member of another shape now
and then). It runs two sessions with one of three action lists and one of three node-order
setups and prints, per seed, an md5 of the binds, every task's status and node, the PodGroup
phases and conditions and the next start index after each session.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from typing import Any

from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import parse_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action
from volcano_py.testing.objects import (
    build_node,
    build_pod,
    build_pod_group,
    build_queue,
    resource_list,
)

ZONES = ("a", "b", "c", "d")
REQUESTS = (("1", "1Gi"), ("2", "2Gi"), ("500m", "3Gi"), ("3", "1Gi"), ("250m", "512Mi"))
IMAGES = ("img-a:1", "img-b:2", "img-c:latest")
CONF = """\
actions: "{actions}"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder{extra}
"""


def _affinity(draw: random.Random, kind: str) -> dict[str, Any]:
    term = {
        "labelSelector": {"matchLabels": {"app": draw.choice(["x", "y", "z"])}},
        "topologyKey": draw.choice(["zone", "kubernetes.io/hostname"]),
    }
    if kind == "required-anti":
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if kind == "required":
        return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    section = "podAffinity" if kind == "preferred" else "podAntiAffinity"
    weighted = {"weight": draw.randint(1, 100), "podAffinityTerm": term}
    return {section: {"preferredDuringSchedulingIgnoredDuringExecution": [weighted]}}


def cluster(seed: int) -> tuple[random.Random, dict[str, list[dict[str, Any]]]]:
    draw = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    rich = draw.random() < 0.6
    for i in range(draw.choice([5, 20, 60, 150, 250, 400])):
        name = f"n{i:03d}"
        taints = None
        if rich and draw.random() < 0.15:
            effect = draw.choice(["NoSchedule", "PreferNoSchedule"])
            taints = [{"key": "dedicated", "value": "x", "effect": effect}]
        allocatable = resource_list(
            draw.choice(["2", "4", "8", "16"]),
            draw.choice(["4Gi", "8Gi", "16Gi", "32Gi"]),
            pods=draw.choice(["110", "110", "3", "5"]),
        )
        labels = {"zone": draw.choice(ZONES), "kubernetes.io/hostname": name}
        node = build_node(name, allocatable, labels, taints=taints)
        if rich and draw.random() < 0.3:
            node["status"]["images"] = [
                {"names": [image], "sizeBytes": draw.randint(10, 900) * 1024 * 1024}
                for image in draw.sample(IMAGES, draw.randint(1, 3))
            ]
        nodes.append(node)
        for j in range(draw.randint(0, 3)):
            cpu, memory = draw.choice(REQUESTS)
            group = f"run-{i}-{j}"
            groups.append(
                build_pod_group(group, "ns", draw.choice(["q1", "q2"]), 1, phase="Running")
            )
            kind = draw.choice(["required-anti", "preferred", "preferred-anti"])
            affinity = _affinity(draw, kind) if rich and draw.random() < 0.1 else None
            app = {"app": draw.choice(["x", "y", "z"])} if rich else None
            pods.append(
                build_pod(
                    "ns",
                    group,
                    name,
                    "Running",
                    resource_list(cpu, memory),
                    group,
                    labels=app,
                    affinity=affinity,
                )
            )
    for g in range(draw.randint(1, 12)):
        size = draw.randint(1, 30)
        group = f"gang-{g}"
        groups.append(
            build_pod_group(group, "ns", draw.choice(["q1", "q2", "q3"]), draw.randint(1, size))
        )
        cpu, memory = draw.choice(REQUESTS)
        selector = {"zone": draw.choice(ZONES)} if draw.random() < 0.3 else None
        tolerations = [{"key": "dedicated", "operator": "Exists"}] if draw.random() < 0.3 else None
        kind = draw.choice(["required-anti", "required", "preferred", "preferred-anti"])
        affinity = _affinity(draw, kind) if rich and draw.random() < 0.25 else None
        ports = [{"containerPort": 80, "hostPort": 8080}] if rich and draw.random() < 0.1 else None
        app = {"app": draw.choice(["x", "y", "z"])} if rich else None
        priority = draw.choice([None, 1, 10])
        for t in range(size):
            if draw.random() < 0.1:
                cpu, memory = draw.choice(REQUESTS)
            pod = build_pod(
                "ns",
                f"{group}-{t}",
                "",
                "Pending",
                resource_list(cpu, memory),
                group,
                labels=app,
                node_selector=selector,
                tolerations=tolerations,
                affinity=affinity,
                ports=ports,
                priority=priority,
            )
            if rich and draw.random() < 0.3:
                pod["spec"]["containers"][0]["image"] = draw.choice(IMAGES)
            pods.append(pod)
    queues = [build_queue("q1", 1), build_queue("q2", 2), build_queue("q3", 1)]
    return draw, {"nodes": nodes, "pods": pods, "groups": groups, "queues": queues}


def conf_text(draw: random.Random) -> str:
    """The scheduler conf of a seed, drawn after its cluster: one of three action lists and
    one of three node-order setups."""
    actions = draw.choice(
        [
            "enqueue, allocate, backfill",
            "enqueue, allocate, preempt, reclaim, backfill",
            "allocate, backfill",
        ]
    )
    extra = draw.choice(
        ["", "\n    arguments:\n      mostrequested.weight: 2", "\n  - name: binpack"]
    )
    return CONF.format(actions=actions, extra=extra)


def decisions(seed: int) -> tuple[str, int]:
    """(md5 of the decisions of two sessions, binds) for the cluster of ``seed``."""
    draw, objects = cluster(seed)
    conf = parse_conf(conf_text(draw), BUILTIN_ACTIONS)
    binder = RecordingBinder()
    cache = SchedulerCache(binder=binder)
    for kind, key in (
        ("Queue", "queues"),
        ("Node", "nodes"),
        ("PodGroup", "groups"),
        ("Pod", "pods"),
    ):
        for item in objects[key]:
            cache.apply_event(kind, "ADDED", item)
    state = SchedulingState(seed=seed)
    outcome = []
    for _ in range(2):
        ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
        for name in conf.actions:
            new_action(name).execute(ssn)
        close_session(ssn)
        tasks = sorted(
            (task.key, task.status.name, task.node_name)
            for job in ssn.jobs.values()
            for task in job.tasks.values()
        )
        pod_groups = sorted(
            (
                job.name,
                job.pod_group.phase,
                [
                    (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
                    for c in job.pod_group.conditions
                ],
            )
            for job in ssn.jobs.values()
            if job.pod_group is not None
        )
        outcome.append([sorted(binder.binds.items()), tasks, pod_groups, state.next_start_index])
    digest = hashlib.md5(json.dumps(outcome, default=str).encode()).hexdigest()
    return digest, len(binder.binds)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    first, last = (int(args[0]), int(args[1])) if len(args) == 2 else (0, 60)
    for seed in range(first, last):
        digest, binds = decisions(seed)
        print(seed, digest, binds, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
