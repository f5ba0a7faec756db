"""capacity: queue quotas from explicit ``deserved`` amounts, flat or hierarchical
(``pkg/scheduler/plugins/capacity/capacity.go``).

Each queue gets a ``deserved`` amount straight from its spec (proportion computes it from
weights), a ``guarantee`` nobody else may use, a ``capability`` it may never exceed and a
``realCapability``: the capability cut down to what the cluster can give it once every other
queue's guarantee is set aside. A queue may borrow idle resources up to its real capability;
what it holds beyond ``deserved`` can be reclaimed by a queue still below its own.

With ``enableHierarchy`` on the plugin's tier entry the queues form a tree under ``root``
(``spec.parent``, default ``root``): a job's usage also counts on every ancestor, every check
runs for the leaf and each ancestor, a child inherits its parent's capability where it sets
none, and only leaf queues may hold jobs. An inconsistent tree (unknown parent, a job in an
inner queue, no ``root`` queue) makes the plugin refuse everything for the session, as
upstream does, rather than schedule against a quota it cannot compute.

Registers QueueOrderFn, VictimQueueOrderFn (hierarchical only), ReclaimableFn, PreemptiveFn
(with the ``ancestorReclaimLevel`` argument), AllocatableFn, JobEnqueueableFn, JobEnqueuedFn
and allocation event handlers; records the queue metrics and, on close, ``queue_overused``.
For topology-aware preemption's dry run it also registers a PrePredicateFn seeding the task's
simulation state and SimulateAllocatableFn / SimulateAddTaskFn / SimulateRemoveTaskFn, which
check and move the queues' allocations in that state (``_simulated_allocations``).
``deserved_by_queue()`` and ``summary()`` stay readable after the session closed (the
simulator prints them).

Not ported:

* The ``SchedulingGatesQueueAdmission`` reserved-task cache (an alpha feature gate, off by
  default upstream; the project has no feature gates yet).

The package: ``attributes`` (queue attributes, share, tree paths), ``flat`` and ``hierarchy``
(building them), ``queue_order``, ``reclaim`` (victims), ``quota`` (preemptive, allocatable,
enqueue), ``dra_quota`` (DRA quota: ``deviceclass/<class>`` and ``<dim>.deviceclass/<class>``
capability keys), ``simulate`` (dry-run hooks) and ``plugin`` (the plugin and ``new``).
"""

from __future__ import annotations

from volcano_py.plugins.capacity.attributes import PLUGIN_NAME, CapacityState, QueueAttributes
from volcano_py.plugins.capacity.plugin import ARGUMENTS, CapacityPlugin, new

__all__ = ["ARGUMENTS", "PLUGIN_NAME", "CapacityPlugin", "CapacityState", "QueueAttributes", "new"]
