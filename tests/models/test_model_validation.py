"""Each rule the CRD schemas and Volcano's admission webhooks enforce is refused with one line
naming the object, the field and the problem."""

from __future__ import annotations

import pytest
from models_testdata import (
    command,
    container,
    deep,
    hypernode,
    job,
    node_member,
    podgroup,
    queue,
    task,
)

from volcano_py.models.validation import ModelError, parse_object


def _with(doc, path, value):
    """A copy of ``doc`` with the field at ``path`` (a tuple of keys and indices) replaced."""
    doc = deep(doc)
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


def _template(*containers_, **pod_spec):
    return {"spec": {"containers": list(containers_), **pod_spec}}


BAD_QUEUES = [
    ("weight-zero", queue(weight=0), "spec.weight", "greater than or equal to 1"),
    ("weight-too-big", queue(weight=65536), "spec.weight", "less than or equal to 65535"),
    ("weight-as-text", queue(weight="3"), "spec.weight", "valid integer"),
    ("priority-negative", queue(priority=-1), "spec.priority", "greater than or equal to 0"),
    ("reclaimable-text", queue(reclaimable="yes"), "spec.reclaimable", "valid boolean"),
    ("bad-quantity", queue(capability={"cpu": "8x"}), "spec.capability.cpu", "invalid quantity"),
    (
        "bad-quantity-extended",
        queue(deserved={"nvidia.com/gpu": "two"}),
        "spec.deserved[nvidia.com/gpu]",
        "invalid quantity",
    ),
    ("quantity-bool", queue(deserved={"cpu": True}), "spec.deserved.cpu", "invalid quantity"),
    ("negative", queue(deserved={"cpu": "-1"}), "spec.deserved.cpu", "greater than or equal to 0"),
    (
        "guarantee-over-deserved",
        queue(deserved={"cpu": 2}, guarantee={"resource": {"cpu": "3"}}),
        "spec.guarantee.resource.cpu",
        "guarantee cpu (3) is greater than deserved cpu (2)",
    ),
    (
        "deserved-over-capability",
        queue(deserved={"memory": "2Gi"}, capability={"memory": "1Gi"}),
        "spec.deserved.memory",
        "deserved memory (2Gi) is greater than capability memory (1Gi)",
    ),
    (
        "guarantee-over-capability",
        queue(guarantee={"resource": {"cpu": "2"}}, capability={"cpu": "1500m"}),
        "spec.guarantee.resource.cpu",
        "greater than capability cpu (1500m)",
    ),
    ("parent-not-a-name", queue(parent="Bad_Parent"), "spec.parent", "should match pattern"),
    (
        "dequeue-strategy",
        queue(dequeueStrategy="lifo"),
        "spec.dequeueStrategy",
        "'fifo' or 'traverse'",
    ),
    (
        "state",
        {**queue(), "status": {"state": "Broken"}},
        "status.state",
        "'Open', 'Closed', 'Closing' or 'Unknown'",
    ),
    (
        "hierarchy-lengths",
        _with(
            queue(),
            ("metadata", "annotations"),
            {
                "volcano.sh/hierarchy": "root/a",
                "volcano.sh/hierarchy-weights": "1/2/3",
            },
        ),
        "metadata.annotations[volcano.sh/hierarchy-weights]",
        "as many parts",
    ),
    (
        "hierarchy-weight-zero",
        _with(
            queue(),
            ("metadata", "annotations"),
            {
                "volcano.sh/hierarchy": "root/a",
                "volcano.sh/hierarchy-weights": "1/0",
            },
        ),
        "metadata.annotations[volcano.sh/hierarchy-weights]",
        "must be greater than 0",
    ),
]

BAD_PODGROUPS = [
    ("min-member", podgroup(minMember=-1), "spec.minMember", "greater than or equal to 0"),
    ("queue-name", podgroup(queue="Default"), "spec.queue", "should match pattern"),
    (
        "min-resources",
        podgroup(minResources={"cpu": "1 core"}),
        "spec.minResources.cpu",
        "invalid quantity",
    ),
    (
        "tier-twice",
        podgroup(networkTopology={"highestTierAllowed": 1, "highestTierName": "leaf"}),
        "spec.networkTopology.highestTierName",
        "must not be set together with highestTierAllowed",
    ),
    (
        "tier-negative",
        podgroup(networkTopology={"highestTierAllowed": -1}),
        "spec.networkTopology.highestTierAllowed",
        "greater than or equal to 0",
    ),
    (
        "mode",
        podgroup(networkTopology={"mode": "strict"}),
        "spec.networkTopology.mode",
        "'hard' or 'soft'",
    ),
    (
        "subgroup-tier-twice",
        podgroup(
            subGroupPolicy=[
                {"name": "s", "networkTopology": {"highestTierAllowed": 1, "highestTierName": "x"}}
            ]
        ),
        "spec.subGroupPolicy[0].networkTopology.highestTierName",
        "must not be set together",
    ),
    (
        "subgroup-size",
        podgroup(subGroupPolicy=[{"subGroupSize": 0}]),
        "spec.subGroupPolicy[0].subGroupSize",
        "greater than or equal to 1",
    ),
    (
        "selector-operator",
        podgroup(
            subGroupPolicy=[
                {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}}
            ]
        ),
        "spec.subGroupPolicy[0].labelSelector.matchExpressions[0].operator",
        "unknown operator 'Is'",
    ),
    (
        "phase",
        {**podgroup(), "status": {"phase": "Done"}},
        "status.phase",
        "'Pending', 'Running', 'Unknown', 'Inqueue' or 'Completed'",
    ),
]


def _policy_job(*policies, where="job"):
    if where == "job":
        return job(task("a"), policies=list(policies))
    return job(task("a", policies=list(policies)))


BAD_JOBS = [
    ("no-spec", {k: v for k, v in job().items() if k != "spec"}, "spec", "Field required"),
    ("no-tasks", _with(job(), ("spec",), {"queue": "default"}), "spec.tasks", "Field required"),
    ("empty-tasks", _with(job(), ("spec", "tasks"), []), "spec.tasks", "at least 1 item"),
    (
        "replicas-negative",
        job(task("a", replicas=-1)),
        "spec.tasks[0].replicas",
        "greater than or equal to 0",
    ),
    ("replicas-float", job(task("a", replicas=1.5)), "spec.tasks[0].replicas", "valid integer"),
    (
        "task-min-available",
        job(task("a", replicas=2, minAvailable=3)),
        "spec.tasks[0].minAvailable",
        "minAvailable (3) is greater than replicas (2)",
    ),
    ("task-name", job(task("Worker_1")), "spec.tasks[0].name", "should match pattern"),
    ("task-name-long", job(task("a" * 64)), "spec.tasks[0].name", "at most 63 characters"),
    ("duplicate-task", job(task("a"), task("a")), "spec.tasks[1].name", "duplicated task name 'a'"),
    (
        "duplicate-default-name",
        job(task("default1"), task()),
        "spec.tasks[1].name",
        "duplicated task name 'default1'",
    ),
    (
        "job-min-available",
        job(task("a", replicas=2), task("b", replicas=1), minAvailable=4),
        "spec.minAvailable",
        "minAvailable (4) is greater than the total replicas of the tasks (3)",
    ),
    ("max-retry", job(task("a"), maxRetry=-1), "spec.maxRetry", "greater than or equal to 0"),
    ("min-success", job(task("a"), minSuccess=0), "spec.minSuccess", "greater than or equal to 1"),
    (
        "ttl",
        job(task("a"), ttlSecondsAfterFinished=-5),
        "spec.ttlSecondsAfterFinished",
        "greater than or equal to 0",
    ),
    ("queue", job(task("a"), queue="My Queue"), "spec.queue", "should match pattern"),
    (
        "running-estimate",
        job(task("a"), runningEstimate="2 hours"),
        "spec.runningEstimate",
        "invalid duration",
    ),
    (
        "event-and-exit-code",
        _policy_job({"event": "PodFailed", "exitCode": 1, "action": "RestartJob"}),
        "spec.policies[0].exitCode",
        "must not be set together with event/events",
    ),
    (
        "neither-event-nor-exit-code",
        _policy_job({"action": "RestartJob"}),
        "spec.policies[0]",
        "needs either event/events or exitCode",
    ),
    (
        "duplicate-event",
        _policy_job(
            {"event": "PodFailed", "action": "RestartJob"},
            {"events": ["PodEvicted", "PodFailed"], "action": "AbortJob"},
        ),
        "spec.policies[1].events",
        "event 'PodFailed' appears in more than one policy",
    ),
    (
        "any-event-not-alone",
        _policy_job(
            {"event": "*", "action": "AbortJob"}, {"event": "PodFailed", "action": "RestartJob"}
        ),
        "spec.policies",
        "a policy on event '*' must be the only event policy",
    ),
    (
        "exit-code-zero",
        _policy_job({"exitCode": 0, "action": "RestartJob"}),
        "spec.policies[0].exitCode",
        "0 is not a valid exit code",
    ),
    (
        "duplicate-exit-code",
        _policy_job({"exitCode": 3, "action": "RestartJob"}, {"exitCode": 3, "action": "AbortJob"}),
        "spec.policies[1].exitCode",
        "exit code 3 appears more than once",
    ),
    (
        "internal-event",
        _policy_job({"event": "OutOfSync", "action": "SyncJob"}),
        "spec.policies[0].event",
        "raised by the controller itself",
    ),
    (
        "internal-action",
        _policy_job({"event": "PodFailed", "action": "SyncJob"}),
        "spec.policies[0].action",
        "invalid policy action 'SyncJob'",
    ),
    (
        "unknown-event",
        _policy_job({"event": "PodExploded", "action": "RestartJob"}),
        "spec.policies[0].event",
        "Input should be '*', 'PodPending'",
    ),
    (
        "task-policy",
        _policy_job(
            {"events": ["TaskFailed"], "exitCode": 2, "action": "RestartTask"}, where="task"
        ),
        "spec.tasks[0].policies[0].exitCode",
        "must not be set together",
    ),
    (
        "policy-timeout",
        _policy_job({"event": "PodFailed", "action": "RestartJob", "timeout": "10"}),
        "spec.policies[0].timeout",
        "invalid duration '10'",
    ),
    (
        "unknown-plugin",
        job(task("a"), plugins={"horovod": []}),
        "spec.plugins.horovod",
        "unknown job plugin 'horovod'",
    ),
    (
        "mpi-master-missing",
        job(task("launcher"), task("worker"), plugins={"mpi": ["--master=chief"]}),
        "spec.plugins.mpi",
        "the mpi master task 'chief' is not among the tasks (launcher, worker)",
    ),
    (
        "mpi-default-master-missing",
        job(task("worker"), plugins={"mpi": []}),
        "spec.plugins.mpi",
        "the mpi master task 'master'",
    ),
    (
        "volume-neither",
        job(task("a"), volumes=[{"mountPath": "/data"}]),
        "spec.volumes[0]",
        "needs volumeClaimName (an existing PVC) or volumeClaim",
    ),
    (
        "volume-both",
        job(
            task("a"), volumes=[{"mountPath": "/data", "volumeClaimName": "pvc", "volumeClaim": {}}]
        ),
        "spec.volumes[0].volumeClaim",
        "must not be set together with volumeClaimName",
    ),
    (
        "volume-duplicate-path",
        job(
            task("a"),
            volumes=[
                {"mountPath": "/d", "volumeClaimName": "a"},
                {"mountPath": "/d", "volumeClaimName": "b"},
            ],
        ),
        "spec.volumes[1].mountPath",
        "duplicated mountPath '/d'",
    ),
    (
        "volume-claim-name",
        job(task("a"), volumes=[{"mountPath": "/d", "volumeClaimName": "My_PVC"}]),
        "spec.volumes[0].volumeClaimName",
        "not a valid PVC name",
    ),
    (
        "volume-mount-path",
        job(task("a"), volumes=[{"mountPath": "c:/d", "volumeClaimName": "a"}]),
        "spec.volumes[0].mountPath",
        "should match pattern",
    ),
    (
        "volume-no-mount-path",
        job(task("a"), volumes=[{"volumeClaimName": "a"}]),
        "spec.volumes[0].mountPath",
        "Field required",
    ),
    (
        "depends-on-unknown",
        job(task("a", dependsOn={"name": ["b"]})),
        "spec.tasks[0].dependsOn.name",
        "depends on 'b', which is not a task of this job",
    ),
    (
        "depends-on-cycle",
        job(task("a", dependsOn={"name": ["b"]}), task("b", dependsOn={"name": ["a"]})),
        "spec.tasks[0].dependsOn.name",
        "task dependencies form a cycle (a -> b -> a)",
    ),
    (
        "partition-replicas",
        job(task("a", replicas=5, partitionPolicy={"totalPartitions": 2, "partitionSize": 2})),
        "spec.tasks[0].replicas",
        "replicas (5) must equal partitionPolicy totalPartitions * partitionSize (2 * 2 = 4)",
    ),
    (
        "partition-min-available",
        job(
            task(
                "a",
                replicas=4,
                minAvailable=3,
                partitionPolicy={"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1},
            )
        ),
        "spec.tasks[0].minAvailable",
        "minAvailable (3) must equal partitionPolicy minPartitions * partitionSize (1 * 2 = 2)",
    ),
    (
        "partition-size",
        job(task("a", partitionPolicy={"totalPartitions": 1, "partitionSize": 0})),
        "spec.tasks[0].partitionPolicy.partitionSize",
        "greater than or equal to 1",
    ),
    (
        "partition-required",
        job(task("a", partitionPolicy={"partitionSize": 1})),
        "spec.tasks[0].partitionPolicy.totalPartitions",
        "Field required",
    ),
    (
        "partition-tier-twice",
        job(
            task(
                "a",
                partitionPolicy={
                    "totalPartitions": 1,
                    "partitionSize": 1,
                    "networkTopology": {"highestTierAllowed": 1, "highestTierName": "x"},
                },
            )
        ),
        "spec.tasks[0].partitionPolicy.networkTopology.highestTierName",
        "must not be set together",
    ),
    (
        "job-tier-twice",
        job(task("a"), networkTopology={"highestTierAllowed": 2, "highestTierName": "spine"}),
        "spec.networkTopology.highestTierName",
        "must not be set together",
    ),
    (
        "numa-fractional-cpu",
        job(
            task("a", topologyPolicy="single-numa-node", template=_template(container(cpu="500m")))
        ),
        "spec.tasks[0].template.spec.containers[0].resources.requests.cpu",
        "needs a whole number of CPUs in every container (got '500m')",
    ),
    (
        "numa-no-cpu",
        job(
            task("a", topologyPolicy="restricted", template=_template({"name": "c", "image": "i"}))
        ),
        "spec.tasks[0].template.spec.containers[0].resources.limits.cpu",
        "needs a whole number of CPUs",
    ),
    (
        "numa-policy",
        job(task("a", topologyPolicy="numa")),
        "spec.tasks[0].topologyPolicy",
        "'none', 'best-effort'",
    ),
    (
        "template-no-containers",
        job(task("a", template={"spec": {}})),
        "spec.tasks[0].template.spec.containers",
        "at least one container",
    ),
    (
        "template-quantity",
        job(task("a", template=_template(container(cpu="1x")))),
        "spec.tasks[0].template.spec.containers[0].resources.requests.cpu",
        "invalid quantity '1x'",
    ),
    (
        "template-limit-quantity",
        job(
            task(
                "a", template=_template({"name": "c", "resources": {"limits": {"memory": "lots"}}})
            )
        ),
        "spec.tasks[0].template.spec.containers[0].resources.limits.memory",
        "invalid quantity 'lots'",
    ),
    (
        "template-init-quantity",
        job(task("a", template=_template(container(), initContainers=[container(cpu=[1])]))),
        "spec.tasks[0].template.spec.initContainers[0].resources.requests.cpu",
        "invalid quantity [1]",
    ),
    (
        "template-containers-not-list",
        job(task("a", template={"spec": {"containers": {"name": "a"}}})),
        "spec.tasks[0].template.spec.containers",
        "must be a list",
    ),
    (
        "job-name-long",
        job(task("a"), name="j" * 64),
        "metadata.name",
        "must be no more than 63 characters",
    ),
    (
        "pod-name-long",
        job(task("t" * 40), name="j" * 30),
        "spec.tasks[0].name",
        "pod name '"
        + "j" * 30
        + "-"
        + "t" * 40
        + "-0' built from the job and task names must be no more than 63",
    ),
    (
        "wrong-kind-field",
        {**job(task("a")), "status": {"state": {"phase": "Sleeping"}}},
        "status.state.phase",
        "'Pending', 'Aborting'",
    ),
]

BAD_HYPERNODES = [
    ("tier-negative", hypernode(tier=-1), "spec.tier", "greater than or equal to 0"),
    (
        "tier-missing",
        _with(hypernode(), ("spec",), {"members": [node_member()]}),
        "spec.tier",
        "Field required",
    ),
    ("no-members", hypernode(members=[]), "spec.members", "at least 1 item"),
    (
        "members-missing",
        _with(hypernode(), ("spec",), {"tier": 1}),
        "spec.members",
        "Field required",
    ),
    (
        "no-selector-kind",
        hypernode(members=[{"type": "Node", "selector": {}}]),
        "spec.members[0].selector",
        "needs exactly one of exactMatch, regexMatch, labelMatch",
    ),
    (
        "two-selector-kinds",
        hypernode(
            members=[{"type": "Node", "selector": {"exactMatch": {"name": "a"}, "labelMatch": {}}}]
        ),
        "spec.members[0].selector",
        "(got exactMatch, labelMatch)",
    ),
    (
        "member-type",
        hypernode(members=[{"type": "Rack", "selector": {"exactMatch": {"name": "a"}}}]),
        "spec.members[0].type",
        "'Node' or 'HyperNode'",
    ),
    (
        "member-type-missing",
        hypernode(members=[{"selector": {"exactMatch": {"name": "a"}}}]),
        "spec.members[0].type",
        "Field required",
    ),
    (
        "exact-name",
        hypernode(members=[node_member("Node_1")]),
        "spec.members[0].selector.exactMatch.name",
        "should match pattern",
    ),
    (
        "exact-name-empty",
        hypernode(members=[node_member("")]),
        "spec.members[0].selector.exactMatch.name",
        "at least 1 character",
    ),
    (
        "regex",
        hypernode(members=[{"type": "Node", "selector": {"regexMatch": {"pattern": "node-[0-9"}}}]),
        "spec.members[0].selector.regexMatch.pattern",
        "invalid regular expression",
    ),
    (
        "label-values",
        hypernode(
            members=[
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {"matchExpressions": [{"key": "rack", "operator": "In"}]}
                    },
                }
            ]
        ),
        "spec.members[0].selector.labelMatch.matchExpressions[0].values",
        "operator In needs at least one value",
    ),
    (
        "label-exists-values",
        hypernode(
            members=[
                {
                    "type": "Node",
                    "selector": {
                        "labelMatch": {
                            "matchExpressions": [
                                {"key": "rack", "operator": "Exists", "values": ["a"]}
                            ]
                        }
                    },
                }
            ]
        ),
        "spec.members[0].selector.labelMatch.matchExpressions[0].values",
        "operator Exists takes no values",
    ),
    (
        "node-count",
        {**hypernode(), "status": {"nodeCount": -1}},
        "status.nodeCount",
        "greater than or equal to 0",
    ),
]

BAD_COMMANDS = [
    (
        "target-uid",
        command(target={"apiVersion": "v1", "kind": "Job", "name": "j"}),
        "target.uid",
        "Field required",
    ),
    ("action-type", command(action=3), "action", "valid string"),
]

CASES = [
    *(("Queue test", *case) for case in BAD_QUEUES),
    *(("PodGroup ns1/pg1", *case) for case in BAD_PODGROUPS),
    *((f"Job default/{case[1]['metadata']['name']}", *case) for case in BAD_JOBS),
    *(("HyperNode leaf-0", *case) for case in BAD_HYPERNODES),
    *(("Command ns1/cmd1", *case) for case in BAD_COMMANDS),
]


@pytest.mark.parametrize(
    ("label", "case", "doc", "path", "fragment"),
    CASES,
    ids=[f"{label.split()[0]}-{case}" for label, case, *_ in CASES],
)
def test_rule_is_refused_naming_object_and_field(label, case, doc, path, fragment):
    with pytest.raises(ModelError) as raised:
        parse_object(doc)
    message = str(raised.value)
    assert message.startswith(f"{label}: {path}: "), message
    if fragment is not None:
        assert fragment in message
    assert "\n" not in message
    assert "pydantic" not in message and "validation error" not in message
    assert raised.value.object_label == label
    assert raised.value.problems[0][0] == path


def test_the_unchanged_builders_are_valid():
    # The cases above each break one thing in these; they must be valid as built.
    for doc in (queue(), podgroup(), job(task("a")), hypernode(), command()):
        parse_object(doc)


def test_model_error_is_a_value_error_listing_every_problem():
    doc = queue(weight=0, priority=-1, capability={"cpu": "x"}, deserved={"cpu": "y"})
    with pytest.raises(ValueError, match=r"^Queue test: spec\.weight: ") as raised:
        parse_object(doc)
    error = raised.value
    assert isinstance(error, ModelError)
    assert [path for path, _ in error.problems] == [
        "spec.weight",
        "spec.capability.cpu",
        "spec.deserved.cpu",
        "spec.priority",
    ]
    assert str(error).endswith("(and 1 more)")


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (["not", "an", "object"], "document: expected a Kubernetes object (a mapping), got list"),
        ({"apiVersion": "v1"}, "document: kind: missing; every object needs apiVersion and kind"),
        (
            {
                "apiVersion": "scheduling.volcano.sh/v1alpha1",
                "kind": "Queue",
                "metadata": {"name": "q"},
            },
            "Queue q: apiVersion: expected apiVersion scheduling.volcano.sh/v1beta1, got "
            "'scheduling.volcano.sh/v1alpha1'",
        ),
        (
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "d", "namespace": "x"},
            },
            "Deployment x/d: kind: apps/v1 Deployment is not a Volcano kind volcano-py knows",
        ),
        (
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "metadata": {"generateName": "train-"},
                "spec": {"tasks": []},
            },
            "Job default/train-*: spec.tasks: ",
        ),
    ],
)
def test_documents_that_are_not_volcano_objects(doc, expected):
    with pytest.raises(ModelError) as raised:
        parse_object(doc)
    assert str(raised.value).startswith(expected)


def test_kind_mismatch_when_validating_a_model_directly():
    from volcano_py.models.queue import Queue

    with pytest.raises(ValueError, match="expected 'Queue' for a Queue, got 'Job'"):
        Queue.model_validate({"kind": "Job"})


def test_models_are_immutable():
    model = parse_object(queue())
    with pytest.raises(ValueError, match="frozen"):
        model.spec.weight = 5  # type: ignore[misc]
