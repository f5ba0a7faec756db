"""``vcctl jobflow|jobtemplate create|list|get|delete|describe`` (upstream's pkg/cli/jobflow and
pkg/cli/jobtemplate, which differ only in their kind's name and in the Phase and Age columns a
JobFlow has and a JobTemplate has not)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final

import yaml

from volcano_py.cli.vcctl.client import Client, CommandError
from volcano_py.cli.vcctl.formatting import since
from volcano_py.cli.vcctl.job import NO_RESOURCES

FLOW: Final = "/apis/flow.volcano.sh/v1alpha1"
COLUMN_SPACING: Final = 4
# ObjectMeta's field order, as Go's json.MarshalIndent writes a typed object.
_META_ORDER: Final[tuple[str, ...]] = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


@dataclass(frozen=True)
class FlowKind:
    kind: str  # JobFlow, JobTemplate
    plural: str  # jobflows, jobtemplates
    noun: str  # in messages: "jobflow", "job template"
    has_phase: bool  # Phase and Age columns


JOBFLOW: Final = FlowKind("JobFlow", "jobflows", "jobflow", True)
JOBTEMPLATE: Final = FlowKind("JobTemplate", "jobtemplates", "job template", False)


def _path(kind: FlowKind, namespace: str) -> str:
    if namespace:
        return f"{FLOW}/namespaces/{namespace}/{kind.plural}"
    return f"{FLOW}/{kind.plural}"


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _cells(kind: FlowKind, obj: Mapping[str, Any], now: datetime | None) -> list[str]:
    meta = _meta(obj)
    cells = [str(meta.get("name", "")), str(meta.get("namespace", ""))]
    if kind.has_phase:
        phase = ((obj.get("status") or {}).get("state") or {}).get("phase", "")
        cells += [str(phase), since(meta.get("creationTimestamp"), now)]
    return cells


def print_flows(
    kind: FlowKind, objects: Sequence[Mapping[str, Any]], now: datetime | None = None
) -> str:
    """Upstream's ``PrintJobFlows``/``PrintJobFlow`` (and the JobTemplate ones): each column as
    wide as its widest cell or title, plus 4."""
    titles = ["Name", "Namespace", *(["Phase", "Age"] if kind.has_phase else [])]
    rows = [_cells(kind, obj, now) for obj in objects]
    widths = [
        max([len(title), *(len(row[i]) for row in rows)]) + COLUMN_SPACING
        for i, title in enumerate(titles)
    ]
    return "".join(
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + "\n"
        for row in [titles, *rows]
    )


async def list_flows(client: Client, kind: FlowKind, opts: Mapping[str, Any]) -> str:
    all_namespaces = bool(opts.get("all_namespaces", False))
    objects = await client.list(_path(kind, "" if all_namespaces else str(opts["namespace"])))
    if not objects:
        return NO_RESOURCES
    return print_flows(kind, objects)


async def get_flow(client: Client, kind: FlowKind, opts: Mapping[str, Any]) -> str:
    if not opts["name"]:
        raise CommandError(f"name is mandatory to get the particular {kind.noun} details")
    found = await client.get(f"{_path(kind, str(opts['namespace']))}/{opts['name']}")
    return print_flows(kind, [found])


def _documents(kind: FlowKind, path: str) -> list[dict[str, Any]]:
    try:
        text = Path(path).read_text()
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        raise CommandError(f"open {path}: {reason}") from None
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as error:
        raise CommandError(f"{path}: {error}") from None
    for document in documents:
        if not isinstance(document, dict):
            raise CommandError(
                f"{path}: a document is a {type(document).__name__}, not a {kind.kind}"
            )
        document.setdefault("apiVersion", "flow.volcano.sh/v1alpha1")
        document.setdefault("kind", kind.kind)
        metadata = document.setdefault("metadata", {})
        if not metadata.get("namespace"):
            metadata["namespace"] = "default"
    return documents


class PartialFailure(Exception):
    """Some documents of a file failed; each was reported on its own line."""

    def __init__(self, output: str) -> None:
        super().__init__(output)
        self.output = output


async def create_flows(client: Client, kind: FlowKind, opts: Mapping[str, Any]) -> str:
    """Every document of --file, created in its namespace (default ``default``)."""
    out, failed = [], False
    for document in _documents(kind, str(opts["file"])):
        meta = document["metadata"]
        try:
            await client.create(_path(kind, meta["namespace"]), document)
        except CommandError as error:
            out.append(f"Failed to create {kind.kind}: {error}\n")
            failed = True
        else:
            out.append(f"Created {kind.kind}: {meta['namespace']}/{meta.get('name', '')}\n")
    if failed:
        raise PartialFailure("".join(out))
    return "".join(out)


async def delete_flows(client: Client, kind: FlowKind, opts: Mapping[str, Any]) -> str:
    """Every document of --file, or the one named by --name in --namespace."""
    if opts["file"]:
        out, failed = [], False
        for document in _documents(kind, str(opts["file"])):
            meta = document["metadata"]
            try:
                await client.delete(f"{_path(kind, meta['namespace'])}/{meta.get('name', '')}")
            except CommandError as error:
                out.append(f"Failed to delete {kind.kind}: {error}\n")
                failed = True
            else:
                out.append(f"Deleted {kind.kind}: {meta['namespace']}/{meta.get('name', '')}\n")
        if failed:
            raise PartialFailure("".join(out))
        return "".join(out)
    if not opts["name"]:
        raise CommandError(f"{kind.noun} name must be specified")
    found = await client.get(f"{_path(kind, str(opts['namespace']))}/{opts['name']}")
    meta = _meta(found)
    await client.delete(f"{_path(kind, str(meta.get('namespace', '')))}/{meta.get('name', '')}")
    return f"Deleted {kind.kind}: {meta.get('namespace', '')}/{meta.get('name', '')}\n"


def go_ordered(obj: Mapping[str, Any], has_state: bool) -> dict[str, Any]:
    """The object with managedFields removed and its keys in the Go type's order where vcctl
    knows it (top level and metadata)."""
    meta = {k: v for k, v in _meta(obj).items() if k != "managedFields"}
    ordered_meta = {k: meta[k] for k in _META_ORDER if k in meta}
    ordered_meta.update({k: v for k, v in meta.items() if k not in ordered_meta})
    result: dict[str, Any] = {}
    for key in ("kind", "apiVersion"):
        if key in obj:
            result[key] = obj[key]
    result["metadata"] = ordered_meta
    result["spec"] = obj.get("spec") or {}
    status = dict(obj.get("status") or {})
    if has_state:  # JobFlowStatus.State is a struct without omitempty: always written
        status.setdefault("state", {})
    result["status"] = status
    result.update({k: v for k, v in obj.items() if k not in result})
    return result


def print_detail(kind: FlowKind, obj: Mapping[str, Any], output_format: str) -> str:
    """``PrintJobFlowDetail``: JSON indented by two spaces, or YAML with sorted keys."""
    ordered = go_ordered(obj, kind.has_phase)
    if output_format == "json":
        return json.dumps(ordered, indent=2, ensure_ascii=False) + "\n"
    if output_format == "yaml":
        return yaml.safe_dump(ordered, sort_keys=True, default_flow_style=False)
    raise CommandError(f"Unsupported format: {output_format}")


async def describe_flows(client: Client, kind: FlowKind, opts: Mapping[str, Any]) -> str:
    """One object (--name) or every one in --namespace, separated by two blank lines."""
    output_format = str(opts["format"])
    if output_format not in ("json", "yaml"):
        raise CommandError(f"Unsupported format: {output_format}")
    namespace = str(opts["namespace"])
    if opts["name"]:
        found = await client.get(f"{_path(kind, namespace)}/{opts['name']}")
        found.setdefault("apiVersion", "flow.volcano.sh/v1alpha1")
        found.setdefault("kind", kind.kind)
        return print_detail(kind, found, output_format)
    objects = await client.list(_path(kind, namespace))
    return "\n\n".join(print_detail(kind, obj, output_format) for obj in objects)
