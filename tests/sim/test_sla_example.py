"""``examples/sla-waiting-time.yaml``: the overdue dashboard job is admitted and runs before
two older batch jobs; without sla the oldest batch job would have run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sla-waiting-time.yaml"


def simulate(capsys: pytest.CaptureFixture[str], path: Path) -> dict:
    assert main(["simulate", str(path)]) == 0
    report: dict = json.loads(capsys.readouterr().out)
    return report


def test_the_overdue_job_runs_first(capsys: pytest.CaptureFixture[str]) -> None:
    report = simulate(capsys, EXAMPLE)
    assert report["binds"] == {"default/dashboard-0": "node-1"}
    phases = {name: pg["phase"] for name, pg in report["podgroups"].items()}
    assert phases == {
        "default/etl": "Running",
        "default/dashboard": "Running",
        "default/batch-a": "Pending",
        "default/batch-b": "Pending",
    }


def test_without_sla_the_oldest_job_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = EXAMPLE.read_text().replace(
        "      - name: sla\n        arguments:\n          sla-waiting-time: 1h30m\n", ""
    )
    assert "name: sla" not in text
    without = tmp_path / "without-sla.yaml"
    without.write_text(text)
    report = simulate(capsys, without)
    assert report["binds"] == {"default/batch-a-0": "node-1"}
    assert report["podgroups"]["default/dashboard"]["phase"] == "Pending"
