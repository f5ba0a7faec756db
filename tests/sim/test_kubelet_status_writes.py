"""The kubelet stand-in's reports take shortcuts that must change nothing: a report is a
status write (``InMemoryCluster.update_status``; ``engine._STATUS_WRITES``) whose watchers
reread nothing of the pod's metadata and spec (the cache, ``cache._STATUS_WRITES_READ_LESS``),
a pod event's job comes from the store's index (``engine._JOB_FROM_STORE``), a Running
pod's first report is made without the general passes (``kubelet._FAST_FIRST_REPORT``), and
a bind keeps the pod's parsed request (``resource._BIND_KEEPS_REQUEST``), and the PodGroup
controller's ``minResources`` comes from a memo (``quota._MIN_RESOURCES_MEMO``). Each
case runs with every shortcut, and with each one off, and the outputs must be the same text;
the first report is also compared with the general code's, pod by pod."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sim.test_kubelet_revisits import _dump
from volcano_py.api import resource
from volcano_py.cache import cache as cache_module
from volcano_py.cli.main import main
from volcano_py.controllers import quota
from volcano_py.sim import engine, kubelet
from volcano_py.sim.cluster import InMemoryCluster
from volcano_py.sim.kubelet import SimKubelet

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SWITCHES = (
    (engine, "_STATUS_WRITES"),
    (engine, "_JOB_FROM_STORE"),
    (cache_module, "_STATUS_WRITES_READ_LESS"),
    (kubelet, "_FAST_FIRST_REPORT"),
    (resource, "_BIND_KEEPS_REQUEST"),
    (quota, "_MIN_RESOURCES_MEMO"),
)
CASES = [
    ("gang-deadlock.yaml",),
    ("gang-preempt.yaml",),
    ("forecast-gpu.yaml",),
    ("three-queues.yaml", "--assume-runtime", "45s"),
    ("seed002-reclaim-capacity.yaml",),
    ("sla-waiting-time.yaml", "--assume-runtime", "2m"),
    ("vgpu.yaml",),
]


def _outputs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> list[str]:
    """The output with every shortcut on, then with all off, then with each one off."""
    outputs = []
    for off in ("none", "all", *(name for _module, name in SWITCHES)):
        with monkeypatch.context() as patch:
            for module, name in SWITCHES:
                patch.setattr(module, name, off not in ("all", name))
            assert main(["simulate", *args]) == 0
        outputs.append(capsys.readouterr().out)
    return outputs


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
@pytest.mark.parametrize("output", ["json", "yaml"])
def test_examples_give_the_same_output_every_way(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: tuple[str, ...],
    output: str,
) -> None:
    args = (str(EXAMPLES / case[0]), *case[1:], "--format", output)
    outputs = _outputs(capsys, monkeypatch, *args)
    assert all(text == outputs[0] for text in outputs)


def _job_dump(directory: Path) -> Path:
    """Given-Running pods of a Volcano Job (filed under it by the store's index), bare
    given-Running pods, pending pods and a node the pods name but the dump lacks."""
    base = json.loads(_dump(directory).read_text())
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ns"},
        "spec": {
            "minAvailable": 2,
            "schedulerName": "volcano",
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 3,
                    "template": {
                        "spec": {
                            "containers": [{"name": "w", "resources": {"requests": {"cpu": "1"}}}],
                            "restartPolicy": "Never",
                        }
                    },
                }
            ],
        },
    }
    stray = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "stray", "namespace": "ns", "labels": {"app": "x"}},
        "spec": {
            "nodeName": "gone",
            "containers": [{"name": "c", "image": "busybox", "resources": {}}],
            "initContainers": [{"name": "init", "image": "busybox"}],
        },
        "status": {"phase": "Running", "podIP": "10.9.9.9", "qosClass": "BestEffort"},
    }
    base["items"] += [job, stray]
    path = directory / "job-dump.json"
    path.write_text(json.dumps(base))
    return path


@pytest.mark.parametrize("runtime", ["30s", "2m"])
@pytest.mark.parametrize("output", ["json", "yaml"])
def test_dumps_give_the_same_output_every_way(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    runtime: str,
    output: str,
) -> None:
    for path in (_dump(tmp_path), _job_dump(tmp_path)):
        args = (str(path), "--assume-runtime", runtime, "--format", output)
        outputs = _outputs(capsys, monkeypatch, *args)
        assert all(text == outputs[0] for text in outputs)


def test_the_shortcuts_are_taken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With the shortcuts the reports are status writes and the cache reads less: the
    comparisons above did compare two paths."""
    writes: list[bool] = []
    original = InMemoryCluster.update

    def counting_update(self: InMemoryCluster, obj: dict[str, Any]) -> None:
        writes.append(obj.get("kind") == "Pod")
        original(self, obj)

    firsts: list[bool] = []
    original_first = SimKubelet._first_report

    def counting_first(self: SimKubelet, pod: Any, now: str) -> dict[str, Any] | None:
        made = original_first(self, pod, now)
        firsts.append(made is not None)
        return made

    monkeypatch.setattr(InMemoryCluster, "update", counting_update)
    monkeypatch.setattr(SimKubelet, "_first_report", counting_first)
    watched: list[str] = []
    original_status = engine.Simulation._watch_status

    def counting_status(self: engine.Simulation, kind: str, key: str, old: Any, obj: Any) -> None:
        watched.append(key)
        original_status(self, kind, key, old, obj)

    monkeypatch.setattr(engine.Simulation, "_watch_status", counting_status)
    assert main(["simulate", str(_dump(tmp_path)), "--cycles", "3", "--format", "json"]) == 0
    # Six given-Running pods reported, three bound and started: nine status writes, each a
    # first report made by the shortcut.
    assert len(watched) == 9 and firsts.count(True) == 9


_STATUS_EXTRAS = st.fixed_dictionaries(
    {},
    optional={
        "startTime": st.sampled_from(["2025-12-31T00:00:00Z", ""]),
        "podIP": st.sampled_from(["10.1.1.1", ""]),
        "hostIP": st.sampled_from(["172.20.0.9", None]),
        "qosClass": st.sampled_from(["Guaranteed", ""]),
        "nominatedNodeName": st.just("n1"),
        "containerStatuses": st.sampled_from([[], None, [{"name": "c", "ready": False}]]),
        "initContainerStatuses": st.sampled_from([[], None]),
        "conditions": st.sampled_from(
            [
                [],
                None,
                [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0"}],
                [{"type": "PodScheduled", "status": "True"}],
                [{"type": "PodScheduled", "status": "False", "lastTransitionTime": "t0"}],
                [
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": "t0"},
                    {"type": "DisruptionTarget", "status": "True", "lastTransitionTime": "t0"},
                ],
            ]
        ),
    },
)
_CONTAINERS = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["c", "d"])},
            optional={
                "image": st.sampled_from(["busybox", ""]),
                "resources": st.sampled_from(
                    [{}, {"requests": {"cpu": "1"}}, {"limits": {"cpu": "1", "memory": "1Gi"}}]
                ),
            },
        ),
        st.just("not a container"),
    ),
    max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["Running", "Pending"]),
    _STATUS_EXTRAS,
    _CONTAINERS,
    st.sampled_from([None, [{"name": "init"}]]),
    st.booleans(),
    st.sampled_from(["n0", "n1", "", None]),
)
def test_a_first_report_is_the_general_one(
    phase: str,
    extras: dict[str, Any],
    containers: list[Any],
    init_containers: list[Any] | None,
    host_network: bool,
    node_name: str | None,
) -> None:
    """``SimKubelet.status(pod, "Running", now)`` with and without ``_first_report``: the
    same status, keys in the same order, for pods it takes and pods it leaves to the general
    code; the addresses handed out in the same sequence."""
    pod_spec: dict[str, Any] = {"containers": containers}
    if node_name is not None:
        pod_spec["nodeName"] = node_name
    if init_containers is not None:
        pod_spec["initContainers"] = init_containers
    if host_network:
        pod_spec["hostNetwork"] = True
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u-1"},
        "spec": pod_spec,
        "status": {"phase": phase, **extras},
    }
    nodes = [{"metadata": {"name": name}} for name in ("n0", "n1")]
    made = []
    for fast in (True, False):
        kubelet._FAST_FIRST_REPORT = fast
        try:
            stand_in = SimKubelet(seed=3)
            stand_in.network.prime(nodes, [])
            made.append([stand_in.status(pod, "Running", "t5") for _ in range(2)])
        finally:
            kubelet._FAST_FIRST_REPORT = True
    assert json.dumps(made[0]) == json.dumps(made[1])


def test_a_scheduled_condition_without_a_transition_time_is_kept_as_given(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A bound pod whose PodScheduled condition has no lastTransitionTime starts (it raised
    KeyError in the general pass over old conditions); the condition is kept as given."""
    items = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {
                "nodeName": "n1",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            },
            "status": {
                "phase": "Pending",
                "conditions": [{"type": "PodScheduled", "status": "True"}],
            },
        },
    ]
    path = tmp_path / "bound.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    for fast in (True, False):
        kubelet._FAST_FIRST_REPORT = fast
        try:
            assert main(["simulate", str(path), "--format", "yaml"]) == 0
        finally:
            kubelet._FAST_FIRST_REPORT = True
        out = capsys.readouterr().out
        assert "phase: Running" in out
        assert "    - status: 'True'\n      type: PodScheduled" in out
