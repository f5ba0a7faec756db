"""deploy/base for `volcano-py webhooks`: the webhook configurations register exactly the
server's routes with upstream's rules; the Deployment's arguments are valid flags; the
Service reaches the HTTPS port; RBAC is what the lookups read."""

from __future__ import annotations

from test_deploy import documents, granted, wanted

from volcano_py.cli.main import parse_args
from volcano_py.operator.webhooks.lookups import QUEUES_PATH
from volcano_py.operator.webhooks.rbac import CLUSTER_RULES
from volcano_py.operator.webhooks.routes import ROUTES


def _webhooks(kind: str) -> dict[str, dict[str, object]]:
    found = [doc for (k, _), doc in documents().items() if k == kind]
    assert len(found) == 1, kind
    return {hook["clientConfig"]["service"]["path"]: hook for hook in found[0]["webhooks"]}


def test_configurations_register_every_route_with_its_rules() -> None:
    for kind, mutating in (
        ("MutatingWebhookConfiguration", True),
        ("ValidatingWebhookConfiguration", False),
    ):
        hooks = _webhooks(kind)
        routes = {route.path: route for route in ROUTES if route.mutating == mutating}
        assert set(hooks) == set(routes)
        for path, hook in hooks.items():
            route = routes[path]
            assert hook["rules"] == [
                {"apiGroups": [route.group], "apiVersions": [route.version],
                 "operations": list(route.operations), "resources": [route.resource],
                 "scope": "*"}
            ]  # fmt: skip
            assert hook["failurePolicy"] == "Fail"
            assert hook["sideEffects"] == "NoneOnDryRun"
            assert hook["admissionReviewVersions"] == ["v1"]
            service = hook["clientConfig"]["service"]  # type: ignore[index]
            assert service["name"] == "volcano-py-webhooks"
            assert service["namespace"] == "volcano-system"
            assert service["port"] == 443


def test_deployment_service_and_rbac() -> None:
    docs = documents()
    deployment = docs[("Deployment", "volcano-py-webhooks")]
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert spec["serviceAccountName"] == "volcano-py-webhooks"
    assert container["command"] == ["volcano-py", "webhooks"]
    args = parse_args(["webhooks", *container["args"]])
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports["https"] == args.port
    mount = container["volumeMounts"][0]["mountPath"]
    assert args.tls_cert_file.startswith(mount) and args.tls_private_key_file.startswith(mount)
    service = docs[("Service", "volcano-py-webhooks")]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["port"] == 443
    assert service["spec"]["ports"][0]["targetPort"] == "https"
    role = docs[("ClusterRole", "volcano-py-webhooks")]
    assert QUEUES_PATH.endswith("/queues")
    assert granted(role["rules"]) == wanted(CLUSTER_RULES)
