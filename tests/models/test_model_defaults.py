"""Volcano's defaults: those the CRDs declare live in the models; those the mutating webhooks
compute from other fields come from volcano_py.models.defaults."""

from __future__ import annotations

from models_testdata import hypernode, job, podgroup, queue, task

from volcano_py.models.defaults import default_job, default_queue
from volcano_py.models.hypernode import HyperNode
from volcano_py.models.job import Job
from volcano_py.models.podgroup import PodGroup
from volcano_py.models.queue import Queue


def test_queue_defaults():
    spec = Queue.model_validate(queue()).spec
    assert spec.weight == 1
    assert spec.reclaimable is True  # nil means true (queue_info.go Reclaimable())
    assert spec.dequeue_strategy == "traverse"
    assert spec.priority == 0
    assert spec.parent is None
    assert spec.capability == spec.deserved == spec.guarantee.resource == {}


def test_defaults_are_not_written_back():
    # exclude_unset: a defaulted field is not "set", so dumping keeps the document as written.
    doc = queue()
    assert Queue.model_validate(doc).model_dump(exclude_unset=True) == doc


def test_podgroup_defaults():
    pg = PodGroup.model_validate(podgroup(subGroupPolicy=[{"name": "s"}], networkTopology={}))
    assert pg.spec.queue == "default"
    assert pg.spec.min_member == 0
    assert pg.spec.network_topology is not None
    assert pg.spec.network_topology.mode == "hard"
    assert pg.spec.sub_group_policy[0].sub_group_size == 1
    assert pg.spec.sub_group_policy[0].min_sub_groups == 0
    assert pg.status.phase is None


def test_job_defaults():
    model = Job.model_validate(
        job(task("a", partitionPolicy={"totalPartitions": 1, "partitionSize": 1}))
    )
    assert model.spec.queue == "default"
    assert model.spec.max_retry == 3
    assert model.spec.min_available == 0
    task_spec = model.spec.tasks[0]
    assert task_spec.max_retry == 3
    assert task_spec.min_available is None
    assert task_spec.partition_policy is not None
    assert task_spec.partition_policy.min_partitions == 0


def test_network_topology_mode_defaults_to_hard():
    model = Job.model_validate(job(networkTopology={"highestTierAllowed": 1}))
    assert model.spec.network_topology is not None
    assert model.spec.network_topology.mode == "hard"


def test_hypernode_status_defaults():
    model = HyperNode.model_validate(hypernode())
    assert model.status.node_count == 0
    assert model.status.conditions == []


def test_api_version_and_kind_are_filled_in():
    model = Queue.model_validate({"metadata": {"name": "q"}})
    assert (model.api_version, model.kind) == ("scheduling.volcano.sh/v1beta1", "Queue")
    assert Queue(metadata={"name": "q"}).model_dump(exclude_unset=True) == {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q"},
    }


def test_python_names_work_as_well_as_json_names():
    by_name = Queue.model_validate({"spec": {"dequeue_strategy": "fifo"}})
    by_alias = Queue.model_validate({"spec": {"dequeueStrategy": "fifo"}})
    assert by_name.spec.dequeue_strategy == by_alias.spec.dequeue_strategy == "fifo"
    assert by_name.spec.model_dump(exclude_unset=True) == {"dequeueStrategy": "fifo"}


# -- the job mutating webhook ---------------------------------------------------------------


def test_default_job_fills_what_the_webhook_fills():
    model = Job.model_validate(
        job(
            task("master", replicas=1),
            task(replicas=3, maxRetry=0),
            task(
                replicas=4,
                partitionPolicy={"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1},
            ),
            plugins={"mpi": []},
        )
    )
    spec = default_job(model).spec
    assert [t.name for t in spec.tasks] == ["master", "default1", "default2"]
    assert [t.min_available for t in spec.tasks] == [1, 3, 2]
    assert [t.max_retry for t in spec.tasks] == [3, 3, 3]
    assert spec.min_available == 6
    assert spec.scheduler_name == "volcano"
    assert spec.queue == "default"
    assert spec.max_retry == 3
    assert spec.plugins == {"mpi": [], "svc": [], "ssh": []}
    dumped = default_job(model).model_dump(exclude_unset=True)["spec"]
    assert dumped["queue"] == "default"
    assert dumped["tasks"][1]["name"] == "default1"


def test_default_job_keeps_what_the_user_set():
    model = Job.model_validate(
        job(
            task("a", replicas=4, minAvailable=2, maxRetry=7),
            minAvailable=3,
            schedulerName="other",
            queue="q1",
            maxRetry=9,
            plugins={"pytorch": ["--master=a"]},
        )
    )
    spec = default_job(model, scheduler_name="volcano").spec
    assert (spec.min_available, spec.scheduler_name, spec.queue, spec.max_retry) == (
        3,
        "other",
        "q1",
        9,
    )
    assert (spec.tasks[0].min_available, spec.tasks[0].max_retry) == (2, 7)
    assert spec.plugins == {"pytorch": ["--master=a"], "svc": []}


def test_default_job_sets_dns_policy_for_host_network_pods():
    host_task = task("a")
    host_task["template"]["spec"]["hostNetwork"] = True
    spec = default_job(Job.model_validate(job(host_task))).spec
    assert spec.tasks[0].template["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert host_task["template"]["spec"].get("dnsPolicy") is None  # the input is not mutated


def test_default_job_is_a_fixed_point():
    model = default_job(Job.model_validate(job(task(replicas=2))))
    assert default_job(model) == model


def test_default_queue_makes_defaults_explicit_and_roots_the_hierarchy():
    doc = queue()
    doc["metadata"]["annotations"] = {
        "volcano.sh/hierarchy": "a/b",
        "volcano.sh/hierarchy-weights": "2/3",
    }
    defaulted = default_queue(Queue.model_validate(doc))
    dumped = defaulted.model_dump(exclude_unset=True)
    assert dumped["spec"] == {"weight": 1, "reclaimable": True}
    assert dumped["metadata"]["annotations"] == {
        "volcano.sh/hierarchy": "root/a/b",
        "volcano.sh/hierarchy-weights": "1/2/3",
    }
    assert default_queue(defaulted) == defaulted
