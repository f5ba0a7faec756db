"""Statement: operations applied to the session at once, then committed or undone
(``framework/statement.go``, spec §2.6).

Upstream cases transcribed:

* ``statement_test.go``: ``TestStatementMerge`` (all six sub-tests),
  ``TestPipelineAutoRollbackOnError`` (3), ``TestAllocateAutoRollbackOnError`` (3),
  ``TestDiscardReversesOperations`` (3). ``TestStatementHasEvictions`` is not transcribed:
  our Statement has no ``has_evictions``.
* ``statement_recover_test.go``: ``TestRecoverOperations_PipelinePreservesEvictionFlag``.

Differences by design: ``evict`` works on a copy of the victim (the session shares non-pending
task objects with the cache) and returns it; errors are raised (``StatementError``) rather than
returned.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.fake_plugins import (
    PluginSpec,
    RecordingSink,
    cache_of,
    open_fake_session,
    plugin,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Op, Operation, Statement, StatementError

GI = 2**30
WORKER = {"volcano.sh/task-spec": "worker"}


def objects() -> list[tuple[str, dict[str, Any]]]:
    """``newTestSession``: one queue, one job with pending tasks, one node; plus a running
    job to evict from."""
    return [
        ("Node", build_node("n1", resource_list("4", "8Gi", pods="10"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("pg1", "ns1", "q1", 1, phase="Inqueue")),
        ("Pod", build_pod("ns1", "p1", "", "Pending", resource_list("1", "1Gi"), "pg1", WORKER)),
        ("Pod", build_pod("ns1", "p2", "", "Pending", resource_list("1", "1Gi"), "pg1", WORKER)),
        ("PodGroup", build_pod_group("pg2", "ns1", "q1", 1, phase="Running")),
        ("Pod", build_pod("ns1", "r1", "n1", "Running", resource_list("1", "1Gi"), "pg2")),
    ]


class Fixture:
    def __init__(
        self,
        handlers: list[EventHandler] | None = None,
        tiers: list[list[PluginSpec]] | None = None,
    ) -> None:
        self.cache = cache_of(objects())
        self.sink = RecordingSink()
        self.ssn: Session = open_fake_session(tiers or [], self.cache.snapshot(), self.sink)
        for handler in handlers or []:
            self.ssn.add_event_handler(handler)
        self.job: JobInfo = self.ssn.jobs["ns1/pg1"]
        self.running_job: JobInfo = self.ssn.jobs["ns1/pg2"]
        self.node: NodeInfo = self.ssn.nodes["n1"]

    def task(self, name: str) -> TaskInfo:
        for job in self.ssn.jobs.values():
            for task in job.tasks.values():
                if task.name == name:
                    return task
        raise KeyError(name)

    def idle_cpu(self) -> float:
        return self.node.idle.milli_cpu

    def status(self, name: str) -> TaskStatus:
        return self.task(name).status


class EventLog:
    """An event handler that records (kind, task name, status) and can veto allocations."""

    def __init__(self, veto: str = "") -> None:
        self.events: list[tuple[str, str, TaskStatus]] = []
        self.veto = veto

    def allocate(self, event: Event) -> None:
        self.events.append(("allocate", event.task.name, event.task.status))
        if event.task.name == self.veto:
            event.error = f"{self.veto} vetoed"

    def deallocate(self, event: Event) -> None:
        self.events.append(("deallocate", event.task.name, event.task.status))

    def handler(self) -> EventHandler:
        return EventHandler(allocate=self.allocate, deallocate=self.deallocate, owner="log")


def bare_task(name: str) -> TaskInfo:
    return TaskInfo.from_pod(build_pod("ns", name, "", "Pending", {}, "pg"))


# ---------------------------------------------------------------------------- merge


def bare_statement(*operations: Operation) -> Statement:
    statement = Statement(None)  # type: ignore[arg-type]
    statement.operations = list(operations)
    return statement


def test_merge_transfers_operations_from_source_to_target():
    target = bare_statement()
    source = bare_statement(
        Operation(Op.EVICT, bare_task("t1"), "preempt"), Operation(Op.PIPELINE, bare_task("t2"))
    )
    target.merge(source)
    assert [(o.op, o.task.name) for o in target.operations] == [
        (Op.EVICT, "t1"),
        (Op.PIPELINE, "t2"),
    ]
    assert target.operations[0].reason == "preempt"


def test_merge_clears_source_operations():
    target, source = (
        bare_statement(),
        bare_statement(Operation(Op.EVICT, bare_task("t1"), "preempt")),
    )
    target.merge(source)
    assert source.operations == []


def test_merge_multiple_sources_keeps_order():
    target = bare_statement(Operation(Op.ALLOCATE, bare_task("t0")))
    src1 = bare_statement(Operation(Op.EVICT, bare_task("t1"), "preempt"))
    src2 = bare_statement(
        Operation(Op.PIPELINE, bare_task("t2")), Operation(Op.EVICT, bare_task("t3"), "preempt")
    )
    target.merge(src1, src2)
    assert [o.task.name for o in target.operations] == ["t0", "t1", "t2", "t3"]
    assert src1.operations == [] and src2.operations == []


def test_merge_empty_source_is_noop():
    target = bare_statement(Operation(Op.EVICT, bare_task("t1"), "preempt"))
    target.merge(bare_statement())
    assert len(target.operations) == 1


def test_merge_into_empty_target():
    target, source = bare_statement(), bare_statement(Operation(Op.PIPELINE, bare_task("t1")))
    target.merge(source)
    assert [o.task.name for o in target.operations] == ["t1"]


def test_merge_with_no_arguments_is_noop():
    target = bare_statement(Operation(Op.EVICT, bare_task("t1"), "preempt"))
    target.merge()
    assert len(target.operations) == 1


# ---------------------------------------------------------------------------- pipeline


def test_successful_pipeline_records_operation():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    idle = fx.idle_cpu()
    statement.pipeline(task, "n1", False)
    assert [(o.op, o.task.name) for o in statement.operations] == [(Op.PIPELINE, "p1")]
    assert task.node_name == "n1"
    assert task.status is TaskStatus.PIPELINED
    assert fx.job.tasks_in(TaskStatus.PIPELINED) == {task.uid: task}
    # pipelining reserves future idle only
    assert fx.idle_cpu() == idle
    assert fx.node.pipelined.milli_cpu == 1000
    assert "ns1/p1" in fx.node.tasks


def test_pipeline_to_missing_node_raises_and_rolls_back():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    with pytest.raises(StatementError, match="nonexistent-node"):
        statement.pipeline(task, "nonexistent-node", False)
    assert statement.operations == []
    assert task.status is TaskStatus.PENDING
    assert task.node_name == ""
    assert task.uid in fx.job.tasks
    assert fx.node.pipelined.milli_cpu == 0


def test_pipeline_to_missing_job_raises_and_rolls_back():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    del fx.ssn.jobs[task.job]
    with pytest.raises(StatementError):
        statement.pipeline(task, "n1", False)
    assert statement.operations == []
    assert "ns1/p1" not in fx.node.tasks


def test_pipeline_vetoed_by_event_handler_rolls_back():
    log = EventLog(veto="p1")
    fx = Fixture([log.handler()])
    statement = fx.ssn.statement()
    task = fx.task("p1")
    with pytest.raises(StatementError, match="p1 vetoed"):
        statement.pipeline(task, "n1", True)
    assert statement.operations == []
    assert task.status is TaskStatus.PENDING and task.node_name == ""
    assert fx.node.pipelined.milli_cpu == 0
    assert "ns1/p1" not in fx.node.tasks
    assert [e[0] for e in log.events] == ["allocate", "deallocate"]


# ---------------------------------------------------------------------------- allocate


def test_successful_allocate_records_operation():
    log = EventLog()
    fx = Fixture([log.handler()])
    statement = fx.ssn.statement()
    task = fx.task("p1")
    idle = fx.idle_cpu()
    statement.allocate(task, fx.node)
    assert [(o.op, o.task.name) for o in statement.operations] == [(Op.ALLOCATE, "p1")]
    assert task.node_name == "n1"
    assert task.status is TaskStatus.ALLOCATED
    assert fx.idle_cpu() == idle - 1000
    assert fx.node.used.memory == 2 * GI
    assert log.events == [("allocate", "p1", TaskStatus.ALLOCATED)]


def test_allocate_rejected_by_node_rolls_back():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    statement.allocate(task, fx.node)
    again = fx.task("p1")
    with pytest.raises(StatementError, match="already"):
        statement.allocate(again, fx.node)
    assert len(statement.operations) == 1


def test_allocate_vetoed_by_event_handler_rolls_back():
    log = EventLog(veto="p1")
    fx = Fixture([log.handler()])
    statement = fx.ssn.statement()
    task = fx.task("p1")
    idle = fx.idle_cpu()
    with pytest.raises(StatementError, match="rolled back"):
        statement.allocate(task, fx.node)
    assert statement.operations == []
    assert task.status is TaskStatus.PENDING and task.node_name == ""
    assert fx.idle_cpu() == idle
    assert "ns1/p1" not in fx.node.tasks
    assert [e[0] for e in log.events] == ["allocate", "deallocate"]


def test_allocate_to_node_missing_from_session_raises_and_rolls_back():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    node = fx.ssn.nodes.pop("n1")
    with pytest.raises(StatementError):
        statement.allocate(task, node)
    assert statement.operations == []
    assert task.status is TaskStatus.PENDING and task.node_name == ""


def test_allocate_with_missing_job_raises_and_rolls_back():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    del fx.ssn.jobs[task.job]
    with pytest.raises(StatementError):
        statement.allocate(task, fx.node)
    assert statement.operations == []
    assert "ns1/p1" not in fx.node.tasks


# ---------------------------------------------------------------------------- evict


def test_evict_works_on_a_copy_and_records_the_reason():
    log = EventLog()
    fx = Fixture([log.handler()])
    original = fx.task("r1")
    cache_task = fx.cache.tasks["ns1/r1"]
    idle = fx.idle_cpu()
    statement = fx.ssn.statement()
    victim = statement.evict(original, "preempt")
    assert victim is not original
    assert original.status is TaskStatus.RUNNING
    assert cache_task.status is TaskStatus.RUNNING
    assert victim.status is TaskStatus.RELEASING
    assert fx.running_job.tasks[victim.uid] is victim
    assert fx.running_job.tasks_in(TaskStatus.RELEASING) == {victim.uid: victim}
    assert fx.idle_cpu() == idle
    assert fx.node.releasing.milli_cpu == 1000
    assert [(o.op, o.task, o.reason) for o in statement.operations] == [
        (Op.EVICT, victim, "preempt")
    ]
    assert log.events == [("deallocate", "r1", TaskStatus.RELEASING)]


# ---------------------------------------------------------------------------- discard


def test_discard_reverses_pipeline():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    statement.pipeline(task, "n1", False)
    statement.discard()
    assert task.status is TaskStatus.PENDING
    assert task.node_name == ""
    assert fx.node.pipelined.milli_cpu == 0
    assert statement.operations == []


def test_discard_reverses_allocate():
    fx = Fixture()
    statement = fx.ssn.statement()
    task = fx.task("p1")
    idle = fx.idle_cpu()
    statement.allocate(task, fx.node)
    statement.discard()
    assert task.status is TaskStatus.PENDING
    assert task.node_name == ""
    assert fx.idle_cpu() == idle
    assert "ns1/p1" not in fx.node.tasks


def test_discard_reverses_evict():
    """Upstream allocates, marks Running, then evicts; here the running task comes from the
    cache. Discard restores Running (on the copy the statement made)."""
    fx = Fixture()
    statement = fx.ssn.statement()
    victim = statement.evict(fx.task("r1"), "test-reclaim")
    assert victim.status is TaskStatus.RELEASING
    statement.discard()
    assert victim.status is TaskStatus.RUNNING
    assert fx.status("r1") is TaskStatus.RUNNING
    assert fx.node.releasing.milli_cpu == 0
    assert fx.running_job.tasks_in(TaskStatus.RELEASING) == {}


def test_discard_undoes_in_reverse_order_and_remembers_the_transaction():
    log = EventLog()
    fx = Fixture([log.handler()])
    idle = fx.idle_cpu()
    statement = fx.ssn.statement()
    p1, p2 = fx.task("p1"), fx.task("p2")
    statement.allocate(p1, fx.node)
    statement.pipeline(p2, "n1", True)
    victim = statement.evict(fx.task("r1"), "preempt")
    log.events.clear()
    statement.discard()
    assert log.events == [
        ("allocate", "r1", TaskStatus.RUNNING),
        ("deallocate", "p2", TaskStatus.PENDING),
        ("deallocate", "p1", TaskStatus.PENDING),
    ]
    assert p1.last_transaction is not None
    assert (p1.last_transaction.status, p1.last_transaction.node_name) == (
        TaskStatus.ALLOCATED,
        "n1",
    )
    assert p2.last_transaction is not None
    assert p2.last_transaction.status is TaskStatus.PIPELINED
    assert p2.last_transaction.eviction_occurred is True
    assert victim.last_transaction is not None
    assert victim.last_transaction.status is TaskStatus.RELEASING
    assert fx.idle_cpu() == idle
    assert fx.node.pipelined.milli_cpu == 0 and fx.node.releasing.milli_cpu == 0


# ---------------------------------------------------------------------------- commit


def test_commit_sends_evictions_and_binds_in_order_and_keeps_pipelines_in_session():
    fx = Fixture()
    statement = fx.ssn.statement()
    p1, p2 = fx.task("p1"), fx.task("p2")
    victim = statement.evict(fx.task("r1"), "preempt")
    statement.allocate(p1, fx.node)
    statement.pipeline(p2, "n1", True)
    p1.remember_transaction()
    statement.commit()
    assert fx.sink.calls == [("evict", "ns1/r1"), ("bind", "ns1/p1")]
    assert fx.sink.evictions == [("ns1/r1", "preempt")]
    assert p1.status is TaskStatus.BINDING
    assert p1.last_transaction is None
    assert p2.status is TaskStatus.PIPELINED
    assert victim.status is TaskStatus.RELEASING
    assert statement.operations == []


def test_commit_failed_eviction_is_unevicted():
    fx = Fixture()
    fx.sink.fail_evict.add("ns1/r1")
    statement = fx.ssn.statement()
    victim = statement.evict(fx.task("r1"), "reclaim")
    statement.commit()
    assert victim.status is TaskStatus.RUNNING
    assert fx.node.releasing.milli_cpu == 0
    assert statement.operations == []


def test_commit_failed_bind_is_unallocated():
    log = EventLog()
    fx = Fixture([log.handler()])
    fx.sink.fail_bind.add("ns1/p1")
    idle = fx.idle_cpu()
    statement = fx.ssn.statement()
    p1, p2 = fx.task("p1"), fx.task("p2")
    statement.allocate(p1, fx.node)
    statement.allocate(p2, fx.node)
    statement.commit()
    assert p1.status is TaskStatus.PENDING and p1.node_name == ""
    assert p2.status is TaskStatus.BINDING
    assert fx.sink.binds == ["ns1/p2"]
    assert fx.idle_cpu() == idle - 1000
    assert ("deallocate", "p1", TaskStatus.PENDING) in log.events


# ---------------------------------------------------------------------------- save / recover


def test_recover_operations_pipeline_preserves_eviction_flag_upstream():
    """``TestRecoverOperations_PipelinePreservesEvictionFlag``."""
    fx = Fixture()
    source = fx.ssn.statement()
    task = fx.task("p1")
    source.pipeline(task, "n1", True)
    plan = source.save_operations()
    source.discard()
    assert task.status is TaskStatus.PENDING
    recovered = fx.ssn.statement()
    recovered.recover_operations(plan)
    again = fx.job.tasks_in(TaskStatus.PIPELINED)[task.uid]
    assert again.eviction_occurred is True
    assert again.node_name == "n1"


def test_save_discard_recover_replays_every_operation():
    fx = Fixture()
    statement = fx.ssn.statement()
    statement.evict(fx.task("r1"), "preempt")
    statement.allocate(fx.task("p1"), fx.node)
    statement.pipeline(fx.task("p2"), "n1", False)
    before = (fx.node.idle, fx.node.releasing, fx.node.pipelined)
    plan = statement.save_operations()
    assert [o.op for o in plan] == [Op.EVICT, Op.ALLOCATE, Op.PIPELINE]
    assert all(
        saved.task is not live.task for saved, live in zip(plan, statement.operations, strict=True)
    )
    statement.discard()
    assert fx.node.releasing.milli_cpu == 0 and fx.node.pipelined.milli_cpu == 0
    replay = fx.ssn.statement()
    replay.recover_operations(plan)
    assert [(o.op, o.task.name, o.reason) for o in replay.operations] == [
        (Op.EVICT, "r1", "preempt"),
        (Op.ALLOCATE, "p1", ""),
        (Op.PIPELINE, "p2", ""),
    ]
    assert (fx.node.idle, fx.node.releasing, fx.node.pipelined) == before
    assert fx.status("r1") is TaskStatus.RELEASING
    assert fx.status("p1") is TaskStatus.ALLOCATED
    assert fx.status("p2") is TaskStatus.PIPELINED


def test_saved_operations_are_independent_copies():
    fx = Fixture()
    statement = fx.ssn.statement()
    statement.allocate(fx.task("p1"), fx.node)
    plan = statement.save_operations()
    plan[0].task.node_name = "elsewhere"
    assert fx.task("p1").node_name == "n1"
    assert len(statement.operations) == 1


# ---------------------------------------------------------------------------- session-level


def test_session_allocate_binds_only_once_the_job_is_ready():
    gang = plugin("gang", "enableJobReady", job_ready=lambda job: job.ready_task_num() >= 2)
    fx = Fixture(tiers=[[gang]])
    p1, p2 = fx.task("p1"), fx.task("p2")
    fx.ssn.allocate(p1, fx.node)
    assert p1.status is TaskStatus.ALLOCATED
    assert fx.sink.binds == []
    fx.ssn.allocate(p2, fx.node)
    assert sorted(fx.sink.binds) == ["ns1/p1", "ns1/p2"]
    assert p1.status is TaskStatus.BINDING and p2.status is TaskStatus.BINDING


def test_session_evict_is_immediate():
    fx = Fixture()
    fx.ssn.evict(fx.task("r1"), "shuffle")
    assert fx.sink.evictions == [("ns1/r1", "shuffle")]
    assert fx.status("r1") is TaskStatus.RELEASING
