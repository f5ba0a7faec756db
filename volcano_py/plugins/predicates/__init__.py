"""predicates: kube-scheduler's filters, ported and vectorised (``plugins/predicates``).

``plugin`` wires the hooks; the other modules hold one concern each: ``ports``, ``masks`` (the
static and pod-count NodeMasks), ``simulation`` (the inter-pod affinity state of topology-aware
preemption's dry run).
What nodeorder needs too (``selectors``, ``taints``, ``pod_affinity`` +
``affinity_tracker``, ``node_index``, ``session_pods``, ``topology_spread``, ``podspec``) lives
in the shared helper package :mod:`volcano_py.plugins._kube_scheduling`, since plugins never
import each other.
"""

from __future__ import annotations

from volcano_py.plugins.predicates.plugin import (
    ARGUMENTS,
    PLUGIN_NAME,
    RETIRED_ARGUMENTS,
    UNSUPPORTED_ARGUMENTS,
    PredicatesPlugin,
    new,
)

__all__ = [
    "ARGUMENTS",
    "PLUGIN_NAME",
    "RETIRED_ARGUMENTS",
    "UNSUPPORTED_ARGUMENTS",
    "PredicatesPlugin",
    "new",
]
