"""Every API request the live scheduler makes, as RBAC rules: the least privilege that
``deploy/base/rbac.yaml`` grants (a test keeps the two equal; the cluster tests run the
scheduler under exactly these rules)."""

from __future__ import annotations

from typing import Final

# (API group, resource, verbs) cluster-wide.
CLUSTER_RULES: Final[tuple[tuple[str, str, frozenset[str]], ...]] = (
    ("", "pods", frozenset({"get", "list", "watch", "delete"})),
    ("", "pods/binding", frozenset({"create"})),
    ("", "pods/status", frozenset({"patch"})),
    ("", "nodes", frozenset({"get", "list", "watch", "patch"})),
    ("", "resourcequotas", frozenset({"list", "watch"})),
    ("", "configmaps", frozenset({"list", "watch"})),
    ("", "events", frozenset({"create", "patch"})),
    ("scheduling.volcano.sh", "queues", frozenset({"list", "watch", "create"})),
    ("scheduling.volcano.sh", "queues/status", frozenset({"patch"})),
    ("scheduling.volcano.sh", "podgroups", frozenset({"get", "list", "watch", "update"})),
    ("topology.volcano.sh", "hypernodes", frozenset({"list", "watch"})),
    ("nodeinfo.volcano.sh", "numatopologies", frozenset({"list", "watch"})),
    ("scheduling.k8s.io", "priorityclasses", frozenset({"list", "watch"})),
    ("policy", "poddisruptionbudgets", frozenset({"list", "watch"})),
    # DRA: the devices, their classes and the claims; at bind, a claim's allocation and
    # reservedFor are written (kube-scheduler's dynamicresources PreBind).
    ("resource.k8s.io", "deviceclasses", frozenset({"list", "watch"})),
    ("resource.k8s.io", "resourceslices", frozenset({"list", "watch"})),
    ("resource.k8s.io", "resourceclaimtemplates", frozenset({"list", "watch"})),
    ("resource.k8s.io", "resourceclaims", frozenset({"get", "list", "watch"})),
    ("resource.k8s.io", "resourceclaims/status", frozenset({"patch"})),
)
# (API group, resource, verbs) in the Lease's namespace, with leader election on.
LEADER_ELECTION_RULES: Final[tuple[tuple[str, str, frozenset[str]], ...]] = (
    ("coordination.k8s.io", "leases", frozenset({"get", "create", "update"})),
)
