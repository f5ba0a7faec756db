"""``--kubeconfig``/``-k`` and ``--master``/``-s`` as upstream's ``util.BuildConfig``."""

from __future__ import annotations

import io

import yaml

from volcano_py.cli.vcctl.main import vcctl_main

QUEUES = "/apis/scheduling.volcano.sh/v1beta1/queues"


def _kubeconfig(path, server: str, token: str) -> str:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return str(path)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = vcctl_main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_kubeconfig_flag_gives_server_and_credentials(api, tmp_path) -> None:
    api.on("GET", QUEUES, {"items": []})
    config = _kubeconfig(tmp_path / "config", api.url, "secret-token")
    assert _run("queue", "list", "-k", config) == (0, "No resources found\n", "")
    assert api.requests[0].authorization == "Bearer secret-token"


def test_master_overrides_the_kubeconfig_server_and_keeps_its_credentials(api, tmp_path) -> None:
    api.on("GET", QUEUES, {"items": []})
    config = _kubeconfig(tmp_path / "config", "http://127.0.0.1:1", "t2")
    host_port = api.url.removeprefix("http://")  # no scheme: http, as no TLS is configured
    assert _run("queue", "list", "--kubeconfig", config, "--master", host_port)[0] == 0
    assert api.requests[0].authorization == "Bearer t2"


def test_kubeconfig_environment_variable(api, tmp_path, monkeypatch) -> None:
    api.on("GET", QUEUES, {"items": []})
    monkeypatch.setenv("KUBECONFIG", _kubeconfig(tmp_path / "config", api.url, "t3"))
    assert _run("queue", "list")[0] == 0
    assert api.requests[0].authorization == "Bearer t3"


def test_a_missing_kubeconfig_file_is_an_error(api, tmp_path) -> None:
    code, out, _ = _run("queue", "list", "-k", str(tmp_path / "missing"), "-s", api.url)
    assert code == 255
    assert out.startswith("Failed to list queue: invalid configuration: ")
    assert api.requests == []
