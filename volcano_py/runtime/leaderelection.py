"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection``
package does it (``tryAcquireOrRenew``, ``renew``, ``release``), which is what Volcano's
``--leader-elect`` runs.

* A candidate takes the Lease when nobody holds it or when the holder has not changed the
  record for ``lease_duration`` *as timed by this process's own clock* (client-go's
  ``observedTime``: no trust in other machines' clocks).
* The leader renews every ``retry_period``; a renewal round that does not succeed within
  ``renew_deadline`` loses the leadership, and ``on_stopped_leading`` is called (the scheduler
  exits the process, as Volcano's ``klog.Fatalf``). ``renew_deadline`` < ``lease_duration``
  keeps two leaders from overlapping.
* Every write is conditional on the resourceVersion read, so two candidates racing for the
  same Lease cannot both win.
* ``release()`` on a clean shutdown empties the holder so a standby takes over at once.

Times in the Lease are RFC 3339 micro times (``metav1.MicroTime``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from volcano_py.runtime.apiclient import ApiError

log = logging.getLogger(__name__)


class LeaseApi(Protocol):
    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Any = None,
        content_type: str = ...,
        timeout: float | None = None,
    ) -> Any: ...


def micro_time(moment: datetime) -> str:
    """``metav1.MicroTime``: ``2006-01-02T15:04:05.000000Z`` in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    """``hostname_<uuid>``, as Volcano names its candidates."""
    return f"{socket.gethostname() or os.getpid()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaseConfig:
    namespace: str = "volcano-system"
    name: str = "vc-scheduler"
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def validate(self) -> None:
        """client-go's checks (``NewLeaderElector``), as one-line errors."""
        if self.lease_duration <= self.renew_deadline:
            raise ValueError(
                "--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline"
            )
        if self.renew_deadline <= self.retry_period * 1.2:
            raise ValueError(
                "--leader-elect-renew-deadline must be greater than"
                " 1.2 x --leader-elect-retry-period"
            )
        if self.retry_period <= 0:
            raise ValueError("--leader-elect-retry-period must be positive")
        if not self.name or not self.namespace:
            raise ValueError("the leader election Lease needs a name and a namespace")


@dataclass
class _Observed:
    holder: str = ""
    duration: float = 0.0
    transitions: int = 0
    acquire_time: str = ""
    raw: Any = None
    # This process's monotonic clock when the record last changed.
    at: float = 0.0


class LeaseElector:
    """``run()`` campaigns until it leads, then renews until the leadership is lost (then
    ``on_stopped_leading`` and return) or the task is cancelled."""

    def __init__(
        self,
        api: LeaseApi,
        config: LeaseConfig,
        *,
        on_started_leading: Callable[[], None] = lambda: None,
        on_stopped_leading: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        config.validate()
        self.api = api
        self.config = config
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.clock = clock
        self.wall_clock = wall_clock
        self.observed = _Observed()
        self._leading = threading.Event()
        self._campaign: asyncio.Task[None] | None = None

    @property
    def path(self) -> str:
        namespace, name = self.config.namespace, self.config.name
        return f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"

    @property
    def is_leader(self) -> bool:
        """Thread-safe: true from a successful acquisition until the leadership is lost."""
        return self._leading.is_set()

    def _holds_record(self) -> bool:
        return self.observed.holder == self.config.identity

    def start(self) -> asyncio.Task[None]:
        """``run()`` as a task of the running loop, which ``release()`` stops first."""
        self._campaign = asyncio.create_task(self.run(), name="leader election")
        return self._campaign

    async def run(self) -> None:
        await self._acquire()
        self._leading.set()
        log.info(
            "leader election: %s now holds lease %s/%s",
            self.config.identity,
            self.config.namespace,
            self.config.name,
        )
        self.on_started_leading()
        # Cancelled while leading (shutdown): the caller may release() the lease.
        await self._renew()
        self._leading.clear()
        log.error("leader election: lost lease %s/%s", self.config.namespace, self.config.name)
        self.on_stopped_leading()

    async def _acquire(self) -> None:
        logged = False
        while True:
            if await self.try_acquire_or_renew():
                return
            if not logged and self.observed.holder:
                log.info(
                    "leader election: lease %s/%s is held by %s; waiting",
                    self.config.namespace,
                    self.config.name,
                    self.observed.holder,
                )
                logged = True
            await asyncio.sleep(self.config.retry_period * (1.0 + 0.2 * random.random()))

    async def _renew(self) -> None:
        """Renew every retry period; return when a round fails for ``renew_deadline``."""
        while True:
            round_started = self.clock()
            while True:
                remaining = self.config.renew_deadline - (self.clock() - round_started)
                if remaining <= 0:
                    return
                try:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for loses a
                    # cancellation that lands as the renewal completes (gh-86296), and the
                    # campaign release() stops would then renew on and never end.
                    async with asyncio.timeout(remaining):
                        renewed = await self.try_acquire_or_renew()
                except TimeoutError:
                    renewed = False
                if renewed:
                    break
                if self.observed.holder and not self._holds_record():
                    # Somebody else holds it now: no point retrying.
                    return
                await asyncio.sleep(min(self.config.retry_period, max(0.0, remaining)))
            await asyncio.sleep(self.config.retry_period)

    def _record(self, now: datetime, acquire_time: str, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.config.identity,
            "leaseDurationSeconds": max(1, round(self.config.lease_duration)),
            "acquireTime": acquire_time,
            "renewTime": micro_time(now),
            "leaseTransitions": transitions,
        }

    def _observe(self, lease: dict[str, Any]) -> None:
        spec = lease.get("spec") or {}
        if spec != self.observed.raw:
            self.observed = _Observed(
                holder=str(spec.get("holderIdentity") or ""),
                duration=float(spec.get("leaseDurationSeconds") or 0),
                transitions=int(spec.get("leaseTransitions") or 0),
                acquire_time=str(spec.get("acquireTime") or ""),
                raw=dict(spec),
                at=self.clock(),
            )

    async def try_acquire_or_renew(self) -> bool:
        now = self.wall_clock()
        try:
            lease = await self.api.request("GET", self.path)
        except ApiError as error:
            if not error.not_found:
                log.warning("leader election: cannot read the lease: %s", error)
                return False
            return await self._create(now)
        self._observe(lease)
        valid = self.observed.at + self.observed.duration > self.clock()
        if self.observed.holder and valid and not self._holds_record():
            return False
        if self._holds_record():
            acquire_time = self.observed.acquire_time or micro_time(now)
            transitions = self.observed.transitions
        else:
            acquire_time = micro_time(now)
            transitions = self.observed.transitions + 1
        updated = {
            **lease,
            "spec": {**(lease.get("spec") or {}), **self._record(now, acquire_time, transitions)},
        }
        try:
            written = await self.api.request("PUT", self.path, updated)
        except ApiError as error:
            if not error.conflict:
                log.warning("leader election: cannot update the lease: %s", error)
            return False
        self._observe(written)
        return True

    async def _create(self, now: datetime) -> bool:
        namespace, name = self.config.namespace, self.config.name
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace},
            "spec": self._record(now, micro_time(now), 0),
        }
        try:
            created = await self.api.request(
                "POST", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", body
            )
        except ApiError as error:
            if not error.conflict:
                log.warning(
                    "leader election: cannot create lease %s/%s: %s", namespace, name, error
                )
            return False
        self._observe(created)
        return True

    async def release(self) -> bool:
        """Give the lease up (clean shutdown): an empty holder, a 1 s duration.

        The campaign ``start()`` began is stopped first, as client-go ends its renew loop
        before ``ReleaseOnCancel``: a renewal in flight would otherwise make the release's
        write a conflict (409), or write this holder back after it."""
        campaign, self._campaign = self._campaign, None
        if campaign is not None and not campaign.done():
            campaign.cancel()
            await asyncio.wait({campaign})  # its end, whatever it was, without raising it
        if not self._holds_record():
            return False
        self._leading.clear()
        try:
            lease = await self.api.request("GET", self.path)
            if (lease.get("spec") or {}).get("holderIdentity") != self.config.identity:
                return False
            now = micro_time(self.wall_clock())
            lease["spec"] = {
                **(lease.get("spec") or {}),
                "holderIdentity": "",
                "leaseDurationSeconds": 1,
                "renewTime": now,
                "acquireTime": now,
                "leaseTransitions": self.observed.transitions,
            }
            await self.api.request("PUT", self.path, lease, timeout=5.0)
        except ApiError as error:
            log.warning("leader election: cannot release the lease: %s", error)
            return False
        log.info("leader election: released lease %s/%s", self.config.namespace, self.config.name)
        return True
