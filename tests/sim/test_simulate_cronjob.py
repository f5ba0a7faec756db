"""`volcano-py simulate` and CronJobs: an invalid one stops the run naming the field; a valid
one runs on the simulated clock (tests/sim/test_simulate_clock.py has its schedules)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volcano_py.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[1] / "models/fixtures/examples/cronjob.yaml"


def test_an_invalid_cronjob_is_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cron.yaml"
    path.write_text(EXAMPLE.read_text().replace('"*/15 * * * *"', '"*/15 * * *"'))
    code = main(["simulate", str(path)])
    err = capsys.readouterr().err
    assert code == 2
    assert str(path) in err
    assert "CronJob default/nightly-eval: spec.schedule:" in err
    assert "expected exactly 5 fields" in err
    assert "Traceback" not in err


def test_a_valid_cronjob_runs_without_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --until a CronJob schedule does not keep the run going: the run ends at once,
    quietly (no "not run" warning any more)."""
    code = main(["simulate", str(EXAMPLE)])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.err == ""
    assert json.loads(captured.out)["jobs"] == {}
