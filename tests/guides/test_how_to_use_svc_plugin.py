"""User guide ``how_to_use_svc_plugin``: the ``svc`` job plugin sets each pod's hostname (the
pod's name) and subdomain (the job's name), injects ``VC_<TASK>_NUM``/``VC_<TASK>_HOSTS``,
makes the ``<job>-svc`` ConfigMap of hosts (mounted at ``/etc/volcano``), a headless Service
named after the job and an Ingress NetworkPolicy; ``--inject-hosts-env=false`` drops the
env but keeps the files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import node, pod, simulate, task, vcjob

JOB = "tensorflow-dist-mnist"
WORKERS = f"{JOB}-worker-0.{JOB},{JOB}-worker-1.{JOB}"


def _job(svc_args: list[str]) -> dict[str, Any]:
    return vcjob(
        JOB,
        [task("ps", 1), task("worker", 2)],
        minAvailable=3,
        plugins={"env": [], "svc": svc_args},
        queue="default",
    )


def _env_names(pod_object: dict[str, Any]) -> set[str]:
    return {item["name"] for item in pod_object["spec"]["containers"][0].get("env") or []}


def test_hosts_service_configmap_and_network_policy(tmp_path: Path) -> None:
    args = [
        "--publish-not-ready-addresses=false",
        "--disable-network-policy=false",
        "--inject-hosts-env=true",
    ]
    _, objects, _ = simulate(tmp_path, [node("n1"), _job(args)])
    ps = pod(objects, f"{JOB}-ps-0")
    assert (ps["spec"]["hostname"], ps["spec"]["subdomain"]) == (f"{JOB}-ps-0", JOB)
    assert {"VC_PS_NUM", "VC_PS_HOSTS", "VC_WORKER_NUM", "VC_WORKER_HOSTS"} <= _env_names(ps)
    mounts = {m["mountPath"] for m in ps["spec"]["containers"][0]["volumeMounts"]}
    assert "/etc/volcano" in mounts
    hosts = objects[("ConfigMap", "default", f"{JOB}-svc")]["data"]
    assert hosts["VC_PS_HOSTS"] == f"{JOB}-ps-0.{JOB}"
    assert hosts["VC_WORKER_NUM"] == "2"
    assert hosts["VC_WORKER_HOSTS"] == WORKERS
    assert hosts["worker.host"] == WORKERS.replace(",", "\n")
    service = objects[("Service", "default", JOB)]["spec"]
    assert service["clusterIP"] == "None"
    policy = objects[("NetworkPolicy", "default", JOB)]["spec"]
    assert policy["policyTypes"] == ["Ingress"]


def test_publish_not_ready_addresses(tmp_path: Path) -> None:
    _, objects, _ = simulate(tmp_path, [node("n1"), _job(["--publish-not-ready-addresses=true"])])
    assert objects[("Service", "default", JOB)]["spec"]["publishNotReadyAddresses"] is True


def test_inject_hosts_env_false_keeps_only_the_files(tmp_path: Path) -> None:
    _, objects, _ = simulate(
        tmp_path,
        [node("n1"), _job(["--inject-hosts-env=false", "--disable-network-policy=true"])],
    )
    ps = pod(objects, f"{JOB}-ps-0")
    assert not {n for n in _env_names(ps) if n.endswith(("_HOSTS", "_NUM"))}
    assert ("ConfigMap", "default", f"{JOB}-svc") in objects
    assert ("NetworkPolicy", "default", JOB) not in objects
