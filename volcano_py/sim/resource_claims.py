"""kube-controller-manager's resourceclaim controller, for the simulated cluster.

* A pod's ``resourceClaimTemplateName`` becomes a ResourceClaim of its own, owned by the pod
  (``<pod>-<claim>-<5 random characters>``, as ``generateName`` makes it; the characters come
  from the run's seed), and the pod's ``status.resourceClaimStatuses`` names it.
* When the pod ends (Succeeded, Failed) or is deleted, it leaves ``reservedFor`` of every claim;
  a claim reserved for nobody any more is deallocated (its devices are free again), and the
  claims made for the pod are deleted.

Only pods with ``spec.resourceClaims`` are looked at, and only when they changed.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.dra import has_claims
from volcano_py.sim.cluster import InMemoryCluster, revised

# apimachinery's rand.String alphabet (no vowels, no confusable digits).
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_TERMINAL: Final = frozenset({"Succeeded", "Failed"})
# names.SimpleNameGenerator: a generateName prefix is cut to leave room for the suffix.
_MAX_PREFIX: Final = 63 - 5


@dataclass
class ResourceClaimController:
    cluster: InMemoryCluster
    seed: int = 0
    # Pods to look at (changed since the last sync), and the uid of every pod with claims.
    dirty: set[str] = field(default_factory=set)
    uids: dict[str, str] = field(default_factory=dict)

    def on_pod(self, key: str, pod: Mapping[str, Any] | None) -> None:
        if pod is None:
            if key in self.uids:
                self.dirty.add(key)
            return
        if has_claims(pod):
            self.uids[key] = str((pod.get("metadata") or {}).get("uid") or key)
            self.dirty.add(key)

    def sync(self) -> None:
        while self.dirty:
            keys, self.dirty = sorted(self.dirty), set()
            for key in keys:
                self._sync_pod(key)

    def _sync_pod(self, key: str) -> None:
        pod = self.cluster.get("Pod", key)
        uid = self.uids.get(key, "")
        if pod is None or str((pod.get("metadata") or {}).get("uid") or key) != uid:
            self._release(key.split("/", 1)[0], uid)
            if pod is None:
                self.uids.pop(key, None)
                return
        if str((pod.get("status") or {}).get("phase") or "") in _TERMINAL:
            self._release(key.split("/", 1)[0], uid)
            return
        self._make_claims(key, pod)

    def _make_claims(self, key: str, pod: Mapping[str, Any]) -> None:
        namespace, pod_name = key.split("/", 1)
        meta = pod.get("metadata") or {}
        status = pod.get("status") or {}
        statuses = list(status.get("resourceClaimStatuses") or [])
        known = {str(s.get("name")) for s in statuses}
        added = False
        for entry in (pod.get("spec") or {}).get("resourceClaims") or []:
            name = str(entry.get("name") or "")
            template_name = entry.get("resourceClaimTemplateName")
            if not template_name or name in known:
                continue
            template = self.cluster.get("ResourceClaimTemplate", f"{namespace}/{template_name}")
            if template is None:
                continue  # the controller retries until the template exists
            claim_name = self._claim_name(pod_name, name, str(meta.get("uid") or key))
            template_meta = template.get("spec", {}).get("metadata") or {}
            claim = {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {
                    "name": claim_name,
                    "namespace": namespace,
                    "labels": dict(template_meta.get("labels") or {}),
                    "annotations": {
                        **dict(template_meta.get("annotations") or {}),
                        "resource.kubernetes.io/pod-claim-name": name,
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "name": pod_name,
                            "uid": str(meta.get("uid") or ""),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": copy.deepcopy((template.get("spec") or {}).get("spec") or {}),
            }
            self.cluster.create(claim)
            statuses.append({"name": name, "resourceClaimName": claim_name})
            added = True
        if added:
            updated = revised(pod, "status")
            updated["status"]["resourceClaimStatuses"] = statuses
            self.cluster.update(updated)

    def _claim_name(self, pod_name: str, claim: str, uid: str) -> str:
        digest = hashlib.sha256(f"{self.seed}\0{uid}\0{claim}".encode()).digest()
        suffix = "".join(_ALPHABET[b % len(_ALPHABET)] for b in digest[:5])
        return f"{pod_name}-{claim}-"[:_MAX_PREFIX] + suffix

    def _release(self, namespace: str, uid: str) -> None:
        if not uid:
            return
        for claim_key, claim in list(self.cluster.in_namespace("ResourceClaim", namespace).items()):
            owners = (claim.get("metadata") or {}).get("ownerReferences") or []
            owned = any(o.get("uid") == uid and o.get("controller") for o in owners)
            if owned:
                self.cluster.delete("ResourceClaim", claim_key)
                continue
            status = claim.get("status") or {}
            reserved = list(status.get("reservedFor") or [])
            kept = [r for r in reserved if r.get("uid") != uid]
            if len(kept) == len(reserved):
                continue
            updated = revised(claim, "status")
            updated["status"]["reservedFor"] = kept
            if not kept:
                updated["status"].pop("reservedFor", None)
                updated["status"].pop("allocation", None)  # deallocated: devices free again
            self.cluster.update(updated)
