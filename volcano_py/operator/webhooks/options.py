"""Settings the handlers share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from volcano_py.api.types import DEFAULT_SCHEDULER_NAME
from volcano_py.models.queue_hierarchy import DEFAULT_MAX_DEPTH

if TYPE_CHECKING:
    from volcano_py.operator.webhooks.admission_conf import AdmissionConfFile


@dataclass(frozen=True, slots=True)
class WebhookOptions:
    # The scheduler name a Job naming none gets (vc-webhook-manager's --scheduler-name).
    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    # --enable-queue-allocated-pods-check: refuse deleting a queue that still has pods.
    queue_allocated_pods_check: bool = False
    # --max-queue-depth: the deepest a hierarchical queue may sit below root.
    max_queue_depth: int = DEFAULT_MAX_DEPTH
    # --enable-root-queue-protection: refuse changing the root queue's resources.
    root_queue_protection: bool = True
    # --enabled-admission: the webhook paths served (None: every one there is).
    enabled_paths: frozenset[str] | None = None
    # Every --scheduler-name: the pods /pods/validate checks (upstream's SchedulerNames).
    scheduler_names: tuple[str, ...] = (DEFAULT_SCHEDULER_NAME,)
    # --admission-conf: the resource groups of /pods/mutate (None: the pods are left alone).
    admission_conf: AdmissionConfFile | None = None
