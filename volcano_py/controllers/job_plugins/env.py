"""The ``env`` job plugin (``plugins/env``): the pod's index in its task as
``VK_TASK_INDEX`` and ``VC_TASK_INDEX`` in every container and init container."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from volcano_py.controllers.job_plugins.base import (
    PluginContext,
    RecordingPlugin,
    append_entries,
    containers_of,
    pod_index_from_name,
)
from volcano_py.controllers.raw import name


class EnvPlugin(RecordingPlugin):
    name = "env"

    def __init__(self, arguments: Sequence[str]) -> None:
        # Upstream ignores whatever is passed; we say so rather than drop it silently.
        self.argument_error = (
            f"plugin env: takes no arguments, ignored {' '.join(arguments)!r}" if arguments else ""
        )

    def on_pod_create(self, pod: dict[str, Any], context: PluginContext) -> None:
        index = pod_index_from_name(name(pod))
        entries = [
            {"name": "VK_TASK_INDEX", "value": index},
            {"name": "VC_TASK_INDEX", "value": index},
        ]
        for container in containers_of(pod):
            append_entries(container, "env", entries)
