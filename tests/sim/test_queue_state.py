"""simulate plays the queue controller: a Queue given without a state is Open before the first
session (SIMULATION.md "Queue without status is Open"), whether it comes from an input file or
is loaded directly; the scheduler itself, as Volcano's, takes a queue without a state as not
Open. A pod waiting on a Closed queue says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main
from volcano_py.framework.conf import default_conf
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, default_registry
from volcano_py.sim.engine import Simulation

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
}


def queue(name: str, status: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1},
    }
    if status is not None:
        found["status"] = status
    return found


def pod_group(name: str, queue_name: str, status: dict[str, Any] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": 1, "queue": queue_name},
    }
    if status is not None:
        found["status"] = status
    return found


def pod(name: str, group: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {"scheduling.k8s.io/group-name": group},
        },
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        },
        "status": {"phase": "Pending"},
    }


def test_a_loaded_queue_without_state_is_opened_before_the_first_session() -> None:
    simulation = Simulation(default_conf(BUILTIN_ACTIONS), default_registry())
    simulation.load([NODE, queue("q"), pod_group("g", "q"), pod("p", "g")])
    assert simulation.cluster.get("Queue", "q")["status"]["state"] == "Open"
    simulation.run(3)
    assert simulation.cluster.binds == {"default/p": "n1"}


@pytest.mark.parametrize("status", [None, {}])
def test_an_input_queue_without_state_is_open(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, status: dict[str, Any] | None
) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(
        yaml.safe_dump_all([NODE, queue("q", status), pod_group("g", "q"), pod("p", "g")])
    )
    assert main(["simulate", str(path), "--cycles", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["binds"] == {"default/p": "n1"}
    assert report["queues"]["q"]["state"] == "Open"


def test_a_pod_waiting_on_a_closed_queue_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An Inqueue PodGroup (admitted before its queue closed) in a Closed queue: proportion
    allocates nothing in it."""
    path = tmp_path / "input.yaml"
    objects = [
        NODE,
        queue("q", {"state": "Closed"}),
        pod_group("g", "q", {"phase": "Inqueue"}),
        pod("p", "g"),
    ]
    path.write_text(yaml.safe_dump_all(objects))
    assert main(["simulate", str(path), "--cycles", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["binds"] == {}
    assert report["unschedulable"] == {"default/g": "queue q is Closed, not Open"}
