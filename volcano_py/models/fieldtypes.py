"""Annotated field types shared by the models: Kubernetes quantities and resource lists, Go's
fixed-width integers, durations, timestamps and object-name patterns.

Each type validates like the API server or Volcano's webhooks would, keeps the value exactly as
written (so a document round-trips unchanged) and carries the OpenAPI shape the CRD needs.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BeforeValidator, GetJsonSchemaHandler, PlainValidator
from pydantic.json_schema import JsonSchemaValue, WithJsonSchema
from pydantic_core import CoreSchema

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.models.crd_schema import CORE_TYPE_KEY
from volcano_py.models.duration import DurationError, parse_duration

# RFC 1123 names, the shapes Kubernetes uses for object names (subdomain) and for names that
# end up inside other names, such as a Job's task names (label).
DNS_SUBDOMAIN_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

# The quantity grammar of k8s.io/apimachinery (sign, digits, then a binary suffix, a decimal
# suffix or an exponent); the API server checks string quantities against it.
_NUMBER: Final = r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
QUANTITY_PATTERN: Final = rf"^(\+|-)?{_NUMBER}(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?{_NUMBER}))?$"


class _Format:
    """Adds an OpenAPI ``format`` to whatever schema the wrapped type produces. It only
    annotates: validators here would stop pydantic from pushing a field's own ``ge``/``le``
    into the integer schema (they would then leak into the JSON Schema as raw keywords)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["format"] = self.name
        return json_schema


# Like the API server, volcano-py does not range-check these; the format tells Go clients (and
# `kubectl explain`) the width.
Int32 = Annotated[int, _Format("int32")]
"""Go ``int32``."""
Int64 = Annotated[int, _Format("int64")]
"""Go ``int64``."""


def _check_quantity(value: object) -> int | float | str:
    # Checked by hand instead of letting pydantic coerce: YAML gives ints, floats and strings,
    # and the value must come back out exactly as written.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"invalid quantity {value!r}: expected a number or a string like 500m")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"invalid quantity {value!r}")
    try:
        parse_quantity(value)
    except QuantityError as error:
        raise ValueError(f"{error} (expected a number or a string like 500m, 2Gi, 1e3)") from None
    return value


Quantity = Annotated[
    int | float | str,
    PlainValidator(_check_quantity),
    WithJsonSchema({"x-kubernetes-int-or-string": True, "pattern": QUANTITY_PATTERN}),
]
"""A Kubernetes resource quantity: ``2``, ``"500m"``, ``"16Gi"``."""

ResourceList = dict[str, Quantity]
"""``v1.ResourceList``: resource name -> quantity."""


def _check_duration(value: str) -> str:
    try:
        parse_duration(value)
    except DurationError as error:
        raise ValueError(str(error)) from None
    return value


GoDuration = Annotated[str, AfterValidator(_check_duration)]
"""``metav1.Duration``: a Go duration string such as ``"90s"`` or ``"1h30m"``."""


def _timestamp_text(value: object) -> object:
    # YAML turns an unquoted 2024-01-02T03:04:05Z into a datetime; the API always speaks
    # RFC 3339 text, so hand that back.
    if isinstance(value, datetime):
        offset = value.utcoffset()
        if offset is None or offset == timedelta(0):
            # PyYAML hands back UTC times without a zone; Kubernetes writes them with "Z".
            return value.replace(tzinfo=None).isoformat() + "Z"
        return value.isoformat()
    return value


Timestamp = Annotated[
    str,
    BeforeValidator(_timestamp_text),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""``metav1.Time``: an RFC 3339 timestamp."""


OpenObject = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
]
"""A Kubernetes object volcano-py passes through untouched (a PVC spec, for example)."""

PvcSpec = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            CORE_TYPE_KEY: "V1PersistentVolumeClaimSpec",
        }
    ),
]
"""A ``v1.PersistentVolumeClaimSpec``, passed through; its fields are those of Kubernetes."""
