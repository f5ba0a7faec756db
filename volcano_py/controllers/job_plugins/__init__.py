"""Job plugins (``spec.plugins``, ``pkg/controllers/job/plugins/``), one module each:
``env``, ``svc``, ``ssh`` and the distributed-framework plugins ``pytorch``, ``tensorflow``,
``mpi``, ``ray`` and ``hcclrank``.

Upstream runs a job's plugins in Go map order, which is random. Here they run sorted by name
with one exception: ``hcclrank`` runs last, so it always sees the ``RANK`` that ``pytorch``
sets (upstream sees it only when the map happens to order them so).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from volcano_py.controllers.job_plugins.base import (
    JobPlugin,
    ObjectKey,
    PluginContext,
    PluginError,
    make_pod_name,
    pod_index_from_name,
    task_host_names,
    task_hosts,
    task_key,
)
from volcano_py.controllers.job_plugins.env import EnvPlugin
from volcano_py.controllers.job_plugins.hcclrank import HcclRankPlugin
from volcano_py.controllers.job_plugins.mpi import MpiPlugin
from volcano_py.controllers.job_plugins.pytorch import PytorchPlugin
from volcano_py.controllers.job_plugins.ray import RayPlugin
from volcano_py.controllers.job_plugins.ssh import SshPlugin, ssh_config
from volcano_py.controllers.job_plugins.svc import ServicePlugin, generate_hosts
from volcano_py.controllers.job_plugins.tensorflow import TensorflowPlugin
from volcano_py.controllers.raw import Raw, items, mapping, spec, text

__all__ = [
    "KNOWN_PLUGINS",
    "EnvPlugin",
    "HcclRankPlugin",
    "JobPlugin",
    "MpiPlugin",
    "ObjectKey",
    "PluginContext",
    "PluginError",
    "PytorchPlugin",
    "RayPlugin",
    "ServicePlugin",
    "SshPlugin",
    "TensorflowPlugin",
    "build_plugins",
    "generate_hosts",
    "make_pod_name",
    "pod_index_from_name",
    "ssh_config",
    "task_host_names",
    "task_hosts",
    "task_key",
]

PLUGIN_BUILDERS: Final[dict[str, Callable[[Sequence[str]], JobPlugin]]] = {
    "env": EnvPlugin,
    "hcclrank": HcclRankPlugin,
    "mpi": MpiPlugin,
    "pytorch": PytorchPlugin,
    "ray": RayPlugin,
    "ssh": SshPlugin,
    "svc": ServicePlugin,
    "tensorflow": TensorflowPlugin,
}
KNOWN_PLUGINS: Final = tuple(sorted(PLUGIN_BUILDERS))
# Plugins that read what others wrote into the pod run after them.
_RUNS_LAST: Final = frozenset({"hcclrank"})


def build_plugins(job: Raw) -> tuple[list[JobPlugin], list[str]]:
    """The job's plugins in their run order, and the names no plugin answers to."""
    plugins: list[JobPlugin] = []
    unknown: list[str] = []
    configured = mapping(spec(job).get("plugins"))
    for plugin_name in sorted(configured, key=lambda n: (n in _RUNS_LAST, n)):
        builder = PLUGIN_BUILDERS.get(plugin_name)
        if builder is None:
            unknown.append(plugin_name)
            continue
        plugins.append(builder([text(a) for a in items(configured[plugin_name])]))
    return plugins, unknown
