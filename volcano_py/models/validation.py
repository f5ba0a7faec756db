"""Turning a raw document (parsed YAML or JSON) into a validated model, and pydantic's errors
into one line a user can act on: which object, which field, what is wrong.

    Job default/job1: spec.tasks[0].replicas: Input should be greater than or equal to 0 (got -1)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from volcano_py.models.base import SpecError, format_path
from volcano_py.models.registry import all_models, model_for, model_for_kind
from volcano_py.models.resource import CustomResource, object_label

_MAX_PROBLEMS_SHOWN: Final = 3
_MAX_INPUT_SHOWN: Final = 60


class ModelError(ValueError):
    """A document that is not a valid Volcano object. ``str()`` is one readable line;
    ``object_label`` ("Queue test", "Job default/job1") and ``problems`` (field path, message)
    are there for callers that lay the problems out themselves."""

    def __init__(self, object_label: str, problems: list[tuple[str, str]]) -> None:
        self.object_label = object_label
        self.problems = problems
        shown = [f"{path}: {message}" if path else message for path, message in problems]
        text = "; ".join(shown[:_MAX_PROBLEMS_SHOWN])
        if len(shown) > _MAX_PROBLEMS_SHOWN:
            text += f" (and {len(shown) - _MAX_PROBLEMS_SHOWN} more)"
        super().__init__(f"{object_label}: {text}")


def _label_of(doc: Mapping[str, Any], kind: str, namespaced: bool) -> str:
    # Read from the raw document: the model may be exactly what failed to build.
    metadata = doc.get("metadata")
    fields = metadata if isinstance(metadata, Mapping) else {}

    def text(key: str) -> str | None:
        value = fields.get(key)
        return value if isinstance(value, str) else None

    return object_label(kind, text("name"), text("namespace"), namespaced, text("generateName"))


def _shown_input(value: object) -> str | None:
    if isinstance(value, Mapping | list | tuple | set) or value is None:
        return None  # the path already says which structure; dumping it would drown the line
    text = repr(value)
    return text if len(text) <= _MAX_INPUT_SHOWN else text[: _MAX_INPUT_SHOWN - 3] + "..."


def _problem(error: ErrorDetails) -> tuple[str, str]:
    location: tuple[str | int, ...] = tuple(error["loc"])
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, SpecError):
        return format_path((*location, *cause.path)), cause.message
    message = error["msg"].removeprefix("Value error, ")
    shown = _shown_input(error.get("input"))
    if shown is not None and error["type"] not in ("missing", "value_error"):
        message += f" (got {shown})"
    return format_path(location), message


def problems_of(error: ValidationError) -> list[tuple[str, str]]:
    """Each pydantic error as (field path, message), in pydantic's order."""
    return [_problem(details) for details in error.errors()]


def parse_object(doc: object) -> CustomResource:
    """The validated model of a Volcano object, chosen by its apiVersion and kind.

    Raises ModelError naming the object and the field for anything Volcano would refuse:
    an unknown kind, a wrong field type, a value out of range, a broken cross-field rule.
    """
    if not isinstance(doc, Mapping):
        raise ModelError(
            "document",
            [("", f"expected a Kubernetes object (a mapping), got {type(doc).__name__}")],
        )
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ModelError("document", [("kind", "missing; every object needs apiVersion and kind")])
    model = model_for(api_version, kind) if isinstance(api_version, str) else None
    if model is None:
        known = model_for_kind(kind)
        label = _label_of(doc, kind, known.CRD.namespaced if known else True)
        if known is not None:
            hint = f"expected apiVersion {known.CRD.api_version}, got {api_version!r}"
            raise ModelError(label, [("apiVersion", hint)])
        kinds = ", ".join(f"{m.CRD.api_version} {m.CRD.kind}" for m in all_models())
        raise ModelError(
            label,
            [("kind", f"{api_version} {kind} is not a Volcano kind volcano-py knows ({kinds})")],
        )
    try:
        return model.model_validate(doc)
    except ValidationError as error:
        raise ModelError(_label_of(doc, kind, model.CRD.namespaced), problems_of(error)) from None
