"""Job lifecycle in `volcano-py simulate`: ``ttlSecondsAfterFinished`` deletes a finished job
and everything it owns on the simulated clock; ``metadata.generateName`` gets a name as the API
server would make it (seeded); an empty input file is an error, not an empty cluster."""

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


def _job(ttl: int | None, *, name: str = "short", run_cycles: int = 1) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "minAvailable": 1,
        "plugins": {"svc": []},
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
    }
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _simulate(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    *objects: dict[str, Any],
    seed: int = 0,
    until: str | None = None,
) -> dict[str, Any]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([NODE, *objects]))
    flags = ["--until", until] if until is not None else []
    assert main(["simulate", str(path), "--seed", str(seed), *flags]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_a_finished_job_is_deleted_with_what_it_owns_after_its_ttl(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, tmp_path, _job(2), _job(None, name="kept"))
    assert "default/short" not in report["jobs"]
    pods = {key: pod for key, pod in report["pods"].items() if key.startswith("default/short-")}
    assert pods and all(pod["phase"] == "Deleted" for pod in pods.values())
    assert not [group for group in report["podgroups"] if group.startswith("default/short")]
    # Without a TTL the finished job stays, as on a cluster.
    assert report["jobs"]["default/kept"]["phase"] == "Completed"


def test_a_job_still_running_is_not_collected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Without --until the run would go on until the pod finishes (cycle 1001) and its TTL
    # of 0 ran out; a minute in, the job is still running.
    report = _simulate(capsys, tmp_path, _job(0, run_cycles=1000), until="1m")
    assert report["jobs"]["default/short"]["phase"] == "Running"
    finished = _simulate(capsys, tmp_path, _job(0, run_cycles=1000))
    assert "default/short" not in finished["jobs"]
    assert finished["cycles"] > 1000


def test_generate_name_gets_a_seeded_name(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    job = _job(None)
    del job["metadata"]["name"]
    job["metadata"]["generateName"] = "train-"
    first = _simulate(capsys, tmp_path, job)
    again = _simulate(capsys, tmp_path, job)
    other_seed = _simulate(capsys, tmp_path, job, seed=7)
    (name,) = [key for key in first["jobs"]]
    assert name.startswith("default/train-") and len(name) == len("default/train-") + 5
    assert list(again["jobs"]) == [name]
    assert list(other_seed["jobs"]) != [name]


def test_no_name_and_no_generate_name_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    job = _job(None)
    del job["metadata"]["name"]
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump(job))
    assert main(["simulate", str(path)]) == 2
    assert "metadata.name: missing (and no metadata.generateName)" in capsys.readouterr().err


def test_an_empty_file_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("---\n# nothing\n")
    assert main(["simulate", str(path)]) == 2
    assert "no Kubernetes object in it" in capsys.readouterr().err
