"""The live controllers' drivers against an in-memory API: watch events become the
simulator's requests, and ``JobChanges``/``QueueChanges`` become the right writes, idempotent
and retried on conflicts."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from volcano_py.controllers.job import JobChanges, JobRequest
from volcano_py.controllers.queue import QueueRequest
from volcano_py.operator.controllers import jobs as jobs_module
from volcano_py.operator.controllers.commands import CommandConsumer
from volcano_py.operator.controllers.jobs import JobController
from volcano_py.operator.controllers.podgroups import PodGroupController
from volcano_py.operator.controllers.queues import QueueController
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.controllers.workqueue import RetryLater
from volcano_py.runtime.apiclient import ApiError

NS = "ns"
JOBS = f"/apis/batch.volcano.sh/v1alpha1/namespaces/{NS}/jobs"
PODS = f"/api/v1/namespaces/{NS}/pods"
PGS = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/{NS}/podgroups"
QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"


class MemoryApi:
    """Objects by path; POST/PUT/PATCH/DELETE/GET as the API server answers them (409 on an
    existing name or a stale resourceVersion, 404 on a missing one)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self.posted: list[tuple[str, str]] = []
        self.version = 100
        self.fail: dict[tuple[str, str], ApiError] = {}

    def _stamp(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.version)
        obj["metadata"].setdefault("uid", f"uid-{self.version}")
        return copy.deepcopy(obj)

    async def request(self, method: str, path: str, body: Any = None, **_: Any) -> Any:
        self.calls.append((method, path))
        if (method, path) in self.fail:
            raise self.fail.pop((method, path))
        if method == "POST":
            self.posted.append((path, body["metadata"]["name"]))
            key = f"{path}/{body['metadata']['name']}"
            if key in self.objects:
                raise ApiError(method, path, 409, "AlreadyExists")
            self.objects[key] = copy.deepcopy(body)
            return self._stamp(self.objects[key])
        key = path.removesuffix("/status")
        if key not in self.objects:
            raise ApiError(method, path, 404, "NotFound")
        current = self.objects[key]
        if method == "GET":
            return copy.deepcopy(current)
        if method == "DELETE":
            del self.objects[key]
            return {}
        if method == "PUT":
            if body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
                raise ApiError(method, path, 409, "Conflict")
            self.objects[key] = copy.deepcopy(body)
            return self._stamp(self.objects[key])
        assert method == "PATCH"
        _merge(current, body)
        return self._stamp(current)

    def created(self, prefix: str) -> list[str]:
        return sorted(name for path, name in self.posted if path == prefix)


def _merge(target: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = copy.deepcopy(value)


class Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[str, ...]] = []

    def record(self, *event: str) -> None:
        self.recorded.append(event)


def job(name: str = "job1", replicas: int = 2, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NS, "uid": f"{name}-uid", "resourceVersion": "1"},
        "spec": {
            "minAvailable": replicas,
            "schedulerName": "volcano",
            "queue": "default",
            "tasks": [{
                "name": "worker",
                "replicas": replicas,
                "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}},
            }],
            **spec,
        },
    }  # fmt: skip


def queue(name: str, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "resourceVersion": "1"},
        "spec": {"weight": 1},
        **({"status": status} if status else {}),
    }


class Harness:
    def __init__(self) -> None:
        self.api = MemoryApi()
        self.store = ObjectStore()
        self.events = Events()
        # A fixed clock: runs compared object for object must not differ by a second boundary.
        self.jobs = JobController(
            self.api, self.store, self.events, clock=lambda: "2026-01-01T00:00:00Z"
        )
        self.queues = QueueController(self.api, self.store, self.events)
        self.pod_groups = PodGroupController(self.api, self.store, ["volcano"])
        self.commands = CommandConsumer(self.api, self.store, self.jobs, self.queues)
        self.store.apply("Queue", "ADDED", queue("default", state="Open"), namespaced=False)
        self.store.apply("Queue", "ADDED", queue("root", state="Open"), namespaced=False)

    def add_job(self, obj: dict[str, Any]) -> None:
        self.api.objects[f"{JOBS}/{obj['metadata']['name']}"] = copy.deepcopy(obj)
        _applied, old = self.store.apply("Job", "ADDED", obj)
        self.jobs.on_job("ADDED", old, obj)

    def watch(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        """What the watch delivers after a write, routed as ``LiveControllers.on_event``."""
        applied, old = self.store.apply(kind, event_type, obj, kind != "Queue")
        if not applied:
            return
        if kind == "Pod":
            self.jobs.on_pod(event_type, old, obj)
            self.pod_groups.on_pod(event_type, obj)
        elif kind == "PodGroup":
            self.jobs.on_pod_group(event_type, old, obj)
            self.queues.on_pod_group(obj)
        elif kind == "Job":
            self.jobs.on_job(event_type, old, obj)
        elif kind == "Queue":
            self.queues.on_queue(event_type, old, obj)

    def echo(self, kind: str, prefix: str) -> None:
        """Deliver every object under ``prefix`` as the watch would."""
        for path, obj in list(self.api.objects.items()):
            if path.startswith(prefix + "/"):
                self.watch(kind, "MODIFIED", copy.deepcopy(obj))

    async def drain(self) -> None:
        tasks = [
            *self.jobs.queue.start(),
            *self.queues.queue.start(),
            *self.pod_groups.queue.start(),
            *self.commands.queue.start(),
        ]
        # Until every queue is empty (a loaded machine may need seconds; a bug, the limit).
        for _ in range(2000):
            await asyncio.sleep(0.005)
            if not any(len(q) for q in self.queues_()):
                break
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def queues_(self) -> list[Any]:
        return [self.jobs.queue, self.queues.queue, self.pod_groups.queue, self.commands.queue]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_job_gets_pod_group_then_pods_once_inqueue() -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.add_job(job())
        await h.drain()
        assert h.api.created(PGS) == ["job1-job1-uid"]
        assert h.api.created(PODS) == []  # pods wait for the PodGroup to be Inqueue
        pg_path = f"{PGS}/job1-job1-uid"
        assert h.api.objects[pg_path]["status"]["phase"] == "Pending"
        assert h.api.objects[f"{JOBS}/job1"]["status"]["state"]["phase"] == "Pending"
        h.api.objects[pg_path]["status"]["phase"] = "Inqueue"
        h.api.objects[pg_path]["metadata"]["resourceVersion"] = "999"
        h.echo("PodGroup", PGS)
        await h.drain()
        assert f"{PODS}/job1-worker-0" in h.api.objects
        assert f"{PODS}/job1-worker-1" in h.api.objects
        return h

    h = run(scenario())
    pod = h.api.objects[f"{PODS}/job1-worker-0"]
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "job1-job1-uid"
    assert pod["spec"]["schedulerName"] == "volcano"


def test_creating_an_existing_pod_is_fine_and_a_status_conflict_is_retried() -> None:
    async def scenario() -> None:
        h = Harness()
        h.store.apply("Job", "ADDED", job())
        h.api.objects[f"{JOBS}/job1"] = job()
        h.api.objects[f"{PODS}/job1-worker-0"] = {"metadata": {"name": "job1-worker-0"}}
        changes = JobChanges(
            create_pods=[{"metadata": {"name": "job1-worker-0", "namespace": NS}}],
            status={"state": {"phase": "Pending"}},
        )
        h.api.fail[("PUT", f"{JOBS}/job1/status")] = ApiError("PUT", "x", 409, "Conflict")
        with pytest.raises(ApiError) as error:
            await h.jobs.apply("ns/job1", job(), changes)
        assert error.value.conflict
        # Through the work queue the same conflict becomes a retry of the request.
        h.api.fail[("PUT", f"{JOBS}/job1/status")] = ApiError("PUT", "x", 409, "Conflict")
        with pytest.raises(RetryLater) as retry:
            await h.jobs._handle("ns/job1", [JobRequest(event="OutOfSync")])
        assert retry.value.requests is not None and len(retry.value.requests) == 1

    run(scenario())


def test_pod_events_become_the_simulators_requests() -> None:
    h = Harness()
    h.store.apply("Job", "ADDED", job())
    pod = {
        "metadata": {
            "name": "job1-worker-0",
            "namespace": NS,
            "uid": "p0",
            "resourceVersion": "5",
            "annotations": {
                "volcano.sh/job-name": "job1",
                "volcano.sh/job-version": "0",
                "volcano.sh/task-spec": "worker",
            },
            "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
                                 "name": "job1", "uid": "job1-uid", "controller": True}],
        },
        "spec": {"schedulerName": "volcano"},
        "status": {"phase": "Pending"},
    }  # fmt: skip
    h.watch("Pod", "ADDED", pod)
    running = copy.deepcopy(pod)
    running["metadata"]["resourceVersion"] = "6"
    running["status"]["phase"] = "Running"
    h.watch("Pod", "MODIFIED", running)
    h.watch("Pod", "DELETED", running)
    events = [r.event for r in h.jobs.queue.pending["ns/job1"]]
    assert events == ["PodPending", "PodRunning", "PodEvicted"]
    # The job controller gives its pods the group annotation; this one lacks it, so the
    # PodGroup controller would take it as a plain pod.
    assert "ns/job1-worker-0" in h.pod_groups.queue.pending


def test_command_is_deleted_before_its_action_runs_and_only_once() -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.store.apply("Job", "ADDED", job())
        command = {
            "metadata": {"name": "abort", "namespace": NS, "resourceVersion": "3"},
            "action": "AbortJob",
            "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "job1"},
        }
        path = f"/apis/bus.volcano.sh/v1alpha1/namespaces/{NS}/commands/abort"
        h.api.objects[path] = copy.deepcopy(command)
        h.store.apply("Command", "ADDED", command)
        h.commands.on_command("ADDED", "ns/abort")
        task = h.commands.queue.start()
        await asyncio.sleep(0.05)
        assert path not in h.api.objects
        assert [r.action for r in h.jobs.queue.pending["ns/job1"]] == ["AbortJob"]
        # Seen again (a relist) but gone from the server: not run twice.
        h.commands.on_command("MODIFIED", "ns/abort")
        await asyncio.sleep(0.05)
        assert len(h.jobs.queue.pending["ns/job1"]) == 1
        for t in task:
            t.cancel()
        return h

    run(scenario())


def test_plain_pod_gets_a_pod_group_and_the_annotation() -> None:
    async def scenario() -> Harness:
        h = Harness()
        pod = {
            "metadata": {"name": "p", "namespace": NS, "uid": "pod-uid", "resourceVersion": "2"},
            "spec": {"schedulerName": "volcano", "containers": []},
        }
        h.api.objects[f"{PODS}/p"] = copy.deepcopy(pod)
        h.watch("Pod", "ADDED", pod)
        foreign = {"metadata": {"name": "f", "namespace": NS}, "spec": {"schedulerName": "x"}}
        h.watch("Pod", "ADDED", foreign)
        await h.drain()
        return h

    h = run(scenario())
    assert h.api.created(PGS) == ["podgroup-pod-uid"]
    annotations = h.api.objects[f"{PODS}/p"]["metadata"]["annotations"]
    assert annotations == {"scheduling.k8s.io/group-name": "podgroup-pod-uid"}


def test_queue_gets_state_and_parent_then_closes_when_its_groups_are_gone() -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.api.objects[f"{QUEUES}/q"] = queue("q")
        pod_group = {
            "metadata": {"name": "pg", "namespace": NS, "resourceVersion": "7"},
            "spec": {"queue": "q"},
            "status": {"phase": "Pending"},
        }
        h.store.apply("PodGroup", "ADDED", pod_group)
        h.watch("Queue", "ADDED", queue("q"))
        await h.drain()
        stored = h.api.objects[f"{QUEUES}/q"]
        assert stored["spec"]["parent"] == "root"
        assert stored["status"]["state"] == "Open"
        h.queues.request(QueueRequest("q", "CloseQueue"))
        await h.drain()
        assert h.api.objects[f"{QUEUES}/q"]["status"]["state"] == "Closing"
        h.watch("PodGroup", "DELETED", pod_group)
        await h.drain()
        assert h.api.objects[f"{QUEUES}/q"]["status"]["state"] == "Closed"
        return h

    run(scenario())


def test_a_job_admission_would_refuse_is_reported_once_and_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.add_job(job(minAvailable=5))
        await h.drain()
        h.jobs.request("ns/job1", JobRequest(event="OutOfSync"))
        await h.drain()
        return h

    h = run(scenario())
    assert h.api.posted == []
    assert [e[4] for e in h.events.recorded] == ["InvalidJob"]
    assert "spec.minAvailable: 5 should not be greater than total replicas" in caplog.text
    assert caplog.text.count("refused") == 1


def _run_a_40_pod_job_to_running() -> tuple[Harness, int]:
    """A 40-replica job: PodGroup admitted, pods created, then every pod starts (40 pod
    events at once). Returns the harness and how many syncs the starts cost."""

    async def scenario() -> tuple[Harness, int]:
        h = Harness()
        h.add_job(job(replicas=40))
        await h.drain()
        pg_path = f"{PGS}/job1-job1-uid"
        h.api.objects[pg_path]["status"]["phase"] = "Inqueue"
        h.api.objects[pg_path]["metadata"]["resourceVersion"] = "999"
        h.echo("PodGroup", PGS)
        await h.drain()
        h.echo("Pod", PODS)
        await h.drain()
        h.echo("Job", JOBS)
        await h.drain()
        for path, pod in h.api.objects.items():
            if path.startswith(PODS + "/"):
                pod["status"] = {"phase": "Running"}
                pod["metadata"]["resourceVersion"] = "1000"
        before = h.jobs.syncs
        h.echo("Pod", PODS)
        await h.drain()
        return h, h.jobs.syncs - before

    return run(scenario())


def test_a_burst_of_pod_events_costs_one_sync_not_one_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a sync that wrote nothing, plain SyncJob requests repeat its events instead of
    syncing again (each sync reads every pod of the job): the same writes, fewer syncs."""
    fast, fast_syncs = _run_a_40_pod_job_to_running()
    status = fast.api.objects[f"{JOBS}/job1"]["status"]
    assert status["running"] == 40
    assert fast_syncs <= 3

    monkeypatch.setattr(jobs_module, "sync_depends_only_on_state", lambda job, request: False)
    slow, slow_syncs = _run_a_40_pod_job_to_running()
    assert slow_syncs >= 40
    assert fast.api.objects == slow.api.objects
    assert fast.events.recorded == slow.events.recorded


def test_a_status_the_job_controller_writes_is_told_to_the_other_job_followers() -> None:
    """The controller applies its own status write to the store, so the watch event of that
    version is no news there: what else follows Jobs (CronJob, JobFlow, TTL) hears of it
    through ``on_status_written``, with the version it replaced."""
    told: list[tuple[str, str]] = []

    async def scenario() -> None:
        h = Harness()
        h.jobs.on_status_written = lambda old, new: told.append(
            (
                ((old or {}).get("status") or {}).get("state", {}).get("phase", ""),
                new["status"]["state"]["phase"],
            )
        )
        h.add_job(job())
        await h.drain()

    run(scenario())
    assert told == [("", "Pending")]


def test_a_job_deleted_while_its_pods_are_created_gets_none_of_the_rest(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Upstream's ``deleteJob`` only forgets the Job (the garbage collector removes its pods);
    here the creates of that sync not yet sent are dropped too, and a Job made again under
    the same name (another UID) does not get the old one's pods."""
    monkeypatch.setattr(jobs_module, "POD_CREATES_IN_FLIGHT", 1)

    def template(index: int, uid: str = "job1-uid") -> dict[str, Any]:
        owner = {"kind": "Job", "name": "job1", "uid": uid, "controller": True}
        return {"metadata": {"name": f"job1-worker-{index}", "namespace": NS,
                             "ownerReferences": [owner]}}  # fmt: skip

    async def scenario() -> tuple[Harness, Harness]:
        deleted = Harness()
        deleted.store.apply("Job", "ADDED", job())
        real_request = deleted.api.request

        async def request(method: str, path: str, body: Any = None, **kw: Any) -> Any:
            answer = await real_request(method, path, body, **kw)
            if method == "POST" and path == PODS:  # the watch delivers the Job's deletion
                deleted.watch("Job", "DELETED", job())
            return answer

        monkeypatch.setattr(deleted.api, "request", request)
        await deleted.jobs.apply("ns/job1", job(), JobChanges(
            create_pods=[template(index) for index in range(5)]))  # fmt: skip
        renamed = Harness()
        renamed.store.apply("Job", "ADDED", {**job(), "metadata": {
            **job()["metadata"], "uid": "another-uid"}})  # fmt: skip
        await renamed.jobs.apply("ns/job1", job(), JobChanges(create_pods=[template(0)]))
        return deleted, renamed

    deleted, renamed = run(scenario())
    assert deleted.api.created(PODS) == ["job1-worker-0"]
    assert renamed.api.created(PODS) == []


def test_a_forbidden_pod_create_is_reported_and_retried() -> None:
    """Right after an API server restart its RBAC caches are empty and every create is 403
    for a moment (seen in tests/cluster/test_controllers_faults.py): upstream requeues the
    failed sync, so the pod is made once the server allows it."""

    async def scenario() -> None:
        h = Harness()
        h.store.apply("Job", "ADDED", job())
        h.api.objects[f"{JOBS}/job1"] = job()
        h.api.fail[("POST", PODS)] = ApiError("POST", PODS, 403, "pods is forbidden")
        changes = JobChanges(create_pods=[{"metadata": {"name": "job1-worker-0", "namespace": NS}}])
        with pytest.raises(ApiError) as error:
            await h.jobs.apply("ns/job1", job(), changes)
        assert error.value.status == 403
        assert h.events.recorded[-1][3:5] == ("Warning", "FailedCreatePodSandBox")
        # Through the work queue: the sync is retried.
        h = Harness()
        h.add_job(job())
        await h.drain()
        pg_path = f"{PGS}/job1-job1-uid"
        h.api.objects[pg_path]["status"]["phase"] = "Inqueue"
        h.echo("PodGroup", PGS)
        h.api.fail[("POST", PODS)] = ApiError("POST", PODS, 403, "pods is forbidden")
        with pytest.raises(RetryLater):
            await h.jobs._handle("ns/job1", [JobRequest(event="OutOfSync")])
        await h.jobs._handle("ns/job1", [JobRequest(event="OutOfSync")])
        assert f"{PODS}/job1-worker-0" in h.api.objects
        assert f"{PODS}/job1-worker-1" in h.api.objects

    run(scenario())
