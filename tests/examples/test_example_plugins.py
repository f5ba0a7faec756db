"""The example out-of-tree plugin (examples/plugins), loaded the way a user loads it: through
``load_plugins_dir``, then run in a session built with ``volcano_py.testing``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from volcano_py.cli.main import main
from volcano_py.scheduler.plugins_dir import load_plugins_dir
from volcano_py.testing import Cluster

ROOT = Path(__file__).resolve().parents[2]
PLUGINS_DIR = ROOT / "examples" / "plugins"
NAME = "least-gpu-fragmentation"
GPU = "nvidia.com/gpu"


def _cluster() -> Cluster:
    # gpu-busy has 2 of its 8 GPUs idle, gpu-empty all 8; cpu-only has none.
    return (
        Cluster()
        .node("gpu-empty", cpu="32", memory="128Gi", **{GPU: "8"})
        .node("gpu-busy", cpu="32", memory="128Gi", **{GPU: "8"})
        .node("cpu-only", cpu="32", memory="128Gi")
        .queue("default")
        .pod_group("busy", phase="Running")
        .pod("busy-0", group="busy", node="gpu-busy", scalars={GPU: "6"})
    )


def test_the_example_directory_loads_one_plugin() -> None:
    builders = load_plugins_dir(PLUGINS_DIR)
    assert list(builders) == [NAME]


def test_gpu_task_goes_where_it_leaves_fewest_idle_gpus() -> None:
    builders = load_plugins_dir(PLUGINS_DIR)
    outcome = (
        _cluster()
        .job("train", replicas=1, scalars={GPU: "1"})
        .run(actions=["allocate"], plugins={NAME: ["enableNodeOrder"]}, extra_plugins=builders)
    )
    outcome.expect_binds({"default/train-0": "gpu-busy"})


def test_cpu_task_keeps_off_the_gpu_nodes() -> None:
    builders = load_plugins_dir(PLUGINS_DIR)
    outcome = (
        _cluster()
        .job("web", replicas=2, cpu="2", memory="1Gi")
        .run(actions=["allocate"], plugins={NAME: ["enableNodeOrder"]}, extra_plugins=builders)
    )
    outcome.expect_binds({"default/web-0": "cpu-only", "default/web-1": "cpu-only"})


def test_scores_are_the_documented_formula() -> None:
    builders = load_plugins_dir(PLUGINS_DIR)
    outcome = (
        _cluster()
        .job("train", replicas=1, scalars={GPU: "1"})
        .run(actions=[], plugins={NAME: ["enableNodeOrder"]}, extra_plugins=builders)
    )
    ssn = outcome.session
    task = next(iter(ssn.jobs["default/train"].tasks.values()))
    rows = np.array([ssn.nodes[name].row for name in ("gpu-empty", "gpu-busy", "cpu-only")])
    scores = ssn.node_scores(task, rows)
    # 100 * (1 - idle after / allocatable): 1 - 7/8 and 1 - 1/8; no GPUs: 0.
    assert np.allclose(scores, [12.5, 87.5, 0.0])


def test_simulate_loads_the_plugins_dir(capsys: pytest.CaptureFixture[str]) -> None:
    """The command docs/plugins.md shows: the plugin keeps gpu-node-2 whole for "train"."""
    example = str(ROOT / "examples" / "gpu-fragmentation.yaml")
    assert main(["simulate", "--plugins-dir", str(PLUGINS_DIR), example]) == 0
    pods = json.loads(capsys.readouterr().out)["pods"]
    nodes = {name: pod["node"] for name, pod in pods.items()}
    assert {nodes[f"default/tune-worker-{i}"] for i in range(4)} == {"gpu-node-1"}
    assert {nodes["default/web-server-0"], nodes["default/web-server-1"]} == {"cpu-node"}
    assert nodes["default/train-trainer-0"] == "gpu-node-2"
