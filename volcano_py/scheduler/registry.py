"""Which actions and plugins exist: the built-ins, plus third-party plugins that register
themselves under the ``volcano_py.plugins`` entry-point group (the Python analogue of
Volcano's ``--plugins-dir``).

Built-ins are named by module path and imported on first use, so the registry costs nothing
at start-up and a missing optional dependency of one plugin cannot break the others.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any, Final

from volcano_py.framework.arguments import Arguments
from volcano_py.framework.plugin import Action, Plugin, PluginBuilder

log = logging.getLogger(__name__)

BUILTIN_ACTIONS: Final = {
    "enqueue": "volcano_py.actions.enqueue",
    "allocate": "volcano_py.actions.allocate",
    "backfill": "volcano_py.actions.backfill",
    "preempt": "volcano_py.actions.preempt",
    "reclaim": "volcano_py.actions.reclaim",
    "shuffle": "volcano_py.actions.shuffle",
    "gangpreempt": "volcano_py.actions.gangpreempt",
    "gangreclaim": "volcano_py.actions.gangreclaim",
}

BUILTIN_PLUGINS: Final = {
    "priority": "volcano_py.plugins.priority",
    "gang": "volcano_py.plugins.gang",
    "conformance": "volcano_py.plugins.conformance",
    "drf": "volcano_py.plugins.drf",
    "proportion": "volcano_py.plugins.proportion",
    "capacity": "volcano_py.plugins.capacity",
    "overcommit": "volcano_py.plugins.overcommit",
    "predicates": "volcano_py.plugins.predicates",
    "nodeorder": "volcano_py.plugins.nodeorder",
    "binpack": "volcano_py.plugins.binpack",
    "pdb": "volcano_py.plugins.pdb",
    "network-topology-aware": "volcano_py.plugins.network_topology_aware",
    "usage": "volcano_py.plugins.usage",
    "extender": "volcano_py.plugins.extender",
    "rescheduling": "volcano_py.plugins.rescheduling",
}

ENTRY_POINT_GROUP: Final = "volcano_py.plugins"


def _load(module_path: str, attribute: str) -> Any:
    return getattr(importlib.import_module(module_path), attribute)


def new_action(name: str) -> Action:
    """A built-in action by name; each module exposes ``new() -> Action``."""
    action: Action = _load(BUILTIN_ACTIONS[name], "new")()
    return action


class PluginRegistry(Mapping[str, PluginBuilder]):
    """Plugin name -> builder, resolving built-in modules lazily."""

    def __init__(self, extra: Mapping[str, PluginBuilder] | None = None) -> None:
        self._extra = dict(extra or {})
        self._loaded: dict[str, PluginBuilder] = {}

    def __getitem__(self, name: str) -> PluginBuilder:
        if name in self._extra:
            return self._extra[name]
        if name not in self._loaded:
            if name not in BUILTIN_PLUGINS:
                raise KeyError(name)
            try:
                self._loaded[name] = _load(BUILTIN_PLUGINS[name], "new")
            except (ImportError, AttributeError) as error:
                # Treated like an unknown plugin: the session skips it and says so.
                log.error("plugin %s could not be loaded: %s", name, error)
                raise KeyError(name) from error
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        yield from BUILTIN_PLUGINS
        yield from (name for name in self._extra if name not in BUILTIN_PLUGINS)

    def __len__(self) -> int:
        return len(set(BUILTIN_PLUGINS) | set(self._extra))


def discover_plugins() -> dict[str, PluginBuilder]:
    """Third-party plugin builders from installed distributions' entry points."""
    found: dict[str, PluginBuilder] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            builder = entry.load()
        except Exception as error:  # a broken third-party plugin must not stop the scheduler
            log.error("failed to load plugin %s from %s: %s", entry.name, entry.value, error)
            continue
        found[entry.name] = builder
    return found


def default_registry() -> PluginRegistry:
    return PluginRegistry(discover_plugins())


def build_plugin(registry: Mapping[str, PluginBuilder], name: str, arguments: Arguments) -> Plugin:
    return registry[name](arguments)
