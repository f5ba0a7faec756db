"""``flow.volcano.sh/v1alpha1`` JobFlow and JobTemplate: Volcano Jobs created from templates,
each once the jobs it depends on have completed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Self

from pydantic import Field, model_validator

from volcano_py.models import jobflow_rules
from volcano_py.models.base import SpecError, VolcanoModel
from volcano_py.models.fieldtypes import GoDuration, Int32, OpenObject, Timestamp
from volcano_py.models.job import JobSpec, TaskState
from volcano_py.models.resource import (
    DEFAULT_NAMESPACE,
    CrdInfo,
    CustomResource,
    PrinterColumn,
)

RetainPolicy = Literal["retain", "delete"]
FlowPhase = Literal["Succeed", "Terminating", "Failed", "Running", "Pending"]


class HttpHeader(VolcanoModel):
    """One header of an HTTP probe."""

    name: str
    """Header name."""
    value: str
    """Header value."""


class HttpGet(VolcanoModel):
    """An HTTP GET probe of a task (accepted; upstream's controller does not run it)."""

    task_name: str | None = Field(default=None, max_length=253)
    """Task probed."""
    path: str | None = None
    """Path requested."""
    port: int | None = Field(default=None, ge=0, le=65535)
    """Port requested."""
    http_header: HttpHeader | None = None
    """Header sent."""


class TcpSocket(VolcanoModel):
    """A TCP probe of a task (accepted; upstream's controller does not run it)."""

    task_name: str | None = Field(default=None, max_length=253)
    """Task probed."""
    port: int = Field(ge=0, le=65535)
    """Port connected to."""


class TaskStatusProbe(VolcanoModel):
    """A task-phase probe (accepted; upstream's controller does not run it)."""

    task_name: str | None = Field(default=None, max_length=253)
    """Task watched."""
    phase: str | None = Field(default=None, max_length=63)
    """Phase awaited."""


class Probe(VolcanoModel):
    """Readiness probes of the targets. Volcano's controller ignores them (a flow waits for
    its targets' jobs to complete); volcano-py does the same and warns."""

    http_get_list: list[HttpGet] = Field(default_factory=list)
    """HTTP probes."""
    tcp_socket_list: list[TcpSocket] = Field(default_factory=list)
    """TCP probes."""
    task_status_list: list[TaskStatusProbe] = Field(default_factory=list)
    """Task-phase probes."""


class FlowDependsOn(VolcanoModel):
    """What a flow waits for."""

    targets: list[str] = Field(default_factory=list)
    """Flows (template names) whose jobs must complete first."""
    probe: Probe | None = None
    """Accepted but not acted on, as in Volcano."""


class Patch(VolcanoModel):
    """A change to the template's job spec. Volcano's controller ignores it (the job is made
    from the template as written); volcano-py does the same and warns."""

    job_spec: OpenObject = Field(default_factory=dict)
    """Job spec fields to change."""


class Flow(VolcanoModel):
    """One job of the flow: the JobTemplate of this name, and what it waits for."""

    name: str = Field(min_length=1)
    """The JobTemplate (in the JobFlow's namespace); the job is ``<jobflow>-<name>``."""
    depends_on: FlowDependsOn | None = None
    """The flows whose jobs must complete before this one's is created."""
    patch: Patch | None = None
    """Accepted but not acted on, as in Volcano."""

    @property
    def targets(self) -> Sequence[str]:
        return self.depends_on.targets if self.depends_on is not None else ()


class JobFlowSpec(VolcanoModel):
    """The flows and what happens to their jobs at the end."""

    flows: list[Flow] = Field(default_factory=list)
    """The jobs and their dependencies (a directed acyclic graph)."""
    job_retain_policy: RetainPolicy | None = None
    """delete: the jobs are deleted once the flow has succeeded; retain (or unset): kept."""

    @model_validator(mode="after")
    def _flows_form_a_dag(self) -> Self:
        problem = jobflow_rules.flow_graph_problem(self.flows)
        if problem is not None:
            index, message = problem
            raise SpecError(("flows", index, "dependsOn", "targets"), message)
        return self


# The job phases in the status are plain strings, as upstream's schema has them: a phase a
# newer Volcano adds must not make the status write fail.


class JobRunningHistory(VolcanoModel):
    """One phase a job went through."""

    start_timestamp: Timestamp | None = None
    """When the job entered the phase."""
    end_timestamp: Timestamp | None = None
    """When it left it."""
    state: str | None = None
    """The phase."""


class FlowJobStatus(VolcanoModel):
    """One job of the flow."""

    name: str | None = None
    """The job's name."""
    state: str | None = None
    """The job's phase."""
    start_timestamp: Timestamp | None = None
    """The job's creation time."""
    end_timestamp: Timestamp | None = None
    """Creation time plus running duration."""
    restart_count: Int32 | None = Field(default=None, ge=0)
    """The job's retry count."""
    running_histories: list[JobRunningHistory] = Field(default_factory=list)
    """The phases the job went through."""


class FlowCondition(VolcanoModel):
    """A job of the flow as last seen."""

    phase: str | None = None
    """The job's phase."""
    create_time: Timestamp | None = None
    """The job's creation time."""
    running_duration: GoDuration | None = None
    """The job's running duration."""
    task_status_count: dict[str, TaskState] = Field(default_factory=dict)
    """The job's pods per task and phase."""


class FlowState(VolcanoModel):
    """The flow's phase."""

    phase: FlowPhase | None = None
    """Pending, Running, Succeed, Failed or Terminating."""


class JobFlowStatus(VolcanoModel):
    """The jobs of the flow by phase, and the flow's phase."""

    pending_jobs: list[str] = Field(default_factory=list)
    """Jobs Pending."""
    running_jobs: list[str] = Field(default_factory=list)
    """Jobs Running."""
    failed_jobs: list[str] = Field(default_factory=list)
    """Jobs Failed."""
    completed_jobs: list[str] = Field(default_factory=list)
    """Jobs Completed."""
    terminated_jobs: list[str] = Field(default_factory=list)
    """Jobs Terminated."""
    un_know_jobs: list[str] = Field(default_factory=list, alias="unKnowJobs")
    """Jobs in any other phase (upstream's spelling)."""
    job_status_list: list[FlowJobStatus] = Field(default_factory=list)
    """Each job's phase history."""
    conditions: dict[str, FlowCondition] = Field(default_factory=dict)
    """Each job as last seen, by name."""
    state: FlowState = Field(default_factory=FlowState)
    """The flow's phase."""


class JobFlow(CustomResource):
    """Volcano jobs run in dependency order."""

    CRD = CrdInfo(
        group="flow.volcano.sh",
        version="v1alpha1",
        kind="JobFlow",
        plural="jobflows",
        singular="jobflow",
        scope="Namespaced",
        short_names=("jf",),
        printer_columns=(
            PrinterColumn("Status", ".status.state.phase", "string"),
            PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
        ),
        status_subresource=True,
    )

    spec: JobFlowSpec = Field(default_factory=JobFlowSpec)
    """The flows and the retain policy."""
    status: JobFlowStatus = Field(default_factory=JobFlowStatus)
    """The jobs by phase and the flow's phase."""

    @model_validator(mode="after")
    def _labels_fit(self) -> Self:
        name = self.metadata.name
        if not name:
            return self  # generateName: the server picks the name
        namespace = self.metadata.namespace or DEFAULT_NAMESPACE
        problem = jobflow_rules.created_by_label_problem(namespace, name, "JobFlow")
        if problem:
            raise SpecError(("metadata", "name"), problem)
        for index, flow in enumerate(self.spec.flows):
            problem = jobflow_rules.created_by_label_problem(namespace, flow.name, "JobTemplate")
            if problem:
                raise SpecError(("spec", "flows", index, "name"), problem)
        return self


class JobTemplateStatus(VolcanoModel):
    """The jobs made from the template."""

    job_depends_on_list: list[str] = Field(default_factory=list)
    """Names of the jobs created from this template."""


class JobTemplate(CustomResource):
    """A Volcano Job spec that JobFlows make jobs from."""

    CRD = CrdInfo(
        group="flow.volcano.sh",
        version="v1alpha1",
        kind="JobTemplate",
        plural="jobtemplates",
        singular="jobtemplate",
        scope="Namespaced",
        short_names=("jt",),
        status_subresource=True,
    )

    spec: JobSpec
    """The spec of the jobs (a Volcano Job's spec)."""
    status: JobTemplateStatus = Field(default_factory=JobTemplateStatus)
    """The jobs made from the template."""


def ignored_fields(jobflow: JobFlow) -> list[str]:
    """The fields set that Volcano's JobFlow controller accepts but never reads, each with
    what happens instead: said as warnings (webhook, simulate), since volcano-py ignores them
    too."""
    warnings = []
    for index, flow in enumerate(jobflow.spec.flows):
        if flow.depends_on is not None and flow.depends_on.probe is not None:
            warnings.append(
                f"spec.flows[{index}].dependsOn.probe: not acted on (as in Volcano): the flow's"
                " job is created once its targets' jobs are Completed, without probing"
            )
        if flow.patch is not None:
            warnings.append(
                f"spec.flows[{index}].patch: not acted on (as in Volcano): the job is created"
                f" from JobTemplate {flow.name!r} as written"
            )
    return warnings
