"""How many feasible nodes a task's node search looks for (``--minimum-feasible-nodes``,
``--minimum-percentage-nodes-to-find``, ``--percentage-nodes-to-find``): kube-scheduler's
adaptive rule. Its own module so the session can hold the options without importing the node
search, which reads the session.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FeasibilityOptions:
    """``--minimum-feasible-nodes``, ``--minimum-percentage-nodes-to-find``,
    ``--percentage-nodes-to-find``."""

    minimum_feasible_nodes: int = 100
    minimum_percentage: int = 5
    percentage: int = 0


def feasible_nodes_to_find(total: int, options: FeasibilityOptions = FeasibilityOptions()) -> int:
    """How many feasible nodes to look for among ``total`` (kube-scheduler's adaptive rule)."""
    if total <= options.minimum_feasible_nodes or options.percentage >= 100:
        return total
    percentage = options.percentage
    if percentage <= 0:
        percentage = max(50 - total // 125, options.minimum_percentage)
    return max(total * percentage // 100, options.minimum_feasible_nodes)
