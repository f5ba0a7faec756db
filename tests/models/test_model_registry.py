"""The model registry's table (which module holds each kind's model, imported on first
lookup) says what the models themselves say: every model's apiVersion and kind, once."""

from __future__ import annotations

import importlib
import pkgutil

import volcano_py.models
from volcano_py.models.registry import _MODEL_TABLE, all_models, model_for, model_for_kind
from volcano_py.models.resource import CustomResource


def test_the_table_names_each_model_by_its_own_crd_facts() -> None:
    for (api_version, kind), (module, name) in _MODEL_TABLE.items():
        model = getattr(importlib.import_module(module), name)
        assert (model.CRD.api_version, model.CRD.kind) == (api_version, kind)
        assert model_for(api_version, kind) is model
        assert model_for_kind(kind) is model
    assert len({model for model in all_models()}) == len(_MODEL_TABLE)


def test_every_custom_resource_model_is_in_the_table() -> None:
    """A new kind's model added under volcano_py/models without a row would not be found."""
    for info in pkgutil.iter_modules(volcano_py.models.__path__):
        importlib.import_module(f"volcano_py.models.{info.name}")
    known = set(all_models())

    def subclasses(cls: type[CustomResource]) -> set[type[CustomResource]]:
        found = set()
        for sub in cls.__subclasses__():
            found |= {sub} | subclasses(sub)
        return found

    concrete = {m for m in subclasses(CustomResource) if hasattr(m, "CRD")}
    assert concrete <= known, concrete - known


def test_unknown_kinds_and_versions_have_no_model() -> None:
    assert model_for("v1", "Pod") is None
    assert model_for("batch.volcano.sh/v1beta1", "Job") is None
    assert model_for_kind("Pod") is None
