"""User guide ``how_to_use_pytorch_plugin``: the ``pytorch`` job plugin opens the port,
forces ``svc`` on, sets ``MASTER_ADDR``/``MASTER_PORT``/``WORLD_SIZE``/``RANK``, and with
``--wait-master-enabled=true`` gives each worker (never the master) an init container of
the given image that waits for the master's port up to the given timeout."""

from __future__ import annotations

from pathlib import Path

from tests.guides.guide_sim import env_of, node, pod, simulate, task, vcjob

JOB = "pytorch-job"
ARGS = [
    "--master=master",
    "--worker=worker",
    "--port=23456",
    "--wait-master-enabled=true",
    "--wait-master-timeout=600",
    "--wait-master-image=busybox:1.36.1",
]


def test_ranks_master_address_and_wait_for_master(tmp_path: Path) -> None:
    job = vcjob(
        JOB,
        [
            task("master", 1, policies=[{"event": "TaskCompleted", "action": "CompleteJob"}]),
            task("worker", 2),
        ],
        minAvailable=1,
        plugins={"pytorch": ARGS},
    )
    _, objects, _ = simulate(tmp_path, [node("n1"), job])
    for name, rank in (("master-0", "0"), ("worker-0", "1"), ("worker-1", "2")):
        spec = pod(objects, f"{JOB}-{name}")["spec"]
        env = env_of(pod(objects, f"{JOB}-{name}"))
        assert env["MASTER_ADDR"] == f"{JOB}-master-0.{JOB}", name
        assert (env["MASTER_PORT"], env["WORLD_SIZE"], env["RANK"]) == ("23456", "3", rank)
        assert [p["containerPort"] for p in spec["containers"][0]["ports"]] == [23456]
        init = spec.get("initContainers") or []
        if name.startswith("master"):
            assert init == []
        else:
            (waiter,) = init
            assert waiter["image"] == "busybox:1.36.1"
            script = waiter["command"][-1]
            assert "TIMEOUT=600" in script and f"{JOB}-master-0.{JOB} 23456" in script
    assert ("Service", "default", JOB) in objects
