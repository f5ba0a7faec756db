"""Kubernetes workloads in ``volcano-py simulate`` (docs/simulate.md v2, "Objects understood"):
Deployment -> ReplicaSet -> pods, StatefulSet -> ordered pods, batch/v1 Job -> pods until its
completions, with the owner references Kubernetes sets and one PodGroup per owner as Volcano's
podgroup controller makes them (``pkg/controllers/podgroup``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from tests.sim.roundtrip import by_key, dump, node, simulate_text
from tests.sim.test_yaml_output import _round_trip
from volcano_py.sim.workloads import random_suffix, template_hash

CPU = {"requests": {"cpu": "500m"}}


def _template(labels: dict[str, str], scheduler: str = "volcano", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "main", "image": "busybox", "resources": CPU}],
            **spec,
        },
    }


def deployment(name: str, replicas: int, annotations: dict[str, str] | None = None):
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": _template({"app": name}),
        },
    }


def stateful_set(name: str, replicas: int, policy: str | None = None, scheduler="volcano"):
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": name,
        "selector": {"matchLabels": {"app": name}},
        "template": _template({"app": name}, scheduler),
    }
    if policy:
        spec["podManagementPolicy"] = policy
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def batch_job(name: str, parallelism: int, completions: int | None, **extra: Any):
    template = _template({}, restartPolicy="Never")
    template["metadata"] = {"annotations": {"volcano-py.sim/run-cycles": "2"}}
    spec: dict[str, Any] = {"parallelism": parallelism, "template": template, **extra}
    if completions is not None:
        spec["completions"] = completions
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def _run(tmp_path: Path, objects: list[dict[str, Any]], *args: str):
    text = dump([node("n1", 16, 32), node("n2", 16, 32), *objects])
    code, listed, err = simulate_text(tmp_path, text, "--format", "yaml", *args)
    assert code == 0, err
    return by_key(listed), err


def _of_kind(items: dict[tuple[str, str, str], dict[str, Any]], kind: str):
    return [obj for (k, _ns, _name), obj in sorted(items.items()) if k == kind]


def _controller(obj: dict[str, Any]) -> dict[str, Any]:
    (owner,) = obj["metadata"]["ownerReferences"]
    assert owner["controller"] is True and owner["blockOwnerDeletion"] is True
    return owner


def test_deployment_makes_a_replica_set_and_its_pods(tmp_path: Path) -> None:
    items, err = _run(
        tmp_path, [deployment("web", 3, {"scheduling.volcano.sh/group-min-member": "3"})]
    )
    assert err == ""
    (dep,) = _of_kind(items, "Deployment")
    (rs,) = _of_kind(items, "ReplicaSet")
    pod_hash = template_hash(dep["spec"]["template"])
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert _controller(rs) | {} == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
        "uid": dep["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    # The Deployment's own annotations go down to its ReplicaSet (the podgroup controller
    # reads the ReplicaSet's).
    assert rs["metadata"]["annotations"]["scheduling.volcano.sh/group-min-member"] == "3"
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    pods = _of_kind(items, "Pod")
    assert len(pods) == 3
    for pod in pods:
        assert pod["metadata"]["name"].startswith(f"web-{pod_hash}-")
        assert len(pod["metadata"]["name"]) == len(f"web-{pod_hash}-") + 5
        assert pod["metadata"]["generateName"] == f"web-{pod_hash}-"
        assert pod["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
        owner = _controller(pod)
        assert (owner["kind"], owner["uid"]) == ("ReplicaSet", rs["metadata"]["uid"])
        assert pod["status"]["phase"] == "Running"
    # One PodGroup for the ReplicaSet's pods, named after its uid, gang of 3.
    (pod_group,) = _of_kind(items, "PodGroup")
    assert pod_group["metadata"]["name"] == f"podgroup-{rs['metadata']['uid']}"
    assert pod_group["spec"]["minMember"] == 3
    assert pod_group["metadata"]["ownerReferences"] == pods[0]["metadata"]["ownerReferences"]
    assert {p["metadata"]["annotations"]["scheduling.k8s.io/group-name"] for p in pods} == {
        pod_group["metadata"]["name"]
    }
    assert rs["status"]["readyReplicas"] == 3
    assert dep["status"]["availableReplicas"] == 3
    available = next(c for c in dep["status"]["conditions"] if c["type"] == "Available")
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")


def test_pod_suffixes_come_from_the_seed(tmp_path: Path) -> None:
    names = {}
    for seed in ("0", "1"):
        items, _ = _run(tmp_path, [deployment("web", 2)], "--seed", seed)
        names[seed] = sorted(p["metadata"]["name"] for p in _of_kind(items, "Pod"))
    assert names["0"] != names["1"]
    assert len(random_suffix(0, "uid", "t", 0)) == 5
    assert set(random_suffix(0, "uid", "t", 0)) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_stateful_set_pods_start_in_order(tmp_path: Path) -> None:
    items, _ = _run(tmp_path, [stateful_set("db", 3)], "--cycles", "2")
    pods = {p["metadata"]["name"]: p for p in _of_kind(items, "Pod")}
    # Cycle 1 makes and binds db-0; it is Running in cycle 2, which makes db-1.
    assert sorted(pods) == ["db-0", "db-1"]
    items, _ = _run(tmp_path, [stateful_set("db", 3)])
    pods = {p["metadata"]["name"]: p for p in _of_kind(items, "Pod")}
    assert sorted(pods) == ["db-0", "db-1", "db-2"]
    (sts,) = _of_kind(items, "StatefulSet")
    db1 = pods["db-1"]
    assert db1["spec"]["hostname"] == "db-1" and db1["spec"]["subdomain"] == "db"
    labels = db1["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"] == sts["status"]["updateRevision"]
    assert _controller(db1)["uid"] == sts["metadata"]["uid"]
    assert sts["status"]["readyReplicas"] == 3
    (pod_group,) = _of_kind(items, "PodGroup")
    assert pod_group["metadata"]["name"] == f"podgroup-{sts['metadata']['uid']}"


def test_parallel_stateful_set_makes_every_pod_at_once(tmp_path: Path) -> None:
    items, _ = _run(tmp_path, [stateful_set("db", 3, "Parallel")], "--cycles", "1")
    assert sorted(p["metadata"]["name"] for p in _of_kind(items, "Pod")) == [
        "db-0",
        "db-1",
        "db-2",
    ]


def test_stateful_set_volume_claim_templates_make_claims(tmp_path: Path) -> None:
    sts = stateful_set("db", 2, "Parallel")
    sts["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    ]
    items, _ = _run(tmp_path, [sts])
    claims = sorted(c["metadata"]["name"] for c in _of_kind(items, "PersistentVolumeClaim"))
    assert claims == ["data-db-0", "data-db-1"]
    db0 = items[("Pod", "default", "db-0")]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}} in db0["spec"][
        "volumes"
    ]


def test_batch_job_is_not_taken_for_a_volcano_job(tmp_path: Path) -> None:
    """A batch/v1 Job runs ``parallelism`` pods at a time until ``completions`` succeeded."""
    items, err = _run(tmp_path, [batch_job("pi", 2, 4)])
    assert err == ""
    (job,) = _of_kind(items, "Job")
    assert job["apiVersion"] == "batch/v1"
    pods = _of_kind(items, "Pod")
    assert len(pods) == 4 and all(p["status"]["phase"] == "Succeeded" for p in pods)
    for pod in pods:
        owner = _controller(pod)
        assert (owner["apiVersion"], owner["kind"], owner["uid"]) == (
            "batch/v1",
            "Job",
            job["metadata"]["uid"],
        )
        labels = pod["metadata"]["labels"]
        assert labels["batch.kubernetes.io/job-name"] == "pi" == labels["job-name"]
        assert labels["batch.kubernetes.io/controller-uid"] == job["metadata"]["uid"]
    # Two at a time: the first two started together, the next two after them.
    starts = sorted(p["status"]["startTime"] for p in pods)
    assert starts[0] == starts[1] < starts[2] == starts[3]
    status = job["status"]
    assert status["succeeded"] == 4 and "active" not in status
    assert [c["type"] for c in status["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    assert status["completionTime"] >= status["startTime"]
    (pod_group,) = _of_kind(items, "PodGroup")
    assert pod_group["metadata"]["name"] == f"podgroup-{job['metadata']['uid']}"


def test_batch_job_without_completions_runs_parallelism_pods_once(tmp_path: Path) -> None:
    items, _ = _run(tmp_path, [batch_job("once", 3, None)])
    assert len(_of_kind(items, "Pod")) == 3
    (job,) = _of_kind(items, "Job")
    assert job["status"]["succeeded"] == 3


def test_indexed_batch_job_names_its_pods_by_index(tmp_path: Path) -> None:
    items, _ = _run(tmp_path, [batch_job("idx", 3, 3, completionMode="Indexed")])
    pods = _of_kind(items, "Pod")
    indexes = sorted(
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods
    )
    assert indexes == ["0", "1", "2"]
    for pod in pods:
        index = pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
        assert pod["metadata"]["name"].startswith(f"idx-{index}-")
        assert pod["spec"]["hostname"] == f"idx-{index}"


def test_suspended_batch_job_makes_no_pods(tmp_path: Path) -> None:
    items, _ = _run(tmp_path, [batch_job("later", 2, 2, suspend=True)])
    assert _of_kind(items, "Pod") == []


def test_batch_job_with_restart_policy_always_is_refused(tmp_path: Path) -> None:
    job = batch_job("bad", 1, 1)
    job["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    code, _out, err = simulate_text(tmp_path, dump([node("n1", 4, 8), job]))
    assert code == 2
    assert "Job default/bad: spec.template.spec.restartPolicy: Unsupported value" in err


def test_selector_not_matching_template_is_refused(tmp_path: Path) -> None:
    dep = deployment("web", 1)
    dep["spec"]["selector"]["matchLabels"] = {"app": "other"}
    code, _out, err = simulate_text(tmp_path, dump([node("n1", 4, 8), dep]))
    assert code == 2
    assert "Deployment default/web: spec.template.metadata.labels" in err


def test_fields_not_simulated_are_named(tmp_path: Path) -> None:
    job = batch_job("deadline", 1, 1, activeDeadlineSeconds=30)
    _items, err = _run(tmp_path, [job])
    assert "Job default/deadline: spec.activeDeadlineSeconds: not simulated; ignored" in err


def test_json_report_lists_workload_pods(tmp_path: Path) -> None:
    text = dump([node("n1", 16, 32), deployment("web", 2), stateful_set("db", 1)])
    code, out, err = simulate_text(tmp_path, text)
    assert code == 0, err
    report = json.loads(out)
    assert "default/db-0" in report["pods"]
    assert sum(key.startswith("default/web-") for key in report["pods"]) == 2
    assert report["jobs"] == {}


# ------------------------------------------ upstream pg_controller_test.go TestAddStatefulSet


def test_add_stateful_set_pod_of_another_scheduler_gets_no_pod_group(tmp_path: Path) -> None:
    """TestAddStatefulSet "StatefulSet with replicas > 0 and existing pod without scheduler
    name" (the pod is the default scheduler's)."""
    items, _ = _run(tmp_path, [stateful_set("sts-test", 1, scheduler="default-scheduler")])
    assert [p["metadata"]["name"] for p in _of_kind(items, "Pod")] == ["sts-test-0"]
    assert _of_kind(items, "PodGroup") == []


def test_add_stateful_set_volcano_pod_gets_a_pod_group(tmp_path: Path) -> None:
    """TestAddStatefulSet "StatefulSet with replicas > 0 and existing pod with volcano
    scheduler": minMember 1, minResources one pod's, Pending until scheduled."""
    items, _ = _run(tmp_path, [stateful_set("sts-test", 1)], "--cycles", "1")
    (pod_group,) = _of_kind(items, "PodGroup")
    assert pod_group["spec"]["minMember"] == 1
    assert pod_group["spec"]["minResources"]["cpu"] == "500m"
    assert _controller(pod_group)["kind"] == "StatefulSet"


def test_add_stateful_set_pod_already_in_a_group_gets_no_new_one(tmp_path: Path) -> None:
    """TestAddStatefulSet "StatefulSet with existing pod already associated with podgroup"."""
    sts = stateful_set("sts-test", 1)
    sts["spec"]["template"]["metadata"]["annotations"] = {
        "scheduling.k8s.io/group-name": "lws-1-revision"
    }
    pod_group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "lws-1-revision", "namespace": "default"},
        "spec": {"minMember": 1},
    }
    items, _ = _run(tmp_path, [sts, pod_group])
    assert [g["metadata"]["name"] for g in _of_kind(items, "PodGroup")] == ["lws-1-revision"]


def test_replica_set_scaled_to_zero_loses_its_pod_group(tmp_path: Path) -> None:
    """addReplicaSet: ``spec.replicas == 0`` deletes ``podgroup-<rs uid>``."""
    replica_set = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs", "namespace": "default", "uid": "rs-uid-1"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "rs"}},
            "template": _template({"app": "rs"}),
        },
    }
    pod_group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "podgroup-rs-uid-1", "namespace": "default"},
        "spec": {"minMember": 1},
    }
    items, _ = _run(tmp_path, [replica_set, pod_group])
    assert _of_kind(items, "PodGroup") == []
    assert _of_kind(items, "Pod") == []


def test_dumped_replica_set_and_pods_are_kept(tmp_path: Path) -> None:
    """A dump's ReplicaSet (Kubernetes' own hash) is found by its owner reference: no second
    ReplicaSet, no extra pods."""
    items, _ = _run(tmp_path, [deployment("web", 2)])
    dumped = [copy.deepcopy(obj) for obj in items.values() if obj["kind"] != "Node"]
    for obj in dumped:
        if obj["kind"] in ("ReplicaSet", "Pod"):
            obj["metadata"]["name"] = obj["metadata"]["name"].replace("web-", "web-7d4b9c-", 1)
    again, _ = _run(tmp_path, dumped)
    assert len(_of_kind(again, "ReplicaSet")) == 1
    assert len(_of_kind(again, "Pod")) == 2


def test_workloads_round_trip(tmp_path: Path) -> None:
    text = dump(
        [
            node("n1", 8, 16),
            node("n2", 8, 16),
            deployment("web", 3),
            stateful_set("db", 2),
            batch_job("pi", 2, 3),
        ]
    )
    _round_trip(tmp_path, text)


def test_batch_job_and_volcano_job_of_one_name_live_side_by_side(tmp_path: Path) -> None:
    volcano = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "same", "namespace": "default"},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "tasks": [{"name": "t", "replicas": 1, "template": _template({})}],
        },
    }
    text = dump([node("n1", 16, 32), volcano, batch_job("same", 1, None)])
    code, listed, err = simulate_text(tmp_path, text, "--format", "yaml")
    assert code == 0 and err == ""
    everything = yaml.safe_load(listed)["items"]
    jobs = sorted(obj["apiVersion"] for obj in everything if obj["kind"] == "Job")
    assert jobs == ["batch.volcano.sh/v1alpha1", "batch/v1"]
    pods = [obj for obj in everything if obj["kind"] == "Pod"]
    owners = sorted(_controller(pod)["apiVersion"] for pod in pods)
    assert owners == ["batch.volcano.sh/v1alpha1", "batch/v1"]
    assert "same-t-0" in {pod["metadata"]["name"] for pod in pods}
