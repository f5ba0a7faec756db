"""The kubelet stand-in does not look again, next cycle, at a pod whose only change since its
last look was its own status write (``engine._SKIP_OWN_WRITES``): such a look finds nothing
to do. Each case runs both ways (examples with run times, evictions and preemption, a dump
of given-Running pods with an assumed run time) and the outputs must be the same text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main
from volcano_py.sim import engine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CASES = [
    ("gang-deadlock.yaml",),
    ("gang-preempt.yaml",),
    ("forecast-gpu.yaml",),
    ("hypernode-topology.yaml",),
    ("three-queues.yaml", "--assume-runtime", "45s"),
    ("seed002-reclaim-capacity.yaml",),
    ("sla-waiting-time.yaml", "--assume-runtime", "2m"),
]


def _dump(directory: Path) -> Path:
    """Nodes with given-Running pods (no container statuses) and pending ones: the first
    cycle reports the running ones, binds and starts the others, runs end later."""
    items: list[dict[str, object]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"n{i}"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
        }
        for i in range(3)
    ]
    for i in range(9):
        pod: dict[str, object] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"p{i}", "namespace": "ns"},
            "spec": {
                "schedulerName": "volcano",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
            },
            "status": {"phase": "Pending"},
        }
        if i % 3:
            pod["spec"]["nodeName"] = f"n{i % 3}"  # type: ignore[index]
            pod["status"] = {"phase": "Running"}
        items.append(pod)
    path = directory / "dump.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    return path


def _both_ways(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> None:
    outputs = []
    for skip in (True, False):
        monkeypatch.setattr(engine, "_SKIP_OWN_WRITES", skip)
        assert main(["simulate", *args]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
@pytest.mark.parametrize("output", ["json", "yaml"])
def test_examples_give_the_same_output_either_way(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: tuple[str, ...],
    output: str,
) -> None:
    _both_ways(capsys, monkeypatch, str(EXAMPLES / case[0]), *case[1:], "--format", output)


@pytest.mark.parametrize("runtime", ["30s", "2m"])
def test_a_dump_of_running_pods_gives_the_same_output_either_way(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    runtime: str,
) -> None:
    path = str(_dump(tmp_path))
    _both_ways(capsys, monkeypatch, path, "--assume-runtime", runtime, "--format", "yaml")


def test_the_skip_is_taken(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With the skip, fewer pods are visited: the comparisons above did compare two paths."""
    path = str(_dump(tmp_path))
    original = engine.Simulation._advance_pods
    visited: dict[bool, int] = {}
    for skip in (True, False):
        monkeypatch.setattr(engine, "_SKIP_OWN_WRITES", skip)
        seen: list[int] = []

        def counting(self: engine.Simulation, seen: list[int] = seen) -> None:
            seen.append(len(self._pods_changed))
            original(self)

        monkeypatch.setattr(engine.Simulation, "_advance_pods", counting)
        assert main(["simulate", path, "--cycles", "4", "--format", "json"]) == 0
        visited[skip] = sum(seen)
    assert visited[True] < visited[False]
