"""Shared test data for tests/models: the fixture documents and small builders of valid
objects that each test then breaks in one place."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

FIXTURES = Path(__file__).parent / "fixtures"
SEED_FIXTURES = FIXTURES / "seeds"
EXAMPLE_FIXTURES = FIXTURES / "examples"
REPO_ROOT = Path(__file__).resolve().parents[2]


def load_documents(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc is not None]


def fixture_documents() -> list[tuple[str, int, dict[str, Any]]]:
    """(file name, index in file, document) for every fixture document."""
    found = []
    for path in sorted(FIXTURES.glob("*/*.yaml")):
        for index, doc in enumerate(load_documents(path)):
            found.append((f"{path.parent.name}/{path.name}", index, doc))
    return found


def container(cpu: object = "1", **extra: Any) -> dict[str, Any]:
    return {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": cpu}}, **extra}


def task(name: str | None = None, replicas: int = 1, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "template": {"spec": {"containers": [container()]}},
    }
    if name is not None:
        spec["name"] = name
    spec.update(extra)
    return spec


def job(*tasks: dict[str, Any], name: str = "job1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {"tasks": list(tasks) or [task("worker")], **spec},
    }


def queue(name: str = "test", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def podgroup(name: str = "pg1", namespace: str = "ns1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def node_member(name: str = "node-0") -> dict[str, Any]:
    return {"type": "Node", "selector": {"exactMatch": {"name": name}}}


def hypernode(name: str = "leaf-0", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"tier": 1, "members": [node_member()]}
    body.update(spec)
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": body,
    }


def command(**fields: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"name": "cmd1", "namespace": "ns1"},
        "action": "AbortJob",
        "target": {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "job1",
            "uid": "u1",
        },
    }
    doc.update(fields)
    return doc


def deep(doc: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(doc)
