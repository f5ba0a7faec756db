"""Every workload in deploy/ meets the Kubernetes "restricted" Pod Security Standard and runs
as the image's user (scripts/imagebuild/spec.py, what `make image` writes in the image's
config) under a read-only root filesystem, whose only writable paths are
emptyDirs (the API server's PodSecurity admission accepting them is proven by
tests/cluster/test_least_privilege.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from imagebuild import spec

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")


def workloads() -> list[dict[str, Any]]:
    """The workloads of deploy/'s plain manifests (the Helm chart's templates are checked
    rendered, by tests/cluster/test_deploy_install.py)."""
    found = []
    for path in sorted(DEPLOY.rglob("*.yaml")):
        if "helm" in path.relative_to(DEPLOY).parts:
            continue
        for document in yaml.safe_load_all(path.read_text()):
            if isinstance(document, dict) and document.get("kind") in WORKLOAD_KINDS:
                # An overlay's patches are partial ("$patch: delete", spread-*.yaml): they are
                # checked rendered (tests/cluster/test_deploy_install.py), not here.
                if "$patch" in document or not pod_spec(document).get("containers"):
                    continue
                found.append(document)
    return found


def pod_spec(workload: dict[str, Any]) -> dict[str, Any]:
    template = workload["spec"]["template"]
    if workload["kind"] == "CronJob":
        template = template["spec"]["template"]  # jobTemplate.spec.template
    spec: dict[str, Any] = template["spec"]
    return spec


def containers(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or []


def image_user() -> tuple[int, int]:
    """The image config's numeric ``User`` (tests/image checks the built image carries it)."""
    return spec.USER_ID, spec.GROUP_ID


WORKLOADS = workloads()
IDS = [f"{w['kind']}/{w['metadata']['name']}" for w in WORKLOADS]


def test_deploy_has_the_three_processes() -> None:
    assert {
        "volcano-scheduler",
        "volcano-py-controllers",
        "volcano-py-webhooks",
        "volcano-py-webhooks-certgen",
    } <= {w["metadata"]["name"] for w in WORKLOADS}


def test_image_runs_as_a_non_root_user_and_writes_no_bytecode() -> None:
    uid, gid = image_user()
    assert uid != 0 and gid != 0
    assert spec.ENVIRONMENT["PYTHONDONTWRITEBYTECODE"] == "1"


@pytest.mark.parametrize("workload", WORKLOADS, ids=IDS)
def test_restricted_pod_security_standard(workload: dict[str, Any]) -> None:
    """The restricted profile's checks (pod-security-standards), each container's effective
    setting being its own or else the pod's."""
    uid, gid = image_user()
    spec = pod_spec(workload)
    pod = spec.get("securityContext") or {}
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        assert not spec.get(flag), flag
    assert not any("hostPath" in volume for volume in spec.get("volumes") or [])
    for container in containers(spec):
        name = f"{workload['metadata']['name']}/{container['name']}"
        own = container.get("securityContext") or {}

        def effective(key: str, own: dict[str, Any] = own) -> Any:
            return own.get(key, pod.get(key))

        assert effective("runAsNonRoot") is True, name
        assert effective("runAsUser") == uid, name
        assert effective("runAsGroup") == gid, name
        assert own.get("readOnlyRootFilesystem") is True, name
        assert own.get("allowPrivilegeEscalation") is False, name
        assert not own.get("privileged"), name
        assert own.get("capabilities", {}).get("drop") == ["ALL"], name
        assert not own.get("capabilities", {}).get("add"), name
        assert (effective("seccompProfile") or {}).get("type") == "RuntimeDefault", name
        assert not container.get("ports") or all(
            "hostPort" not in port for port in container["ports"]
        ), name


@pytest.mark.parametrize("workload", WORKLOADS, ids=IDS)
def test_only_emptydirs_are_writable_and_tmp_is_one(workload: dict[str, Any]) -> None:
    """Under a read-only root filesystem a process can write only into writable mounts: those
    are emptyDirs, and /tmp (the scheduler's --cache-dump-dir default, the kubernetes
    client's temporary files) is one of them."""
    spec = pod_spec(workload)
    volumes = {volume["name"]: volume for volume in spec.get("volumes") or []}
    for container in containers(spec):
        writable = {
            mount["mountPath"]: volumes[mount["name"]]
            for mount in container.get("volumeMounts") or []
            if not mount.get("readOnly")
        }
        assert all("emptyDir" in volume for volume in writable.values()), writable
        assert "/tmp" in writable, container["name"]
