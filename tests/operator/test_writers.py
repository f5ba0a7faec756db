"""Evictions, status writes (coalesced, only when changed) and aggregated Events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from operator_fakes import FakeApi, error

from volcano_py.api.task import TaskInfo
from volcano_py.operator.binder import PodFeed
from volcano_py.operator.informer import POD, POD_GROUP, QUEUE, Informer
from volcano_py.operator.writers import (
    WRITTEN_SWEEP_MIN,
    BatchedEventRecorder,
    CoalescingQueue,
    LiveEvictor,
    LiveStatusWriter,
    pod_group_status,
    same_pod_group_status,
)

PG = "/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/g"


def pod(node: str = "", conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
        "spec": {"nodeName": node, "containers": []},
        "status": {"phase": "Pending", "conditions": conditions or []},
    }


def test_coalescing_queue_keeps_the_newest_and_one_in_flight() -> None:
    async def main() -> list[tuple[str, int]]:
        queue: CoalescingQueue[str, int] = CoalescingQueue()
        queue.put("a", 1)
        queue.put("b", 1)
        queue.put("a", 2)  # replaces a's pending value
        first = await queue.get()
        queue.put("a", 3)  # a is busy: held until done
        second = await queue.get()
        assert queue._ready.empty()
        queue.done("a")
        third = await queue.get()
        return [first, second, third]

    assert asyncio.run(main()) == [("a", 2), ("b", 1), ("a", 3)]


def test_pod_group_status_merge_keeps_transition_times() -> None:
    current = {
        "phase": "Pending",
        "minMember": 9,  # not the scheduler's: kept
        "conditions": [{"type": "Unschedulable", "status": "True", "reason": "NotEnough",
                        "lastTransitionTime": "2026-01-01T00:00:00Z"}],
    }  # fmt: skip
    wanted = {
        "phase": "Pending",
        "conditions": [
            {"type": "Unschedulable", "status": "True", "reason": "NotEnough", "message": "2/3"}
        ],
    }
    merged = pod_group_status(current, wanted, "2026-02-02T00:00:00Z")
    assert merged["minMember"] == 9
    assert merged["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    flipped = pod_group_status(
        current,
        {
            "phase": "Running",
            "running": 3,
            "conditions": [{"type": "Unschedulable", "status": "False"}],
        },
        "2026-02-02T00:00:00Z",
    )
    assert flipped["conditions"][0]["lastTransitionTime"] == "2026-02-02T00:00:00Z"
    assert flipped["running"] == 3 and flipped["phase"] == "Running"
    assert same_pod_group_status(
        merged,
        {
            **merged,
            "conditions": [
                {**merged["conditions"][0], "lastTransitionTime": "x", "transitionID": "y"}
            ],
        },
    )
    assert not same_pod_group_status(merged, flipped)


def writer(api: FakeApi, feed: PodFeed | None = None) -> tuple[LiveStatusWriter, dict[str, Any]]:
    informers = {
        kind.kind: Informer(api, kind, lambda *a: None)  # type: ignore[arg-type]
        for kind in (POD, POD_GROUP, QUEUE)
    }
    loop = asyncio.get_running_loop()
    status = LiveStatusWriter(
        api,
        loop,
        informers,
        feed if feed is not None else PodFeed(lambda *a: None),  # type: ignore[arg-type]
        concurrency=1,
    )
    return status, informers


async def settle(status: LiveStatusWriter) -> None:
    tasks = status.start()
    for _ in range(200):
        await asyncio.sleep(0.005)
        if not status.pending:
            break
    for task in tasks:
        task.cancel()


def test_pod_group_status_is_an_update_retried_on_conflict() -> None:
    api = FakeApi()
    old = {
        "metadata": {"name": "g", "namespace": "ns", "resourceVersion": "3"},
        "spec": {"minMember": 2},
        "status": {"phase": "Pending"},
    }
    fresh = {
        **old,
        "metadata": {**old["metadata"], "resourceVersion": "4"},
        "spec": {"minMember": 3},
    }
    api.answer(
        "PUT",
        PG,
        error(409, "PUT", PG),
        lambda body: {**body, "metadata": {**body["metadata"], "resourceVersion": "5"}},
    )
    api.answer("GET", PG, fresh)

    async def main() -> LiveStatusWriter:
        status, informers = writer(api)
        informers["PodGroup"].objects["ns/g"] = old
        status.update_pod_group_status("ns", "g", {"phase": "Running", "running": 2})
        await settle(status)
        # Unchanged status (known from our own write, newer than the informer's): no write.
        status.update_pod_group_status("ns", "g", {"phase": "Running", "running": 2})
        await settle(status)
        return status

    status = asyncio.run(main())
    puts = [body for method, _, body in api.calls if method == "PUT"]
    assert [c[0] for c in api.calls] == ["PUT", "GET", "PUT"]
    assert puts[1]["metadata"]["resourceVersion"] == "4"
    assert puts[1]["spec"] == {"minMember": 3}  # built on the fresh object
    assert puts[1]["status"] == {"phase": "Running", "running": 2}
    assert status.writes["PodGroup"] == 1 and status.skipped == 1


def test_queue_allocated_is_a_merge_patch_that_drops_vanished_resources() -> None:
    api = FakeApi()
    path = "/apis/scheduling.volcano.sh/v1beta1/queues/q/status"
    api.answer("PATCH", path, {})

    async def main() -> None:
        status, informers = writer(api)
        informers["Queue"].objects["q"] = {
            "metadata": {"name": "q"},
            "status": {"allocated": {"cpu": "1", "nvidia.com/gpu": "1"}},
        }
        status.update_queue_status("q", {"cpu": "1"})
        status.update_queue_status("q", {"cpu": "2", "memory": "1Gi"})  # coalesced
        await settle(status)

    asyncio.run(main())
    assert api.calls == [
        (
            "PATCH",
            path,
            {"status": {"allocated": {"cpu": "2", "memory": "1Gi", "nvidia.com/gpu": None}}},
        )
    ]


def test_pod_condition_written_when_changed_and_never_on_a_bound_pod() -> None:
    api = FakeApi()
    path = "/api/v1/namespaces/ns/pods/p/status"
    api.answer("PATCH", path, {})
    condition = {
        "type": "PodScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "2/3 tasks in gang unschedulable",
    }
    task = TaskInfo.from_pod(pod())

    async def main() -> LiveStatusWriter:
        feed = PodFeed(lambda *a: None)
        status, informers = writer(api, feed)
        existing = {**condition, "message": "1/3 tasks", "lastTransitionTime": "t0"}
        informers["Pod"].objects["ns/p"] = pod(conditions=[existing])
        status.update_pod_condition(task, condition, "")
        await settle(status)
        informers["Pod"].objects["ns/p"] = pod(
            conditions=[{**condition, "lastTransitionTime": "t0"}]
        )
        status.update_pod_condition(task, condition, "")  # already says so
        await settle(status)
        feed.assume("ns/p", "u1", "n1")
        status.update_pod_condition(task, {**condition, "message": "new"}, "")  # being bound
        await settle(status)
        feed.forget("ns/p")
        informers["Pod"].objects["ns/p"] = pod(node="n1")
        status.update_pod_condition(task, {**condition, "message": "new"}, "")  # bound
        await settle(status)
        return status

    status = asyncio.run(main())
    # Same status (False -> False): no new lastTransitionTime; the UID is a precondition.
    assert api.calls == [
        ("PATCH", path, {"metadata": {"uid": "u1"}, "status": {"conditions": [condition]}})
    ]
    assert status.skipped == 3


def test_evict_marks_the_pod_then_deletes_it_with_its_uid() -> None:
    api = FakeApi()
    base = "/api/v1/namespaces/ns/pods/p"
    api.answer("PATCH", f"{base}/status", {})
    api.answer("DELETE", base, {})

    async def main() -> LiveEvictor:
        evictor = LiveEvictor(api, asyncio.get_running_loop(), concurrency=1)  # type: ignore[arg-type]
        tasks = evictor.start()
        evictor.evict(TaskInfo.from_pod(pod("n1")), "reclaim")
        for _ in range(100):
            await asyncio.sleep(0.005)
            if evictor.evicted:
                break
        for task in tasks:
            task.cancel()
        return evictor

    evictor = asyncio.run(main())
    assert evictor.evicted == 1
    patch, delete = api.calls
    conditions = patch[2]["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"]) for c in conditions] == [
        ("Ready", "False", "Evict"),
        ("DisruptionTarget", "True", "PreemptionByScheduler"),
    ]
    assert conditions[0]["message"] == "Pod is evicted, because of reclaim"
    assert delete == (
        "DELETE",
        base,
        {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "u1"}},
    )


def test_events_are_aggregated_and_filtered() -> None:
    api = FakeApi()
    api.answer("POST", "/api/v1/namespaces/ns/events", lambda body: body)
    api.answer("POST", "/api/v1/namespaces/default/events", lambda body: body)

    async def main() -> BatchedEventRecorder:
        recorder = BatchedEventRecorder(api, mode="all")  # type: ignore[arg-type]
        recorder.record("PodGroup", "ns", "g", "Warning", "Unschedulable", "1/3")
        recorder.record("PodGroup", "ns", "g", "Warning", "Unschedulable", "2/3")
        recorder.record("Queue", "", "q", "Normal", "Opened", "open")
        await recorder.flush()
        name = next(b for m, _, b in api.calls if b["involvedObject"]["kind"] == "PodGroup")[
            "metadata"
        ]["name"]
        api.answer("PATCH", f"/api/v1/namespaces/ns/events/{name}", {})
        recorder.record("PodGroup", "ns", "g", "Warning", "Unschedulable", "3/3")
        await recorder.flush()
        return recorder

    recorder = asyncio.run(main())
    posts = [body for method, _, body in api.calls if method == "POST"]
    assert sorted((b["involvedObject"]["kind"], b["count"], b["message"]) for b in posts) == [
        ("PodGroup", 2, "2/3"),
        ("Queue", 1, "open"),
    ]
    queue_event = next(b for b in posts if b["involvedObject"]["kind"] == "Queue")
    assert queue_event["metadata"]["namespace"] == "default"
    assert "namespace" not in queue_event["involvedObject"]
    patch = api.calls[-1]
    assert patch[0] == "PATCH" and patch[2]["count"] == 3 and patch[2]["message"] == "3/3"
    assert recorder.written == 3


@pytest.mark.parametrize(("mode", "written"), [("warnings", ["Evict"]), ("none", [])])
def test_event_modes(mode: str, written: list[str]) -> None:
    api = FakeApi()
    api.answer("POST", "/api/v1/namespaces/ns/events", lambda body: body)

    async def main() -> None:
        recorder = BatchedEventRecorder(api, mode=mode)  # type: ignore[arg-type]
        recorder.record("Pod", "ns", "p", "Normal", "Scheduled", "assigned")
        recorder.record("Pod", "ns", "p", "Warning", "Evict", "evicted")
        await recorder.flush()

    asyncio.run(main())
    assert [body["reason"] for _, _, body in api.calls] == written


def test_unknown_event_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="--events"):
        BatchedEventRecorder(FakeApi(), mode="some")  # type: ignore[arg-type]


def test_events_beyond_a_flush_wait_for_the_next() -> None:
    api = FakeApi()
    api.answer("POST", "/api/v1/namespaces/ns/events", lambda body: body)

    async def main() -> list[int]:
        recorder = BatchedEventRecorder(api, max_per_flush=2, max_pending=3)  # type: ignore[arg-type]
        for name in ("a", "b", "c", "d"):  # d: over the pending cap
            recorder.record("Pod", "ns", name, "Normal", "Scheduled", "assigned")
        written = []
        for _ in range(3):
            await recorder.flush()
            written.append(recorder.written)
        assert recorder.dropped == 1
        return written

    assert asyncio.run(main()) == [2, 3, 3]


def test_pod_groups_written_and_then_deleted_are_not_kept_for_good() -> None:
    """Each write keeps the written PodGroup until the informer catches up; one written once
    and then deleted is swept out once the kept ones have doubled (``bench churn`` churned
    thousands of PodGroups through the scheduler and this grew without bound)."""
    api = FakeApi()
    groups = 5 * WRITTEN_SWEEP_MIN

    def written(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "metadata": {**body["metadata"], "resourceVersion": "9"}}

    async def main() -> LiveStatusWriter:
        status, informers = writer(api)
        for index in range(groups):
            path = f"/apis/scheduling.volcano.sh/v1beta1/namespaces/ns/podgroups/g{index}"
            api.answer("PUT", path, written)
            informers["PodGroup"].objects[f"ns/g{index}"] = {
                "metadata": {"name": f"g{index}", "namespace": "ns", "resourceVersion": "3"},
                "status": {"phase": "Pending"},
            }
            status.update_pod_group_status("ns", f"g{index}", {"phase": "Running"})
            await settle(status)
            del informers["PodGroup"].objects[f"ns/g{index}"]  # deleted right after
        return status

    status = asyncio.run(main())
    assert status.writes["PodGroup"] == groups
    assert len(status._written) < WRITTEN_SWEEP_MIN
