"""A node's real load, as a metrics source last measured it (``api.NodeUsage``).

Volcano's cache asks the configured metrics source (Prometheus) every ``metrics.interval`` for
each node's average CPU and memory use over ``NODE_METRICS_PERIOD`` and keeps the answer on the
node; the ``usage`` and ``rescheduling`` plugins read it. Averages are percentages (0-100),
keyed by the period they cover, because plugins name the period they want (``rescheduling``'s
``metricsPeriod``) and a period the source did not collect reads as 0, as upstream.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

# The one period Volcano's metrics sources collect (``source.NODE_METRICS_PERIOD``).
NODE_METRICS_PERIOD: Final = "10m"
# A node whose metrics were never collected: older than any staleness limit.
NEVER: Final = -math.inf


@dataclass(frozen=True, slots=True)
class NodeUsage:
    # When the metrics were taken, in the scheduler clock's seconds (NEVER: not yet).
    metrics_time: float = NEVER
    cpu_usage_avg: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    mem_usage_avg: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def measured(cls, metrics_time: float, cpu_percent: float, memory_percent: float) -> NodeUsage:
        """What the cache records from one collection: both averages over the source's period."""
        return cls(
            metrics_time,
            MappingProxyType({NODE_METRICS_PERIOD: float(cpu_percent)}),
            MappingProxyType({NODE_METRICS_PERIOD: float(memory_percent)}),
        )

    def cpu(self, period: str) -> float:
        return self.cpu_usage_avg.get(period, 0.0) if period else 0.0

    def memory(self, period: str) -> float:
        return self.mem_usage_avg.get(period, 0.0) if period else 0.0


NO_USAGE: Final = NodeUsage()
