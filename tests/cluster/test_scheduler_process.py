"""`volcano-py scheduler` as a process against the real control plane: readiness only after
every watch listed, the endpoints, the configuration reload. The helpers here (the scheduler
subprocess, its RBAC, workload builders) serve the other test_scheduler_* modules too.

The scheduler always runs as the control plane's scheduler user under the rules of
``deploy/base/rbac.yaml`` (bound to that user), so a missing RBAC rule fails these tests.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

import e2e.scheduler_process
from e2e.controlplane import REPO_ROOT, SCHEDULER_USER, ApiError, ControlPlane

pytestmark = pytest.mark.cluster

RBAC_FILE = REPO_ROOT / "deploy" / "base" / "rbac.yaml"
LEASE_NAMESPACE = "volcano-system"
GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
PG_PATH = "/apis/scheduling.volcano.sh/v1beta1"
ROOT_QUEUE = "root"
DEFAULT_QUEUE = "default"


# ------------------------------------------------------------------------------ RBAC


def grant_scheduler_rbac(plane: ControlPlane) -> None:
    """deploy/base's ClusterRole and leader-election Role, bound to the scheduler *user* the
    control plane's scheduler kubeconfig authenticates as (instead of the ServiceAccount)."""
    with contextlib.suppress(ApiError):
        plane.create_namespace(LEASE_NAMESPACE)
    subject = {"kind": "User", "name": SCHEDULER_USER, "apiGroup": "rbac.authorization.k8s.io"}
    for document in yaml.safe_load_all(RBAC_FILE.read_text()):
        if not document:
            continue
        if document["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            document = {**document, "subjects": [subject]}
        kind = document["kind"]
        namespace = document["metadata"].get("namespace")
        path = plane.resource_path(document["apiVersion"], kind, namespace)
        try:
            plane.request("POST", path, document)
        except ApiError as error:
            if error.status != 409:
                raise
            name = document["metadata"]["name"]
            current = plane.request("GET", f"{path}/{name}")
            document["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            plane.request("PUT", f"{path}/{name}", document)


@pytest.fixture(scope="session")
def scheduler_rbac(control_plane: ControlPlane) -> ControlPlane:
    grant_scheduler_rbac(control_plane)
    return control_plane


# ------------------------------------------------------------------------------ the process


class SchedulerProcess(e2e.scheduler_process.SchedulerProcess):
    """`e2e.scheduler_process.SchedulerProcess` as the tests run it: as the control plane's
    scheduler user (or ``kubeconfig``), under its own scheduler name, with short cycles."""

    def __init__(
        self,
        plane: ControlPlane,
        workdir: Path,
        *,
        scheduler_name: str,
        conf: str | None = None,
        extra: Sequence[str] = (),
        kubeconfig: Path | None = None,
        label: str = "scheduler",
        period: str = "200ms",
    ) -> None:
        flags = [f"--scheduler-name={scheduler_name}", f"--schedule-period={period}", "-v=3"]
        super().__init__(
            kubeconfig or plane.scheduler_kubeconfig,
            workdir,
            [*flags, *extra],
            conf=conf,
            label=label,
        )
        self.scheduler_name = scheduler_name
        self.plane = plane

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Ready, and the queues it made (root, default) Open, as a queue controller would
        set them: most tests here run the scheduler alone, and its proportion plugin, like
        Volcano's, allocates nothing in a queue without a state."""
        super().wait_ready(timeout)
        self.plane.open_queues(ROOT_QUEUE, DEFAULT_QUEUE)


@pytest.fixture
def scheduler_name() -> str:
    """A scheduler name of the test's own: no other test's pods are seen as ours."""
    return f"vk-{secrets.token_hex(3)}"


@pytest.fixture
def start_scheduler(
    scheduler_rbac: ControlPlane, tmp_path: Path, scheduler_name: str
) -> Iterator[Callable[..., SchedulerProcess]]:
    started: list[SchedulerProcess] = []

    def start(**kwargs: Any) -> SchedulerProcess:
        kwargs.setdefault("scheduler_name", scheduler_name)
        process = SchedulerProcess(scheduler_rbac, tmp_path, **kwargs).start()
        started.append(process)
        return process

    yield start
    for process in started:
        with contextlib.suppress(Exception):
            process.kill()


# ------------------------------------------------------------------------------ workloads


def pod_manifest(
    name: str,
    scheduler_name: str,
    *,
    group: str | None = None,
    cpu: str = "1",
    memory: str = "1Gi",
    extra_annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    annotations = dict(extra_annotations or {})
    if group:
        annotations[GROUP_ANNOTATION] = group
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "schedulerName": scheduler_name,
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "main",
                "image": "busybox",
                "resources": {"requests": {"cpu": cpu, "memory": memory}},
            }],
        },
    }  # fmt: skip


def pod_group_manifest(name: str, min_member: int, queue: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name},
        "spec": {"minMember": min_member, "queue": queue},
    }


def queue_manifest(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": True, **spec},
    }


def create_gang(
    plane: ControlPlane,
    namespace: str,
    name: str,
    size: int,
    scheduler_name: str,
    *,
    min_member: int | None = None,
    queue: str = "default",
    cpu: str = "1",
    pods: int | None = None,
) -> list[str]:
    """A PodGroup and ``pods`` (default ``size``) of its pods; returns the pod names."""
    plane.create(
        pod_group_manifest(name, size if min_member is None else min_member, queue), namespace
    )
    names = [f"{name}-{index}" for index in range(size if pods is None else pods)]
    for pod in names:
        plane.create(pod_manifest(pod, scheduler_name, group=name, cpu=cpu), namespace)
    return names


def list_pods(plane: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    items = plane.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]
    return {pod["metadata"]["name"]: pod for pod in items}


def bound(pods: Mapping[str, Mapping[str, Any]], names: Sequence[str] | None = None) -> list[str]:
    chosen = names if names is not None else list(pods)
    return [name for name in chosen if name in pods and pods[name]["spec"].get("nodeName")]


def get_pod_group(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    result: dict[str, Any] = plane.request(
        "GET", f"{PG_PATH}/namespaces/{namespace}/podgroups/{name}"
    )
    return result


def wait_until(
    what: str,
    check: Callable[[], bool],
    timeout: float = 30.0,
    diagnose: Callable[[], str] = lambda: "",
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{diagnose()}")


# ------------------------------------------------------------------------------ tests


def test_ready_only_after_every_list_then_serves_metrics_and_queues(
    start_scheduler: Callable[..., SchedulerProcess], control_plane: ControlPlane
) -> None:
    scheduler = start_scheduler()
    scheduler.wait_ready()
    assert scheduler.get("/healthz") == (200, "ok\n")
    # Root and default queues exist (created unless present), root not reclaimable.
    root = control_plane.request("GET", f"{PG_PATH}/queues/root")
    assert root["spec"]["reclaimable"] is False
    assert control_plane.request("GET", f"{PG_PATH}/queues/default")["metadata"]["name"]
    # Cycles run and are timed into Volcano's metrics.
    scheduler.wait_for(
        "a timed cycle",
        lambda: scheduler.metric("volcano_e2e_scheduling_latency_milliseconds_count") >= 2,
    )
    assert (
        scheduler.metric("volcano_action_scheduling_latency_milliseconds_count", action="allocate")
        >= 2
    )
    assert (
        scheduler.metric(
            "volcano_plugin_scheduling_latency_milliseconds_count",
            plugin="gang",
            OnSession="OnSessionOpen",
        )
        >= 2
    )
    # Every kind listed and watched, all under deploy/base's least-privilege rules.
    for resource in (
        "pods",
        "nodes",
        "queues",
        "podgroups",
        "hypernodes",
        "priorityclasses",
        "poddisruptionbudgets",
        "resourcequotas",
    ):
        assert scheduler.requests(resource, "LIST", "200") >= 1, resource
        assert scheduler.requests(resource, "WATCH", "200") >= 1, resource
    assert scheduler.forbidden() == []
    assert scheduler.terminate() == 0


def test_no_session_before_the_cache_synced(
    start_scheduler: Callable[..., SchedulerProcess], control_plane: ControlPlane, tmp_path: Path
) -> None:
    """Credentials the API server rejects: nothing lists, so nothing is scheduled."""
    config = yaml.safe_load(control_plane.scheduler_kubeconfig.read_text())
    config["users"][0]["user"]["token"] = "not-a-valid-token"
    kubeconfig = tmp_path / "rejected.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    scheduler = start_scheduler(kubeconfig=kubeconfig)
    scheduler.wait_for("/healthz", lambda: scheduler.get("/healthz")[0] == 200)
    time.sleep(1.5)
    status, text = scheduler.get("/readyz")
    assert status == 503 and "cache not synced" in text, text
    assert scheduler.metric("volcano_e2e_scheduling_latency_milliseconds_count") == 0
    assert scheduler.requests("pods", "LIST", "401") >= 1
    assert scheduler.terminate() == 0


def test_config_reload_keeps_last_good(
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 1)
    good = (
        'actions: "enqueue, allocate, backfill"\ntiers:\n- plugins:\n  - name: gang\n'
        "  - name: predicates\n  - name: proportion\n"
    )
    scheduler = start_scheduler(conf=good)
    scheduler.wait_ready()
    assert scheduler.conf_path is not None
    scheduler.conf_path.write_text('actions: "enqueue, allocat"\n')  # a typo: unknown action
    scheduler.wait_for(
        "the reload failure metric",
        lambda: scheduler.metric("volcano_scheduler_config_reload_failures_total") == 1,
    )
    # Still scheduling with the last good configuration.
    names = create_gang(control_plane, namespace, "after-bad-conf", 2, scheduler_name)
    wait_until(
        "pods bound",
        lambda: len(bound(list_pods(control_plane, namespace), names)) == 2,
        diagnose=scheduler.log,
    )
    assert "keeping the last good one" in scheduler.log(None)
    assert "failed to find Action 'allocat'" in scheduler.log(None)
    # Fixed: reloaded (and the same bad content is reported once, not every cycle).
    scheduler.conf_path.write_text(good.replace("backfill", "backfill, reclaim"))
    scheduler.wait_for("the reload", lambda: "reclaim" in scheduler.log(None).split("reloaded")[-1])
    assert scheduler.metric("volcano_scheduler_config_reload_failures_total") == 1
    assert scheduler.terminate() == 0
