"""`volcano-py webhooks`: AdmissionReview handling on every route, over aiohttp (plain HTTP; the
TLS server is exercised by tests/cluster/test_webhooks_process.py)."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from volcano_py.controllers.admission import mutate_job, mutate_pod_group, mutate_queue
from volcano_py.operator.webhooks import jsonpatch
from volcano_py.operator.webhooks.lookups import ClusterReadError
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.routes import ROUTES, ROUTES_BY_PATH
from volcano_py.operator.webhooks.server import build_app

Obj = dict[str, Any]


class FakeView:
    def __init__(
        self,
        queues: dict[str, Obj] | None = None,
        namespaces: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self._queues = queues if queues is not None else {"default": queue("default")}
        self._namespaces = namespaces or {}
        self.broken = False

    async def queues(self) -> dict[str, Obj]:
        if self.broken:
            raise ClusterReadError("cannot list queues: connection refused")
        return self._queues

    async def namespace_annotations(self, namespace: str) -> dict[str, str]:
        return self._namespaces.get(namespace, {})


def queue(name: str, state: str = "Open", **spec: Any) -> Obj:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": dict(spec),
        "status": {"state": state},
    }


def job(name: str = "job1", **spec: Any) -> Obj:
    task = {
        "name": "worker",
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns1"},
        "spec": {"tasks": [task], **spec},
    }


def pod_group(name: str = "pg1", **spec: Any) -> Obj:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "ns1"},
        "spec": {"minMember": 1, **spec},
    }


def review(
    kind: str,
    obj: Obj | None,
    operation: str = "CREATE",
    old: Obj | None = None,
    name: str = "",
) -> Obj:
    metadata = (obj or old or {}).get("metadata", {})
    request: Obj = {
        "uid": "uid-1",
        "kind": {"group": "", "version": "", "kind": kind},
        "operation": operation,
        "name": name or metadata.get("name", ""),
        "namespace": metadata.get("namespace", ""),
        "object": obj,
        "oldObject": old,
    }
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def post(
    path: str, body: Any, view: FakeView | None = None, raw: bytes | None = None
) -> tuple[int, Obj]:
    async def go() -> tuple[int, Obj]:
        app = build_app(view or FakeView(), WebhookOptions())
        async with TestClient(TestServer(app)) as client:
            data = raw if raw is not None else json.dumps(body).encode()
            answer = await client.post(path, data=data)
            return answer.status, await answer.json()

    return asyncio.run(go())


def answer_of(path: str, body: Obj, view: FakeView | None = None) -> Obj:
    status, answer = post(path, body, view)
    assert status == 200, answer
    assert answer["kind"] == "AdmissionReview"
    response: Obj = answer["response"]
    assert response["uid"] == "uid-1"
    return response


def patched(obj: Obj, response: Obj) -> Obj:
    assert response["allowed"] is True, response
    if "patch" not in response:
        return obj
    assert response["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(response["patch"]))
    return jsonpatch.apply(obj, patch)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------ JSON patch


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({"a": 1}, {"a": 1}),
        ({"a": 1}, {"a": 2, "b": {"c": [1, 2]}}),
        ({"a": {"x/y": 1, "t~": 2}}, {"a": {"x/y": 3}}),
        ({"l": [1, 2, 3]}, {"l": [1, 5, 3]}),
        ({"l": [1, 2]}, {"l": [1, 2, 3]}),
        ({"l": [{"a": 1}]}, {"l": [{"a": 1, "b": True}]}),
        ({"n": 1}, {"n": True}),
        ({"gone": None, "kept": 0}, {"kept": 0}),
    ],
)
def test_patch_round_trips(before: Obj, after: Obj) -> None:
    patch = jsonpatch.diff(before, after)
    # Compared as JSON text: in Python True == 1, in JSON they differ.
    assert json.dumps(jsonpatch.apply(before, patch)) == json.dumps(after)
    assert (patch == []) == (json.dumps(before) == json.dumps(after))


# ------------------------------------------------------------------------------ mutations


def test_job_mutation_patch_gives_the_mutated_job() -> None:
    original = job(plugins={"mpi": []})
    response = answer_of("/jobs/mutate", review("Job", original))
    result = patched(original, response)
    assert result == mutate_job(original)
    assert result["spec"]["queue"] == "default"
    assert result["spec"]["schedulerName"] == "volcano"
    assert result["spec"]["minAvailable"] == 2
    assert result["spec"]["tasks"][0]["maxRetry"] == 3
    assert set(result["spec"]["plugins"]) == {"mpi", "svc", "ssh"}


def test_job_mutation_only_on_create() -> None:
    response = answer_of("/jobs/mutate", review("Job", job(), "UPDATE", old=job()))
    assert response == {"uid": "uid-1", "allowed": True}


def test_already_defaulted_job_gets_no_patch() -> None:
    defaulted = mutate_job(job())
    response = answer_of("/jobs/mutate", review("Job", defaulted))
    assert response == {"uid": "uid-1", "allowed": True}


def test_queue_mutation_patch_gives_the_mutated_queue() -> None:
    original = queue("q1", capability={"cpu": "4"})
    original["metadata"]["annotations"] = {
        "volcano.sh/hierarchy": "a/b",
        "volcano.sh/hierarchy-weights": "2/3",
    }
    result = patched(original, answer_of("/queues/mutate", review("Queue", original)))
    assert result == mutate_queue(original)
    assert result["spec"]["weight"] == 1 and result["spec"]["reclaimable"] is True
    assert result["metadata"]["annotations"]["volcano.sh/hierarchy"] == "root/a/b"


def test_pod_group_mutation_takes_the_namespace_queue() -> None:
    original = pod_group()
    annotations = {"scheduling.volcano.sh/queue-name": "team-a"}
    view = FakeView(namespaces={"ns1": annotations})
    result = patched(original, answer_of("/podgroups/mutate", review("PodGroup", original), view))
    assert result == mutate_pod_group(original, annotations)
    assert result["spec"]["queue"] == "team-a"


# ------------------------------------------------------------------------------ validations


def test_valid_job_is_allowed() -> None:
    assert answer_of("/jobs/validate", review("Job", mutate_job(job())))["allowed"] is True


def test_job_refusals_name_the_object_and_field() -> None:
    bad = job(minAvailable=5)
    response = answer_of("/jobs/validate", review("Job", bad))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith("Job ns1/job1: ")
    assert "minAvailable" in response["status"]["message"]


def test_job_to_a_missing_or_closed_queue_is_refused() -> None:
    view = FakeView({"default": queue("default"), "shut": queue("shut", state="Closed")})
    message = answer_of("/jobs/validate", review("Job", job(queue="nope")), view)["status"][
        "message"
    ]
    assert "spec.queue" in message and "'nope' does not exist" in message
    message = answer_of("/jobs/validate", review("Job", job(queue="shut")), view)["status"][
        "message"
    ]
    assert "spec.queue" in message and "Closed" in message


def test_job_update_may_change_replicas_but_not_the_queue() -> None:
    old = mutate_job(job())
    scaled = json.loads(json.dumps(old))
    scaled["spec"]["tasks"][0]["replicas"] = 4
    assert answer_of("/jobs/validate", review("Job", scaled, "UPDATE", old=old))["allowed"] is True
    moved = json.loads(json.dumps(old))
    moved["spec"]["queue"] = "other"
    response = answer_of("/jobs/validate", review("Job", moved, "UPDATE", old=old))
    assert response["allowed"] is False
    assert "spec.queue: may not be changed" in response["status"]["message"]


def test_queue_guarantee_above_capability_is_refused() -> None:
    bad = queue(
        "q1", capability={"cpu": "2"}, deserved={"cpu": "2"}, guarantee={"resource": {"cpu": "4"}}
    )
    response = answer_of("/queues/validate", review("Queue", bad))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert message.startswith("Queue q1: ") and "spec.guarantee" in message


def test_queue_with_unknown_parent_is_refused_and_a_valid_one_allowed() -> None:
    orphan = queue("q1", parent="missing")
    response = answer_of("/queues/validate", review("Queue", orphan))
    assert response["allowed"] is False and "missing" in response["status"]["message"]
    good = queue("q2", capability={"cpu": "4"}, deserved={"cpu": "2"})
    assert answer_of("/queues/validate", review("Queue", good))["allowed"] is True


def test_default_queue_and_parents_cannot_be_deleted() -> None:
    view = FakeView({"default": queue("default"), "p": queue("p"), "c": queue("c", parent="p")})
    for name, expected in (
        ("default", "`default` queue can not be deleted"),
        ("p", "child queues: c"),
    ):
        response = answer_of(
            "/queues/validate", review("Queue", None, "DELETE", old=queue(name)), view
        )
        assert response["allowed"] is False
        assert expected in response["status"]["message"]
    response = answer_of("/queues/validate", review("Queue", None, "DELETE", old=queue("c")), view)
    assert response["allowed"] is True


def test_pod_group_validation_checks_its_queue() -> None:
    view = FakeView({"default": queue("default"), "shut": queue("shut", state="Closed")})
    assert (
        answer_of("/podgroups/validate", review("PodGroup", pod_group()), view)["allowed"] is True
    )
    response = answer_of("/podgroups/validate", review("PodGroup", pod_group(queue="shut")), view)
    assert response["allowed"] is False and "spec.queue" in response["status"]["message"]


def test_hypernode_validation_uses_the_model() -> None:
    bad = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "h1"},
        "spec": {"tier": "x", "members": []},
    }
    response = answer_of("/hypernodes/validate", review("HyperNode", bad))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith("HyperNode h1: spec.tier")


# ------------------------------------------------------------------------------ malformed


@pytest.mark.parametrize("path", [route.path for route in ROUTES])
def test_every_route_answers_a_missing_object_with_a_refusal(path: str) -> None:
    route = ROUTES_BY_PATH[path]
    response = answer_of(path, review(route.kind, None, "CREATE", name="x"))
    assert response["allowed"] is False
    assert "request.object is missing" in response["status"]["message"]


@pytest.mark.parametrize("path", [route.path for route in ROUTES])
def test_every_route_refuses_another_kind(path: str) -> None:
    response = answer_of(path, review("ConfigMap", {"metadata": {"name": "p"}}))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert f"admits {ROUTES_BY_PATH[path].kind} objects, not ConfigMap" in message


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"not json", "not JSON"),
        (b"[]", "not an AdmissionReview"),
        (b'{"kind": "Pod", "apiVersion": "v1"}', "expected kind AdmissionReview"),
        (b'{"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}', "no request"),
    ],
)
def test_a_body_that_is_no_admission_review_is_a_400(raw: bytes, expected: str) -> None:
    status, answer = post("/jobs/validate", None, raw=raw)
    assert status == 400
    assert expected in answer["message"] and answer["message"].startswith("/jobs/validate: ")


def test_unreadable_cluster_is_a_refusal_not_a_traceback() -> None:
    view = FakeView()
    view.broken = True
    response = answer_of("/jobs/validate", review("Job", job()), view)
    assert response["allowed"] is False
    assert response["status"]["message"] == "Job ns1/job1: cannot list queues: connection refused"


def test_garbage_fields_are_refused_with_the_field() -> None:
    bad = job()
    bad["spec"]["tasks"][0]["replicas"] = "many"
    response = answer_of("/jobs/validate", review("Job", bad))
    assert response["allowed"] is False
    assert "spec.tasks[0].replicas" in response["status"]["message"]


def test_healthz() -> None:
    async def go() -> tuple[int, str]:
        async with TestClient(TestServer(build_app(FakeView(), WebhookOptions()))) as client:
            answer = await client.get("/healthz")
            return answer.status, await answer.text()

    assert asyncio.run(go()) == (200, "ok\n")


def test_cronjob_validation_refuses_a_bad_schedule_and_a_bad_template() -> None:
    cronjob: Obj = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": job()["spec"]}},
    }
    assert answer_of("/cronjobs/validate", review("CronJob", cronjob))["allowed"] is True
    bad_schedule = json.loads(json.dumps(cronjob))
    bad_schedule["spec"]["schedule"] = "61 * * * *"
    response = answer_of("/cronjobs/validate", review("CronJob", bad_schedule, "UPDATE"))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith(
        "CronJob default/nightly: schedule is not a valid cron expression"
    )
    bad_template = json.loads(json.dumps(cronjob))
    bad_template["spec"]["jobTemplate"]["spec"]["minAvailable"] = 9
    response = answer_of("/cronjobs/validate", review("CronJob", bad_template))
    assert response["allowed"] is False
    assert "spec.jobTemplate.spec.minAvailable" in response["status"]["message"]


# ------------------------------------------------ the same refusals as simulate (issue 16)


def test_job_pod_template_unknown_field_is_named_as_the_api_server_names_it() -> None:
    """Upstream's Job CRD spells the pod template out, so its API server refuses this under
    kubectl's strict field validation; our CRD keeps the template free-form, so the webhook
    refuses it in the same words (how_to_use_job_ttl block 1)."""
    bad = job()
    bad["spec"]["tasks"][0]["template"]["spec"]["imagePullPolicy"] = "IfNotPresent"
    message = answer_of("/jobs/validate", review("Job", bad))["status"]["message"]
    assert message == (
        'Job ns1/job1: strict decoding error: unknown field'
        ' "spec.tasks[0].template.spec.imagePullPolicy"'
    )


def test_job_limits_and_missing_template_are_refused_as_simulate_refuses_them() -> None:
    huge = job()
    huge["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "1e30"}
    }
    message = answer_of("/jobs/validate", review("Job", huge))["status"]["message"]
    assert "invalid quantity '1e30' for resource 'cpu': out of range" in message
    bare = job()
    del bare["spec"]["tasks"][0]["template"]
    message = answer_of("/jobs/validate", review("Job", bare))["status"]["message"]
    assert "spec.tasks[0].template.spec.containers: Required value" in message
