"""Pod admission as Volcano's webhook manager does it (``pkg/webhooks/admission/pods``):

* validate (``/pods/validate``): a pod of one of our schedulers may carry at most one of the
  job disruption budget annotations ``volcano.sh/jdb-min-available`` and
  ``volcano.sh/jdb-max-unavailable``, as a positive integer or a percentage in 1%..99%;
* mutate (``/pods/mutate``): a pod belonging to a resource group of the admission
  configuration (``--admission-conf``, upstream's ``volcano-admission.conf``) gets the group's
  node labels, affinity (unless it has one), tolerations and scheduler name. A pod belongs to a
  group by namespace (``object.key: namespace``) or by annotation (``object.key: annotation``,
  each value a ``key: value`` line; with no key, the annotation
  ``volcano.sh/resource-group: <group name>``). The first group a pod belongs to applies.

The configuration is checked when it is loaded, naming the field at fault; upstream skips a
bad affinity or annotation line when a pod arrives instead.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from volcano_py.controllers.vocabulary import JDB_MAX_UNAVAILABLE_KEY, JDB_MIN_AVAILABLE_KEY

RESOURCE_GROUP_ANNOTATION: Final = "volcano.sh/resource-group"
BUDGET_KEYS: Final = (JDB_MIN_AVAILABLE_KEY, JDB_MAX_UNAVAILABLE_KEY)

_GROUP_KEYS: Final = frozenset(
    {"resourceGroup", "object", "schedulerName", "tolerations", "labels", "affinity"}
)
_TOLERATION_KEYS: Final = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class AdmissionConfError(ValueError):
    """The admission configuration cannot be used; the message names the field."""


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    """One entry of ``resourceGroups`` (``ResGroupConfig``)."""

    name: str
    object_key: str = ""  # "namespace", "annotation" or "" (annotation by group name)
    object_values: tuple[str, ...] = ()
    scheduler_name: str = ""
    tolerations: tuple[Mapping[str, Any], ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    affinity: Mapping[str, Any] | None = None
    # The object.value lines parsed, merged first-wins (annotation groups only).
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AdmissionConf:
    groups: tuple[ResourceGroup, ...] = ()
    warnings: tuple[str, ...] = ()


# --------------------------------------------------------------------------- configuration


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise AdmissionConfError(f"{where}: expected a map of strings to strings")
    return dict(value)


def _tolerations(value: Any, where: str, warnings: list[str]) -> tuple[Mapping[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise AdmissionConfError(f"{where}: expected a list of tolerations")
    found = []
    for index, item in enumerate(value):
        here = f"{where}[{index}]"
        if not isinstance(item, Mapping):
            raise AdmissionConfError(f"{here}: expected a toleration (a map)")
        for key, entry in item.items():
            if key not in _TOLERATION_KEYS:
                warnings.append(f"{here}.{key}: unknown toleration field, ignored")
            elif key == "tolerationSeconds":
                if not isinstance(entry, int) or isinstance(entry, bool):
                    raise AdmissionConfError(f"{here}.tolerationSeconds: expected an integer")
            elif not isinstance(entry, str):
                raise AdmissionConfError(f"{here}.{key}: expected a string")
        found.append({k: v for k, v in item.items() if k in _TOLERATION_KEYS})
    return tuple(found)


def _annotation_lines(values: Sequence[str], where: str) -> dict[str, str]:
    """``getAnnotation``: each value a YAML ``key: value`` map; the first value of a key wins."""
    merged: dict[str, str] = {}
    for index, line in enumerate(values):
        try:
            parsed = yaml.safe_load(line)
        except yaml.YAMLError as error:
            raise AdmissionConfError(
                f"{where}[{index}]: not a `key: value` line: {error}"
            ) from None
        for key, value in _strings(parsed, f"{where}[{index}]").items():
            merged.setdefault(key, value)
    return merged


def _group(raw: Any, where: str, warnings: list[str]) -> ResourceGroup:
    if not isinstance(raw, Mapping):
        raise AdmissionConfError(f"{where}: expected a resource group (a map)")
    for key in raw:
        if key not in _GROUP_KEYS:
            warnings.append(f"{where}.{key}: unknown field, ignored")
    name = raw.get("resourceGroup") or ""
    if not isinstance(name, str):
        raise AdmissionConfError(f"{where}.resourceGroup: expected a string")
    obj = raw.get("object") or {}
    if not isinstance(obj, Mapping):
        raise AdmissionConfError(f"{where}.object: expected a map with key and value")
    object_key = obj.get("key") or ""
    if object_key not in ("", "namespace", "annotation"):
        raise AdmissionConfError(
            f"{where}.object.key: {object_key!r} is not one of namespace, annotation"
        )
    values = obj.get("value") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise AdmissionConfError(f"{where}.object.value: expected a list of strings")
    scheduler_name = raw.get("schedulerName") or ""
    if not isinstance(scheduler_name, str):
        raise AdmissionConfError(f"{where}.schedulerName: expected a string")
    affinity_text = raw.get("affinity") or ""
    if not isinstance(affinity_text, str):
        raise AdmissionConfError(f"{where}.affinity: expected a JSON string")
    affinity = None
    if affinity_text:
        try:
            affinity = json.loads(affinity_text)
        except ValueError as error:
            raise AdmissionConfError(f"{where}.affinity: not JSON: {error}") from None
        if not isinstance(affinity, dict):
            raise AdmissionConfError(f"{where}.affinity: expected a JSON object (an Affinity)")
    annotations = (
        _annotation_lines(values, f"{where}.object.value") if object_key != "namespace" else {}
    )
    return ResourceGroup(
        name=name,
        object_key=object_key,
        object_values=tuple(values),
        scheduler_name=scheduler_name,
        tolerations=_tolerations(raw.get("tolerations"), f"{where}.tolerations", warnings),
        labels=_strings(raw.get("labels"), f"{where}.labels"),
        affinity=affinity,
        annotations=annotations,
    )


def parse_admission_conf(text: str, source: str = "admission configuration") -> AdmissionConf:
    """``LoadAdmissionConf``: the ``resourceGroups`` of the file's YAML."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise AdmissionConfError(f"{source}: not YAML: {error}") from None
    if document is None:
        return AdmissionConf()
    if not isinstance(document, Mapping):
        raise AdmissionConfError(f"{source}: expected a map with resourceGroups")
    warnings = [
        f"{source}: {key}: unknown field, ignored" for key in document if key != "resourceGroups"
    ]
    raw_groups = document.get("resourceGroups")
    if raw_groups is None:
        raw_groups = []
    if not isinstance(raw_groups, list):
        raise AdmissionConfError(f"{source}: resourceGroups: expected a list")
    group_warnings: list[str] = []
    groups = tuple(
        _group(raw, f"{source}: resourceGroups[{index}]", group_warnings)
        for index, raw in enumerate(raw_groups)
    )
    return AdmissionConf(groups, tuple(warnings + group_warnings))


# --------------------------------------------------------------------------- mutation


def _annotations(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    value = (pod.get("metadata") or {}).get("annotations")
    return value if isinstance(value, Mapping) else {}


def belongs(pod: Mapping[str, Any], namespace: str, group: ResourceGroup) -> bool:
    """``GetResGroup(group).IsBelongResGroup(pod, group)``."""
    if group.object_key == "namespace":
        return namespace in group.object_values
    annotations = _annotations(pod)
    for key, value in group.annotations.items():
        if annotations.get(key, "") == value:
            return True
    return group.object_key == "" and annotations.get(RESOURCE_GROUP_ANNOTATION, "") == group.name


def mutate_pod(
    pod: Mapping[str, Any], namespace: str, groups: Sequence[ResourceGroup]
) -> dict[str, Any] | None:
    """``createPatch`` as an object: the pod with the first matching group's labels (merged
    into ``nodeSelector``), affinity (only when the pod has none), tolerations (appended) and
    scheduler name; None when no group takes it."""
    pod_namespace = str((pod.get("metadata") or {}).get("namespace") or namespace)
    for group in groups:
        if not belongs(pod, pod_namespace, group):
            continue
        mutated = copy.deepcopy(dict(pod))
        spec = mutated.get("spec")
        if not isinstance(spec, dict):
            spec = mutated["spec"] = {}
        if group.labels:
            selector = spec.get("nodeSelector")
            spec["nodeSelector"] = {
                **(selector if isinstance(selector, dict) else {}),
                **group.labels,
            }
        if group.affinity is not None and not spec.get("affinity"):
            spec["affinity"] = copy.deepcopy(dict(group.affinity))
        if group.tolerations:
            existing = spec.get("tolerations")
            spec["tolerations"] = [
                *(existing if isinstance(existing, list) else []),
                *(copy.deepcopy(dict(t)) for t in group.tolerations),
            ]
        if group.scheduler_name:
            spec["schedulerName"] = group.scheduler_name
        return mutated
    return None


# --------------------------------------------------------------------------- validation

_ATOI: Final = re.compile(r"[+-]?[0-9]+")


def _atoi(text: str) -> tuple[int | None, str]:
    """Go's ``strconv.Atoi`` on 64 bits: the value, or None and its error."""
    if not _ATOI.fullmatch(text):
        return None, f'strconv.Atoi: parsing "{text}": invalid syntax'
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        return None, f'strconv.Atoi: parsing "{text}": value out of range'
    return value, ""


def _int32(value: int) -> int:
    """``intstr.FromInt``'s conversion: an int beyond int32 wraps."""
    return (value + 2**31) % 2**32 - 2**31


def budget_problem(key: str, value: str) -> str:
    """``validateIntPercentageStr``: "" when ``value`` is a positive integer or a percentage
    in 1%..99%, else upstream's message."""
    number, _ = _atoi(value)
    if number is not None:  # intstr.Parse: an integer
        if _int32(number) <= 0:
            return f'invalid value <"{value}"> for {key}, it must be a positive integer'
        return ""
    percent, error = _atoi(value.replace("%", ""))
    if percent is None:
        return f"invalid value {error} for {key}"
    if percent <= 0 or percent >= 100:
        return (
            f'invalid value <"{value}"> for {key}, it must be a valid percentage which '
            "between 1% ~ 99%"
        )
    return ""


def validate_pod(pod: Mapping[str, Any], scheduler_names: Sequence[str]) -> str:
    """``validatePod``: "" when the pod may be created, else why not. Only pods of one of
    ``scheduler_names`` are checked."""
    spec = pod.get("spec")
    scheduler = (spec if isinstance(spec, Mapping) else {}).get("schedulerName") or ""
    if scheduler not in scheduler_names:
        return ""
    annotations = _annotations(pod)
    found = 0
    for key in BUDGET_KEYS:
        if key in annotations:
            found += 1
            problem = budget_problem(key, str(annotations[key]))
            if problem:
                return problem
    if found > 1:
        return f"not allow configure multiple annotations <[{' '.join(BUDGET_KEYS)}]> at same time"
    return ""
