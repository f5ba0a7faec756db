"""predicates: kube-scheduler's filters, ported and vectorised (``plugins/predicates``).

``plugin`` wires the hooks; the other modules hold one concern each: ``selectors`` (label
selectors, node affinity), ``taints``, ``ports``, ``pod_affinity`` (+ ``affinity_tracker``),
``node_index`` (columnar node views for the vectorised versions), ``masks`` (the static and
pod-count NodeMasks), ``session_pods`` (each node's pods as the session changes them),
``simulation`` (the inter-pod affinity state of topology-aware preemption's dry run).
"""

from __future__ import annotations

from volcano_py.plugins.predicates.plugin import (
    ARGUMENTS,
    PLUGIN_NAME,
    UNSUPPORTED_ARGUMENTS,
    PredicatesPlugin,
    new,
)

__all__ = ["ARGUMENTS", "PLUGIN_NAME", "UNSUPPORTED_ARGUMENTS", "PredicatesPlugin", "new"]
