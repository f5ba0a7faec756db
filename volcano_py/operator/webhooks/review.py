"""Reading an ``admission.k8s.io/v1`` AdmissionReview and writing its answer.

A body that is not an AdmissionReview with a request is a ``BadReview`` (the server answers
400); anything wrong inside a well-formed review (a missing object, another kind than the
route serves) is a refusal whose message says what was wrong, never a traceback.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.operator.webhooks.jsonpatch import diff

ADMISSION_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")

Obj = dict[str, Any]


class BadReview(ValueError):
    """The body is not an AdmissionReview carrying a request."""


@dataclass(frozen=True, slots=True)
class AdmissionRequest:
    uid: str
    operation: str
    kind: str
    name: str
    namespace: str
    object: Obj | None
    old_object: Obj | None
    api_version: str = "admission.k8s.io/v1"

    @property
    def label(self) -> str:
        """The object as messages name it: "Job ns/name", "Queue name"."""
        document = self.object or self.old_object or {}
        metadata = document.get("metadata") if isinstance(document, dict) else None
        meta = metadata if isinstance(metadata, dict) else {}
        name = str(meta.get("name") or self.name or meta.get("generateName") or "")
        namespace = str(meta.get("namespace") or self.namespace or "")
        return f"{self.kind} {namespace}/{name}" if namespace else f"{self.kind} {name}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A handler's answer: allowed or not (with why), and for a mutation the new object."""

    allowed: bool
    message: str = ""
    mutated: Obj | None = None
    warnings: list[str] = field(default_factory=list)


def allow(mutated: Obj | None = None) -> Verdict:
    return Verdict(True, mutated=mutated)


def deny(message: str) -> Verdict:
    return Verdict(False, message=message)


def _optional_object(value: Any, what: str) -> Obj | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadReview(f"request.{what} must be an object, got {type(value).__name__}")
    return value


def parse_review(body: bytes) -> AdmissionRequest:
    """The request of an AdmissionReview body; BadReview says what is missing."""
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadReview(f"the body is not JSON: {error}") from None
    if not isinstance(review, dict):
        raise BadReview("the body is not an AdmissionReview (a JSON object)")
    api_version = review.get("apiVersion")
    if review.get("kind") != "AdmissionReview" or api_version not in ADMISSION_VERSIONS:
        raise BadReview(
            f"expected kind AdmissionReview in {' or '.join(ADMISSION_VERSIONS)}, got "
            f"{review.get('kind')!r} in {api_version!r}"
        )
    request = review.get("request")
    if not isinstance(request, dict):
        raise BadReview("the AdmissionReview has no request")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadReview("request.uid is missing")
    kind = request.get("kind")
    kind_name = kind.get("kind") if isinstance(kind, Mapping) else None
    return AdmissionRequest(
        uid=uid,
        operation=str(request.get("operation") or ""),
        kind=str(kind_name or ""),
        name=str(request.get("name") or ""),
        namespace=str(request.get("namespace") or ""),
        object=_optional_object(request.get("object"), "object"),
        old_object=_optional_object(request.get("oldObject"), "oldObject"),
        api_version=str(api_version),
    )


def response(request: AdmissionRequest, verdict: Verdict) -> Obj:
    """The AdmissionReview answering ``request``: a JSONPatch when the verdict carries a
    mutated object that differs from the request's."""
    answer: Obj = {"uid": request.uid, "allowed": verdict.allowed}
    if not verdict.allowed:
        answer["status"] = {"code": 400, "reason": "BadRequest", "message": verdict.message}
    elif verdict.mutated is not None:
        patch = diff(request.object or {}, verdict.mutated)
        if patch:
            answer["patchType"] = "JSONPatch"
            answer["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    if verdict.warnings:
        answer["warnings"] = list(verdict.warnings)
    return {"apiVersion": request.api_version, "kind": "AdmissionReview", "response": answer}
