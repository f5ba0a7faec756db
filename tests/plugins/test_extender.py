"""extender plugin (``pkg/scheduler/plugins/extender``).

Transcribed from upstream ``extender_test.go``: ``TestMaxBodySizeLimit2``, ``TestIsInterested``
(6 cases), ``TestHasManagedResources`` (8 cases), ``TestHasResourcesInList`` (7 cases). Then
every verb against a real HTTP server on 127.0.0.1 playing the extender, started by the test:
request bodies in upstream's JSON shape, answers and failures (with and without
``extender.ignorable``), and whole scheduling cycles steered by the extender.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode, Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.plugins import extender
from volcano_py.plugins.extender import (
    ExtenderPlugin,
    has_managed_resources,
    has_resources_in_list,
    is_interested,
)
from volcano_py.plugins.extender.client import (
    MAX_BODY_SIZE,
    ExtenderClient,
    ExtenderError,
    close_clients,
)
from volcano_py.scheduler.cycle import run_cycle
from volcano_py.scheduler.registry import PluginRegistry

Answer = Callable[[dict[str, Any]], tuple[int, Any]]


class FakeExtender(BaseHTTPRequestHandler):
    """POST /<verb>: records the JSON body, answers what ``answers[verb]`` returns."""

    protocol_version = "HTTP/1.1"  # keep-alive, as a Go extender serves
    # One send per answer, as a Go server writes it (separate header and body writes meet
    # the client's delayed ACK: 40 ms per call).
    wbufsize = -1
    answers: ClassVar[dict[str, Answer]] = {}
    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []
    raw: ClassVar[bytes | None] = None

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"null")
        verb = self.path.rsplit("/", 1)[-1]
        type(self).calls.append((verb, body))
        assert self.headers["Content-Type"] == "application/json"
        if self.raw is not None:
            payload = self.raw
            status = 200
        else:
            status, answer = self.answers.get(verb, lambda body: (404, {}))(body)
            payload = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def server() -> Iterator[str]:
    FakeExtender.answers = {}
    FakeExtender.calls = []
    FakeExtender.raw = None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeExtender)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        close_clients()
        httpd.shutdown()
        httpd.server_close()


def verbs(*names: str) -> dict[str, str]:
    return {f"extender.{name}Verb": name for name in names}


def calls(verb: str) -> list[dict[str, Any]]:
    return [body for name, body in FakeExtender.calls if name == verb]


# ---------------------------------------------------------------------- upstream tests


def test_max_body_size_limit_upstream(server: str) -> None:
    """``TestMaxBodySizeLimit2``: an answer over 10 MiB is refused."""
    FakeExtender.raw = b'{"padding":"' + b"a" * (MAX_BODY_SIZE + 1) + b'"}'
    client = ExtenderClient(server, 5.0)
    with pytest.raises(ExtenderError, match="http: request body too large"):
        client.send("test", {"task": {}, "node": {}})
    client.close()


def pod_with(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> Any:
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    return {"spec": spec}


def requests(**values: str) -> dict[str, Any]:
    return {"resources": {"requests": {k.replace("_", "/"): v for k, v in values.items()}}}


GPU = "nvidia.com/gpu"
AMD = "amd.com/gpu"


@pytest.mark.parametrize(
    ("case", "managed", "pod", "expected"),
    [
        (
            "empty managed resources - should return true",
            [],
            pod_with([{"resources": {"requests": {"cpu": "100m"}}}]),
            True,
        ),
        (
            "container has managed resource in requests",
            [GPU],
            pod_with([{"resources": {"requests": {"cpu": "100m", GPU: "1"}}}]),
            True,
        ),
        (
            "container has managed resource in limits",
            [GPU],
            pod_with([{"resources": {"limits": {GPU: "1"}}}]),
            True,
        ),
        (
            "init container has managed resource",
            [GPU],
            pod_with(
                [{"resources": {"requests": {"cpu": "100m"}}}],
                [{"resources": {"requests": {GPU: "1"}}}],
            ),
            True,
        ),
        (
            "no managed resources in containers",
            [GPU],
            pod_with([{"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]),
            False,
        ),
        (
            "multiple managed resources - one match",
            [GPU, AMD],
            pod_with([{"resources": {"requests": {"cpu": "100m", AMD: "1"}}}]),
            True,
        ),
    ],
)
def test_is_interested_upstream(
    case: str, managed: list[str], pod: Mapping[str, Any], expected: bool
) -> None:
    """``TestIsInterested``."""
    assert is_interested(frozenset(managed), pod) is expected, case
    plugin = extender.new(Arguments({"extender.managedResources": managed}))
    task = TaskInfo.from_pod({"metadata": {"name": "p", "namespace": "ns"}, **pod})
    assert plugin.interested(task) is expected, case


@pytest.mark.parametrize(
    ("case", "managed", "containers", "expected"),
    [
        ("no containers", [GPU], [], False),
        (
            "container with managed resource in requests",
            [GPU],
            [{"resources": {"requests": {GPU: "1"}}}],
            True,
        ),
        (
            "container with managed resource in limits",
            [GPU],
            [{"resources": {"limits": {GPU: "1"}}}],
            True,
        ),
        (
            "container with managed resource in both requests and limits",
            [GPU],
            [{"resources": {"requests": {GPU: "1"}, "limits": {GPU: "1"}}}],
            True,
        ),
        (
            "multiple containers - one has managed resource",
            [GPU],
            [{"resources": {"requests": {"cpu": "100m"}}}, {"resources": {"requests": {GPU: "1"}}}],
            True,
        ),
        (
            "container with no managed resources",
            [GPU],
            [{"resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
            False,
        ),
        ("empty resource requirements", [GPU], [{"resources": {}}], False),
        (
            "multiple managed resources - partial match",
            [GPU, AMD],
            [{"resources": {"requests": {GPU: "1", "intel.com/gpu": "1"}}}],
            True,
        ),
    ],
)
def test_has_managed_resources_upstream(
    case: str, managed: list[str], containers: list[dict[str, Any]], expected: bool
) -> None:
    """``TestHasManagedResources``."""
    assert has_managed_resources(frozenset(managed), containers) is expected, case


@pytest.mark.parametrize(
    ("case", "managed", "resources", "expected"),
    [
        ("empty resource list", [GPU], {}, False),
        ("nil resource list", [GPU], None, False),
        ("resource list contains managed resource", [GPU], {"cpu": "100m", GPU: "1"}, True),
        (
            "resource list contains no managed resources",
            [GPU],
            {"cpu": "100m", "memory": "128Mi"},
            False,
        ),
        (
            "resource list contains multiple managed resources",
            [GPU, AMD],
            {"cpu": "100m", GPU: "1", AMD: "1"},
            True,
        ),
        (
            "resource list contains one of multiple managed resources",
            [GPU, AMD],
            {"cpu": "100m", AMD: "1"},
            True,
        ),
        ("empty managed resources - should return false", [], {"cpu": "100m", GPU: "1"}, False),
    ],
)
def test_has_resources_in_list_upstream(
    case: str, managed: list[str], resources: Mapping[str, str] | None, expected: bool
) -> None:
    """``TestHasResourcesInList``."""
    assert has_resources_in_list(frozenset(managed), resources) is expected, case


# ---------------------------------------------------------------------- configuration


def test_arguments_constant_lists_upstream_keys() -> None:
    assert {
        "extender.urlPrefix",
        "extender.httpTimeout",
        "extender.onSessionOpenVerb",
        "extender.onSessionCloseVerb",
        "extender.predicateVerb",
        "extender.prioritizeVerb",
        "extender.preemptableVerb",
        "extender.reclaimableVerb",
        "extender.queueOverusedVerb",
        "extender.jobEnqueueableVerb",
        "extender.jobEnqueuedVerb",
        "extender.jobReadyVerb",
        "extender.allocateFuncVerb",
        "extender.deallocateFuncVerb",
        "extender.ignorable",
        "extender.managedResources",
    } == extender.ARGUMENTS


def test_config_defaults_and_values(caplog: pytest.LogCaptureFixture) -> None:
    config = extender.new(Arguments({})).config
    assert (config.url_prefix, config.http_timeout, config.ignorable) == ("", 1.0, False)
    config = extender.new(
        Arguments(
            {
                "extender.urlPrefix": "http://127.0.0.1:1",
                "extender.httpTimeout": "100ms",
                "extender.ignorable": "true",
                "extender.managedResources": "nvidia.com/gpu, amd.com/gpu",
                "extender.predicateVerb": "predicate",
            }
        )
    ).config
    assert config.http_timeout == pytest.approx(0.1)
    assert config.ignorable is True
    assert config.managed_resources == {GPU, AMD}
    assert config.verb("extender.predicateVerb") == "predicate"
    assert "should be a list" in caplog.text
    assert extender.new(Arguments({"extender.httpTimeout": "soon"})).config.http_timeout == 1.0


# ---------------------------------------------------------------------- sessions


def objects(pods: int = 1, requests: Mapping[str, str] | None = None) -> list[tuple[str, Any]]:
    wanted = dict(requests or resource_list("1", "1Gi"))
    return [
        ("Queue", build_queue("q1", 1)),
        ("PodGroup", build_pod_group("pg1", "c1", "q1", 1)),
        *(
            ("Node", build_node(n, resource_list("4", "8Gi", pods="10")))
            for n in ("n1", "n2", "n3")
        ),
        *(("Pod", build_pod("c1", f"p{i}", "", "Pending", wanted, "pg1")) for i in range(pods)),
    ]


def session(
    server: str,
    arguments: Mapping[str, Any],
    *flags: str,
    items: list[tuple[str, Any]] | None = None,
    actions: list[str] | None = None,
) -> tuple[SchedulerCache, Session]:
    cache = SchedulerCache()
    for kind, obj in items if items is not None else objects():
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags(
        "extender", *flags, arguments={"extender.urlPrefix": server, **arguments}
    )
    conf = SchedulerConf(actions=actions or [], tiers=[Tier([option])])
    ssn = open_session(
        cache.snapshot(),
        conf,
        {"extender": extender.new},
        cache,
        SchedulingState(clock=lambda: 5.0),
    )
    return cache, ssn


def first_task(ssn: Session) -> TaskInfo:
    return next(t for job in ssn.jobs.values() for t in job.tasks.values())


def test_session_open_and_close_bodies(server: str) -> None:
    FakeExtender.answers = {
        "onSessionOpen": lambda body: (200, {}),
        "onSessionClose": lambda body: (200, {}),
    }
    _, ssn = session(server, verbs("onSessionOpen", "onSessionClose"))
    close_session(ssn)
    (opened,) = calls("onSessionOpen")
    assert set(opened) == {"Jobs", "Nodes", "Queues", "NamespaceInfo", "RevocableNodes", "NodeList"}
    job = opened["Jobs"]["c1/pg1"]
    assert job["Queue"] == "q1" and job["MinAvailable"] == 1
    assert job["PodGroup"]["metadata"]["name"] == "pg1" and job["PodGroup"]["Version"] == "v1beta1"
    task = job["Tasks"]["c1-p0"]
    assert task["Name"] == "p0" and task["Status"] == 1  # Pending is 1 << 0
    assert task["Resreq"]["MilliCPU"] == 1000 and task["Pod"]["metadata"]["name"] == "p0"
    node = opened["Nodes"]["n2"]
    assert node["State"] == {"Phase": 1, "Reason": ""}
    assert node["Allocatable"]["Memory"] == 8 * 1024**3
    assert node["ResourceUsage"]["MetricsTime"] == "0001-01-01T00:00:00Z"
    assert opened["Queues"]["q1"]["Weight"] == 1
    assert calls("onSessionClose") == [{}]


def test_failed_session_open_registers_nothing_unless_ignorable(server: str) -> None:
    FakeExtender.answers = {"onSessionOpen": lambda body: (500, {})}
    arguments = verbs("onSessionOpen", "predicate", "jobReady")
    _, ssn = session(server, arguments, "enablePredicate", "enableJobReady")
    assert not ssn.has_hook("task_predicate") and not ssn.has_hook("job_ready")
    _, ssn = session(
        server, {**arguments, "extender.ignorable": True}, "enablePredicate", "enableJobReady"
    )
    assert ssn.has_hook("task_predicate") and ssn.has_hook("job_ready")


def test_predicate_per_node_with_code_and_message(server: str) -> None:
    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        name = body["node"]["Name"]
        assert body["task"]["Name"] == "p0"
        if name == "n1":
            return 200, {"status": "no GPU here", "code": 3}
        if name == "n2":
            return 200, {"status": "busy"}  # a message without a code means Error
        return 200, {"status": "", "code": 0}

    FakeExtender.answers = {"predicate": answer}
    _, ssn = session(server, verbs("predicate"), "enablePredicate")
    task = first_task(ssn)
    assert (
        ssn.predicate_fn(task, ssn.nodes["n1"])[0].code is StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE
    )
    busy = ssn.predicate_fn(task, ssn.nodes["n2"])[0]
    assert (busy.code, busy.reason, busy.plugin) == (StatusCode.ERROR, "busy", "extender")
    assert ssn.predicate_fn(task, ssn.nodes["n3"]) == ()
    assert len(calls("predicate")) == 3


def test_predicate_failure_is_an_error_unless_ignorable(server: str) -> None:
    FakeExtender.answers = {"predicate": lambda body: (503, {})}
    _, ssn = session(server, verbs("predicate"), "enablePredicate")
    (failure,) = ssn.predicate_fn(first_task(ssn), ssn.nodes["n1"])
    assert failure.code is StatusCode.ERROR
    assert (
        "failed predicate with extender at URL" in failure.reason and "code 503" in failure.reason
    )
    _, ssn = session(server, {**verbs("predicate"), "extender.ignorable": True}, "enablePredicate")
    assert ssn.predicate_fn(first_task(ssn), ssn.nodes["n1"]) == ()


def test_uninterested_tasks_never_reach_the_extender(server: str) -> None:
    arguments = {**verbs("predicate", "prioritize"), "extender.managedResources": [GPU]}
    _, ssn = session(server, arguments, "enablePredicate", "enableNodeOrder")
    task = first_task(ssn)
    assert ssn.predicate_fn(task, ssn.nodes["n1"]) == ()
    assert list(ssn.node_scores(task, np.arange(3, dtype=np.intp))) == [0, 0, 0]
    assert FakeExtender.calls == []


def test_prioritize_is_one_call_with_every_candidate(server: str) -> None:
    FakeExtender.answers = {
        "prioritize": lambda body: (200, {"nodeScore": {"n1": 1, "n3": 7.5}, "errorMessage": ""})
    }
    _, ssn = session(server, verbs("prioritize"), "enableNodeOrder")
    scores = ssn.node_scores(first_task(ssn), np.array([0, 2], dtype=np.intp))
    assert list(scores) == [1.0, 7.5]
    (body,) = calls("prioritize")
    assert [node["Name"] for node in body["nodes"]] == ["n1", "n3"]


def test_prioritize_error_scores_nothing(server: str) -> None:
    FakeExtender.answers = {"prioritize": lambda body: (200, {"errorMessage": "nope"})}
    _, ssn = session(server, verbs("prioritize"), "enableNodeOrder")
    assert list(ssn.node_scores(first_task(ssn), np.arange(3, dtype=np.intp))) == [0, 0, 0]


def test_preemptable_and_reclaimable_victims_are_the_sessions_tasks(server: str) -> None:
    items = [
        *objects(),
        ("PodGroup", build_pod_group("pg2", "c1", "q1", 1, phase="Running")),
        ("Pod", build_pod("c1", "v1", "n1", "Running", resource_list("1", "1Gi"), "pg2")),
        ("Pod", build_pod("c1", "v2", "n1", "Running", resource_list("1", "1Gi"), "pg2")),
    ]

    def answer(body: dict[str, Any]) -> tuple[int, Any]:
        picked = [task for task in body["evictees"] if task["Name"] == "v2"]
        return 200, {"status": 1, "victims": [*picked, {"UID": "unknown"}]}

    FakeExtender.answers = {
        "preemptable": answer,
        "reclaimable": lambda body: (200, {"status": -1}),
    }
    _, ssn = session(
        server,
        verbs("preemptable", "reclaimable"),
        "enablePreemptable",
        "enableReclaimable",
        items=items,
    )
    preemptor = ssn.jobs["c1/pg1"].tasks["c1-p0"]
    candidates = list(ssn.jobs["c1/pg2"].tasks.values())
    victims = ssn.preemptable(preemptor, candidates)
    assert [victim.name for victim in victims] == ["v2"]
    assert victims[0] is next(t for t in candidates if t.name == "v2")
    assert calls("preemptable")[0]["evictor"]["Name"] == "p0"
    assert ssn.reclaimable(preemptor, candidates) == []


def test_job_votes_queue_overused_job_ready_and_enqueued(server: str) -> None:
    FakeExtender.answers = {
        "jobEnqueueable": lambda body: (200, {"status": -1}),
        "jobEnqueued": lambda body: (200, {}),
        "queueOverused": lambda body: (200, {"Overused": True}),  # Go matches keys by case
        "jobReady": lambda body: (200, {"status": False}),
    }
    _, ssn = session(
        server,
        verbs("jobEnqueueable", "jobEnqueued", "queueOverused", "jobReady"),
        "enableJobEnqueued",
        "enabledOverused",
        "enableJobReady",
    )
    job = ssn.jobs["c1/pg1"]
    assert ssn.job_enqueueable(job) is False
    ssn.job_enqueued(job)
    assert ssn.overused(ssn.queues["q1"]) is True
    assert ssn.job_ready(job) is False
    assert calls("jobEnqueued")[0]["job"]["UID"] == "c1/pg1"
    assert calls("queueOverused")[0]["queue"]["Name"] == "q1"


def test_failures_of_job_and_queue_verbs(server: str) -> None:
    FakeExtender.answers = {}  # every verb answers 404
    arguments = verbs("jobEnqueueable", "queueOverused", "jobReady")
    flags = ("enableJobEnqueued", "enabledOverused", "enableJobReady")
    _, strict = session(server, arguments, *flags)
    job = strict.jobs["c1/pg1"]
    assert strict.job_enqueueable(job) is False
    assert strict.overused(strict.queues["q1"]) is True
    # Upstream answers ``!ignorable`` for both queueOverused and jobReady failures.
    assert strict.job_ready(job) is True
    _, lenient = session(server, {**arguments, "extender.ignorable": True}, *flags)
    job = lenient.jobs["c1/pg1"]
    assert lenient.job_enqueueable(job) is True
    assert lenient.overused(lenient.queues["q1"]) is False
    assert lenient.job_ready(job) is False


def test_votes_follow_the_sign_of_the_status() -> None:
    assert [extender._vote(code) for code in (-3, 0, 2)] == [Vote.REJECT, Vote.ABSTAIN, Vote.PERMIT]


def test_a_cycle_places_the_pod_where_the_extender_allows_and_prefers(server: str) -> None:
    """Predicate refuses n1, prioritize prefers n3 over n2; the allocate event reaches the
    extender with the chosen node."""
    FakeExtender.answers = {
        "predicate": lambda body: (
            200,
            {"status": "reserved", "code": 2} if body["node"]["Name"] == "n1" else {},
        ),
        "prioritize": lambda body: (200, {"nodeScore": {"n2": 10, "n3": 90}}),
        "allocate": lambda body: (200, {"errorMessage": ""}),
    }
    cache = SchedulerCache()
    for kind, obj in objects():
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags(
        "extender",
        "enablePredicate",
        "enableNodeOrder",
        arguments={
            "extender.urlPrefix": server,
            **verbs("predicate", "prioritize"),
            "extender.allocateFuncVerb": "allocate",
        },
    )
    gang = PluginOption.with_flags("gang", "enableJobReady", "enableJobPipelined")
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([gang, option])])
    run_cycle(cache, conf, PluginRegistry(), SchedulingState())
    assert cache.tasks["c1/p0"].node_name == "n3"
    assert [body["task"]["NodeName"] for body in calls("allocate")] == ["n3"]


def test_an_allocate_veto_leaves_the_pod_pending(server: str) -> None:
    FakeExtender.answers = {"allocate": lambda body: (200, {"errorMessage": "quota exceeded"})}
    cache = SchedulerCache()
    for kind, obj in objects():
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags(
        "extender",
        arguments={"extender.urlPrefix": server, "extender.allocateFuncVerb": "allocate"},
    )
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([option])])
    run_cycle(cache, conf, PluginRegistry(), SchedulingState())
    assert cache.tasks["c1/p0"].node_name == ""
    assert calls("allocate")


def test_an_unreachable_extender_fails_cleanly() -> None:
    plugin = extender.new(
        Arguments({"extender.urlPrefix": "http://127.0.0.1:9", "extender.predicateVerb": "p"})
    )
    assert isinstance(plugin, ExtenderPlugin)
    with pytest.raises(ExtenderError, match=r"extender at URL http://127\.0\.0\.1:9/p"):
        plugin.send("p", {})
