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


class ConformancePlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self._protected: dict[str, bool] = {}

    def on_session_open(self, ssn: Session) -> None:
        # The gang actions ask about every task of a domain once per starving job; a pod's
        # class and namespace do not change within a session, so each is read once.
        self._protected = {}
        ssn.add_preemptable_fn(self.name, self.evictable)
        ssn.add_reclaimable_fn(self.name, self.evictable)
        ssn.add_unified_evictable_fn(self.name, self.evictable)

    def evictable(
        self, _evictor: TaskInfo | EvictionContext, candidates: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        protected = self._protected
        victims = []
        for task in candidates:
            verdict = protected.get(task.uid)
            if verdict is None:
                verdict = protected[task.uid] = is_protected(task)
            if not verdict:
                victims.append(task)
        return victims, Vote.PERMIT

    def on_session_close(self, ssn: Session) -> None:
        self._protected = {}


# The arguments this plugin reads (upstream conformance.go reads no argument).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> ConformancePlugin:
    return ConformancePlugin(arguments)
