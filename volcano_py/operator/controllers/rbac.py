"""Every API request ``volcano-py controllers`` makes, as RBAC rules: what
``deploy/base/controllers-rbac.yaml`` grants (a test keeps the two equal; the cluster tests run
the controllers under exactly these rules)."""

from __future__ import annotations

from typing import Final

_WATCH: Final = frozenset({"list", "watch"})

# (API group, resource, verbs) cluster-wide.
CLUSTER_RULES: Final[tuple[tuple[str, str, frozenset[str]], ...]] = (
    # patch: job forwarding annotations; create and delete: the CronJob and JobFlow
    # controllers' jobs; delete: ttlSecondsAfterFinished.
    ("batch.volcano.sh", "jobs", frozenset({"list", "watch", "patch", "create", "delete"})),
    ("batch.volcano.sh", "jobs/status", frozenset({"update"})),
    ("batch.volcano.sh", "cronjobs", frozenset({"list", "watch"})),
    ("batch.volcano.sh", "cronjobs/status", frozenset({"update"})),
    ("flow.volcano.sh", "jobflows", _WATCH),
    ("flow.volcano.sh", "jobflows/status", frozenset({"update"})),
    ("flow.volcano.sh", "jobtemplates", _WATCH),
    ("flow.volcano.sh", "jobtemplates/status", frozenset({"update"})),
    ("bus.volcano.sh", "commands", frozenset({"list", "watch", "delete"})),
    ("", "pods", frozenset({"list", "watch", "create", "delete", "patch"})),
    ("", "events", frozenset({"create", "patch"})),
    (
        "scheduling.volcano.sh",
        "podgroups",
        frozenset({"get", "list", "watch", "create", "update", "delete"}),
    ),
    ("scheduling.volcano.sh", "queues", frozenset({"list", "watch", "patch"})),
    ("scheduling.volcano.sh", "queues/status", frozenset({"patch"})),
    ("scheduling.k8s.io", "priorityclasses", _WATCH),
    # The svc and ssh job plugins' objects, and the volume claims of a job's volumes.
    ("", "configmaps", frozenset({"get", "list", "watch", "create", "update", "delete"})),
    ("", "services", frozenset({"get", "list", "watch", "create", "update", "delete"})),
    ("", "secrets", frozenset({"get", "list", "watch", "create", "update", "delete"})),
    (
        "networking.k8s.io",
        "networkpolicies",
        frozenset({"get", "list", "watch", "create", "update", "delete"}),
    ),
    ("", "persistentvolumeclaims", frozenset({"get", "create", "update", "delete"})),
    # hyperNode-controller: discovered HyperNodes written, their nodeCount kept, nodes read.
    # (secrets get, for the ufm source's credentials, is granted above.)
    ("", "nodes", _WATCH),
    (
        "topology.volcano.sh",
        "hypernodes",
        frozenset({"list", "watch", "create", "update", "delete"}),
    ),
    ("topology.volcano.sh", "hypernodes/status", frozenset({"update"})),
)
# In the Lease's namespace, with leader election on.
LEADER_ELECTION_RULES: Final[tuple[tuple[str, str, frozenset[str]], ...]] = (
    ("coordination.k8s.io", "leases", frozenset({"get", "create", "update"})),
)
