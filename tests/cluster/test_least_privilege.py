"""Least privilege, proven against the real API server: each process's shipped ServiceAccount
(deploy/base), bound to exactly its shipped ClusterRole and Role, gets a token from the
TokenRequest API; with that token, SelfSubjectAccessReviews show that every request the
process makes is allowed (the code's rule lists, which tests/operator keeps equal to the
manifests) and that what it must not do is denied, plain requests are answered 403, and the
scheduler and the controllers run as their ServiceAccounts: ready, scheduling, no 403.

And the Deployments pass the API server's PodSecurity admission at the "restricted" level.

Each test has its own namespace standing for deploy/base's volcano-system: the shipped
ServiceAccounts, Roles and RoleBindings go there (subjects pointing at the ServiceAccount in
it), the ClusterRoles are applied as shipped, and each ClusterRoleBinding gets the
namespace's name as a suffix so that other tests' bindings of the same roles are untouched.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import secrets
import signal
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from test_controllers_process import job_manifest, job_phase
from test_scheduler_process import SchedulerProcess, bound, create_gang, list_pods, wait_until

import volcano_py.operator.controllers.rbac as controllers_rbac
import volcano_py.operator.rbac as scheduler_rbac
import volcano_py.operator.webhooks.rbac as webhooks_rbac
from e2e.controllers_process import ControllersProcess
from e2e.controlplane import REPO_ROOT, ApiError, ControlPlane, load_yaml_documents
from e2e.scheduler_process import SchedulerProcess as BaseProcess
from e2e.webhooks_process import WebhooksProcess

pytestmark = pytest.mark.cluster

BASE: Final = REPO_ROOT / "deploy" / "base"
SHIPPED_NAMESPACE: Final = "volcano-system"
Rule = tuple[str, str, frozenset[str]]


@dataclass(frozen=True)
class Shipped:
    """One process as deploy/base ships it."""

    service_account: str
    files: tuple[str, ...]  # the YAML files with its ServiceAccount and RBAC documents
    cluster_rules: tuple[Rule, ...]
    lease: str | None  # the Lease its leader-election Role names, if it elects
    lease_rules: tuple[Rule, ...] = ()


SCHEDULER: Final = Shipped(
    "volcano-scheduler",
    ("serviceaccount.yaml", "rbac.yaml"),
    scheduler_rbac.CLUSTER_RULES,
    "vc-scheduler",
    scheduler_rbac.LEADER_ELECTION_RULES,
)
CONTROLLERS: Final = Shipped(
    "volcano-py-controllers",
    ("controllers-deployment.yaml", "controllers-rbac.yaml"),
    controllers_rbac.CLUSTER_RULES,
    "volcano-py-controllers",
    controllers_rbac.LEADER_ELECTION_RULES,
)
WEBHOOKS: Final = Shipped(
    "volcano-py-webhooks",
    ("webhooks-deployment.yaml",),
    webhooks_rbac.CLUSTER_RULES,
    None,
)
PROCESSES: Final = {"scheduler": SCHEDULER, "controllers": CONTROLLERS, "webhooks": WEBHOOKS}

RBAC_KINDS: Final = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


# ------------------------------------------------------------------------------ the SA


def _rbac_documents(process: Shipped) -> list[dict[str, Any]]:
    documents = [doc for name in process.files for doc in load_yaml_documents(BASE / name)]
    return [doc for doc in documents if doc["kind"] in ("ServiceAccount", *RBAC_KINDS)]


def _in_namespace(document: dict[str, Any], namespace: str) -> dict[str, Any]:
    """The shipped document moved from volcano-system into `namespace`."""
    document = copy.deepcopy(document)
    metadata = document["metadata"]
    if metadata.get("namespace") == SHIPPED_NAMESPACE:
        metadata["namespace"] = namespace
    if document["kind"] == "ClusterRoleBinding":
        metadata["name"] = f"{metadata['name']}-{namespace}"
    for subject in document.get("subjects") or []:
        assert subject["kind"] == "ServiceAccount", document  # shipped bindings name the SA
        subject["namespace"] = namespace
    return document


def _apply(plane: ControlPlane, document: dict[str, Any]) -> None:
    """Create, or replace (a ClusterRole other tests applied from the same file)."""
    path = plane.resource_path(
        document["apiVersion"], document["kind"], document["metadata"].get("namespace")
    )
    try:
        plane.request("POST", path, document)
    except ApiError as error:
        if error.status != 409:
            raise
        url = f"{path}/{document['metadata']['name']}"
        current = plane.request("GET", url)
        document = {**document, "metadata": {**document["metadata"],
                    "resourceVersion": current["metadata"]["resourceVersion"]}}  # fmt: skip
        plane.request("PUT", url, document)


def service_account_token(plane: ControlPlane, namespace: str, name: str) -> str:
    """A token of the ServiceAccount from the TokenRequest API (as admin)."""
    review = plane.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
         "spec": {"expirationSeconds": 3600}},
    )  # fmt: skip
    return str(review["status"]["token"])


def install(plane: ControlPlane, process: Shipped, namespace: str) -> str:
    """The process's ServiceAccount and RBAC as shipped, in `namespace`; its token."""
    documents = [_in_namespace(doc, namespace) for doc in _rbac_documents(process)]
    kinds = sorted({doc["kind"] for doc in documents})
    expected = ["ClusterRole", "ClusterRoleBinding", "ServiceAccount"]
    assert kinds == sorted([*expected, *(["Role", "RoleBinding"] if process.lease else [])])
    for document in documents:
        if document["kind"] == "ServiceAccount":
            assert document["metadata"]["name"] == process.service_account
        _apply(plane, document)
    return service_account_token(plane, namespace, process.service_account)


def kubeconfig_for(plane: ControlPlane, token: str, path: Path) -> Path:
    """A kubeconfig that authenticates with `token` (as a pod's projected token would)."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "vk8s", "cluster": {
            "server": plane.server, "certificate-authority": str(plane.ca_file)}}],
        "users": [{"name": "sa", "user": {"token": token}}],
        "contexts": [{"name": "vk8s", "context": {"cluster": "vk8s", "user": "sa"}}],
        "current-context": "vk8s",
    }))  # fmt: skip
    path.chmod(0o600)
    return path


@dataclass
class Identity:
    plane: ControlPlane
    namespace: str
    token: str
    process: Shipped

    def can(self, verb: str, group: str, resource: str, *, namespace: str | None = None,
            name: str = "") -> bool:  # fmt: skip
        """SelfSubjectAccessReview as the ServiceAccount: may it `verb` `resource` (which may
        be ``resource/subresource``) in `namespace` ("" = every namespace / cluster scope)?"""
        plural, _, subresource = resource.partition("/")
        attributes = {"verb": verb, "group": group, "resource": plural,
                      "subresource": subresource, "name": name,
                      "namespace": self.namespace if namespace is None else namespace}  # fmt: skip
        review = self.plane.request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
             "spec": {"resourceAttributes": attributes}},
            token=self.token,
        )  # fmt: skip
        return bool(review["status"]["allowed"])

    def status_of(self, method: str, path: str, body: Any = None) -> int:
        """The HTTP status of a plain request as the ServiceAccount (dry-run for writes)."""
        params = {"dryRun": "All"} if method in ("POST", "PUT", "PATCH", "DELETE") else None
        content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
        try:
            self.plane.request(
                method, path, body, params=params, token=self.token, content_type=content_type
            )
        except ApiError as error:
            return error.status
        return 200


@pytest.fixture
def install_identity(
    control_plane: ControlPlane, namespace: str
) -> Iterator[Callable[[Shipped], Identity]]:
    cluster_bindings: list[str] = []

    def make(process: Shipped) -> Identity:
        token = install(control_plane, process, namespace)
        cluster_bindings.append(f"{process.service_account}-{namespace}")
        return Identity(control_plane, namespace, token, process)

    yield make
    for name in cluster_bindings:
        with contextlib.suppress(ApiError):
            control_plane.request(
                "DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{name}"
            )


# ------------------------------------------------------------------------------ read-only root


def _read_only_root_prefix() -> list[str]:
    """argv prefix: a private mount namespace where the root filesystem (and the ones holding
    the repository and the interpreter) are read-only and /tmp alone is writable, as a pod
    with readOnlyRootFilesystem and the /tmp emptyDir; no bytecode written, as the image."""
    mounts = subprocess.run(
        ["findmnt", "-no", "TARGET", "-T", "/", "-T", str(REPO_ROOT), "-T", sys.prefix],
        capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip
    remounts = " && ".join(
        f"mount -o remount,bind,ro {target}" for target in dict.fromkeys(mounts or ["/"])
    )
    script = (
        f'mount --bind /tmp /tmp && {remounts} && export PYTHONDONTWRITEBYTECODE=1 && exec "$@"'
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "ro-root"]


@pytest.fixture(scope="module")
def read_only_root() -> list[str]:
    """The prefix, once shown to work here (root and unshare are needed: else skipped)."""
    prefix = _read_only_root_prefix()
    probe = REPO_ROOT / f".ro-probe-{secrets.token_hex(3)}"
    check = f"! touch {probe} 2>/dev/null && touch /tmp/{probe.name} && rm /tmp/{probe.name}"
    result = subprocess.run([*prefix, "sh", "-c", check], capture_output=True, check=False)
    if result.returncode != 0 or probe.exists():
        probe.unlink(missing_ok=True)
        pytest.skip(f"cannot make a read-only root here: {result.stderr.decode()[-200:]}")
    return prefix


def on_read_only_root(process: BaseProcess, prefix: list[str]) -> BaseProcess:
    process.argv = [*prefix, *process.argv]
    return process


# ------------------------------------------------------------------------------ allowed


def assert_everything_needed_is_allowed(identity: Identity) -> None:
    process = identity.process
    missing = [
        (group, resource, verb, where)
        for group, resource, verbs in process.cluster_rules
        for verb in sorted(verbs)
        # cluster-wide: in every namespace, and in one the process does not live in
        for where in ("", "default")
        if not identity.can(verb, group, resource, namespace=where)
    ]
    for group, resource, verbs in process.lease_rules:
        for verb in sorted(verbs):
            name = "" if verb == "create" else (process.lease or "")
            if not identity.can(verb, group, resource, name=name):
                missing.append((group, resource, verb, f"{identity.namespace}/{name}"))
    assert missing == [], f"{process.service_account} lacks what it needs"


def assert_denied(identity: Identity, checks: Iterable[tuple[str, str, str, str | None]]) -> None:
    """Each (verb, group, resource, namespace) is denied; namespace None = the SA's own."""
    allowed = [
        check for check in checks
        if identity.can(check[0], check[1], check[2], namespace=check[3])
    ]  # fmt: skip
    assert allowed == [], f"{identity.process.service_account} may do what it must not"


WRITES: Final = ("create", "update", "patch", "delete", "deletecollection")


def _writes(group: str, resource: str, verbs: Iterable[str] = WRITES) -> list[tuple[str, ...]]:
    return [(verb, group, resource) for verb in verbs]


def denials_for_everyone(
    *, kube_system_secrets: bool = True, node_writes: Iterable[str] = WRITES
) -> list[tuple[str, str, str, str | None]]:
    """What no process may do: touch RBAC, escalate, impersonate, mint tokens or certificates,
    change admission, CRDs or namespaces, and (with `kube_system_secrets`) read kube-system's
    Secrets."""
    rbac = "rbac.authorization.k8s.io"
    checks: list[tuple[str, ...]] = []
    for resource in ("clusterroles", "clusterrolebindings", "roles", "rolebindings"):
        checks += _writes(rbac, resource, (*WRITES, "get", "list", "escalate", "bind"))
    checks += [
        ("impersonate", "", "users"), ("impersonate", "", "groups"),
        ("impersonate", "", "serviceaccounts"),
        ("create", "", "serviceaccounts/token"), ("create", "", "serviceaccounts"),
        ("create", "certificates.k8s.io", "certificatesigningrequests"),
        *_writes("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
        *_writes("admissionregistration.k8s.io", "mutatingwebhookconfigurations"),
        *_writes("apiextensions.k8s.io", "customresourcedefinitions"),
        *_writes("", "namespaces"), *_writes("", "nodes", node_writes),
        ("create", "", "pods/exec"),
        ("get", "", "nodes/proxy"), ("create", "", "pods/eviction"),
        *_writes("apps", "deployments"), *_writes("batch", "jobs"),
    ]  # fmt: skip
    found = [(verb, group, resource, None) for verb, group, resource in checks]
    if kube_system_secrets:
        found += [(verb, "", "secrets", "kube-system") for verb in ("get", "list", "watch")]
    return found


# ------------------------------------------------------------------------------ tests


def test_scheduler_service_account_has_what_it_needs_and_no_more(
    install_identity: Callable[[Shipped], Identity], namespace: str
) -> None:
    identity = install_identity(SCHEDULER)
    assert_everything_needed_is_allowed(identity)
    volcano = "scheduling.volcano.sh"
    assert_denied(identity, [
        # Nodes: it patches only their annotations, for deviceshare's node lock.
        *denials_for_everyone(node_writes=("create", "update", "delete", "deletecollection")),
        # Pods: it binds, patches status and evicts (delete, as upstream's evictor); it never
        # creates them nor changes their spec.
        *[(v, "", "pods", None) for v in ("create", "update", "patch", "deletecollection")],
        ("update", "", "pods/status", None),
        # Volcano Jobs, CronJobs, Commands are the controllers' business.
        *[(v, "batch.volcano.sh", r, None) for r in ("jobs", "jobs/status", "cronjobs")
          for v in WRITES],
        *[(v, "bus.volcano.sh", "commands", None) for v in ("create", "delete")],
        # PodGroups: status updates only; Queues: the root and default queues are created.
        *[(v, volcano, "podgroups", None) for v in ("create", "patch", "delete")],
        *[(v, volcano, "queues", None) for v in ("update", "patch", "delete")],
        # No secrets nor services at all; ConfigMaps only listed and watched (deviceshare's
        # device configuration; its own conf is a mounted file).
        *[(v, "", r, None) for r in ("secrets", "services")
          for v in ("get", "list", "watch", "create")],
        *[(v, "", "configmaps", None) for v in ("get", "create", "update", "delete")],
        *[(v, "", "secrets", "") for v in ("get", "list", "watch")],
        ("create", "", "nodes", None), ("update", "", "nodes/status", None),
        # Leases: its own only.
        ("get", "coordination.k8s.io", "leases", "kube-system"),
    ])  # fmt: skip
    assert not identity.can("update", "coordination.k8s.io", "leases", name="vc-controllers")
    # Plain requests, answered 403 by the API server.
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "busybox"}]}}  # fmt: skip
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"tasks": []}}  # fmt: skip
    assert identity.status_of("POST", f"/api/v1/namespaces/{namespace}/pods", pod) == 403
    assert identity.status_of("GET", f"/api/v1/namespaces/{namespace}/secrets") == 403
    assert identity.status_of("GET", "/api/v1/secrets") == 403
    assert (
        identity.status_of(
            "POST", f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs", job
        )
        == 403
    )
    assert identity.status_of("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles") == 403
    # ... and what it needs is answered.
    assert identity.status_of("GET", "/api/v1/pods") == 200
    assert identity.status_of("GET", "/apis/scheduling.volcano.sh/v1beta1/podgroups") == 200


def test_webhooks_service_account_reads_queues_and_namespaces_only(
    install_identity: Callable[[Shipped], Identity], namespace: str
) -> None:
    identity = install_identity(WEBHOOKS)
    assert_everything_needed_is_allowed(identity)
    volcano = "scheduling.volcano.sh"
    assert_denied(identity, [
        *denials_for_everyone(),
        # It admits objects; it never writes them.
        *[(v, "batch.volcano.sh", r, None) for r in ("jobs", "jobs/status", "cronjobs")
          for v in WRITES],
        *[(v, volcano, r, None) for r in ("queues", "queues/status", "podgroups")
          for v in WRITES],
        *[(v, "", "pods", None) for v in WRITES],
        ("create", "", "pods/binding", None),
        ("create", "bus.volcano.sh", "commands", None),
        # Reads only what its lookups read: no watch of queues, no list of namespaces, no
        # pods, podgroups, jobs; its certificate is a mounted Secret, never read from the API.
        ("watch", volcano, "queues", ""), ("get", volcano, "queues", ""),
        ("list", "", "namespaces", ""), ("watch", "", "namespaces", ""),
        *[(v, g, r, "") for g, r in (("", "pods"), (volcano, "podgroups"),
          ("batch.volcano.sh", "jobs"), ("", "secrets"), ("", "configmaps"))
          for v in ("get", "list", "watch")],
        ("create", "", "events", None),
        *[(v, "coordination.k8s.io", "leases", None) for v in ("get", "create", "update")],
    ])  # fmt: skip
    job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"tasks": []}}  # fmt: skip
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": f"lp-{secrets.token_hex(3)}"}, "spec": {"weight": 1}}  # fmt: skip
    assert (
        identity.status_of(
            "POST", f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs", job
        )
        == 403
    )
    assert identity.status_of("POST", "/apis/scheduling.volcano.sh/v1beta1/queues", queue) == 403
    assert identity.status_of("DELETE", "/apis/scheduling.volcano.sh/v1beta1/queues/default") == 403
    assert identity.status_of("GET", f"/api/v1/namespaces/{namespace}/pods") == 403
    assert identity.status_of("GET", "/api/v1/secrets") == 403
    assert identity.status_of("GET", "/apis/scheduling.volcano.sh/v1beta1/queues") == 200
    assert identity.status_of("GET", f"/api/v1/namespaces/{namespace}") == 200


def test_controllers_service_account_has_what_it_needs_and_no_more(
    install_identity: Callable[[Shipped], Identity], namespace: str
) -> None:
    identity = install_identity(CONTROLLERS)
    assert_everything_needed_is_allowed(identity)
    # The one broad grant: the ssh plugin's Secrets are watched in every namespace (as
    # upstream's), and RBAC cannot narrow a list or watch to some Secrets, so the controllers
    # can read every Secret, kube-system's included. Stated here so that it stays a choice.
    assert identity.can("list", "", "secrets", namespace="kube-system")
    volcano = "scheduling.volcano.sh"
    assert_denied(identity, [
        *denials_for_everyone(kube_system_secrets=False),
        # Binding is the scheduler's: no pods/binding, no pod status. Nodes are read (their
        # labels, by hyperNode-controller's label discovery), never written.
        ("create", "", "pods/binding", None),
        *[(v, "", "pods/status", None) for v in ("update", "patch")],
        ("update", "", "pods", None), ("deletecollection", "", "pods", None),
        *[(v, "", "nodes", "") for v in ("get", "update", "patch", "delete")],
        ("update", "", "nodes/status", None),
        # Queues are the users' (and the scheduler's root/default): no create or delete.
        *[(v, volcano, "queues", None) for v in ("create", "update", "delete")],
        ("patch", volcano, "podgroups", None),
        ("update", "batch.volcano.sh", "jobs", None),
        *[(v, "batch.volcano.sh", "cronjobs", None) for v in ("create", "update", "delete")],
        *[(v, "bus.volcano.sh", "commands", None) for v in ("create", "update")],
        # HyperNodes: discovery writes whole objects (update), never patches.
        ("patch", "topology.volcano.sh", "hypernodes", None),
        # Leases: its own only.
        ("get", "coordination.k8s.io", "leases", "kube-system"),
    ])  # fmt: skip
    assert not identity.can("update", "coordination.k8s.io", "leases", name="vc-scheduler")
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n"}}  # fmt: skip
    assert (
        identity.status_of("POST", f"/api/v1/namespaces/{namespace}/pods/p/binding", binding) == 403
    )
    assert (
        identity.status_of("PATCH", "/api/v1/nodes/n", {"metadata": {"labels": {"a": "b"}}}) == 403
    )
    assert identity.status_of("GET", "/api/v1/nodes/n") == 403
    assert identity.status_of("GET", "/apis/rbac.authorization.k8s.io/v1/roles") == 403
    assert (
        identity.status_of("GET", f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs")
        == 200
    )


LEASE_FLAGS: Final = (
    "--leader-elect=true",
    "--leader-elect-lease-duration=4s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=500ms",
)


def test_scheduler_runs_as_its_service_account_on_a_read_only_root(
    install_identity: Callable[[Shipped], Identity],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    tmp_path: Path,
    read_only_root: list[str],
) -> None:
    """The shipped rules are enough: ready (every list and watch), leader, binds a gang,
    not one 403; and with only /tmp writable the cache dumper's default directory works."""
    identity = install_identity(SCHEDULER)
    kubeconfig = kubeconfig_for(control_plane, identity.token, tmp_path / "sa.kubeconfig")
    scheduler_name = f"vk-{secrets.token_hex(3)}"
    make_nodes("cpu", 2)
    scheduler = SchedulerProcess(
        control_plane, tmp_path, scheduler_name=scheduler_name, kubeconfig=kubeconfig,
        label="scheduler-sa",
        extra=[*LEASE_FLAGS, f"--leader-elect-resource-namespace={namespace}"],
    )  # fmt: skip
    on_read_only_root(scheduler, read_only_root).start()
    dumps_before = set(Path("/tmp").glob("snapshot-*.json"))
    try:
        scheduler.wait_ready(timeout=60)
        names = create_gang(control_plane, namespace, "sa-gang", 2, scheduler_name)
        wait_until(
            "the gang bound by the scheduler as its ServiceAccount",
            lambda: len(bound(list_pods(control_plane, namespace), names)) == 2,
            diagnose=lambda: scheduler.log(40),
        )
        lease = control_plane.request(
            "GET", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/vc-scheduler"
        )
        assert lease["spec"]["holderIdentity"]
        assert scheduler.requests("pods/binding", "POST", "201") >= 2
        assert scheduler.forbidden() == []
        assert scheduler.process is not None
        scheduler.process.send_signal(signal.SIGUSR1)  # --cache-dumper, into /tmp by default
        wait_until(
            "a cache dump in /tmp",
            lambda: bool(set(Path("/tmp").glob("snapshot-*.json")) - dumps_before),
            diagnose=lambda: scheduler.log(20),
        )
        assert "cannot dump" not in scheduler.log(None)
        assert scheduler.terminate() == 0
    finally:
        scheduler.kill()
        for dump in set(Path("/tmp").glob("snapshot-*.json")) - dumps_before:
            dump.unlink(missing_ok=True)


def test_controllers_run_as_their_service_account_on_a_read_only_root(
    install_identity: Callable[[Shipped], Identity],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    tmp_path: Path,
    read_only_root: list[str],
) -> None:
    """The controllers, as their ServiceAccount, and the scheduler, as its own, both on a
    read-only root, run a Volcano Job to Completed without one 403."""
    scheduler_identity = install_identity(SCHEDULER)
    controllers_identity = install_identity(CONTROLLERS)
    scheduler_name = f"vk-{secrets.token_hex(3)}"
    make_nodes("cpu", 2)
    lease_flags = [*LEASE_FLAGS, f"--leader-elect-resource-namespace={namespace}"]
    scheduler = SchedulerProcess(
        control_plane, tmp_path, scheduler_name=scheduler_name, label="scheduler-sa",
        kubeconfig=kubeconfig_for(control_plane, scheduler_identity.token, tmp_path / "s.kc"),
        extra=lease_flags,
    )  # fmt: skip
    controllers = ControllersProcess(
        kubeconfig_for(control_plane, controllers_identity.token, tmp_path / "c.kc"),
        tmp_path,
        [f"--scheduler-name={scheduler_name}", "-v=4", *lease_flags],
        label="controllers-sa",
    )
    on_read_only_root(scheduler, read_only_root).start()
    on_read_only_root(controllers, read_only_root).start()
    try:
        scheduler.wait_ready(timeout=60)
        controllers.wait_ready(timeout=60)
        control_plane.create(job_manifest("sa-job", scheduler_name), namespace)
        wait_until(
            "the Job Completed",
            lambda: job_phase(control_plane, namespace, "sa-job") == "Completed",
            timeout=60,
            diagnose=lambda: controllers.log(40) + "\n" + scheduler.log(40),
        )
        assert controllers.forbidden() == []
        assert scheduler.forbidden() == []
        assert controllers.terminate() == 0
    finally:
        controllers.kill()
        scheduler.kill()


def _review(kind: tuple[str, str, str], resource: str, obj: dict[str, Any]) -> dict[str, Any]:
    group, version, name = kind
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": secrets.token_hex(8), "operation": "CREATE",
        "kind": {"group": group, "version": version, "kind": name},
        "resource": {"group": group, "version": version, "resource": resource},
        "namespace": obj["metadata"].get("namespace", ""), "name": obj["metadata"]["name"],
        "object": obj}}  # fmt: skip


def _admit(process: WebhooksProcess, path: str, review: dict[str, Any]) -> dict[str, Any]:
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(
            context=ssl.create_default_context(cafile=str(process.ca_file))
        ),
    )
    request = urllib.request.Request(
        process.url(path), data=json.dumps(review).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with opener.open(request, timeout=10) as answer:
        response: dict[str, Any] = json.load(answer)["response"]
        return response


def test_webhooks_run_as_their_service_account_on_a_read_only_root(
    install_identity: Callable[[Shipped], Identity],
    control_plane: ControlPlane,
    namespace: str,
    tmp_path: Path,
    read_only_root: list[str],
) -> None:
    """The webhooks, as their ServiceAccount on a read-only root, answer admissions that read
    the queues (a Job's queue) and a namespace's annotations (a PodGroup's queue)."""
    identity = install_identity(WEBHOOKS)
    queue = f"lp-{secrets.token_hex(3)}"
    control_plane.create({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                          "metadata": {"name": queue}, "spec": {"weight": 1}})  # fmt: skip
    control_plane.request(
        "PATCH", f"/api/v1/namespaces/{namespace}",
        {"metadata": {"annotations": {"scheduling.volcano.sh/queue-name": queue}}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    webhooks = WebhooksProcess(
        kubeconfig_for(control_plane, identity.token, tmp_path / "w.kc"), tmp_path,
        label="webhooks-sa",
    )  # fmt: skip
    on_read_only_root(webhooks, read_only_root).start()
    try:
        webhooks.wait_ready(timeout=60)
        job = job_manifest("sa-job", "volcano", queue=queue)
        job["metadata"]["namespace"] = namespace
        jobs = ("batch.volcano.sh", "v1alpha1", "Job")
        assert _admit(webhooks, "/jobs/validate", _review(jobs, "jobs", job))["allowed"]
        job["spec"]["queue"] = f"{queue}-missing"
        refused = _admit(webhooks, "/jobs/validate", _review(jobs, "jobs", job))
        assert not refused["allowed"] and "cannot list" not in refused["status"]["message"]
        group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                 "metadata": {"name": "pg", "namespace": namespace},
                 "spec": {"minMember": 1, "queue": "default"}}  # fmt: skip
        groups = ("scheduling.volcano.sh", "v1beta1", "PodGroup")
        mutated = _admit(webhooks, "/podgroups/mutate", _review(groups, "podgroups", group))
        patch = json.loads(base64.b64decode(mutated["patch"]))
        assert {"op": "replace", "path": "/spec/queue", "value": queue} in patch, patch
        assert webhooks.forbidden() == []
        assert webhooks.terminate() == 0
    finally:
        webhooks.kill()
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"/apis/scheduling.volcano.sh/v1beta1/queues/{queue}")


# ------------------------------------------------------------------------------ PodSecurity


def _pod_security_warnings(plane: ControlPlane, path: str, body: dict[str, Any]) -> list[str]:
    """POST `body` with dryRun=All as admin; the API server's Warning headers (an ApiError
    if refused)."""
    request = urllib.request.Request(
        f"{plane.server}{path}?dryRun=All", data=json.dumps(body).encode(), method="POST"
    )
    request.add_header("Authorization", f"Bearer {plane.admin_token}")
    request.add_header("Content-Type", "application/json")
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=str(plane.ca_file))),
    )
    try:
        with opener.open(request, timeout=30) as response:
            return list(response.headers.get_all("Warning") or [])
    except urllib.error.HTTPError as error:
        raise ApiError("POST", path, error.code, error.read().decode(errors="replace")) from None


def _deployments() -> list[dict[str, Any]]:
    return [
        doc for path in sorted(BASE.glob("*.yaml")) if path.name != "kustomization.yaml"
        for doc in load_yaml_documents(path) if doc["kind"] == "Deployment"
    ]  # fmt: skip


def test_deployments_pass_restricted_pod_security_admission(control_plane: ControlPlane) -> None:
    """In a namespace enforcing (and warning at) "restricted", each Deployment is accepted
    without a warning, and a Pod of its template is admitted (PodSecurity enforces on Pods;
    on workloads it only warns); the same Pod without its securityContext is refused."""
    namespace = f"restricted-{secrets.token_hex(3)}"
    control_plane.create_namespace(namespace, {
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/warn": "restricted",
    })  # fmt: skip
    try:
        deployments = _deployments()
        assert {d["metadata"]["name"] for d in deployments} == {
            "volcano-scheduler", "volcano-py-controllers", "volcano-py-webhooks"}  # fmt: skip
        for deployment in deployments:
            name = deployment["metadata"]["name"]
            deployment = copy.deepcopy(deployment)
            deployment["metadata"]["namespace"] = namespace
            path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
            assert _pod_security_warnings(control_plane, path, deployment) == [], name
            template = deployment["spec"]["template"]
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**template["metadata"], "name": name, "namespace": namespace},
                   "spec": template["spec"]}  # fmt: skip
            pods = f"/api/v1/namespaces/{namespace}/pods"
            assert _pod_security_warnings(control_plane, pods, pod) == [], name
            # The control: without the securityContexts, PodSecurity refuses the Pod.
            loose = copy.deepcopy(pod)
            loose["spec"].pop("securityContext")
            for container in loose["spec"]["containers"]:
                container.pop("securityContext")
            with pytest.raises(ApiError) as refused:
                _pod_security_warnings(control_plane, pods, loose)
            assert refused.value.status == 403, refused.value
            assert "violates PodSecurity" in refused.value.body, refused.value.body
    finally:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"/api/v1/namespaces/{namespace}")
