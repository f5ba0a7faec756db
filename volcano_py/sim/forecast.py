"""Start forecasts: when each PodGroup that was not running at the start first had minMember
pods running (``starts`` in the report), and what it waited for.

"Waited for" is kept simple and checkable: the jobs whose pods released resources (finished,
were deleted, evicted or reclaimed) on the nodes the group's pods were then bound to, since
the group was last blocked. A group is blocked in a cycle in which nothing of it moved: its
PodGroup's phase did not change, none of its pods was made or bound. The cycles from its
last blocked one to its bind are the steps it then took without stopping (admitted to its
queue, its pods made, bound); the releases in them on those nodes are what let it through.
A release it did not need then (a node that had room anyway) can be named; a release before
its last blocked cycle is not (it did not suffice alone: the group stayed blocked after it).

The tracker is fed by the simulated cluster's pod events (``on_pod``) and asked once per
cycle (``check``); it keeps per group only the pods that run, and per node the releases.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.types import GROUP_NAME_ANNOTATION
from volcano_py.controllers.ownership import job_of_pod
from volcano_py.controllers.raw import (
    controller_of,
    metadata,
    name,
    namespace,
    pod_phase,
    spec,
    text,
)
from volcano_py.controllers.vocabulary import PODGROUP_NAME_PREFIX

_FINISHED: Final = frozenset({"Succeeded", "Failed"})
_WAITING_PHASES: Final = frozenset({"", "Pending", "Inqueue"})


def shown_key(key: str, pod_group: Mapping[str, Any]) -> str:
    """A Volcano Job's PodGroup is shown under the job's name (``ns/job``), not under the
    generated ``<job>-<uid>`` name a person never typed."""
    meta = pod_group.get("metadata") or {}
    for owner in meta.get("ownerReferences") or []:
        if owner.get("kind") == "Job" and str(owner.get("apiVersion", "")).startswith(
            "batch.volcano.sh"
        ):
            return f"{meta.get('namespace') or 'default'}/{owner.get('name')}"
    return key


def _group_of(pod: Mapping[str, Any]) -> str | None:
    annotations = metadata(pod).get("annotations") or {}
    is_map = type(annotations) is dict or isinstance(annotations, Mapping)  # the ABC check is slow
    group = annotations.get(GROUP_NAME_ANNOTATION) if is_map else None
    return f"{namespace(pod) or 'default'}/{group}" if group else None


def workload_of(pod: Mapping[str, Any]) -> str:
    """What a person calls the pod's job: its Volcano Job, else its controller (ReplicaSet,
    batch Job...), else the PodGroup it names, else the pod itself (``ns/name``)."""
    pod_namespace = namespace(pod) or "default"
    job = job_of_pod(pod)
    if job is not None:
        return job
    owner = controller_of(pod)
    if owner is not None:
        return f"{pod_namespace}/{text(owner.get('name'))}"
    group = _group_of(pod)
    # A bare pod's own group (``podgroup-<uid>``, the podgroup controller's) names nothing a
    # person wrote: the pod's name does.
    if group is None or group.partition("/")[2].startswith(PODGROUP_NAME_PREFIX):
        return f"{pod_namespace}/{name(pod)}"
    return group


def _holds(pod: Mapping[str, Any] | None) -> str:
    """The node whose resources the pod holds ("" when none)."""
    if pod is None:
        return ""
    # Plain dicts read directly (asked twice per pod event); anything else through raw's.
    status, pod_spec = pod.get("status"), pod.get("spec")
    if type(status) is dict and type(pod_spec) is dict:
        phase, node = status.get("phase"), pod_spec.get("nodeName")
        if type(phase) is str and phase in _FINISHED:
            return ""
        return node if type(node) is str else ""
    if pod_phase(pod) in _FINISHED:
        return ""
    return text(spec(pod).get("nodeName"))


@dataclass
class Forecast:
    """What the report's ``starts`` and the table's forecast read."""

    now: float = 0.0
    # The time of the cycle run before the current one (the last chance a group missed).
    previous: float = 0.0
    loading: bool = True
    # Group key -> (shown key, time it first had minMember running); excluded groups apart.
    started: dict[str, tuple[str, float]] = field(default_factory=dict)
    waited_for: dict[str, list[str]] = field(default_factory=dict)
    running_at_start: set[str] = field(default_factory=set)
    _running: dict[str, set[str]] = field(default_factory=dict)
    _initially_running: set[str] = field(default_factory=set)
    _dirty: set[str] = field(default_factory=set)
    # Group -> when it last moved, and the last cycle it was blocked before that run of moves.
    _last_moved: dict[str, float] = field(default_factory=dict)
    _blocked_until: dict[str, float] = field(default_factory=dict)
    _phases: dict[str, str] = field(default_factory=dict)
    # Node -> [(time, workload)] of releases, in time order.
    _releases: dict[str, list[tuple[float, str]]] = field(default_factory=dict)

    def on_pod_group(self, key: str, pod_group: Mapping[str, Any] | None) -> None:
        if pod_group is None:
            return
        phase = (pod_group.get("status") or {}).get("phase") or ""
        if self.loading and phase not in _WAITING_PHASES:
            self.running_at_start.add(key)  # running, or done: not waiting at the start
        if self._phases.get(key) != phase:
            self._phases[key] = phase
            self._moved(key)
        self._dirty.add(key)

    def _moved(self, group: str) -> None:
        last = self._last_moved.get(group)
        if last is None or last < self.previous:
            # The cycle before this one was a blocked one for the group.
            self._blocked_until[group] = self.previous
        self._last_moved[group] = self.now

    def on_pod(
        self, key: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
    ) -> None:
        pod = new if new is not None else old
        if pod is None:
            return
        group = _group_of(pod)
        was, now_holds = _holds(old), _holds(new)
        if was and was != now_holds:
            self._releases.setdefault(was, []).append((self.now, workload_of(pod)))
        running = new is not None and pod_phase(new) == "Running"
        if running and self.loading:
            # Before its group exists, maybe: a dump's bare pod gets one in the first cycle.
            self._initially_running.add(key)
        if group is None:
            return
        members = self._running.setdefault(group, set())
        if running:
            members.add(key)
            self._dirty.add(group)
        else:
            members.discard(key)
        if old is None or (now_holds and not text(spec(old).get("nodeName"))):
            self._moved(group)  # a pod made or bound

    def check(
        self, pod_groups: Mapping[str, Mapping[str, Any]], pods: Mapping[str, Mapping[str, Any]]
    ) -> None:
        """Record the groups that reached minMember running since the last check."""
        dirty, self._dirty = self._dirty, set()
        for group in sorted(dirty):
            if group in self.started or group in self.running_at_start:
                continue
            pod_group = pod_groups.get(group)
            if pod_group is None:
                self._dirty.add(group)  # its PodGroup is made later in this cycle
                continue
            members = self._running.get(group, set())
            wanted = max(_min_member(pod_group), 1)
            if len(members) < wanted:
                continue
            if len(members & self._initially_running) >= wanted:
                self.running_at_start.add(group)
                continue
            shown = shown_key(group, pod_group)
            self.started[group] = (shown, self.now)
            self.waited_for[shown] = self._waited_for(group, shown, members, pods)

    def _waited_for(
        self, group: str, shown: str, members: set[str], pods: Mapping[str, Mapping[str, Any]]
    ) -> list[str]:
        since = self._blocked_until.get(group, self.previous)
        nodes = {text(spec(pods[key]).get("nodeName")) for key in members if key in pods}
        found: set[str] = set()
        for node in nodes:
            releases = self._releases.get(node, [])
            first = bisect.bisect_right(releases, (since, "\U0010ffff"))
            found.update(workload for _time, workload in releases[first:] if workload != shown)
        return sorted(found)


def _min_member(pod_group: Mapping[str, Any]) -> int:
    value = (pod_group.get("spec") or {}).get("minMember", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) else 1
