"""`volcano-py simulate` and JobFlows: an invalid one (a cycle, an unknown target, a bad field)
stops the run with exit 2 naming the field; a valid one runs (tests/sim/test_jobflow_sim.py
follows one through); probes are warned about."""

from __future__ import annotations

from pathlib import Path

import pytest

from volcano_py.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[1] / "models/fixtures/examples/jobflow.yaml"


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        (
            'targets: ["fetch"]\n    - name: publish',
            'targets: ["publish"]\n    - name: publish',
            "spec.flows[2].dependsOn.targets",
            "jobflow Flow is not DAG (the flows depend on each other",
        ),
        (
            'targets: ["train", "evaluate"]',
            'targets: ["train", "report"]',
            "spec.flows[3].dependsOn.targets",
            "jobflow Flow is not DAG: vertex is not defined: report",
        ),
        ("jobRetainPolicy: delete", "jobRetainPolicy: forever", "spec.jobRetainPolicy", ""),
    ],
)
def test_an_invalid_jobflow_is_refused_naming_the_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    field: str,
    message: str,
) -> None:
    text = EXAMPLE.read_text()
    assert old in text
    path = tmp_path / "flow.yaml"
    path.write_text(text.replace(old, new))
    code = main(["simulate", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert str(path) in err
    assert f"JobFlow default/pipeline: {field}" in err
    assert message in err
    assert "Traceback" not in err


def test_a_valid_jobflow_runs(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", str(EXAMPLE)])
    captured = capsys.readouterr()
    assert code == 0
    assert "not run" not in captured.err
    # No node in the example: the first job waits, the others are not created yet.
    assert '"default/pipeline-fetch"' in captured.out
    assert "default/pipeline-train" not in captured.out


def test_a_probe_is_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(
        EXAMPLE.read_text().replace(
            'targets: ["fetch"]\n    - name: evaluate',
            'targets: ["fetch"]\n        probe:\n          taskStatusList:\n'
            "            - {taskName: download, phase: Succeeded}\n    - name: evaluate",
        )
    )
    assert main(["simulate", str(path)]) == 0
    assert "spec.flows[1].dependsOn.probe: not acted on (as in Volcano)" in capsys.readouterr().err
