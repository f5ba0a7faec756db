"""network-topology-aware: the vectorised HyperNode pre-filter and HyperNode binpack agree
with their readable per-HyperNode references, cell for cell (DESIGN.md, hot path)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node_matrix import ResourceIndex
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.framework.arguments import Arguments
from volcano_py.plugins.network_topology_aware import (
    NetworkTopologyAwarePlugin,
    _holds_rows,
)

# Amounts near each other, so that the 0.1 tolerance of "fits" is exercised.
AMOUNTS = st.sampled_from([0.0, 0.05, 0.1, 0.15, 1.0, 2.0, 2.05, 4000.0, 4000.1, 8000.0])
SCALARS = ("pods", "nvidia.com/gpu", "example.com/unknown")


def _index() -> ResourceIndex:
    index = ResourceIndex()
    index.column("nvidia.com/gpu")
    return index


@st.composite
def _requests(draw: st.DrawFn) -> Resource:
    scalars = draw(st.dictionaries(st.sampled_from(SCALARS), AMOUNTS, max_size=3))
    return Resource(milli_cpu=draw(AMOUNTS), memory=draw(AMOUNTS), scalar_resources=scalars)


@st.composite
def _rows(draw: st.DrawFn, width: int) -> np.ndarray:
    count = draw(st.integers(min_value=1, max_value=6))
    cells = draw(st.lists(AMOUNTS, min_size=count * width, max_size=count * width))
    return np.array(cells, dtype=np.float64).reshape(count, width)


@settings(max_examples=300, deadline=None)
@given(request=_requests(), data=st.data())
def test_holds_rows_agrees_with_less_equal(request: Resource, data: st.DataObject) -> None:
    index = _index()
    # Rows narrower than the index too: a column the rows lack counts as zero.
    width = data.draw(st.integers(min_value=2, max_value=index.width))
    values = data.draw(_rows(width))
    vectorised = _holds_rows(request, values, index.columns)
    for row, holds in zip(values, vectorised.tolist(), strict=True):
        assert holds == request.less_equal(index.resource(row), DimensionDefault.ZERO)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_sub_job_binpacks_agree_with_sub_job_binpack(data: st.DataObject) -> None:
    index = _index()
    plugin = NetworkTopologyAwarePlugin(
        Arguments(
            {
                "hypernode.binpack.cpu": data.draw(st.integers(0, 3)),
                "hypernode.binpack.resources": "nvidia.com/gpu,example.com/unknown",
                "hypernode.binpack.resources.nvidia.com/gpu": data.draw(st.integers(0, 3)),
            }
        )
    )
    plugin._ssn = SimpleNamespace(matrix=SimpleNamespace(index=index))  # type: ignore[assignment]
    plugin.allocatable = data.draw(_rows(index.width))
    count = len(plugin.allocatable)
    plugin.used = data.draw(_rows(index.width).filter(lambda rows: len(rows) == count))
    names = ("cpu", "memory", "nvidia.com/gpu", "example.com/unknown")
    request = data.draw(
        st.dictionaries(st.sampled_from(names), st.sampled_from([0.5, 1.0, 2.0, 4000.0]))
    )
    hyper_nodes = np.arange(count, dtype=np.intp)
    vectorised = plugin._sub_job_binpacks(hyper_nodes, request).tolist()
    for h, score in zip(hyper_nodes.tolist(), vectorised, strict=True):
        assert score == plugin._sub_job_binpack(h, request)
