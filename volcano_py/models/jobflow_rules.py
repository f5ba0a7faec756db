"""What Volcano's JobFlow admission webhook refuses (``pkg/webhooks/admission/jobflows/
validate``): every dependsOn target must be a flow of the same JobFlow, and the flows must form
a directed acyclic graph. Upstream's words lead each message; the flow and target follow so the
user can find them. The model raises these for ``simulate`` and the CLI; the webhook says them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from volcano_py.models.job_rules import find_cycle

NOT_DAG: Final = "jobflow Flow is not DAG"
MAX_LABEL_VALUE: Final = 63
VERTEX_NOT_DEFINED: Final = "vertex is not defined"


class FlowView(Protocol):
    """What the rules read of a flow: its name and its dependsOn targets."""

    @property
    def name(self) -> str: ...

    @property
    def targets(self) -> Sequence[str]: ...


def flow_graph_problem(flows: Sequence[FlowView]) -> tuple[int, str] | None:
    """``validateJobFlowDAG``: (index of the flow to blame, message), or None.

    As upstream, a later flow of the same name replaces an earlier one in the graph (upstream
    admits duplicate names; they name the same job ``<flow>-<template>``)."""
    graph: dict[str, list[str]] = {}
    index_of: dict[str, int] = {}
    for index, flow in enumerate(flows):
        graph[flow.name] = list(flow.targets)
        index_of[flow.name] = index
    for name, targets in graph.items():
        for target in targets:
            if target not in graph:
                return index_of[name], (
                    f"{NOT_DAG}: {VERTEX_NOT_DEFINED}: {target} (flow {name!r} depends on"
                    f" {target!r}, which is not a flow of this JobFlow)"
                )
    cycle = find_cycle(graph)
    if cycle:
        path = " -> ".join([*cycle, cycle[0]])
        return index_of[cycle[0]], f"{NOT_DAG} (the flows depend on each other: {path})"
    return None


def load_vertices(graph: dict[str, list[str]]) -> str:
    """``LoadVertexs``'s check: '' when every edge ends at a vertex, else upstream's error."""
    for targets in graph.values():
        for target in targets:
            if target not in graph:
                return f"{VERTEX_NOT_DEFINED}: {target}"
    return ""


def is_dag(graph: dict[str, list[str]]) -> bool:
    """``IsDAG``: no cycle (a self edge is one)."""
    return not find_cycle(graph)


def created_by_label_problem(namespace: str, name: str, what: str) -> str:
    """The jobs carry ``volcano.sh/createdByJobFlow`` / ``createdByJobTemplate`` labels of
    value ``<namespace>.<name>``; a label value longer than 63 characters makes the API server
    refuse every job of the flow, so say it when the JobFlow is applied. Upstream admits it
    and its controller retries the refused creation until it gives up."""
    value = f"{namespace}.{name}"
    if len(value) <= MAX_LABEL_VALUE:
        return ""
    return (
        f"the jobs' label volcano.sh/createdBy{what} would be {value!r}, {len(value)} characters"
        f" (<namespace>.<{what} name>); a label value may have at most {MAX_LABEL_VALUE}"
    )
