"""The ``svc`` job plugin (``plugins/svc``): a headless Service ``<job>``, a ConfigMap
``<job>-svc`` listing every pod's ``hostname.subdomain`` (mounted at ``/etc/volcano`` and,
unless ``--inject-hosts-env=false``, as ``VC_<TASK>_HOSTS``/``VC_<TASK>_NUM`` env vars), and a
NetworkPolicy admitting traffic only from the job's own pods (unless
``--disable-network-policy``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from volcano_py.api.types import JOB_NAME_KEY, JOB_NAMESPACE_KEY
from volcano_py.controllers.job_plugins.base import (
    PluginContext,
    append_entries,
    containers_of,
    env_key,
    parse_plugin_flags,
    task_hosts,
)
from volcano_py.controllers.raw import Raw, items, mapping, name, namespace, spec, text

CONFIG_MAP_MOUNT_PATH: Final = "/etc/volcano"


def generate_hosts(job: Raw) -> dict[str, str]:
    """The svc ConfigMap's data: per task, ``<task>.host`` (one host per line),
    ``VC_<TASK>_HOSTS`` (comma separated) and ``VC_<TASK>_NUM``."""
    data: dict[str, str] = {}
    for raw_task in items(spec(job).get("tasks")):
        task = mapping(raw_task)
        hosts = task_hosts(job, task)
        key = env_key(text(task.get("name")))
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
        values, self.argument_error = parse_plugin_flags(
            self.name,
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
                key = env_key(text(mapping(raw_task).get("name"))).upper()
                for variable in (f"VC_{key}_HOSTS", f"VC_{key}_NUM"):
                    env.append(
                        {
                            "name": variable,
                            "valueFrom": {"configMapKeyRef": {"name": config_map, "key": variable}},
                        }
                    )
            for container in containers_of(pod):
                append_entries(container, "env", env)
        volume = {"name": config_map, "configMap": {"name": config_map}}
        pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), volume]
        mount = {"mountPath": CONFIG_MAP_MOUNT_PATH, "name": config_map}
        for container in containers_of(pod):
            append_entries(container, "volumeMounts", [mount])

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
        context.record(self.name)

    def on_job_update(self, context: PluginContext) -> None:
        # Scaling changes the host list.
        context.create_or_update(self._config_map(context), "data")

    def on_job_delete(self, context: PluginContext) -> None:
        if context.status.controlled_resources.get(f"plugin-{self.name}") != self.name:
            return
        context.delete("ConfigMap", self.config_map_name(context.job))
        context.delete("Service", name(context.job))
        context.forget(self.name)
        if not self.disable_network_policy:
            context.delete("NetworkPolicy", name(context.job))
