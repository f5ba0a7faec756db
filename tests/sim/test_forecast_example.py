"""``examples/forecast-gpu.yaml`` (docs/simulate.md, "Forecasts: a worked example"): on two
8-GPU nodes, team-c's eval starts when team-b's finetune ends (+40m2s), team-a's gang sweep
when team-a's pretrain ends (+2h0m2s); ``starts`` in the JSON, the forecast in the table."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sim.roundtrip import simulate_text

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "forecast-gpu.yaml"


def _run(tmp_path: Path, *args: str) -> str:
    code, out, err = simulate_text(tmp_path, EXAMPLE.read_text(encoding="utf-8"), *args)
    assert code == 0, err
    assert err == ""
    return out


def test_the_forecast_in_json(tmp_path: Path) -> None:
    report = json.loads(_run(tmp_path, "--until", "3h"))
    assert report["starts"] == {
        "team-a/sweep": "2026-01-01T02:00:02Z",
        "team-c/eval": "2026-01-01T00:40:02Z",
    }
    assert report["cycles"] == 3 * 3600
    # The pods that ran at the start are no forecast's business.
    assert "team-b/finetune" not in report["starts"]


def test_the_forecast_in_the_table(tmp_path: Path) -> None:
    table = _run(tmp_path, "--until", "3h", "--format", "table")
    assert "FORECAST (from 2026-01-01T00:00:00Z)" in table
    assert "team-c/eval   starts at +40m2s, waited for team-b/finetune" in table
    assert "team-a/sweep  starts at +2h0m2s, waited for team-a/pretrain" in table


def test_within_an_hour_the_sweep_does_not_start(tmp_path: Path) -> None:
    report = json.loads(_run(tmp_path, "--until", "1h"))
    assert report["starts"] == {"team-c/eval": "2026-01-01T00:40:02Z"}
    table = _run(tmp_path, "--until", "1h", "--format", "table")
    assert "team-a/sweep  does not start within 1h0m0s" in table
    assert "team-a/sweep" in json.loads(_run(tmp_path, "--until", "1h"))["unschedulable"]


def test_a_later_start_moves_the_forecast(tmp_path: Path) -> None:
    """Asked at 00:30, finetune has 10 minutes left: eval starts at +10m2s."""
    report = json.loads(_run(tmp_path, "--start", "2026-01-01T00:30:00Z", "--until", "1h"))
    assert report["starts"]["team-c/eval"] == "2026-01-01T00:40:02Z"
    table = _run(tmp_path, "--start", "2026-01-01T00:30:00Z", "--until", "1h", "--format", "table")
    assert "team-c/eval   starts at +10m2s, waited for team-b/finetune" in table
