"""The live scheduler killed and restarted, and two replicas behind a Lease (the reliability
anchors: kube-scheduler's DaemonRestart e2e, Volcano's ha_test, client-go's leaderelection)."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_scheduler_process import (
    LEASE_NAMESPACE,
    SchedulerProcess,
    bound,
    create_gang,
    grant_scheduler_rbac,
    list_pods,
    pod_group_manifest,
    pod_manifest,
    scheduler_name,
    scheduler_rbac,
    start_scheduler,
    wait_until,
)

from e2e.controlplane import ApiError, ControlPlane, bin_dir_from_env

pytestmark = pytest.mark.cluster

__all__ = ["scheduler_name", "scheduler_rbac", "start_scheduler"]

MakeNodes = Callable[..., list[str]]
StartScheduler = Callable[..., SchedulerProcess]
LEASE_PATH = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/vc-scheduler"


class BindingWatch:
    """Polls the namespace's pods and remembers every node each pod was ever seen on."""

    def __init__(self, plane: ControlPlane, namespace: str) -> None:
        self.plane = plane
        self.namespace = namespace
        self.nodes: dict[str, set[str]] = {}
        self.uids: dict[str, set[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(ApiError, OSError):
                for name, pod in list_pods(self.plane, self.namespace).items():
                    self.uids.setdefault(name, set()).add(pod["metadata"]["uid"])
                    node = pod["spec"].get("nodeName")
                    if node:
                        self.nodes.setdefault(name, set()).add(node)

    def __enter__(self) -> BindingWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.fixture
def fresh_lease(scheduler_rbac: ControlPlane) -> Iterator[None]:
    with contextlib.suppress(ApiError):
        scheduler_rbac.request("DELETE", LEASE_PATH)
    yield
    with contextlib.suppress(ApiError):
        scheduler_rbac.request("DELETE", LEASE_PATH)


def test_killed_mid_run_and_restarted_binds_every_pod_once(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 4)
    gangs = [f"job-{index}" for index in range(12)]
    with BindingWatch(control_plane, namespace) as watch:
        first = start_scheduler(label="first")
        first.wait_ready()
        members: dict[str, list[str]] = {}
        for index, gang in enumerate(gangs):
            members[gang] = create_gang(control_plane, namespace, gang, 8, scheduler_name)
            if index == 3:
                wait_until("the first binds", lambda: bool(watch.nodes), diagnose=first.log)
                first.kill()  # SIGKILL mid-run: binds may be queued or in flight
        assert first.returncode == -9
        time.sleep(0.5)  # anything the dead process had sent has landed by now
        before = len(bound(list_pods(control_plane, namespace)))
        assert 0 < before < 96
        second = start_scheduler(label="second")
        second.wait_ready()
        wait_until(
            "every pod bound",
            lambda: len(bound(list_pods(control_plane, namespace))) == 96,
            timeout=60,
            diagnose=second.log,
        )
        time.sleep(0.3)
    pods = list_pods(control_plane, namespace)
    # Each pod: one UID, one node, ever.
    assert all(len(uids) == 1 for uids in watch.uids.values())
    assert {name: len(nodes) for name, nodes in watch.nodes.items() if len(nodes) != 1} == {}
    # The restarted scheduler's cache was rebuilt from the LIST: it bound exactly the pods
    # that were left, and never tried a pod that was already bound.
    assert second.requests("pods/binding", "POST", "201") == 96 - before
    assert second.requests("pods/binding", "POST", "409") == 0
    for gang, names in members.items():
        assert len(bound(pods, names)) == 8, gang
    assert second.terminate() == 0


def _lease_spec(plane: ControlPlane) -> dict[str, Any]:
    try:
        spec: dict[str, Any] = plane.request("GET", LEASE_PATH).get("spec", {})
    except ApiError:
        return {}
    return spec


LEASE_FLAGS = (
    "--leader-elect=true",
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
)


def test_two_replicas_only_the_leader_binds_and_the_standby_takes_over(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    scheduler_name: str,
    fresh_lease: None,
) -> None:
    make_nodes("cpu", 2)
    leader = start_scheduler(label="replica-a", extra=LEASE_FLAGS)
    leader.wait_ready()
    holder = _lease_spec(control_plane)["holderIdentity"]
    standby = start_scheduler(label="replica-b", extra=LEASE_FLAGS)
    standby.wait_for("/healthz", lambda: standby.get("/healthz")[0] == 200)
    standby.wait_for("its cache synced", lambda: "not the leader" in standby.get("/readyz")[1])
    first = create_gang(control_plane, namespace, "before", 4, scheduler_name)
    wait_until(
        "the leader binds",
        lambda: len(bound(list_pods(control_plane, namespace), first)) == 4,
        diagnose=leader.log,
    )
    time.sleep(0.5)
    assert leader.requests("pods/binding", "POST", "201") == 4
    assert standby.requests("pods/binding", "POST") == 0
    assert standby.metric("volcano_e2e_scheduling_latency_milliseconds_count") == 0
    assert standby.get("/readyz")[0] == 503

    leader.kill()
    killed_at = time.monotonic()
    second = create_gang(control_plane, namespace, "after", 4, scheduler_name)
    standby.wait_ready(timeout=20)
    took_over = time.monotonic() - killed_at
    wait_until(
        "the new leader binds",
        lambda: len(bound(list_pods(control_plane, namespace), second)) == 4,
        diagnose=standby.log,
    )
    assert took_over < 3 + 2, took_over  # lease duration + a few retries
    spec = _lease_spec(control_plane)
    assert spec["holderIdentity"] != holder
    assert spec["leaseTransitions"] >= 1
    assert standby.requests("pods/binding", "POST", "201") == 4

    # A clean stop hands the Lease back at once (empty holder).
    assert standby.terminate() == 0
    assert _lease_spec(control_plane)["holderIdentity"] == ""


def test_losing_the_lease_exits_non_zero(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    fresh_lease: None,
) -> None:
    replica = start_scheduler(label="replica", extra=LEASE_FLAGS)
    replica.wait_ready()
    # Taken over as another candidate would: read, write, and on a 409 (the holder renewed in
    # between) read again.
    for _attempt in range(20):
        lease = control_plane.request("GET", LEASE_PATH)
        lease["spec"]["holderIdentity"] = "somebody-else"
        lease["spec"]["leaseDurationSeconds"] = 60
        try:
            control_plane.request("PUT", LEASE_PATH, lease)
            break
        except ApiError as error:
            if error.status != 409:
                raise
    deadline = time.monotonic() + 10
    while replica.alive and time.monotonic() < deadline:
        time.sleep(0.1)
    assert replica.returncode == 1, replica.log()
    assert "leader election lost" in replica.log(None)


def test_api_server_restart_watches_reconnect(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    scheduler_name: str,
) -> None:
    """The API server goes away under the scheduler and comes back: every watch reconnects
    (resuming, or relisting on 410) and scheduling carries on in the same process."""
    make_nodes("cpu", 2)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    watches_before = scheduler.requests("pods", "WATCH", "200")
    control_plane.restart("kube-apiserver")
    names = create_gang(control_plane, namespace, "after-restart", 4, scheduler_name)
    wait_until("the gang bound after the restart",
               lambda: len(bound(list_pods(control_plane, namespace), names)) == 4,
               timeout=45, diagnose=scheduler.log)  # fmt: skip
    assert scheduler.alive
    assert scheduler.requests("pods", "WATCH", "200") > watches_before
    assert scheduler.get("/readyz")[0] == 200
    assert scheduler.terminate() == 0


@pytest.fixture
def compacting_plane(tmp_path: Path) -> Iterator[ControlPlane]:
    """A control plane of the test's own whose watches fall off history quickly: no watch
    cache, etcd compacted every 2 s (control-plane.md §3c's knobs for the 410 path)."""
    plane = ControlPlane(
        bin_dir_from_env(),
        workdir=tmp_path / "compacting",
        apiserver_args=["--watch-cache=false", "--etcd-compaction-interval=2s"],
    )
    with plane:
        grant_scheduler_rbac(plane)
        yield plane


def test_a_410_relists_and_forgets_what_was_deleted_meanwhile(
    compacting_plane: ControlPlane, tmp_path: Path, scheduler_name: str
) -> None:
    """The scheduler is frozen while a node is deleted and history is compacted away; its
    watches come back to 410 Gone, it lists again and must not bind onto the deleted node."""
    plane = compacting_plane
    gone, small = plane.create_pool_nodes("cpu", 2, prefix="relist")
    plane.request("PATCH", f"/api/v1/nodes/{small}/status",
                  {"status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "110"}}},
                  content_type="application/merge-patch+json")  # fmt: skip
    plane.create_namespace("relist")
    scheduler = SchedulerProcess(plane, tmp_path, scheduler_name=scheduler_name).start()
    try:
        scheduler.wait_ready()
        node_lists = scheduler.requests("nodes", "LIST", "200")
        assert scheduler.process is not None
        scheduler.process.send_signal(signal.SIGSTOP)
        # Its watch connections are cut while it is frozen (nothing more reaches its sockets),
        # then the node goes and the history of it is compacted away.
        plane.restart("kube-apiserver")
        plane.delete_node(gone)
        for index in range(20):
            plane.create({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": f"churn-{index}"}}, "relist")  # fmt: skip
        time.sleep(5)  # two compactions
        scheduler.process.send_signal(signal.SIGCONT)
        scheduler.wait_for("a relist of nodes",
                           lambda: scheduler.requests("nodes", "LIST", "200") > node_lists,
                           timeout=30)  # fmt: skip
        cycles = scheduler.metric("volcano_e2e_scheduling_latency_milliseconds_count")
        plane.create(pod_group_manifest("needs-4-cpu", 1), "relist")
        plane.create(pod_manifest("needs-4-cpu", scheduler_name, group="needs-4-cpu", cpu="4"),
                     "relist")  # fmt: skip
        scheduler.wait_for(
            "cycles over the new pod",
            lambda: (
                scheduler.metric("volcano_e2e_scheduling_latency_milliseconds_count") > cycles + 5
            ),
        )
        time.sleep(1)
        assert not list_pods(plane, "relist")["needs-4-cpu"]["spec"].get("nodeName")
        assert scheduler.requests("pods/binding", "POST") == 0
        assert "relist found 1 deleted while the watch was down" in scheduler.log(None)
    finally:
        scheduler.kill()
