"""overcommit reads the nodes' total use column by column off the session's matrix instead of
building a Resource per node (issue 14, "Session": 5k nodes every session open). The total
must be the node-by-node one bit for bit, with its scalar names in the same order
(``overcommit.nodes_used_reference``), for any rows: fractions, zeros and negative zeros,
scalars declared by some nodes and not others, columns registered after some rows were set,
and a node list in another order than the rows."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.resource import Resource
from volcano_py.framework.session import Session
from volcano_py.plugins.overcommit import nodes_used, nodes_used_reference

SCALARS = ("pods", "nvidia.com/gpu", "example.com/fpga")
values = st.one_of(
    st.sampled_from([0.0, -0.0, 0.0, 1.0, 0.1, 1000.0, 2.0**60]),
    st.floats(min_value=-1e6, max_value=1e12, allow_nan=False, allow_infinity=False),
)
nodes_drawn = st.lists(
    st.tuples(
        values,
        values,
        st.dictionaries(st.sampled_from(SCALARS), values),
        st.frozensets(st.sampled_from(SCALARS)),
    ),
    max_size=12,
)


def _bits(resource: Resource) -> Any:
    return (
        resource.milli_cpu.hex(),
        resource.memory.hex(),
        [(name, value.hex()) for name, value in resource.scalar_resources.items()],
        resource.max_task_num,
    )


@settings(max_examples=400, deadline=None)
@given(nodes_drawn, st.randoms(use_true_random=False), st.booleans())
def test_the_column_sums_are_the_node_by_node_sum(
    drawn: list[tuple[float, float, dict[str, float], frozenset[str]]], rng: Any, late: bool
) -> None:
    matrix = NodeMatrix()
    nodes = []
    for number, (cpu, memory, scalars, declared) in enumerate(drawn):
        node = NodeInfo(f"n{number}", matrix, matrix.add_row(), defined_scalars=declared)
        used = Resource(milli_cpu=cpu, memory=memory)
        used.scalar_resources.update(scalars)
        for name in declared:
            matrix.index.column(name)
        row = matrix.vector(used)
        matrix.used[node.row, : len(row)] = row
        nodes.append(node)
    if late:
        matrix.index.column("example.com/late")  # registered, the arrays not widened yet
    rng.shuffle(nodes)
    ssn = cast(Session, SimpleNamespace(node_list=nodes, matrix=matrix))
    assert _bits(nodes_used(ssn)) == _bits(nodes_used_reference(ssn))
