"""What every top-level Volcano object has in common: its type metadata, object metadata and
the CRD facts (group, names, scope, printer columns) that crdgen turns into a
CustomResourceDefinition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from volcano_py.models.base import SpecError, VolcanoModel
from volcano_py.models.meta import ObjectMeta

ColumnType = Literal["string", "integer", "number", "boolean", "date"]
DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """One ``kubectl get`` column (``additionalPrinterColumns``); priority 1 shows only with
    ``-o wide``."""

    name: str
    json_path: str
    type: ColumnType
    priority: int = 0


@dataclass(frozen=True, slots=True)
class CrdInfo:
    """The facts of a CRD that are not in its schema, spelled as upstream Volcano spells them."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    scope: Literal["Namespaced", "Cluster"]
    short_names: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    status_subresource: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def namespaced(self) -> bool:
        return self.scope == "Namespaced"


def object_label(
    kind: str,
    name: str | None,
    namespace: str | None,
    namespaced: bool,
    generate_name: str | None = None,
) -> str:
    """How messages name an object: ``Queue test``, ``Job default/job1``. An object without a
    namespace lands in ``default`` when applied, so it is shown there; one named by the server
    shows its prefix (``Command default/job1-abortjob-*``)."""
    shown_name = name or (f"{generate_name}*" if generate_name else "<unnamed>")
    if namespaced:
        return f"{kind} {namespace or DEFAULT_NAMESPACE}/{shown_name}"
    return f"{kind} {shown_name}"


class CustomResource(VolcanoModel):
    """A top-level object. ``apiVersion`` and ``kind`` are filled in when missing and must
    match the model when present."""

    CRD: ClassVar[CrdInfo]

    api_version: str
    kind: str
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)

    @model_validator(mode="before")
    @classmethod
    def _fill_type_meta(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for alias, name, expected in (
            ("apiVersion", "api_version", cls.CRD.api_version),
            ("kind", "kind", cls.CRD.kind),
        ):
            key = name if name in data and alias not in data else alias
            value = data.get(key)
            if value is None:
                data[key] = expected
            elif value != expected:
                raise SpecError(
                    (alias,), f"expected {expected!r} for a {cls.CRD.kind}, got {value!r}"
                )
        return data

    @property
    def label(self) -> str:
        """``Queue test`` / ``Job default/job1``, for messages."""
        metadata = self.metadata
        return object_label(
            self.CRD.kind,
            metadata.name,
            metadata.namespace,
            self.CRD.namespaced,
            metadata.generate_name,
        )
