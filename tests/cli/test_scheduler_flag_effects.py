"""The scheduler flags' effects: the node selector in the cache, the feasible-node numbers in
the node search, the cache dumper on SIGUSR1/SIGUSR2, /debug/pprof/ over real HTTP."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.fake_plugins import cache_of, open_fake_session
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.node_selector import parse_node_selector
from volcano_py.cli.main import parse_args
from volcano_py.cli.scheduler import _options
from volcano_py.framework.feasibility import FeasibilityOptions
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.session import SchedulingState
from volcano_py.operator.scheduler import LiveScheduler
from volcano_py.runtime import pprof
from volcano_py.runtime.apiclient import ClusterAccess
from volcano_py.runtime.cache_dump import dump_to_json_file, listen_for_signals
from volcano_py.runtime.health import HttpEndpoints, Probes


def node(name: str, labels: dict[str, str]) -> dict[str, object]:
    built = build_node(name, resource_list("4", "8Gi", pods="10"))
    built["metadata"]["labels"] = labels  # type: ignore[index]
    return built


def test_node_selector_keeps_matching_nodes_only() -> None:
    # Upstream nodeCanAddCache: any label equal to any selector (ORed).
    cache = SchedulerCache(
        node_selector=parse_node_selector(["volcano.sh/role:train", "volcano.sh/role:serving"])
    )
    cache.apply_event("Node", "ADDED", node("a", {"volcano.sh/role": "train"}))
    cache.apply_event("Node", "ADDED", node("b", {"volcano.sh/role": "serving", "x": "y"}))
    cache.apply_event("Node", "ADDED", node("c", {"volcano.sh/role": "other"}))
    cache.apply_event("Node", "ADDED", node("d", {}))
    assert cache.node_list == ["a", "b"]
    # Relabelled out of the selection: it leaves the cache.
    cache.apply_event("Node", "MODIFIED", node("a", {"volcano.sh/role": "idle"}))
    assert cache.node_list == ["b"]
    assert list(cache.snapshot().nodes) == ["b"]


def test_no_node_selector_keeps_every_node() -> None:
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", node("a", {}))
    assert cache.node_list == ["a"]


def test_live_scheduler_takes_the_flags() -> None:
    options = _options(parse_args([
        "scheduler", "--node-selector=zone:a", "--minimum-feasible-nodes=2",
        "--percentage-nodes-to-find=50",
    ]))  # fmt: skip
    scheduler = LiveScheduler(options, access=ClusterAccess(server="http://127.0.0.1:1"))
    assert scheduler.cache.node_selector == {("zone", "a")}
    assert scheduler.loop_runner.state.feasibility == FeasibilityOptions(2, 5, 50)


def test_the_search_stops_at_the_states_feasible_node_count() -> None:
    objects = [
        ("Node", build_node(f"n{i}", resource_list("4", "8Gi", pods="10"))) for i in range(5)
    ]
    objects += [
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("pg1", "ns1", "q1", 1)),
        ("Pod", build_pod("ns1", "t", "", "Pending", resource_list("1", "1Gi"), "pg1")),
    ]  # fmt: skip
    for wanted, state in (
        (5, SchedulingState()),  # 5 nodes <= the default minimum of 100: all of them
        (2, SchedulingState(feasibility=FeasibilityOptions(minimum_feasible_nodes=2))),
    ):
        ssn = open_fake_session([], cache_of(objects).snapshot(), state=state)
        task = next(t for job in ssn.jobs.values() for t in job.tasks.values())
        rows, _ = PredicateHelper(ssn).predicate_nodes(task, np.arange(len(ssn.node_list)))
        assert len(rows) == wanted


def test_sigusr1_writes_the_cache_as_json(tmp_path: Path) -> None:
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", node("a", {"zone": "z"}))
    cache.apply_event("Queue", "ADDED", build_queue("q1"))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("pg1", "ns1", "q1", 1))
    cache.apply_event(
        "Pod", "ADDED", build_pod("ns1", "p", "a", "Running", resource_list("1", "1Gi"), "pg1")
    )
    previous = signal.getsignal(signal.SIGUSR1), signal.getsignal(signal.SIGUSR2)
    try:
        listen_for_signals(cache, str(tmp_path), lambda: 1700000000.0)
        os.kill(os.getpid(), signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, previous[0])
        signal.signal(signal.SIGUSR2, previous[1])
    path = tmp_path / "snapshot-1700000000.json"
    nodes, hyper_nodes, jobs = (json.loads(line) for line in path.read_text().splitlines())
    assert nodes["a"]["labels"] == {"zone": "z"} and len(nodes["a"]["tasks"]) == 1
    assert hyper_nodes == {}
    (job,) = jobs.values()
    assert job["queue"] == "q1" and job["tasks"][0]["node"] == "a"


def test_sigusr2_logs_the_cache(caplog: pytest.LogCaptureFixture) -> None:
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", node("a", {}))
    previous = signal.getsignal(signal.SIGUSR1), signal.getsignal(signal.SIGUSR2)
    try:
        with caplog.at_level(logging.INFO):
            listen_for_signals(cache, "/tmp", lambda: 0.0)
            os.kill(os.getpid(), signal.SIGUSR2)
    finally:
        signal.signal(signal.SIGUSR1, previous[0])
        signal.signal(signal.SIGUSR2, previous[1])
    assert "Node (a)" in caplog.text


def test_an_unwritable_dump_dir_is_logged(tmp_path: Path) -> None:
    assert dump_to_json_file(SchedulerCache(), str(tmp_path / "missing"), 1.0) is None


def test_pprof_served_on_the_listen_address() -> None:
    async def scenario() -> tuple[str, str, str, int]:
        endpoints = HttpEndpoints(
            "127.0.0.1:0", "", Probes(lambda: "", lambda: ""), metrics=False,
            extra_routes=pprof.ROUTES,
        )  # fmt: skip
        await endpoints.start()
        port = endpoints.ports["127.0.0.1:0"]

        def get(path: str) -> tuple[int, str]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as response:
                    return response.status, response.read().decode()
            except urllib.error.HTTPError as error:
                return error.code, ""

        try:
            loop = asyncio.get_running_loop()
            _, stacks = await loop.run_in_executor(None, get, "/debug/pprof/goroutine")
            _, profile = await loop.run_in_executor(None, get, "/debug/pprof/profile?seconds=0.05")
            _, index = await loop.run_in_executor(None, get, "/debug/pprof/")
            metrics_status, _ = await loop.run_in_executor(None, get, "/metrics")
        finally:
            await endpoints.stop()
        return stacks, profile, index, metrics_status

    stacks, profile, index, metrics_status = asyncio.run(scenario())
    assert "thread MainThread" in stacks
    assert profile.strip() and profile.strip().splitlines()[0].rsplit(" ", 1)[1].isdigit()
    assert "/debug/pprof/profile" in index
    assert metrics_status == 404  # --enable-metrics off: pprof alone, as upstream


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        (None, "no --scheduler-conf given"),
        ("actions: [", "did not load"),
    ],
)
def test_disable_default_scheduler_config_refuses_to_start(
    conf: str | None,
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from volcano_py.cli.main import main

    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    argv = ["scheduler", "--master=http://127.0.0.1:1", "--disable-default-scheduler-config"]
    if conf is not None:
        path = tmp_path / "volcano-scheduler.conf"
        path.write_text(conf)
        argv.append(f"--scheduler-conf={path}")
    assert main(argv) == 2
    assert message in capsys.readouterr().err
