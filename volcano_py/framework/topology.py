"""A session's view of the network topology (HyperNodes): ``framework/session.go`` steps 4-6.

At session open Volcano copies the HyperNode tree, adds the virtual root
``<cluster-top-hypernode>`` over every session node, rewrites each job's network-topology spec
so that the rest of the scheduler only ever sees "hard, up to tier T"
(``adjustNetworkTopologySpec``) and recovers the HyperNode a partly running job already
occupies (``recoverAllocatedHyperNode``).
The tree itself (:class:`~volcano_py.api.hypernode.HyperNodeTree`) already models the root; this
module adds what is specific to one session: real-node *rows* per HyperNode (so allocate can
restrict ``predicate_nodes`` to one HyperNode), the jobs' default sub-jobs, and the two steps
above.

Sub-jobs (``subGroupPolicy``) are kept on the job (``api.sub_job``); a job without policies has
one, its default sub-job, which is the whole job with the job's network topology. Each sub-job
has its own copy of its topology spec, which session open rewrites like the job's.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, Protocol, runtime_checkable

import numpy as np

from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE, HyperNodeInfo, HyperNodeTree
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ALLOCATED_STATUSES

log = logging.getLogger(__name__)

HARD_MODE: Final = "hard"
SOFT_MODE: Final = "soft"


class SearchPurpose(Enum):
    """Why a HyperNode gradient is asked for (``api.SearchPurpose``)."""

    ALLOCATE = "allocate"
    EVICT = "evict"


# ---------------------------------------------------------------------------- rows


@dataclass(frozen=True, slots=True)
class HyperNodeMembership:
    """Which session rows each HyperNode holds (the virtual root included), both ways, as
    flat arrays: sums over a HyperNode's nodes and "every HyperNode holding this node" are then
    one numpy call, not a Python loop over nodes or HyperNodes.

    HyperNode ``h`` holds ``member_rows[offsets[h]:offsets[h + 1]]`` (ascending rows, i.e. the
    session's node order); row ``r`` is held by ``row_hyper_nodes[row_offsets[r]:
    row_offsets[r + 1]]``.
    """

    names: tuple[str, ...]
    index: Mapping[str, int]
    tiers: IntArray
    member_rows: IntArray
    offsets: IntArray
    row_hyper_nodes: IntArray
    row_offsets: IntArray
    # tier -> per session row the index of the HyperNode of that tier holding it, or -1.
    _at_tier: dict[int, IntArray] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(cls, tree: HyperNodeTree, node_names: Sequence[str]) -> HyperNodeMembership:
        row_of = {name: row for row, name in enumerate(node_names)}
        names = tuple(sorted(tree.hyper_nodes))
        chunks: list[IntArray] = []
        counts = np.zeros(len(names), dtype=np.intp)
        for h, name in enumerate(names):
            info = tree.hyper_nodes[name]
            if info.is_virtual_root:
                rows = np.arange(len(node_names), dtype=np.intp)
            else:
                found = [row_of[node] for node in info.real_nodes if node in row_of]
                rows = np.sort(np.asarray(found, dtype=np.intp))
            chunks.append(rows)
            counts[h] = len(rows)
        member_rows = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.intp)
        offsets = np.zeros(len(names) + 1, dtype=np.intp)
        np.cumsum(counts, out=offsets[1:])
        owners = np.repeat(np.arange(len(names), dtype=np.intp), counts)
        by_row = np.argsort(member_rows, kind="stable")
        row_counts = np.bincount(member_rows, minlength=len(node_names))
        row_offsets = np.zeros(len(node_names) + 1, dtype=np.intp)
        np.cumsum(row_counts, out=row_offsets[1:])
        return cls(
            names=names,
            index={name: h for h, name in enumerate(names)},
            tiers=np.array([tree.hyper_nodes[name].tier for name in names], dtype=np.intp),
            member_rows=member_rows,
            offsets=offsets,
            row_hyper_nodes=owners[by_row],
            row_offsets=row_offsets,
        )

    def rows_of(self, hyper_node: int) -> IntArray:
        return self.member_rows[self.offsets[hyper_node] : self.offsets[hyper_node + 1]]

    def hyper_nodes_of_row(self, row: int) -> IntArray:
        return self.row_hyper_nodes[self.row_offsets[row] : self.row_offsets[row + 1]]

    def sum_rows(self, values: FloatArray) -> FloatArray:
        """``values`` (one row per session node) summed per HyperNode."""
        result: FloatArray = np.zeros((len(self.names), values.shape[1]))
        counts = np.diff(self.offsets)
        filled = counts > 0
        if len(self.member_rows):
            # reduceat sums from each start to the next start; empty HyperNodes are skipped so
            # their (equal) starts neither break the ranges nor index past the end.
            result[filled] = np.add.reduceat(
                values[self.member_rows], self.offsets[:-1][filled], axis=0
            )
        return result

    def at_tier(self, tier: int) -> IntArray:
        """Per session row, the HyperNode of ``tier`` holding it (-1: none). A node in two
        HyperNodes of one tier gets the smallest name (upstream: whichever map order gives)."""
        found = self._at_tier.get(tier)
        if found is None:
            size = len(self.row_offsets) - 1
            found = np.full(size, -1, dtype=np.intp)
            # Names are sorted, so writing in reverse leaves the smallest name last.
            for h in reversed(np.flatnonzero(self.tiers == tier).tolist()):
                found[self.rows_of(h)] = h
            self._at_tier[tier] = found
        return found


# One membership per (tree, node list): consecutive sessions over an unchanged cluster share it.
_membership_cache: list[tuple[HyperNodeTree, list[str], HyperNodeMembership]] = []


def _membership(tree: HyperNodeTree, node_names: list[str]) -> HyperNodeMembership:
    if _membership_cache:
        cached_tree, cached_names, cached = _membership_cache[0]
        if cached_tree is tree and cached_names == node_names:
            return cached
    membership = HyperNodeMembership.build(tree, node_names)
    _membership_cache[:] = [(tree, list(node_names), membership)]
    return membership


# The last bare tree, so that sessions over an unchanged cluster share it (and its membership).
_bare_cache: list[tuple[list[str], HyperNodeTree]] = []


def _bare_tree(node_names: list[str]) -> HyperNodeTree:
    if _bare_cache and _bare_cache[0][0] == node_names:
        return _bare_cache[0][1]
    root = HyperNodeInfo(
        name=CLUSTER_TOP_HYPER_NODE,
        tier=1,
        tier_name="",
        parent=None,
        children=(),
        node_members=frozenset(),
        real_nodes=frozenset(node_names),
    )
    tree = HyperNodeTree(
        hyper_nodes={CLUSTER_TOP_HYPER_NODE: root},
        tiers=(1,),
        hyper_nodes_by_tier={1: frozenset({CLUSTER_TOP_HYPER_NODE})},
        tier_name_to_tier={},
    )
    _bare_cache[:] = [(list(node_names), tree)]
    return tree


# ---------------------------------------------------------------------------- prediction


# A sub-job and its tasks still to place, in the order a dry run places them.
PlannedSubJob = tuple[SubJobInfo, Sequence[TaskInfo]]


@runtime_checkable
class HyperNodeOrderPredictor(Protocol):
    """A plugin that orders HyperNodes and can also tell, before any dry run, the score its
    HyperNode order hook will give each of a job's sub-jobs inside a candidate HyperNode.

    A volcano-py addition with no upstream counterpart: upstream dry-runs a sub-grouped job in
    every candidate HyperNode and keeps the best summed score; with a prediction allocate tries
    the candidates best first and stops at the first that takes the job (see
    ``actions/allocate_topology``)."""

    def predict_hyper_node_order(
        self, sub_jobs: Sequence[PlannedSubJob], candidates: Sequence[str]
    ) -> dict[str, list[float]]:
        """Per candidate, one score per sub-job of ``sub_jobs``: the answer of the plugin's
        HyperNode order hook asked for that sub-job and that candidate alone, once the
        sub-jobs before it are placed inside the candidate, every task of theirs."""
        ...


# ---------------------------------------------------------------------------- session view


class SessionTopology:
    """The session's HyperNodes: the tree (virtual root included), readiness, rows."""

    __slots__ = ("_membership", "_node_names", "_rows", "ready", "tree")

    def __init__(self, tree: HyperNodeTree, node_names: list[str]) -> None:
        self.tree = tree
        # Upstream HyperNodesReadyToSchedule: a cycle or a second parent holds back every job
        # with a network topology until the HyperNodes are fixed.
        self.ready = tree.ready
        self._node_names = node_names
        self._membership: HyperNodeMembership | None = None
        self._rows: dict[str, IntArray] = {}

    @classmethod
    def bare(cls, node_names: list[str]) -> SessionTopology:
        """No HyperNode at all: only the virtual root (tier 1) over every session node."""
        return cls(_bare_tree(node_names), node_names)

    @property
    def root(self) -> str:
        return CLUSTER_TOP_HYPER_NODE

    @property
    def tiers(self) -> tuple[int, ...]:
        """Ascending, the virtual root's tier last (``HyperNodesTiers``)."""
        return self.tree.tiers

    def membership(self) -> HyperNodeMembership:
        if self._membership is None:
            self._membership = _membership(self.tree, self._node_names)
        return self._membership

    def rows(self, hyper_node: str) -> IntArray:
        """The session rows of the nodes under ``hyper_node`` (``RealNodesList``), in node
        order; empty for an unknown name."""
        rows = self._rows.get(hyper_node)
        if rows is None:
            membership = self.membership()
            h = membership.index.get(hyper_node)
            rows = membership.rows_of(h) if h is not None else np.zeros(0, dtype=np.intp)
            self._rows[hyper_node] = rows
        return rows

    def lca(self, first: str, second: str) -> str:
        """``GetLCAHyperNode`` with upstream's empty-string conventions."""
        return self.tree.lca(first, second) or ""

    def lowest_tier_hyper_node_of(self, rows: Sequence[int]) -> str:
        """The lowest-tier HyperNode holding every row (smallest name on a tie), "" if none
        holds them all or no row is given."""
        if not rows:
            return ""
        membership = self.membership()
        common: set[int] | None = None
        for row in rows:
            holders = set(membership.hyper_nodes_of_row(row).tolist())
            common = holders if common is None else common & holders
            if not common:
                return ""
        assert common is not None
        best = min(common, key=lambda h: (int(membership.tiers[h]), membership.names[h]))
        return membership.names[best]


# ---------------------------------------------------------------------------- session open


class TopologySession(Protocol):
    """The part of a session the session-open steps read and change. The Session satisfies
    it; naming only this keeps this module below the session in the import graph."""

    @property
    def topology(self) -> SessionTopology: ...

    @property
    def jobs(self) -> Mapping[str, JobInfo]: ...

    @property
    def nodes(self) -> Mapping[str, NodeInfo]: ...

    @property
    def dirty_jobs(self) -> set[str]: ...


def normalise_network_topologies(ssn: TopologySession) -> None:
    """``adjustNetworkTopologySpec``: ``highestTierName`` becomes ``highestTierAllowed``; then
    a soft job constraint becomes hard with the virtual root's tier (no restriction, but the
    gradient search runs), and a soft sub-job constraint becomes hard bounded by its job's
    tier. Each job and sub-job gets its own spec dict: the cache's PodGroup is never changed."""
    topology = ssn.topology
    tier_names = topology.tree.tier_name_to_tier
    max_tier = topology.tree.max_tier
    for job in ssn.jobs.values():
        if not job.contains_network_topology():
            continue
        if job.network_topology is not None:
            job.network_topology = _translate_tier_name(
                job.uid, dict(job.network_topology), tier_names
            )
        sub_jobs = job.all_sub_jobs()
        for sub_job in sub_jobs:
            if sub_job.network_topology is not None:
                sub_job.network_topology = _translate_tier_name(
                    sub_job.uid, dict(sub_job.network_topology), tier_names
                )
        if job.pod_group is None:
            continue
        spec = job.network_topology
        if spec is not None and spec.get("mode") == SOFT_MODE:
            converted = dict(spec)
            converted.update(mode=HARD_MODE, highestTierAllowed=max_tier)
            converted.pop("highestTierName", None)
            job.network_topology = spec = converted
        bound = max_tier
        if spec is not None and spec.get("highestTierAllowed") is not None:
            bound = int(spec["highestTierAllowed"])
        for sub_job in sub_jobs:
            sub_job.convert_to_hard_topology(bound)


def _translate_tier_name(
    owner: str, spec: dict[str, Any], tier_names: Mapping[str, int]
) -> dict[str, Any]:
    name = spec.get("highestTierName")
    if spec.get("highestTierAllowed") is not None or not name:
        return spec
    tier = tier_names.get(str(name))
    if tier is None:
        # Upstream skips the translation; the job then has no tier and is placed like a job
        # without a hard constraint.
        log.warning(
            "%s: networkTopology.highestTierName %r names no HyperNode tier; it is ignored",
            owner,
            name,
        )
        return spec
    spec["highestTierAllowed"] = tier
    spec.pop("highestTierName", None)
    return spec


def recover_allocated_hyper_nodes(ssn: TopologySession) -> None:
    """``removeInvalidAllocatedHyperNode`` + ``recoverAllocatedHyperNode``.

    The HyperNode a job (and each sub-job) occupies is kept on the cache's job between
    sessions, as upstream keeps it (written back at session close, see ``close_session``).
    Here a record is dropped when that HyperNode is gone or nothing of it is placed any more;
    a sub-job with a topology and no record (after a restart) gets the lowest-tier HyperNode
    holding the nodes of its placed tasks, and the job the LCA of its sub-jobs'."""
    tree = ssn.topology.tree
    for job in ssn.jobs.values():
        if not job.contains_network_topology():
            continue
        if job.allocated_hyper_node and (
            tree.get(job.allocated_hyper_node) is None or job.allocated_task_num() == 0
        ):
            job.allocated_hyper_node = ""
            ssn.dirty_jobs.add(job.uid)
        sub_jobs = job.all_sub_jobs()
        for sub_job in sub_jobs:
            if sub_job.allocated_hyper_node and (
                tree.get(sub_job.allocated_hyper_node) is None or sub_job.allocated_task_num() == 0
            ):
                sub_job.allocated_hyper_node = ""
                ssn.dirty_jobs.add(job.uid)
        updated = False
        for sub_job in sub_jobs:
            if not sub_job.with_network_topology() or sub_job.allocated_hyper_node:
                continue
            recovered = _recovered_hyper_node(ssn, job, sub_job)
            if recovered is not None and recovered != sub_job.allocated_hyper_node:
                sub_job.allocated_hyper_node = recovered
                updated = True
                ssn.dirty_jobs.add(job.uid)
        if job.allocated_hyper_node and not updated:
            continue
        lca = ""
        for sub_job in sub_jobs:
            if not sub_job.allocated_hyper_node:
                continue
            lca = (
                ssn.topology.lca(lca, sub_job.allocated_hyper_node)
                if lca
                else (sub_job.allocated_hyper_node)
            )
            if not lca:
                log.error("job %s: no HyperNode holds its sub-jobs' HyperNodes", job.uid)
                break
        if job.allocated_hyper_node != lca:
            job.allocated_hyper_node = lca
            ssn.dirty_jobs.add(job.uid)


def _recovered_hyper_node(ssn: TopologySession, job: JobInfo, sub_job: SubJobInfo) -> str | None:
    """The lowest-tier HyperNode holding the nodes of the sub-job's placed tasks; None when
    nothing is placed, "" when no HyperNode holds them all."""
    rows: list[int] = []
    for status in ALLOCATED_STATUSES:
        for task in sub_job.tasks_in(status).values():
            if not task.node_name:
                continue
            node = ssn.nodes.get(task.node_name)
            # A task on a node outside the session leaves nothing that holds all of them.
            rows.append(node.row if node is not None else -1)
    if not rows:
        return None
    recovered = "" if -1 in rows else ssn.topology.lowest_tier_hyper_node_of(rows)
    if not recovered:
        log.error(
            "job %s: no HyperNode holds the nodes of all placed tasks of %s", job.uid, sub_job.uid
        )
    return recovered
