"""``batch.volcano.sh/v1alpha1`` CronJob: a Volcano Job created on a cron schedule."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from volcano_py.models import cronjob_rules, job_rules
from volcano_py.models.base import SpecError, VolcanoModel
from volcano_py.models.fieldtypes import Int32, Int64, Timestamp
from volcano_py.models.job import JobSpec
from volcano_py.models.resource import CrdInfo, CustomResource

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]

# The jobs are named <cronjob>-<minutes since the epoch>: eight digits until the year 2160.
_JOB_NAME_SUFFIX_EXAMPLE = "-" + "9" * 8


class JobTemplateMeta(VolcanoModel):
    """The metadata a template may carry (what controller-gen keeps of an embedded
    ObjectMeta); labels and annotations are copied onto every job."""

    annotations: dict[str, str] = Field(default_factory=dict)
    """Annotations of the jobs."""
    finalizers: list[str] = Field(default_factory=list)
    """Kept as written; the controller does not copy them."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Labels of the jobs."""
    name: str | None = None
    """Ignored: the jobs are named <cronjob>-<scheduled minutes since the epoch>."""
    namespace: str | None = None
    """Ignored: the jobs are created in the CronJob's namespace."""


class JobTemplateSpec(VolcanoModel):
    """The job created at each scheduled time."""

    metadata: JobTemplateMeta = Field(default_factory=JobTemplateMeta)
    """Labels and annotations of the jobs."""
    spec: JobSpec
    """The spec of the jobs (a Volcano Job's spec)."""


class CronJobSpec(VolcanoModel):
    """When and how jobs are created."""

    schedule: str
    """The schedule in cron format (five fields, or @hourly, @daily, @every 1h...)."""
    time_zone: str | None = None
    """IANA time zone of the schedule; UTC when unset."""
    starting_deadline_seconds: Int64 | None = Field(default=None, ge=0)
    """A missed schedule is skipped once it is this many seconds late."""
    concurrency_policy: ConcurrencyPolicy = "Allow"
    """Allow: jobs may overlap; Forbid: skip a run while one is active; Replace: delete the
    active jobs and start the new one."""
    suspend: bool = False
    """Create no new jobs (the running ones are left alone)."""
    job_template: JobTemplateSpec
    """The job created at each scheduled time."""
    successful_jobs_history_limit: Int32 = Field(default=3, ge=0)
    """Completed jobs kept."""
    failed_jobs_history_limit: Int32 = Field(default=1, ge=0)
    """Failed jobs kept."""

    @model_validator(mode="after")
    def _schedule_and_zone(self) -> Self:
        problem = cronjob_rules.schedule_problem(self.schedule)
        if problem:
            raise SpecError(("schedule",), problem)
        zone_problems = cronjob_rules.time_zone_problems(self.time_zone)
        if zone_problems:
            raise SpecError(("timeZone",), "; ".join(dict.fromkeys(zone_problems)))
        return self


class ObjectReference(VolcanoModel):
    """A reference to a job (v1.ObjectReference)."""

    api_version: str | None = None
    """API version of the referent."""
    field_path: str | None = None
    """Unused here."""
    kind: str | None = None
    """Kind of the referent."""
    name: str | None = None
    """Name of the referent."""
    namespace: str | None = None
    """Namespace of the referent."""
    resource_version: str | None = None
    """Resource version of the referent when the reference was made."""
    uid: str | None = None
    """UID of the referent."""


class CronJobStatus(VolcanoModel):
    """The jobs running and when the schedule last fired."""

    active: list[ObjectReference] = Field(default_factory=list)
    """The jobs currently running."""
    last_schedule_time: Timestamp | None = None
    """When a job was last scheduled."""
    last_successful_time: Timestamp | None = None
    """When a job last completed."""


class CronJob(CustomResource):
    """Volcano jobs created on a schedule."""

    CRD = CrdInfo(
        group="batch.volcano.sh",
        version="v1alpha1",
        kind="CronJob",
        plural="cronjobs",
        singular="cronjob",
        scope="Namespaced",
        short_names=("cronvcjob", "cronvj"),
        status_subresource=True,
    )

    spec: CronJobSpec
    """The schedule and the job template."""
    status: CronJobStatus = Field(default_factory=CronJobStatus)
    """The jobs running and when the schedule last fired."""

    @model_validator(mode="after")
    def _names_fit(self) -> Self:
        name = self.metadata.name
        if not name:
            return self  # generateName: the server picks the name
        problem = cronjob_rules.name_problem(name)
        if problem:
            raise SpecError(("metadata", "name"), problem)
        try:
            job_rules.check_job_names(
                name + _JOB_NAME_SUFFIX_EXAMPLE, self.spec.job_template.spec.tasks
            )
        except SpecError as error:
            raise SpecError(("spec", "jobTemplate", *error.path), error.message) from None
        return self
