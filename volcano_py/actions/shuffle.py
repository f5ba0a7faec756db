"""shuffle: evict the running tasks that victim-selection plugins (rescheduling-style) name,
at once (``actions/shuffle/shuffle.go``)."""

from __future__ import annotations

from typing import Final

from volcano_py.api.types import TaskStatus
from volcano_py.framework.session import Session


class Shuffle:
    name = "shuffle"

    def execute(self, ssn: Session) -> None:
        running = [
            task for job in ssn.jobs.values() for task in job.tasks_in(TaskStatus.RUNNING).values()
        ]
        for victim in ssn.victim_tasks(running):
            ssn.evict(victim, "shuffle")


# The keys of this action's `configurations` entry (upstream shuffle.go reads none).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new() -> Shuffle:
    return Shuffle()
