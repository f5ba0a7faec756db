"""A Job task's pod template, kept as the plain mapping the user wrote.

volcano-py does not model Kubernetes' PodSpec (the API server and kubelet own it); it checks
only what the scheduler and controllers will read from it: that there are containers, and that
their resource quantities parse. Without that, a typo such as ``cpu: 1x`` would surface much
later as an unschedulable pod with no hint why.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic.json_schema import WithJsonSchema

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.api.resource import Resource
from volcano_py.models.base import SpecError
from volcano_py.models.crd_schema import CORE_TYPE_KEY

Path = tuple[str | int, ...]


def _mapping(value: object, path: Path) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SpecError(path, f"must be a mapping, got {type(value).__name__}")
    return value


def containers(template: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every regular and init container of the template, with its path inside the template."""
    spec = _mapping(template.get("spec"), ("spec",))
    for kind in ("containers", "initContainers"):
        listed = spec.get(kind)
        if listed is None:
            continue
        if not isinstance(listed, list):
            raise SpecError(("spec", kind), f"must be a list, got {type(listed).__name__}")
        for index, container in enumerate(listed):
            yield ("spec", kind, index), _mapping(container, ("spec", kind, index))


def resource_lists(
    container: Mapping[str, Any], path: Path
) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """The container's ``resources.requests`` and ``resources.limits``, each with its path."""
    resources = _mapping(container.get("resources"), (*path, "resources"))
    for kind in ("requests", "limits"):
        where = (*path, "resources", kind)
        yield where, _mapping(resources.get(kind), where)


def _check_template(template: dict[str, Any]) -> dict[str, Any]:
    spec = _mapping(template.get("spec"), ("spec",))
    if not spec.get("containers"):
        raise SpecError(("spec", "containers"), "a pod template needs at least one container")
    for path, container in containers(template):
        for where, amounts in resource_lists(container, path):
            for name, amount in amounts.items():
                if isinstance(amount, bool) or not isinstance(amount, int | float | str):
                    raise SpecError((*where, name), f"invalid quantity {amount!r}")
                try:
                    parse_quantity(amount)
                    # What the scheduler counts (milli-units for cpu) must fit in an int64.
                    Resource.from_list({str(name): amount})
                except QuantityError as error:
                    raise SpecError((*where, name), str(error)) from None
    return template


PodTemplate = Annotated[
    dict[str, Any],
    AfterValidator(_check_template),
    WithJsonSchema(
        {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            CORE_TYPE_KEY: "V1PodTemplateSpec",
        }
    ),
]
"""A ``v1.PodTemplateSpec`` as a plain mapping, checked lightly (see the module docstring)."""
