"""Queue admission checks that need the other queues: Volcano's queue validating webhook
(``pkg/webhooks/admission/queues/validate/validate_queue.go``) as pure functions over raw
Queue objects.

``validate_queue_hierarchy(queue, queues)`` returns every problem of ``queue`` as it would be
created or updated into the cluster ``queues`` (name -> raw Queue; an entry named like
``queue`` is the old version and is replaced), one readable line each, naming the queue and
the field: ``Queue q1: spec.capability.cpu: 20 exceeds 10, the capability of ancestor queue p``.

Checks, in upstream's order:

* quantities of ``spec.capability``, ``spec.deserved`` and ``spec.guarantee.resource`` are
  valid, not negative, whole for integer resources (``pods``, extended resources);
* ``guarantee <= deserved <= capability`` per resource: a guaranteed resource must also be
  deserved (upstream rejects a guarantee without a deserved amount), a deserved resource the
  capability names must fit in it;
* ``spec.weight`` within the CRD's range [1, 65535];
* the parent (``spec.parent``; empty and ``root`` mean root) is not the queue itself, exists,
  is not below the queue (a cycle), the tree is at most ``max_depth`` levels deep, and a leaf
  that already runs pods cannot become a parent;
* for each resource its capability names, the queue's capability is not above the nearest
  ancestor (root excluded) whose capability names that resource;
* the sum of the guarantees, and of the deserved amounts, of the queue and its siblings is
  not above the parent's guarantee, respectively deserved amount (root's children excepted);
* if the queue has children: no descendant's capability is above the queue's, and the
  children's guarantees and deserved amounts fit in the queue's.

Upstream skips the resource checks of an UPDATE that changes neither the resources nor the
parent, and all hierarchy checks for the ``root`` queue; this function checks the state as
given (root excepted), so a caller validating an update should call it only when those fields
changed if it wants upstream's leniency towards trees that were already inconsistent.
Not here: the hierarchical-DRF annotation checks (``models.queue``), the queue state, and
deletion rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any, Final

from volcano_py.api.quantity import (
    QuantityError,
    format_bytes,
    format_count,
    format_milli,
    parse_quantity,
)
from volcano_py.api.resource import MEMORY, PODS, DimensionDefault, Resource

ROOT: Final = "root"
DEFAULT_MAX_DEPTH: Final = 5
MIN_WEIGHT: Final = 1
MAX_WEIGHT: Final = 65535

# Kubernetes' standard resources that only take whole numbers (``IsIntegerResourceName``).
_INTEGER_STANDARD: Final = frozenset(
    {
        PODS,
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)

_GUARANTEE: Final = "spec.guarantee.resource"
_DESERVED: Final = "spec.deserved"
_CAPABILITY: Final = "spec.capability"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _name(queue: Mapping[str, Any]) -> str:
    return str(_mapping(queue.get("metadata")).get("name") or "")


def _spec(queue: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(queue.get("spec"))


def _parent(queue: Mapping[str, Any]) -> str:
    """The parent name, ``root`` for a queue that names none."""
    return str(_spec(queue).get("parent") or ROOT)


def _resources(queue: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    spec = _spec(queue)
    if field == _GUARANTEE:
        return _mapping(_mapping(spec.get("guarantee")).get("resource"))
    return _mapping(spec.get(field.removeprefix("spec.")))


def _is_integer_resource(name: str) -> bool:
    """``pods``-like counts and extended resources (``vendor.com/thing``) are whole units."""
    if name in _INTEGER_STANDARD:
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def _amount(raw: object) -> Decimal | None:
    try:
        return parse_quantity(raw)  # type: ignore[arg-type]
    except QuantityError:
        return None


def _resource(queue: Mapping[str, Any], field: str) -> Resource:
    """The list as the scheduler reads it; a malformed list reads as empty (its quantities
    are reported by the per-object checks)."""
    try:
        return Resource.from_list(_resources(queue, field))
    except (QuantityError, TypeError):
        return Resource()


def _show(name: str, amount: float) -> str:
    """An amount as a Kubernetes quantity (the scheduler holds cpu and scalars in milli-units,
    memory in bytes, pods as a count)."""
    if name == MEMORY:
        return format_bytes(amount)
    if name == PODS:
        return format_count(amount)
    return format_milli(amount)


def _show_resource(resource: Resource) -> str:
    listed = resource.to_list()
    return ", ".join(f"{name} {value}" for name, value in listed.items())


# ---------------------------------------------------------------------------- one queue


def _quantity_problems(label: str, queue: Mapping[str, Any]) -> list[str]:
    problems = []
    for field in (_CAPABILITY, _DESERVED, _GUARANTEE):
        for name, raw in _resources(queue, field).items():
            amount = _amount(raw)
            where = f"{label}: {field}.{name}"
            if amount is None:
                problems.append(f"{where}: {raw!r} is not a valid quantity")
            elif amount < 0:
                problems.append(f"{where}: must be greater than or equal to 0 (got {raw})")
            elif _is_integer_resource(name) and amount != amount.to_integral_value():
                problems.append(f"{where}: must be an integer (got {raw})")
    return problems


def _ordering_problems(
    label: str, queue: Mapping[str, Any], require_deserved: bool = True
) -> list[str]:
    problems = []
    guarantee = _resources(queue, _GUARANTEE)
    deserved = _resources(queue, _DESERVED)
    capability = _resources(queue, _CAPABILITY)
    for name, raw in guarantee.items():
        low = _amount(raw)
        if name not in deserved and not require_deserved:
            continue
        if name not in deserved:
            problems.append(
                f"{label}: {_DESERVED}.{name}: not set, but {_GUARANTEE}.{name} is {raw};"
                " deserved must be >= guarantee"
            )
            continue
        high = _amount(deserved[name])
        if low is not None and high is not None and high < low:
            problems.append(
                f"{label}: {_DESERVED}.{name}: {deserved[name]} is less than"
                f" {_GUARANTEE}.{name} {raw}; deserved must be >= guarantee"
            )
    for name, raw in deserved.items():
        if name not in capability:
            # An unset capability does not limit that resource.
            continue
        low, high = _amount(raw), _amount(capability[name])
        if low is not None and high is not None and low > high:
            problems.append(
                f"{label}: {_DESERVED}.{name}: {raw} is greater than {_CAPABILITY}.{name}"
                f" {capability[name]}; deserved must be <= capability"
            )
    return problems


def _weight_problems(label: str, queue: Mapping[str, Any]) -> list[str]:
    spec = _spec(queue)
    if "weight" not in spec or spec["weight"] is None:
        return []
    weight = spec["weight"]
    if isinstance(weight, bool) or not isinstance(weight, int):
        return [f"{label}: spec.weight: must be an integer (got {weight!r})"]
    if not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        return [
            f"{label}: spec.weight: must be between {MIN_WEIGHT} and {MAX_WEIGHT} (got {weight})"
        ]
    return []


# ---------------------------------------------------------------------------- the tree


class _Tree:
    """The queues after the change: parent links and children lists."""

    def __init__(self, queue: Mapping[str, Any], queues: Mapping[str, Mapping[str, Any]]) -> None:
        self.queues: dict[str, Mapping[str, Any]] = dict(queues)
        self.queues[_name(queue)] = queue
        self.children: dict[str, list[str]] = {}
        for name, other in self.queues.items():
            if name != ROOT:
                self.children.setdefault(_parent(other), []).append(name)

    def ancestors(self, name: str) -> Iterator[str]:
        """Parent first, up to but excluding root; stops at a missing queue or a cycle."""
        seen = {name}
        parent = _parent(self.queues[name]) if name in self.queues else ROOT
        while parent != ROOT and parent in self.queues and parent not in seen:
            yield parent
            seen.add(parent)
            parent = _parent(self.queues[parent])

    def subtree_max_capability(self, name: str, resource: str, seen: set[str]) -> float:
        """The queue's own capability for ``resource`` if it sets one, else the largest one
        set below it (``findSubtreeMaxCapability``)."""
        if name in seen:
            return 0.0
        seen.add(name)
        own = _resource(self.queues[name], _CAPABILITY).get(resource)
        if own > 0:
            return own
        return max(
            (self.subtree_max_capability(c, resource, seen) for c in self.children.get(name, [])),
            default=0.0,
        )


def _parent_problems(
    label: str, name: str, queue: Mapping[str, Any], tree: _Tree, max_depth: int
) -> list[str]:
    parent = _parent(queue)
    if parent == ROOT:
        return []
    if parent == name:
        return [f"{label}: spec.parent: a queue cannot be its own parent"]
    parent_queue = tree.queues.get(parent)
    if parent_queue is None:
        return [f"{label}: spec.parent: parent queue {parent} not found"]
    problems = []
    chain = [name]
    current = parent
    while current != ROOT:
        if current in chain:
            path = " -> ".join([*chain, current])
            problems.append(f"{label}: spec.parent: {parent} would make a cycle ({path})")
            break
        chain.append(current)
        upper = tree.queues.get(current)
        if upper is None:
            problems.append(f"{label}: spec.parent: ancestor queue {current} not found")
            break
        current = _parent(upper)
    else:
        depth = len(chain)
        if depth > max_depth:
            problems.append(
                f"{label}: spec.parent: the queue would be {depth} levels below root, more than"
                f" the maximum depth {max_depth}"
            )
    siblings = [child for child in tree.children.get(parent, []) if child != name]
    if not siblings:
        allocated = _mapping(_mapping(parent_queue.get("status")).get("allocated"))
        pods = _amount(allocated.get(PODS, 0))
        if pods is not None and pods > 0:
            problems.append(
                f"{label}: spec.parent: queue {parent} cannot become a parent queue: it has"
                f" {pods} allocated pods (status.allocated.pods)"
            )
    return problems


def _ancestor_capability_problems(
    label: str, name: str, queue: Mapping[str, Any], tree: _Tree
) -> list[str]:
    capability = _resource(queue, _CAPABILITY)
    problems = []
    for resource in capability.resource_names():
        own = capability.get(resource)
        for ancestor in tree.ancestors(name):
            limit = _resource(tree.queues[ancestor], _CAPABILITY).get(resource)
            if limit > 0:
                if own > limit:
                    problems.append(
                        f"{label}: {_CAPABILITY}.{resource}: {_show(resource, own)} exceeds"
                        f" {_show(resource, limit)}, the capability of ancestor queue {ancestor}"
                    )
                break
    return problems


def _sum_problems(
    label: str,
    parent_label: str,
    parent: Mapping[str, Any],
    members: Iterable[Mapping[str, Any]],
    who: str,
) -> list[str]:
    """The members' guarantee and deserved sums against the parent's."""
    members = list(members)
    problems = []
    for field, word in ((_GUARANTEE, "guarantee"), (_DESERVED, "deserved")):
        total = Resource()
        for member in members:
            total.add(_resource(member, field))
        limit = _resource(parent, field)
        if limit.less_partly(total, DimensionDefault.ZERO):
            problems.append(
                f"{label}: {field}: the sum of {who} {word} ({_show_resource(total)}) exceeds"
                f" the {word} of {parent_label} ({_show_resource(limit)})"
            )
    return problems


def _children_problems(label: str, name: str, queue: Mapping[str, Any], tree: _Tree) -> list[str]:
    children = tree.children.get(name, [])
    if not children:
        return []
    problems = []
    capability = _resource(queue, _CAPABILITY)
    for resource in capability.resource_names():
        own = capability.get(resource)
        highest = max(tree.subtree_max_capability(c, resource, {name}) for c in children)
        if own < highest:
            problems.append(
                f"{label}: {_CAPABILITY}.{resource}: {_show(resource, own)} is smaller than"
                f" {_show(resource, highest)}, the largest capability among its descendants"
            )
    problems.extend(
        _sum_problems(
            label, f"queue {name}", queue, (tree.queues[c] for c in children), "its children's"
        )
    )
    return problems


def validate_queue_hierarchy(
    queue: Mapping[str, Any],
    queues: Mapping[str, Mapping[str, Any]],
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    require_deserved_for_guarantee: bool = True,
) -> list[str]:
    """Every problem of ``queue`` within the tree ``queues`` (empty: it can be admitted).

    ``require_deserved_for_guarantee``: Volcano's current webhook refuses a guarantee for a
    resource the queue has no ``deserved`` for; earlier releases, and the proportion-style
    queues of the user's documents (weight + guarantee), did not ask for one."""
    name = _name(queue)
    label = f"Queue {name}"
    problems = _quantity_problems(label, queue)
    problems.extend(_ordering_problems(label, queue, require_deserved_for_guarantee))
    problems.extend(_weight_problems(label, queue))
    if name == ROOT:
        return problems
    tree = _Tree(queue, queues)
    parent_problems = _parent_problems(label, name, queue, tree, max_depth)
    problems.extend(parent_problems)
    parent = _parent(queue)
    if not parent_problems and parent != ROOT:
        problems.extend(_ancestor_capability_problems(label, name, queue, tree))
        siblings = [tree.queues[child] for child in tree.children.get(parent, [])]
        problems.extend(
            _sum_problems(
                label,
                f"parent queue {parent}",
                tree.queues[parent],
                siblings,
                "the sibling queues'",
            )
        )
    problems.extend(_children_problems(label, name, queue, tree))
    return problems
