"""The Volcano kinds volcano-py models, looked up by apiVersion and kind.

A kind's model is imported when first looked up: building the pydantic models of every kind
is about a third of ``volcano-py simulate``'s imports, and a dump of pods, Queues and
PodGroups needs two of them. ``all_models()`` (every model, in the table's order) imports
them all; tests/models/test_model_registry.py checks the table below against the models' own CRD
facts.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from volcano_py.models.resource import CustomResource

# (apiVersion, kind) -> (module, class).
_MODEL_TABLE: Final[dict[tuple[str, str], tuple[str, str]]] = {
    ("scheduling.volcano.sh/v1beta1", "Queue"): ("volcano_py.models.queue", "Queue"),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): ("volcano_py.models.podgroup", "PodGroup"),
    ("batch.volcano.sh/v1alpha1", "Job"): ("volcano_py.models.job", "Job"),
    ("batch.volcano.sh/v1alpha1", "CronJob"): ("volcano_py.models.cronjob", "CronJob"),
    ("flow.volcano.sh/v1alpha1", "JobFlow"): ("volcano_py.models.jobflow", "JobFlow"),
    ("flow.volcano.sh/v1alpha1", "JobTemplate"): ("volcano_py.models.jobflow", "JobTemplate"),
    ("bus.volcano.sh/v1alpha1", "Command"): ("volcano_py.models.command", "Command"),
    ("topology.volcano.sh/v1alpha1", "HyperNode"): ("volcano_py.models.hypernode", "HyperNode"),
    ("nodeinfo.volcano.sh/v1alpha1", "Numatopology"): (
        "volcano_py.models.numatopology",
        "Numatopology",
    ),
}
_VERSION_OF_KIND: Final = {kind: api_version for api_version, kind in _MODEL_TABLE}


_LOADED: dict[tuple[str, str], type[CustomResource]] = {}


def _load(api_version: str, kind: str) -> type[CustomResource]:
    model = _LOADED.get((api_version, kind))
    if model is None:
        module, name = _MODEL_TABLE[(api_version, kind)]
        model = _LOADED[(api_version, kind)] = getattr(importlib.import_module(module), name)
    return model


def model_for(api_version: str, kind: str) -> type[CustomResource] | None:
    """The model of ``apiVersion``/``kind``, or None when volcano-py does not model it."""
    if (api_version, kind) not in _MODEL_TABLE:
        return None
    return _load(api_version, kind)


def model_for_kind(kind: str) -> type[CustomResource] | None:
    """The model of a kind regardless of version, to say which apiVersion was meant."""
    api_version = _VERSION_OF_KIND.get(kind)
    return None if api_version is None else _load(api_version, kind)


def all_models() -> tuple[type[CustomResource], ...]:
    """Every model, in the table's order (each imported)."""
    return tuple(_load(api_version, kind) for api_version, kind in _MODEL_TABLE)
