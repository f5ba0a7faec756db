"""The distributed-framework job plugins: pytorch, tensorflow, mpi, ray, hcclrank.

Transcribed from upstream ``pkg/controllers/job/plugins/distributed-framework``:
``pytorch/pytorch_test.go`` (TestPytorchPodEnvAndPort, TestPytorchInitContainer),
``tensorflow/tensorflow_test.go`` (TestTensorflow), ``mpi/mpi_test.go`` (TestMpi,
TestMpiWithEmptyWorker), ``ray/ray_test.go`` (TestRayPlugin), ``hcclrank/hcclrank_test.go``
(TestGetEnv, TestHcclrankPlugin_OnPodCreate, ..._WithCustomTaskNames, OnJobAdd/Delete/Update);
then the same plugins through the whole job controller step (``sync_job``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from controller_fixtures import NOW, job, pod_group, task

from volcano_py.controllers.job import JobRequest, sync_job
from volcano_py.controllers.job_plugins import (
    HcclRankPlugin,
    MpiPlugin,
    PluginContext,
    PluginError,
    PytorchPlugin,
    RayPlugin,
    TensorflowPlugin,
    build_plugins,
)
from volcano_py.controllers.job_plugins.hcclrank import RANK_ANNOTATION, env_value
from volcano_py.controllers.job_plugins.pytorch import wait_for_master_script
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import JobChanges

TASK_SPEC = "volcano.sh/task-spec"
TASK_INDEX = "volcano.sh/task-index"


def _job(name: str, *tasks: tuple[str, int], **template_spec: Any) -> dict[str, Any]:
    """A bare job as upstream's tests build one: tasks with empty templates."""
    return {
        "metadata": {"name": name, "namespace": "default", "uid": "u1"},
        "spec": {
            "tasks": [
                {"name": n, "replicas": r, "template": {"spec": dict(template_spec)}}
                for n, r in tasks
            ]
        },
        "status": {"controlledResources": {}},
    }


def _pod(
    name: str,
    task_name: str | None = None,
    *,
    containers: list[dict[str, Any]] | None = None,
    init_containers: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    all_annotations = dict(annotations or {})
    if task_name is not None:
        all_annotations[TASK_SPEC] = task_name
    pod: dict[str, Any] = {
        "metadata": {"name": name, "annotations": all_annotations, "labels": dict(labels or {})},
        "spec": {"containers": containers if containers is not None else [{"name": "main"}]},
    }
    if init_containers is not None:
        pod["spec"]["initContainers"] = init_containers
    return pod


def _context(owner: dict[str, Any]) -> PluginContext:
    return PluginContext(owner, JobStatus.from_dict(owner.get("status", {})), JobChanges())


def _env(container: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["name"], e.get("value", "")) for e in container.get("env") or []]


# -- pytorch: TestPytorchPodEnvAndPort --------------------------------------------------------

MASTER_WORKER = (("master", 1), ("worker", 1))
MASTER_2WORKERS_EXTRA = (("master", 1), ("worker", 2), ("extra", 2))


@pytest.mark.parametrize(
    ("case", "tasks", "pod", "port", "envs"),
    [
        (
            "test pod without master",
            (("worker", 1),),
            _pod("test-pytorch-worker-0", containers=[{"name": "worker"}]),
            None,
            [],
        ),
        (
            "test master pod without port",
            MASTER_WORKER,
            _pod("test-pytorch-master-0", "master", containers=[{"name": "master"}]),
            23456,
            [
                ("MASTER_ADDR", "test-pytorch-master-0.test-pytorch"),
                ("MASTER_PORT", "23456"),
                ("WORLD_SIZE", "2"),
                ("RANK", "0"),
            ],
        ),
        (
            "test master pod with port",
            MASTER_WORKER,
            _pod(
                "test-pytorch-master-0",
                "master",
                containers=[
                    {
                        "name": "master",
                        "ports": [{"name": "pytorchjob-port", "containerPort": 23456}],
                    }
                ],
            ),
            23456,
            [
                ("MASTER_ADDR", "test-pytorch-master-0.test-pytorch"),
                ("MASTER_PORT", "23456"),
                ("WORLD_SIZE", "2"),
                ("RANK", "0"),
            ],
        ),
        (
            "test master pod env",
            MASTER_2WORKERS_EXTRA,
            _pod(
                "test-pytorch-master-0",
                "master",
                containers=[
                    {"name": "master", "ports": [{"name": "pytorchjob-port", "containerPort": 123}]}
                ],
            ),
            123,
            [
                ("MASTER_ADDR", "test-pytorch-master-0.test-pytorch"),
                ("MASTER_PORT", "23456"),
                ("WORLD_SIZE", "3"),
                ("RANK", "0"),
            ],
        ),
        (
            "test worker-1 pod env",
            MASTER_2WORKERS_EXTRA,
            _pod(
                "test-pytorch-worker-0",
                "worker",
                containers=[
                    {"name": "worker", "ports": [{"name": "pytorchjob-port", "containerPort": 123}]}
                ],
            ),
            123,
            [
                ("MASTER_ADDR", "test-pytorch-master-0.test-pytorch"),
                ("MASTER_PORT", "23456"),
                ("WORLD_SIZE", "3"),
                ("RANK", "1"),
            ],
        ),
        (
            "test worker-2 pod env",
            MASTER_2WORKERS_EXTRA,
            _pod(
                "test-pytorch-worker-1",
                "worker",
                containers=[
                    {"name": "worker", "ports": [{"name": "pytorchjob-port", "containerPort": 123}]}
                ],
            ),
            123,
            [
                ("MASTER_ADDR", "test-pytorch-master-0.test-pytorch"),
                ("MASTER_PORT", "23456"),
                ("WORLD_SIZE", "3"),
                ("RANK", "2"),
            ],
        ),
    ],
)
def test_pytorch_pod_env_and_port(
    case: str,
    tasks: tuple[tuple[str, int], ...],
    pod: dict[str, Any],
    port: int | None,
    envs: list[tuple[str, str]],
) -> None:
    owner = _job("test-pytorch", *tasks)
    PytorchPlugin([]).on_pod_create(pod, _context(owner))
    first = pod["spec"]["containers"][0]
    if port is None:
        assert "ports" not in first, case
    else:
        assert first["ports"][0]["containerPort"] == port, case
    assert _env(first) == envs, case


def test_pytorch_port_argument_and_hostname_subdomain() -> None:
    owner = _job("pt", ("master", 1), ("worker", 3), hostname="", subdomain="net")
    pod = _pod("pt-worker-2", "worker")
    PytorchPlugin(["--port=5000", "--master=master"]).on_pod_create(pod, _context(owner))
    container = pod["spec"]["containers"][0]
    assert container["ports"] == [{"name": "pytorchjob-port", "containerPort": 5000}]
    assert dict(_env(container)) == {
        "MASTER_ADDR": "pt-master-0.net",
        "MASTER_PORT": "5000",
        "WORLD_SIZE": "4",
        "RANK": "3",
    }


# -- pytorch: TestPytorchInitContainer ----------------------------------------------------------


def _wait_container(image: str, script: str) -> dict[str, Any]:
    return {"name": "wait-for-master", "image": image, "command": ["sh", "-c", script]}


DEFAULT_SCRIPT = wait_for_master_script("test-pytorch-master-0.test-pytorch", 23456, 300)


@pytest.mark.parametrize(
    ("case", "arguments", "tasks", "pod", "expected"),
    [
        (
            "worker pod with wait-master enabled should have init container",
            ["--wait-master-enabled=true"],
            (("master", 1), ("worker", 2)),
            _pod("test-pytorch-worker-0", "worker", containers=[{"name": "worker"}]),
            [_wait_container("busybox:1.36.1", DEFAULT_SCRIPT)],
        ),
        (
            "worker pod with wait-master disabled should not have init container",
            ["--wait-master-enabled=false"],
            (("master", 1), ("worker", 2)),
            _pod("test-pytorch-worker-0", "worker", containers=[{"name": "worker"}]),
            None,
        ),
        (
            "master pod should not have wait-for-master init container",
            ["--wait-master-enabled=true"],
            (("master", 1), ("worker", 2)),
            _pod("test-pytorch-master-0", "master", containers=[{"name": "master"}]),
            None,
        ),
        (
            "pod without master task should not have init container",
            ["--wait-master-enabled=true"],
            (("worker", 1),),
            _pod("test-pytorch-worker-0", "worker", containers=[{"name": "worker"}]),
            None,
        ),
        (
            "worker pod with existing wait-for-master init container should not add duplicate",
            ["--wait-master-enabled=true"],
            (("master", 1), ("worker", 2)),
            _pod(
                "test-pytorch-worker-0",
                "worker",
                containers=[{"name": "worker"}],
                init_containers=[_wait_container("busybox:1.36.1", "echo 'already exists'")],
            ),
            [_wait_container("busybox:1.36.1", "echo 'already exists'")],
        ),
        (
            "worker pod with custom image and timeout",
            [
                "--wait-master-enabled=true",
                "--wait-master-image=alpine:latest",
                "--wait-master-timeout=600",
            ],
            (("master", 1), ("worker", 2)),
            _pod("test-pytorch-worker-0", "worker", containers=[{"name": "worker"}]),
            [
                _wait_container(
                    "alpine:latest",
                    wait_for_master_script("test-pytorch-master-0.test-pytorch", 23456, 600),
                )
            ],
        ),
    ],
)
def test_pytorch_init_container(
    case: str,
    arguments: list[str],
    tasks: tuple[tuple[str, int], ...],
    pod: dict[str, Any],
    expected: list[dict[str, Any]] | None,
) -> None:
    PytorchPlugin(arguments).on_pod_create(pod, _context(_job("test-pytorch", *tasks)))
    assert pod["spec"].get("initContainers") == expected, case


def test_pytorch_wait_script_polls_the_master_port() -> None:
    script = wait_for_master_script("m-0.j", 23456, 300)
    assert "TIMEOUT=300" in script
    assert "nc -z m-0.j 23456 || echo > /dev/tcp/m-0.j/23456" in script


# -- tensorflow: TestTensorflow ----------------------------------------------------------------

TF_CLUSTER = (
    '{"cluster":{"ps":["train-123-ps-0.train-123:5000","train-123-ps-1.train-123:5000"],'
    '"worker":["train-123-worker-0.train-123:5000","train-123-worker-1.train-123:5000"],'
    '"chief":["train-123-chief-0.train-123:5000"]},'
)


@pytest.mark.parametrize(
    ("case", "pod_name", "task_name"),
    [
        ("ps case", "train-123-ps-0", "ps"),
        ("worker case", "train-123-worker-0", "worker"),
        ("chief case", "train-123-chief-0", "chief"),
    ],
)
def test_tensorflow(case: str, pod_name: str, task_name: str) -> None:
    owner = _job("train-123", ("ps", 2), ("worker", 2), ("chief", 1))
    pod = _pod(pod_name, task_name)
    TensorflowPlugin(["--port=5000"]).on_pod_create(pod, _context(owner))
    env = pod["spec"]["containers"][0]["env"]
    assert env[0]["name"] == "TF_CONFIG", case
    assert env[0]["value"] == TF_CLUSTER + f'"task":{{"type":"{task_name}","index":0}}}}', case


def test_tensorflow_standalone_job_gets_no_tf_config() -> None:
    pod = _pod("solo-worker-0", "worker")
    TensorflowPlugin([]).on_pod_create(pod, _context(_job("solo", ("worker", 1))))
    assert "env" not in pod["spec"]["containers"][0]


def test_tensorflow_renamed_roles_and_evaluator() -> None:
    owner = _job("tf", ("params", 1), ("trainer", 2), ("eval", 1))
    pod = _pod("tf-eval-0", "eval")
    plugin = TensorflowPlugin(["--ps=params", "--worker=trainer", "--evaluator=eval"])
    plugin.on_pod_create(pod, _context(owner))
    config = json.loads(pod["spec"]["containers"][0]["env"][0]["value"])
    assert config == {
        "cluster": {
            "ps": ["tf-params-0.tf:2222"],
            "worker": ["tf-trainer-0.tf:2222", "tf-trainer-1.tf:2222"],
            "evaluator": ["tf-eval-0.tf:2222"],
        },
        "task": {"type": "evaluator", "index": 0},
    }


# -- mpi: TestMpi, TestMpiWithEmptyWorker -----------------------------------------------------


@pytest.mark.parametrize(
    ("case", "arguments", "port"),
    [("add port", [], 22), ("add 5000 port", ["--port=5000"], 5000)],
)
def test_mpi(case: str, arguments: list[str], port: int) -> None:
    owner = _job("test-mpi-0", ("fakeMaster", 1), ("fakeWorker", 2))
    pod = _pod("test-mpi-fakeMaster-0", containers=[{"name": "master"}])
    MpiPlugin(arguments).on_pod_create(pod, _context(owner))
    assert pod["spec"]["containers"][0]["ports"][0]["containerPort"] == port, case


@pytest.mark.parametrize(
    ("case", "job_name", "tasks", "pod_task", "expected"),
    [
        (
            "master pod with no worker task - should not panic",
            "test-mpi-no-worker",
            (("master", 1),),
            "master",
            None,
        ),
        (
            "master pod with worker task having 0 replicas",
            "test-mpi-zero-worker",
            (("master", 1), ("worker", 0)),
            "master",
            "",
        ),
        (
            "master pod with valid worker task",
            "test-mpi-valid-worker",
            (("master", 1), ("worker", 2)),
            "master",
            "test-mpi-valid-worker-worker-0.test-mpi-valid-worker,"
            "test-mpi-valid-worker-worker-1.test-mpi-valid-worker",
        ),
        (
            "worker pod should not have MPI_HOST env var",
            "test-mpi-worker-pod",
            (("master", 1), ("worker", 1)),
            "worker",
            None,
        ),
    ],
)
def test_mpi_with_empty_worker(
    case: str,
    job_name: str,
    tasks: tuple[tuple[str, int], ...],
    pod_task: str,
    expected: str | None,
) -> None:
    pod = _pod(
        f"{job_name}-{pod_task}-0",
        pod_task,
        containers=[{"name": pod_task}],
        init_containers=[{"name": "init"}],
    )
    MpiPlugin([]).on_pod_create(pod, _context(_job(job_name, *tasks)))
    for container in [*pod["spec"]["containers"], *pod["spec"]["initContainers"]]:
        values = [value for key, value in _env(container) if key == "MPI_HOST"]
        assert values == ([] if expected is None else [expected]), case


def test_mpi_opens_the_port_in_init_containers_too_and_keeps_an_existing_one() -> None:
    owner = _job("m", ("master", 1), ("worker", 1))
    pod = _pod(
        "m-worker-0",
        "worker",
        containers=[{"name": "w", "ports": [{"name": "ssh", "containerPort": 22}]}],
        init_containers=[{"name": "init"}],
    )
    MpiPlugin([]).on_pod_create(pod, _context(owner))
    assert pod["spec"]["containers"][0]["ports"] == [{"name": "ssh", "containerPort": 22}]
    assert pod["spec"]["initContainers"][0]["ports"] == [
        {"name": "mpijob-port", "containerPort": 22}
    ]


def test_mpi_fixed_hostname_is_one_host() -> None:
    owner = _job("m", ("master", 1), ("worker", 3), hostname="shared", subdomain="net")
    pod = _pod("m-master-0", "master")
    MpiPlugin([]).on_pod_create(pod, _context(owner))
    assert _env(pod["spec"]["containers"][0]) == [("MPI_HOST", "shared.net")]


# -- ray: TestRayPlugin -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "arguments", "job_name", "tasks", "pod"),
    [
        (
            "ray cluster test with only head task",
            ["--port=1234", "--dashboardPort=3456", "--clientPort=4567", "--head=test-head"],
            "ray-cluster-test",
            (("test-head", 1),),
            _pod("ray-cluster-test-head-0", "test-head", containers=[{"name": "head"}]),
        ),
        (
            "ray cluster test with worker task",
            [],
            "ray-cluster-worker",
            (("head", 1), ("worker", 2)),
            _pod("ray-cluster-test-worker-0", "worker", containers=[{"name": "worker"}]),
        ),
    ],
)
def test_ray_plugin(
    case: str,
    arguments: list[str],
    job_name: str,
    tasks: tuple[tuple[str, int], ...],
    pod: dict[str, Any],
) -> None:
    owner = _job(job_name, *tasks)
    plugin = RayPlugin(arguments)
    context = _context(owner)
    plugin.on_pod_create(pod, context)
    container = pod["spec"]["containers"][0]
    if pod["metadata"]["annotations"][TASK_SPEC] == plugin.head:
        assert container["command"] == [
            "sh",
            "-c",
            f"ray start --head --block --dashboard-host=0.0.0.0 --port={plugin.port}"
            f" --dashboard-port={plugin.dashboard_port}"
            f" --ray-client-server-port={plugin.client_port}",
        ], case
        ports = {p["containerPort"] for p in container["ports"]}
        assert ports == {plugin.port, plugin.dashboard_port, plugin.client_port}, case
    else:
        assert container["command"] == [
            "sh",
            "-c",
            f"ray start --block --address={job_name}-head-0.{job_name}:{plugin.port}",
        ], case

    plugin.on_job_add(context)
    (service,) = context.changes.extra_objects
    assert service["metadata"]["name"] == f"{job_name}-head-svc"
    assert len(service["spec"]["ports"]) == 3
    assert service["spec"]["selector"][TASK_SPEC] == plugin.head
    assert context.status.controlled_resources["plugin-ray"] == "ray"

    plugin.on_job_delete(context)
    assert context.changes.delete_objects == [("Service", f"{job_name}-head-svc")]
    assert "plugin-ray" not in context.status.controlled_resources


def test_ray_without_head_task_fails_the_pod_creation() -> None:
    owner = _job("r", ("worker", 2))
    with pytest.raises(PluginError, match="doesn't have head task head"):
        RayPlugin([]).on_pod_create(_pod("r-worker-0", "worker"), _context(owner))


def test_ray_leaves_containers_of_other_names_alone() -> None:
    owner = _job("r", ("head", 1))
    pod = _pod("r-head-0", "head", containers=[{"name": "sidecar"}])
    RayPlugin([]).on_pod_create(pod, _context(owner))
    assert pod["spec"]["containers"] == [{"name": "sidecar"}]


# -- hcclrank: TestGetEnv, TestHcclrankPlugin_* -------------------------------------------------


@pytest.mark.parametrize(
    ("case", "containers", "expected"),
    [
        (
            "Find environment variable in first container",
            [
                {
                    "name": "c1",
                    "env": [{"name": "RANK", "value": "0"}, {"name": "OTHER", "value": "v"}],
                }
            ],
            "0",
        ),
        (
            "Find environment variable in second container",
            [
                {"name": "c1", "env": [{"name": "OTHER", "value": "v"}]},
                {"name": "c2", "env": [{"name": "RANK", "value": "1"}]},
            ],
            "1",
        ),
        (
            "Environment variable not found",
            [{"name": "c1", "env": [{"name": "OTHER", "value": "v"}]}],
            "",
        ),
        ("Empty containers list", [], ""),
    ],
)
def test_get_env(case: str, containers: list[dict[str, Any]], expected: str) -> None:
    assert env_value(_pod("p", containers=containers), "RANK") == expected, case


@pytest.mark.parametrize(
    ("case", "master", "worker", "pod", "tasks", "expected"),
    [
        (
            "Pod already has HCCL rank annotation",
            "master",
            "worker",
            _pod("test-pod", annotations={RANK_ANNOTATION: "1"}),
            (),
            "1",
        ),
        (
            "Pod has RANK environment variable",
            "master",
            "worker",
            _pod("test-pod", containers=[{"name": "c1", "env": [{"name": "RANK", "value": "5"}]}]),
            (),
            "5",
        ),
        (
            "Master pod with valid task index",
            "master",
            "worker",
            _pod("test-pod", "master", labels={TASK_INDEX: "2"}),
            (("master", 3), ("worker", 2)),
            "2",
        ),
        (
            "Worker pod with valid task index",
            "master",
            "worker",
            _pod("test-pod", "worker", labels={TASK_INDEX: "1"}),
            (("master", 2), ("worker", 3)),
            "3",
        ),
        (
            "Custom master pod",
            "custom-master",
            "custom-worker",
            _pod("test-pod", "custom-master", labels={TASK_INDEX: "3"}),
            (("custom-master", 4), ("custom-worker", 2)),
            "3",
        ),
        (
            "Custom worker pod",
            "custom-master",
            "custom-worker",
            _pod("test-pod", "custom-worker", labels={TASK_INDEX: "2"}),
            (("custom-master", 3), ("custom-worker", 4)),
            "5",
        ),
        (
            "Pod of another task gets no rank",
            "master",
            "worker",
            _pod("test-pod", "ps", labels={TASK_INDEX: "0"}),
            (("master", 1), ("ps", 1)),
            None,
        ),
    ],
)
def test_hcclrank_on_pod_create(
    case: str,
    master: str,
    worker: str,
    pod: dict[str, Any],
    tasks: tuple[tuple[str, int], ...],
    expected: str | None,
) -> None:
    plugin = HcclRankPlugin([f"--master={master}", f"--worker={worker}"])
    plugin.on_pod_create(pod, _context(_job("test-job", *tasks)))
    assert pod["metadata"]["annotations"].get(RANK_ANNOTATION) == expected, case


def test_hcclrank_without_task_index_label_fails_the_pod_creation() -> None:
    with pytest.raises(PluginError, match="task-index"):
        HcclRankPlugin([]).on_pod_create(
            _pod("p", "worker"), _context(_job("j", ("master", 1), ("worker", 1)))
        )


def test_hcclrank_job_hooks_keep_no_record() -> None:
    context = _context(_job("test-job", ("master", 1)))
    plugin = HcclRankPlugin([])
    plugin.on_job_add(context)
    plugin.on_job_update(context)
    plugin.on_job_delete(context)
    assert context.status.controlled_resources == {}
    assert not context.changes.extra_objects and not context.changes.delete_objects


# -- argument parsing -------------------------------------------------------------------------


def test_an_undefined_flag_keeps_earlier_values_and_is_reported() -> None:
    plugin = PytorchPlugin(["--port=5000", "--typo=1", "--master=boss"])
    assert plugin.port == 5000
    assert plugin.master == "master"  # parsing stopped at the bad flag, as Go's ContinueOnError
    assert plugin.argument_error == "plugin pytorch: flag provided but not defined: -typo"


def test_hcclrank_runs_after_pytorch_and_takes_its_rank() -> None:
    owner = job(
        "pt",
        task("master", 1),
        task("worker", 2),
        plugins={"hcclrank": [], "pytorch": [], "svc": []},
    )
    plugins, unknown = build_plugins(owner)
    assert unknown == []
    assert [p.name for p in plugins] == ["pytorch", "svc", "hcclrank"]


# -- through the job controller ---------------------------------------------------------------


def _created_pods(owner: dict[str, Any]) -> dict[str, dict[str, Any]]:
    group = pod_group(owner, phase="Inqueue")
    changes = sync_job(owner, group, [], JobRequest(event="OutOfSync"), now=NOW)
    return {pod["metadata"]["name"]: pod for pod in changes.create_pods}


def test_a_pytorch_job_gets_its_rendezvous_env_end_to_end() -> None:
    owner = job(
        "mnist",
        task("master", 1),
        task("worker", 2),
        plugins={"pytorch": ["--master=master", "--worker=worker", "--port=23456"], "svc": []},
        phase="Pending",
    )
    pods = _created_pods(owner)
    assert sorted(pods) == ["mnist-master-0", "mnist-worker-0", "mnist-worker-1"]
    ranks = {name: dict(_env(pod["spec"]["containers"][0]))["RANK"] for name, pod in pods.items()}
    assert ranks == {"mnist-master-0": "0", "mnist-worker-0": "1", "mnist-worker-1": "2"}
    master_env = dict(_env(pods["mnist-worker-1"]["spec"]["containers"][0]))
    assert master_env["MASTER_ADDR"] == "mnist-master-0.mnist"
    assert master_env["WORLD_SIZE"] == "3"


def test_a_ray_job_without_head_creates_no_pod_and_says_why() -> None:
    owner = job("r", task("worker", 2), plugins={"ray": []}, phase="Pending")
    group = pod_group(owner, phase="Inqueue")
    changes = sync_job(owner, group, [], JobRequest(event="OutOfSync"), now=NOW)
    assert changes.create_pods == []
    assert ("Warning", "PluginError", "job r doesn't have head task head") in changes.events


def test_a_bad_plugin_argument_is_reported_on_the_first_sync_only() -> None:
    fresh = job("j", task("worker", 1), plugins={"mpi": ["--prot=2222"]})
    fresh["status"] = {}
    first = sync_job(fresh, None, [], JobRequest(event="OutOfSync"), now=NOW)
    assert (
        "Warning",
        "PluginError",
        "plugin mpi: flag provided but not defined: -prot",
    ) in first.events
    later = job("j", task("worker", 1), plugins={"mpi": ["--prot=2222"]}, phase="Running")
    again = sync_job(
        later, pod_group(later, phase="Running"), [], JobRequest(event="OutOfSync"), now=NOW
    )
    assert not [e for e in again.events if e[1] == "PluginError"]
