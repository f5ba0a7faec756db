"""volcano-scheduler.conf parsing (``pkg/scheduler/util.go`` ``UnmarshalSchedulerConf``,
``pkg/scheduler/plugins/defaults.go`` ``ApplyPluginConfDefaults``, spec §2.2).

Upstream ``pkg/scheduler/util_test.go`` ``TestLoadSchedulerConf`` is transcribed as
``test_load_scheduler_conf_upstream``; ``framework/arguments_test.go``
``TestGetArgOfActionFromConf`` as ``test_action_arguments_upstream``;
``plugins/defaults_test.go`` ``TestApplyPluginConfDefaults`` (both cases) as
``test_apply_plugin_conf_defaults_upstream``. Checks against the registry (unknown names,
arguments) are in ``test_conf_check.py``.
"""

from __future__ import annotations

import pytest

from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import (
    DEFAULT_CONF,
    ENABLE_FLAGS,
    FLAGS_WITHOUT_FILE_DEFAULT,
    ConfError,
    PluginOption,
    default_conf,
    parse_conf,
)
from volcano_py.framework.hooks import HOOKS
from volcano_py.scheduler.registry import BUILTIN_ACTIONS

ACTIONS = tuple(BUILTIN_ACTIONS)

# Every flag ApplyPluginConfDefaults sets to true (the file defaults), in upstream order.
UPSTREAM_DEFAULTED_FLAGS = (
    "enableJobOrder",
    "enableJobReady",
    "enableJobPipelined",
    "enableJobEnqueued",
    "enableTaskOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enablePreemptive",
    "enableQueueOrder",
    "enablePredicate",
    "enableBestNode",
    "enableNodeOrder",
    "enableTargetJob",
    "enableReservedNodes",
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

HELM_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""

CI_CONF = """\
actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
  - name: sla
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""


def test_enable_flags_are_upstream_yaml_keys():
    """The 25 ``yaml:"..."`` keys of ``conf.PluginOption``, quirky spellings included."""
    assert len(ENABLE_FLAGS) == len(set(ENABLE_FLAGS)) == 25
    assert set(ENABLE_FLAGS) == set(UPSTREAM_DEFAULTED_FLAGS) | {
        "enableHierarchy",
        "enabledClusterOrder",
    }
    assert frozenset({"enableHierarchy", "enabledClusterOrder"}) == FLAGS_WITHOUT_FILE_DEFAULT


def test_every_hook_flag_is_a_conf_flag():
    for name, spec in HOOKS.items():
        flags = (
            () if spec.flag is None else (spec.flag,) if isinstance(spec.flag, str) else spec.flag
        )
        assert all(flag in ENABLE_FLAGS for flag in flags), name


def test_load_scheduler_conf_upstream():
    """``util_test.go`` ``TestLoadSchedulerConf``: every absent flag becomes true, the two
    exceptions stay unset, no configurations."""
    text = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
"""
    conf = parse_conf(text, ACTIONS)
    assert conf.actions == ["enqueue", "allocate", "backfill"]
    assert [[p.name for p in tier.plugins] for tier in conf.tiers] == [
        ["priority", "gang", "conformance"],
        ["drf", "predicates", "proportion", "nodeorder"],
    ]
    expected = {flag: True for flag in UPSTREAM_DEFAULTED_FLAGS}
    expected.update({"enableHierarchy": None, "enabledClusterOrder": None})
    for tier in conf.tiers:
        for option in tier.plugins:
            assert option.flags == expected, option.name
            assert option.arguments == {}
    assert conf.configurations == {}
    assert conf.metrics == {}


@pytest.mark.parametrize("flag", ENABLE_FLAGS)
def test_absent_flag_from_file(flag):
    option = parse_conf('actions: "allocate"\ntiers:\n- plugins:\n  - name: gang\n').tiers[0]
    gang = option.plugins[0]
    if flag in FLAGS_WITHOUT_FILE_DEFAULT:
        assert gang.flags[flag] is None
        assert not gang.enabled(flag)
    else:
        assert gang.flags[flag] is True
        assert gang.enabled(flag)


@pytest.mark.parametrize("flag", ENABLE_FLAGS)
def test_explicit_flags_from_file_are_kept(flag):
    text = f"""
actions: "allocate"
tiers:
- plugins:
  - name: disabled-one
    {flag}: false
  - name: enabled-one
    {flag}: true
"""
    off, on = parse_conf(text).tiers[0].plugins
    assert off.flags[flag] is False and not off.enabled(flag)
    assert on.flags[flag] is True and on.enabled(flag)


def test_yaml_11_booleans_are_flags():
    """yaml.v2 and PyYAML both read YAML 1.1 booleans (``yes``/``off``)."""
    text = """
actions: "allocate"
tiers:
- plugins:
  - name: gang
    enableJobOrder: off
    enableJobReady: yes
"""
    gang = parse_conf(text).tiers[0].plugins[0]
    assert gang.flags["enableJobOrder"] is False
    assert gang.flags["enableJobReady"] is True


def test_with_flags_builds_code_tiers_without_defaults():
    """Tiers built in code (unit tests): only the named flags are on, absent means off."""
    option = PluginOption.with_flags("gang", "enableJobReady", arguments={"a": 1})
    assert option.enabled("enableJobReady")
    for flag in ENABLE_FLAGS:
        if flag != "enableJobReady":
            assert not option.enabled(flag), flag
    assert option.arguments == {"a": 1}


def test_with_flags_rejects_unknown_flag():
    with pytest.raises(ConfError, match="enableJobOrdr"):
        PluginOption.with_flags("gang", "enableJobOrdr")


def test_with_flags_copies_arguments():
    arguments = {"k": 1}
    option = PluginOption.with_flags("gang", arguments=arguments)
    arguments["k"] = 2
    assert option.arguments == {"k": 1}


def test_default_conf_is_upstream_default():
    conf = default_conf(ACTIONS)
    assert conf.actions == ["enqueue", "allocate", "backfill"]
    assert conf.plugin_names() == [
        "priority",
        "gang",
        "conformance",
        "overcommit",
        "drf",
        "predicates",
        "proportion",
        "nodeorder",
    ]
    assert [len(tier.plugins) for tier in conf.tiers] == [3, 5]
    # The built-in default is read like a file: every flag on but the two exceptions.
    for tier in conf.tiers:
        for option in tier.plugins:
            for flag in UPSTREAM_DEFAULTED_FLAGS:
                assert option.enabled(flag), (option.name, flag)
            assert not option.enabled("enableHierarchy")
            assert not option.enabled("enabledClusterOrder")
    assert "binpack" not in DEFAULT_CONF


def test_helm_conf_keeps_preemptable_off_for_gang_and_drf():
    conf = parse_conf(HELM_CONF, ACTIONS)
    by_name = {p.name: p for tier in conf.tiers for p in tier.plugins}
    assert not by_name["gang"].enabled("enablePreemptable")
    assert not by_name["drf"].enabled("enablePreemptable")
    assert by_name["gang"].enabled("enableJobReady")
    assert by_name["priority"].enabled("enablePreemptable")
    assert conf.plugin_names()[-1] == "binpack"


def test_ci_conf_arguments_and_unknown_plugins_parse():
    """``parse_conf`` alone does not check plugin names (``conf_check.load_conf`` does,
    against the registry); plugin arguments are kept as YAML typed them."""
    conf = parse_conf(CI_CONF, ACTIONS)
    assert conf.actions == ["enqueue", "allocate", "backfill", "reclaim", "preempt"]
    by_name = {p.name: p for tier in conf.tiers for p in tier.plugins}
    assert "sla" in by_name and "network-topology-aware" in by_name
    assert by_name["predicates"].arguments == {"predicate.DynamicResourceAllocationEnable": True}


def test_actions_are_split_and_trimmed_in_order():
    conf = parse_conf('actions: " reclaim ,allocate,  preempt"', ACTIONS)
    assert conf.actions == ["reclaim", "allocate", "preempt"]


@pytest.mark.parametrize(
    "actions", ["enqueue, allocate, gangpreemt", "allocate,", "allocat", ""], ids=repr
)
def test_unknown_action_is_an_error(actions):
    """``failed to find Action``: an unknown name, an empty one (trailing comma, empty
    string) all fail."""
    with pytest.raises(ConfError, match="failed to find Action"):
        parse_conf(f'actions: "{actions}"', ACTIONS)


def test_actions_unchecked_without_known_actions():
    assert parse_conf('actions: "whatever"').actions == ["whatever"]


def test_missing_actions_key_is_an_error_with_known_actions():
    with pytest.raises(ConfError, match="failed to find Action"):
        parse_conf("tiers: []", ACTIONS)


def test_hierarchical_drf_with_proportion_in_one_tier_is_an_error():
    text = """
actions: "allocate"
tiers:
- plugins:
  - name: proportion
  - name: drf
    enableHierarchy: true
"""
    with pytest.raises(ConfError, match="proportion and drf with hierarchy enabled conflicts"):
        parse_conf(text, ACTIONS)


@pytest.mark.parametrize(
    "text",
    [
        # different tiers
        """
actions: "allocate"
tiers:
- plugins:
  - name: drf
    enableHierarchy: true
- plugins:
  - name: proportion
""",
        # hierarchy explicitly off
        """
actions: "allocate"
tiers:
- plugins:
  - name: drf
    enableHierarchy: false
  - name: proportion
""",
        # hierarchy absent (never defaulted)
        """
actions: "allocate"
tiers:
- plugins:
  - name: drf
  - name: proportion
""",
        # hierarchy on another plugin
        """
actions: "allocate"
tiers:
- plugins:
  - name: capacity
    enableHierarchy: true
  - name: proportion
""",
    ],
    ids=["other-tier", "hierarchy-false", "hierarchy-absent", "capacity-hierarchy"],
)
def test_drf_proportion_allowed(text):
    conf = parse_conf(text, ACTIONS)
    assert "proportion" in conf.plugin_names()


def test_configurations_and_action_arguments():
    text = """
actions: "allocate, preempt"
configurations:
- name: preempt
  arguments:
    enableTopologyAwarePreemption: true
    minCandidateNodesPercentage: 10
- name: allocate
  arguments:
    predicateErrorCacheEnable: false
"""
    conf = parse_conf(text, ACTIONS)
    assert conf.action_arguments("preempt") == {
        "enableTopologyAwarePreemption": True,
        "minCandidateNodesPercentage": 10,
    }
    assert conf.action_arguments("allocate") == {"predicateErrorCacheEnable": False}
    assert conf.action_arguments("backfill") == {}
    arguments = Arguments(conf.action_arguments("preempt"))
    assert arguments.get_int("minCandidateNodesPercentage", 0) == 10
    assert arguments.get_bool("enableTopologyAwarePreemption", False) is True


@pytest.mark.parametrize(
    ("action", "expected"),
    [("enqueue", {"overCommitFactor": "1.5"}), ("allocate", {})],
    ids=["action exist in configurations", "action not exist in configurations"],
)
def test_action_arguments_upstream(action, expected):
    """``arguments_test.go`` ``TestGetArgOfActionFromConf`` (a missing action gives no
    arguments: upstream nil, here an empty mapping)."""
    text = """
actions: "enqueue"
configurations:
- name: enqueue
  arguments:
    overCommitFactor: "1.5"
"""
    conf = parse_conf(text, ACTIONS)
    assert conf.action_arguments(action) == expected


def test_duplicate_action_configuration_first_wins():
    text = """
actions: "allocate"
configurations:
- name: allocate
  arguments: {predicateErrorCacheEnable: false}
- name: allocate
  arguments: {predicateErrorCacheEnable: true}
"""
    assert parse_conf(text, ACTIONS).action_arguments("allocate") == {
        "predicateErrorCacheEnable": False
    }


def test_metrics_map():
    conf = parse_conf('actions: "allocate"\nmetrics:\n  type: prometheus\n  interval: 30s\n')
    assert conf.metrics == {"type": "prometheus", "interval": "30s"}


def test_metrics_values_keep_yaml_source_text():
    """yaml.v2 decodes a scalar into ``map[string]string`` as its source text; null is ""."""
    conf = parse_conf('actions: "allocate"\nmetrics:\n  enable: true\n  ratio: 1.50\n  none: ~\n')
    assert conf.metrics == {"enable": "true", "ratio": "1.50", "none": ""}


def test_exponent_float_argument_reads_as_float():
    text = """
actions: "allocate"
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 1e1
"""
    option = parse_conf(text).tiers[0].plugins[0]
    assert Arguments(option.arguments).get_float("binpack.weight", 1.0) == 10.0


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("actions: [allocate]", "actions"),
        ("actions: allocate\ntiers: {plugins: []}", "tiers"),
        ("actions: allocate\ntiers:\n- plugins:\n  - enableJobOrder: true\n", "name"),
        (
            'actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    enableJobOrder: "true"\n',
            "enableJobOrder",
        ),
        (
            "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n    arguments: [1]\n",
            "arguments",
        ),
        ("actions: allocate\nconfigurations:\n- arguments: {}\n", "configurations[0].name"),
        ("actions: allocate\ntiers:\n- plugins:\n  - [gang]\n", "plugins[0]"),
        ("- just\n- a list\n", "expected a mapping"),
        ("actions: [unclosed\n", "not valid YAML"),
    ],
    ids=[
        "actions-not-string",
        "tiers-not-list",
        "plugin-without-name",
        "flag-not-bool",
        "arguments-not-map",
        "configuration-without-name",
        "plugin-not-map",
        "document-not-map",
        "bad-yaml",
    ],
)
def test_user_errors_name_the_field(text, field):
    with pytest.raises(ConfError) as raised:
        parse_conf(text, source="my.conf")
    message = str(raised.value)
    assert field in message
    assert "my.conf" in message or field == "name"


def test_empty_tiers_and_plugins():
    conf = parse_conf('actions: "allocate"\ntiers:\n- plugins:\n- {}\n', ACTIONS)
    assert [tier.plugins for tier in conf.tiers] == [[], []]
    assert conf.plugin_names() == []


def test_conf_error_is_a_value_error():
    assert issubclass(ConfError, ValueError)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, True), (False, False)],
    ids=[
        "test with nil fields - should set all to true",
        "test with false fields - should keep false values",
    ],
)
def test_apply_plugin_conf_defaults_upstream(value, expected):
    """``defaults_test.go`` ``TestApplyPluginConfDefaults``: the 18 flags the test checks
    become true when unset and keep an explicit false (here: from a file)."""
    checked = [
        "enableJobOrder",
        "enableJobReady",
        "enableJobPipelined",
        "enableTaskOrder",
        "enablePreemptable",
        "enableReclaimable",
        "enablePreemptive",
        "enableQueueOrder",
        "enablePredicate",
        "enableBestNode",
        "enableNodeOrder",
        "enableTargetJob",
        "enableReservedNodes",
        "enabledVictim",
        "enableJobStarving",
        "enabledOverused",
        "enabledAllocatable",
        "enableJobEnqueued",
    ]
    lines = "".join(f"    {flag}: false\n" for flag in ENABLE_FLAGS) if value is False else ""
    option = parse_conf(f'actions: "allocate"\ntiers:\n- plugins:\n  - name: test\n{lines}')
    plugin = option.tiers[0].plugins[0]
    for flag in checked:
        assert plugin.flags[flag] is expected, flag


@pytest.mark.parametrize(
    "tail",
    [
        "...\n",
        "...\n---\nactions: [not, a, string]\nwhatever: 1\n",
        "---\nactions: [not, a, string]\n",
        "---\n- a list, not a conf\n",
        "---\n{ unclosed\n",
    ],
    ids=["end-marker", "end-marker-then-document", "second-document", "second-list", "bad"],
)
def test_only_the_first_yaml_document_is_read(tail):
    """yaml.v2 ``Unmarshal`` decodes the first document and never looks at the rest."""
    text = '---\nactions: "enqueue, allocate"\ntiers:\n- plugins:\n  - name: gang\n' + tail
    warnings: list[str] = []
    conf = parse_conf(text, ACTIONS, emit=warnings.append)
    assert conf.actions == ["enqueue", "allocate"]
    assert conf.plugin_names() == ["gang"]
    assert warnings == []


@pytest.mark.parametrize("text", ["", "   \n", "---\n...\n", "# only a comment\n"])
def test_empty_conf_has_no_action(text):
    """An empty file unmarshals to an empty configuration: its one action name, "", is not
    found (``UnmarshalSchedulerConf`` on Volcano's TrimSpace'd file)."""
    with pytest.raises(ConfError, match="failed to find Action ''"):
        parse_conf(text, ACTIONS)


def test_unknown_keys_are_warned_not_refused():
    """yaml.v2 drops unknown keys; we keep the conf and name each key once."""
    warnings: list[str] = []
    conf = parse_conf(
        'actions: "allocate"\nextra: 1\ntiers:\n- plugins:\n  - name: gang\n'
        "    enableJobOrdr: false\n",
        ACTIONS,
        source="f",
        emit=warnings.append,
    )
    assert conf.plugin_names() == ["gang"]
    assert warnings == [
        "f: unknown key 'extra'; ignored",
        "f: tiers[0].plugins[0] (gang): unknown key 'enableJobOrdr'"
        " (did you mean 'enableJobOrder'?); ignored",
    ]
    assert conf.diagnostics.warnings == warnings
