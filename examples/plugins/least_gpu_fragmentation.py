"""least-gpu-fragmentation: an example out-of-tree plugin (see docs/plugins.md).

GPU nodes are expensive to leave half-used: a 1-GPU task on an empty 8-GPU node can block an
8-GPU job later. This scorer keeps whole GPU nodes whole:

* a task that asks for GPUs prefers the node it leaves with the fewest idle GPUs (best fit):
  ``score = 100 * (1 - idle_after / allocatable)`` over the nodes with that GPU resource;
* a task that asks for none prefers nodes without GPUs: ``score = 100`` on them, 0 elsewhere.

Both are multiplied by ``least-gpu-fragmentation.weight`` (default 1, 0 turns the plugin off).
``least-gpu-fragmentation.resource`` names the GPU resource (default ``nvidia.com/gpu``).

It scores all candidate nodes at once from the session's NodeMatrix (a batch node-order hook):
no Python loop over nodes. Load it with ``--plugins-dir examples/plugins`` and list it in a tier
of volcano-scheduler.conf with ``enableNodeOrder`` left on.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.task import TaskInfo
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session

PLUGIN_NAME: Final = "least-gpu-fragmentation"
WEIGHT_KEY: Final = "least-gpu-fragmentation.weight"
RESOURCE_KEY: Final = "least-gpu-fragmentation.resource"
ARGUMENTS: Final[frozenset[str]] = frozenset({WEIGHT_KEY, RESOURCE_KEY})
MAX_SCORE: Final = 100.0


class LeastGpuFragmentation:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.weight = arguments.get_float(WEIGHT_KEY, 1.0)
        self.resource = arguments.get_str(RESOURCE_KEY, "nvidia.com/gpu")

    def on_session_open(self, ssn: Session) -> None:
        if self.weight == 0:
            return
        matrix = ssn.matrix
        column = matrix.index.columns.get(self.resource)

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            if column is None or column >= matrix.allocatable.shape[1]:
                return np.zeros(len(rows))  # no node has this GPU resource
            allocatable = matrix.allocatable[rows, column]
            has_gpus = allocatable > 0
            wanted = task.resreq.get(self.resource)
            if wanted <= 0:
                return np.where(has_gpus, 0.0, MAX_SCORE) * self.weight
            idle_after = matrix.idle[rows, column] - wanted
            fits = has_gpus & (idle_after >= 0)
            # Divide only where there are GPUs; elsewhere the score is 0 anyway.
            fill = 1.0 - np.divide(idle_after, allocatable, out=np.ones(len(rows)), where=has_gpus)
            return np.where(fits, fill * MAX_SCORE, 0.0) * self.weight

        ssn.add_batch_node_order_fn(self.name, batch_node_order)

    def on_session_close(self, ssn: Session) -> None:
        pass


def new(arguments: Arguments) -> LeastGpuFragmentation:
    return LeastGpuFragmentation(arguments)
