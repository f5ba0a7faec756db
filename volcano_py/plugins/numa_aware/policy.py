"""The kubelet topology manager's policies, as ``numa-aware`` predicts them
(``plugins/numaaware/policy``).

Each hint provider (here only the CPU manager) offers, per resource, the NUMA node sets a
container's request could be served from, each marked preferred when it is one of the
narrowest possible. The policy merges one hint per resource (every combination, AND of the
masks), keeps the best merged hint (preferred first, then narrowest) and admits the container
by the policy's rule: ``none`` and ``best-effort`` always, ``restricted`` only with a preferred
hint, ``single-numa-node`` only with a preferred single-NUMA-node hint.

A NUMA affinity is an ``int`` bit mask: bit ``i`` is NUMA node ``i``. ``None`` means "any
NUMA node" (the provider has no preference).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

NONE: Final = "none"
BEST_EFFORT: Final = "best-effort"
RESTRICTED: Final = "restricted"
SINGLE_NUMA_NODE: Final = "single-numa-node"
POLICIES: Final = (NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE)


@dataclass(frozen=True, slots=True)
class TopologyHint:
    """A NUMA node set a request may be served from; ``affinity`` None means any."""

    affinity: int | None
    preferred: bool


# Per provider: resource -> its hints; a resource mapped to None has no preference, to an
# empty list has no possible placement. A provider with nothing to say gives an empty map.
ProviderHints = Mapping[str, "Sequence[TopologyHint] | None"]


def mask_of(numa_nodes: Sequence[int]) -> int:
    """The bit mask of the given NUMA node ids (``bitmask.NewBitMask``)."""
    mask = 0
    for node in numa_nodes:
        mask |= 1 << node
    return mask


def bits_of(mask: int) -> list[int]:
    """The NUMA node ids set in ``mask``, ascending (``GetBits``)."""
    return [bit for bit in range(mask.bit_length()) if mask >> bit & 1]


def is_narrower(mask: int, other: int) -> bool:
    """``IsNarrowerThan``: fewer NUMA nodes, or as many and lower-numbered ones."""
    count, other_count = mask.bit_count(), other.bit_count()
    if count == other_count:
        return mask < other
    return count < other_count


def iterate_masks(numa_nodes: Sequence[int]) -> Iterator[int]:
    """Every non-empty set of the NUMA nodes, smallest sets first (``IterateBitMasks``)."""
    for size in range(1, len(numa_nodes) + 1):
        for chosen in itertools.combinations(numa_nodes, size):
            yield mask_of(chosen)


def filter_providers_hints(providers_hints: Sequence[ProviderHints]) -> list[list[TopologyHint]]:
    """One list of candidate hints per (provider, resource) (``filterProvidersHints``)."""
    all_hints: list[list[TopologyHint]] = []
    for hints in providers_hints:
        if not hints:
            # The provider has no preference for any resource: any NUMA node will do.
            all_hints.append([TopologyHint(None, True)])
            continue
        for resource_hints in hints.values():
            if resource_hints is None:
                all_hints.append([TopologyHint(None, True)])
            elif len(resource_hints) == 0:
                # No placement is possible: the merge can only give a non-preferred hint.
                all_hints.append([TopologyHint(None, False)])
            else:
                all_hints.append(list(resource_hints))
    return all_hints


def merge_permutation(
    numa_nodes: Sequence[int], permutation: Sequence[TopologyHint]
) -> TopologyHint:
    """AND of the permutation's masks (any-NUMA counts as all nodes); preferred only if every
    hint of it is (``mergePermutation``)."""
    default = mask_of(numa_nodes)
    merged = default
    preferred = True
    for hint in permutation:
        merged &= default if hint.affinity is None else hint.affinity
        preferred = preferred and hint.preferred
    return TopologyHint(merged, preferred)


def merge_filtered_hints(
    numa_nodes: Sequence[int], filtered_hints: Sequence[Sequence[TopologyHint]]
) -> TopologyHint:
    """The best merged hint over every combination (``mergeFilteredHints``): preferred beats
    non-preferred, then the narrower wins; an empty merge never counts. Without any, the
    non-preferred any-NUMA hint over all nodes."""
    best = TopologyHint(mask_of(numa_nodes), False)
    for permutation in itertools.product(*filtered_hints):
        merged = merge_permutation(numa_nodes, permutation)
        assert merged.affinity is not None
        if merged.affinity == 0:
            continue
        if merged.preferred and not best.preferred:
            best = merged
            continue
        if best.preferred and not merged.preferred:
            continue
        assert best.affinity is not None
        if is_narrower(merged.affinity, best.affinity):
            best = merged
    return best


def filter_single_numa_hints(
    all_hints: Sequence[Sequence[TopologyHint]],
) -> list[list[TopologyHint]]:
    """Only the preferred hints of any NUMA node or of exactly one (``filterSingleNumaHints``)."""
    return [
        [
            hint
            for hint in hints
            if hint.preferred and (hint.affinity is None or hint.affinity.bit_count() == 1)
        ]
        for hints in all_hints
    ]


# (providers' hints) -> (best hint, admitted)
Policy = Callable[[Sequence[ProviderHints]], tuple[TopologyHint, bool]]


def policy_for(name: str, numa_nodes: Sequence[int]) -> Policy:
    """The kubelet topology manager policy ``name`` on a node with ``numa_nodes``
    (``GetPolicy``); an unknown name behaves as ``none``, as upstream."""
    nodes = list(numa_nodes)

    def none(_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        return TopologyHint(None, False), True

    def best_effort(hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        return merge_filtered_hints(nodes, filter_providers_hints(hints)), True

    def restricted(hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        best = merge_filtered_hints(nodes, filter_providers_hints(hints))
        return best, best.preferred

    def single_numa_node(hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        filtered = filter_single_numa_hints(filter_providers_hints(hints))
        best = merge_filtered_hints(nodes, filtered)
        return best, best.preferred

    policies: dict[str, Policy] = {
        NONE: none,
        BEST_EFFORT: best_effort,
        RESTRICTED: restricted,
        SINGLE_NUMA_NODE: single_numa_node,
    }
    return policies.get(name, none)
