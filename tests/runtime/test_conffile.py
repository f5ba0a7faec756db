"""--scheduler-conf: read at start, reloaded when its content changes, a bad file keeps the
last good configuration (one log line and one count per bad content)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from volcano_py.metrics import CONFIG_RELOAD_FAILURES
from volcano_py.runtime.conffile import ConfFile
from volcano_py.scheduler.registry import BUILTIN_ACTIONS

GOOD = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n'


def failures() -> float:
    return float(CONFIG_RELOAD_FAILURES._value.get())


def test_no_file_is_the_built_in_default() -> None:
    conf = ConfFile(None, BUILTIN_ACTIONS)
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]


def test_reload_and_keep_last_good(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(GOOD)
    conf = ConfFile(str(path), BUILTIN_ACTIONS)
    assert conf.current().actions == ["enqueue", "allocate"]  # read at start
    first = conf.current()
    assert conf.current() is first  # unchanged content: not parsed again

    before = failures()
    path.write_text('actions: "enqueue, allocat"\n')
    with caplog.at_level(logging.ERROR):
        assert conf.current() is first
        assert conf.current() is first
    assert failures() == before + 1  # reported once for the same bad content
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        "scheduler configuration not loaded, keeping the last good one: "
        f"{path}: actions: failed to find Action 'allocat'"
    ]

    path.write_text(GOOD.replace("allocate", "allocate, backfill"))
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]
    path.write_text("tiers: [")  # broken YAML: another failure
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]
    assert failures() == before + 2


def test_a_missing_file_at_start_runs_on_the_default(tmp_path: Path) -> None:
    before = failures()
    conf = ConfFile(str(tmp_path / "absent.conf"), BUILTIN_ACTIONS)
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]
    assert failures() == before + 1
    (tmp_path / "absent.conf").write_text(GOOD)
    assert conf.current().actions == ["enqueue", "allocate"]
