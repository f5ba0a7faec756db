"""``batch.volcano.sh/v1alpha1`` Job (vcjob): tasks of replicated pods run as one gang."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from volcano_py.models import job_rules
from volcano_py.models.base import VolcanoModel, implicit
from volcano_py.models.fieldtypes import (
    DNS_LABEL_PATTERN,
    DNS_SUBDOMAIN_PATTERN,
    GoDuration,
    Int32,
    PvcSpec,
    Timestamp,
)
from volcano_py.models.lifecycle import LifecyclePolicy
from volcano_py.models.network_topology import NetworkTopologySpec
from volcano_py.models.pod_template import PodTemplate
from volcano_py.models.resource import CrdInfo, CustomResource, PrinterColumn

JobPhase = Literal[
    "Pending",
    "Aborting",
    "Aborted",
    "Running",
    "Restarting",
    "Completing",
    "Completed",
    "Terminating",
    "Terminated",
    "Failed",
]
NumaPolicy = Literal["none", "best-effort", "restricted", "single-numa-node"]

DEFAULT_TASK_NAME_PREFIX = "default"
"""A task without a name is called ``default<index>`` (the job webhook's default)."""


class VolumeSpec(VolcanoModel):
    """A volume mounted into every pod of the job: an existing PVC or one created for it."""

    mount_path: str = Field(min_length=1, pattern=r"^[^:]+$")
    """Where the volume is mounted in each container."""
    volume_claim_name: str | None = Field(default=None, max_length=253)
    """An existing PersistentVolumeClaim to mount."""
    volume_claim: PvcSpec | None = None
    """The spec of a PersistentVolumeClaim to create for the job."""


class DependsOn(VolcanoModel):
    """Tasks that must be running (or done) before this task's pods are created."""

    name: list[str] = Field(default_factory=list)
    """Names of the tasks this task depends on."""
    iteration: str | None = None
    """any or all: whether one or every named task must be ready."""


class PartitionPolicySpec(VolcanoModel):
    """Splits a task's replicas into equal partitions placed as units."""

    total_partitions: Int32 = Field(ge=1)
    """Number of partitions; replicas must equal totalPartitions * partitionSize."""
    partition_size: Int32 = Field(ge=1)
    """Pods per partition."""
    network_topology: NetworkTopologySpec | None = None
    """Network-topology constraint of each partition."""
    min_partitions: Int32 = Field(default=0, ge=0)
    """Partitions that must fit before any is scheduled."""


class TaskSpec(VolcanoModel):
    """A group of identical pods in the job."""

    name: str | None = Field(default=None, max_length=63, pattern=DNS_LABEL_PATTERN)
    """Name of the task; default<index> when unset."""
    replicas: Int32 = implicit(0, ge=0)
    """Number of pods of the task."""
    min_available: Int32 | None = Field(default=None, ge=0)
    """Pods of this task that must be placeable together; replicas when unset."""
    template: PodTemplate = Field(default_factory=dict)
    """The pod template of the task's pods."""
    policies: list[LifecyclePolicy] = Field(default_factory=list)
    """Lifecycle policies of this task; they take precedence over the job's."""
    topology_policy: NumaPolicy | None = None
    """NUMA topology policy of the task's pods."""
    max_retry: Int32 = implicit(3, ge=0)
    """Restarts of the task before it is considered failed."""
    depends_on: DependsOn | None = None
    """Tasks that must be ready before this one starts."""
    partition_policy: PartitionPolicySpec | None = None
    """Splits the replicas into partitions placed as units."""

    def effective_name(self, index: int) -> str:
        """The name the job webhook gives the task at ``index`` of ``spec.tasks``."""
        return self.name or f"{DEFAULT_TASK_NAME_PREFIX}{index}"

    @model_validator(mode="after")
    def _task_rules(self) -> Self:
        job_rules.check_task(self)
        return self


class JobSpec(VolcanoModel):
    """The desired behaviour of the job."""

    scheduler_name: str | None = Field(default=None, max_length=63)
    """Scheduler of the job's pods; volcano when unset."""
    min_available: Int32 = implicit(0, ge=0)
    """Pods that must be placeable together; the sum over tasks when unset."""
    volumes: list[VolumeSpec] = Field(default_factory=list)
    """Volumes mounted into every pod."""
    tasks: list[TaskSpec] = Field(min_length=1)
    """The job's tasks; at least one."""
    policies: list[LifecyclePolicy] = Field(default_factory=list)
    """Lifecycle policies of the whole job."""
    plugins: dict[str, list[str]] = Field(default_factory=dict)
    """Job plugins (svc, ssh, env, mpi, pytorch, tensorflow, ray, hcclrank) and their
    arguments."""
    running_estimate: GoDuration | None = None
    """Estimated running time of the job, e.g. 2h."""
    queue: str = Field(default="default", max_length=253, pattern=DNS_SUBDOMAIN_PATTERN)
    """Queue the job is submitted to."""
    max_retry: Int32 = Field(default=3, ge=0)
    """Restarts of the job before it is considered failed."""
    ttl_seconds_after_finished: Int32 | None = Field(default=None, ge=0)
    """Seconds after finishing before the job is deleted."""
    priority_class_name: str | None = Field(
        default=None, max_length=253, pattern=DNS_SUBDOMAIN_PATTERN
    )
    """PriorityClass of the job and of its pods that name none."""
    min_success: Int32 | None = Field(default=None, ge=1)
    """Pods that must succeed for the job to complete."""
    network_topology: NetworkTopologySpec | None = None
    """HyperNode constraint of the job's gang."""

    @model_validator(mode="after")
    def _job_rules(self) -> Self:
        job_rules.check_job_spec(self)
        return self


class JobState(VolcanoModel):
    """The job's phase and why it is in it."""

    phase: JobPhase | None = None
    """Current phase of the job."""
    reason: str | None = None
    """Reason of the last phase transition."""
    message: str | None = None
    """Details of the last phase transition."""
    last_transition_time: Timestamp | None = None
    """When the phase last changed."""


class TaskState(VolcanoModel):
    """Pod counts of one task, by pod phase."""

    phase: dict[str, Int32] = Field(default_factory=dict)
    """Pod phase -> number of pods."""


class JobCondition(VolcanoModel):
    """When the job entered a phase."""

    status: str
    """The phase."""
    last_transition_time: Timestamp | None = None
    """When the job entered it."""


class JobStatus(VolcanoModel):
    """The observed state of the job."""

    state: JobState = Field(default_factory=JobState)
    """Current state of the job."""
    min_available: Int32 = implicit(0, ge=0)
    """The job's minAvailable when last synced."""
    task_status_count: dict[str, TaskState] = Field(default_factory=dict)
    """Pod counts per task and phase."""
    pending: Int32 = implicit(0, ge=0)
    """Pending pods."""
    running: Int32 = implicit(0, ge=0)
    """Running pods."""
    succeeded: Int32 = implicit(0, ge=0)
    """Succeeded pods."""
    failed: Int32 = implicit(0, ge=0)
    """Failed pods."""
    terminating: Int32 = implicit(0, ge=0)
    """Terminating pods."""
    unknown: Int32 = implicit(0, ge=0)
    """Pods in an unknown state."""
    version: Int32 = implicit(0, ge=0)
    """Bumped each time the job's pods are all killed and recreated."""
    retry_count: Int32 = implicit(0, ge=0)
    """Times the job has been restarted."""
    running_duration: GoDuration | None = None
    """How long the job has been running."""
    controlled_resources: dict[str, str] = Field(default_factory=dict)
    """Objects created for the job (services, PVCs...)."""
    conditions: list[JobCondition] = Field(default_factory=list)
    """When the job entered each phase."""


class Job(CustomResource):
    """A Volcano batch job."""

    CRD = CrdInfo(
        group="batch.volcano.sh",
        version="v1alpha1",
        kind="Job",
        plural="jobs",
        singular="job",
        scope="Namespaced",
        short_names=("vcjob", "vj"),
        printer_columns=(
            PrinterColumn("STATUS", ".status.state.phase", "string"),
            PrinterColumn("minAvailable", ".status.minAvailable", "integer"),
            PrinterColumn("RUNNINGS", ".status.running", "integer"),
            PrinterColumn("AGE", ".metadata.creationTimestamp", "date"),
            PrinterColumn("QUEUE", ".spec.queue", "string", priority=1),
        ),
        status_subresource=True,
    )

    spec: JobSpec
    """The desired behaviour of the job."""
    status: JobStatus = Field(default_factory=JobStatus)
    """The observed state of the job."""

    @model_validator(mode="after")
    def _names_fit(self) -> Self:
        job_rules.check_job_names(self.metadata.name, self.spec.tasks)
        return self
