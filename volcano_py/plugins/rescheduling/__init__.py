"""rescheduling: name running pods to evict so that load evens out (``plugins/rescheduling``).

Every ``interval`` (5m) the plugin registers its strategies' victim functions with the
``victim_tasks`` hook (``AddVictimTasksFns``, flag ``enabledVictim``); the ``shuffle`` action
hands them every running task and evicts what they name. Between runs it registers nothing.
The only strategy Volcano has is ``lowNodeUtilization`` (``low_node_utilization.py``), driven
by the real node load the scheduler cache collects (``metrics:`` of the conf), read for the
period ``metricsPeriod`` names.

Arguments (upstream spelling)::

    - name: rescheduling
      arguments:
        interval: 5m                 # Go duration; bad or absent: 5m
        metricsPeriod: 5m            # the node-usage period the strategies read
        strategies:
        - name: lowNodeUtilization
          params:
            thresholds: {cpu: 20, memory: 20}
            targetThresholds: {cpu: 70, memory: 70}

The metrics source collects only the 10m average (``NODE_METRICS_PERIOD``), so with the
default ``metricsPeriod`` of 5m every node reads as 0% used and nothing is ever evicted, as in
Volcano; the plugin says so once. The time of the last run outlives the session (upstream keeps
it in a package variable set when the process starts), in the scheduler's state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.node_usage import NODE_METRICS_PERIOD
from volcano_py.api.task import TaskInfo
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session
from volcano_py.models.duration import DurationError, parse_duration
from volcano_py.plugins._plugin_helpers import warn_once
from volcano_py.plugins.rescheduling.low_node_utilization import (
    STRATEGY_NAME as LOW_NODE_UTILIZATION,
)
from volcano_py.plugins.rescheduling.low_node_utilization import (
    LowNodeUtilizationConf,
    victims_for_low_node_utilization,
)

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "rescheduling"
DEFAULT_INTERVAL: Final = 5 * 60.0
DEFAULT_METRICS_PERIOD: Final = "5m"
DEFAULT_STRATEGY: Final = LOW_NODE_UTILIZATION
LAST_RUN: Final = "rescheduling.lastRescheduleTime"

ARGUMENTS: Final[frozenset[str]] = frozenset({"interval", "metricsPeriod", "strategies"})
KNOWN_STRATEGIES: Final = frozenset({LOW_NODE_UTILIZATION})


def _warn_once(message: str) -> None:
    warn_once(log, f"{PLUGIN_NAME}: {message}")


@dataclass(frozen=True, slots=True)
class Strategy:
    name: str
    params: Mapping[str, Any] | None = None


def _default_strategies() -> list[Strategy]:
    return [Strategy(DEFAULT_STRATEGY)]


@dataclass(slots=True)
class ReschedulingConfig:
    interval: float = DEFAULT_INTERVAL
    metrics_period: str = DEFAULT_METRICS_PERIOD
    strategies: list[Strategy] = field(default_factory=_default_strategies)

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> ReschedulingConfig:
        """``parseArguments``."""
        config = cls()
        interval = arguments.get("interval")
        if interval is not None:
            try:
                config.interval = parse_duration(str(interval)) if isinstance(interval, str) else -1
            except DurationError:
                config.interval = -1
            if config.interval < 0:
                _warn_once(f"interval {interval!r} is not a Go duration; 5m is used")
                config.interval = DEFAULT_INTERVAL
        period = arguments.get_str("metricsPeriod", DEFAULT_METRICS_PERIOD)
        config.metrics_period = period or DEFAULT_METRICS_PERIOD
        if config.metrics_period != NODE_METRICS_PERIOD:
            _warn_once(
                f"metricsPeriod {config.metrics_period} is not collected by the metrics source "
                f"(only {NODE_METRICS_PERIOD}): every node reads as 0% used and "
                f"{LOW_NODE_UTILIZATION} evicts nothing, as in Volcano; set metricsPeriod: "
                f"{NODE_METRICS_PERIOD}"
            )
        raw = arguments.get("strategies")
        if raw is not None:
            if not isinstance(raw, list):
                _warn_once(f"strategies must be a list, got {raw!r}; the default is used")
            else:
                parsed = [strategy for item in raw if (strategy := _strategy(item)) is not None]
                if raw:
                    config.strategies = parsed
        return config


def _strategy(item: object) -> Strategy | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        _warn_once(f"a strategy needs a name, got {item!r}; skipped")
        return None
    params = item.get("params")
    if params is not None and not isinstance(params, Mapping):
        _warn_once(f"strategy {item['name']}: params must be a map, got {params!r}; skipped")
        return None
    for key in item:
        if key not in ("name", "params"):
            _warn_once(f"strategy {item['name']}: unknown field {key} is ignored")
    if item["name"] not in KNOWN_STRATEGIES:
        _warn_once(
            f"unknown strategy {item['name']!r} does nothing (Volcano has only "
            f"{', '.join(sorted(KNOWN_STRATEGIES))})"
        )
    return Strategy(str(item["name"]), params)


def time_to_run(ssn: Session, interval: float) -> bool:
    """``timeToRun``: more than ``interval`` since the last run (or, the first time, since
    the scheduler started); the clock is the session's."""
    memory = ssn.state.plugin_memory
    last = memory.setdefault(LAST_RUN, ssn.now)
    if last + interval < ssn.now:
        memory[LAST_RUN] = ssn.now
        return True
    return False


VictimFn = Callable[[list[TaskInfo]], list[TaskInfo]]


class ReschedulingPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.config = ReschedulingConfig.from_arguments(arguments)

    def victim_fn(self, ssn: Session, strategy: Strategy) -> VictimFn | None:
        if strategy.name != LOW_NODE_UTILIZATION:
            return None
        conf = LowNodeUtilizationConf.parse(strategy.params, _warn_once)
        period = self.config.metrics_period

        def victims(tasks: list[TaskInfo]) -> list[TaskInfo]:
            return victims_for_low_node_utilization(
                ssn.node_list, ssn.node_usage, period, conf, tasks
            )

        return victims

    def on_session_open(self, ssn: Session) -> None:
        if not time_to_run(ssn, self.config.interval):
            log.debug("It is not the time to execute rescheduling strategies.")
            return
        for strategy in self.config.strategies:
            fn = self.victim_fn(ssn, strategy)
            if fn is not None:
                ssn.add_victim_tasks_fn(self.name, fn)

    def on_session_close(self, ssn: Session) -> None:
        return None


def new(arguments: Arguments) -> ReschedulingPlugin:
    return ReschedulingPlugin(arguments)
