"""simulate refuses what the cluster refuses (issue 16 item 2): unknown and wrongly typed fields
named as the API server's strict field validation names them, the job webhook's validation
against the input's queues, the API server's metadata rules, and limits on absurd sizes; and
issue 18 item 5: only the pods of our schedulers are placed."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest
import yaml

from volcano_py.cli.main import main

NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1"},
    "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}},
}


def _container(cpu: object = "1") -> dict:
    return {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}


def _job(**spec: object) -> dict:
    body = {
        "minAvailable": 1,
        "tasks": [
            {"name": "t", "replicas": 1, "template": {"spec": {"containers": [_container()]}}}
        ],
    }
    body.update(spec)
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "j1"}, "spec": body}


def _pod(name: str = "p1", **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [_container()], **spec}}


@pytest.fixture(autouse=True)
def _own_logging():
    """As in its own process: simulate configures logging onto this test's stderr (an earlier
    test's handler may hold a captured stream that is closed by now)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _run(tmp_path: Path, capsys, *objects: dict, args: tuple[str, ...] = ()) -> tuple[int, str]:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([NODE, *objects]))
    code = main(["simulate", str(path), *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out if code == 0 else captured.err


# ---------------------------------------------------------------- strict field validation


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda j: j["spec"]["tasks"][0].update(templat=j["spec"]["tasks"][0].pop("template")),
         "spec.tasks[0].templat"),
        (lambda j: j["spec"].update(replicass=1), "spec.replicass"),
        (lambda j: j["metadata"].update(spec={}), "metadata.spec"),
        (lambda j: j["spec"]["tasks"][0]["template"]["spec"].update(imagePullPolicy="Always"),
         "spec.tasks[0].template.spec.imagePullPolicy"),
        (lambda j: j["spec"]["tasks"][0]["template"]["spec"]["containers"][0].update(imag="x"),
         "spec.tasks[0].template.spec.containers[0].imag"),
        (lambda j: j["spec"].update(volumes=[{"mountPath": "/d", "volumeClaim": {"storage": 1}}]),
         "spec.volumes[0].volumeClaim.storage"),
    ],
)
def test_unknown_job_fields_are_named_as_the_api_server_names_them(
    tmp_path, capsys, mutate, field
):
    job = _job()
    mutate(job)
    code, err = _run(tmp_path, capsys, job)
    assert code == 2
    assert f'Job default/j1: strict decoding error: unknown field "{field}"' in err


def test_queue_guarantee_with_a_resource_name_right_under_it(tmp_path, capsys):
    """how_to_use_dra_quota block 3: guarantee takes `resource:`, not resource names."""
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "gpu"},
             "spec": {"guarantee": {"deviceclass/gpu.nvidia.com": "1"}}}
    code, err = _run(tmp_path, capsys, queue)
    assert code == 2
    assert 'unknown field "spec.guarantee.deviceclass/gpu.nvidia.com"' in err


def test_unknown_fields_of_core_kinds(tmp_path, capsys):
    pod = _pod(schedulerName="volcano")
    pod["spec"]["nodeSelecter"] = {"a": "b"}
    code, err = _run(tmp_path, capsys, pod)
    assert code == 2
    assert 'Pod default/p1: strict decoding error: unknown field "spec.nodeSelecter"' in err
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replica": 2, "selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}},
                                        "spec": {"containers": [_container()]}}}}
    code, err = _run(tmp_path, capsys, deployment)
    assert code == 2
    assert 'unknown field "spec.replica"' in err


def test_every_unknown_field_is_listed(tmp_path, capsys):
    pod = _pod(schedulerName="volcano", foo=1, bar=2)
    code, err = _run(tmp_path, capsys, pod)
    assert code == 2
    assert 'unknown field "spec.bar", unknown field "spec.foo"' in err or (
        'unknown field "spec.foo", unknown field "spec.bar"' in err
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"activeDeadlineSeconds": "60"},
            'spec.activeDeadlineSeconds: expected an integer, got "60"',
        ),
        ({"hostNetwork": "yes"}, "spec.hostNetwork: expected a boolean"),
        ({"nodeSelector": ["a"]}, "spec.nodeSelector: expected a map"),
        ({"tolerations": {"key": "a"}}, "spec.tolerations: expected a list"),
    ],
)
def test_wrong_types_of_core_fields(tmp_path, capsys, spec, message):
    code, err = _run(tmp_path, capsys, _pod(schedulerName="volcano", **spec))
    assert code == 2
    assert f"Pod default/p1: {message}" in err


def test_wrong_types_of_volcano_fields(tmp_path, capsys):
    job = _job()
    job["spec"]["tasks"][0]["replicas"] = "3"
    code, err = _run(tmp_path, capsys, job)
    assert code == 2
    assert "spec.tasks[0].replicas" in err


# ---------------------------------------------------------------- the job webhook


def test_job_in_a_queue_that_does_not_exist(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, _job(queue="nosuch"))
    assert code == 2
    assert "Job default/j1: admission webhook denied the request: spec.queue: queue 'nosuch'" \
        " does not exist" in err


def test_job_in_a_closed_queue(tmp_path, capsys):
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "q"}, "spec": {"weight": 1}, "status": {"state": "Closed"}}
    code, err = _run(tmp_path, capsys, queue, _job(queue="q"))
    assert code == 2
    assert "can only submit job to queue with state `Open`, queue `q` status is `Closed`" in err


def test_job_in_the_root_queue(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, _job(queue="root"))
    assert code == 2
    assert "can not submit job to root queue" in err


def test_a_task_without_a_template(tmp_path, capsys):
    job = _job()
    del job["spec"]["tasks"][0]["template"]
    code, err = _run(tmp_path, capsys, job)
    assert code == 2
    assert "spec.tasks[0].template.spec.containers: Required value" in err


def test_a_running_job_of_a_dump_is_not_judged_again(tmp_path, capsys):
    """A dump's job was admitted when created; its queue may have closed since."""
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "q"}, "spec": {"weight": 1}, "status": {"state": "Closed"}}
    job = _job(queue="q", schedulerName="volcano")
    job["status"] = {"state": {"phase": "Running"}}
    code, _ = _run(tmp_path, capsys, queue, job)
    assert code == 0


# ---------------------------------------------------------------- metadata and limits


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (_pod("p" * 254), "metadata.name: Invalid value: \"ppp"),
        (_pod("Upper"), "a lowercase RFC 1123 subdomain"),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n" * 64}},
         "must be no more than 63 characters"),
        ({**_pod(), "metadata": {"name": "p", "labels": {"a": "v" * 64}}},
         "metadata.labels.a: Invalid value"),
        ({**_pod(), "metadata": {"name": "p", "labels": {"a/b/c": "v"}}}, "metadata.labels"),
    ],
)
def test_metadata_the_api_server_refuses(tmp_path, capsys, obj, message):
    code, err = _run(tmp_path, capsys, obj)
    assert code == 2
    assert message in err


@pytest.mark.parametrize(
    ("cpu", "message"),
    [
        ("1e30", "invalid quantity '1e30' for resource 'cpu': out of range"),
        ("99999999999999999Ei", "invalid quantity '99999999999999999Ei': out of range"),
        ("1x", "invalid quantity '1x'"),
        (True, "expected a quantity"),
    ],
)
def test_absurd_quantities_are_refused_with_the_reason(tmp_path, capsys, cpu, message):
    code, err = _run(tmp_path, capsys, _pod(schedulerName="volcano", containers=[_container(cpu)]))
    assert code == 2
    assert message in err
    code, err = _run(tmp_path, capsys, _job(tasks=[
        {"name": "t", "replicas": 1, "template": {"spec": {"containers": [_container(cpu)]}}}
    ]))
    assert code == 2
    assert "spec.tasks[0].template.spec.containers[0].resources.requests.cpu" in err


def test_a_huge_deployment_is_refused(tmp_path, capsys):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 200_000, "selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "b"}},
                                        "spec": {"containers": [_container()]}}}}
    code, err = _run(tmp_path, capsys, deployment)
    assert code == 2
    assert "spec.replicas: 200000 pods" in err


def test_int64_overflow_is_refused(tmp_path, capsys):
    code, err = _run(tmp_path, capsys, _pod(schedulerName="volcano", activeDeadlineSeconds=2**64))
    assert code == 2
    assert "does not fit in an int64" in err


# ---------------------------------------------------------------- --scheduler-name


def test_a_pod_without_scheduler_name_is_the_default_schedulers(tmp_path, capsys):
    code, out = _run(tmp_path, capsys, _pod("nosched"), _pod("ours", schedulerName="volcano"))
    assert code == 0
    report = json.loads(out)
    assert report["binds"] == {"default/ours": "n1"}
    reason = report["unschedulable"]["default/nosched"]
    assert "default-scheduler" in reason
    assert "without spec.schedulerName" in reason


def test_pods_of_other_schedulers_hold_their_resources(tmp_path, capsys):
    other = _pod("other", schedulerName="kube", nodeName="n1",
                 containers=[_container("7")])
    code, out = _run(tmp_path, capsys, other, _pod("ours", schedulerName="volcano",
                                                   containers=[_container("2")]))
    assert code == 0
    report = json.loads(out)
    assert report["binds"] == {}
    assert report["pods"]["default/ours"] == {"phase": "Pending", "node": None}
    assert "Insufficient cpu" in json.dumps(report["unschedulable"])


def test_scheduler_name_flag_decides_whose_pods_are_placed(tmp_path, capsys):
    code, out = _run(
        tmp_path, capsys, _pod("a", schedulerName="mine"), _pod("b", schedulerName="volcano"),
        args=("--scheduler-name", "mine"),
    )
    assert code == 0
    report = json.loads(out)
    assert report["binds"] == {"default/a": "n1"}
    assert "not ours (mine)" in report["unschedulable"]["default/b"]


def test_a_job_without_scheduler_name_gets_the_first_name(tmp_path, capsys):
    code, out = _run(
        tmp_path, capsys, _job(), args=("--scheduler-name", "mine", "--scheduler-name", "volcano",
                                        "--format", "yaml"),
    )
    assert code == 0
    listing = yaml.safe_load(out)
    job = next(item for item in listing["items"] if item["kind"] == "Job")
    assert job["spec"]["schedulerName"] == "mine"
    pods = [item for item in listing["items"] if item["kind"] == "Pod"]
    assert pods and all(pod["spec"]["nodeName"] == "n1" for pod in pods)


def test_too_many_objects_are_refused(tmp_path, capsys, monkeypatch):
    from volcano_py.sim import loader

    monkeypatch.setattr(loader, "MAX_OBJECTS", 3)
    items = [_pod(f"p{i}", schedulerName="volcano") for i in range(4)]
    path = tmp_path / "list.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    assert main(["simulate", str(path)]) == 2
    assert "more than 3 objects in the input" in capsys.readouterr().err


def test_a_file_that_is_not_text(tmp_path, capsys):
    path = tmp_path / "bin.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["simulate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8 text" in err and "Traceback" not in err


# ------------------------------------- upstream's TestValidateJobCreate, through simulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "controllers"))
from test_admission import CASES as UPSTREAM_JOB_REFUSALS  # noqa: E402


@pytest.mark.parametrize(
    ("name", "job", "message"), UPSTREAM_JOB_REFUSALS, ids=[c[0] for c in UPSTREAM_JOB_REFUSALS]
)
def test_upstream_job_refusals_are_refused_by_simulate(tmp_path, capsys, name, job, message):
    """Every refusing case of upstream's TestValidateJobCreate (admit_job_test.go), as
    tests/controllers/test_admission.py transcribes it, given to simulate: exit 2 naming the
    field (the models may answer before the webhook's logic, in their words)."""
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test"}}
    code, err = _run(tmp_path, capsys, namespace, job)
    assert code == 2, f"{name}: simulate took it"
    field = message.split(":")[0].split("[")[0]
    assert f"Job test/{job['metadata']['name']}: " in err
    assert field.split(".")[-1] in err or message in err, err


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path, capsys):
    """Nine lines of nested aliases are 387 million nodes once expanded; go-yaml refuses such a
    document ("excessive aliasing"), and so does simulate, without expanding it."""
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: bomb}", "data:",
             '  a: &a ["x","x","x","x","x","x","x","x","x"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"  {name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert main(["simulate", str(path)]) == 2
    assert "excessive aliasing" in capsys.readouterr().err


def test_a_new_pod_group_in_a_closed_queue(tmp_path, capsys):
    """The podgroup webhook: a new group's queue must be Open (one that does not exist is
    taken, as SIMULATION.md says, and the group stays unplaced)."""
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
             "metadata": {"name": "q"}, "spec": {"weight": 1}, "status": {"state": "Closed"}}
    group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
             "metadata": {"name": "pg"}, "spec": {"minMember": 1, "queue": "q"}}
    code, err = _run(tmp_path, capsys, queue, group)
    assert code == 2
    assert "PodGroup default/pg: spec.queue: admission webhook denied the request: can only" \
        " submit PodGroup to queue with state `Open`, queue `q` status is `Closed`" in err
    group["status"] = {"phase": "Running"}
    code, _ = _run(tmp_path, capsys, queue, group)
    assert code == 0
