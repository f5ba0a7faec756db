"""deploy/grafana and deploy/monitoring: the dashboards are pretty-printed Grafana JSON with a
``${datasource}`` variable and unique panel ids, and every metric their PromQL names is one
volcano-py exports (the registries of ``volcano_py.metrics``); the kustomize components list every
dashboard; the ServiceMonitor and PodMonitor select what deploy/base actually runs, on ports it
exposes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_deploy import documents

# Every module that registers metrics (the scheduler's and the controllers' families, the
# API client's request counter in every process).
import volcano_py.metrics.controllers
import volcano_py.runtime.apiclient  # noqa: F401
from volcano_py.metrics.registry import ALL_REGISTRIES, exposed_name

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
GRAFANA = DEPLOY / "grafana"
MONITORING = DEPLOY / "monitoring"
DASHBOARDS = sorted(GRAFANA.glob("*.json"))
PANEL_TYPES = {"row", "timeseries", "stat", "table"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
    "and", "or", "unless", "offset", "inf", "nan",
}  # fmt: skip


def exported() -> dict[str, str]:
    """Every series name the registry serves -> its family's type (a labelled metric with no
    children yet has no samples, so the names come from the family type)."""
    names: dict[str, str] = {}
    families = [family for registry in ALL_REGISTRIES for family in registry.collect()]
    for family in families:
        if family.type == "counter":
            names[exposed_name(family)] = family.type
        elif family.type == "histogram":
            for suffix in ("", *HISTOGRAM_SUFFIXES):
                names[family.name + suffix] = family.type
        else:
            names[family.name] = family.type
    return names


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for panel in dashboard["panels"]:
        found.append(panel)
        found.extend(panel.get("panels", []))  # a collapsed row's children
    return found


def expressions(dashboard: dict[str, Any]) -> list[str]:
    exprs = [target["expr"] for panel in panels(dashboard) for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            exprs.append(query["query"] if isinstance(query, dict) else query)
    return exprs


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects: identifiers outside strings, label
    matchers, ranges and by/without clauses that are neither functions nor keywords."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", " ", expr)
    expr = re.sub(r"\[[^\]]*\]", " ", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", expr)
    expr = re.sub(r"^label_values\(\s*([A-Za-z_:][\w:]*)\s*,[^)]*\)$", r"\1", expr.strip())
    return {
        name
        for name in re.findall(r"(?<![\w$.])([A-Za-z_:][\w:]*)(?![\w:]|\s*\()", expr)
        if name.lower() not in PROMQL_WORDS
    }


@pytest.fixture(scope="module")
def registry_names() -> dict[str, str]:
    return exported()


def test_the_dashboards_exist() -> None:
    assert {path.name for path in DASHBOARDS} >= {
        "volcano-py-scheduler.json",
        "volcano-py-queues.json",
        "volcano-py-controllers.json",
    }


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_is_pretty_printed_json_with_unique_panel_ids(path: Path) -> None:
    text = path.read_text()
    dashboard = json.loads(text)
    assert text == json.dumps(dashboard, indent=2, ensure_ascii=False) + "\n"
    assert dashboard["schemaVersion"] >= 36
    assert dashboard["uid"] and dashboard["title"]
    ids = [panel["id"] for panel in panels(dashboard)]
    assert len(ids) == len(set(ids))
    assert {panel["type"] for panel in panels(dashboard)} <= PANEL_TYPES
    for panel in panels(dashboard):
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), panel["title"]
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24, panel["title"]


def test_dashboards_have_distinct_uids() -> None:
    uids = [load(path)["uid"] for path in DASHBOARDS]
    assert len(uids) == len(set(uids))


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_queries_go_through_the_datasource_variable(path: Path) -> None:
    dashboard = load(path)
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    wanted = {"type": "prometheus", "uid": "${datasource}"}
    for panel in panels(dashboard):
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == wanted, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == wanted, panel["title"]
            assert target["expr"].strip(), panel["title"]
    for variable in variables.values():
        if variable["type"] == "query":
            assert variable["datasource"] == wanted


def test_queues_dashboard_has_upstreams_queue_name_variable() -> None:
    dashboard = load(GRAFANA / "volcano-py-queues.json")
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    queue = variables["queue_name"]
    query = queue["query"]["query"] if isinstance(queue["query"], dict) else queue["query"]
    assert re.sub(r"\s", "", query) == "label_values(volcano_queue_share,queue_name)"
    # Every per-queue panel follows the variable.
    for expr in expressions(dashboard):
        if "volcano_queue_" in expr and not expr.startswith("label_values"):
            assert 'queue_name=~"$queue_name"' in expr, expr


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_every_volcano_metric_in_a_dashboard_is_exported(
    path: Path, registry_names: dict[str, str]
) -> None:
    families = {
        name.removesuffix("_total") if kind == "counter" else name
        for name, kind in registry_names.items()
    }
    for expr in expressions(load(path)):
        for token in re.findall(r"volcano_[a-z0-9_]+", expr):  # e2e: digits too
            base = token
            for suffix in HISTOGRAM_SUFFIXES:
                if token.endswith(suffix) and registry_names.get(token) == "histogram":
                    base = token.removesuffix(suffix)
            assert base in families or base in registry_names, (token, expr)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_every_selected_series_exists_with_its_exposed_name(
    path: Path, registry_names: dict[str, str]
) -> None:
    """Stricter: the exact series names (``_total`` on counters, ``_bucket`` only on
    histograms), for every metric, not only ``volcano_*`` (the controllers' gauge and the API
    client's counter have no prefix)."""
    for expr in expressions(load(path)):
        names = metric_names(expr)
        assert names, expr
        for name in names:
            assert name in registry_names, (name, expr)
            if name.endswith("_bucket"):
                assert registry_names[name] == "histogram", (name, expr)


def test_metric_name_parser() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (le, plugin) (rate(volcano_x_bucket{a="b c"}'
        "[$__rate_interval]))) / on (job) group_left volcano_y + topk(10, z_total)"
    )
    assert metric_names(expr) == {"volcano_x_bucket", "volcano_y", "z_total"}
    assert metric_names("label_values(volcano_queue_share, queue_name)") == {"volcano_queue_share"}


def test_grafana_kustomization_generates_one_sidecar_configmap_per_dashboard() -> None:
    kustomization = yaml.safe_load((GRAFANA / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Component"
    options = kustomization["generatorOptions"]
    assert options["labels"]["grafana_dashboard"] == "1"
    assert options["disableNameSuffixHash"] is True
    generators = kustomization["configMapGenerator"]
    listed = [file for generator in generators for file in generator["files"]]
    assert sorted(listed) == [path.name for path in DASHBOARDS]
    assert all(len(generator["files"]) == 1 for generator in generators)
    names = [generator["name"] for generator in generators]
    assert len(names) == len(set(names))


def test_monitoring_component_lists_every_manifest_and_the_dashboards() -> None:
    kustomization = yaml.safe_load((MONITORING / "kustomization.yaml").read_text())
    assert kustomization["kind"] == "Component"
    assert kustomization["components"] == ["../grafana"]
    on_disk = {p.name for p in MONITORING.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization["resources"]) == on_disk


def monitors() -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path in MONITORING.glob("*.yaml"):
        if path.name == "kustomization.yaml":
            continue
        for document in yaml.safe_load_all(path.read_text()):
            assert document["apiVersion"] == "monitoring.coreos.com/v1"
            found.setdefault(document["kind"], []).append(document)
    return found


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] in {"In", "NotIn", "Exists", "DoesNotExist"}
        key, values = expression["key"], expression.get("values", [])
        present = key in labels
        ok = {
            "In": present and labels.get(key) in values,
            "NotIn": not present or labels.get(key) not in values,
            "Exists": present,
            "DoesNotExist": not present,
        }[expression["operator"]]
        if not ok:
            return False
    return True


def in_namespaces(monitor: dict[str, Any], namespace: str) -> bool:
    selector = monitor["spec"].get("namespaceSelector", {})
    if selector.get("any"):
        return True
    names = selector.get("matchNames") or [monitor["metadata"]["namespace"]]
    return namespace in names


def deployments() -> dict[str, dict[str, Any]]:
    return {name: doc for (kind, name), doc in documents().items() if kind == "Deployment"}


def container_ports(deployment: dict[str, Any]) -> dict[str, int]:
    return {
        port["name"]: port["containerPort"]
        for container in deployment["spec"]["template"]["spec"]["containers"]
        for port in container.get("ports", [])
    }


def scraped_by_service_monitors() -> set[str]:
    """Deployments whose metrics port some ServiceMonitor reaches through a base Service."""
    services = [doc for (kind, _), doc in documents().items() if kind == "Service"]
    reached = set()
    for monitor in monitors()["ServiceMonitor"]:
        selected = [
            service
            for service in services
            if matches(monitor["spec"]["selector"], service["metadata"].get("labels", {}))
            and in_namespaces(monitor, service["metadata"]["namespace"])
        ]
        assert selected, monitor["metadata"]["name"]
        for service in selected:
            ports = {port["name"]: port for port in service["spec"]["ports"]}
            for endpoint in monitor["spec"]["endpoints"]:
                assert endpoint["port"] in ports, (endpoint["port"], sorted(ports))
                target = ports[endpoint["port"]]["targetPort"]
                backends = [
                    (name, deployment)
                    for name, deployment in deployments().items()
                    if matches(
                        {"matchLabels": service["spec"]["selector"]},
                        deployment["spec"]["template"]["metadata"]["labels"],
                    )
                ]
                assert backends, service["metadata"]["name"]
                for name, deployment in backends:
                    assert target in container_ports(deployment), (name, target)
                    reached.add(name)
    return reached


def scraped_by_pod_monitors() -> set[str]:
    reached = set()
    for monitor in monitors().get("PodMonitor", []):
        selected = {
            name: deployment
            for name, deployment in deployments().items()
            if matches(
                monitor["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"]
            )
            and in_namespaces(monitor, deployment["metadata"]["namespace"])
        }
        assert selected, monitor["metadata"]["name"]
        for name, deployment in selected.items():
            for endpoint in monitor["spec"]["podMetricsEndpoints"]:
                assert endpoint["port"] in container_ports(deployment), (name, endpoint["port"])
            reached.add(name)
    return reached


def test_service_monitor_selects_the_scheduler_service_on_its_metrics_port() -> None:
    (monitor,) = monitors()["ServiceMonitor"]
    assert monitor["metadata"]["namespace"] == "volcano-system"
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
    assert scraped_by_service_monitors() == {"volcano-scheduler"}


def test_every_process_serving_metrics_is_scraped_exactly_once() -> None:
    serving = {name for name, d in deployments().items() if "metrics" in container_ports(d)}
    assert serving == {"volcano-scheduler", "volcano-py-controllers", "volcano-py-webhooks"}
    by_service, by_pod = scraped_by_service_monitors(), scraped_by_pod_monitors()
    assert not by_service & by_pod
    assert by_service | by_pod == serving


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (kustomize) not installed")
def test_kustomize_builds_the_monitoring_component() -> None:
    built = subprocess.run(
        ["kubectl", "kustomize", str(MONITORING)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    docs = [doc for doc in yaml.safe_load_all(built) if doc]
    config_maps = [doc for doc in docs if doc["kind"] == "ConfigMap"]
    assert len(config_maps) == len(DASHBOARDS)
    served = {}
    for config_map in config_maps:
        assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
        ((file, text),) = config_map["data"].items()
        served[file] = json.loads(text)
    assert served == {path.name: load(path) for path in DASHBOARDS}
    assert {doc["kind"] for doc in docs} == {"ConfigMap", "ServiceMonitor", "PodMonitor"}
