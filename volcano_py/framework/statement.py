"""Statement: a transaction over the session (``framework/statement.go``).

Operations apply to the session at once (so later decisions see them) and are either
committed to the cache (binds, evictions) or undone in reverse order. Pipelining is never sent
anywhere: it only reserves room inside the session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeFitError, NodeInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.event import Event, EventHandler
from volcano_py.metrics.batch import ObservationBatch

log = logging.getLogger(__name__)

# A stretch of binds goes to a sink offering ``add_bind_tasks`` in one call (False: one
# ``add_bind_task`` each, the tests' reference).
_BATCH_COMMIT = True

# ``SchedulerCache.add_bind_tasks``: per task, what ``add_bind_task`` would have raised.
BindAll = Callable[[Sequence[TaskInfo]], list[Exception | None]]


class BindEvictSink(Protocol):
    """Where a committed statement sends its binds and evictions (the scheduler cache)."""

    def add_bind_task(self, task: TaskInfo) -> None: ...

    def evict(self, task: TaskInfo, reason: str) -> None: ...


class StatementSession(Protocol):
    """The part of a session a statement reads and changes. The Session satisfies it; naming
    only this keeps the statement below the session in the import graph."""

    @property
    def uid(self) -> str: ...

    @property
    def jobs(self) -> Mapping[str, JobInfo]: ...

    @property
    def nodes(self) -> Mapping[str, NodeInfo]: ...

    @property
    def event_handlers(self) -> Sequence[EventHandler]: ...

    @property
    def sink(self) -> BindEvictSink: ...

    @property
    def now(self) -> float: ...


class Op(Enum):
    EVICT = "evict"
    PIPELINE = "pipeline"
    ALLOCATE = "allocate"


@dataclass(slots=True)
class Operation:
    op: Op
    task: TaskInfo
    reason: str = ""


class StatementError(RuntimeError):
    """An operation could not be applied; the session was left as it was."""


class Statement:
    __slots__ = ("operations", "ssn")

    def __init__(self, ssn: StatementSession) -> None:
        self.ssn = ssn
        self.operations: list[Operation] = []

    # ------------------------------------------------------------------ helpers

    def _fire(self, task: TaskInfo, allocate: bool) -> list[str]:
        errors = []
        # One event for the handlers in turn while none sets an error: each handler still
        # gets an event with no error set (a fresh one after a veto).
        event = Event(task)
        for handler in self.ssn.event_handlers:
            callback = handler.allocate if allocate else handler.deallocate
            if callback is None:
                continue
            callback(event)
            if event.error:
                errors.append(event.error)
                event = Event(task)
        return errors

    def _set_status(self, task: TaskInfo, status: TaskStatus) -> None:
        job = self.ssn.jobs.get(task.job)
        if job is None:
            log.error("failed to find job <%s> in session %s", task.job, self.ssn.uid)
            return
        job.update_task_status(task, status)

    # ------------------------------------------------------------------ operations

    def evict(self, victim: TaskInfo, reason: str) -> TaskInfo:
        """Mark ``victim`` Releasing in the session. Works on a copy (returned), so a task
        object the session shares with the cache is never changed."""
        victim = victim.clone()
        self._set_status(victim, TaskStatus.RELEASING)
        node = self.ssn.nodes.get(victim.node_name)
        if node is not None:
            node.update_task(victim)
        self._fire(victim, allocate=False)
        self.operations.append(Operation(Op.EVICT, victim, reason))
        return victim

    def _unevict(self, victim: TaskInfo) -> None:
        self._set_status(victim, TaskStatus.RUNNING)
        node = self.ssn.nodes.get(victim.node_name)
        if node is not None:
            node.update_task(victim)
        self._fire(victim, allocate=True)

    def pipeline(self, task: TaskInfo, node_name: str, eviction_occurred: bool) -> None:
        """Reserve ``node_name``'s future idle for ``task`` (it waits for evictions)."""
        task.eviction_occurred = eviction_occurred
        self._place(task, node_name, TaskStatus.PIPELINED, Op.PIPELINE)

    def allocate(self, task: TaskInfo, node: NodeInfo) -> None:
        """Place ``task`` on ``node`` in the session (its idle shrinks now)."""
        self._place(task, node.name, TaskStatus.ALLOCATED, Op.ALLOCATE)

    def unpipeline(self, task: TaskInfo) -> None:
        self._unplace(task)

    def _unallocate(self, task: TaskInfo) -> None:
        self._unplace(task)

    def _require(self, task: TaskInfo, node_name: str, what: str) -> NodeInfo:
        """The session's own node and the task's job, or a StatementError before any change."""
        if task.job not in self.ssn.jobs:
            raise StatementError(f"task {task.key} {what}: job {task.job} is not in the session")
        node = self.ssn.nodes.get(node_name)
        if node is None:
            raise StatementError(f"task {task.key} {what}: node {node_name} is not in the session")
        return node

    def _place(self, task: TaskInfo, node_name: str, status: TaskStatus, op: Op) -> None:
        """Put ``task`` on the node with ``status`` and tell the plugins; roll back and raise
        StatementError if the node refuses it or a plugin vetoes."""
        node = self._require(task, node_name, op.value)
        self._set_status(task, status)
        task.node_name = node_name
        try:
            node.add_task(task)
        except NodeFitError as error:
            # Nothing was charged and no plugin was told: only the status goes back.
            self._set_status(task, TaskStatus.PENDING)
            task.node_name = ""
            raise StatementError(
                f"task {task.key} {op.value} to node {node_name}: {error}"
            ) from error
        errors = self._fire(task, allocate=True)
        if errors:
            self._unplace(task)
            raise StatementError(
                f"task {task.key} {op.value} to node {node_name} rolled back: {'; '.join(errors)}"
            )
        self.operations.append(Operation(op, task))

    def _unplace(self, task: TaskInfo) -> None:
        """Undo an allocation or a pipelining: Pending again, off the node, plugins told."""
        self._set_status(task, TaskStatus.PENDING)
        node = self.ssn.nodes.get(task.node_name)
        if node is not None and task.key in node.tasks:
            node.remove_task(task)
        self._fire(task, allocate=False)
        task.node_name = ""
        task.job_allocated_hyper_node = ""

    # ------------------------------------------------------------------ outcome

    def discard(self) -> None:
        """Undo every operation, newest first; each task remembers what was undone."""
        for operation in reversed(self.operations):
            operation.task.remember_transaction()
            if operation.op is Op.EVICT:
                self._unevict(operation.task)
            elif operation.op is Op.PIPELINE:
                self.unpipeline(operation.task)
            else:
                self._unallocate(operation.task)
        self.operations = []

    def commit(self) -> None:
        """Send evictions and binds to the cache, in order. A stretch of binds goes to a
        sink that takes them at once (``add_bind_tasks``) in one call."""
        sink = self.ssn.sink
        bind_all: BindAll | None = getattr(sink, "add_bind_tasks", None) if _BATCH_COMMIT else None
        assumed = ObservationBatch(metrics.TASK_ASSUMED)
        operations = self.operations
        at, count = 0, len(operations)
        while at < count:
            operation = operations[at]
            task = operation.task
            if bind_all is not None and operation.op is Op.ALLOCATE:
                end = at + 1
                while end < count and operations[end].op is Op.ALLOCATE:
                    end += 1
                self._bind_stretch(bind_all, [op.task for op in operations[at:end]], assumed)
                at = end
                continue
            at += 1
            task.last_transaction = None
            if operation.op is Op.EVICT:
                try:
                    sink.evict(task, operation.reason)
                except Exception as error:  # an evictor failure must not lose the session
                    log.error("failed to evict %s: %s", task.key, error)
                    self._unevict(task)
            elif operation.op is Op.ALLOCATE:
                try:
                    sink.add_bind_task(task)
                    self._set_status(task, TaskStatus.BINDING)
                except Exception as error:
                    log.error("failed to bind %s: %s", task.key, error)
                    self._unallocate(task)
                else:
                    self._observe_assumed(task, assumed)
        assumed.flush()
        self.operations = []

    def _bind_stretch(
        self, bind_all: BindAll, tasks: list[TaskInfo], assumed: ObservationBatch
    ) -> None:
        """``commit``'s binds of consecutive allocations, handed to the sink in one call; the
        session's part follows task by task, in order, as ``commit`` does it for one."""
        for task in tasks:
            task.last_transaction = None
        outcomes = bind_all(tasks)
        for task, error in zip(tasks, outcomes, strict=True):
            if error is not None:
                log.error("failed to bind %s: %s", task.key, error)
                self._unallocate(task)
                continue
            self._set_status(task, TaskStatus.BINDING)
            self._observe_assumed(task, assumed)

    def _observe_assumed(self, task: TaskInfo, assumed: ObservationBatch) -> None:
        """``task_scheduling_latency{stage="Assumed"}``: from the pod's creation to the
        moment its bind is handed to the cache (the session's clock)."""
        if not metrics.RECORDING.on:
            return
        created = metrics.epoch_seconds(task.creation_timestamp)
        if created is not None:
            assumed.observe(metrics.milliseconds(max(0.0, self.ssn.now - created)))

    def merge(self, *others: Statement) -> None:
        for other in others:
            self.operations.extend(other.operations)
            other.operations = []

    def save_operations(self) -> list[Operation]:
        """Copies of the operations (with task clones) to replay later."""
        saved = []
        for operation in self.operations:
            task = operation.task.clone()
            saved.append(Operation(operation.op, task, operation.reason))
        return saved

    def recover_operations(self, saved: list[Operation]) -> None:
        """Replay saved operations on this statement (after a dry run was discarded)."""
        for operation in saved:
            live = self.ssn.jobs[operation.task.job].tasks[operation.task.uid]
            if operation.op is Op.EVICT:
                self.evict(live, operation.reason)
            elif operation.op is Op.PIPELINE:
                self.pipeline(live, operation.task.node_name, operation.task.eviction_occurred)
            else:
                self.allocate(live, self.ssn.nodes[operation.task.node_name])
