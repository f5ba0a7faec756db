"""The Volcano kinds volcano-py models, looked up by apiVersion and kind."""

from __future__ import annotations

from typing import Final

from volcano_py.models.command import Command
from volcano_py.models.cronjob import CronJob
from volcano_py.models.hypernode import HyperNode
from volcano_py.models.job import Job
from volcano_py.models.jobflow import JobFlow, JobTemplate
from volcano_py.models.numatopology import Numatopology
from volcano_py.models.podgroup import PodGroup
from volcano_py.models.queue import Queue
from volcano_py.models.resource import CustomResource

RESOURCE_MODELS: Final[tuple[type[CustomResource], ...]] = (
    Queue,
    PodGroup,
    Job,
    CronJob,
    JobFlow,
    JobTemplate,
    Command,
    HyperNode,
    Numatopology,
)

_BY_TYPE: Final = {(model.CRD.api_version, model.CRD.kind): model for model in RESOURCE_MODELS}
_BY_KIND: Final = {model.CRD.kind: model for model in RESOURCE_MODELS}


def model_for(api_version: str, kind: str) -> type[CustomResource] | None:
    """The model of ``apiVersion``/``kind``, or None when volcano-py does not model it."""
    return _BY_TYPE.get((api_version, kind))


def model_for_kind(kind: str) -> type[CustomResource] | None:
    """The model of a kind regardless of version, to say which apiVersion was meant."""
    return _BY_KIND.get(kind)
