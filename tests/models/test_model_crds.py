"""The committed crds/*.yaml are exactly what the generator makes from the models; they are
structural; they carry upstream Volcano's names, scope, columns and subresources; and every
example document is valid against them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from models_testdata import REPO_ROOT, fixture_documents

from volcano_py.models import crdgen
from volcano_py.models.crd_schema import SchemaError, structural_schema
from volcano_py.models.registry import all_models

CRD_DIR = REPO_ROOT / "crds"
UPSTREAM_CRDS = Path("/tmp/volcano/config/crd/volcano/bases")
# Upstream keeps the flow.volcano.sh CRDs apart (installed by the jobflow chart).
UPSTREAM_FLOW_CRDS = Path("/tmp/volcano/config/crd/jobflow/bases")


def _upstream_file(name: str) -> Path:
    return (UPSTREAM_FLOW_CRDS if name.startswith("flow.") else UPSTREAM_CRDS) / name


GENERATED = {name: yaml.safe_load(text) for name, text in crdgen.rendered_files().items()}


def _schema(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def _nodes(node: dict[str, Any], path: str = ""):
    """Every schema node with its path (``.spec.tasks[].name``, ``.spec.capability{}``)."""
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _nodes(child, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _nodes(node["additionalProperties"], f"{path}{{}}")


# -- the committed files ----------------------------------------------------------------------


def test_committed_crds_match_the_models():
    stale = crdgen.stale(CRD_DIR)
    assert not stale, f"crds/ is out of date for {stale}: run `make crds` and commit the result"


def test_crds_directory_holds_one_file_per_kind():
    # (and crds/kustomization.yaml, which lists them for deploy/: tests/operator checks it)
    on_disk = {path.name for path in CRD_DIR.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(on_disk) == sorted(GENERATED)
    assert sorted(GENERATED) == [
        "batch.volcano.sh_cronjobs.yaml",
        "batch.volcano.sh_jobs.yaml",
        "bus.volcano.sh_commands.yaml",
        "flow.volcano.sh_jobflows.yaml",
        "flow.volcano.sh_jobtemplates.yaml",
        "nodeinfo.volcano.sh_numatopologies.yaml",
        "scheduling.volcano.sh_podgroups.yaml",
        "scheduling.volcano.sh_queues.yaml",
        "topology.volcano.sh_hypernodes.yaml",
    ]


def test_generation_is_deterministic():
    assert crdgen.rendered_files() == crdgen.rendered_files()


def test_cli_writes_and_checks(tmp_path, capsys):
    assert crdgen.main([str(tmp_path), "--check"]) == 1
    assert crdgen.main([str(tmp_path)]) == 0
    assert crdgen.main([str(tmp_path), "--check"]) == 0
    (tmp_path / "bus.volcano.sh_commands.yaml").write_text("edited\n", encoding="utf-8")
    assert crdgen.main([str(tmp_path), "--check"]) == 1
    assert "bus.volcano.sh_commands.yaml is out of date" in capsys.readouterr().err


# -- structural schemas -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_schema_is_structural(name):
    for path, node in _nodes(_schema(GENERATED[name])):
        where = f"{name}: {path or '<root>'}"
        for keyword in ("$ref", "$defs", "anyOf", "oneOf", "allOf", "not", "title", "const"):
            assert keyword not in node, f"{where} has {keyword}"
        assert (
            "type" in node
            or node.get("x-kubernetes-int-or-string")
            or node.get("x-kubernetes-preserve-unknown-fields")
        ), f"{where} has no type"
        if node.get("type") == "object":
            assert not ("properties" in node and "additionalProperties" in node), where
        assert node.get("default", 0) is not None, f"{where} defaults to null"
        assert node.get("additionalProperties") is not True, where
        if node.get("nullable"):
            assert "type" in node, where


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_root_is_typed_like_every_crd(name):
    root = _schema(GENERATED[name])
    assert root["type"] == "object"
    assert root["properties"]["apiVersion"] == {"type": "string"}
    assert root["properties"]["kind"] == {"type": "string"}
    assert root["properties"]["metadata"] == {"type": "object"}
    assert "required" not in root


def test_open_objects_preserve_unknown_fields():
    nodes = dict(_nodes(_schema(GENERATED["batch.volcano.sh_jobs.yaml"])))
    for path in (".spec.tasks[].template", ".spec.volumes[].volumeClaim"):
        assert nodes[path]["type"] == "object"
        assert nodes[path]["x-kubernetes-preserve-unknown-fields"] is True


def test_resource_lists_are_int_or_string_maps():
    nodes = dict(_nodes(_schema(GENERATED["scheduling.volcano.sh_queues.yaml"])))
    for path in (
        ".spec.capability",
        ".spec.deserved",
        ".spec.guarantee.resource",
        ".status.allocated",
    ):
        assert nodes[path]["type"] == "object"
        value = nodes[path]["additionalProperties"]
        assert value["x-kubernetes-int-or-string"] is True
        assert re.match(value["pattern"], "500m") and re.match(value["pattern"], "16Gi")
        assert not re.match(value["pattern"], "1x")


def test_unsupported_unions_are_refused():
    from pydantic import BaseModel

    class Ambiguous(BaseModel):
        value: int | str

    with pytest.raises(SchemaError, match=r"only 'X \| None' unions"):
        structural_schema(Ambiguous)


# -- upstream facts ---------------------------------------------------------------------------

# (kind, plural, scope, short names, printer columns (name, type, jsonPath, priority), status)
UPSTREAM_FACTS = {
    "scheduling.volcano.sh_queues.yaml": (
        "Queue",
        "queues",
        "Cluster",
        ["q", "queue-v1beta1"],
        [("PARENT", "string", ".spec.parent", 0)],
        True,
    ),
    "scheduling.volcano.sh_podgroups.yaml": (
        "PodGroup",
        "podgroups",
        "Namespaced",
        ["pg", "podgroup-v1beta1"],
        [
            ("STATUS", "string", ".status.phase", 0),
            ("minMember", "integer", ".spec.minMember", 0),
            ("RUNNINGS", "integer", ".status.running", 0),
            ("AGE", "date", ".metadata.creationTimestamp", 0),
            ("QUEUE", "string", ".spec.queue", 1),
        ],
        False,
    ),
    "batch.volcano.sh_jobs.yaml": (
        "Job",
        "jobs",
        "Namespaced",
        ["vcjob", "vj"],
        [
            ("STATUS", "string", ".status.state.phase", 0),
            ("minAvailable", "integer", ".status.minAvailable", 0),
            ("RUNNINGS", "integer", ".status.running", 0),
            ("AGE", "date", ".metadata.creationTimestamp", 0),
            ("QUEUE", "string", ".spec.queue", 1),
        ],
        True,
    ),
    "batch.volcano.sh_cronjobs.yaml": (
        "CronJob",
        "cronjobs",
        "Namespaced",
        ["cronvcjob", "cronvj"],
        [],
        True,
    ),
    "bus.volcano.sh_commands.yaml": ("Command", "commands", "Namespaced", [], [], False),
    "flow.volcano.sh_jobflows.yaml": (
        "JobFlow",
        "jobflows",
        "Namespaced",
        ["jf"],
        [
            ("Status", "string", ".status.state.phase", 0),
            ("Age", "date", ".metadata.creationTimestamp", 0),
        ],
        True,
    ),
    "flow.volcano.sh_jobtemplates.yaml": (
        "JobTemplate",
        "jobtemplates",
        "Namespaced",
        ["jt"],
        [],
        True,
    ),
    "nodeinfo.volcano.sh_numatopologies.yaml": (
        "Numatopology",
        "numatopologies",
        "Cluster",
        ["numatopo"],
        [],
        False,
    ),
    "topology.volcano.sh_hypernodes.yaml": (
        "HyperNode",
        "hypernodes",
        "Cluster",
        ["hn"],
        [
            ("Tier", "string", ".spec.tier", 0),
            ("TierName", "string", ".spec.tierName", 0),
            ("NodeCount", "integer", ".status.nodeCount", 0),
            ("Age", "date", ".metadata.creationTimestamp", 0),
        ],
        True,
    ),
}


def _facts(crd: dict[str, Any]):
    spec = crd["spec"]
    version = spec["versions"][0]
    columns = [
        (c["name"], c["type"], c["jsonPath"], c.get("priority", 0))
        for c in version.get("additionalPrinterColumns", [])
    ]
    has_status = "status" in (version.get("subresources") or {})
    names = spec["names"]
    return (
        names["kind"],
        names["plural"],
        spec["scope"],
        names.get("shortNames", []),
        columns,
        has_status,
    )


@pytest.mark.parametrize("name", sorted(UPSTREAM_FACTS))
def test_names_scope_columns_and_subresources_are_upstreams(name):
    crd = GENERATED[name]
    assert _facts(crd) == UPSTREAM_FACTS[name]
    group = name.split("_")[0]
    kind, plural = UPSTREAM_FACTS[name][:2]
    assert crd["metadata"]["name"] == f"{plural}.{group}"
    assert crd["spec"]["group"] == group
    assert crd["spec"]["names"]["singular"] == kind.lower()
    assert crd["spec"]["names"]["listKind"] == f"{kind}List"
    assert [v["name"] for v in crd["spec"]["versions"]] == [
        model.CRD.version for model in all_models() if model.CRD.kind == kind
    ]


needs_upstream = pytest.mark.skipif(
    not UPSTREAM_CRDS.is_dir(), reason="upstream Volcano's CRDs are not extracted at /tmp/volcano"
)


@needs_upstream
@pytest.mark.parametrize("name", sorted(UPSTREAM_FACTS))
def test_facts_table_matches_upstream_files(name):
    upstream = yaml.safe_load(_upstream_file(name).read_text(encoding="utf-8"))
    assert _facts(upstream) == UPSTREAM_FACTS[name]


# Where our schema deliberately says more than upstream's (the webhook's rules, stated where
# the API server can enforce them too).
EXTRA_REQUIRED = {
    ("batch.volcano.sh_jobs.yaml", ".spec"): {"tasks"},
    # A template without a spec would create jobs without tasks, each refused by the job
    # webhook at its scheduled time; say so when the CronJob is applied.
    ("batch.volcano.sh_cronjobs.yaml", ".spec.jobTemplate"): {"spec"},
    ("batch.volcano.sh_cronjobs.yaml", ".spec.jobTemplate.spec"): {"tasks"},
    # Likewise a JobTemplate without tasks makes jobs the job webhook refuses.
    ("flow.volcano.sh_jobtemplates.yaml", ".spec"): {"tasks"},
    ("topology.volcano.sh_hypernodes.yaml", ".spec"): {"members"},
    ("topology.volcano.sh_hypernodes.yaml", ".spec.members[]"): {"selector"},
}
COMPARED = (
    "default",
    "enum",
    "format",
    "maximum",
    "maxItems",
    "maxLength",
    "minimum",
    "minItems",
    "minLength",
    "pattern",
    "type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-validations",
)


@needs_upstream
@pytest.mark.parametrize("name", sorted(UPSTREAM_FACTS))
def test_every_upstream_field_is_modelled_with_its_constraints(name):
    upstream = dict(
        _nodes(_schema(yaml.safe_load(_upstream_file(name).read_text(encoding="utf-8"))))
    )
    ours = dict(_nodes(_schema(GENERATED[name])))
    open_paths = [
        path for path, node in ours.items() if node.get("x-kubernetes-preserve-unknown-fields")
    ]
    for path, node in upstream.items():
        if path.startswith(".metadata.") or any(
            path.startswith(p) and path != p for p in open_paths
        ):
            continue  # metadata is the server's; pod templates and PVC specs stay open
        assert path in ours, f"{name}: upstream field {path} is not modelled"
        mine = ours[path]
        for keyword in COMPARED:
            if path in open_paths and keyword == "type":
                continue
            assert mine.get(keyword) == node.get(keyword), f"{name}: {path} {keyword}"
        extra = EXTRA_REQUIRED.get((name, path), set())
        assert set(mine.get("required", [])) == set(node.get("required", [])) | extra, path
    assert sorted(set(ours) - set(upstream) - {p for p in ours if p.startswith(".metadata.")}) == []


# -- the examples against the generated schemas -----------------------------------------------


def _violations(value: Any, node: dict[str, Any], path: str) -> list[str]:
    """A small validator of the structural subset the generated CRDs use."""
    if value is None:
        return [] if node.get("nullable") else [f"{path}: null"]
    if node.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, int | str):
            return [f"{path}: not int-or-string"]
        if isinstance(value, str) and not re.search(node["pattern"], value):
            return [f"{path}: pattern"]
        return []
    found: list[str] = []
    kind = node.get("type")
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
    }
    if kind is not None and not checks[kind](value):
        return [f"{path}: not {kind}"]
    if "enum" in node and value not in node["enum"]:
        found.append(f"{path}: not in enum")
    if "minimum" in node and value < node["minimum"]:
        found.append(f"{path}: below minimum")
    if "maximum" in node and value > node["maximum"]:
        found.append(f"{path}: above maximum")
    if kind == "string":
        if "pattern" in node and not re.search(node["pattern"], value):
            found.append(f"{path}: pattern")
        if len(value) > node.get("maxLength", len(value)) or len(value) < node.get("minLength", 0):
            found.append(f"{path}: length")
    if kind == "array":
        if len(value) < node.get("minItems", 0):
            found.append(f"{path}: too few items")
        for index, item in enumerate(value):
            found += _violations(item, node["items"], f"{path}[{index}]")
    if kind == "object" and not node.get("x-kubernetes-preserve-unknown-fields"):
        found += [f"{path}.{key}: required" for key in node.get("required", []) if key not in value]
        for key, item in value.items():
            if key in node.get("properties", {}):
                found += _violations(item, node["properties"][key], f"{path}.{key}")
            elif isinstance(node.get("additionalProperties"), dict):
                found += _violations(item, node["additionalProperties"], f"{path}.{key}")
            # else: an unknown field, pruned by the API server, not an error
    return found


@pytest.mark.parametrize(
    ("file", "index", "doc"),
    fixture_documents(),
    ids=[f"{f}#{i}" for f, i, _ in fixture_documents()],
)
def test_example_is_valid_against_its_crd(file, index, doc):
    crd = next(
        crd
        for crd in GENERATED.values()
        if crd["spec"]["names"]["kind"] == doc["kind"]
        and doc["apiVersion"] == f"{crd['spec']['group']}/{crd['spec']['versions'][0]['name']}"
    )
    assert _violations(doc, _schema(crd), "") == []
