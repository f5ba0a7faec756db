"""resourcequota plugin (``pkg/scheduler/plugins/resourcequota``) and the cache's ResourceQuota
records (``api/namespace_info.go``, ``cache/event_handlers.go``).

Transcribes upstream ``resourcequota_test.go``: ``TestResourceQuotaPlugin`` (all four cases)
and ``TestJobEnqueuedOnOtherPluginsReject``; adds the pending accounting within a session,
several quotas, exact name matching, the event, the cache's add/update/delete, a whole
enqueue session and a ``simulate`` run whose input carries a ResourceQuota.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.api.job import JobInfo
from volcano_py.api.types import Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingEventRecorder
from volcano_py.cli.main import main
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import resourcequota
from volcano_py.scheduler.registry import BUILTIN_PLUGINS, PluginRegistry

HUGE = resource_list("20000m", "20G")
NORMAL = resource_list("2000m", "2G")


def build_resource_quota(
    name: str, namespace: str, hard: Mapping[str, str], used: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``util.BuildResourceQuota``: spec.hard and status.hard alike (plus status.used)."""
    status: dict[str, Any] = {"hard": dict(hard)}
    if used is not None:
        status["used"] = dict(used)
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"hard": dict(hard)},
        "status": status,
    }


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]],
    recorder: RecordingEventRecorder | None = None,
) -> Session:
    cache = SchedulerCache(recorder=recorder or RecordingEventRecorder())
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("resourcequota", "enableJobEnqueued")
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"resourcequota": resourcequota.new}, cache)


# ------------------------------------------------------------------ TestResourceQuotaPlugin

PG1 = build_pod_group("pg1", "default", "c1", 2, min_resources=NORMAL)
PG2 = build_pod_group("pg2", "default", "c1", 2, min_resources=HUGE)
PG3 = build_pod_group("pg3", "default", "c1", 2)
RQ1 = build_resource_quota("test", "default", NORMAL)


@pytest.mark.parametrize(
    ("case", "pod_group", "quotas", "expected"),
    [
        ("ResourceQuota capacity can match the needs of this pg", PG1, [RQ1], True),
        ("ResourceQuota capacity can't match the needs of this pg", PG2, [RQ1], False),
        ("No ResourceQuota resource object", PG2, [], True),
        ("MinResources field of pg is not set", PG3, [RQ1], True),
    ],
)
def test_resource_quota_plugin(
    case: str, pod_group: dict[str, Any], quotas: list[dict[str, Any]], expected: bool
) -> None:
    """Upstream ``TestResourceQuotaPlugin``."""
    ssn = make_session(
        [
            ("Queue", build_queue("c1", 1)),
            ("PodGroup", pod_group),
            *(("ResourceQuota", quota) for quota in quotas),
        ]
    )
    assert ssn.jobs, case
    for job in ssn.jobs.values():
        assert ssn.job_enqueueable(job) is expected, case


# ------------------------------------------------------- TestJobEnqueuedOnOtherPluginsReject


class RejecterPlugin:
    """``uthelper.RejecterPlugin``: votes Reject on enqueue for one PodGroup by name."""

    name = "test-rejecter"

    def __init__(self, reject_job: str) -> None:
        self.reject_job = reject_job

    def on_session_open(self, ssn: Session) -> None:
        def enqueueable(job: JobInfo) -> Vote:
            return Vote.REJECT if job.name == self.reject_job else Vote.PERMIT

        ssn.add_job_enqueueable_fn(self.name, enqueueable)

    def on_session_close(self, ssn: Session) -> None:
        return None


def test_job_enqueued_on_other_plugins_reject() -> None:
    """Upstream ``TestJobEnqueuedOnOtherPluginsReject``: "pgA rejected by co-tier plugin must
    not consume ns1 quota; pgB must be admitted"."""
    one_cpu = resource_list("1", "1G")
    case = Case(
        name="pgA rejected by co-tier plugin must not consume ns1 quota; pgB must be admitted",
        plugins={
            "resourcequota": ["enableJobEnqueued"],
            "test-rejecter": ["enableJobEnqueued"],
        },
        nodes=[build_node("n1", resource_list("4", "4G", pods="10"))],
        pods=[
            build_pod("ns1", "podA", "", "Pending", one_cpu, "pgA"),
            build_pod("ns1", "podB", "", "Pending", one_cpu, "pgB"),
        ],
        pod_groups=[
            build_pod_group("pgA", "ns1", "q1", 1, phase="Pending", min_resources=one_cpu),
            build_pod_group("pgB", "ns1", "q1", 1, phase="Pending", min_resources=one_cpu),
        ],
        queues=[build_queue("q1", 1)],
        others=[("ResourceQuota", build_resource_quota("rq1", "ns1", one_cpu))],
        expect_status={"ns1/pgA": "Pending", "ns1/pgB": "Inqueue"},
    )
    registry = PluginRegistry({"test-rejecter": lambda _arguments: RejecterPlugin("pgA")})
    check(case, run_case(case, ["enqueue"], registry))


# ------------------------------------------------------------------ beyond upstream's tests


def test_registered_builtin() -> None:
    assert BUILTIN_PLUGINS["resourcequota"] == "volcano_py.plugins.resourcequota"
    assert PluginRegistry()["resourcequota"] is resourcequota.new
    assert not resourcequota.ARGUMENTS


def test_jobs_admitted_in_a_session_count_as_used() -> None:
    """JobEnqueued adds a job's minResources to the namespace's pending use: with 3 CPUs of
    quota and 1 used, one 2-CPU job gets in and the next does not; another namespace is not
    affected."""
    quota = build_resource_quota("rq", "ns", {"cpu": "3"}, used={"cpu": "1"})
    ssn = make_session(
        [
            ("Queue", build_queue("q1")),
            (
                "PodGroup",
                build_pod_group("a", "ns", "q1", 1, phase="Pending", min_resources={"cpu": "2"}),
            ),
            (
                "PodGroup",
                build_pod_group("b", "ns", "q1", 1, phase="Pending", min_resources={"cpu": "2"}),
            ),
            (
                "PodGroup",
                build_pod_group("c", "other", "q1", 1, phase="Pending", min_resources={"cpu": "2"}),
            ),
            ("ResourceQuota", quota),
        ]
    )
    first, second, elsewhere = ssn.jobs["ns/a"], ssn.jobs["ns/b"], ssn.jobs["other/c"]
    assert ssn.job_enqueueable(first)
    ssn.job_enqueued(first)
    assert not ssn.job_enqueueable(second)
    assert ssn.job_enqueueable(elsewhere)


def test_every_quota_of_the_namespace_must_have_room_and_the_event_names_it() -> None:
    recorder = RecordingEventRecorder()
    ssn = make_session(
        [
            ("Queue", build_queue("q1")),
            (
                "PodGroup",
                build_pod_group(
                    "pg", "ns", "q1", 1, phase="Pending", min_resources={"cpu": "2", "memory": "1G"}
                ),
            ),
            ("ResourceQuota", build_resource_quota("cpu-quota", "ns", {"cpu": "4"})),
            (
                "ResourceQuota",
                build_resource_quota("mem-quota", "ns", {"memory": "2G"}, used={"memory": "1.5G"}),
            ),
        ],
        recorder,
    )
    assert not ssn.job_enqueueable(ssn.jobs["ns/pg"])
    assert recorder.events == [
        (
            "PodGroup",
            "ns",
            "pg",
            "Normal",
            "Unschedulable",
            "resource quota insufficient, requested: map[memory:1G], used: map[memory:1.5G],"
            " limited: map[memory:2G]",
        )
    ]


def test_names_match_exactly() -> None:
    """``quotav1.Mask``: a quota on ``requests.cpu`` does not limit ``minResources.cpu``; one
    on ``pods`` limits ``minResources.pods``."""
    pod_group = build_pod_group(
        "pg", "ns", "q1", 1, phase="Pending", min_resources={"cpu": "8", "pods": "3"}
    )
    base = [("Queue", build_queue("q1")), ("PodGroup", pod_group)]
    by_requests = build_resource_quota("rq", "ns", {"requests.cpu": "1"})
    assert make_session([*base, ("ResourceQuota", by_requests)]).job_enqueueable(
        next(iter(make_session(base).jobs.values()))
    )
    by_pods = build_resource_quota("rq", "ns", {"pods": "2"})
    ssn = make_session([*base, ("ResourceQuota", by_pods)])
    assert not ssn.job_enqueueable(ssn.jobs["ns/pg"])


def test_flag_gates_both_hooks() -> None:
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("c1"))
    cache.apply_event("PodGroup", "ADDED", PG2)
    cache.apply_event("ResourceQuota", "ADDED", RQ1)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("resourcequota")])])
    ssn = open_session(cache.snapshot(), conf, {"resourcequota": resourcequota.new}, cache)
    assert ssn.job_enqueueable(ssn.jobs["default/pg2"])


def test_plugin_reads_no_arguments() -> None:
    plugin = resourcequota.new(Arguments({}))
    assert plugin.name == "resourcequota"


# ------------------------------------------------------------------ the cache


def test_cache_keeps_quota_status_per_namespace() -> None:
    """``updateResourceQuota`` / ``deleteResourceQuota``: the status is replaced on update,
    removed on delete; a bad quantity leaves the quota out, with no traceback."""
    cache = SchedulerCache()
    quota = build_resource_quota("rq", "ns", {"cpu": "2"}, used={"cpu": "1"})
    cache.apply_event("ResourceQuota", "ADDED", quota)
    info = cache.snapshot().namespace_info["ns"]
    assert info.name == "ns"
    assert {name: str(v) for name, v in info.quota_status["rq"].hard.items()} == {"cpu": "2"}
    updated = build_resource_quota("rq", "ns", {"cpu": "4"}, used={"cpu": "3"})
    cache.apply_event("ResourceQuota", "MODIFIED", updated)
    assert str(cache.snapshot().namespace_info["ns"].quota_status["rq"].used["cpu"]) == "3"
    cache.apply_event("ResourceQuota", "DELETED", updated)
    assert cache.snapshot().namespace_info["ns"].quota_status == {}
    broken = build_resource_quota("rq", "ns", {"cpu": "two"})
    cache.apply_event("ResourceQuota", "ADDED", broken)
    assert cache.snapshot().namespace_info["ns"].quota_status == {}


# ------------------------------------------------------------------ a whole session


def test_enqueue_session_admits_within_the_quota() -> None:
    """The enqueue action with resourcequota alone: of three 2-CPU jobs in a namespace with a
    5-CPU quota, two are admitted (in creation order) and the third stays Pending."""
    two = resource_list("2", "1G")
    case = Case(
        name="enqueue within quota",
        plugins={"resourcequota": ["enableJobEnqueued"]},
        nodes=[build_node("n1", resource_list("16", "16G", pods="10"))],
        pod_groups=[
            build_pod_group(
                f"pg{i}",
                "ns",
                "q1",
                1,
                phase="Pending",
                min_resources=two,
                creation_timestamp=f"2026-01-01T00:00:0{i}Z",
            )
            for i in range(3)
        ],
        pods=[build_pod("ns", f"p{i}", "", "Pending", two, f"pg{i}") for i in range(3)],
        queues=[build_queue("q1", 1)],
        others=[("ResourceQuota", build_resource_quota("rq", "ns", {"cpu": "5"}))],
        expect_status={"ns/pg0": "Inqueue", "ns/pg1": "Inqueue", "ns/pg2": "Pending"},
    )
    check(case, run_case(case, ["enqueue"]))


# ------------------------------------------------------------------ simulate

CONF = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: resourcequota
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


def _job(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "queue": "default",
            "tasks": [
                {
                    "name": "worker",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "busybox",
                                    "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}},
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }


def test_simulate_with_a_resource_quota(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two 2-CPU jobs in namespace ``team`` with a 3-CPU quota (no status: the simulator's
    quota controller fills it from the pods): the first runs, the second waits Pending, with
    the plugin's event naming the quota, though the node has room for both."""
    documents = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": "16", "memory": "32Gi", "pods": "110"}},
        },
        {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "team-quota", "namespace": "team"},
            "spec": {"hard": {"cpu": "3", "pods": "10"}},
        },
        _job("first", "2"),
        _job("second", "2"),
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": CONF},
        },
    ]
    path = tmp_path / "quota.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    assert main(["simulate", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["binds"]) == ["team/first-worker-0"]
    assert report["podgroups"]["team/second"]["phase"] == "Pending"
    assert report["jobs"]["team/first"]["phase"] == "Running"
    # status.used came from the first job's pod, as Kubernetes' quota controller reports it.
    assert report["unschedulable"]["team/second"] == (
        "resource quota insufficient, requested: map[cpu:2], used: map[cpu:2], limited: map[cpu:3]"
    )


def test_simulate_refuses_a_bad_quota_quantity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q", "namespace": "team"},
        "spec": {"hard": {"cpu": "lots"}},
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(quota))
    assert main(["simulate", str(path)]) == 2
    assert "ResourceQuota team/q: spec.hard.cpu: invalid quantity 'lots'" in capsys.readouterr().err


def test_simulated_quota_controller_counts_pods() -> None:
    """The simulator's stand-in for Kubernetes' quota controller: requests (a limit standing
    in), limits, init containers, pod counts; terminal pods do not count; a name it cannot
    compute keeps the input's value."""
    from volcano_py.sim.quota import QuotaStatusController

    def pod(name: str, phase: str, spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return f"ns/{name}", {"metadata": {"name": name}, "spec": spec, "status": {"phase": phase}}

    container = {
        "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    }
    init = {"resources": {"requests": {"cpu": "2"}}}
    pods = [
        pod("a", "Running", {"containers": [container, container]}),
        pod("b", "Pending", {"containers": [container], "initContainers": [init]}),
        pod("done", "Succeeded", {"containers": [container]}),
    ]
    hard = {
        "requests.cpu": "10",
        "cpu": "10",
        "limits.cpu": "10",
        "requests.memory": "10Gi",
        "pods": "9",
        "count/services": "3",
    }
    quota = {"metadata": {"name": "q", "namespace": "ns"}, "spec": {"hard": hard},
             "status": {"used": {"count/services": "1"}}}  # fmt: skip
    [updated] = QuotaStatusController().sync([("ns/q", quota)], pods)
    assert updated["status"] == {
        "hard": hard,
        "used": {
            "requests.cpu": "3",  # 0.5 + 0.5, then max(0.5, init 2)
            "cpu": "3",
            "limits.cpu": "3",
            "requests.memory": "3221225472",
            "pods": "2",
            "count/services": "1",
        },
    }
    assert QuotaStatusController().sync([("ns/q", updated)], pods) == []
