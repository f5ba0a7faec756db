"""Volcano's CronJob controller in the simulated cluster: each controller round, every CronJob
gets one ``sync_cronjob`` against the simulated jobs and clock, as the live controller syncs it
at its schedule times and on its jobs' events. Its jobs are created as the job webhook would
default them (the caller then syncs them like any new job), history and ``Replace`` deletions
take what each job owns with it, and its status is written. The time each CronJob next wants
a sync (its next schedule time) is handed back, for the clock to jump to.
"""

from __future__ import annotations

import datetime as dt

from volcano_py.controllers.admission import mutate_job
from volcano_py.controllers.cronjob import NEXT_SCHEDULE_DELTA, sync_cronjob
from volcano_py.controllers.raw import Raw
from volcano_py.sim import job_ttl
from volcano_py.sim.clock import seconds_since_epoch
from volcano_py.sim.cluster import InMemoryCluster, object_key


def run_cronjobs(
    cluster: InMemoryCluster, now: dt.datetime, scheduler_name: str
) -> tuple[list[str], dict[str, float]]:
    """One round; the keys of the jobs created and, per CronJob, when it is next due
    (seconds since the simulator's epoch; absent when it waits for nothing timed)."""
    created: list[str] = []
    due: dict[str, float] = {}
    for key, cronjob in list(cluster.items("CronJob")):
        namespace, _, name = key.partition("/")

        def lookup(job_name: str, namespace: str = namespace) -> Raw | None:
            return cluster.get("Job", f"{namespace}/{job_name}")

        jobs = list(cluster.in_namespace("Job", namespace).values())
        changes = sync_cronjob(cronjob, jobs, now, lookup)
        for deletion in changes.delete_jobs:
            job_key = f"{deletion.namespace or namespace}/{deletion.name}"
            found = cluster.get("Job", job_key)
            # Preconditioned on the uid, as upstream deletes: never a job re-made under the name.
            if found is not None and (
                not deletion.uid or (found.get("metadata") or {}).get("uid") == deletion.uid
            ):
                job_ttl.delete_job_and_dependents(cluster, job_key)
                cluster.changes += 1
        if changes.create_job is not None:
            job = cluster.create(mutate_job(changes.create_job, scheduler_name))
            changes.record_created(job)
            created.append(object_key(job))
            cluster.changes += 1
        for event_type, reason, message in changes.events:
            cluster.record("CronJob", namespace, name, event_type, reason, message)
        if (
            changes.error is None
            and changes.status is not None
            and changes.status != cronjob.get("status")
        ):
            cluster.update({**cronjob, "status": changes.status})
        if changes.requeue_after is not None:
            # The schedule time itself: upstream's 100 ms of padding is for clock skew,
            # which a simulated clock does not have.
            wake = now + changes.requeue_after - NEXT_SCHEDULE_DELTA
            due[key] = seconds_since_epoch(wake)
    return created, due
