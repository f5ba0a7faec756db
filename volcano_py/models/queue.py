"""``scheduling.volcano.sh/v1beta1`` Queue: a cluster-scoped share of the cluster's resources."""

from __future__ import annotations

from typing import Final, Literal, Self

from pydantic import Field, model_validator

from volcano_py.api.quantity import parse_quantity
from volcano_py.models.base import SpecError, VolcanoModel, implicit
from volcano_py.models.fieldtypes import DNS_SUBDOMAIN_PATTERN, Int32, ResourceList
from volcano_py.models.resource import CrdInfo, CustomResource, PrinterColumn

HIERARCHY_ANNOTATION: Final = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION: Final = "volcano.sh/hierarchy-weights"

QueueState = Literal["Open", "Closed", "Closing", "Unknown"]


class Cluster(VolcanoModel):
    """A cluster the queue's jobs may be dispatched to (multi-cluster)."""

    name: str | None = None
    weight: Int32 = implicit(0)
    capacity: ResourceList = Field(default_factory=dict)


class Guarantee(VolcanoModel):
    """Resources reserved for the queue."""

    resource: ResourceList = Field(default_factory=dict)
    """The amount of cluster resource reserved for the queue."""


class NodeGroupAffinity(VolcanoModel):
    """Node groups (label volcano.sh/nodegroup-name) the queue's pods must or should use."""

    required_during_scheduling_ignored_during_execution: list[str] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[str] = Field(default_factory=list)


class NodeGroupAntiAffinity(VolcanoModel):
    """Node groups the queue's pods must or should avoid."""

    required_during_scheduling_ignored_during_execution: list[str] = Field(default_factory=list)
    preferred_during_scheduling_ignored_during_execution: list[str] = Field(default_factory=list)


class Affinity(VolcanoModel):
    """Node-group affinity of the queue's pods (nodegroup plugin)."""

    node_group_affinity: NodeGroupAffinity | None = None
    node_group_anti_affinity: NodeGroupAntiAffinity | None = None


class QueueSpec(VolcanoModel):
    """The desired behaviour of the queue."""

    weight: Int32 = Field(default=1, ge=1, le=65535)
    """Share of the cluster relative to other queues (proportion plugin)."""
    capability: ResourceList = Field(default_factory=dict)
    """Upper bound of the resources the queue may use."""
    reclaimable: bool = implicit(True)
    """Whether other queues may reclaim resources from this queue; unset means true."""
    extend_clusters: list[Cluster] = Field(default_factory=list)
    """Clusters the queue's jobs may be dispatched to."""
    guarantee: Guarantee = Field(default_factory=Guarantee)
    """Resources reserved for this queue, not lent to others."""
    affinity: Affinity | None = None
    """Node-group affinity of the queue's pods."""
    type: str | None = Field(default=None, max_length=253)
    """Free-form type of the queue."""
    parent: str | None = Field(default=None, max_length=253, pattern=DNS_SUBDOMAIN_PATTERN)
    """Parent queue in a queue hierarchy (capacity plugin); unset means root."""
    deserved: ResourceList = Field(default_factory=dict)
    """Resources the queue is entitled to (capacity plugin); may be lent and reclaimed."""
    priority: Int32 = implicit(0, ge=0)
    """Higher values are scheduled first and reclaimed from last."""
    dequeue_strategy: Literal["fifo", "traverse"] = "traverse"
    """fifo or traverse (declared upstream but not read by the scheduler)."""

    @model_validator(mode="after")
    def _quantities_are_ordered(self) -> Self:
        # Volcano's queue webhook: no negative amounts, and guarantee <= deserved <=
        # capability in every dimension both sides name.
        lists = {
            ("guarantee", "resource"): self.guarantee.resource,
            ("deserved",): self.deserved,
            ("capability",): self.capability,
        }
        for path, resources in lists.items():
            for name, amount in resources.items():
                if parse_quantity(amount) < 0:
                    raise SpecError(
                        (*path, name), f"must be greater than or equal to 0 (got {amount})"
                    )
        ordered = (
            ("guarantee", ("guarantee", "resource"), "deserved", ("deserved",)),
            ("deserved", ("deserved",), "capability", ("capability",)),
            ("guarantee", ("guarantee", "resource"), "capability", ("capability",)),
        )
        for low_name, low_path, high_name, high_path in ordered:
            low, high = lists[low_path], lists[high_path]
            for name in sorted(low.keys() & high.keys()):
                if parse_quantity(low[name]) > parse_quantity(high[name]):
                    raise SpecError(
                        (*low_path, name),
                        f"{low_name} {name} ({low[name]}) is greater than {high_name} {name} "
                        f"({high[name]}); a queue needs guarantee <= deserved <= capability",
                    )
        return self


class Reservation(VolcanoModel):
    """Nodes locked for the queue and their idle resources."""

    nodes: list[str] = Field(default_factory=list)
    resource: ResourceList = Field(default_factory=dict)


class QueueStatus(VolcanoModel):
    """The observed state of the queue."""

    state: QueueState | None = None
    """Open, Closed, Closing or Unknown."""
    unknown: Int32 = implicit(0, ge=0)
    """Number of Unknown PodGroups in the queue."""
    pending: Int32 = implicit(0, ge=0)
    """Number of Pending PodGroups in the queue."""
    running: Int32 = implicit(0, ge=0)
    """Number of Running PodGroups in the queue."""
    inqueue: Int32 = implicit(0, ge=0)
    """Number of Inqueue PodGroups in the queue."""
    completed: Int32 = implicit(0, ge=0)
    """Number of Completed PodGroups in the queue."""
    reservation: Reservation = Field(default_factory=Reservation)
    """Resource reservation of the queue."""
    allocated: ResourceList = Field(default_factory=dict)
    """Resources allocated to the queue's pods (written by the scheduler)."""


class Queue(CustomResource):
    """A queue of PodGroups."""

    CRD = CrdInfo(
        group="scheduling.volcano.sh",
        version="v1beta1",
        kind="Queue",
        plural="queues",
        singular="queue",
        scope="Cluster",
        short_names=("q", "queue-v1beta1"),
        printer_columns=(PrinterColumn("PARENT", ".spec.parent", "string"),),
        status_subresource=True,
    )

    spec: QueueSpec = Field(default_factory=QueueSpec)
    """The desired behaviour of the queue."""
    status: QueueStatus = Field(default_factory=QueueStatus)
    """The observed state of the queue."""

    @model_validator(mode="after")
    def _hierarchy_annotations_agree(self) -> Self:
        # The queue webhook's per-object checks of the hierarchical-DRF annotations; the checks
        # against other queues in the tree need the cluster and are not made here.
        annotations = self.metadata.annotations
        hierarchy = annotations.get(HIERARCHY_ANNOTATION, "")
        weights = annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")
        if not hierarchy and not weights:
            return self
        where = ("metadata", "annotations", HIERARCHY_WEIGHTS_ANNOTATION)
        if len(hierarchy.split("/")) != len(weights.split("/")):
            raise SpecError(
                where,
                f"{weights!r} must have as many parts as {HIERARCHY_ANNOTATION} {hierarchy!r}",
            )
        for weight in weights.split("/"):
            try:
                value = float(weight)
            except ValueError:
                raise SpecError(where, f"{weight!r} in {weights!r} is not a number") from None
            if not value > 0:
                raise SpecError(where, f"{weight!r} in {weights!r} must be greater than 0")
        return self
