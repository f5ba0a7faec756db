"""``--node-selector``: the scheduler keeps only nodes carrying one of the given labels
(Volcano's ``updateNodeSelectors`` / ``nodeCanAddCache``). Each selector is ``key:value``;
a node matches when any of its labels equals any selector (the selectors are ORed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

NodeSelector = frozenset[tuple[str, str]]


def parse_node_selector(entries: Iterable[str]) -> NodeSelector:
    """The (key, value) pairs of ``key:value`` entries, trimmed as upstream. Upstream skips
    an entry without a ``:`` or with nothing after it without a word; here that is a
    ValueError naming the entry, since a typo would otherwise widen the scheduler's nodes."""
    pairs: set[tuple[str, str]] = set()
    for entry in entries:
        if not entry:
            continue
        index = entry.find(":")
        if index < 0 or index >= len(entry) - 1:
            raise ValueError(f"--node-selector {entry!r}: expected key:value")
        pairs.add((entry[:index].strip(), entry[index + 1 :].strip()))
    return frozenset(pairs)


def node_selected(selector: NodeSelector, labels: Mapping[str, str] | None) -> bool:
    if not selector:
        return True
    return any((key, str(value)) in selector for key, value in (labels or {}).items())
