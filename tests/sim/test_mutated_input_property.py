"""Property: valid Volcano YAML (a Job, a Queue, a PodGroup, a Pod), mutated by dropping,
renaming and retyping fields and by extreme values, never crashes simulate (exit 0, or exit 2
with an `error:` line naming the file and object; never a traceback), and simulate never
accepts what the cluster refuses: the API server's strict field validation and our admission
webhooks (which follow upstream's), run on the same object as the live webhook server runs
them."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from volcano_py.cli.main import main
from volcano_py.models.registry import model_for
from volcano_py.models.strict_fields import core_problems, custom_problems
from volcano_py.operator.webhooks import admit_jobs, admit_podgroups, admit_queues
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": 2}},
}
CONTAINER = {
    "name": "c", "image": "busybox", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}
}
BASES: dict[str, dict[str, Any]] = {
    "job": {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "job1", "namespace": "default", "labels": {"team": "a"}},
        "spec": {
            "minAvailable": 2,
            "schedulerName": "volcano",
            "queue": "default",
            "maxRetry": 3,
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "plugins": {"svc": [], "env": []},
            "tasks": [
                {"name": "worker", "replicas": 2, "minAvailable": 2,
                 "template": {"metadata": {"labels": {"role": "w"}},
                              "spec": {"restartPolicy": "Never", "containers": [CONTAINER]}}},
            ],
        },
    },
    "queue": {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "team-a"},
        "spec": {"weight": 2, "reclaimable": True, "capability": {"cpu": "8", "memory": "16Gi"},
                 "deserved": {"cpu": "2"}, "guarantee": {"resource": {"cpu": "1"}}},
    },
    "podgroup": {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "default"},
        "spec": {"minMember": 1, "queue": "default", "minResources": {"cpu": "1"}},
    },
    "pod": {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "pod1", "namespace": "default",
                     "annotations": {"scheduling.k8s.io/group-name": "pg1"}},
        "spec": {"schedulerName": "volcano", "containers": [CONTAINER],
                 "tolerations": [{"key": "k", "operator": "Exists"}]},
    },
}

# Extreme and wrongly typed values; no in-range size that would make simulate build 100,000
# pods (that is a benchmark, not a property).
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([2**31, 2**63, 2**70, 200_000, -(2**63) - 1, 10**12]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["1e30", "99999999999999999Ei", "x" * 300, "-1", "1Gi", "", "Closed", "*"]),
    st.lists(st.integers(-2, 2), max_size=2),
    st.dictionaries(st.sampled_from(["a", "cpu", "name", "x/y"]), st.integers(-1, 1), max_size=2),
)
SUFFIXES = st.sampled_from(["s", "_", "X", "", "Name"])


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append((*prefix, key))
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.append((*prefix, index))
            found += _paths(child, (*prefix, index))
    return found


def _at(document: Any, path: tuple) -> Any:
    for part in path:
        document = document[part]
    return document


@st.composite
def mutated(draw: st.DrawFn, name: str) -> dict[str, Any]:
    document = copy.deepcopy(BASES[name])
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(document) if p not in (("apiVersion",), ("kind",))]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, key = _at(document, path[:-1]), path[-1]
        operation = draw(st.sampled_from(["drop", "rename", "retype", "retype"]))
        if operation == "drop":
            del parent[key]
        elif operation == "rename" and isinstance(key, str):
            parent[key + draw(SUFFIXES)] = parent.pop(key)
        else:
            parent[key] = draw(VALUES)
    return document


def _request(obj: dict[str, Any]) -> AdmissionRequest:
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return AdmissionRequest(
        uid="u", operation="CREATE", kind=str(obj["kind"]), name=str(metadata.get("name") or ""),
        namespace=str(metadata.get("namespace") or ""), object=copy.deepcopy(obj),
        old_object=None,
    )


class _View:
    async def queues(self) -> dict[str, dict[str, Any]]:
        return {name: {"metadata": {"name": name}, "spec": {"weight": 1},
                       "status": {"state": "Open"}} for name in ("root", "default")}

    async def namespace_annotations(self, namespace: str) -> dict[str, str]:
        return {}


def _cluster_refuses(obj: dict[str, Any]) -> str:
    """Why the API server (strict fields) or our webhook would refuse the object, or ''."""
    model = model_for(str(obj.get("apiVersion")), str(obj.get("kind")))
    problems = custom_problems(obj, model) if model else core_problems(obj, "V1Pod")
    if problems:
        return problems[0].path
    handler = {"Job": admit_jobs, "Queue": admit_queues, "PodGroup": admit_podgroups}.get(
        str(obj["kind"])
    )
    if handler is None:
        return ""
    verdict = asyncio.run(handler.validate(_request(obj), _View(), WebhookOptions()))
    if verdict.allowed or "unable to find queue" in verdict.message:
        # SIMULATION.md: a PodGroup naming a queue that does not exist is taken and stays
        # unplaced (a dump's group may outlive its queue).
        return ""
    if ": not set, but spec.guarantee" in verdict.message:
        # Deliberate (sim/inputs.py, _check_queue_tree): simulate takes a proportion-style
        # queue with a guarantee and no deserved, as Volcano releases before the newest did.
        return ""
    return verdict.message


def _simulate(*documents: dict[str, Any]) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "in.yaml"
        path.write_text(yaml.safe_dump_all([NODE, *documents]))
        out, err = io.StringIO(), io.StringIO()
        # As in its own process: the command configures logging onto this run's stderr (an
        # earlier test's handler may hold a captured stream that is closed by now).
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        root.handlers.clear()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["simulate", str(path), "--cycles", "2"])
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
        return code, err.getvalue()


def _check(document: dict[str, Any], *others: dict[str, Any]) -> None:
    code, err = _simulate(*others, document)
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("error: "), err
        assert "in.yaml" in err, err
    refusal = _cluster_refuses(document)
    if refusal:
        assert code == 2, f"simulate took what the cluster refuses ({refusal}): {document}"


PROPERTY = settings(
    max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize("name", sorted(BASES))
def test_the_valid_bases_are_accepted(name):
    others = (BASES["podgroup"],) if name == "pod" else ()
    code, err = _simulate(*others, BASES[name])
    assert code == 0, err
    assert _cluster_refuses(BASES[name]) == ""


@PROPERTY
@given(mutated("job"))
def test_mutated_jobs(document):
    _check(document)


@PROPERTY
@given(mutated("queue"))
def test_mutated_queues(document):
    _check(document)


@PROPERTY
@given(mutated("podgroup"))
def test_mutated_podgroups(document):
    _check(document)


@PROPERTY
@given(mutated("pod"))
def test_mutated_pods(document):
    _check(document, BASES["podgroup"])
