"""``/jobs/mutate`` and ``/jobs/validate`` (``pkg/webhooks/admission/jobs/``)."""

from __future__ import annotations

from typing import Any

from volcano_py.controllers.admission import mutate_job, validate_job
from volcano_py.operator.webhooks.checks import (
    CREATE,
    UPDATE,
    embedded_field_problem,
    labelled,
    missing_object,
    model_problem,
)
from volcano_py.operator.webhooks.lookups import ClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict, allow, deny


async def mutate(request: AdmissionRequest, view: ClusterView, options: WebhookOptions) -> Verdict:
    """On create: the defaults of ``mutate_job`` (queue, scheduler, maxRetry, tasks...)."""
    if request.operation != CREATE:
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    return allow(mutate_job(request.object, options.scheduler_name))


def _spec(job: dict[str, Any]) -> dict[str, Any]:
    spec = job.get("spec")
    return spec if isinstance(spec, dict) else {}


def _tasks(spec: dict[str, Any]) -> list[Any]:
    tasks = spec.get("tasks")
    return tasks if isinstance(tasks, list) else []


def update_problems(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``validateJobUpdate``: only minAvailable, priorityClassName, the tasks' replicas and
    minAvailable, and the volumes' claim names (the controller fills them) may change."""
    old_spec, new_spec = _spec(old), _spec(new)
    if len(_tasks(old_spec)) != len(_tasks(new_spec)):
        return ["spec.tasks: job updates may not add or remove tasks"]

    def frozen(spec: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in spec.items() if k not in ("minAvailable", "priorityClassName")}
        kept["tasks"] = [
            {k: v for k, v in t.items() if k not in ("replicas", "minAvailable")}
            if isinstance(t, dict)
            else t
            for t in _tasks(spec)
        ]
        volumes = spec.get("volumes")
        if isinstance(volumes, list):
            kept["volumes"] = [
                {k: v for k, v in vol.items() if k != "volumeClaimName"}
                if isinstance(vol, dict)
                else vol
                for vol in volumes
            ]
        return kept

    old_frozen, new_frozen = frozen(old_spec), frozen(new_spec)
    changed = sorted(
        key
        for key in set(old_frozen) | set(new_frozen)
        if old_frozen.get(key) != new_frozen.get(key)
    )
    if changed:
        fields = ", ".join(f"spec.{key}" for key in changed)
        return [
            f"{fields}: may not be changed (only spec.minAvailable, spec.priorityClassName and"
            " the tasks' replicas and minAvailable may be updated)"
        ]
    return []


async def validate(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    """On create: the models' field checks, the pod templates' fields as upstream's CRD
    checks them, then ``validate_job`` (after the create defaults, so a job validated without
    the mutating webhook is judged as Volcano would store it), queue included. On update: the
    field checks and what may change."""
    if request.operation not in (CREATE, UPDATE):
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    job = mutate_job(request.object, options.scheduler_name)
    problem = model_problem(job)
    if problem:
        return deny(problem)
    if request.operation == UPDATE:
        if request.old_object is None:
            return allow()
        problems = update_problems(request.old_object, request.object)
        return deny(labelled(request, problems)) if problems else allow()
    problem = embedded_field_problem(request)
    if problem:
        return deny(problem)
    problems = validate_job(job, await view.queues())
    return deny(labelled(request, problems)) if problems else allow()
