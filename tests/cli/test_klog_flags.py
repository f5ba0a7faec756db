"""klog's logging flags, as Volcano's binaries take them."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from volcano_py.cli.main import main, parse_args
from volcano_py.cli.process_flags import configure_logging, log_targets


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)


def test_defaults_log_everything_to_stderr() -> None:
    targets = log_targets(parse_args(["scheduler"]), "scheduler")
    assert targets.to_stderr and not targets.file and targets.stderr_level == logging.NOTSET


def test_log_file_with_stderr_threshold(
    tmp_path: Path, restore_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    log_file = tmp_path / "scheduler.log"
    args = parse_args([
        "scheduler", "--logtostderr=false", f"--log-file={log_file}", "--stderrthreshold=ERROR",
        "--skip-headers",
    ])  # fmt: skip
    configure_logging(args, "scheduler")
    logging.getLogger("volcano_py.test").info("an info record")
    logging.getLogger("volcano_py.test").error("an error record")
    for handler in logging.getLogger().handlers:
        handler.flush()
    assert log_file.read_text().splitlines() == ["an info record", "an error record"]
    err = capsys.readouterr().err
    assert "an error record" in err and "an info record" not in err


def test_log_dir_names_the_process(tmp_path: Path) -> None:
    args = parse_args(["controllers", "--logtostderr=false", f"--log_dir={tmp_path}"])
    assert log_targets(args, "controllers").file == str(tmp_path / "volcano-py-controllers.log")


def test_logtostderr_ignores_the_files(tmp_path: Path) -> None:
    args = parse_args(["webhooks", "--logtostderr", f"--log-file={tmp_path}/x.log"])
    targets = log_targets(args, "webhooks")
    assert targets.to_stderr  # klog: the file is not written while logging to stderr only


@pytest.mark.parametrize("value", ["0", "INFO", "warning", "3"])
def test_severities(value: str) -> None:
    parse_args(["scheduler", f"--stderrthreshold={value}"])


def test_bad_severity_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["scheduler", "--stderrthreshold=LOUD"])
    assert exited.value.code == 2
    assert "--stderrthreshold: invalid severity 'LOUD'" in capsys.readouterr().err
