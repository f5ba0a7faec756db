"""The live controllers under the control plane's own faults (issue 16): the API server
restarted under them, their watches answered 410 Gone, the webhooks process down behind
fail-closed configurations, and a Job deleted while its pods are being created.
(Their own crashes and failovers are in test_controllers_chaos.py.)

Pods are created by name (``<job>-<task>-<index>``), so "no duplicates" is checked as one UID
per pod name, ever, by a poller running through the fault (``PodUids``).

These controllers run without leader election where the fault would otherwise cost them the
Lease (an API server away longer than the renew deadline, a frozen process): a leader that
loses its Lease exits, as upstream's does, which test_controllers_chaos.py covers.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import test_scheduler_process
import yaml
from test_controllers_chaos import PodUids, StartControllers, start_controllers
from test_controllers_process import (
    JOB_PATH,
    diagnosis,
    get_job,
    grant_controllers_rbac,
    job_manifest,
    job_phase,
    pod_groups,
)
from test_scheduler_process import PG_PATH, SchedulerProcess, list_pods, wait_until
from test_webhooks_process import LABEL, default_queue, queue_manifest, wait_until_active

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import REPO_ROOT, ApiError, ControlPlane, bin_dir_from_env
from e2e.webhooks_process import WebhooksProcess

pytestmark = pytest.mark.cluster

# Fixtures of the other modules, used here too.
scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler
__all__ = ["default_queue", "scheduler_name", "scheduler_rbac", "start_controllers",
           "start_scheduler"]  # fmt: skip

NO_LEASE = ("--leader-elect=false",)
REGISTRATION = "/apis/admissionregistration.k8s.io/v1"
WEBHOOKS_FILE = REPO_ROOT / "deploy" / "base" / "webhooks-configuration.yaml"
StartScheduler = Callable[..., SchedulerProcess]


def answers(check: Callable[[], bool]) -> Callable[[], bool]:
    """``check``, reading False while the API server does not answer (it is restarting)."""

    def guarded() -> bool:
        try:
            return check()
        except (ApiError, OSError):
            return False

    return guarded


def pod_names(job: str, replicas: int) -> set[str]:
    return {f"{job}-worker-{index}" for index in range(replicas)}


def duplicated(seen: PodUids) -> dict[str, int]:
    return {name: len(uids) for name, uids in seen.uids.items() if len(uids) != 1}


# ------------------------------------------------------------------ API server restart


def test_api_server_restart_both_jobs_converge_without_duplicates(
    start_controllers: StartControllers,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    """A job being created when the API server goes away, and one created once it is back:
    the same controllers process reconnects its watches and both jobs get every pod once."""
    make_nodes("cpu", 2)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    # Slow creates (5 a second): the restart lands while the first job's pods are made.
    controllers = start_controllers(
        "controllers", (*NO_LEASE, "--kube-api-qps=5", "--kube-api-burst=5")
    )
    controllers.wait_ready(timeout=30)
    wanted = pod_names("before", 20) | pod_names("after", 4)
    with PodUids(control_plane, namespace) as seen:
        control_plane.create(job_manifest("before", scheduler_name, replicas=20), namespace)
        wait_until("the first pods of 'before'",
                   lambda: len(list_pods(control_plane, namespace)) >= 1, timeout=60,
                   diagnose=diagnosis(control_plane, namespace, "before", controllers))  # fmt: skip
        watches = controllers.requests("pods", "WATCH", "200")
        assert controllers.forbidden() == []
        control_plane.restart("kube-apiserver")
        control_plane.create(job_manifest("after", scheduler_name, replicas=4), namespace)
        wait_until(
            "both jobs' pods",
            answers(lambda: set(list_pods(control_plane, namespace)) == wanted),
            timeout=90,
            diagnose=diagnosis(control_plane, namespace, "after", controllers, scheduler),
        )
        wait_until(
            "both jobs Running (or done)",
            lambda: all(
                job_phase(control_plane, namespace, job) in ("Running", "Completed")
                for job in ("before", "after")
            ),
            timeout=60,
            diagnose=diagnosis(control_plane, namespace, "before", controllers, scheduler),
        )
        time.sleep(0.5)  # a last poll of the pods' UIDs
    assert set(list_pods(control_plane, namespace)) == wanted
    assert duplicated(seen) == {}
    assert controllers.alive
    assert controllers.requests("pods", "WATCH", "200") > watches
    assert controllers.get("/readyz")[0] == 200
    # (The restarted API server answers 403 for a moment, until its RBAC caches are loaded:
    # the creates it refused were retried, as every pod above shows.)


# ------------------------------------------------------------------ 410 Gone


@pytest.fixture
def compacting_plane(tmp_path: Path) -> Iterator[ControlPlane]:
    """A control plane of the test's own whose watches fall off history quickly: no watch
    cache, etcd compacted every 2 s (as test_scheduler_chaos.py's 410 test)."""
    plane = ControlPlane(
        bin_dir_from_env(),
        workdir=tmp_path / "compacting",
        apiserver_args=["--watch-cache=false", "--etcd-compaction-interval=2s"],
    )
    with plane:
        grant_controllers_rbac(plane)
        yield plane


def enqueue_pod_groups(plane: ControlPlane, namespace: str) -> None:
    """The scheduler's part, done by hand (no scheduler runs here): Pending PodGroups go
    Inqueue, and the job controller then creates their pods."""
    for name, group in pod_groups(plane, namespace).items():
        if (group.get("status") or {}).get("phase", "Pending") == "Pending":
            plane.request(
                "PATCH", f"{PG_PATH}/namespaces/{namespace}/podgroups/{name}",
                {"status": {"phase": "Inqueue"}}, content_type="application/merge-patch+json",
            )  # fmt: skip


def job_created(plane: ControlPlane, namespace: str, job: str, replicas: int) -> bool:
    enqueue_pod_groups(plane, namespace)
    return pod_names(job, replicas) <= set(list_pods(plane, namespace))


def test_a_410_relists_and_a_job_deleted_meanwhile_is_forgotten(
    compacting_plane: ControlPlane, tmp_path: Path, scheduler_name: str
) -> None:
    """The controllers are frozen while the API server restarts (their watches are cut), a
    Job they knew, its PodGroup still Pending, is deleted, another is created, and history is
    compacted away. Thawed, their watches meet 410 Gone and they list again: the new job gets
    its pods, and the deleted one none, although its PodGroup (no garbage collector removes
    it here) is then enqueued, the event that makes a known job's pods."""
    plane = compacting_plane
    plane.create_namespace("relist")
    controllers = ControllersProcess(
        plane.controllers_kubeconfig, tmp_path,
        [f"--scheduler-name={scheduler_name}", *NO_LEASE],
    ).start()  # fmt: skip
    try:
        controllers.wait_ready(timeout=30)
        plane.create(job_manifest("doomed", scheduler_name, replicas=2), "relist")
        wait_until("the doomed job's PodGroup", lambda: bool(pod_groups(plane, "relist")),
                   timeout=60, diagnose=controllers.log)  # fmt: skip
        assert controllers.process is not None
        controllers.process.send_signal(signal.SIGSTOP)
        plane.restart("kube-apiserver")
        plane.request("DELETE", f"{JOB_PATH}/namespaces/relist/jobs/doomed")
        plane.create(job_manifest("fresh", scheduler_name, replicas=2), "relist")
        for index in range(20):
            plane.create({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"churn-{index}"}}, "relist")  # fmt: skip
        time.sleep(5)  # two compactions: the versions the watches hold are gone
        with PodUids(plane, "relist") as seen:
            controllers.process.send_signal(signal.SIGCONT)
            controllers.wait_for(
                "the Job relist",
                lambda: (
                    "Job: relist found 1 deleted while the watch was down" in controllers.log(None)
                ),
                timeout=30,
            )
            wait_until("the fresh job's pods", lambda: job_created(plane, "relist", "fresh", 2),
                       timeout=60, diagnose=controllers.log)  # fmt: skip
            time.sleep(1)  # the doomed PodGroup's Inqueue event has been handled by now
        assert sorted(list_pods(plane, "relist")) == sorted(pod_names("fresh", 2))
        assert set(seen.uids) == pod_names("fresh", 2), "the deleted job's pods were made"
        phases = {name.rsplit("-", 5)[0]: (pg.get("status") or {}).get("phase")
                  for name, pg in pod_groups(plane, "relist").items()}  # fmt: skip
        assert phases == {"doomed": "Inqueue", "fresh": "Inqueue"}
        log = controllers.log(None)
        assert "Job watch: resourceVersion" in log and "expired (410)" in log, log[-3000:]
    finally:
        controllers.kill()


# ------------------------------------------------------------------ webhooks down, fail-closed


def deploy_base_configurations(process: WebhooksProcess, token: str) -> list[dict[str, Any]]:
    """deploy/base's webhook configurations (failurePolicy Fail and all), pointed at the test
    process, under names of the test's own, and matching only objects labelled ``token``."""
    ca_bundle = base64.b64encode(process.ca_file.read_bytes()).decode()
    documents = [doc for doc in yaml.safe_load_all(WEBHOOKS_FILE.read_text()) if doc]
    for document in documents:
        document["metadata"]["name"] += f"-{token}"
        for hook in document["webhooks"]:
            assert hook["failurePolicy"] == "Fail", hook["name"]
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": process.url(path), "caBundle": ca_bundle}
            hook["objectSelector"] = {"matchLabels": {LABEL: token}}
    return documents


@pytest.fixture
def fail_closed_webhooks(
    control_plane: ControlPlane, tmp_path: Path
) -> Iterator[tuple[WebhooksProcess, str]]:
    token = secrets.token_hex(4)
    process = WebhooksProcess(control_plane.kubeconfig, tmp_path)
    process.start()
    registered: list[str] = []
    try:
        process.wait_ready()
        for document in deploy_base_configurations(process, token):
            path = control_plane.resource_path(document["apiVersion"], document["kind"])
            control_plane.request("POST", path, document)
            registered.append(f"{path}/{document['metadata']['name']}")
        wait_until_active(control_plane, token)
        yield process, token
    finally:
        # The configurations first: with nothing behind them they refuse what they match.
        for path in registered:
            with contextlib.suppress(ApiError):
                control_plane.request("DELETE", path)
        process.stop()


def test_webhooks_down_refuse_jobs_and_queues_and_nothing_is_half_created(
    fail_closed_webhooks: tuple[WebhooksProcess, str],
    start_controllers: StartControllers,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
    default_queue: None,
) -> None:
    webhooks, token = fail_closed_webhooks
    make_nodes("cpu", 1)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    controllers = start_controllers("controllers")
    controllers.wait_ready(timeout=30)
    job = job_manifest("gated", scheduler_name, replicas=2)
    job["metadata"]["labels"] = {LABEL: token}
    queue_name = f"gated-{token}"
    jobs_path = f"{JOB_PATH}/namespaces/{namespace}/jobs"

    webhooks.kill()
    with pytest.raises(ApiError) as refused_job:
        control_plane.request("POST", jobs_path, job)
    with pytest.raises(ApiError) as refused_queue:
        control_plane.request("POST", f"{PG_PATH}/queues", queue_manifest(queue_name, token))
    # The API server's own error, naming the webhook it could not call.
    assert refused_job.value.status == 500, refused_job.value
    assert 'failed calling webhook "mutatejob.volcano.sh"' in str(refused_job.value)
    assert 'failed calling webhook "mutatequeue.volcano.sh"' in str(refused_queue.value)
    # Nothing stored, so nothing for the controllers to start on.
    with pytest.raises(ApiError) as missing:
        get_job(control_plane, namespace, "gated")
    assert missing.value.status == 404
    with pytest.raises(ApiError) as missing:
        control_plane.request("GET", f"{PG_PATH}/queues/{queue_name}")
    assert missing.value.status == 404
    assert pod_groups(control_plane, namespace) == {}
    assert list_pods(control_plane, namespace) == {}

    # Back on the same address: the same creates go through, defaulted and reconciled.
    webhooks.start()
    webhooks.wait_ready()
    try:
        created = control_plane.request("POST", jobs_path, job)
        assert created["spec"]["tasks"][0]["maxRetry"] == 3  # the mutating webhook's default
        control_plane.request("POST", f"{PG_PATH}/queues", queue_manifest(queue_name, token))
        wait_until(
            "the job's pods",
            lambda: set(list_pods(control_plane, namespace)) == pod_names("gated", 2),
            timeout=60,
            diagnose=diagnosis(control_plane, namespace, "gated", controllers, scheduler),
        )
        assert len(pod_groups(control_plane, namespace)) == 1
    finally:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"{PG_PATH}/queues/{queue_name}")


# ------------------------------------------------------------------ deleted mid-creation


def test_job_deleted_mid_creation_stops_its_pod_creation(
    start_controllers: StartControllers,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
) -> None:
    """Upstream's job controller does nothing to a deleted Job's pods (``deleteJob`` only drops
    it from its cache): the garbage collector removes them through their owner reference. No
    garbage collector runs here, so what is checked is the controller's own part: once it
    has seen the deletion it sends none of the job's creates still waiting (at most the
    ``POD_CREATES_IN_FLIGHT`` = 64 already sent land), and every pod it did create is owned
    by the deleted Job, for a garbage collector to collect."""
    replicas = 200
    # Slow creates (20 a second): the deletion lands while most pods are still to be made.
    controllers = start_controllers(
        "controllers", (*NO_LEASE, "--kube-api-qps=20", "--kube-api-burst=20")
    )
    controllers.wait_ready(timeout=30)
    created = control_plane.create(
        job_manifest("doomed", scheduler_name, replicas=replicas, minAvailable=1), namespace
    )

    def first_pods() -> bool:
        enqueue_pod_groups(control_plane, namespace)  # the scheduler's part, by hand
        return len(list_pods(control_plane, namespace)) >= 3

    wait_until("the first pods", first_pods, timeout=60,
               diagnose=diagnosis(control_plane, namespace, "doomed", controllers))  # fmt: skip
    control_plane.request("DELETE", f"{JOB_PATH}/namespaces/{namespace}/jobs/doomed")
    at_deletion = len(list_pods(control_plane, namespace))
    counts: list[int] = []

    def settled() -> bool:
        # The count has not moved over the last 3 s of polls (the creates sent have landed).
        counts.append(len(list_pods(control_plane, namespace)))
        time.sleep(0.4)
        return len(counts) > 8 and len(set(counts[-8:])) == 1

    wait_until("the pod count to settle", settled, timeout=120, diagnose=controllers.log)
    pods = list_pods(control_plane, namespace)
    assert len(pods) < replicas, f"all {replicas} pods created after the job was deleted"
    assert controllers.requests("pods", "POST", "201") == len(pods)
    for pod in pods.values():
        (owner,) = pod["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"]) == (
            "Job", "doomed", created["metadata"]["uid"],
        ), pod["metadata"]["name"]  # fmt: skip
        assert owner["controller"] is True
    assert controllers.alive
    print(f"pods at the deletion: {at_deletion}, in the end: {len(pods)} of {replicas}")
