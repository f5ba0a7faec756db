"""``vcctl job ...`` and vsub, vjobs, vcancel, vsuspend, vresume against a real HTTP server.

Transcribed from upstream pkg/cli/job: list_test.go ``TestListJob`` (6 cases), view_test.go
``TestViewJob``, run_test.go ``TestCreateJob`` (2 cases), suspend_test.go
``TestSuspendJobJob``, resume_test.go ``TestResumeJob``, delete_test.go ``TestDeleteJob``;
pkg/cli/vcancel ``TestCancelJob``, pkg/cli/vsuspend ``TestSuspendJob``, pkg/cli/vresume
``TestResumeJob``.
"""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.cli.vcctl.job import print_events, print_job_info

JOBS = "/apis/batch.volcano.sh/v1alpha1/namespaces/default/jobs"
ALL_JOBS = "/apis/batch.volcano.sh/v1alpha1/jobs"
TITLE = (
    "Name       Creation       Phase       JobType     Replicas    Min   Pending   Running   "
    "Succeeded   Failed    Unknown     RetryCount"
)


def _job(name: str, namespace: str = "default", queue: str = "default", scheduler: str = ""):
    spec: dict[str, Any] = {"queue": queue}
    if scheduler:
        spec["schedulerName"] = scheduler
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


def _list(*jobs: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "JobList", "items": list(jobs)}


# list_test.go TestListJob: (case, response items, flags, expected output after TrimSpace)
LIST_CASES = [
    (
        "Normal Case",
        [_job("test-job")],
        [],
        "Name       Creation       Phase       JobType     Replicas    Min   Pending   Running   "
        "Succeeded   Failed    Unknown     RetryCount\n"
        "test-job   0001-01-01                 Batch       0           0     0         0         "
        "0           0         0           0",
    ),
    (
        "Normal Case with queueName filter",
        [_job("test-job"), _job("test-queue", queue="test-queue")],
        ["--queue", "test-queue"],
        "Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   "
        "Succeeded   Failed    Unknown     RetryCount\n"
        "test-queue   0001-01-01                 Batch       0           0     0         0         "
        "0           0         0           0",
    ),
    (
        "Normal Case with namespace filter",
        [_job("test-job"), _job("test-queue", queue="test-queue")],
        ["-n", "default"],
        "Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   "
        "Succeeded   Failed    Unknown     RetryCount\n"
        "test-job     0001-01-01                 Batch       0           0     0         0         "
        "0           0         0           0         \n"
        "test-queue   0001-01-01                 Batch       0           0     0         0         "
        "0           0         0           0",
    ),
    (
        "Normal Case with all namespace filter",
        [_job("test-job", namespace="kube-sysyem"), _job("test-queue", queue="test-queue")],
        ["--all-namespaces"],
        "Namespace     Name         Creation       Phase       JobType     Replicas    Min   "
        "Pending   Running   Succeeded   Failed    Unknown     RetryCount\n"
        "kube-sysyem   test-job     0001-01-01                 Batch       0           0     "
        "0         0         0           0         0           0         \n"
        "default       test-queue   0001-01-01                 Batch       0           0     "
        "0         0         0           0         0           0",
    ),
    (
        "Normal Case with scheduler filter",
        [
            _job("test-job", namespace="kube-sysyem", scheduler="test-scheduler"),
            _job("test-queue", queue="test-queue", scheduler="volcano"),
        ],
        ["--scheduler", "volcano"],
        "Name         Creation       Phase       JobType     Replicas    Min   Pending   Running   "
        "Succeeded   Failed    Unknown     RetryCount\n"
        "test-queue   0001-01-01                 Batch       0           0     0         0         "
        "0           0         0           0",
    ),
    (
        "Normal Case with selector filter",
        [
            _job("test-job", namespace="kube-sysyem", scheduler="test-scheduler"),
            _job("test-queue", queue="test-queue", scheduler="volcano"),
        ],
        ["--selector", "test-job"],
        "Name       Creation       Phase       JobType     Replicas    Min   Pending   Running   "
        "Succeeded   Failed    Unknown     RetryCount\n"
        "test-job   0001-01-01                 Batch       0           0     0         0         "
        "0           0         0           0",
    ),
]


@pytest.mark.parametrize(
    ("case", "items", "flags", "expected"), LIST_CASES, ids=[c[0] for c in LIST_CASES]
)
def test_list_job(api, vcctl, case, items, flags, expected) -> None:
    api.on("GET", JOBS, _list(*items))
    api.on("GET", ALL_JOBS, _list(*items))
    result = vcctl("job", "list", *flags)
    assert result.code == 0, result
    assert result.out.strip() == expected
    wanted = ALL_JOBS if "--all-namespaces" in flags else JOBS
    assert [r.path for r in api.requests] == [wanted]


def test_list_job_counts_and_type(api, vcctl) -> None:
    job = _job("mpi-job")
    job["metadata"]["labels"] = {"volcano.sh/job-type": "MPI"}
    job["metadata"]["creationTimestamp"] = "2024-03-01T10:00:00Z"
    job["spec"]["tasks"] = [{"replicas": 2}, {"replicas": 3}]
    job["status"] = {
        "state": {"phase": "Running"},
        "minAvailable": 5,
        "pending": 1,
        "running": 4,
        "retryCount": 2,
    }
    api.on("GET", JOBS, _list(job))
    line = vcctl("job", "list").out.splitlines()[1]
    assert line.split() == [
        "mpi-job",
        line.split()[1],
        "Running",
        "MPI",
        "5",
        "5",
        "1",
        "4",
        "0",
        "0",
        "0",
        "2",
    ]


def test_list_job_empty(api, vcctl) -> None:
    api.on("GET", JOBS, _list())
    assert vcctl("job", "list").out == "No resources found\n"


# view_test.go TestViewJob: the job and its events (prefix "<job>.") print without error.
VIEW_JOB = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {
        "name": "testJobWithLongLongLongName",
        "namespace": "test",
        "labels": {"LabelWithLongLongLongLongName": "LongLongLongLongLabelValue"},
        "annotations": {"AnnotationWithLongLongLongLongName": "LongLongLongLongAnnotationValue"},
    },
    "spec": {
        "tasks": [
            {
                "name": "taskWithLongLongLongLongName",
                "replicas": 2147483647,
                "template": {
                    "metadata": {},
                    "spec": {
                        "containers": [
                            {"command": ["echo", "123"], "ports": [{"name": "placeholder"}]}
                        ],
                        "imagePullSecrets": [{"name": "imagepull-secret"}],
                    },
                },
            }
        ],
    },
    "status": {
        "succeeded": 1,
        "pending": 3,
        "running": 1,
        "failed": 2,
        "unknown": 10,
        "terminating": 4,
        "retryCount": 5,
        "minAvailable": 6,
        "version": 7,
        "controlledResources": {"svc": ""},
    },
}


def test_view_job(api, vcctl) -> None:
    api.on("GET", "/apis/batch.volcano.sh/v1alpha1/namespaces/test/jobs/testJob", VIEW_JOB)
    api.on(
        "GET",
        "/api/v1/namespaces/test/events",
        {
            "items": [
                {"metadata": {"name": "testJobWithLongLongLongName.123"}, "count": 1},
                {
                    "metadata": {"name": "testJobWithLongLongLongName.456"},
                    "count": 2,
                    "firstTimestamp": "2024-01-01T00:00:00Z",
                },
                {"metadata": {"name": "otherJob.789"}, "count": 1},
            ]
        },
    )
    result = vcctl("job", "view", "-n", "test", "-N", "testJob")
    assert result.code == 0, result
    lines = result.out.splitlines()
    assert lines[:6] == [
        "Name:       \ttestJobWithLongLongLongName",
        "Namespace:  \ttest",
        'Labels:     \t{"LabelWithLongLongLongLongName":"LongLongLongLongLabelValue"}',
        'Annotations:\t{"AnnotationWithLongLongLongLongName":"LongLongLongLongAnnotationValue"}',
        "API Version:\tbatch.volcano.sh/v1alpha1",
        "Kind:       \tJob",
    ]
    assert "    Replicas:\t2147483647" in lines
    assert "            echo" in lines and "            123" in lines
    assert "              Cpu:   \t0" in lines
    assert "          Name:     \timagepull-secret" in lines
    status = lines[lines.index("Status:") :]
    assert status[:13] == [
        "Status:",
        "  Succeeded:    \t1",
        "  Pending:      \t3",
        "  Running:      \t1",
        "  Failed:       \t2",
        "  Terminating:  \t4",
        "  Unknown:      \t10",
        "  RetryCount:   \t5",
        "  Min Available:\t6",
        "  Version:      \t7",
        "  State:",
        "    Phase:\t",
        "  Controlled Resources:",
    ]
    events = result.out[result.out.index("Events:") :].splitlines()
    assert events[0] == "Events:"
    assert events[1].split("\t") == [
        f"{'Type':<15}",
        f"{'Reason':<40}",
        f"{'Age':<30}",
        f"{'Form':<40}",
        "Message",
    ]
    assert events[2].split("\t")[0] == "-------        "
    assert len(events) == 5  # two rows: the other job's event is left out
    assert "<unknown>" in events[3]  # no firstTimestamp: a zero time
    assert "<unknown> (x2 over " in events[4]  # no lastTimestamp


def test_view_job_requires_a_name(api, vcctl) -> None:
    result = vcctl("job", "view")
    assert result.code == 255
    assert result.out == (
        "Failed to view job: job name (specified by --name or -N) is mandatory to view a "
        "particular job\n"
    )


def test_view_job_not_found_is_the_servers_message(api, vcctl) -> None:
    api.on(
        "GET",
        f"{JOBS}/gone",
        {
            "kind": "Status",
            "message": 'jobs.batch.volcano.sh "gone" not found',
            "reason": "NotFound",
        },
        status=404,
    )
    result = vcctl("job", "view", "-N", "gone")
    assert (result.code, result.out) == (
        255,
        'Failed to view job: jobs.batch.volcano.sh "gone" not found\n',
    )


def test_print_events_none() -> None:
    assert print_events([]) == "Events: \t<none>\n"


def test_print_job_info_conditions_only_in_vcctl() -> None:
    job = {
        "status": {
            "conditions": [{"status": "Running", "lastTransitionTime": "2024-01-01T00:00:00Z"}]
        }
    }
    assert "Conditions:\n    Status\tTransitionTime\n    Running \t" in print_job_info(job)
    assert "Conditions" not in print_job_info(job, conditions=False)


# run_test.go TestCreateJob: from flags, and from a file.
def test_create_job_from_flags(api, vcctl) -> None:
    api.on(
        "POST",
        "/apis/batch.volcano.sh/v1alpha1/namespaces/test/jobs",
        {"metadata": {"name": "test"}},
    )
    result = vcctl("job", "run", "-N", "test", "-n", "test", "-R", "cpu=1000m,memory=100Mi")
    assert (result.code, result.out) == (0, "run job test successfully\n")
    (post,) = api.made("POST")
    assert post.body == {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "test", "namespace": "test"},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": 1,
            "tasks": [
                {
                    "replicas": 1,
                    "template": {
                        "metadata": {"name": "test", "labels": {"job.volcano.sh": "test"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "test",
                                    "image": "busybox",
                                    "resources": {
                                        "limits": {"cpu": "1", "memory": "100Mi"},
                                        "requests": {"cpu": "1", "memory": "100Mi"},
                                    },
                                    "imagePullPolicy": "IfNotPresent",
                                }
                            ],
                            "restartPolicy": "Never",
                        },
                    },
                }
            ],
        },
    }


def test_create_job_with_file(api, vcctl, tmp_path) -> None:
    path = tmp_path / "testCreateJob.yaml"
    path.write_text("metadata:\n  name: from-file\nspec:\n  minAvailable: 3\n")
    api.on("POST", JOBS, {"metadata": {"name": "from-file"}})
    result = vcctl("job", "run", "-f", str(path))
    assert (result.code, result.out) == (0, "run job from-file successfully\n")
    assert api.made("POST")[0].body["spec"] == {"minAvailable": 3}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "job name cannot be left blank"),
        (["-N", "x", "-R", "cpu"], "invalid argument syntax cpu, expected <resource>=<value>"),
        (["-N", "x", "-L", "cpu=much"], "quantities must match the regular expression"),
        (["-f", "job.json"], "only support yaml file"),
        (["-f", "/nonexistent/job.yaml"], "failed to read file, err: open /nonexistent/job.yaml"),
    ],
)
def test_run_job_errors(api, vcctl, argv, message) -> None:
    result = vcctl("job", "run", *argv)
    assert result.code == 255
    assert result.out.startswith(f"Failed to run job: {message}")
    assert api.made("POST") == []


def _command_round_trip(api, namespace: str, job_name: str) -> list[Any]:
    api.on(
        "GET",
        f"/apis/batch.volcano.sh/v1alpha1/namespaces/{namespace}/jobs/{job_name}",
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "metadata": {"name": job_name, "namespace": namespace, "uid": "u-1"},
        },
    )
    api.routes[("POST", f"/apis/bus.volcano.sh/v1alpha1/namespaces/{namespace}/commands")] = (
        lambda body: (201, body)
    )
    return api.made("POST")


def _expected_command(action: str, name: str, namespace: str) -> dict[str, Any]:
    ref = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "name": name,
        "uid": "u-1",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {
            "generateName": f"{name}-{action.lower()}-",
            "namespace": namespace,
            "ownerReferences": [ref],
        },
        "action": action,
        "target": ref,
    }


# suspend_test.go TestSuspendJobJob, resume_test.go TestResumeJob
@pytest.mark.parametrize(("verb", "action"), [("suspend", "AbortJob"), ("resume", "ResumeJob")])
def test_suspend_and_resume_create_a_command(api, vcctl, verb, action) -> None:
    _command_round_trip(api, "test", "testjob")
    result = vcctl("job", verb, "-n", "test", "-N", "testjob")
    assert (result.code, result.out) == (0, "")  # upstream prints nothing
    (post,) = api.made("POST")
    assert post.body == _expected_command(action, "testjob", "test")


@pytest.mark.parametrize("verb", ["suspend", "resume", "delete"])
def test_job_verbs_require_a_name(api, vcctl, verb) -> None:
    result = vcctl("job", verb)
    assert (result.code, result.out) == (
        255,
        f"Failed to {verb} job: job name is mandatory to {verb} a particular job\n",
    )


# delete_test.go TestDeleteJob
def test_delete_job(api, vcctl) -> None:
    api.on("DELETE", "/apis/batch.volcano.sh/v1alpha1/namespaces/test/jobs/testjob", {})
    result = vcctl("job", "delete", "-n", "test", "-N", "testjob")
    assert (result.code, result.out) == (0, "delete job testjob successfully\n")


# vcancel cancel_test.go TestCancelJob (vcancel: -N is the namespace, -n the name)
def test_vcancel(api, tool) -> None:
    api.on("DELETE", "/apis/batch.volcano.sh/v1alpha1/namespaces/test/jobs/testjob", {})
    result = tool("vcancel", "-N", "test", "-n", "testjob")
    assert (result.code, result.out) == (0, "cancel job testjob successfully\n")
    result = tool("vcancel")
    assert (result.code, result.out) == (
        255,
        "Failed to: job name is mandatory to cancel a particular job\n",
    )


# vsuspend suspend_test.go TestSuspendJob, vresume resume_test.go TestResumeJob
@pytest.mark.parametrize(
    ("tool_name", "action"), [("vsuspend", "AbortJob"), ("vresume", "ResumeJob")]
)
def test_vsuspend_and_vresume(api, tool, tool_name, action) -> None:
    _command_round_trip(api, "test", "testjob")
    result = tool(tool_name, "-N", "test", "-n", "testjob")
    assert (result.code, result.out) == (0, "")
    assert api.made("POST")[0].body == _expected_command(action, "testjob", "test")


def test_vsub_defaults_from_environment_and_command(api, tool, monkeypatch) -> None:
    monkeypatch.setenv("VOLCANO_SCHEDULER_NAME", "my-scheduler")
    monkeypatch.setenv("VOLCANO_DEFAULT_IMAGE", "alpine")
    monkeypatch.setenv("VOLCANO_DEFAULT_JOB_NAMESPACE", "team")
    api.on(
        "POST", "/apis/batch.volcano.sh/v1alpha1/namespaces/team/jobs", {"metadata": {"name": "j"}}
    )
    result = tool("vsub", "-n", "j", "-c", "sh -c 'sleep 10'")
    assert (result.code, result.out) == (0, "run job j successfully\n")
    body = api.made("POST")[0].body
    container = body["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert body["spec"]["schedulerName"] == "my-scheduler"
    assert container["image"] == "alpine"
    assert container["command"] == ["sh", "-c", "sleep 10"]


def test_vjobs_lists_without_a_name_and_filters_while_printing(api, tool) -> None:
    api.on(
        "GET",
        JOBS,
        _list(_job("a-very-long-job-name", scheduler="other"), _job("short", scheduler="volcano")),
    )
    result = tool("vjobs", "-S", "volcano")
    lines = result.out.splitlines()
    # The widths come from every job (upstream filters only while printing).
    assert lines[0].startswith("Name" + " " * (len("a-very-long-job-name") + 3 - 4) + "Creation")
    assert [line.split()[0] for line in lines[1:]] == ["short"]


def test_vjobs_view_leaves_out_conditions(api, tool) -> None:
    job = dict(VIEW_JOB, status={"conditions": [{"status": "Running"}]})
    api.on("GET", f"{JOBS}/j", job)
    api.on("GET", "/api/v1/namespaces/default/events", {"items": []})
    result = tool("vjobs", "-n", "j")
    assert result.code == 0 and "Conditions" not in result.out
    assert result.out.endswith("Events: \t<none>\n")


def test_connection_refused_is_a_message_not_a_traceback(tmp_path, monkeypatch) -> None:
    import io

    from volcano_py.cli.vcctl.main import vcctl_main

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    out, err = io.StringIO(), io.StringIO()
    code = vcctl_main(["queue", "list", "-s", "http://127.0.0.1:1"], out, err)
    assert code == 255
    assert out.getvalue().startswith(
        'Failed to list queue: Get "http://127.0.0.1:1/apis/scheduling.volcano.sh/v1beta1/queues"'
    )
    assert "Traceback" not in out.getvalue() + err.getvalue()


def test_no_configuration_at_all(tmp_path, monkeypatch) -> None:
    import io

    from volcano_py.cli.vcctl.main import vcctl_main

    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    out = io.StringIO()
    assert vcctl_main(["job", "list"], out, io.StringIO()) == 255
    assert out.getvalue().startswith("Failed to list job: invalid configuration: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nope"], 'Error: unknown command "nope" for "vcctl"'),
        (["job", "nope"], 'Error: unknown command "nope" for "vcctl job"'),
        (["job", "list", "--nope"], "Error: unknown flag: --nope"),
    ],
)
def test_usage_errors_exit_1(argv, message) -> None:
    import io

    from volcano_py.cli.vcctl.main import vcctl_main

    out, err = io.StringIO(), io.StringIO()
    assert vcctl_main(argv, out, err) == 1
    assert err.getvalue().startswith(message)


def test_help_and_version() -> None:
    import io

    from volcano_py.cli.vcctl.main import vcctl_main

    out = io.StringIO()
    assert vcctl_main(["job"], out, io.StringIO()) == 0
    assert "  suspend     abort a job" in out.getvalue()
    out = io.StringIO()
    assert vcctl_main(["version"], out, io.StringIO()) == 0
    assert out.getvalue().startswith("API Version: v1alpha1\nVersion: ")
    out = io.StringIO()
    assert vcctl_main(["job", "run", "--help"], out, io.StringIO()) == 0
    assert '(default "cpu=1000m,memory=100Mi")' in " ".join(out.getvalue().split())
