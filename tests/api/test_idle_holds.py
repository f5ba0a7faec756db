"""``NodeInfo.idle_holds`` / ``future_idle_holds`` read the fit off the matrix row; they must
answer as ``less_equal`` against the built ``idle`` / ``future_idle`` Resources do, for any
row, request and set of scalar columns (DESIGN.md "Hot path": the reference stays, a property
test proves the two agree)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.resource import DimensionDefault, Resource

SCALARS = ("nvidia.com/gpu", "example.com/fpga", "hugepages-2Mi")

# Values near each other and near MIN_RESOURCE's tolerance, fractions included.
amounts = st.one_of(
    st.sampled_from([0.0, 0.05, 0.1, 0.15, 1.0, 999.95, 1000.0, 1000.05, 1e9]),
    st.floats(min_value=0.0, max_value=1e10, allow_nan=False, allow_infinity=False),
)
scalar_maps = st.dictionaries(st.sampled_from(SCALARS), amounts, max_size=3)


def resource(cpu: float, memory: float, scalars: dict[str, float]) -> Resource:
    found = Resource(milli_cpu=cpu, memory=memory)
    found.scalar_resources.update(scalars)
    return found


@settings(max_examples=300, deadline=None)
@given(
    allocatable=st.tuples(amounts, amounts, scalar_maps),
    used=st.tuples(amounts, amounts, scalar_maps),
    releasing=st.tuples(amounts, amounts),
    pipelined=st.tuples(amounts, amounts, scalar_maps),
    request=st.tuples(amounts, amounts, scalar_maps),
    register_late=st.sampled_from([(), SCALARS[:1], SCALARS]),
)
def test_row_checks_agree_with_less_equal_on_built_resources(
    allocatable: tuple[float, float, dict[str, float]],
    used: tuple[float, float, dict[str, float]],
    releasing: tuple[float, float],
    pipelined: tuple[float, float, dict[str, float]],
    request: tuple[float, float, dict[str, float]],
    register_late: tuple[str, ...],
) -> None:
    matrix = NodeMatrix()
    node = NodeInfo("n", matrix, matrix.add_row())
    node.defined_scalars = frozenset(allocatable[2])
    matrix.set_allocatable(node.row, resource(*allocatable), resource(*allocatable))
    row = node.row
    # Vectors first: registering a scalar widens (replaces) the matrix's arrays.
    vectors = [matrix.vector(r) for r in (resource(*used), resource(*releasing, {}))]
    vectors.append(matrix.vector(resource(*pipelined)))
    matrix.fit_width()
    width = matrix.index.width
    held, leaving, reserved = (np.pad(v, (0, width - len(v))) for v in vectors)
    matrix.idle[row] -= held
    matrix.releasing[row] += leaving
    matrix.pipelined[row] += reserved
    for name in register_late:
        matrix.index.column(name)  # a column the rows may not have yet
    wanted = resource(*request)
    assert node.idle_holds(wanted) == wanted.less_equal(node.idle, DimensionDefault.ZERO)
    assert node.future_idle_holds(wanted) == wanted.less_equal(
        node.future_idle(), DimensionDefault.ZERO
    )
