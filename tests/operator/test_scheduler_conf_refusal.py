"""`volcano-py scheduler` refuses to start on a conf naming an action or plugin that does not
exist (Volcano would log the plugin at every session and schedule without it)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from volcano_py.cli.main import main

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: not-used}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
"""


@pytest.fixture(autouse=True)
def root_logging_restored() -> Iterator[None]:
    """``volcano-py scheduler`` installs its log handler on the (captured) stderr of the
    moment; put the root logger back so later tests do not write to a closed stream."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        (
            'actions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gangg\n',
            "tiers[0].plugins[0]: unknown plugin 'gangg' (did you mean 'gang'?)",
        ),
        ('actions: "enqueue, allocat"\n', "actions: failed to find Action 'allocat'"),
    ],
    ids=["plugin", "action"],
)
def test_unknown_name_in_the_conf_stops_the_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], conf: str, message: str
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(KUBECONFIG)
    path = tmp_path / "volcano-scheduler.conf"
    path.write_text(conf)
    argv = ["scheduler", f"--kubeconfig={kubeconfig}", f"--scheduler-conf={path}"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {message}")
