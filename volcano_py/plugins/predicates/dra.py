"""kube-scheduler's dynamicresources plugin inside predicates, as Volcano wires it (PreFilter,
Filter, Reserve/Unreserve at the allocate and deallocate events, PreBind at the bind).

* PreFilter (``pre_predicate``): every claim of the pod exists (a template's claim made for
  this pod), is not being deleted, is not in use by others up to the limit, is not being
  allocated for another pod in this session, and its device classes exist.
* Filter (``mask``): a node passes when the claims already allocated are usable there and the
  others can be allocated from the devices it reaches. A vectorised count of free matching
  devices per node rules most nodes out; the exact search (``api.dra.Allocator``) runs on
  the few left. A pod without claims costs one dict lookup.
* Reserve (the allocate event): the devices are picked on the chosen node and held for the
  session; the task carries the allocations to its bind (``TaskInfo.claim_allocations``),
  where the binder writes them into the claims' status with the pod in ``reservedFor``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api import dra
from volcano_py.api.dra_cel import SelectorError
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, IntArray
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import NodeMask
from volcano_py.framework.session import Session
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex, term_mask
from volcano_py.plugins._kube_scheduling.selectors import node_selector_terms

PLUGIN: Final = "DynamicResources"
_SELECTOR_MEMORY: Final = "dra selector answers"
# Selector answers kept across sessions, per (expression, device): bounded, as devices come
# and go.
_MAX_ANSWERS: Final = 200_000


def _unresolvable(message: str, plugin: str) -> Status:
    return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, message, plugin)


@dataclass(slots=True)
class _Resolved:
    claims: list[dra.ClaimInfo]
    to_allocate: list[dra.ClaimInfo]
    error: Status | None = None


class DynamicResources:
    def __init__(
        self, ssn: Session, plugin: str, timeout: float, gates: Mapping[str, bool]
    ) -> None:
        snapshot = ssn.dra
        assert snapshot is not None
        self.ssn = ssn
        self.plugin = plugin
        self.snapshot = snapshot
        self.usage = snapshot.usage()
        memory = ssn.state.plugin_memory.setdefault(plugin, {})
        selectors = memory.get(_SELECTOR_MEMORY)
        if not isinstance(selectors, dra.SelectorCache) or len(selectors.answers) > _MAX_ANSWERS:
            selectors = memory[_SELECTOR_MEMORY] = dra.SelectorCache()
        self.allocator = dra.Allocator(
            snapshot.classes,
            selectors,
            self.usage,
            timeout=timeout,
            device_taints=gates.get("DRADeviceTaints", True),
            consumable_capacity=gates.get("DRAConsumableCapacity", True),
        )
        self.prioritized_list = gates.get("DRAPrioritizedList", True)
        self.size = len(ssn.node_list)
        self.index = NodeIndex(ssn.node_list)
        rows = {node.name: node.row for node in ssn.node_list}
        # Each device's node row (-1: not bound to one node, or to a node not in the session).
        self.devices = snapshot.devices
        self.device_rows = np.array(
            [rows.get(d.node_name, -1) if d.node_name else -1 for d in self.devices],
            dtype=np.intp,
        )
        self.positions = {device.key: p for p, device in enumerate(self.devices)}
        self.local: dict[int, list[dra.Device]] = {}
        self.shared: list[int] = []  # devices not bound to one node
        for position, device in enumerate(self.devices):
            row = int(self.device_rows[position])
            if row >= 0:
                self.local.setdefault(row, []).append(device)
            elif not device.node_name:
                self.shared.append(position)
        self._shared_masks: dict[int, BoolArray] = {}
        # Claims allocated in this session (Reserve): claim key -> (allocation, task uid).
        self.pending: dict[str, tuple[dict[str, Any], str]] = {}
        self.version = 0
        self._masks: dict[str, tuple[int, NodeMask | None]] = {}
        # Per task: the exact allocations found per node row, at a session version.
        self._found: dict[str, tuple[int, dict[int, list[dict[str, Any]] | None]]] = {}
        self._needs_search: dict[str, bool] = {}
        self._matches: dict[tuple[str, tuple[str, ...], str], IntArray] = {}
        # Exclusive devices taken (allocated claims and this session's allocations).
        self.in_use = np.array(
            [self.usage.in_use(d.key) and not d.allow_multiple for d in self.devices],
            dtype=np.bool_,
        )

    def register(self, ssn: Session) -> None:
        ssn.add_predicate_mask_fn(self.plugin, self.mask)
        ssn.add_task_predicate_fn(self.plugin, self.task_predicate)
        if self._has_prioritized_lists():
            ssn.add_batch_node_order_fn(self.plugin, self.scores)
        ssn.add_event_handler(
            EventHandler(allocate=self._allocate, deallocate=self._deallocate, owner=self.plugin)
        )

    # ------------------------------------------------------------------ claims of a pod

    def resolve(self, task: TaskInfo) -> _Resolved:
        pod = task.pod
        claims: list[dra.ClaimInfo] = []
        to_allocate: list[dra.ClaimInfo] = []
        seen: set[str] = set()
        for _pod_claim, claim_name, from_template in dra.pod_claim_names(pod):
            if claim_name is None:
                message = f'pod "{task.namespace}/{task.name}": ResourceClaim not created yet'
                return _Resolved([], [], _unresolvable(message, self.plugin))
            key = f"{task.namespace}/{claim_name}"
            if key in seen:
                continue
            seen.add(key)
            claim = self.snapshot.claims.get(key)
            if claim is None:
                message = f'resourceclaim.resource.k8s.io "{claim_name}" not found'
                return _Resolved([], [], _unresolvable(message, self.plugin))
            if claim.deleting:
                message = f'resourceclaim "{claim_name}" is being deleted'
                return _Resolved([], [], _unresolvable(message, self.plugin))
            if from_template and claim.owner_uid != task.uid:
                message = (
                    f"ResourceClaim {key} was not created for Pod {task.namespace}/{task.name}"
                    " (Pod is not owner)"
                )
                return _Resolved([], [], _unresolvable(message, self.plugin))
            pending = self.pending.get(key)
            if claim.allocation is None and pending is not None and pending[1] != task.uid:
                message = f"resource claim {key} is in the process of being allocated"
                return _Resolved([], [], _unresolvable(message, self.plugin))
            if (
                claim.allocation is not None
                and len(claim.reserved_for) >= dra.RESERVED_FOR_MAX
                and not claim.reserved_for_pod(task.uid)
            ):
                return _Resolved([], [], _unresolvable(dra.ERR_IN_USE, self.plugin))
            claims.append(claim)
            if claim.allocation is None and pending is None:
                for request in claim.requests:
                    if not self.prioritized_list and request.alternatives[0].name != request.name:
                        message = (
                            f"resource claim {key}, request {request.name}: has subrequests, but"
                            " the DRAPrioritizedList feature is disabled"
                        )
                        return _Resolved([], [], _unresolvable(message, self.plugin))
                    for alternative in request.alternatives:
                        if alternative.class_name not in self.snapshot.classes:
                            message = (
                                f"request {request.name}: device class"
                                f" {alternative.class_name} does not exist"
                            )
                            return _Resolved([], [], _unresolvable(message, self.plugin))
                to_allocate.append(claim)
        return _Resolved(claims, to_allocate)

    def pre_predicate(self, task: TaskInfo) -> Status | None:
        if not dra.has_claims(task.pod):
            return None
        return self.resolve(task).error

    # ------------------------------------------------------------------ Filter

    def _node_selector_mask(self, selector: Mapping[str, Any] | None) -> BoolArray:
        if not selector:
            return np.ones(self.size, dtype=np.bool_)
        found = np.zeros(self.size, dtype=np.bool_)
        for term in node_selector_terms(selector):
            found |= term_mask(term, self.index)
        return found

    def _reach(self, position: int) -> BoolArray:
        """The nodes a device that is not bound to one node can be used on."""
        found = self._shared_masks.get(position)
        if found is None:
            device = self.devices[position]
            if device.node_name:
                found = np.zeros(self.size, dtype=np.bool_)  # its node is not in the session
            elif device.all_nodes:
                found = np.ones(self.size, dtype=np.bool_)
            elif device.node_selector is None:
                found = np.zeros(self.size, dtype=np.bool_)  # says nowhere (invalid)
            else:
                found = self._node_selector_mask(device.node_selector)
            self._shared_masks[position] = found
        return found

    def _devices_of(self, row: int) -> list[dra.Device]:
        found = list(self.local.get(row, ()))
        found.extend(self.devices[p] for p in self.shared if self._reach(p)[row])
        return found

    def _matched(self, claim: dra.ClaimInfo, request: dra.DeviceRequest) -> IntArray:
        """Positions of the devices whose class and request selectors match (and whose taints
        the request tolerates): selectors do not change in a session, so kept per request
        shape."""
        key = (
            request.class_name,
            request.selectors,
            repr(request.tolerations) if request.tolerations else "",
        )
        found = self._matches.get(key)
        if found is None:
            matching = self.allocator.matching(claim, request, self.devices)
            found = np.array([self.positions[d.key] for d in matching], dtype=np.intp)
            self._matches[key] = found
        return found

    def _free_counts(self, claim: dra.ClaimInfo, request: dra.DeviceRequest) -> IntArray:
        """Per node, how many free devices match ``request`` (an upper bound of what it can
        get there; exact for the simple requests ``_decisive`` admits)."""
        positions = self._matched(claim, request)
        free = positions[~self.in_use[positions]]
        rows = self.device_rows[free]
        counts: IntArray = np.bincount(rows[rows >= 0], minlength=self.size)[: self.size]
        for position in free[rows < 0].tolist():
            if not self.devices[position].node_name:
                counts = counts + self._reach(position)
        return counts

    def _decisive(self, claims: list[dra.ClaimInfo]) -> bool:
        """Whether the free-device counts alone decide: each request one plain ``count`` of
        exclusive devices, without constraints, capacity or admin access, and no two requests
        able to take the same device."""
        seen: set[int] = set()
        for claim in claims:
            if claim.constraints:
                return False
            for request in claim.requests:
                if len(request.alternatives) != 1:
                    return False
                plain = request.alternatives[0]
                if plain.mode != dra.EXACT_COUNT or plain.capacity or plain.admin_access:
                    return False
                positions = self._matched(claim, plain).tolist()
                if any(self.devices[p].allow_multiple for p in positions):
                    return False
                if seen.intersection(positions):
                    return False
                seen.update(positions)
        return True

    def mask(self, task: TaskInfo) -> NodeMask | None:
        if not dra.has_claims(task.pod):
            return None
        cached = self._masks.get(task.uid)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        found, exact = self._compute_mask(task)
        self._masks[task.uid] = (self.version, found)
        self._needs_search[task.uid] = exact
        return found

    def _compute_mask(self, task: TaskInfo) -> tuple[NodeMask | None, bool]:
        """The vectorised Filter, and whether the exact search must still run per node."""
        resolved = self.resolve(task)
        if resolved.error is not None:
            return None, False  # PreFilter said why
        passed = np.ones(self.size, dtype=np.bool_)
        not_here = Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_NOT_ON_NODE, PLUGIN)
        for claim in resolved.claims:
            allocation = claim.allocation
            if allocation is None and claim.key in self.pending:
                allocation = self.pending[claim.key][0]
            if allocation is not None:
                passed &= self._node_selector_mask(allocation.get("nodeSelector"))
        allocated_ok = passed.copy()
        cannot = Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE, PLUGIN)
        search = False
        if resolved.to_allocate:
            try:
                for claim in resolved.to_allocate:
                    for request in claim.requests:
                        possible = np.zeros(self.size, dtype=np.bool_)
                        for alternative in request.alternatives:
                            counts = self._free_counts(claim, alternative)
                            needed = 1 if alternative.mode == dra.ALL else alternative.count
                            possible |= counts >= needed
                        passed &= possible
                search = not self._decisive(resolved.to_allocate)
            except SelectorError as error:
                failed = Status(StatusCode.ERROR, str(error), PLUGIN)
                return NodeMask(np.zeros(self.size, dtype=np.bool_), lambda row: failed), False

        def reason(row: int) -> Status:
            return not_here if not allocated_ok[row] else cannot

        return NodeMask(passed, reason), search

    def task_predicate(
        self, task: TaskInfo
    ) -> Callable[[TaskInfo, NodeInfo], Status | None] | None:
        """The exact search per node, for the claims the counts cannot decide (it runs only
        on the nodes the mask passed, until enough are found)."""
        if not dra.has_claims(task.pod):
            return None
        self.mask(task)
        return self._search if self._needs_search.get(task.uid) else None

    def _search(self, task: TaskInfo, node: NodeInfo) -> Status | None:
        try:
            found = self._allocation_on(task, node.row)
        except (SelectorError, dra.AllocationTimeout) as error:
            return Status(StatusCode.ERROR, str(error), PLUGIN)
        if found is None:
            return Status(
                StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, dra.ERR_CANNOT_ALLOCATE, PLUGIN
            )
        return None

    def _allocation_on(self, task: TaskInfo, row: int) -> list[dict[str, Any]] | None:
        """The exact allocation of the task's unallocated claims on one node (memoised until
        the next allocation in the session)."""
        per_task = self._found.get(task.uid)
        if per_task is None or per_task[0] != self.version:
            per_task = self._found[task.uid] = (self.version, {})
        rows = per_task[1]
        if row not in rows:
            resolved = self.resolve(task)
            node = self.ssn.node_list[row]
            rows[row] = (
                self.allocator.allocate(resolved.to_allocate, self._devices_of(row), node.name)
                if resolved.to_allocate
                else []
            )
        return rows[row]

    def feasible_scalar(self, task: TaskInfo, row: int) -> bool:
        """The readable reference of ``mask`` for one node (a property test holds the two
        equal): every claim already allocated is usable on the node, and the others can be
        allocated from the devices the node reaches, found device by device."""
        resolved = self.resolve(task)
        if resolved.error is not None:
            return True  # PreFilter decides; the mask abstains
        node = self.ssn.node_list[row]
        for claim in resolved.claims:
            allocation = claim.allocation
            if allocation is None and claim.key in self.pending:
                allocation = self.pending[claim.key][0]
            if allocation is None or not allocation.get("nodeSelector"):
                continue
            terms = node_selector_terms(allocation["nodeSelector"])
            if not any(term.matches(node.labels, node.name) for term in terms):
                return False
        if not resolved.to_allocate:
            return True
        reachable = []
        for device in self.devices:
            if device.node_name:
                here = device.node_name == node.name
            elif device.all_nodes:
                here = True
            else:
                terms = node_selector_terms(device.node_selector or {})
                here = any(term.matches(node.labels, node.name) for term in terms)
            if here:
                reachable.append(device)
        return self.allocator.allocate(resolved.to_allocate, reachable, node.name) is not None

    # ------------------------------------------------------------------ Score

    def _has_prioritized_lists(self) -> bool:
        """Score matters only with ``firstAvailable`` requests somewhere."""
        specs = [claim.requests for claim in self.snapshot.claims.values()]
        specs += [
            dra.claim_requests((template.get("spec") or {}).get("spec") or {})
            for template in self.snapshot.templates.values()
        ]
        return any(len(r.alternatives) > 1 for requests in specs for r in requests)

    def scores(self, task: TaskInfo, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """kube-scheduler's dynamicresources Score: a node whose allocation uses an earlier
        ``firstAvailable`` alternative scores higher (8 - its index per request), normalized
        to 0..100 over the nodes scored (``DefaultNormalizeScore``)."""
        found = np.zeros(len(rows))
        if not dra.has_claims(task.pod):
            return found
        for position, row in enumerate(rows.tolist()):
            try:
                allocations = self._allocation_on(task, int(row)) or []
            except (SelectorError, dra.AllocationTimeout):
                continue
            for allocation in allocations:
                for result in (allocation.get("devices") or {}).get("results") or []:
                    request, slash, sub = str(result.get("request", "")).partition("/")
                    if not slash:
                        continue
                    found[position] += self._alternative_score(task, request, sub)
        best = found.max() if len(found) else 0.0
        if best > 0:
            found = np.floor(found * 100 / best)
        return found

    def _alternative_score(self, task: TaskInfo, request_name: str, sub: str) -> float:
        for claim in self.resolve(task).to_allocate:
            for request in claim.requests:
                if request.name != request_name:
                    continue
                for index, alternative in enumerate(request.alternatives):
                    if alternative.name == f"{request_name}/{sub}":
                        return float(dra.FIRST_AVAILABLE_MAX - index)
        return 0.0

    # ------------------------------------------------------------------ Reserve / Unreserve

    def _allocate(self, event: Event) -> None:
        task = event.task
        if not dra.has_claims(task.pod):
            return
        node = self.ssn.nodes.get(task.node_name)
        resolved = self.resolve(task)
        if resolved.error is not None or node is None:
            event.error = resolved.error.reason if resolved.error is not None else "no node"
            return
        allocations: dict[str, dict[str, Any] | None] = {
            claim.key: None for claim in resolved.claims
        }
        if resolved.to_allocate:
            try:
                results = self.allocator.allocate(
                    resolved.to_allocate, self._devices_of(node.row), node.name
                )
            except (SelectorError, dra.AllocationTimeout) as error:
                event.error = str(error)
                return
            if results is None:
                event.error = dra.ERR_CANNOT_ALLOCATE
                return
            for claim, allocation in zip(resolved.to_allocate, results, strict=True):
                self.pending[claim.key] = (allocation, task.uid)
                for key, consumed in dra.allocation_devices(allocation):
                    self.usage.add(key, consumed)
                    self._mark(key)
                allocations[claim.key] = allocation
        for claim in resolved.claims:
            pending = self.pending.get(claim.key)
            if claim.allocation is None and pending is not None and pending[1] == task.uid:
                allocations[claim.key] = pending[0]
        task.claim_allocations = allocations
        self.version += 1

    def _mark(self, key: dra.DeviceKey) -> None:
        position = self.positions.get(key)
        if position is not None and not self.devices[position].allow_multiple:
            self.in_use[position] = self.usage.in_use(key)

    def _deallocate(self, event: Event) -> None:
        task = event.task
        if not task.claim_allocations:
            return
        for key in list(task.claim_allocations):
            pending = self.pending.get(key)
            if pending is not None and pending[1] == task.uid:
                del self.pending[key]
                for device, consumed in dra.allocation_devices(pending[0]):
                    self.usage.remove(device, consumed)
                    self._mark(device)
        task.claim_allocations = {}
        self.version += 1
