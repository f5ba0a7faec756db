"""User guide ``how_to_use_env_plugin``: with the ``env`` job plugin every pod of a
TensorFlow job of 1 ps and 2 workers gets its index in its task as ``VK_TASK_INDEX`` and
``VC_TASK_INDEX`` (same value, 0 .. replicas-1)."""

from __future__ import annotations

from pathlib import Path

from tests.guides.guide_sim import env_of, node, pod, simulate, task, vcjob


def test_each_pod_gets_its_index_in_its_task(tmp_path: Path) -> None:
    job = vcjob(
        "tensorflow-dist-mnist",
        [task("ps", 1), task("worker", 2)],
        minAvailable=3,
        plugins={"env": [], "svc": []},
        policies=[{"event": "PodEvicted", "action": "RestartJob"}],
        queue="default",
    )
    report, objects, _ = simulate(tmp_path, [node("n1"), job])
    assert report["podgroups"]["default/tensorflow-dist-mnist"]["phase"] == "Running"
    for name, index in (("ps-0", "0"), ("worker-0", "0"), ("worker-1", "1")):
        env = env_of(pod(objects, f"tensorflow-dist-mnist-{name}"))
        assert (env["VK_TASK_INDEX"], env["VC_TASK_INDEX"]) == (index, index), name
