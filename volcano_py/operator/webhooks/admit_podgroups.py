"""``/podgroups/mutate`` and ``/podgroups/validate`` (``pkg/webhooks/admission/podgroups/``)."""

from __future__ import annotations

from volcano_py.api.types import DEFAULT_QUEUE
from volcano_py.controllers.admission import mutate_pod_group
from volcano_py.operator.webhooks.checks import CREATE, labelled, missing_object, model_problem
from volcano_py.operator.webhooks.lookups import ClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict, allow, deny


async def mutate(request: AdmissionRequest, view: ClusterView, options: WebhookOptions) -> Verdict:
    """On create: a group in the ``default`` queue goes to its namespace's queue annotation."""
    if request.operation != CREATE:
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    namespace = request.namespace or str(
        (request.object.get("metadata") or {}).get("namespace") or "default"
    )
    annotations = await view.namespace_annotations(namespace)
    return allow(mutate_pod_group(request.object, annotations))


async def validate(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    """On create: the models' checks, and the queue exists and is Open (a queue the queue
    controller has not synced yet has no state and counts as Open, as for Jobs)."""
    if request.operation != CREATE:
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    problem = model_problem(request.object)
    if problem:
        return deny(problem)
    spec = request.object.get("spec")
    queue_name = str((spec if isinstance(spec, dict) else {}).get("queue") or DEFAULT_QUEUE)
    queue = (await view.queues()).get(queue_name)
    if queue is None:
        return deny(labelled(request, [f"spec.queue: unable to find queue {queue_name!r}"]))
    status = queue.get("status")
    state = str((status if isinstance(status, dict) else {}).get("state") or "Open")
    if state != "Open":
        return deny(
            labelled(
                request,
                [
                    f"spec.queue: can only submit PodGroup to queue with state `Open`, queue"
                    f" `{queue_name}` status is `{state}`"
                ],
            )
        )
    return allow()
