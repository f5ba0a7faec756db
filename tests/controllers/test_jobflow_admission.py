"""The JobFlow validating webhook (upstream ``pkg/webhooks/admission/jobflows/validate/
util_test.go`` TestIsDAG and ``validate_jobflow_test.go`` TestValidateJobFlowCreate), as the
model checks it (``simulate``, the CLI) and as ``/jobflows/validate`` answers."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from volcano_py.models.jobflow_rules import is_dag, load_vertices
from volcano_py.models.validation import ModelError, parse_object
from volcano_py.operator.webhooks import admit_jobflows
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict

# TestIsDAG: (graph, isDAG, isErr); isDAG is not checked when LoadVertexs fails.
IS_DAG_CASES = [
    ({"1": ["2"], "2": ["1", "3"]}, False, True),
    ({"1": ["2"], "2": ["3"], "3": ["1"]}, False, False),
    ({"1": ["2"], "2": ["1", "3"], "3": []}, False, False),
    ({"1": ["2", "3"], "2": ["3"], "3": ["4"], "4": []}, True, False),
    ({"1": ["2", "3"], "2": ["4", "5"], "3": [], "4": [], "5": []}, True, False),
    ({"1": ["2", "3", "4"], "2": ["3"], "3": ["4"], "4": ["5"], "5": []}, True, False),
    (
        {"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": []},
        True,
        False,
    ),
    (
        {"1": ["2", "3", "4"], "2": ["3", "5"], "3": ["5"], "4": ["3", "5"], "5": ["5", "3"]},
        False,
        False,
    ),
]


@pytest.mark.parametrize(("graph", "dag", "error"), IS_DAG_CASES)
def test_is_dag(graph: dict[str, list[str]], dag: bool, error: bool) -> None:
    """util_test.go TestIsDAG."""
    problem = load_vertices(graph)
    assert bool(problem) == error
    if not error:
        assert is_dag(graph) == dag


def _flow(name: str, *targets: str) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": list(targets)}} if targets else {"name": name}


def _jobflow(*flows: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": "valid-jobflow", "namespace": "test"},
        "spec": {"flows": list(flows), "jobRetainPolicy": "retain"},
    }


# TestValidateJobFlowCreate: (case, flows, expected error ('' when admitted)).
CREATE_CASES = [
    (
        "validate valid-jobflow",
        [_flow("a"), _flow("b", "a"), _flow("c", "a", "b"), _flow("d", "b"), _flow("e", "c", "d")],
        "",
    ),
    (
        "validate valid-jobflow with duplicate flow name",
        [
            _flow("a"),
            _flow("a"),
            _flow("b", "a"),
            _flow("c", "a", "b"),
            _flow("d", "b"),
            _flow("e", "c", "d"),
        ],
        "",
    ),
    (
        "validate valid-jobflow with miss flow name a",
        [_flow("b", "a"), _flow("c", "a", "b"), _flow("d", "b"), _flow("e", "c", "d")],
        "jobflow Flow is not DAG: vertex is not defined: a",
    ),
    (
        "validate valid-jobflow with flows not dag",
        [
            _flow("a", "b"),
            _flow("b", "a"),
            _flow("c", "a", "b"),
            _flow("d", "b"),
            _flow("e", "c", "d"),
        ],
        "jobflow Flow is not DAG",
    ),
    (
        "validate valid-jobflow with lows with muti c",
        [_flow("a"), _flow("b", "a"), _flow("c", "a"), _flow("c", "b")],
        "",
    ),
]


def _review(obj: dict[str, Any], operation: str = "CREATE") -> Verdict:
    request = AdmissionRequest("1", operation, "JobFlow", "valid-jobflow", "test", obj, None)
    view: Any = None  # the JobFlow webhook looks nothing up
    return asyncio.run(admit_jobflows.validate(request, view, WebhookOptions()))


@pytest.mark.parametrize(("case", "flows", "error"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_validate_jobflow_create(case: str, flows: list[dict[str, Any]], error: str) -> None:
    """validate_jobflow_test.go TestValidateJobFlowCreate, through the model and the webhook."""
    document = _jobflow(*flows)
    verdict = _review(document)
    assert verdict.allowed == (not error), verdict.message
    if error:
        assert error in verdict.message
        with pytest.raises(ModelError, match=error):
            parse_object(document)
    else:
        parse_object(document)


def test_refusals_name_the_flow_and_field() -> None:
    with pytest.raises(ModelError) as unknown:
        parse_object(_jobflow(_flow("a"), _flow("b", "a", "x")))
    assert "JobFlow test/valid-jobflow: spec.flows[1].dependsOn.targets:" in str(unknown.value)
    assert "flow 'b' depends on 'x', which is not a flow of this JobFlow" in str(unknown.value)
    with pytest.raises(ModelError) as cycle:
        parse_object(_jobflow(_flow("a", "c"), _flow("b", "a"), _flow("c", "b")))
    assert "spec.flows[0].dependsOn.targets: jobflow Flow is not DAG" in str(cycle.value)
    assert "a -> c -> b -> a" in str(cycle.value)
    with pytest.raises(ModelError, match=re.escape("spec.flows[0].name")):
        parse_object(_jobflow({"name": ""}))
    with pytest.raises(ModelError, match="jobRetainPolicy"):
        parse_object({**_jobflow(_flow("a")), "spec": {"jobRetainPolicy": "keep"}})


def test_a_self_dependency_is_a_cycle() -> None:
    verdict = _review(_jobflow(_flow("a", "a")))
    assert not verdict.allowed
    assert "jobflow Flow is not DAG" in verdict.message


def test_probes_and_patches_are_admitted_with_a_warning() -> None:
    flow = {
        "name": "b",
        "dependsOn": {"targets": ["a"], "probe": {"tcpSocketList": [{"port": 80}]}},
        "patch": {"jobSpec": {"queue": "other"}},
    }
    verdict = _review(_jobflow(_flow("a"), flow), operation="UPDATE")
    assert verdict.allowed
    assert len(verdict.warnings) == 2
    assert "spec.flows[1].dependsOn.probe: not acted on" in verdict.warnings[0]
    assert "spec.flows[1].patch: not acted on" in verdict.warnings[1]


def test_delete_is_not_judged() -> None:
    assert _review(_jobflow(_flow("a", "a")), operation="DELETE").allowed


def test_a_name_too_long_for_the_jobs_labels_is_refused() -> None:
    """Beyond upstream: ``<namespace>.<name>`` is a label value of every job (63 at most)."""
    long_flow = _jobflow(_flow("a"))
    long_flow["metadata"]["name"] = "f" * 60
    verdict = _review(long_flow)
    assert not verdict.allowed
    assert "metadata.name: the jobs' label volcano.sh/createdByJobFlow would be" in verdict.message
    long_template = _jobflow(_flow("t" * 60))
    verdict = _review(long_template)
    assert not verdict.allowed
    assert "spec.flows[0].name: the jobs' label volcano.sh/createdByJobTemplate" in (
        verdict.message
    )


# test/e2e/admission/jobflow_validation_test.go: (It, flows, expected error ('' admitted)).
E2E_CASES = [
    (
        "Should allow jobflow creation with valid DAG structure",
        [_flow("a"), _flow("b", "a"), _flow("c", "a", "b"), _flow("d", "b"), _flow("e", "c", "d")],
        "",
    ),
    (
        "Should allow jobflow creation with duplicate flow names",
        [_flow("a"), _flow("a"), _flow("b", "a")],
        "",
    ),
    (
        "Should reject jobflow creation with missing flow definition",
        [_flow("b", "a"), _flow("c", "a", "b")],
        "jobflow Flow is not DAG: vertex is not defined",
    ),
    (
        "Should allow jobflow creation with multiple flows having same dependency target",
        [_flow("a"), _flow("b", "a"), _flow("c", "a"), _flow("c", "b")],
        "",
    ),
    (
        "Should allow jobflow creation with simple linear dependency chain",
        [_flow("start"), _flow("middle", "start"), _flow("end", "middle")],
        "",
    ),
    (
        "Should allow jobflow creation with complex valid DAG structure",
        [
            _flow("root1"),
            _flow("root2"),
            _flow("level1-a", "root1"),
            _flow("level1-b", "root2"),
            _flow("level2", "level1-a", "level1-b"),
            _flow("final", "level2"),
        ],
        "",
    ),
    ("Should allow jobflow creation with empty flows list", [], ""),
    (
        "Should allow jobflow creation with single flow (no dependencies)",
        [_flow("single-flow")],
        "",
    ),
    (
        "Should reject jobflow creation with self-dependency",
        [_flow("self-dependent", "self-dependent")],
        "jobflow Flow is not DAG",
    ),
]


@pytest.mark.parametrize(("case", "flows", "error"), E2E_CASES, ids=[c[0] for c in E2E_CASES])
def test_jobflow_validation_e2e(case: str, flows: list[dict[str, Any]], error: str) -> None:
    """jobflow_validation_test.go (e2e admission), through the webhook."""
    verdict = _review(_jobflow(*flows))
    assert verdict.allowed == (not error), verdict.message
    assert error in verdict.message


def test_jobflow_update_with_valid_dag_is_allowed() -> None:
    """jobflow_validation_test.go: Should allow jobflow update with valid DAG structure."""
    assert _review(_jobflow(_flow("a"), _flow("b", "a"))).allowed
    assert _review(_jobflow(_flow("a"), _flow("b", "a"), _flow("c", "b")), "UPDATE").allowed
