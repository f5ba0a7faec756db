"""conformance: never evict what keeps the cluster itself running
(``pkg/scheduler/plugins/conformance/conformance.go``).

Registers PreemptableFn, ReclaimableFn and UnifiedEvictableFn (gangpreempt/gangreclaim), all the
same filter.
"""

from __future__ import annotations

from typing import Final

from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import EvictionContext
from volcano_py.framework.session import Session

PLUGIN_NAME = "conformance"

SYSTEM_CRITICAL_CLASSES: Final = frozenset({"system-cluster-critical", "system-node-critical"})
SYSTEM_NAMESPACE: Final = "kube-system"


def is_protected(task: TaskInfo) -> bool:
    class_name = (task.pod.get("spec") or {}).get("priorityClassName") or ""
    return class_name in SYSTEM_CRITICAL_CLASSES or task.namespace == SYSTEM_NAMESPACE


def evictable(
    _evictor: TaskInfo | EvictionContext, candidates: list[TaskInfo]
) -> tuple[list[TaskInfo], int]:
    return [task for task in candidates if not is_protected(task)], Vote.PERMIT


class ConformancePlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_preemptable_fn(self.name, evictable)
        ssn.add_reclaimable_fn(self.name, evictable)
        ssn.add_unified_evictable_fn(self.name, evictable)

    def on_session_close(self, ssn: Session) -> None:
        return None


def new(arguments: Arguments) -> ConformancePlugin:
    return ConformancePlugin(arguments)
