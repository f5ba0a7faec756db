"""proportion's queue totals at open summed in one pass (``proportion._ONE_PASS_TOTALS``), kept
usages' amounts read flat (``_plugin_helpers._FLAT_USAGE``; issue 14, "Session"): the same
floats and the same scalar names in the same order as one ``Resource.add_all`` per total."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.resource import Resource
from volcano_py.plugins import proportion
from volcano_py.plugins._plugin_helpers import JobUsage, flat_amounts
from volcano_py.plugins.proportion import QueueAttributes

amounts = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.1, 1 / 3, -2.5, 2.0**53, math.inf, math.nan]),
    st.floats(-1e6, 1e6),
)
resources = st.builds(
    lambda cpu, memory, scalars: Resource(cpu, memory, scalars),
    amounts,
    amounts,
    st.dictionaries(st.sampled_from(["pods", "nvidia.com/gpu", "hugepages-2Mi"]), amounts),
)


def _bits(resource: Resource) -> Any:
    return (
        resource.milli_cpu.hex(),
        resource.memory.hex(),
        [(name, float(value).hex()) for name, value in resource.scalar_resources.items()],
    )


def _totals(usages: list[JobUsage], one_pass: bool) -> Any:
    """The totals ``on_session_open`` sums: one pass, or (its reference) one ``add_all`` each."""
    attr = QueueAttributes("q", 1)
    if one_pass:
        proportion._add_usages(attr, usages)
    else:
        attr.allocated.add_all(usage.allocated for usage in usages)
        attr.request.add_all(usage.request for usage in usages)
        attr.inqueue.add_all(usage.inqueue for usage in usages)
        attr.elastic.add_all(usage.elastic for usage in usages)
    return [_bits(attr.allocated), _bits(attr.request), _bits(attr.inqueue), _bits(attr.elastic)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(resources, resources, resources, resources, st.booleans()), max_size=12))
def test_one_pass_totals_are_the_add_all_totals(
    drawn: list[tuple[Resource, Resource, Resource, Resource, bool]],
) -> None:
    usages = []
    for allocated, request, inqueue, elastic, flat in drawn:
        usage = JobUsage(allocated, request, inqueue, elastic)
        if flat:
            usage.flat = flat_amounts(usage)
        usages.append(usage)
    assert _totals(usages, one_pass=True) == _totals(usages, one_pass=False)
