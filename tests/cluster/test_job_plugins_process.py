"""The tensorflow and mpi job plugins through the live controllers on the real control plane,
as users write those jobs (upstream's example/integrations/tensorflow and mpi): the pods carry
``TF_CONFIG`` and ``MPI_HOST`` and their ports, and the svc and ssh plugins' objects exist
(headless Service ``<job>``, ConfigMap ``<job>-svc``, NetworkPolicy ``<job>``, Secret
``<job>-ssh`` mounted in every pod). The mutating webhook is not running here, so the job
names svc and ssh itself, as upstream's webhook would add them for mpi. The pods are made but
never bound (a nodeSelector no node has), so the jobs stay as they are while they are checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import test_controllers_process
import test_scheduler_process
from test_controllers_process import diagnosis, job_manifest
from test_scheduler_process import SchedulerProcess, list_pods, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler
controllers = test_controllers_process.controllers


def _job_with_tasks(
    name: str, scheduler_name: str, tasks: dict[str, int], plugins: dict[str, list[str]]
) -> dict[str, Any]:
    job = job_manifest(name, scheduler_name, plugins=plugins)
    template = job["spec"]["tasks"][0]
    job["spec"]["tasks"] = [
        {**template, "name": task, "replicas": replicas} for task, replicas in tasks.items()
    ]
    job["spec"]["minAvailable"] = sum(tasks.values())
    # Admitted (the scheduler's enqueue), its pods made, but never bound: kwok would complete
    # them at once, and a finished job's kill deletes the svc and ssh plugins' objects (upstream's
    # OnJobDelete), racing the checks below.
    for task in job["spec"]["tasks"]:
        task["template"]["spec"]["nodeSelector"] = {"volcano-py.test/never": "true"}
    return job


def _env(pod: dict[str, Any]) -> dict[str, str]:
    container = pod["spec"]["containers"][0]
    return {e["name"]: e.get("value", "") for e in container.get("env") or []}


def _get(plane: ControlPlane, path: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.request("GET", path)
    return found


def test_tensorflow_and_mpi_jobs_get_their_rendezvous_live(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 2)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    tensorflow = {"tensorflow": [], "svc": []}
    control_plane.create(
        _job_with_tasks("tf", scheduler_name, {"ps": 1, "worker": 2}, tensorflow), namespace
    )
    control_plane.create(
        _job_with_tasks(
            "mpi", scheduler_name, {"mpimaster": 1, "mpiworker": 2},
            {"mpi": ["--master=mpimaster", "--worker=mpiworker"], "ssh": [], "svc": []},
        ),
        namespace,
    )  # fmt: skip
    wait_until(
        "the jobs' pods",
        lambda: len(list_pods(control_plane, namespace)) == 6,
        diagnose=diagnosis(control_plane, namespace, "mpi", controllers, scheduler),
    )
    pods = list_pods(control_plane, namespace)

    # tensorflow: every pod knows the whole cluster and its own place in it (port 2222).
    config = json.loads(_env(pods["tf-worker-1"])["TF_CONFIG"])
    assert config["cluster"] == {
        "ps": ["tf-ps-0.tf:2222"],
        "worker": ["tf-worker-0.tf:2222", "tf-worker-1.tf:2222"],
    }
    assert config["task"] == {"type": "worker", "index": 1}
    assert json.loads(_env(pods["tf-ps-0"])["TF_CONFIG"])["task"] == {"type": "ps", "index": 0}

    # mpi: the master lists its workers; every pod has the ssh port and key.
    assert _env(pods["mpi-mpimaster-0"])["MPI_HOST"] == "mpi-mpiworker-0.mpi,mpi-mpiworker-1.mpi"
    ports = pods["mpi-mpiworker-0"]["spec"]["containers"][0]["ports"]
    assert {"name": "mpijob-port", "containerPort": 22, "protocol": "TCP"} in ports
    volumes = {v["name"]: v for v in pods["mpi-mpiworker-1"]["spec"]["volumes"]}
    assert any((v.get("secret") or {}).get("secretName") == "mpi-ssh" for v in volumes.values())

    base = f"/api/v1/namespaces/{namespace}"
    secret = _get(control_plane, f"{base}/secrets/mpi-ssh")
    assert {"id_rsa", "id_rsa.pub", "authorized_keys", "config"} <= set(secret["data"])
    for job in ("tf", "mpi"):
        service = _get(control_plane, f"{base}/services/{job}")
        assert service["spec"]["clusterIP"] == "None"
        assert service["spec"]["selector"]["volcano.sh/job-name"] == job
        hosts = _get(control_plane, f"{base}/configmaps/{job}-svc")["data"]
        assert hosts  # <task>.host files for every task
        policies = f"/apis/networking.k8s.io/v1/namespaces/{namespace}/networkpolicies"
        policy = _get(control_plane, f"{policies}/{job}")
        assert policy["spec"]["podSelector"]["matchLabels"]["volcano.sh/job-name"] == job
    assert controllers.forbidden() == []
