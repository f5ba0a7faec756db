"""The ``ssh`` job plugin (``plugins/ssh``): passwordless ssh between a job's pods."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any, Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from volcano_py.controllers.job_plugins.base import (
    PluginContext,
    append_entries,
    containers_of,
    parse_plugin_flags,
    task_host_names,
)
from volcano_py.controllers.raw import Raw, items, mapping, name, spec

SSH_ABSOLUTE_PATH: Final = "/root/.ssh"
SSH_RELATIVE_PATH: Final = ".ssh"
SSH_KEYS: Final = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")


def generate_rsa_key_pair() -> tuple[str, str]:
    """A fresh RSA-2048 key: (PKCS#1 PEM private key, ``ssh-rsa`` public line), as upstream's
    ``generateRsaKey``."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return private.decode(), public.decode() + "\n"


def ssh_config(job: Raw, port: int) -> str:
    lines = ["StrictHostKeyChecking no", "UserKnownHostsFile /dev/null"]
    for raw_task in items(spec(job).get("tasks")):
        task = mapping(raw_task)
        for host, subdomain in task_host_names(job, task):
            lines += [f"Host {host}", f"  HostName {host}.{subdomain}", f"  Port {port}"]
    return "\n".join(lines) + "\n"


class SshPlugin:
    """Passwordless ssh between the job's pods: a Secret ``<job>-ssh`` with a key pair,
    ``authorized_keys`` and a ``config`` naming every pod, mounted at ``--ssh-key-file-path``.

    Without user-supplied keys the pair is generated (the ``cryptography`` package).
    """

    name = "ssh"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, self.argument_error = parse_plugin_flags(
            self.name,
            arguments,
            {
                "ssh-key-file-path": SSH_ABSOLUTE_PATH,
                "ssh-private-key": "",
                "ssh-public-key": "",
                "ssh-port": 22,
            },
        )
        self.key_path = str(values["ssh-key-file-path"])
        self.private_key = str(values["ssh-private-key"])
        self.public_key = str(values["ssh-public-key"])
        port = int(values["ssh-port"])
        self.port = port if 0 < port <= 65535 else 22

    def secret_name(self, job: Raw) -> str:
        return f"{name(job)}-{self.name}"

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        secret = self.secret_name(context.job)
        keys = SSH_KEYS
        volume = {
            "name": secret,
            "secret": {
                "secretName": secret,
                "items": [{"key": k, "path": f"{SSH_RELATIVE_PATH}/{k}"} for k in keys],
                # 0600 for root's ~/.ssh; a non-root user's directory needs 0644 to read it.
                "defaultMode": 0o600 if self.key_path == SSH_ABSOLUTE_PATH else 0o644,
            },
        }
        pod_spec = pod.setdefault("spec", {})
        pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), volume]
        mount = {"mountPath": self.key_path, "subPath": SSH_RELATIVE_PATH, "name": secret}
        for container in containers_of(pod):
            append_entries(container, "volumeMounts", [mount])

    def on_job_add(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") == self.name:
            return
        data = {"config": ssh_config(context.job, self.port)}
        if self.private_key:
            private, public = self.private_key, self.public_key
        else:
            private, public = generate_rsa_key_pair()
        data.update({"id_rsa": private, "id_rsa.pub": public, "authorized_keys": public})
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in sorted(data.items())}
        context.create_if_missing(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": context.metadata(self.secret_name(context.job)),
                "data": encoded,
            }
        )
        context.record(self.name)

    def on_job_update(self, context: PluginContext) -> None:
        # A Secret mounted through subPath never sees updates, so upstream does not refresh it.
        return

    def on_job_delete(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") != self.name:
            return
        context.delete("Secret", self.secret_name(context.job))
        context.forget(self.name)
