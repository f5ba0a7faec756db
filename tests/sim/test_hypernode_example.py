"""``examples/hypernode-topology.yaml``: seed 001 §8, a hard network-topology job lands within
one tier-1 HyperNode, and a second one waits rather than span the spine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hypernode-topology.yaml"
LEAF_0 = {"gpu-0", "gpu-1", "gpu-2", "gpu-3"}
LEAF_1 = {"gpu-4", "gpu-5", "gpu-6", "gpu-7"}


def simulate(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["simulate", str(path)]) == 0
    report: dict = json.loads(capsys.readouterr().out)
    return report


def train_nodes(report: dict, job: str) -> set[str]:
    return {node for pod, node in report["binds"].items() if pod.startswith(f"default/{job}-")}


def test_hard_job_lands_within_one_leaf_and_the_other_waits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = simulate(capsys, EXAMPLE)
    placed = {pod: node for pod, node in report["binds"].items() if "train-a" in pod}
    assert len(placed) == 4
    # leaf-0 has only 3 free GPUs: all four workers are under leaf-1.
    assert set(placed.values()) <= LEAF_1
    assert report["podgroups"]["default/train-a"]["phase"] == "Running"
    assert report["jobs"]["default/train-a"]["phase"] == "Running"
    # 5 GPUs are still free, but no leaf has 4 and the job may not span the spine.
    assert train_nodes(report, "train-b") == set()
    assert report["podgroups"]["default/train-b"]["phase"] == "Inqueue"
    why = report["unschedulable"]["default/train-b"]
    assert "all 4 pending pods (nvidia.com/gpu 4) must fit inside one HyperNode of tier <= 1" in why
    assert "leaf-0, has nvidia.com/gpu 3 free; raising highestTierAllowed would let it run" in why


def test_without_the_constraint_the_second_job_spans_both_leaves(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same cluster with the ``networkTopology`` blocks removed: the second job is placed
    across leaf-0 and leaf-1, which is exactly what the hard constraint forbids."""
    lines = EXAMPLE.read_text().splitlines()
    kept: list[str] = []
    skipping = False
    for line in lines:
        if line.strip() == "networkTopology:":
            skipping = True
            continue
        if (
            skipping
            and line.startswith("    ")
            and line.strip().split(":")[0]
            in (
                "mode",
                "highestTierAllowed",
            )
        ):
            continue
        skipping = False
        kept.append(line)
    unconstrained = tmp_path / "unconstrained.yaml"
    unconstrained.write_text("\n".join(kept) + "\n")
    report = simulate(capsys, unconstrained)
    nodes = train_nodes(report, "train-a") | train_nodes(report, "train-b")
    assert len([pod for pod in report["binds"] if "train-" in pod]) == 8
    assert nodes & LEAF_0 and nodes & LEAF_1


def test_output_is_byte_identical(capsys: pytest.CaptureFixture[str]) -> None:
    outputs = set()
    for _ in range(2):
        assert main(["simulate", str(EXAMPLE)]) == 0
        outputs.add(capsys.readouterr().out)
    assert len(outputs) == 1
