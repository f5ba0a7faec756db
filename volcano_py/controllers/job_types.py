"""What goes into one step of the job controller and what comes out of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class JobRequest:
    """Upstream's ``apis.Request`` for one job (``pkg/controllers/apis/request.go``).

    ``exit_code`` None and ``job_version`` None read as upstream's zero values; the three
    trailing fields are optional and only sharpen stale-event detection (``job_uid``), delayed
    action cancellation (``pod_uid``) and RestartPartition targeting (``partition_id``).
    """

    event: str
    action: str = ""
    task_name: str = ""
    pod_name: str = ""
    exit_code: int | None = None
    job_version: int | None = None
    job_uid: str = ""
    pod_uid: str = ""
    partition_id: str = ""

    def __post_init__(self) -> None:
        # Enum members are str subclasses; keep plain strings for serialisers.
        self.event = str(self.event)
        self.action = str(self.action)


@dataclass(frozen=True, slots=True)
class DelayedAction:
    """An action a lifecycle policy with a ``timeout`` asked for: the driver runs
    ``sync_job`` with ``request`` (which carries the action) once ``delay_seconds`` have passed,
    unless ``delayed_action_cancelled`` says a later request made it obsolete."""

    action: str
    delay_seconds: float
    request: JobRequest


@dataclass(slots=True)
class JobChanges:
    """The writes one step asks for. Apply in this order: ``pod_group``, ``extra_objects``,
    ``annotate_pods``, ``delete_pods``, ``create_pods``, ``delete_objects``,
    ``delete_pod_group``, ``job_annotations``, ``status``; record ``events``.

    * ``pod_group``: the full PodGroup to create, or to replace when one exists (only when new
      or its spec changed).
    * ``delete_pods``: names in the job's namespace. ``annotate_pods`` (pod name -> annotations
      to merge) marks pods the controller is about to delete, so their delete events come back
      as ``OutOfSync`` and not as ``PodEvicted`` (upstream patches before deleting).
    * ``status``: the job's new ``.status`` when it changed.
    * ``extra_objects``: plugin and volume objects (ConfigMap, Service, NetworkPolicy, Secret,
      PersistentVolumeClaim) to create, or to replace when one of the same kind and name exists.
    * ``delete_objects``: (kind, name) of plugin objects to remove (a whole-job kill).
    * ``job_annotations``: annotations to merge onto the Job itself (job forwarding).
    * ``delayed_action``: a policy asked for an action after a timeout; nothing else changed.
    """

    pod_group: dict[str, Any] | None = None
    delete_pod_group: bool = False
    create_pods: list[dict[str, Any]] = field(default_factory=list)
    delete_pods: list[str] = field(default_factory=list)
    status: dict[str, Any] | None = None
    events: list[tuple[str, str, str]] = field(default_factory=list)
    extra_objects: list[dict[str, Any]] = field(default_factory=list)
    annotate_pods: dict[str, dict[str, str]] = field(default_factory=dict)
    delete_objects: list[tuple[str, str]] = field(default_factory=list)
    job_annotations: dict[str, str] = field(default_factory=dict)
    delayed_action: DelayedAction | None = None

    @property
    def writes_anything(self) -> bool:
        """Whether applying the changes would touch the cluster (events aside)."""
        return bool(
            self.pod_group is not None
            or self.delete_pod_group
            or self.create_pods
            or self.delete_pods
            or self.status is not None
            or self.extra_objects
            or self.annotate_pods
            or self.delete_objects
            or self.job_annotations
        )
