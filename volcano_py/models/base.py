"""The pydantic base every Volcano object model shares, and the error its validators raise.

The models sit at the edges only (YAML files, the API server, the CLI); the scheduler converts
them into plain dataclasses once and never touches pydantic in its hot path.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class VolcanoModel(BaseModel):
    """Base of every model: Volcano's camelCase JSON names, unknown fields kept, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        # Python code may say min_available=..., YAML says minAvailable: ...
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        # Newer Volcano releases add fields; an object written by them must still load, and
        # dumping it again must not lose what we did not understand.
        extra="allow",
        frozen=True,
        # Types as the API server checks them: "3" is not an integer, "yes" is not a boolean.
        # Without this a file would pass `volcano-py simulate` and be refused by kubectl.
        strict=True,
        # Field docstrings become the CRD's descriptions (what `kubectl explain` prints).
        use_attribute_docstrings=True,
    )


class SpecError(ValueError):
    """A rule over several fields failed. ``path`` is relative to the model whose validator
    raised it (for example ``("tasks", 1, "minAvailable")`` raised by a JobSpec), so that the
    message shown to users can name the exact field instead of the whole spec."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(f"{format_path(path)}: {message}" if path else message)
        self.path = path
        self.message = message


def format_path(path: tuple[str | int, ...]) -> str:
    """``("spec", "tasks", 0, "replicas")`` -> ``spec.tasks[0].replicas``; keys that are not
    plain identifiers (resource names, annotation keys) go in brackets:
    ``spec.capability[nvidia.com/gpu]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}" if text else part
        else:
            text += f"[{part}]"
    return text


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def implicit(value: Any, **constraints: Any) -> Any:
    """A field default that Go gets from its zero value or from a mutating webhook, not from
    the CRD: the model reads it, but the generated CRD declares no ``default`` for it, so the
    API server stores exactly what upstream Volcano would store."""
    return Field(value, json_schema_extra=_drop_default, **constraints)
