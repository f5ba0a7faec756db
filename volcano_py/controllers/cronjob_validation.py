"""The validating CronJob webhook (``pkg/webhooks/admission/cronjobs/validate``): the schedule,
the time zone and the name, in upstream's words; and, beyond upstream, the job template
checked as the job webhook will check every job made from it.

Upstream admits a CronJob whose template the job webhook refuses; each scheduled run then
fails with only a ``FailedCreate`` event on the CronJob. Refusing it when it is applied says
the same thing once, where the user is looking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.types import DEFAULT_SCHEDULER_NAME
from volcano_py.controllers.admission import mutate_job
from volcano_py.controllers.job_validation import validate_job
from volcano_py.controllers.raw import mapping, name, namespace, spec, text
from volcano_py.models.cronjob_rules import name_problem, schedule_problem, time_zone_problems

# The jobs are named <cronjob>-<minutes since the epoch>: eight digits until the year 2160.
_JOB_NAME_SUFFIX: Final = "-" + "9" * 8


def cronjob_problems(cronjob: Mapping[str, Any]) -> list[str]:
    """``validateCronJob``: the spec's problems, then the name's (each trimmed, as upstream
    joins them)."""
    cron_spec = spec(cronjob)
    problems = []
    schedule = schedule_problem(text(cron_spec.get("schedule")))
    if schedule:
        problems.append(schedule)
    time_zone = cron_spec.get("timeZone")
    problems += time_zone_problems(time_zone if isinstance(time_zone, str) else None)
    spec_message = " ".join(problems)
    name_message = name_problem(name(cronjob))
    return [message for message in (spec_message, name_message) if message]


def template_problems(
    cronjob: Mapping[str, Any], scheduler_name: str = DEFAULT_SCHEDULER_NAME
) -> list[str]:
    """What the job webhook would refuse in every job the template makes (after the job
    defaults), each as ``spec.jobTemplate.<field>: ...``. The queue is not looked up: it may
    be created before the first run, and the job webhook checks it then."""
    template = mapping(spec(cronjob).get("jobTemplate"))
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": name(cronjob) + _JOB_NAME_SUFFIX,
            "namespace": namespace(cronjob),
        },
        "spec": dict(mapping(template.get("spec"))),
    }
    problems = []
    for problem in validate_job(mutate_job(job, scheduler_name), {}):
        if problem.startswith("spec.queue:"):
            continue
        if problem.startswith("spec."):
            problem = "spec.jobTemplate." + problem
        problems.append(problem)
    return problems
