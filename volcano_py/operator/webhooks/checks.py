"""Helpers the handlers share: the model check and the operations."""

from __future__ import annotations

from typing import Any

from volcano_py.models.validation import ModelError, parse_object
from volcano_py.operator.webhooks.review import AdmissionRequest

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"


def model_problem(document: dict[str, Any]) -> str:
    """The models' one-line refusal ("Queue q1: spec.guarantee...: ..."), or ''."""
    try:
        parse_object(document)
    except ModelError as error:
        return str(error)
    return ""


def missing_object(request: AdmissionRequest) -> str:
    return (
        f"{request.label}: the AdmissionReview's request.object is missing"
        f" (operation {request.operation or '<none>'})"
    )


def labelled(request: AdmissionRequest, problems: list[str]) -> str:
    return f"{request.label}: {'; '.join(problems)}"
