"""Dynamic Resource Allocation (``resource.k8s.io/v1``) as kube-scheduler's dynamicresources
plugin and ``k8s.io/dynamic-resource-allocation/structured`` model it: the devices that
ResourceSlices publish, DeviceClasses, ResourceClaims (and the claims a pod's
ResourceClaimTemplates become), and the allocator that picks devices for a pod's claims on one
node.

Pure data and search, no I/O: the cache keeps a :class:`DraStore` from watch events, a session
gets a :class:`DraSnapshot`, and the predicates plugin asks :func:`allocate` per node.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from volcano_py.api import dra_cel
from volcano_py.api.quantity import QuantityError
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo

DeviceKey = tuple[str, str, str]  # (driver, pool, device)

EXACT_COUNT: Final = "ExactCount"
ALL: Final = "All"
# resource.k8s.io/v1: a claim may be reserved for at most this many consumers.
RESERVED_FOR_MAX: Final = 256
# resource.k8s.io/v1 FirstAvailableDeviceRequestMaxSize (Score: 8 - the alternative's index).
FIRST_AVAILABLE_MAX: Final = 8
DEFAULT_FILTER_TIMEOUT: Final = 10.0  # kube-scheduler's DynamicResourcesArgs.filterTimeout

# The Kubernetes feature gates DRA reads, at their defaults in the release Volcano builds with
# (k8s.io/kubernetes v1.36): DynamicResourceAllocation is GA and locked on.
KUBE_GATE_DEFAULTS: Final[Mapping[str, bool]] = {
    "DynamicResourceAllocation": True,
    "DRAConsumableCapacity": True,
    "DRADeviceTaints": True,
    "DRAPrioritizedList": True,
    "DRASchedulerFilterTimeout": True,
    "DRAAdminAccess": True,
}
# Gates locked to their default there: setting another value is refused.
KUBE_GATES_LOCKED: Final = frozenset({"DynamicResourceAllocation", "DRAAdminAccess"})

ERR_CANNOT_ALLOCATE: Final = "cannot allocate all claims"
ERR_NOT_ON_NODE: Final = "resourceclaim not available on the node"
ERR_IN_USE: Final = "resourceclaim in use"


def _map(value: object) -> Mapping[str, Any]:
    # ``type(...) is dict`` first: JSON objects are dicts, and the ABC check is slow.
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _list(value: object) -> Sequence[Any]:
    return value if isinstance(value, list) else []


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(obj.get("metadata"))


def object_key(obj: Mapping[str, Any]) -> str:
    meta = _meta(obj)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def _qualified(name: str, driver: str) -> tuple[str, str]:
    """(domain, id) of an attribute or capacity name; an unqualified name is the driver's."""
    domain, slash, ident = name.rpartition("/")
    return (domain, ident) if slash else (driver, name)


# ---------------------------------------------------------------------- devices


@dataclass(slots=True)
class Device:
    key: DeviceKey
    attributes: dict[str, dict[str, object]]
    capacity: dict[str, dict[str, Fraction]]
    allow_multiple: bool = False
    # Where it can be used: one node, a node selector (raw NodeSelector), or every node.
    node_name: str = ""
    node_selector: Mapping[str, Any] | None = None
    all_nodes: bool = False
    taints: tuple[Mapping[str, Any], ...] = ()
    _activation: dict[str, Any] | None = None

    @property
    def driver(self) -> str:
        return self.key[0]

    def activation(self) -> dict[str, Any]:
        if self._activation is None:
            self._activation = dra_cel.device_activation(
                self.driver, self.attributes, self.capacity, self.allow_multiple
            )
        return self._activation

    def capacity_of(self, name: str) -> Fraction | None:
        domain, ident = _qualified(name, self.driver)
        return self.capacity.get(domain, {}).get(ident)

    def attribute(self, name: str) -> object | None:
        domain, ident = _qualified(name, self.driver)
        return self.attributes.get(domain, {}).get(ident)


def _attribute_value(raw: Mapping[str, Any]) -> object:
    for kind in ("int", "bool", "string"):
        if kind in raw:
            return raw[kind]
    if "version" in raw:
        try:
            return dra_cel.SemverValue.parse(str(raw["version"]))
        except dra_cel.SelectorError:
            return str(raw["version"])
    return None


def slice_devices(slice_obj: Mapping[str, Any]) -> list[Device]:
    """The devices one ResourceSlice publishes, with where each can be used."""
    spec = _map(slice_obj.get("spec"))
    driver = str(spec.get("driver") or "")
    pool = str(_map(spec.get("pool")).get("name") or "")
    per_device = bool(spec.get("perDeviceNodeSelection"))
    devices = []
    for raw in _list(spec.get("devices")):
        raw = _map(raw)
        attributes: dict[str, dict[str, object]] = {}
        for name, value in _map(raw.get("attributes")).items():
            domain, ident = _qualified(str(name), driver)
            attributes.setdefault(domain, {})[ident] = _attribute_value(_map(value))
        capacity: dict[str, dict[str, Fraction]] = {}
        for name, value in _map(raw.get("capacity")).items():
            domain, ident = _qualified(str(name), driver)
            try:
                amount = dra_cel.exact_quantity(_map(value).get("value", 0))
            except QuantityError:
                continue
            capacity.setdefault(domain, {})[ident] = amount
        where = raw if per_device else spec
        devices.append(
            Device(
                key=(driver, pool, str(raw.get("name") or "")),
                attributes=attributes,
                capacity=capacity,
                allow_multiple=bool(raw.get("allowMultipleAllocations")),
                node_name=str(where.get("nodeName") or ""),
                node_selector=_map(where.get("nodeSelector")) or None,
                all_nodes=bool(where.get("allNodes")),
                taints=tuple(_map(t) for t in _list(raw.get("taints"))),
            )
        )
    return devices


def pool_devices(slices: Iterable[Mapping[str, Any]]) -> list[Device]:
    """The usable devices of every pool: only the slices of a pool's newest generation, and
    no pool whose slices are not all there yet (``IsIncomplete``: the allocator skips it)."""
    pools: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    newest: dict[tuple[str, str], int] = {}
    for slice_obj in slices:
        spec = _map(slice_obj.get("spec"))
        pool = _map(spec.get("pool"))
        key = (str(spec.get("driver") or ""), str(pool.get("name") or ""))
        generation = int(pool.get("generation") or 0)
        if generation > newest.get(key, -1):
            newest[key] = generation
            pools[key] = []
        if generation == newest[key]:
            pools[key].append(slice_obj)
    devices: list[Device] = []
    for key in sorted(pools):
        members = pools[key]
        wanted = int(_map(_map(members[0].get("spec")).get("pool")).get("resourceSliceCount") or 1)
        if len(members) < wanted:
            continue
        for slice_obj in sorted(members, key=lambda s: str(_meta(s).get("name", ""))):
            devices.extend(slice_devices(slice_obj))
    return devices


# ---------------------------------------------------------------------- classes and claims


@dataclass(frozen=True, slots=True)
class DeviceClassInfo:
    name: str
    selectors: tuple[str, ...]
    config: tuple[Mapping[str, Any], ...] = ()


def parse_device_class(obj: Mapping[str, Any]) -> DeviceClassInfo:
    spec = _map(obj.get("spec"))
    return DeviceClassInfo(
        name=str(_meta(obj).get("name", "")),
        selectors=_selectors(spec.get("selectors")),
        config=tuple(_map(c) for c in _list(spec.get("config"))),
    )


def _selectors(raw: object) -> tuple[str, ...]:
    return tuple(str(_map(_map(s).get("cel")).get("expression") or "") for s in _list(raw))


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """One request (or one alternative of a ``firstAvailable`` list); its ``name`` is what
    an allocation result names (``request`` or ``request/subrequest``)."""

    name: str
    class_name: str
    selectors: tuple[str, ...] = ()
    mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool = False
    capacity: tuple[tuple[str, Fraction], ...] = ()
    tolerations: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """A request: one way (``exactly``) or alternatives in order (``firstAvailable``)."""

    name: str
    alternatives: tuple[DeviceRequest, ...]


def _device_request(name: str, raw: Mapping[str, Any]) -> DeviceRequest:
    capacity = []
    for key, value in _map(_map(raw.get("capacity")).get("requests")).items():
        try:
            capacity.append((str(key), dra_cel.exact_quantity(value)))
        except QuantityError:
            continue
    mode = str(raw.get("allocationMode") or EXACT_COUNT)
    return DeviceRequest(
        name=name,
        class_name=str(raw.get("deviceClassName") or ""),
        selectors=_selectors(raw.get("selectors")),
        mode=mode,
        count=int(raw.get("count") or 1) if mode == EXACT_COUNT else 0,
        admin_access=bool(raw.get("adminAccess")),
        capacity=tuple(capacity),
        tolerations=tuple(_map(t) for t in _list(raw.get("tolerations"))),
    )


def claim_requests(claim_spec: Mapping[str, Any]) -> tuple[ClaimRequest, ...]:
    found = []
    for raw in _list(_map(claim_spec.get("devices")).get("requests")):
        raw = _map(raw)
        name = str(raw.get("name") or "")
        if raw.get("firstAvailable"):
            alternatives = tuple(
                _device_request(f"{name}/{_map(sub).get('name', '')}", _map(sub))
                for sub in _list(raw.get("firstAvailable"))
            )
        else:
            alternatives = (_device_request(name, _map(raw.get("exactly"))),)
        found.append(ClaimRequest(name, alternatives))
    return tuple(found)


@dataclass(frozen=True, slots=True)
class MatchConstraint:
    requests: tuple[str, ...]  # empty: every request of the claim
    attribute: str


@dataclass(slots=True)
class ClaimInfo:
    key: str  # namespace/name
    uid: str
    requests: tuple[ClaimRequest, ...]
    constraints: tuple[MatchConstraint, ...]
    config: tuple[Mapping[str, Any], ...]
    allocation: Mapping[str, Any] | None
    reserved_for: tuple[Mapping[str, Any], ...]
    owner_uid: str = ""  # the pod (controller owner) a template made it for
    deleting: bool = False
    obj: Mapping[str, Any] = field(default_factory=dict)

    @property
    def namespace(self) -> str:
        return self.key.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split("/", 1)[1]

    def reserved_for_pod(self, pod_uid: str) -> bool:
        return any(str(r.get("uid") or "") == pod_uid for r in self.reserved_for)

    def allocated_devices(self) -> list[tuple[DeviceKey, dict[str, Fraction]]]:
        return allocation_devices(self.allocation)


def allocation_devices(
    allocation: Mapping[str, Any] | None,
) -> list[tuple[DeviceKey, dict[str, Fraction]]]:
    """The devices (and capacity consumed of each) an allocation result holds."""
    found = []
    for result in _list(_map(_map(allocation).get("devices")).get("results")):
        result = _map(result)
        if result.get("adminAccess"):
            continue  # admin access does not use the device up
        consumed = {}
        for name, value in _map(result.get("consumedCapacity")).items():
            try:
                consumed[str(name)] = dra_cel.exact_quantity(value)
            except QuantityError:
                continue
        key = (
            str(result.get("driver", "")),
            str(result.get("pool", "")),
            str(result.get("device", "")),
        )
        found.append((key, consumed))
    return found


def parse_claim(obj: Mapping[str, Any]) -> ClaimInfo:
    meta = _meta(obj)
    spec = _map(obj.get("spec"))
    status = _map(obj.get("status"))
    devices = _map(spec.get("devices"))
    owner = ""
    for ref in _list(meta.get("ownerReferences")):
        ref = _map(ref)
        if ref.get("controller") and ref.get("kind") == "Pod":
            owner = str(ref.get("uid") or "")
    constraints = []
    for raw in _list(devices.get("constraints")):
        raw = _map(raw)
        if raw.get("matchAttribute"):
            constraints.append(
                MatchConstraint(
                    tuple(str(r) for r in _list(raw.get("requests"))),
                    str(raw["matchAttribute"]),
                )
            )
    return ClaimInfo(
        key=object_key(obj),
        uid=str(meta.get("uid") or object_key(obj)),
        requests=claim_requests(spec),
        constraints=tuple(constraints),
        config=tuple(_map(c) for c in _list(devices.get("config"))),
        allocation=_map(status.get("allocation")) or None,
        reserved_for=tuple(_map(r) for r in _list(status.get("reservedFor"))),
        owner_uid=owner,
        deleting=bool(meta.get("deletionTimestamp")),
        obj=obj,
    )


def pod_claim_names(pod: Mapping[str, Any]) -> list[tuple[str, str | None, bool]]:
    """(pod claim name, ResourceClaim name or None when not made yet, made from a template)
    of every ``spec.resourceClaims`` entry (``resourceclaim.Name``)."""
    statuses = {
        str(_map(s).get("name")): _map(s)
        for s in _list(_map(pod.get("status")).get("resourceClaimStatuses"))
    }
    found: list[tuple[str, str | None, bool]] = []
    for raw in _list(_map(pod.get("spec")).get("resourceClaims")):
        raw = _map(raw)
        name = str(raw.get("name") or "")
        if raw.get("resourceClaimName"):
            found.append((name, str(raw["resourceClaimName"]), False))
        elif raw.get("resourceClaimTemplateName"):
            status = statuses.get(name)
            claim = status.get("resourceClaimName") if status is not None else None
            found.append((name, str(claim) if claim else None, True))
            if status is not None and not claim:
                found.pop()  # the controller decided no claim is needed
    return found


def has_claims(pod: Mapping[str, Any]) -> bool:
    return bool(_list(_map(pod.get("spec")).get("resourceClaims")))


# ---------------------------------------------------------------------- store and snapshot


@dataclass(slots=True)
class DraSnapshot:
    """What a session sees: devices (shared, never mutated), classes, claims by key, and
    what the claims' allocations already use."""

    devices: list[Device]
    classes: dict[str, DeviceClassInfo]
    claims: dict[str, ClaimInfo]
    templates: dict[str, Mapping[str, Any]]

    def usage(self) -> DeviceUsage:
        usage = DeviceUsage()
        for claim in self.claims.values():
            for key, consumed in claim.allocated_devices():
                usage.add(key, consumed)
        return usage


@dataclass(slots=True)
class DeviceUsage:
    """Devices taken (exclusive) and capacity consumed (devices that allow several
    allocations), with undo for a session's allocations."""

    taken: dict[DeviceKey, int] = field(default_factory=dict)
    consumed: dict[DeviceKey, dict[str, Fraction]] = field(default_factory=dict)

    def add(self, key: DeviceKey, consumed: Mapping[str, Fraction]) -> None:
        self.taken[key] = self.taken.get(key, 0) + 1
        if consumed:
            mine = self.consumed.setdefault(key, {})
            for name, amount in consumed.items():
                mine[name] = mine.get(name, Fraction(0)) + amount

    def remove(self, key: DeviceKey, consumed: Mapping[str, Fraction]) -> None:
        count = self.taken.get(key, 0) - 1
        if count > 0:
            self.taken[key] = count
        else:
            self.taken.pop(key, None)
        mine = self.consumed.get(key)
        if mine is not None:
            for name, amount in consumed.items():
                mine[name] = mine.get(name, Fraction(0)) - amount

    def in_use(self, key: DeviceKey) -> bool:
        return key in self.taken


@dataclass(slots=True)
class DraStore:
    """The cache's DRA objects, from watch events; devices are re-derived only when a
    ResourceSlice changed."""

    classes: dict[str, DeviceClassInfo] = field(default_factory=dict)
    slices: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    claims: dict[str, ClaimInfo] = field(default_factory=dict)
    templates: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    _devices: list[Device] | None = None

    def on_class(self, deleted: bool, obj: Mapping[str, Any]) -> None:
        name = str(_meta(obj).get("name", ""))
        if deleted:
            self.classes.pop(name, None)
        else:
            self.classes[name] = parse_device_class(obj)

    def on_slice(self, deleted: bool, obj: Mapping[str, Any]) -> None:
        name = str(_meta(obj).get("name", ""))
        if deleted:
            self.slices.pop(name, None)
        else:
            self.slices[name] = obj
        self._devices = None

    def on_claim(self, deleted: bool, obj: Mapping[str, Any]) -> None:
        key = object_key(obj)
        if deleted:
            self.claims.pop(key, None)
        else:
            self.claims[key] = parse_claim(obj)

    def on_template(self, deleted: bool, obj: Mapping[str, Any]) -> None:
        key = object_key(obj)
        if deleted:
            self.templates.pop(key, None)
        else:
            self.templates[key] = obj

    def assume(
        self, claim_key: str, allocation: Mapping[str, Any], consumer: Mapping[str, Any]
    ) -> None:
        """A bind wrote ``allocation`` and reserved the claim for ``consumer``: seen here at
        once, before the claim's watch event (upstream's assume cache)."""
        claim = self.claims.get(claim_key)
        if claim is None:
            return
        reserved = claim.reserved_for
        if not any(r.get("uid") == consumer.get("uid") for r in reserved):
            reserved = (*reserved, consumer)
        self.claims[claim_key] = ClaimInfo(
            claim.key,
            claim.uid,
            claim.requests,
            claim.constraints,
            claim.config,
            claim.allocation or allocation,
            reserved,
            claim.owner_uid,
            claim.deleting,
            claim.obj,
        )

    @property
    def empty(self) -> bool:
        return not (self.slices or self.claims or self.classes)

    def snapshot(self) -> DraSnapshot:
        if self._devices is None:
            self._devices = pool_devices(self.slices.values())
        return DraSnapshot(
            devices=self._devices,
            classes=dict(self.classes),
            claims=dict(self.claims),
            templates=dict(self.templates),
        )


# ---------------------------------------------------------------------- allocator


class AllocationTimeout(RuntimeError):
    """The search took longer than the filter timeout."""


@dataclass(slots=True)
class SelectorCache:
    """Selector answers per (expression, device): CEL is slow, devices and selectors fixed."""

    answers: dict[tuple[str, DeviceKey], bool | str] = field(default_factory=dict)

    def matches(self, expression: str, device: Device) -> bool:
        key = (expression, device.key)
        found = self.answers.get(key)
        if found is None:
            try:
                found = dra_cel.evaluate(expression, device.activation())
            except dra_cel.SelectorError as error:
                found = str(error)
            self.answers[key] = found
        if isinstance(found, str):
            raise dra_cel.SelectorError(found)
        return found


def _tolerated(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    effect = taint.get("effect")
    for toleration in tolerations:
        if toleration.get("effect") and toleration.get("effect") != effect:
            continue
        operator = toleration.get("operator") or "Equal"
        if operator == "Exists" and (
            not toleration.get("key") or toleration.get("key") == taint.get("key")
        ):
            return True
        if (
            operator == "Equal"
            and toleration.get("key") == taint.get("key")
            and (toleration.get("value") or "") == (taint.get("value") or "")
        ):
            return True
    return False


@dataclass(slots=True)
class _Slot:
    claim: int
    request: DeviceRequest
    devices: list[Device]  # the candidates that match it, in slice order


@dataclass(slots=True)
class Allocator:
    """Picks devices for claims on one node: every request of every claim, each device used
    once (unless it allows several allocations and has capacity left), every matchAttribute
    constraint kept. Backtracks as ``structured``'s allocator does, within ``timeout``."""

    classes: Mapping[str, DeviceClassInfo]
    selectors: SelectorCache
    usage: DeviceUsage
    timeout: float = DEFAULT_FILTER_TIMEOUT
    device_taints: bool = True
    consumable_capacity: bool = True

    def matching(
        self, claim: ClaimInfo, request: DeviceRequest, devices: Sequence[Device]
    ) -> list[Device]:
        """The devices that satisfy a request's class and selectors (SelectorError names the
        failing selector as kube-scheduler does)."""
        device_class = self.classes.get(request.class_name)
        if device_class is None:
            raise dra_cel.SelectorError(
                f"request {request.name}: device class {request.class_name} does not exist"
            )
        found = []
        for device in devices:
            ok = True
            for index, expression in enumerate(device_class.selectors):
                try:
                    if not self.selectors.matches(expression, device):
                        ok = False
                        break
                except dra_cel.SelectorError as error:
                    raise dra_cel.SelectorError(
                        f"class {device_class.name}: selector #{index}: {error}"
                    ) from None
            if not ok:
                continue
            for index, expression in enumerate(request.selectors):
                try:
                    if not self.selectors.matches(expression, device):
                        ok = False
                        break
                except dra_cel.SelectorError as error:
                    raise dra_cel.SelectorError(
                        f"claim {claim.key}: selector #{index}: {error}"
                    ) from None
            if ok and self.device_taints and device.taints:
                ok = all(
                    t.get("effect") not in ("NoSchedule", "NoExecute")
                    or _tolerated(t, request.tolerations)
                    for t in device.taints
                )
            if ok:
                found.append(device)
        return found

    def _consumes(self, device: Device, request: DeviceRequest) -> dict[str, Fraction] | None:
        """What taking ``device`` for ``request`` consumes of its capacity, or None when it
        does not fit (capacity short, or an exclusive device asked for more than it has)."""
        asked = dict(request.capacity)
        if not device.allow_multiple or not self.consumable_capacity:
            for name, wanted in asked.items():
                have = device.capacity_of(name)
                if have is None or wanted > have:
                    return None
            return {}
        consumed: dict[str, Fraction] = {}
        used = self.usage.consumed.get(device.key, {})
        for domain, names in device.capacity.items():
            for ident, total in names.items():
                name = ident if domain == device.driver else f"{domain}/{ident}"
                amount: Fraction | None = asked.pop(name, None)
                if amount is None:
                    amount = total  # no request for it: the whole capacity
                if used.get(name, Fraction(0)) + amount > total:
                    return None
                consumed[name] = amount
        if asked:
            return None  # asks for a capacity the device does not have
        return consumed

    def allocate(
        self, claims: Sequence[ClaimInfo], devices: Sequence[Device], node_name: str
    ) -> list[dict[str, Any]] | None:
        """One allocation result (``status.allocation``) per claim, or None when the claims
        cannot all be allocated on this node. Raises SelectorError for a selector that fails
        and AllocationTimeout past the timeout."""
        deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
        # Per claim request, its alternatives' candidate lists.
        plans: list[list[list[_Slot]]] = []
        for index, claim in enumerate(claims):
            for request in claim.requests:
                options = []
                for alternative in request.alternatives:
                    candidates = self.matching(claim, alternative, devices)
                    if alternative.mode == ALL:
                        if not candidates:
                            continue
                        slots = [_Slot(index, alternative, [d]) for d in candidates]
                    else:
                        slots = [_Slot(index, alternative, candidates)] * alternative.count
                    options.append(slots)
                if not options:
                    return None
                plans.append(options)
        chosen: list[tuple[_Slot, Device, dict[str, Fraction]]] = []
        picked: dict[DeviceKey, int] = {}

        def fits_constraints(slot: _Slot, device: Device) -> bool:
            claim = claims[slot.claim]
            base = slot.request.name.split("/", 1)[0]
            for constraint in claim.constraints:
                if constraint.requests and base not in constraint.requests:
                    continue
                value = device.attribute(constraint.attribute)
                if value is None:
                    return False
                for other_slot, other, _consumed in chosen:
                    if other_slot.claim != slot.claim:
                        continue
                    other_base = other_slot.request.name.split("/", 1)[0]
                    if constraint.requests and other_base not in constraint.requests:
                        continue
                    if other.attribute(constraint.attribute) != value:
                        return False
            return True

        def search(slots: list[_Slot], position: int, plan_index: int, first: int) -> bool:
            if deadline is not None and time.monotonic() > deadline:
                raise AllocationTimeout(f"node {node_name}: timed out trying to allocate devices")
            if position == len(slots):
                return expand(plan_index + 1)
            slot = slots[position]
            # The devices of one request are a set: a later slot of the same request starts
            # after the device the earlier one took.
            for at in range(first, len(slot.devices)):
                device = slot.devices[at]
                shared = device.allow_multiple and self.consumable_capacity
                if (
                    not slot.request.admin_access
                    and not shared
                    and (self.usage.in_use(device.key) or picked.get(device.key))
                ):
                    continue
                if slot.request.admin_access and any(
                    d.key == device.key and s.claim == slot.claim for s, d, _ in chosen
                ):
                    continue
                if not fits_constraints(slot, device):
                    continue
                consumed = self._consumes(device, slot.request)
                if consumed is None:
                    continue
                chosen.append((slot, device, consumed))
                picked[device.key] = picked.get(device.key, 0) + 1
                if shared:
                    self.usage.add(device.key, consumed)
                following = slots[position + 1] if position + 1 < len(slots) else None
                try:
                    if search(slots, position + 1, plan_index, at + 1 if following is slot else 0):
                        return True
                finally:
                    if shared:
                        self.usage.remove(device.key, consumed)
                chosen.pop()
                picked[device.key] -= 1
                if slot.request.mode == ALL:
                    return False  # every matching device, or none
            return False

        def expand(plan_index: int) -> bool:
            if plan_index == len(plans):
                return True
            # The first available alternative first.
            return any(search(slots, 0, plan_index, 0) for slots in plans[plan_index])

        if not expand(0):
            return None
        return [self._result(claim, index, chosen, node_name) for index, claim in enumerate(claims)]

    def _result(
        self,
        claim: ClaimInfo,
        index: int,
        chosen: Sequence[tuple[_Slot, Device, dict[str, Fraction]]],
        node_name: str,
    ) -> dict[str, Any]:
        results = []
        local = False
        selectors: list[Mapping[str, Any]] = []
        classes_used: list[str] = []
        for slot, device, consumed in chosen:
            if slot.claim != index:
                continue
            result: dict[str, Any] = {
                "request": slot.request.name,
                "driver": device.key[0],
                "pool": device.key[1],
                "device": device.key[2],
            }
            if slot.request.admin_access:
                result["adminAccess"] = True
            if consumed:
                result["consumedCapacity"] = {k: _format(v) for k, v in sorted(consumed.items())}
            results.append(result)
            local = local or bool(device.node_name)
            if device.node_selector is not None:
                selectors.append(device.node_selector)
            if slot.request.class_name not in classes_used:
                classes_used.append(slot.request.class_name)
        config: list[dict[str, Any]] = []
        for class_name in classes_used:
            for entry in self.classes[class_name].config:
                config.append({"source": "FromClass", "requests": [], **entry})
        for entry in claim.config:
            config.append({"source": "FromClaim", **entry})
        allocation: dict[str, Any] = {"devices": {"results": results}}
        if config:
            allocation["devices"]["config"] = config
        if local:
            allocation["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            }
        elif selectors:
            term: dict[str, list[Any]] = {"matchExpressions": [], "matchFields": []}
            for selector in selectors:
                for raw_term in _list(selector.get("nodeSelectorTerms"))[:1]:
                    for part in ("matchExpressions", "matchFields"):
                        for requirement in _list(_map(raw_term).get(part)):
                            if requirement not in term[part]:
                                term[part].append(requirement)
            allocation["nodeSelector"] = {
                "nodeSelectorTerms": [{k: v for k, v in term.items() if v}]
            }
        return allocation


def _format(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{milli.numerator}m"
    return str(float(value))


# ---------------------------------------------------------------------- quota amounts


@dataclass(slots=True)
class DraAmount:
    """What one DeviceClass holds or may hold: devices, and capacity per dimension."""

    count: int = 0
    capacity: dict[str, Fraction] = field(default_factory=dict)

    def add(self, other: DraAmount, sign: int = 1) -> None:
        self.count = max(0, self.count + sign * other.count)
        for dim, amount in other.capacity.items():
            value = self.capacity.get(dim, Fraction(0)) + sign * amount
            self.capacity[dim] = max(Fraction(0), value)


DraAmounts = dict[str, DraAmount]  # by DeviceClass


def claim_amounts(claim: ClaimInfo, consumable: bool) -> DraAmounts:
    """``buildTaskDRAInfo`` for one claim: per class, ``count`` devices (1 by default) and
    capacity times count."""
    found: DraAmounts = {}
    for request in claim.requests:
        if len(request.alternatives) != 1 or request.alternatives[0].name != request.name:
            continue  # firstAvailable: not counted
        exactly = request.alternatives[0]
        if exactly.mode == ALL or not exactly.class_name:
            continue
        amount = found.setdefault(exactly.class_name, DraAmount())
        amount.count += exactly.count
        if consumable:
            for dim, value in exactly.capacity:
                amount.capacity[dim] = amount.capacity.get(dim, Fraction(0)) + value * exactly.count
    return {name: amount for name, amount in found.items()}


def task_claims(
    task: TaskInfo, snapshot: DraSnapshot | None, consumable: bool
) -> dict[str, DraAmounts]:
    """The task's claims (by key) and what each asks for; empty for a pod without claims or
    whose claims are not there yet."""
    if snapshot is None or not has_claims(task.pod):
        return {}
    found: dict[str, DraAmounts] = {}
    for _name, claim_name, _template in pod_claim_names(task.pod):
        if claim_name is None:
            continue
        key = f"{task.namespace}/{claim_name}"
        claim = snapshot.claims.get(key)
        if claim is None or key in found:
            continue
        amounts = claim_amounts(claim, consumable)
        if amounts:
            found[key] = amounts
    return found


class QueueDraUsage:
    """What each queue's allocated pods hold of each DeviceClass, a claim counted once per
    queue, for the queue's ``status.allocated`` (``deviceclass/<class>``: devices,
    ``<dim>.deviceclass/<class>``: capacity)."""

    def __init__(self, snapshot: DraSnapshot, consumable: bool) -> None:
        self.snapshot = snapshot
        self.consumable = consumable
        self.by_queue: dict[str, DraAmounts] = {}
        self.seen: dict[str, set[str]] = {}

    def add(self, task: TaskInfo, queues: Iterable[str]) -> None:
        claims = task_claims(task, self.snapshot, self.consumable)
        for queue in queues:
            seen = self.seen.setdefault(queue, set())
            amounts = self.by_queue.setdefault(queue, {})
            for key, per_class in claims.items():
                if key in seen:
                    continue
                seen.add(key)
                for name, amount in per_class.items():
                    amounts.setdefault(name, DraAmount()).add(amount)

    def write_into(self, allocated: Mapping[str, Resource]) -> None:
        for queue, amounts in self.by_queue.items():
            total = allocated.get(queue)
            if total is None:
                continue
            listed: dict[str, str] = {}
            for name, amount in amounts.items():
                if amount.count > 0:
                    listed[f"deviceclass/{name}"] = str(amount.count)
                for dim, value in amount.capacity.items():
                    if value > 0:
                        listed[f"{dim}.deviceclass/{name}"] = _format(value)
            if listed:
                total.add(Resource.from_list(listed))
