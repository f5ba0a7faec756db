"""Which actions and plugins exist: the built-ins, plus third-party plugins that register
themselves under the ``volcano_py.plugins`` entry-point group (the Python analogue of
Volcano's ``--plugins-dir``).

Built-ins are named by module path and imported on first use, so the registry costs nothing
at start-up and a missing optional dependency of one plugin cannot break the others.

The registry is also what a conf is checked against (``framework.conf_check``): the names it
knows and the ``ARGUMENTS`` / ``UNSUPPORTED_ARGUMENTS`` / ``RETIRED_ARGUMENTS`` each module
declares.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Collection, Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any, Final

from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf_check import DeclaredArguments
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
    "resourcequota": "volcano_py.plugins.resourcequota",
    "predicates": "volcano_py.plugins.predicates",
    "nodeorder": "volcano_py.plugins.nodeorder",
    "binpack": "volcano_py.plugins.binpack",
    "pdb": "volcano_py.plugins.pdb",
    "network-topology-aware": "volcano_py.plugins.network_topology_aware",
    "sla": "volcano_py.plugins.sla",
    "tdm": "volcano_py.plugins.tdm",
    "numa-aware": "volcano_py.plugins.numa_aware",
    "task-topology": "volcano_py.plugins.task_topology",
    "cdp": "volcano_py.plugins.cdp",
    "nodegroup": "volcano_py.plugins.nodegroup",
    "resource-strategy-fit": "volcano_py.plugins.resource_strategy_fit",
    "usage": "volcano_py.plugins.usage",
    "extender": "volcano_py.plugins.extender",
    "rescheduling": "volcano_py.plugins.rescheduling",
    "deviceshare": "volcano_py.plugins.deviceshare",
}

ENTRY_POINT_GROUP: Final = "volcano_py.plugins"


def _load(module_path: str, attribute: str) -> Any:
    return getattr(importlib.import_module(module_path), attribute)


def _declared(source: Any) -> DeclaredArguments | None:
    """``ARGUMENTS`` (and ``UNSUPPORTED_ARGUMENTS``, ``REFUSED_ARGUMENTS``,
    ``RETIRED_ARGUMENTS``) of a module or builder, if it has them."""
    accepted = getattr(source, "ARGUMENTS", None)
    if accepted is None:
        return None
    return DeclaredArguments(
        frozenset(accepted),
        frozenset(getattr(source, "UNSUPPORTED_ARGUMENTS", ())),
        getattr(source, "REFUSED_ARGUMENTS", None),
        dict(getattr(source, "RETIRED_ARGUMENTS", {})),
    )


# ``configurations`` entries a plugin reads, not an action: name -> the plugin module, which
# declares the entry's arguments as ``CONFIGURATION_ARGUMENTS[name]`` (a module-like object
# with ``ARGUMENTS`` and ``UNSUPPORTED_ARGUMENTS``).
PLUGIN_CONFIGURATIONS: Final = {"init-params": "volcano_py.plugins.deviceshare"}


def declared_action_arguments(name: str) -> DeclaredArguments | None:
    if name in PLUGIN_CONFIGURATIONS:
        module = importlib.import_module(PLUGIN_CONFIGURATIONS[name])
        return _declared(module.CONFIGURATION_ARGUMENTS[name])
    if name not in BUILTIN_ACTIONS:
        return None
    return _declared(importlib.import_module(BUILTIN_ACTIONS[name]))


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

    # ---- what a conf may name (framework.conf_check.ConfVocabulary)

    def action_names(self) -> Collection[str]:
        return BUILTIN_ACTIONS.keys()

    def plugin_names(self) -> Collection[str]:
        return frozenset(self)

    def declared_action_arguments(self, name: str) -> DeclaredArguments | None:
        return declared_action_arguments(name)

    def declared_plugin_arguments(self, name: str) -> DeclaredArguments | None:
        """The arguments a plugin declares; None (not checked) when it declares none or
        cannot be loaded (the session then reports it)."""
        try:
            builder = self[name]
        except KeyError:
            return None
        declared = _declared(builder)
        if declared is None:
            # Declared next to the builder, in its module.
            declared = _declared(sys.modules.get(getattr(builder, "__module__", "") or ""))
        return declared


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
