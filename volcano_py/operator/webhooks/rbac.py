"""Every API request ``volcano-py webhooks`` makes as deployed, as RBAC rules: what
``deploy/base/webhooks-deployment.yaml`` grants (tests/operator/test_webhooks_deploy.py keeps
the two equal; tests/cluster/test_least_privilege.py runs the checks under them).

``--ca-cert-file`` (the CA put into Volcano's webhook configurations) also reads and updates
mutating/validatingwebhookconfigurations; deploy/base does not use it (cert-manager injects the
CA), so those rights are not granted: a deployment using the flag must grant them itself."""

from __future__ import annotations

from typing import Final

# (API group, resource, verbs) cluster-wide: the queues a Job or PodGroup names (lookups.py)
# and a PodGroup's namespace annotations.
CLUSTER_RULES: Final[tuple[tuple[str, str, frozenset[str]], ...]] = (
    ("scheduling.volcano.sh", "queues", frozenset({"list"})),
    ("", "namespaces", frozenset({"get"})),
)
