"""What the deviceshare tests share: the GPU examples run through ``simulate`` with other
arguments and pods, and the check that the vectorised vGPU fit agrees with the per-node one."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from volcano_py.api.task import TaskInfo
from volcano_py.cli.main import main
from volcano_py.plugins.deviceshare.vgpu import VgpuDevices

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_documents(name: str) -> list[dict[str, Any]]:
    """The documents of ``examples/<name>``."""
    return [doc for doc in yaml.safe_load_all((EXAMPLES / name).read_text()) if doc]


def example_with(name: str, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The documents of ``examples/<name>`` (the GPU ones, whose conf has deviceshare second
    in its second tier), deviceshare's arguments updated with ``arguments``."""
    documents = example_documents(name)
    conf = yaml.safe_load(documents[0]["data"]["volcano-scheduler.conf"])
    conf["tiers"][1]["plugins"][1]["arguments"].update(arguments)
    documents[0]["data"]["volcano-scheduler.conf"] = yaml.safe_dump(conf)
    return documents


def limits_pod(name: str, limits: Mapping[str, str], **metadata: Any) -> dict[str, Any]:
    """A pod for Volcano asking ``limits`` (simulate's input); ``metadata``: its labels,
    annotations."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, **metadata},
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "x", "resources": {"limits": dict(limits)}}],
        },
    }


def write_input(tmp_path: Path, documents: list[dict[str, Any]]) -> Path:
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return path


def simulate(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> Any:
    """``simulate``'s output on ``path`` (exit status 0): the report, or with ``--format
    yaml`` the listing."""
    assert main(["simulate", str(path), *extra]) == 0
    out = capsys.readouterr().out
    return yaml.safe_load(out) if "yaml" in extra else json.loads(out)


def check_vectorised_fit(
    devices: VgpuDevices, rows: int, make_task: Callable[[int], TaskInfo]
) -> None:
    """``mask`` and ``scores`` over every row agree with ``fit_on`` row by row, for the task
    ``make_task(attempt)``; twice, the second time after a placement (which the caches
    refresh only on its row)."""
    every_row = np.arange(rows)
    for attempt in range(2):
        task = make_task(attempt)
        mask = devices.mask(task)
        assert mask is not None
        scores = devices.scores(task, every_row)
        fitting = []
        for row in every_row:
            exact = devices.fit_on(task, int(row))
            assert bool(mask.passed[row]) == exact.fits, row
            if exact.fits:
                fitting.append(int(row))
                assert scores[row] == pytest.approx(exact.score), row
        if not fitting:
            break
        assert devices.allocate(task, fitting[-1]).fits
