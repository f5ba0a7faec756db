"""`volcano-py controllers` as a process against the real control plane, next to
`volcano-py scheduler`: a Volcano Job gets its PodGroup and pods, which the scheduler binds to
kwok nodes and kwok runs, and the Job's status follows; Commands are consumed; a plain pod of
ours gets a PodGroup; a Queue closes through a Command.

The controllers run as the control plane's controllers user under the rules of
``deploy/base/controllers-rbac.yaml`` (bound to that user), so a missing rule fails these tests.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import test_scheduler_process
import yaml
from test_scheduler_process import (
    GROUP_ANNOTATION,
    PG_PATH,
    SchedulerProcess,
    list_pods,
    pod_group_manifest,
    pod_manifest,
    queue_manifest,
    wait_until,
)

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import CONTROLLERS_USER, REPO_ROOT, ApiError, ControlPlane

pytestmark = pytest.mark.cluster

# The scheduler tests' fixtures, used here too.
scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler

RBAC_FILE = REPO_ROOT / "deploy" / "base" / "controllers-rbac.yaml"
LEASE_NAMESPACE = "volcano-system"
JOB_PATH = "/apis/batch.volcano.sh/v1alpha1"
BUS_PATH = "/apis/bus.volcano.sh/v1alpha1"


def grant_controllers_rbac(plane: ControlPlane) -> None:
    """deploy/base's controllers ClusterRole and leader-election Role, bound to the control
    plane's controllers user (instead of the ServiceAccount)."""
    with contextlib.suppress(ApiError):
        plane.create_namespace(LEASE_NAMESPACE)
    subject = {"kind": "User", "name": CONTROLLERS_USER, "apiGroup": "rbac.authorization.k8s.io"}
    for document in yaml.safe_load_all(RBAC_FILE.read_text()):
        if not document:
            continue
        if document["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            document = {**document, "subjects": [subject]}
        path = plane.resource_path(
            document["apiVersion"], document["kind"], document["metadata"].get("namespace")
        )
        try:
            plane.request("POST", path, document)
        except ApiError as error:
            if error.status != 409:
                raise


@pytest.fixture
def controllers(
    control_plane: ControlPlane, tmp_path: Path, scheduler_name: str
) -> Iterator[ControllersProcess]:
    grant_controllers_rbac(control_plane)
    process = ControllersProcess(
        control_plane.controllers_kubeconfig,
        tmp_path,
        [f"--scheduler-name={scheduler_name}", "--leader-elect=true", "-v=4",
         "--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
         "--leader-elect-retry-period=500ms"],
    ).start()  # fmt: skip
    try:
        process.wait_ready()
        yield process
    finally:
        process.stop()  # SIGTERM: the Lease is released for the next test's controllers


def job_manifest(
    name: str, scheduler_name: str, *, replicas: int = 2, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler_name,
            "minAvailable": replicas,
            "queue": "default",
            "tasks": [{
                "name": "worker",
                "replicas": replicas,
                "template": {"spec": {
                    "terminationGracePeriodSeconds": 0,
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "main",
                        "image": "busybox",
                        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                    }],
                }},
            }],
            **spec,
        },
    }  # fmt: skip


def get_job(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    job: dict[str, Any] = plane.request("GET", f"{JOB_PATH}/namespaces/{namespace}/jobs/{name}")
    return job


def job_phase(plane: ControlPlane, namespace: str, name: str) -> str:
    return str(((get_job(plane, namespace, name).get("status") or {}).get("state") or {}).get(
        "phase", ""
    ))  # fmt: skip


def pod_groups(plane: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    items = plane.request("GET", f"{PG_PATH}/namespaces/{namespace}/podgroups")["items"]
    return {pg["metadata"]["name"]: pg for pg in items}


def phases_seen(job: dict[str, Any]) -> list[str]:
    return [c.get("status", "") for c in (job.get("status") or {}).get("conditions") or []]


def diagnosis(
    plane: ControlPlane, namespace: str, name: str, *processes: SchedulerProcess
) -> Callable[[], str]:
    def diagnose() -> str:
        return "\n".join([
            f"job: {get_job(plane, namespace, name).get('status')}",
            f"podgroups: {[pg.get('status') for pg in pod_groups(plane, namespace).values()]}",
            *(process.log(40) for process in processes),
        ])  # fmt: skip

    return diagnose


def test_job_gets_pod_group_and_pods_and_runs(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    """kwok's fast stages run a bound pod and, as its owner is of kind ``Job``, complete it
    at once: the Job goes Pending -> Running -> Completed."""
    nodes = make_nodes("cpu", 2)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    control_plane.create(job_manifest("job1", scheduler_name), namespace)
    diagnose = diagnosis(control_plane, namespace, "job1", controllers, scheduler)
    job = get_job(control_plane, namespace, "job1")
    pg_name = f"job1-{job['metadata']['uid']}"
    seen: dict[str, dict[str, Any]] = {}

    def pod_group_seen() -> bool:
        seen.update(pod_groups(control_plane, namespace))
        return pg_name in seen

    wait_until("the job's PodGroup", pod_group_seen, diagnose=diagnose)
    assert seen[pg_name]["spec"]["minMember"] == 2
    assert seen[pg_name]["metadata"]["ownerReferences"][0]["name"] == "job1"
    wait_until(
        "the Job Completed",
        lambda: job_phase(control_plane, namespace, "job1") == "Completed",
        diagnose=diagnose,
    )
    job = get_job(control_plane, namespace, "job1")
    assert phases_seen(job)[:2] == ["Pending", "Running"], job["status"]
    # (A Completed job's counts are of the pods its last kill removed: none here, as
    # upstream's killJob retains succeeded pods.)
    assert job["status"]["minAvailable"] == 2
    pods = list_pods(control_plane, namespace)
    assert sorted(pods) == ["job1-worker-0", "job1-worker-1"]
    for pod in pods.values():
        assert pod["metadata"]["annotations"][GROUP_ANNOTATION] == pg_name
        assert pod["spec"]["schedulerName"] == scheduler_name
        assert pod["spec"]["nodeName"] in nodes
        assert pod["status"]["phase"] == "Succeeded"
    assert controllers.forbidden() == []
    assert controllers.terminate() == 0


def command(plane: ControlPlane, namespace: str, name: str, action: str, target: str) -> None:
    uid = get_job(plane, namespace, target)["metadata"]["uid"]  # the CRD requires target.uid
    plane.create(
        {
            "apiVersion": "bus.volcano.sh/v1alpha1",
            "kind": "Command",
            "metadata": {"name": name},
            "action": action,
            "target": {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": target,
                "uid": uid,
            },
        },
        namespace,
    )


def test_commands_abort_and_resume_a_job(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    """No nodes yet: the Job waits Pending. AbortJob aborts it; ResumeJob, once there are
    nodes, runs it to the end. Both Commands are consumed."""
    scheduler = start_scheduler()
    scheduler.wait_ready()
    control_plane.create(job_manifest("job1", scheduler_name), namespace)
    diagnose = diagnosis(control_plane, namespace, "job1", controllers, scheduler)
    wait_until(
        "the Job Pending",
        lambda: job_phase(control_plane, namespace, "job1") == "Pending",
        diagnose=diagnose,
    )
    command(control_plane, namespace, "abort-job1", "AbortJob", "job1")
    commands_path = f"{BUS_PATH}/namespaces/{namespace}/commands"
    wait_until(
        "the Job Aborted",
        lambda: job_phase(control_plane, namespace, "job1") == "Aborted",
        diagnose=diagnose,
    )
    assert control_plane.request("GET", commands_path)["items"] == []
    assert "Aborting" in phases_seen(get_job(control_plane, namespace, "job1"))
    make_nodes("cpu", 2)
    command(control_plane, namespace, "resume-job1", "ResumeJob", "job1")
    wait_until(
        "the Job run to completion",
        lambda: job_phase(control_plane, namespace, "job1") == "Completed",
        diagnose=diagnose,
    )
    assert control_plane.request("GET", commands_path)["items"] == []
    assert "Restarting" in phases_seen(get_job(control_plane, namespace, "job1"))
    assert controllers.forbidden() == []


def test_plain_pod_gets_a_pod_group(
    controllers: ControllersProcess,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
) -> None:
    created = control_plane.create(pod_manifest("plain", scheduler_name, cpu="500m"), namespace)
    pg_name = f"podgroup-{created['metadata']['uid']}"
    wait_until(
        "the pod's PodGroup and annotation",
        lambda: (
            pg_name in pod_groups(control_plane, namespace)
            # The PodGroup is created before the pod is annotated: until then the pod may
            # have no annotations at all.
            and (
                list_pods(control_plane, namespace)["plain"]["metadata"].get("annotations") or {}
            ).get(GROUP_ANNOTATION)
            == pg_name
        ),
        diagnose=controllers.log,
    )
    pod_group = pod_groups(control_plane, namespace)[pg_name]
    assert pod_group["spec"]["minMember"] == 1
    assert pod_group["spec"]["queue"] == "default"
    assert pod_group["metadata"]["ownerReferences"][0]["kind"] == "Pod"
    # Another scheduler's pod is left alone.
    control_plane.create(pod_manifest("foreign", "default-scheduler"), namespace)
    pg_count = len(pod_groups(control_plane, namespace))
    wait_until("the controllers idle", lambda: controllers.get("/readyz")[0] == 200)
    assert GROUP_ANNOTATION not in (
        list_pods(control_plane, namespace)["foreign"]["metadata"].get("annotations") or {}
    )
    assert len(pod_groups(control_plane, namespace)) == pg_count


def test_queue_closes_through_a_command(
    controllers: ControllersProcess,
    control_plane: ControlPlane,
    namespace: str,
) -> None:
    queue_name = f"q-{namespace[-6:]}"
    control_plane.create(queue_manifest(queue_name))
    queue_path = f"{PG_PATH}/queues/{queue_name}"

    def state() -> str:
        return str((control_plane.request("GET", queue_path).get("status") or {}).get("state"))

    try:
        wait_until("the queue Open", lambda: state() == "Open", diagnose=controllers.log)
        queue = control_plane.request("GET", queue_path)
        assert queue["spec"]["parent"] == "root"
        queue_uid = queue["metadata"]["uid"]
        control_plane.create(pod_group_manifest("holder", 1, queue=queue_name), namespace)

        def command(action: str, name: str) -> None:
            control_plane.create(
                {
                    "apiVersion": "bus.volcano.sh/v1alpha1",
                    "kind": "Command",
                    "metadata": {"name": name},
                    "action": action,
                    "target": {
                        "apiVersion": "scheduling.volcano.sh/v1beta1",
                        "kind": "Queue",
                        "name": queue_name,
                        "uid": queue_uid,
                    },
                },
                namespace,
            )

        command("CloseQueue", "close")
        # A PodGroup still in the queue: Closing until it is gone, then Closed.
        wait_until("the queue Closing", lambda: state() == "Closing", diagnose=controllers.log)
        control_plane.request("DELETE", f"{PG_PATH}/namespaces/{namespace}/podgroups/holder")
        wait_until("the queue Closed", lambda: state() == "Closed", diagnose=controllers.log)
        command("OpenQueue", "open")
        wait_until("the queue Open again", lambda: state() == "Open", diagnose=controllers.log)
        assert (
            control_plane.request("GET", f"{BUS_PATH}/namespaces/{namespace}/commands")["items"]
            == []
        )
        assert controllers.forbidden() == []
    finally:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", queue_path)


def test_framework_plugins_reach_the_pods_live(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    """A pytorch job with hcclrank and a ray job, as users write them: the pods the live
    controllers create carry the rendezvous env, ports and rank annotation, and ray's head
    Service exists (upstream's ``pytorch``, ``hcclrank`` and ``ray`` plugins)."""
    pytorch = job_manifest(
        "mnist", scheduler_name, plugins={"pytorch": ["--port=23457"], "hcclrank": [], "svc": []}
    )
    worker = pytorch["spec"]["tasks"][0]
    pytorch["spec"]["tasks"] = [{**worker, "name": "master", "replicas": 1}, worker]
    pytorch["spec"]["minAvailable"] = 3
    make_nodes("cpu", 2)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    control_plane.create(pytorch, namespace)
    ray = job_manifest("ray1", scheduler_name, replicas=1, plugins={"ray": [], "svc": []})
    head = ray["spec"]["tasks"][0]
    head["template"]["spec"]["containers"][0]["name"] = "head"
    ray["spec"]["tasks"] = [{**head, "name": "head"}]
    control_plane.create(ray, namespace)
    wait_until(
        "the jobs' pods",
        lambda: len(list_pods(control_plane, namespace)) == 4,
        diagnose=diagnosis(control_plane, namespace, "mnist", controllers, scheduler),
    )
    pods = list_pods(control_plane, namespace)

    def env(pod_name: str) -> dict[str, str]:
        container = pods[pod_name]["spec"]["containers"][0]
        return {e["name"]: e.get("value", "") for e in container.get("env") or []}

    assert env("mnist-master-0")["MASTER_ADDR"] == "mnist-master-0.mnist"
    assert env("mnist-worker-1")["MASTER_PORT"] == "23457"
    assert env("mnist-worker-1")["WORLD_SIZE"] == "3"
    assert env("mnist-worker-1")["RANK"] == "2"
    ports = pods["mnist-worker-0"]["spec"]["containers"][0]["ports"]
    assert {"name": "pytorchjob-port", "containerPort": 23457, "protocol": "TCP"} in ports
    assert pods["mnist-worker-1"]["metadata"]["annotations"]["hccl/rankIndex"] == "2"
    head_command = pods["ray1-head-0"]["spec"]["containers"][0]["command"]
    assert head_command[:2] == ["sh", "-c"] and "ray start --head" in head_command[2]
    service = control_plane.request("GET", f"/api/v1/namespaces/{namespace}/services/ray1-head-svc")
    assert [p["name"] for p in service["spec"]["ports"]] == ["gcs", "dashboard", "client-server"]
    assert controllers.forbidden() == []


def test_a_finished_job_is_deleted_after_its_ttl(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    """``ttlSecondsAfterFinished`` (upstream's garbage collector): kwok completes the job's
    pod, the Job goes Completed, and 1 s later it is deleted in the foreground. This control
    plane runs no kube-controller-manager, so the deletion stays pending on its
    ``foregroundDeletion`` finalizer: the deletion time stamp is the proof."""
    make_nodes("cpu", 1)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    control_plane.create(
        job_manifest("short", scheduler_name, replicas=1, ttlSecondsAfterFinished=1), namespace
    )
    diagnose = diagnosis(control_plane, namespace, "short", controllers, scheduler)

    def deleted() -> bool:
        try:
            job = get_job(control_plane, namespace, "short")
        except ApiError as error:
            return error.status == 404
        return bool(job["metadata"].get("deletionTimestamp"))

    wait_until("the finished Job deleted after its TTL", deleted, diagnose=diagnose)
    job = get_job(control_plane, namespace, "short")
    assert job["status"]["state"]["phase"] == "Completed"
    assert "foregroundDeletion" in job["metadata"]["finalizers"]
    assert controllers.forbidden() == []
