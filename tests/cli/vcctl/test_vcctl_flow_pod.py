"""``vcctl jobflow|jobtemplate ...`` and ``vcctl pod list`` against a real HTTP server.

Transcribed from upstream: pkg/cli/jobflow/jobflow_test.go ``TestListJobFlow``,
``TestGetJobFlow``, ``TestDeleteJobFlow`` (2 cases), ``TestCreateJobFlow``,
``TestDescribeJobFlow`` (yaml, json); pkg/cli/jobtemplate/jobtemplate_test.go the same six
for JobTemplate; pkg/cli/pod/pod_test.go ``TestListPod`` (6 cases),
``TestPrintPodsAllNamespaces``, ``TestPrintPodsWithoutNamespaceColumn``,
``TestPrintPodsHeaderDrivenWidth`` (2 cases), ``TestSortPods``, ``TestAppendIfNotExists``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.cli.vcctl.pod import pod_info, print_pods

FLOW = "/apis/flow.volcano.sh/v1alpha1/namespaces/default"
THREE_DAYS_AGO = (datetime.now(UTC) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")

FLOW_FILE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-a
  namespace: default
spec:
  jobRetainPolicy: delete   # After jobflow runs, keep the generated job. Otherwise, delete it.
  flows:
    - name: a
    - name: b
      dependsOn:
        targets: ['a']
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobFlow
metadata:
  name: test-b
  namespace: default
spec:
  jobRetainPolicy: delete
  flows:
    - name: a
---"""

TEMPLATE_FILE = """apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: a
  namespace: default
spec:
  minAvailable: 1
  schedulerName: volcano
  tasks:
    - replicas: 1
      name: "default-nginx"
      template:
        spec:
          containers:
            - image: nginx:1.14.2
              name: nginx
          restartPolicy: OnFailure
---
apiVersion: flow.volcano.sh/v1alpha1
kind: JobTemplate
metadata:
  name: b
spec:
  minAvailable: 1
---"""


def _flow(name: str = "test-jobflow") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": THREE_DAYS_AGO},
        "status": {"state": {"phase": "Succeed"}},
    }


# TestListJobFlow and TestGetJobFlow "Normal Case"
def test_list_and_get_jobflow(api, vcctl) -> None:
    expected = (
        "Name            Namespace    Phase      Age    \n"
        "test-jobflow    default      Succeed    3d"
    )
    api.on("GET", f"{FLOW}/jobflows", {"items": [_flow()]})
    api.on("GET", f"{FLOW}/jobflows/test-jobflow", _flow())
    assert vcctl("jobflow", "list", "-n", "default").out.strip() == expected
    assert vcctl("jobflow", "get", "-N", "test-jobflow").out.strip() == expected
    result = vcctl("jobflow", "get")
    assert result.out == (
        "Failed to get jobflow: name is mandatory to get the particular jobflow details\n"
    )


# jobtemplate_test.go TestListJobTemplate and TestGetJobTemplate "Normal Case"
def test_list_and_get_jobtemplate(api, vcctl) -> None:
    template = {"metadata": {"name": "test-jobtemplate", "namespace": "default"}}
    expected = "Name                Namespace    \ntest-jobtemplate    default"
    api.on("GET", f"{FLOW}/jobtemplates", {"items": [template]})
    api.on("GET", f"{FLOW}/jobtemplates/test-jobtemplate", template)
    assert vcctl("jobtemplate", "list").out.strip() == expected
    assert vcctl("jobtemplate", "get", "-N", "test-jobtemplate").out.strip() == expected


def test_list_jobflows_all_namespaces(api, vcctl) -> None:
    api.on("GET", "/apis/flow.volcano.sh/v1alpha1/jobflows", {"items": []})
    assert vcctl("jobflow", "list", "--all-namespaces").out == "No resources found\n"


# TestDeleteJobFlow / TestDeleteJobTemplate: by name, and every document of a file.
@pytest.mark.parametrize(
    ("group", "kind", "plural", "content", "names"),
    [
        ("jobflow", "JobFlow", "jobflows", FLOW_FILE, ["test-a", "test-b"]),
        ("jobtemplate", "JobTemplate", "jobtemplates", TEMPLATE_FILE, ["a", "b"]),
    ],
)
def test_delete(api, vcctl, tmp_path, group, kind, plural, content, names) -> None:
    api.on("GET", f"{FLOW}/{plural}/one", {"metadata": {"name": "one", "namespace": "default"}})
    for name in ["one", *names]:
        api.on("DELETE", f"{FLOW}/{plural}/{name}", {})
    result = vcctl(group, "delete", "-N", "one")
    assert (result.code, result.out) == (0, f"Deleted {kind}: default/one\n")
    path = tmp_path / "test.yaml"
    path.write_text(content)
    result = vcctl(group, "delete", "-f", str(path))
    assert result.out.strip() == "\n".join(f"Deleted {kind}: default/{n}" for n in names)


# TestCreateJobFlow / TestCreateJobTemplate: every document, namespace default when absent.
@pytest.mark.parametrize(
    ("group", "kind", "plural", "content", "names"),
    [
        ("jobflow", "JobFlow", "jobflows", FLOW_FILE, ["test-a", "test-b"]),
        ("jobtemplate", "JobTemplate", "jobtemplates", TEMPLATE_FILE, ["a", "b"]),
    ],
)
def test_create(api, vcctl, tmp_path, group, kind, plural, content, names) -> None:
    api.on("POST", f"{FLOW}/{plural}", {})
    path = tmp_path / "test.yaml"
    path.write_text(content)
    result = vcctl(group, "create", "-f", str(path))
    assert (result.code, result.out.strip()) == (
        0,
        "\n".join(f"Created {kind}: default/{n}" for n in names),
    )
    bodies = [r.body for r in api.made("POST")]
    assert [b["metadata"]["namespace"] for b in bodies] == ["default", "default"]
    assert all(b["kind"] == kind for b in bodies)


def test_create_reports_each_failed_document_and_exits_non_zero(api, vcctl, tmp_path) -> None:
    path = tmp_path / "test.yaml"
    path.write_text(FLOW_FILE)
    api.on("POST", f"{FLOW}/jobflows", {"message": "admission denied"}, status=400)
    result = vcctl("jobflow", "create", "-f", str(path))
    assert result.code == 255
    assert result.out == "Failed to create JobFlow: admission denied\n" * 2


# TestDescribeJobFlow / TestDescribeJobTemplate: yaml and json.
@pytest.mark.parametrize(
    ("group", "plural", "kind", "output_format", "expected"),
    [
        ("jobflow", "jobflows", "JobFlow", "yaml",
         "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobFlow\nmetadata:\n  name: test-jobflow\n"
         "  namespace: default\nspec: {}\nstatus:\n  state: {}"),
        ("jobflow", "jobflows", "JobFlow", "json",
         '{\n  "kind": "JobFlow",\n  "apiVersion": "flow.volcano.sh/v1alpha1",\n  "metadata": {\n'
         '    "name": "test-jobflow",\n    "namespace": "default"\n  },\n  "spec": {},\n'
         '  "status": {\n    "state": {}\n  }\n}'),
        ("jobtemplate", "jobtemplates", "JobTemplate", "yaml",
         "apiVersion: flow.volcano.sh/v1alpha1\nkind: JobTemplate\nmetadata:\n"
         "  name: test-jobflow\n  namespace: default\nspec: {}\nstatus: {}"),
        ("jobtemplate", "jobtemplates", "JobTemplate", "json",
         '{\n  "kind": "JobTemplate",\n  "apiVersion": "flow.volcano.sh/v1alpha1",\n'
         '  "metadata": {\n    "name": "test-jobflow",\n    "namespace": "default"\n  },\n'
         '  "spec": {},\n  "status": {}\n}'),
    ],
)  # fmt: skip
def test_describe(api, vcctl, group, plural, kind, output_format, expected) -> None:
    found = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": kind,
        "metadata": {"name": "test-jobflow", "namespace": "default", "managedFields": [{}]},
    }
    api.on("GET", f"{FLOW}/{plural}/test-jobflow", found)
    result = vcctl(group, "describe", "-N", "test-jobflow", "-o", output_format)
    assert (result.code, result.out.strip()) == (0, expected)


def test_describe_every_one_and_refuse_an_unknown_format(api, vcctl) -> None:
    api.on("GET", f"{FLOW}/jobflows", {"items": [_flow("a"), _flow("b")]})
    out = vcctl("jobflow", "describe").out
    assert out.count("kind") == 0 and "name: a" in out and "\n\n\nmetadata" in out
    result = vcctl("jobflow", "describe", "-o", "xml")
    assert (result.code, result.out) == (
        255,
        "Failed to describe jobflow: Unsupported format: xml\n",
    )


# ---------------------------------------------------------------------------------- pods

PODS = "/api/v1/namespaces/default/pods"


def build_pod(namespace: str, name: str, labels=None, annotations=None) -> dict[str, Any]:
    """pod_test.go buildPod."""
    return {
        "metadata": {
            "uid": f"{namespace}-{name}",
            "name": name,
            "namespace": namespace,
            "labels": labels or {},
            "annotations": annotations or {},
            "creationTimestamp": THREE_DAYS_AGO,
        },
        "spec": {"containers": [{"name": "my-container", "image": "nginx"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


JOB, QUEUE, QUEUE_ANNOTATION = (
    "volcano.sh/job-name",
    "volcano.sh/queue-name",
    "scheduling.volcano.sh/queue-name",
)
ONE_POD = (
    "Name          Ready      Status         Restart  Age       \n"
    "my-pod        0/1        Running        0        3d"
)
THREE_PODS = (
    "Name           Ready      Status         Restart  Age       \n"
    "my-pod1        0/1        Running        0        3d        \n"
    "my-pod2        0/1        Running        0        3d        \n"
    "my-pod3        0/1        Running        0        3d"
)

# pod_test.go TestListPod: (case, pods, job, queue, expected output or error)
LIST_POD_CASES = [
    ("Normal Case", [build_pod("default", "my-pod", {JOB: "my-job1"})], "", "", ONE_POD),
    ("Normal Case with namespace filter", [build_pod("default", "my-pod", {JOB: "my-job1"})], "",
     "", ONE_POD),
    ("Normal Case with jobName filter", [build_pod("default", "my-pod", {JOB: "my-job1"})],
     "my-job1", "", ONE_POD),
    ("Normal Case with queueName filter", [
        build_pod("default", "my-pod1", {QUEUE: "my-queue1"}),
        build_pod("default", "my-pod2", {JOB: "my-job2", QUEUE: "my-queue1"}),
        build_pod("default", "my-pod3", {}, {QUEUE_ANNOTATION: "my-queue1"}),
    ], "", "my-queue1", THREE_PODS),
    ("Normal Case with queueName filter and jobName filter",
     [build_pod("default", "my-pod1", {JOB: "my-job1", QUEUE: "my-queue1"})], "my-job1",
     "my-queue1",
     "Name           Ready      Status         Restart  Age       \n"
     "my-pod1        0/1        Running        0        3d"),
    ("Normal Case with queueName filter and jobName filter, and does not match",
     [build_pod("default", "my-pod1", {JOB: "my-job1", QUEUE: "my-queue1"})], "my-job1",
     "my-queue2", "Failed to list pod: the input vcjob my-job1 does not match the queue my-queue2"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "pods", "job", "queue", "expected"), LIST_POD_CASES, ids=[c[0] for c in LIST_POD_CASES]
)
def test_list_pod(api, vcctl, case, pods, job, queue, expected) -> None:
    api.on("GET", PODS, {"items": pods})
    result = vcctl("pod", "list", "-n", "default", "-j", job, "-q", queue)
    assert result.out.strip() == expected
    selector = api.requests[0].query.get("labelSelector")
    if job:
        assert selector == [f"{JOB} in ({job})"]
    elif queue:
        assert selector is None
    else:
        assert selector == [JOB]


def test_print_pods_all_namespaces() -> None:
    lines = print_pods(
        [build_pod("team-a", "worker-0"), build_pod("team-b", "worker-0")], True
    ).splitlines()
    assert len(lines) == 3 and lines[0].startswith("Namespace")
    assert lines[1].startswith("team-a") and "worker-0" in lines[1]
    assert lines[2].startswith("team-b") and "worker-0" in lines[2]


def test_print_pods_without_namespace_column() -> None:
    out = print_pods([build_pod("team-a", "worker-0")], False)
    assert "Namespace" not in out and out.startswith("Name")


@pytest.mark.parametrize(
    "pods", [[build_pod("a", "w")], []], ids=["single char namespace", "empty"]
)
def test_print_pods_header_driven_width(pods) -> None:
    assert print_pods(pods, True).startswith("Namespace ")


def test_sort_pods_and_append_if_not_exists(api, vcctl) -> None:
    # TestSortPods (through the command: rows come back grouped by namespace, then name) and
    # TestAppendIfNotExists (a pod matched by label and annotation is listed once).
    both = build_pod("team-a", "worker-0", {QUEUE: "q"}, {QUEUE_ANNOTATION: "q"})
    api.on(
        "GET",
        "/api/v1/pods",
        {
            "items": [
                build_pod("team-b", "worker-1", {QUEUE: "q"}),
                build_pod("team-a", "worker-1", {QUEUE: "q"}),
                build_pod("team-b", "worker-0", {}, {QUEUE_ANNOTATION: "q"}),
                both,
            ]
        },
    )
    rows = vcctl("pod", "list", "--all-namespaces", "-q", "q").out.splitlines()[1:]
    assert [tuple(r.split()[:2]) for r in rows] == [
        ("team-a", "worker-0"),
        ("team-a", "worker-1"),
        ("team-b", "worker-0"),
        ("team-b", "worker-1"),
    ]


@pytest.mark.parametrize(
    ("status", "spec_extra", "meta_extra", "ready", "shown"),
    [
        ({"phase": "Pending", "reason": ""}, {}, {}, "0/1", "Pending"),
        ({"phase": "Running", "containerStatuses": [
            {"ready": True, "state": {"running": {}}, "restartCount": 0}]}, {}, {}, "1/1",
         "Running"),
        ({"phase": "Pending", "containerStatuses": [
            {"state": {"waiting": {"reason": "ImagePullBackOff"}}}]}, {}, {}, "0/1",
         "ImagePullBackOff"),
        ({"phase": "Failed", "containerStatuses": [
            {"state": {"terminated": {"exitCode": 3}}}]}, {}, {}, "0/1", "ExitCode:3"),
        ({"phase": "Pending", "initContainerStatuses": [
            {"name": "init", "state": {"waiting": {"reason": "PodInitializing"}}}]},
         {"initContainers": [{"name": "init"}]}, {}, "0/1", "Init:0/1"),
        ({"phase": "Running"}, {}, {"deletionTimestamp": "2024-01-01T00:00:00Z"}, "0/1",
         "Terminating"),
        ({"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "reason": "SchedulingGated"}]}, {}, {}, "0/1",
         "SchedulingGated"),
    ],
)  # fmt: skip
def test_pod_status_as_kubectl(status, spec_extra, meta_extra, ready, shown) -> None:
    pod = {
        "metadata": {"name": "p", **meta_extra},
        "spec": {"containers": [{"name": "c"}], **spec_extra},
        "status": status,
    }
    info = pod_info(pod)
    assert (info.ready, info.status) == (ready, shown)
