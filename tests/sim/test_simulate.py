"""`volcano-py simulate` as SIMULATION.md promises it: examples, errors, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from volcano_py.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def simulate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    code = main(["simulate", *args])
    captured = capsys.readouterr()
    report = json.loads(captured.out) if code == 0 and "--format" not in args else {}
    return code, report, captured.err


def test_gang_deadlock_one_job_gets_all_four_gpus(capsys):
    """Seed 001 §5.3: two jobs of four 1-GPU workers, four GPUs: one runs whole, one waits."""
    code, report, _ = simulate(capsys, str(EXAMPLES / "gang-deadlock.yaml"))
    assert code == 0
    assert report["podgroups"]["default/train-a"]["phase"] == "Running"
    assert report["podgroups"]["default/train-b"]["phase"] == "Pending"
    assert sorted(report["binds"]) == [f"default/train-a-worker-{i}" for i in range(4)]
    assert "nvidia.com/gpu" in report["unschedulable"]["default/train-b"]
    assert report["jobs"]["default/train-a"]["phase"] == "Running"


def test_three_queues_get_their_deserved_share(capsys):
    """Seed 000: weights 3/2/5 with guarantees and capabilities -> 30/20/50 CPU."""
    code, report, _ = simulate(capsys, str(EXAMPLES / "three-queues.yaml"))
    assert code == 0
    deserved = {
        q: report["queues"][q]["deserved"]["cpu"] for q in ("queue-a", "queue-b", "queue-c")
    }
    assert deserved == {"queue-a": "30", "queue-b": "20", "queue-c": "50"}
    allocated = {q: report["queues"][q]["allocated"]["cpu"] for q in deserved}
    assert allocated == deserved


@pytest.mark.parametrize("plugin", ["capacity", "proportion"])
def test_seed002_walkthrough_reclaims_job2(capsys, plugin):
    """Seed 002 使用样例: job2 reclaimed, job1 kept, job3 running (capacity and proportion)."""
    code, report, _ = simulate(capsys, str(EXAMPLES / f"seed002-reclaim-{plugin}.yaml"))
    assert code == 0
    assert report["evictions"] == ["default/job2-nginx-0"]
    assert report["pods"]["default/job1-nginx-0"]["phase"] == "Running"
    assert report["binds"] == {"default/job3-default0-0": "node-1"}
    assert report["pods"]["default/job3-default0-0"]["phase"] == "Running"
    assert report["queues"]["test"]["deserved"]["cpu"] == "3"


def test_output_is_byte_identical(capsys):
    outputs = set()
    for _ in range(2):
        assert main(["simulate", str(EXAMPLES / "gang-deadlock.yaml")]) == 0
        outputs.add(capsys.readouterr().out)
    assert len(outputs) == 1


def test_table_format_for_people(capsys):
    assert main(["simulate", str(EXAMPLES / "gang-deadlock.yaml"), "--format", "table"]) == 0
    out = capsys.readouterr().out
    assert "PODS BY NODE" in out and "why:" in out and "QUEUES" in out


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p1}\nspec:\n  containers:\n"
            "  - name: c\n    resources: {requests: {cpu: lots}}\n",
            "document 1: Pod default/p1: spec.containers[0].resources.requests.cpu: "
            "invalid quantity 'lots'",
        ),
        (
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
            "spec: {capability: {cpu: '2'}, guarantee: {resource: {cpu: '4'}}}\n",
            "Queue q: spec.guarantee.resource.cpu",
        ),
        (
            "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n"
            "spec: {tasks: []}\n",
            "Job default/j: spec.tasks",
        ),
        ("kind: Node\nmetadata: {name: n}\nstatus: [1, 2\n", "not valid YAML"),
        ("apiVersion: v1\nkind: Node\nmetadata: {}\n", "metadata.name: missing"),
    ],
)
def test_bad_input_names_file_object_and_field(tmp_path, capsys, document, message):
    path = tmp_path / "input.yaml"
    path.write_text(document)
    code, _, err = simulate(capsys, str(path))
    assert code == 2
    assert str(path) in err and message in err
    assert "Traceback" not in err


def test_unknown_action_in_conf_is_an_error(tmp_path, capsys):
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text('actions: "enqueue, alocate"\ntiers: []\n')
    code, _, err = simulate(capsys, str(EXAMPLES / "gang-deadlock.yaml"), "--conf", str(conf))
    assert code == 2 and "alocate" in err and str(conf) in err


def test_unknown_kind_warns_and_is_ignored(tmp_path, capsys):
    path = tmp_path / "input.yaml"
    path.write_text("apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n")
    code, report, err = simulate(capsys, str(path))
    assert code == 0 and "DaemonSet d" in err and "not simulated" in err
    assert report["binds"] == {}


def test_list_documents_and_missing_queue(tmp_path, capsys):
    """A `kind: List` is unpacked; a PodGroup naming an unknown queue stays unplaced, saying so."""
    path = tmp_path / "list.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n"
        "- {apiVersion: v1, kind: Node, metadata: {name: n1},"
        " status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}}\n"
        "- {apiVersion: scheduling.volcano.sh/v1beta1, kind: PodGroup,"
        " metadata: {name: pg, namespace: default}, spec: {minMember: 1, queue: nowhere}}\n"
        "- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default,"
        " annotations: {scheduling.k8s.io/group-name: pg}},"
        " spec: {schedulerName: volcano,"
        " containers: [{name: c, resources: {requests: {cpu: '1'}}}]}}\n"
    )
    code, report, _ = simulate(capsys, str(path))
    assert code == 0
    assert report["unschedulable"] == {"default/pg": 'queue "nowhere" does not exist'}
    assert report["pods"]["default/p"] == {"phase": "Pending", "node": None}


def test_bare_pod_gets_a_pod_group_and_runs(tmp_path, capsys):
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
        "spec: {schedulerName: volcano,"
        " containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
    )
    code, report, _ = simulate(capsys, str(path))
    assert code == 0
    assert report["binds"] == {"default/web": "n1"}
    assert report["pods"]["default/web"] == {"phase": "Running", "node": "n1"}
    assert report["unschedulable"] == {}


def test_run_cycles_annotation_completes_the_job(tmp_path, capsys):
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n---\n"
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: short}\n"
        "spec:\n  minAvailable: 2\n  tasks:\n  - name: worker\n    replicas: 2\n"
        "    template:\n      metadata: {annotations: {volcano-py.sim/run-cycles: '2'}}\n"
        "      spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
    )
    code, report, _ = simulate(capsys, str(path))
    assert code == 0
    assert report["jobs"]["default/short"]["phase"] == "Completed"
    assert {p["phase"] for p in report["pods"].values()} == {"Succeeded"}


def test_exact_cycles_and_stdin(capsys):
    text = (EXAMPLES / "gang-deadlock.yaml").read_text()
    result = subprocess.run(
        [sys.executable, "-m", "volcano_py", "simulate", "-", "--cycles", "1"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["cycles"] == 1
    # One cycle admits the gangs; the job controller creates pods after admission.
    assert report["binds"] == {}


def test_child_queue_above_its_parent_is_refused(tmp_path, capsys):
    path = tmp_path / "queues.yaml"
    path.write_text(
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: parent}\n"
        "spec: {capability: {cpu: '4'}}\n---\n"
        "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: child}\n"
        "spec: {parent: parent, capability: {cpu: '8'}}\n"
    )
    code, _, err = simulate(capsys, str(path))
    assert code == 2
    assert "Queue parent: spec.capability.cpu" in err
