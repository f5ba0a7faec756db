"""Random statement operations for the property tests that check what a session keeps up to
date through its events (counts, sums, trackers): one driver, so that every such test draws
and applies the operations alike."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Statement, StatementError

STATEMENT_KINDS = ("allocate", "pipeline", "evict", "discard", "commit", "new")

Operation = tuple[str, int, int]


def operations(
    nodes: int, tasks: int, extra_kinds: Sequence[str] = ()
) -> st.SearchStrategy[list[Operation]]:
    """Up to 25 operations: (kind, which task, which node), drawn as small integers."""
    return st.lists(
        st.tuples(
            st.sampled_from([*STATEMENT_KINDS, *extra_kinds]),
            st.integers(0, tasks),
            st.integers(0, nodes - 1),
        ),
        max_size=25,
    )


def pending_tasks(ssn: Session) -> list[TaskInfo]:
    return [task for task in _tasks_by_name(ssn) if task.status is TaskStatus.PENDING]


def apply_operation(
    ssn: Session, statements: list[Statement], kind: str, which: int, node_name: str
) -> None:
    """One of ``STATEMENT_KINDS`` on the newest statement (``new`` opens another); an
    operation the statement refuses leaves it as it was."""
    statement = statements[-1]
    tasks = _tasks_by_name(ssn)
    pending = [task for task in tasks if task.status is TaskStatus.PENDING]
    running = [task for task in tasks if task.status is TaskStatus.RUNNING]
    try:
        if kind == "allocate" and pending:
            statement.allocate(pending[which % len(pending)], ssn.nodes[node_name])
        elif kind == "pipeline" and pending:
            statement.pipeline(pending[which % len(pending)], node_name, False)
        elif kind == "evict" and running:
            statement.evict(running[which % len(running)], "test")
        elif kind == "discard":
            statement.discard()
        elif kind == "commit":
            statement.commit()
        elif kind == "new":
            statements.append(ssn.statement())
    except StatementError:
        pass


def _tasks_by_name(ssn: Session) -> list[TaskInfo]:
    return sorted(
        (task for job in ssn.jobs.values() for task in job.tasks.values()),
        key=lambda task: task.name,
    )
