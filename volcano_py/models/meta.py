"""The pieces of ``k8s.io/apimachinery`` metav1 that Volcano objects embed: object metadata,
owner references, label selectors and conditions. Only the fields volcano-py reads are named;
everything else is kept as an extra field."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from volcano_py.models.base import SpecError, VolcanoModel
from volcano_py.models.fieldtypes import Int64, Timestamp


class OwnerReference(VolcanoModel):
    """Identifies an owning object (metav1.OwnerReference)."""

    api_version: str
    """API version of the referent."""
    kind: str
    """Kind of the referent."""
    name: str
    """Name of the referent."""
    uid: str
    """UID of the referent."""
    controller: bool | None = None
    """True if the referent is the managing controller."""
    block_owner_deletion: bool | None = None
    """True if the owner cannot be deleted before this reference is removed."""


class ObjectMeta(VolcanoModel):
    """Standard object metadata (metav1.ObjectMeta), the fields volcano-py uses."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: Int64 | None = None
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)
    owner_references: list[OwnerReference] = Field(default_factory=list)
    finalizers: list[str] = Field(default_factory=list)


LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class LabelSelectorRequirement(VolcanoModel):
    """One requirement of a label selector: key, operator and values."""

    key: str
    """The label key that the selector applies to."""
    operator: str
    """In, NotIn, Exists or DoesNotExist."""
    values: list[str] = Field(default_factory=list)
    """Values for In and NotIn; must be empty for Exists and DoesNotExist."""

    @model_validator(mode="after")
    def _values_fit_operator(self) -> Self:
        # metav1.LabelSelectorAsSelector refuses these, so the selector would never match
        # anything at scheduling time; say so when the object is read instead. (Checked here,
        # not as an enum, because upstream's CRD declares no enum.)
        if self.operator not in LABEL_OPERATORS:
            raise SpecError(
                ("operator",),
                f"unknown operator {self.operator!r}; use one of {', '.join(LABEL_OPERATORS)}",
            )
        if self.operator in ("In", "NotIn") and not self.values:
            raise SpecError(("values",), f"operator {self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise SpecError(("values",), f"operator {self.operator} takes no values")
        return self


class LabelSelector(VolcanoModel):
    """A label query over a set of objects (metav1.LabelSelector); the requirements are ANDed."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    """Each {key: value} pair is a requirement "key In (value)"."""
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)
    """Label selector requirements."""


# metav1.Condition's own rules: a type is an optionally prefixed qualified name, a reason is
# CamelCase-ish without spaces.
_CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


class Condition(VolcanoModel):
    """One aspect of an object's current state (metav1.Condition)."""

    type: str = Field(max_length=316, pattern=_CONDITION_TYPE_PATTERN)
    """Type of condition in CamelCase."""
    status: Literal["True", "False", "Unknown"]
    """Status of the condition."""
    observed_generation: Int64 | None = Field(default=None, ge=0)
    """The metadata.generation the condition was set from."""
    last_transition_time: Timestamp
    """Last time the condition changed status."""
    reason: str = Field(min_length=1, max_length=1024, pattern=_CONDITION_REASON_PATTERN)
    """Programmatic identifier of the reason for the last transition."""
    message: str = Field(max_length=32768)
    """Human-readable details of the transition."""
