"""deploy/base for `volcano-py controllers`: RBAC equal to what the code requests, no
wildcards; the Deployment's arguments are valid `volcano-py controllers` flags."""

from __future__ import annotations

from test_deploy import documents, granted, wanted

from volcano_py.cli.main import parse_args
from volcano_py.operator.controllers.process import LEASE_NAME
from volcano_py.operator.controllers.rbac import CLUSTER_RULES, LEADER_ELECTION_RULES


def test_rbac_is_exactly_what_the_controllers_request() -> None:
    docs = documents()
    cluster_role = docs[("ClusterRole", "volcano-py-controllers")]
    assert granted(cluster_role["rules"]) == wanted(CLUSTER_RULES)
    role = docs[("Role", "volcano-py-controllers-leader-election")]
    assert granted(role["rules"]) == wanted(LEADER_ELECTION_RULES)
    assert [rule.get("resourceNames") for rule in role["rules"] if "resourceNames" in rule] == [
        [LEASE_NAME]
    ]
    for rule in cluster_role["rules"] + role["rules"]:
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"], rule
    for kind, name in (
        ("ClusterRoleBinding", "volcano-py-controllers"),
        ("RoleBinding", "volcano-py-controllers-leader-election"),
    ):
        assert docs[(kind, name)]["subjects"] == [
            {"kind": "ServiceAccount", "name": "volcano-py-controllers",
             "namespace": "volcano-system"}]  # fmt: skip
    assert ("ServiceAccount", "volcano-py-controllers") in docs


def test_deployment_arguments_are_valid_flags() -> None:
    deployment = documents()[("Deployment", "volcano-py-controllers")]
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert spec["serviceAccountName"] == "volcano-py-controllers"
    assert container["command"] == ["volcano-py", "controllers"]
    args = parse_args(["controllers", *container["args"]])
    assert args.leader_elect is True
    assert args.leader_elect_resource_name == LEASE_NAME
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"metrics": 8081, "healthz": 11252}
