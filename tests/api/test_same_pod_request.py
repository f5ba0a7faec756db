"""``same_pod_request``: when the cache may keep a pod's parsed request across an update."""

from __future__ import annotations

import copy
from typing import Any

from volcano_py.api.resource import pod_request, same_pod_request


def _pod(status: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}
    return {"metadata": {"name": "p"}, "spec": spec, "status": status or {"phase": "Pending"}}


def test_a_status_only_update_of_a_shared_spec_keeps_the_request() -> None:
    old = _pod()
    new = {**old, "status": {"phase": "Running", "containerStatuses": [{"name": "c"}]}}
    assert same_pod_request(old, new)
    assert pod_request(new) == pod_request(old)


def test_an_equal_spec_decoded_afresh_keeps_the_request() -> None:
    """A watch event decodes a new ``spec`` object on every update (a label patch, say)."""
    old = _pod()
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"tick": "1"}
    assert new["spec"] is not old["spec"]
    assert same_pod_request(old, new)
    assert pod_request(new) == pod_request(old)


def test_a_changed_spec_is_parsed_again() -> None:
    old = _pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert not same_pod_request(old, new)
    assert pod_request(new) != pod_request(old)


def test_a_container_status_reporting_resources_is_parsed_again() -> None:
    """In-place resize: the reported resources count, so the status matters."""
    old = _pod()
    resized = {"name": "c", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
    new = {**old, "status": {"phase": "Running", "containerStatuses": [resized]}}
    assert not same_pod_request(old, new)
    assert not same_pod_request(new, old)
    assert pod_request(new) != pod_request(old)


def test_a_bind_keeps_the_request() -> None:
    """A bind sets ``spec.nodeName``, which ``pod_request`` never reads: the same request,
    for a copy-on-write spec and for one decoded afresh; any other change parses again."""
    old = _pod()
    shared = {**old, "spec": {**old["spec"], "nodeName": "n1"}}
    decoded = copy.deepcopy(shared)
    for new in (shared, decoded):
        assert same_pod_request(old, new)
        assert pod_request(new) == pod_request(old)
    moved = {**shared, "spec": {**shared["spec"], "nodeName": "n2"}}
    assert same_pod_request(shared, moved)
    other = copy.deepcopy(shared)
    other["spec"]["priority"] = 5
    assert not same_pod_request(old, other)
    dropped = {**old, "spec": {"nodeName": "n1"}}
    assert not same_pod_request(old, dropped)


def test_a_binding_with_another_spec_change_is_parsed_again() -> None:
    old = _pod()
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = "n1"
    new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    assert not same_pod_request(old, new)
    extra = copy.deepcopy(old)
    extra["spec"]["nodeName"] = "n1"
    extra["spec"]["overhead"] = {"cpu": "1"}
    assert not same_pod_request(old, extra)
    assert pod_request(extra) != pod_request(old)


def test_without_the_shortcut_a_binding_is_parsed_again(monkeypatch: Any) -> None:
    from volcano_py.api import resource

    monkeypatch.setattr(resource, "_BIND_KEEPS_REQUEST", False)
    old = _pod()
    new = copy.deepcopy(old)
    new["spec"]["nodeName"] = "n1"
    assert not same_pod_request(old, new)
