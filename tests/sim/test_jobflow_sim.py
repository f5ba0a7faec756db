"""JobFlows run in `volcano-py simulate`: the JobFlow controller creates ``<flow>-<template>``
from each JobTemplate once its dependsOn targets' jobs completed, on the simulated cluster,
and ``jobRetainPolicy: delete`` removes the jobs once the flow succeeded. A flow naming a
JobTemplate absent from the input is refused (exit 2): nothing could ever create it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"}},
}


def _template(name: str, run_cycles: int = 2) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name},
        "spec": {
            "minAvailable": 1,
            "tasks": [
                {
                    "name": "w",
                    "replicas": 1,
                    "template": {
                        "metadata": {"annotations": {"volcano-py.sim/run-cycles": str(run_cycles)}},
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": "1"}},
                                }
                            ],
                        },
                    },
                }
            ],
        },
    }


def _jobflow(policy: str) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "flow"},
        "spec": {
            "jobRetainPolicy": policy,
            "flows": [
                {"name": "a"},
                {"name": "b", "dependsOn": {"targets": ["a"]}},
                {"name": "c", "dependsOn": {"targets": ["a", "b"]}},
            ],
        },
    }


def _simulate(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> dict[str, Any]:
    assert main(["simulate", str(path), *args]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def _input(tmp_path: Path, policy: str) -> Path:
    path = tmp_path / "flow.yaml"
    objects = [NODE, _template("a"), _template("b"), _template("c"), _jobflow(policy)]
    path.write_text(yaml.safe_dump_all(objects))
    return path


def test_each_job_starts_after_its_targets_completed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _input(tmp_path, "retain")
    seen_b = seen_c = False
    for cycles in range(1, 16):
        jobs = _simulate(capsys, path, "--cycles", str(cycles))["jobs"]
        assert "default/flow-a" in jobs
        if "default/flow-b" in jobs:
            seen_b = True
            assert jobs["default/flow-a"]["phase"] == "Completed", (cycles, jobs)
        if "default/flow-c" in jobs:
            seen_c = True
            assert jobs["default/flow-b"]["phase"] == "Completed", (cycles, jobs)
    assert seen_b and seen_c
    final = _simulate(capsys, path)["jobs"]
    assert {key: job["phase"] for key, job in final.items()} == {
        "default/flow-a": "Completed",
        "default/flow-b": "Completed",
        "default/flow-c": "Completed",
    }


def test_retain_policy_delete_removes_the_jobs_once_the_flow_succeeded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, _input(tmp_path, "delete"))
    assert report["jobs"] == {}
    assert not [key for key in report["podgroups"] if key.startswith("default/flow-")]


def test_a_flow_without_its_template_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(yaml.safe_dump_all([NODE, _template("a"), _template("b"), _jobflow("retain")]))
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "JobFlow default/flow: spec.flows[2].name: no JobTemplate default/c in the input" in err
    assert "Traceback" not in err
