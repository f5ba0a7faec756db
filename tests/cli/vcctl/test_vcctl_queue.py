"""``vcctl queue ...`` and ``vqueues`` against a real HTTP server.

Transcribed from upstream pkg/cli/queue: queue_test.go ``TestCreateQueue``, ``TestGetQueue``
(2 cases), ``TestGetQueue_empty``, ``TestGetQueue_nonempty``, ``TestListQueue`` (1 case),
``TestListQueue_residualPg``; operate_test.go ``TestOperateQueue`` (7 cases); delete_test.go
``TestDeleteQueue``.
"""

from __future__ import annotations

import pytest

from volcano_py.cli.vcctl.queue import PodGroupStatistics, print_queues, print_vqueues

QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"
PODGROUPS = "/apis/scheduling.volcano.sh/v1beta1/podgroups"
TITLE = "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed"


def _queue(name: str, weight: int = 0, **extra):
    return {"metadata": {"name": name}, "spec": {"weight": weight}, **extra}


def _pg(name: str, queue: str, phase: str = ""):
    return {"metadata": {"name": name}, "spec": {"queue": queue}, "status": {"phase": phase}}


# queue_test.go TestCreateQueue
def test_create_queue(api, vcctl) -> None:
    api.on("POST", QUEUES, _queue("testQueue", 2))
    result = vcctl("queue", "create", "-n", "testQueue", "-w", "2")
    assert (result.code, result.out, result.err) == (0, "", "")
    assert api.made("POST")[0].body == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "testQueue"},
        "spec": {"weight": 2},
        "status": {"state": "Open"},
    }


def test_create_queue_with_a_state_warns_it_is_not_applied(api, vcctl) -> None:
    api.on("POST", QUEUES, _queue("q"))
    result = vcctl("queue", "create", "-n", "q", "-S", "Closed")
    assert result.code == 0
    assert "--state Closed was not applied" in result.err


# queue_test.go TestGetQueue: a name; no name is an error.
def test_get_queue(api, vcctl) -> None:
    api.on("GET", f"{QUEUES}/testQueue", _queue("testQueue", 2, status={"state": "Open"}))
    api.on(
        "GET",
        PODGROUPS,
        {
            "items": [
                _pg("a", "testQueue", "Running"),
                _pg("b", "testQueue", "Inqueue"),
                _pg("c", "other", "Running"),
            ]
        },
    )
    result = vcctl("queue", "get", "-n", "testQueue")
    assert result.code == 0
    assert result.out == (
        f"{TITLE}\n"
        "testQueue                2       Open            1       0       1       0       0       \n"  # noqa: E501
    )
    result = vcctl("queue", "get")
    assert (result.code, result.out) == (
        255,
        "Failed to get queue: name is mandatory to get the particular queue details\n",
    )


# queue_test.go TestGetQueue_empty: listing answers with an object that has no items.
def test_get_queue_empty(api, vcctl) -> None:
    api.on("GET", QUEUES, _queue("testQueue", 2))
    result = vcctl("queue", "list")
    assert (result.code, result.out) == (0, "No resources found\n")


# queue_test.go TestGetQueue_nonempty
def test_get_queue_nonempty(api, vcctl) -> None:
    api.on("GET", QUEUES, {"items": [_queue("testQueue", 2)]})
    api.on("GET", PODGROUPS, {"items": []})
    result = vcctl("queue", "list")
    assert result.code == 0
    assert result.out.splitlines()[1].split() == ["testQueue", "2", "0", "0", "0", "0", "0"]


# queue_test.go TestListQueue "Single queue with formatting"
def test_list_queue_formatting() -> None:
    queue = {
        "metadata": {"name": "test-queue"},
        "spec": {"weight": 1, "parent": "root"},
        "status": {"state": "Open"},
    }
    stats = {"test-queue": PodGroupStatistics(1, 2, 3, 4, 5)}
    assert print_queues([queue], stats) == (
        "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed\n"  # noqa: E501
        "test-queue               1       Open    root    1       2       3       4       5       \n"  # noqa: E501
    )


# queue_test.go TestListQueue_residualPg: a PodGroup of a queue that is gone is skipped.
def test_list_queue_residual_pg(api, vcctl) -> None:
    api.on("GET", QUEUES, {"items": [_queue("testQueue1"), _queue("testQueue2")]})
    api.on(
        "GET",
        PODGROUPS,
        {
            "items": [
                _pg("testPodGroup1", "testQueue1"),
                _pg("testPodGroup2", "testQueue2"),
                _pg("testPodGroup3", "testQueue3"),
            ]
        },
    )
    result = vcctl("queue", "list")
    assert result.out.strip() == (
        "Name                     Weight  State   Parent  Inqueue Pending Running Unknown Completed\n"  # noqa: E501
        "testQueue1               0                       0       0       0       0       0       \n"  # noqa: E501
        "testQueue2               0                       0       0       0       0       0"
    )


# operate_test.go TestOperateQueue: (case, name, action, weight, expected error or None)
OPERATE_CASES = [
    ("Normal Case Operate Queue Succeed, Action close", "normal-case-action-close", "close", 0,
     None),
    ("Normal Case Operate Queue Succeed, Action open", "normal-case-action-open", "open", 0, None),
    ("Normal Case Operate Queue Succeed, Update Weight", "normal-case-update-weight", "update", 3,
     None),
    ("Abnormal Case Update Queue Failed For Invalid Weight", "abnormal-case-invalid-weight",
     "update", 0, "when update queue abnormal-case-invalid-weight, weight must be specified, "
     "the value must be greater than 0"),
    ("Abnormal Case Operate Queue Failed For Name Not Specified", "", "", 0,
     "queue name must be specified"),
    ("Abnormal Case Operate Queue Failed For Action null", "abnormal-case-null-action", "", 0,
     "action can not be null"),
    ("Abnormal Case Operate Queue Failed For Action Invalid", "abnormal-case-invalid-action",
     "invalid", 0, "action invalid invalid, valid actions are open, close and update"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "name", "action", "weight", "error"), OPERATE_CASES, ids=[c[0] for c in OPERATE_CASES]
)
def test_operate_queue(api, vcctl, case, name, action, weight, error) -> None:
    api.on(
        "GET",
        f"{QUEUES}/{name}",
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "Queue",
            "metadata": {"name": name, "uid": "q-1"},
        },
    )
    api.on("POST", "/apis/bus.volcano.sh/v1alpha1/namespaces/default/commands", {})
    api.on("PATCH", f"{QUEUES}/{name}", {})
    result = vcctl("queue", "operate", "-n", name, "-a", action, "-w", str(weight))
    if error is not None:
        assert (result.code, result.out) == (255, f"Failed to operate queue: {error}\n")
        assert api.made("POST") == api.made("PATCH") == []
        return
    assert (result.code, result.out) == (0, "")
    if action == "update":
        (patch,) = api.made("PATCH")
        assert patch.body == {"spec": {"weight": 3}}
        assert patch.content_type == "application/merge-patch+json"
        return
    (post,) = api.made("POST")
    ref = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "name": name,
        "uid": "q-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert post.body == {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"generateName": f"{name}-{action}queue-", "ownerReferences": [ref]},
        "action": {"open": "OpenQueue", "close": "CloseQueue"}[action],
        "target": ref,
    }


# delete_test.go TestDeleteQueue
def test_delete_queue(api, vcctl) -> None:
    api.on("DELETE", f"{QUEUES}/testQueue", {})
    assert (vcctl("queue", "delete", "-n", "testQueue").code, api.made("DELETE")[0].path) == (
        0,
        f"{QUEUES}/testQueue",
    )
    result = vcctl("queue", "delete")
    assert (result.code, result.out) == (
        255,
        "Failed to delete queue: queue name must be specified\n",
    )


def test_vqueues_uses_the_queues_own_counts(api, tool) -> None:
    queue = _queue("q", 3, status={"state": "Open", "inqueue": 1, "pending": 2, "running": 4})
    api.on("GET", QUEUES, {"items": [queue]})
    api.on("GET", f"{QUEUES}/q", queue)
    expected = print_vqueues([queue])
    assert expected == (
        "Name                     Weight  State   Inqueue Pending Running Unknown \n"
        "q                        3       Open    1       2       4       0       \n"
    )
    assert tool("vqueues").out == expected
    assert tool("vqueues", "-n", "q").out == expected
