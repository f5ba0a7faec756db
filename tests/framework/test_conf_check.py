"""A conf checked against the registry (``framework/conf_check.py``): unknown action and
plugin names refused, unknown keys and arguments named once per load, each module's declared
``ARGUMENTS`` matching what upstream's plugin and action read.

Upstream has no such checks (an unknown plugin is logged at every session, unknown keys and
arguments are dropped by yaml.v2 and never read); the declared argument lists are facts from
upstream's ``pkg/scheduler/plugins/<name>/*.go`` and ``pkg/scheduler/actions/<name>/*.go``.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

import pytest

from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework import conf_check
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import ConfError, UnknownNameError
from volcano_py.framework.conf_check import DeclaredArguments, load_conf, load_default_conf
from volcano_py.framework.session import close_session, open_session
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, BUILTIN_PLUGINS, PluginRegistry


def load(text: str, registry: PluginRegistry | None = None) -> tuple[Any, list[str]]:
    warnings: list[str] = []
    conf = load_conf(text, registry or PluginRegistry(), source="my.conf", emit=warnings.append)
    return conf, warnings


# ---------------------------------------------------------------- refused: unknown names


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: priority\n  - name: gangg\n',
            "my.conf: tiers[0].plugins[1]: unknown plugin 'gangg' (did you mean 'gang'?)",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n'
            "  - name: nodeordr\n",
            "my.conf: tiers[1].plugins[0]: unknown plugin 'nodeordr' (did you mean 'nodeorder'?)",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: zzzzzz\n',
            "my.conf: tiers[0].plugins[0]: unknown plugin 'zzzzzz'",
        ),
        (
            'actions: "enqueue, alocate"\n',
            "my.conf: actions: failed to find Action 'alocate' (did you mean 'allocate'?)",
        ),
    ],
    ids=["plugin-typo", "second-tier", "no-close-name", "action-typo"],
)
def test_unknown_name_is_refused_with_its_place_and_closest_name(text, message):
    with pytest.raises(UnknownNameError) as raised:
        load(text)
    assert str(raised.value) == message
    assert isinstance(raised.value, ConfError)


def test_known_names_come_from_the_registry_not_a_list():
    registry = PluginRegistry({"my-plugin": lambda arguments: None})  # type: ignore[arg-type,return-value]
    conf, warnings = load(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: my-plugin\n', registry
    )
    assert conf.plugin_names() == ["my-plugin"] and warnings == []
    assert "my-plugin" in registry.plugin_names()
    assert set(BUILTIN_PLUGINS) <= set(registry.plugin_names())
    assert set(registry.action_names()) == set(BUILTIN_ACTIONS)


def test_default_conf_passes_the_check():
    warnings: list[str] = []
    conf = load_default_conf(PluginRegistry(), emit=warnings.append)
    assert conf.actions == ["enqueue", "allocate", "backfill"] and warnings == []


# ---------------------------------------------------------------- warned: keys and arguments


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrdr: false\n',
            "my.conf: tiers[0].plugins[0] (gang): unknown key 'enableJobOrdr'"
            " (did you mean 'enableJobOrder'?); ignored",
        ),
        (
            # upstream's key is enabledClusterOrder; the natural spelling is a different key
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n'
            "    enableClusterOrder: true\n",
            "my.conf: tiers[0].plugins[0] (gang): unknown key 'enableClusterOrder'"
            " (did you mean 'enabledClusterOrder'?); ignored",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    argument: {a: 1}\n',
            "my.conf: tiers[0].plugins[0] (gang): unknown key 'argument'"
            " (did you mean 'arguments'?); ignored",
        ),
        (
            'actions: "allocate"\naction: "preempt"\n',
            "my.conf: unknown key 'action' (did you mean 'actions'?); ignored",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugin:\n  - name: gang\n',
            "my.conf: tiers[0]: unknown key 'plugin' (did you mean 'plugins'?); ignored",
        ),
        (
            'actions: "allocate"\nconfigurations:\n- name: allocate\n  args: {}\n',
            "my.conf: configurations[0] (allocate): unknown key 'args'; ignored",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n'
            "      binpack.weigth: 3\n",
            "my.conf: tiers[0].plugins[0] (binpack): unknown plugin argument 'binpack.weigth'"
            " (did you mean 'binpack.weight'?); ignored",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    arguments: {x: 1}\n',
            "my.conf: tiers[0].plugins[0] (gang): unknown plugin argument 'x'; ignored",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n    arguments:\n'
            "      volumebinding.weight: 2\n",
            "my.conf: tiers[0].plugins[0] (predicates): argument 'volumebinding.weight' is read"
            " by Volcano but has no effect in volcano-py; ignored",
        ),
        (
            'actions: "allocate"\nconfigurations:\n- name: preempt\n  arguments:\n'
            "    minCandidateNodesPercent: 10\n",
            "my.conf: configurations (name 'preempt'): unknown action argument"
            " 'minCandidateNodesPercent' (did you mean 'minCandidateNodesPercentage'?); ignored",
        ),
        (
            'actions: "allocate"\nconfigurations:\n- name: alocate\n  arguments: {}\n',
            "my.conf: configurations (name 'alocate'): unknown action (did you mean"
            " 'allocate'?); ignored",
        ),
        (
            'actions: "allocate"\nconfigurations:\n- name: allocate\n- name: allocate\n',
            "my.conf: configurations[1]: action 'allocate' is configured above; ignored",
        ),
        (
            'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: gang\n',
            "my.conf: tiers[1].plugins[0]: plugin 'gang' is already listed at"
            " tiers[0].plugins[0]; each entry opens its own instance",
        ),
    ],
    ids=[
        "misspelled-flag",
        "flag-without-upstream-quirk",
        "plugin-key",
        "top-level-key",
        "tier-key",
        "configuration-key",
        "plugin-argument-typo",
        "argument-of-plugin-without-arguments",
        "unsupported-predicates-argument",
        "action-argument-typo",
        "configuration-of-unknown-action",
        "configuration-twice",
        "plugin-twice",
    ],
)
def test_warning_names_the_key(text, warning):
    _, warnings = load(text)
    assert warnings == [warning]


def test_a_different_name_gets_no_suggestion():
    """A key Volcano reads and volcano-py does not model is not a typo of another key."""
    _, warnings = load(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n    arguments:\n'
        "      predicate.VolumeZoneEnable: true\n"
    )
    assert warnings == [
        "my.conf: tiers[0].plugins[0] (predicates): argument 'predicate.VolumeZoneEnable' is"
        " read by Volcano but has no effect in volcano-py; ignored"
    ]


def test_misspelled_flag_keeps_the_default():
    """Volcano drops the unknown key, so the real flag keeps its file default (true)."""
    conf, _ = load(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrdr: false\n'
    )
    assert conf.tiers[0].plugins[0].enabled("enableJobOrder")


def test_prefix_arguments_are_accepted():
    """``binpack.resources.<name>`` and ``hypernode.binpack.resources.<name>`` are patterns."""
    _, warnings = load(
        """
actions: "allocate"
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.resources: nvidia.com/gpu, example.com/foo
      binpack.resources.nvidia.com/gpu: 2
      binpack.resources.example.com/foo: 3
  - name: network-topology-aware
    arguments:
      hypernode.binpack.resources: nvidia.com/gpu
      hypernode.binpack.resources.nvidia.com/gpu: 2
"""
    )
    assert warnings == []


def test_declared_arguments_match_prefix_and_exact_entries():
    declared = DeclaredArguments(frozenset({"a.b", "c.*"}), frozenset({"d"}))
    assert declared.accepts("a.b") and declared.accepts("c.x") and declared.accepts("c.")
    assert not declared.accepts("a.bc") and not declared.accepts("c") and not declared.accepts("d")


def test_each_warning_once_per_load():
    _, warnings = load(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n    arguments: {x: 1}\n'
        "  - name: priority\n    arguments: {x: 1}\n"
    )
    assert len(warnings) == 2  # two places, two messages; each said once
    assert len(set(warnings)) == 2


def test_warnings_go_to_the_log_by_default(caplog):
    with caplog.at_level(logging.WARNING, logger="volcano_py.framework.conf"):
        conf = load_conf('actions: "allocate"\nzzz: x\n', PluginRegistry(), source="f")
    assert [r.getMessage() for r in caplog.records] == ["f: unknown key 'zzz'; ignored"]
    assert conf.diagnostics.warnings == ["f: unknown key 'zzz'; ignored"]


def test_wrongly_typed_argument_is_reported_once_per_load_not_per_session():
    """``GetInt`` keeps the default for a string (``arguments.go``); the conf's channel names it
    at the first session only."""
    conf, warnings = load(
        'actions: "allocate"\ntiers:\n- plugins:\n  - name: binpack\n    arguments:\n'
        '      binpack.weight: "ten"\n'
        'configurations:\n- name: allocate\n  arguments: {predicateErrorCacheEnable: "nope"}\n'
    )
    assert warnings == []
    cache = SchedulerCache()
    for _ in range(3):
        ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache)
        assert ssn.action_arguments("allocate").get_bool("predicateErrorCacheEnable", True)
        close_session(ssn)
    assert conf.diagnostics.warnings == [
        "plugin binpack: could not parse argument 'ten' for key binpack.weight to int;"
        " default kept",
        "action allocate: could not parse argument 'nope' for key predicateErrorCacheEnable"
        " to bool; default kept",
    ]
    assert warnings == conf.diagnostics.warnings  # each emitted once, three sessions on


# ---------------------------------------------------------------- declared argument lists

# The keys each upstream plugin reads (framework.Arguments getters, ``args[...]`` and
# ``framework.Get``), from pkg/scheduler/plugins/<name>/*.go.
UPSTREAM_PLUGIN_ARGUMENTS: dict[str, set[str]] = {
    "priority": set(),
    "gang": set(),
    "conformance": set(),
    "drf": set(),
    "proportion": set(),
    "pdb": set(),
    "capacity": {
        "ancestorReclaimLevel",
        "capacity.DynamicResourceAllocationEnable",
        "capacity.DRAConsumableCapacityEnable",
    },
    "overcommit": {"overcommit-factor"},
    "nodeorder": {
        "nodeaffinity.weight",
        "podaffinity.weight",
        "leastrequested.weight",
        "balancedresource.weight",
        "mostrequested.weight",
        "tainttoleration.weight",
        "imagelocality.weight",
        "podtopologyspread.weight",
    },
    "binpack": {
        "binpack.weight",
        "binpack.cpu",
        "binpack.memory",
        "binpack.resources",
        "binpack.resources.*",
    },
    "network-topology-aware": {
        "weight",
        "hypernode.binpack.cpu",
        "hypernode.binpack.memory",
        "hypernode.binpack.resources",
        "hypernode.binpack.resources.*",
        "hypernode.binpack.normal-pod.enable",
        "hypernode.binpack.normal-pod.fading",
        "hypernode.gradient.evict.max-hypernodes",
    },
    "predicates": {
        "predicate.NodeAffinityEnable",
        "predicate.NodePortsEnable",
        "predicate.TaintTolerationEnable",
        "predicate.PodAffinityEnable",
        "predicate.NodeVolumeLimitsEnable",
        "predicate.VolumeZoneEnable",
        "predicate.PodTopologySpreadEnable",
        "predicate.VolumeBindingEnable",
        "predicate.CacheEnable",
        # helper.go
        "volumebinding.bindTimeoutSeconds",
        "volumebinding.shape",
        "volumebinding.weight",
        "dynamicresources.filterTimeoutSeconds",
    },
}

# Keys earlier releases read and Volcano's guides still set, which its plugins read no more
# (predicates.go declares DynamicResourceAllocationEnable but follows the feature gate;
# GPU sharing moved to deviceshare in v1.8, the proportional policy to resource-strategy-fit
# in v1.13): declared retired, so they are inert and not called unknown.
UPSTREAM_RETIRED_ARGUMENTS: dict[str, set[str]] = {
    "predicates": {
        "predicate.DynamicResourceAllocationEnable",
        "predicate.GPUSharingEnable",
        "predicate.GPUNumberEnable",
        "predicate.ProportionalEnable",
        "predicate.resources",
        "predicate.resources.*",
    },
}

# The keys each upstream action reads from its ``configurations`` entry.
UPSTREAM_ACTION_ARGUMENTS: dict[str, set[str]] = {
    "enqueue": set(),
    "allocate": {"predicateErrorCacheEnable"},
    "backfill": {"predicateErrorCacheEnable"},
    "reclaim": {"predicateErrorCacheEnable"},
    "shuffle": set(),
    "preempt": {
        "predicateErrorCacheEnable",
        "enableTopologyAwarePreemption",
        "topologyAwarePreemptWorkerNum",
        "minCandidateNodesPercentage",
        "minCandidateNodesAbsolute",
        "maxCandidateNodesAbsolute",
    },
    "gangpreempt": {"maxDomains", "allowWholeBundle"},
    "gangreclaim": {"maxDomains", "allowWholeBundle"},
}


@pytest.mark.parametrize("name", sorted(UPSTREAM_PLUGIN_ARGUMENTS))
def test_plugin_declares_every_argument_upstream_reads(name):
    declared = PluginRegistry().declared_plugin_arguments(name)
    assert declared is not None
    assert set(declared.accepted) | set(declared.unsupported) == UPSTREAM_PLUGIN_ARGUMENTS[name]
    assert not declared.accepted & declared.unsupported
    assert set(declared.retired) == UPSTREAM_RETIRED_ARGUMENTS.get(name, set())
    assert not set(declared.retired) & (declared.accepted | declared.unsupported)


@pytest.mark.parametrize("name", sorted(UPSTREAM_ACTION_ARGUMENTS))
def test_action_declares_every_argument_upstream_reads(name):
    declared = PluginRegistry().declared_action_arguments(name)
    assert declared is not None
    assert set(declared.accepted) == UPSTREAM_ACTION_ARGUMENTS[name]


@pytest.mark.parametrize("name", sorted(BUILTIN_PLUGINS))
def test_every_builtin_plugin_declares_its_arguments(name):
    """A built-in plugin without ``ARGUMENTS`` would leave its arguments unchecked."""
    module = importlib.import_module(BUILTIN_PLUGINS[name])
    assert isinstance(module.ARGUMENTS, frozenset)


@pytest.mark.parametrize("name", sorted(BUILTIN_ACTIONS))
def test_every_builtin_action_declares_its_arguments(name):
    module = importlib.import_module(BUILTIN_ACTIONS[name])
    assert isinstance(module.ARGUMENTS, frozenset)


class RecordingArguments(Arguments):
    """Every key a plugin looks up."""

    def __init__(self, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.read: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)


@pytest.mark.parametrize("name", sorted(BUILTIN_PLUGINS))
def test_plugin_reads_only_declared_arguments(name):
    """Built and opened on an empty cluster, a plugin looks up no key it does not declare
    (with its resource list set, so per-resource keys are read too)."""
    registry = PluginRegistry()
    declared = registry.declared_plugin_arguments(name)
    assert declared is not None
    arguments = RecordingArguments(
        {"binpack.resources": "example.com/foo", "hypernode.binpack.resources": "example.com/foo"}
    )
    plugin = registry[name](arguments)
    conf, _ = load(f'actions: "allocate"\ntiers:\n- plugins:\n  - name: {name}\n')
    cache = SchedulerCache()
    ssn = open_session(cache.snapshot(), conf, {name: lambda _arguments: plugin}, cache)
    close_session(ssn)
    undeclared = {
        key
        for key in arguments.read
        if not declared.accepts(key) and not declared.is_unsupported(key)
    }
    assert undeclared == set()


# ---------------------------------------------------------------- retired arguments

GPU_GUIDE_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
    arguments:
      predicate.GPUSharingEnable: true
      predicate.GPUNumberEnable: "false"
      predicate.DynamicResourceAllocationEnable: true
      predicate.ProportionalEnable: true
      predicate.resources: nvidia.com/gpu
      predicate.resources.nvidia.com/gpu.cpu: 4
"""


@pytest.fixture
def fresh_retired_log(monkeypatch):
    monkeypatch.setattr(conf_check, "_logged_retired", set())


def test_retired_arguments_are_not_warned_but_logged_once_at_info(fresh_retired_log, caplog):
    """Volcano reads none of them: inert and quiet (simulate prints nothing), the log says once
    per process what replaces each, however often the conf is loaded."""
    with caplog.at_level(logging.INFO, logger="volcano_py.framework.conf_check"):
        _, warnings = load(GPU_GUIDE_CONF)
        load(GPU_GUIDE_CONF)
    assert warnings == []
    messages = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert len(messages) == 6
    sharing = next(m for m in messages if "predicate.GPUSharingEnable" in m)
    assert sharing == (
        "plugin predicates: argument predicate.GPUSharingEnable is retired and has no effect,"
        " as on Volcano: Volcano v1.8 moved GPU sharing to the deviceshare plugin; set"
        " deviceshare.GPUSharingEnable on the deviceshare plugin instead"
    )
    dra = next(m for m in messages if "DynamicResourceAllocationEnable" in m)
    assert "DynamicResourceAllocation feature gate" in dra
    assert any("predicate.resources.nvidia.com/gpu.cpu" in m for m in messages)


def test_a_retired_gpu_switch_set_true_notes_the_resource_it_meant(fresh_retired_log):
    conf, _ = load(GPU_GUIDE_CONF)
    # GPUNumberEnable is set "false": nothing was meant, nothing to tell.
    assert set(conf.resource_notes) == {"volcano.sh/gpu-memory"}
    assert conf.resource_notes["volcano.sh/gpu-memory"] == (
        "counted as a plain resource, not per device: deviceshare.GPUSharingEnable is off on"
        " plugin deviceshare; predicate.GPUSharingEnable is retired, Volcano v1.8 moved GPU"
        " sharing to the deviceshare plugin"
    )


def test_no_note_when_the_successor_is_on(fresh_retired_log):
    text = GPU_GUIDE_CONF.replace(
        "  - name: predicates\n",
        "  - name: deviceshare\n    arguments:\n      deviceshare.GPUSharingEnable: true\n"
        "  - name: predicates\n",
    )
    conf, warnings = load(text)
    assert warnings == []
    assert conf.resource_notes == {}
