"""Binding: the assumed-pod hold-back, the Binding request, conflicts resynced, transient
errors retried, nothing written without the lease."""

from __future__ import annotations

import asyncio
from typing import Any

from operator_fakes import FakeApi, error

from volcano_py.api.task import TaskInfo
from volcano_py.cache.interfaces import RecordingEventRecorder
from volcano_py.operator.binder import LiveBinder, PodFeed
from volcano_py.operator.informer import POD, Informer

BIND = "/api/v1/namespaces/ns/pods/p/binding"


def pod(node: str = "", uid: str = "u1", version: str = "1") -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": uid, "resourceVersion": version,
                     "creationTimestamp": "2026-01-01T00:00:00Z",
                     "annotations": {"scheduling.k8s.io/group-name": "g"}},
        "spec": {"schedulerName": "volcano", "nodeName": node, "containers": []},
        "status": {"phase": "Pending"},
    }  # fmt: skip


def test_pod_feed_holds_back_stale_events_of_a_pod_being_bound() -> None:
    applied: list[tuple[str, str]] = []
    feed = PodFeed(lambda kind, event, item: applied.append((event, item["spec"]["nodeName"])))
    feed("Pod", "ADDED", pod())
    feed.assume("ns/p", "u1", "n1")
    feed("Pod", "MODIFIED", pod(version="2"))  # our own condition patch, say: held back
    assert applied == [("ADDED", "")] and feed.held_back == 1 and feed.is_assumed("ns/p")
    feed("Pod", "MODIFIED", pod("n1", version="3"))  # the bind shows: applied, hold ends
    assert applied[-1] == ("MODIFIED", "n1") and not feed.is_assumed("ns/p")
    feed.assume("ns/p", "u1", "n1")
    feed("Pod", "MODIFIED", pod(uid="u2"))  # recreated under the same name: applied
    assert applied[-1] == ("MODIFIED", "") and len(feed) == 0
    feed.assume("ns/p", "u2", "n1")
    feed("Pod", "DELETED", pod(uid="u2"))
    assert applied[-1] == ("DELETED", "") and len(feed) == 0


def test_expired_assumptions() -> None:
    now = [0.0]
    feed = PodFeed(lambda *args: None, clock=lambda: now[0])
    feed.assume("ns/p", "u1", "n1")
    now[0] = 30
    assert feed.expired(60) == []
    now[0] = 61
    assert feed.expired(60) == ["ns/p"]


class Harness:
    def __init__(self, api: FakeApi, writable: bool = True) -> None:
        self.applied: list[tuple[str, str]] = []
        self.feed = PodFeed(
            lambda kind, event, item: self.applied.append((event, item["spec"].get("nodeName", "")))
        )
        self.pods = Informer(api, POD, self.feed)  # type: ignore[arg-type]
        self.recorder = RecordingEventRecorder()
        self.writable = writable
        self.api = api

    async def bind(self, task: TaskInfo, node: str) -> LiveBinder:
        binder = LiveBinder(
            self.api,
            asyncio.get_running_loop(),
            self.pods,  # type: ignore[arg-type]
            self.feed,
            concurrency=2,
            may_write=lambda: self.writable,
            recorder=self.recorder,
        )
        tasks = binder.start()
        binder.bind(task, node)
        await asyncio.sleep(0)
        assert await binder.drain(5)
        for running in tasks:
            running.cancel()
        return binder


def task_for(item: dict[str, Any], **annotations: str) -> TaskInfo:
    task = TaskInfo.from_pod(item)
    task.pod_annotations.update(annotations)
    return task


def test_a_bind_posts_a_binding_with_the_uid_and_new_annotations_only() -> None:
    api = FakeApi()
    api.answer("POST", BIND, {"kind": "Status", "status": "Success"})
    harness = Harness(api)
    binder = asyncio.run(harness.bind(task_for(pod(), **{"volcano.sh/gpu": "0"}), "n1"))
    assert api.calls == [("POST", BIND, {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1",
                     "annotations": {"volcano.sh/gpu": "0"}},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    })]  # fmt: skip
    assert binder.stats.bound == 1 and harness.feed.is_assumed("ns/p")
    assert harness.recorder.events == [
        ("Pod", "ns", "p", "Normal", "Scheduled", "Successfully assigned ns/p to n1")
    ]


def test_a_conflict_rereads_the_pod_and_never_retries() -> None:
    api = FakeApi()
    api.answer("POST", BIND, error(409, "POST", BIND))
    api.answer("GET", "/api/v1/namespaces/ns/pods/p", pod("other-node", version="7"))
    harness = Harness(api)
    binder = asyncio.run(harness.bind(task_for(pod()), "n1"))
    assert [c[0] for c in api.calls] == ["POST", "GET"]
    assert binder.stats.conflicts == 1 and binder.stats.bound == 0
    assert harness.applied == [("ADDED", "other-node")]  # the cache learns the truth
    assert not harness.feed.is_assumed("ns/p")


def test_a_vanished_pod_is_deleted_from_the_cache() -> None:
    api = FakeApi()
    harness = Harness(api)
    harness.pods.objects["ns/p"] = pod()
    api.answer("POST", BIND, error(404, "POST", BIND))
    api.answer("GET", "/api/v1/namespaces/ns/pods/p", error(404))
    asyncio.run(harness.bind(task_for(pod()), "n1"))
    assert harness.applied == [("DELETED", "")]


def test_transient_errors_are_retried() -> None:
    api = FakeApi()
    api.answer("POST", BIND, error(503, "POST", BIND), error(0, "POST", BIND), {"kind": "Status"})
    harness = Harness(api)
    binder = asyncio.run(harness.bind(task_for(pod()), "n1"))
    assert binder.stats.retries == 2 and binder.stats.bound == 1


def test_without_the_lease_nothing_is_written() -> None:
    api = FakeApi()
    harness = Harness(api, writable=False)
    binder = asyncio.run(harness.bind(task_for(pod()), "n1"))
    assert api.calls == [] and binder.stats.dropped == 1
    assert not harness.feed.is_assumed("ns/p")


# ---- deviceshare.NodeLockEnable: the lock written on the Node before the Binding

NODE = "/api/v1/nodes/n1"
NOW = 1_800_000_000.0


def node(annotations: dict[str, str] | None = None, version: str = "5") -> dict[str, Any]:
    return {"metadata": {"name": "n1", "resourceVersion": version,
                         "annotations": annotations or {}}}  # fmt: skip


async def _bind_locked(harness: Harness, task: TaskInfo) -> LiveBinder:
    binder = LiveBinder(
        harness.api,
        asyncio.get_running_loop(),
        harness.pods,  # type: ignore[arg-type]
        harness.feed,
        concurrency=1,
        recorder=harness.recorder,
        clock=lambda: NOW,
    )
    tasks = binder.start()
    binder.bind(task, "n1")
    await asyncio.sleep(0)
    assert await binder.drain(5)
    for running in tasks:
        running.cancel()
    return binder


def locked_task(*locks: str) -> TaskInfo:
    task = task_for(pod())
    task.bind_node_locks = locks
    return task


def test_the_node_lock_is_written_before_the_binding() -> None:
    """TestAllocateAddsNodeLockAscendWhenEnabled (ascend/hami/device_info_test.go): the Node
    gets ``hami.io/mutex.lock`` as an RFC 3339 time, here conditioned on the version read."""
    api = FakeApi()
    api.answer("GET", NODE, node())
    api.answer("PATCH", NODE, node())
    api.answer("POST", BIND, {"kind": "Status", "status": "Success"})
    binder = asyncio.run(_bind_locked(Harness(api), locked_task("hami.io/mutex.lock")))
    assert [c[:2] for c in api.calls] == [("GET", NODE), ("PATCH", NODE), ("POST", BIND)]
    assert api.calls[1][2] == {"metadata": {"resourceVersion": "5", "annotations": {
        "hami.io/mutex.lock": "2027-01-15T08:00:00Z"}}}  # fmt: skip
    assert binder.stats.bound == 1


def test_a_fresh_lock_refuses_the_bind_and_the_pod_is_reread() -> None:
    api = FakeApi()
    api.answer("GET", NODE, node({"gpu": "2027-01-15T07:58:00Z"}))
    api.answer("GET", "/api/v1/namespaces/ns/pods/p", pod(version="7"))
    harness = Harness(api)
    binder = asyncio.run(_bind_locked(harness, locked_task("gpu")))
    assert [c[0] for c in api.calls] == ["GET", "GET"]  # no PATCH, no Binding
    assert binder.stats.locked == 1 and binder.stats.bound == 0
    assert harness.applied == [("ADDED", "")] and not harness.feed.is_assumed("ns/p")
    assert harness.recorder.events[-1][3:] == (
        "Warning", "FailedScheduling", "Binding rejected: node n1 has been locked within 5 minutes"
        " (lock annotation 'gpu' on node n1 taken at 2027-01-15T07:58:00Z, held until"
        " 2027-01-15T08:03:00Z)"
    )  # fmt: skip


def test_an_expired_lock_is_taken_over_and_a_lost_race_retried() -> None:
    api = FakeApi()
    api.answer("GET", NODE, node({"gpu": "2027-01-15T07:50:00Z"}), node(version="6"))
    api.answer("PATCH", NODE, error(409, "PATCH", NODE), node())
    api.answer("POST", BIND, {"kind": "Status", "status": "Success"})
    binder = asyncio.run(_bind_locked(Harness(api), locked_task("gpu")))
    assert [c[0] for c in api.calls] == ["GET", "PATCH", "GET", "PATCH", "POST"]
    assert api.calls[3][2]["metadata"]["resourceVersion"] == "6"
    assert binder.stats.bound == 1


def test_a_failed_bind_gives_its_lock_back() -> None:
    api = FakeApi()
    api.answer("GET", NODE, node(), node({"gpu": "2027-01-15T08:00:00Z"}, version="6"))
    api.answer("PATCH", NODE, node())
    api.answer("POST", BIND, error(409, "POST", BIND))
    api.answer("GET", "/api/v1/namespaces/ns/pods/p", pod("other", version="7"))
    asyncio.run(_bind_locked(Harness(api), locked_task("gpu")))
    assert [c[0] for c in api.calls] == ["GET", "PATCH", "POST", "GET", "PATCH", "GET"]
    assert api.calls[4][2] == {"metadata": {"resourceVersion": "6", "annotations": {"gpu": None}}}
