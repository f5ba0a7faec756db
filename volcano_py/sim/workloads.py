"""Kubernetes' workload controllers, as a cluster dump holds their objects: apps/v1 Deployment
(-> ReplicaSet ``<name>-<pod-template-hash>``), ReplicaSet (-> pods ``<rs>-<5 chars>``),
StatefulSet (-> pods ``<name>-0`` .. ``<name>-<n-1>``, in order unless ``Parallel``) and
batch/v1 Job (-> ``parallelism`` pods, until ``completions`` succeeded or ``backoffLimit`` is
passed), with the owner references Kubernetes sets. Volcano's podgroup controller then groups
each owner's pods into one PodGroup ``podgroup-<owner uid>`` (``controlling_owner`` hands it
the owner, whose annotations it reads).

What Kubernetes draws at random (the pods' 5-character suffixes) is derived from ``--seed``,
the owner's uid, the simulated time and the position, as is the pod-template hash (a content
hash, as Kubernetes' is, though not the same number: a dump's own ReplicaSets are found by
their owner reference, never by name). Rollouts are not simulated: a Deployment whose template
no owned ReplicaSet matches gets a new one, and the old ones are left as they are.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from volcano_py.api.types import KUBE_DEFAULT_SCHEDULER_NAME
from volcano_py.controllers.raw import (
    controller_of,
    controller_reference,
    integer,
    items,
    mapping,
    metadata,
    name,
    namespace,
    pod_phase,
    spec,
    status,
    text,
    uid,
)
from volcano_py.controllers.vocabulary import PODGROUP_NAME_PREFIX
from volcano_py.sim.cluster import BATCH_JOB, InMemoryCluster, timestamp
from volcano_py.sim.loader import Document

APPS: Final = "apps/v1"
BATCH: Final = "batch/v1"
WORKLOAD_KINDS: Final = frozenset(
    {(APPS, "Deployment"), (APPS, "ReplicaSet"), (APPS, "StatefulSet"), (BATCH, "Job")}
)
# Kubernetes' rand.String alphabet (no vowels, no look-alikes).
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
_TEMPLATE_HASH_LABEL: Final = "pod-template-hash"
_REVISION_LABEL: Final = "controller-revision-hash"
_FINISHED: Final = frozenset({"Succeeded", "Failed"})
# Annotations a Deployment does not pass to its ReplicaSets (``skipCopyAnnotation``).
_NOT_COPIED: Final = (
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/",
)
# Fields read here, per kind; any other spec field is named in a warning.
_UNDERSTOOD: Final = {
    "Deployment": {"replicas", "selector", "template", "strategy", "revisionHistoryLimit",
                   "minReadySeconds", "progressDeadlineSeconds", "paused"},
    "ReplicaSet": {"replicas", "selector", "template", "minReadySeconds"},
    "StatefulSet": {"replicas", "selector", "template", "serviceName", "podManagementPolicy",
                    "volumeClaimTemplates", "updateStrategy", "revisionHistoryLimit",
                    "minReadySeconds", "persistentVolumeClaimRetentionPolicy", "ordinals"},
    "Job": {"parallelism", "completions", "completionMode", "backoffLimit", "suspend",
            "template", "selector", "manualSelector"},
}  # fmt: skip

PodSpecCheck = Callable[[Document, Any, str], None]


def is_workload(api_version: str, kind: str) -> bool:
    return (api_version, kind) in WORKLOAD_KINDS


# ---------------------------------------------------------------------- input


def check_workload(
    document: Document, check_pod_spec: PodSpecCheck
) -> tuple[dict[str, Any], list[str]]:
    """What the API server checks and defaults of a workload; warnings for fields that are
    not simulated."""
    obj = copy.deepcopy(document.obj)
    kind = str(obj.get("kind"))
    workload_spec = obj.setdefault("spec", {})
    if not isinstance(workload_spec, dict):
        raise document.error("spec", "expected an object")
    template = workload_spec.get("template")
    if not isinstance(template, dict):
        raise document.error("spec.template", "Required value")
    check_pod_spec(document, template.get("spec") or {}, "spec.template.spec")
    if not mapping(template.get("spec")).get("containers"):
        raise document.error("spec.template.spec.containers", "Required value")
    counts = ("parallelism", "completions", "backoffLimit") if kind == "Job" else ("replicas",)
    for field_name in counts:
        value = workload_spec.get(field_name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise document.error(f"spec.{field_name}", f"expected an integer, got {value!r}")
        if isinstance(value, int) and value < 0:
            raise document.error(
                f"spec.{field_name}", f"Invalid value: {value}: must be greater than or equal to 0"
            )
    labels = mapping(mapping(template.get("metadata")).get("labels"))
    if kind == "Job":
        policy = mapping(template.get("spec")).get("restartPolicy")
        if policy not in ("Never", "OnFailure"):
            raise document.error(
                "spec.template.spec.restartPolicy",
                f'Unsupported value: "{policy or "Always"}": supported values: "OnFailure",'
                ' "Never"',
            )
        mode = workload_spec.get("completionMode", "NonIndexed")
        if mode not in ("NonIndexed", "Indexed"):
            raise document.error("spec.completionMode", f'Unsupported value: "{mode}"')
        if mode == "Indexed" and workload_spec.get("completions") is None:
            raise document.error(
                "spec.completions", "Required value: when completion mode is Indexed"
            )
    else:
        selector = workload_spec.get("selector")
        if not isinstance(selector, dict):
            raise document.error("spec.selector", "Required value")
        wanted = mapping(selector.get("matchLabels"))
        if any(labels.get(key) != value for key, value in wanted.items()):
            raise document.error(
                "spec.template.metadata.labels",
                "Invalid value: `selector` does not match template `labels`",
            )
    warnings = [
        f"{document.where}: {document.label}: spec.{field_name}: not simulated; ignored"
        for field_name in sorted(workload_spec)
        if field_name not in _UNDERSTOOD[kind]
    ]
    return obj, warnings


# ---------------------------------------------------------------------- helpers


def template_hash(template: Mapping[str, Any]) -> str:
    """A content hash of a pod template, spelt as Kubernetes spells its hashes (fnv-1a 32)."""
    value = 0x811C9DC5
    for byte in json.dumps(template, sort_keys=True).encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHABET[int(digit) % len(_ALPHABET)] for digit in str(value))


def random_suffix(seed: int, owner_uid: str, now: str, position: int) -> str:
    """``rand.String(5)``, drawn from --seed, the owner, the time and the position."""
    digest = hashlib.sha256(f"{seed}\0{owner_uid}\0{now}\0{position}".encode()).digest()
    return "".join(_ALPHABET[byte % len(_ALPHABET)] for byte in digest[:5])


def _active(pod: Mapping[str, Any]) -> bool:
    return pod_phase(pod) not in _FINISHED and not metadata(pod).get("deletionTimestamp")


def _running(pod: Mapping[str, Any]) -> bool:
    return pod_phase(pod) == "Running" and not metadata(pod).get("deletionTimestamp")


def _pods_by_owner(cluster: InMemoryCluster) -> dict[str, list[dict[str, Any]]]:
    owned: dict[str, list[dict[str, Any]]] = {}
    for _key, pod in cluster.items("Pod"):
        owner = controller_of(pod)
        if owner is not None:
            owned.setdefault(text(owner.get("uid")), []).append(pod)
    return owned


def controlling_owner(cluster: InMemoryCluster, pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ReplicaSet, StatefulSet or batch Job controlling ``pod``, for the podgroup
    controller (which reads the owner's annotations, as upstream's does)."""
    owner = controller_of(pod)
    if owner is None:
        return None
    kind, api_version = text(owner.get("kind")), text(owner.get("apiVersion"))
    stored = BATCH_JOB if kind == "Job" and api_version.startswith("batch/") else kind
    if stored not in ("ReplicaSet", "StatefulSet", BATCH_JOB):
        return None
    found = cluster.get(stored, f"{namespace(pod)}/{text(owner.get('name'))}")
    if found is None or uid(found) != text(owner.get("uid")):
        return None
    return found


class WorkloadControllers:
    """The Deployment, ReplicaSet, StatefulSet and Job controllers over one cluster."""

    def __init__(self, cluster: InMemoryCluster, seed: int, clock: Callable[[], float]) -> None:
        self.cluster = cluster
        self.seed = seed
        self.clock = clock
        # ReplicaSets by the uid of the Deployment controlling them, rebuilt per step of a sync.
        self._replica_sets: dict[str, list[dict[str, Any]]] = {}

    def _index_replica_sets(self) -> None:
        self._replica_sets = {}
        for _key, rs in self.cluster.items("ReplicaSet"):
            owner = controller_of(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                self._replica_sets.setdefault(text(owner.get("uid")), []).append(rs)

    def sync(self) -> None:
        cluster = self.cluster
        if not any(
            cluster.of_kind(kind) for kind in ("Deployment", "ReplicaSet", "StatefulSet", BATCH_JOB)
        ):
            return
        self._index_replica_sets()
        for _key, deployment in list(cluster.items("Deployment")):
            # Writes only its own ReplicaSets, which nothing reads before the next index.
            self._sync_deployment(deployment)
        owned = _pods_by_owner(cluster)
        for _key, replica_set in list(cluster.items("ReplicaSet")):
            self._sync_replica_set(replica_set, owned.get(uid(replica_set), []))
        for _key, stateful_set in list(cluster.items("StatefulSet")):
            self._sync_stateful_set(stateful_set, owned.get(uid(stateful_set), []))
        for _key, job in list(cluster.items(BATCH_JOB)):
            self._sync_job(job, owned.get(uid(job), []))
        # A ReplicaSet's status changed: its Deployment's follows.
        self._index_replica_sets()
        for _key, deployment in list(cluster.items("Deployment")):
            self._deployment_status(deployment)

    @property
    def now(self) -> str:
        return timestamp(self.clock())

    # ------------------------------------------------------------------ writes

    def _write_status(self, obj: Mapping[str, Any], new_status: dict[str, Any]) -> None:
        if dict(status(obj)) == new_status:
            return
        updated = dict(obj)
        updated["status"] = new_status
        self.cluster.changes += 1
        self.cluster.update(updated)

    def _create_pod(
        self,
        template: Mapping[str, Any],
        owner: Mapping[str, Any],
        owner_ref: dict[str, Any],
        pod_name: str,
        labels: Mapping[str, str],
        annotations: Mapping[str, str] | None = None,
        generate_name: str | None = None,
    ) -> dict[str, Any]:
        template_meta = mapping(template.get("metadata"))
        pod_meta: dict[str, Any] = {
            "name": pod_name,
            "namespace": namespace(owner),
            "labels": {**mapping(template_meta.get("labels")), **labels},
            "ownerReferences": [owner_ref],
        }
        pod_annotations = {**mapping(template_meta.get("annotations")), **(annotations or {})}
        if pod_annotations:
            pod_meta["annotations"] = pod_annotations
        if generate_name:
            pod_meta["generateName"] = generate_name
        pod_spec = copy.deepcopy(dict(mapping(template.get("spec"))))
        # The API server's default: without one, the pod is kube-scheduler's, not ours.
        pod_spec.setdefault("schedulerName", KUBE_DEFAULT_SCHEDULER_NAME)
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": pod_meta,
            "spec": pod_spec,
            "status": {"phase": "Pending"},
        }
        self.cluster.changes += 1
        return self.cluster.create(pod)

    def _delete_pod(self, pod: Mapping[str, Any]) -> None:
        """As a controller's delete: a pod on a node terminates gracefully (gone next cycle)."""
        key = f"{namespace(pod)}/{name(pod)}"
        self.cluster.changes += 1
        if spec(pod).get("nodeName") and pod_phase(pod) not in _FINISHED:
            marked = copy.deepcopy(dict(pod))
            marked["metadata"]["deletionTimestamp"] = self.now
            self.cluster.update(marked)
        else:
            self.cluster.delete("Pod", key)

    def _generated_names(self, owner: Mapping[str, Any], prefix: str, count: int) -> list[str]:
        """``count`` pod names ``<prefix><5 chars>`` (generateName), none of them taken."""
        names: list[str] = []
        position = 0
        while len(names) < count:
            pod_name = prefix + random_suffix(self.seed, uid(owner), self.now, position)
            position += 1
            if pod_name not in names and (
                self.cluster.get("Pod", f"{namespace(owner)}/{pod_name}") is None
            ):
                names.append(pod_name)
        return names

    def _drop_pod_group(self, owner: Mapping[str, Any]) -> None:
        """Volcano's podgroup controller deletes ``podgroup-<uid>`` of a ReplicaSet or
        StatefulSet scaled to zero (``addReplicaSet``, ``addStatefulSet``)."""
        key = f"{namespace(owner)}/{PODGROUP_NAME_PREFIX}{uid(owner)}"
        if self.cluster.delete("PodGroup", key) is not None:
            self.cluster.changes += 1

    # ------------------------------------------------------------------ Deployment

    def _sync_deployment(self, deployment: Mapping[str, Any]) -> None:
        dep_spec = spec(deployment)
        template = mapping(dep_spec.get("template"))
        replicas = integer(dep_spec.get("replicas"), 1)
        current = self._current_replica_set(deployment, template)
        if current is None:
            self._create_replica_set(deployment, template, replicas)
        elif integer(spec(current).get("replicas"), 1) != replicas and not dep_spec.get("paused"):
            scaled = copy.deepcopy(dict(current))
            scaled["spec"]["replicas"] = replicas
            self.cluster.changes += 1
            self.cluster.update(scaled)

    def _owned_replica_sets(self, deployment: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [
            rs
            for rs in self._replica_sets.get(uid(deployment), [])
            if namespace(rs) == namespace(deployment)
        ]

    def _current_replica_set(
        self, deployment: Mapping[str, Any], template: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        for rs in self._owned_replica_sets(deployment):
            rs_template = copy.deepcopy(dict(mapping(spec(rs).get("template"))))
            labels = mapping(rs_template.get("metadata")).get("labels")
            if isinstance(labels, dict):
                labels.pop(_TEMPLATE_HASH_LABEL, None)
            if _same_template(rs_template, template):
                return rs
        return None

    def _create_replica_set(
        self, deployment: Mapping[str, Any], template: Mapping[str, Any], replicas: int
    ) -> None:
        dep_spec = spec(deployment)
        pod_hash = template_hash(template)
        rs_template = copy.deepcopy(dict(template))
        template_meta = rs_template.setdefault("metadata", {})
        labels = {**mapping(template_meta.get("labels")), _TEMPLATE_HASH_LABEL: pod_hash}
        template_meta["labels"] = labels
        selector = copy.deepcopy(dict(mapping(dep_spec.get("selector"))))
        selector["matchLabels"] = {
            **mapping(selector.get("matchLabels")),
            _TEMPLATE_HASH_LABEL: pod_hash,
        }
        annotations = {
            key: value
            for key, value in mapping(metadata(deployment).get("annotations")).items()
            if not key.startswith(_NOT_COPIED)
        }
        annotations["deployment.kubernetes.io/desired-replicas"] = str(replicas)
        annotations["deployment.kubernetes.io/max-replicas"] = str(
            replicas + _max_surge(dep_spec, replicas)
        )
        annotations["deployment.kubernetes.io/revision"] = str(
            len(self._owned_replica_sets(deployment)) + 1
        )
        rs_spec: dict[str, Any] = {
            "replicas": replicas,
            "selector": selector,
            "template": rs_template,
        }
        if dep_spec.get("minReadySeconds"):
            rs_spec["minReadySeconds"] = dep_spec["minReadySeconds"]
        replica_set = {
            "apiVersion": APPS,
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{name(deployment)}-{pod_hash}",
                "namespace": namespace(deployment),
                "labels": labels,
                "annotations": annotations,
                "ownerReferences": [controller_reference(deployment, APPS, "Deployment")],
            },
            "spec": rs_spec,
            "status": {"replicas": 0},
        }
        self.cluster.changes += 1
        self.cluster.create(replica_set)

    def _deployment_status(self, deployment: Mapping[str, Any]) -> None:
        dep_spec = spec(deployment)
        replicas = integer(dep_spec.get("replicas"), 1)
        owned = self._owned_replica_sets(deployment)
        current = self._current_replica_set(deployment, mapping(dep_spec.get("template")))
        total = sum(integer(status(rs).get("replicas")) for rs in owned)
        ready = sum(integer(status(rs).get("readyReplicas")) for rs in owned)
        updated = integer(status(current).get("replicas")) if current is not None else 0
        new_status: dict[str, Any] = {"observedGeneration": 1}
        for field_name, value in (
            ("replicas", total),
            ("updatedReplicas", updated),
            ("readyReplicas", ready),
            ("availableReplicas", ready),
            ("unavailableReplicas", max(replicas - ready, 0)),
        ):
            if value:
                new_status[field_name] = value
        available = ready >= replicas - _max_unavailable(dep_spec, replicas)
        complete = current is not None and updated == replicas and ready >= replicas
        old = {
            text(mapping(c).get("type")): mapping(c)
            for c in items(status(deployment).get("conditions"))
        }
        new_status["conditions"] = [
            self._condition(
                old,
                "Available",
                available,
                "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
                "Deployment has minimum availability."
                if available
                else "Deployment does not have minimum availability.",
            ),
            self._condition(
                old,
                "Progressing",
                True,
                "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                f'ReplicaSet "{name(current) if current else ""}" has successfully progressed.'
                if complete
                else f'ReplicaSet "{name(current) if current else ""}" is progressing.',
            ),
        ]
        self._write_status(deployment, new_status)

    def _condition(
        self,
        old: Mapping[str, Mapping[str, Any]],
        kind: str,
        state: bool,
        reason: str,
        message: str,
    ) -> dict[str, Any]:
        before = old.get(kind, {})
        value = "True" if state else "False"
        same = before.get("status") == value
        same_text = same and before.get("reason") == reason and before.get("message") == message
        return {
            "lastTransitionTime": before.get("lastTransitionTime") if same else self.now,
            "lastUpdateTime": before.get("lastUpdateTime") if same_text else self.now,
            "message": message,
            "reason": reason,
            "status": value,
            "type": kind,
        }

    # ------------------------------------------------------------------ ReplicaSet

    def _sync_replica_set(self, replica_set: Mapping[str, Any], pods: list[dict[str, Any]]) -> None:
        rs_spec = spec(replica_set)
        replicas = integer(rs_spec.get("replicas"), 1)
        if replicas == 0:
            self._drop_pod_group(replica_set)
        active = [pod for pod in pods if _active(pod)]
        template = mapping(rs_spec.get("template"))
        owner_ref = controller_reference(replica_set, APPS, "ReplicaSet")
        prefix = f"{name(replica_set)}-"
        if len(active) < replicas:
            for pod_name in self._generated_names(replica_set, prefix, replicas - len(active)):
                active.append(
                    self._create_pod(template, replica_set, owner_ref, pod_name, {}, None, prefix)
                )
        elif len(active) > replicas:
            # Kubernetes deletes the least useful first: unbound, then not running, then newest.
            ranked = sorted(
                active,
                key=lambda pod: (
                    bool(spec(pod).get("nodeName")),
                    pod_phase(pod) == "Running",
                    text(metadata(pod).get("creationTimestamp")),
                ),
            )
            for pod in ranked[: len(active) - replicas]:
                self._delete_pod(pod)
            active = ranked[len(active) - replicas :]
        running = sum(1 for pod in active if _running(pod))
        new_status: dict[str, Any] = {"observedGeneration": 1, "replicas": len(active)}
        if active:
            new_status["fullyLabeledReplicas"] = len(active)
        if running:
            new_status["readyReplicas"] = running
            new_status["availableReplicas"] = running
        self._write_status(replica_set, new_status)

    # ------------------------------------------------------------------ StatefulSet

    def _sync_stateful_set(
        self, stateful_set: Mapping[str, Any], pods: list[dict[str, Any]]
    ) -> None:
        sts_spec = spec(stateful_set)
        replicas = integer(sts_spec.get("replicas"), 1)
        if replicas == 0:
            self._drop_pod_group(stateful_set)
        sts_name = name(stateful_set)
        template = mapping(sts_spec.get("template"))
        revision = f"{sts_name}-{template_hash(template)}"
        parallel = sts_spec.get("podManagementPolicy") == "Parallel"
        start = integer(mapping(sts_spec.get("ordinals")).get("start"), 0)
        by_ordinal: dict[int, dict[str, Any]] = {}
        for pod in pods:
            ordinal = _ordinal(sts_name, name(pod))
            if ordinal is not None:
                by_ordinal[ordinal] = pod
        owner_ref = controller_reference(stateful_set, APPS, "StatefulSet")
        for ordinal in range(start, start + replicas):
            current = by_ordinal.get(ordinal)
            if current is not None and pod_phase(current) in _FINISHED:
                # The StatefulSet controller deletes a finished pod and makes it again.
                self._delete_pod(current)
                by_ordinal.pop(ordinal)
                current = None
            if current is None:
                by_ordinal[ordinal] = self._stateful_pod(
                    stateful_set, template, owner_ref, ordinal, revision
                )
                if not parallel:
                    break
            elif not parallel and not _running(current):
                break  # OrderedReady: the next one waits for this one to be Running
        for ordinal, pod in sorted(by_ordinal.items(), reverse=True):
            if not start <= ordinal < start + replicas and _active(pod):
                self._delete_pod(pod)
                del by_ordinal[ordinal]
        active = [pod for pod in by_ordinal.values() if _active(pod)]
        running = sum(1 for pod in active if _running(pod))
        new_status: dict[str, Any] = {
            "availableReplicas": running,
            "collisionCount": 0,
            "currentReplicas": len(active),
            "currentRevision": revision,
            "observedGeneration": 1,
            "readyReplicas": running,
            "replicas": len(active),
            "updateRevision": revision,
            "updatedReplicas": len(active),
        }
        self._write_status(
            stateful_set,
            {
                k: v
                for k, v in new_status.items()
                if v != 0 or k in ("replicas", "availableReplicas", "collisionCount")
            },
        )

    def _stateful_pod(
        self,
        stateful_set: Mapping[str, Any],
        template: Mapping[str, Any],
        owner_ref: dict[str, Any],
        ordinal: int,
        revision: str,
    ) -> dict[str, Any]:
        pod_name = f"{name(stateful_set)}-{ordinal}"
        sts_spec = spec(stateful_set)
        pod_template = copy.deepcopy(dict(template))
        pod_spec = pod_template.setdefault("spec", {})
        pod_spec["hostname"] = pod_name
        if sts_spec.get("serviceName"):
            pod_spec["subdomain"] = sts_spec["serviceName"]
        for claim in items(sts_spec.get("volumeClaimTemplates")):
            claim_name = f"{text(mapping(metadata(mapping(claim))).get('name'))}-{pod_name}"
            self._ensure_claim(stateful_set, mapping(claim), claim_name)
            volumes = [
                v
                for v in items(pod_spec.get("volumes"))
                if mapping(v).get("name") != name(mapping(claim))
            ]
            volumes.append(
                {"name": name(mapping(claim)), "persistentVolumeClaim": {"claimName": claim_name}}
            )
            pod_spec["volumes"] = volumes
        labels = {
            _REVISION_LABEL: revision,
            "statefulset.kubernetes.io/pod-name": pod_name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        }
        return self._create_pod(pod_template, stateful_set, owner_ref, pod_name, labels)

    def _ensure_claim(
        self, stateful_set: Mapping[str, Any], claim: Mapping[str, Any], claim_name: str
    ) -> None:
        key = f"{namespace(stateful_set)}/{claim_name}"
        if self.cluster.get("PersistentVolumeClaim", key) is not None:
            return
        labels = mapping(mapping(spec(stateful_set).get("selector")).get("matchLabels"))
        claim_meta: dict[str, Any] = {"name": claim_name, "namespace": namespace(stateful_set)}
        if labels:
            claim_meta["labels"] = dict(labels)
        self.cluster.changes += 1
        self.cluster.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": claim_meta,
                "spec": copy.deepcopy(dict(spec(claim))),
                "status": {"phase": "Pending"},
            }
        )

    # ------------------------------------------------------------------ batch/v1 Job

    def _sync_job(self, job: Mapping[str, Any], pods: list[dict[str, Any]]) -> None:
        job_spec = spec(job)
        job_status = dict(status(job))
        conditions = [mapping(c) for c in items(job_status.get("conditions"))]
        if any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in conditions
        ):
            return
        succeeded = [pod for pod in pods if pod_phase(pod) == "Succeeded"]
        failed = [pod for pod in pods if pod_phase(pod) == "Failed"]
        active = [pod for pod in pods if _active(pod)]
        parallelism = integer(job_spec.get("parallelism"), 1)
        completions = job_spec.get("completions")
        backoff_limit = integer(job_spec.get("backoffLimit"), 6)
        indexed = job_spec.get("completionMode") == "Indexed"
        new_status: dict[str, Any] = {
            key: value for key, value in job_status.items() if key == "startTime"
        }
        finished: tuple[str, str, str] | None = None
        if len(failed) > backoff_limit:
            finished = (
                "Failed",
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            )
            for pod in active:
                self._delete_pod(pod)
            active = []
        elif (completions is None and succeeded and not active) or (
            isinstance(completions, int) and len(_done_indexes(succeeded, indexed)) >= completions
        ):
            finished = (
                "Complete",
                "CompletionsReached",
                "Reached expected number of succeeded pods",
            )
        elif not job_spec.get("suspend"):
            if completions is None:
                wanted = 0 if succeeded else parallelism
            else:
                remaining = int(completions) - len(_done_indexes(succeeded, indexed))
                wanted = min(parallelism, remaining)
            if wanted > len(active):
                active += self._job_pods(job, wanted - len(active), active, succeeded, indexed)
                new_status.setdefault("startTime", self.now)
        if active:
            new_status["active"] = len(active)
        if succeeded:
            new_status["succeeded"] = len(succeeded)
        if failed:
            new_status["failed"] = len(failed)
        new_status["ready"] = sum(1 for pod in active if _running(pod))
        new_status["uncountedTerminatedPods"] = {}
        if finished is not None:
            kind, reason, message = finished
            target = "SuccessCriteriaMet" if kind == "Complete" else "FailureTarget"
            new_status["conditions"] = [
                _job_condition(target, reason, message, self.now),
                _job_condition(kind, reason, message, self.now),
            ]
            if kind == "Complete":
                new_status["completionTime"] = self.now
        self._write_status(job, new_status)

    def _job_pods(
        self,
        job: Mapping[str, Any],
        count: int,
        active: Iterable[Mapping[str, Any]],
        succeeded: Iterable[Mapping[str, Any]],
        indexed: bool,
    ) -> list[dict[str, Any]]:
        template = mapping(spec(job).get("template"))
        job_name, job_uid = name(job), uid(job)
        owner_ref = controller_reference(job, BATCH, "Job")
        labels = {
            "batch.kubernetes.io/controller-uid": job_uid,
            "batch.kubernetes.io/job-name": job_name,
            "controller-uid": job_uid,
            "job-name": job_name,
        }
        made: list[dict[str, Any]] = []
        if not indexed:
            prefix = f"{job_name}-"
            for pod_name in self._generated_names(job, prefix, count):
                made.append(
                    self._create_pod(template, job, owner_ref, pod_name, labels, None, prefix)
                )
            return made
        taken = _done_indexes(succeeded, True) | _done_indexes(
            [pod for pod in active if _active(pod)], True
        )
        completions = integer(spec(job).get("completions"))
        free = [index for index in range(completions) if str(index) not in taken][:count]
        for index in free:
            prefix = f"{job_name}-{index}-"
            index_labels = {**labels, "batch.kubernetes.io/job-completion-index": str(index)}
            annotations = {"batch.kubernetes.io/job-completion-index": str(index)}
            pod_template = copy.deepcopy(dict(template))
            pod_template.setdefault("spec", {}).setdefault("hostname", f"{job_name}-{index}")

            (pod_name,) = self._generated_names(job, prefix, 1)
            made.append(
                self._create_pod(
                    pod_template, job, owner_ref, pod_name, index_labels, annotations, prefix
                )
            )
        return made


def _same_template(rs_template: Mapping[str, Any], template: Mapping[str, Any]) -> bool:
    """Equal pod templates, empty metadata and labels counting as absent."""

    def tidy(value: Mapping[str, Any]) -> str:
        data = copy.deepcopy(dict(value))
        meta = data.get("metadata")
        if isinstance(meta, dict):
            meta = {k: v for k, v in meta.items() if v != {} and v is not None}
            data["metadata"] = meta
            if not meta:
                del data["metadata"]
        return json.dumps(data, sort_keys=True)

    return tidy(rs_template) == tidy(template)


def _ordinal(owner_name: str, pod_name: str) -> int | None:
    prefix = f"{owner_name}-"
    if not pod_name.startswith(prefix) or not pod_name[len(prefix) :].isdecimal():
        return None
    return int(pod_name[len(prefix) :])


def _done_indexes(pods: Iterable[Mapping[str, Any]], indexed: bool) -> set[str]:
    """Completion indexes the pods hold (Indexed), or one entry per pod (NonIndexed)."""
    if not indexed:
        return {f"{namespace(pod)}/{name(pod)}" for pod in pods}
    return {
        text(
            mapping(metadata(pod).get("annotations")).get(
                "batch.kubernetes.io/job-completion-index"
            )
        )
        for pod in pods
    }


def _job_condition(kind: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "message": message,
        "reason": reason,
        "status": "True",
        "type": kind,
    }


def _scaled(value: Any, replicas: int, default: str, round_up: bool) -> int:
    """An int-or-percent of ``replicas`` (rolling update's maxSurge/maxUnavailable)."""
    raw = default if value is None else value
    if isinstance(raw, int):
        return raw
    text_value = str(raw)
    if text_value.endswith("%"):
        try:
            share = replicas * int(text_value[:-1]) / 100
        except ValueError:
            return 0
        return math.ceil(share) if round_up else math.floor(share)
    return integer(text_value)


def _max_surge(dep_spec: Mapping[str, Any], replicas: int) -> int:
    if mapping(dep_spec.get("strategy")).get("type") == "Recreate":
        return 0
    rolling = mapping(mapping(dep_spec.get("strategy")).get("rollingUpdate"))
    return _scaled(rolling.get("maxSurge"), replicas, "25%", round_up=True)


def _max_unavailable(dep_spec: Mapping[str, Any], replicas: int) -> int:
    if mapping(dep_spec.get("strategy")).get("type") == "Recreate":
        return 0
    rolling = mapping(mapping(dep_spec.get("strategy")).get("rollingUpdate"))
    return _scaled(rolling.get("maxUnavailable"), replicas, "25%", round_up=False)


__all__ = [
    "WORKLOAD_KINDS",
    "WorkloadControllers",
    "check_workload",
    "controlling_owner",
    "is_workload",
]
