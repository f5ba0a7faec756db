"""The live CronJob controller against an in-memory API: a CronJob's sync becomes the job's
POST and the status PUT, the key comes back at the next schedule time, a finished job beyond
the history limit is deleted (uid precondition), and an unparseable schedule is said once."""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from test_controllers_driver import JOBS, NS, Events, MemoryApi, job

from volcano_py.operator.controllers.cronjobs import CronJobController
from volcano_py.operator.controllers.store import ObjectStore

CRONJOBS = f"/apis/batch.volcano.sh/v1alpha1/namespaces/{NS}/cronjobs"
CREATED = datetime(2025, 3, 11, 10, 0, 30, tzinfo=UTC)


def cronjob(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {
            "name": "nightly",
            "namespace": NS,
            "uid": "cron-uid",
            "resourceVersion": "1",
            "creationTimestamp": "2025-03-11T10:00:30Z",
        },
        "spec": {
            "schedule": "* * * * *",
            "concurrencyPolicy": "Allow",
            "successfulJobsHistoryLimit": 0,
            "failedJobsHistoryLimit": 1,
            "jobTemplate": {"metadata": {"labels": {"team": "a"}}, "spec": job()["spec"]},
            **spec,
        },
    }


class Harness:
    def __init__(self, now: datetime) -> None:
        self.now = now
        self.api = MemoryApi()
        self.store = ObjectStore()
        self.events = Events()
        self.controller = CronJobController(
            self.api, self.store, self.events, clock=lambda: self.now
        )

    def add(self, obj: dict[str, Any]) -> None:
        self.api.objects[f"{CRONJOBS}/{obj['metadata']['name']}"] = copy.deepcopy(obj)
        _applied, old = self.store.apply("CronJob", "ADDED", obj)
        self.controller.on_cronjob("ADDED", old, obj)

    def watch(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        applied, old = self.store.apply(kind, event_type, obj)
        if not applied:
            return
        if kind == "Job":
            self.controller.on_job(event_type, old, obj)
        else:
            self.controller.on_cronjob(event_type, old, obj)

    async def drain(self) -> None:
        tasks = self.controller.queue.start()
        for _ in range(100):
            await asyncio.sleep(0.005)
            if not len(self.controller.queue):
                break
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_a_due_schedule_creates_its_job_writes_status_and_waits_for_the_next_minute() -> None:
    async def scenario() -> None:
        harness = Harness(datetime(2025, 3, 11, 10, 1, 5, tzinfo=UTC))
        harness.add(cronjob())
        await harness.drain()
        minutes = int(datetime(2025, 3, 11, 10, 1, tzinfo=UTC).timestamp()) // 60
        name = f"nightly-{minutes}"
        assert harness.api.created(JOBS) == [name]
        created = harness.api.objects[f"{JOBS}/{name}"]
        assert created["metadata"]["labels"] == {"team": "a"}
        assert created["metadata"]["ownerReferences"][0]["uid"] == "cron-uid"
        status = harness.api.objects[f"{CRONJOBS}/nightly"]["status"]
        assert status["lastScheduleTime"] == "2025-03-11T10:01:00Z"
        assert [ref["name"] for ref in status["active"]] == [name]
        assert status["active"][0]["uid"]  # the uid the API server gave the job
        timer = harness.controller.timers["ns/nightly"]
        delay = timer.when() - asyncio.get_running_loop().time()
        assert 54.0 < delay <= 55.1
        first_event = harness.events.recorded[0][:5]
        assert first_event == ("CronJob", NS, "nightly", "Normal", "SuccessfulCreate")

        # The watch delivers the created job (the controller leaves the store to it, so the
        # job controller hears of the job as new).
        assert harness.store.get("Job", f"{NS}/{name}") is None
        harness.watch("Job", "ADDED", copy.deepcopy(created))
        await harness.drain()
        # The job completes: beyond successfulJobsHistoryLimit 0 it is deleted.
        finished = copy.deepcopy(harness.store.get("Job", f"{NS}/{name}"))
        assert finished is not None
        finished["metadata"]["resourceVersion"] = "900"
        finished["metadata"]["creationTimestamp"] = "2025-03-11T10:01:00Z"
        finished["status"] = {
            "state": {"phase": "Completed", "lastTransitionTime": "2025-03-11T10:01:30Z"}
        }
        harness.now += timedelta(seconds=30)
        harness.watch("Job", "MODIFIED", finished)
        await harness.drain()
        assert ("DELETE", f"{JOBS}/{name}") in harness.api.calls
        status = harness.api.objects[f"{CRONJOBS}/nightly"]["status"]
        assert "active" not in status
        assert status["lastSuccessfulTime"] == "2025-03-11T10:01:30Z"
        harness.controller._cancel_timer("ns/nightly")

    asyncio.run(scenario())


def test_an_unparseable_schedule_update_is_reported_and_not_queued() -> None:
    async def scenario() -> None:
        harness = Harness(CREATED)
        old = cronjob()
        harness.store.apply("CronJob", "ADDED", old)
        new = cronjob(schedule="*/5 * *")
        new["metadata"]["resourceVersion"] = "2"
        harness.watch("CronJob", "MODIFIED", new)
        assert len(harness.controller.queue) == 0
        assert harness.events.recorded[0][4] == "UnParseableCronJobSchedule"

    asyncio.run(scenario())


def test_a_suspended_cronjob_creates_nothing_and_is_not_requeued() -> None:
    async def scenario() -> None:
        harness = Harness(datetime(2025, 3, 11, 10, 5, tzinfo=UTC))
        harness.add(cronjob(suspend=True))
        await harness.drain()
        assert harness.api.created(JOBS) == []
        assert harness.controller.timers == {}

    asyncio.run(scenario())


def test_worker_threads_for_cronjob_is_upstreams_flag_and_sizes_the_queue() -> None:
    from volcano_py.cli.main import build_parser
    from volcano_py.operator.controllers.process import ControllersOptions, LiveControllers

    args = build_parser().parse_args(["controllers", "--worker-threads-for-cronjob=7"])
    assert args.worker_threads_for_cronjob == 7
    assert build_parser().parse_args(["controllers"]).worker_threads_for_cronjob == 3
    live = LiveControllers(ControllersOptions(cronjob_workers=7), access=object())  # type: ignore[arg-type]
    live.build(MemoryApi(), Events())
    assert live.cronjobs is not None and live.cronjobs.queue.workers == 7
