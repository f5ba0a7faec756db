"""The device resources the conf makes Volcano leave out of resource counting, handed to the
cache before each snapshot.

Upstream gathers them while it sets each node up, under the switches its deviceshare plugin
set when a session built it; here the conf's plugin entries give the rule (a plugin module's
``IGNORED_RESOURCES_RULE(arguments)``) and the cache reads every node against it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.cache.cache import IgnoredResourcesRule, SchedulerCache
from volcano_py.cache.snapshot import ClusterSnapshot
from volcano_py.framework.conf import SchedulerConf
from volcano_py.scheduler.registry import BUILTIN_PLUGINS


@dataclass(frozen=True, slots=True)
class AnyOfRules:
    """Several plugin entries' rules: a node's names under any of them."""

    rules: tuple[IgnoredResourcesRule, ...]

    def __call__(
        self, node: Mapping[str, Any], device_configs: Mapping[str, str]
    ) -> frozenset[str]:
        names: frozenset[str] = frozenset()
        for rule in self.rules:
            names |= rule(node, device_configs)
        return names


def ignored_resources_rule(conf: SchedulerConf) -> IgnoredResourcesRule | None:
    rules: list[IgnoredResourcesRule] = []
    for tier in conf.tiers:
        for option in tier.plugins:
            module_path = BUILTIN_PLUGINS.get(option.name)
            if module_path is None:
                continue
            build = getattr(importlib.import_module(module_path), "IGNORED_RESOURCES_RULE", None)
            rule = build(option.arguments) if build is not None else None
            if rule is not None and rule not in rules:
                rules.append(rule)
    if not rules:
        return None
    return rules[0] if len(rules) == 1 else AnyOfRules(tuple(rules))


def snapshot_for(cache: SchedulerCache, conf: SchedulerConf) -> ClusterSnapshot:
    """The cache's snapshot, its ignored device resources brought up to ``conf`` first."""
    cache.set_ignored_resources_rule(ignored_resources_rule(conf))
    return cache.snapshot()
