"""Benchmarks (``make bench`` runs ``python -m bench``).

Every module named in ``MODULES`` is ``bench.<name>`` and defines
``main(argv: list[str] | None = None) -> int``, which parses its own options and prints its
own table. ``python -m bench`` runs them all with no options; ``python -m bench NAME ARGS...``
runs one, handing it ARGS. Add a module here to have ``make bench`` run it.

``CLUSTER_MODULES`` need the local control plane's binaries (``VK8S_BIN_DIR``) and minutes of
wall time: ``python -m bench NAME`` runs them, ``make bench`` does not (``make bench-churn``).
"""

from __future__ import annotations

MODULES: tuple[str, ...] = (
    "node_matrix",
    "session",
    "contention",
    "load_plugins",
    "simulate",
    "job_replicas",
    "forecast",
    "numa",
    "deviceshare",
    "vnpu",
    "dra",
    "topology",
    "strict_input",
    "watch_events",
)

CLUSTER_MODULES: tuple[str, ...] = (
    "churn",
    "side_by_side",
    "controller_rate",
    "restart",
    "watch_load",
)
