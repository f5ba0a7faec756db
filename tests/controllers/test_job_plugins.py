"""Job plugins env, svc and ssh (upstream ``job_controller_plugins_test.go``
``TestPluginOnPodCreate``, ``TestPluginOnJobAdd``, ``TestPluginOnJobDelete``, and
``plugins/ssh/ssh_test.go``), and Go flag parsing of their arguments."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from controller_fixtures import NOW, job, job_pod, pod_group, task

from volcano_py.controllers.goflags import parse_go_flags
from volcano_py.controllers.job import JobRequest, sync_job
from volcano_py.controllers.job_plugins import (
    EnvPlugin,
    PluginContext,
    ServicePlugin,
    SshPlugin,
    build_plugins,
    generate_hosts,
    ssh_config,
)
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import JobChanges


def _context(owner: dict[str, Any], **kwargs: Any) -> PluginContext:
    return PluginContext(
        owner, JobStatus.from_dict(owner.get("status", {})), JobChanges(), **kwargs
    )


def _pod(owner: dict[str, Any], name: str = "Job1-worker-3") -> dict[str, Any]:
    pod = job_pod(owner, "worker", 3)
    pod["metadata"]["name"] = name
    pod["spec"]["initContainers"] = [{"name": "init"}]
    return pod


def test_upstream_plugin_on_pod_create_all_plugin() -> None:
    """TestPluginOnPodCreate "All Plugin": env vars, the svc and ssh mounts."""
    owner = job("Job1", task("worker", 4), plugins={"env": [], "svc": [], "ssh": []})
    pod = _pod(owner)
    plugins, unknown = build_plugins(owner)
    assert unknown == []
    context = _context(owner)
    for plugin in plugins:
        plugin.on_pod_create(pod, context)
    for container in pod["spec"]["containers"] + pod["spec"]["initContainers"]:
        env = {e["name"]: e for e in container["env"]}
        assert env["VK_TASK_INDEX"]["value"] == "3"
        assert env["VC_TASK_INDEX"]["value"] == "3"
        assert env["VC_WORKER_HOSTS"]["valueFrom"] == {
            "configMapKeyRef": {"name": "Job1-svc", "key": "VC_WORKER_HOSTS"}
        }
        mounts = {m["name"]: m for m in container["volumeMounts"]}
        assert mounts["Job1-svc"]["mountPath"] == "/etc/volcano"
        assert mounts["Job1-ssh"] == {
            "mountPath": "/root/.ssh",
            "subPath": ".ssh",
            "name": "Job1-ssh",
        }
    assert pod["spec"]["hostname"] == "Job1-worker-3"
    assert pod["spec"]["subdomain"] == "Job1"


def test_upstream_plugin_on_pod_create_wrong_plugin() -> None:
    """TestPluginOnPodCreate "Wrong Plugin": "failed to get plugin new"."""
    _, unknown = build_plugins(job("Job1", plugins={"new": []}))
    assert unknown == ["new"]


def test_upstream_plugin_on_job_add() -> None:
    """TestPluginOnJobAdd "Plugins": each plugin records itself as controlled and creates its
    objects once."""
    owner = job("job1", task("worker", 2), plugins={"env": [], "svc": [], "ssh": []})
    changes = sync_job(owner, None, [], JobRequest(event="OutOfSync"), now=NOW)
    assert changes.status is not None
    assert changes.status["controlledResources"] == {
        "plugin-env": "env",
        "plugin-ssh": "ssh",
        "plugin-svc": "svc",
    }
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in changes.extra_objects)
    assert kinds == [
        ("ConfigMap", "job1-svc"),
        ("NetworkPolicy", "job1"),
        ("Secret", "job1-ssh"),
        ("Service", "job1"),
    ]
    owner["status"] = changes.status
    again = sync_job(owner, None, [], JobRequest(event="OutOfSync"), now=NOW)
    assert again.extra_objects == []


def test_upstream_plugin_on_job_delete() -> None:
    """TestPluginOnJobDelete "Plugins": the objects go and the records are forgotten."""
    owner = job("job1", task("worker", 1), plugins={"env": [], "svc": []})
    context = _context(owner)
    context.status.controlled_resources = {"plugin-env": "env", "plugin-svc": "svc"}
    plugins, _ = build_plugins(owner)
    for plugin in plugins:
        plugin.on_job_delete(context)
    assert context.status.controlled_resources == {}
    assert sorted(context.changes.delete_objects) == [
        ("ConfigMap", "job1-svc"),
        ("NetworkPolicy", "job1"),
        ("Service", "job1"),
    ]


def test_svc_objects() -> None:
    owner = job("job1", task("ps", 1), task("my-worker", 2), plugins={"svc": []})
    context = _context(owner)
    ServicePlugin([]).on_job_add(context)
    objects = {o["kind"]: o for o in context.changes.extra_objects}
    assert objects["ConfigMap"]["data"] == {
        "ps.host": "job1-ps-0.job1",
        "VC_PS_HOSTS": "job1-ps-0.job1",
        "VC_PS_NUM": "1",
        "my_worker.host": "job1-my-worker-0.job1\njob1-my-worker-1.job1",
        "VC_MY_WORKER_HOSTS": "job1-my-worker-0.job1,job1-my-worker-1.job1",
        "VC_MY_WORKER_NUM": "2",
    }
    selector = {"volcano.sh/job-name": "job1", "volcano.sh/job-namespace": "default"}
    assert objects["Service"]["spec"] == {"clusterIP": "None", "selector": selector}
    assert objects["Service"]["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert objects["NetworkPolicy"]["spec"] == {
        "podSelector": {"matchLabels": selector},
        "ingress": [{"from": [{"podSelector": {"matchLabels": selector}}]}],
        "policyTypes": ["Ingress"],
    }


def test_svc_arguments() -> None:
    owner = job("job1", task("worker", 1))
    plugin = ServicePlugin(
        [
            "--publish-not-ready-addresses",
            "--disable-network-policy=true",
            "--inject-hosts-env=false",
        ]
    )
    context = _context(owner)
    plugin.on_job_add(context)
    kinds = [o["kind"] for o in context.changes.extra_objects]
    assert kinds == ["ConfigMap", "Service"]
    assert context.changes.extra_objects[1]["spec"]["publishNotReadyAddresses"] is True
    pod = _pod(owner)
    plugin.on_pod_create(pod, context)
    assert "env" not in pod["spec"]["containers"][0] or not any(
        e["name"].startswith("VC_") for e in pod["spec"]["containers"][0]["env"]
    )


def test_svc_fixed_hostname_lists_one_host() -> None:
    owner = job("job1", task("master", 3, hostname="head", subdomain="net"))
    assert generate_hosts(owner)["master.host"] == "head.net"


def test_svc_update_refreshes_the_config_map_only_when_it_changed() -> None:
    owner = job("job1", task("worker", 2), phase="Running", plugins={"svc": []})
    plugin = ServicePlugin([])
    current = {"kind": "ConfigMap", "metadata": {"name": "job1-svc"}, "data": generate_hosts(owner)}
    context = _context(owner, existing={("ConfigMap", "job1-svc"): current})
    plugin.on_job_update(context)
    assert context.changes.extra_objects == []
    owner["spec"]["tasks"][0]["replicas"] = 3
    plugin.on_job_update(context)
    assert context.changes.extra_objects[0]["data"]["VC_WORKER_NUM"] == "3"


def test_env_plugin_index_from_pod_name() -> None:
    pod: dict[str, Any] = {
        "metadata": {"name": "a-b-c-12"},
        "spec": {"containers": [{"name": "x"}]},
    }
    EnvPlugin([]).on_pod_create(pod, _context(job("a")))
    assert pod["spec"]["containers"][0]["env"] == [
        {"name": "VK_TASK_INDEX", "value": "12"},
        {"name": "VC_TASK_INDEX", "value": "12"},
    ]


@pytest.mark.parametrize(
    ("name", "params", "path", "private", "public", "port"),
    [
        ("no params specified", [], "/root/.ssh", "", "", 22),
        ("--ssh-key-file-path=/a/b", ["--ssh-key-file-path=/a/b"], "/a/b", "", "", 22),
        (
            "with user provided ssh keys",
            ["--ssh-private-key=PRIVATE", "--ssh-public-key=ssh-rsa AAAA root@x"],
            "/root/.ssh",
            "PRIVATE",
            "ssh-rsa AAAA root@x",
            22,
        ),
        ("with custom ssh port", ["--ssh-port=2026"], "/root/.ssh", "", "", 2026),
    ],
)
def test_upstream_ssh_plugin(
    name: str, params: list[str], path: str, private: str, public: str, port: int
) -> None:
    """TestSSHPlugin."""
    plugin = SshPlugin(params)
    assert (plugin.key_path, plugin.private_key, plugin.public_key, plugin.port) == (
        path,
        private,
        public,
        port,
    ), name


def test_upstream_generate_ssh_config_with_custom_port() -> None:
    """TestGenerateSSHConfigWithCustomPort."""
    config = ssh_config(job("job1", task("worker", 1)), 2026)
    assert "Port 2026" in config
    assert config == (
        "StrictHostKeyChecking no\nUserKnownHostsFile /dev/null\n"
        "Host job1-worker-0\n  HostName job1-worker-0.job1\n  Port 2026\n"
    )


def test_upstream_invalid_ssh_port_falls_back_to_default() -> None:
    """TestInvalidSSHPortFallsBackToDefault."""
    assert SshPlugin(["--ssh-port=-10"]).port == 22


def test_ssh_secret_with_user_keys() -> None:
    owner = job("job1", task("worker", 1))
    context = _context(owner)
    SshPlugin(["--ssh-private-key=PRIV", "--ssh-public-key=PUB"]).on_job_add(context)
    secret = context.changes.extra_objects[0]
    assert secret["kind"] == "Secret"
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["id_rsa"] == "PRIV"
    assert data["id_rsa.pub"] == data["authorized_keys"] == "PUB"
    assert data["config"].startswith("StrictHostKeyChecking no")


def test_ssh_non_root_path_mounts_readable_keys() -> None:
    owner = job("job1", task("worker", 1))
    pod = _pod(owner)
    SshPlugin(["--ssh-key-file-path=/home/u/.ssh", "--ssh-private-key=P"]).on_pod_create(
        pod, _context(owner)
    )
    volume = pod["spec"]["volumes"][-1]["secret"]
    assert volume["defaultMode"] == 0o644
    assert [i["key"] for i in volume["items"]] == [
        "id_rsa",
        "id_rsa.pub",
        "authorized_keys",
        "config",
    ]


def test_ssh_generates_an_rsa_key_pair() -> None:
    context = _context(job("job1", task("worker", 1)))
    SshPlugin([]).on_job_add(context)
    data = {
        k: base64.b64decode(v).decode() for k, v in context.changes.extra_objects[0]["data"].items()
    }
    assert data["id_rsa"].startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert data["id_rsa.pub"].startswith("ssh-rsa ")


def test_kill_removes_plugin_objects_and_next_pending_sync_recreates_them() -> None:
    owner = job(
        "job1",
        task("worker", 1),
        phase="Running",
        plugins={"svc": []},
        status={"controlledResources": {"plugin-svc": "svc"}},
    )
    kill = sync_job(
        owner,
        pod_group(owner, "Running"),
        [job_pod(owner, "worker", 0)],
        JobRequest(event="CommandIssued", action="RestartJob"),
        now=NOW,
    )
    assert ("Service", "job1") in kill.delete_objects
    assert kill.status is not None
    assert "controlledResources" not in kill.status


@pytest.mark.parametrize(
    ("arguments", "expected", "error"),
    [
        (["-a=1", "--b", "x", "--c"], {"a": 1, "b": "x", "c": True}, ""),
        (["--c=false"], {"a": 0, "b": "", "c": False}, ""),
        (["--zz=1", "--a=3"], {"a": 0, "b": "", "c": False}, "flag provided but not defined: -zz"),
        (["positional", "--a=3"], {"a": 0, "b": "", "c": False}, ""),
        (["--b"], {"a": 0, "b": "", "c": False}, "flag needs an argument: -b"),
    ],
)
def test_go_flags(arguments: list[str], expected: dict[str, Any], error: str) -> None:
    values, problem = parse_go_flags(arguments, {"a": 0, "b": "", "c": False})
    assert values == expected
    assert problem == error
