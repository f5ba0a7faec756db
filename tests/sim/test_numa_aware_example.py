"""``examples/numa-aware.yaml``: the NUMA-aware user guide's practice; the 16-CPU best-effort
pod goes to node-2, which holds it in one NUMA node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "numa-aware.yaml"


def simulate(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["simulate", str(path)]) == 0
    report: dict = json.loads(capsys.readouterr().out)
    return report


def test_the_pod_goes_where_one_numa_node_holds_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate(capsys, EXAMPLE)["binds"] == {"default/vj-test-test-0": "node-2"}


def test_single_numa_node_leaves_only_node_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same with single-numa-node everywhere and node-2 full but for one NUMA node of 12
    free CPUs: no node can pin 16 CPUs on one NUMA node, so the job waits."""
    text = EXAMPLE.read_text().replace("best-effort", "single-numa-node")
    text = text.replace('allocatable: "0-39"', 'allocatable: "0-11"')
    path = tmp_path / "single.yaml"
    path.write_text(text)
    report = simulate(capsys, path)
    assert report["binds"] == {}
    assert report["pods"]["default/vj-test-test-0"]["phase"] == "Pending"


def test_a_bad_cpu_set_is_refused_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(EXAMPLE.read_text().replace('allocatable: "0-23"', 'allocatable: "0-x"'))
    assert main(["simulate", str(path)]) == 2
    error = capsys.readouterr().err
    assert "Numatopology node-1: spec.numares.cpu.allocatable: not a cpuset list" in error
