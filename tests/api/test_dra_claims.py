"""What a pod's ResourceClaims ask of each DeviceClass (``api.dra.task_claims``), transcribed
from upstream ``pkg/scheduler/cache/cache_dra_test.go`` ``TestBuildTaskDRAResreq`` (upstream
builds it in the cache; here the capacity plugin and the queue status read it from the
session's claims). Upstream's two error rows (a missing claim, a template claim not made
yet) are PreFilter reasons here: the task asks for nothing until its claims exist."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from volcano_py.api.dra import DraAmount, DraStore, task_claims
from volcano_py.api.task import TaskInfo


def _claim(name: str, *requests: tuple[str, str, int, dict[str, str]]) -> dict[str, Any]:
    devices = []
    for request, device_class, count, capacity in requests:
        exactly: dict[str, Any] = {"deviceClassName": device_class, "count": count}
        if capacity:
            exactly["capacity"] = {"requests": capacity}
        devices.append({"name": request, "exactly": exactly})
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": devices}},
    }


def _pod(*claims: tuple[str, str, bool]) -> dict[str, Any]:
    entries = [
        {"name": name, ("resourceClaimTemplateName" if template else "resourceClaimName"): ref}
        for name, ref, template in claims
    ]
    spec: dict[str, Any] = {"containers": [{"name": "c"}]}
    if entries:
        spec["resourceClaims"] = entries
    return {"metadata": {"name": "pod", "namespace": "default", "uid": "u"}, "spec": spec}


def _sum(found: dict[str, dict[str, DraAmount]]) -> dict[str, DraAmount]:
    total: dict[str, DraAmount] = {}
    for amounts in found.values():
        for name, amount in amounts.items():
            total.setdefault(name, DraAmount()).add(amount)
    return total


GI = Fraction(2**30)


@pytest.mark.parametrize(
    ("pod", "claims", "expected"),
    [
        pytest.param(_pod(), [], {}, id="No ResourceClaims"),
        pytest.param(
            _pod(("claim1", "claim1-obj", False)),
            [_claim("claim1-obj", ("req1", "gpu.com", 1, {}))],
            {"gpu.com": DraAmount(1)},
            id="Single ResourceClaim with one request",
        ),
        pytest.param(
            _pod(("claim1", "claim1-obj", False), ("claim2", "claim2-obj", False)),
            [
                _claim("claim1-obj", ("req1", "gpu.com", 2, {})),
                _claim("claim2-obj", ("req1", "gpu.com", 3, {})),
            ],
            {"gpu.com": DraAmount(5)},
            id="Multiple ResourceClaims aggregating same device class",
        ),
        pytest.param(
            _pod(("claim1", "claim-capacity", False)),
            [_claim("claim-capacity", ("req1", "gpu.com", 2, {"memory": "8Gi"}))],
            {"gpu.com": DraAmount(2, {"memory": 16 * GI})},
            id="Count multiplies consumable capacity",
        ),
        pytest.param(
            _pod(("claim1", "claim1-obj", False)),
            [_claim("claim1-obj", ("req1", "gpu.com", 1, {}), ("req2", "nic.com", 2, {}))],
            {"gpu.com": DraAmount(1), "nic.com": DraAmount(2)},
            id="Mixed device classes",
        ),
        pytest.param(_pod(("claim1", "missing-claim", False)), [], {}, id="Missing ResourceClaim"),
        pytest.param(
            _pod(("claim1", "claim-template", True)),
            [],
            {},
            id="Unresolved ResourceClaimTemplate",
        ),
    ],
)
def test_build_task_dra_resreq(
    pod: dict[str, Any], claims: list[dict[str, Any]], expected: dict[str, DraAmount]
) -> None:
    store = DraStore()
    for claim in claims:
        store.on_claim(False, claim)
    found = task_claims(TaskInfo.from_pod(pod), store.snapshot(), consumable=True)
    assert _sum(found) == expected


def test_capacity_is_not_counted_without_consumable_capacity() -> None:
    store = DraStore()
    store.on_claim(False, _claim("c", ("req1", "gpu.com", 2, {"memory": "8Gi"})))
    pod = TaskInfo.from_pod(_pod(("claim1", "c", False)))
    assert _sum(task_claims(pod, store.snapshot(), consumable=False)) == {"gpu.com": DraAmount(2)}
