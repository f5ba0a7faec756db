"""The Lease elector against an in-memory Lease with resourceVersion semantics, on a fake
clock (client-go's TestTryAcquireOrRenewLeases / TestReleaseLeaseLeases, in spirit)."""

from __future__ import annotations

import asyncio
import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.runtime.apiclient import ApiError
from volcano_py.runtime.leaderelection import LeaseConfig, LeaseElector, micro_time

PATH = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock"


class FakeLeaseApi:
    """One Lease; PUT needs the current resourceVersion (else 409), like the API server."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.fail: ApiError | None = None
        self.calls: list[str] = []

    async def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        self.calls.append(method)
        if self.fail is not None:
            raise self.fail
        if method == "GET":
            if self.lease is None:
                raise ApiError(method, path, 404, "not found")
            return copy.deepcopy(self.lease)
        if method == "POST":
            if self.lease is not None:
                raise ApiError(method, path, 409, "already exists")
            return self._store(body)
        if method == "PUT":
            assert self.lease is not None
            sent = body["metadata"].get("resourceVersion")
            if sent != self.lease["metadata"]["resourceVersion"]:
                raise ApiError(method, path, 409, "the object has been modified")
            return self._store(body)
        raise AssertionError(method)

    def _store(self, body: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        self.lease = copy.deepcopy(body)
        self.lease["metadata"]["resourceVersion"] = str(self.version)
        return copy.deepcopy(self.lease)

    def overwrite(self, **spec: Any) -> None:
        assert self.lease is not None
        self.lease["spec"].update(spec)
        self.version += 1
        self.lease["metadata"]["resourceVersion"] = str(self.version)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def elector(api: FakeLeaseApi, identity: str, clock: Clock, **config: Any) -> LeaseElector:
    settings = {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0, **config}
    return LeaseElector(
        api,
        LeaseConfig(namespace="ns", name="lock", identity=identity, **settings),
        clock=clock,
        wall_clock=lambda: datetime(2026, 1, 2, tzinfo=UTC) + timedelta(seconds=clock.now),
    )


def on_the_real_clock(
    api: FakeLeaseApi,
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
    **callbacks: Any,
) -> LeaseElector:
    """Candidate "a" on the real clock, for the tests that run its campaign."""
    config = LeaseConfig(
        namespace="ns", name="lock", identity="a", lease_duration=lease_duration,
        renew_deadline=renew_deadline, retry_period=retry_period,
    )  # fmt: skip
    return LeaseElector(api, config, **callbacks)


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_micro_time_is_rfc3339_with_microseconds() -> None:
    assert micro_time(datetime(2026, 1, 2, 3, 4, 5, 120, tzinfo=UTC)) == (
        "2026-01-02T03:04:05.000120Z"
    )


def test_first_candidate_creates_the_lease_and_renews_it() -> None:
    api, clock = FakeLeaseApi(), Clock()
    a = elector(api, "a", clock)
    assert run(a.try_acquire_or_renew())
    assert api.lease is not None
    spec = api.lease["spec"]
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-01-02T00:01:40.000000Z",
        "renewTime": "2026-01-02T00:01:40.000000Z",
        "leaseTransitions": 0,
    }
    clock.now += 2
    assert run(a.try_acquire_or_renew())
    assert api.lease["spec"]["leaseTransitions"] == 0
    assert api.calls == ["GET", "POST", "GET", "PUT"]


def test_a_valid_lease_is_not_taken_but_an_expired_one_is() -> None:
    api, clock = FakeLeaseApi(), Clock()
    a, b = elector(api, "a", clock), elector(api, "b", clock)
    assert run(a.try_acquire_or_renew())
    assert not run(b.try_acquire_or_renew())
    # b times the holder with its own clock: 14 s without a change is still valid...
    clock.now += 14
    assert not run(b.try_acquire_or_renew())
    # ...a renewal, seen by b 14 s later, restarts b's count from when b saw it...
    assert run(a.try_acquire_or_renew())
    clock.now += 14
    assert not run(b.try_acquire_or_renew())
    clock.now += 14
    assert not run(b.try_acquire_or_renew())
    # ...and 15 s after b last saw a change, b takes over, counting a transition.
    clock.now += 1.5
    assert run(b.try_acquire_or_renew())
    assert api.lease is not None
    assert api.lease["spec"]["holderIdentity"] == "b"
    assert api.lease["spec"]["leaseTransitions"] == 1
    # The old holder cannot renew a lease somebody else holds.
    assert not run(a.try_acquire_or_renew())


def test_concurrent_updates_conflict_and_only_one_wins() -> None:
    api, clock = FakeLeaseApi(), Clock()
    a, b = elector(api, "a", clock), elector(api, "b", clock)
    assert run(a.try_acquire_or_renew())
    assert not run(b.try_acquire_or_renew())
    clock.now += 20
    stale = copy.deepcopy(api.lease)
    assert run(b.try_acquire_or_renew())
    # A PUT built on the old version is refused (409), as a racing candidate's would be.
    assert stale is not None
    with pytest.raises(ApiError) as refused:
        run(api.request("PUT", PATH, stale))
    assert refused.value.conflict


def test_release_empties_the_holder() -> None:
    api, clock = FakeLeaseApi(), Clock()
    a = elector(api, "a", clock)
    assert run(a.try_acquire_or_renew())
    assert run(a.release())
    assert api.lease is not None
    assert api.lease["spec"]["holderIdentity"] == ""
    assert api.lease["spec"]["leaseDurationSeconds"] == 1
    # A standby may take it at once.
    b = elector(api, "b", clock)
    clock.now += 1.5
    assert run(b.try_acquire_or_renew())


def test_losing_the_lease_calls_on_stopped_leading() -> None:
    api = FakeLeaseApi()
    events: list[str] = []
    candidate = on_the_real_clock(
        api,
        1.0,
        0.3,
        0.05,
        on_started_leading=lambda: events.append("started"),
        on_stopped_leading=lambda: events.append("stopped"),
    )

    async def scenario() -> None:
        task = asyncio.create_task(candidate.run())
        for _ in range(100):
            if candidate.is_leader:
                break
            await asyncio.sleep(0.01)
        assert candidate.is_leader
        api.fail = ApiError("GET", PATH, 503, "etcd is down")
        await asyncio.wait_for(task, 2.0)

    run(scenario())
    assert events == ["started", "stopped"]
    assert not candidate.is_leader


def test_another_holder_taking_the_lease_ends_leadership_at_once() -> None:
    api = FakeLeaseApi()
    stopped: list[float] = []
    candidate = on_the_real_clock(
        api,
        10.0,
        5.0,
        0.05,
        on_stopped_leading=lambda: stopped.append(1.0),
    )

    async def scenario() -> None:
        task = asyncio.create_task(candidate.run())
        while not candidate.is_leader:
            await asyncio.sleep(0.01)
        api.overwrite(holderIdentity="intruder", leaseDurationSeconds=60)
        await asyncio.wait_for(task, 1.0)  # well before the 5 s renew deadline

    run(scenario())
    assert stopped


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"lease_duration": 10, "renew_deadline": 10}, "lease-duration must be greater"),
        ({"renew_deadline": 2, "retry_period": 2}, "renew-deadline must be greater"),
        ({"retry_period": 0, "renew_deadline": 1}, "retry-period must be positive"),
    ],
)
def test_invalid_durations_are_refused(settings: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LeaseConfig(**settings).validate()  # type: ignore[arg-type]


def test_release_stops_the_renewals_first_and_the_lease_stays_released() -> None:
    """The live race (a clean stop right after taking the lease): the campaign's first renewal
    wrote the lease between the release's read and its write, which got a 409 and left the
    lease held. The campaign is stopped before the release, as client-go's ReleaseOnCancel."""
    api = FakeLeaseApi()
    candidate = on_the_real_clock(api, 1.0, 0.5, 0.01)

    async def scenario() -> bool:
        campaign = candidate.start()
        for _ in range(100):
            if candidate.is_leader:
                break
            await asyncio.sleep(0.005)
        assert candidate.is_leader
        released = await candidate.release()
        assert campaign.cancelled()
        await asyncio.sleep(0.05)  # several retry periods: nothing renews it any more
        return released

    assert run(scenario())
    assert api.lease is not None
    assert api.lease["spec"]["holderIdentity"] == ""
    assert api.calls[-1] == "PUT"


def test_a_stop_that_lands_as_a_renewal_completes_still_ends_the_campaign() -> None:
    """The campaign is cancelled in the very step its renewal completes (the stop of a clean
    shutdown can land there). On Python 3.11, ``asyncio.wait_for`` around the renewal returned
    the renewal's result and dropped the cancellation: the campaign renewed on and ``release()``
    waited for its end forever. It must end."""

    class CancelOnRenewal(FakeLeaseApi):
        campaign: asyncio.Task[None] | None = None

        async def request(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
            answer = await super().request(method, path, body, **kwargs)
            if method == "PUT" and self.campaign is not None and self.version == 2:
                # The first renewal after taking the lease: stop the campaign in the step
                # the renewal completes.
                asyncio.get_running_loop().call_soon(self.campaign.cancel)
            return answer

    api = CancelOnRenewal()
    candidate = on_the_real_clock(api, 1.0, 0.5, 0.01)

    async def scenario() -> bool:
        api.campaign = candidate.start()
        done, _ = await asyncio.wait({api.campaign}, timeout=2.0)
        return bool(done)

    assert run(scenario()), "the cancelled campaign went on renewing"
