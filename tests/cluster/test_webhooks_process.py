"""`volcano-py webhooks` as a process behind the real kube-apiserver: Validating and Mutating
WebhookConfigurations point at it (``clientConfig.url`` on 127.0.0.1 with the test CA as
caBundle), and ``kubectl apply``-style creates go through it: an invalid Queue is refused with
the field in the message, a Job naming no queue or scheduler comes back defaulted, valid
objects pass.

The configurations are cluster-wide, so they match only objects carrying this module's label
(``objectSelector``) and are deleted before the server stops: other tests never meet them.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.controlplane import ApiError, ControlPlane
from e2e.webhooks_process import WebhooksProcess
from volcano_py.operator.webhooks.routes import ROUTES

pytestmark = pytest.mark.cluster

REGISTRATION = "/apis/admissionregistration.k8s.io/v1"
PG_PATH = "/apis/scheduling.volcano.sh/v1beta1"
JOB_PATH = "/apis/batch.volcano.sh/v1alpha1"
LABEL = "volcano-py.test/webhooks"


def configuration(kind: str, name: str, process: WebhooksProcess, token: str) -> dict[str, Any]:
    mutating = kind == "MutatingWebhookConfiguration"
    ca_bundle = base64.b64encode(process.ca_file.read_bytes()).decode()
    hooks = [
        {
            "name": f"{'mutate' if mutating else 'validate'}{route.kind.lower()}.volcano.sh",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": process.url(route.path), "caBundle": ca_bundle},
            "rules": [
                {
                    "apiGroups": [route.group],
                    "apiVersions": [route.version],
                    "operations": list(route.operations),
                    "resources": [route.resource],
                }
            ],
            "failurePolicy": "Fail",
            "sideEffects": "NoneOnDryRun",
            "timeoutSeconds": 10,
            "objectSelector": {"matchLabels": {LABEL: token}},
        }
        for route in ROUTES
        if route.mutating == mutating
    ]
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": hooks,
    }


def queue_manifest(name: str, token: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "labels": {LABEL: token}},
        "spec": spec,
    }


def delete_quietly(plane: ControlPlane, path: str) -> None:
    with contextlib.suppress(ApiError):
        plane.request("DELETE", path)


@pytest.fixture(scope="module")
def webhooks(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[WebhooksProcess, str]]:
    token = secrets.token_hex(4)
    process = WebhooksProcess(control_plane.kubeconfig, tmp_path_factory.mktemp("webhooks"))
    process.start()
    registered: list[str] = []
    try:
        process.wait_ready()
        for kind, plural in (
            ("MutatingWebhookConfiguration", "mutatingwebhookconfigurations"),
            ("ValidatingWebhookConfiguration", "validatingwebhookconfigurations"),
        ):
            name = f"volcano-py-test-{token}-{plural[:8]}"
            control_plane.request(
                "POST", f"{REGISTRATION}/{plural}", configuration(kind, name, process, token)
            )
            registered.append(f"{REGISTRATION}/{plural}/{name}")
        wait_until_active(control_plane, token)
        yield process, token
    finally:
        # The configurations first: a webhook with failurePolicy Fail and no server behind it
        # would refuse every object it matches.
        for path in registered:
            delete_quietly(control_plane, path)
        process.stop()


def wait_until_active(plane: ControlPlane, token: str, timeout: float = 30.0) -> None:
    """The API server picks webhook configurations up asynchronously: create a refused probe
    until it is refused (deleting any that got through)."""
    deadline = time.monotonic() + timeout
    name = f"probe-{token}"
    while True:
        probe = queue_manifest(
            name, token, capability={"cpu": "1"}, guarantee={"resource": {"cpu": "2"}}
        )
        try:
            plane.request("POST", f"{PG_PATH}/queues", probe)
        except ApiError as error:
            if "denied the request" in str(error):
                return
            raise
        delete_quietly(plane, f"{PG_PATH}/queues/{name}")
        if time.monotonic() > deadline:
            raise AssertionError("the webhook configurations never took effect")
        time.sleep(0.2)


@pytest.fixture
def default_queue(control_plane: ControlPlane) -> Iterator[None]:
    """Queue `default` as a Volcano cluster has it (left alone if another test made it)."""
    created = False
    try:
        control_plane.request("GET", f"{PG_PATH}/queues/default")
    except ApiError as error:
        if error.status != 404:
            raise
        control_plane.request(
            "POST",
            f"{PG_PATH}/queues",
            {**queue_manifest("default", "none"), "metadata": {"name": "default"}},
        )
        created = True
    try:
        yield
    finally:
        if created:
            delete_quietly(control_plane, f"{PG_PATH}/queues/default")


def test_invalid_queue_is_refused_naming_the_field(
    control_plane: ControlPlane, webhooks: tuple[WebhooksProcess, str]
) -> None:
    _process, token = webhooks
    name = f"bad-{token}"
    bad = queue_manifest(
        name, token, capability={"cpu": "2"}, deserved={"cpu": "2"},
        guarantee={"resource": {"cpu": "4"}},
    )  # fmt: skip
    with pytest.raises(ApiError) as refused:
        control_plane.request("POST", f"{PG_PATH}/queues", bad)
    delete_quietly(control_plane, f"{PG_PATH}/queues/{name}")
    message = str(refused.value)
    assert 'admission webhook "validatequeue.volcano.sh" denied the request' in message
    assert f"Queue {name}: spec.guarantee" in message


def test_valid_queue_is_defaulted_and_stored(
    control_plane: ControlPlane, webhooks: tuple[WebhooksProcess, str]
) -> None:
    _process, token = webhooks
    name = f"good-{token}"
    manifest = queue_manifest(name, token, capability={"cpu": "4"}, deserved={"cpu": "2"})
    manifest["metadata"]["annotations"] = {
        "volcano.sh/hierarchy": "a",
        "volcano.sh/hierarchy-weights": "2",
    }
    try:
        created = control_plane.request("POST", f"{PG_PATH}/queues", manifest)
        assert created["spec"]["weight"] == 1
        assert created["spec"]["reclaimable"] is True
        assert created["metadata"]["annotations"]["volcano.sh/hierarchy"] == "root/a"
        assert created["metadata"]["annotations"]["volcano.sh/hierarchy-weights"] == "1/2"
        # An update through the validating webhook: the weight may change.
        created["spec"]["weight"] = 3
        updated = control_plane.request("PUT", f"{PG_PATH}/queues/{name}", created)
        assert updated["spec"]["weight"] == 3
    finally:
        delete_quietly(control_plane, f"{PG_PATH}/queues/{name}")


def _job(name: str, token: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "labels": {LABEL: token}},
        "spec": {
            "tasks": [{
                "replicas": 2,
                "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}],
                }},
            }],
            **spec,
        },
    }  # fmt: skip


def test_job_without_queue_or_scheduler_comes_back_defaulted(
    control_plane: ControlPlane,
    webhooks: tuple[WebhooksProcess, str],
    namespace: str,
    default_queue: None,
) -> None:
    _process, token = webhooks
    created = control_plane.request(
        "POST", f"{JOB_PATH}/namespaces/{namespace}/jobs", _job("plain", token)
    )
    spec = created["spec"]
    assert spec["queue"] == "default"
    assert spec["schedulerName"] == "volcano"
    assert spec["maxRetry"] == 3
    assert spec["minAvailable"] == 2
    task = spec["tasks"][0]
    assert task["name"] == "default0"
    assert task["minAvailable"] == 2
    assert task["maxRetry"] == 3


def test_invalid_job_is_refused_naming_the_field(
    control_plane: ControlPlane,
    webhooks: tuple[WebhooksProcess, str],
    namespace: str,
    default_queue: None,
) -> None:
    _process, token = webhooks
    with pytest.raises(ApiError) as refused:
        control_plane.request(
            "POST", f"{JOB_PATH}/namespaces/{namespace}/jobs", _job("greedy", token, minAvailable=5)
        )
    message = str(refused.value)
    assert 'admission webhook "validatejob.volcano.sh" denied the request' in message
    assert f"Job {namespace}/greedy" in message and "minAvailable" in message
    with pytest.raises(ApiError) as refused:
        control_plane.request(
            "POST",
            f"{JOB_PATH}/namespaces/{namespace}/jobs",
            _job("lost", token, queue=f"none-{token}"),
        )
    assert f"spec.queue: queue 'none-{token}' does not exist" in str(refused.value)


def test_pod_with_two_disruption_budgets_is_refused(
    control_plane: ControlPlane, webhooks: tuple[WebhooksProcess, str], namespace: str
) -> None:
    """``/pods/validate`` as the API server calls it: a volcano pod may carry one budget."""
    _process, token = webhooks
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "budget",
            "labels": {LABEL: token},
            "annotations": {
                "volcano.sh/jdb-min-available": "1",
                "volcano.sh/jdb-max-unavailable": "1",
            },
        },
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "main", "image": "busybox"}],
        },
    }
    with pytest.raises(ApiError) as refused:
        control_plane.request("POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    message = str(refused.value)
    assert 'admission webhook "validatepod.volcano.sh" denied the request' in message
    assert "not allow configure multiple annotations" in message


def test_unlabelled_objects_never_meet_the_test_webhooks(
    control_plane: ControlPlane, webhooks: tuple[WebhooksProcess, str], namespace: str
) -> None:
    """The objectSelector keeps other tests' objects away from these configurations."""
    job = _job("other", "x")
    job["metadata"]["labels"] = {}
    created = control_plane.request("POST", f"{JOB_PATH}/namespaces/{namespace}/jobs", job)
    # The mutating webhook would have named the task default0; nothing else names tasks.
    assert "name" not in created["spec"]["tasks"][0]


def test_pod_group_goes_to_its_namespace_queue(
    control_plane: ControlPlane, webhooks: tuple[WebhooksProcess, str], namespace: str
) -> None:
    _process, token = webhooks
    queue_name = f"team-{token}"
    control_plane.request("POST", f"{PG_PATH}/queues", queue_manifest(queue_name, token))
    try:
        control_plane.request(
            "PATCH",
            f"/api/v1/namespaces/{namespace}",
            {"metadata": {"annotations": {"scheduling.volcano.sh/queue-name": queue_name}}},
            content_type="application/merge-patch+json",
        )
        group = {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": "pg", "labels": {LABEL: token}},
            "spec": {"minMember": 1},
        }
        created = control_plane.request(
            "POST", f"{PG_PATH}/namespaces/{namespace}/podgroups", group
        )
        assert created["spec"]["queue"] == queue_name
        delete_quietly(control_plane, f"{PG_PATH}/namespaces/{namespace}/podgroups/pg")
    finally:
        delete_quietly(control_plane, f"{PG_PATH}/queues/{queue_name}")
