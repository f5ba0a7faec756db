"""The live TTL collector: a finished job with ``ttlSecondsAfterFinished`` is deleted once its
TTL has passed (foreground, preconditioned on its uid); a job updated or deleted meanwhile is
not; a 404 or uid conflict is the end of it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from operator_fakes import FakeApi, error

from volcano_py.operator.controllers.job_ttl import JobTtlCollector
from volcano_py.operator.controllers.store import ObjectStore

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
PATH = "/apis/batch.volcano.sh/v1alpha1/namespaces/ns/jobs/job1"


def _job(phase: str, ttl: int | None, finished: datetime = NOW) -> dict[str, Any]:
    job: dict[str, Any] = {
        "metadata": {"name": "job1", "namespace": "ns", "uid": "u1", "resourceVersion": "1"},
        "spec": {},
        "status": {"state": {"phase": phase, "lastTransitionTime": finished.isoformat()}},
    }
    if ttl is not None:
        job["spec"]["ttlSecondsAfterFinished"] = ttl
    return job


def _collector(api: FakeApi, now: datetime) -> tuple[JobTtlCollector, ObjectStore]:
    store = ObjectStore()
    return JobTtlCollector(api, store, clock=lambda: now), store


async def _settle(collector: JobTtlCollector, seconds: float = 0.05) -> None:
    tasks = collector.queue.start()
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()


def test_an_expired_job_is_deleted_in_the_foreground_with_its_uid() -> None:
    async def scenario() -> FakeApi:
        api = FakeApi()
        api.answer("DELETE", PATH, {})
        collector, store = _collector(api, NOW + timedelta(seconds=5))
        job = _job("Completed", 5)
        store.apply("Job", "ADDED", job)
        collector.on_job("ADDED", "ns/job1", job)
        await _settle(collector)
        assert collector.deleted == 1
        return api

    api = asyncio.run(scenario())
    assert api.calls == [
        (
            "DELETE",
            PATH,
            {
                "apiVersion": "v1",
                "kind": "DeleteOptions",
                "propagationPolicy": "Foreground",
                "preconditions": {"uid": "u1"},
            },
        )
    ]


def test_a_running_or_ttl_less_job_is_left_alone() -> None:
    async def scenario() -> FakeApi:
        api = FakeApi()
        collector, store = _collector(api, NOW + timedelta(hours=1))
        for job in (_job("Running", 0), _job("Completed", None)):
            store.apply("Job", "MODIFIED", job)
            collector.on_job("MODIFIED", "ns/job1", job)
        await _settle(collector)
        assert collector.timers == {}
        return api

    assert asyncio.run(scenario()).calls == []


def test_a_job_not_yet_expired_waits_and_a_restarted_one_is_spared() -> None:
    async def scenario() -> FakeApi:
        api = FakeApi()
        collector, store = _collector(api, NOW)
        finished = _job("Completed", 30)
        store.apply("Job", "ADDED", finished)
        collector.on_job("ADDED", "ns/job1", finished)
        assert "ns/job1" in collector.timers
        # Restarted before the TTL ran out: the timer is disarmed.
        restarted = _job("Running", 30)
        store.apply("Job", "MODIFIED", restarted)
        collector.on_job("MODIFIED", "ns/job1", restarted)
        assert collector.timers == {}
        await _settle(collector)
        return api

    assert asyncio.run(scenario()).calls == []


def test_a_job_gone_or_replaced_on_the_server_is_not_retried() -> None:
    async def scenario() -> JobTtlCollector:
        api = FakeApi()
        api.answer("DELETE", PATH, error(409))
        collector, store = _collector(api, NOW + timedelta(seconds=1))
        job = _job("Failed", 0)
        store.apply("Job", "ADDED", job)
        collector.on_job("ADDED", "ns/job1", job)
        await _settle(collector)
        return collector

    collector = asyncio.run(scenario())
    assert collector.deleted == 0
    assert collector.queue.failures == {}
