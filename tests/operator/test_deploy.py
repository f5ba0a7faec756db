"""deploy/base: least-privilege RBAC equal to what the code requests, no wildcards; the
Deployment's arguments are valid `volcano-py scheduler` flags; the ConfigMap's conf parses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from volcano_py.cli.main import parse_args
from volcano_py.framework.conf import parse_conf
from volcano_py.operator.rbac import CLUSTER_RULES, LEADER_ELECTION_RULES
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, default_registry

BASE = Path(__file__).resolve().parents[2] / "deploy" / "base"


def documents() -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for path in BASE.glob("*.yaml"):
        if path.name == "kustomization.yaml":
            continue
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                found[(document["kind"], document["metadata"]["name"])] = document
    return found


def granted(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def wanted(rules: Any) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for group, resource, verbs in rules for verb in verbs}


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    on_disk = {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == on_disk | {"../../crds"}
    assert kustomization["namespace"] == "volcano-system"


def test_rbac_is_exactly_what_the_scheduler_requests() -> None:
    docs = documents()
    cluster_role = docs[("ClusterRole", "volcano-scheduler")]
    assert granted(cluster_role["rules"]) == wanted(CLUSTER_RULES)
    role = docs[("Role", "volcano-scheduler-leader-election")]
    assert granted(role["rules"]) == wanted(LEADER_ELECTION_RULES)
    # get/update only on the Lease the Deployment names; create cannot be narrowed by name.
    named = [rule for rule in role["rules"] if "resourceNames" in rule]
    assert named == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": ["vc-scheduler"],
            "verbs": ["get", "update"],
        }
    ]
    for rules in (cluster_role["rules"], role["rules"]):
        for rule in rules:
            assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], rule
    for kind, name in (
        ("ClusterRoleBinding", "volcano-scheduler"),
        ("RoleBinding", "volcano-scheduler-leader-election"),
    ):
        assert docs[(kind, name)]["subjects"] == [
            {"kind": "ServiceAccount", "name": "volcano-scheduler",
             "namespace": "volcano-system"}]  # fmt: skip


def test_deployment_arguments_are_valid_flags() -> None:
    deployment = documents()[("Deployment", "volcano-scheduler")]
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert spec["serviceAccountName"] == "volcano-scheduler"
    assert container["command"] == ["volcano-py", "scheduler"]
    args = parse_args(["scheduler", *container["args"]])
    assert args.leader_elect is True
    assert args.scheduler_conf == "/volcano.scheduler/volcano-scheduler.conf"
    assert container["volumeMounts"][0]["mountPath"] == "/volcano.scheduler"
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"metrics": 8080, "healthz": 11251}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_configmap_conf_parses_with_known_plugins() -> None:
    configmap = documents()[("ConfigMap", "volcano-scheduler-configmap")]
    conf = parse_conf(configmap["data"]["volcano-scheduler.conf"], BUILTIN_ACTIONS)
    registry = default_registry()
    assert conf.actions == ["enqueue", "allocate", "backfill"]
    assert all(name in registry for name in conf.plugin_names())
