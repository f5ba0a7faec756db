"""resourcequota: a job is admitted only while its namespace's ResourceQuotas have room for
its ``minResources`` (``pkg/scheduler/plugins/resourcequota/resourcequota.go``).

Registers JobEnqueueableFn and JobEnqueuedFn (both gated by ``enableJobEnqueued``).

For each ResourceQuota of the job's namespace (``ssn.namespace_info``): the part of the
PodGroup's ``minResources`` that the quota names in ``status.hard``, added to the quota's
``status.used`` and to what this session already admitted in the namespace, must stay within
``status.hard`` for every name. Otherwise the job is rejected and its PodGroup gets a Normal
``Unschedulable`` event. A PodGroup without ``minResources``, or a namespace without quotas,
is permitted.

Names are compared exactly, as Kubernetes' quota helpers do: a quota on ``requests.cpu`` does
not limit a ``minResources`` that says ``cpu`` (Volcano's job controller writes plain names,
so only quotas on ``cpu``, ``memory``, ``pods``, extended resources and the like act here).
Quota scopes are not looked at, as upstream does not.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from decimal import Decimal
from typing import Final

from volcano_py.api.job import JobInfo
from volcano_py.api.namespace import QuotaStatus
from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "resourcequota"
# PodGroupUnschedulableType.
UNSCHEDULABLE_REASON: Final = "Unschedulable"

Amounts = dict[str, Decimal]


def min_resources(job: JobInfo) -> Amounts | None:
    """The PodGroup's ``minResources`` as exact amounts, None when it sets none."""
    if job.pod_group is None or job.pod_group.min_resources is None:
        return None
    amounts: Amounts = {}
    for name, value in job.pod_group.min_resources.items():
        try:
            amounts[str(name)] = parse_quantity(value)
        except QuantityError as error:
            # Admission refuses such PodGroups; one that gets here anyway is checked on the
            # names it can be read for.
            log.warning(
                "resourcequota: PodGroup %s: spec.minResources.%s: %s", job.uid, name, error
            )
    return amounts


def add(left: Mapping[str, Decimal], right: Mapping[str, Decimal]) -> Amounts:
    """``quotav1.Add``: the union of names, amounts summed."""
    total = dict(left)
    for name, amount in right.items():
        total[name] = total.get(name, Decimal(0)) + amount
    return total


def exceeded_names(
    requested: Mapping[str, Decimal], quota: QuotaStatus, pending: Mapping[str, Decimal]
) -> list[str]:
    """The names of ``quota.hard`` that ``requested`` would push over, in name order."""
    wanted = {name: amount for name, amount in requested.items() if name in quota.hard}
    used = add(pending, quota.used)
    new_usage = {name: used.get(name, Decimal(0)) + amount for name, amount in wanted.items()}
    return sorted(
        name for name, limit in quota.hard.items() if name in new_usage and new_usage[name] > limit
    )


def _format(amounts: Mapping[str, object], names: list[str]) -> str:
    """A masked resource list as Go prints one (``map[cpu:2 memory:2G]``)."""
    return "map[" + " ".join(f"{name}:{amounts[name]}" for name in names if name in amounts) + "]"


class ResourceQuotaPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        # minResources of the jobs this session admitted, by namespace.
        self.pending: dict[str, Amounts] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.pending = {}

        def job_enqueueable(job: JobInfo) -> Vote:
            requested = min_resources(job)
            if requested is None:
                return Vote.PERMIT
            namespace = ssn.namespace_info.get(job.namespace)
            if namespace is None:
                return Vote.PERMIT
            pending = self.pending.get(job.namespace, {})
            for quota_name in sorted(namespace.quota_status):
                quota = namespace.quota_status[quota_name]
                exceeded = exceeded_names(requested, quota, pending)
                if not exceeded:
                    continue
                written = job.pod_group.min_resources if job.pod_group is not None else None
                requested_text = dict(written or {})
                message = (
                    f"resource quota insufficient, requested: {_format(requested_text, exceeded)},"
                    f" used: {_format(quota.used_text, exceeded)},"
                    f" limited: {_format(quota.hard_text, exceeded)}"
                )
                log.debug("resourcequota: job %s not enqueueable: %s", job.uid, message)
                ssn.record_job_event(job, "Normal", UNSCHEDULABLE_REASON, message)
                return Vote.REJECT
            return Vote.PERMIT

        def job_enqueued(job: JobInfo) -> None:
            requested = min_resources(job)
            if requested is None or job.namespace not in ssn.namespace_info:
                return
            self.pending[job.namespace] = add(self.pending.get(job.namespace, {}), requested)

        ssn.add_job_enqueueable_fn(self.name, job_enqueueable)
        ssn.add_job_enqueued_fn(self.name, job_enqueued)

    def on_session_close(self, ssn: Session) -> None:
        self.pending = {}


ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> ResourceQuotaPlugin:
    return ResourceQuotaPlugin(arguments)
