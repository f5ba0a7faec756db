"""What keeps ``simulate`` linear (issue "Scale") changes no decision: the pod index of the
simulated cluster stays in step with its pods, skipped no-op syncs leave the same report and
events, and JSON/YAML input reads the same with the fast parsers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.controllers.job import JobPodIndex
from volcano_py.framework.conf import default_conf
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, default_registry
from volcano_py.sim import engine, loader
from volcano_py.sim.engine import Simulation
from volcano_py.sim.inputs import MAX_PODS_OF_A_JOB, read_inputs
from volcano_py.sim.loader import Document, SimInputError, load_documents
from volcano_py.sim.report import build_report

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
}


def _job(name: str, replicas: int, cpu: str, **extra: Any) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    }
    if "run_cycles" in extra:
        template["metadata"] = {
            "annotations": {"volcano-py.sim/run-cycles": str(extra.pop("run_cycles"))}
        }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "minAvailable": replicas,
            "tasks": [{"name": "worker", "replicas": replicas, "template": template}],
            **extra,
        },
    }


def _objects() -> list[dict[str, Any]]:
    return [
        NODE,
        _job(
            "short",
            8,
            "1",
            run_cycles=2,
            policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
        ),
        _job("steady", 6, "1"),
        _job("too-big", 4, "8"),  # never fits beside the others: PodGroupPending warnings
    ]


def _run() -> Simulation:
    simulation = Simulation(default_conf(BUILTIN_ACTIONS), default_registry())
    simulation.load(_objects())
    simulation.run()
    return simulation


def test_skipped_no_op_syncs_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    syncs: list[str] = []
    real_sync_job = engine.sync_job

    def counted(job: Any, *args: Any, **kwargs: Any) -> Any:
        syncs.append(job["metadata"]["name"])
        return real_sync_job(job, *args, **kwargs)

    monkeypatch.setattr(engine, "sync_job", counted)
    fast = _run()
    fast_syncs = len(syncs)
    monkeypatch.setattr(engine, "sync_depends_only_on_state", lambda job, request: False)
    every_request_synced = _run()
    assert fast_syncs < len(syncs) - fast_syncs  # syncs were skipped
    assert build_report(fast) == build_report(every_request_synced)
    assert fast.cluster.events == every_request_synced.cluster.events
    assert fast.cluster.objects["Job"] == every_request_synced.cluster.objects["Job"]
    assert build_report(fast)["jobs"]["default/short"]["phase"] == "Completed"


def test_pod_index_matches_the_pods_of_the_cluster() -> None:
    simulation = _run()
    rebuilt = JobPodIndex()
    for key, pod in simulation.cluster.items("Pod"):
        rebuilt.update(key, pod)
    kept = simulation.cluster.pod_index
    assert kept.job_keys() == rebuilt.job_keys()
    for job_key in rebuilt.job_keys():
        assert kept.of_job(job_key).by_task == rebuilt.of_job(job_key).by_task
        assert kept.of_job(job_key).tallies == rebuilt.of_job(job_key).tallies
    pods = dict(simulation.cluster.items("Pod"))
    assert simulation.cluster.in_namespace("Pod", "default") == pods


# ---------------------------------------------------------------------------- input


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_json_and_yaml_read_alike(tmp_path: Path) -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": _objects()}
    from_json = load_documents([_write(tmp_path, "a.json", json.dumps(listed))])
    from_yaml = load_documents([_write(tmp_path, "a.yaml", yaml.safe_dump(listed))])
    assert [d.obj for d in from_json] == [d.obj for d in from_yaml]
    assert [d.where for d in from_json][-1].endswith("document 1, item 4")


def test_concatenated_json_objects_are_documents(tmp_path: Path) -> None:
    text = json.dumps(NODE) + "\n" + json.dumps({**NODE, "metadata": {"name": "n2"}})
    documents = load_documents([_write(tmp_path, "stream.json", text)])
    assert [d.obj["metadata"]["name"] for d in documents] == ["n1", "n2"]
    assert documents[1].where.endswith("document 2")


def test_bad_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.json", '{"kind": "List",\n  "items": [}\n')
    with pytest.raises(SimInputError) as raised:
        load_documents([path])
    assert f"{path} (line 2, column 13): not valid JSON" in str(raised.value)


def test_flow_style_yaml_that_looks_like_json_is_yaml(tmp_path: Path) -> None:
    path = _write(tmp_path, "flow.yaml", "{kind: Node, metadata: {name: n1}}\n")
    assert load_documents([path])[0].obj == {"kind": "Node", "metadata": {"name": "n1"}}


def test_bad_yaml_keeps_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.yaml", "kind: Node\nmetadata: {name: n}\nstatus: [1, 2\n")
    with pytest.raises(SimInputError) as raised:
        load_documents([path])
    assert f"{path} (line 4, column 1): not valid YAML or JSON" in str(raised.value)


def test_without_libyaml_yaml_still_reads_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(yaml, "__with_libyaml__", False)
    monkeypatch.setattr(loader, "_warned_no_libyaml", False)
    path = _write(tmp_path, "a.yaml", yaml.safe_dump(NODE) + "---\n" + yaml.safe_dump(NODE))
    assert len(load_documents([path])) == 2
    err = capsys.readouterr().err
    assert err.count("without libyaml") == 1


def test_inputs_are_defaulted_in_place_not_copied(tmp_path: Path) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c"}]},
    }
    documents = load_documents([_write(tmp_path, "p.json", json.dumps(pod))])
    inputs = read_inputs(documents)
    assert inputs.objects[0] is documents[0].obj
    assert inputs.objects[0]["status"] == {"phase": "Pending"}


# ---------------------------------------------------------------------------- limits


def _job_document(*replicas: int) -> Document:
    job = _job("big", 1, "1")
    template = job["spec"]["tasks"][0]["template"]
    job["spec"]["tasks"] = [
        {"name": f"t{index}", "replicas": count, "template": template}
        for index, count in enumerate(replicas)
    ]
    job["spec"]["minAvailable"] = 1
    return Document(job, "job.json", 1)


def test_a_job_past_the_pods_kubernetes_supports_is_refused_naming_the_field() -> None:
    """200k replicas (issue "Scale"): refused at once, naming the task whose replicas cross
    150,000 pods in the job, instead of minutes of simulation."""
    with pytest.raises(SimInputError) as raised:
        read_inputs([_job_document(200_000)])
    message = str(raised.value)
    assert message.startswith("job.json: document 1: Job default/big: spec.tasks[0].replicas:")
    assert "200000 pods in one job" in message and "150000" in message
    with pytest.raises(SimInputError) as raised:
        read_inputs([_job_document(100_000, 50_001)])
    assert "spec.tasks[1].replicas: 150001 pods" in str(raised.value)
    assert MAX_PODS_OF_A_JOB == 150_000
    assert read_inputs([_job_document(100_000, 50_000)]).objects
