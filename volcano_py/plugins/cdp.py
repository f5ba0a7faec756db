"""cdp: cooldown protection for preemptable pods (``pkg/scheduler/plugins/cdp/cdp.go``).

Elastic jobs' pods may be preempted and come back repeatedly; a pod that carries
``volcano.sh/cooldown-time`` (label, else annotation; a Go duration such as ``10m``) may not be
preempted or reclaimed until that long after it was scheduled: its ``PodScheduled`` condition's
``lastTransitionTime`` + cooldown, by the session clock. Only Running pods are protected; an
unparseable value protects nothing (and is reported).

Registers PreemptableFn and ReclaimableFn (the same filter); it takes no arguments.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.job import parse_go_duration
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import epoch_seconds

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "cdp"
COOLDOWN_TIME_KEY: Final = "volcano.sh/cooldown-time"

ARGUMENTS: Final[frozenset[str]] = frozenset()


def pod_cooldown_time(pod: Mapping[str, Any]) -> float | None:
    """``podCooldownTime``: the pod's cooldown in seconds, or None when it has none (or an
    unparseable one)."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    raw = labels.get(COOLDOWN_TIME_KEY, annotations.get(COOLDOWN_TIME_KEY))
    if raw is None:
        return None
    seconds = parse_go_duration(str(raw))
    if seconds is None:
        log.warning(
            "cdp: pod %s/%s: invalid time duration %s=%s",
            meta.get("namespace"),
            meta.get("name"),
            COOLDOWN_TIME_KEY,
            raw,
        )
    return seconds


def scheduled_at(pod: Mapping[str, Any]) -> float | None:
    """When the pod's ``PodScheduled`` condition turned True, or None if it has not."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                return None
            return epoch_seconds(str(condition.get("lastTransitionTime") or ""))
    return None


def in_cooldown(pod: Mapping[str, Any], now: float) -> bool:
    """Is this pod still protected at ``now``?"""
    cooldown = pod_cooldown_time(pod)
    if cooldown is None or (pod.get("status") or {}).get("phase") != "Running":
        return False
    since = scheduled_at(pod)
    return since is not None and since + cooldown > now


class CooldownProtectionPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        def filter_victims(
            evictor: TaskInfo, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            victims = [task for task in candidates if not in_cooldown(task.pod, ssn.now)]
            return victims, Vote.PERMIT

        ssn.add_preemptable_fn(self.name, filter_victims)
        ssn.add_reclaimable_fn(self.name, filter_victims)

    def on_session_close(self, ssn: Session) -> None:
        return None


def new(arguments: Arguments) -> CooldownProtectionPlugin:
    return CooldownProtectionPlugin(arguments)
