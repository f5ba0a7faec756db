"""``volcano-scheduler.conf``: actions, tiers of plugins with their enable flags, arguments.

Read exactly as Volcano reads it (``pkg/scheduler/util.go`` ``UnmarshalSchedulerConf``,
``plugins/defaults.go``): from a file every absent enable flag defaults to true (except
``enableHierarchy`` and ``enabledClusterOrder``); tiers built in code (tests) keep absent flags
off. Unknown actions are an error; unknown plugins are skipped at session open with a warning;
``drf`` with ``enableHierarchy`` and ``proportion`` in one tier is an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

# Every enable flag of a plugin entry, in upstream spelling (quirks included).
ENABLE_FLAGS: Final = (
    "enableJobOrder",
    "enableHierarchy",
    "enableJobReady",
    "enableJobPipelined",
    "enableTaskOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enableQueueOrder",
    "enabledClusterOrder",
    "enablePredicate",
    "enableBestNode",
    "enableNodeOrder",
    "enableTargetJob",
    "enableReservedNodes",
    "enableJobEnqueued",
    "enabledVictim",
    "enableJobStarving",
    "enabledOverused",
    "enabledAllocatable",
    "enabledHyperNodeOrder",
    "enabledSubJobReady",
    "enabledSubJobPipelined",
    "enabledSubJobOrder",
    "enabledHyperNodeGradient",
)
# Flags a file leaves off unless it says otherwise.
FLAGS_WITHOUT_FILE_DEFAULT: Final = frozenset({"enableHierarchy", "enabledClusterOrder"})

DEFAULT_CONF: Final = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""


class _ConfLoader(yaml.SafeLoader):
    """YAML as Go's yaml reads a scheduler conf: ``1e1`` is a float (YAML 1.1 wants a dot)."""


_ConfLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


class ConfError(ValueError):
    """A volcano-scheduler.conf that cannot be used; the message names the field."""


@dataclass(slots=True)
class PluginOption:
    name: str
    # flag -> True/False; an absent flag is None, which means disabled.
    flags: dict[str, bool | None] = field(default_factory=dict)
    arguments: dict[str, Any] = field(default_factory=dict)

    def enabled(self, flag: str) -> bool:
        return self.flags.get(flag) is True

    @classmethod
    def with_flags(
        cls, name: str, *enabled: str, arguments: Mapping[str, Any] | None = None
    ) -> PluginOption:
        """A plugin entry as unit tests build one: only the named flags on."""
        unknown = [flag for flag in enabled if flag not in ENABLE_FLAGS]
        if unknown:
            raise ConfError(f"plugin {name}: unknown enable flag(s) {', '.join(unknown)}")
        return cls(name, {flag: True for flag in enabled}, dict(arguments or {}))


@dataclass(slots=True)
class Tier:
    plugins: list[PluginOption] = field(default_factory=list)


@dataclass(slots=True)
class SchedulerConf:
    actions: list[str]
    tiers: list[Tier]
    configurations: dict[str, dict[str, Any]] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)

    def action_arguments(self, action: str) -> dict[str, Any]:
        return self.configurations.get(action, {})

    def plugin_names(self) -> list[str]:
        return [plugin.name for tier in self.tiers for plugin in tier.plugins]


def _as_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ConfError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _parse_plugin(raw: Any, where: str, apply_file_defaults: bool) -> PluginOption:
    entry = _as_mapping(raw, where)
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ConfError(f"{where}.name: a plugin needs a name")
    flags: dict[str, bool | None] = {}
    for flag in ENABLE_FLAGS:
        value = entry.get(flag)
        if value is not None and not isinstance(value, bool):
            raise ConfError(f"{where}.{flag}: expected true or false, got {value!r}")
        if value is None and apply_file_defaults and flag not in FLAGS_WITHOUT_FILE_DEFAULT:
            value = True
        flags[flag] = value
    arguments = dict(_as_mapping(entry.get("arguments"), f"{where}.arguments"))
    return PluginOption(name, flags, arguments)


def parse_conf(
    text: str,
    known_actions: Iterable[str] | None = None,
    *,
    source: str = "volcano-scheduler.conf",
) -> SchedulerConf:
    """Parse a volcano-scheduler.conf; ``known_actions`` (when given) rejects unknown names."""
    try:
        document = yaml.load(text, Loader=_ConfLoader)  # a SafeLoader subclass
    except yaml.YAMLError as error:
        raise ConfError(f"{source}: not valid YAML: {error}") from error
    root = _as_mapping(document, source)
    actions_text = root.get("actions", "")
    if not isinstance(actions_text, str):
        raise ConfError(f"{source}: actions: expected a comma-separated string")
    actions = [name.strip() for name in actions_text.split(",")]
    if known_actions is not None:
        known = set(known_actions)
        for name in actions:
            if name not in known:
                raise ConfError(f"{source}: actions: failed to find Action {name!r}")
    tiers = []
    for t, raw_tier in enumerate(_as_list(root.get("tiers"), f"{source}: tiers")):
        tier_map = _as_mapping(raw_tier, f"{source}: tiers[{t}]")
        plugins = [
            _parse_plugin(raw, f"{source}: tiers[{t}].plugins[{p}]", apply_file_defaults=True)
            for p, raw in enumerate(_as_list(tier_map.get("plugins"), f"tiers[{t}].plugins"))
        ]
        names = {plugin.name for plugin in plugins}
        hierarchical_drf = any(p.name == "drf" and p.enabled("enableHierarchy") for p in plugins)
        if hierarchical_drf and "proportion" in names:
            raise ConfError(
                f"{source}: tiers[{t}]: proportion and drf with hierarchy enabled conflicts"
            )
        tiers.append(Tier(plugins))
    configurations: dict[str, dict[str, Any]] = {}
    for c, raw in enumerate(_as_list(root.get("configurations"), f"{source}: configurations")):
        entry = _as_mapping(raw, f"{source}: configurations[{c}]")
        action = entry.get("name")
        if not isinstance(action, str):
            raise ConfError(f"{source}: configurations[{c}].name: an action name is required")
        if action in configurations:
            continue  # upstream reads the first configuration of an action
        configurations[action] = dict(
            _as_mapping(entry.get("arguments"), f"{source}: configurations[{c}].arguments")
        )
    metrics = {str(k): str(v) for k, v in _as_mapping(root.get("metrics"), "metrics").items()}
    return SchedulerConf(actions, tiers, configurations, metrics)


def default_conf(known_actions: Iterable[str] | None = None) -> SchedulerConf:
    """Volcano's compiled-in default configuration."""
    return parse_conf(DEFAULT_CONF, known_actions, source="built-in default conf")
