"""User guide ``how_to_use_nodegroup_plugin``: nodes labelled ``volcano.sh/nodegroup-name``,
queues with ``nodeGroupAffinity``/``nodeGroupAntiAffinity``. On the guide's four nodes (node1
in groupname1 ... node4 in groupname4) job-1's one pod of 1 CPU goes where the guide says for
its numbered queue setups 1-3; ``strict``; ``enablePreferredOrder``; per-nodegroup limits
(``volcano.sh/nodegroup-resource-limits``) overflowing to another allowed group; hierarchical
queues inheriting the nearest ancestor's affinity.

The guide says that with ``strict: true`` a queue without affinity runs "only on nodes that
have a nodegroup label". Volcano's predicate refuses a labelled node to a queue without
affinity too (``errNodeGroupAffinityNotFound``), so such a queue runs nowhere in strict mode;
volcano-py does the same (docs/migrating-from-volcano.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from volcano_py.testing import Cluster
from volcano_py.testing.objects import build_queue

GROUP_LABEL = "volcano.sh/nodegroup-name"


def _conf(arguments: str = "", flags: str = "") -> str:
    plugin = "  - name: nodegroup\n"
    if flags:
        plugin += f"    {flags}\n"
    if arguments:
        plugin += f"    arguments:\n      {arguments}\n"
    return (
        'actions: "allocate, backfill, preempt, reclaim"\n'
        "tiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n"
        "- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n" + plugin
    )


def _queue(
    name: str,
    affinity: dict[str, list[str]] | None = None,
    anti: dict[str, list[str]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    queue = build_queue(name, 1, reclaimable=True, **fields)
    rules: dict[str, Any] = {}
    for key, terms in (("nodeGroupAffinity", affinity), ("nodeGroupAntiAffinity", anti)):
        if terms:
            rules[key] = {
                f"{kind}DuringSchedulingIgnoredDuringExecution": groups
                for kind, groups in terms.items()
            }
    if rules:
        queue["spec"]["affinity"] = rules
    return queue


def _four_groups(queue: dict[str, Any]) -> Cluster:
    cluster = Cluster()
    for index in range(1, 5):
        cluster.node(f"node{index}", labels={GROUP_LABEL: f"groupname{index}"})
    return cluster.add("Queue", queue).job("job-1", queue=queue["metadata"]["name"])


def _node_of_job_1(queue: dict[str, Any], conf: str = _conf()) -> str | None:
    binds = _four_groups(queue).run(conf=conf).binds
    return binds.get("default/job-1-0")


@pytest.mark.parametrize(
    ("setup", "affinity", "anti", "node"),
    [
        # 1: preferred is a subset of required: the preferred group first.
        (
            1,
            {"required": ["groupname1", "groupname2"], "preferred": ["groupname1"]},
            {"required": ["groupname3", "groupname4"], "preferred": ["groupname3"]},
            "node1",
        ),
        # 2: preferred outside required: only the required group.
        (
            2,
            {"required": ["groupname2"], "preferred": ["groupname1"]},
            {"required": ["groupname4"], "preferred": ["groupname3"]},
            "node2",
        ),
        # 3: anti-affinity wins over affinity.
        (
            3,
            {"required": ["groupname1", "groupname2"], "preferred": ["groupname1"]},
            {"required": ["groupname1"], "preferred": ["groupname2"]},
            "node2",
        ),
    ],
)
def test_the_guides_numbered_queue_setups(
    setup: int, affinity: dict[str, list[str]], anti: dict[str, list[str]], node: str
) -> None:
    assert _node_of_job_1(_queue("default", affinity, anti)) == node, setup


def _labelled_and_plain(queue: dict[str, Any]) -> Cluster:
    return (
        Cluster()
        .node("labelled", labels={GROUP_LABEL: "groupname1"})
        .node("plain")
        .add("Queue", queue)
        .job("job-1")
    )


def test_strict_decides_where_a_queue_without_affinity_runs() -> None:
    loose = _labelled_and_plain(_queue("default")).run(conf=_conf("strict: false"))
    assert loose.binds == {"default/job-1-0": "plain"}
    # The default, strict: true. Volcano refuses both nodes (see the module's text).
    strict = _labelled_and_plain(_queue("default")).run(conf=_conf())
    assert strict.binds == {}


def test_enable_preferred_order_prefers_the_first_listed_group() -> None:
    preferred = {"preferred": ["spark-fixed", "spark-serverless"]}
    cluster = (
        Cluster()
        # The lower-priority group's node sorts first by name: order alone must not decide.
        .node("a-serverless", labels={GROUP_LABEL: "spark-serverless"})
        .node("b-fixed", labels={GROUP_LABEL: "spark-fixed"})
        .add("Queue", _queue("bigdata", preferred))
        .job("spark", queue="bigdata", replicas=2)
    )
    outcome = cluster.run(conf=_conf("enablePreferredOrder: true"))
    assert set(outcome.binds.values()) == {"b-fixed"}


def test_nodegroup_limit_overflows_to_the_other_allowed_group() -> None:
    limits = {"groupname1": {"cpu": "2"}, "groupname2": {"cpu": "50"}}
    queue = _queue(
        "default",
        {"required": ["groupname1", "groupname2"], "preferred": ["groupname1"]},
        annotations={"volcano.sh/nodegroup-resource-limits": json.dumps(limits)},
    )
    cluster = (
        Cluster()
        .node("node1", cpu="8", labels={GROUP_LABEL: "groupname1"})
        .node("node2", cpu="8", labels={GROUP_LABEL: "groupname2"})
        .add("Queue", queue)
        .job("job-1", replicas=4)
    )
    placed = list(cluster.run(conf=_conf()).binds.values())
    assert sorted(placed) == ["node1", "node1", "node2", "node2"]


def test_child_queues_inherit_the_nearest_ancestors_affinity() -> None:
    cluster = (
        Cluster()
        .node("prod", labels={GROUP_LABEL: "production"})
        .node("front", labels={GROUP_LABEL: "frontend"})
        .add("Queue", _queue("root", {"required": ["production"]}))
        .add("Queue", _queue("engineering", parent="root"))
        .add("Queue", _queue("backend-team", parent="engineering"))
        .add("Queue", _queue("frontend-team", {"required": ["frontend"]}, parent="engineering"))
        .job("backend", queue="backend-team")
        .job("web", queue="frontend-team")
    )
    outcome = cluster.run(conf=_conf(flags="enableHierarchy: true"))
    assert outcome.binds == {"default/backend-0": "prod", "default/web-0": "front"}
