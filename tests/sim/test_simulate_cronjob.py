"""`volcano-py simulate` and CronJobs: an invalid one stops the run naming the field; a valid
one is reported as not run (simulate has no simulated time for schedules yet)."""

from __future__ import annotations

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


def test_a_valid_cronjob_is_validated_but_not_run(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["simulate", str(EXAMPLE)])
    err = capsys.readouterr().err
    assert code == 0
    assert "CronJob nightly-eval" in err
    assert "CronJob is validated but not run by simulate yet" in err
