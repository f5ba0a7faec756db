"""``nodeinfo.volcano.sh/v1alpha1`` Numatopology: one node's CPU topology and kubelet policies,
as the resource exporter on that node reports them (the object is named after its node).

The scheduler only reads it: the ``numa-aware`` plugin places Guaranteed pods so the node's
topology manager will admit them.
"""

from __future__ import annotations

from pydantic import Field, field_validator

from volcano_py.api.numa import parse_cpu_set
from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.models.base import SpecError, VolcanoModel
from volcano_py.models.resource import CrdInfo, CustomResource

CPU_MANAGER_POLICY = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY = "TopologyManagerPolicy"


class ResourceInfo(VolcanoModel):
    """The sets about resource capacity and allocatable."""

    allocatable: str | None = None
    """The allocatable ids as a Linux cpuset list, e.g. ``0-3,8``."""
    capacity: int | None = None
    """How many of the resource the node has."""

    @field_validator("allocatable")
    @classmethod
    def _cpu_set_list(cls, value: str | None) -> str | None:
        # Upstream's cache would log the parse error and schedule with no allocatable CPUs.
        if value is not None:
            try:
                parse_cpu_set(value)
            except ValueError as error:
                raise SpecError((), f"not a cpuset list such as 0-3,8: {error}") from None
        return value


class CPUInfo(VolcanoModel):
    """The cpu topology detail."""

    numa: int | None = Field(default=None, ge=0)
    """The NUMA node of the cpu."""
    socket: int | None = Field(default=None, ge=0)
    """The socket of the cpu."""
    core: int | None = Field(default=None, ge=0)
    """The core of the cpu (unique within its socket)."""


class ContainerAllocation(VolcanoModel):
    """The numa resource allocation of one container."""

    name: str | None = None
    """Specifies the name of the container."""
    allocations: dict[str, str] | None = None
    """Resource name -> allocation: a cpuset list for cpu, a quantity for other resources."""


class PodAllocation(VolcanoModel):
    """The numa resource allocation of all containers in a pod."""

    uid: str | None = None
    """Specifies the uid of the pod."""
    name: str | None = None
    """Specifies the name of the pod."""
    namespace: str | None = None
    """Specifies the namespace of the pod."""
    container_allocations: list[ContainerAllocation] | None = None
    """Specifies the per-container numa resource allocation of the pod."""


class NumatopoSpec(VolcanoModel):
    """The NUMA information of the worker node."""

    policies: dict[str, str] | None = None
    """Specifies the policy of the manager (CPUManagerPolicy, TopologyManagerPolicy)."""
    res_reserved: dict[str, str] | None = None
    """Specifies the reserved resource of the node; key is resource name."""
    numares: dict[str, ResourceInfo] | None = Field(default=None, alias="numares")
    """Specifies the numa info for the resource; key is resource name."""
    cpu_detail: dict[str, CPUInfo] | None = None
    """Specifies the cpu topology info; key is cpu id."""
    pod_allocations: list[PodAllocation] | None = None
    """Specifies the per-pod numa resource allocation of the node."""

    @field_validator("cpu_detail")
    @classmethod
    def _cpu_ids(cls, value: dict[str, CPUInfo] | None) -> dict[str, CPUInfo] | None:
        for key in value or {}:
            if not key.isdigit():
                raise SpecError((key,), "the key must be a CPU id (a non-negative integer)")
        return value

    @field_validator("res_reserved")
    @classmethod
    def _quantities(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for name, amount in (value or {}).items():
            try:
                parse_quantity(amount)
            except QuantityError:
                raise SpecError((name,), f"invalid quantity {amount!r}") from None
        return value


class Numatopology(CustomResource):
    """The Schema for the Numatopologies API."""

    CRD = CrdInfo(
        group="nodeinfo.volcano.sh",
        version="v1alpha1",
        kind="Numatopology",
        plural="numatopologies",
        singular="numatopology",
        scope="Cluster",
        short_names=("numatopo",),
    )

    spec: NumatopoSpec = Field(default_factory=NumatopoSpec)
    """Specification of the numa information of the worker node."""
