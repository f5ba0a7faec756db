"""deploy/ installs on a clean cluster: every CRD in crds/ is in the kustomization the base
includes; every workload (base, overlays, Helm chart values) names the image `make image`
builds; the certificate Job's RBAC is exactly what `gen-admission-secret` requests, for the
names the base uses; the cert-manager overlay replaces the Job with Certificates for the same
Service names. (Rendering and applying are tests/cluster/test_deploy_install.py's.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from test_deploy import documents, granted

from volcano_py import __version__
from volcano_py.cli.main import parse_args
from volcano_py.operator.webhooks.admission_secret import (
    CONFIGURATION_VERBS,
    OWN_SECRET_VERBS,
    SECRETS_VERBS,
)
from volcano_py.operator.webhooks.certgen import service_dns_names

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CHART = DEPLOY / "helm" / "volcano-py"
IMAGE = f"volcano-py:{__version__}"


def _yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if isinstance(doc, dict)]


def test_crds_kustomization_lists_every_crd_file() -> None:
    crds = ROOT / "crds"
    listed = yaml.safe_load((crds / "kustomization.yaml").read_text())["resources"]
    on_disk = sorted(p.name for p in crds.glob("*.y*ml") if p.name != "kustomization.yaml")
    assert sorted(listed) == on_disk, "add the new crds/*.yaml to crds/kustomization.yaml"
    for name in on_disk:
        kinds = {doc["kind"] for doc in _yaml_documents(crds / name)}
        assert kinds == {"CustomResourceDefinition"}, name


def test_base_installs_the_crds_and_deploy_installs_the_base() -> None:
    base = yaml.safe_load((DEPLOY / "base" / "kustomization.yaml").read_text())
    assert "../../crds" in base["resources"]
    assert yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())["resources"] == ["base"]


def _images(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["image"]] if isinstance(node.get("image"), str) else []
        return found + [image for value in node.values() for image in _images(value)]
    if isinstance(node, list):
        return [image for value in node for image in _images(value)]
    return []


def test_every_manifest_names_the_image_make_builds() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^IMAGE\s*\?=\s*volcano-py:\$\(VERSION\)$", makefile, re.M)
    assert "volcano_py/__init__.py" in makefile  # VERSION is the package's
    plain = [
        path for path in DEPLOY.rglob("*.yaml")
        if "helm" not in path.relative_to(DEPLOY).parts
    ]  # fmt: skip
    images = {image for path in plain for doc in _yaml_documents(path) for image in _images(doc)}
    assert images == {IMAGE}
    production = yaml.safe_load((DEPLOY / "overlays/production/kustomization.yaml").read_text())
    assert [(i["name"], i["newTag"]) for i in production["images"]] == [("volcano-py", __version__)]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == __version__
    basic = yaml.safe_load((CHART / "values.yaml").read_text())["basic"]
    assert basic["image_registry"] == ""
    for key in ("scheduler", "controller", "admission"):
        assert basic[f"{key}_image_name"] == "volcano-py", key
    assert basic["image_tag_version"] == __version__
    assert "volcano-py:{{ .Chart.AppVersion }}" not in (CHART / "values.yaml").read_text()


def test_certgen_job_makes_the_secret_the_webhooks_mount_for_their_service() -> None:
    docs = documents()
    job = docs[("Job", "volcano-py-webhooks-certgen")]
    spec = job["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "volcano-py-webhooks-certgen"
    container = spec["containers"][0]
    assert container["command"] == ["volcano-py", "gen-admission-secret"]
    args = parse_args(["gen-admission-secret", *container["args"]])
    webhooks = docs[("Deployment", "volcano-py-webhooks")]["spec"]["template"]["spec"]
    secret_volume = next(v for v in webhooks["volumes"] if "secret" in v)
    assert args.secret == secret_volume["secret"]["secretName"]
    assert ("Service", args.service) in docs
    assert args.namespace == "$(POD_NAMESPACE)"
    assert args.mutating_webhook_configuration == ["volcano-py-webhooks-mutate"]
    assert args.validating_webhook_configuration == ["volcano-py-webhooks-validate"]
    for kind, name in (
        ("MutatingWebhookConfiguration", "volcano-py-webhooks-mutate"),
        ("ValidatingWebhookConfiguration", "volcano-py-webhooks-validate"),
    ):
        services = {
            hook["clientConfig"]["service"]["name"] for hook in docs[(kind, name)]["webhooks"]
        }
        assert services == {args.service}


def test_certgen_rbac_is_exactly_what_gen_admission_secret_requests() -> None:
    docs = documents()
    role = docs[("Role", "volcano-py-webhooks-certgen")]["rules"]
    assert [r for r in role if "resourceNames" not in r] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": sorted(SECRETS_VERBS)}
    ]
    assert [r for r in role if "resourceNames" in r] == [
        {"apiGroups": [""], "resources": ["secrets"],
         "resourceNames": ["volcano-py-webhooks-tls"], "verbs": sorted(OWN_SECRET_VERBS)}
    ]  # fmt: skip
    cluster = docs[("ClusterRole", "volcano-py-webhooks-certgen")]["rules"]
    assert granted(cluster) == {
        ("admissionregistration.k8s.io", resource, verb)
        for resource in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")
        for verb in CONFIGURATION_VERBS
    }
    assert sorted(name for rule in cluster for name in rule["resourceNames"]) == [
        "volcano-py-webhooks-mutate", "volcano-py-webhooks-validate"
    ]  # fmt: skip


def test_cert_manager_overlay_replaces_the_job_with_certificates_for_the_service() -> None:
    overlay = DEPLOY / "overlays" / "cert-manager"
    deleted = {
        (doc["kind"], doc["metadata"]["name"])
        for doc in _yaml_documents(overlay / "no-certgen-job.yaml")
    }
    assert deleted == {key for key in documents() if key[1] == "volcano-py-webhooks-certgen"}
    certificates = {
        doc["metadata"]["name"]: doc["spec"]
        for doc in _yaml_documents(overlay / "certificates.yaml")
        if doc["kind"] == "Certificate"
    }
    serving = certificates["volcano-py-webhooks"]
    assert serving["secretName"] == "volcano-py-webhooks-tls"
    assert serving["dnsNames"] == service_dns_names("volcano-py-webhooks", "volcano-system")
    assert certificates["volcano-py-webhooks-ca"]["isCA"] is True


def test_docs_name_the_same_image() -> None:
    """The install instructions name the image `make image` builds."""
    texts = [ROOT / "README.md", ROOT / "docs" / "migrating-from-volcano.md", CHART / "README.md",
             DEPLOY / "overlays" / "dev" / "kustomization.yaml"]  # fmt: skip
    for path in texts:
        named = set(re.findall(r"volcano-py:(\d[\w.]*)", path.read_text()))
        assert named <= {__version__}, path
