"""``/cronjobs/validate`` (``pkg/webhooks/admission/cronjobs/validate``)."""

from __future__ import annotations

from volcano_py.controllers.cronjob_validation import cronjob_problems, template_problems
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


async def validate(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    """On create and update: upstream's schedule, time zone and name checks (its messages,
    joined by "; "), then the models' field checks, then the job template as the job webhook
    will judge each job made from it."""
    if request.operation not in (CREATE, UPDATE):
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    problems = cronjob_problems(request.object)
    if problems:
        return deny(labelled(request, problems))
    problem = model_problem(request.object)
    if problem:
        return deny(problem)
    if request.operation == CREATE and (problem := embedded_field_problem(request)):
        return deny(problem)
    problems = template_problems(request.object, options.scheduler_name)
    return deny(labelled(request, problems)) if problems else allow()
