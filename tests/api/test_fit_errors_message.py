"""``FitErrors.message``: the histogram counts every node once per reason, whether nodes share
one error object (the vectorised resource check) or each has its own."""

from __future__ import annotations

from volcano_py.api.types import FitError, FitErrors, Status, StatusCode


def error(*reasons: str) -> FitError:
    return FitError("", [Status(StatusCode.UNSCHEDULABLE, reason) for reason in reasons])


def test_shared_and_own_errors_count_alike() -> None:
    shared = error("Insufficient cpu")
    errors = FitErrors()
    for index in range(3):
        errors.nodes[f"shared-{index}"] = shared
    errors.set_node_error("own-0", error("Insufficient cpu"))
    errors.set_node_error("own-1", error("node(s) had untolerated taint", "Insufficient memory"))
    errors.set_node_error("empty", error(""))
    assert errors.message() == (
        "0/6 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint,"
        " 4 Insufficient cpu."
    )


def test_no_nodes_and_a_hyper_node() -> None:
    assert FitErrors(error="all nodes are unavailable").message() == "all nodes are unavailable"
    errors = FitErrors(hyper_node="s0")
    errors.set_node_error("n0", error("Insufficient cpu"))
    assert errors.message() == "In hyperNode s0: 0/1 nodes are available: 1 Insufficient cpu."
