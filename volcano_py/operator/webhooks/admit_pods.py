"""``/pods/mutate`` and ``/pods/validate`` (``pkg/webhooks/admission/pods/``)."""

from __future__ import annotations

from volcano_py.controllers.pod_admission import mutate_pod, validate_pod
from volcano_py.operator.webhooks.checks import CREATE, missing_object
from volcano_py.operator.webhooks.lookups import ClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict, allow, deny

_ONLY_CREATE = "expect operation to be 'CREATE'"


async def mutate(request: AdmissionRequest, view: ClusterView, options: WebhookOptions) -> Verdict:
    """On create: the resource group the pod belongs to, if any, adds its node labels,
    affinity, tolerations and scheduler name. Without --admission-conf nothing changes."""
    if request.operation != CREATE:
        return deny(_ONLY_CREATE)
    if request.object is None:
        return deny(missing_object(request))
    if options.admission_conf is None:
        return allow()
    mutated = mutate_pod(request.object, request.namespace, options.admission_conf.groups())
    return allow(mutated)


async def validate(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    """On create: a pod of our schedulers carries at most one valid disruption budget."""
    if request.operation != CREATE:
        return deny(_ONLY_CREATE)
    if request.object is None:
        return deny(missing_object(request))
    problem = validate_pod(request.object, options.scheduler_names)
    return deny(problem) if problem else allow()
