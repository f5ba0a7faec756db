"""``/queues/mutate`` and ``/queues/validate`` (``pkg/webhooks/admission/queues/``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from volcano_py.api.quantity import parse_quantity
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


def _resource_list(value: Any) -> dict[str, Decimal] | None:
    """A ResourceList with its quantities parsed (``1`` equals ``1000m``, as Go's semantic
    equality); None when absent or not parsable (then compared as written)."""
    if not isinstance(value, dict):
        return None
    try:
        return {str(name): parse_quantity(quantity) for name, quantity in value.items()}
    except (ValueError, TypeError, ArithmeticError):
        return None


def _root_resources_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """``capability``, ``deserved`` or ``guarantee.resource`` differ (upstream's
    ``--enable-root-queue-protection`` check)."""
    pairs = [(old.get(key), new.get(key)) for key in ("capability", "deserved")]
    old_guarantee, new_guarantee = old.get("guarantee"), new.get("guarantee")
    pairs.append((
        old_guarantee.get("resource") if isinstance(old_guarantee, dict) else None,
        new_guarantee.get("resource") if isinstance(new_guarantee, dict) else None,
    ))  # fmt: skip
    for before, after in pairs:
        parsed_before, parsed_after = _resource_list(before), _resource_list(after)
        if parsed_before is None or parsed_after is None:
            if before != after:
                return True
        elif parsed_before != parsed_after:
            return True
    return False


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
    if (
        options.root_queue_protection
        and request.operation == UPDATE
        and _name(queue) == ROOT_QUEUE
        and request.old_object is not None
        and _root_resources_changed(old_spec, new_spec)
    ):
        return deny(
            f"{request.label}: root queue's resource attributes (capability, deserved,"
            " guarantee) cannot be modified"
        )
    if request.operation == UPDATE and all(
        old_spec.get(key) == new_spec.get(key) for key in _HIERARCHY_FIELDS
    ):
        return allow()
    queues = dict(await view.queues())
    queues[_name(queue)] = queue
    problems = validate_queue_hierarchy(queue, queues, max_depth=options.max_queue_depth)
    return deny("; ".join(problems)) if problems else allow()
