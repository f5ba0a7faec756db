"""A pydantic model's JSON Schema turned into a structural OpenAPI v3 schema, the only kind a
CustomResourceDefinition accepts.

Structural means: no ``$ref`` (definitions are inlined), no ``anyOf`` with ``null`` (an optional
field becomes ``nullable: true``), every node has a ``type`` unless it is marked
``x-kubernetes-int-or-string`` or ``x-kubernetes-preserve-unknown-fields``, and objects do not mix
``properties`` with ``additionalProperties``. Anything the translation does not understand is an
error, so a new field type cannot silently produce a CRD the API server refuses.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from pydantic import BaseModel

# Keywords that mean the same in JSON Schema and in a CRD's OpenAPI v3 subset.
_KEPT: Final = frozenset(
    {
        "default",
        "description",
        "enum",
        "format",
        "maximum",
        "maxItems",
        "maxLength",
        "minimum",
        "minItems",
        "minLength",
        "nullable",
        "pattern",
        "required",
        "type",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)
_DROPPED: Final = frozenset({"title"})
# Marks a node that holds a Kubernetes core type (``V1PodTemplateSpec``): the CRD keeps the
# node free-form, the strict field check (strict_fields) looks the type's fields up instead.
CORE_TYPE_KEY: Final = "x-volcano-py-core-type"
_NULL: Final = {"type": "null"}


class SchemaError(ValueError):
    """The model uses a construct a structural schema cannot express."""


def _resolve(node: dict[str, Any], definitions: dict[str, Any], where: str) -> dict[str, Any]:
    reference = node["$ref"]
    name = reference.removeprefix("#/$defs/")
    if name not in definitions:
        raise SchemaError(f"{where}: unresolvable reference {reference}")
    # Keywords beside the reference (a field's own description) win over the definition's.
    merged: dict[str, Any] = copy.deepcopy(definitions[name])
    merged.update({key: value for key, value in node.items() if key != "$ref"})
    return merged


def _convert(
    node: dict[str, Any], definitions: dict[str, Any], where: str, core_types: bool = False
) -> dict[str, Any]:
    if "$ref" in node:
        node = _resolve(node, definitions, where)
    if "anyOf" in node:
        branches = [branch for branch in node["anyOf"] if branch != _NULL]
        if len(branches) != 1 or len(node["anyOf"]) != 2:
            raise SchemaError(
                f"{where}: only 'X | None' unions can be expressed, got {node['anyOf']}"
            )
        # The field's own keywords (description, default) sit beside the anyOf.
        rest = {key: value for key, value in node.items() if key != "anyOf"}
        converted = _convert({**branches[0], **rest}, definitions, where, core_types)
        return {**converted, "nullable": True}
    if "const" in node:
        node = {**{k: v for k, v in node.items() if k != "const"}, "enum": [node["const"]]}

    result: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED or (key == CORE_TYPE_KEY and not core_types):
            continue
        if key == CORE_TYPE_KEY:
            result[key] = value
        elif key == "properties":
            result[key] = {
                name: _convert(child, definitions, f"{where}.{name}", core_types)
                for name, child in value.items()
            }
        elif key == "items":
            result[key] = _convert(value, definitions, f"{where}[]", core_types)
        elif key == "additionalProperties":
            if isinstance(value, dict):
                result[key] = _convert(value, definitions, f"{where}{{}}", core_types)
            elif value is True and "properties" not in node:
                # A free-form mapping: keep whatever it holds.
                result["x-kubernetes-preserve-unknown-fields"] = True
            # ``True`` beside properties comes from extra="allow": the model tolerates fields
            # of newer Volcano versions, but the API server prunes unknown fields, as upstream.
        elif key == "description":
            # Docstrings wrap at the code's line length; kubectl explain re-wraps anyway.
            result[key] = " ".join(value.replace("``", "").split())
        elif key in _KEPT:
            result[key] = value
        else:
            raise SchemaError(f"{where}: JSON Schema keyword {key!r} has no structural equivalent")
    if "default" in result and result["default"] is None:
        del result["default"]
    _check_typed(result, where)
    return result


def _check_typed(node: dict[str, Any], where: str) -> None:
    if "type" in node or node.get("x-kubernetes-int-or-string"):
        return
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return
    raise SchemaError(f"{where}: no type (structural schemas need one on every node)")


def structural_schema(model: type[BaseModel], *, core_types: bool = False) -> dict[str, Any]:
    """The structural OpenAPI v3 schema of ``model`` (aliases as property names).
    ``core_types``: keep the CORE_TYPE_KEY marks (for the strict field check, not a CRD)."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    definitions = raw.pop("$defs", {})
    return _convert(raw, definitions, model.__name__, core_types)
