"""nodeorder's ImageLocality scorer (``imagelocality.weight``; kube-scheduler
``plugins/imagelocality``, which Volcano's nodeorder wraps).

Transcribes kube-scheduler ``image_locality_test.go``: ``TestImageLocalityPriority`` (all seven
cases, through the vectorised scorer and the per-node reference) and
``TestNormalizedImageName`` (all four). Adds: the node model reads ``status.images``; a
Hypothesis test that the vectorised scorer equals the reference; the weight; a whole allocate
session where the image decides; ``simulate`` with node images; bad image input.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cli.main import main
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import nodeorder
from volcano_py.plugins.nodeorder import (
    ImageLocality,
    image_locality_reference,
    normalized_image_name,
    pod_images,
)

MB = 1024 * 1024
ONLY_IMAGES = {
    "leastrequested.weight": 0,
    "mostrequested.weight": 0,
    "balancedresource.weight": 0,
    "nodeaffinity.weight": 0,
    "podaffinity.weight": 0,
    "tainttoleration.weight": 0,
    "imagelocality.weight": 1,
    "podtopologyspread.weight": 0,
}


def fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


def image_node(name: str, images: list[tuple[list[str], int]]) -> dict[str, Any]:
    node = build_node(name, resource_list("4", "8Gi", pods="10"))
    if images:
        node["status"]["images"] = [
            {"names": names, "sizeBytes": size * MB} for names, size in images
        ]
    return node


def image_pod(name: str, images: list[str], init: list[str] | None = None) -> dict[str, Any]:
    pod = build_pod("ns", name, "", "Pending", resource_list("100m", "100Mi"), "pg")
    first = pod["spec"]["containers"][0]
    pod["spec"]["containers"] = [
        dict(first, name=f"c{i}", image=img) for i, img in enumerate(images)
    ]
    if init:
        pod["spec"]["initContainers"] = [
            {"name": f"i{i}", "image": img} for i, img in enumerate(init)
        ]
    return pod


NODE_40_300_2000 = [
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300),
    (["gcr.io/2000:latest"], 2000),
]
NODE_250_10 = [(["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)]
NODE_600_40_900 = [
    (["gcr.io/600:latest"], 600),
    (["gcr.io/40:latest"], 40),
    (["gcr.io/900:latest"], 900),
]
NODE_300_600_900 = [
    (["gcr.io/300:latest"], 300),
    (["gcr.io/600:latest"], 600),
    (["gcr.io/900:latest"], 900),
]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)]
NODE_20_30_40 = [
    (["gcr.io/20:latest"], 20),
    (["gcr.io/30:latest"], 30),
    (["gcr.io/40:latest"], 40),
]


def make_session(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> Session:
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("pg", "ns", "q1", 0))
    for node in nodes:
        cache.apply_event("Node", "ADDED", node)
    for pod in pods:
        cache.apply_event("Pod", "ADDED", pod)
    option = PluginOption.with_flags("nodeorder", "enableNodeOrder", arguments=ONLY_IMAGES)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"nodeorder": nodeorder.new}, cache)


def reference_scores(ssn: Session, task: TaskInfo) -> list[int]:
    """``image_locality_reference`` for every session node, image states as kube-scheduler's
    cache builds them (size from the first node listing the name, count of nodes)."""
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for node in ssn.node_list:
        for name, size in node.images.items():
            sizes.setdefault(name, size)
            counts[name] = counts.get(name, 0) + 1
    images = pod_images(task.pod)
    return [
        image_locality_reference(images, node.images, sizes, counts, len(ssn.node_list))
        for node in ssn.node_list
    ]


# ------------------------------------------------------------------ TestImageLocalityPriority


@pytest.mark.parametrize(
    ("case", "containers", "init", "nodes", "expected"),
    [
        (
            "two images spread on two nodes, prefer the larger image one",
            ["gcr.io/40", "gcr.io/250"],
            None,
            [NODE_40_300_2000, NODE_250_10],
            [0, 5],
        ),
        (
            "two images on one node, prefer this node",
            ["gcr.io/40", "gcr.io/300"],
            None,
            [NODE_40_300_2000, NODE_250_10],
            [7, 0],
        ),
        (
            "if exceed limit, use limit",
            ["gcr.io/10", "gcr.io/4000"],
            None,
            [NODE_4000_30, NODE_250_10],
            [100, 0],
        ),
        (
            "if exceed limit, use limit (with node which has no images present)",
            ["gcr.io/10", "gcr.io/4000"],
            None,
            [NODE_4000_30, NODE_250_10, []],
            [66, 0, 0],
        ),
        (
            "pod with multiple large images, node2 is preferred",
            ["gcr.io/300", "gcr.io/600", "gcr.io/900"],
            None,
            [NODE_600_40_900, NODE_300_600_900, []],
            [32, 36, 0],
        ),
        (
            "pod with multiple small images",
            ["gcr.io/30", "gcr.io/40"],
            None,
            [NODE_20_30_40, NODE_4000_30],
            [1, 0],
        ),
        (
            "include InitContainers: two images spread on two nodes, prefer the larger image one",
            ["gcr.io/30"],
            ["gcr.io/300"],
            [NODE_40_300_2000, NODE_20_30_40],
            [6, 0],
        ),
    ],
)
def test_image_locality_priority(
    case: str,
    containers: list[str],
    init: list[str] | None,
    nodes: list[list[tuple[list[str], int]]],
    expected: list[int],
) -> None:
    """kube-scheduler ``TestImageLocalityPriority``."""
    built = [image_node(f"node{i + 1}", images) for i, images in enumerate(nodes)]
    ssn = make_session(built, [image_pod("p", containers, init)])
    [task] = ssn.jobs["ns/pg"].tasks.values()
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    assert ssn.node_scores(task, rows).tolist() == expected, case
    assert reference_scores(ssn, task) == expected, case


@pytest.mark.parametrize(
    ("case", "given_name", "expected"),
    [
        ("add :latest postfix 1", "root", "root:latest"),
        ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("keep it as is 1", "root:tag", "root:tag"),
        ("keep it as is 2", "root@" + fake_digest("root"), "root@" + fake_digest("root")),
    ],
)
def test_normalized_image_name(case: str, given_name: str, expected: str) -> None:
    """kube-scheduler ``TestNormalizedImageName``."""
    assert normalized_image_name(given_name) == expected, case


# ------------------------------------------------------------------ beyond upstream's tests


def test_node_model_carries_status_images() -> None:
    """Every name of an image finds its size; a malformed entry is skipped, not fatal."""
    node = image_node("n", [(["a:1", "a@" + fake_digest("a")], 5)])
    node["status"]["images"].append({"names": "not-a-list", "sizeBytes": 1})
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", node)
    info = cache.snapshot().nodes["n"]
    assert info.images == {"a:1": 5 * MB, "a@" + fake_digest("a"): 5 * MB}


def test_weight_scales_and_zero_turns_it_off() -> None:
    nodes = [image_node("node1", NODE_40_300_2000), image_node("node2", NODE_250_10)]
    pods = [image_pod("p", ["gcr.io/40", "gcr.io/300"])]
    for weight, expected in ((3, [21, 0]), (0, [0, 0])):
        cache = SchedulerCache()
        cache.apply_event("Queue", "ADDED", build_queue("q1", 1))
        cache.apply_event("PodGroup", "ADDED", build_pod_group("pg", "ns", "q1", 0))
        for node in nodes:
            cache.apply_event("Node", "ADDED", node)
        cache.apply_event("Pod", "ADDED", pods[0])
        arguments = dict(ONLY_IMAGES, **{"imagelocality.weight": weight})
        option = PluginOption.with_flags("nodeorder", "enableNodeOrder", arguments=arguments)
        conf = SchedulerConf(actions=[], tiers=[Tier([option])])
        ssn = open_session(cache.snapshot(), conf, {"nodeorder": nodeorder.new}, cache)
        [task] = ssn.jobs["ns/pg"].tasks.values()
        rows = np.arange(2, dtype=np.intp)
        assert ssn.node_scores(task, rows).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(
        st.dictionaries(
            st.sampled_from(["a:latest", "b:latest", "c:v1", "d:latest"]),
            st.integers(0, 3000),
            max_size=4,
        ),
        min_size=1,
        max_size=6,
    ),
    containers=st.lists(st.sampled_from(["a", "b", "c:v1", "d", "e"]), min_size=1, max_size=4),
    init=st.lists(st.sampled_from(["a", "c:v1", "e"]), max_size=2),
)
def test_vectorised_equals_reference(
    nodes: list[dict[str, int]], containers: list[str], init: list[str]
) -> None:
    built = [
        image_node(f"n{i}", [([name], size) for name, size in images.items()])
        for i, images in enumerate(nodes)
    ]
    ssn = make_session(built, [image_pod("p", containers, init)])
    [task] = ssn.jobs["ns/pg"].tasks.values()
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    assert ssn.node_scores(task, rows).tolist() == reference_scores(ssn, task)
    # A subset of rows reads the same per-node values.
    odd = rows[1::2]
    assert ssn.node_scores(task, odd).tolist() == reference_scores(ssn, task)[1::2]


def test_vectors_are_built_once_per_image() -> None:
    ssn = make_session(
        [image_node("node1", NODE_40_300_2000), image_node("node2", NODE_250_10)],
        [image_pod("p", ["gcr.io/40", "gcr.io/300"]), image_pod("q", ["gcr.io/40"])],
    )
    locality = ImageLocality(ssn.node_list)
    first, second = sorted(ssn.jobs["ns/pg"].tasks.values(), key=lambda t: t.name)
    locality.scores(first)
    vector = locality.image_vector("gcr.io/40:latest")
    locality.scores(second)
    assert locality.image_vector("gcr.io/40:latest") is vector


def test_allocate_session_prefers_the_node_with_the_image() -> None:
    """A whole allocate session with nodeorder at its default weights: two identical nodes,
    only node2 has the pod's 900 MiB image; the pod binds there."""
    case = Case(
        name="image locality decides",
        plugins={"gang": ["enableJobReady"], "nodeorder": ["enableNodeOrder"]},
        nodes=[image_node("node1", []), image_node("node2", [(["train:v3"], 900)])],
        pods=[image_pod("p1", ["train:v3"])],
        pod_groups=[build_pod_group("pg", "ns", "q1", 0)],
        queues=[build_queue("q1", 1)],
        expect_bind_map={"ns/p1": "node2"},
    )
    check(case, run_case(case, ["allocate"]))


CONF = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def _node(name: str, images: list[dict[str, Any]] | None) -> dict[str, Any]:
    status: dict[str, Any] = {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}}
    if images is not None:
        status["images"] = images
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": status}


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "c",
                    "image": "registry.example/train:v3",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
        },
    }


def test_simulate_uses_node_images(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
        "data": {"volcano-scheduler.conf": CONF},
    }
    image = {"names": ["registry.example/train:v3"], "sizeBytes": 900 * MB}
    documents = [_node("a", None), _node("b", [image]), _node("c", None), _pod("p"), conf]
    path = tmp_path / "images.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    assert main(["simulate", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["binds"] == {"default/p": "b"}


def test_simulate_refuses_bad_images(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(_node("a", [{"names": ["x"], "sizeBytes": "big"}])))
    assert main(["simulate", str(path)]) == 2
    # The API server's type check (strict decoding) answers first.
    assert 'Node a: status.images[0].sizeBytes: expected an integer, got "big"' in (
        capsys.readouterr().err
    )
