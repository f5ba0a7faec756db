"""``quota.min_resources`` answers pods whose resource fields read alike from one memo
(``quota._MIN_RESOURCES_MEMO``): it must give what ``pod_quota_usage`` gives, for any pod
(plain ones remembered, odd ones computed), raise the same errors, and hand out dicts no
later caller's change reaches."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.quantity import QuantityError
from volcano_py.controllers import quota
from volcano_py.controllers.quota import format_list, min_resources, pod_quota_usage, scaled

_AMOUNTS = st.sampled_from(
    ["1", "500m", "1Gi", "1024Mi", "0", 1, 2, 0.5, -0.0, 0.0, True, None, "bad", "2k"]
)
_NAMES = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "pods"])
_LISTS = st.one_of(st.none(), st.dictionaries(_NAMES, _AMOUNTS, max_size=3), st.just([]))


@st.composite
def _resources(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([None, [], "x"]))
    found: dict[str, Any] = {}
    for part in ("requests", "limits"):
        if draw(st.booleans()):
            found[part] = draw(_LISTS)
    return found


@st.composite
def _containers(draw: st.DrawFn, init: bool) -> Any:
    container: dict[str, Any] = {"name": "c", "resources": draw(_resources())}
    if init and draw(st.booleans()):
        container["restartPolicy"] = draw(st.sampled_from(["Always", "Never", 3]))
    return container if draw(st.integers(0, 19)) else "not a container"


@st.composite
def _pods(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": draw(st.lists(_containers(False), max_size=3))}
    if draw(st.booleans()):
        spec["initContainers"] = draw(st.lists(_containers(True), max_size=2))
    if draw(st.integers(0, 3)) == 0:
        spec["resources"] = draw(_resources())
    if draw(st.integers(0, 3)) == 0:
        spec["overhead"] = draw(_LISTS)
    phase = draw(st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]))
    return {"spec": spec, "status": {"phase": phase}}


def _reference(pod: dict[str, Any], count: int) -> dict[str, str] | str:
    try:
        return format_list(scaled(pod_quota_usage(pod), count))
    except QuantityError as error:
        return f"error: {error}"


def _memoised(pod: dict[str, Any], count: int) -> dict[str, str] | str:
    try:
        return min_resources(pod, count)
    except QuantityError as error:
        return f"error: {error}"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_pods(), st.integers(0, 3)), min_size=1, max_size=6))
def test_the_memo_gives_what_the_computation_gives(cases: list[tuple[dict[str, Any], int]]) -> None:
    for pod, count in cases + cases:  # the second time from the memo
        assert _memoised(pod, count) == _reference(pod, count)


def test_alike_pods_share_one_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    computed: list[int] = []
    original = quota.pod_quota_usage

    def counting(pod: Any) -> Any:
        computed.append(1)
        return original(pod)

    monkeypatch.setattr(quota, "pod_quota_usage", counting)
    monkeypatch.setattr(quota, "_MIN_RESOURCES", {})
    container = {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    pods = [{"spec": {"containers": [dict(container)]}} for _ in range(5)]
    made = [min_resources(pod, 10) for pod in pods]
    assert len(computed) == 1
    assert made[0] == {
        "count/pods": "10",
        "cpu": "10",
        "memory": "10Gi",
        "pods": "10",
        "requests.cpu": "10",
        "requests.memory": "10Gi",
    }
    made[0]["cpu"] = "changed"  # a caller's copy: the memo is not reached
    assert min_resources(pods[1], 10)["cpu"] == "10"
    # A float amount (-0.0 equals 0.0) is computed each time.
    min_resources({"spec": {"containers": [{"resources": {"requests": {"cpu": 0.5}}}]}}, 1)
    min_resources({"spec": {"containers": [{"resources": {"requests": {"cpu": 0.5}}}]}}, 1)
    assert len(computed) == 3
