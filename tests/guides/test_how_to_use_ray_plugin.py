"""User guide ``how_to_use_ray_plugin``: the ``ray`` job plugin writes the head's and the
workers' ``ray start`` commands, opens the head's GCS, dashboard and client-server ports and
makes the ``<job>-head-svc`` Service on them, beside the ``svc`` plugin's headless Service."""

from __future__ import annotations

from pathlib import Path

from tests.guides.guide_sim import node, pod, simulate, task, vcjob

JOB = "ray-cluster-job"


def test_head_and_workers_commands_ports_and_services(tmp_path: Path) -> None:
    job = vcjob(
        JOB,
        [task("head", 1, cpu=None), task("worker", 2, cpu=None)],
        minAvailable=3,
        plugins={"ray": [], "svc": []},
        policies=[{"event": "PodEvicted", "action": "RestartJob"}],
        queue="default",
    )
    report, objects, _ = simulate(tmp_path, [node("n1"), job])
    assert sorted(report["pods"]) == [
        f"default/{JOB}-head-0",
        f"default/{JOB}-worker-0",
        f"default/{JOB}-worker-1",
    ]
    assert {entry["phase"] for entry in report["pods"].values()} == {"Running"}
    head = pod(objects, f"{JOB}-head-0")["spec"]["containers"][0]
    assert "ray start --head" in head["command"][-1]
    assert [p["containerPort"] for p in head["ports"]] == [6379, 8265, 10001]
    worker = pod(objects, f"{JOB}-worker-1")["spec"]["containers"][0]
    assert f"--address={JOB}-head-0.{JOB}:6379" in worker["command"][-1]
    head_svc = objects[("Service", "default", f"{JOB}-head-svc")]["spec"]
    assert [p["port"] for p in head_svc["ports"]] == [6379, 8265, 10001]
    assert head_svc["selector"]["volcano.sh/task-spec"] == "head"
    assert objects[("Service", "default", JOB)]["spec"]["clusterIP"] == "None"
