"""``examples/gang-preempt.yaml``: a high-priority training gang with a hard network topology
evicts one whole lower-priority gang inside one leaf switch and starts there; the task-level
preempt action would leave it waiting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gang-preempt.yaml"


def simulate(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["simulate", str(path)]) == 0
    report: dict = json.loads(capsys.readouterr().out)
    return report


def test_the_training_gang_evicts_batch_b_whole_and_runs_under_leaf_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = simulate(capsys, EXAMPLE)
    assert sorted(report["evictions"]) == ["default/batch-b-0", "default/batch-b-1"]
    workers = {pod: node for pod, node in report["binds"].items() if "train-" in pod}
    assert len(workers) == 4
    assert set(workers.values()) == {"gpu-2", "gpu-3"}
    assert report["podgroups"]["default/train"]["phase"] == "Running"
    # batch-a alone could not make room under leaf-0: it is left alone.
    assert report["podgroups"]["default/batch-a"]["phase"] == "Running"


def test_task_level_preempt_leaves_the_topology_gang_waiting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = EXAMPLE.read_text().replace(
        '"enqueue, allocate, gangpreempt, backfill"', '"enqueue, allocate, preempt, backfill"'
    )
    task_level = tmp_path / "task-level.yaml"
    task_level.write_text(text)
    report = simulate(capsys, task_level)
    assert report["evictions"] == []
    assert not [pod for pod in report["binds"] if "train-" in pod]
