"""``scheduling.volcano.sh/v1beta1`` PodGroup: the gang the scheduler places all-or-nothing."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from volcano_py.models.base import VolcanoModel, implicit
from volcano_py.models.fieldtypes import DNS_SUBDOMAIN_PATTERN, Int32, ResourceList, Timestamp
from volcano_py.models.meta import LabelSelector
from volcano_py.models.network_topology import NetworkTopologySpec
from volcano_py.models.resource import CrdInfo, CustomResource, PrinterColumn

PodGroupPhase = Literal["Pending", "Running", "Unknown", "Inqueue", "Completed"]


class SubGroupPolicySpec(VolcanoModel):
    """Splits the PodGroup's pods into sub-gangs with their own size and topology."""

    name: str | None = Field(default=None, max_length=253)
    """Name of the policy."""
    network_topology: NetworkTopologySpec | None = None
    """Network-topology constraint of each sub-group."""
    sub_group_size: Int32 = Field(default=1, ge=1)
    """Number of pods in each sub-group."""
    min_sub_groups: Int32 = Field(default=0, ge=0)
    """Minimum number of sub-groups that must fit before any is scheduled."""
    label_selector: LabelSelector | None = None
    """Pods matching it belong to this policy."""
    match_label_keys: list[str] = Field(default_factory=list)
    """Pods with equal values for these label keys form one sub-group."""


class PodGroupSpec(VolcanoModel):
    """The desired behaviour of the pod group."""

    min_member: Int32 = implicit(0, ge=0)
    """Minimal number of pods that must be placeable together (gang size)."""
    min_task_member: dict[str, Int32] = Field(default_factory=dict)
    """Minimal number of pods per task role (annotation volcano.sh/task-spec)."""
    queue: str = Field(default="default", max_length=253, pattern=DNS_SUBDOMAIN_PATTERN)
    """Queue the pod group takes its resources from."""
    priority_class_name: str | None = Field(default=None, max_length=253)
    """PriorityClass giving the pod group's priority."""
    min_resources: ResourceList | None = None
    """Resources the gang needs to start; gates enqueueing."""
    network_topology: NetworkTopologySpec | None = None
    """HyperNode constraint of the whole gang."""
    sub_group_policy: list[SubGroupPolicySpec] = Field(default_factory=list)
    """Sub-gangs with their own size and topology."""


class PodGroupCondition(VolcanoModel):
    """A condition of the pod group (Unschedulable, Scheduled)."""

    type: str | None = None
    """Type of the condition."""
    status: str | None = None
    """True, False or Unknown."""
    transition_id: str | None = Field(default=None, alias="transitionID")
    """Scheduling session that set the condition."""
    last_transition_time: Timestamp | None = None
    """Last time the condition changed."""
    reason: str | None = None
    """One-word CamelCase reason for the last transition."""
    message: str | None = None
    """Human-readable details of the last transition."""


class PodGroupStatus(VolcanoModel):
    """The observed state of the pod group."""

    phase: PodGroupPhase | None = None
    """Pending, Running, Unknown, Inqueue or Completed."""
    conditions: list[PodGroupCondition] = Field(default_factory=list)
    """Conditions of the pod group."""
    running: Int32 = implicit(0, ge=0)
    """Number of running pods."""
    succeeded: Int32 = implicit(0, ge=0)
    """Number of pods that reached phase Succeeded."""
    failed: Int32 = implicit(0, ge=0)
    """Number of pods that reached phase Failed."""


class PodGroup(CustomResource):
    """A collection of pods scheduled together; used for batch workloads."""

    # Upstream's PodGroup CRD has no status subresource: the scheduler writes status with a
    # plain update, and so must we (RBAC grants podgroups update, not podgroups/status).
    CRD = CrdInfo(
        group="scheduling.volcano.sh",
        version="v1beta1",
        kind="PodGroup",
        plural="podgroups",
        singular="podgroup",
        scope="Namespaced",
        short_names=("pg", "podgroup-v1beta1"),
        printer_columns=(
            PrinterColumn("STATUS", ".status.phase", "string"),
            PrinterColumn("minMember", ".spec.minMember", "integer"),
            PrinterColumn("RUNNINGS", ".status.running", "integer"),
            PrinterColumn("AGE", ".metadata.creationTimestamp", "date"),
            PrinterColumn("QUEUE", ".spec.queue", "string", priority=1),
        ),
        status_subresource=False,
    )

    spec: PodGroupSpec = Field(default_factory=PodGroupSpec)
    """The desired behaviour of the pod group."""
    status: PodGroupStatus = Field(default_factory=PodGroupStatus)
    """The observed state of the pod group."""
