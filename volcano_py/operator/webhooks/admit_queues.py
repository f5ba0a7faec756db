"""``/queues/mutate`` and ``/queues/validate`` (``pkg/webhooks/admission/queues/``)."""

from __future__ import annotations

from typing import Any

from volcano_py.api.types import DEFAULT_QUEUE, ROOT_QUEUE
from volcano_py.controllers.admission import mutate_queue
from volcano_py.models.queue_hierarchy import validate_queue_hierarchy
from volcano_py.operator.webhooks.checks import (
    CREATE,
    DELETE,
    UPDATE,
    missing_object,
    model_problem,
)
from volcano_py.operator.webhooks.lookups import ClusterView
from volcano_py.operator.webhooks.options import WebhookOptions
from volcano_py.operator.webhooks.review import AdmissionRequest, Verdict, allow, deny

# A change of these asks for the hierarchy checks again (needsValidateHierarchicalQueue).
_HIERARCHY_FIELDS = ("parent", "capability", "deserved", "guarantee")


async def mutate(request: AdmissionRequest, view: ClusterView, options: WebhookOptions) -> Verdict:
    """On create: reclaimable true, weight 1, hierarchy annotations rooted at ``root``."""
    if request.operation != CREATE:
        return allow()
    if request.object is None:
        return deny(missing_object(request))
    return allow(mutate_queue(request.object))


def _spec(queue: dict[str, Any] | None) -> dict[str, Any]:
    spec = (queue or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _name(queue: dict[str, Any]) -> str:
    metadata = queue.get("metadata")
    return str(metadata.get("name") or "") if isinstance(metadata, dict) else ""


def _allocated_pods(queue: dict[str, Any] | None) -> int:
    status = (queue or {}).get("status")
    allocated = status.get("allocated") if isinstance(status, dict) else None
    pods = allocated.get("pods") if isinstance(allocated, dict) else None
    try:
        return int(str(pods)) if pods is not None else 0
    except ValueError:
        return 0


async def _deleting(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    """``validateQueueDeleting``: not ``default`` nor ``root``, nor a queue with child queues
    (nor, with ``--enable-queue-allocated-pods-check``, one with allocated pods)."""
    name = request.name or _name(request.old_object or {})
    if name in (DEFAULT_QUEUE, ROOT_QUEUE):
        return deny(f"Queue {name}: `{name}` queue can not be deleted")
    pods = _allocated_pods(request.old_object) if options.queue_allocated_pods_check else 0
    if pods:
        return deny(f"Queue {name}: cannot be deleted because it has allocated Pods: {pods}")
    children = sorted(
        child
        for child, queue in (await view.queues()).items()
        if _spec(queue).get("parent") == name
    )
    if children:
        return deny(
            f"Queue {name}: can not be deleted because it has {len(children)} child queues:"
            f" {', '.join(children)}"
        )
    return allow()


async def validate(
    request: AdmissionRequest, view: ClusterView, options: WebhookOptions
) -> Verdict:
    """Create and update: the models' checks (quantities, guarantee <= deserved <=
    capability, state, hierarchy annotations), then the queue's place among the others when
    it is new or its parent or resources change. Delete: ``_deleting``."""
    if request.operation == DELETE:
        return await _deleting(request, view, options)
    if request.operation not in (CREATE, UPDATE):
        return deny(
            f"{request.label}: invalid operation `{request.operation}`, expect operation to be"
            " `CREATE`, `UPDATE` or `DELETE`"
        )
    queue = request.object
    if queue is None:
        return deny(missing_object(request))
    problem = model_problem(queue)
    if problem:
        return deny(problem)
    old_spec, new_spec = _spec(request.old_object), _spec(queue)
    if request.operation == UPDATE and all(
        old_spec.get(key) == new_spec.get(key) for key in _HIERARCHY_FIELDS
    ):
        return allow()
    queues = dict(await view.queues())
    queues[_name(queue)] = queue
    problems = validate_queue_hierarchy(queue, queues, max_depth=options.max_queue_depth)
    return deny("; ".join(problems)) if problems else allow()
