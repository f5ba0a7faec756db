"""The capacity plugin's DRA quota (upstream ``capacity_test.go``'s DRA tests, transcribed),
and the quota in a simulated cluster (upstream's e2e ``dra_quota_test.go`` cases)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

from tests.guides.guide_sim import conf_map, node, simulate, task, vcjob, vqueue
from tests.sim.dra_fixtures import (
    claim,
    claim_spec,
    device_class,
    gpu,
    pod_claims,
    request,
    resource_slice,
)
from volcano_py.plugins.capacity.dra_quota import DraAmount, DraQuota, parse_resource_list

GI = Fraction(2**30)


def test_parse_dra_resource_list_combines_count_and_capacity() -> None:
    """TestParseDRAResourceListCombinesCountAndCapacity."""
    parsed = parse_resource_list(
        {"deviceclass/gpu.example.com": "2", "memory.deviceclass/gpu.example.com": "120Gi"}
    )
    assert parsed["gpu.example.com"].count == 2
    assert parsed["gpu.example.com"].capacity == {"memory": 120 * GI}


def test_shared_resource_claim_is_charged_once() -> None:
    """TestSharedResourceClaimIsChargedOnce."""
    quota = DraQuota(capability={"gpu.com": DraAmount(1)}, deserved={}, guarantee={})
    shared = {"ns1/shared": {"gpu.com": DraAmount(1)}}
    quota.add_task(shared)
    quota.add_task(shared)
    assert quota.allocated["gpu.com"].count == 1
    assert quota.fits(quota.incremental(shared), False, with_inqueue=False) == ""
    distinct = {"ns1/distinct": {"gpu.com": DraAmount(1)}}
    assert quota.fits(quota.incremental(distinct), False, with_inqueue=False) != ""
    quota.remove_task(shared)
    assert quota.allocated["gpu.com"].count == 1  # still referenced by one task
    quota.remove_task(shared)
    assert quota.allocated["gpu.com"].count == 0


def test_dra_allocatable_ignores_inqueue() -> None:
    """TestDRAAllocatableIgnoresInqueue."""
    quota = DraQuota.of_queue(
        {"capability": {"deviceclass/gpu.com": "2", "memory.deviceclass/gpu.com": "16Gi"}}
    )
    assert quota is not None
    quota.inqueue["gpu.com"] = DraAmount(1, {"memory": 8 * GI})
    wanted = {"gpu.com": DraAmount(2, {"memory": 16 * GI})}
    assert quota.fits(wanted, True, with_inqueue=False) == ""
    assert quota.fits(wanted, True, with_inqueue=True) != ""


def test_check_dra_allocatable_overflow_rejected() -> None:
    """TestCheckDRAAllocatable_overflowRejected (Python integers do not overflow; the huge
    in-queue amount must still reject)."""
    big = 2**63 - 1
    poisoned = DraQuota({"gpu.example.com": DraAmount(8)}, {}, {})
    poisoned.inqueue["gpu.example.com"] = DraAmount(big)
    assert poisoned.fits({"gpu.example.com": DraAmount(big)}, False, with_inqueue=True) != ""
    fresh = DraQuota({"gpu.example.com": DraAmount(8)}, {}, {})
    assert fresh.fits({"gpu.example.com": DraAmount(4)}, False, with_inqueue=True) == ""


CONF = """actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
    arguments:
      capacity.DynamicResourceAllocationEnable: true
      capacity.DRAConsumableCapacityEnable: true
"""


def _direct_job(name: str, count: int, **capacity: str) -> list[dict[str, Any]]:
    """dra_quota_test.go's createDirectClaimDRAJob: a claim and a one-pod job using it."""
    extra = {"capacity": {"requests": capacity}} if capacity else {}
    made = claim(f"{name}-claim", claim_spec(request(count=count, **extra)))
    job = vcjob(
        name,
        [task("worker", 1, **pod_claims(claim_name=f"{name}-claim"))],
        minAvailable=1,
        queue="dra-quota",
    )
    return [made, job]


def _cluster(capability: dict[str, str]) -> list[dict[str, Any]]:
    shared = {"allowMultipleAllocations": True}
    devices = [gpu(f"gpu-{i}", **shared) for i in range(4)]
    for device in devices:
        device["capacity"]["cores"] = {"value": "400"}
    return [
        conf_map(CONF),
        node("n1"),
        device_class("gpu.example.com"),
        resource_slice("n1-gpus", devices, node="n1"),
        vqueue("dra-quota", weight=1, capability=capability),
    ]


def test_count_quota_keeps_a_job_pending(tmp_path: Path) -> None:
    """e2e "keeps jobs pending when direct-claim count quota is exceeded"."""
    objects = [
        *_cluster({"deviceclass/gpu.example.com": "2"}),
        *_direct_job("job-1", 2),
        *_direct_job("job-2", 1),
    ]
    report, _, _ = simulate(tmp_path, objects)
    assert report["pods"]["default/job-1-worker-0"]["node"] == "n1"
    assert report["pods"]["default/job-2-worker-0"].get("node") is None


def test_capacity_dimension_quota(tmp_path: Path) -> None:
    """e2e "enforces capacity-dimension quota": 300 of 400 cores held, 200 more refused."""
    objects = [
        *_cluster({"deviceclass/gpu.example.com": "2", "cores.deviceclass/gpu.example.com": "400"}),
        *_direct_job("job-1", 1, cores="300"),
        *_direct_job("job-2", 1, cores="200"),
    ]
    report, _, _ = simulate(tmp_path, objects)
    assert report["pods"]["default/job-1-worker-0"]["node"] == "n1"
    assert report["pods"]["default/job-2-worker-0"].get("node") is None


HIERARCHY_CONF = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
    enableHierarchy: true
"""


def test_a_parent_queue_limits_its_children(tmp_path: Path) -> None:
    """Hierarchical mode: the parent's ``deviceclass/`` capability holds for the devices its
    children's pods claim together (upstream adds a leaf's DRA allocation to its ancestors)."""
    cluster = _cluster({})
    cluster[0] = conf_map(HIERARCHY_CONF)
    cluster[-1] = vqueue(
        "team", weight=1, capability={"cpu": "8", "deviceclass/gpu.example.com": "2"}
    )
    children = [
        vqueue(name, weight=1, parent="team", capability={"cpu": "4"}) for name in ("a", "b")
    ]
    jobs = []
    for name in ("a", "b"):
        made = claim(f"{name}-claim", claim_spec(request(count=2)))
        job = vcjob(
            f"{name}-job",
            [task("worker", 1, **pod_claims(claim_name=f"{name}-claim"))],
            minAvailable=1,
            queue=name,
        )
        jobs += [made, job]
    report, _, _ = simulate(tmp_path, [*cluster, *children, *jobs])
    placed = [key for key, entry in report["pods"].items() if entry.get("node")]
    assert len(placed) == 1
