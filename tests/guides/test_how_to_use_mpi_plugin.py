"""User guide ``how_to_use_mpi_plugin``: the ``mpi`` job plugin opens the MPI port on every
container, forces the ``ssh`` and ``svc`` plugins on, and gives the master ``MPI_HOST``, the
workers' domain names for ``mpiexec --host``."""

from __future__ import annotations

from pathlib import Path

from tests.guides.guide_sim import env_of, node, pod, simulate, task, vcjob

JOB = "lm-mpi-job"


def test_master_gets_mpi_host_and_ssh_svc_are_forced(tmp_path: Path) -> None:
    job = vcjob(
        JOB,
        [
            task("mpimaster", 1, policies=[{"event": "TaskCompleted", "action": "CompleteJob"}]),
            task("mpiworker", 2),
        ],
        minAvailable=1,
        plugins={"mpi": ["--master=mpimaster", "--worker=mpiworker", "--port=22"]},
    )
    report, objects, _ = simulate(tmp_path, [node("n1"), job])
    assert all(entry["phase"] == "Running" for entry in report["pods"].values())
    master = pod(objects, f"{JOB}-mpimaster-0")
    assert env_of(master)["MPI_HOST"] == f"{JOB}-mpiworker-0.{JOB},{JOB}-mpiworker-1.{JOB}"
    assert "MPI_HOST" not in env_of(pod(objects, f"{JOB}-mpiworker-0"))
    for name in ("mpimaster-0", "mpiworker-0", "mpiworker-1"):
        ports = pod(objects, f"{JOB}-{name}")["spec"]["containers"][0]["ports"]
        assert [p["containerPort"] for p in ports] == [22], name
    # ssh and svc were not named in the job, the mpi plugin turned them on.
    assert ("Secret", "default", f"{JOB}-ssh") in objects
    assert ("Service", "default", JOB) in objects
    assert ("ConfigMap", "default", f"{JOB}-svc") in objects
