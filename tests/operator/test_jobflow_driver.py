"""The live JobFlow and JobTemplate controllers against an in-memory API, with upstream's
handler tests transcribed (``jobflow_controller_handler_test.go`` TestAddJobFlowFunc,
TestUpdateJobFlowFunc, TestUpdateJobFunc; ``jobtemplate_controller_handler_test.go``
TestAddJobTemplateFunc, TestAddJob): a flow's first job is POSTed and the status PUT; a job
update of the flow queues it; the next job follows its target's completion; a succeeded
flow with jobRetainPolicy delete deletes its jobs; a missing JobTemplate is retried."""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime
from typing import Any

from test_controllers_driver import JOBS, NS, Events, MemoryApi, job

from volcano_py.operator.controllers.jobflows import JobFlowController, JobTemplateController
from volcano_py.operator.controllers.store import ObjectStore

FLOWS = f"/apis/flow.volcano.sh/v1alpha1/namespaces/{NS}/jobflows"
TEMPLATES = f"/apis/flow.volcano.sh/v1alpha1/namespaces/{NS}/jobtemplates"
NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)


def jobflow(policy: str = "retain", rv: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "flow", "namespace": NS, "uid": "flow-uid", "resourceVersion": rv},
        "spec": {
            "jobRetainPolicy": policy,
            "flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}],
        },
    }


def template(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": NS, "resourceVersion": "1"},
        "spec": job()["spec"],
    }


class Harness:
    def __init__(self) -> None:
        self.api = MemoryApi()
        self.store = ObjectStore()
        self.events = Events()
        self.flows = JobFlowController(self.api, self.store, self.events, clock=lambda: NOW)
        self.templates = JobTemplateController(self.api, self.store)

    def add(self, kind: str, obj: dict[str, Any]) -> None:
        base = FLOWS if kind == "JobFlow" else TEMPLATES
        self.api.objects[f"{base}/{obj['metadata']['name']}"] = copy.deepcopy(obj)
        self.watch(kind, "ADDED", obj)

    def watch(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        applied, old = self.store.apply(kind, event_type, obj)
        if not applied:
            return
        if kind == "Job":
            self.flows.on_job(event_type, old, obj)
            self.templates.on_job(event_type, old, obj)
        elif kind == "JobFlow":
            self.flows.on_jobflow(event_type, old, obj)
        else:
            self.templates.on_jobtemplate(event_type, old, obj)

    def set_phase(self, job_name: str, phase: str) -> None:
        stored = copy.deepcopy(dict(self.store.get("Job", f"{NS}/{job_name}") or {}))
        stored["status"] = {"state": {"phase": phase}}
        stored["metadata"]["resourceVersion"] = str(int(stored["metadata"]["resourceVersion"]) + 1)
        self.api.objects[f"{JOBS}/{job_name}"] = copy.deepcopy(stored)
        self.watch("Job", "MODIFIED", stored)

    def deliver_jobs(self) -> None:
        """The watch: jobs POSTed or DELETEd through the API reach the store and handlers."""
        for path, obj in list(self.api.objects.items()):
            if (
                path.startswith(JOBS)
                and self.store.get("Job", f"{NS}/{obj['metadata']['name']}") is None
            ):
                self.watch("Job", "ADDED", copy.deepcopy(obj))
        for _key, obj in list(self.store.items("Job")):
            if f"{JOBS}/{obj['metadata']['name']}" not in self.api.objects:
                self.watch("Job", "DELETED", obj)

    async def drain(self) -> None:
        tasks = [*self.flows.queue.start(), *self.templates.queue.start()]
        for _ in range(100):
            await asyncio.sleep(0.005)
            self.deliver_jobs()
            if not len(self.flows.queue) and not len(self.templates.queue):
                break
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def test_a_flow_runs_a_then_b_and_deletes_its_jobs_when_asked() -> None:
    async def scenario() -> None:
        harness = Harness()
        harness.add("JobTemplate", template("a"))
        harness.add("JobTemplate", template("b"))
        harness.add("JobFlow", jobflow(policy="delete"))
        await harness.drain()
        assert harness.api.created(JOBS) == ["flow-a"]
        created = harness.api.objects[f"{JOBS}/flow-a"]
        assert created["metadata"]["labels"]["volcano.sh/createdByJobFlow"] == f"{NS}.flow"
        assert created["metadata"]["ownerReferences"][0]["kind"] == "JobFlow"
        assert ("JobFlow", NS, "flow", "Normal", "Created", "create a job named flow-a!") in (
            harness.events.recorded
        )
        # The JobTemplate controller saw the new job (TestAddJob) and lists it.
        assert harness.api.objects[f"{TEMPLATES}/a"]["status"] == {"jobDependsOnList": ["flow-a"]}
        assert harness.api.objects[f"{FLOWS}/flow"]["status"]["state"] == {"phase": "Pending"}

        harness.set_phase("flow-a", "Running")
        await harness.drain()
        assert harness.api.objects[f"{FLOWS}/flow"]["status"]["state"] == {"phase": "Running"}
        assert harness.api.created(JOBS) == ["flow-a"]

        harness.set_phase("flow-a", "Completed")
        await harness.drain()
        assert harness.api.created(JOBS) == ["flow-a", "flow-b"]

        harness.set_phase("flow-b", "Completed")
        await harness.drain()
        flow_status = harness.api.objects[f"{FLOWS}/flow"]["status"]
        assert flow_status["state"] == {"phase": "Succeed"}
        assert flow_status["completedJobs"] == ["flow-a", "flow-b"]
        # The Succeed status written with jobRetainPolicy delete syncs the flow again (upstream
        # hears its own write, TestUpdateJobFlowFunc) and the jobs are deleted.
        assert f"{JOBS}/flow-a" not in harness.api.objects
        assert f"{JOBS}/flow-b" not in harness.api.objects

    asyncio.run(scenario())


def test_update_jobflow_queues_only_a_succeeded_flow_with_delete() -> None:
    """TestUpdateJobFlowFunc."""
    harness = Harness()
    old = jobflow(policy="retain")
    harness.watch("JobFlow", "ADDED", old)
    assert len(harness.flows.queue) == 1  # TestAddJobFlowFunc
    harness.flows.queue = type(harness.flows.queue)("jobflow", harness.flows._handle)
    new = jobflow(policy="retain", rv="2")
    new["status"] = {"state": {"phase": "Succeed"}}
    harness.watch("JobFlow", "MODIFIED", new)
    assert len(harness.flows.queue) == 0
    newer = jobflow(policy="delete", rv="3")
    newer["status"] = {"state": {"phase": "Succeed"}}
    harness.watch("JobFlow", "MODIFIED", newer)
    assert len(harness.flows.queue) == 1


def test_update_job_queues_the_controlling_flow() -> None:
    """TestUpdateJobFunc: a job controlled by a JobFlow, with a new resourceVersion."""
    harness = Harness()
    owned = job()
    owned["metadata"]["ownerReferences"] = [
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "jobflow1",
         "uid": "u", "controller": True}
    ]  # fmt: skip
    owned["metadata"]["resourceVersion"] = "1"
    harness.flows.on_job("MODIFIED", owned, owned)
    assert len(harness.flows.queue) == 0  # same resourceVersion
    newer = copy.deepcopy(owned)
    newer["metadata"]["resourceVersion"] = "2"
    harness.flows.on_job("MODIFIED", owned, newer)
    assert len(harness.flows.queue) == 1
    harness.flows.on_job("MODIFIED", job(), job())  # not a JobFlow's
    assert len(harness.flows.queue) == 1


def test_add_job_template_queues_it() -> None:
    """TestAddJobTemplateFunc."""
    harness = Harness()
    harness.watch("JobTemplate", "ADDED", template("jobtemplate1"))
    assert len(harness.templates.queue) == 1


def test_a_missing_template_is_retried_and_writes_no_status() -> None:
    async def scenario() -> None:
        harness = Harness()
        harness.add("JobFlow", jobflow())
        await harness.drain()
        assert harness.api.created(JOBS) == []
        assert "status" not in harness.api.objects[f"{FLOWS}/flow"]
        harness.add("JobTemplate", template("a"))
        await asyncio.sleep(1.2)  # the first back-off
        await harness.drain()
        assert harness.api.created(JOBS) == ["flow-a"]

    asyncio.run(scenario())
