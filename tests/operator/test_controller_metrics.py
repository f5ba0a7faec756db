"""The controllers' metrics, set where upstream sets them and removed with their object:
``UpdateQueueMetrics`` on each queue sync and ``DeleteQueueMetrics`` on a queue's deletion;
``UpdateJobCompleted``/``UpdateJobFailed`` when a job reaches the phase and
``state.DeleteJobMetrics`` on its deletion; ``ObserveJobToPodCreationLatency`` per created pod;
``UpdateJobFlowSucceed``/``Failed`` when a flow reaches the phase."""

from __future__ import annotations

import copy
from typing import Any

from test_controllers_driver import JOBS, NS, PODS, QUEUES, Harness, job, queue, run

from volcano_py.controllers.job import JobChanges
from volcano_py.controllers.jobflow import JobFlowChanges
from volcano_py.metrics import CONTROLLERS_REGISTRY
from volcano_py.operator.controllers.jobflows import JobFlowController
from volcano_py.operator.controllers.store import ObjectStore

PHASES = ("inqueue", "pending", "running", "unknown", "completed")


def pod_group_count(phase: str, queue_name: str) -> float | None:
    return CONTROLLERS_REGISTRY.get_sample_value(
        f"volcano_queue_pod_group_{phase}_count", {"queue_name": queue_name}
    )


def test_queue_pod_group_counts_follow_the_sync_and_go_with_the_queue() -> None:
    async def scenario() -> Harness:
        h = Harness()
        h.api.objects[f"{QUEUES}/mq"] = queue("mq")
        for name, phase in (("a", "Running"), ("b", "Running"), ("c", "Inqueue")):
            h.store.apply(
                "PodGroup",
                "ADDED",
                {
                    "metadata": {"name": name, "namespace": NS, "resourceVersion": "7"},
                    "spec": {"queue": "mq"},
                    "status": {"phase": phase},
                },
            )
        h.watch("Queue", "ADDED", queue("mq"))
        await h.drain()
        return h

    h = run(scenario())
    counts = {phase: pod_group_count(phase, "mq") for phase in PHASES}
    assert counts == {"inqueue": 1, "pending": 0, "running": 2, "unknown": 0, "completed": 0}
    deleted = copy.deepcopy(h.api.objects[f"{QUEUES}/mq"])
    h.watch("Queue", "DELETED", deleted)
    assert {phase: pod_group_count(phase, "mq") for phase in PHASES} == dict.fromkeys(PHASES)


def finished_count(kind: str, job_name: str) -> float | None:
    return CONTROLLERS_REGISTRY.get_sample_value(
        f"volcano_job_{kind}_phase_count", {"job_name": f"{NS}/{job_name}", "queue_name": "q9"}
    )


def running_job(name: str) -> dict[str, Any]:
    obj = job(name, queue="q9")
    obj["status"] = {"state": {"phase": "Running"}}
    return obj


def test_a_job_reaching_completed_or_failed_counts_once_and_its_series_go_with_it() -> None:
    async def scenario() -> Harness:
        h = Harness()
        for name, phase in (("done", "Completed"), ("broken", "Failed")):
            obj = running_job(name)
            h.api.objects[f"{JOBS}/{name}"] = copy.deepcopy(obj)
            h.store.apply("Job", "ADDED", obj)
            changes = JobChanges(status={"state": {"phase": phase}})
            await h.jobs.apply(f"{NS}/{name}", obj, changes)
            # The same phase written again (a later sync) is no new transition.
            again = h.store.get("Job", f"{NS}/{name}")
            assert again is not None
            await h.jobs.apply(
                f"{NS}/{name}", again, JobChanges(status={"state": {"phase": phase}, "x": 1})
            )
        return h

    h = run(scenario())
    assert finished_count("completed", "done") == 1
    assert finished_count("failed", "broken") == 1
    assert finished_count("failed", "done") is None
    for name in ("done", "broken"):
        gone = h.store.get("Job", f"{NS}/{name}")
        assert gone is not None
        h.watch("Job", "DELETED", dict(gone))
    assert finished_count("completed", "done") is None
    assert finished_count("failed", "broken") is None


class StampingApi:
    """Gives a created object the creation time the API server would."""

    def __init__(self, inner: Any, created: str) -> None:
        self.inner = inner
        self.created = created

    async def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        answer = await self.inner.request(method, path, body, **kwargs)
        if method == "POST" and isinstance(answer, dict):
            answer["metadata"]["creationTimestamp"] = self.created
        return answer


def test_each_created_pod_observes_the_job_to_pod_latency() -> None:
    metric = "volcano_controller_job_to_pod_creation_latency_milliseconds"

    async def scenario() -> None:
        h = Harness()
        h.jobs.api = StampingApi(h.api, "2026-01-01T00:00:02.5Z")  # type: ignore[assignment]
        obj = job("latency")
        obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
        h.store.apply("Job", "ADDED", obj)
        pods = [{"metadata": {"name": f"latency-{i}", "namespace": NS}} for i in range(2)]
        await h.jobs.apply(f"{NS}/latency", obj, JobChanges(create_pods=pods))
        assert sorted(h.api.created(PODS)) == ["latency-0", "latency-1"]

    before_count = CONTROLLERS_REGISTRY.get_sample_value(f"{metric}_count") or 0.0
    before_sum = CONTROLLERS_REGISTRY.get_sample_value(f"{metric}_sum") or 0.0
    run(scenario())
    assert CONTROLLERS_REGISTRY.get_sample_value(f"{metric}_count") == before_count + 2
    assert CONTROLLERS_REGISTRY.get_sample_value(f"{metric}_sum") == before_sum + 5000.0


class Recorder:
    def record(self, *event: str) -> None:
        pass


def test_a_jobflow_reaching_succeed_or_failed_counts_by_namespace() -> None:
    def flow_count(kind: str) -> float:
        value = CONTROLLERS_REGISTRY.get_sample_value(
            f"volcano_jobflow_{kind}_phase_count", {"jobflow_namespace": "flows"}
        )
        return value or 0.0

    class Api:
        async def request(self, method: str, path: str, body: Any = None, **_: Any) -> Any:
            written = copy.deepcopy(body)
            written["metadata"]["resourceVersion"] = "9"
            return written

    async def scenario() -> None:
        store = ObjectStore()
        controller = JobFlowController(Api(), store, Recorder())  # type: ignore[arg-type]
        flow = {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "f", "namespace": "flows", "resourceVersion": "1"},
            "spec": {"flows": []},
            "status": {"state": {"phase": "Running"}},
        }
        store.apply("JobFlow", "ADDED", flow)
        await controller.apply(
            "flows/f", flow, JobFlowChanges(status={"state": {"phase": "Succeed"}})
        )
        written = store.get("JobFlow", "flows/f")
        assert written is not None
        # Already Succeed: writing it again counts nothing.
        await controller.apply(
            "flows/f", written, JobFlowChanges(status={"state": {"phase": "Succeed"}, "x": 1})
        )

    before = flow_count("succeed")
    run(scenario())
    assert flow_count("succeed") == before + 1
