"""``volcano-py simulate --format yaml`` (docs/simulate.md v2): the final state of every
object as one ``kind: List``, as ``kubectl get -o yaml`` prints it, and valid input: simulating
it again changes nothing the first run had settled."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sim.roundtrip import (
    batch_job,
    by_key,
    deployment,
    dump,
    node,
    plain_pod,
    queue,
    simulate_text,
    stateful_set,
    volcano_job,
    without_versions,
    yaml_and_report,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))


# The bundled examples' own plugins (examples/gpu-fragmentation.yaml names one).
PLUGINS_DIR = ("--plugins-dir", str(ROOT / "examples" / "plugins"))


def _without_bind_annotations(entry: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in entry.items() if key != "annotations"}


def _round_trip(directory: Path, text: str) -> None:
    """Run, run the output again: no binds, no evictions, the same objects with the same
    spec and status (only resourceVersions may move)."""
    first, first_report = yaml_and_report(directory, text, *PLUGINS_DIR)
    second, second_report = yaml_and_report(directory, first, *PLUGINS_DIR)
    assert second_report["binds"] == {}
    assert second_report["evictions"] == []
    before, after = by_key(first), by_key(second)
    assert sorted(after) == sorted(before), "objects made or deleted by the second run"
    for key, obj in before.items():
        assert without_versions(after[key]) == without_versions(obj), key
    # What the first run reported of its final state, the second reports alike (pods it
    # deleted are history, not state: the output has no trace of them).
    # A pod's ``annotations`` are what this run's binds added: the second run binds nothing
    # (the first run's bind annotations are in the objects, compared above).
    living = {
        k: _without_bind_annotations(v)
        for k, v in first_report["pods"].items()
        if v["phase"] != "Deleted"
    }
    assert {k: _without_bind_annotations(v) for k, v in second_report["pods"].items()} == living
    for part in ("podgroups", "jobs", "queues", "unschedulable"):
        assert second_report[part] == first_report[part], part


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.name)
def test_bundled_examples_round_trip(tmp_path: Path, example: Path) -> None:
    _round_trip(tmp_path, example.read_text(encoding="utf-8"))


def test_gang_deadlock_round_trip_is_byte_identical(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "gang-deadlock.yaml").read_text(encoding="utf-8")
    code, first, _ = simulate_text(tmp_path, text, "--format", "yaml")
    assert code == 0
    code, second, _ = simulate_text(tmp_path, first, "--format", "yaml")
    assert code == 0
    assert second == first


def test_list_layout_is_kubectls(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "gang-deadlock.yaml").read_text(encoding="utf-8")
    code, listed, _ = simulate_text(tmp_path, text, "--format", "yaml")
    assert code == 0
    assert listed.startswith("apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n")
    assert listed.endswith("kind: List\nmetadata:\n  resourceVersion: ''\n")
    document = yaml.safe_load(listed)
    kinds = [item["kind"] for item in document["items"]]
    # Created in the order a cluster needs them: what an object names comes first.
    assert kinds == sorted(kinds, key=["Node", "Queue", "Job", "PodGroup", "Pod"].index)
    for item in document["items"]:
        meta = item["metadata"]
        assert item["apiVersion"] and meta["uid"] and meta["creationTimestamp"]
        assert meta["resourceVersion"].isdecimal()
        if item["kind"] in ("Job", "PodGroup", "Pod"):
            assert meta["namespace"] == "default"
    queues = {i["metadata"]["name"]: i for i in document["items"] if i["kind"] == "Queue"}
    assert queues["default"]["status"]["state"] == "Open"
    assert queues["default"]["status"]["allocated"]["nvidia.com/gpu"] == "4"


def test_running_pod_reads_like_a_kubelet_report(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "gang-deadlock.yaml").read_text(encoding="utf-8")
    _code, listed, _ = simulate_text(tmp_path, text, "--format", "yaml")
    pod = by_key(listed)[("Pod", "default", "train-a-worker-0")]
    status = pod["status"]
    assert status["phase"] == "Running"
    assert status["startTime"] == "2026-01-01T00:00:03Z"  # bound in cycle 2, running in 3
    assert status["qosClass"] == "Burstable"
    conditions = {c["type"]: c for c in status["conditions"]}
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert all(c["status"] == "True" for c in conditions.values())
    assert conditions["PodScheduled"]["lastTransitionTime"] == "2026-01-01T00:00:02Z"
    (trainer,) = status["containerStatuses"]
    assert trainer["name"] == "trainer" and trainer["ready"] and trainer["started"]
    assert trainer["image"] == "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime"
    assert trainer["state"] == {"running": {"startedAt": "2026-01-01T00:00:03Z"}}
    assert trainer["containerID"].startswith("containerd://")
    assert status["podIP"].startswith("10.244.") and status["podIPs"] == [{"ip": status["podIP"]}]
    assert status["hostIP"].startswith("172.18.")
    pods = [v for (kind, _ns, _n), v in by_key(listed).items() if kind == "Pod"]
    assert len({p["status"]["podIP"] for p in pods}) == len(pods)


def test_finished_pod_has_terminated_containers(tmp_path: Path) -> None:
    pod = plain_pod("once", 500)
    pod["metadata"]["annotations"] = {"volcano-py.sim/run-cycles": "2"}
    text = dump([node("n1", 4, 8), pod])
    code, listed, err = simulate_text(tmp_path, text, "--format", "yaml")
    assert code == 0, err
    status = by_key(listed)[("Pod", "default", "once")]["status"]
    assert status["phase"] == "Succeeded"
    (main,) = status["containerStatuses"]
    terminated = main["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    assert terminated["startedAt"] == status["startTime"] < terminated["finishedAt"]
    assert not main["ready"]
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")


def test_uids_follow_the_seed(tmp_path: Path) -> None:
    text = dump([node("n1", 4, 8), plain_pod("p", 500)])
    outputs = {
        seed: simulate_text(tmp_path, text, "--format", "yaml", "--seed", seed)[1]
        for seed in ("1", "2")
    }
    uids = {
        seed: by_key(out)[("Pod", "default", "p")]["metadata"]["uid"]
        for seed, out in outputs.items()
    }
    assert uids["1"] != uids["2"]
    again = simulate_text(tmp_path, text, "--format", "yaml", "--seed", "1")[1]
    assert again == outputs["1"]


def test_given_uid_and_version_are_kept(tmp_path: Path) -> None:
    pod = plain_pod("p", 500, node_name="n1")
    pod["metadata"].update(uid="0f5a2b1e-1111-4222-8333-444455556666", resourceVersion="9000")
    pod["metadata"]["creationTimestamp"] = "2025-12-31T23:00:00Z"
    _code, listed, _ = simulate_text(tmp_path, dump([node("n1", 4, 8), pod]), "--format", "yaml")
    items = by_key(listed)
    meta = items[("Pod", "default", "p")]["metadata"]
    assert meta["uid"] == "0f5a2b1e-1111-4222-8333-444455556666"
    assert meta["creationTimestamp"] == "2025-12-31T23:00:00Z"
    # Its kubelet status was written since, so its version moved on past the one given.
    assert int(meta["resourceVersion"]) > 9000
    # The PodGroup the podgroup controller made names the pod's uid.
    assert ("PodGroup", "default", "podgroup-0f5a2b1e-1111-4222-8333-444455556666") in items


def test_job_plugin_objects_round_trip(tmp_path: Path) -> None:
    """The svc and ssh plugins' Service, ConfigMap, NetworkPolicy and Secret are listed, read
    back without a warning, and not made again."""
    job = volcano_job("mpi", "default", [(1, 500), (2, 500)], 3, {"ssh": [], "svc": []})
    text = dump([node("n1", 8, 16), job])
    code, listed, err = simulate_text(tmp_path, text, "--format", "yaml")
    assert code == 0 and err == ""
    items = by_key(listed)
    for kind, name in (
        ("Service", "mpi"),
        ("ConfigMap", "mpi-svc"),
        ("NetworkPolicy", "mpi"),
        ("Secret", "mpi-ssh"),
    ):
        assert (kind, "default", name) in items
    code, _again, err = simulate_text(tmp_path, listed, "--format", "yaml")
    assert code == 0 and err == ""
    _round_trip(tmp_path, text)


def test_reloaded_stale_conditions_are_not_taken_for_this_runs(tmp_path: Path) -> None:
    """Found by the property below: a PodGroup keeps the Unschedulable condition of the first
    run's first session. Had the second run's first session the same uid, the scheduler would
    take that condition for its own and mark the running group Unknown."""
    filler = plain_pod("filler", 1500, node_name="n1")
    waiting = plain_pod("waiting", 1000)
    once = plain_pod("once", 1000, node_name="n1")
    once["metadata"]["annotations"] = {"volcano-py.sim/run-cycles": "2"}
    text = dump([node("n1", 3, 4), filler, once, waiting])
    first, _ = yaml_and_report(tmp_path, text)
    group = next(
        obj
        for (kind, _ns, _name), obj in by_key(first).items()
        if kind == "PodGroup" and obj["metadata"]["ownerReferences"][0]["name"] == "waiting"
    )
    assert [c["type"] for c in group["status"]["conditions"]] == ["Unschedulable", "Scheduled"]
    _round_trip(tmp_path, text)


def test_multi_line_strings_are_literal_blocks(tmp_path: Path) -> None:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "hosts"},
        "data": {"hostfile": "a\nb\n"},
    }
    _code, listed, _ = simulate_text(
        tmp_path, dump([node("n1", 1, 1), config_map]), "--format", "yaml"
    )
    assert "hostfile: |\n      a\n      b\n" in listed


# ---------------------------------------------------------------------- the round trip, generated

_names = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def small_clusters(draw: st.DrawFn) -> str:
    nodes = [
        node(f"node-{index}", draw(st.integers(1, 6)), draw(st.integers(1, 8)))
        for index in range(draw(st.integers(1, 3)))
    ]
    queues = [
        queue(
            f"q-{name}",
            draw(st.integers(1, 3)),
            draw(st.one_of(st.none(), st.integers(1, 8))),
        )
        for name in sorted(draw(st.sets(_names, max_size=2)))
    ]
    queue_names = ["default"] + [q["metadata"]["name"] for q in queues]
    jobs = []
    for name in sorted(draw(st.sets(_names, max_size=3))):
        tasks = draw(
            st.lists(
                st.tuples(st.integers(1, 3), st.sampled_from([250, 500, 1000, 2000])),
                min_size=1,
                max_size=2,
            )
        )
        total = sum(replicas for replicas, _cpu in tasks)
        jobs.append(
            volcano_job(
                f"job-{name}",
                draw(st.sampled_from(queue_names)),
                tasks,
                draw(st.integers(1, total)),
            )
        )
    node_names = [n["metadata"]["name"] for n in nodes]
    pods = [
        plain_pod(
            f"pod-{name}",
            draw(st.sampled_from([100, 500, 1500])),
            draw(st.one_of(st.none(), st.sampled_from(node_names))),
        )
        for name in sorted(draw(st.sets(_names, max_size=3)))
    ]
    workloads = []
    if draw(st.booleans()):
        workloads.append(
            deployment("web", draw(st.integers(0, 3)), draw(st.sampled_from([100, 700])))
        )
    if draw(st.booleans()):
        parallel = draw(st.booleans())
        workloads.append(stateful_set("db", draw(st.integers(1, 3)), 300, parallel))
    if draw(st.booleans()):
        completions = draw(st.one_of(st.none(), st.integers(1, 3)))
        workloads.append(batch_job("batch", draw(st.integers(1, 2)), completions, 200))
    return dump(nodes + queues + jobs + pods + workloads)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(small_clusters())
def test_simulating_the_output_again_changes_nothing_settled(text: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        _round_trip(Path(directory), text)


# ---------------------------------------------------------------------- the round trip, timed

_RUN_SECONDS = "volcano-py.sim/run-seconds"


def _with_run_times(text: str, run_seconds: list[int], started: list[int]) -> str:
    """The cluster with a run time on each Volcano Job's tasks (in turn from ``run_seconds``)
    and a start time (seconds before the start, in turn from ``started``) on each bound pod,
    as a dump holds it."""
    objects = list(yaml.safe_load_all(text))
    for index, obj in enumerate(o for o in objects if o["kind"] == "Job" and "tasks" in o["spec"]):
        for task in obj["spec"]["tasks"]:
            annotations = task["template"].setdefault("metadata", {}).setdefault("annotations", {})
            annotations[_RUN_SECONDS] = str(run_seconds[index % len(run_seconds)])
    bound = [o for o in objects if o["kind"] == "Pod" and o["spec"].get("nodeName")]
    for index, pod in enumerate(bound):
        ago = started[index % len(started)]
        pod["status"] = {"phase": "Running", "startTime": _stamp(-ago)}
    return dump(objects)


def _stamp(seconds: int) -> str:
    moment = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _finished_at(pod: dict) -> str | None:
    statuses = pod["status"].get("containerStatuses") or [{}]
    terminated = (statuses[0].get("state") or {}).get("terminated")
    return terminated["finishedAt"] if terminated else None


def _timed_round_trip(directory: Path, text: str) -> None:
    """Simulate an hour, then the output from where it ended for another hour: what the first
    hour settled (finished pods) is unchanged, what was running goes on from its own start
    time (a run-seconds pod finishes at startTime + run-seconds, whichever run sees it), and
    nothing running at the second start is forecast as starting."""
    flags = ("--until", "1h", "--assume-runtime", "45m", *PLUGINS_DIR)
    first, first_report = yaml_and_report(directory, text, *flags)
    second, second_report = yaml_and_report(
        directory, first, "--start", "2026-01-01T01:00:00Z", *flags
    )
    before, after = by_key(first), by_key(second)
    for key, obj in before.items():
        if key[0] == "Pod" and obj["status"].get("phase") in ("Succeeded", "Failed"):
            assert key in after, key
            assert without_versions(after[key]) == without_versions(obj), key
    for key, pod in after.items():
        annotations = pod["metadata"].get("annotations") or {}
        finished = _finished_at(pod) if key[0] == "Pod" else None
        if finished is not None and _RUN_SECONDS in annotations:
            started = dt.datetime.fromisoformat(pod["status"]["startTime"])
            expected = started + dt.timedelta(seconds=int(annotations[_RUN_SECONDS]))
            assert finished == expected.strftime("%Y-%m-%dT%H:%M:%SZ"), key
    running_groups = {k for k, g in first_report["podgroups"].items() if g["phase"] == "Running"}
    assert not running_groups & set(second_report["starts"])
    assert all(when > "2026-01-01T01:00:00Z" for when in second_report["starts"].values())


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    small_clusters(),
    st.lists(st.sampled_from([30, 600, 1800, 4000]), min_size=1, max_size=3),
    st.lists(st.sampled_from([0, 600, 3600]), min_size=1, max_size=3),
)
def test_an_hour_then_another_from_the_output_keeps_what_the_first_settled(
    text: str, run_seconds: list[int], started: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        _timed_round_trip(Path(directory), _with_run_times(text, run_seconds, started))
