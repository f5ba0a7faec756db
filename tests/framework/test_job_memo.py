"""What sessions keep per job change (``JobInfo.memo``, issue 14: a quiet job cost ~35 us of
CPU in every session) gives what working it out again gives.

The shortcuts, each with its reference switch in ``bench.outputs.REFERENCE_SWITCHES``:

* ``session._QUIET_CLOSE``: a job's phase and counts at close kept under (tasks version,
  this session's Unschedulable mark, minMember, the phase the session left), the PodGroup
  status compared field by field, the status story skipped when it tells nothing;
* ``drf._KEEP_SHARES``: a job's share at open kept under (tasks version, cluster total);
* ``_plugin_helpers._SHARED_USAGE``: a job's elastic resources kept under (tasks version,
  minResources object), its kept sums handed out uncopied;
* ``metrics.scheduler._SKIP_EQUAL_SETS``: a per-job gauge series not set to what it holds.

Each case below changes a job between sessions in one way a memo key must catch (a task
added, removed or moving, the PodGroup's status, conditions, minMember, minResources or
queue by a watch update, the cluster total by a node) and runs the same sessions with the
shortcuts on and with every one off: every bind, status write, pod condition and event, the
PodGroups the cache ends with and the jobs' gauge series must be the same.
"""

from __future__ import annotations

import copy
import importlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from bench import objects
from bench.outputs import REFERENCE_SWITCHES, CallLog
from bench.side_by_side import CONF
from volcano_py import metrics
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework import session as session_module
from volcano_py.framework.conf import SchedulerConf, parse_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z

Change = Callable[[SchedulerCache], None]
BIG = {"cpu": "100"}


def _pod_group(name: str, min_member: int, phase: str, **spec: Any) -> dict[str, Any]:
    obj = objects.pod_group(name, min_member, phase)
    obj["spec"].update(spec)
    return obj


def _cluster(cache: SchedulerCache) -> None:
    for name in ("default", "other"):
        cache.apply_event("Queue", "ADDED", objects.queue(name))
    for index in range(3):
        cache.apply_event("Node", "ADDED", objects.node(f"node-{index}", "4", "16Gi"))
    # Running singles, a running gang of two, a gang waiting for room, an empty group.
    for index in range(3):
        name = f"single-{index}"
        cache.apply_event("PodGroup", "ADDED", objects.pod_group(name, 1, "Running"))
        cache.apply_event("Pod", "ADDED", objects.pod(f"{name}-0", name, "1", f"node-{index}"))
    cache.apply_event("PodGroup", "ADDED", objects.pod_group("gang", 2, "Running"))
    for index in range(2):
        cache.apply_event("Pod", "ADDED", objects.pod(f"gang-{index}", "gang", "1", "node-0"))
    # Admitted, but never fits (nor would be admitted again: its minResources are too large).
    cache.apply_event("PodGroup", "ADDED", _pod_group("big", 2, "Inqueue", minResources=BIG))
    for index in range(2):
        cache.apply_event("Pod", "ADDED", objects.pod(f"big-{index}", "big", "5"))
    cache.apply_event("PodGroup", "ADDED", objects.pod_group("empty", 1, "Pending"))


def _pod_group_update(name: str, **status: Any) -> Change:
    def change(cache: SchedulerCache) -> None:
        job = cache.jobs[f"{objects.NAMESPACE}/{name}"]
        assert job.pod_group is not None
        obj = copy.deepcopy(dict(job.pod_group.raw))
        obj["status"] = {**job.pod_group.status_dict(), **status}
        cache.apply_event("PodGroup", "MODIFIED", obj)

    return change


def _spec_update(name: str, min_member: int, phase: str, **spec: Any) -> Change:
    def change(cache: SchedulerCache) -> None:
        cache.apply_event("PodGroup", "MODIFIED", _pod_group(name, min_member, phase, **spec))

    return change


def _pod_event(event: str, obj: dict[str, Any]) -> Change:
    return lambda cache: cache.apply_event("Pod", event, obj)


def _finished(name: str, group: str, node: str, phase: str) -> dict[str, Any]:
    obj = objects.pod(name, group, "1", node)
    obj["status"]["phase"] = phase
    return obj


CHANGES: dict[str, Change] = {
    "nothing": lambda cache: None,
    "task added": _pod_event("ADDED", objects.pod("single-0-1", "single-0", "1")),
    "task removed": _pod_event("DELETED", objects.pod("gang-1", "gang", "1", "node-0")),
    "task succeeded": _pod_event(
        "MODIFIED", _finished("single-1-0", "single-1", "node-1", "Succeeded")
    ),
    "task failed": _pod_event("MODIFIED", _finished("gang-0", "gang", "node-0", "Failed")),
    "phase by a watch": _pod_group_update("single-2", phase="Pending"),
    "phase of a waiting group by a watch": _pod_group_update("big", phase="Pending"),
    "conditions by a watch": _pod_group_update(
        "single-0",
        conditions=[
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": "someone-else",
                "lastTransitionTime": "2025-12-31T00:00:00Z",
                "reason": "NotEnoughResources",
                "message": "written by another scheduler",
            }
        ],
    ),
    # The session uids of ``SchedulingState()`` are "session-<n>": the change comes before
    # the third session, which therefore finds the condition its own.
    "this session's Unschedulable condition by a watch": _pod_group_update(
        "single-0",
        conditions=[
            {
                "type": "Unschedulable",
                "status": "True",
                "transitionID": "session-3",
                "reason": "NotEnoughResources",
                "message": "",
            }
        ],
    ),
    "counts by a watch": _pod_group_update("gang", running=7, failed=1),
    "minMember up": _spec_update("single-1", 2, "Running"),
    "minMember down": _spec_update("big", 1, "Inqueue", minResources=BIG),
    "minMember of a group without pods": _spec_update("empty", 0, "Pending"),
    "phase of a group without pods by a watch": _pod_group_update("empty", phase="Inqueue"),
    "minResources": _spec_update("gang", 2, "Running", minResources={"cpu": "1", "memory": "1Gi"}),
    "queue": _spec_update("single-2", 1, "Running", queue="other"),
    "node added": lambda cache: cache.apply_event(
        "Node", "ADDED", objects.node("node-9", "8", "32Gi")
    ),
    "node gone": lambda cache: cache.apply_event(
        "Node", "DELETED", objects.node("node-2", "4", "16Gi")
    ),
}


def _series(gauge: Any) -> list[tuple[tuple[str, ...], float]]:
    return sorted((labels, child._value.get()) for labels, child in gauge._metrics.items())


def _logged_cluster() -> tuple[CallLog, SchedulerCache, SchedulerConf, SchedulingState]:
    """The test cluster in a cache whose every output goes to one ``CallLog``, the conf and a
    state, all on the fixed clock."""
    log = CallLog()
    cache = SchedulerCache(
        binder=log, evictor=log, status_updater=log, recorder=log, clock=lambda: NOW
    )
    _cluster(cache)
    return log, cache, parse_conf(CONF, BUILTIN_ACTIONS), SchedulingState(clock=lambda: NOW)


def _session(cache: SchedulerCache, conf: SchedulerConf, state: SchedulingState) -> None:
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    for name in conf.actions:
        new_action(name).execute(ssn)
    close_session(ssn)


def _run(change: Change, shortcuts: bool) -> str:
    """Two sessions, ``change``, three sessions (the last two quiet): everything handed out."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        if not shortcuts:
            for module, flag, value in REFERENCE_SWITCHES:
                monkeypatch.setattr(importlib.import_module(module), flag, value)
        metrics.JOB_SHARE.clear()
        metrics.UNSCHEDULE_TASK_COUNT.clear()
        log, cache, conf, state = _logged_cluster()
        for round_ in range(5):
            if round_ == 2:
                change(cache)
            _session(cache, conf, state)
            cache.forget_series_of_jobs_gone_during_session()
            log.calls.append(["round", round_])
        groups = {
            uid: job.pod_group.status_dict()
            for uid, job in sorted(cache.jobs.items())
            if job.pod_group is not None
        }
        gauges = [_series(metrics.JOB_SHARE), _series(metrics.UNSCHEDULE_TASK_COUNT)]
        return json.dumps([log.calls, groups, gauges], default=str, indent=1)


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_change_between_sessions_hands_out_what_the_reference_does(change: str) -> None:
    assert _run(CHANGES[change], shortcuts=True) == _run(CHANGES[change], shortcuts=False)


def test_a_quiet_job_is_not_worked_out_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo is used: after the sessions that settle it, a quiet cluster's close asks
    ``pod_group_phase`` of no job (with the reference switch, of every job)."""
    asked: list[str] = []
    phase = session_module.pod_group_phase

    def counting(job: Any, unschedulable: bool) -> str:
        asked.append(job.uid)
        return phase(job, unschedulable)

    monkeypatch.setattr(session_module, "pod_group_phase", counting)
    for quiet in (True, False):
        monkeypatch.setattr(session_module, "_QUIET_CLOSE", quiet)
        _log, cache, conf, state = _logged_cluster()
        for _ in range(3):
            asked.clear()
            _session(cache, conf, state)
        if quiet:
            assert asked == []
        else:
            assert len(asked) == len(cache.jobs)


def test_equal_gauge_sets_keep_the_exposition(monkeypatch: pytest.MonkeyPatch) -> None:
    """A series set to the value it holds is left alone; a zero of the other sign and NaN
    are set (they print differently, or never compare equal)."""
    from volcano_py.metrics import scheduler

    rendered = []
    for skip in (True, False):
        monkeypatch.setattr(scheduler, "_SKIP_EQUAL_SETS", skip)
        metrics.UNSCHEDULE_TASK_COUNT.clear()
        for value in (0.0, 0.0, -0.0, -0.0, 3.0, 3.0, float("nan"), float("nan"), 0.0):
            scheduler._set(scheduler._series(metrics.UNSCHEDULE_TASK_COUNT, "job"), value)
            rendered.append((skip, repr(metrics.UNSCHEDULE_TASK_COUNT.labels("job")._value.get())))
    skipping = [text for skip, text in rendered if skip]
    assert skipping == [text for skip, text in rendered if not skip]


def test_job_usage_follows_the_tasks_and_min_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    """``job_usage``'s kept elastic part and sums against fresh ones, as the job's tasks and
    its PodGroup's minResources change (a watch update brings a new minResources object)."""
    from volcano_py.api.task import TaskInfo
    from volcano_py.plugins import _plugin_helpers as helpers

    cache = SchedulerCache(clock=lambda: NOW)
    _cluster(cache)
    job = cache.jobs[f"{objects.NAMESPACE}/gang"]

    def usage() -> list[str]:
        kept = helpers.job_usage(job.snapshot_copy())
        monkeypatch.setattr(helpers, "_SHARED_USAGE", False)
        fresh = helpers.job_usage(job.snapshot_copy())
        monkeypatch.setattr(helpers, "_SHARED_USAGE", True)
        assert [repr(r) for r in (kept.allocated, kept.request, kept.inqueue, kept.elastic)] == [
            repr(r) for r in (fresh.allocated, fresh.request, fresh.inqueue, fresh.elastic)
        ]
        return [repr(kept.elastic), repr(kept.allocated)]

    seen = [usage(), usage()]
    for minimum in ({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}, {"cpu": "3"}):
        obj = _pod_group("gang", 2, "Running", minResources=minimum)
        cache.apply_event("PodGroup", "MODIFIED", obj)
        seen.append(usage())
    task = TaskInfo.from_pod(objects.pod("gang-2", "gang", "2", "node-1"))
    job.add_task(task)
    seen.append(usage())
    job.delete_task(task)
    seen.append(usage())
    assert seen[0] != seen[2] != seen[4] != seen[5]


# The session's fixed-cost shortcuts of issue 14's "Session" round (snapshot, open, close),
# each switched off alone: every change between sessions hands out what all on do.
SESSION_FIXED_COST_SWITCHES = [
    ("volcano_py.api.job", "_FLAT_SNAPSHOT_COPY"),
    ("volcano_py.api.job", "_ONE_PASS_SUMS"),
    ("volcano_py.framework.session", "_TOPOLOGY_SCAN_IN_C"),
    ("volcano_py.framework.session", "_BLANKED_FACTS"),
    ("volcano_py.framework.session", "_FLAT_CLOSE_FACTS"),
    ("volcano_py.plugins.drf", "_RECORD_MOVED_SHARES"),
    ("volcano_py.plugins.drf", "_SKIP_HELD_SHARES"),
    ("volcano_py.plugins.drf", "_FLAT_SHARE_MEMO"),
    ("volcano_py.plugins.gang", "_SKIP_HELD_COUNTS"),
    ("volcano_py.plugins._plugin_helpers", "_KEEP_USAGE"),
    ("volcano_py.plugins._plugin_helpers", "_FLAT_USAGE"),
    ("volcano_py.plugins.proportion", "_ONE_PASS_TOTALS"),
    ("volcano_py.metrics.scheduler", "_FUSED_SETS"),
]


def test_every_fixed_cost_switch_is_listed_for_the_reference() -> None:
    listed = {(module, flag) for module, flag, _ in REFERENCE_SWITCHES}
    assert set(SESSION_FIXED_COST_SWITCHES) <= listed


_ALL_ON: dict[str, str] = {}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
@pytest.mark.parametrize(
    "switch", SESSION_FIXED_COST_SWITCHES, ids=[flag for _, flag in SESSION_FIXED_COST_SWITCHES]
)
def test_each_fixed_cost_switch_alone_hands_out_the_same(
    switch: tuple[str, str], change: str
) -> None:
    if change not in _ALL_ON:
        _ALL_ON[change] = _run(CHANGES[change], shortcuts=True)
    module, flag = switch
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(importlib.import_module(module), flag, False)
        assert _run(CHANGES[change], shortcuts=True) == _ALL_ON[change]


def _rounds_with(between: Callable[[SchedulerCache], None], shortcuts: bool) -> str:
    """Four sessions of one scheduler (one ``SchedulingState``), ``between`` done to the cache
    and the metrics after the second: what the jobs' gauges hold after each."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        if not shortcuts:
            for module, flag, value in REFERENCE_SWITCHES:
                monkeypatch.setattr(importlib.import_module(module), flag, value)
        monkeypatch.setattr(metrics.RECORDING, "on", True)  # whatever ``between`` does
        metrics.JOB_SHARE.clear()
        metrics.UNSCHEDULE_TASK_COUNT.clear()
        _log, cache, conf, state = _logged_cluster()
        seen = []
        for round_ in range(4):
            if round_ == 2:
                between(cache)
            _session(cache, conf, state)
            cache.forget_series_of_jobs_gone_during_session()
            seen.append([_series(metrics.JOB_SHARE), _series(metrics.UNSCHEDULE_TASK_COUNT)])
        return json.dumps(seen, default=str)


def _series_cleared(cache: SchedulerCache) -> None:
    metrics.JOB_SHARE.clear()
    metrics.UNSCHEDULE_TASK_COUNT.clear()


def _other_scheduler_sets(cache: SchedulerCache) -> None:
    # Another scheduler in the process sets the same jobs' series.
    metrics.job_share(objects.NAMESPACE, "single-0", 0.25)
    metrics.unschedulable_tasks("single-0", 3)


SERIES_CHANGES: dict[str, Callable[[SchedulerCache], None]] = {
    "nothing": lambda cache: None,
    "series cleared": _series_cleared,
    "another scheduler's sets": _other_scheduler_sets,
    "a job's series forgotten": lambda cache: metrics.forget_job(
        "single-1", "default", objects.NAMESPACE
    ),
    "a job deleted": _pod_event("DELETED", objects.pod("gang-1", "gang", "1", "node-0")),
    "recording off": lambda cache: setattr(metrics.RECORDING, "on", False),
}


@pytest.mark.parametrize("between", list(SERIES_CHANGES), ids=list(SERIES_CHANGES))
def test_held_shares_and_counts_follow_the_series(between: str) -> None:
    """drf's and gang's knowledge of what the per-job series hold (``_SKIP_HELD_SHARES``,
    ``_SKIP_HELD_COUNTS``) lapses whenever a series may have changed: after each session
    the gauges hold what setting every one would have left."""
    assert _rounds_with(SERIES_CHANGES[between], shortcuts=True) == _rounds_with(
        SERIES_CHANGES[between], shortcuts=False
    )


def test_held_shares_skip_the_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a first session, a quiet one sets no job's share or count again."""
    calls: list[str] = []
    share, count = metrics.job_share, metrics.unschedulable_tasks
    monkeypatch.setattr(metrics, "job_share", lambda *a: (calls.append("share"), share(*a))[1])
    monkeypatch.setattr(
        metrics, "unschedulable_tasks", lambda *a: (calls.append("count"), count(*a))[1]
    )
    _log, cache, conf, state = _logged_cluster()
    for _ in range(3):
        calls.clear()
        _session(cache, conf, state)
    assert calls == []


def test_fused_sets_keep_the_exposition(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_set_series`` (``_FUSED_SETS``) leaves the series as ``_set(_series(...))`` does: a
    series made on first use, equal values skipped, zeros of either sign and NaN set."""
    from volcano_py.metrics import scheduler

    rendered = []
    for fused in (True, False):
        monkeypatch.setattr(scheduler, "_FUSED_SETS", fused)
        metrics.JOB_SHARE.clear()
        for value in (0.0, 0.0, -0.0, -0.0, 3.0, 3.0, float("nan"), float("nan"), 0.0):
            scheduler._set_series(metrics.JOB_SHARE, ("ns", "job"), value)
            rendered.append((fused, repr(metrics.JOB_SHARE.labels("ns", "job")._value.get())))
    fused_texts = [text for fused, text in rendered if fused]
    assert fused_texts == [text for fused, text in rendered if not fused]
