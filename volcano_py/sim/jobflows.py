"""The JobFlow and JobTemplate controllers in the simulated cluster: each round, every JobFlow
gets one ``sync_jobflow`` against the simulated objects and clock. Its jobs are created as
the job webhook would default them (the caller then syncs them like any new job), its
deletions take what each job owns with it, and its status is written; each JobTemplate's
status lists the jobs made from it."""

from __future__ import annotations

import datetime as dt

from volcano_py.controllers.admission import mutate_job
from volcano_py.controllers.jobflow import job_template_status, sync_jobflow
from volcano_py.sim import job_ttl
from volcano_py.sim.cluster import InMemoryCluster, object_key


def run_jobflows(cluster: InMemoryCluster, now: dt.datetime, scheduler_name: str) -> list[str]:
    """One round of both controllers; the keys of the jobs created."""
    created: list[str] = []
    for key, jobflow in list(cluster.items("JobFlow")):
        namespace, _, name = key.partition("/")
        templates = {
            template_key.partition("/")[2]: template
            for template_key, template in cluster.in_namespace("JobTemplate", namespace).items()
        }
        jobs = list(cluster.in_namespace("Job", namespace).values())
        changes = sync_jobflow(jobflow, templates, jobs, now)
        for deletion in changes.delete_jobs:
            job_ttl.delete_job_and_dependents(cluster, f"{deletion.namespace}/{deletion.name}")
        for job in changes.create_jobs:
            created.append(object_key(cluster.create(mutate_job(job, scheduler_name))))
        for event_type, reason, message in changes.events:
            cluster.record("JobFlow", namespace, name, event_type, reason, message)
        if changes.status is not None and changes.status != jobflow.get("status"):
            cluster.update({**jobflow, "status": changes.status})
    for key, template in list(cluster.items("JobTemplate")):
        namespace = key.partition("/")[0]
        jobs = list(cluster.in_namespace("Job", namespace).values())
        template_status = job_template_status(template, jobs)
        if template_status is not None and template_status != template.get("status"):
            cluster.update({**template, "status": template_status})
    return created
