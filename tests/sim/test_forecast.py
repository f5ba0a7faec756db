"""Start forecasts (``starts`` in the JSON, FORECAST in the table; docs/simulate.md, "Simulated
time, run times and forecasts"): who counts as waiting at the start, when a group starts, and
what it waited for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.sim.roundtrip import simulate_text
from tests.sim.simclock import job, node, running_pod, simulate


def _group(name: str, phase: str, min_member: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minMember": min_member, "queue": "default"},
        "status": {"phase": phase},
    }


def _table(tmp_path: Path, objects: list[dict[str, Any]], *args: str) -> str:
    code, out, err = simulate_text(
        tmp_path, yaml.safe_dump_all(objects), "--format", "table", *args
    )
    assert code == 0, err
    return out


def test_groups_running_at_the_start_are_not_forecast(tmp_path: Path) -> None:
    """A dump's running pods (their groups made by the podgroup controller, or given Running)
    are no forecast's business; a job made in the run is."""
    objects = [
        node(cpu=8),
        running_pod("bare", "n1", "2025-12-31T23:00:00Z"),
        {**running_pod("member", "n1", None), "metadata": {
            "name": "member", "namespace": "default",
            "annotations": {"scheduling.k8s.io/group-name": "given"}}},
        _group("given", "Running"),
        job("new", {"volcano-py.sim/run-seconds": "60"}),
    ]  # fmt: skip
    report = simulate(tmp_path, objects, "--until", "10m")
    assert report["starts"] == {"default/new": "2026-01-01T00:00:03Z"}


def test_starts_is_empty_when_nothing_waits(tmp_path: Path) -> None:
    assert simulate(tmp_path, [node()], "--until", "1m")["starts"] == {}


def test_a_gang_starts_when_min_member_pods_run(tmp_path: Path) -> None:
    """Three pods of 3 CPU, minAvailable 2, on an 8-CPU node where 4 CPU are taken until
    +10m: two fit only then (the third never does while they run)."""
    objects = [
        node(cpu=8),
        running_pod("busy", "n1", None, {"volcano-py.sim/run-seconds": "600"}, cpu=4),
        job("gang", {"volcano-py.sim/run-seconds": "60"}, replicas=3, cpu=3, minAvailable=2),
    ]
    report = simulate(tmp_path, objects, "--until", "30m")
    assert report["starts"] == {"default/gang": "2026-01-01T00:10:03Z"}
    table = _table(tmp_path, objects, "--until", "30m")
    assert "default/gang  starts at +10m3s, waited for default/busy" in table


def test_an_evicted_pod_is_what_a_job_waited_for(tmp_path: Path) -> None:
    objects = [
        node(cpu=4),
        running_pod("web", "n1", None, {"volcano-py.sim/evict-after-cycles": "100"}, cpu=4),
        job("batch", {"volcano-py.sim/run-seconds": "60"}, cpu=4),
    ]
    table = _table(tmp_path, objects, "--until", "5m")
    # Evicted at cycle 101 (100 after it was first seen running), gone at 102, when batch
    # is admitted and its pod made; bound at 103, running at 104.
    assert "default/batch  starts at +1m44s, waited for default/web" in table


def test_a_job_that_never_starts_says_so(tmp_path: Path) -> None:
    objects = [node(cpu=2), job("huge", {}, cpu=16)]
    table = _table(tmp_path, objects, "--until", "2h")
    assert "default/huge  does not start within 2h0m0s; at the end: " in table
    assert "does not start in this run (give --until to look further)" in _table(tmp_path, objects)
    assert "default/huge" not in simulate(tmp_path, objects, "--until", "2h")["starts"]


def test_a_job_that_starts_at_once_waited_for_nothing(tmp_path: Path) -> None:
    table = _table(tmp_path, [node(), job("quick", {})], "--cycles", "5")
    assert "default/quick  starts at +3s" in table
