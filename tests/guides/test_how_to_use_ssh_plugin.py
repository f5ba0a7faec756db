"""User guide ``how_to_use_ssh_plugin``: the ``ssh`` job plugin makes the ``<job>-ssh``
Secret (``authorized_keys``, ``id_rsa``, ``id_rsa.pub``, ``config``), mounts it at
``/root/.ssh`` in every container, and its ``config`` names every pod's host in the job."""

from __future__ import annotations

import base64
from pathlib import Path

from tests.guides.guide_sim import node, pod, simulate, task, vcjob

JOB = "mpi-job"


def test_secret_mounted_everywhere_with_every_host(tmp_path: Path) -> None:
    job = vcjob(
        JOB,
        [task("mpimaster", 1), task("mpiworker", 2)],
        minAvailable=3,
        plugins={"ssh": [], "svc": []},
    )
    _, objects, _ = simulate(tmp_path, [node("n1"), job])
    data = objects[("Secret", "default", f"{JOB}-ssh")]["data"]
    assert set(data) == {"authorized_keys", "id_rsa", "id_rsa.pub", "config"}
    config = base64.b64decode(data["config"]).decode()
    for name in ("mpimaster-0", "mpiworker-0", "mpiworker-1"):
        assert f"Host {JOB}-{name}\n  HostName {JOB}-{name}.{JOB}\n  Port 22" in config
        mounts = pod(objects, f"{JOB}-{name}")["spec"]["containers"][0]["volumeMounts"]
        assert "/root/.ssh" in {m["mountPath"] for m in mounts}, name
