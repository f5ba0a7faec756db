"""Helpers the handlers share: the model check and the operations."""

from __future__ import annotations

from typing import Any

from volcano_py.models.registry import model_for
from volcano_py.models.strict_fields import custom_problems, strict_message
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


def embedded_field_problem(request: AdmissionRequest) -> str:
    """Unknown or wrongly typed fields of the Kubernetes types a Volcano object embeds (a
    task's pod template, a volume's PVC spec), or ''. Upstream's CRDs spell those types out, so
    its API server refuses such a field under kubectl's strict field validation; ours keep
    them free-form, so the webhook says it instead, in the API server's words. (Every other
    unknown field never reaches a webhook: the API server refuses or prunes it first.)"""
    document = request.object or {}
    model = model_for(str(document.get("apiVersion", "")), str(document.get("kind", "")))
    if model is None:
        return ""
    problems = custom_problems(document, model)
    return f"{request.label}: {strict_message(problems)}" if problems else ""


def missing_object(request: AdmissionRequest) -> str:
    return (
        f"{request.label}: the AdmissionReview's request.object is missing"
        f" (operation {request.operation or '<none>'})"
    )


def labelled(request: AdmissionRequest, problems: list[str]) -> str:
    return f"{request.label}: {'; '.join(problems)}"
