"""core_fields.json (the Kubernetes field lists the strict field check reads) is what
scripts/core_fields.py makes from the installed kubernetes client, and our CRD schemas name the
same fields as upstream's (outside the free-form pod templates)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from volcano_py.models.strict_fields import core_problems, core_type_of

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("core_fields", ROOT / "scripts/core_fields.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_core_fields_json_is_current():
    generator = _generator()
    recorded = json.loads(generator.OUTPUT.read_text(encoding="utf-8"))["source"]
    installed = generator.build()["source"]
    if recorded != installed:
        pytest.skip(f"core_fields.json was made from {recorded}; installed: {installed}")
    assert generator.OUTPUT.read_text(encoding="utf-8") == generator.render(), (
        "volcano_py/models/core_fields.json is stale: run .venv/bin/python scripts/core_fields.py"
    )


def test_every_kind_simulate_reads_has_its_fields():
    for api_version, kind in [("v1", "Pod"), ("v1", "Node"), ("apps/v1", "Deployment"),
                              ("batch/v1", "Job"), ("policy/v1", "PodDisruptionBudget"),
                              ("scheduling.k8s.io/v1", "PriorityClass")]:
        assert core_type_of(api_version, kind) is not None, kind


def test_a_full_pod_is_accepted():
    """Every field a real pod carries (status included) is known, with its type."""
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}, "creationTimestamp": "2024-01-01T00:00:00Z",
                     "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x",
                                          "uid": "u", "controller": True}],
                     "managedFields": [{"fieldsV1": {"f:spec": {}}, "manager": "m"}]},
        "spec": {
            "containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always",
                            "ports": [{"containerPort": 80, "protocol": "TCP"}],
                            "resources": {"requests": {"cpu": 1, "memory": "1Gi"},
                                          "limits": {"nvidia.com/gpu": "1"}},
                            "livenessProbe": {"httpGet": {"port": "http", "path": "/"}}}],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "k", "operator": "In", "values": ["v"]}]}]}}},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "priority": 10, "schedulerName": "volcano",
        },
        "status": {"phase": "Running", "startTime": "2024-01-01T00:00:00Z",
                   "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0,
                                          "image": "i", "imageID": "",
                                          "state": {"running": {"startedAt": "x"}}}]},
    }
    assert core_problems(pod, "V1Pod") == []
