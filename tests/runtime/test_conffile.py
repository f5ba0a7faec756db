"""--scheduler-conf: read at start, reloaded when its content changes, a bad file keeps the
last good configuration (one log line and one count per bad content)."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from volcano_py.framework.conf import UnknownNameError
from volcano_py.metrics import CONFIG_RELOAD_FAILURES
from volcano_py.runtime.conffile import ConfFile
from volcano_py.scheduler.registry import PluginRegistry

GOOD = 'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n'


def failures() -> float:
    return float(CONFIG_RELOAD_FAILURES._value.get())


def test_no_file_is_the_built_in_default() -> None:
    conf = ConfFile(None, PluginRegistry())
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]


def test_reload_and_keep_last_good(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(GOOD)
    conf = ConfFile(str(path), PluginRegistry())
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
        f"{path}: actions: failed to find Action 'allocat' (did you mean 'allocate'?)"
    ]

    path.write_text(GOOD.replace("allocate", "allocate, backfill"))
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]
    path.write_text("tiers: [")  # broken YAML: another failure
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]
    assert failures() == before + 2


def test_a_missing_file_at_start_runs_on_the_default(tmp_path: Path) -> None:
    before = failures()
    conf = ConfFile(str(tmp_path / "absent.conf"), PluginRegistry())
    assert conf.current().actions == ["enqueue", "allocate", "backfill"]
    assert failures() == before + 1
    (tmp_path / "absent.conf").write_text(GOOD)
    assert conf.current().actions == ["enqueue", "allocate"]


def test_unknown_plugin_on_reload_keeps_the_running_conf(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A hot reload naming a plugin that does not exist is one failure (log line and count);
    the running configuration stays, gang scheduling included."""
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(GOOD)
    conf = ConfFile(str(path), PluginRegistry())
    running = conf.current()
    before = failures()
    path.write_text(GOOD.replace("gang", "gangg"))
    with caplog.at_level(logging.ERROR):
        assert conf.current() is running
        assert conf.current() is running
    assert failures() == before + 1
    assert conf.failures == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [
        "scheduler configuration not loaded, keeping the last good one: "
        f"{path}: tiers[0].plugins[0]: unknown plugin 'gangg' (did you mean 'gang'?)"
    ]
    assert running.plugin_names() == ["gang"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            GOOD.replace("gang", "gangg"),
            "tiers[0].plugins[0]: unknown plugin 'gangg' (did you mean 'gang'?)",
        ),
        ('actions: "enqueue, alocate"\n', "failed to find Action 'alocate'"),
    ],
    ids=["plugin", "action"],
)
def test_unknown_name_at_start_is_refused(tmp_path: Path, text: str, message: str) -> None:
    """At start the scheduler refuses such a file rather than run on the default."""
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(text)
    before = failures()
    with pytest.raises(UnknownNameError, match=re.escape(message)):
        ConfFile(str(path), PluginRegistry())
    assert failures() == before


def test_plugin_from_the_registry_extras_is_known(tmp_path: Path) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(GOOD.replace("gang", "my-plugin"))
    registry = PluginRegistry({"my-plugin": lambda arguments: None})  # type: ignore[arg-type,return-value]
    conf = ConfFile(str(path), registry)
    assert conf.current().plugin_names() == ["my-plugin"]


def test_warnings_are_logged_once_per_load(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(GOOD + "    enableJobOrdr: false\n")
    with caplog.at_level(logging.WARNING):
        conf = ConfFile(str(path), PluginRegistry())
        for _ in range(3):
            conf.current()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == [
        f"{path}: tiers[0].plugins[0] (gang): unknown key 'enableJobOrdr'"
        " (did you mean 'enableJobOrder'?); ignored"
    ]
    assert conf.current().tiers[0].plugins[0].enabled("enableJobOrder")  # the default stays
