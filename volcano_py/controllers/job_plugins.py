"""Job plugins (``spec.plugins``): ``env``, ``svc`` and ``ssh``
(``pkg/controllers/job/plugins/``).

Each plugin has four hooks: ``on_pod_create`` edits a pod before it is created,
``on_job_add`` (while the job is Pending) creates the plugin's objects once and records
``plugin-<name>`` in ``status.controlledResources``, ``on_job_update`` refreshes them, and
``on_job_delete`` (a whole-job kill) removes them and forgets the record.

The distributed-framework plugins (``tensorflow``, ``mpi``, ``pytorch``, ``ray``,
``hcclrank``) are accepted but do nothing yet: their env vars and ports are not injected.
Upstream runs the plugins in Go map order (random); here they run sorted by name.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from volcano_py.api.types import JOB_NAME_KEY, JOB_NAMESPACE_KEY, TASK_SPEC_KEY
from volcano_py.controllers.goflags import parse_go_flags
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_types import JobChanges
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    controller_reference,
    integer,
    items,
    mapping,
    name,
    namespace,
    spec,
    text,
)
from volcano_py.controllers.vocabulary import (
    BATCH_API_VERSION,
    DEFAULT_TASK_SPEC,
    EVENT_WARNING,
)

KNOWN_PLUGINS: Final = ("env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow")
CONFIG_MAP_MOUNT_PATH: Final = "/etc/volcano"
SSH_ABSOLUTE_PATH: Final = "/root/.ssh"
SSH_RELATIVE_PATH: Final = ".ssh"
SSH_KEYS: Final = ("id_rsa", "id_rsa.pub", "authorized_keys", "config")

ObjectKey = tuple[str, str]  # (kind, name)


def make_pod_name(job_name: str, task_name: str, index: int) -> str:
    return f"{job_name}-{task_name}-{index}"


def pod_index_from_name(pod_name: str) -> str:
    """``GetPodIndexUnderTask``: the last ``-`` piece of ``<job>-<task>-<index>``."""
    pieces = pod_name.split("-")
    return pieces[-1] if len(pieces) >= 3 else ""


def task_key(pod: Raw) -> str:
    return annotations_of(pod).get(TASK_SPEC_KEY) or DEFAULT_TASK_SPEC


def task_host_names(job: Raw, task: Raw) -> list[tuple[str, str]]:
    """(hostname, subdomain) of every replica; a task with a fixed hostname has one host."""
    template_spec = spec(mapping(task.get("template")))
    fixed_host = text(template_spec.get("hostname"))
    subdomain = text(template_spec.get("subdomain")) or name(job)
    hosts = []
    for index in range(integer(task.get("replicas"))):
        hosts.append(
            (fixed_host or make_pod_name(name(job), text(task.get("name")), index), subdomain)
        )
        if fixed_host:
            break
    return hosts


def task_hosts(job: Raw, task: Raw) -> list[str]:
    """``hostname.subdomain`` of every replica."""
    return [f"{host}.{subdomain}" for host, subdomain in task_host_names(job, task)]


def _env_key(task_name: str) -> str:
    return task_name.replace("-", "_")


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    pod_spec = pod.setdefault("spec", {})
    found: list[dict[str, Any]] = []
    for key in ("containers", "initContainers"):
        found.extend(c for c in pod_spec.get(key) or [] if isinstance(c, dict))
    return found


def _append(container: dict[str, Any], key: str, entries: Sequence[dict[str, Any]]) -> None:
    container[key] = [*(container.get(key) or []), *entries]


@dataclass(slots=True)
class PluginContext:
    """What a hook may read and write: the job, the status being built (its
    ``controlled_resources``), the changes of this step, and the plugin objects that exist
    (``None`` when the caller does not know them: then every create-or-update is emitted)."""

    job: Raw
    status: JobStatus
    changes: JobChanges
    existing: Mapping[ObjectKey, Raw] | None = None

    def owner_reference(self) -> dict[str, Any]:
        return controller_reference(self.job, BATCH_API_VERSION, "Job")

    def exists(self, kind: str, object_name: str) -> bool:
        return self.existing is not None and (kind, object_name) in self.existing

    def create_if_missing(self, obj: dict[str, Any]) -> None:
        if not self.exists(text(obj.get("kind")), name(obj)):
            self.changes.extra_objects.append(obj)

    def create_or_update(self, obj: dict[str, Any], same: str) -> None:
        """Emit ``obj`` unless the existing object of that kind and name has equal ``same``
        content (``CreateOrUpdateConfigMap`` compares ``data``)."""
        kind, object_name = text(obj.get("kind")), name(obj)
        existing = None if self.existing is None else self.existing.get((kind, object_name))
        if existing is not None and mapping(existing).get(same) == obj.get(same):
            return
        self.changes.extra_objects.append(obj)

    def delete(self, kind: str, object_name: str) -> None:
        self.changes.delete_objects.append((kind, object_name))

    def metadata(self, object_name: str) -> dict[str, Any]:
        return {
            "name": object_name,
            "namespace": namespace(self.job),
            "ownerReferences": [self.owner_reference()],
        }


class JobPlugin(Protocol):
    name: str

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None: ...

    def on_job_add(self, context: PluginContext) -> None: ...

    def on_job_update(self, context: PluginContext) -> None: ...

    def on_job_delete(self, context: PluginContext) -> None: ...


def _record(context: PluginContext, plugin: str) -> bool:
    """Record the plugin as set up; False when it already was."""
    key = f"plugin-{plugin}"
    if context.status.controlled_resources.get(key) == plugin:
        return False
    context.status.controlled_resources[key] = plugin
    return True


def _forget(context: PluginContext, plugin: str) -> bool:
    key = f"plugin-{plugin}"
    if context.status.controlled_resources.get(key) != plugin:
        return False
    del context.status.controlled_resources[key]
    return True


class EnvPlugin:
    """``VK_TASK_INDEX`` and ``VC_TASK_INDEX`` (the pod's index in its task) in every
    container."""

    name = "env"

    def __init__(self, arguments: Sequence[str]) -> None:
        del arguments  # env takes none

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        index = pod_index_from_name(name(pod))
        entries = [
            {"name": "VK_TASK_INDEX", "value": index},
            {"name": "VC_TASK_INDEX", "value": index},
        ]
        for container in _containers(pod):
            _append(container, "env", entries)

    def on_job_add(self, context: PluginContext) -> None:
        _record(context, self.name)

    def on_job_update(self, context: PluginContext) -> None:
        return

    def on_job_delete(self, context: PluginContext) -> None:
        _forget(context, self.name)


def generate_hosts(job: Raw) -> dict[str, str]:
    """The svc ConfigMap's data: per task, ``<task>.host`` (one host per line),
    ``VC_<TASK>_HOSTS`` (comma separated) and ``VC_<TASK>_NUM``."""
    data: dict[str, str] = {}
    for raw_task in items(spec(job).get("tasks")):
        task = mapping(raw_task)
        hosts = task_hosts(job, task)
        key = _env_key(text(task.get("name")))
        data[f"{key}.host"] = "\n".join(hosts)
        data[f"VC_{key.upper()}_HOSTS"] = ",".join(hosts)
        data[f"VC_{key.upper()}_NUM"] = str(len(hosts))
    return data


class ServicePlugin:
    """A headless Service ``<job>`` and a ConfigMap ``<job>-svc`` listing every pod's
    ``hostname.subdomain``, so the pods of a job find each other by name; a NetworkPolicy
    admitting traffic only from the job's own pods."""

    name = "svc"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, _ = parse_go_flags(
            arguments,
            {
                "publish-not-ready-addresses": False,
                "disable-network-policy": False,
                "inject-hosts-env": True,
            },
        )
        self.publish_not_ready = bool(values["publish-not-ready-addresses"])
        self.disable_network_policy = bool(values["disable-network-policy"])
        self.inject_hosts_env = bool(values["inject-hosts-env"])

    def config_map_name(self, job: Raw) -> str:
        return f"{name(job)}-{self.name}"

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        job = context.job
        pod_spec = pod.setdefault("spec", {})
        if not pod_spec.get("hostname"):
            pod_spec["hostname"] = name(pod)
        if not pod_spec.get("subdomain"):
            pod_spec["subdomain"] = name(job)
        config_map = self.config_map_name(job)
        if self.inject_hosts_env:
            # Env vars (not the mounted file) can grow past the kernel's limit on huge jobs;
            # --inject-hosts-env=false turns them off.
            env = []
            for raw_task in items(spec(job).get("tasks")):
                key = _env_key(text(mapping(raw_task).get("name"))).upper()
                for variable in (f"VC_{key}_HOSTS", f"VC_{key}_NUM"):
                    env.append(
                        {
                            "name": variable,
                            "valueFrom": {"configMapKeyRef": {"name": config_map, "key": variable}},
                        }
                    )
            for container in _containers(pod):
                _append(container, "env", env)
        volume = {"name": config_map, "configMap": {"name": config_map}}
        pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), volume]
        mount = {"mountPath": CONFIG_MAP_MOUNT_PATH, "name": config_map}
        for container in _containers(pod):
            _append(container, "volumeMounts", [mount])

    def _config_map(self, context: PluginContext) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": context.metadata(self.config_map_name(context.job)),
            "data": generate_hosts(context.job),
        }

    def _selector(self, job: Raw) -> dict[str, str]:
        return {JOB_NAME_KEY: name(job), JOB_NAMESPACE_KEY: namespace(job)}

    def on_job_add(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") == self.name:
            return
        job = context.job
        context.create_or_update(self._config_map(context), "data")
        service_spec: dict[str, Any] = {"clusterIP": "None", "selector": self._selector(job)}
        if self.publish_not_ready:
            service_spec["publishNotReadyAddresses"] = True
        context.create_if_missing(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": context.metadata(name(job)),
                "spec": service_spec,
            }
        )
        if not self.disable_network_policy:
            context.create_if_missing(
                {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "NetworkPolicy",
                    "metadata": context.metadata(name(job)),
                    "spec": {
                        "podSelector": {"matchLabels": self._selector(job)},
                        "ingress": [
                            {"from": [{"podSelector": {"matchLabels": self._selector(job)}}]}
                        ],
                        "policyTypes": ["Ingress"],
                    },
                }
            )
        _record(context, self.name)

    def on_job_update(self, context: PluginContext) -> None:
        # Scaling changes the host list.
        context.create_or_update(self._config_map(context), "data")

    def on_job_delete(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") != self.name:
            return
        context.delete("ConfigMap", self.config_map_name(context.job))
        context.delete("Service", name(context.job))
        _forget(context, self.name)
        if not self.disable_network_policy:
            context.delete("NetworkPolicy", name(context.job))


def generate_rsa_key_pair() -> tuple[str, str] | None:
    """A fresh RSA-2048 key: (PKCS#1 PEM private key, ``ssh-rsa`` public line), or None when
    the optional ``cryptography`` package is not installed."""
    if not _rsa_available():
        return None
    # Imported by name: the package is optional and ships no stubs here.
    serialization = importlib.import_module("cryptography.hazmat.primitives.serialization")
    rsa = importlib.import_module("cryptography.hazmat.primitives.asymmetric.rsa")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return str(private.decode()), str(public.decode()) + "\n"


def _rsa_available() -> bool:
    return importlib.util.find_spec("cryptography") is not None


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

    Without user-supplied keys the pair is generated with the ``cryptography`` package; when
    it is not installed the Secret holds only ``config`` and a Warning event says why.
    """

    name = "ssh"

    def __init__(self, arguments: Sequence[str]) -> None:
        values, _ = parse_go_flags(
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

    def _has_keys(self) -> bool:
        return bool(self.private_key) or _rsa_available()

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        secret = self.secret_name(context.job)
        keys = SSH_KEYS if self._has_keys() else ("config",)
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
        for container in _containers(pod):
            _append(container, "volumeMounts", [mount])

    def on_job_add(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") == self.name:
            return
        data = {"config": ssh_config(context.job, self.port)}
        if self.private_key:
            pair: tuple[str, str] | None = (self.private_key, self.public_key)
        else:
            pair = generate_rsa_key_pair()
        if pair is None:
            context.changes.events.append(
                (
                    EVENT_WARNING,
                    "PluginError",
                    "ssh plugin: no key pair generated (the cryptography package is not "
                    "installed); pass --ssh-private-key and --ssh-public-key",
                )
            )
        else:
            private, public = pair
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
        _record(context, self.name)

    def on_job_update(self, context: PluginContext) -> None:
        # A Secret mounted through subPath never sees updates, so upstream does not refresh it.
        return

    def on_job_delete(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") != self.name:
            return
        context.delete("Secret", self.secret_name(context.job))
        _forget(context, self.name)


class NotImplementedFrameworkPlugin:
    """``tensorflow``, ``mpi``, ``pytorch``, ``ray``, ``hcclrank``: accepted, no effect yet."""

    def __init__(self, plugin_name: str) -> None:
        self.name = plugin_name

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        return

    def on_job_add(self, context: PluginContext) -> None:
        return

    def on_job_update(self, context: PluginContext) -> None:
        return

    def on_job_delete(self, context: PluginContext) -> None:
        return


def build_plugins(job: Raw) -> tuple[list[JobPlugin], list[str]]:
    """The job's plugins in a stable order, and the names no plugin answers to."""
    plugins: list[JobPlugin] = []
    unknown: list[str] = []
    configured = mapping(spec(job).get("plugins"))
    for plugin_name in sorted(configured):
        arguments = [text(a) for a in items(configured[plugin_name])]
        if plugin_name == "env":
            plugins.append(EnvPlugin(arguments))
        elif plugin_name == "svc":
            plugins.append(ServicePlugin(arguments))
        elif plugin_name == "ssh":
            plugins.append(SshPlugin(arguments))
        elif plugin_name in KNOWN_PLUGINS:
            plugins.append(NotImplementedFrameworkPlugin(plugin_name))
        else:
            unknown.append(plugin_name)
    return plugins, unknown
