"""``/hypernodes/validate`` (``pkg/webhooks/admission/hypernodes/``): the models' checks of
the members and their selectors."""

from __future__ import annotations

from volcano_py.operator.webhooks.checks import CREATE, UPDATE, missing_object, model_problem
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
    problem = model_problem(request.object)
    return deny(problem) if problem else allow()
