"""tdm: time-division multiplexing of revocable nodes (``pkg/scheduler/plugins/tdm/tdm.go``).

A node labelled ``volcano.sh/revocable-zone=<zone>`` is lent to preemptable work during its
zone's daily time window, given as ``tdm.revocable-zone.<zone>: "HH:MM-HH:MM"`` (local time of
the scheduler process, as upstream; an end at or before the start ends the next day). Only
tasks with a revocable zone (``volcano.sh/revocable-zone: "*"`` or ``volcano.sh/preemptable:
"true"`` on the pod) may use it, and only while the window is open.

* Predicate (vectorised as a node mask): a revocable node is UnschedulableAndUnresolvable
  outside its window, for a zone with no window, and for a task without a revocable zone.
* NodeOrder (batch): 100 for an open revocable node and a task that may use it, else 0.
* Preemptable: a preemptable or revocable-zone preemptor may not preempt (Reject; note that a
  pod is preemptable unless annotated or labelled ``volcano.sh/preemptable: "false"``); otherwise
  the victims are the preemptable Running tasks on ordinary nodes, at most the job's disruption
  budget per job (``volcano.sh/jdb-min-available`` / ``volcano.sh/jdb-max-unavailable`` on the
  PodGroup, an integer or a percentage; default 1).
* VictimTasks (shuffle): once a zone's window has closed, the preemptable Running tasks on its
  nodes, per job within the budget; at most one round per ``tdm.evict.period`` (Go duration,
  default ``1m``), remembered across sessions.
* JobOrder: non-preemptable jobs first. JobPipelined: Permit if the job is pipelined, else
  Reject. JobStarving: a non-preemptable job with pending tasks.

Divergence: upstream only looks at today's window, so a window across midnight
("22:00-06:00") is closed from midnight to its end; here it stays open until 06:00.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

import numpy as np

from volcano_py.api.job import JobInfo, parse_go_duration
from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, TaskStatus, Vote, unresolvable
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import NodeMask
from volcano_py.framework.session import Session

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "tdm"
REVOCABLE_ZONE_PREFIX: Final = "tdm.revocable-zone."
EVICT_PERIOD: Final = "tdm.evict.period"
DEFAULT_EVICT_PERIOD: Final = 60.0
DEFAULT_POD_EVICT_NUM: Final = 1
MAX_NODE_SCORE: Final = 100.0
JDB_MIN_AVAILABLE: Final = "volcano.sh/jdb-min-available"
JDB_MAX_UNAVAILABLE: Final = "volcano.sh/jdb-max-unavailable"
NOT_ALLOWED: Final = "not allow to dispatch to revocable node"

ARGUMENTS: Final[frozenset[str]] = frozenset({REVOCABLE_ZONE_PREFIX + "*", EVICT_PERIOD})

_CLOCK = re.compile(r"(\d{1,2}):(\d{2})")


# ---------------------------------------------------------------------- time windows


def _clock_time(text: str, raw: str) -> tuple[int, int]:
    """Go's ``time.Parse("15:04", text)``: a 1-2 digit hour 0-23, a 2 digit minute 0-59."""
    match = _CLOCK.fullmatch(text)
    if match is None or int(match[1]) > 23 or int(match[2]) > 59:
        raise ValueError(f"revocable zone {raw} format error: {text!r} is not HH:MM")
    return int(match[1]), int(match[2])


def parse_revocable_zone(raw: str, now: datetime) -> tuple[datetime, datetime]:
    """``parseRevocableZone``: today's window of ``"HH:MM-HH:MM"`` around ``now`` (naive local
    time); an end at or before the start is on the next day. Raises ValueError."""
    parts = raw.strip().split("-")
    if len(parts) != 2:
        raise ValueError(f"revocable zone {raw} format error")
    start_hour, start_minute = _clock_time(parts[0], raw)
    end_hour, end_minute = _clock_time(parts[1], raw)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    start = midnight.replace(hour=start_hour, minute=start_minute)
    end = midnight.replace(hour=end_hour, minute=end_minute)
    if (start_hour, start_minute) >= (end_hour, end_minute):
        end += timedelta(days=1)
    return start, end


def window_closed_reason(zone: str, windows: Mapping[str, str], now: float) -> str | None:
    """``availableRevocableZone``: why ``zone`` is not usable at ``now`` (Unix seconds), or
    None while its window is open. Compared in whole seconds, both ends included."""
    raw = windows.get(zone)
    if raw is None:
        return f"revocable zone {zone} not support"
    local_now = datetime.fromtimestamp(now)
    try:
        start, end = parse_revocable_zone(raw, local_now)
    except ValueError as error:
        return str(error)
    second = int(now)
    if int(start.timestamp()) <= second <= int(end.timestamp()):
        return None
    # Yesterday's window may still be open (it crosses midnight): see the module note.
    if end.date() > start.date() and second <= int((end - timedelta(days=1)).timestamp()):
        return None
    return f"current time beyond revocable zone {zone}:{raw}"


# ---------------------------------------------------------------------- disruption budget


def _int_or_string(value: str, total: int) -> int:
    """``parseIntStr``: an integer, or a percentage of ``total`` rounded up; else 0."""
    if re.fullmatch(r"[+-]?\d+", value):
        return int(value)
    if value.endswith("%") and re.fullmatch(r"[+-]?\d+", value[:-1]):
        return math.ceil(int(value[:-1]) * total / 100)
    log.warning("tdm: disruption budget %r is neither an integer nor a percentage", value)
    return 0


def max_pod_evict_num(job: JobInfo) -> int:
    """``getMaxPodEvictNum``: how many more of the job's pods may go, by its budget."""
    annotations = job.pod_group.annotations if job.pod_group is not None else {}
    running = len(job.tasks_in(TaskStatus.RUNNING))
    total = len(job.tasks)
    # The PodGroup's budget: min-available wins when both are set (``extractBudget``).
    if JDB_MIN_AVAILABLE not in annotations and JDB_MAX_UNAVAILABLE in annotations:
        max_unavailable = _int_or_string(annotations[JDB_MAX_UNAVAILABLE], total)
        finished = len(job.tasks_in(TaskStatus.SUCCEEDED)) + len(job.tasks_in(TaskStatus.FAILED))
        unavailable = total - finished - running
        return 0 if unavailable >= max_unavailable else max_unavailable - unavailable
    if JDB_MIN_AVAILABLE in annotations:
        min_available = _int_or_string(annotations[JDB_MIN_AVAILABLE], total)
        if running >= min_available:
            return running - min_available
    return DEFAULT_POD_EVICT_NUM


def max_victims(job: JobInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
    return candidates[: max(0, min(max_pod_evict_num(job), len(candidates)))]


def budgeted_victims(ssn: Session, by_job: Mapping[str, list[TaskInfo]]) -> list[TaskInfo]:
    victims: list[TaskInfo] = []
    for job_id, tasks in by_job.items():
        job = ssn.jobs.get(job_id)
        if job is not None:
            victims.extend(max_victims(job, tasks))
    return victims


# ---------------------------------------------------------------------- arguments


def revocable_zones(arguments: Arguments) -> dict[str, str]:
    """``tdm.revocable-zone.<zone>: "HH:MM-HH:MM"`` arguments as zone -> window."""
    zones: dict[str, str] = {}
    for key, value in arguments.items():
        if not key.startswith(REVOCABLE_ZONE_PREFIX):
            continue
        zone = key[len(REVOCABLE_ZONE_PREFIX) :]
        if not isinstance(value, str):
            log.error(
                'tdm: argument %s must be a string "HH:MM-HH:MM", got %r; zone %s has no window',
                key,
                value,
                zone,
            )
            continue
        zones[zone] = value
    return zones


def evict_period(arguments: Arguments) -> float:
    if EVICT_PERIOD not in arguments:
        return DEFAULT_EVICT_PERIOD
    raw = arguments[EVICT_PERIOD]
    seconds = parse_go_duration(raw) if isinstance(raw, str) else None
    if seconds is None:
        log.error("tdm: argument %s=%r is not a Go duration; using 1m", EVICT_PERIOD, raw)
        return DEFAULT_EVICT_PERIOD
    return seconds


# ---------------------------------------------------------------------- per-session view


@dataclass(frozen=True, slots=True)
class RevocableNodes:
    """The session's nodes as tdm sees them: which are revocable and which of those are open
    now, one boolean per row, and why each closed zone is closed."""

    zones: list[str]
    revocable: BoolArray
    open_now: BoolArray
    closed_reasons: dict[str, str]

    @classmethod
    def of(cls, ssn: Session, windows: Mapping[str, str]) -> RevocableNodes:
        # One label read per node per session; everything per task is array work.
        zones = [node.revocable_zone for node in ssn.node_list]
        closed: dict[str, str] = {}
        for zone in set(zones) - {""}:
            reason = window_closed_reason(zone, windows, ssn.now)
            if reason is not None:
                closed[zone] = reason
        revocable = np.array([zone != "" for zone in zones], dtype=np.bool_)
        open_now = np.array([zone != "" and zone not in closed for zone in zones], np.bool_)
        return cls(zones, revocable, open_now, closed)


class TdmPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.windows = revocable_zones(arguments)
        self.evict_period = evict_period(arguments)

    @staticmethod
    def job_order_key(job: JobInfo) -> bool:
        """``job_order`` as a sort key: non-preemptable jobs (False) first. The flag is the
        PodGroup's, fixed for the session."""
        return job.preemptable

    def on_session_open(self, ssn: Session) -> None:
        nodes = RevocableNodes.of(ssn, self.windows)
        any_revocable = bool(nodes.revocable.any())
        plain_mask = NodeMask(~nodes.revocable, lambda row: self._reason(nodes, row))
        revocable_mask = NodeMask(
            ~nodes.revocable | nodes.open_now, lambda row: self._reason(nodes, row)
        )
        open_scores: FloatArray = np.where(nodes.open_now, MAX_NODE_SCORE, 0.0)

        def predicate_mask(task: TaskInfo) -> NodeMask | None:
            if not any_revocable:
                return None
            return revocable_mask if task.revocable_zone else plain_mask

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            if not task.revocable_zone or not any_revocable:
                return np.zeros(len(rows))
            scores: FloatArray = open_scores[rows]
            return scores

        def preemptable(
            preemptor: TaskInfo, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            # Work that may itself be preempted, or may use revocable nodes, preempts nobody.
            if preemptor.preemptable or preemptor.revocable_zone:
                return [], Vote.REJECT
            by_job: dict[str, list[TaskInfo]] = {}
            for task in candidates:
                if not task.preemptable or task.status is not TaskStatus.RUNNING:
                    continue
                node = ssn.nodes.get(task.node_name)
                if node is None or node.revocable_zone:
                    continue
                by_job.setdefault(task.job, []).append(task)
            return budgeted_victims(ssn, by_job), Vote.PERMIT

        def victim_tasks(_tasks: list[TaskInfo]) -> list[TaskInfo]:
            last = ssn.state.plugin_memory.get(self.name)
            if last is not None and last + self.evict_period > ssn.now:
                return []
            victims: list[TaskInfo] = []
            rows_of_zone: dict[str, list[int]] = {}
            for row in np.flatnonzero(nodes.revocable).tolist():
                rows_of_zone.setdefault(nodes.zones[row], []).append(row)
            for zone in self.windows:
                if window_closed_reason(zone, self.windows, ssn.now) is None:
                    continue
                by_job: dict[str, list[TaskInfo]] = {}
                for row in rows_of_zone.get(zone, []):
                    for task in ssn.node_list[row].tasks.values():
                        if task.preemptable and task.status is TaskStatus.RUNNING:
                            by_job.setdefault(task.job, []).append(task)
                victims.extend(budgeted_victims(ssn, by_job))
            ssn.state.plugin_memory[self.name] = ssn.now
            return victims

        ssn.add_predicate_mask_fn(self.name, predicate_mask)
        ssn.add_batch_node_order_fn(self.name, batch_node_order)
        ssn.add_preemptable_fn(self.name, preemptable)
        ssn.add_victim_tasks_fn(self.name, victim_tasks)
        ssn.add_job_order_fn(self.name, job_order)
        ssn.add_job_pipelined_fn(self.name, job_pipelined)
        ssn.add_job_starving_fn(self.name, job_starving)

    def _reason(self, nodes: RevocableNodes, row: int) -> Status:
        zone = nodes.zones[row]
        closed = nodes.closed_reasons.get(zone)
        return unresolvable(closed if closed is not None else NOT_ALLOWED, PLUGIN_NAME)

    def on_session_close(self, ssn: Session) -> None:
        return None


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Non-preemptable jobs first."""
    if left.preemptable == right.preemptable:
        return 0
    return 1 if left.preemptable else -1


def job_pipelined(job: JobInfo) -> Vote:
    return Vote.PERMIT if job.is_pipelined() else Vote.REJECT


def job_starving(job: JobInfo) -> bool:
    """A non-preemptable (elastic) job with pending tasks may preempt."""
    if job.preemptable:
        return False
    return bool(job.tasks_in(TaskStatus.PENDING))


def new(arguments: Arguments) -> TdmPlugin:
    return TdmPlugin(arguments)
