"""``--enable-root-queue-protection`` (on by default, as vc-webhook-manager): an update may
not change the root queue's capability, deserved or guarantee (``validate_queue.go``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.server import build_app

Obj = dict[str, Any]


class View:
    async def queues(self) -> dict[str, Obj]:
        return {"root": root()}

    async def namespace_annotations(self, namespace: str) -> dict[str, str]:
        return {}


def root(**spec: Any) -> Obj:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "root"},
        "spec": {"weight": 1, **spec},
        "status": {"state": "Open"},
    }


def update(old: Obj, new: Obj, protection: bool = True) -> Obj:
    body = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u", "kind": {"group": "", "version": "", "kind": "Queue"},
            "operation": "UPDATE", "name": "root", "namespace": "", "object": new,
            "oldObject": old,
        },
    }  # fmt: skip

    async def go() -> Obj:
        app = build_app(View(), WebhookOptions(root_queue_protection=protection))
        async with TestClient(TestServer(app)) as client:
            answer = await client.post("/queues/validate", data=json.dumps(body).encode())
            response: Obj = (await answer.json())["response"]
            return response

    return asyncio.run(go())


BASE: Obj = {"capability": {"cpu": "8"}, "deserved": {"cpu": "4"}}


@pytest.mark.parametrize(
    "changed",
    [
        {"capability": {"cpu": "16"}},
        {"deserved": {"cpu": "2"}},
        {"guarantee": {"resource": {"cpu": "2"}}},
    ],
)
def test_root_resources_cannot_change(changed: Obj) -> None:
    old, new = root(**BASE), root(**{**BASE, **changed})
    response = update(old, new)
    assert response["allowed"] is False
    assert "root queue's resource attributes" in response["status"]["message"]
    assert update(old, new, protection=False)["allowed"] is True


def test_same_quantities_written_differently_and_other_fields_may_change() -> None:
    old = root(capability={"cpu": "1"})
    assert update(old, root(capability={"cpu": "1000m"}, weight=3))["allowed"] is True
