"""``/jobflows/validate`` (``pkg/webhooks/admission/jobflows/validate``): every dependsOn
target is a flow of the JobFlow and the flows form a DAG (the model's checks, in upstream's
words), plus the model's field checks; fields Volcano ignores (probes, patches) are warned
about."""

from __future__ import annotations

from volcano_py.models.jobflow import JobFlow, ignored_fields
from volcano_py.models.validation import ModelError, parse_object
from volcano_py.operator.webhooks.checks import CREATE, UPDATE, missing_object
from volcano_py.operator.webhooks.lookups import ClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict, allow, deny


async def validate(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    if request.operation not in (CREATE, UPDATE):
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    try:
        jobflow = parse_object(request.object)
    except ModelError as error:
        return deny(str(error))
    if not isinstance(jobflow, JobFlow):
        return allow()
    return Verdict(True, warnings=[f"{jobflow.label}: {w}" for w in ignored_fields(jobflow)])
