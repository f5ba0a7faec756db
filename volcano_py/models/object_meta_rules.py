"""What the API server checks of every object's metadata before storing it
(``ValidateObjectMeta``): the name's shape and length for its kind, the namespace, label keys
and values, and the annotations' total size. Messages are the API server's.

    metadata.name: Invalid value: "a-...": must be no more than 253 characters
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any, Final, TypeGuard

_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL: Final = re.compile(_LABEL)
_DNS_SUBDOMAIN: Final = re.compile(rf"{_LABEL}(\.{_LABEL})*")
_QUALIFIED_NAME: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_LABEL_VALUE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
SUBDOMAIN_MAX: Final = 253
LABEL_MAX: Final = 63
# ``TotalAnnotationSizeLimitB``.
ANNOTATIONS_MAX_BYTES: Final = 256 * 1024
# Kinds whose names are DNS-1123 labels (they end up in DNS names or other objects' labels).
LABEL_NAMED_KINDS: Final = frozenset({"Namespace", "Service"})
# batch/v1 CronJob: its jobs are named <name>-<11 digits> and must stay within 63 characters.
_CRONJOB_NAME_MAX: Final = 52
_SHOWN: Final = 40

_SUBDOMAIN_SHAPE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or"
    " '.', and must start and end with an alphanumeric character (e.g. 'example.com')"
)
_LABEL_SHAPE: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and"
    " must start and end with an alphanumeric character (e.g. 'my-name')"
)


def _shown(value: str) -> str:
    return value if len(value) <= _SHOWN else value[: _SHOWN - 3] + "..."


def _invalid(path: str, value: str, message: str) -> str:
    return f'{path}: Invalid value: "{_shown(value)}": {message}'


def subdomain_problem(value: str) -> str | None:
    if len(value) > SUBDOMAIN_MAX:
        return f"must be no more than {SUBDOMAIN_MAX} characters"
    return None if _DNS_SUBDOMAIN.fullmatch(value) else _SUBDOMAIN_SHAPE


def label_problem(value: str) -> str | None:
    if len(value) > LABEL_MAX:
        return f"must be no more than {LABEL_MAX} characters"
    return None if _DNS_LABEL.fullmatch(value) else _LABEL_SHAPE


def _name_problem(api_version: str, kind: str, name: str) -> str | None:
    if kind in LABEL_NAMED_KINDS:
        return label_problem(name)
    if (api_version, kind) == ("batch/v1", "CronJob") and len(name) > _CRONJOB_NAME_MAX:
        return f"must be no more than {_CRONJOB_NAME_MAX} characters"
    return subdomain_problem(name)


# Label and annotation keys repeat across a dump's objects (``volcano.sh/...``): one check each.
@functools.lru_cache(maxsize=4096)
def _label_key_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        problem = subdomain_problem(prefix) if prefix else "prefix part must be non-empty"
        if problem:
            return f"prefix part {problem}"
    if not name:
        return "name part must be non-empty"
    if len(name) > LABEL_MAX:
        return f"name part must be no more than {LABEL_MAX} characters"
    if not _QUALIFIED_NAME.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start"
            " and end with an alphanumeric character"
        )
    return None


def _label_value_problem(value: str) -> str | None:
    if len(value) > LABEL_MAX:
        return f"must be no more than {LABEL_MAX} characters"
    if not _LABEL_VALUE.fullmatch(value):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-',"
            " '_' or '.', and must start and end with an alphanumeric character"
        )
    return None


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    # ``type(...) is dict`` first: JSON objects are dicts, and the ABC check is slow.
    return type(value) is dict or isinstance(value, Mapping)


def metadata_problems(obj: Mapping[str, Any]) -> list[str]:
    """The API server's objections to ``obj``'s metadata (types are checked before this)."""
    metadata = obj.get("metadata")
    if not _is_mapping(metadata):
        return []
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    problems: list[str] = []
    name = metadata.get("name")
    if isinstance(name, str) and name:
        problem = _name_problem(api_version, kind, name)
        if problem:
            problems.append(_invalid("metadata.name", name, problem))
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        problem = label_problem(namespace)
        if problem:
            problems.append(_invalid("metadata.namespace", namespace, problem))
    labels = metadata.get("labels")
    if _is_mapping(labels):
        for key, value in labels.items():
            problem = _label_key_problem(str(key))
            if problem:
                problems.append(_invalid("metadata.labels", str(key), problem))
            elif isinstance(value, str) and (problem := _label_value_problem(value)):
                problems.append(_invalid(f"metadata.labels.{key}", value, problem))
    annotations = metadata.get("annotations")
    if _is_mapping(annotations):
        size = sum(len(str(k)) + len(str(v)) for k, v in annotations.items())
        if size > ANNOTATIONS_MAX_BYTES:
            problems.append(
                f"metadata.annotations: Too long: may not be more than {ANNOTATIONS_MAX_BYTES}"
                f" bytes (got {size})"
            )
        for key in annotations:
            problem = _label_key_problem(str(key))
            if problem:
                problems.append(_invalid("metadata.annotations", str(key), problem))
    return problems
