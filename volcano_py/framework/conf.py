"""``volcano-scheduler.conf``: actions, tiers of plugins with their enable flags, arguments.

Read as Volcano reads it (``pkg/scheduler/util.go`` ``UnmarshalSchedulerConf`` with
gopkg.in/yaml.v2, ``plugins/defaults.go``): only the first YAML document counts (a trailing
``...`` or a second document is fine); from a file every absent enable flag defaults to true
(except ``enableHierarchy`` and ``enabledClusterOrder``); tiers built in code (tests) keep
absent flags off; of two ``configurations`` entries for one action the first counts.

Refused (``ConfError``, the message names the file and the field): YAML that does not parse,
a field of the wrong shape (``actions`` not a string, a flag not a boolean, ...), ``drf`` with
``enableHierarchy`` and ``proportion`` in one tier, and (``UnknownNameError``, checked against
the plugin registry by ``conf_check.load_conf``) an unknown action or plugin name, with the
closest known name suggested. Volcano logs an unknown plugin at every session and runs
without it; a typo like ``gangg`` must not silently drop gang scheduling.

Warned, once per load (``ConfDiagnostics``; the value is then treated as Volcano treats it):
an unknown key at the top level, in a tier, in a plugin entry (a misspelled enable flag) or in
a ``configurations`` entry (ignored); an argument a plugin or action does not declare, or one
Volcano reads but volcano-py does not act on (ignored; a *retired* one, that Volcano reads no
more, is inert and only logged at info level: ``conf_check``); an argument of the wrong type (its
default kept, reported by ``Arguments`` when first read); a ``configurations`` entry for an
unknown or already-configured action (ignored); a plugin listed twice.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

log = logging.getLogger(__name__)

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


# The keys yaml.v2 reads into conf.SchedulerConfiguration, Tier, Configuration; any other is
# dropped by Volcano without a word, so we name it.
TOP_LEVEL_KEYS: Final = frozenset({"actions", "tiers", "configurations", "metrics"})
TIER_KEYS: Final = frozenset({"plugins"})
PLUGIN_KEYS: Final = frozenset({"name", "arguments", *ENABLE_FLAGS})
CONFIGURATION_KEYS: Final = frozenset({"name", "arguments"})


class ConfError(ValueError):
    """A volcano-scheduler.conf that cannot be used; the message names the field."""


class UnknownNameError(ConfError):
    """An action or plugin name no registry knows; refused even where Volcano only logs it."""


class RefusedArgumentsError(ConfError):
    """Plugin arguments Volcano exits on (conflicting switches): refused at load."""


def closest(name: str, known: Collection[str]) -> str:
    """`` (did you mean 'x'?)`` for the nearest known name, or nothing."""
    # 0.8: close enough for a typo (gangg, enableJobOrdr), not for a different name.
    match = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
    return f" (did you mean {match[0]!r}?)" if match else ""


class ConfDiagnostics:
    """The warnings of one loaded conf: each is emitted once, however many sessions read it.

    ``emit`` is where they go (the log by default; ``simulate`` prints them on stderr).
    """

    def __init__(self, emit: Callable[[str], None] | None = None) -> None:
        self.emit = emit if emit is not None else _log_warning
        self.warnings: list[str] = []
        self._seen: set[str] = set()

    def warn(self, message: str) -> None:
        if message in self._seen:
            return
        self._seen.add(message)
        self.warnings.append(message)
        self.emit(message)


def _log_warning(message: str) -> None:
    log.warning("%s", message)


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
    # Where this conf's warnings go, once each; not part of the conf's value.
    diagnostics: ConfDiagnostics = field(default_factory=ConfDiagnostics, compare=False, repr=False)
    # Resource name -> why a pod short of it was fitted as Volcano fits a plain resource, told
    # with its "Insufficient" reason (set by the conf check for retired arguments; derived
    # from the conf, so not part of its value).
    resource_notes: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

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


def _warn_unknown_keys(
    entry: Mapping[str, Any], allowed: Collection[str], where: str, diagnostics: ConfDiagnostics
) -> None:
    for key in entry:
        if key not in allowed:
            diagnostics.warn(f"{where}: unknown key {key!r}{closest(str(key), allowed)}; ignored")


def _parse_plugin(
    raw: Any, where: str, apply_file_defaults: bool, diagnostics: ConfDiagnostics
) -> PluginOption:
    entry = _as_mapping(raw, where)
    name = entry.get("name")
    if not isinstance(name, str) or not name:
        raise ConfError(f"{where}.name: a plugin needs a name")
    _warn_unknown_keys(entry, PLUGIN_KEYS, f"{where} ({name})", diagnostics)
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
    emit: Callable[[str], None] | None = None,
) -> SchedulerConf:
    """Parse a volcano-scheduler.conf; ``known_actions`` (when given) refuses unknown actions.

    Plugin names and arguments are checked against a registry by ``conf_check.load_conf``,
    which is what the scheduler and ``simulate`` call. Warnings go to ``emit`` (default: the
    log), each once.
    """
    diagnostics = ConfDiagnostics(emit)
    document, node = _first_document(text, source)
    root = _as_mapping(document, source)
    _warn_unknown_keys(root, TOP_LEVEL_KEYS, source, diagnostics)
    actions_text = root.get("actions", "")
    if not isinstance(actions_text, str):
        raise ConfError(f"{source}: actions: expected a comma-separated string")
    actions = [name.strip() for name in actions_text.split(",")]
    if known_actions is not None:
        known = set(known_actions)
        for name in actions:
            if name not in known:
                raise UnknownNameError(
                    f"{source}: actions: failed to find Action {name!r}{closest(name, known)}"
                )
    tiers = []
    for t, raw_tier in enumerate(_as_list(root.get("tiers"), f"{source}: tiers")):
        tier_map = _as_mapping(raw_tier, f"{source}: tiers[{t}]")
        _warn_unknown_keys(tier_map, TIER_KEYS, f"{source}: tiers[{t}]", diagnostics)
        plugins = [
            _parse_plugin(raw, f"{source}: tiers[{t}].plugins[{p}]", True, diagnostics)
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
        where = f"{source}: configurations[{c}]"
        entry = _as_mapping(raw, where)
        action = entry.get("name")
        if not isinstance(action, str):
            raise ConfError(f"{where}.name: an action name is required")
        _warn_unknown_keys(entry, CONFIGURATION_KEYS, f"{where} ({action})", diagnostics)
        arguments = dict(_as_mapping(entry.get("arguments"), f"{where}.arguments"))
        if action in configurations:
            # Volcano reads the first configuration of an action.
            diagnostics.warn(f"{where}: action {action!r} is configured above; ignored")
            continue
        configurations[action] = arguments
    metrics = _metrics(node, source)
    return SchedulerConf(actions, tiers, configurations, metrics, diagnostics)


def _first_document(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """The first YAML document, as yaml.v2 ``Unmarshal`` takes it (later ones are not read),
    with its node tree for the fields Go decodes from source text."""
    loader = _ConfLoader(text)  # a SafeLoader
    try:
        node = loader.get_node() if loader.check_node() else None
        return (loader.construct_document(node) if node is not None else None), node
    except yaml.YAMLError as error:
        raise ConfError(f"{source}: not valid YAML: {error}") from error
    finally:
        loader.dispose()


def _metrics(node: yaml.Node | None, source: str) -> dict[str, str]:
    """``metrics`` as yaml.v2 fills a ``map[string]string``: every scalar as written
    (``true`` stays ``true``, ``1.50`` stays ``1.50``)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    for key, value in node.value:
        if key.value != "metrics":
            continue
        if isinstance(value, yaml.ScalarNode) and value.tag == "tag:yaml.org,2002:null":
            return {}
        if not isinstance(value, yaml.MappingNode):
            raise ConfError(f"{source}: metrics: expected a mapping")
        metrics = {}
        for entry_key, entry_value in value.value:
            if not isinstance(entry_value, yaml.ScalarNode):
                raise ConfError(f"{source}: metrics.{entry_key.value}: expected a string")
            null = entry_value.tag == "tag:yaml.org,2002:null"
            metrics[str(entry_key.value)] = "" if null else str(entry_value.value)
        return metrics
    return {}


def default_conf(known_actions: Iterable[str] | None = None) -> SchedulerConf:
    """Volcano's compiled-in default configuration."""
    return parse_conf(DEFAULT_CONF, known_actions, source="built-in default conf")
